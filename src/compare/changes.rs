//! Each figure of each matched step measured on both sides as the report measures it
//! (the median of the ok repetitions; latency from their histograms added exactly;
//! errors summed), and decided as the verdict decides between two models
//! ([`verdict::pair_differs`]): a change is named only when significant and at least
//! [`stats::MIN_EFFECT`]. A geometric mean per figure over the matched steps, as
//! benchstat prints.

use std::path::PathBuf;

use super::matching::{self, ModelStep};
use crate::results::column;
use crate::results::latency;
use crate::results::reader::{Results, Row, Status};
use crate::results::threshold::{unit, SHORT_NAMES};
use crate::stats::{self, Comparison};
use crate::verdict::{self, fmt_count};

/// One figure compared: the verdict's figures by their short names, and any other
/// results.csv column a threshold names.
pub struct ComparedFigure {
    /// The name a threshold uses (`p99`), or the column's own.
    pub short: String,
    pub figure: verdict::Figure,
    /// The sum over the repetitions rather than their median (errors: any counts).
    pub total: bool,
}

impl ComparedFigure {
    /// The column's declared unit.
    pub fn unit(&self) -> &'static str {
        unit(self.figure.column)
    }
}

/// Errors: every socket error, mismatch and unexpected close, over all repetitions.
const ERRORS: verdict::Figure = verdict::Figure {
    name: "Errors",
    column: column::ERRORS,
    higher_is_better: false,
    format: fmt_count,
    resolution: verdict::Resolution::Exact,
};

/// The verdict's figures, then the `extra` columns not among them.
pub fn figures(extra: &[&'static str]) -> Vec<ComparedFigure> {
    let declared = |c: &str| {
        verdict::FIGURES
            .iter()
            .chain([&verdict::HELD, &ERRORS])
            .find(|f| f.column == c)
    };
    let mut out: Vec<ComparedFigure> = SHORT_NAMES
        .iter()
        .filter_map(|(short, c)| {
            let f = declared(c)?;
            Some(ComparedFigure {
                short: short.to_string(),
                figure: *f,
                total: *c == column::ERRORS,
            })
        })
        .collect();
    for c in extra {
        if out.iter().all(|f| f.figure.column != *c) {
            out.push(ComparedFigure {
                short: c.to_string(),
                figure: verdict::Figure {
                    name: c,
                    column: c,
                    higher_is_better: false,
                    format: fmt_count,
                    resolution: verdict::Resolution::Exact,
                },
                total: false,
            });
        }
    }
    out
}

/// One figure on one side of one step.
#[derive(Debug, Clone, Default)]
pub struct Measure {
    /// The report's value: the median, latency from the histograms added, errors summed.
    pub value: Option<f64>,
    /// The ok repetitions' values: the samples of the test.
    pub samples: Vec<f64>,
    /// Which of them are generator-bound or disturbed (each left out in turn, as the
    /// verdict does).
    pub flagged: Vec<bool>,
    /// A repetition failed or was interrupted here: the step broke, and is not tested.
    pub broke: bool,
}

impl Measure {
    fn of(results: &Results, rows: &[&Row], compared: &ComparedFigure) -> Measure {
        let ok: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok)
            .filter(|r| r.num(compared.figure.column).is_some_and(f64::is_finite))
            .collect();
        let samples: Vec<f64> = ok
            .iter()
            .filter_map(|r| r.num(compared.figure.column))
            .collect();
        let value = if compared.total {
            // Every repetition's: the errors of one that failed are errors all the same.
            let all: Vec<f64> = rows
                .iter()
                .filter_map(|r| r.num(compared.figure.column))
                .collect();
            (!all.is_empty()).then(|| all.iter().sum())
        } else {
            latency::merged(results, &ok, compared.figure.column)
                .or_else(|| stats::median(&samples))
        };
        Measure {
            value,
            flagged: ok
                .iter()
                .map(|r| {
                    let (bound, disturbed) = verdict::flag(r);
                    bound || disturbed
                })
                .collect(),
            samples,
            broke: rows
                .iter()
                .any(|r| matches!(r.status, Status::Failed | Status::Interrupted)),
        }
    }

    /// The smallest and largest repetition.
    pub fn range(&self) -> Option<(f64, f64)> {
        let lo = self.samples.iter().copied().reduce(f64::min)?;
        let hi = self.samples.iter().copied().reduce(f64::max)?;
        Some((lo, hi))
    }

    /// The farthest repetition from the value, in % of it: the spread shown as "±".
    pub fn spread_pct(&self) -> Option<f64> {
        let v = self.value?;
        let (lo, hi) = self.range()?;
        (v != 0.0 && self.samples.len() > 1)
            .then(|| (hi - v).abs().max((v - lo).abs()) / v.abs() * 100.0)
    }
}

