//! A claim left undecided by its repetitions is given more: `[claims] max_repetitions`
//! adds one round of every model at a time, appended to results.csv as any repetition,
//! and the claim is judged at the level of the looks the run planned.

use std::fs;

use echolab::claims::ClaimVerdict;
use echolab::experiment::orchestration::runner::ORDER_FILE;
use echolab::results::reader;

mod common;

/// Claim 13 (select answers faster than epoll) on a tiny loopback load: 1 repetition,
/// up to 3. One to three repetitions a side can never reach p < 0.05 (three against
/// three: 0.081 at best), so the claim is undecided after every look and the run goes
/// to its budget; the first two looks, which can call nothing, spend none of the level.
const CLAIM_13: &str = r#"
name = "claim-13"
models = ["select", "epoll"]
repetitions = 1
[claims]
max_repetitions = 3
[server]
workers = 1
[load]
size = 32
duration = "300ms"
rate = 1000
threads = 1
connect_timeout = "5s"
[sweep]
connections = [4]
"#;

#[test]
fn an_undecided_claim_runs_rounds_up_to_its_budget() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(tmp.path(), CLAIM_13);
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, common::QUIET_NO_REPORT);
    // Three rounds, each of both models at the same repetition: the two added ones
    // appended after the first.
    assert_eq!(rows.len(), 6, "{rows:?}");
    for (round, pair) in rows.chunks(2).enumerate() {
        let mut models: Vec<&str> = pair.iter().map(|r| r["model"].as_str()).collect();
        models.sort();
        assert_eq!(models, ["epoll", "select"], "{pair:?}");
        for r in pair {
            assert_eq!(r["repetition"], (round + 1).to_string(), "{r:?}");
            assert_eq!(r["status"], "ok", "{r:?}");
        }
    }
    let header = fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(header.matches("model,").count(), 1, "one header: {header}");
    let order = fs::read_to_string(out.join(ORDER_FILE)).unwrap();
    let repetitions: Vec<&str> = order
        .lines()
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(repetitions, ["repetition", "1", "2", "3"], "{order}");
    // Judged as the report judges it: one look that can call a difference, at 0.05,
    // still undecided, saying what a x1.05 difference would need.
    let results = reader::load(&out).unwrap();
    assert_eq!(results.manifest.status, "complete");
    assert_eq!(
        (
            results.manifest.repetitions,
            results.manifest.max_repetitions
        ),
        (1, Some(3))
    );
    assert_eq!(results.manifest.looks().count(), 1);
    let claim = echolab::report::judge_claim(13, &results.rows, &results.manifest);
    assert_eq!(claim.verdict, ClaimVerdict::Inconclusive, "{}", claim.why);
    assert!(claim.why.contains("n = 3"), "{}", claim.why);
    assert!(
        claim.why.contains("a x1.05 difference would need"),
        "{}",
        claim.why
    );
    // The report says at which level its claims were judged.
    let written = echolab::report::write_report(&out).unwrap();
    let md = fs::read_to_string(written.with_file_name("report.md")).unwrap();
    assert!(
        md.contains(
            "The run could add repetitions while a claim was undecided, up to 3: its claims \
             are judged at p < 0.05: of its looks only the last has the repetitions to reach it."
        ),
        "{md}"
    );
}

#[test]
fn a_scenario_that_judges_no_claim_adds_no_round_and_says_so() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let plain = CLAIM_13
        .replace("claim-13", "plain")
        .replace("max_repetitions = 3", "max_repetitions = 4");
    let scenario = common::write_scenario(tmp.path(), &plain);
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, common::QUIET_NO_REPORT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "warning: [claims] max_repetitions = 4 adds no repetitions here: no claim is \
             judged from this scenario's rows"
        ),
        "{stderr}"
    );
    let rows = common::results_rows(&out);
    let repetitions: Vec<&str> = rows.iter().map(|r| r["repetition"].as_str()).collect();
    assert_eq!(repetitions, ["1", "1"], "{rows:?}");
}

#[test]
fn the_budget_is_checked_against_the_repetitions() {
    let parse = |text: &str| echolab::scenario::parse("t", "t", text);
    let base = "models = [\"epoll\"]\nrepetitions = 3\n[load]\nrequests = 10\n";
    assert_eq!(parse(base).unwrap().max_repetitions, 3);
    let with = |claims: &str| format!("{base}[claims]\n{claims}\n");
    assert_eq!(
        parse(&with("max_repetitions = 5")).unwrap().max_repetitions,
        5
    );
    let below = parse(&with("max_repetitions = 2")).unwrap_err();
    assert!(
        format!("{below:#}").contains("max_repetitions = 2: from repetitions (3) to 1000"),
        "{below:#}"
    );
    let unknown = parse(&with("max_repetition = 5")).unwrap_err();
    assert!(
        format!("{unknown:#}").contains("unknown field"),
        "{unknown:#}"
    );
    let stairs = format!(
        "{}[staircase]\nbatch = 10\nevery = \"1s\"\nto = 20\n",
        with("max_repetitions = 5")
    );
    let refused = parse(&stairs).unwrap_err();
    assert!(
        format!("{refused:#}").contains("a [staircase] adds no repetitions"),
        "{refused:#}"
    );
}
