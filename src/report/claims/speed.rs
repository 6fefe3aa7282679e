//! The speed claims (4, 5, 6 and 8): response times compared between models or
//! along a sweep.

use super::{column, models, num, ok_spread, ran, spread, values_of, Judged, Row, Spread, Verdict};
use crate::report::verdict::{fmt_count, fmt_latency};

/// How two models compare at one step on a figure where lower is better.
#[derive(Debug, PartialEq)]
enum Compared {
    /// `a`'s median within 10 % of `b`'s or lower.
    AAsGood,
    /// `a` lower beyond the spread (every repetition of a below every one of b).
    AFaster,
    /// `b` lower beyond the spread.
    BFaster,
    Noise,
}

fn compare(a: Spread, b: Spread) -> Compared {
    if a.max < b.min {
        Compared::AFaster
    } else if b.max < a.min {
        Compared::BFaster
    } else if a.median <= b.median * 1.1 {
        Compared::AAsGood
    } else {
        Compared::Noise
    }
}

/// Each step where both `a` and `b` have ok values of `c`: (step, a, b).
fn paired(rows: &[Row], a: &str, b: &str, c: &str) -> Vec<(String, Spread, Spread)> {
    let mut steps: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.model == a) {
        if !steps.contains(&r.step.as_str()) {
            steps.push(&r.step);
        }
    }
    steps
        .into_iter()
        .filter_map(|step| {
            let at = |r: &Row| r.step == step;
            Some((
                step.to_string(),
                ok_spread(rows, a, at, c)?,
                ok_spread(rows, b, at, c)?,
            ))
        })
        .collect()
}

/// Claim 4: select's mean response time against epoll's, step by step.
pub(super) fn claim_4(rows: &[Row]) -> Judged {
    let pairs = paired(rows, "select", "epoll", column::MEAN_US);
    let mut numbers = Vec::new();
    let (mut as_good, mut epoll_faster) = (0, 0);
    for (step, s, e) in &pairs {
        let c = compare(*s, *e);
        match c {
            Compared::AAsGood | Compared::AFaster => as_good += 1,
            Compared::BFaster => epoll_faster += 1,
            Compared::Noise => {}
        }
        numbers.push(format!(
            "{step}: mean response time select {}, epoll {}",
            s.show(fmt_latency),
            e.show(fmt_latency)
        ));
    }
    let n = pairs.len();
    let tally = format!(
        "select as fast or faster at {as_good} of {n} steps, epoll faster beyond the spread at {epoll_faster}"
    );
    let verdict = if n == 0 {
        return (
            Verdict::Inconclusive,
            "no step where both select and epoll finished".into(),
            numbers,
        );
    } else if as_good == n {
        Verdict::Confirmed
    } else if epoll_faster * 2 > n {
        Verdict::Refuted
    } else {
        Verdict::Inconclusive
    };
    (verdict, tally, numbers)
}

/// Claim 5: the time to complete a workload of short connections, epoll against select.
pub(super) fn claim_5(rows: &[Row]) -> Judged {
    let mut pairs = paired(rows, "epoll", "select", column::COMPLETION_S);
    let mut figure = "completion time";
    if pairs.is_empty() {
        pairs = paired(rows, "epoll", "select", column::MEAN_US);
        figure = "mean response time";
    }
    let mut numbers = Vec::new();
    let (mut epoll_faster, mut select_faster) = (0, 0);
    for (step, e, s) in &pairs {
        match compare(*e, *s) {
            Compared::AFaster => epoll_faster += 1,
            Compared::BFaster => select_faster += 1,
            _ => {}
        }
        let fmt: fn(f64) -> String = if figure == "completion time" {
            |v| format!("{v:.3} s")
        } else {
            fmt_latency
        };
        numbers.push(format!(
            "{step}: {figure} epoll {}, select {}",
            e.show(fmt),
            s.show(fmt)
        ));
        if let (Some(em), Some(sm)) = (
            ok_spread(rows, "epoll", |r| r.step == *step, column::MEAN_US),
            ok_spread(rows, "select", |r| r.step == *step, column::MEAN_US),
        ) {
            numbers.push(format!(
                "{step}: mean response time epoll {}, select {}",
                em.show(fmt_latency),
                sm.show(fmt_latency)
            ));
        }
    }
    let n = pairs.len();
    let why = format!(
        "on {figure}, epoll faster beyond the spread at {epoll_faster} of {n} steps, select at {select_faster}"
    );
    let verdict = match (n, epoll_faster, select_faster) {
        (0, _, _) => {
            return (
                Verdict::Inconclusive,
                "no step where both epoll and select finished".into(),
                numbers,
            )
        }
        (_, e, 0) if e > 0 => Verdict::Confirmed,
        (_, 0, s) if s > 0 => Verdict::Refuted,
        _ => Verdict::Inconclusive,
    };
    (verdict, why, numbers)
}