/// One figure of one matched step, old against new.
pub struct Change {
    pub old: Measure,
    pub new: Measure,
    /// The test of NEW's repetitions against OLD's: p, n, and median(new)/median(old)
    /// with its bootstrap interval.
    pub test: Option<Comparison>,
    /// The verdict names a difference: significant and at least [`stats::MIN_EFFECT`].
    pub significant: bool,
    /// The rate both sides' open loop offered, when it fixed the figure on both (every
    /// repetition served it, [`verdict::fixed_by_load`]): no change is named, as the
    /// verdict names no model.
    pub fixed_by_load: Option<f64>,
}

impl Change {
    /// NEW's value against OLD's, in percent: the two values shown, so the change always
    /// has the sign of their difference. From 0, any increase is +inf % (it crosses every
    /// relative threshold above) and none is 0 %; None when a side has no value.
    pub fn pct(&self) -> Option<f64> {
        let (old, new) = (self.old.value?, self.new.value?);
        Some(if old == 0.0 {
            if new == 0.0 {
                0.0
            } else {
                f64::INFINITY.copysign(new)
            }
        } else {
            (new / old - 1.0) * 100.0
        })
    }

    /// The bootstrap interval of the change, in percent.
    pub fn interval_pct(&self) -> Option<(f64, f64)> {
        let (lo, hi) = self.test?.interval;
        let pct = |r: f64| (r - 1.0) * 100.0;
        (lo.is_finite() && hi.is_finite()).then(|| (pct(lo), pct(hi)))
    }
}

/// One matched step: its two sides and every figure's change.
pub struct StepChange {
    pub old_model: String,
    pub new_model: String,
    pub old_step: String,
    pub new_step: String,
    pub params: Vec<(&'static str, String)>,
    /// In the order of [`Changes::figures`].
    pub changes: Vec<Change>,
}

impl StepChange {
    /// "epoll c100-s64", or "mine c100-s64 → epoll" when the models differ.
    pub fn label(&self) -> String {
        let mut label = format!("{} {}", self.old_model, self.old_step);
        if self.new_model != self.old_model {
            label += &format!(" → {}", self.new_model);
        }
        if self.new_step != self.old_step {
            label += &format!(" ({} in NEW)", self.new_step);
        }
        label
    }

