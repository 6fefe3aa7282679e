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
use crate::results::reader::{Record, Results};

/// The histogram of every request of `rows` (latency, not the raw tag of an open loop);
/// None when any of them has no readable latency.hlog.
pub fn histogram(results: &Results, rows: &[&Record]) -> Option<Histogram<u64>> {
    added(
        rows.iter()
            .map(|row| row.step_dir(&results.dir).join(LOAD_DIR).join(LATENCY_LOG)),
    )
}

/// The latency intervals of every interval log added; None when one cannot be read.
fn added(hlogs: impl Iterator<Item = PathBuf>) -> Option<Histogram<u64>> {
    // Auto-resizing: a decoded interval keeps its own top, and a later repetition's
    // slower request would not fit in the first one's.
    let mut sum = new_histogram();
    for path in hlogs {
        let (_, intervals) = read_hlog(&path).ok()?;
        for interval in intervals.into_iter().filter(|i| !i.raw) {
            sum.add(&interval.histogram).ok()?;
        }
    }
    (!sum.is_empty()).then_some(sum)
}

/// The value of a latency column (p50, p90, p99, p99.9, max, mean in µs) over `rows`'
/// histograms added; None for any other column, or when a histogram is missing.
pub fn merged(results: &Results, rows: &[&Record], column: &str) -> Option<f64> {
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
        assert!(added([dir.path().join("missing.hlog")].into_iter()).is_none());
    }
}
