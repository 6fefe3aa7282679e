//! The figures of one sweep: the metric charts (driven by one table of metrics,
//! one entry per chart), the capacity bars, the latency percentile plot at each
//! model's heaviest step, and the per-point summary table.

use super::timelines::{self, HeavyStep};
use crate::render::charts::{
    self, chart, model_color, time_unit, Bar, BarSpec, Mark, Pt, Series, XFormat, XySpec,
};
use crate::render::document::{Block, Chart, Section, Table};
use crate::results::column;
use crate::results::reader::{Results, Row, Status};
use crate::units::fmt_bytes;
use crate::verdict::sweep::{self, aggregate, at, axis_desc, problems, Agg, Sweep};
use crate::verdict::{fmt_count, fmt_latency};

/// How a metric's values are shown on the y axis.
#[derive(Clone, Copy)]
enum Unit {
    /// Microseconds, shown in µs, ms or s, whichever keeps the tick labels short.
    Time,
    /// The column divided by `scale`, named `name` on the axis.
    Scaled { name: &'static str, scale: f64 },
}

/// One line per model in a metric chart.
struct Line {
    column: &'static str,
    /// Added to the model's name in the legend ("p99"); the model's name alone when None.
    legend: Option<&'static str>,
    dashed: bool,
}

/// A chart of results.csv columns against a sweep's x axis, lines per model.
struct MetricChart {
    /// The chart's file: `{sweep slug}-{file}.svg`.
    file: &'static str,
    /// The title, before " vs {axis}".
    title: &'static str,
    /// The y axis description, before its unit in brackets.
    y_label: &'static str,
    unit: Unit,
    lines: &'static [Line],
    y_log: Option<bool>,
    /// What the chart shows; the caption adds how repetitions are drawn.
    caption: &'static str,
    /// Left out of a sweep where no row has a value (a timed run has no completion time).
    optional: bool,
}

/// The metric charts of every sweep section, in order: a new chart is one entry.
const METRIC_CHARTS: [MetricChart; 8] = [
    MetricChart {
        file: "response-time",
        title: "Response time",
        y_label: "response time",
        unit: Unit::Time,
        lines: &[
            Line {
                column: column::P99_US,
                legend: Some("p99"),
                dashed: false,
            },
            Line {
                column: column::P50_US,
                legend: Some("p50"),
                dashed: true,
            },
        ],
        y_log: None,
        caption: "p99 (solid) and p50 (dashed) response time per model.",
        optional: false,
    },
    MetricChart {
        file: "mean-response-time",
        title: "Mean response time",
        y_label: "mean response time",
        unit: Unit::Time,
        lines: &[Line {
            column: column::MEAN_US,
            legend: None,
            dashed: false,
        }],
        y_log: None,
        caption: "Mean response time per model, the average the classic studies report; \
                  compare it with the p50 and p99 above.",
        optional: true,
    },
    MetricChart {
        file: "completion-time",
        title: "Completion time of the workload",
        y_label: "time until the last connection finished",
        unit: Unit::Scaled {
            name: "s",
            scale: 1.0,
        },
        lines: &[Line {
            column: column::COMPLETION_S,
            legend: None,
            dashed: false,
        }],
        y_log: Some(false),
        caption: "A fixed workload (every connection sends its `requests`): seconds from the \
                  start of the load until the last connection finished.",
        optional: true,
    },
    MetricChart {
        file: "throughput",
        title: "Throughput",
        y_label: "throughput",
        unit: Unit::Scaled {
            name: "requests/s",
            scale: 1.0,
        },
        lines: &[Line {
            column: column::THROUGHPUT_RPS,
            legend: None,
            dashed: false,
        }],
        y_log: Some(false),
        caption: "Completed echo requests per second, all connections together.",
        optional: false,
    },
    MetricChart {
        file: "cpu",
        title: "Server CPU",
        y_label: "server CPU",
        unit: Unit::Scaled {
            name: "% of one core",
            scale: 1.0,
        },
        lines: &[Line {
            column: column::SERVER_CPU_PCT,
            legend: None,
            dashed: false,
        }],
        y_log: Some(false),
        caption: "User plus system CPU of the server process, sampled from /proc; 200% is two \
                  cores busy.",
        optional: false,
    },
    MetricChart {
        file: "memory-per-connection",
        title: "Server memory per connection",
        y_label: "server RSS per connection",
        unit: Unit::Scaled {
            name: "KiB",
            scale: 1024.0,
        },
        lines: &[Line {
            column: column::SERVER_RSS_PER_CONN_BYTES,
            legend: None,
            dashed: false,
        }],
        y_log: None,
        caption: "Peak resident memory of the server divided by its connections; at few \
                  connections the fixed cost dominates.",
        optional: false,
    },
    MetricChart {
        file: "syscalls-per-request",
        title: "Server system calls per request",
        y_label: "system calls per request",
        unit: Unit::Scaled {
            name: "calls",
            scale: 1.0,
        },
        lines: &[
            Line {
                column: column::SERVER_SYSCALLS_PER_REQ,
                legend: None,
                dashed: false,
            },
            Line {
                column: column::SERVER_WAIT_CALLS_PER_REQ,
                legend: Some("wait"),
                dashed: true,
            },
        ],
        y_log: None,
        caption: "The server's system calls per completed request over the load (solid) and \
                  of them its wait calls, epoll_wait, select, poll or io_uring_enter (dashed), \
                  counted by the kernel (perf tracepoints, every thread and child).",
        optional: true,
    },
    MetricChart {
        file: "context-switches-per-request",
        title: "Server context switches per request",
        y_label: "context switches per request",
        unit: Unit::Scaled {
            name: "switches",
            scale: 1.0,
        },
        lines: &[
            Line {
                column: column::SERVER_VOLUNTARY_SWITCHES_PER_REQ,
                legend: Some("voluntary"),
                dashed: false,
            },
            Line {
                column: column::SERVER_INVOLUNTARY_SWITCHES_PER_REQ,
                legend: Some("involuntary"),
                dashed: true,
            },
        ],
        y_log: None,
        caption: "Times a server thread left the CPU per completed request: voluntary (it \
                  blocked, solid) and involuntary (preempted while runnable, dashed).",
        optional: true,
    },
];

/// One metric chart of a sweep.
fn metric_chart(results: &Results, s: &Sweep, metric: &MetricChart) -> anyhow::Result<Block> {
    let (unit, scale) = match metric.unit {
        Unit::Time => {
            let columns: Vec<&str> = metric.lines.iter().map(|l| l.column).collect();
            time_unit(max_of(results, s, &columns))
        }
        Unit::Scaled { name, scale } => (name, scale),
    };
    let mut series = Vec::new();
    for m in &sweep::models(results) {
        for line in metric.lines {
            let label = match line.legend {
                Some(legend) => format!("{m} {legend}"),
                None => m.clone(),
            };
            series.push(series_of(
                results,
                s,
                m,
                line.column,
                scale,
                label,
                line.dashed,
            ));
        }
    }
    chart(
        format!("{}-{}", s.slug(), metric.file),
        &XySpec {
            title: format!("{} vs {}", metric.title, sweep::axis_name(&s.axis)),
            x_desc: axis_desc(&s.axis),
            y_desc: format!("{} ({unit})", metric.y_label),
            series,
            marks: failure_marks(results, s),
            x_format: XFormat::Number,
            x_log: None,
            y_log: metric.y_log,
            notes: vec![],
        },
        format!("{} {SPREAD}", metric.caption),
    )
}

fn failure_marks(results: &Results, s: &Sweep) -> Vec<Mark> {
    let mut marks = Vec::new();
    for model in sweep::models(results) {
        for p in problems(results, s, &model, &[Status::Failed, Status::Interrupted]) {
            marks.push(Mark {
                x: p.x,
                color: model_color(&model),
                note: format!(
                    "{model} at {}: {} in {} of {} repetitions: {}",
                    at(&s.axis, p.x),
                    p.status.name(),
                    p.rows.len(),
                    p.total,
                    p.reasons()
                ),
            });
        }
    }
    marks
}

fn series_of(
    results: &Results,
    s: &Sweep,
    model: &str,
    column: &str,
    scale: f64,
    label: String,
    dashed: bool,
) -> Series {
    // Latency: the percentile of the repetitions' histograms added, never the mean of
    // their percentiles; the repetitions' own values give the spread.
    let groups = s.by_x(results, model);
    let merged = |x: f64| {
        let i = groups.binary_search_by(|(gx, _)| gx.total_cmp(&x)).ok()?;
        let rows = &groups[i].1;
        let ok: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| r.status == crate::results::reader::Status::Ok)
            .collect();
        crate::results::latency::merged(results, &ok, column)
    };
    let points = aggregate(results, s, model, &|r: &Row| r.num(column))
        .into_iter()
        .map(|a| Pt {
            x: a.x,
            y: merged(a.x).unwrap_or(a.mean) / scale,
            lo: a.min / scale,
            hi: a.max / scale,
        })
        .collect();
    Series {
        label,
        color: model_color(model),
        dashed,
        faint: false,
        points,
    }
}

