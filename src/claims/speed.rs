//! The speed claims (4, 5, 6, 8 and 22): response times compared between models or
//! along a sweep.

//!
//! Every comparison here is judged as the verdict decides: a judgement stands only if
//! it stands with each generator-bound or disturbed repetition left out in turn
//! ([`robustly`]), and a line whose repetitions were flagged says so.

use super::contest::{robustly, Robust, Side};
use super::knee::{predicted_knee, saturation, Knee};
use super::{
    column, models, num_or_zero, ok_repetitions, over_repetitions, ran, values_of, ClaimVerdict,
    Judged, Repetitions, Row, Status,
};
use crate::render::format::ratio_interval;
use crate::stats::{self, Comparison};
use crate::verdict::{flag, fmt_count, fmt_latency};

/// One step where both models have ok values of a column: each side's spread over the
/// repetitions and the comparison of b's against a's (`ratio`: b's median over a's).
struct Paired {
    step: String,
    a: Repetitions,
    b: Repetitions,
    sides: (Side, Side),
}

impl Paired {
    /// `judge` of b's samples over a's, as the verdict decides.
    fn judged<T: PartialEq>(&self, judge: impl Fn(&Comparison) -> T) -> Robust<T> {
        robustly(&self.sides.0, &self.sides.1, |c, _, _| judge(c))
            .expect("a pair has samples on both sides")
    }
}

/// Each step where both `a` and `b` have ok values of `c`, in `a`'s order.
fn paired(rows: &[Row], a: &str, b: &str, c: &str) -> Vec<Paired> {
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
            let (sa, sb) = (Side::of(a, rows, a, at, c), Side::of(b, rows, b, at, c));
            stats::compare(&sa.samples, &sb.samples)?;
            Some(Paired {
                step: step.to_string(),
                a: over_repetitions(sa.samples.clone())?,
                b: over_repetitions(sb.samples.clone())?,
                sides: (sa, sb),
            })
        })
        .collect()
}

/// "As fast" allows this much slower: 004's and 001's own comparisons are by eye.
const AS_FAST: f64 = 1.1;

/// Claim 4: select's mean response time against epoll's, step by step. At a step select
/// is faster when significantly so (p < 0.05, by x1.05 or more), as fast when the 95 %
/// interval of epoll's time over select's stays above 1 / 1.1 (select at most 10 %
/// slower), and epoll is faster when significantly so. Confirmed when select is as fast or faster at every
/// step, refuted when epoll is faster at most of them.
pub(super) fn claim_4(rows: &[Row]) -> Judged {
    let pairs = paired(rows, "select", "epoll", column::MEAN_US);
    let mut numbers = Vec::new();
    let (mut as_good, mut epoll_faster, mut undecided) = (0, 0, Vec::new());
    for pair in &pairs {
        let Paired {
            step,
            a: select,
            b: epoll,
            ..
        } = pair;
        // c.ratio is epoll's median over select's: above 1, select is faster.
        let robust = pair.judged(|c| {
            if c.decisive() && c.ratio > 1.0 {
                "select faster"
            } else if c.decisive() && c.ratio < 1.0 {
                "epoll faster"
            } else if c.interval.0 >= 1.0 / AS_FAST {
                "select as fast"
            } else {
                "undecided"
            }
        });
        let outcome = robust.settled("undecided");
        match outcome {
            "select faster" | "select as fast" => as_good += 1,
            "epoll faster" => epoll_faster += 1,
            _ => undecided.push(format!(
                "{step}: {}{}",
                robust.c.describe_p(),
                robust.c.needs()
            )),
        }
        numbers.push(format!(
            "{step}: mean response time select {}, epoll {}; epoll over select {}{} ({outcome})",
            select.show(fmt_latency),
            epoll.show(fmt_latency),
            shown(&robust.c),
            robust.note()
        ));
    }
    let n = pairs.len();
    let mut why = format!(
        "select as fast (within x{AS_FAST}, by the 95 % interval) or significantly faster at \
         {as_good} of {n} steps, epoll significantly faster at {epoll_faster}"
    );
    if !undecided.is_empty() {
        why += &format!("; undecided at {}", undecided.join(", "));
    }
    let verdict = if n == 0 {
        return (
            ClaimVerdict::Inconclusive,
            "no step where both select and epoll finished".into(),
            numbers,
        );
    } else if as_good == n {
        ClaimVerdict::Confirmed
    } else if epoll_faster * 2 > n {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Inconclusive
    };
    (verdict, why, numbers)
}

