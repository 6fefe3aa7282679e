//! The claims that one side beats another on a figure (9 to 15, 17, 18 and 32): each
//! comparison of repetitions is decided by [`contest`] at p < ALPHA. A claim
//! "A beats B" is confirmed only when every comparison it makes holds
//! significantly, refuted when one goes significantly the other way, and otherwise
//! "no difference" (or inconclusive when the repetitions are too few for any p
//! to reach ALPHA).

use super::contest::{
    claim_figure, contest, level_shown, verdict_of, Figure, Outcome, Side, CPU, MEAN, MEMORY,
    THROUGHPUT,
};
use super::{column, num_or_zero, ran, samples, values_of, ClaimVerdict, Judged, Row, Status};
use crate::stats;
use crate::verdict::{fmt_count, fmt_latency};

/// Judges claims of the form "`better` beats `worse` on `figure`" over every row.
pub(super) fn beats(rows: &[Row], claims: &[(&str, &str, Figure, &str)]) -> Judged {
    let mut numbers = Vec::new();
    let parts: Vec<(String, Outcome, String)> = claims
        .iter()
        .map(|&(better, worse, figure, c)| {
            let b = Side::of(better, rows, better, |_| true, c);
            let w = Side::of(worse, rows, worse, |_| true, c);
            let (outcome, line) = contest(&b, &w, figure);
            numbers.push(line.clone());
            let says = format!(
                "{better} {} {worse}",
                if !figure.higher_is_better {
                    format!("lower {} than", figure.name)
                } else {
                    format!("higher {} than", figure.name)
                }
            );
            (says, outcome, line)
        })
        .collect();
    let (verdict, why) = verdict_of(&parts);
    (verdict, why, numbers)
}

/// Claim 9 (000, Background): epoll the most scalable, select second, threads the
/// least. Each repetition's scale is the most connections it held (its highest ok step).
pub(super) fn claim_9(rows: &[Row]) -> Judged {
    let most_held = |model: &str| most_per_repetition(rows, model, column::CONNECTIONS);
    const HELD: Figure = claim_figure("connections held", true, fmt_count);
    let side = |m: &str| Side::new(m, most_held(m));
    let mut numbers = Vec::new();
    let parts: Vec<(String, Outcome, String)> = [
        ("epoll", "select"),
        ("select", "threads"),
        ("epoll", "threads"),
    ]
    .iter()
    .map(|&(a, b)| {
        let (outcome, line) = contest(&side(a), &side(b), HELD);
        numbers.push(line.clone());
        (
            format!("{a} holds more connections than {b}"),
            outcome,
            line,
        )
    })
    .collect();
    // What stopped each model: the first failure, as the runner recorded it.
    for model in ["threads", "select", "epoll"] {
        if let Some(r) = rows
            .iter()
            .filter(|r| r.model == model && r.status == Status::Failed)
            .min_by(|a, b| {
                num_or_zero(a, column::CONNECTIONS).total_cmp(&num_or_zero(b, column::CONNECTIONS))
            })
        {
            numbers.push(format!(
                "{model} failed at {} connections: {}",
                fmt_count(num_or_zero(r, column::CONNECTIONS)),
                r.failure_reason
            ));
        }
    }
    let (verdict, why) = verdict_of(&parts);
    (verdict, why, numbers)
}

/// Claim 10 (000, Figure 6): epoll takes longer per request than threads (and select).
pub(super) fn claim_10(rows: &[Row]) -> Judged {
    let slower = claim_figure("mean response time", true, fmt_latency);
    beats(
        rows,
        &[
            ("epoll", "threads", slower, column::MEAN_US),
            ("epoll", "select", slower, column::MEAN_US),
        ],
    )
}

/// Claim 11 (000, Figure 7): threads takes more CPU than epoll and select.
pub(super) fn claim_11(rows: &[Row]) -> Judged {
    beats(
        rows,
        &[
            ("epoll", "threads", CPU, column::SERVER_CPU_PCT),
            ("select", "threads", CPU, column::SERVER_CPU_PCT),
        ],
    )
}

