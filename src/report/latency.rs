//! Latency across repetitions: the repetitions' HdrHistograms (load/latency.hlog) added
//! exactly, as `echolab merge` adds agents' histograms. A percentile of the sum is the
//! percentile of every request the repetitions made; the mean of per-repetition p99s
//! is not a percentile of anything.

use hdrhistogram::Histogram;

use super::data::{Record, Results};
use crate::load::merge::read_hlog;
use crate::results::column;

/// The histogram of every request of `rows` (latency, not the raw tag of an open loop);
/// None when any of them has no readable latency.hlog.
pub fn histogram(results: &Results, rows: &[&Record]) -> Option<Histogram<u64>> {
    let mut sum: Option<Histogram<u64>> = None;
    for row in rows {
        let path = row.step_dir(&results.dir).join("load/latency.hlog");
        let (_, intervals) = read_hlog(&path).ok()?;
        for interval in intervals.into_iter().filter(|i| !i.raw) {
            match &mut sum {
                Some(s) => s.add(&interval.histogram).ok()?,
                None => sum = Some(interval.histogram),
            }
        }
    }
    sum.filter(|h| !h.is_empty())
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
