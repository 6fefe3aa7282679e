//! The figures a claim rests on, charted per step beside its verdict: 004's Wireshark
//! IO graphs as TCP retransmissions and segments per second at each delay (claim 18)
//! and retransmissions against the clients (claim 32), and the response time of the
//! last clients to join against the tenth before (claim 20). Each point is the median
//! over the ok repetitions, with their range.

use super::compared::retransmissions_per_1000;
use super::{column, num_or_zero, values_of, Row, Status};
use crate::render::charts::{self, model_color, Pt, Series, XFormat, XySpec};
use crate::render::document::{Block, Chart};
use crate::verdict::fmt_count;

/// A claim's chart, drawn: the report's [`Chart`] block once laid out.
#[derive(Debug, Clone)]
pub struct ClaimChart {
    file: String,
    title: String,
    svg: String,
    caption: String,
}

impl ClaimChart {
    pub fn block(&self) -> Block {
        Block::Chart(Chart {
            file: self.file.clone(),
            title: self.title.clone(),
            svg: self.svg.clone(),
            caption: self.caption.clone(),
        })
    }
}

/// One chart of a claim: what it plots of which column, over which step axis.
struct Plot {
    slug: &'static str,
    title: &'static str,
    x: &'static str,
    x_desc: &'static str,
    y_desc: &'static str,
    /// The step's other axis, when the chart draws one line per value of it (where it
    /// takes more than one).
    per: Option<Per>,
    /// (series label suffix, the figure of a row), one line each per model.
    lines: &'static [(&'static str, Value)],
    caption: &'static str,
}

/// What a chart plots of one row.
type Value = fn(&Row) -> Option<f64>;

/// An axis a chart draws one line per value of: its column and how a line's label
/// names a value.
type Per = (&'static str, fn(f64) -> String);

const PER_CLIENTS: Option<Per> =
    Some((column::CONNECTIONS, |c| format!("{} clients", fmt_count(c))));

const PLOTS: [(usize, Plot); 4] = [
    (
        18,
        Plot {
            slug: "retransmissions",
            title: "TCP retransmissions per step",
            x: column::DELAY_MS,
            x_desc: "request delay (ms)",
            y_desc: "retransmitted segments per 1 000 requests",
            per: PER_CLIENTS,
            lines: &[("", retransmissions_per_1000)],
            caption: "Segments the server's namespace retransmitted during each step's load \
                      per 1 000 requests completed (net_retrans_segs over requests): the \
                      retransmissions 004 read from its Wireshark IO graphs.",
        },
    ),
    (
        18,
        Plot {
            slug: "segments",
            title: "TCP segments per second per step",
            x: column::DELAY_MS,
            x_desc: "request delay (ms)",
            y_desc: "TCP segments per second",
            per: PER_CLIENTS,
            lines: &[
                (" in", |r| r.num(column::NET_SEGS_IN_PER_S)),
                (" out", |r| r.num(column::NET_SEGS_OUT_PER_S)),
            ],
            caption: "Segments received and sent per second of each step's load \
                      (net_segs_in_per_s, net_segs_out_per_s): 004's packets per second.",
        },
    ),
    (
        20,
        Plot {
            slug: "join-order",
            title: "Response time by the order clients joined",
            x: column::CONNECTIONS,
            x_desc: "clients",
            y_desc: "mean response time (µs)",
            per: None,
            lines: &[
                (" last tenth to join", |r| {
                    r.num(column::JOINED_LAST_TENTH_MEAN_US)
                }),
                (" the tenth before", |r| {
                    r.num(column::JOINED_NINTH_TENTH_MEAN_US)
                }),
            ],
            caption: "Each connection's mean response time, the connections in the order \
                      they opened: the last tenth to join against the tenth before it \
                      (joined_last_tenth_mean_us, joined_ninth_tenth_mean_us).",
        },
    ),
    (
        32,
        Plot {
            slug: "retransmissions",
            title: "TCP retransmissions per step",
            x: column::CONNECTIONS,
            x_desc: "clients",
            y_desc: "retransmitted segments per 1 000 requests",
            per: Some((column::DELAY_MS, |d| format!("{d} ms"))),
            lines: &[("", retransmissions_per_1000)],
            caption: "Segments the server's namespace retransmitted during each step's load \
                      per 1 000 requests completed (net_retrans_segs over requests), \
                      against the clients: 004's TCP error flags as the clients grew.",
        },
    ),
];

/// The median and range of `value` over the ok repetitions of `model` at x = `x` where
/// `at` holds.
fn point(
    rows: &[Row],
    model: &str,
    x_column: &str,
    x: f64,
    at: &dyn Fn(&Row) -> bool,
    value: Value,
) -> Option<Pt> {
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|r| {
            r.model == model && r.status == Status::Ok && num_or_zero(r, x_column) == x && at(r)
        })
        .filter_map(value)
        .collect();
    v.sort_by(f64::total_cmp);
    let median = crate::stats::median(&v)?;
    Some(Pt {
        x,
        y: median,
        lo: v[0],
        hi: v[v.len() - 1],
    })
}