/// Claim 12 (000, Figure 8): select takes less memory than threads and epoll.
pub(super) fn claim_12(rows: &[Row]) -> Judged {
    beats(
        rows,
        &[
            ("select", "threads", MEMORY, column::SERVER_RSS_MAX_BYTES),
            ("select", "epoll", MEMORY, column::SERVER_RSS_MAX_BYTES),
        ],
    )
}

/// Claim 13 (001, Case 4): select answers faster than epoll (300 clients, 1000 requests).
pub(super) fn claim_13(rows: &[Row]) -> Judged {
    beats(rows, &[("select", "epoll", MEAN, column::MEAN_US)])
}

/// Claim 14 (001, Conclusion): an epoll server scaled out over worker threads beats
/// select "on all aspects": throughput and mean response time.
pub(super) fn claim_14(rows: &[Row]) -> Judged {
    let (verdict, why, mut numbers) = beats(
        rows,
        &[
            ("epoll-2w", "select", THROUGHPUT, column::THROUGHPUT_RPS),
            ("epoll-2w", "select", MEAN, column::MEAN_US),
        ],
    );
    // Beside the verdict: what the second worker gave epoll itself.
    let b = Side::new(
        "epoll-2w",
        samples(rows, "epoll-2w", |_| true, column::THROUGHPUT_RPS),
    );
    let w = Side::new(
        "epoll",
        samples(rows, "epoll", |_| true, column::THROUGHPUT_RPS),
    );
    numbers.push(format!(
        "the second worker: {}",
        contest(&b, &w, THROUGHPUT).1
    ));
    (verdict, why, numbers)
}

/// Claim 15 (002, Conclusion): more epoll worker threads on more cores give more
/// throughput (2 workers against 1 on this machine's 2 cores).
pub(super) fn claim_15(rows: &[Row]) -> Judged {
    beats(
        rows,
        &[("epoll-2w", "epoll", THROUGHPUT, column::THROUGHPUT_RPS)],
    )
}

/// Claim 17 (003, Continuous Transfer 1KB): adding connections does not raise the
/// speed. The stairs of the upper half of the staircase against those of the lower
/// half: confirmed when the upper half is not significantly faster, refuted when it
/// is (throughput kept growing with the connections).
pub(super) fn claim_17(rows: &[Row]) -> Judged {
    const MIB_S: Figure = claim_figure("echo throughput", true, |v| format!("{v:.2} MiB/s"));
    let (model, stairs) = sweep_of(rows, column::CONNECTIONS);
    let mut numbers: Vec<String> = stairs
        .iter()
        .map(|&c| {
            let s = samples(
                rows,
                &model,
                |r| num_or_zero(r, column::CONNECTIONS) == c,
                column::THROUGHPUT_MIB_S,
            );
            format!(
                "{} connections: {}",
                fmt_count(c),
                stats::median(&s).map_or("no stair passed".into(), |m| format!(
                    "median {m:.2} MiB/s over {} rep{}",
                    s.len(),
                    if s.len() == 1 { "" } else { "s" }
                ))
            )
        })
        .collect();
    let Some(&top) = stairs.last() else {
        return (ClaimVerdict::Inconclusive, "no stair ran".into(), numbers);
    };
    let half = |upper: bool| {
        samples(
            rows,
            &model,
            |r| (num_or_zero(r, column::CONNECTIONS) > top / 2.0) == upper,
            column::THROUGHPUT_MIB_S,
        )
    };
    let upper = Side::new(format!("above {}", fmt_count(top / 2.0)), half(true));
    let lower = Side::new(format!("up to {}", fmt_count(top / 2.0)), half(false));
    let (outcome, line) = contest(&upper, &lower, MIB_S);
    numbers.push(line.clone());
    numbers.push("the report: about 3.0 MB/s (2.86 MiB/s) up and down at most".into());
    let (verdict, why) = no_growth(&upper, &lower, "speed", "connections", outcome, line);
    (verdict, why, numbers)
}

