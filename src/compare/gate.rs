//! `--fail-if`: thresholds a comparison must not cross. `FIGURE > +N%` and `FIGURE < -N%`
//! judge the change, and only a change the verdict names (significant and large
//! enough) crosses one; `FIGURE > VALUE` and `FIGURE < VALUE` with a unit judge NEW's
//! own value, as k6's thresholds judge a run. The expressions are parsed in
//! [`crate::results::threshold`].

use super::changes::{Change, Changes};
pub use crate::results::threshold::{columns, requirement, Limit, Threshold};

/// Whether `change` crosses `t`, and what it was.
fn crossed_by(t: &Threshold, change: &Change) -> Option<f64> {
    match t.limit {
        Limit::Change(limit) => change
            .pct()
            .filter(|pct| change.significant && t.op.crosses(*pct, limit)),
        Limit::Value(limit) => change.new.value.filter(|v| t.op.crosses(*v, limit)),
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

/// Every requirement ([`requirement`]) not met by NEW's value, at every step.
pub fn unmet(requirements: &[Threshold], changes: &Changes) -> Vec<Crossing> {
    judge_by(requirements, changes, |t, change| {
        let Limit::Value(limit) = t.limit else {
            return None;
        };
        change.new.value.filter(|v| !t.op.crosses(*v, limit))
    })
}

fn judge_by(
    thresholds: &[Threshold],
    changes: &Changes,
    crossed_by: impl Fn(&Threshold, &Change) -> Option<f64>,
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
            let what = match (t.limit, change.test) {
                (Limit::Change(_), Some(test)) => {
                    format!("{crossed:+.1}% ({})", test.describe_p())
                }
                _ => format!("{} is {}", figure.short, (figure.figure.format)(crossed)),
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
