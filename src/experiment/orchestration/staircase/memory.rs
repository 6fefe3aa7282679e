//! The memory margin (`[staircase] memory_margin`): before each stair, the memory its
//! batch will take is predicted from what the connections held so far took, and a stair
//! that would leave the machine less than the margin available is not run. During a
//! stair, available memory falling under half the margin stops it. A socket's kernel
//! memory cannot be reclaimed, so the staircase stops itself rather than let the
//! out-of-memory killer choose (docs/scale.md).

use crate::scenario::{default_memory_margin, Staircase};
use crate::units::format_size;

/// What a connection is taken to cost before any is held, both ends, kernel and user
/// space: about three times what docs/scale.md measures (10-12 KB), so the first stair
/// errs on the safe side.
pub const PRIOR_BYTES_PER_CONNECTION: u64 = 32 << 10;
/// The fewest connections held whose memory is taken as their cost: under it, other
/// processes' ups and downs would dominate the measure.
const FEWEST_MEASURED: u64 = 1000;

/// The machine's memory as /proc/meminfo says, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemInfo {
    pub total: u64,
    pub available: u64,
}

impl MemInfo {
    pub fn read() -> Option<MemInfo> {
        MemInfo::parse(&std::fs::read_to_string("/proc/meminfo").ok()?)
    }

    pub fn parse(text: &str) -> Option<MemInfo> {
        let kib = |key: &str| -> Option<u64> {
            let line = text.lines().find(|l| l.starts_with(key))?;
            line[key.len()..]
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        };
        Some(MemInfo {
            total: kib("MemTotal:")? * 1024,
            available: kib("MemAvailable:")? * 1024,
        })
    }
}

/// The margin of one staircase, and the memory available before its first stair.
#[derive(Debug, Clone, Copy)]
pub struct MemoryGuard {
    margin: u64,
    available_at_start: u64,
    read: fn() -> Option<MemInfo>,
}

impl MemoryGuard {
    /// None when /proc/meminfo cannot be read (then nothing can be predicted, and the
    /// staircase climbs as its scenario says).
    pub fn start(staircase: &Staircase) -> Option<MemoryGuard> {
        MemoryGuard::with(staircase, MemInfo::read)
    }

    fn with(staircase: &Staircase, read: fn() -> Option<MemInfo>) -> Option<MemoryGuard> {
        let now = read()?;
        Some(MemoryGuard {
            margin: staircase
                .memory_margin
                .unwrap_or_else(|| default_memory_margin(now.total)),
            available_at_start: now.available,
            read,
        })
    }

    /// Before a stair adding `batch` connections to the `held` ones: Err(why it must
    /// not run) when it would leave less than the margin available.
    pub fn before_stair(&self, held: u64, batch: u64) -> Result<(), String> {
        let Some(now) = (self.read)() else {
            return Ok(());
        };
        let p = predict(self.available_at_start, now.available, held, batch);
        if p.after >= self.margin as i128 {
            return Ok(());
        }
        Err(format!(
            "the memory margin: its {batch} connections would leave about {} available, \
             under the margin of {} ({} available now; {} per connection: {}); the highest \
             count held is {held}",
            gib(p.after),
            gib(self.margin as i128),
            gib(now.available as i128),
            format_size(p.per_connection),
            p.basis,
        ))
    }

    /// During a stair: Some(why it stops) when available memory fell under half the margin.
    pub fn during_stair(&self) -> Option<String> {
        let now = (self.read)()?;
        (now.available < self.margin / 2).then(|| {
            format!(
                "the memory margin: memory available fell to {} while it connected, under \
                 half the margin of {}",
                gib(now.available as i128),
                gib(self.margin as i128)
            )
        })
    }
}

/// The memory a stair is predicted to leave.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub per_connection: u64,
    /// Available after the batch, in bytes; negative when it would not fit at all.
    pub after: i128,
    /// Where `per_connection` comes from, in words.
    pub basis: String,
}

