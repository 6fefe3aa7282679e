//! The reports' other testable statements (claims 33 to 53, docs/statements.md), each
//! judged from the rows of a scenario classic already runs: claim-9's connections held
//! (33-38), claim-17's staircase (39), claim-6's clients (40, 41) and claim-8's delay
//! sweep (42-46); then the last ones, on parts of their own or claim-3's rows: threads
//! against epoll over a size sweep (47), 003's small transfers at 10 000 connections
//! (48-51), threads on 003's staircase (52) and 80 000 connections held (53).
//! Comparisons are decided by [`contest`] as every claim's are.

use super::compared::{most_per_repetition, repetitions_run, retransmissions_per_1000, sweep_of};
use super::contest::{
    claim_figure, contest, level_shown, robustly, verdict_of, Figure, Outcome, Side, MEAN,
};
use super::observations::{ends, exceeds, median_range};
use super::{column, num_or_zero, ran, ClaimVerdict, Judged, Row, Status};
use crate::stats;
use crate::units::format_size;
use crate::verdict::{fmt_count, fmt_latency};

const HELD: Figure = claim_figure("connections held", true, fmt_count);
const SLOWER: Figure = claim_figure("mean response time", true, fmt_latency);

/// Requests a client in 004's cases: what a step's total test time is of.
const REQUESTS_A_CLIENT: f64 = 60.0;

/// 004's cases 6-11 name a test "within 30 seconds" (claim 45).
const THIRTY_S: f64 = 30.0;

/// 003's "alarmingly high" read as a share lost of 1 % or more (claim 39).
const ALARMING: f64 = 0.01;

/// The time 60 requests a client take at the rate a step measured (claim 30's figure).
fn total_test_time(r: &Row) -> Option<f64> {
    let rate = r.num(column::THROUGHPUT_RPS).filter(|v| *v > 0.0)?;
    Some(num_or_zero(r, column::CONNECTIONS) * REQUESTS_A_CLIENT / rate)
}

const TOTAL: Figure = claim_figure("total test time of 60 requests a client", true, |v| {
    format!("{v:.1} s")
});

/// What `model` did about `threshold` connections over its repetitions: whether every
/// repetition held a step of `threshold` or more, whether none did, and the fewest
/// connections of a step it failed.
struct Reach {
    every_held: bool,
    none_held: bool,
    first_failure: Option<f64>,
    line: String,
}

fn reach(rows: &[Row], model: &str, threshold: f64) -> Reach {
    let most = most_per_repetition(rows, model, column::CONNECTIONS);
    let first_failure = rows
        .iter()
        .filter(|r| r.model == model && r.status == Status::Failed)
        .map(|r| num_or_zero(r, column::CONNECTIONS))
        .reduce(f64::min);
    let held: Vec<String> = most.iter().map(|&c| fmt_count(c)).collect();
    let line = format!(
        "{model}: the most connections held in each repetition {}{}",
        if held.is_empty() {
            "(none ran)".into()
        } else {
            held.join(", ")
        },
        first_failure.map_or(String::new(), |c| format!(
            "; failed at {} connections",
            fmt_count(c)
        ))
    );
    Reach {
        every_held: !most.is_empty() && most.iter().all(|&c| c >= threshold),
        none_held: most.iter().all(|&c| c < threshold),
        first_failure,
        line,
    }
}

/// Claim 33 (000, Observations): the threads server crashes when client hosts 3 and 4
/// add their 3 000 clients each (12 000 in all).
pub(super) fn claim_33(rows: &[Row]) -> Judged {
    const FOUR_HOSTS: f64 = 12_000.0;
    let r = reach(rows, "threads", FOUR_HOSTS);
    let numbers = vec![
        r.line.clone(),
        "the report: 3 000 clients on each of two hosts; hosts 3 and 4 would crash it".into(),
    ];
    let failed_by = r.first_failure.filter(|&c| c <= FOUR_HOSTS);
    let (verdict, why) = match (r.every_held, failed_by) {
        (true, _) => (
            ClaimVerdict::Refuted,
            "threads held 12 000 connections or more in every repetition".to_string(),
        ),
        (false, Some(c)) if r.none_held => (
            ClaimVerdict::Confirmed,
            format!(
                "threads failed at {} connections, within the 12 000 of four hosts, and \
                 held 12 000 in no repetition",
                fmt_count(c)
            ),
        ),
        _ => (
            ClaimVerdict::Inconclusive,
            "no step tells whether threads holds 12 000: it failed only above 12 000 \
             after holding fewer, or its repetitions disagree"
                .to_string(),
        ),
    };
    (verdict, why, numbers)
}

