//! The generator self-check: every step records its load generator's CPU, a saturated
//! generator flags the step "generator-bound", and the verdict then names no winner among
//! models within the step's spread.

use std::fs;
use std::path::{Path, PathBuf};

use echolab::results::{column, generator_bound};
use echolab::run::write_report;

mod common;
use common::{copy_dir, edit_results_csv, read_results_csv, ResultsRow};

/// The small results fixture with the two self-check columns appended: every row gets
/// `load_cpu` and `bound`; epoll's two repetitions at 4000 connections get 54,600 and
/// 56,200 req/s (mean 55,400, spread 1,600), 100 req/s from uring's mean of 55,500.
fn fixture(tmp: &Path, load_cpu: &str, bound: &str) -> PathBuf {
    let columns = [column::LOAD_CPU_PCT, column::GENERATOR_BOUND];
    let dir = fixture_with(tmp, &columns, |_| vec![load_cpu.into(), bound.into()]);
    for (repetition, rps) in [("1", "54600"), ("2", "56200")] {
        edit_results_csv(
            &dir.join("results.csv"),
            |row| {
                row[column::MODEL] == "epoll"
                    && row[column::CONNECTIONS] == "4000"
                    && row[column::REPETITION] == repetition
            },
            &[(column::THROUGHPUT_RPS, rps)],
        );
    }
    dir
}

/// The small results fixture with `columns` appended: `cells` gives each row's values
/// for them, seeing the row by column name.
fn fixture_with(
    tmp: &Path,
    columns: &[&str],
    cells: impl Fn(&ResultsRow) -> Vec<String>,
) -> PathBuf {
    let dir = tmp.join("results");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small"),
        &dir,
    );
    let results = dir.join("results.csv");
    let (header, rows) = read_results_csv(&results);
    let mut writer = csv::Writer::from_path(&results).unwrap();
    writer
        .write_record(
            header
                .iter()
                .map(String::as_str)
                .chain(columns.iter().copied()),
        )
        .unwrap();
    for row in &rows {
        let appended = cells(row);
        assert_eq!(appended.len(), columns.len());
        let kept = header.iter().map(|h| row[h].clone());
        writer.write_record(kept.chain(appended)).unwrap();
    }
    writer.flush().unwrap();
    dir
}

fn report(dir: &Path) -> String {
    write_report(dir).unwrap();
    fs::read_to_string(dir.join("report.md")).unwrap()
}

#[test]
fn a_generator_bound_step_declares_no_winner_within_its_spread() {
    let tmp = tempfile::tempdir().unwrap();
    let md = report(&fixture(tmp.path(), "195.0", "true"));
    // Every repetition generator-bound: each is left out in turn, and two repetitions
    // a model could never decide anyway (2 against 2 apart: p = 0.25 at best).
    let row = "| Throughput | connections=4000 | no difference: p = 1.00, n = 2 | — | — | — | — | 10 generator-bound repetition(s), each left out in turn |";
    assert!(md.contains(row), "verdict lacks {row}:\n{md}");
    assert!(md.contains(
        "At connections=4000, no model served significantly more than every other (no difference: p = 1.00, n = 2 (10 generator-bound repetition(s), each left out in turn)): no winner is declared."
    ), "{md}");
    assert!(
        md.contains("Generator-bound: in "),
        "no generator-bound note:\n{md}"
    );
    assert!(
        md.contains("| generator-bound |"),
        "no marker in the steps table"
    );
}

#[test]
fn a_step_with_headroom_is_not_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let md = report(&fixture(tmp.path(), "120.0", "false"));
    // Nothing left out; two repetitions still decide nothing.
    let row =
        "| Throughput | connections=4000 | no difference: p = 1.00, n = 2 | — | — | — | — | — |";
    assert!(md.contains(row), "verdict lacks {row}:\n{md}");
    assert!(!md.contains("generator-bound repetition"), "{md}");
    assert!(!md.contains("| generator-bound |"), "{md}");
}

#[test]
fn saturation_is_above_ninety_percent_of_the_cores_given() {
    assert!(!generator_bound(90.0, 1));
    assert!(generator_bound(90.1, 1));
    assert!(!generator_bound(179.0, 2));
    assert!(generator_bound(181.0, 2));
}