/// Claim 6: for each doubling of the clients while throughput still grows, does the
/// mean response time double too?
pub(super) fn claim_6(rows: &[Row]) -> Judged {
    let model = models(rows)
        .first()
        .map_or(String::new(), |m| m.to_string());
    let mine: Vec<&Row> = rows.iter().filter(|r| r.model == model).collect();
    let mut numbers = Vec::new();
    let (mut doubled, mut flat, mut unsaturated) = (0, 0, 0);
    // Mean ratios of the doublings after saturation, to say what happened there.
    let mut saturated_ratios: Vec<f64> = Vec::new();
    for delay in values_of(mine.iter().copied(), column::DELAY_MS) {
        let at = |c: f64| {
            move |r: &Row| num(r, column::DELAY_MS) == delay && num(r, column::CONNECTIONS) == c
        };
        let clients = values_of(
            mine.iter()
                .copied()
                .filter(|r| num(r, column::DELAY_MS) == delay),
            column::CONNECTIONS,
        );
        let mut steps = Vec::new();
        for pair in clients.windows(2) {
            let (c1, c2) = (pair[0], pair[1]);
            if !(1.8..=2.2).contains(&(c2 / c1)) {
                continue;
            }
            let get = |c: f64, col: &str| ok_spread(rows, &model, at(c), col).map(|s| s.median);
            let (Some(m1), Some(m2), Some(t1), Some(t2)) = (
                get(c1, column::MEAN_US),
                get(c2, column::MEAN_US),
                get(c1, column::THROUGHPUT_RPS),
                get(c2, column::THROUGHPUT_RPS),
            ) else {
                continue;
            };
            let (mr, tr) = (m2 / m1, t2 / t1);
            let saturated = tr < 1.6;
            if saturated {
                saturated_ratios.push(mr);
            } else {
                unsaturated += 1;
                if (1.5..=2.6).contains(&mr) {
                    doubled += 1;
                } else if mr < 1.5 {
                    flat += 1;
                }
            }
            steps.push(format!(
                "{}→{}: mean {} → {} (x{mr:.2}), throughput x{tr:.2}{}",
                fmt_count(c1),
                fmt_count(c2),
                fmt_latency(m1),
                fmt_latency(m2),
                if saturated { ", saturated" } else { "" }
            ));
        }
        if !steps.is_empty() {
            numbers.push(format!("delay {delay} ms: {}", steps.join("; ")));
        }
    }
    let mut why = format!(
        "of {unsaturated} doublings before saturation (throughput x1.6 or more), the mean \
         response time doubled (x1.5–2.6) at {doubled} and stayed flat (under x1.5) at {flat}"
    );
    if let Some(s) = spread(saturated_ratios) {
        why += &format!(
            "; at the {} doublings after saturation it grew x{:.2}–{:.2} (queueing, with \
             throughput no longer growing)",
            s.n, s.min, s.max
        );
    }
    let verdict = if unsaturated == 0 {
        Verdict::Inconclusive
    } else if doubled * 2 > unsaturated {
        Verdict::Confirmed
    } else if flat * 2 > unsaturated {
        Verdict::Refuted
    } else {
        Verdict::Inconclusive
    };
    (verdict, why, numbers)
}

/// Claim 8: the mean response time flat at delays of 125 ms and above, steep below.
pub(super) fn claim_8(rows: &[Row]) -> Judged {
    const KNEE_MS: f64 = 125.0;
    let model = models(rows)
        .first()
        .map_or(String::new(), |m| m.to_string());
    let delays = values_of(
        rows.iter().filter(|r| r.model == model && ran(r)),
        column::DELAY_MS,
    );
    let mean_at = |d: f64| {
        ok_spread(
            rows,
            &model,
            |r| num(r, column::DELAY_MS) == d,
            column::MEAN_US,
        )
    };
    let mut numbers = Vec::new();
    for &d in delays.iter().rev() {
        if let Some(s) = mean_at(d) {
            numbers.push(format!("delay {d} ms: mean {}", s.show(fmt_latency)));
        } else {
            numbers.push(format!("delay {d} ms: no repetition finished"));
        }
    }
    let slow: Vec<f64> = delays
        .iter()
        .filter(|&&d| d >= KNEE_MS)
        .filter_map(|&d| mean_at(d).map(|s| s.median))
        .collect();
    let knee = delays
        .iter()
        .copied()
        .find(|&d| d >= KNEE_MS)
        .and_then(|d| mean_at(d).map(|s| s.median));
    let fastest = delays
        .first()
        .filter(|&&d| d < KNEE_MS)
        .and_then(|&d| mean_at(d).map(|s| s.median));
    let (Some(knee), Some(fastest)) = (knee, fastest) else {
        return (
            Verdict::Inconclusive,
            "no finished step at 125 ms or above and below it to compare".into(),
            numbers,
        );
    };
    let (lo, hi) = slow
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let flat = hi <= 2.0 * lo;
    let climb = fastest / knee;
    let measured = format!(
        "at 125 ms and above the mean ranges {} to {} (x{:.2}), and at the shortest delay it \
         is x{climb:.1} the one at 125 ms",
        fmt_latency(lo),
        fmt_latency(hi),
        hi / lo
    );
    let (verdict, why) = if !flat {
        (
            Verdict::Refuted,
            format!("not low and flat at 125 ms and above: {measured}"),
        )
    } else if climb < 2.0 {
        (
            Verdict::Refuted,
            format!("no steep climb below 125 ms: {measured}"),
        )
    } else if climb >= 5.0 {
        (Verdict::Confirmed, measured)
    } else {
        (
            Verdict::Inconclusive,
            format!("a climb, but under x5: {measured}"),
        )
    };
    (verdict, why, numbers)
}
