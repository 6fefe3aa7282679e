//! The capacity claims (1, 2, 3 and 7): how many clients, or how large messages,
//! a model holds before it fails.

use super::{
    column, models, num_or_zero, ok_repetitions, outcome, over_repetitions, ran, values_of,
    ClaimVerdict, Judged, MachineLimits, Row,
};
use crate::units::format_size;
use crate::verdict::fmt_count;

fn held_line(rows: &[Row], model: &str, c: f64) -> String {
    let at = |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let (ok, failed, reason) = outcome(rows, model, at);
    let mut line = format!(
        "{model} at {} connections: held in {ok} of {} repetitions",
        fmt_count(c),
        ok + failed
    );
    if let Some(s) = ok_repetitions(rows, model, at, column::MAX_CONCURRENT_SERVER) {
        line += &format!(", server's max concurrent {}", s.show(fmt_count));
    }
    if !reason.is_empty() {
        line += &format!("; failed: {reason}");
    }
    line
}

/// Claim 1: select holds every step up to FD_SETSIZE and none above it.
pub(super) fn claim_1(rows: &[Row]) -> Judged {
    const FD_SETSIZE: f64 = 1024.0;
    let select = |r: &Row| r.model == "select" && ran(r);
    let steps = values_of(rows.iter().filter(|r| select(r)), column::CONNECTIONS);
    let mut numbers: Vec<String> = steps
        .iter()
        .map(|&c| held_line(rows, "select", c))
        .collect();
    let controls: Vec<&str> = models(rows)
        .into_iter()
        .filter(|m| *m != "select")
        .collect();
    for m in &controls {
        for c in values_of(
            rows.iter().filter(|r| r.model == *m && ran(r)),
            column::CONNECTIONS,
        ) {
            numbers.push(held_line(rows, m, c));
        }
    }
    if steps.is_empty() {
        return (ClaimVerdict::NotRun, "no select step ran".into(), numbers);
    }
    let held = |c: f64| outcome(rows, "select", |r| num_or_zero(r, column::CONNECTIONS) == c);
    let above: Vec<f64> = steps.iter().copied().filter(|&c| c > FD_SETSIZE).collect();
    if let Some(&c) = above.iter().find(|&&c| held(c).0 > 0) {
        let why = format!("select held {} connections, above FD_SETSIZE", fmt_count(c));
        return (ClaimVerdict::Refuted, why, numbers);
    }
    if above.is_empty() {
        let why = "no step above 1024 connections ran".to_string();
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let below_held = steps
        .iter()
        .filter(|&&c| c <= FD_SETSIZE)
        .filter(|&&c| held(c).0 > 0)
        .fold(None, |m: Option<f64>, &c| Some(m.map_or(c, |m| m.max(c))));
    let Some(most) = below_held else {
        let why = "select failed even at or below 1024 connections: something else stopped it"
            .to_string();
        return (ClaimVerdict::Inconclusive, why, numbers);
    };
    let first_failed = above[0];
    let control_failed = controls.iter().find(|m| {
        let (ok, failed, _) = outcome(rows, m, |r| {
            num_or_zero(r, column::CONNECTIONS) == first_failed
        });
        ok == 0 && failed > 0
    });
    if let Some(m) = control_failed {
        let why = format!(
            "{m} failed at {} connections too: the machine, not select, may be the limit",
            fmt_count(first_failed)
        );
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let why = format!(
        "select held {} connections and failed at {}{}",
        fmt_count(most),
        fmt_count(first_failed),
        if controls.is_empty() {
            String::new()
        } else {
            format!(", where {} held them", controls.join(" and "))
        }
    );
    (ClaimVerdict::Confirmed, why, numbers)
}

/// At or above this many threads the report's "tens of thousands" held.
const TENS_OF_THOUSANDS: f64 = 10_000.0;

/// Claim 2: where the threads model failed, against the thread and fd limits.
pub(super) fn claim_2(rows: &[Row], limits: MachineLimits) -> Judged {
    let steps = values_of(
        rows.iter().filter(|r| r.model == "threads" && ran(r)),
        column::CONNECTIONS,
    );
    let numbers = threads_numbers(rows, &steps, limits);
    let limit = limits.threads.map(|l| l as f64);
    let held_at = |c: f64| {
        outcome(rows, "threads", |r| {
            num_or_zero(r, column::CONNECTIONS) == c
        })
        .0 > 0
    };
    let held = steps
        .iter()
        .copied()
        .filter(|&c| held_at(c))
        .fold(0.0, f64::max);
    let Some(failed) = steps.iter().copied().find(|&c| !held_at(c)) else {
        let (verdict, why) = threads_held_every_step(held, limit);
        return (verdict, why, numbers);
    };
    let at_failed = |r: &Row| num_or_zero(r, column::CONNECTIONS) == failed;
    let (_, _, reason) = outcome(rows, "threads", at_failed);
    // The server says why it refused connections: thread_spawn when no thread could start.
    if reason.contains("thread") {
        let (verdict, why) = kernel_refused_a_thread(rows, &reason, held, failed, limits);
        return (verdict, why, numbers);
    }
    if fd_limit_came_first(limits, failed) {
        let why = format!(
            "threads held {} and failed at {} connections ({reason}), at the fd limit of one \
             process ({}), which is below the thread limit: the fd limit came first",
            fmt_count(held),
            fmt_count(failed),
            limits.fds.map_or("?".into(), |f| fmt_count(f as f64))
        );
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let near = limit.is_none_or(|l| failed >= l * 0.5 && held <= l);
    if held >= TENS_OF_THOUSANDS && near {
        let why = format!(
            "threads held {} and failed at {} connections{}",
            fmt_count(held),
            fmt_count(failed),
            limit.map_or(String::new(), |l| format!(
                ", near the thread limit {}",
                fmt_count(l)
            ))
        );
        return (ClaimVerdict::Confirmed, why, numbers);
    }
    let why = format!(
        "threads failed at {} connections, far below {}",
        fmt_count(failed),
        limit.map_or("tens of thousands".into(), |l| format!(
            "the thread limit {}",
            fmt_count(l)
        ))
    );
    (ClaimVerdict::Refuted, why, numbers)
}

/// Claim 2's numbers: each threads step, the most server threads, the machine's limits.
fn threads_numbers(rows: &[Row], steps: &[f64], limits: MachineLimits) -> Vec<String> {
    let mut numbers: Vec<String> = steps
        .iter()
        .map(|&c| held_line(rows, "threads", c))
        .collect();
    if let Some(s) = over_repetitions(
        rows.iter()
            .filter(|r| r.model == "threads" && ran(r))
            .filter_map(|r| r.num(column::SERVER_THREADS_MAX))
            .collect(),
    ) {
        numbers.push(format!("server threads at most: {}", fmt_count(s.max)));
    }
    let limit = limits.threads.map(|l| l as f64);
    numbers.push(format!(
        "thread limit {}, fd limit per process {}",
        limit.map_or("unknown".into(), fmt_count),
        limits.fds.map_or("unknown".into(), |f| fmt_count(f as f64))
    ));
    numbers
}

/// Claim 2 when threads held every step: refuted only if it held beyond the thread limit.
fn threads_held_every_step(held: f64, limit: Option<f64>) -> (ClaimVerdict, String) {
    match limit {
        Some(l) if held >= l => (
            ClaimVerdict::Refuted,
            format!(
                "threads held {} connections, beyond the thread limit {}",
                fmt_count(held),
                fmt_count(l)
            ),
        ),
        _ => (
            ClaimVerdict::Inconclusive,
            format!(
                "threads held every step up to {}: the sweep did not reach its limit",
                fmt_count(held)
            ),
        ),
    }
}

/// Claim 2 when the failed step's reason says no thread could start: confirmed when
/// the server had reached tens of thousands of threads by then.
fn kernel_refused_a_thread(
    rows: &[Row],
    reason: &str,
    held: f64,
    failed: f64,
    limits: MachineLimits,
) -> (ClaimVerdict, String) {
    let limit = limits.threads.map(|l| l as f64);
    let reached = rows
        .iter()
        .filter(|r| r.model == "threads" && ran(r))
        .filter_map(|r| r.num(column::SERVER_THREADS_MAX))
        .fold(0.0, f64::max);
    let below = match limit {
        Some(l) if reached < 0.9 * l => format!(
            ", below kernel.pid_max/threads-max ({}): another limit (vm.max_map_count at \
             two maps per thread, memory, a cgroup's pids.max) came first",
            fmt_count(l)
        ),
        _ => String::new(),
    };
    let verdict = if reached >= TENS_OF_THOUSANDS {
        ClaimVerdict::Confirmed
    } else {
        ClaimVerdict::Refuted
    };
    // As observed: the error pthread_create returned, which the step's reason carries.
    let kernel = reason
        .split("thread_spawn: the kernel returned ")
        .nth(1)
        .map_or("no error recorded".to_string(), |e| {
            e.split(';').next().unwrap_or(e).trim().to_string()
        });
    let why = format!(
        "threads held {} connections and failed at {}: the kernel refused a thread: \
         {kernel} (at {} threads; threads-max/pid_max {}, fd limit {}){below}",
        fmt_count(held),
        fmt_count(failed),
        fmt_count(reached),
        limit.map_or("unknown".into(), fmt_count),
        limits.fds.map_or("unknown".into(), |f| fmt_count(f as f64))
    );
    (verdict, why)
}

/// Whether the threads failed at one process's fd limit, which is below the thread limit.
fn fd_limit_came_first(limits: MachineLimits, failed: f64) -> bool {
    let limit = limits.threads.map(|l| l as f64);
    match (limits.fds.map(|f| f as f64), limit) {
        (Some(fds), Some(l)) => fds < l && failed >= fds * 0.9,
        (Some(fds), None) => failed >= fds * 0.9,
        _ => false,
    }
}

/// Claim 3: epoll holds 100 000 connections in every repetition.
pub(super) fn claim_3(rows: &[Row]) -> Judged {
    const CLIENTS: f64 = 100_000.0;
    let at = |r: &Row| num_or_zero(r, column::CONNECTIONS) >= CLIENTS;
    let (ok, failed, reason) = outcome(rows, "epoll", at);
    let mut numbers = vec![format!(
        "epoll at 100 000 connections: held in {ok} of {} repetitions",
        ok + failed
    )];
    for (name, c) in [
        ("connections established", column::CONNECTIONS_ESTABLISHED),
        ("server's max concurrent", column::MAX_CONCURRENT_SERVER),
    ] {
        if let Some(s) = ok_repetitions(rows, "epoll", at, c) {
            numbers.push(format!("{name}: {}", s.show(fmt_count)));
        }
    }
    if let Some(s) = ok_repetitions(rows, "epoll", at, column::SERVER_RSS_PER_CONN_BYTES) {
        numbers.push(format!(
            "server memory per connection: {}",
            s.show(|b| format!("{b:.0} B"))
        ));
    }
    match (ok, failed) {
        (0, 0) => (
            ClaimVerdict::NotRun,
            "no epoll step at 100 000 connections ran".into(),
            numbers,
        ),
        (_, 0) => (
            ClaimVerdict::Confirmed,
            format!("epoll held 100 000 connections in all {ok} repetitions"),
            numbers,
        ),
        (0, _) => (
            ClaimVerdict::Refuted,
            format!("epoll failed in all {failed} repetitions: {reason}"),
            numbers,
        ),
        _ => (
            ClaimVerdict::Inconclusive,
            format!("epoll held them in {ok} repetitions and failed in {failed}: {reason}"),
            numbers,
        ),
    }
}

/// ` (failed: REASON)`, or nothing without a reason.
fn failed_note(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" (failed: {reason})")
    }
}

/// Claim 7 (003, 1 Megabyte Transfer): at 1 MiB and 10 000 connections threads is
/// terminated by the system, select cannot complete, and epoll cannot support the
/// test either (it terminates connections). Each part is judged from the 1 MiB
/// steps; the smaller sizes are listed beside them, as the report had them.
pub(super) fn claim_7(rows: &[Row]) -> Judged {
    const MIB: f64 = 1_048_576.0;
    let big = |r: &Row| num_or_zero(r, column::SIZE) >= MIB;
    let numbers = size_numbers(rows);
    let all = |_: &Row| true;
    let part = |model: &str, at: &dyn Fn(&Row) -> bool, holds: &dyn Fn(&str) -> bool| match outcome(
        rows, model, at,
    ) {
        (0, 0, _) => None,
        (0, _, reason) if holds(&reason) => Some(true),
        (0, _, _) => None,
        _ => Some(false),
    };
    // select "Could not complete tests" at any size; the others at 1 MiB.
    let threads = part("threads", &big, &terminated_by_the_system);
    let select = part("select", &all, &|_| true);
    let epoll = part("epoll", &big, &|_| true);
    let parts = [
        ("threads terminated by the system", threads),
        ("select could not complete", select),
        ("epoll could not support it", epoll),
    ];
    let list = |want: Option<bool>| {
        parts
            .iter()
            .filter(|(_, v)| *v == want)
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (verdict, why) = if parts.iter().any(|(_, v)| *v == Some(false)) {
        (
            ClaimVerdict::Refuted,
            format!(
                "held in a repetition here, against the report: {}",
                list(Some(false))
            ),
        )
    } else if parts.iter().all(|(_, v)| *v == Some(true)) {
        (
            ClaimVerdict::Confirmed,
            format!("all three as the report found: {}", list(Some(true))),
        )
    } else {
        let (_, t_failed, t_reason) = outcome(rows, "threads", big);
        let mut why = format!("not shown: {}", list(None));
        if threads.is_none() && t_failed > 0 {
            why += &format!(" (threads failed at 1 MiB, but was not stopped: {t_reason})");
        }
        (ClaimVerdict::Inconclusive, why)
    };
    (verdict, why, numbers)
}

/// Claim 7's numbers: each model's repetitions at each message size.
fn size_numbers(rows: &[Row]) -> Vec<String> {
    let mut numbers = Vec::new();
    for model in ["threads", "select", "epoll"] {
        for size in values_of(
            rows.iter().filter(|r| r.model == model && ran(r)),
            column::SIZE,
        ) {
            let (ok, failed, reason) =
                outcome(rows, model, |r| num_or_zero(r, column::SIZE) == size);
            numbers.push(format!(
                "{model} at {}: ok in {ok} of {}{}",
                format_size(size as u64),
                ok + failed,
                failed_note(&reason)
            ));
        }
    }
    numbers
}

/// "automatically terminated by the system": the server itself was stopped (the OOM
/// killer under the memory cap, a signal), not merely slow.
fn terminated_by_the_system(reason: &str) -> bool {
    let reason = reason.to_lowercase();
    [
        "killed",
        "signal",
        "oom",
        "memory",
        "server exited",
        "server died",
    ]
    .iter()
    .any(|w| reason.contains(w))
}

/// Claim 16 (002, Test Cases 10 and 11): epoll finishes 40 000 and 45 000 clients of
/// 100 messages each without an error.
pub(super) fn claim_16(rows: &[Row]) -> Judged {
    held_every_step(rows)
}

/// Claim 19 (004, Case 1-5): epoll keeps 2 500 to 20 000 clients of 60 requests
/// connected in one session.
pub(super) fn claim_19(rows: &[Row]) -> Judged {
    held_every_step(rows)
}

/// Confirmed when every repetition of every epoll step held, refuted when a step
/// failed in every repetition, inconclusive when a step held in some only.
fn held_every_step(rows: &[Row]) -> Judged {
    let steps = values_of(
        rows.iter().filter(|r| r.model == "epoll" && ran(r)),
        column::CONNECTIONS,
    );
    let numbers: Vec<String> = steps.iter().map(|&c| held_line(rows, "epoll", c)).collect();
    let at = |c: f64| move |r: &Row| num_or_zero(r, column::CONNECTIONS) == c;
    let failed_all = steps.iter().copied().find(|&c| {
        let (ok, failed, _) = outcome(rows, "epoll", at(c));
        ok == 0 && failed > 0
    });
    if let Some(c) = failed_all {
        let (_, _, reason) = outcome(rows, "epoll", at(c));
        let why = format!(
            "epoll failed at {} clients in every repetition: {reason}",
            fmt_count(c)
        );
        return (ClaimVerdict::Refuted, why, numbers);
    }
    let mixed = steps
        .iter()
        .copied()
        .find(|&c| outcome(rows, "epoll", at(c)).1 > 0);
    if let Some(c) = mixed {
        let (ok, failed, reason) = outcome(rows, "epoll", at(c));
        let why = format!(
            "epoll held {} clients in {ok} repetitions and failed in {failed}: {reason}",
            fmt_count(c)
        );
        return (ClaimVerdict::Inconclusive, why, numbers);
    }
    let Some(&top) = steps.last() else {
        return (ClaimVerdict::NotRun, "no epoll step ran".into(), numbers);
    };
    let reps = outcome(rows, "epoll", at(top)).0;
    let why = format!(
        "epoll finished every client without an error up to {} ({} repetition{} at the top)",
        fmt_count(top),
        reps,
        if reps == 1 { "" } else { "s" }
    );
    (ClaimVerdict::Confirmed, why, numbers)
}