/// A real tiny run: the runner probes the generator and writes both columns, consistently.
#[test]
fn every_step_records_its_generator_cpu() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("tiny.toml");
    fs::write(
        &scenario,
        r#"
name = "tiny"
models = ["epoll"]
[server]
workers = 1
[load]
size = 64
duration = "600ms"
threads = 1
connect_timeout = "5s"
[sweep]
connections = [4]
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, common::QUIET_NO_REPORT);
    assert!(output.status.success(), "{output:?}");
    let mut reader = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (cpu_at, bound_at) = (at(column::LOAD_CPU_PCT), at(column::GENERATOR_BOUND));
    assert_eq!(
        (cpu_at, bound_at),
        (at(column::BYTES_MATCH) + 1, at(column::BYTES_MATCH) + 2),
        "the columns are appended after the original ones"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    let cpu: f64 = rows[0][cpu_at].parse().unwrap();
    // A closed loop on 4 connections keeps the generator busy: it used some CPU, and no
    // more than its one thread can.
    assert!(cpu > 0.0 && cpu <= 105.0, "load_cpu_pct {cpu}");
    let expected = generator_bound(cpu, 1).to_string();
    assert_eq!(&rows[0][bound_at], expected.as_str());
    let probe = out.join("epoll/c4-s64/rep-1/load-probe-1.csv");
    assert!(probe.is_file(), "no {}", probe.display());
}

/// The findings name each flagged repetition as "model step rep N", and a disturbed one
/// with the share of a core that went to other work.
#[test]
fn the_findings_name_each_generator_bound_and_disturbed_repetition() {
    let tmp = tempfile::tempdir().unwrap();
    let columns = [
        column::GENERATOR_BOUND,
        column::DISTURBED,
        column::INTERFERENCE_PCT,
    ];
    let dir = fixture_with(tmp.path(), &columns, |row| {
        let (model, step, rep) = (
            &row[column::MODEL],
            &row[column::STEP],
            &row[column::REPETITION],
        );
        let bound = model == "poll" && step == "c4000-s128";
        let disturbed = model == "uring" && step == "c2000-s128" && rep == "2";
        let share = if disturbed { "23.5" } else { "0.0" };
        vec![bound.to_string(), disturbed.to_string(), share.to_string()]
    });
    let md = report(&dir);
    assert!(
        md.contains(
            "Generator-bound: in 2 repetition(s) the load generator used more than 90% of the \
             cores it was given or did not offer the rate asked (poll c4000-s128 rep 1, poll \
             c4000-s128 rep 2); there the generator may have set the pace, not the server."
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "Disturbed: in 1 repetition(s) more than 10% of a core went to other work on the \
             machine (uring c2000-s128 rep 2 (23.5%)); a winner must stay one without each of them."
        ),
        "{md}"
    );
}

#[test]
fn an_open_loop_that_did_not_offer_its_rate_is_flagged_and_the_report_says_so() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[load]
connections = 3
duration = "0.5s"
rate = 1e15
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, &["--quiet"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    // The load sent a few thousand of the ~1.5e9 requests planned: its figures are the
    // generator's, whatever its CPU showed.
    assert_eq!(row["status"], "ok", "{row:?}");
    assert_eq!(row["generator_bound"], "true", "{row:?}");
    let reason = &row["failure_reason"];
    assert!(
        reason.starts_with("generator-bound: the open loop sent ")
            && reason
                .ends_with(" requests its schedule planned, so the rate asked was not offered"),
        "{row:?}"
    );
    let summary = common::read_json(
        &out.join("epoll")
            .join(&row["step"])
            .join("rep-1/load/summary.json"),
    );
    let (sent, planned) = (
        summary["requests_sent"].as_u64().unwrap(),
        summary["requests_planned"].as_u64().unwrap(),
    );
    assert!(sent * 10 < planned * 9, "{summary}");
    assert!(
        reason.contains(&format!(" sent {sent} of the {planned} requests")),
        "{row:?}"
    );
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("Complete run"), "{md}");
    assert!(
        md.contains(
            "**Every step finished as ok, but 1 of them measured the load generator, not the \
             server (generator-bound, see the notes): their figures decide no verdict.**"
        ),
        "{md}"
    );
    assert!(md.contains(&format!("generator-bound: the load generator, not the server, may have set their pace; they are shown but never decide a verdict alone: epoll {} rep 1 ({reason}).", row["step"])), "{md}");
}
