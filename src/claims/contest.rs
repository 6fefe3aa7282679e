//! One comparison of repetitions, as every claim that compares makes it: two sides'
//! samples (one a repetition), decided by `stats::compare` at p < ALPHA and by the
//! x1.05 effect threshold, each generator-bound or disturbed repetition left out in
//! turn, and a claim made of several such comparisons turned into its verdict.

use super::{ClaimVerdict, Row, Status};
use crate::render::format::ratio_interval;
use crate::stats::{self, Comparison};
use crate::units::fmt_bytes;
pub(super) use crate::verdict::Figure;
use crate::verdict::{each_flagged_left_out, flag, fmt_cpu, fmt_latency, fmt_rate, Resolution};

/// One side of a comparison: its name and its samples (one per repetition), each with
/// whether its repetition is flagged (generator-bound or disturbed).
#[derive(Clone)]
pub(super) struct Side {
    pub name: String,
    pub samples: Vec<f64>,
    pub flagged: Vec<bool>,
}

impl Side {
    /// Samples of no flagged repetition.
    pub fn new(name: impl Into<String>, samples: Vec<f64>) -> Side {
        let flagged = vec![false; samples.len()];
        Side {
            name: name.into(),
            samples,
            flagged,
        }
    }

    /// `c` over the ok repetitions of `model` where `at` holds, each with its flag.
    pub fn of(
        name: impl Into<String>,
        rows: &[Row],
        model: &str,
        at: impl Fn(&Row) -> bool,
        c: &str,
    ) -> Side {
        Side::derived(name, rows, model, at, |r| r.num(c))
    }

    /// `value` of each ok repetition of `model` where `at` holds, each with its flag.
    pub fn derived(
        name: impl Into<String>,
        rows: &[Row],
        model: &str,
        at: impl Fn(&Row) -> bool,
        value: impl Fn(&Row) -> Option<f64>,
    ) -> Side {
        let (samples, flagged): (Vec<f64>, Vec<bool>) = rows
            .iter()
            .filter(|r| r.model == model && r.status == Status::Ok && at(r))
            .filter_map(|r| {
                let (bound, disturbed) = flag(r);
                Some((value(r)?, bound || disturbed))
            })
            .unzip();
        Side {
            name: name.into(),
            samples,
            flagged,
        }
    }

    fn flagged_count(&self) -> usize {
        self.flagged.iter().filter(|&&f| f).count()
    }
}

/// A comparison of two sides judged as the verdict decides: the judgement of every
/// repetition stands only if it stands with each flagged repetition left out in turn
/// ([`each_flagged_left_out`]).
pub(super) struct Robust<T> {
    /// `stats::compare(a, b)` over every repetition: the ratio is b's median over a's.
    pub c: Comparison,
    /// The judgement of `c`.
    pub judged: T,
    /// Flagged repetitions on both sides.
    pub flagged: usize,
    /// The first other judgement with a flagged repetition left out: `Some(None)` when
    /// too few repetitions were left to compare.
    pub shaken: Option<Option<T>>,
}

/// `judge` of `b`'s samples over `a`'s (their comparison, a's, b's), and whether it stands without each flagged
/// repetition in turn; None when a side has no sample.
pub(super) fn robustly<T: PartialEq>(
    a: &Side,
    b: &Side,
    judge: impl Fn(&Comparison, &[f64], &[f64]) -> T,
) -> Option<Robust<T>> {
    let c = stats::compare(&a.samples, &b.samples)?;
    let judged = judge(&c, &a.samples, &b.samples);
    let samples = [a.samples.clone(), b.samples.clone()];
    let flagged = [a.flagged.clone(), b.flagged.clone()];
    let shaken = each_flagged_left_out(&samples, &flagged)
        .map(|s| stats::compare(&s[0], &s[1]).map(|c| judge(&c, &s[0], &s[1])))
        .find(|j| j.as_ref() != Some(&judged));
    Some(Robust {
        c,
        judged,
        flagged: a.flagged_count() + b.flagged_count(),
        shaken,
    })
}

impl<T: Copy> Robust<T> {
    /// The judgement, or `unsettled` when a flagged repetition alone made it.
    pub fn settled(&self, unsettled: T) -> T {
        match self.shaken {
            None => self.judged,
            Some(_) => unsettled,
        }
    }

    /// "; 2 generator-bound or disturbed repetition(s), each left out in turn"; "" with none.
    pub fn left_out(&self) -> String {
        match self.flagged {
            0 => String::new(),
            n => format!("; {n} generator-bound or disturbed repetition(s), each left out in turn"),
        }
    }

    /// [`Robust::left_out`], and ": the difference does not stand without them" when it
    /// did not.
    pub fn note(&self) -> String {
        match self.shaken {
            None => self.left_out(),
            Some(_) => self.left_out() + ": the difference does not stand without them",
        }
    }
}

/// A figure as a claim compares it: exact, and read by the claim itself rather than
/// from one column (many are derived from several).
pub(super) const fn claim_figure(
    name: &'static str,
    higher_is_better: bool,
    format: fn(f64) -> String,
) -> Figure {
    Figure {
        name,
        column: "",
        higher_is_better,
        format,
        resolution: Resolution::Exact,
    }
}

pub(super) const MEAN: Figure = claim_figure("mean response time", false, fmt_latency);
pub(super) const THROUGHPUT: Figure = claim_figure("throughput", true, fmt_rate);
pub(super) const CPU: Figure = claim_figure("server CPU", false, fmt_cpu);
pub(super) const MEMORY: Figure = claim_figure("server memory (peak RSS)", false, fmt_bytes);

