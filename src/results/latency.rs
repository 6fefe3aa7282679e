//! Latency across repetitions: the repetitions' HdrHistograms (load/latency.hlog) added
//! exactly, as `echolab merge` adds agents' histograms. A percentile of the sum is the
//! percentile of every request the repetitions made; the mean of per-repetition p99s
//! is not a percentile of anything.

use std::path::PathBuf;

use hdrhistogram::Histogram;

use crate::load::measurements::new_histogram;
use crate::load::merge::read_hlog;
use crate::results::column;
use crate::results::files::{LATENCY_LOG, LOAD_DIR};
use crate::results::reader::{Results, Row, Status};

/// One repetition's latency log as read.
enum Log {
    Read(Histogram<u64>),
    /// No file (a step that never ran its load, or results from before the logs).
    Missing,
    /// A file that is damaged, or cut short: why.
    Damaged(String),
}

/// `row`'s latency log: its latency intervals added; damaged when it cannot be decoded
/// or holds fewer requests than results.csv counts for it (cut short; a load's log and
/// its summary count the same measured requests, as `echolab merge` checks).
fn read(results: &Results, row: &Row) -> Log {
    let path = row.step_dir(&results.dir).join(LOAD_DIR).join(LATENCY_LOG);
    if !path.exists() {
        return Log::Missing;
    }
    let sum = match added(std::iter::once(path.clone())) {
        Ok(sum) => sum,
        Err(e) => return Log::Damaged(format!("{e:#}")),
    };
    // A stair counts the requests of every batch in its window; its log holds its own
    // batch's only, so it is never "cut short" by that count.
    let requests = row
        .num(column::REQUESTS)
        .filter(|_| row.raw(column::STAIR).is_empty());
    match requests {
        Some(requests) if (sum.len() as f64) < requests => Log::Damaged(format!(
            "{} holds {} of the {requests} requests results.csv counts: cut short",
            path.display(),
            sum.len()
        )),
        _ => Log::Read(sum),
    }
}

/// The histogram of every request of `rows` whose latency log can be read (latency, not
/// the raw tag of an open loop); None when none can. The others are left out, and named
/// by [`unreadable`].
pub fn histogram(results: &Results, rows: &[&Row]) -> Option<Histogram<u64>> {
    let mut sum = new_histogram();
    for row in rows {
        if let Log::Read(h) = read(results, row) {
            sum.add(&h).ok()?;
        }
    }
    (!sum.is_empty()).then_some(sum)
}

/// At most this many repetitions are named in [`unreadable`]'s warning; the rest counted.
const NAMED: usize = 10;

/// The ok repetitions whose latency log cannot be read, each named with why, as one
/// warning: they are left out of every latency figure added from the histograms. None
/// when no repetition has a log at all (results from before they were kept: the
/// figures are results.csv's).
pub fn unreadable(results: &Results) -> Option<String> {
    let (mut named, mut count, mut any) = (Vec::new(), 0usize, false);
    for row in results.rows.iter().filter(|r| r.status == Status::Ok) {
        let why = match read(results, row) {
            Log::Read(_) => {
                any = true;
                continue;
            }
            // A staircase's hold has no load of its own: its figures are its window's.
            Log::Missing if !row.raw(column::STAIR).is_empty() => continue,
            Log::Missing => "missing".to_string(),
            Log::Damaged(why) => {
                any = true;
                why
            }
        };
        count += 1;
        if named.len() < NAMED {
            named.push(format!(
                "{} {} repetition {} ({why})",
                row.model, row.step, row.repetition
            ));
        }
    }
    let more = count.saturating_sub(named.len());
    (any && count > 0).then(|| {
        format!(
            "the latency log ({LOAD_DIR}/{LATENCY_LOG}) of {count} repetition(s) could not be read, so their \
             requests are left out of the latency figures added from the histograms: {}{}",
            named.join("; "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    })
}

/// The latency intervals of every interval log added; an error naming the first that
/// cannot be read.
fn added(hlogs: impl Iterator<Item = PathBuf>) -> anyhow::Result<Histogram<u64>> {
    // Auto-resizing: a decoded interval keeps its own top, and a later repetition's
    // slower request would not fit in the first one's.
    let mut sum = new_histogram();
    for path in hlogs {
        let (_, intervals) = read_hlog(&path)?;
        for interval in intervals.into_iter().filter(|i| !i.raw) {
            sum.add(&interval.histogram)
                .map_err(|e| anyhow::anyhow!("{}: cannot be added: {e:?}", path.display()))?;
        }
    }
    Ok(sum)
}

/// The value of a latency column (p50, p90, p99, p99.9, max, mean in µs) over `rows`'
/// readable histograms added; None for any other column, or when none can be read.
pub fn merged(results: &Results, rows: &[&Row], column: &str) -> Option<f64> {
    let quantile = match column {
        column::P50_US => Some(0.5),
        column::P90_US => Some(0.9),
        column::P99_US => Some(0.99),
        column::P999_US => Some(0.999),
        column::MAX_US => Some(1.0),
        column::MEAN_US => None,
        _ => return None,
    };
    if rows.is_empty() {
        return None;
    }
    let h = histogram(results, rows)?;
    Some(match quantile {
        Some(q) => h.value_at_quantile(q) as f64,
        None => h.mean(),
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2DeflateSerializer;

    use super::*;

    fn hlog(path: &std::path::Path, values: &[u64]) {
        let mut h = new_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut log = IntervalLogWriterBuilder::new()
            .with_start_time(UNIX_EPOCH)
            .begin_log_with(&mut out, &mut serializer)
            .unwrap();
        log.write_histogram(&h, Duration::ZERO, Duration::from_secs(1), None)
            .unwrap();
        drop(log);
        std::fs::write(path, out).unwrap();
    }

    #[test]
    fn a_later_repetitions_slower_requests_are_added_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (fast, slow) = (dir.path().join("fast.hlog"), dir.path().join("slow.hlog"));
        hlog(&fast, &[100; 99]);
        hlog(&slow, &[50_000_000]);
        // The fast log's histogram, decoded, cannot hold the slow one's value.
        let (_, first) = read_hlog(&fast).unwrap();
        let (_, second) = read_hlog(&slow).unwrap();
        let mut decoded = first[0].histogram.clone();
        assert!(decoded.add(&second[0].histogram).is_err());

        let sum = added([fast, slow].into_iter()).unwrap();
        assert_eq!(sum.len(), 100);
        assert_eq!(sum.value_at_quantile(0.99), sum.value_at_quantile(0.0));
        assert!(sum.equivalent(sum.max(), 50_000_000));
        assert!(added([dir.path().join("missing.hlog")].into_iter()).is_err());
    }
}