fn max_of(results: &Results, s: &Sweep, columns: &[&str]) -> f64 {
    s.rows(results)
        .filter(|r| r.status == Status::Ok)
        .flat_map(|r| columns.iter().filter_map(|c| r.num(c)))
        .fold(0.0, f64::max)
}

const SPREAD: &str =
    "Points are the mean of the repetitions that finished ok; bars show their min–max.";

pub(super) fn sweep_sections(
    results: &Results,
    s: &Sweep,
    heavy: &[HeavyStep],
) -> anyhow::Result<Vec<Section>> {
    let slug = s.slug();
    let name = sweep::axis_name(&s.axis);
    let mut blocks = Vec::new();
    for metric in &METRIC_CHARTS {
        let columns: Vec<&str> = metric.lines.iter().map(|l| l.column).collect();
        let measured = s
            .rows(results)
            .any(|r| columns.iter().any(|c| r.num(c).is_some()));
        if metric.optional && !measured {
            continue;
        }
        blocks.push(metric_chart(results, s, metric)?);
    }
    blocks.push(capacity_chart(results, s)?);
    if heavy.iter().any(|h| !h.percentiles.is_empty()) {
        blocks.push(percentiles_chart(s, heavy)?);
    }
    blocks.push(Block::Paragraph(format!(
        "Per {name} and model: mean of the repetitions that finished ok, with [min–max] when they differ."
    )));
    blocks.push(Block::Table(summary_table(results, s)));

    let mut sections = vec![Section {
        heading: s.title(),
        level: 2,
        id: format!("sweep-{slug}"),
        blocks,
    }];
    sections.push(Section {
        heading: format!("Timelines at the heaviest step ({})", s.title()),
        level: 3,
        id: format!("timelines-{slug}"),
        blocks: timelines::blocks(&slug, heavy)?,
    });
    Ok(sections)
}