/// Claim 34 (000, Limitations): the select server sustains at least 1 000 connections.
pub(super) fn claim_34(rows: &[Row]) -> Judged {
    const THOUSAND: f64 = 1_000.0;
    let r = reach(rows, "select", THOUSAND);
    let numbers = vec![r.line.clone()];
    let failed_by = r.first_failure.filter(|&c| c <= THOUSAND);
    let (verdict, why) = match (r.every_held, failed_by) {
        (true, _) => (
            ClaimVerdict::Confirmed,
            "select held 1 000 connections or more in every repetition".to_string(),
        ),
        (false, Some(c)) if r.none_held => (
            ClaimVerdict::Refuted,
            format!(
                "select failed at {} connections and held 1 000 in no repetition",
                fmt_count(c)
            ),
        ),
        _ => (
            ClaimVerdict::Inconclusive,
            "select held 1 000 connections in some repetitions and not in others, or no \
             step of 1 000 or fewer ran"
                .to_string(),
        ),
    };
    (verdict, why, numbers)
}

/// Claim 35 (000, Conclusion): select is not more functional than threads: threads holds
/// more connections than select.
pub(super) fn claim_35(rows: &[Row]) -> Judged {
    let side = |m: &str| Side::new(m, most_per_repetition(rows, m, column::CONNECTIONS));
    let (outcome, line) = contest(&side("threads"), &side("select"), HELD);
    let numbers = vec![line.clone()];
    let says = "threads holds more connections than select".to_string();
    let (verdict, why) = verdict_of(&[(says, outcome, line)]);
    (verdict, why, numbers)
}

/// Claim 36 (000, Conclusion): only epoll serves all four client hosts without crashing:
/// at the most connections of the run, epoll holds them and threads and select do not.
pub(super) fn claim_36(rows: &[Row]) -> Judged {
    let Some(top) = rows
        .iter()
        .filter(|r| ran(r))
        .map(|r| num_or_zero(r, column::CONNECTIONS))
        .reduce(f64::max)
    else {
        return (ClaimVerdict::Inconclusive, "no step ran".into(), Vec::new());
    };
    let [epoll, threads, select] = ["epoll", "threads", "select"].map(|m| reach(rows, m, top));
    let numbers = vec![
        epoll.line.clone(),
        threads.line.clone(),
        select.line.clone(),
    ];
    let others_held: Vec<&str> = [("threads", &threads), ("select", &select)]
        .iter()
        .filter(|(_, r)| !r.none_held)
        .map(|(m, _)| *m)
        .collect();
    let at = fmt_count(top);
    let (verdict, why) = if !others_held.is_empty() {
        (
            ClaimVerdict::Refuted,
            format!(
                "{} held {at} connections too, in at least one repetition",
                others_held.join(" and ")
            ),
        )
    } else if epoll.none_held {
        (
            ClaimVerdict::Refuted,
            format!("epoll held {at} connections in no repetition either"),
        )
    } else if epoll.every_held {
        (
            ClaimVerdict::Confirmed,
            format!(
                "epoll alone held {at} connections, in every repetition; threads and select \
                 in none"
            ),
        )
    } else {
        (
            ClaimVerdict::Inconclusive,
            format!("epoll held {at} connections in some repetitions, not in all"),
        )
    };
    (verdict, why, numbers)
}

/// The connections of the steps `model` passed, ascending.
fn held_steps(rows: &[Row], model: &str) -> Vec<f64> {
    super::values_of(
        rows.iter()
            .filter(|r| r.model == model && r.status == Status::Ok),
        column::CONNECTIONS,
    )
}

