//! The verdict (which model wins each figure, by what ratio), computed from
//! results.csv; the plain-language findings under it are in findings.rs.

use super::data::{Record, Results, Status};
use super::latency;
use super::sweep::{self, at, Sweep};
use crate::results::column;
use crate::stats::{self, Comparison};
use crate::units::fmt_bytes;

pub const BASELINE: &str = "tokio";

/// One figure of the report, as a number per step that can be ranked.
pub struct Figure {
    pub name: &'static str,
    pub column: &'static str,
    pub higher_is_better: bool,
    pub format: fn(f64) -> String,
}

pub const FIGURES: [Figure; 9] = [
    Figure {
        name: "Throughput",
        column: column::THROUGHPUT_RPS,
        higher_is_better: true,
        format: fmt_rate,
    },
    Figure {
        name: "Response time p50",
        column: column::P50_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Response time p99",
        column: column::P99_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Response time mean",
        column: column::MEAN_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Tail latency p99.9",
        column: column::P999_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Completion time",
        column: column::COMPLETION_S,
        higher_is_better: false,
        format: fmt_seconds,
    },
    Figure {
        name: "Server CPU",
        column: column::SERVER_CPU_PCT,
        higher_is_better: false,
        format: fmt_cpu,
    },
    Figure {
        name: "Server CPU per request",
        column: column::SERVER_CPU_US_PER_REQUEST,
        higher_is_better: false,
        format: fmt_cpu_per_request,
    },
    Figure {
        name: "Server memory per connection",
        column: column::SERVER_RSS_PER_CONN_BYTES,
        higher_is_better: false,
        format: fmt_bytes,
    },
];

/// Capacity: the most connections a server held at once ([`capacity_verdict`]).
pub const HELD: Figure = Figure {
    name: "Max connections held",
    column: column::MAX_CONCURRENT_SERVER,
    higher_is_better: true,
    format: fmt_count,
};

/// Thousands separated by commas, at most 3 significant decimals below 100.
pub fn fmt_count(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        let n = v.round() as i64;
        let digits = n.abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            out.insert(0, '-');
        }
        out
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn fmt_seconds(v: f64) -> String {
    format!("{} s", fmt_count(v))
}

pub fn fmt_rate(v: f64) -> String {
    format!("{} req/s", fmt_count(v))
}

