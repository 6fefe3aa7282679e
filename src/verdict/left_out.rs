//! A flagged (generator-bound or disturbed) repetition never decides alone: every
//! decision on repetitions is made again with each flagged one left out in turn, up to
//! a bound beyond which each side's highest and lowest are left out.

use super::{drawn, screen, Decision, Screen};

/// The rule every decision on repetitions follows: a flagged (generator-bound or
/// disturbed) repetition never decides alone. These are the samples with each flagged
/// repetition left out in turn (side by side, first side's first); a decision stands
/// only when it stands on each of them too.
pub fn each_flagged_left_out<'a>(
    samples: &'a [Vec<f64>],
    flagged: &'a [Vec<bool>],
) -> impl Iterator<Item = Vec<Vec<f64>>> + 'a {
    flagged_repetitions(flagged).map(|(i, j)| without(samples, i, j))
}

/// Each flagged repetition as (side, repetition), first side's first.
fn flagged_repetitions(flagged: &[Vec<bool>]) -> impl Iterator<Item = (usize, usize)> + '_ {
    flagged.iter().enumerate().flat_map(|(i, flags)| {
        flags
            .iter()
            .enumerate()
            .filter(|(_, f)| **f)
            .map(move |(j, _)| (i, j))
    })
}

/// `samples` without repetition `j` of side `i`.
fn without(samples: &[Vec<f64>], i: usize, j: usize) -> Vec<Vec<f64>> {
    let mut without = samples.to_vec();
    without[i].remove(j);
    without
}

/// Beyond this many flagged repetitions at one point, a verdict leaves out in turn only
/// each model's highest and lowest flagged repetition: every one in turn is a decision
/// per repetition, each over every repetition, which a run of thousands of repetitions
/// per step cannot afford. Those two are the ones a median and a rank test move most
/// when left out (any other above or below the median moves the median as far, and
/// moves the ranks less), so the bound keeps the rule's meaning; the verdict says it.
pub const LEFT_OUT_IN_TURN: usize = 20;

/// The flagged repetitions a verdict leaves out in turn, as (side, repetition): every one
/// up to [`LEFT_OUT_IN_TURN`], else each side's highest and lowest flagged.
pub fn left_out_in_turn(samples: &[Vec<f64>], flagged: &[Vec<bool>]) -> Vec<(usize, usize)> {
    let every: Vec<(usize, usize)> = flagged_repetitions(flagged).collect();
    if every.len() <= LEFT_OUT_IN_TURN {
        return every;
    }
    let mut extremes = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let of_side = every.iter().filter(|(side, _)| *side == i).map(|(_, j)| *j);
        let by_value = |a: &usize, b: &usize| sample[*a].total_cmp(&sample[*b]);
        let lowest = of_side.clone().min_by(by_value);
        let highest = of_side.max_by(by_value);
        extremes.extend(lowest.map(|j| (i, j)));
        extremes.extend(highest.filter(|h| Some(*h) != lowest).map(|j| (i, j)));
    }
    extremes
}

/// [`decide`], and then again on the samples with each of [`left_out_in_turn`] left
/// out: a winner (or a group of leaders) stays one only when no single flagged
/// repetition is what made it one. The weakest of those decisions (the one naming the
/// most models) is returned. Each is screened by the rank test alone; only the one
/// returned draws its comparisons.
pub fn decide_robustly(
    samples: &[Vec<f64>],
    flagged: &[Vec<bool>],
    higher_is_better: bool,
    step: f64,
) -> Decision {
    let (weakest, on) = screen_robustly(samples, flagged, higher_is_better, step);
    drawn(weakest, on.as_deref().unwrap_or(samples), higher_is_better)
}

/// How many models [`decide_robustly`] names best (see [`Decision::named`]), without
/// drawing its comparisons.
pub fn named_robustly(
    samples: &[Vec<f64>],
    flagged: &[Vec<bool>],
    higher_is_better: bool,
    step: f64,
) -> usize {
    screen_robustly(samples, flagged, higher_is_better, step)
        .0
        .named()
}

/// [`decide_robustly`]'s weakest screen, and the samples it was made on when a flagged
/// repetition was left out.
fn screen_robustly(
    samples: &[Vec<f64>],
    flagged: &[Vec<bool>],
    higher_is_better: bool,
    step: f64,
) -> (Screen, Option<Vec<Vec<f64>>>) {
    let mut weakest = screen(samples, higher_is_better, step);
    let mut weakest_samples = None;
    for (i, j) in left_out_in_turn(samples, flagged) {
        if weakest.named() == usize::MAX {
            break;
        }
        let without = without(samples, i, j);
        let s = screen(&without, higher_is_better, step);
        if s.named() > weakest.named() {
            weakest = s;
            weakest_samples = Some(without);
        }
    }
    (weakest, weakest_samples)
}