/// A claim that a figure stops growing, judged from `outcome` and `line` of
/// contest(upper, lower): refuted when `upper` (more `load`) is significantly higher,
/// confirmed when it is significantly lower or a level is shown, "no difference" when
/// neither. A level is shown, not assumed from a missing difference: the whole
/// interval of the ratio lies within x1.05.
fn no_growth(
    upper: &Side,
    lower: &Side,
    what: &str,
    load: &str,
    outcome: Outcome,
    line: String,
) -> (ClaimVerdict, String) {
    let level = level_shown(upper, lower);
    match outcome {
        Outcome::Holds => (
            ClaimVerdict::Refuted,
            format!("the {what} grew with the {load}: {line}"),
        ),
        Outcome::Opposite => (
            ClaimVerdict::Confirmed,
            format!("more {load} lowered the {what}: {line}"),
        ),
        Outcome::NoDifference if level => (
            ClaimVerdict::Confirmed,
            format!(
                "more {load} did not raise the {what}: the ratio's whole interval lies \
                 within x{}: {line}",
                stats::MIN_EFFECT
            ),
        ),
        Outcome::NoDifference => (
            ClaimVerdict::NoDifference,
            format!(
                "no growth shown and no limit shown: the ratio's interval reaches past x{}: \
                 {line}",
                stats::MIN_EFFECT
            ),
        ),
        Outcome::TooFew => (
            ClaimVerdict::Inconclusive,
            format!("{}: {line}", stats::too_few()),
        ),
        Outcome::Missing => (ClaimVerdict::Inconclusive, line),
    }
}

/// Retransmitted segments per 1 000 requests: what claims 18 and 32 compare, so that
/// a step that completes more requests does not count more retransmissions for that alone.
const RETRANSMISSIONS: Figure =
    claim_figure("retransmitted segments per 1 000 requests", true, |v| {
        format!("{v:.2}")
    });

/// One row's retransmitted segments per 1 000 requests completed (None without requests).
pub(super) fn retransmissions_per_1000(r: &Row) -> Option<f64> {
    let requests = r.num(column::REQUESTS).filter(|&n| n > 0.0)?;
    Some(r.num(column::NET_RETRANS_SEGS)? * 1000.0 / requests)
}

/// The ok repetitions' retransmissions per 1 000 requests of `model` where `at` holds.
fn retransmission_samples(rows: &[Row], model: &str, at: impl Fn(&Row) -> bool) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.model == model && r.status == Status::Ok && at(r))
        .filter_map(retransmissions_per_1000)
        .collect()
}

/// One line per step of `model` (clients, then the pause from the longest): its
/// retransmissions per 1 000 requests and the segments it received per second.
fn retransmission_steps(rows: &[Row], model: &str) -> Vec<String> {
    let mine = || rows.iter().filter(|r| r.model == model && ran(r));
    let mut lines = Vec::new();
    for c in values_of(mine(), column::CONNECTIONS) {
        let at_c = |r: &&Row| num_or_zero(r, column::CONNECTIONS) == c;
        for d in values_of(mine().filter(at_c), column::DELAY_MS)
            .into_iter()
            .rev()
        {
            let at = |r: &Row| {
                num_or_zero(r, column::CONNECTIONS) == c && num_or_zero(r, column::DELAY_MS) == d
            };
            let per_1000 = retransmission_samples(rows, model, at);
            let segments = stats::median(&samples(rows, model, at, column::NET_SEGS_IN_PER_S));
            lines.push(format!(
                "{} clients, delay {d} ms: retransmitted segments per 1 000 requests {}, \
                 segments in {}/s",
                fmt_count(c),
                super::over_repetitions(per_1000)
                    .map_or("?".into(), |s| s.show(RETRANSMISSIONS.format)),
                segments.map_or("?".into(), fmt_count)
            ));
        }
    }
    lines
}

