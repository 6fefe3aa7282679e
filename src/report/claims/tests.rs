//! Each claim's verdicts from hand-built rows: confirmed, refuted, inconclusive and
//! not run.

use std::collections::BTreeMap;

use super::*;

/// A row of `model` at `step`, repetition `rep`, with the given numeric columns.
fn row(model: &str, step: &str, rep: u32, status: Status, values: &[(&str, f64)]) -> Row {
    let numbers: BTreeMap<String, f64> = values.iter().map(|(c, v)| (c.to_string(), *v)).collect();
    Row {
        model: model.into(),
        step: step.into(),
        repetition: rep,
        status,
        failure_reason: match status {
            Status::Failed => "server refused 86 connections".into(),
            Status::NotRun => "`node` is not installed here".into(),
            _ => String::new(),
        },
        bytes_match: Some(true),
        raw: numbers
            .iter()
            .map(|(c, v)| (c.clone(), v.to_string()))
            .collect(),
        numbers,
    }
}

/// Three ok repetitions of `model` at `step` with `values`, each scaled by 0.9, 1, 1.1.
fn reps(model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Row> {
    scaled_reps(&[0.9, 1.0, 1.1], model, step, values)
}

/// Five ok repetitions (0.9 to 1.1): enough for a comparison to be significant.
fn reps5(model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Row> {
    scaled_reps(&[0.9, 0.95, 1.0, 1.05, 1.1], model, step, values)
}

fn scaled_reps(scales: &[f64], model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Row> {
    scales
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let scaled: Vec<(&str, f64)> = values
                .iter()
                .map(|(c, v)| match *c {
                    column::CONNECTIONS | column::DELAY_MS | column::SIZE => (*c, *v),
                    _ => (*c, v * k),
                })
                .collect();
            row(model, step, i as u32 + 1, Status::Ok, &scaled)
        })
        .collect()
}

fn verdict(number: usize, rows: &[Row]) -> Verdict {
    verdict_with(number, rows, Limits::default())
}

fn verdict_with(number: usize, rows: &[Row], limits: Limits) -> Verdict {
    let claim = judge(number, rows, limits);
    assert!(!claim.why.is_empty(), "claim {number} says why");
    claim.verdict
}

fn held(model: &str, c: f64) -> Vec<Row> {
    reps(
        model,
        &format!("c{c}"),
        &[(column::CONNECTIONS, c), (column::MAX_CONCURRENT_SERVER, c)],
    )
}

fn failed(model: &str, c: f64) -> Row {
    row(
        model,
        &format!("c{c}"),
        1,
        Status::Failed,
        &[(column::CONNECTIONS, c)],
    )
}

#[test]
fn a_claim_without_rows_that_ran_is_not_run_with_the_reason() {
    for n in 1..=8 {
        let c = judge(n, &[], Limits::default());
        assert_eq!(c.verdict, Verdict::NotRun);
        assert_eq!(c.why, "no step of its scenario ran");
    }
    let rows = [row("node", "c10", 1, Status::NotRun, &[])];
    let c = judge(4, &rows, Limits::default());
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (Verdict::NotRun, "`node` is not installed here")
    );
    let mut too_few_fds = failed("epoll", 100_000.0);
    too_few_fds.failure_reason = "load generator exited 2: 100000 connections in one process \
        need 100064 file descriptors, but the limit is 1024 (hard limit 1024, RLIMIT_NOFILE)"
        .into();
    let c = judge(3, &[too_few_fds], Limits::default());
    assert_eq!(c.verdict, Verdict::NotRun);
    assert!(
        c.why
            .starts_with("this machine's limits stopped it: load generator"),
        "{}",
        c.why
    );
    assert_eq!(claim_of("claim-4"), Some(4));
    assert_eq!(claim_of("claim-9"), None);
    assert_eq!(claim_of("quick"), None);
}