/// Claim 37 (002, Conclusion): threads' performance deteriorates the more clients
/// connect: its mean response time at the most connections it held against the fewest.
pub(super) fn claim_37(rows: &[Row]) -> Judged {
    let steps = held_steps(rows, "threads");
    let at = |c: f64| move |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let mut numbers: Vec<String> = steps
        .iter()
        .map(|&c| {
            format!(
                "threads, {} connections: mean response time {}",
                fmt_count(c),
                median_range(rows, "threads", at(c), column::MEAN_US, fmt_latency)
            )
        })
        .collect();
    let (fewest, most) = match ends(&steps, |c| format!("{} connections", fmt_count(c))) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, numbers),
    };
    let side = |c: f64| {
        Side::of(
            format!("{} connections", fmt_count(c)),
            rows,
            "threads",
            at(c),
            column::MEAN_US,
        )
    };
    let (upper, lower) = (side(most), side(fewest));
    let contested = contest(&upper, &lower, SLOWER);
    numbers.push(contested.1.clone());
    let claimed = "threads' mean response time rose with the connections";
    let (verdict, why) = exceeds(&upper, &lower, claimed, contested);
    (verdict, why, numbers)
}

/// Each repetition of `model`: its mean response time at `most` connections over that at
/// `fewest`, the repetitions in order.
fn growth(rows: &[Row], model: &str, fewest: f64, most: f64) -> Vec<f64> {
    let mean = |rep: u32, c: f64| {
        rows.iter()
            .find(|r| {
                r.model == model
                    && r.repetition == rep
                    && r.status == Status::Ok
                    && num_or_zero(r, column::CONNECTIONS) == c
            })
            .and_then(|r| r.num(column::MEAN_US))
            .filter(|v| *v > 0.0)
    };
    let mut reps: Vec<u32> = rows
        .iter()
        .filter(|r| r.model == model)
        .map(|r| r.repetition)
        .collect();
    reps.sort_unstable();
    reps.dedup();
    reps.iter()
        .filter_map(|&rep| Some(mean(rep, most)? / mean(rep, fewest)?))
        .collect()
}

/// Claim 38 (002, Conclusion): an event-driven server's performance drops much slower
/// than a thread per client's as connections grow: threads' growth of the mean response
/// time against epoll's, between the fewest and the most connections both held.
pub(super) fn claim_38(rows: &[Row]) -> Judged {
    const GROWTH: Figure = claim_figure("growth of the mean response time", true, |v| {
        format!("x{v:.2}")
    });
    let (threads, epoll) = (held_steps(rows, "threads"), held_steps(rows, "epoll"));
    let both: Vec<f64> = threads
        .iter()
        .copied()
        .filter(|c| epoll.contains(c))
        .collect();
    let (fewest, most) = match ends(&both, |c| format!("{} connections", fmt_count(c))) {
        Ok(ends) => ends,
        Err(why) => {
            let why = format!("threads and epoll held too few steps in common: {why}");
            return (ClaimVerdict::Inconclusive, why, Vec::new());
        }
    };
    let side = |m: &str| Side::new(m, growth(rows, m, fewest, most));
    let (outcome, line) = contest(&side("threads"), &side("epoll"), GROWTH);
    let numbers = vec![
        format!(
            "from {} to {} connections: {line}",
            fmt_count(fewest),
            fmt_count(most)
        ),
        "the report: Nginx's performance drops much slower than Apache's, \"in line with\" \
         its own threads against epoll"
            .into(),
    ];
    let says = "threads' response time grows more than epoll's".to_string();
    let (verdict, why) = verdict_of(&[(says, outcome, line)]);
    (verdict, why, numbers)
}

/// Claim 39 (003, Conclusion): errors and rejected connections are alarmingly high. At
/// the top stair, each repetition's share lost (the larger of its error rate and its
/// connections not established) against 1 %.
pub(super) fn claim_39(rows: &[Row]) -> Judged {
    let (model, stairs) = sweep_of(rows, column::CONNECTIONS);
    let Some(&top) = stairs.last() else {
        return (
            ClaimVerdict::Inconclusive,
            "no stair ran".into(),
            Vec::new(),
        );
    };
    let lost: Vec<f64> = rows
        .iter()
        .filter(|r| r.model == model && ran(r) && num_or_zero(r, column::CONNECTIONS) == top)
        .map(|r| {
            let errors = num_or_zero(r, column::ERROR_RATE);
            let established = r.num(column::CONNECTIONS_ESTABLISHED).unwrap_or(0.0);
            let refused = 1.0 - established / top.max(1.0);
            errors.max(refused).max(0.0)
        })
        .collect();
    let pct = |v: f64| format!("{:.2} %", v * 100.0);
    let numbers = vec![format!(
        "{model} at {} connections: share lost (errors or connections not established) \
         {} over {} repetition(s)",
        fmt_count(top),
        lost.iter().map(|&v| pct(v)).collect::<Vec<_>>().join(", "),
        lost.len()
    )];
    let (verdict, why) = if lost.iter().all(|&v| v >= ALARMING) {
        (
            ClaimVerdict::Confirmed,
            "every repetition lost 1 % or more of its requests or connections".to_string(),
        )
    } else if lost.iter().all(|&v| v < ALARMING) {
        (
            ClaimVerdict::Refuted,
            "every repetition lost less than 1 % of its requests and connections".to_string(),
        )
    } else {
        (
            ClaimVerdict::Inconclusive,
            "the repetitions straddle 1 % lost".to_string(),
        )
    };
    (verdict, why, numbers)
}