/// Claim 18 (004, Case 6-11): more retransmissions at a request delay of 125 ms and
/// below than above it, for the fewest clients that ran (004's 2 500), per request.
pub(super) fn claim_18(rows: &[Row]) -> Judged {
    const THRESHOLD_MS: f64 = 125.0;
    let (model, clients) = sweep_of(rows, column::CONNECTIONS);
    let mut numbers = retransmission_steps(rows, &model);
    let fewest = clients.first().copied().unwrap_or(0.0);
    let side = |short: bool, name: String| {
        let at = |r: &Row| {
            num_or_zero(r, column::CONNECTIONS) == fewest
                && (num_or_zero(r, column::DELAY_MS) <= THRESHOLD_MS) == short
        };
        Side::derived(name, rows, &model, at, retransmissions_per_1000)
    };
    let short = side(
        true,
        format!("{} clients at 125 ms and below", fmt_count(fewest)),
    );
    let long = side(false, "above 125 ms".into());
    let (outcome, line) = contest(&short, &long, RETRANSMISSIONS);
    numbers.push(line.clone());
    numbers.extend(host_scope(rows));
    let (verdict, why) = verdict_of(&[(
        "more retransmissions per request at 125 ms and below than above".into(),
        outcome,
        line,
    )]);
    (verdict, why, numbers)
}

/// Claim 20 (004, Analysis): the response time grows linearly with the order clients
/// joined, "but exponentially increases" for the last of them. At the most clients that
/// ran, the last tenth to join is compared with the tenth before it over the
/// repetitions: linear growth makes the last at most about x1.12 the ninth, so the
/// claim holds when the last tenth is significantly slower by x1.5 or more.
pub(super) fn claim_20(rows: &[Row]) -> Judged {
    const JUMP: f64 = 1.5;
    const BY_JOIN_ORDER: Figure =
        claim_figure("mean response time by join order", true, fmt_latency);
    let (model, steps) = sweep_of(rows, column::CONNECTIONS);
    let tenths = |c: f64| {
        let at = |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
        (
            Side::new(
                "the last tenth to join",
                samples(rows, &model, at, column::JOINED_LAST_TENTH_MEAN_US),
            ),
            Side::new(
                "the tenth before",
                samples(rows, &model, at, column::JOINED_NINTH_TENTH_MEAN_US),
            ),
        )
    };
    let mut numbers: Vec<String> = steps
        .iter()
        .map(|&c| {
            let (last, ninth) = tenths(c);
            let median = |s: &Side| stats::median(&s.samples).map_or("?".into(), fmt_latency);
            format!(
                "{} clients: last tenth to join {}, the tenth before {} (medians)",
                fmt_count(c),
                median(&last),
                median(&ninth)
            )
        })
        .collect();
    let Some(top) = steps
        .iter()
        .rev()
        .copied()
        .find(|&c| !tenths(c).0.samples.is_empty())
    else {
        return (
            ClaimVerdict::Inconclusive,
            "no step finished with its connections' response times by join order".into(),
            numbers,
        );
    };
    let (last, ninth) = tenths(top);
    let (outcome, line) = contest(&last, &ninth, BY_JOIN_ORDER);
    numbers.push(format!("at {} clients: {line}", fmt_count(top)));
    let ratio = stats::median(&last.samples).unwrap_or(0.0)
        / stats::median(&ninth.samples).unwrap_or(f64::NAN);
    if outcome == Outcome::Holds && ratio < JUMP {
        return (
            ClaimVerdict::Refuted,
            format!(
                "the last tenth to join is slower, but by x{ratio:.2}, as growth along the \
                 order would be, not the jump (x{JUMP} or more) the report saw ({line})"
            ),
            numbers,
        );
    }
    let (verdict, why) = verdict_of(&[(
        format!("the last tenth to join at least x{JUMP} slower than the tenth before"),
        outcome,
        line,
    )]);
    (verdict, why, numbers)
}

/// Claim 21 (001, Analysis, Case2): the requests coming in to select are more
/// consistent than to epoll: select's spread of the per-second request rate
/// (`requests_per_s_cv`) is significantly below epoll's over the repetitions.
pub(super) fn claim_21(rows: &[Row]) -> Judged {
    const SPREAD: Figure = claim_figure(
        "spread of the requests per second (sd / mean)",
        false,
        |v| format!("{v:.3}"),
    );
    beats(
        rows,
        &[("select", "epoll", SPREAD, column::REQUESTS_PER_S_CV)],
    )
}

