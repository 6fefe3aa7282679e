//! The decision: which model wins each figure, by what ratio and with what
//! significance, computed from results.csv; `sweep` finds the x axes and aggregates
//! repetitions. The report, the claims and the comparison all decide through it.

mod figure;
mod left_out;
pub mod sweep;

use crate::results::column;
use crate::results::latency;
use crate::results::reader::{Results, Row, Status};
use crate::stats::{self, Comparison};
use sweep::{at, Sweep};

pub use crate::render::format::{
    fmt_count, fmt_cpu, fmt_cpu_per_request, fmt_latency, fmt_rate, fmt_ratio, fmt_ratio_interval,
    fmt_seconds,
};

pub use figure::{Figure, Resolution, FIGURES, HELD, PAGE_BYTES};
pub use left_out::{
    decide_robustly, each_flagged_left_out, left_out_in_turn, named_robustly, LEFT_OUT_IN_TURN,
};

pub const BASELINE: &str = "tokio";

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
    pub fn named(&self) -> usize {
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
    /// Which of those repetitions are flagged (generator-bound or disturbed).
    pub flagged: Vec<Vec<bool>>,
    pub format: fn(f64) -> String,
    pub higher_is_better: bool,
    /// Flagged repetitions at this point: generator-bound, disturbed.
    pub left_out: (usize, usize),
    pub decision: Decision,
    /// The figure's measurement step at this point (0 when exact): no two models are
    /// told apart by less.
    pub step: f64,
    /// The step alone made this decision weaker than the test would have.
    pub tied_by_step: bool,
    /// The offered rate, when an open loop fixed this figure: every repetition of every
    /// model served the rate it offered ([`fixed_by_load`]). No model is named best.
    pub fixed_by_load: Option<f64>,
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
            Decision::NoDifference { .. } if self.fixed_by_load.is_some() => format!(
                "fixed by the load: every model served the offered {}",
                (self.format)(self.fixed_by_load.unwrap_or_default())
            ),
            Decision::NoDifference { comparison } if self.tied_by_step => format!(
                "no difference beyond the measurement step of {}: x{:.2}, {}",
                (self.format)(self.step),
                comparison.ratio,
                comparison.describe_p()
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

    /// Why repetitions were left out, for a note beside the verdict: which of them
    /// ([`left_out_in_turn`]).
    pub fn left_out_note(&self) -> Option<String> {
        let (bound, disturbed) = self.left_out;
        let mut parts = Vec::new();
        if bound > 0 {
            parts.push(format!("{bound} generator-bound"));
        }
        if disturbed > 0 {
            parts.push(format!("{disturbed} disturbed"));
        }
        let flagged = self.flagged.iter().flatten().filter(|f| **f).count();
        let which = if flagged > LEFT_OUT_IN_TURN {
            format!(
                "more than {LEFT_OUT_IN_TURN}: each model's highest and lowest of them left \
                 out in turn, not every one"
            )
        } else {
            "each left out in turn".to_string()
        };
        (!parts.is_empty()).then(|| format!("{} repetition(s), {which}", parts.join(" and ")))
    }
}

/// `other` against `best`, oriented so that a ratio above 1 means `best` is better.
pub(crate) fn oriented(best: &[f64], other: &[f64], higher_is_better: bool) -> Option<Comparison> {
    if higher_is_better {
        stats::compare(other, best)
    } else {
        stats::compare(best, other)
    }
}

/// [`oriented`] by the rank test alone, without the interval.
fn oriented_test(best: &[f64], other: &[f64], higher_is_better: bool) -> Option<stats::Test> {
    if higher_is_better {
        stats::test(other, best)
    } else {
        stats::test(best, other)
    }
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
/// behind the others are. A pair whose medians are less than `step` apart (the
/// figure's [`Resolution`]) is never a lead.
pub fn decide(samples: &[Vec<f64>], higher_is_better: bool, step: f64) -> Decision {
    drawn(
        screen(samples, higher_is_better, step),
        samples,
        higher_is_better,
    )
}

/// What [`decide`] finds by the rank test alone, before it draws the comparisons it
/// shows (each with a bootstrap interval); sides are indices into the samples.
#[derive(Clone, Copy)]
enum Screen {
    Winner,
    Leaders {
        count: usize,
        /// The largest p of the pairs across the group's edge.
        across_p: f64,
    },
    /// The weakest pair with the best model, (0, `other`), and its p as decided (1 for
    /// a difference the wrong way round).
    NoDifference {
        other: usize,
        p: f64,
    },
    Alone,
}

impl Screen {
    /// As [`Decision::named`].
    fn named(&self) -> usize {
        match self {
            Screen::Winner => 1,
            Screen::Leaders { count, .. } => *count,
            Screen::NoDifference { .. } | Screen::Alone => usize::MAX,
        }
    }
}

/// [`decide`]'s rule by the rank test alone.
fn screen(samples: &[Vec<f64>], higher_is_better: bool, step: f64) -> Screen {
    if samples.len() < 2 || samples.iter().any(|s| s.is_empty()) {
        return Screen::Alone;
    }
    let Some(medians) = samples
        .iter()
        .map(|s| stats::median(s))
        .collect::<Option<Vec<f64>>>()
    else {
        return Screen::Alone;
    };
    // The weakest of the pairs (leader, model behind) when the first `count` lead: the
    // model behind, its p, and whether every pair is a lead: significant and by
    // stats::MIN_EFFECT or more. A difference the wrong way round is no lead either (its
    // p shown as 1); a lead smaller than MIN_EFFECT is weaker than any significant one
    // and keeps its p.
    let weakest_across = |count: usize| -> Option<(usize, f64, bool)> {
        let mut weakest: Option<(f64, usize, f64)> = None;
        for (a, median_a) in samples[..count].iter().zip(&medians) {
            for (b, (sample_b, median_b)) in samples.iter().zip(&medians).enumerate().skip(count) {
                let t = oriented_test(a, sample_b, higher_is_better)?;
                let gap = (median_a - median_b).abs();
                let (key, p) = if t.ratio <= 1.0 {
                    (2.0, 1.0)
                } else if t.ratio < stats::MIN_EFFECT || gap < step {
                    (1.0 + t.p, t.p)
                } else {
                    (t.p, t.p)
                };
                if weakest.as_ref().is_none_or(|(k, ..)| key > *k) {
                    weakest = Some((key, b, p));
                }
            }
        }
        weakest.map(|(key, b, p)| (b, p, key < stats::ALPHA))
    };
    let Some((alone, alone_p, alone_leads)) = weakest_across(1) else {
        return Screen::Alone;
    };
    if alone_leads {
        return Screen::Winner;
    }
    for count in 2..=samples.len() / 2 {
        let Some((_, across_p, leads)) = weakest_across(count) else {
            break;
        };
        if leads {
            return Screen::Leaders { count, across_p };
        }
    }
    Screen::NoDifference {
        other: alone,
        p: alone_p,
    }
}

/// The decision of a [`Screen`], with the comparisons it shows drawn in full.
fn drawn(screen: Screen, samples: &[Vec<f64>], higher_is_better: bool) -> Decision {
    let compare = |a: usize, b: usize| oriented(&samples[a], &samples[b], higher_is_better);
    let decision = match screen {
        Screen::Alone => None,
        Screen::Winner => compare(0, 1).map(Decision::Winner),
        Screen::Leaders { count, across_p } => {
            // The tie: the least significant pair of the best model with another leader.
            let tie = (1..count)
                .filter_map(|i| {
                    oriented_test(&samples[0], &samples[i], higher_is_better).map(|t| (i, t.p))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            match (
                compare(count - 1, count),
                tie.and_then(|(i, _)| compare(0, i)),
            ) {
                (Some(narrowest), Some(tie)) => Some(Decision::Leaders {
                    count,
                    ahead: Comparison {
                        p: across_p,
                        ..narrowest
                    },
                    tie,
                }),
                _ => None,
            }
        }
        Screen::NoDifference { other, p } => compare(0, other).map(|c| Decision::NoDifference {
            comparison: Comparison { p, ..c },
        }),
    };
    decision.unwrap_or(Decision::Alone)
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
    step: f64,
) -> bool {
    let mut order = [0, 1];
    rank_by(&mut order, &values, higher_is_better);
    let samples: Vec<Vec<f64>> = order.iter().map(|&i| samples[i].to_vec()).collect();
    let flagged: Vec<Vec<bool>> = order.iter().map(|&i| flagged[i].to_vec()).collect();
    named_robustly(&samples, &flagged, higher_is_better, step) == 1
}

/// The rate an open loop offered, when it fixed the figure `column` in these repetitions:
/// throughput, each repetition ok and within [`stats::MIN_EFFECT`] of its offered rate, the
/// least difference the verdict names (an open loop sends at its rate whatever the server,
/// so a server that keeps up shows that rate and no more: the step did not measure its
/// capacity). None in a closed loop, for any other
/// figure, or when a repetition fell behind.
pub fn fixed_by_load(column: &str, rows: &[&Row]) -> Option<f64> {
    if column != column::THROUGHPUT_RPS || rows.is_empty() {
        return None;
    }
    let mut offered = None;
    for row in rows {
        let rate = row.num(column::RATE).filter(|r| *r > 0.0)?;
        let served = row.num(column::THROUGHPUT_RPS)?;
        if row.status != Status::Ok
            || served * stats::MIN_EFFECT <= rate
            || offered.is_some_and(|o| o != rate)
        {
            return None;
        }
        offered = Some(rate);
    }
    offered
}

/// Whether a repetition is flagged: generator-bound, or disturbed (not both counted).
pub fn flag(row: &Row) -> (bool, bool) {
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

/// Whether a model's repetitions at one point completed it for `column`: one ok there
/// with a value, and none that failed or was interrupted (that says it broke there, and
/// its one lucky repetition is no sample).
pub fn completed(rows: &[&Row], column: &str) -> bool {
    rows.iter()
        .any(|r| r.status == Status::Ok && r.num(column).is_some())
        && !rows
            .iter()
            .any(|r| matches!(r.status, Status::Failed | Status::Interrupted))
}

/// The point of `sweep` a figure (`column`) is compared at: the heaviest x where at
/// least two models completed it (the point the sweep exists to reach), else the
/// heaviest where one did. `by_x`: every model's rows by x.
pub fn compared_x(sweep: &Sweep, by_x: &[(String, sweep::Points)], column: &str) -> Option<f64> {
    // The models that completed each x, counted in one pass over every group.
    let mut count_at = vec![0usize; sweep.xs.len()];
    for (_, groups) in by_x {
        for (gx, rows) in groups {
            let i = sweep.xs.binary_search_by(|x| x.total_cmp(gx));
            if let (Ok(i), true) = (i, completed(rows, column)) {
                count_at[i] += 1;
            }
        }
    }
    let heaviest = |least: usize| (0..sweep.xs.len()).rev().find(|&i| count_at[i] >= least);
    Some(sweep.xs[heaviest(2).or_else(|| heaviest(1))?])
}

/// One figure compared at its point ([`compared_x`]).
fn figure_verdict(
    results: &Results,
    sweep: &Sweep,
    by_x: &[(String, sweep::Points)],
    figure: &Figure,
) -> Option<Verdict> {
    let has = |rows: &[&Row]| completed(rows, figure.column);
    let x = compared_x(sweep, by_x, figure.column)?;
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut samples = Vec::new();
    let mut flagged = Vec::new();
    let mut left_out = (0, 0);
    let mut step: f64 = 0.0;
    let mut compared: Vec<&Row> = Vec::new();
    for (m, groups) in by_x {
        let Some((_, rows)) = groups.iter().find(|(gx, rows)| *gx == x && has(rows)) else {
            continue;
        };
        compared.extend(rows.iter().copied());
        let ok: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok)
            .filter(|r| r.num(figure.column).is_some_and(f64::is_finite))
            .collect();
        let sample: Vec<f64> = ok.iter().filter_map(|r| r.num(figure.column)).collect();
        step = ok
            .iter()
            .map(|r| figure.resolution.step(r))
            .fold(step, f64::max);
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
    let mut verdict = ranked(
        at(&sweep.axis, x),
        names,
        values,
        samples,
        flagged,
        figure,
        left_out,
        step,
    );
    verdict.fixed_by_load = fixed_by_load(figure.column, &compared);
    if verdict.fixed_by_load.is_some() {
        // The load set every model's value: no order among them is the servers'.
        if let Some(comparison) = verdict.margin() {
            verdict.decision = Decision::NoDifference { comparison };
        }
    }
    Some(verdict)
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
        0.0,
    ))
}

// Each argument is one column of the figure at its point, gathered by the caller.
#[allow(clippy::too_many_arguments)]
fn ranked(
    compared_at: String,
    names: Vec<String>,
    values: Vec<f64>,
    samples: Vec<Vec<f64>>,
    flagged: Vec<Vec<bool>>,
    figure: &Figure,
    left_out: (usize, usize),
    step: f64,
) -> Verdict {
    let mut order: Vec<usize> = (0..names.len()).collect();
    rank_by(&mut order, &values, figure.higher_is_better);
    let ranking: Vec<(String, f64)> = order
        .iter()
        .map(|&i| (names[i].clone(), values[i]))
        .collect();
    let samples: Vec<Vec<f64>> = order.iter().map(|&i| samples[i].clone()).collect();
    let flagged: Vec<Vec<bool>> = order.iter().map(|&i| flagged[i].clone()).collect();
    let decision = decide_robustly(&samples, &flagged, figure.higher_is_better, step);
    let tied_by_step = step > 0.0
        && named_robustly(&samples, &flagged, figure.higher_is_better, 0.0) < decision.named();
    Verdict {
        figure: figure.name.to_string(),
        compared_at,
        decision,
        step,
        tied_by_step,
        fixed_by_load: None,
        ranking,
        samples,
        flagged,
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
mod tests;
