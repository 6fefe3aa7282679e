//! The reports' other testable statements (claims 33 to 46, docs/statements.md), each
//! judged from the rows of a scenario classic already runs: claim-9's connections held
//! (33-38), claim-17's staircase (39), claim-6's clients (40, 41) and claim-8's delay
//! sweep (42-46). Comparisons are decided by [`contest`] as every claim's are.

use super::compared::{most_per_repetition, retransmissions_per_1000, sweep_of};
use super::contest::{
    claim_figure, contest, level_shown, robustly, verdict_of, Figure, Outcome, Side, MEAN,
};
use super::observations::{ends, exceeds, median_range};
use super::{column, num_or_zero, ran, ClaimVerdict, Judged, Row, Status};
use crate::stats;
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