/// How one comparison came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The claimed side is better, p < ALPHA, by `stats::MIN_EFFECT` or more.
    Holds,
    /// The other side is better, p < ALPHA, by `stats::MIN_EFFECT` or more.
    Opposite,
    /// p >= ALPHA with enough repetitions to have seen a difference, or medians within
    /// `stats::MIN_EFFECT` of each other.
    NoDifference,
    /// Too few repetitions for any p to reach ALPHA.
    TooFew,
    /// A side has no finished repetition.
    Missing,
}

/// `better` beats `worse` on `figure`: the outcome and a line with the medians,
/// the ratio and p.
pub(super) fn contest(better: &Side, worse: &Side, figure: Figure) -> (Outcome, String) {
    let Some(robust) = robustly(worse, better, |c, _, _| decided(c, figure)) else {
        let missing = if better.samples.is_empty() {
            &better.name
        } else {
            &worse.name
        };
        return (
            Outcome::Missing,
            format!("{}: no finished repetition of {missing}", figure.name),
        );
    };
    let outcome = robust.judged;
    let line = line(better, worse, figure, &robust.c);
    // Only a difference is left to stand or fall without the flagged repetitions.
    if !matches!(outcome, Outcome::Holds | Outcome::Opposite) {
        return (outcome, line + &robust.c.needs());
    }
    match robust.shaken {
        None => (outcome, line + &robust.left_out()),
        Some(Some(Outcome::TooFew)) => (Outcome::TooFew, line + &robust.left_out()),
        Some(_) => (Outcome::NoDifference, line + &robust.note()),
    }
}

/// How one comparison of `better`'s samples over `worse`'s came out (`c` from
/// `stats::compare(worse, better)`).
fn decided(c: &Comparison, figure: Figure) -> Outcome {
    let claimed_way = if figure.higher_is_better {
        c.ratio > 1.0
    } else {
        c.ratio < 1.0
    };
    if c.decisive() && claimed_way {
        Outcome::Holds
    } else if c.decisive() {
        Outcome::Opposite
    } else if stats::min_p(c.n_a, c.n_b) >= c.alpha {
        Outcome::TooFew
    } else {
        Outcome::NoDifference
    }
}

/// "epoll 1.20 ms against threads 400 µs (mean response time): x3.00 (2.5–3.5), p = 0.0079, n = 5",
/// with where the ratio sits against the x1.05 threshold when it is near it.
fn line(better: &Side, worse: &Side, figure: Figure, c: &Comparison) -> String {
    let median = |s: &Side| stats::median(&s.samples).map_or("?".into(), figure.format);
    format!(
        "{} {} against {} {} ({}): {}, {}{}",
        better.name,
        median(better),
        worse.name,
        median(worse),
        figure.name,
        ratio_interval(c, 'x'),
        c.describe_p(),
        threshold_note(c)
    )
}

/// Ratios this close to [`stats::MIN_EFFECT`] may land on either side of it in another
/// run: the line says so, so that a flip between runs reads as the edge it is.
const NEAR_THRESHOLD: f64 = 1.10;

/// "; within the x1.05 threshold", "; near the x1.05 threshold" or nothing.
fn threshold_note(c: &Comparison) -> String {
    let apart = c.ratio.max(1.0 / c.ratio);
    if !c.large() {
        format!("; within the x{} threshold", stats::MIN_EFFECT)
    } else if apart < NEAR_THRESHOLD {
        format!("; near the x{} threshold", stats::MIN_EFFECT)
    } else {
        String::new()
    }
}

/// The verdict of a claim made of several comparisons, each (what it says, outcome, line).
pub(super) fn verdict_of(parts: &[(String, Outcome, String)]) -> (ClaimVerdict, String) {
    let with = |o: Outcome| -> Vec<String> {
        parts
            .iter()
            .filter(|p| p.1 == o)
            .map(|p| format!("{} ({})", p.0, p.2))
            .collect()
    };
    // The statement and its numbers apart: "select holds more connections than threads
    // (select 1,000 against threads 19,000 ...)" read as if it were the finding.
    let reversed: Vec<String> = parts
        .iter()
        .filter(|p| p.1 == Outcome::Opposite)
        .map(|p| format!("the reverse of “{}”, significantly: {}", p.0, p.2))
        .collect();
    if !reversed.is_empty() {
        return (ClaimVerdict::Refuted, reversed.join("; "));
    }
    if !with(Outcome::Missing).is_empty() {
        return (
            ClaimVerdict::Inconclusive,
            format!("not measured: {}", with(Outcome::Missing).join("; ")),
        );
    }
    if parts.iter().all(|p| p.1 == Outcome::Holds) {
        return (
            ClaimVerdict::Confirmed,
            format!("significantly: {}", with(Outcome::Holds).join("; ")),
        );
    }
    if !with(Outcome::TooFew).is_empty() {
        return (
            ClaimVerdict::Inconclusive,
            format!("{}: {}", stats::too_few(), with(Outcome::TooFew).join("; ")),
        );
    }
    let mut why = format!(
        "no difference (p >= {}, or within x{}): {}",
        stats::fmt_level(stats::level()),
        stats::MIN_EFFECT,
        with(Outcome::NoDifference).join("; ")
    );
    let held = with(Outcome::Holds);
    if !held.is_empty() {
        why += &format!("; held: {}", held.join("; "));
    }
    (ClaimVerdict::NoDifference, why)
}

/// Whether the ratio of `upper`'s median over `lower`'s is shown level: its whole 95 %
/// interval lies within x1.05 (a level shown, not assumed from a missing difference).
pub(super) fn level_shown(upper: &Side, lower: &Side) -> bool {
    stats::compare(&lower.samples, &upper.samples).is_some_and(|c| {
        c.interval.0 >= 1.0 / stats::MIN_EFFECT && c.interval.1 <= stats::MIN_EFFECT
    })
}
