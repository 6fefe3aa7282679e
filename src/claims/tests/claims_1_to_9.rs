//! Claims 1 to 9: each verdict from hand-built rows.

use super::*;

#[test]
fn claim_1_select_and_fd_setsize() {
    let mut rows = [held("select", 900.0), held("select", 1000.0)].concat();
    rows.push(failed("select", 1100.0));
    assert_eq!(rule(1, &rows), ClaimVerdict::Confirmed);
    let c = by_rule(1, &rows, MachineLimits::default());
    assert_eq!(c.why, "select held 1,000 connections and failed at 1,100");
    assert!(c.numbers[0].contains("held in 3 of 3"), "{:?}", c.numbers);
    // A control that failed at the same step makes the machine the suspect.
    let mut with_control = rows.clone();
    with_control.push(failed("epoll", 1100.0));
    assert_eq!(rule(1, &with_control), ClaimVerdict::Inconclusive);
    let served = [held("select", 900.0), held("select", 2000.0)].concat();
    assert_eq!(rule(1, &served), ClaimVerdict::Refuted);
    assert_eq!(rule(1, &held("select", 900.0)), ClaimVerdict::Inconclusive);
}

#[test]
fn claim_2_threads_against_the_thread_and_fd_limits() {
    let limits = MachineLimits {
        threads: Some(32_768),
        fds: Some(100_000),
    };
    let mut rows = [held("threads", 10_000.0), held("threads", 25_000.0)].concat();
    rows.push(failed("threads", 32_000.0));
    assert_eq!(verdict_with(2, &rows, limits), ClaimVerdict::Confirmed);
    let fd_first = MachineLimits {
        fds: Some(20_000),
        ..limits
    };
    let mut at_fds = held("threads", 10_000.0);
    at_fds.push(failed("threads", 25_000.0));
    assert_eq!(
        verdict_with(2, &at_fds, fd_first),
        ClaimVerdict::Inconclusive
    );
    let mut early = held("threads", 1_000.0);
    early.push(failed("threads", 2_000.0));
    assert_eq!(verdict_with(2, &early, limits), ClaimVerdict::Refuted);
    let mut spawn = held("threads", 10_000.0);
    let mut no_thread = failed("threads", 19_000.0);
    no_thread.failure_reason = "server refused 2883 connections (thread_spawn: 2883); \
                                thread_spawn: the kernel returned EAGAIN (Resource \
                                temporarily unavailable)"
        .into();
    no_thread.server_threads_max = Some(16_118);
    spawn.push(no_thread.clone());
    let c = judge(2, &spawn, fd_first);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
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
    no_thread.server_threads_max = Some(3_000);
    spawn.pop();
    spawn.push(no_thread);
    assert_eq!(verdict_with(2, &spawn, fd_first), ClaimVerdict::Refuted);
    let beyond = held("threads", 40_000.0);
    assert_eq!(verdict_with(2, &beyond, limits), ClaimVerdict::Refuted);
    assert_eq!(
        verdict_with(2, &held("threads", 5_000.0), limits),
        ClaimVerdict::Inconclusive
    );
}

#[test]
fn claim_3_epoll_at_100_000() {
    let ok = held("epoll", 100_000.0);
    assert_eq!(verdict(3, &ok), ClaimVerdict::Confirmed);
    let mut mixed = ok[..1].to_vec();
    mixed.push(failed("epoll", 100_000.0));
    assert_eq!(verdict(3, &mixed), ClaimVerdict::Inconclusive);
    assert_eq!(
        verdict(3, &[failed("epoll", 100_000.0)]),
        ClaimVerdict::Refuted
    );
    assert_eq!(verdict(3, &held("epoll", 50_000.0)), ClaimVerdict::NotRun);
}