/// "About twice": `big`'s median over `small`'s is x1.5–2.6 with p < 0.05 (claim 6's
/// band), not when its 95 % interval lies outside the band, undecided otherwise; the
/// judgement must stand with each flagged repetition left out in turn.
fn about_twice(small: &Side, big: &Side, what: &str) -> (ClaimVerdict, String) {
    const BAND: std::ops::RangeInclusive<f64> = 1.5..=2.6;
    let Some(robust) = robustly(small, big, |c, _, _| {
        let (lo, hi) = c.interval;
        if c.significant() && BAND.contains(&c.ratio) {
            ClaimVerdict::Confirmed
        } else if hi < *BAND.start() || lo > *BAND.end() {
            ClaimVerdict::Refuted
        } else {
            ClaimVerdict::Inconclusive
        }
    }) else {
        let why = format!("not measured: {what} at {} or {}", small.name, big.name);
        return (ClaimVerdict::Inconclusive, why);
    };
    let shown = format!(
        "{what} at {} over {}: {}, {}{}",
        big.name,
        small.name,
        crate::render::format::ratio_interval(&robust.c, 'x'),
        robust.c.describe_p(),
        robust.note()
    );
    let verdict = robust.settled(ClaimVerdict::Inconclusive);
    let why = match verdict {
        ClaimVerdict::Confirmed => format!("about twice (x1.5–2.6, significant): {shown}"),
        ClaimVerdict::Refuted => format!("not twice (its interval outside x1.5–2.6): {shown}"),
        _ => format!("undecided: {shown}"),
    };
    (verdict, why)
}

/// Claim 40 (004, Test Case 2): about twice the IO at 5 000 clients as at 2 500.
pub(super) fn claim_40(rows: &[Row]) -> Judged {
    let (model, _) = sweep_of(rows, column::CONNECTIONS);
    let side = |c: f64| {
        Side::of(
            format!("{} clients", fmt_count(c)),
            rows,
            &model,
            |r| num_or_zero(r, column::CONNECTIONS) == c,
            column::NET_SEGS_IN_PER_S,
        )
    };
    let (small, big) = (side(2_500.0), side(5_000.0));
    let numbers: Vec<String> = [2_500.0, 5_000.0]
        .iter()
        .map(|&c| {
            format!(
                "{} clients: TCP segments received per second {}",
                fmt_count(c),
                median_range(
                    rows,
                    &model,
                    |r| num_or_zero(r, column::CONNECTIONS) == c,
                    column::NET_SEGS_IN_PER_S,
                    fmt_count
                )
            )
        })
        .chain(super::compared::host_scope(rows))
        .collect();
    let (verdict, why) = about_twice(&small, &big, "the segments per second");
    (verdict, why, numbers)
}

/// Claim 41 (004, Test Cases 3 and 4): the complete data transfer takes significantly
/// longer with more clients: the time until the last connection finished, 10 000
/// clients against 5 000.
pub(super) fn claim_41(rows: &[Row]) -> Judged {
    const LONGER: Figure = claim_figure("time to finish every request", true, |v| {
        format!("{v:.1} s")
    });
    let (model, _) = sweep_of(rows, column::CONNECTIONS);
    let at = |c: f64| move |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let numbers: Vec<String> = [5_000.0, 10_000.0]
        .iter()
        .map(|&c| {
            format!(
                "{} clients: every request finished after {}",
                fmt_count(c),
                median_range(rows, &model, at(c), column::COMPLETION_S, |v| format!(
                    "{v:.1} s"
                ))
            )
        })
        .collect();
    let side = |c: f64| {
        Side::of(
            format!("{} clients", fmt_count(c)),
            rows,
            &model,
            at(c),
            column::COMPLETION_S,
        )
    };
    let (upper, lower) = (side(10_000.0), side(5_000.0));
    let contested = contest(&upper, &lower, LONGER);
    let mut numbers = numbers;
    numbers.push(contested.1.clone());
    let claimed = "the whole transfer took longer at 10 000 clients than at 5 000";
    let (verdict, why) = exceeds(&upper, &lower, claimed, contested);
    (verdict, why, numbers)
}

