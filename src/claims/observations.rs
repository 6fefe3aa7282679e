//! The observations tested last (claims 24 to 31): a figure that changes between two
//! loads of one model, or differs between models, on rows most of them share with
//! another claim. Each comparison is decided by [`contest`] as the verdict decides:
//! Mann-Whitney U at p < 0.05, by x1.05 or more, each generator-bound or disturbed
//! repetition left out in turn.

use super::compared::{beats, most_per_repetition, sweep_of};
use super::contest::{
    claim_figure, contest, level_shown, verdict_of, Figure, Outcome, Side, THROUGHPUT,
};
use super::{column, num_or_zero, ok_repetitions, outcome, values_of, ClaimVerdict, Judged, Row};
use crate::stats;
use crate::verdict::{fmt_count, fmt_cpu_per_request, fmt_latency};

/// A claim that `upper` exceeds `lower` (`contest(upper, lower, ..)` gave `outcome` and
/// `line`): confirmed when significantly so, refuted when significantly the other way
/// or when the ratio's whole 95 % interval lies within x1.05 (no change shown), "no
/// difference" when neither is shown.
pub(super) fn exceeds(
    upper: &Side,
    lower: &Side,
    claimed: &str,
    (outcome, line): (Outcome, String),
) -> (ClaimVerdict, String) {
    let level = level_shown(upper, lower);
    match outcome {
        Outcome::Holds => (ClaimVerdict::Confirmed, format!("{claimed}: {line}")),
        Outcome::Opposite => (
            ClaimVerdict::Refuted,
            format!("the reverse of “{claimed}”, significantly: {line}"),
        ),
        Outcome::NoDifference if level => (
            ClaimVerdict::Refuted,
            format!(
                "no change: the ratio's whole 95 % interval lies within x{}: {line}",
                stats::MIN_EFFECT
            ),
        ),
        Outcome::NoDifference => (
            ClaimVerdict::NoDifference,
            format!(
                "neither a change nor a level shown (p >= {}, or within x{}): {line}",
                stats::fmt_level(stats::level()),
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

/// A figure that is higher where the claim says it is (the claim's own direction is
/// in `exceeds`' `upper` and `lower`).
const fn higher(name: &'static str, format: fn(f64) -> String) -> Figure {
    claim_figure(name, true, format)
}

/// "median 1.20 ms (1.10 ms–1.30 ms, 4 reps)" of `c` for `model` where `at` holds, or
/// "no repetition passed".
pub(super) fn median_range(
    rows: &[Row],
    model: &str,
    at: impl Fn(&Row) -> bool,
    c: &str,
    fmt: fn(f64) -> String,
) -> String {
    ok_repetitions(rows, model, at, c).map_or("no repetition passed".into(), |s| s.show(fmt))
}

/// The first and the last of a sweep's `values`, or why there are not two to compare
/// (`show` names a value).
pub(super) fn ends(values: &[f64], show: impl Fn(f64) -> String) -> Result<(f64, f64), String> {
    match (values.first(), values.last()) {
        (Some(&first), Some(&last)) if first != last => Ok((first, last)),
        (Some(&only), _) => Err(format!("only {} ran", show(only))),
        _ => Err("no step ran".into()),
    }
}

/// Claim 24 (000, Figure 2): the most requests answered before a failure, epoll the
/// most, then threads, then select. A repetition's figure is the requests of its
/// heaviest step that passed.
pub(super) fn claim_24(rows: &[Row]) -> Judged {
    const ANSWERED: Figure = higher("requests answered at the most connections held", fmt_count);
    let side = |m: &str| Side::new(m, most_per_repetition(rows, m, column::REQUESTS));
    let mut numbers = Vec::new();
    let parts: Vec<(String, Outcome, String)> = [
        ("epoll", "threads"),
        ("threads", "select"),
        ("epoll", "select"),
    ]
    .iter()
    .map(|&(a, b)| {
        let (outcome, line) = contest(&side(a), &side(b), ANSWERED);
        numbers.push(line.clone());
        (format!("{a} answers more requests than {b}"), outcome, line)
    })
    .collect();
    numbers.push(
        "the report: threads 13 547, select 2 775 (2 870 000 in theory), epoll 321 410 \
         (199 900 000 in theory)"
            .into(),
    );
    let (verdict, why) = verdict_of(&parts);
    (verdict, why, numbers)
}

/// Claim 25 (000, Observations, Epoll Server): epoll's time per request rises as
/// client hosts, each with its clients, are added. The fewest hosts at the fewest
/// connections against the most hosts at the most connections (the same connections
/// a host); the other steps are listed, to tell the hosts from the load.
pub(super) fn claim_25(rows: &[Row]) -> Judged {
    let (model, hosts) = sweep_of(rows, column::CLIENT_HOSTS);
    let at = |h: f64, c: f64| {
        move |r: &Row| {
            num_or_zero(r, column::CLIENT_HOSTS) == h && num_or_zero(r, column::CONNECTIONS) == c
        }
    };
    let connections = values_of(
        rows.iter().filter(|r| r.model == model),
        column::CONNECTIONS,
    );
    let name = |h: f64, c: f64| {
        let s = if h == 1.0 { "" } else { "s" };
        format!(
            "{} client host{s} ({} connections)",
            fmt_count(h),
            fmt_count(c)
        )
    };
    let mut numbers = Vec::new();
    for &h in &hosts {
        for &c in &connections {
            numbers.push(format!(
                "{}: mean response time {}",
                name(h, c),
                median_range(rows, &model, at(h, c), column::MEAN_US, fmt_latency)
            ));
        }
    }
    let (Some(&few), Some(&many), Some(&least), Some(&most)) = (
        hosts.first(),
        hosts.last(),
        connections.first(),
        connections.last(),
    ) else {
        return (ClaimVerdict::Inconclusive, "no step ran".into(), numbers);
    };
    if few == many || least == most {
        let why = format!(
            "the steps ran at {} client host(s) and {} connection count(s): nothing to add",
            hosts.len(),
            connections.len()
        );
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let upper = Side::of(
        name(many, most),
        rows,
        &model,
        at(many, most),
        column::MEAN_US,
    );
    let lower = Side::of(
        name(few, least),
        rows,
        &model,
        at(few, least),
        column::MEAN_US,
    );
    const SLOWER: Figure = higher("mean response time", fmt_latency);
    let contested = contest(&upper, &lower, SLOWER);
    numbers.push(contested.1.clone());
    numbers.push(
        "the report: 0.000535, 0.000567, 0.001023 and 0.002663 s at client hosts 1 to 4".into(),
    );
    let claimed = "the mean response time rose with the client hosts";
    let (verdict, why) = exceeds(&upper, &lower, claimed, contested);
    (verdict, why, numbers)
}

/// Claim 26 (001, Case 1): epoll's packet rate drops near 20 000 connections. The
/// requests answered per second at the most connections against the fewest.
pub(super) fn claim_26(rows: &[Row]) -> Judged {
    let (model, steps) = sweep_of(rows, column::CONNECTIONS);
    let at = |c: f64| move |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let mut numbers = Vec::new();
    for &c in &steps {
        let mut line = format!(
            "{} connections: {} requests/s, mean response time {}",
            fmt_count(c),
            median_range(rows, &model, at(c), column::THROUGHPUT_RPS, fmt_count),
            median_range(rows, &model, at(c), column::MEAN_US, fmt_latency)
        );
        let (ok, failed, reason) = outcome(rows, &model, at(c));
        if failed > 0 {
            line += &format!(
                "; failed in {failed} of {} repetitions: {reason}",
                ok + failed
            );
        }
        numbers.push(line);
    }
    let (fewest, most) = match ends(&steps, |c| format!("{} connections", fmt_count(c))) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, numbers),
    };
    let name = |c: f64| format!("{} connections", fmt_count(c));
    let before = Side::of(
        name(fewest),
        rows,
        &model,
        at(fewest),
        column::THROUGHPUT_RPS,
    );
    let after = Side::of(name(most), rows, &model, at(most), column::THROUGHPUT_RPS);
    let contested = contest(&before, &after, THROUGHPUT);
    numbers.push(contested.1.clone());
    let claimed = format!("the rate dropped at {} connections", fmt_count(most));
    let (verdict, why) = exceeds(&before, &after, &claimed, contested);
    (verdict, why, numbers)
}

/// At or above this share of its core, a server pins it.
const PINNED_PCT: f64 = 90.0;

/// "24.8%": a share of one core, as claim 27 prints it.
fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// `model`'s server CPU over its ok repetitions, the flagged ones left out when others
/// remain, and how many were left out.
fn clean_cpu(rows: &[Row], model: &str) -> (Vec<f64>, usize) {
    let all = Side::of(model, rows, model, |_| true, column::SERVER_CPU_PCT);
    let clean: Vec<f64> = all
        .samples
        .iter()
        .zip(&all.flagged)
        .filter(|&(_, &f)| !f)
        .map(|(v, _)| *v)
        .collect();
    let cpu = if clean.is_empty() { all.samples } else { clean };
    let left_out = all.flagged.len() - cpu.len();
    (cpu, left_out)
}

/// Claim 27 (002, Conclusion): thousands of threads doing I/O pin the cores. At a
/// request rate an event loop serves with room to spare, the threads server's CPU
/// against 90 % of the one core it is pinned to, epoll's at the same rate as the
/// control: confirmed when threads pins its core in every repetition and epoll in
/// none (the threads pin it, not the rate), refuted when threads stays below 90 % in
/// every repetition; inconclusive when the repetitions straddle 90 %, or when the rate
/// pins epoll too (then it would pin any server).
pub(super) fn claim_27(rows: &[Row]) -> Judged {
    let mut numbers: Vec<String> = ["threads", "select", "epoll"]
        .iter()
        .filter(|m| rows.iter().any(|r| r.model == **m))
        .map(|m| {
            format!(
                "{m}: server CPU {} of its one core; throughput {}",
                median_range(rows, m, |_| true, column::SERVER_CPU_PCT, pct),
                median_range(rows, m, |_| true, column::THROUGHPUT_RPS, THROUGHPUT.format)
            )
        })
        .collect();
    let (cpu, left_out) = clean_cpu(rows, "threads");
    if left_out > 0 {
        numbers.push(format!(
            "{left_out} generator-bound or disturbed repetition(s) left out"
        ));
    }
    let range = |cpu: &[f64]| {
        let least = cpu.iter().copied().reduce(f64::min)?;
        let most = cpu.iter().copied().reduce(f64::max)?;
        Some((least, most))
    };
    let Some((least, most)) = range(&cpu) else {
        let why = "no repetition of threads passed".to_string();
        return (ClaimVerdict::Inconclusive, why, numbers);
    };
    let shown = format!(
        "{}–{} over {} repetitions",
        pct(least),
        pct(most),
        cpu.len()
    );
    if most < PINNED_PCT {
        let why = format!(
            "threads stayed below {PINNED_PCT} % of its core in every repetition ({shown}): \
             its 1 000 threads doing I/O did not pin it"
        );
        return (ClaimVerdict::Refuted, why, numbers);
    }
    if least < PINNED_PCT {
        let why = format!("the repetitions straddle {PINNED_PCT} % of a core ({shown})");
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let pinned =
        format!("threads took {PINNED_PCT} % of its core or more in every repetition ({shown})");
    match range(&clean_cpu(rows, "epoll").0) {
        None => (
            ClaimVerdict::Inconclusive,
            format!("{pinned}, but no repetition of epoll passed to show the rate alone does not"),
            numbers,
        ),
        Some((_, e_most)) if e_most < PINNED_PCT => (
            ClaimVerdict::Confirmed,
            format!(
                "{pinned}, where epoll took at most {} at the same rate",
                pct(e_most)
            ),
            numbers,
        ),
        Some((_, e_most)) => (
            ClaimVerdict::Inconclusive,
            format!(
                "{pinned}, but epoll took up to {} at the same rate: the rate pins any \
                 server here",
                pct(e_most)
            ),
            numbers,
        ),
    }
}

/// Claim 28 (002, Conclusion): epoll saves CPU time, switching threads less. The
/// server's CPU time per request, epoll against threads; each one's context switches
/// per request listed beside it.
pub(super) fn claim_28(rows: &[Row]) -> Judged {
    const CPU_PER_REQUEST: Figure =
        claim_figure("server CPU time per request", false, fmt_cpu_per_request);
    let (verdict, why, mut numbers) = beats(
        rows,
        &[(
            "epoll",
            "threads",
            CPU_PER_REQUEST,
            column::SERVER_CPU_US_PER_REQUEST,
        )],
    );
    for m in ["threads", "epoll"] {
        let switches = |c: &str| median_range(rows, m, |_| true, c, |v| format!("{v:.3}"));
        numbers.push(format!(
            "{m}: context switches per request, voluntary {}, involuntary {}",
            switches(column::SERVER_VOLUNTARY_SWITCHES_PER_REQ),
            switches(column::SERVER_INVOLUNTARY_SWITCHES_PER_REQ)
        ));
    }
    (verdict, why, numbers)
}

/// Claim 29 (004, Case 1-5): the variability of the IO rises with the clients. The
/// spread of the requests answered each second at the most clients measured against
/// the fewest.
pub(super) fn claim_29(rows: &[Row]) -> Judged {
    const SPREAD: Figure = higher("spread of the requests per second (sd / mean)", |v| {
        format!("{v:.3}")
    });
    let (model, clients) = sweep_of(rows, column::CONNECTIONS);
    let at = |c: f64| move |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let side = |c: f64| {
        Side::of(
            format!("{} clients", fmt_count(c)),
            rows,
            &model,
            at(c),
            column::REQUESTS_PER_S_CV,
        )
    };
    let mut numbers: Vec<String> = clients
        .iter()
        .map(|&c| {
            format!(
                "{} clients: spread of the requests per second {}",
                fmt_count(c),
                median_range(rows, &model, at(c), column::REQUESTS_PER_S_CV, |v| format!(
                    "{v:.3}"
                ))
            )
        })
        .collect();
    let measured: Vec<f64> = clients
        .iter()
        .copied()
        .filter(|&c| !side(c).samples.is_empty())
        .collect();
    let (Some(&fewest), Some(&most)) = (measured.first(), measured.last()) else {
        let why = "no step measured its spread of the requests per second".to_string();
        return (ClaimVerdict::Inconclusive, why, numbers);
    };
    if fewest == most {
        let why = format!("only {} clients measured the spread", fmt_count(most));
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let (upper, lower) = (side(most), side(fewest));
    let contested = contest(&upper, &lower, SPREAD);
    numbers.push(contested.1.clone());
    numbers.push("the report: as much as 50 % of the IO rate at 20 000 clients".into());
    let claimed = "the variability of the IO rose with the clients";
    let (verdict, why) = exceeds(&upper, &lower, claimed, contested);
    (verdict, why, numbers)
}

/// Requests a client in 004's cases: what claim 30's total test time is of.
const REQUESTS_A_CLIENT: f64 = 60.0;

/// Claim 30 (004, Case 11-14): the whole test finishes sooner at 1 ms than at 1000 ms.
/// A step's total test time is the time 60 requests a client take at the rate it
/// measured; the shortest delay against the longest.
pub(super) fn claim_30(rows: &[Row]) -> Judged {
    const TOTAL: Figure = claim_figure("total test time of 60 requests a client", false, |v| {
        format!("{v:.1} s")
    });
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let total = |r: &Row| {
        let rate = r.num(column::THROUGHPUT_RPS).filter(|v| *v > 0.0)?;
        Some(num_or_zero(r, column::CONNECTIONS) * REQUESTS_A_CLIENT / rate)
    };
    let side = |d: f64| {
        Side::derived(
            format!("{d} ms"),
            rows,
            &model,
            |r| num_or_zero(r, column::DELAY_MS) == d,
            total,
        )
    };
    let mut numbers: Vec<String> = delays
        .iter()
        .rev()
        .map(|&d| {
            let s = side(d);
            format!(
                "delay {d} ms: {} requests/s, so 60 requests a client in {}",
                median_range(
                    rows,
                    &model,
                    |r| num_or_zero(r, column::DELAY_MS) == d,
                    column::THROUGHPUT_RPS,
                    fmt_count
                ),
                stats::median(&s.samples).map_or("?".into(), TOTAL.format)
            )
        })
        .collect();
    let (shortest, longest) = match ends(&delays, |d| format!("the delay {d} ms")) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, numbers),
    };
    let (outcome, line) = contest(&side(shortest), &side(longest), TOTAL);
    numbers.push(line.clone());
    numbers.push(
        "the report: 25 s at 1 ms against 68 s at 1000 ms (2 500 clients); under 175 s \
         against 220 s (10 000 clients)"
            .into(),
    );
    let says = format!("the test finishes sooner at {shortest} ms than at {longest} ms");
    let (verdict, why) = verdict_of(&[(says, outcome, line)]);
    (verdict, why, numbers)
}

/// Claim 31 (004, Case 11-14): the mean response time is higher at a 1 ms request
/// delay than at 1000 ms. The shortest delay against the longest.
pub(super) fn claim_31(rows: &[Row]) -> Judged {
    let (model, delays) = sweep_of(rows, column::DELAY_MS);
    let at = |d: f64| move |r: &Row| num_or_zero(r, column::DELAY_MS) == d;
    let mut numbers: Vec<String> = delays
        .iter()
        .rev()
        .map(|&d| {
            format!(
                "delay {d} ms: mean response time {}",
                median_range(rows, &model, at(d), column::MEAN_US, fmt_latency)
            )
        })
        .collect();
    let (shortest, longest) = match ends(&delays, |d| format!("the delay {d} ms")) {
        Ok(ends) => ends,
        Err(why) => return (ClaimVerdict::Inconclusive, why, numbers),
    };
    let side = |d: f64| Side::of(format!("{d} ms"), rows, &model, at(d), column::MEAN_US);
    let (upper, lower) = (side(shortest), side(longest));
    const SLOWER: Figure = higher("mean response time", fmt_latency);
    let contested = contest(&upper, &lower, SLOWER);
    numbers.push(contested.1.clone());
    let claimed = format!("the mean response time is higher at {shortest} ms than at {longest} ms");
    let (verdict, why) = exceeds(&upper, &lower, &claimed, contested);
    (verdict, why, numbers)
}