/// Capacity bars: the most connections each server held at once, with where it broke.
fn capacity_chart(results: &Results, s: &Sweep) -> anyhow::Result<Block> {
    let models = sweep::models(results);
    let slug = s.slug();
    let mut bars = Vec::new();
    let mut bar_notes = Vec::new();
    for m in &models {
        let held = s
            .rows(results)
            .filter(|r| &r.model == m && r.status != Status::Skipped)
            .filter_map(|r| r.num(column::MAX_CONCURRENT_SERVER))
            .reduce(f64::max);
        if let Some(held) = held {
            bars.push(Bar {
                label: m.clone(),
                color: model_color(m),
                value: held,
            });
        }
        if let Some(p) = problems(results, s, m, &[Status::Failed, Status::Interrupted]).first() {
            bar_notes.push(format!(
                "{m} {} at {}: {}",
                p.status.name(),
                at(&s.axis, p.x),
                p.reasons()
            ));
        }
    }
    let bar_spec = BarSpec {
        title: "Max connections held per model".into(),
        y_desc: "connections held at once by the server".into(),
        bars,
        notes: bar_notes,
    };
    Ok(Block::Chart(Chart {
        file: format!("{slug}-max-connections"),
        title: bar_spec.title.clone(),
        svg: charts::bar_chart(&bar_spec)?,
        caption:
            "The most connections each server held at once (max_concurrent_server) in any step \
                  it ran, failed steps included; notes say where a model broke."
                .into(),
    }))
}