/// Claim 5: the mean response time of short connections (one request each), epoll
/// against select, as 001's case 5 reports it (select 0.673 ms, epoll 0.403 ms):
/// confirmed when epoll is significantly faster (p < 0.05) at a step and select at none.
/// The time to complete the workload is listed beside it: the connections open at a
/// fixed rate, so it is the same for both unless a server falls behind.
pub(super) fn claim_5(rows: &[Row]) -> Judged {
    let pairs = paired(rows, "epoll", "select", column::MEAN_US);
    let mut numbers = Vec::new();
    let (mut epoll_faster, mut select_faster, mut undecided) = (0, 0, Vec::new());
    for pair in &pairs {
        let Paired {
            step,
            a: epoll,
            b: select,
            ..
        } = pair;
        // c.ratio is select's median over epoll's: above 1, epoll is faster.
        let robust = pair.judged(|c| {
            if c.decisive() && c.ratio > 1.0 {
                "epoll faster"
            } else if c.decisive() && c.ratio < 1.0 {
                "select faster"
            } else {
                "no difference"
            }
        });
        let outcome = robust.settled("no difference");
        match outcome {
            "epoll faster" => epoll_faster += 1,
            "select faster" => select_faster += 1,
            _ => undecided.push(format!(
                "{step}: {}{}",
                robust.c.describe_p(),
                robust.c.needs()
            )),
        }
        numbers.push(format!(
            "{step}: mean response time epoll {}, select {}; select over epoll {}{} ({outcome})",
            epoll.show(fmt_latency),
            select.show(fmt_latency),
            shown(&robust.c),
            robust.note()
        ));
        let at = |r: &Row| r.step == *step;
        if let (Some(ec), Some(sc)) = (
            ok_repetitions(rows, "epoll", at, column::COMPLETION_S),
            ok_repetitions(rows, "select", at, column::COMPLETION_S),
        ) {
            let secs = |v: f64| format!("{v:.3} s");
            numbers.push(format!(
                "{step}: time to complete the workload epoll {}, select {}",
                ec.show(secs),
                sc.show(secs)
            ));
        }
    }
    let n = pairs.len();
    let mut why = format!(
        "on the mean response time, epoll significantly faster at {epoll_faster} of {n} \
         steps, select at {select_faster}"
    );
    if !undecided.is_empty() {
        why += &format!("; no difference at {}", undecided.join(", "));
    }
    let verdict = match (n, epoll_faster, select_faster) {
        (0, _, _) => {
            return (
                ClaimVerdict::Inconclusive,
                "no step where both epoll and select finished".into(),
                numbers,
            )
        }
        (_, e, 0) if e > 0 => ClaimVerdict::Confirmed,
        (_, 0, s) if s > 0 => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Inconclusive,
    };
    (verdict, why, numbers)
}

/// "x1.93 (1.81–2.05), p = 0.029, n = 4": a comparison as the claims print it.
fn shown(c: &Comparison) -> String {
    format!("{}, {}", ratio_interval(c, 'x'), c.describe_p())
}