pub fn fmt_latency(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

pub fn fmt_cpu(pct: f64) -> String {
    format!("{pct:.1}% of a core")
}

pub fn fmt_cpu_per_request(us: f64) -> String {
    format!("{us:.2} µs CPU/req")
}

/// "×1.10"; the ratio is always ≥ 1 and reads "this many times better".
pub fn fmt_ratio(r: f64) -> String {
    format!("×{r:.2}")
}

/// "×1.32 (1.20–1.45)": a ratio of medians with its 95 % bootstrap interval.
pub fn fmt_ratio_interval(c: &Comparison) -> String {
    let (lo, hi) = c.interval;
    if lo.is_finite() && hi.is_finite() {
        format!("{} ({lo:.2}–{hi:.2})", fmt_ratio(c.ratio))
    } else {
        fmt_ratio(c.ratio)
    }
}

/// What the test of significance decided for one figure.
#[derive(Debug, Clone, Copy)]
pub enum Decision {
    /// The best model is significantly better than every other model compared (each
    /// pair's p below [`stats::ALPHA`]); its comparison with the runner-up.
    Winner(Comparison),
    /// No model alone beats all the others, but the best `count` (at most half of the
    /// models) are each significantly better than every model ranked below them: they
    /// lead together, and no test separates them. `ahead`: the narrowest margin, the
    /// last leader against the first model behind, with the largest p of the pairs
    /// across; `tie`: the largest p between the best model and the other leaders.
    Leaders {
        count: usize,
        ahead: Comparison,
        tie: Comparison,
    },
    /// Some pair with the best model is not significant: the largest p of those pairs.
    NoDifference { comparison: Comparison },
    /// Fewer than two models had repetitions that count: nothing to compare.
    Alone,
}

impl Decision {
    /// How many models the decision names best: 1 for a winner, the leaders' count,
    /// or every model (`usize::MAX`) when nothing was decided. Larger is weaker.
    fn named(&self) -> usize {
        match self {
            Decision::Winner(_) => 1,
            Decision::Leaders { count, .. } => *count,
            Decision::NoDifference { .. } | Decision::Alone => usize::MAX,
        }
    }
}

pub struct Verdict {
    pub figure: String,
    /// Where the models were compared ("connections=4000").
    pub compared_at: String,
    /// (model, value) best first. The value is the median of the repetitions that count;
    /// for latency, the percentile (or mean) of their histograms added exactly.
    pub ranking: Vec<(String, f64)>,
    /// Each ranked model's ok repetitions: the samples of the test, in ranking order.
    pub samples: Vec<Vec<f64>>,
    pub format: fn(f64) -> String,
    pub higher_is_better: bool,
    /// Flagged repetitions at this point: generator-bound, disturbed.
    pub left_out: (usize, usize),
    pub decision: Decision,
}

impl Verdict {
    /// The model named the winner, only when the test decided.
    pub fn winner(&self) -> Option<&(String, f64)> {
        match self.decision {
            Decision::Winner(_) => self.ranking.first(),
            _ => None,
        }
    }

    /// The winner, the leaders best first, or nobody.
    pub fn winners(&self) -> Vec<&str> {
        let named = match self.decision {
            Decision::Winner(_) => 1,
            Decision::Leaders { count, .. } => count,
            _ => 0,
        };
        self.ranking[..named]
            .iter()
            .map(|(m, _)| m.as_str())
            .collect()
    }

    /// The winner or each leader with its value as the figure writes it ("33 µs"), best
    /// first.
    pub fn winners_with_values(&self) -> Vec<(&str, String)> {
        let named = self.winners().len();
        self.ranking[..named]
            .iter()
            .map(|(m, value)| (m.as_str(), (self.format)(*value)))
            .collect()
    }

    /// The best-ranked model after the winner or the leaders.
    pub fn runner_up(&self) -> Option<&(String, f64)> {
        match self.decision {
            Decision::Winner(_) => self.ranking.get(1),
            Decision::Leaders { count, .. } => self.ranking.get(count),
            _ => None,
        }
    }

    /// The margin the winner or the leaders hold over the runner-up.
    pub fn margin(&self) -> Option<Comparison> {
        match self.decision {
            Decision::Winner(c) => Some(c),
            Decision::Leaders { ahead, .. } => Some(ahead),
            _ => None,
        }
    }

    pub fn baseline(&self) -> Option<f64> {
        self.ranking
            .iter()
            .find(|(m, _)| m == BASELINE)
            .map(|(_, v)| *v)
    }

    /// The winner against the baseline: ratio of medians, interval and p.
    pub fn against_baseline(&self) -> Option<Comparison> {
        self.winner()?;
        let i = self.ranking.iter().position(|(m, _)| m == BASELINE)?;
        (i > 0)
            .then(|| oriented(&self.samples[0], &self.samples[i], self.higher_is_better))
            .flatten()
    }

    /// "p < 0.001, n = 5" for a winner (its weakest pair); for leaders, the tie
    /// between them and the weakest pair across; "no difference: p = 0.40, n = 5"
    /// otherwise.
    pub fn significance(&self) -> String {
        match &self.decision {
            Decision::Winner(_) => {
                let weakest = (1..self.samples.len())
                    .filter_map(|i| {
                        oriented(&self.samples[0], &self.samples[i], self.higher_is_better)
                    })
                    .max_by(|a, b| a.p.total_cmp(&b.p));
                weakest.map(|c| c.describe_p()).unwrap_or_default()
            }
            Decision::Leaders { ahead, tie, .. } => format!(
                "leaders tie ({}); each ahead of every other model, {}",
                stats::p_equals(tie.p),
                ahead.describe_p()
            ),
            Decision::NoDifference { comparison, .. } if comparison.significant() => format!(
                "no difference of x{} or more: x{:.2}, {}",
                stats::MIN_EFFECT,
                comparison.ratio,
                comparison.describe_p()
            ),
            Decision::NoDifference { comparison, .. } => {
                format!("no difference: {}", comparison.describe_p())
            }
            Decision::Alone => "one model: nothing to compare".into(),
        }
    }

    /// Why repetitions were left out, for a note beside the verdict.
    pub fn left_out_note(&self) -> Option<String> {
        let (bound, disturbed) = self.left_out;
        let mut parts = Vec::new();
        if bound > 0 {
            parts.push(format!("{bound} generator-bound"));
        }
        if disturbed > 0 {
            parts.push(format!("{disturbed} disturbed"));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "{} repetition(s), each left out in turn",
                parts.join(" and ")
            )
        })
    }
}