/// Percentile distribution at each model's heaviest step.
fn percentiles_chart(s: &Sweep, heavy: &[HeavyStep]) -> anyhow::Result<Block> {
    let slug = s.slug();
    let name = sweep::axis_name(&s.axis);
    let mut pct_series = Vec::new();
    let mut pct_max: f64 = 0.0;
    for h in heavy {
        for (_, table) in &h.percentiles {
            for (_, v) in table.pairs("percentile", "latency_us") {
                pct_max = pct_max.max(v);
            }
        }
    }
    let (unit, scale) = time_unit(pct_max);
    for h in heavy {
        for (i, (rep, table)) in h.percentiles.iter().enumerate() {
            let to_points = |column: &str| -> Vec<Pt> {
                table
                    .pairs("percentile", column)
                    .into_iter()
                    .filter(|(p, _)| *p < 100.0)
                    .map(|(p, v)| {
                        let x = 1.0 / (1.0 - p / 100.0);
                        Pt {
                            x,
                            y: v / scale,
                            lo: v / scale,
                            hi: v / scale,
                        }
                    })
                    .collect()
            };
            let label = format!("{} ({})", h.model, h.x);
            pct_series.push(Series {
                label: if i == 0 {
                    label.clone()
                } else {
                    format!("{label} rep {rep}")
                },
                color: model_color(&h.model),
                dashed: false,
                faint: i > 0,
                points: to_points("latency_us"),
            });
            let raw = to_points("latency_raw_us");
            if i == 0 && !raw.is_empty() {
                pct_series.push(Series {
                    label: format!("{} uncorrected", h.model),
                    color: model_color(&h.model),
                    dashed: true,
                    faint: false,
                    points: raw,
                });
            }
        }
    }
    let beyond = heavy
        .iter()
        .any(|h| h.repetitions > super::timelines::PERCENTILE_REPETITIONS);
    let which = if beyond {
        format!(
            "the first repetition solid, the next ones faint (at most {} repetitions per model \
             drawn)",
            super::timelines::PERCENTILE_REPETITIONS
        )
    } else {
        "the first repetition solid, others faint".to_string()
    };
    chart(
        format!("{slug}-latency-percentiles"),
        &XySpec {
            title: "Latency percentile distribution".into(),
            x_desc: "percentile (log scale of 1/(1−p))".into(),
            y_desc: format!("response time ({unit})"),
            series: pct_series,
            marks: vec![],
            x_format: XFormat::Percentile,
            x_log: Some(true),
            y_log: None,
            notes: vec![],
        },
        format!(
            "HdrHistogram-style percentile plot from load/percentiles.csv at each model's heaviest \
             step (its {name} in brackets in the legend); {which}; open-loop runs also show \
             the uncorrected latency dashed."
        ),
    )
}

/// A column of a sweep's summary table.
struct SummaryColumn {
    header: &'static str,
    column: &'static str,
    format: fn(f64) -> String,
}

