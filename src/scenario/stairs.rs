//! `[staircase]`: one live server per model, connections added in batches and never
//! closed until the staircase ends. Checked here against the rest of the scenario;
//! the stairs become the steps' connections (batch, 2 × batch, ... up to `to`).

use std::ops::Range;
use std::time::Duration;

use super::file::ScenarioFile;
use super::ErrAt;
use crate::sys::meminfo_bytes;
use crate::units::trim_float;

/// The shortest stair window (`every`, `hold`): the live loads write their counts once a
/// second, and a window's rates are those of the whole seconds it holds.
const SHORTEST_WINDOW: Duration = Duration::from_secs(1);

/// A validated staircase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Staircase {
    pub batch: u64,
    pub every: Duration,
    pub to: u64,
    pub hold: Option<Duration>,
    /// The memory every stair must leave available (`keep_available`); `None` for the
    /// default, [`default_keep_available`] of the machine the staircase runs on.
    pub keep_available: Option<u64>,
}

/// The least `keep_available` a scenario may set: below it the margin would leave the
/// machine's own processes nothing to grow into.
const LEAST_KEEP_AVAILABLE: u64 = 256 << 20;

/// The margin a staircase keeps unless its scenario says otherwise: 2 GiB or a tenth of
/// the machine's memory (MemTotal), whichever is more.
pub fn default_keep_available(mem_total: u64) -> u64 {
    (2u64 << 30).max(mem_total / 10)
}

impl Staircase {
    /// The cumulative connections of every stair: batch, 2 × batch, ..., `to` (the last
    /// stair may add less than a batch).
    pub fn stairs(&self) -> Vec<u64> {
        let mut stairs: Vec<u64> = (1..=self.to / self.batch).map(|i| i * self.batch).collect();
        if !self.to.is_multiple_of(self.batch) {
            stairs.push(self.to);
        }
        stairs
    }

    /// The shape in words: `staircase: +1000 every 5 s to 19 000, held 60 s`.
    pub fn describe(&self) -> String {
        let seconds = |d: Duration| format!("{} s", trim_float(d.as_secs_f64()));
        let mut text = format!(
            "staircase: +{} every {} to {}",
            grouped(self.batch),
            seconds(self.every),
            grouped(self.to)
        );
        if let Some(hold) = self.hold {
            text += &format!(", held {}", seconds(hold));
        }
        text
    }
}

/// A count with spaces between thousands from five digits on, as the docs write
/// them (`1000`, `19 000`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    if n < 10_000 {
        return digits;
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `[staircase]` checked: all of batch, every and to, none of them zero, `to` at least
/// one batch, and no other key that would say how many connections a step has or how
/// long its load lasts (the staircase says both).
pub(super) fn staircase(file: &ScenarioFile, err: ErrAt) -> anyhow::Result<Option<Staircase>> {
    let Some(table) = &file.staircase else {
        return Ok(None);
    };
    let span = Some(table.span());
    let s = table.get_ref();
    let (Some(batch), Some(every), Some(to)) = (s.batch, s.every, s.to) else {
        let missing: Vec<&str> = [
            ("batch", s.batch.is_none()),
            ("every", s.every.is_none()),
            ("to", s.to.is_none()),
        ]
        .into_iter()
        .filter_map(|(key, absent)| absent.then_some(key))
        .collect();
        let what = if s.hold.is_some() {
            "[staircase] hold holds the stairs' connections, so the staircase needs"
        } else {
            "[staircase] needs"
        };
        return Err(err(
            span,
            format!(
                "{what} {} (missing: {})",
                "batch, every and to",
                missing.join(", ")
            ),
        ));
    };
    if every.0 < SHORTEST_WINDOW {
        return Err(err(
            span,
            format!(
                "[staircase] every = {} s is under 1 s: each stair is measured for that long, \
                 and the loads count requests in whole seconds, so a shorter window cannot \
                 be measured exactly",
                trim_float(every.0.as_secs_f64())
            ),
        ));
    }
    if to.0 < batch.0 {
        return Err(err(
            span,
            format!(
                "[staircase] to = {} is below batch = {}: the first stair alone would pass the top",
                to.0, batch.0
            ),
        ));
    }
    if s.hold.is_some_and(|h| h.0 < SHORTEST_WINDOW) {
        return Err(err(
            span,
            "[staircase] hold must be 1 s or more (leave it out for no hold): the loads \
             count requests in whole seconds"
                .into(),
        ));
    }
    no_load_shape_keys(file, span.clone(), err)?;
    if let Some(keep) = s.keep_available {
        keep_available_checked(keep.0, span, err)?;
    }
    let staircase = Staircase {
        batch: batch.0,
        every: every.0,
        to: to.0,
        hold: s.hold.map(|h| h.0),
        keep_available: s.keep_available.map(|k| k.0),
    };
    Ok(Some(staircase))
}

/// No `[sweep] connections` nor `[load]` key that says how many connections a step has
/// or how long its load lasts: the staircase says both.
fn no_load_shape_keys(
    file: &ScenarioFile,
    span: Option<Range<usize>>,
    err: ErrAt,
) -> anyhow::Result<()> {
    if let Some(axis) = &file.sweep.connections {
        return Err(err(
            Some(axis.span()),
            "[sweep] connections and [staircase] cannot be used together: the stairs are the connections axis"
                .into(),
        ));
    }
    let load = &file.load;
    for (key, set) in [
        ("connections", load.connections.is_some()),
        ("duration", load.duration.is_some()),
        ("hold", load.hold.is_some()),
        ("hold_together", load.hold_together.is_some()),
    ] {
        if set {
            return Err(err(
                span,
                format!(
                    "[load] {key} cannot be used with [staircase]: every stair's connections stay \
                     open until the staircase ends (batch, every, to and hold say how many and how long)"
                ),
            ));
        }
    }
    Ok(())
}