/// `other` against `best`, oriented so that a ratio above 1 means `best` is better.
fn oriented(best: &[f64], other: &[f64], higher_is_better: bool) -> Option<Comparison> {
    if higher_is_better {
        stats::compare(other, best)
    } else {
        stats::compare(best, other)
    }
}

/// [`decide`], and then again with each flagged (generator-bound or disturbed)
/// repetition left out in turn: a winner (or a group of leaders) stays one only when
/// no single flagged repetition is what made it one. The weakest of those decisions
/// (the one naming the most models) is returned.
pub fn decide_robustly(
    samples: &[Vec<f64>],
    flagged: &[Vec<bool>],
    higher_is_better: bool,
) -> Decision {
    let mut weakest = decide(samples, higher_is_better);
    for (i, flags) in flagged.iter().enumerate() {
        for (j, _) in flags.iter().enumerate().filter(|(_, f)| **f) {
            if weakest.named() == usize::MAX {
                return weakest;
            }
            let mut without = samples.to_vec();
            without[i].remove(j);
            let d = decide(&without, higher_is_better);
            if d.named() > weakest.named() {
                weakest = d;
            }
        }
    }
    weakest
}

/// The intersection-union rule: the best-ranked model wins only when it is
/// significantly better than every other model, each pair tested on its own, and by
/// [`stats::MIN_EFFECT`] or more. Each pair
/// must hold, so no multiple-comparison correction applies: the chance of naming a
/// wrong winner is at most that of its weakest pair, below [`stats::ALPHA`].
///
/// When no model wins alone, the same rule names the smallest group of best-ranked
/// models, at most half of them, each significantly better than every model ranked
/// below the group: leaders that tie (epoll and uring at the same CPU per request,
/// both far below select), rather than a "no difference" that would hide how far
/// behind the others are.
pub fn decide(samples: &[Vec<f64>], higher_is_better: bool) -> Decision {
    if samples.len() < 2 || samples.iter().any(|s| s.is_empty()) {
        return Decision::Alone;
    }
    // The weakest of the pairs (leader, model behind) when the first `count` lead, and
    // whether every pair is a lead: significant and by stats::MIN_EFFECT or more. A
    // difference the wrong way round is no lead either (its p shown as 1); a lead
    // smaller than MIN_EFFECT is weaker than any significant one and keeps its p.
    let weakest_across = |count: usize| -> Option<(Comparison, bool)> {
        let mut weakest: Option<(f64, Comparison)> = None;
        for a in &samples[..count] {
            for b in &samples[count..] {
                let c = oriented(a, b, higher_is_better)?;
                let (key, c) = if c.ratio <= 1.0 {
                    (2.0, Comparison { p: 1.0, ..c })
                } else if c.ratio < stats::MIN_EFFECT {
                    (1.0 + c.p, c)
                } else {
                    (c.p, c)
                };
                if weakest.as_ref().is_none_or(|(k, _)| key > *k) {
                    weakest = Some((key, c));
                }
            }
        }
        weakest.map(|(key, c)| (c, key < stats::ALPHA))
    };
    let Some((alone, alone_leads)) = weakest_across(1) else {
        return Decision::Alone;
    };
    if alone_leads {
        return Decision::Winner(
            oriented(&samples[0], &samples[1], higher_is_better).unwrap_or(alone),
        );
    }
    for count in 2..=samples.len() / 2 {
        let Some((across, leads)) = weakest_across(count) else {
            break;
        };
        if leads {
            let narrowest = oriented(&samples[count - 1], &samples[count], higher_is_better);
            let tie = (1..count)
                .filter_map(|i| oriented(&samples[0], &samples[i], higher_is_better))
                .max_by(|a, b| a.p.total_cmp(&b.p));
            if let (Some(narrowest), Some(tie)) = (narrowest, tie) {
                return Decision::Leaders {
                    count,
                    ahead: Comparison {
                        p: across.p,
                        ..narrowest
                    },
                    tie,
                };
            }
        }
    }
    Decision::NoDifference { comparison: alone }
}

