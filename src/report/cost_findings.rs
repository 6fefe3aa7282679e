//! The cost of a request in the report's words: per model, at the heaviest point of a
//! sweep it completed, its system calls per request (and how many requests one wait
//! call serves), its reads and writes, and its context switches, from the columns
//! src/experiment/measurement/request_cost.rs fills. Sentences only; the charts are entries of
//! figures.rs's metric table.

use crate::render::document::Block;
use crate::results::column;
use crate::results::reader::Results;
use crate::verdict::sweep::{self, aggregate, at, Sweep};

/// The findings on what a request costs, as a list; None when no row was counted.
pub fn findings_block(results: &Results, s: &Sweep) -> Option<Block> {
    let list = findings(results, s);
    (!list.is_empty()).then_some(Block::List(list))
}

/// The name of the call a model waits in, as the finding says it.
fn wait_call(model: &str) -> &'static str {
    match model {
        "select" => "select",
        "poll" => "poll",
        "epoll" | "tokio" => "epoll_wait",
        "uring" => "io_uring_enter",
        _ => "wait (epoll_wait, select, poll or io_uring_enter)",
    }
}

/// A count per request, with as many digits as it needs to be read.
fn per_request(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// One sentence per model on what a request costs it, and one comparing the models
/// with the fewest and the most system calls per request.
pub fn findings(results: &Results, s: &Sweep) -> Vec<String> {
    let mut out = Vec::new();
    // (model, x, syscalls per request) at each model's heaviest counted point.
    let mut counted: Vec<(String, f64, f64)> = Vec::new();
    for model in sweep::models(results) {
        let Some((text, x, syscalls)) = model_finding(results, s, &model) else {
            continue;
        };
        out.push(text);
        if let Some(n) = syscalls {
            counted.push((model, x, n));
        }
    }
    let fewest = counted.iter().min_by(|a, b| a.2.total_cmp(&b.2));
    let most = counted.iter().max_by(|a, b| a.2.total_cmp(&b.2));
    if let (Some(f), Some(m)) = (fewest, most) {
        if f.0 != m.0 && f.1 == m.1 && f.2 > 0.0 {
            out.push(format!(
                "{} makes {:.1}x fewer system calls per request than {} ({} against {}).",
                f.0,
                m.2 / f.2,
                m.0,
                per_request(f.2),
                per_request(m.2)
            ));
        }
    }
    out
}

/// What a request costs `model` at its heaviest counted point: the sentence, the point
/// and its system calls per request when they were counted.
fn model_finding(results: &Results, s: &Sweep, model: &str) -> Option<(String, f64, Option<f64>)> {
    let mean_at = |col: &str| {
        aggregate(results, s, model, &|r| r.num(col))
            .into_iter()
            .map(|a| (a.x, a.mean))
            .collect::<Vec<_>>()
    };
    // Switches are counted in every run; every system call only when asked for.
    let &(x, _) = mean_at(column::SERVER_VOLUNTARY_SWITCHES_PER_REQ).last()?;
    let value = |col: &str| {
        mean_at(col)
            .into_iter()
            .find(|(at_x, _)| *at_x == x)
            .map(|(_, v)| v)
    };
    let syscalls = value(column::SERVER_SYSCALLS_PER_REQ);
    let mut text = format!("{model} at {}", at(&s.axis, x));
    let call = wait_call(model);
    // First the wait, in the words of the question it answers: how many requests one
    // call serves, and for select and poll how many descriptors it scans each time.
    match value(column::SERVER_WAIT_CALLS_PER_REQ) {
        Some(w) if w >= 1.0 => {
            text += &format!(" makes {} {call} calls per request", per_request(w))
        }
        Some(w) if w > 0.0 => {
            text += &format!(" makes 1 {call} call per {} requests", per_request(1.0 / w));
            let held = value(column::MAX_CONCURRENT_SERVER);
            if let (true, Some(held)) = (matches!(model, "select" | "poll"), held) {
                text += &format!(" and scans {held:.0} descriptors each time");
            }
        }
        _ => {}
    }
    let mut counts = Vec::new();
    if let Some(n) = syscalls {
        counts.push(format!("{} system calls per request", per_request(n)));
    }
    if let (Some(r), Some(w)) = (
        value(column::SERVER_READ_CALLS_PER_REQ),
        value(column::SERVER_WRITE_CALLS_PER_REQ),
    ) {
        counts.push(format!(
            "{} reads and {} writes per request",
            per_request(r),
            per_request(w)
        ));
    }
    if let (Some(v), Some(i)) = (
        value(column::SERVER_VOLUNTARY_SWITCHES_PER_REQ),
        value(column::SERVER_INVOLUNTARY_SWITCHES_PER_REQ),
    ) {
        counts.push(format!(
            "{} voluntary and {} involuntary context switches per request",
            per_request(v),
            per_request(i)
        ));
    }
    text += &format!(": {}", counts.join(", "));
    Some((text + ".", x, syscalls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_request_keeps_what_matters() {
        assert_eq!(per_request(37.4), "37");
        assert_eq!(per_request(2.0355), "2.04");
        assert_eq!(per_request(0.0179), "0.018");
    }
}