/// `scales` of `model` at `step` with a mean response time (and a completion time) of
/// `mean_us` times each scale.
fn timed_with(scales: &[f64], model: &str, step: &str, mean_us: f64) -> Vec<Row> {
    scaled_reps(
        scales,
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
    let both = |scales: &[f64], select: f64, epoll: f64| -> Vec<Row> {
        steps
            .iter()
            .flat_map(|s| {
                [
                    timed_with(scales, "select", s, select),
                    timed_with(scales, "epoll", s, epoll),
                ]
                .concat()
            })
            .collect()
    };
    let five = [0.9, 0.95, 1.0, 1.05, 1.1];
    // Equal and tight: the interval shows select within x1.1.
    assert_eq!(
        verdict(4, &both(&TIGHT, 100.0, 100.0)),
        ClaimVerdict::Confirmed
    );
    // Select significantly faster.
    assert_eq!(
        verdict(4, &both(&five, 80.0, 100.0)),
        ClaimVerdict::Confirmed
    );
    assert_eq!(
        verdict(4, &both(&five, 200.0, 100.0)),
        ClaimVerdict::Refuted
    );
    // Equal medians but a spread of ±10 %: "as fast" is not shown, nor is epoll faster.
    let c = judge(4, &both(&five, 100.0, 100.0), MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
    assert!(c.why.contains("undecided at c250-d1ms: p = "), "{}", c.why);
    // Three repetitions can never be significant (the rank test's smallest p is 0.10):
    // twice as slow is still undecided.
    assert_eq!(
        verdict(4, &both(&[0.9, 1.0, 1.1], 200.0, 100.0)),
        ClaimVerdict::Inconclusive
    );
}

#[test]
fn claim_5_epoll_faster_on_short_connections() {
    let five = [0.9, 0.95, 1.0, 1.05, 1.1];
    let both = |epoll: f64, select: f64| -> Vec<Row> {
        [
            timed_with(&five, "epoll", "c1000", epoll),
            timed_with(&five, "select", "c1000", select),
        ]
        .concat()
    };
    assert_eq!(verdict(5, &both(100.0, 200.0)), ClaimVerdict::Confirmed);
    assert_eq!(verdict(5, &both(200.0, 100.0)), ClaimVerdict::Refuted);
    let c = judge(5, &both(100.0, 105.0), MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
    assert!(c.why.contains("no difference at c1000: p = "), "{}", c.why);
    assert_eq!(
        verdict(5, &timed_with(&five, "epoll", "c1000", 100.0)),
        ClaimVerdict::Inconclusive
    );
}

#[test]
fn claim_5_a_flagged_repetition_never_decides_alone() {
    // Four against four: significant only with every repetition, so a flagged one
    // left out undoes the difference.
    let four = [0.97, 0.99, 1.01, 1.03];
    let rows = [
        timed_with(&four, "epoll", "c1000", 100.0),
        timed_with(&four, "select", "c1000", 200.0),
    ]
    .concat();
    let clean = judge(5, &rows, MachineLimits::default());
    assert_eq!(clean.verdict, ClaimVerdict::Confirmed, "{}", clean.why);
    assert!(
        !clean.numbers[0].contains("left out"),
        "{}",
        clean.numbers[0]
    );
    let flagged = judge(5, &bound(rows, "select", 2), MachineLimits::default());
    assert_eq!(
        flagged.verdict,
        ClaimVerdict::Inconclusive,
        "{}",
        flagged.why
    );
    assert_eq!(
        flagged.numbers[0],
        "c1000: mean response time epoll median 100 µs (97 µs–103 µs, 4 reps), select median \
         200 µs (194 µs–206 µs, 4 reps); select over epoll x2.00 (1.92–2.08), p = 0.030, n = 4; \
         1 generator-bound or disturbed repetition(s), each left out in turn: the difference \
         does not stand without them (no difference)"
    );
    assert!(
        flagged.why.contains("epoll significantly faster at 0 of 1"),
        "{}",
        flagged.why
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
    assert_eq!(verdict(6, &doubling), ClaimVerdict::Confirmed);
    let flat = doublings(&[
        (500.0, 100.0, 1e4),
        (1000.0, 105.0, 2e4),
        (2000.0, 110.0, 4e4),
    ]);
    assert_eq!(verdict(6, &flat), ClaimVerdict::Refuted);
    // Both held back by the server (it answered 10 000 of the 50 000 requests/s 500
    // clients ask at 10 ms): its capacity, 40 000, meets clients / pause at 400 clients.
    let c = judge(6, &doubling, MachineLimits::default());
    assert!(
        c.why.starts_with(
            "as a mechanism: confirmed (at 10 ms predicted 500→1,000 clients from capacity \
             40,000, measured 500→1,000 clients); as a number: confirmed: of 2 doublings"
        ),
        "{}",
        c.why
    );
    // A server that answers all its clients ask: no rise predicted. The mean staying is
    // the mechanism confirmed and the report's number refuted; the mean doubling
    // regardless is the mechanism refuted.
    let kept_up = |means: [f64; 3]| {
        doublings(&[
            (500.0, means[0], 5e4),
            (1000.0, means[1], 1e5),
            (2000.0, means[2], 2e5),
        ])
    };
    let c = judge(6, &kept_up([100.0, 105.0, 110.0]), MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why.contains(
            "predicted no rise from capacity 200,000, measured no rise); as a number: refuted"
        ),
        "{}",
        c.why
    );
    assert_eq!(
        verdict(6, &kept_up([100.0, 200.0, 400.0])),
        ClaimVerdict::Refuted
    );
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
    let c = judge(6, &three, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(c.why.contains("n = 3"), "{}", c.why);
    let c = judge(6, &flat, MachineLimits::default());
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
    assert_eq!(rule(7, &confirmed), ClaimVerdict::Confirmed);
    // epoll held 1 MiB here: the report's "not able to support this test" is refuted.
    let epoll_held = [
        epoll.clone(),
        threads_small.clone(),
        out_of_memory,
        select.clone(),
    ]
    .concat();
    let c = by_rule(7, &epoll_held, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted);
    assert!(c.why.contains("epoll could not support it"), "{}", c.why);
    // Failing at 1 MiB for another reason does not show the claim.
    let timed_out = [
        epoll_gave_up.clone(),
        threads_small.clone(),
        sized("threads", MIB, false),
        select.clone(),
    ]
    .concat();
    let c = by_rule(7, &timed_out, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
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
    assert_eq!(rule(7, &threads_coped), ClaimVerdict::Refuted);
    let no_threads = [epoll_gave_up, select].concat();
    assert_eq!(rule(7, &no_threads), ClaimVerdict::Inconclusive);
    // Its setup fixes the outcome: the report calls it a demonstration, with the rows' story.
    let c = judge(7, &confirmed, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Demonstration);
    assert!(
        c.why
            .starts_with("the setup fixes the outcome: at 10 000 connections select must fail"),
        "{}",
        c.why
    );
    assert!(c.why.contains("; what the run showed: "), "{}", c.why);
    assert_eq!(c.verdict.name(), "demonstration, not a test");
}

/// 2 500 clients at each (pause in ms, mean response time in µs), five repetitions, each
/// answering the requests a closed loop does: 2 500 / (pause + mean) a second.
fn by_delay(points: &[(f64, f64)]) -> Vec<Row> {
    const CLIENTS: f64 = 2500.0;
    points
        .iter()
        .flat_map(|&(d, mean)| {
            reps5(
                "epoll",
                &format!("d{d}ms"),
                &[
                    (column::CONNECTIONS, CLIENTS),
                    (column::DELAY_MS, d),
                    (column::MEAN_US, mean),
                    (
                        column::THROUGHPUT_RPS,
                        CLIENTS / ((d + mean / 1000.0) / 1000.0),
                    ),
                ],
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
    let c = judge(8, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(c.why.contains("is 250 → 125 ms: x10.00"), "{}", c.why);
    // Its most requests/s, 8 929 at 250 ms, and 30 ms unloaded put the knee there too.
    assert!(
        c.why.starts_with(
            "as a mechanism: confirmed (predicted 250 → 125 ms from capacity 8,929, \
             measured 250 → 125 ms); as a number: confirmed: "
        ),
        "{}",
        c.why
    );
    // A machine like this one: a knee where its own capacity puts it, not at 125 ms.
    let here = by_delay(&[
        (1000.0, 2000.0),
        (500.0, 1500.0),
        (250.0, 1200.0),
        (125.0, 1300.0),
        (50.0, 1600.0),
        (10.0, 20_000.0),
        (1.0, 29_000.0),
    ]);
    let c = judge(8, &here, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why
            .starts_with("as a mechanism: confirmed (predicted 50 → 10 ms from capacity ")
            && c.why
                .contains("; as a number: refuted: the first significant climb"),
        "{}",
        c.why
    );
    // A knee at 10-20 ms, as echolab's request-frequency data put it: refuted, located.
    let late = by_delay(&[
        (1000.0, 100.0),
        (250.0, 110.0),
        (125.0, 120.0),
        (50.0, 130.0),
        (10.0, 900.0),
        (1.0, 5000.0),
    ]);
    let c = judge(8, &late, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("is 50 → 10 ms"), "{}", c.why);
    assert!(c.why.contains("predicted 10 → 1 ms"), "{}", c.why);
    // Never saturated: no knee predicted and none found, against the report's number.
    let flat = by_delay(&[(1000.0, 100.0), (125.0, 110.0), (1.0, 130.0)]);
    let c = judge(8, &flat, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why.contains("as a number: refuted: no knee: not even x2"),
        "{}",
        c.why
    );
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
    let c = judge(8, &three, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(c.why.contains("n = 3"), "{}", c.why);
}
/// Repetitions 1..=`reps` of `model` holding every step up to `held` of `steps`; the
/// first repetition fails at the next step (the runner skips the rest), as a sweep does.
fn held_up_to(model: &str, held: f64, steps: &[f64], reps: u32) -> Vec<Row> {
    let mut rows = Vec::new();
    for &c in steps.iter().filter(|&&c| c <= held) {
        for rep in 1..=reps {
            rows.push(row(
                model,
                &format!("c{c}"),
                rep,
                Status::Ok,
                &[(column::CONNECTIONS, c)],
            ));
        }
    }
    if let Some(&next) = steps.iter().find(|&&c| c > held) {
        rows.push(failed(model, next));
    }
    rows
}

#[test]
fn claim_9_the_ranking_by_connections_held() {
    const STEPS: [f64; 3] = [1000.0, 5000.0, 19_000.0];
    let ranked = |epoll: f64, select: f64, threads: f64, reps: u32| -> Vec<Row> {
        [
            held_up_to("threads", threads, &STEPS, reps),
            held_up_to("select", select, &STEPS, reps),
            held_up_to("epoll", epoll, &STEPS, reps),
        ]
        .concat()
    };
    let c = by_rule(
        9,
        &ranked(19_000.0, 5000.0, 1000.0, 4),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    // This machine: select stops at 1 024 descriptors, threads and epoll at 19 000.
    let c = by_rule(
        9,
        &ranked(19_000.0, 1000.0, 19_000.0, 4),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why.starts_with(
            "the reverse of “select holds more connections than threads”, significantly: \
             select 1,000 against threads 19,000 (connections held): x0.05"
        ),
        "{}",
        c.why
    );
    assert!(c.why.contains("n = 4"), "{}", c.why);
    assert_eq!(
        c.numbers[3],
        "select failed at 5,000 connections: server refused 86 connections"
    );
    let c = by_rule(
        9,
        &ranked(19_000.0, 5000.0, 5000.0, 4),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(
        c.why
            .starts_with("no difference (p >= 0.05, or within x1.05): select holds more connections than threads"),
        "{}",
        c.why
    );
    // Two repetitions can never reach p < 0.05.
    let c = by_rule(
        9,
        &ranked(19_000.0, 5000.0, 1000.0, 2),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(c.why.starts_with("too few repetitions"), "{}", c.why);
}