fn rank_by(order: &mut [usize], values: &[f64], higher_is_better: bool) {
    order.sort_by(|&a, &b| {
        let o = values[a].total_cmp(&values[b]);
        if higher_is_better {
            o.reverse()
        } else {
            o
        }
    });
}

/// Two sides of one figure (their values, their ok repetitions and which of those are
/// flagged) decided as the verdict decides between two models: ranked by value, then
/// [`decide_robustly`]. True when the better side wins: a difference echolab names.
pub fn pair_differs(
    values: [f64; 2],
    samples: [&[f64]; 2],
    flagged: [&[bool]; 2],
    higher_is_better: bool,
) -> bool {
    let mut order = [0, 1];
    rank_by(&mut order, &values, higher_is_better);
    let samples: Vec<Vec<f64>> = order.iter().map(|&i| samples[i].to_vec()).collect();
    let flagged: Vec<Vec<bool>> = order.iter().map(|&i| flagged[i].to_vec()).collect();
    matches!(
        decide_robustly(&samples, &flagged, higher_is_better),
        Decision::Winner(_)
    )
}

/// Whether a repetition is flagged: generator-bound, or disturbed (not both counted).
pub fn flag(row: &Record) -> (bool, bool) {
    let bound = row.raw(column::GENERATOR_BOUND) == "true";
    (bound, !bound && row.raw(column::DISTURBED) == "true")
}

/// Each figure compared at the heaviest x where at least two models succeeded
/// (the point the sweep exists to reach), or the heaviest with any success.
pub fn verdicts(results: &Results, sweep: &Sweep) -> Vec<Verdict> {
    let models = sweep::models(results);
    // Every model's rows by x, read once for all figures.
    let by_x: Vec<(String, sweep::Points)> = models
        .iter()
        .map(|m| (m.clone(), sweep.by_x(results, m)))
        .collect();
    let mut out: Vec<Verdict> = FIGURES
        .iter()
        .filter_map(|figure| figure_verdict(results, sweep, &by_x, figure))
        .collect();
    out.extend(capacity_verdict(&by_x));
    out
}

/// One figure compared at the heaviest point where at least two models (else one) completed.
fn figure_verdict(
    results: &Results,
    sweep: &Sweep,
    by_x: &[(String, sweep::Points)],
    figure: &Figure,
) -> Option<Verdict> {
    // A model is compared at a point it completed: a repetition that failed or was
    // interrupted there says it broke, and its one lucky repetition is no sample.
    let has = |rows: &[&Record]| {
        rows.iter()
            .any(|r| r.status == Status::Ok && r.num(figure.column).is_some())
            && !rows
                .iter()
                .any(|r| matches!(r.status, Status::Failed | Status::Interrupted))
    };
    // The models that completed each x, counted in one pass over every group.
    let mut count_at = vec![0usize; sweep.xs.len()];
    for (_, groups) in by_x {
        for (gx, rows) in groups {
            if let (Ok(i), true) = (sweep.xs.binary_search_by(|x| x.total_cmp(gx)), has(rows)) {
                count_at[i] += 1;
            }
        }
    }
    let heaviest = |least: usize| (0..sweep.xs.len()).rev().find(|&i| count_at[i] >= least);
    let x = sweep.xs[heaviest(2).or_else(|| heaviest(1))?];
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut samples = Vec::new();
    let mut flagged = Vec::new();
    let mut left_out = (0, 0);
    for (m, groups) in by_x {
        let Some((_, rows)) = groups.iter().find(|(gx, rows)| *gx == x && has(rows)) else {
            continue;
        };
        let ok: Vec<&Record> = rows
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok)
            .filter(|r| r.num(figure.column).is_some_and(f64::is_finite))
            .collect();
        let sample: Vec<f64> = ok.iter().filter_map(|r| r.num(figure.column)).collect();
        let flags: Vec<bool> = ok
            .iter()
            .map(|r| {
                let (bound, disturbed) = flag(r);
                left_out.0 += usize::from(bound);
                left_out.1 += usize::from(disturbed);
                bound || disturbed
            })
            .collect();
        let value = latency::merged(results, &ok, figure.column).or_else(|| stats::median(&sample));
        let Some(value) = value else { continue };
        names.push(m.clone());
        values.push(value);
        samples.push(sample);
        flagged.push(flags);
    }
    Some(ranked(
        at(&sweep.axis, x),
        names,
        values,
        samples,
        flagged,
        figure,
        left_out,
    ))
}

