//! Each claim's verdicts from hand-built rows: confirmed, refuted, inconclusive and
//! not run.

mod claims_10_to_21;
mod claims_1_to_9;
mod claims_22_on;
mod claims_24_on;
mod claims_33_on;

use super::*;

/// A row of `model` at `step`, repetition `rep`, with the given numeric columns.
fn row(model: &str, step: &str, rep: u32, status: Status, values: &[(&str, f64)]) -> Row {
    let row = Row {
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
        ..Row::default()
    };
    values.iter().fold(row, |row, (c, v)| row.with(c, *v))
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
                    column::CONNECTIONS
                    | column::DELAY_MS
                    | column::SIZE
                    | column::CLIENT_HOSTS => (*c, *v),
                    _ => (*c, v * k),
                })
                .collect();
            row(model, step, i as u32 + 1, Status::Ok, &scaled)
        })
        .collect()
}

/// The same rows with repetition `rep` of `model` marked generator-bound.
fn bound(mut rows: Vec<Row>, model: &str, rep: u32) -> Vec<Row> {
    for r in rows
        .iter_mut()
        .filter(|r| r.model == model && r.repetition == rep)
    {
        r.generator_bound = Some(true);
    }
    rows
}

fn verdict(number: usize, rows: &[Row]) -> ClaimVerdict {
    verdict_with(number, rows, MachineLimits::default())
}

/// The verdict of claim `number`'s rule alone (a demonstration's or an untestable
/// claim's rule still decides what its numbers say).
fn rule(number: usize, rows: &[Row]) -> ClaimVerdict {
    let claim = by_rule(number, rows, MachineLimits::default());
    assert!(!claim.why.is_empty(), "claim {number} says why");
    claim.verdict
}

fn verdict_with(number: usize, rows: &[Row], limits: MachineLimits) -> ClaimVerdict {
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

/// Five repetitions within 1 % of each other: tight enough to show "as fast".
const TIGHT: [f64; 5] = [0.99, 0.995, 1.0, 1.005, 1.01];

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
    assert_eq!(claim_of("claim-23"), Some(23));
    assert_eq!(claim_of("claim-24"), Some(24));
    assert_eq!(claim_of("claim-32"), Some(32));
    assert_eq!(claim_of(&format!("claim-{}", CLAIMS.len() + 1)), None);
    assert_eq!(claim_of("quick"), None);
}

#[test]
fn spreads_and_tests() {
    let s = over_repetitions(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 10.0, 4));
    assert_eq!(over_repetitions(vec![]), None);
    let sections = section(&[Claim::not_run(3, "not root")], |_| None);
    assert_eq!(sections[0].id, "claims");
    assert_eq!(sections[1].heading, "Claim 3: not run");
}

/// The claims whose setup fixes their outcome: each judged "demonstration, not a
/// test", its reason first and then what its rule made of the run.
const DEMONSTRATIONS: [usize; 11] = [1, 7, 9, 17, 18, 29, 30, 31, 32, 40, 42];

#[test]
fn a_demonstration_is_labelled_with_its_reason_whatever_its_rows_show() {
    for (i, c) in CLAIMS.iter().enumerate() {
        let n = i + 1;
        let declared = matches!(c.kind, Kind::Demonstration(_));
        assert_eq!(declared, DEMONSTRATIONS.contains(&n), "claim {n}");
    }
    // Rows its rule confirms and rows it refutes: the label and the reason either way.
    for n in DEMONSTRATIONS {
        let Kind::Demonstration(reason) = CLAIMS[n - 1].kind else {
            unreachable!()
        };
        assert!(reason.starts_with("the setup fixes the outcome: "), "{n}");
        let rows = [held("select", 900.0), held("select", 2000.0)].concat();
        let c = judge(n, &rows, MachineLimits::default());
        assert_eq!(c.verdict, ClaimVerdict::Demonstration, "claim {n}");
        assert!(
            c.why
                .starts_with(&format!("{reason}; what the run showed: ")),
            "{}",
            c.why
        );
    }
    let refuted = [held("select", 900.0), held("select", 2000.0)].concat();
    assert_eq!(rule(1, &refuted), ClaimVerdict::Refuted);
    let c = judge(1, &refuted, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Demonstration);
    assert!(c
        .why
        .ends_with("select held 2,000 connections, above FD_SETSIZE"));
}