/// The total test time of `model`'s steps at `delay` ms, one per repetition.
fn total_at(rows: &[Row], model: &str, delay: f64) -> Side {
    Side::derived(
        format!("{delay} ms"),
        rows,
        model,
        |r| num_or_zero(r, column::DELAY_MS) == delay,
        total_test_time,
    )
}

/// Each delay of a sweep, longest first, with its median total test time.
fn totals(rows: &[Row], model: &str, delays: &[f64]) -> Vec<String> {
    delays
        .iter()
        .rev()
        .map(|&d| {
            let s = total_at(rows, model, d);
            format!(
                "delay {d} ms: 60 requests a client in {}",
                stats::median(&s.samples).map_or("?".into(), TOTAL.format)
            )
        })
        .collect()
}

/// Claim 42 (004, Test Case 6): a 500 ms delay takes almost half the time of 1000 ms.
pub(super) fn claim_42(rows: &[Row]) -> Judged {
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let numbers = totals(rows, &model, &delays);
    let (half, whole) = (
        total_at(rows, &model, 500.0),
        total_at(rows, &model, 1000.0),
    );
    let (verdict, why) = about_twice(&half, &whole, "the total test time");
    (verdict, why, numbers)
}

/// Claim 43 (004, Test Case 7): no significant performance difference between 500 ms
/// and 250 ms: the mean response time at both. No difference is confirmed only when a
/// level is shown (the ratio's whole interval within x1.05): a noisy run that shows
/// nothing does not confirm it.
pub(super) fn claim_43(rows: &[Row]) -> Judged {
    let (model, _) = sweep_of(rows, column::DELAY_MS);
    let side = |d: f64| {
        Side::of(
            format!("{d} ms"),
            rows,
            &model,
            |r| num_or_zero(r, column::DELAY_MS) == d,
            column::MEAN_US,
        )
    };
    let (at_250, at_500) = (side(250.0), side(500.0));
    let (outcome, line) = contest(&at_250, &at_500, MEAN);
    let numbers = vec![line.clone()];
    let (verdict, why) = match outcome {
        Outcome::Holds | Outcome::Opposite => (
            ClaimVerdict::Refuted,
            format!("a significant difference: {line}"),
        ),
        Outcome::NoDifference if level_shown(&at_250, &at_500) => (
            ClaimVerdict::Confirmed,
            format!(
                "no difference: the ratio's whole 95 % interval lies within x{}: {line}",
                stats::MIN_EFFECT
            ),
        ),
        Outcome::NoDifference => (
            ClaimVerdict::Inconclusive,
            format!(
                "neither a difference nor a level shown (p >= 0.05, the interval past x{}): \
                 {line}",
                stats::MIN_EFFECT
            ),
        ),
        Outcome::TooFew => (
            ClaimVerdict::Inconclusive,
            format!("too few repetitions for p < 0.05: {line}"),
        ),
        Outcome::Missing => (ClaimVerdict::Inconclusive, line),
    };
    (verdict, why, numbers)
}

/// Claim 44 (004, Test Case 9): 50 ms is an overall faster test than 125 ms.
pub(super) fn claim_44(rows: &[Row]) -> Judged {
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let mut numbers = totals(rows, &model, &delays);
    let (upper, lower) = (total_at(rows, &model, 125.0), total_at(rows, &model, 50.0));
    let contested = contest(&upper, &lower, TOTAL);
    numbers.push(contested.1.clone());
    let claimed = "the whole test was faster at 50 ms than at 125 ms";
    let (verdict, why) = exceeds(&upper, &lower, claimed, contested);
    (verdict, why, numbers)
}