/// Capacity: per repetition, the most connections its server held at once in any
/// step that ran, failed ones included (a failing step still shows the ceiling).
fn capacity_verdict(by_x: &[(String, sweep::Points)]) -> Option<Verdict> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut samples = Vec::new();
    let mut flagged = Vec::new();
    for (m, groups) in by_x {
        let mut per_rep: std::collections::BTreeMap<u32, f64> = Default::default();
        for row in groups.iter().flat_map(|(_, rows)| rows) {
            if row.status == Status::Skipped {
                continue;
            }
            if let Some(v) = row.num(column::MAX_CONCURRENT_SERVER) {
                let e = per_rep.entry(row.repetition).or_insert(v);
                *e = e.max(v);
            }
        }
        if per_rep.is_empty() {
            continue;
        }
        let sample: Vec<f64> = per_rep.into_values().collect();
        names.push(m.clone());
        values.push(stats::median(&sample).unwrap_or(0.0));
        flagged.push(vec![false; sample.len()]);
        samples.push(sample);
    }
    if names.is_empty() {
        return None;
    }
    Some(ranked(
        "whole sweep".into(),
        names,
        values,
        samples,
        flagged,
        &HELD,
        (0, 0),
    ))
}

fn ranked(
    compared_at: String,
    names: Vec<String>,
    values: Vec<f64>,
    samples: Vec<Vec<f64>>,
    flagged: Vec<Vec<bool>>,
    figure: &Figure,
    left_out: (usize, usize),
) -> Verdict {
    let mut order: Vec<usize> = (0..names.len()).collect();
    rank_by(&mut order, &values, figure.higher_is_better);
    let ranking: Vec<(String, f64)> = order
        .iter()
        .map(|&i| (names[i].clone(), values[i]))
        .collect();
    let samples: Vec<Vec<f64>> = order.iter().map(|&i| samples[i].clone()).collect();
    let flagged: Vec<Vec<bool>> = order.iter().map(|&i| flagged[i].clone()).collect();
    Verdict {
        figure: figure.name.to_string(),
        compared_at,
        decision: decide_robustly(&samples, &flagged, figure.higher_is_better),
        ranking,
        samples,
        format: figure.format,
        higher_is_better: figure.higher_is_better,
        left_out,
    }
}