/// The lines of `plot` for `model`: one per line of the plot, for each value of its
/// `per` axis when that axis takes more than one (the later values' lines faint).
fn series_of(plot: &Plot, rows: &[Row], model: &str) -> Vec<Series> {
    let mine = || rows.iter().filter(|r| r.model == model);
    let groups: Vec<Option<(f64, String)>> = match plot.per {
        Some((c, name)) => {
            let values = values_of(mine(), c);
            if values.len() > 1 {
                values.into_iter().map(|v| Some((v, name(v)))).collect()
            } else {
                vec![None]
            }
        }
        None => vec![None],
    };
    let mut series = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let at = |r: &Row| match (plot.per, group) {
            (Some((c, _)), Some((v, _))) => num_or_zero(r, c) == *v,
            _ => true,
        };
        let xs = values_of(mine().filter(|r| at(r)), plot.x);
        for (i, (suffix, value)) in plot.lines.iter().enumerate() {
            let label = match group {
                Some((_, name)) => format!("{model} {name}{suffix}"),
                None => format!("{model}{suffix}"),
            };
            series.push(Series {
                label,
                color: model_color(model),
                dashed: i > 0,
                faint: g > 0,
                points: xs
                    .iter()
                    .filter_map(|&x| point(rows, model, plot.x, x, &at, *value))
                    .collect(),
            });
        }
    }
    series
}

/// The charts of claim `number` from `rows` (none for a claim without figures or rows
/// without them).
pub(super) fn blocks(number: usize, rows: &[Row]) -> Vec<ClaimChart> {
    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.sort();
    models.dedup();
    PLOTS
        .iter()
        .filter(|(n, _)| *n == number)
        .filter_map(|(_, plot)| {
            let series: Vec<Series> = models
                .iter()
                .flat_map(|model| series_of(plot, rows, model))
                .filter(|s| !s.points.is_empty())
                .collect();
            if series.is_empty() {
                return None;
            }
            let spec = XySpec {
                title: plot.title.into(),
                x_desc: plot.x_desc.into(),
                y_desc: plot.y_desc.into(),
                series,
                marks: Vec::new(),
                x_format: XFormat::Number,
                x_log: None,
                y_log: Some(false),
                notes: vec!["the median over the ok repetitions, the bar their range".into()],
            };
            let svg = charts::xy_chart(&spec).ok()?;
            Some(ClaimChart {
                file: format!("claim-{number}-{}", plot.slug),
                title: plot.title.into(),
                svg,
                caption: plot.caption.into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Repetition `rep` of epoll with `clients` at `delay` ms, retransmitting `retrans`
    /// segments over 1 000 requests.
    fn row(rep: u32, clients: f64, delay: f64, retrans: f64) -> Row {
        Row {
            model: "epoll".into(),
            step: format!("c{clients}-d{delay}"),
            repetition: rep,
            status: Status::Ok,
            failure_reason: String::new(),
            bytes_match: Some(true),
            ..Row::default()
        }
        .with(column::CONNECTIONS, clients)
        .with(column::DELAY_MS, delay)
        .with(column::NET_RETRANS_SEGS, retrans)
        .with(column::REQUESTS, 1000.0)
    }

    #[test]
    fn claim_18_charts_retransmissions_per_delay() {
        let rows: Vec<Row> = [(1, 1.0, 4.0), (2, 1.0, 8.0), (3, 1.0, 6.0), (1, 250.0, 0.0)]
            .iter()
            .map(|&(rep, d, r)| row(rep, 2500.0, d, r))
            .collect();
        let p = point(
            &rows,
            "epoll",
            column::DELAY_MS,
            1.0,
            &|_| true,
            retransmissions_per_1000,
        )
        .unwrap();
        assert_eq!((p.y, p.lo, p.hi), (6.0, 4.0, 8.0));
        let blocks = blocks(18, &rows);
        // Retransmissions only: these rows have no segment rates.
        assert_eq!(blocks.len(), 1);
        let chart = &blocks[0];
        assert_eq!(chart.file, "claim-18-retransmissions");
        assert!(chart.svg.contains("<svg"), "an SVG");
        // One client count: one line, named after the model alone.
        assert_eq!(series_of(&PLOTS[0].1, &rows, "epoll").len(), 1);
        assert!(super::blocks(7, &rows).is_empty());
    }

    #[test]
    fn claims_18_and_24_draw_a_line_for_each_value_of_the_other_axis() {
        let rows: Vec<Row> = [
            (2500.0, 250.0, 1.0),
            (2500.0, 125.0, 30.0),
            (5000.0, 250.0, 40.0),
            (5000.0, 125.0, 50.0),
        ]
        .iter()
        .map(|&(c, d, r)| row(1, c, d, r))
        .collect();
        // Each line: its label, whether faint, and its (x, y) points.
        let lines = |plot: &Plot| -> Vec<String> {
            series_of(plot, &rows, "epoll")
                .iter()
                .map(|s| {
                    let points: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
                    format!(
                        "{}{}: {points:?}",
                        s.label,
                        if s.faint { " (faint)" } else { "" }
                    )
                })
                .collect()
        };
        assert_eq!(
            lines(&PLOTS[0].1),
            [
                "epoll 2,500 clients: [(125.0, 30.0), (250.0, 1.0)]",
                "epoll 5,000 clients (faint): [(125.0, 50.0), (250.0, 40.0)]"
            ]
        );
        assert_eq!(
            lines(&PLOTS[3].1),
            [
                "epoll 125 ms: [(2500.0, 30.0), (5000.0, 50.0)]",
                "epoll 250 ms (faint): [(2500.0, 1.0), (5000.0, 40.0)]"
            ]
        );
        assert_eq!(blocks(32, &rows)[0].file, "claim-32-retransmissions");
    }
}
