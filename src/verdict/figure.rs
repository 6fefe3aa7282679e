//! The figures a verdict decides: what each is read from, which way is better, how it
//! is written and how finely it is measured.

use crate::results::column;
use crate::results::reader::Row;
use crate::units::fmt_bytes;

use super::{fmt_count, fmt_cpu, fmt_cpu_per_request, fmt_latency, fmt_rate, fmt_seconds};

/// One figure: a number per step that can be ranked, which way is better, how it is
/// written and how finely it is measured. The report's, the comparison's and the
/// claims' figures are all this one type.
#[derive(Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    /// The results.csv column it is read from; "" for a claim's figure, which the claim
    /// reads itself.
    pub column: &'static str,
    pub higher_is_better: bool,
    pub format: fn(f64) -> String,
    /// The smallest difference the figure can measure.
    pub resolution: Resolution,
}

/// Bytes of a page: resident memory is counted in whole pages.
pub const PAGE_BYTES: f64 = 4096.0;

/// How finely a figure is measured. A figure measured in steps never names a difference
/// smaller than its step: such a pair ties "within the measurement step", however
/// consistently the repetitions order it (memory per connection at 31 connections
/// moves by 132 B with a single page, and so orders select and poll at random).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resolution {
    /// Fine enough that the test of significance alone decides (CPU from each process's
    /// CPU-time clock, to the nanosecond; latencies to the microsecond).
    Exact,
    /// Resident memory, counted in pages of [`PAGE_BYTES`], divided by the connections:
    /// a step of 4096 B / connections.
    PagePerConnection,
}

impl Resolution {
    /// The step of one repetition's value (0 when exact).
    pub fn step(self, row: &Row) -> f64 {
        match self {
            Resolution::Exact => 0.0,
            Resolution::PagePerConnection => row
                .num(column::CONNECTIONS)
                .filter(|c| *c >= 1.0)
                .map_or(0.0, |c| PAGE_BYTES / c),
        }
    }
}

pub const FIGURES: [Figure; 9] = [
    Figure {
        name: "Throughput",
        column: column::THROUGHPUT_RPS,
        higher_is_better: true,
        format: fmt_rate,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Response time p50",
        column: column::P50_US,
        higher_is_better: false,
        format: fmt_latency,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Response time p99",
        column: column::P99_US,
        higher_is_better: false,
        format: fmt_latency,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Response time mean",
        column: column::MEAN_US,
        higher_is_better: false,
        format: fmt_latency,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Tail latency p99.9",
        column: column::P999_US,
        higher_is_better: false,
        format: fmt_latency,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Completion time",
        column: column::COMPLETION_S,
        higher_is_better: false,
        format: fmt_seconds,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Server CPU",
        column: column::SERVER_CPU_PCT,
        higher_is_better: false,
        format: fmt_cpu,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Server CPU per request",
        column: column::SERVER_CPU_US_PER_REQUEST,
        higher_is_better: false,
        format: fmt_cpu_per_request,
        resolution: Resolution::Exact,
    },
    Figure {
        name: "Server memory per connection",
        column: column::SERVER_RSS_PER_CONN_BYTES,
        higher_is_better: false,
        format: fmt_bytes,
        resolution: Resolution::PagePerConnection,
    },
];

/// Capacity: the most connections a server held at once ([`capacity_verdict`]).
pub const HELD: Figure = Figure {
    name: "Max connections held",
    column: column::MAX_CONCURRENT_SERVER,
    higher_is_better: true,
    format: fmt_count,
    resolution: Resolution::Exact,
};
