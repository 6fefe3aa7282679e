//! The figures a claim rests on, charted per step beside its verdict: 004's Wireshark
//! IO graphs as TCP retransmissions and segments per second at each delay (claim 18),
//! and the response time of the last clients to join against the tenth before (claim
//! 20). Each point is the median over the ok repetitions, with their range.

use super::{column, num, values_of, Record, Status};
use crate::report::charts::{self, model_color, Pt, Series, XFormat, XySpec};
use crate::report::document::{Block, Chart};

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
    /// (series label suffix, column), one line each per model.
    lines: &'static [(&'static str, &'static str)],
    caption: &'static str,
}

const PLOTS: [(usize, Plot); 3] = [
    (
        18,
        Plot {
            slug: "retransmissions",
            title: "TCP retransmissions per step",
            x: column::DELAY_MS,
            x_desc: "request delay (ms)",
            y_desc: "retransmitted segments during the load",
            lines: &[("", column::NET_RETRANS_SEGS)],
            caption: "Segments the server's namespace retransmitted during each step's load \
                      (net_retrans_segs): the count 004 read from its Wireshark IO graphs.",
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
            lines: &[
                (" in", column::NET_SEGS_IN_PER_S),
                (" out", column::NET_SEGS_OUT_PER_S),
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
            lines: &[
                (" last tenth to join", column::JOINED_LAST_TENTH_MEAN_US),
                (" the tenth before", column::JOINED_NINTH_TENTH_MEAN_US),
            ],
            caption: "Each connection's mean response time, the connections in the order \
                      they opened: the last tenth to join against the tenth before it \
                      (joined_last_tenth_mean_us, joined_ninth_tenth_mean_us).",
        },
    ),
];

/// The median and range of `c` over the ok repetitions of `model` at x = `x`.
fn point(rows: &[Record], model: &str, x_column: &str, x: f64, c: &str) -> Option<Pt> {
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|r| r.model == model && r.status == Status::Ok && num(r, x_column) == x)
        .filter_map(|r| r.num(c))
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

/// The charts of claim `number` from `rows` (none for a claim without figures or rows
/// without them).
pub(super) fn blocks(number: usize, rows: &[Record]) -> Vec<ClaimChart> {
    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.sort();
    models.dedup();
    PLOTS
        .iter()
        .filter(|(n, _)| *n == number)
        .filter_map(|(_, plot)| {
            let series: Vec<Series> = models
                .iter()
                .flat_map(|model| {
                    plot.lines.iter().enumerate().map(move |(i, (suffix, c))| {
                        let xs = values_of(rows.iter().filter(|r| &r.model == model), plot.x);
                        Series {
                            label: format!("{model}{suffix}"),
                            color: model_color(model),
                            dashed: i > 0,
                            faint: false,
                            points: xs
                                .iter()
                                .filter_map(|&x| point(rows, model, plot.x, x, c))
                                .collect(),
                        }
                    })
                })
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

    fn row(rep: u32, delay: f64, retrans: f64) -> Record {
        let numbers: std::collections::BTreeMap<String, f64> = [
            (column::DELAY_MS.to_string(), delay),
            (column::NET_RETRANS_SEGS.to_string(), retrans),
        ]
        .into();
        Record {
            model: "epoll".into(),
            step: format!("d{delay}"),
            repetition: rep,
            status: Status::Ok,
            failure_reason: String::new(),
            bytes_match: Some(true),
            raw: numbers
                .iter()
                .map(|(c, v)| (c.clone(), v.to_string()))
                .collect(),
            numbers,
        }
    }

    #[test]
    fn claim_18_charts_retransmissions_per_delay() {
        let rows: Vec<Record> = [(1, 1.0, 4.0), (2, 1.0, 8.0), (3, 1.0, 6.0), (1, 250.0, 0.0)]
            .iter()
            .map(|&(rep, d, r)| row(rep, d, r))
            .collect();
        let p = point(
            &rows,
            "epoll",
            column::DELAY_MS,
            1.0,
            column::NET_RETRANS_SEGS,
        )
        .unwrap();
        assert_eq!((p.y, p.lo, p.hi), (6.0, 4.0, 8.0));
        let blocks = blocks(18, &rows);
        // Retransmissions only: these rows have no segment rates.
        assert_eq!(blocks.len(), 1);
        let chart = &blocks[0];
        assert_eq!(chart.file, "claim-18-retransmissions");
        assert!(chart.svg.contains("<svg"), "an SVG");
        assert!(super::blocks(7, &rows).is_empty());
    }
}