/// Claim 23 (004, Conclusion): the IO rate levels off at about 15 000 packets/s once 5 000
/// clients are connected. The segments received per second (on loopback every segment
/// is sent and received on this machine, so the count takes both directions, as a
/// capture at the server does) at the most clients that ran against those at 5 000:
/// refuted when significantly higher by x1.05 or more, confirmed when lower or the
/// ratio's whole interval lies within x1.05, "no difference" otherwise.
pub(super) fn claim_23(rows: &[Row]) -> Judged {
    const RATE: Figure = claim_figure("segments received per second", true, fmt_count);
    let (model, clients) = sweep_of(rows, column::CONNECTIONS);
    let at = |c: f64| {
        samples(
            rows,
            &model,
            |r| num_or_zero(r, column::CONNECTIONS) == c,
            column::NET_SEGS_IN_PER_S,
        )
    };
    let mut numbers: Vec<String> = clients
        .iter()
        .map(|&c| {
            let s = at(c);
            format!(
                "{} clients: segments received {}",
                fmt_count(c),
                stats::median(&s).map_or("no repetition passed".into(), |m| format!(
                    "median {}/s over {} rep{}",
                    fmt_count(m),
                    s.len(),
                    if s.len() == 1 { "" } else { "s" }
                ))
            )
        })
        .collect();
    let from = clients.iter().copied().find(|&c| c >= 5000.0);
    let (Some(from), Some(&top)) = (from, clients.last()) else {
        return (
            ClaimVerdict::Inconclusive,
            "no step of 5 000 clients or more ran".into(),
            numbers,
        );
    };
    if top == from {
        return (
            ClaimVerdict::Inconclusive,
            format!("only {} clients ran at 5 000 or more", fmt_count(top)),
            numbers,
        );
    }
    let side = |c: f64| Side::new(format!("{} clients", fmt_count(c)), at(c));
    let (upper, lower) = (side(top), side(from));
    let (outcome, line) = contest(&upper, &lower, RATE);
    numbers.push(line.clone());
    numbers.push("the report: about 15 000 packets/s from 5 000 clients on".into());
    let (number, as_number) = no_growth(
        &upper,
        &lower,
        "packet rate",
        "clients",
        outcome,
        line.clone(),
    );
    // The mechanism: the rate grows with the clients until clients / pause meets the
    // server's capacity, and levels from there.
    let delay = values_of(
        rows.iter().filter(|r| r.model == model && ran(r)),
        column::DELAY_MS,
    )
    .first()
    .copied()
    .unwrap_or(0.0);
    let (verdict, mechanism) = match super::knee::saturation(rows, &model, delay) {
        None => (
            ClaimVerdict::Inconclusive,
            "no throughput or pause recorded to find the server's capacity".to_string(),
        ),
        Some(sat) => {
            numbers.push(sat.line.clone());
            let capacity = fmt_count(sat.capacity);
            match sat.knee_clients {
                None => {
                    let (v, why) = match outcome {
                        Outcome::Holds => (ClaimVerdict::Confirmed, "it grew"),
                        Outcome::Opposite => (ClaimVerdict::Refuted, "it fell"),
                        Outcome::NoDifference if level_shown(&upper, &lower) => {
                            (ClaimVerdict::Refuted, "it levelled")
                        }
                        Outcome::NoDifference => (ClaimVerdict::NoDifference, "neither shown"),
                        Outcome::TooFew | Outcome::Missing => {
                            (ClaimVerdict::Inconclusive, "not decided")
                        }
                    };
                    (
                        v,
                        format!(
                            "the server kept up with every step (capacity at least \
                             {capacity}), so the rate should grow to the top: {why}, {line}"
                        ),
                    )
                }
                Some(k) => match clients.iter().copied().find(|&c| c >= k) {
                    Some(first) if first < top => {
                        let (lower, upper) = (side(first), side(top));
                        let (o, l) = contest(&upper, &lower, RATE);
                        let (v, why) = no_growth(&upper, &lower, "packet rate", "clients", o, l);
                        let level =
                            format!("from {} clients, past {}", fmt_count(first), fmt_count(k));
                        (
                            v,
                            format!("a level predicted {level} (capacity {capacity}): {why}"),
                        )
                    }
                    _ => (
                        ClaimVerdict::Inconclusive,
                        format!(
                            "a level predicted from {} clients (capacity {capacity}), but no \
                             two steps lie past it to show one",
                            fmt_count(k)
                        ),
                    ),
                },
            }
        }
    };
    numbers.extend(host_scope(rows));
    let why = format!(
        "as a mechanism: {} ({mechanism}); as a number: {}: {as_number}",
        verdict.name(),
        number.name()
    );
    (verdict, why, numbers)
}