/// The per-point columns of a sweep's summary table, between its x and its status.
const SUMMARY_COLUMNS: [SummaryColumn; 8] = [
    SummaryColumn {
        header: "Throughput (req/s)",
        column: column::THROUGHPUT_RPS,
        format: fmt_count,
    },
    SummaryColumn {
        header: "p50",
        column: column::P50_US,
        format: fmt_latency,
    },
    SummaryColumn {
        header: "p99",
        column: column::P99_US,
        format: fmt_latency,
    },
    SummaryColumn {
        header: "mean",
        column: column::MEAN_US,
        format: fmt_latency,
    },
    SummaryColumn {
        header: "Completion (s)",
        column: column::COMPLETION_S,
        format: fmt_one_decimal,
    },
    SummaryColumn {
        header: "Server CPU %",
        column: column::SERVER_CPU_PCT,
        format: fmt_one_decimal,
    },
    SummaryColumn {
        header: "RSS per connection",
        column: column::SERVER_RSS_PER_CONN_BYTES,
        format: fmt_bytes,
    },
    SummaryColumn {
        header: "Max held",
        column: column::MAX_CONCURRENT_SERVER,
        format: fmt_count,
    },
];

fn fmt_one_decimal(v: f64) -> String {
    format!("{v:.1}")
}

fn summary_table(results: &Results, s: &Sweep) -> Table {
    let models = sweep::models(results);
    // Columns no row of the sweep has (an older results.csv, a timed run's completion
    // time) are left out rather than shown as dashes.
    let columns: Vec<&SummaryColumn> = SUMMARY_COLUMNS
        .iter()
        .filter(|c| s.rows(results).any(|r| r.num(c.column).is_some()))
        .collect();
    let mut rows = Vec::new();
    let mut flagged = Vec::new();
    for m in &models {
        // Grouped and aggregated once per model (and column), so the table is linear in
        // rows however many steps the sweep has.
        let aggs: Vec<Vec<Agg>> = columns
            .iter()
            .map(|c| aggregate(results, s, m, &|r: &Row| r.num(c.column)))
            .collect();
        for (x, at_x) in s.by_x(results, m) {
            let ok = at_x.iter().filter(|r| r.status == Status::Ok).count();
            let cell = |aggs: &[Agg], fmt: &fn(f64) -> String| -> String {
                match aggs
                    .binary_search_by(|a| a.x.total_cmp(&x))
                    .ok()
                    .map(|i| &aggs[i])
                {
                    Some(a) if a.max > a.min => {
                        format!("{} [{}–{}]", fmt(a.mean), fmt(a.min), fmt(a.max))
                    }
                    Some(a) => fmt(a.mean),
                    None => "—".into(),
                }
            };
            let mut statuses: Vec<&str> = Vec::new();
            for r in &at_x {
                if !statuses.contains(&r.status.name()) {
                    statuses.push(r.status.name());
                }
            }
            let reasons: Vec<&str> = at_x
                .iter()
                .map(|r| r.failure_reason.as_str())
                .filter(|r| !r.is_empty())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            flagged.push(ok < at_x.len());
            let mut row = vec![
                m.clone(),
                sweep::plain_number(x),
                format!("{ok}/{}", at_x.len()),
            ];
            row.extend(columns.iter().zip(&aggs).map(|(c, a)| cell(a, &c.format)));
            row.push(if reasons.is_empty() {
                statuses.join(", ")
            } else {
                format!(
                    "{}: {}",
                    statuses.join(", "),
                    super::first_named(&reasons, "; ")
                )
            });
            rows.push(row);
        }
    }
    let mut headers = vec!["Model".into(), s.axis.clone(), "Reps ok".into()];
    headers.extend(columns.iter().map(|c| c.header.to_string()));
    headers.push("Status".into());
    let mut numeric = vec![false, true, true];
    numeric.extend(columns.iter().map(|_| true));
    numeric.push(false);
    Table {
        headers,
        rows,
        numeric,
        flagged,
    }
}