/// Claim 45 (004, Test Case 11): only the shortest delay completes the test within 30 s.
pub(super) fn claim_45(rows: &[Row]) -> Judged {
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let numbers = totals(rows, &model, &delays);
    let (shortest, _) = match ends(&delays, |d| format!("the delay {d} ms")) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, numbers),
    };
    let within = |d: f64| {
        let s = total_at(rows, &model, d).samples;
        let median = stats::median(&s).map(|m| m < THIRTY_S);
        let every = !s.is_empty() && s.iter().all(|&t| t < THIRTY_S);
        let none = !s.is_empty() && s.iter().all(|&t| t >= THIRTY_S);
        (median, every, none)
    };
    let others: Vec<f64> = delays.iter().copied().filter(|&d| d != shortest).collect();
    let also: Vec<String> = others
        .iter()
        .filter(|&&d| within(d).0 == Some(true))
        .map(|d| format!("{d} ms"))
        .collect();
    let (shortest_median, shortest_every, _) = within(shortest);
    let (verdict, why) = if !also.is_empty() {
        (
            ClaimVerdict::Refuted,
            format!("{} also finished within 30 s", also.join(", ")),
        )
    } else if shortest_median == Some(false) {
        (
            ClaimVerdict::Refuted,
            format!("{shortest} ms did not finish within 30 s either"),
        )
    } else if shortest_every && others.iter().all(|&d| within(d).2) {
        (
            ClaimVerdict::Confirmed,
            format!("only {shortest} ms finished within 30 s, in every repetition"),
        )
    } else {
        (
            ClaimVerdict::Inconclusive,
            "repetitions straddle 30 s, or a delay was not measured".to_string(),
        )
    };
    (verdict, why, numbers)
}

/// Claim 46 (004, Test Case 11; Case 11-14): more retransmissions at the shortest
/// delay than at the longest.
pub(super) fn claim_46(rows: &[Row]) -> Judged {
    const RETRANSMITTED: Figure =
        claim_figure("retransmitted segments per 1 000 requests", true, |v| {
            format!("{v:.2}")
        });
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let side = |d: f64| {
        Side::derived(
            format!("{d} ms"),
            rows,
            &model,
            |r| num_or_zero(r, column::DELAY_MS) == d,
            retransmissions_per_1000,
        )
    };
    let (shortest, longest) = match ends(&delays, |d| format!("the delay {d} ms")) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, Vec::new()),
    };
    let (upper, lower) = (side(shortest), side(longest));
    let contested = contest(&upper, &lower, RETRANSMITTED);
    let numbers = vec![contested.1.clone()];
    let none = |s: &Side| !s.samples.is_empty() && s.samples.iter().all(|&v| v == 0.0);
    if none(&upper) && none(&lower) {
        let why = format!("no retransmission counted at {shortest} ms or at {longest} ms");
        return (ClaimVerdict::Refuted, why, numbers);
    }
    let claimed = format!("more retransmissions at {shortest} ms than at {longest} ms");
    let (verdict, why) = exceeds(&upper, &lower, &claimed, contested);
    (verdict, why, numbers)
}

/// Claim 47 (000, Conclusion): since the requests are small, threads serves them faster
/// than epoll: threads' mean response time against epoll's at the smallest size of the
/// sweep and at the largest, so the verdict says whether the order depends on the size.
pub(super) fn claim_47(rows: &[Row]) -> Judged {
    let (_, sizes) = sweep_of(rows, column::SIZE);
    let (small, large) = match ends(&sizes, |s| format_size(s as u64)) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, Vec::new()),
    };
    let at = |size: f64| {
        let side = |m: &str| {
            Side::of(
                m,
                rows,
                m,
                |r| num_or_zero(r, column::SIZE) == size,
                column::MEAN_US,
            )
        };
        // threads "better" is epoll's mean above threads': `contest` on SLOWER.
        let (outcome, line) = contest(&side("epoll"), &side("threads"), SLOWER);
        (outcome, format!("{}: {line}", format_size(size as u64)))
    };
    let ((at_small, small_line), (at_large, large_line)) = (at(small), at(large));
    let numbers = vec![small_line.clone(), large_line.clone()];
    let faster = "threads faster than epoll";
    let (verdict, why) = match (at_small, at_large) {
        (Outcome::Missing | Outcome::TooFew, _) | (_, Outcome::Missing | Outcome::TooFew) => (
            ClaimVerdict::Inconclusive,
            format!("not compared at both sizes (a side missing or too few repetitions): {small_line}; {large_line}"),
        ),
        (Outcome::Opposite, _) => (
            ClaimVerdict::Refuted,
            format!("threads was significantly slower than epoll at the small size: {small_line}"),
        ),
        (Outcome::NoDifference, _) => (
            ClaimVerdict::NoDifference,
            format!("neither was faster at the small size: {small_line}"),
        ),
        (Outcome::Holds, Outcome::Holds) => (
            ClaimVerdict::Refuted,
            format!("{faster} at both sizes, so not for the requests being small: {small_line}; {large_line}"),
        ),
        (Outcome::Holds, _) => (
            ClaimVerdict::Confirmed,
            format!("{faster} at the small size only: {small_line}; {large_line}"),
        ),
    };
    (verdict, why, numbers)
}