    pub fn params(&self) -> String {
        matching::describe_params(&self.params)
    }
}

/// The geometric mean of one figure over the matched steps where both sides have a
/// value above zero.
pub struct Geomean {
    pub old: f64,
    pub new: f64,
    pub steps: usize,
}

impl Geomean {
    pub fn pct(&self) -> f64 {
        (self.new / self.old - 1.0) * 100.0
    }
}

pub struct Changes {
    pub old_dir: PathBuf,
    pub new_dir: PathBuf,
    /// What differs between the two runs' manifests, the runs' own warnings, and steps
    /// that broke on one side.
    pub warnings: Vec<String>,
    pub figures: Vec<ComparedFigure>,
    pub steps: Vec<StepChange>,
    /// Per figure, in the order of `figures`: None when no step has both values.
    pub geomeans: Vec<Option<Geomean>>,
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
}

/// OLD against NEW (or `models`: OLD's model against NEW's), figure by figure.
pub fn compare(
    old: &Results,
    new: &Results,
    models: Option<(&str, &str)>,
    figures: Vec<ComparedFigure>,
) -> anyhow::Result<Changes> {
    let pairs = matching::pair(old, new, models)?;
    let mut warnings = matching::warnings(&old.manifest, &new.manifest);
    warnings.extend(pairs.warnings.iter().cloned());
    for (side, r) in [("OLD", old), ("NEW", new)] {
        warnings.extend(r.warnings.iter().map(|w| format!("{side}: {w}")));
        if side == "OLD" || old.dir != new.dir {
            warnings.extend(latency::unreadable(r).map(|w| format!("{side}: {w}")));
        }
    }
    if old.dir != new.dir {
        let old_rows = pairs
            .matched
            .iter()
            .flat_map(|(a, _)| a.rows.iter().copied());
        let new_rows = pairs
            .matched
            .iter()
            .flat_map(|(_, b)| b.rows.iter().copied());
        warnings.extend(disturbance("OLD", old_rows));
        warnings.extend(disturbance("NEW", new_rows));
    }
    let steps: Vec<StepChange> = pairs
        .matched
        .iter()
        .map(|(a, b)| step_change(old, new, a, b, &figures, &mut warnings))
        .collect();
    let geomeans = (0..figures.len())
        .map(|i| geomean(steps.iter().map(|s| &s.changes[i])))
        .collect();
    Ok(Changes {
        old_dir: old.dir.clone(),
        new_dir: new.dir.clone(),
        warnings,
        figures,
        steps,
        geomeans,
        only_old: pairs.only_old,
        only_new: pairs.only_new,
    })
}

/// The share of a run's compared repetitions that shared the machine (`disturbed`),
/// worth a warning above a quarter. Within one run the models are interleaved and the
/// machine's other work (another tenant's steal included) falls on both sides alike;
/// between two runs it does not, and the test cannot tell it from a change.
fn disturbance<'a>(side: &str, rows: impl Iterator<Item = &'a Row>) -> Option<String> {
    let rows: Vec<&Row> = rows.collect();
    let disturbed: Vec<&&Row> = rows
        .iter()
        .filter(|r| r.raw(column::DISTURBED) == "true")
        .collect();
    if rows.is_empty() || disturbed.len() * 4 <= rows.len() {
        return None;
    }
    let taken: Vec<f64> = disturbed
        .iter()
        .filter_map(|r| r.num(column::INTERFERENCE_PCT))
        .collect();
    let median = stats::median(&taken).unwrap_or(0.0);
    Some(format!(
        "{side}: {} of {} repetitions shared the machine (in those, other work, a \
         hypervisor's steal included, took a median {median:.1} % of a core): between two \
         runs that is not in the test, so a change named here may be the machine's; compare \
         two servers in one run, interleaved (docs/compare.md)",
        disturbed.len(),
        rows.len()
    ))
}

fn step_change(
    old: &Results,
    new: &Results,
    a: &ModelStep,
    b: &ModelStep,
    figures: &[ComparedFigure],
    warnings: &mut Vec<String>,
) -> StepChange {
    let changes: Vec<Change> = figures
        .iter()
        .map(|compared| {
            let old_m = Measure::of(old, &a.rows, compared);
            let new_m = Measure::of(new, &b.rows, compared);
            let fixed_by_load =
                verdict::fixed_by_load(compared.figure.column, &a.rows).filter(|&rate| {
                    verdict::fixed_by_load(compared.figure.column, &b.rows) == Some(rate)
                });
            let significant = match (old_m.value, new_m.value) {
                _ if fixed_by_load.is_some() => false,
                (Some(x), Some(y)) if !old_m.broke && !new_m.broke => verdict::pair_differs(
                    [x, y],
                    [&old_m.samples, &new_m.samples],
                    [&old_m.flagged, &new_m.flagged],
                    compared.figure.higher_is_better,
                    // No change smaller than the figure's measurement step is named.
                    a.rows
                        .iter()
                        .chain(&b.rows)
                        .map(|r| compared.figure.resolution.step(r))
                        .fold(0.0, f64::max),
                ),
                _ => false,
            };
            Change {
                test: stats::compare(&old_m.samples, &new_m.samples),
                old: old_m,
                new: new_m,
                significant,
                fixed_by_load,
            }
        })
        .collect();
    for (side, step) in [("OLD", a), ("NEW", b)] {
        let broke = step.rows.iter().filter(|r| r.status != Status::Ok).count();
        if broke > 0 {
            warnings.push(format!(
                "{side} {}: {broke} of {} repetition(s) did not finish as ok: no change is named there",
                step.describe(),
                step.rows.len()
            ));
        }
    }
    StepChange {
        old_model: a.model.clone(),
        new_model: b.model.clone(),
        old_step: a.name.clone(),
        new_step: b.name.clone(),
        params: a.params.clone(),
        changes,
    }
}