#[test]
fn claim_1_select_and_fd_setsize() {
    let mut rows = [held("select", 900.0), held("select", 1000.0)].concat();
    rows.push(failed("select", 1100.0));
    assert_eq!(verdict(1, &rows), Verdict::Confirmed);
    let c = judge(1, &rows, Limits::default());
    assert_eq!(c.why, "select held 1,000 connections and failed at 1,100");
    assert!(c.numbers[0].contains("held in 3 of 3"), "{:?}", c.numbers);
    // A control that failed at the same step makes the machine the suspect.
    let mut with_control = rows.clone();
    with_control.push(failed("epoll", 1100.0));
    assert_eq!(verdict(1, &with_control), Verdict::Inconclusive);
    let served = [held("select", 900.0), held("select", 2000.0)].concat();
    assert_eq!(verdict(1, &served), Verdict::Refuted);
    assert_eq!(verdict(1, &held("select", 900.0)), Verdict::Inconclusive);
}

#[test]
fn claim_2_threads_against_the_thread_and_fd_limits() {
    let limits = Limits {
        threads: Some(32_768),
        fds: Some(100_000),
    };
    let mut rows = [held("threads", 10_000.0), held("threads", 25_000.0)].concat();
    rows.push(failed("threads", 32_000.0));
    assert_eq!(verdict_with(2, &rows, limits), Verdict::Confirmed);
    let fd_first = Limits {
        fds: Some(20_000),
        ..limits
    };
    let mut at_fds = held("threads", 10_000.0);
    at_fds.push(failed("threads", 25_000.0));
    assert_eq!(verdict_with(2, &at_fds, fd_first), Verdict::Inconclusive);
    let mut early = held("threads", 1_000.0);
    early.push(failed("threads", 2_000.0));
    assert_eq!(verdict_with(2, &early, limits), Verdict::Refuted);
    let mut spawn = held("threads", 10_000.0);
    let mut no_thread = failed("threads", 19_000.0);
    no_thread.failure_reason = "server refused 2883 connections (thread_spawn: 2883); \
                                thread_spawn: the kernel returned EAGAIN (Resource \
                                temporarily unavailable)"
        .into();
    no_thread
        .numbers
        .insert(column::SERVER_THREADS_MAX.into(), 16_118.0);
    spawn.push(no_thread.clone());
    let c = judge(2, &spawn, fd_first);
    assert_eq!(c.verdict, Verdict::Confirmed, "{}", c.why);
    assert!(
        c.why
            .contains("at 16,118 threads; threads-max/pid_max 32,768"),
        "{}",
        c.why
    );
    assert!(
        c.why
            .contains("the kernel refused a thread: EAGAIN (Resource temporarily unavailable)"),
        "{}",
        c.why
    );
    no_thread
        .numbers
        .insert(column::SERVER_THREADS_MAX.into(), 3_000.0);
    spawn.pop();
    spawn.push(no_thread);
    assert_eq!(verdict_with(2, &spawn, fd_first), Verdict::Refuted);
    let beyond = held("threads", 40_000.0);
    assert_eq!(verdict_with(2, &beyond, limits), Verdict::Refuted);
    assert_eq!(
        verdict_with(2, &held("threads", 5_000.0), limits),
        Verdict::Inconclusive
    );
}

#[test]
fn claim_3_epoll_at_100_000() {
    let ok = held("epoll", 100_000.0);
    assert_eq!(verdict(3, &ok), Verdict::Confirmed);
    let mut mixed = ok[..1].to_vec();
    mixed.push(failed("epoll", 100_000.0));
    assert_eq!(verdict(3, &mixed), Verdict::Inconclusive);
    assert_eq!(verdict(3, &[failed("epoll", 100_000.0)]), Verdict::Refuted);
    assert_eq!(verdict(3, &held("epoll", 50_000.0)), Verdict::NotRun);
}

fn timed(model: &str, step: &str, mean_us: f64) -> Vec<Row> {
    reps(
        model,
        step,
        &[
            (column::MEAN_US, mean_us),
            (column::COMPLETION_S, mean_us / 100.0),
        ],
    )
}