/// The memory margin a staircase keeps: at least the least margin, at most the machine's memory.
fn keep_available_checked(keep: u64, span: Option<Range<usize>>, err: ErrAt) -> anyhow::Result<()> {
    let total = meminfo_bytes("MemTotal:");
    if keep < LEAST_KEEP_AVAILABLE || total.is_some_and(|t| keep > t) {
        let most = total.map_or(String::new(), |t| {
            format!(
                " and at most this machine's memory ({}, MemTotal)",
                crate::units::format_size(t)
            )
        });
        return Err(err(
            span,
            format!(
                "[staircase] keep_available = {}: the margin must be at least {}{most}",
                crate::units::format_size(keep),
                crate::units::format_size(LEAST_KEEP_AVAILABLE)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        let text = format!("models = [\"epoll\"]\n[load]\ndelay = \"10ms\"\n{text}");
        format!(
            "{:#}",
            super::super::parse("t.toml", "t", &text).unwrap_err()
        )
    }

    #[test]
    fn bad_staircases_are_refused_where_they_are_written() {
        let e = error_of("[staircase]\nbatch = 0\nevery = \"1s\"\nto = 10\n");
        assert!(
            e.starts_with("t.toml: line 5, column 9: must be at least 1, not 0"),
            "{e}"
        );
        let e = error_of("[staircase]\nbatch = 5\nevery = \"0s\"\nto = 10\n");
        assert!(e.starts_with("t.toml: line 4"), "{e}");
        assert!(e.contains("every = 0 s is under 1 s"), "{e}");
        let e = error_of("[staircase]\nbatch = 2\nevery = \"0.25s\"\nto = 2\n");
        assert!(e.starts_with("t.toml: line 4"), "{e}");
        assert!(
            e.contains("[staircase] every = 0.25 s is under 1 s: each stair is measured for that long, and the loads count requests in whole seconds"),
            "{e}"
        );
        let e = error_of("[staircase]\nbatch = 2\nevery = \"1s\"\nto = 2\nhold = \"0.5s\"\n");
        assert!(e.contains("[staircase] hold must be 1 s or more"), "{e}");
        let e = error_of("[staircase]\nbatch = 50\nevery = \"1s\"\nto = 10\n");
        assert!(e.contains("to = 10 is below batch = 50"), "{e}");
        let e = error_of(
            "[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\nkeep_available = \"1MiB\"\n",
        );
        assert!(e.starts_with("t.toml: line 4"), "{e}");
        assert!(
            e.contains("[staircase] keep_available = 1 MiB: the margin must be at least 256 MiB and at most this machine's memory"),
            "{e}"
        );
        let e = error_of(
            "[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\nkeep_available = \"100000GiB\"\n",
        );
        assert!(
            e.contains("keep_available = 100000 GiB: the margin must be"),
            "{e}"
        );
        // Below a MiB, the bytes as given: never "0 MiB".
        let e =
            error_of("[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\nkeep_available = \"1\"\n");
        assert!(
            e.contains("keep_available = 1 B: the margin must be at least 256 MiB"),
            "{e}"
        );
        let e = error_of("[staircase]\nhold = \"5s\"\n");
        assert!(
            e.contains("[staircase] hold holds the stairs' connections, so the staircase needs batch, every and to (missing: batch, every, to)"),
            "{e}"
        );
        let e = error_of(
            "[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\n[sweep]\nconnections = [1, 2]\n",
        );
        assert!(e.starts_with("t.toml: line 9, column 15: "), "{e}");
        assert!(
            e.contains("[sweep] connections and [staircase] cannot be used together"),
            "{e}"
        );
        let e = error_of("duration = \"5s\"\n[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\n");
        assert!(
            e.contains("[load] duration cannot be used with [staircase]"),
            "{e}"
        );
    }

    #[test]
    fn other_axes_make_one_staircase_each() {
        let s = super::super::parse(
            "t.toml",
            "t",
            "models = [\"epoll\"]\n[load]\ndelay = \"10ms\"\n[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\n[sweep]\nsize = [16, 32]\n",
        )
        .unwrap();
        let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "c5-s16-d10ms",
                "c10-s16-d10ms",
                "c5-s32-d10ms",
                "c10-s32-d10ms"
            ]
        );
        assert_eq!(s.sweep_axes, ["connections", "size"]);
        assert_eq!(s.staircase.unwrap().stairs(), [5, 10]);
    }

    #[test]
    fn stairs_climb_by_batch_and_end_at_the_top() {
        let s = Staircase {
            batch: 1000,
            every: Duration::from_secs(5),
            to: 3500,
            hold: None,
            keep_available: None,
        };
        assert_eq!(s.stairs(), [1000, 2000, 3000, 3500]);
        assert_eq!(Staircase { to: 3000, ..s }.stairs(), [1000, 2000, 3000]);
        assert_eq!(s.describe(), "staircase: +1000 every 5 s to 3500");
        let ramp = Staircase {
            to: 19_000,
            hold: Some(Duration::from_millis(1500)),
            ..s
        };
        assert_eq!(
            ramp.describe(),
            "staircase: +1000 every 5 s to 19 000, held 1.5 s"
        );
    }
}