/// The repetitions of `model` that ran, in order.
pub(super) fn repetitions_run(rows: &[Row], model: &str) -> Vec<u32> {
    let mut reps: Vec<u32> = rows
        .iter()
        .filter(|r| r.model == model && ran(r))
        .map(|r| r.repetition)
        .collect();
    reps.sort_unstable();
    reps.dedup();
    reps
}

/// Each repetition of `model` that ran: the most `c` of its steps that passed (0 when
/// none passed), the repetitions in order.
pub(super) fn most_per_repetition(rows: &[Row], model: &str, c: &str) -> Vec<f64> {
    repetitions_run(rows, model)
        .iter()
        .map(|&rep| {
            rows.iter()
                .filter(|r| r.model == model && r.repetition == rep)
                .filter(|r| r.status == Status::Ok)
                .map(|r| num_or_zero(r, c))
                .fold(0.0, f64::max)
        })
        .collect()
}

/// Claim 32 (004, Case 1-5 Results): more TCP error flags and retransmissions with more
/// clients.
/// At the longest pause that ran, the retransmissions per 1 000 requests of the most
/// clients against those of the fewest.
pub(super) fn claim_32(rows: &[Row]) -> Judged {
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let mut numbers = retransmission_steps(rows, &model);
    let pause = delays.last().copied().unwrap_or(0.0);
    let at_pause =
        |r: &&Row| r.model == model && ran(r) && num_or_zero(r, column::DELAY_MS) == pause;
    let clients = values_of(rows.iter().filter(at_pause), column::CONNECTIONS);
    let (Some(&fewest), Some(&most)) = (clients.first(), clients.last()) else {
        return (ClaimVerdict::Inconclusive, "no step ran".into(), numbers);
    };
    if fewest == most {
        return (
            ClaimVerdict::Inconclusive,
            format!(
                "only {} clients ran at the {pause} ms pause: nothing to compare",
                fmt_count(most)
            ),
            numbers,
        );
    }
    let side = |c: f64| {
        let at = |r: &Row| {
            num_or_zero(r, column::CONNECTIONS) == c && num_or_zero(r, column::DELAY_MS) == pause
        };
        Side::derived(
            format!("{} clients", fmt_count(c)),
            rows,
            &model,
            at,
            retransmissions_per_1000,
        )
    };
    let (outcome, line) = contest(&side(most), &side(fewest), RETRANSMISSIONS);
    numbers.push(format!("at a {pause} ms pause: {line}"));
    numbers.extend(host_scope(rows));
    let (verdict, why) = verdict_of(&[(
        "more retransmissions per request with more clients".into(),
        outcome,
        line,
    )]);
    (verdict, why, numbers)
}

/// A note when a row's TCP counters are the whole machine's, not the step's own.
pub(super) fn host_scope(rows: &[Row]) -> Option<String> {
    rows.iter()
        .any(|r| ran(r) && r.raw(column::NET_SCOPE) == "host")
        .then(|| {
            "the counters are the whole machine's (net_scope host): other traffic counts too".into()
        })
}

/// The first model that ran and the distinct values of `c` among its rows that ran,
/// ascending: the sweep of a claim on one model.
pub(super) fn sweep_of(rows: &[Row], c: &str) -> (String, Vec<f64>) {
    let model = rows
        .iter()
        .find(|r| ran(r))
        .map_or(String::new(), |r| r.model.clone());
    let values = values_of(rows.iter().filter(|r| r.model == model && ran(r)), c);
    (model, values)
}