#[test]
fn claim_4_select_as_fast_as_epoll() {
    let steps = ["c250-d1ms", "c1000-d1ms"];
    let both = |select: f64, epoll: f64| -> Vec<Row> {
        steps
            .iter()
            .flat_map(|s| [timed("select", s, select), timed("epoll", s, epoll)].concat())
            .collect()
    };
    assert_eq!(verdict(4, &both(100.0, 100.0)), Verdict::Confirmed);
    assert_eq!(verdict(4, &both(80.0, 100.0)), Verdict::Confirmed);
    assert_eq!(verdict(4, &both(200.0, 100.0)), Verdict::Refuted);
    // Within the spread but more than 10 % slower: noise.
    assert_eq!(verdict(4, &both(115.0, 100.0)), Verdict::Inconclusive);
}

#[test]
fn claim_5_epoll_faster_on_short_connections() {
    let both = |epoll: f64, select: f64| -> Vec<Row> {
        [
            timed("epoll", "c1000", epoll),
            timed("select", "c1000", select),
        ]
        .concat()
    };
    assert_eq!(verdict(5, &both(100.0, 200.0)), Verdict::Confirmed);
    assert_eq!(verdict(5, &both(200.0, 100.0)), Verdict::Refuted);
    assert_eq!(verdict(5, &both(100.0, 105.0)), Verdict::Inconclusive);
    assert_eq!(
        verdict(5, &timed("epoll", "c1000", 100.0)),
        Verdict::Inconclusive
    );
}

/// Steps of claim 6 at 10 ms: (clients, mean µs, throughput).
fn doublings(points: &[(f64, f64, f64)]) -> Vec<Row> {
    points
        .iter()
        .flat_map(|&(c, mean, tput)| {
            reps5(
                "epoll",
                &format!("c{c}-d10ms"),
                &[
                    (column::CONNECTIONS, c),
                    (column::DELAY_MS, 10.0),
                    (column::MEAN_US, mean),
                    (column::THROUGHPUT_RPS, tput),
                ],
            )
        })
        .collect()
}

#[test]
fn claim_6_doubling_the_clients() {
    let doubling = doublings(&[
        (500.0, 100.0, 1e4),
        (1000.0, 200.0, 2e4),
        (2000.0, 400.0, 4e4),
    ]);
    assert_eq!(verdict(6, &doubling), Verdict::Confirmed);
    let flat = doublings(&[
        (500.0, 100.0, 1e4),
        (1000.0, 105.0, 2e4),
        (2000.0, 110.0, 4e4),
    ]);
    assert_eq!(verdict(6, &flat), Verdict::Refuted);
    // Three repetitions can never be significant: a doubling is undecided, with p and n.
    let three: Vec<Row> = [(500.0, 100.0), (1000.0, 200.0)]
        .iter()
        .flat_map(|&(c, mean)| {
            reps(
                "epoll",
                &format!("c{c}"),
                &[
                    (column::CONNECTIONS, c),
                    (column::DELAY_MS, 1000.0),
                    (column::MEAN_US, mean),
                ],
            )
        })
        .collect();
    let c = judge(6, &three, Limits::default());
    assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.why);
    assert!(c.why.contains("n = 3"), "{}", c.why);
    let c = judge(6, &flat, Limits::default());
    assert!(
        c.numbers
            .iter()
            .any(|n| n.starts_with("delay 10 ms, 500→1,000 clients: mean x1.05")),
        "{:?}",
        c.numbers
    );
}

fn sized(model: &str, size: f64, ok: bool) -> Vec<Row> {
    let values = [(column::SIZE, size), (column::CONNECTIONS, 10_000.0)];
    if ok {
        reps(model, &format!("s{size}"), &values)
    } else {
        vec![row(model, &format!("s{size}"), 1, Status::Failed, &values)]
    }
}

