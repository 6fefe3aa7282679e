//! Each claim's verdicts from hand-built rows: confirmed, refuted, inconclusive and
//! not run.

use std::collections::BTreeMap;

use super::*;

/// A row of `model` at `step`, repetition `rep`, with the given numeric columns.
fn row(model: &str, step: &str, rep: u32, status: Status, values: &[(&str, f64)]) -> Record {
    let numbers: BTreeMap<String, f64> = values.iter().map(|(c, v)| (c.to_string(), *v)).collect();
    Record {
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
fn reps(model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Record> {
    scaled_reps(&[0.9, 1.0, 1.1], model, step, values)
}

/// Five ok repetitions (0.9 to 1.1): enough for a comparison to be significant.
fn reps5(model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Record> {
    scaled_reps(&[0.9, 0.95, 1.0, 1.05, 1.1], model, step, values)
}

fn scaled_reps(scales: &[f64], model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Record> {
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

fn verdict(number: usize, rows: &[Record]) -> ClaimVerdict {
    verdict_with(number, rows, MachineLimits::default())
}

/// The verdict of claim `number`'s rule alone (a demonstration's or an untestable
/// claim's rule still decides what its numbers say).
fn rule(number: usize, rows: &[Record]) -> ClaimVerdict {
    let claim = by_rule(number, rows, MachineLimits::default());
    assert!(!claim.why.is_empty(), "claim {number} says why");
    claim.verdict
}

fn verdict_with(number: usize, rows: &[Record], limits: MachineLimits) -> ClaimVerdict {
    let claim = judge(number, rows, limits);
    assert!(!claim.why.is_empty(), "claim {number} says why");
    claim.verdict
}

fn held(model: &str, c: f64) -> Vec<Record> {
    reps(
        model,
        &format!("c{c}"),
        &[(column::CONNECTIONS, c), (column::MAX_CONCURRENT_SERVER, c)],
    )
}

fn failed(model: &str, c: f64) -> Record {
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
    for n in 1..=CLAIMS.len() {
        let c = judge(n, &[], MachineLimits::default());
        assert_eq!(c.verdict, ClaimVerdict::NotRun);
        assert_eq!(c.why, "no step of its scenario ran");
    }
    let rows = [row("node", "c10", 1, Status::NotRun, &[])];
    let c = judge(4, &rows, MachineLimits::default());
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::NotRun, "`node` is not installed here")
    );
    let mut too_few_fds = failed("epoll", 100_000.0);
    too_few_fds.failure_reason = "load generator exited 2: 100000 connections in one process \
        need 100064 file descriptors, but the limit is 1024 (hard limit 1024, RLIMIT_NOFILE)"
        .into();
    let c = judge(3, &[too_few_fds], MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NotRun);
    assert!(
        c.why
            .starts_with("this machine's limits stopped it: load generator"),
        "{}",
        c.why
    );
    assert_eq!(claim_of("claim-4"), Some(4));
    assert_eq!(claim_of("claim-19"), Some(19));
    assert_eq!(claim_of("claim-20"), Some(20));
    assert_eq!(claim_of("claim-21"), Some(21));
    assert_eq!(claim_of("claim-22"), None);
    assert_eq!(claim_of("quick"), None);
}

#[test]
fn claim_1_select_and_fd_setsize() {
    let mut rows = [held("select", 900.0), held("select", 1000.0)].concat();
    rows.push(failed("select", 1100.0));
    assert_eq!(verdict(1, &rows), ClaimVerdict::Confirmed);
    let c = judge(1, &rows, MachineLimits::default());
    assert_eq!(c.why, "select held 1,000 connections and failed at 1,100");
    assert!(c.numbers[0].contains("held in 3 of 3"), "{:?}", c.numbers);
    // A control that failed at the same step makes the machine the suspect.
    let mut with_control = rows.clone();
    with_control.push(failed("epoll", 1100.0));
    assert_eq!(verdict(1, &with_control), ClaimVerdict::Inconclusive);
    let served = [held("select", 900.0), held("select", 2000.0)].concat();
    assert_eq!(verdict(1, &served), ClaimVerdict::Refuted);
    assert_eq!(
        verdict(1, &held("select", 900.0)),
        ClaimVerdict::Inconclusive
    );
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
    no_thread
        .numbers
        .insert(column::SERVER_THREADS_MAX.into(), 16_118.0);
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
    no_thread
        .numbers
        .insert(column::SERVER_THREADS_MAX.into(), 3_000.0);
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
fn timed_with(scales: &[f64], model: &str, step: &str, mean_us: f64) -> Vec<Record> {
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

/// Five repetitions within 1 % of each other: tight enough to show "as fast".
const TIGHT: [f64; 5] = [0.99, 0.995, 1.0, 1.005, 1.01];

#[test]
fn claim_4_select_as_fast_as_epoll() {
    let steps = ["c250-d1ms", "c1000-d1ms"];
    let both = |scales: &[f64], select: f64, epoll: f64| -> Vec<Record> {
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
    let both = |epoll: f64, select: f64| -> Vec<Record> {
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

/// Steps of claim 6 at 10 ms: (clients, mean µs, throughput).
fn doublings(points: &[(f64, f64, f64)]) -> Vec<Record> {
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
    // Three repetitions can never be significant: a doubling is undecided, with p and n.
    let three: Vec<Record> = [(500.0, 100.0), (1000.0, 200.0)]
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

fn sized(model: &str, size: f64, ok: bool) -> Vec<Record> {
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

fn by_delay(points: &[(f64, f64)]) -> Vec<Record> {
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
    let c = judge(8, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
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
    let c = judge(8, &late, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("is 50 → 10 ms"), "{}", c.why);
    let flat = by_delay(&[(1000.0, 100.0), (125.0, 110.0), (1.0, 130.0)]);
    assert_eq!(verdict(8, &flat), ClaimVerdict::Refuted);
    // Three repetitions cannot locate anything.
    let three: Vec<Record> = [(250.0, 100.0), (125.0, 1000.0)]
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

#[test]
fn spreads_and_tests() {
    let s = spread(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 10.0, 4));
    assert_eq!(spread(vec![]), None);
    let sections = section(&[Claim::not_run(3, "not root")], |_| None);
    assert_eq!(sections[0].id, "claims");
    assert_eq!(sections[1].heading, "Claim 3: not run");
}

/// Where the five reports are: `ECHOLAB_SEEDS`, else shared/seeds beside the checkout.
/// None when that folder is absent, after a visible SKIPPED line; under CI (which has
/// the reports beside its checkout) an absent folder fails instead, as
/// tests/common/skip.rs does for the integration tests.
fn seeds(test: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("ECHOLAB_SEEDS").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds"),
        std::path::PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "False"));
    let reason = format!(
        "the reports are not at {} (set ECHOLAB_SEEDS=DIR to point at them)",
        dir.display()
    );
    assert!(
        !ci,
        "{test} cannot run: {reason}; under CI=true no test may be skipped"
    );
    // Straight to stderr: the harness captures eprintln! of a passing test.
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("SKIPPED {test}: {reason}\n").as_bytes());
    None
}

/// Every claim's quote is its report's own words: found verbatim (spacing aside) in
/// its file in shared/seeds; a quote made of quoted fragments has each fragment there.
#[test]
fn every_quote_is_found_in_its_report() {
    let Some(seeds) = seeds("every_quote_is_found_in_its_report") else {
        return;
    };
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for (i, c) in CLAIMS.iter().enumerate() {
        let text = std::fs::read_to_string(seeds.join(c.file))
            .unwrap_or_else(|e| panic!("claim {}: {}: {e}", i + 1, c.file));
        let text = words(&text);
        let fragments: Vec<&str> = if c.quote.contains('"') {
            c.quote.split('"').skip(1).step_by(2).collect()
        } else {
            vec![c.quote]
        };
        for f in fragments {
            assert!(
                text.contains(&words(f)),
                "claim {}: {f:?} is not in {}",
                i + 1,
                c.file
            );
        }
    }
}

/// Each claim's scenario cites its report's file, and its declaration states a test and
/// how echolab's setup differs from the report's.
#[test]
fn every_claim_scenario_cites_its_report_and_every_claim_says_how_it_differs() {
    use crate::scenario::{parse, BUILTIN};
    for (i, c) in CLAIMS.iter().enumerate() {
        let name = format!("claim-{}", i + 1);
        let text = BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
        let s = parse(&name, &name, text).unwrap();
        assert!(
            s.description.contains(c.file),
            "{name} does not cite {}",
            c.file
        );
        assert!(
            !c.test.is_empty() && !c.differs.is_empty(),
            "claim {}",
            i + 1
        );
    }
}

/// Repetitions 1..=`reps` of `model` holding every step up to `held` of `steps`; the
/// first repetition fails at the next step (the runner skips the rest), as a sweep does.
fn held_up_to(model: &str, held: f64, steps: &[f64], reps: u32) -> Vec<Record> {
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
    let ranked = |epoll: f64, select: f64, threads: f64, reps: u32| -> Vec<Record> {
        [
            held_up_to("threads", threads, &STEPS, reps),
            held_up_to("select", select, &STEPS, reps),
            held_up_to("epoll", epoll, &STEPS, reps),
        ]
        .concat()
    };
    let c = judge(
        9,
        &ranked(19_000.0, 5000.0, 1000.0, 4),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    // This machine: select stops at 1 024 descriptors, threads and epoll at 19 000.
    let c = judge(
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
    let c = judge(
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
    let c = judge(
        9,
        &ranked(19_000.0, 5000.0, 1000.0, 2),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(c.why.starts_with("too few repetitions"), "{}", c.why);
}

/// Five repetitions of each (model, value) on column `c`.
fn five(c: &'static str, values: &[(&str, f64)]) -> Vec<Record> {
    values
        .iter()
        .flat_map(|&(m, v)| reps5(m, "c1000", &[(column::CONNECTIONS, 1000.0), (c, v)]))
        .collect()
}

#[test]
fn claim_10_epoll_slower_per_request() {
    let m = column::MEAN_US;
    let report = five(
        m,
        &[("threads", 363.0), ("select", 460.0), ("epoll", 1197.0)],
    );
    let c = judge(10, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll 1.20 ms against threads 363 µs (mean response time): x3.30 (2.85–3.82), \
         p = 0.012, n = 5"
    );
    let faster = five(
        m,
        &[("threads", 400.0), ("select", 460.0), ("epoll", 200.0)],
    );
    assert_eq!(verdict(10, &faster), ClaimVerdict::Refuted);
    let same = five(
        m,
        &[("threads", 400.0), ("select", 300.0), ("epoll", 400.0)],
    );
    let c = judge(10, &same, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(c.why.contains("p = 1.00, n = 5"), "{}", c.why);
    assert!(c.why.contains("; held: epoll higher"), "{}", c.why);
    // A model that never finished: nothing to compare.
    let missing = five(m, &[("threads", 400.0), ("epoll", 900.0)]);
    assert_eq!(verdict(10, &missing), ClaimVerdict::Inconclusive);
}

#[test]
fn claim_11_threads_takes_the_most_cpu() {
    let cpu = column::SERVER_CPU_PCT;
    let report = five(
        cpu,
        &[("threads", 93.25), ("select", 29.5), ("epoll", 12.33)],
    );
    assert_eq!(verdict(11, &report), ClaimVerdict::Confirmed);
    let cheap = five(
        cpu,
        &[("threads", 20.0), ("select", 29.5), ("epoll", 12.33)],
    );
    assert_eq!(verdict(11, &cheap), ClaimVerdict::Refuted);
    let same = five(cpu, &[("threads", 30.0), ("select", 30.0), ("epoll", 30.0)]);
    assert_eq!(verdict(11, &same), ClaimVerdict::NoDifference);
}

#[test]
fn claim_12_select_takes_the_least_memory() {
    let rss = column::SERVER_RSS_MAX_BYTES;
    let report = five(
        rss,
        &[("threads", 1.825e9), ("select", 1.4e9), ("epoll", 2.651e9)],
    );
    assert_eq!(verdict(12, &report), ClaimVerdict::Confirmed);
    let epoll_less = five(rss, &[("threads", 30e6), ("select", 4e6), ("epoll", 3e6)]);
    let c = judge(12, &epoll_less, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why
            .contains("the reverse of “select lower server memory (peak RSS) than epoll”, significantly: select 3.81 MiB"),
        "{}",
        c.why
    );
    // Select 3 % below epoll in every repetition is significant but within x1.05: no
    // difference, not a confirmation.
    let close: Vec<Record> = [("threads", 30e6), ("select", 3.88e6), ("epoll", 4e6)]
        .iter()
        .flat_map(|&(m, v)| {
            scaled_reps(
                &TIGHT,
                m,
                "c1000",
                &[(column::CONNECTIONS, 1000.0), (rss, v)],
            )
        })
        .collect();
    let c = judge(12, &close, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(
        c.why.contains("x0.97") && c.why.contains("p = 0.012"),
        "{}",
        c.why
    );
    let same = five(rss, &[("threads", 4e6), ("select", 4e6), ("epoll", 4e6)]);
    assert_eq!(verdict(12, &same), ClaimVerdict::NoDifference);
}

#[test]
fn claim_13_select_faster_for_300_busy_clients() {
    let m = column::MEAN_US;
    assert_eq!(
        verdict(13, &five(m, &[("select", 9119.0), ("epoll", 15214.0)])),
        ClaimVerdict::Confirmed
    );
    assert_eq!(
        verdict(13, &five(m, &[("select", 900.0), ("epoll", 600.0)])),
        ClaimVerdict::Refuted
    );
    assert_eq!(
        verdict(13, &five(m, &[("select", 900.0), ("epoll", 900.0)])),
        ClaimVerdict::NoDifference
    );
}

#[test]
fn claim_14_epoll_scaled_out_beats_select_on_all_aspects() {
    let both = |select: (f64, f64), one: (f64, f64), two: (f64, f64)| -> Vec<Record> {
        [("select", select), ("epoll", one), ("epoll-2w", two)]
            .iter()
            .flat_map(|&(m, (tput, mean))| {
                reps5(
                    m,
                    "c256-d0.1ms",
                    &[(column::THROUGHPUT_RPS, tput), (column::MEAN_US, mean)],
                )
            })
            .collect()
    };
    let c = judge(
        14,
        &both((50e3, 500.0), (48e3, 520.0), (80e3, 300.0)),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[2].starts_with("the second worker: epoll-2w 80,000 req/s against epoll 48,000"),
        "{:?}",
        c.numbers
    );
    // Faster but not quicker to answer: not "on all aspects".
    let c = judge(
        14,
        &both((50e3, 500.0), (48e3, 520.0), (80e3, 500.0)),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert_eq!(
        verdict(14, &both((50e3, 500.0), (48e3, 520.0), (40e3, 600.0))),
        ClaimVerdict::Refuted
    );
}

#[test]
fn claim_15_a_second_worker_thread() {
    let t = column::THROUGHPUT_RPS;
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 90e3)])),
        ClaimVerdict::Confirmed
    );
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 30e3)])),
        ClaimVerdict::Refuted
    );
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 50e3)])),
        ClaimVerdict::NoDifference
    );
}

#[test]
fn claim_16_epoll_at_40_000_and_45_000_clients() {
    let ok = [held("epoll", 40_000.0), held("epoll", 45_000.0)].concat();
    let c = judge(16, &ok, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll finished every client without an error up to 45,000 (3 repetitions at the top)"
    );
    let mut broke = held("epoll", 40_000.0);
    broke.push(failed("epoll", 45_000.0));
    let c = judge(16, &broke, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll failed at 45,000 clients in every repetition: server refused 86 connections"
    );
    let mut mixed = held("epoll", 40_000.0);
    mixed.push(failed("epoll", 40_000.0));
    assert_eq!(verdict(16, &mixed), ClaimVerdict::Inconclusive);
}

/// A staircase of `stairs` stairs of 1 000, three repetitions, with the MiB/s of each.
fn staircase(mib_s: impl Fn(f64) -> f64) -> Vec<Record> {
    (1..=3)
        .flat_map(|rep| {
            let mib_s = &mib_s;
            (1..=10).map(move |stair| {
                let c = stair as f64 * 1000.0;
                row(
                    "epoll",
                    &format!("c{c}"),
                    rep,
                    Status::Ok,
                    &[
                        (column::CONNECTIONS, c),
                        (column::STAIR, stair as f64),
                        (column::THROUGHPUT_MIB_S, mib_s(c) + rep as f64 * 0.01),
                    ],
                )
            })
        })
        .collect()
}

#[test]
fn claim_17_more_connections_no_more_speed() {
    let limited = staircase(|_| 2.86);
    let c = judge(17, &limited, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why.starts_with(
            "more connections did not raise the speed: the ratio's whole interval lies \
             within x1.05: above 5,000 2.88 MiB/s against up to 5,000 2.88 MiB/s (echo \
             throughput): x1.00"
        ),
        "{}",
        c.why
    );
    assert_eq!(
        c.numbers[0],
        "1,000 connections: median 2.88 MiB/s over 3 reps"
    );
    assert!(c.why.ends_with("; within the x1.05 threshold"), "{}", c.why);
    // Stairs too scattered to show either growth or a level: no difference, not confirmed.
    let scattered = staircase(|c| [1.0, 2.86, 5.0][(c / 1000.0) as usize % 3]);
    let c = judge(17, &scattered, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(
        c.why.starts_with("no growth shown and no limit shown"),
        "{}",
        c.why
    );
    // Slower at the top: a limit shown.
    let falling = staircase(|c| 20.0 - c / 1000.0);
    assert_eq!(verdict(17, &falling), ClaimVerdict::Confirmed);
    let growing = staircase(|c| c / 1000.0);
    let c = judge(17, &growing, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("p < 0.001, n = 15"), "{}", c.why);
}

/// Five repetitions at each delay with `retrans` retransmitted segments.
fn retransmissions(points: &[(f64, f64)]) -> Vec<Record> {
    points
        .iter()
        .flat_map(|&(d, retrans)| {
            reps5(
                "epoll",
                &format!("d{d}ms"),
                &[
                    (column::DELAY_MS, d),
                    (column::NET_RETRANS_SEGS, retrans),
                    (column::NET_SEGS_IN_PER_S, 15_000.0),
                ],
            )
        })
        .collect()
}

#[test]
fn claim_18_retransmissions_at_short_delays() {
    let report = retransmissions(&[(1000.0, 10.0), (250.0, 10.0), (125.0, 400.0), (1.0, 900.0)]);
    let c = by_rule(18, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "delay 1000 ms: retransmitted segments median 10, segments in 15,000/s"
    );
    // Loopback in a namespace: no retransmission at any delay.
    let none = retransmissions(&[(1000.0, 0.0), (250.0, 0.0), (125.0, 0.0), (1.0, 0.0)]);
    let c = by_rule(18, &none, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(c.why.contains("p = 1.00, n = 10"), "{}", c.why);
    assert!(!c.numbers.iter().any(|n| n.contains("whole machine")));
    // Without a namespace of its own the counters are the machine's, and it says so.
    let mut host = none.clone();
    for r in &mut host {
        r.raw.insert(column::NET_SCOPE.into(), "host".into());
    }
    let c = by_rule(18, &host, MachineLimits::default());
    assert_eq!(
        c.numbers.last().map(String::as_str),
        Some("the counters are the whole machine's (net_scope host): other traffic counts too")
    );
    let fewer = retransmissions(&[(1000.0, 500.0), (250.0, 400.0), (125.0, 10.0), (1.0, 10.0)]);
    assert_eq!(rule(18, &fewer), ClaimVerdict::Refuted);
    // Reported: this machine cannot test it (no link here whose queue overflows); the
    // counts are listed all the same.
    let c = judge(18, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Untestable);
    assert!(c
        .why
        .starts_with("retransmissions need a link whose queue overflows"));
    assert_eq!(c.numbers.len(), 5, "{:?}", c.numbers);
}

#[test]
fn claim_19_epoll_keeps_20_000_clients_connected() {
    let counts = [2500.0, 5000.0, 7500.0, 10_000.0, 20_000.0];
    let all: Vec<Record> = counts.iter().flat_map(|&c| held("epoll", c)).collect();
    let c = judge(19, &all, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll finished every client without an error up to 20,000 (3 repetitions at the top)"
    );
    assert_eq!(c.numbers.len(), 5);
    let mut short: Vec<Record> = counts[..4].iter().flat_map(|&c| held("epoll", c)).collect();
    short.push(failed("epoll", 20_000.0));
    assert_eq!(verdict(19, &short), ClaimVerdict::Refuted);
}

/// The minutes of an `expected_duration` written "about N minutes" (or "about 1 minute").
fn minutes(expected: &str) -> u32 {
    let n = expected
        .strip_prefix("about ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{expected:?} is not \"about N minutes\""));
    n.parse().unwrap()
}

#[test]
fn classic_judges_every_claim_in_at_most_an_hour_with_at_least_3_repetitions() {
    use crate::scenario::{parse, BUILTIN};
    let builtin = |name: &str| {
        let text = BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
        parse(name, name, text).unwrap()
    };
    let classic = builtin("classic");
    let mut judged = Vec::new();
    let mut total = 0;
    for part in &classic.parts {
        let s = builtin(&part.name);
        assert!(
            s.repetitions >= 3,
            "{} runs {} repetitions",
            s.name,
            s.repetitions
        );
        total += minutes(s.expected_duration.as_deref().unwrap());
        judged.extend(claims_of(&s.name));
    }
    judged.sort();
    assert_eq!(judged, (1..=CLAIMS.len()).collect::<Vec<_>>());
    assert!(
        total <= 60,
        "the parts' expected durations add up to {total} minutes"
    );
    assert_eq!(
        classic.expected_duration.as_deref(),
        Some(format!("about {total} minutes").as_str())
    );
    assert_eq!(claims_of("claim-6"), [6, 19, 20]);
    assert_eq!(claims_of("claim-19"), [19]);
    assert!(claims_of("quick").is_empty());
}

/// Five repetitions of epoll at `clients` whose last tenth to join took `last` µs on
/// average and the tenth before `ninth`.
fn by_join_order(clients: f64, last: f64, ninth: f64) -> Vec<Record> {
    reps5(
        "epoll",
        &format!("c{clients}"),
        &[
            (column::CONNECTIONS, clients),
            (column::JOINED_LAST_TENTH_MEAN_US, last),
            (column::JOINED_NINTH_TENTH_MEAN_US, ninth),
        ],
    )
}

#[test]
fn claim_20_the_last_clients_to_join() {
    // A jump at the end of the order, judged at the most clients.
    let mut rows = by_join_order(2500.0, 1_000.0, 1_000.0);
    rows.extend(by_join_order(20000.0, 30_000.0, 10_000.0));
    let c = judge(20, &rows, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[1].starts_with("20,000 clients: last tenth to join 30"),
        "{:?}",
        c.numbers
    );
    assert!(c.numbers[2].contains("x3.00"), "{:?}", c.numbers);
    // Slower, significantly, but only as growth along the order would be.
    let linear = by_join_order(20000.0, 13_000.0, 10_000.0);
    let c = judge(20, &linear, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("by x1.30"), "{}", c.why);
    // The last tenth no slower: no difference, with p.
    let flat = [by_join_order(20000.0, 10_000.0, 10_000.0)].concat();
    assert_eq!(verdict(20, &flat), ClaimVerdict::NoDifference);
    // Rows without the join order (a run before these columns): inconclusive, said so.
    let old = reps5("epoll", "c20000", &[(column::CONNECTIONS, 20000.0)]);
    let c = judge(20, &old, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
    assert!(c.why.starts_with("no step finished with"), "{}", c.why);
}

#[test]
fn claim_21_select_steadier_than_epoll() {
    let spread = |model: &str, cv: f64| reps5(model, "c1000", &[(column::REQUESTS_PER_S_CV, cv)]);
    let steadier = [spread("select", 0.05), spread("epoll", 0.20)].concat();
    let c = judge(21, &steadier, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0].starts_with("select 0.050 against epoll 0.200"),
        "{:?}",
        c.numbers
    );
    let rougher = [spread("select", 0.20), spread("epoll", 0.05)].concat();
    assert_eq!(verdict(21, &rougher), ClaimVerdict::Refuted);
    let level = [spread("select", 0.10), spread("epoll", 0.10)].concat();
    assert_eq!(verdict(21, &level), ClaimVerdict::NoDifference);
}