/// The memory available after `batch` more connections: each costs what the `held`
/// ones took of the memory available at the start (once they are enough to measure),
/// else [`PRIOR_BYTES_PER_CONNECTION`]; never less than that measure.
pub fn predict(available_at_start: u64, available_now: u64, held: u64, batch: u64) -> Prediction {
    let taken = available_at_start.saturating_sub(available_now);
    let (per_connection, basis) = if held >= FEWEST_MEASURED && taken > 0 {
        (
            taken.div_ceil(held),
            format!("measured: {} taken by the {held} held", format_size(taken)),
        )
    } else {
        (
            PRIOR_BYTES_PER_CONNECTION,
            format!("the prior, before {FEWEST_MEASURED} are held to measure"),
        )
    };
    Prediction {
        per_connection,
        after: available_now as i128 - i128::from(per_connection) * i128::from(batch),
        basis,
    }
}

/// Bytes in GiB with one decimal, as `free -g` would round them: "22.9 GiB", "-3.1 GiB".
fn gib(bytes: i128) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_cost_of_the_held_connections_predicts_the_next_batch() {
        // 100 000 held took 1.2 GB: 12 000 B each; 50 000 more take 600 MB.
        let p = predict(20 * GIB, 20 * GIB - 1_200_000_000, 100_000, 50_000);
        assert_eq!(p.per_connection, 12_000);
        assert_eq!(p.after, (20 * GIB - 1_200_000_000 - 600_000_000) as i128);
        assert!(p.basis.starts_with("measured"), "{}", p.basis);
        // Too few held to measure, or nothing taken: the prior.
        for (held, now) in [(999, 20 * GIB - GIB), (100_000, 20 * GIB + GIB)] {
            let p = predict(20 * GIB, now, held, 10);
            assert_eq!(p.per_connection, PRIOR_BYTES_PER_CONNECTION, "{held}");
        }
        // A batch larger than what is left: negative, not wrapped.
        let p = predict(GIB, GIB, 0, 1_000_000);
        assert_eq!(p.after, GIB as i128 - (32 << 10) * 1_000_000);
    }

    fn staircase(margin: Option<u64>) -> Staircase {
        Staircase {
            batch: 1000,
            every: std::time::Duration::from_secs(1),
            to: 2000,
            hold: None,
            memory_margin: margin,
        }
    }

    #[test]
    fn a_stair_that_would_cross_the_margin_is_not_run_and_says_why() {
        fn eight_gib_free() -> Option<MemInfo> {
            Some(MemInfo {
                total: 24 * GIB,
                available: 8 * GIB,
            })
        }
        let guard = MemoryGuard::with(&staircase(Some(4 * GIB)), eight_gib_free).unwrap();
        // The prior: 100 000 x 32 KiB = 3.05 GiB fits above 4 GiB of 8.
        assert_eq!(guard.before_stair(0, 100_000), Ok(()));
        let why = guard.before_stair(0, 200_000).unwrap_err();
        assert!(
            why.contains("under the margin of 4.0 GiB")
                && why.contains("the highest count held is 0"),
            "{why}"
        );
        assert_eq!(guard.during_stair(), None);
        let tight = MemoryGuard::with(&staircase(Some(20 * GIB)), eight_gib_free).unwrap();
        assert!(tight
            .during_stair()
            .unwrap()
            .contains("fell to 8.0 GiB while it connected, under half the margin of 20.0 GiB"));
        // The default: 10 % of 24 GiB, at least 2 GiB.
        let default = MemoryGuard::with(&staircase(None), eight_gib_free).unwrap();
        assert_eq!(default.margin, 24 * GIB / 10);
        assert_eq!(default_memory_margin(8 * GIB), 2 * GIB);
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:  1 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(
            MemInfo::parse(text),
            Some(MemInfo {
                total: 24_576_000 * 1024,
                available: 20_000_000 * 1024
            })
        );
        assert_eq!(MemInfo::parse("MemTotal: 1 kB\n"), None);
        assert!(MemInfo::read().is_some_and(|m| m.available <= m.total));
    }
}