/// Claim 6 (004, cases 1-5): each doubling of the clients at one delay, does the mean
/// response time double (x1.5–2.6, the difference significant)?
pub(super) fn claim_6(rows: &[Row]) -> Judged {
    let model = models(rows)
        .first()
        .map_or(String::new(), |m| m.to_string());
    let mine: Vec<&Row> = rows.iter().filter(|r| r.model == model).collect();
    let mut numbers = Vec::new();
    let (mut doubled, mut not_doubled, mut undecided, mut pairs) = (0, 0, 0, 0);
    let mut undecided_p = Vec::new();
    // Per pause, each doubling: did the mean rise (x1.5 or more, significant), stay
    // (its interval below x1.5), or neither: where the mechanism's knee is measured.
    let mut rises: Vec<(f64, f64, f64, &str)> = Vec::new();
    for delay in values_of(mine.iter().copied(), column::DELAY_MS) {
        let at = |c: f64| {
            move |r: &Row| {
                num_or_zero(r, column::DELAY_MS) == delay
                    && num_or_zero(r, column::CONNECTIONS) == c
            }
        };
        let clients = values_of(
            mine.iter()
                .copied()
                .filter(|r| num_or_zero(r, column::DELAY_MS) == delay),
            column::CONNECTIONS,
        );
        for &c in &clients {
            if let Some(s) = ok_repetitions(rows, &model, at(c), column::MEAN_US) {
                numbers.push(format!(
                    "delay {delay} ms, {} clients: mean response time {}",
                    fmt_count(c),
                    s.show(fmt_latency)
                ));
            }
        }
        for pair in clients.windows(2) {
            let (c1, c2) = (pair[0], pair[1]);
            if !(1.8..=2.2).contains(&(c2 / c1)) {
                continue;
            }
            let a = Side::of(&model, rows, &model, at(c1), column::MEAN_US);
            let b = Side::of(&model, rows, &model, at(c2), column::MEAN_US);
            let Some(robust) = robustly(&a, &b, |cmp, _, _| {
                let (lo, hi) = cmp.interval;
                if cmp.significant() && (1.5..=2.6).contains(&cmp.ratio) {
                    "doubled"
                } else if hi < 1.5 || lo > 2.6 {
                    "did not double"
                } else {
                    "undecided"
                }
            }) else {
                continue;
            };
            pairs += 1;
            let rise = robustly(&a, &b, |cmp, _, _| {
                if cmp.significant() && cmp.ratio >= 1.5 {
                    "rose"
                } else if cmp.interval.1 < 1.5 {
                    "stayed"
                } else {
                    "undecided"
                }
            })
            .map_or("undecided", |r| r.settled("undecided"));
            rises.push((delay, c1, c2, rise));
            let outcome = robust.settled("undecided");
            match outcome {
                "doubled" => doubled += 1,
                "did not double" => not_doubled += 1,
                _ => {
                    undecided += 1;
                    undecided_p.push(robust.c.describe_p() + &robust.c.needs());
                }
            }
            numbers.push(format!(
                "delay {delay} ms, {}→{} clients: mean {}{} ({outcome})",
                fmt_count(c1),
                fmt_count(c2),
                shown(&robust.c),
                robust.note()
            ));
        }
    }
    let as_number = format!(
        "of {pairs} doublings of the clients, the mean response time doubled (x1.5–2.6, \
         significant) at {doubled}, clearly did not (its interval outside x1.5–2.6) at \
         {not_doubled}, undecided at {undecided}{}",
        if undecided_p.is_empty() {
            String::new()
        } else {
            format!(" ({})", undecided_p.join("; "))
        }
    );
    let number = if pairs == 0 {
        ClaimVerdict::Inconclusive
    } else if doubled * 2 > pairs {
        ClaimVerdict::Confirmed
    } else if not_doubled * 2 > pairs {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Inconclusive
    };
    if pairs == 0 {
        return (number, as_number, numbers);
    }
    // The mechanism: the response time rises from the doubling that passes the clients
    // at which clients / pause meets the server's capacity, and not before.
    let mut mechanism = Vec::new();
    let mut delays: Vec<f64> = rises.iter().map(|r| r.0).collect();
    delays.dedup();
    for delay in delays {
        let mine: Vec<&(f64, f64, f64, &str)> = rises.iter().filter(|r| r.0 == delay).collect();
        let Some(sat) = saturation(rows, &model, delay) else {
            mechanism.push((
                ClaimVerdict::Inconclusive,
                format!("no throughput at {delay} ms"),
            ));
            continue;
        };
        numbers.push(sat.line.clone());
        let predicted = sat
            .knee_clients
            .and_then(|k| mine.iter().find(|r| r.2 >= k))
            .map_or(Knee::None, |r| Knee::At(r.1, r.2));
        let measured = match mine.iter().find(|r| r.3 == "rose") {
            Some(r) => Knee::At(r.1, r.2),
            None if mine.iter().all(|r| r.3 == "stayed") => Knee::None,
            None => Knee::Unlocated,
        };
        let show = |k: Knee| match k {
            Knee::At(c1, c2) => format!("{}→{} clients", fmt_count(c1), fmt_count(c2)),
            Knee::None => "no rise".into(),
            Knee::Unlocated => "no rise located".into(),
        };
        let verdict = match (predicted, measured) {
            (_, Knee::Unlocated) => ClaimVerdict::Inconclusive,
            (p, m) if p == m => ClaimVerdict::Confirmed,
            _ => ClaimVerdict::Refuted,
        };
        mechanism.push((
            verdict,
            format!(
                "at {delay} ms predicted {} from capacity {}, measured {}",
                show(predicted),
                fmt_count(sat.capacity),
                show(measured)
            ),
        ));
    }
    let verdict = if mechanism.iter().any(|m| m.0 == ClaimVerdict::Refuted) {
        ClaimVerdict::Refuted
    } else if !mechanism.is_empty() && mechanism.iter().all(|m| m.0 == ClaimVerdict::Confirmed) {
        ClaimVerdict::Confirmed
    } else {
        ClaimVerdict::Inconclusive
    };
    let why = format!(
        "as a mechanism: {} ({}); as a number: {}: {as_number}",
        verdict.name(),
        mechanism
            .iter()
            .map(|m| m.1.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        number.name()
    );
    (verdict, why, numbers)
}

/// Claim 8 (004, cases 6-11): the knee of the response time over the delay sweep.
/// The report puts it between 250 ms (fast, ~30 ms) and 125 ms (about 10x slower).
/// Going from long delays to short, the knee is the first step where the mean
/// response time at least doubles, significantly. Judged twice: as the report's number
/// (250 -> 125 ms, its hardware's) and as its mechanism on this machine (the knee the
/// closed loop predicts from the server's measured capacity, [`predicted_knee`]); the
/// mechanism decides the verdict.
pub(super) fn claim_8(rows: &[Row]) -> Judged {
    const REPORT_KNEE: (f64, f64) = (250.0, 125.0);
    const CLIMB: f64 = 2.0;
    let model = models(rows)
        .first()
        .map_or(String::new(), |m| m.to_string());
    let mut delays = values_of(
        rows.iter().filter(|r| r.model == model && ran(r)),
        column::DELAY_MS,
    );
    delays.reverse();
    let at = |d: f64| move |r: &Row| num_or_zero(r, column::DELAY_MS) == d;
    let means = |d: f64| Side::of(&model, rows, &model, at(d), column::MEAN_US);
    let mut numbers = Vec::new();
    for &d in &delays {
        numbers.push(match ok_repetitions(rows, &model, at(d), column::MEAN_US) {
            Some(s) => format!("delay {d} ms: mean {}", s.show(fmt_latency)),
            None => format!("delay {d} ms: no repetition finished"),
        });
    }
    let mut knee = None;
    for pair in delays.windows(2) {
        let (long, short) = (pair[0], pair[1]);
        let Some(climb) = robustly(&means(long), &means(short), |c, _, _| {
            c.decisive() && c.ratio >= CLIMB
        }) else {
            continue;
        };
        let c = climb.c;
        numbers.push(format!(
            "{long} → {short} ms: mean {}{}",
            shown(&c),
            climb.note()
        ));
        if knee.is_none() && climb.settled(false) {
            knee = Some((long, short, c));
        }
    }
    let (Some(&longest), Some(&shortest)) = (delays.first(), delays.last()) else {
        return (
            ClaimVerdict::Inconclusive,
            "no delay of the sweep finished".into(),
            numbers,
        );
    };
    let report = "the report: ~30 ms above 125 ms, ~300-400 ms at 125 ms and below";
    let (measured, found) = if let Some((long, short, c)) = knee {
        let found = format!(
            "the first significant climb (x{CLIMB} or more) going to shorter delays is \
             {long} → {short} ms: {}",
            shown(&c)
        );
        (Knee::At(long, short), found)
    } else {
        let whole = robustly(&means(longest), &means(shortest), |all, _, _| {
            if all.significant() && all.ratio >= CLIMB {
                "climbs"
            } else if all.interval.1 < CLIMB && stats::min_p(all.n_a, all.n_b) < all.alpha {
                "flat"
            } else {
                "unsure"
            }
        });
        match whole {
            None => (
                Knee::Unlocated,
                "the longest and shortest delays have no finished repetition to compare".into(),
            ),
            Some(whole) => {
                let overall = format!(
                    "{longest} → {shortest} ms: mean {}{}",
                    shown(&whole.c),
                    whole.note()
                );
                match whole.settled("unsure") {
                    "climbs" => (
                        Knee::Unlocated,
                        format!(
                            "the response time climbs over the sweep ({overall}) but no \
                             single step of it doubles significantly, so no knee is located"
                        ),
                    ),
                    "flat" => (
                        Knee::None,
                        format!("no knee: not even x{CLIMB} over the whole sweep ({overall})"),
                    ),
                    _ => (Knee::Unlocated, format!("no knee located: {overall}")),
                }
            }
        }
    };
    let number = match measured {
        Knee::At(long, short) if (long, short) == REPORT_KNEE => ClaimVerdict::Confirmed,
        Knee::At(..) | Knee::None => ClaimVerdict::Refuted,
        Knee::Unlocated => ClaimVerdict::Inconclusive,
    };
    let as_number = format!("{}: {found} ({report})", number.name());
    // The mechanism: the knee this machine's own capacity predicts.
    let clients = values_of(
        rows.iter().filter(|r| r.model == model && ran(r)),
        column::CONNECTIONS,
    )
    .last()
    .copied()
    .filter(|&c| c > 0.0);
    let capacity = delays
        .iter()
        .filter_map(|&d| {
            let s = ok_repetitions(rows, &model, at(d), column::THROUGHPUT_RPS)?;
            Some((s.median, d))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let base = ok_repetitions(rows, &model, at(longest), column::MEAN_US);
    let (Some(clients), Some((capacity, at_delay)), Some(base)) = (clients, capacity, base) else {
        let why = format!(
            "as a mechanism: inconclusive (no clients, throughput or unloaded response time \
             recorded to predict the knee from); as a number: {as_number}"
        );
        return (ClaimVerdict::Inconclusive, why, numbers);
    };
    let base_ms = base.median / 1000.0;
    let predicted = predicted_knee(&delays, clients, capacity, base_ms);
    let predicted_text = match predicted {
        Knee::At(long, short) => format!("{long} → {short} ms"),
        _ => "no knee within the sweep".into(),
    };
    numbers.push(format!(
        "the mechanism: capacity {} (the most requests/s, at a {at_delay} ms pause), {} \
         clients and an unloaded mean of {} predict the response time to double at a pause \
         of {:.1} ms (clients / capacity - 2 x unloaded): {predicted_text}",
        fmt_count(capacity),
        fmt_count(clients),
        fmt_latency(base.median),
        clients / capacity * 1000.0 - 2.0 * base_ms
    ));
    let mechanism = match (predicted, measured) {
        (_, Knee::Unlocated) => ClaimVerdict::Inconclusive,
        (p, m) if p == m => ClaimVerdict::Confirmed,
        _ => ClaimVerdict::Refuted,
    };
    let why = format!(
        "as a mechanism: {} (predicted {predicted_text} from capacity {}, measured {}); \
         as a number: {as_number}",
        mechanism.name(),
        fmt_count(capacity),
        match measured {
            Knee::At(long, short) => format!("{long} → {short} ms"),
            Knee::None => "no knee".into(),
            Knee::Unlocated => "no knee located".into(),
        }
    );
    (mechanism, why, numbers)
}

/// Claim 22 (001, Analysis, Case3): the gap between select and epoll closes as requests
/// come more often, in packets per second, 001's figure. A repetition's gap is |ln| of
/// epoll's TCP segments received per second over select's at the same step (the two ran
/// interleaved in that repetition). At each
/// client count the gaps at the shortest pause are compared with those at the longest
/// (Mann-Whitney U, p < 0.05): the gap closed when it shrank significantly by ln 1.05 or
/// more (five points of the ratio), widened when it grew so. Confirmed when it closed at
/// a client count and widened at none, refuted when it widened at one and closed at
/// none; "no difference" when it did neither anywhere.
pub(super) fn claim_22(rows: &[Row]) -> Judged {
    let ok = |model: &'static str| {
        rows.iter()
            .filter(move |r| r.model == model && r.status == Status::Ok)
    };
    let flagged = |r: &Row| {
        let (bound, disturbed) = flag(r);
        bound || disturbed
    };
    // A repetition's gap is flagged when either of its two rows is.
    let gaps = |clients: f64, delay: f64| -> Side {
        let (samples, flagged) = ok("select")
            .filter(|s| {
                num_or_zero(s, column::CONNECTIONS) == clients
                    && num_or_zero(s, column::DELAY_MS) == delay
            })
            .filter_map(|s| {
                let e = ok("epoll").find(|e| e.step == s.step && e.repetition == s.repetition)?;
                let gap = (num_or_zero(e, column::NET_SEGS_IN_PER_S)
                    / num_or_zero(s, column::NET_SEGS_IN_PER_S))
                .ln()
                .abs();
                Some((gap, flagged(s) || flagged(e)))
            })
            .filter(|(g, _)| g.is_finite())
            .unzip();
        Side {
            name: String::new(),
            samples,
            flagged,
        }
    };
    let min_change = stats::MIN_EFFECT.ln();
    let mut numbers = Vec::new();
    let (mut closed, mut widened, mut neither, mut undecided) = (0, 0, 0, Vec::new());
    for clients in values_of(rows.iter(), column::CONNECTIONS) {
        let delays = values_of(
            rows.iter()
                .filter(|r| num_or_zero(r, column::CONNECTIONS) == clients),
            column::DELAY_MS,
        );
        let (Some(&short), Some(&long)) = (delays.first(), delays.last()) else {
            continue;
        };
        let (at_long, at_short) = (gaps(clients, long), gaps(clients, short));
        if short == long || at_long.samples.is_empty() || at_short.samples.is_empty() {
            continue;
        }
        let robust = robustly(&at_long, &at_short, |c, long, short| {
            let change = stats::median(short).unwrap_or(0.0) - stats::median(long).unwrap_or(0.0);
            if c.significant() && change <= -min_change {
                "closed"
            } else if c.significant() && change >= min_change {
                "widened"
            } else {
                "neither"
            }
        });
        let (Some(l), Some(s), Some(robust)) = (
            over_repetitions(at_long.samples.clone()),
            over_repetitions(at_short.samples.clone()),
            robust,
        ) else {
            continue;
        };
        let c = robust.c;
        let outcome = robust.settled("neither");
        match outcome {
            "closed" => closed += 1,
            "widened" => widened += 1,
            _ => {
                neither += 1;
                undecided.push(format!(
                    "{} clients: {}",
                    fmt_count(clients),
                    c.describe_p()
                ));
            }
        }
        let pct = |v: f64| format!("{:.1} %", (v.exp() - 1.0) * 100.0);
        numbers.push(format!(
            "{} clients: the gap between select and epoll (their TCP segments per second \
             apart) {} at a {long} ms pause, {} at {short} ms ({outcome}, {}{})",
            fmt_count(clients),
            l.show(pct),
            s.show(pct),
            c.describe_p(),
            robust.note()
        ));
    }
    numbers.extend(super::compared::host_scope(rows));
    let counts = closed + widened + neither;
    let mut why = format!(
        "from the longest pause to the shortest, the gap closed (by five points or more, \
         significant) at {closed} of {counts} client counts, widened at {widened}"
    );
    if !undecided.is_empty() {
        why += &format!("; neither at {}", undecided.join(", "));
    }
    let verdict = if counts == 0 {
        return (
            ClaimVerdict::Inconclusive,
            "no client count where select and epoll both finished at two pauses".into(),
            numbers,
        );
    } else if closed > 0 && widened == 0 {
        ClaimVerdict::Confirmed
    } else if widened > 0 && closed == 0 {
        ClaimVerdict::Refuted
    } else if neither == counts {
        ClaimVerdict::NoDifference
    } else {
        ClaimVerdict::Inconclusive
    };
    (verdict, why, numbers)
}
