//! The claims of the classic study end to end: the built-in claim scenarios are
//! listed, scaled-down claims 1, 9, 16 and 18 run against real servers are judged
//! from their rows in the report's Claims section, and a scenario made of parts runs
//! each part into its own folder and judges them in one report (a part that cannot
//! run is "not run").

use std::fs;

#[path = "../common/mod.rs"]
mod common;

use common::ResultsRow;

mod profiles;
mod scaled;
mod shaped;

/// This file's runs write their report (the claims are judged there) without progress lines.
const QUIET: &[&str] = &["--quiet"];

/// (model, step, repetition, status) of each results.csv row, sorted: the runner
/// interleaves models and repetitions in rounds.
fn outcomes(rows: &[ResultsRow]) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r["model"].clone(),
                r["step"].clone(),
                r["repetition"].clone(),
                r["status"].clone(),
            )
        })
        .collect();
    v.sort();
    v
}

fn outcome(model: &str, step: &str, rep: u32, status: &str) -> (String, String, String, String) {
    (model.into(), step.into(), rep.to_string(), status.into())
}

/// Claim 9 scaled down: threads and select at 100 and 1100 connections, 4 repetitions.
const TINY_CLAIM_9: &str = r#"
name = "claim-9"
description = "Claim: epoll, then select, then threads. Test: threads and select at 100 and 1100."
models = ["threads", "select"]
repetitions = 4
step_timeout = "30s"
[server]
thread_stack = "64KiB"
[load]
size = 50
requests = 3
hold_together = "2s"
connect_rate = 10000
connect_timeout = "5s"
[sweep]
connections = [100, 1100]
[failure]
min_established = 1.0
min_concurrent = 1.0
"#;

#[test]
fn a_scaled_down_claim_9_shows_select_below_threads() {
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-9.toml");
    fs::write(&scenario, TINY_CLAIM_9).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    // select refuses fds >= 1024: it fails 1100 once and the runner skips the rest.
    let mut expected = Vec::new();
    for rep in 1..=4 {
        expected.push(outcome("select", "c100-s50", rep, "ok"));
        expected.push(outcome(
            "select",
            "c1100-s50",
            rep,
            if rep == 1 { "failed" } else { "skipped" },
        ));
        expected.push(outcome("threads", "c100-s50", rep, "ok"));
        expected.push(outcome("threads", "c1100-s50", rep, "ok"));
    }
    expected.sort();
    assert_eq!(outcomes(&rows), expected);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 9);
    assert!(
        row.starts_with(
            "| 9 | “our hypothesis is that multi threaded servers will be the least scalable, \
             with Epoll servers being the most and followed by Select servers being second.” \
             (000_14b4c3a438bf57e1.txt, Background (hypothesis); Observations, Max Clients; \
             Conclusion)<br>The report: "
        ),
        "{row}"
    );
    assert!(
        row.contains("| demonstration, not a test | the setup fixes the outcome: confirming"),
        "{row}"
    );
    assert!(
        row.ends_with(
            "; what the run showed: the reverse of “select holds more connections than threads”, \
             significantly: select 100 against threads 1,100 (connections held): x0.09 \
             (0.09–0.09), p = 0.013, n = 4 |"
        ),
        "{row}"
    );
    assert!(
        report.contains("- connections held: no finished repetition of epoll"),
        "{report}"
    );
}

/// Claim 16 scaled down: epoll at 40 and 45 connections of 100 messages each.
const TINY_CLAIM_16: &str = r#"
name = "claim-16"
description = "Claim: epoll finishes 40000 clients. Test: epoll at 40 and 45 clients."
models = ["epoll"]
step_timeout = "30s"
[load]
message = "Gary’s spamming"
requests = 100
connect_timeout = "5s"
[sweep]
connections = [40, 45]
[failure]
min_established = 1.0
max_error_rate = 0.0
"#;

#[test]
fn a_scaled_down_claim_16_is_confirmed_with_every_echo_counted() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-16.toml");
    fs::write(&scenario, TINY_CLAIM_16).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    // "Gary’s spamming" is 17 bytes (the apostrophe is three): 100 echoes per client.
    let counted = common::cells(
        &rows,
        ["status", "requests", "errors", "client_bytes_received"],
    );
    assert_eq!(
        counted,
        [["ok", "4000", "0", "68000"], ["ok", "4500", "0", "76500"],]
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 16);
    assert!(
        row.starts_with(
            "| 16 | “Increasing the number of clients further to 40000, we find that the \
             clients and server still finish successfully without any error.” \
             (002_87dc33d9ed75de88.txt, Test Case 10 (and 11: 45000))<br>The report: "
        ),
        "{row}"
    );
    assert!(
        row.ends_with(
            "| confirmed | epoll finished every client without an error up to 45 (1 \
             repetition at the top) |"
        ),
        "{row}"
    );
}

/// Claim 21 scaled down: select and epoll, 100 clients at a 10 ms pause for 6 s, 3
/// repetitions.
const TINY_CLAIM_21: &str = r#"
name = "claim-21"
description = "Claim: select's requests are steadier. Test: select and epoll, 100 clients."
models = ["select", "epoll"]
repetitions = 3
step_timeout = "30s"
[server]
workers = 1
[load]
connections = 100
size = 64
delay = "10ms"
duration = "6s"
connect_rate = 1000
connect_timeout = "5s"
"#;

#[test]
fn a_scaled_down_claim_21_measures_the_spread_of_each_runs_request_rate() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-21.toml");
    fs::write(&scenario, TINY_CLAIM_21).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let timeline = out.join(format!(
            "{}/c100-s64-d10ms/rep-{}/load/timeline.csv",
            r["model"], r["repetition"]
        ));
        let mut reader = csv::Reader::from_path(&timeline).unwrap();
        let per_second: Vec<f64> = reader
            .deserialize::<std::collections::HashMap<String, String>>()
            .map(|row| row.unwrap()["requests"].parse().unwrap())
            .collect();
        // Seconds 2 to the one before the last: sd / mean, to four decimals.
        let whole = &per_second[2..per_second.len() - 1];
        assert!(whole.len() >= 3, "{per_second:?}");
        let n = whole.len() as f64;
        let mean = whole.iter().sum::<f64>() / n;
        let sd = (whole.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert_eq!(
            common::number(r, "requests_per_s_cv"),
            (sd / mean * 1e4).round() / 1e4,
            "{per_second:?} {r:?}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 21);
    assert!(
        row.starts_with(
            "| 21 | “One thing to note is that the incoming requests for the select server are \
             comparably consistent than the epoll server.” (001_847778bf516bd6a1.txt, \
             Analysis, Case2)<br>The report: "
        ),
        "{row}"
    );
    assert!(row.contains("n = 3"), "{row}");
}

/// The row of the Claims table for claim `n` in report.md.
fn claims_row(report: &str, n: usize) -> &str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("| {n} | ")))
        .unwrap_or_else(|| panic!("no Claims row {n} in\n{report}"))
}