/// Outright wins per model over every verdict given (a figure counts only when the
/// test named one winner; leaders that tie count for none), most wins first, then by
/// name; models that won nothing are listed with 0.
pub fn tally(results: &Results, verdicts: &[Verdict]) -> Vec<(String, usize)> {
    let mut wins: Vec<(String, usize)> =
        sweep::models(results).into_iter().map(|m| (m, 0)).collect();
    for v in verdicts {
        if let Some((winner, _)) = v.winner() {
            if let Some(entry) = wins.iter_mut().find(|(m, _)| m == winner) {
                entry.1 += 1;
            }
        }
    }
    wins.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    wins
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::data::Results;
    use crate::results::Manifest;
    use std::collections::BTreeMap;

    /// One ok repetition of `model` at 100 connections with this throughput.
    fn row(model: &str, rep: u32, rps: f64, disturbed: bool) -> Record {
        let mut numbers = BTreeMap::new();
        numbers.insert(column::CONNECTIONS.to_string(), 100.0);
        numbers.insert(column::THROUGHPUT_RPS.to_string(), rps);
        let mut raw: BTreeMap<String, String> = numbers
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        raw.insert(column::DISTURBED.into(), disturbed.to_string());
        Record {
            model: model.into(),
            step: "c100".into(),
            repetition: rep,
            status: Status::Ok,
            failure_reason: String::new(),
            bytes_match: Some(true),
            numbers,
            raw,
        }
    }

    fn throughput(a: &[f64], b: &[f64], disturbed_b: &[u32]) -> Verdict {
        let mut rows = Vec::new();
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let rep = i as u32 + 1;
            rows.push(row("epoll", rep, *x, false));
            rows.push(row("tokio", rep, *y, disturbed_b.contains(&rep)));
        }
        first_verdict(rows)
    }

    /// The first verdict (throughput) of these rows.
    fn first_verdict(rows: Vec<Record>) -> Verdict {
        let results = Results {
            dir: std::env::temp_dir().join("echolab-no-such-dir"),
            manifest: Manifest::default(),
            rows,
            profiled: Vec::new(),
            columns: Vec::new(),
            warnings: Vec::new(),
        };
        let sweeps = sweep::sweeps(&results);
        verdicts(&results, &sweeps[0]).remove(0)
    }

    #[test]
    fn overlapping_repetitions_are_no_difference() {
        let v = throughput(
            &[10.0, 12.0, 11.0, 13.0, 9.0],
            &[11.5, 10.5, 12.5, 9.5, 13.5],
            &[],
        );
        assert_eq!(v.figure, "Throughput");
        assert!(v.winner().is_none());
        assert!(v.winners().is_empty());
        let Decision::NoDifference { comparison } = v.decision else {
            panic!("{:?}", v.decision)
        };
        assert_eq!(
            v.significance(),
            format!("no difference: p = {}, n = 5", stats::fmt_p(comparison.p))
        );
        assert!(comparison.p > 0.5, "{comparison:?}");
    }

    #[test]
    fn a_significant_gap_under_five_percent_names_no_winner() {
        // Every tokio repetition 3 % above every epoll one: p = 0.012, but x1.03.
        let v = throughput(
            &[10.0, 10.02, 9.99, 10.01, 10.005],
            &[10.3, 10.32, 10.29, 10.31, 10.305],
            &[],
        );
        assert!(v.winners().is_empty(), "{:?}", v.decision);
        assert_eq!(
            v.significance(),
            "no difference of x1.05 or more: x1.03, p = 0.012, n = 5"
        );
        // The same at 6 %: a winner.
        let v = throughput(
            &[10.0, 10.02, 9.99, 10.01, 10.005],
            &[10.6, 10.62, 10.59, 10.61, 10.605],
            &[],
        );
        assert_eq!(v.winners(), ["tokio"]);
    }

    #[test]
    fn separated_repetitions_name_a_winner_with_its_interval() {
        let v = throughput(
            &[10.0, 10.2, 9.9, 10.1, 10.05],
            &[20.0, 20.4, 19.8, 20.2, 20.1],
            &[],
        );
        assert_eq!(v.winners(), ["tokio"]);
        assert_eq!(v.runner_up().map(|r| r.0.as_str()), Some("epoll"));
        let Decision::Winner(c) = v.decision else {
            panic!("{:?}", v.decision)
        };
        // median 20.1 / median 10.05, the interval from the bootstrap around it.
        assert!((c.ratio - 2.0).abs() < 1e-9, "{c:?}");
        assert!(c.interval.0 > 1.9 && c.interval.1 < 2.1, "{c:?}");
        assert!(fmt_ratio_interval(&c).starts_with("×2.00 (1.9"), "{c:?}");
        assert_eq!(v.significance(), "p = 0.012, n = 5");
    }

    #[test]
    fn a_disturbed_repetition_never_decides_alone() {
        // Apart, 5 against 5, two of tokio's disturbed: without either, 4 against 5
        // still differ (p = 0.016).
        let (a5, b5) = (
            [10.0, 10.2, 9.9, 10.1, 10.05],
            [20.0, 20.4, 19.8, 20.2, 20.1],
        );
        let v = throughput(&a5, &b5, &[1, 2]);
        assert_eq!(v.left_out, (0, 2));
        assert_eq!(v.winners(), ["tokio"]);
        assert_eq!(
            v.left_out_note().unwrap(),
            "2 disturbed repetition(s), each left out in turn"
        );
        // 4 against 4 apart differ (p = 0.029), but not without the disturbed one
        // (3 against 4: p = 0.057): that repetition would decide alone.
        assert_eq!(throughput(&a5[..4], &b5[..4], &[]).winners(), ["tokio"]);
        let v = throughput(&a5[..4], &b5[..4], &[3]);
        assert!(v.winner().is_none(), "{:?}", v.decision);
        assert!(
            v.significance().starts_with("no difference: p = 0.0"),
            "{}",
            v.significance()
        );
    }

    /// Throughput verdict of models each given its repetitions.
    fn throughputs(models: &[(&str, &[f64])]) -> Verdict {
        let rows = models
            .iter()
            .flat_map(|(m, reps)| {
                reps.iter()
                    .enumerate()
                    .map(|(i, rps)| row(m, i as u32 + 1, *rps, false))
            })
            .collect();
        first_verdict(rows)
    }

    #[test]
    fn two_best_that_overlap_lead_together_when_both_beat_the_rest() {
        let v = throughputs(&[
            ("epoll", &[20.0, 20.4, 19.8, 20.2, 20.1]),
            ("uring", &[20.3, 19.9, 20.5, 19.7, 20.0]),
            ("tokio", &[10.0, 10.2, 9.9, 10.1, 10.05]),
            ("select", &[5.0, 5.2, 4.9, 5.1, 5.05]),
        ]);
        assert!(v.winner().is_none(), "{:?}", v.decision);
        assert_eq!(v.winners(), ["epoll", "uring"]);
        assert_eq!(v.runner_up().map(|r| r.0.as_str()), Some("tokio"));
        let Decision::Leaders { count, ahead, tie } = v.decision else {
            panic!("{:?}", v.decision)
        };
        assert_eq!(count, 2);
        assert!(tie.p > 0.5, "{tie:?}");
        // The narrowest margin: uring (median 20.0) over tokio (10.05), p of 5 apart.
        assert!((ahead.ratio - 20.0 / 10.05).abs() < 1e-9, "{ahead:?}");
        assert_eq!(
            v.significance(),
            format!(
                "leaders tie ({}); each ahead of every other model, p = 0.012, n = 5",
                stats::p_equals(tie.p)
            )
        );
        // The tally counts outright wins only.
        let results = Results {
            dir: std::env::temp_dir(),
            manifest: Manifest::default(),
            rows: vec![row("epoll", 1, 1.0, false), row("uring", 1, 1.0, false)],
            profiled: Vec::new(),
            columns: Vec::new(),
            warnings: Vec::new(),
        };
        assert!(tally(&results, &[v]).iter().all(|(_, wins)| *wins == 0));
    }

    #[test]
    fn leaders_are_at_most_half_of_the_models_and_must_beat_each_one_behind() {
        let (a, b, far) = (
            vec![1.0, 1.1, 1.2, 1.3, 1.4],
            vec![1.05, 1.15, 1.25, 1.35, 1.45],
            vec![5.0, 5.1, 5.2, 5.3, 5.4],
        );
        // Two of three would be more than half: no difference.
        assert!(matches!(
            decide(&[a.clone(), b.clone(), far.clone()], false),
            Decision::NoDifference { .. }
        ));
        // Two of four lead.
        assert!(matches!(
            decide(&[a.clone(), b.clone(), far.clone(), far.clone()], false),
            Decision::Leaders { count: 2, .. }
        ));
        // The third overlaps the second: no group of two is ahead of the rest.
        assert!(matches!(
            decide(&[a.clone(), b.clone(), b.clone(), far.clone()], false),
            Decision::NoDifference { .. }
        ));
        // Leaders that only a disturbed repetition puts ahead do not lead: 4 against 4
        // apart differ (p = 0.029), 3 against 4 cannot (0.057).
        let four = |v: &[f64]| v[..4].to_vec();
        let samples = [four(&a), four(&b), four(&far), four(&far)];
        let mut flagged = vec![vec![false; 4]; 4];
        assert!(matches!(
            decide_robustly(&samples, &flagged, false),
            Decision::Leaders { count: 2, .. }
        ));
        flagged[1][2] = true;
        assert!(matches!(
            decide_robustly(&samples, &flagged, false),
            Decision::NoDifference { .. }
        ));
    }

    #[test]
    fn a_winner_must_beat_every_other_model() {
        let best = vec![1.0, 1.1, 1.2, 1.3, 1.4];
        let far = vec![5.0, 5.1, 5.2, 5.3, 5.4];
        let close = vec![1.05, 1.15, 1.25, 1.35, 1.45];
        // Lower is better: best beats far, but not close.
        assert!(matches!(
            decide(&[best.clone(), far.clone()], false),
            Decision::Winner(_)
        ));
        assert!(matches!(
            decide(&[best, close, far], false),
            Decision::NoDifference { .. }
        ));
        assert!(matches!(decide(&[vec![1.0]], false), Decision::Alone));
    }
}