#[test]
fn claim_7_message_sizes() {
    const MIB: f64 = 1_048_576.0;
    let epoll = [
        sized("epoll", 1.0, true),
        sized("epoll", 1024.0, true),
        sized("epoll", MIB, true),
    ]
    .concat();
    let threads_small = [sized("threads", 1.0, true), sized("threads", 1024.0, true)].concat();
    let select = sized("select", 1.0, false);
    let mut out_of_memory = sized("threads", MIB, false);
    out_of_memory[0].failure_reason = "server exited: killed by the OOM killer".into();
    let epoll_gave_up = [
        sized("epoll", 1.0, true),
        sized("epoll", 1024.0, true),
        sized("epoll", MIB, false),
    ]
    .concat();
    let confirmed = [
        epoll_gave_up.clone(),
        threads_small.clone(),
        out_of_memory.clone(),
        select.clone(),
    ]
    .concat();
    assert_eq!(verdict(7, &confirmed), Verdict::Confirmed);
    // epoll held 1 MiB here: the report's "not able to support this test" is refuted.
    let epoll_held = [
        epoll.clone(),
        threads_small.clone(),
        out_of_memory,
        select.clone(),
    ]
    .concat();
    let c = judge(7, &epoll_held, Limits::default());
    assert_eq!(c.verdict, Verdict::Refuted);
    assert!(c.why.contains("epoll could not support it"), "{}", c.why);
    // Failing at 1 MiB for another reason does not show the claim.
    let timed_out = [
        epoll_gave_up.clone(),
        threads_small.clone(),
        sized("threads", MIB, false),
        select.clone(),
    ]
    .concat();
    let c = judge(7, &timed_out, Limits::default());
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(
        c.why.contains("but was not stopped: server refused"),
        "{}",
        c.why
    );
    let threads_coped = [
        epoll_gave_up.clone(),
        threads_small.clone(),
        sized("threads", MIB, true),
        select.clone(),
    ]
    .concat();
    assert_eq!(verdict(7, &threads_coped), Verdict::Refuted);
    let no_threads = [epoll_gave_up, select].concat();
    assert_eq!(verdict(7, &no_threads), Verdict::Inconclusive);
}

fn by_delay(points: &[(f64, f64)]) -> Vec<Row> {
    points
        .iter()
        .flat_map(|&(d, mean)| {
            reps5(
                "epoll",
                &format!("d{d}ms"),
                &[(column::DELAY_MS, d), (column::MEAN_US, mean)],
            )
        })
        .collect()
}

#[test]
fn claim_8_the_knee_over_the_delay_sweep() {
    // The report's sweep and its knee: ~30 ms above 125 ms, ~10x at 125 ms and below.
    let report = by_delay(&[
        (1000.0, 30_000.0),
        (500.0, 31_000.0),
        (250.0, 30_000.0),
        (125.0, 300_000.0),
        (50.0, 350_000.0),
        (10.0, 380_000.0),
        (1.0, 400_000.0),
    ]);
    let c = judge(8, &report, Limits::default());
    assert_eq!(c.verdict, Verdict::Confirmed, "{}", c.why);
    assert!(c.why.contains("is 250 → 125 ms: x10.00"), "{}", c.why);
    // A knee at 10-20 ms, as echolab's request-frequency data put it: refuted, located.
    let late = by_delay(&[
        (1000.0, 100.0),
        (250.0, 110.0),
        (125.0, 120.0),
        (50.0, 130.0),
        (10.0, 900.0),
        (1.0, 5000.0),
    ]);
    let c = judge(8, &late, Limits::default());
    assert_eq!(c.verdict, Verdict::Refuted, "{}", c.why);
    assert!(c.why.contains("is 50 → 10 ms"), "{}", c.why);
    let flat = by_delay(&[(1000.0, 100.0), (125.0, 110.0), (1.0, 130.0)]);
    assert_eq!(verdict(8, &flat), Verdict::Refuted);
    // Three repetitions cannot locate anything.
    let three: Vec<Row> = [(250.0, 100.0), (125.0, 1000.0)]
        .iter()
        .flat_map(|&(d, m)| {
            reps(
                "epoll",
                &format!("d{d}"),
                &[(column::DELAY_MS, d), (column::MEAN_US, m)],
            )
        })
        .collect();
    let c = judge(8, &three, Limits::default());
    assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.why);
    assert!(c.why.contains("n = 3"), "{}", c.why);
}

#[test]
fn spreads_and_tests() {
    let s = spread(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 10.0, 4));
    assert_eq!(spread(vec![]), None);
    assert_eq!(
        test_of("Claim: x. Test: select at\n  900. Done.").as_deref(),
        Some("select at 900. Done.")
    );
    let sections = section(&[Claim::not_run(3, "not root")], |_| None, |_| None);
    assert_eq!(sections[0].id, "claims");
    assert_eq!(sections[1].heading, "Claim 3: not run");
}
