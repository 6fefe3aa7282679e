//! `--fail-if`: thresholds a comparison must not cross. `FIGURE > +N%` and `FIGURE < -N%`
//! judge the change, and only a change the verdict names (significant and large
//! enough) crosses one; `FIGURE > VALUE` and `FIGURE < VALUE` with a unit judge NEW's
//! own value, as k6's thresholds judge a run. The expressions are parsed in
//! [`crate::results::threshold`].

use super::changes::{Change, Changes};
pub use crate::results::threshold::{columns, Limit, Threshold};

/// Why a threshold is crossed (or not met) at one step.
enum Crossed {
    /// By this value or change.
    By(f64),
    /// It cannot be judged there (NEW failed, or has no value): a gate never passes
    /// what it could not read.
    Unjudged(String),
}

/// Why NEW's side of `change` cannot be judged, if it cannot: a repetition that failed
/// or was interrupted (`broke`, when that counts), or no value at all.
fn unjudged(change: &Change, broke_counts: bool) -> Option<Crossed> {
    let why = if broke_counts && change.new.broke {
        "a repetition of NEW failed or was interrupted there"
    } else if change.new.value.is_none() {
        "no value (the step failed, or the column is empty)"
    } else {
        return None;
    };
    Some(Crossed::Unjudged(format!("{why}: it cannot be judged")))
}

/// Whether `change` crosses `t`, and what it was: a value over its limit first, else a
/// step NEW could not be judged at (a repetition failed, no value). A relative threshold
/// from a value of 0 is crossed by any named increase (+inf %, [`Change::pct`]).
fn crossed_by(t: &Threshold, change: &Change) -> Option<Crossed> {
    match t.limit {
        Limit::Value(limit) => change
            .new
            .value
            .filter(|v| t.op.crosses(*v, limit))
            .map(Crossed::By)
            .or_else(|| unjudged(change, true)),
        Limit::Change(limit) => unjudged(change, true).or_else(|| match change.pct() {
            Some(pct) => {
                (change.significant && t.op.crosses(pct, limit)).then_some(Crossed::By(pct))
            }
            None => Some(Crossed::Unjudged(
                "OLD has no value there, so there is no change: it cannot be judged".into(),
            )),
        }),
    }
}

/// A threshold crossed at one step.
pub struct Crossing {
    pub threshold: String,
    pub step: String,
    /// "+12.0% (p = 0.0079, n = 5)" or NEW's value as the figure writes it.
    pub what: String,
}

impl Crossing {
    pub fn describe(&self) -> String {
        format!(
            "'{}' crossed at {}: {}",
            self.threshold, self.step, self.what
        )
    }
}

/// Every threshold crossed, at every matched step, in threshold order.
pub fn judge(thresholds: &[Threshold], changes: &Changes) -> Vec<Crossing> {
    judge_by(thresholds, changes, crossed_by)
}

/// Every requirement ([`requirement`]) not met by NEW's value, at every step; one
/// that cannot be judged there (no value) is not met.
pub fn unmet(requirements: &[Threshold], changes: &Changes) -> Vec<Crossing> {
    judge_by(requirements, changes, |t, change| {
        let Limit::Value(limit) = t.limit else {
            return None;
        };
        unjudged(change, false).or_else(|| {
            change
                .new
                .value
                .filter(|v| !t.op.crosses(*v, limit))
                .map(Crossed::By)
        })
    })
}

fn judge_by(
    thresholds: &[Threshold],
    changes: &Changes,
    crossed_by: impl Fn(&Threshold, &Change) -> Option<Crossed>,
) -> Vec<Crossing> {
    let mut out = Vec::new();
    for t in thresholds {
        let Some(i) = changes
            .figures
            .iter()
            .position(|f| f.figure.column == t.column)
        else {
            continue;
        };
        let figure = &changes.figures[i];
        for step in &changes.steps {
            let change = &step.changes[i];
            let Some(crossed) = crossed_by(t, change) else {
                continue;
            };
            let what = match (crossed, t.limit, change.test) {
                (Crossed::Unjudged(why), ..) => why,
                (Crossed::By(pct), Limit::Change(_), Some(test)) => {
                    format!("{pct:+.1}% ({})", test.describe_p())
                }
                (Crossed::By(value), ..) => {
                    format!("{} is {}", figure.short, (figure.figure.format)(value))
                }
            };
            out.push(Crossing {
                threshold: t.text.clone(),
                step: step.label(),
                what,
            });
        }
    }
    out
}