fn geomean<'a>(changes: impl Iterator<Item = &'a Change>) -> Option<Geomean> {
    let (mut log_old, mut log_new, mut steps) = (0.0, 0.0, 0usize);
    for c in changes {
        if let (Some(a), Some(b)) = (c.old.value, c.new.value) {
            if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() {
                log_old += a.ln();
                log_new += b.ln();
                steps += 1;
            }
        }
    }
    (steps > 0).then(|| Geomean {
        old: (log_old / steps as f64).exp(),
        new: (log_new / steps as f64).exp(),
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(disturbed: bool, interference: f64) -> Row {
        Row {
            model: "epoll".into(),
            step: "c100-s64".into(),
            repetition: 1,
            status: Status::Ok,
            bytes_match: Some(true),
            disturbed: Some(disturbed),
            ..Row::default()
        }
        .with(column::INTERFERENCE_PCT, interference)
    }

    #[test]
    fn a_change_has_the_sign_of_the_values_shown() {
        // Latency from the histograms added (the values) can fall while the repetitions'
        // medians rise: the change is the values', as the table shows them.
        let measure = |value: f64, samples: Vec<f64>| Measure {
            value: Some(value),
            flagged: vec![false; samples.len()],
            samples,
            broke: false,
        };
        let old = measure(100.0, vec![90.0, 91.0, 92.0, 93.0, 94.0]);
        let new = measure(95.0, vec![96.0, 97.0, 98.0, 99.0, 99.5]);
        let change = Change {
            test: stats::compare(&old.samples, &new.samples),
            old,
            new,
            significant: true,
            fixed_by_load: None,
        };
        assert!(change.test.unwrap().ratio > 1.0);
        let pct = change.pct().unwrap();
        assert!((pct + 5.0).abs() < 1e-9, "{pct}");
        // From 0: any increase is +inf %, none is 0 %.
        let from_zero = |new: f64| Change {
            test: None,
            old: measure(0.0, vec![0.0]),
            new: measure(new, vec![new]),
            significant: true,
            fixed_by_load: None,
        };
        assert_eq!(from_zero(5.0).pct(), Some(f64::INFINITY));
        assert_eq!(from_zero(0.0).pct(), Some(0.0));
    }

    #[test]
    fn a_run_that_shared_the_machine_is_said_to_have() {
        // Three of eight shared it (above a quarter): the median interference of those
        // three is named.
        let mut rows: Vec<Row> = (0..5).map(|i| rep(false, i as f64)).collect();
        rows.extend([rep(true, 19.2), rep(true, 30.0), rep(true, 12.5)]);
        let warning = disturbance("NEW", rows.iter()).unwrap();
        assert!(
            warning.starts_with("NEW: 3 of 8 repetitions shared the machine"),
            "{warning}"
        );
        assert!(warning.contains("a median 19.2 % of a core"), "{warning}");
        // Two of eight is a quarter: no warning; none at all: none either.
        let quarter: Vec<Row> = rows[..7].iter().cloned().chain([rep(false, 0.0)]).collect();
        assert_eq!(disturbance("OLD", quarter.iter()), None);
        assert_eq!(disturbance("OLD", rows[..5].iter()), None);
        assert_eq!(disturbance("OLD", [].iter()), None);
    }
}