/// Each claim that is a test, and the unit test whose rows reach both its outcomes:
/// "confirmed", and "refuted" or "no difference" (a rule that could reach only one
/// would be a demonstration, and is declared one).
const EITHER_WAY: [(usize, &str); 42] = [
    (2, "claim_2_threads_against_the_thread_and_fd_limits"),
    (3, "claim_3_epoll_at_100_000"),
    (4, "claim_4_select_as_fast_as_epoll"),
    (5, "claim_5_epoll_faster_on_short_connections"),
    (6, "claim_6_doubling_the_clients"),
    (8, "claim_8_the_knee_over_the_delay_sweep"),
    (10, "claim_10_epoll_slower_per_request"),
    (11, "claim_11_threads_takes_the_most_cpu"),
    (12, "claim_12_select_takes_the_least_memory"),
    (13, "claim_13_select_faster_for_300_busy_clients"),
    (14, "claim_14_epoll_scaled_out_beats_select_on_all_aspects"),
    (15, "claim_15_a_second_worker_thread"),
    (16, "claim_16_epoll_at_40_000_and_45_000_clients"),
    (19, "claim_19_epoll_keeps_20_000_clients_connected"),
    (20, "claim_20_the_last_clients_to_join"),
    (21, "claim_21_select_steadier_than_epoll"),
    (22, "claim_22_the_gap_closes_as_requests_come_more_often"),
    (23, "claim_23_the_packet_rate_levels_off_from_5000_clients"),
    (
        24,
        "claim_24_epoll_answers_the_most_requests_then_threads_then_select",
    ),
    (25, "claim_25_the_time_rises_as_client_hosts_are_added"),
    (26, "claim_26_the_rate_drops_at_20000_connections"),
    (27, "claim_27_threads_pin_their_core"),
    (28, "claim_28_epoll_saves_cpu_time_per_request"),
    (
        33,
        "claim_33_threads_fails_by_the_12_000_connections_of_four_hosts",
    ),
    (34, "claim_34_select_sustains_at_least_1_000_connections"),
    (35, "claim_35_threads_holds_more_connections_than_select"),
    (36, "claim_36_only_epoll_holds_the_most_connections"),
    (37, "claim_37_threads_slows_with_the_connections"),
    (
        38,
        "claim_38_threads_slows_more_than_epoll_with_the_connections",
    ),
    (
        39,
        "claim_39_errors_and_rejected_connections_are_high_on_claim_17s_load",
    ),
    (
        41,
        "claim_41_the_whole_transfer_takes_longer_at_10_000_clients",
    ),
    (
        43,
        "claim_43_no_significant_difference_between_500_and_250_ms",
    ),
    (44, "claim_44_50_ms_is_a_faster_test_than_125_ms"),
    (45, "claim_45_only_1_ms_completes_within_30_s"),
    (46, "claim_46_more_retransmissions_at_1_ms_than_at_1000_ms"),
    (
        47,
        "claim_47_threads_faster_only_while_the_requests_are_small",
    ),
    (
        48,
        "claim_48_threads_stops_before_10_000_connections_of_1_b",
    ),
    (
        49,
        "claim_49_threads_stops_before_10_000_connections_of_1_kib",
    ),
    (
        50,
        "claim_50_over_a_minute_before_epoll_answered_every_connection_of_1_b",
    ),
    (
        51,
        "claim_51_epoll_rejects_connections_of_1_kib_again_and_again",
    ),
    (52, "claim_52_threads_throughput_collapses_on_the_staircase"),
    (
        53,
        "claim_53_epoll_accepts_80_000_connections_from_claim_3s_rows",
    ),
];