/// A verdict from one yes or no per repetition: confirmed when every repetition says
/// yes, refuted when every one says no, inconclusive when they disagree, a repetition
/// says neither (None), or none ran.
fn every_repetition(answers: &[Option<bool>], yes: &str, no: &str) -> (ClaimVerdict, String) {
    let told = |a: bool| answers.iter().filter(|&&x| x == Some(a)).count();
    let n = answers.len();
    if n > 0 && told(true) == n {
        (ClaimVerdict::Confirmed, format!("every repetition {yes}"))
    } else if n > 0 && told(false) == n {
        (ClaimVerdict::Refuted, format!("every repetition {no}"))
    } else if n == 0 {
        (ClaimVerdict::Inconclusive, "no repetition ran".into())
    } else {
        (
            ClaimVerdict::Inconclusive,
            format!(
                "the repetitions disagree: {} {yes}, {} {no}, {} neither",
                told(true),
                told(false),
                n - told(true) - told(false)
            ),
        )
    }
}

/// `model`'s rows of claim-48's load at `size` bytes that ran, one per repetition.
fn at_size<'a>(rows: &'a [Row], model: &str, size: f64) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| r.model == model && ran(r) && num_or_zero(r, column::SIZE) == size)
        .collect()
}

/// One repetition of claim-48's load, as its numbers list it.
fn transfer_line(r: &Row) -> String {
    let established = r
        .num(column::CONNECTIONS_ESTABLISHED)
        .map_or("?".into(), fmt_count);
    let done = r.num(column::COMPLETION_S).map_or(String::new(), |s| {
        format!(", every connection done after {s:.1} s")
    });
    let status = match r.status {
        Status::Failed => format!("failed: {}", r.failure_reason),
        _ => "passed".into(),
    };
    format!(
        "{} at {}, repetition {}: {established} connections established{done}; {status}",
        r.model,
        format_size(num_or_zero(r, column::SIZE) as u64),
        r.repetition
    )
}

/// Claims 48 and 49 (003, Multi-threaded, 1 B and 1 KiB): threads was terminated after
/// half of its connections closed: whether threads failed claim-48's step at `size`.
fn threads_stopped(rows: &[Row], size: f64) -> Judged {
    let mine = at_size(rows, "threads", size);
    let numbers = mine.iter().map(|r| transfer_line(r)).collect();
    let answers: Vec<Option<bool>> = mine
        .iter()
        .map(|r| Some(r.status == Status::Failed))
        .collect();
    let (verdict, why) = every_repetition(
        &answers,
        "of threads failed before serving all 10 000 connections",
        "of threads served all 10 000 connections",
    );
    (verdict, why, numbers)
}

/// Claim 48 (003, Multi-threaded, 1 Byte Transfer).
pub(super) fn claim_48(rows: &[Row]) -> Judged {
    threads_stopped(rows, 1.0)
}

/// Claim 49 (003, Multi-threaded, 1 Kilobyte Transfer).
pub(super) fn claim_49(rows: &[Row]) -> Judged {
    threads_stopped(rows, 1024.0)
}

/// Claim 50 (003, Epoll, 1 Byte Transfer): over a minute before all 10 000 connections
/// were responded to and closed: epoll's completion time at 1 B against 60 s.
pub(super) fn claim_50(rows: &[Row]) -> Judged {
    const MINUTE: f64 = 60.0;
    let mine = at_size(rows, "epoll", 1.0);
    let numbers = mine.iter().map(|r| transfer_line(r)).collect();
    let answers: Vec<Option<bool>> = mine
        .iter()
        .map(|r| match r.num(column::COMPLETION_S) {
            Some(s) if s >= MINUTE => Some(true),
            Some(_) if r.status == Status::Ok => Some(false),
            _ => None,
        })
        .collect();
    let (verdict, why) = every_repetition(
        &answers,
        "of epoll took a minute or more before every connection was answered and closed",
        "of epoll answered and closed all 10 000 connections in under a minute",
    );
    (verdict, why, numbers)
}