#[test]
fn every_test_claim_has_a_unit_test_reaching_both_outcomes() {
    let sources = [
        include_str!("claims_1_to_9.rs"),
        include_str!("claims_10_to_21.rs"),
        include_str!("claims_22_on.rs"),
        include_str!("claims_24_on.rs"),
        include_str!("claims_33_on.rs"),
    ]
    .concat();
    let tests: Vec<usize> = EITHER_WAY.iter().map(|(n, _)| *n).collect();
    let declared: Vec<usize> = (1..=CLAIMS.len())
        .filter(|&n| CLAIMS[n - 1].kind == Kind::Test)
        .collect();
    assert_eq!(tests, declared);
    for (n, name) in EITHER_WAY {
        let start = sources
            .find(&format!("#[test]\nfn {name}() {{"))
            .unwrap_or_else(|| panic!("claim {n}: no test {name}"));
        let body = &sources[start..];
        let body = &body[..body.find("\n}\n").unwrap()];
        // As rustfmt lays it out: `judged(39, ...)` may break after its parenthesis.
        let unbroken: String = body.split_whitespace().collect();
        assert!(
            unbroken.contains(&format!("({n},")),
            "{name} judges claim {n}"
        );
        assert!(
            body.contains("ClaimVerdict::Confirmed"),
            "{name} reaches no confirmation"
        );
        assert!(
            body.contains("ClaimVerdict::Refuted") || body.contains("ClaimVerdict::NoDifference"),
            "{name} reaches neither a refutation nor no difference"
        );
    }
}

/// Where the five sources are: `ECHOLAB_SEEDS`, else shared/seeds beside the checkout.
/// None when that folder is absent, after a visible SKIPPED line; under CI (which has
/// the sources beside its checkout) an absent folder fails instead (`sys::skip_test`).
fn seeds(test: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("ECHOLAB_SEEDS").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds"),
        std::path::PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    let reason = format!(
        "the sources are not at {} (set ECHOLAB_SEEDS=DIR to point at them)",
        dir.display()
    );
    crate::sys::skip_test(test, &reason);
    None
}

/// Every claim's quote is its source's own words: found verbatim (spacing aside) in
/// its file in shared/seeds; a quote made of quoted fragments has each fragment there.
#[test]
fn every_quote_is_found_in_its_source() {
    let Some(seeds) = seeds("every_quote_is_found_in_its_source") else {
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

/// Each claim's scenario cites its source's file, and its declaration states a test and
/// how echolab's setup differs from the source's.
#[test]
fn every_claim_scenario_cites_its_source_and_every_claim_says_how_it_differs() {
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

/// The minutes of an `expected_duration` written "about N minutes" (or "about 1 minute").
fn minutes(expected: &str) -> u32 {
    let n = expected
        .strip_prefix("about ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{expected:?} is not \"about N minutes\""));
    n.parse().unwrap()
}

/// The most minutes classic's parts may add up to: it must stay under 90 on this
/// machine, with room for a change adding up to 15.
const CLASSIC_MINUTES: u32 = 75;

#[test]
fn classic_judges_every_claim_in_at_most_75_minutes_with_at_least_3_repetitions() {
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
        total <= CLASSIC_MINUTES,
        "the parts' expected durations add up to {total} minutes"
    );
    assert_eq!(
        minutes(classic.expected_duration.as_deref().unwrap()),
        total
    );
    assert_eq!(claims_of("claim-6"), [6, 19, 20, 23, 29, 40, 41]);
    assert_eq!(claims_of("claim-19"), [19]);
    assert_eq!(claims_of("claim-48"), [48, 49, 50, 51]);
    assert_eq!(claims_of("claim-3"), [3, 53]);
    assert!(claims_of("quick").is_empty());
}