/// Claim 51 (003, Epoll, 1 Kilobyte Transfer): connections repeatedly rejected: the
/// connection attempts epoll's listen queue dropped at 1 KiB against 1 % of the
/// connections.
pub(super) fn claim_51(rows: &[Row]) -> Judged {
    const REPEATEDLY: f64 = 0.01;
    let mine = at_size(rows, "epoll", 1024.0);
    let numbers = mine
        .iter()
        .map(|r| {
            let drops = r
                .num(column::NET_LISTEN_DROPS)
                .map_or("not counted".into(), fmt_count);
            format!(
                "epoll at 1 KiB, repetition {}: {drops} connection attempts dropped at the \
                 listen queue of {} connections",
                r.repetition,
                fmt_count(num_or_zero(r, column::CONNECTIONS))
            )
        })
        .chain(super::compared::host_scope(rows))
        .collect();
    let answers: Vec<Option<bool>> = mine
        .iter()
        .map(|r| {
            let drops = r.num(column::NET_LISTEN_DROPS)?;
            Some(drops >= REPEATEDLY * num_or_zero(r, column::CONNECTIONS))
        })
        .collect();
    let (verdict, why) = every_repetition(
        &answers,
        "of epoll dropped 1 % or more of its connections' attempts at the listen queue",
        "of epoll dropped fewer than 1 % of its connections' attempts",
    );
    (verdict, why, numbers)
}

/// Claim 52 (003, Multi-threaded, Continuous Transfer): threads was terminated after its
/// throughput collapsed: in each repetition, the last stair's echo throughput against
/// half the best stair's.
pub(super) fn claim_52(rows: &[Row]) -> Judged {
    let (model, _) = sweep_of(rows, column::CONNECTIONS);
    let reps = repetitions_run(rows, &model);
    let mut numbers = Vec::new();
    let answers: Vec<Option<bool>> = reps
        .iter()
        .map(|&rep| {
            let stairs: Vec<&Row> = rows
                .iter()
                .filter(|r| r.model == model && r.repetition == rep && ran(r))
                .collect();
            let mib_s = |r: &Row| num_or_zero(r, column::THROUGHPUT_MIB_S);
            let best = stairs.iter().map(|r| mib_s(r)).fold(0.0, f64::max);
            let top = stairs
                .iter()
                .map(|r| num_or_zero(r, column::CONNECTIONS))
                .fold(0.0, f64::max);
            // The top's stair and its hold: the lower throughput of the two.
            let last = stairs
                .iter()
                .filter(|r| num_or_zero(r, column::CONNECTIONS) == top)
                .map(|r| mib_s(r))
                .reduce(f64::min)?;
            numbers.push(format!(
                "{model}, repetition {rep}: best stair {best:.2} MiB/s, the last ({} \
                 connections) {last:.2} MiB/s",
                fmt_count(top)
            ));
            Some(last < best / 2.0)
        })
        .collect();
    let (verdict, why) = every_repetition(
        &answers,
        &format!("of {model} ended under half its best stair's throughput"),
        &format!("of {model} kept half its best stair's throughput or more to its last stair"),
    );
    (verdict, why, numbers)
}

/// Claim 53 (003, Epoll, Continuous Transfer): the server accepts a large number of
/// connections, read as 003's own 80 000: the most connections epoll held in each
/// repetition of claim-3's rows.
pub(super) fn claim_53(rows: &[Row]) -> Judged {
    const STOPPED_AT: f64 = 80_000.0;
    let r = reach(rows, "epoll", STOPPED_AT);
    let numbers = vec![
        r.line.clone(),
        "the report: the transfer was stopped at 80 000 connections".into(),
    ];
    let (verdict, why) = if r.every_held {
        (
            ClaimVerdict::Confirmed,
            "epoll held 80 000 connections or more in every repetition".to_string(),
        )
    } else if r.none_held {
        (
            ClaimVerdict::Refuted,
            "epoll held 80 000 connections in no repetition".to_string(),
        )
    } else {
        (
            ClaimVerdict::Inconclusive,
            "epoll held 80 000 connections in some repetitions, not in all".to_string(),
        )
    };
    (verdict, why, numbers)
}
