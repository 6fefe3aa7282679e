//! `echolab compare`: results directories written by the tests (whose verdicts are
//! certain: five repetitions completely apart, or overlapping) and by a real `echolab
//! run` of a tiny scenario, compared in every format, through the gate's exit codes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{output_within, write_scenario, COMMAND_LIMIT, QUIET_NO_REPORT};
use echolab::results::{column, RESULTS_HEADER};

/// One step of one model in a fixture: its connections and, per column, one value per
/// repetition.
struct Step {
    model: &'static str,
    connections: u64,
    columns: Vec<(&'static str, Vec<f64>)>,
}

/// CPU per request of five repetitions around `median`, spread ±1 %.
fn five(median: f64) -> Vec<f64> {
    [0.99, 0.995, 1.0, 1.005, 1.01]
        .iter()
        .map(|f| f * median)
        .collect()
}

/// A step whose CPU per request is `cpu` per repetition; every other figure the same
/// at every repetition (so never a change).
fn step(model: &'static str, connections: u64, cpu: Vec<f64>) -> Step {
    let n = cpu.len();
    Step {
        model,
        connections,
        columns: vec![
            (column::SERVER_CPU_US_PER_REQUEST, cpu),
            (column::THROUGHPUT_RPS, vec![1000.0; n]),
            (column::P50_US, vec![100.0; n]),
            (column::P99_US, vec![400.0; n]),
            (column::ERRORS, vec![0.0; n]),
            (column::MAX_CONCURRENT_SERVER, vec![connections as f64; n]),
        ],
    }
}

impl Step {
    /// The same step with `col`'s repetitions replaced.
    fn with(mut self, col: &'static str, values: Vec<f64>) -> Step {
        self.columns.retain(|(c, _)| *c != col);
        self.columns.push((col, values));
        self
    }
}

/// A results directory: manifest.json (`manifest` merged over a complete run's) and
/// results.csv with the crate's own header, one ok row per repetition.
fn fixture(dir: &Path, manifest: serde_json::Value, steps: &[Step]) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let mut m = serde_json::json!({
        "scenario_name": "fixture",
        "scenario_toml": "name = \"fixture\"\n[load]\nsize = 64\n",
        "kernel": "6.1.0",
        "cpu_model": "Test CPU",
        "cores": 2,
        "echolab_version": "0.1.0",
        "status": "complete",
    });
    for (k, v) in manifest.as_object().unwrap() {
        m[k] = v.clone();
    }
    fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    let mut w = csv::Writer::from_path(dir.join("results.csv")).unwrap();
    w.write_record(RESULTS_HEADER).unwrap();
    for s in steps {
        let reps = s.columns[0].1.len();
        for rep in 0..reps {
            let mut cells: BTreeMap<&str, String> = BTreeMap::new();
            cells.insert(column::MODEL, s.model.into());
            cells.insert(column::STEP, format!("c{}-s64", s.connections));
            cells.insert(column::REPETITION, (rep + 1).to_string());
            cells.insert(column::CONNECTIONS, s.connections.to_string());
            cells.insert(column::SIZE, "64".into());
            cells.insert(column::STATUS, "ok".into());
            for (c, values) in &s.columns {
                cells.insert(c, values[rep].to_string());
            }
            let record: Vec<String> = RESULTS_HEADER
                .iter()
                .map(|h| cells.get(h).cloned().unwrap_or_default())
                .collect();
            w.write_record(&record).unwrap();
        }
    }
    w.flush().unwrap();
    dir.to_path_buf()
}

/// The simplest results directory: epoll at 10 connections, five repetitions.
fn plain(tmp: &Path, name: &str) -> PathBuf {
    fixture(
        &tmp.join(name),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0))],
    )
}

/// The command exited 2 and its stderr contains `message`.
fn fails_saying(output: &Output, message: &str) {
    expect_code(output, 2);
    let stderr = text(&output.stderr);
    assert!(stderr.contains(message), "{stderr}");
}

/// A tiny scenario in `dir`: `top` (models, repetitions) before the shared sections
/// (5 connections of 20 requests of 32 bytes, held together), `tables` after them.
fn tiny_scenario(dir: &Path, top: &str, tables: &str) -> PathBuf {
    write_scenario(
        dir,
        &format!(
            "name = \"tiny\"\n{top}\n[server]\nworkers = 1\n[load]\nsize = 32\nrequests = 20\n\
             hold = \"200ms\"\nconnect_timeout = \"5s\"\n[sweep]\nconnections = [5]\n{tables}"
        ),
    )
}

fn no_manifest_change() -> serde_json::Value {
    serde_json::json!({})
}

/// `echolab compare ARGS` to its end (bounded), output captured.
fn compare(args: &[&str]) -> Output {
    output_within(
        Command::new(common::BIN).arg("compare").args(args),
        COMMAND_LIMIT,
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The exit code, with stdout and stderr shown when it is not `code`.
fn expect_code(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

fn json(args: &[&str]) -> (serde_json::Value, Output) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let output = compare(&all);
    let doc = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout:\n{}\nstderr:\n{}",
            text(&output.stdout),
            text(&output.stderr)
        )
    });
    (doc, output)
}

/// The figure named `short` of the step with `connections` in a JSON comparison.
fn figure<'a>(doc: &'a serde_json::Value, connections: u64, short: &str) -> &'a serde_json::Value {
    let step = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parameters"]["connections"] == connections as f64)
        .unwrap_or_else(|| panic!("no step at {connections}: {doc:#}"));
    step["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == short)
        .unwrap_or_else(|| panic!("no figure {short}"))
}

/// OLD: epoll at 10 and 20 connections, CPU per request 10 µs. NEW: the same, but 20 %
/// more CPU per request at 10 connections (all five repetitions above all of OLD's).
fn old_and_slower(tmp: &Path) -> (PathBuf, PathBuf) {
    let old = fixture(
        &tmp.join("old"),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0)), step("epoll", 20, five(10.0))],
    );
    let new = fixture(
        &tmp.join("new"),
        no_manifest_change(),
        &[step("epoll", 10, five(12.0)), step("epoll", 20, five(10.0))],
    );
    (old, new)
}

#[test]
fn a_significant_change_crossing_a_threshold_exits_1_naming_it_and_the_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = old_and_slower(tmp.path());
    let out = compare(&[
        path(&old),
        path(&new),
        "--fail-if",
        "cpu_per_request > +5%",
        "--fail-if",
        "p99 > +10%",
    ]);
    expect_code(&out, 1);
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        ["echolab compare: 'cpu_per_request > +5%' crossed at epoll c10-s64: +20.0% (p = 0.012, n = 5)"],
    );
    // The table names the change with its interval at 10 connections, "~" at 20.
    let stdout = text(&out.stdout);
    let line = |prefix: &str, nth: usize| {
        stdout
            .lines()
            .filter(|l| l.contains(prefix))
            .nth(nth)
            .unwrap_or_else(|| panic!("no line {prefix} in\n{stdout}"))
            .to_string()
    };
    let changed = line("cpu_per_request", 0);
    assert!(
        changed.contains("10.00 µs CPU/req ±1%")
            && changed.contains("12.00 µs CPU/req ±1%")
            && changed.contains("+20.0% (+")
            && changed.ends_with("p = 0.012, n = 5"),
        "{changed}"
    );
    let same = line("cpu_per_request", 1);
    assert!(same.contains("  ~  p = 1.00, n = 5"), "{same}");

    let (doc, out) = json(&[path(&old), path(&new), "--fail-if", "cpu_per_request > +5%"]);
    expect_code(&out, 1);
    let c = figure(&doc, 10, "cpu_per_request");
    assert_eq!(c["significant"], true);
    assert!(
        (c["change_pct"].as_f64().unwrap() - 20.0).abs() < 1e-9,
        "{c}"
    );
    let (lo, hi) = (
        c["interval_pct"][0].as_f64().unwrap(),
        c["interval_pct"][1].as_f64().unwrap(),
    );
    assert!(lo <= 20.0 && 20.0 <= hi && lo > 15.0 && hi < 25.0, "{c}");
    assert!((c["p"].as_f64().unwrap() - 0.01219).abs() < 1e-4, "{c}");
    assert_eq!(figure(&doc, 20, "cpu_per_request")["significant"], false);
    assert_eq!(
        doc["crossed"],
        serde_json::json!([{
            "threshold": "cpu_per_request > +5%",
            "step": "epoll c10-s64",
            "what": "+20.0% (p = 0.012, n = 5)"
        }])
    );
    // The other direction does not cross, nor does a threshold above the change.
    for threshold in ["cpu_per_request < -5%", "cpu_per_request > +25%"] {
        expect_code(
            &compare(&[path(&old), path(&new), "--fail-if", threshold]),
            0,
        );
    }
    // Lower is worse for throughput: a 20 % drop crosses '< -5%'.
    let slower = fixture(
        &tmp.path().join("slower"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)).with(column::THROUGHPUT_RPS, five(800.0)),
            step("epoll", 20, five(10.0)),
        ],
    );
    let old_rps = fixture(
        &tmp.path().join("old-rps"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)).with(column::THROUGHPUT_RPS, five(1000.0)),
            step("epoll", 20, five(10.0)),
        ],
    );
    let out = compare(&[
        path(&old_rps),
        path(&slower),
        "--fail-if",
        "throughput < -5%",
    ]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains("'throughput < -5%' crossed at epoll c10-s64: -20.0%"),
        "{}",
        text(&out.stderr)
    );
    expect_code(
        &compare(&[
            path(&old_rps),
            path(&slower),
            "--fail-if",
            "throughput > +5%",
        ]),
        0,
    );
}

#[test]
fn a_change_the_verdict_does_not_name_never_fails_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    // Three against three, 50 % apart: Mann–Whitney cannot reach p < 0.05 (0.081).
    let three_old = fixture(
        &tmp.path().join("three-old"),
        no_manifest_change(),
        &[step("epoll", 10, vec![10.0, 10.1, 9.9])],
    );
    let three_new = fixture(
        &tmp.path().join("three-new"),
        no_manifest_change(),
        &[step("epoll", 10, vec![15.0, 15.1, 14.9])],
    );
    // Five against five completely apart, but 3 % : significant, under ×1.05.
    let small = fixture(
        &tmp.path().join("small"),
        no_manifest_change(),
        &[step(
            "epoll",
            10,
            five(10.0).iter().map(|v| v * 1.03).collect(),
        )],
    );
    // The same run twice.
    let same = plain(tmp.path(), "same");
    for (a, b, p) in [
        (&three_old, &three_new, "p = 0.081, n = 3"),
        (&old, &small, "p = 0.012, n = 5"),
        (&old, &same, "p = 1.00, n = 5"),
    ] {
        let out = compare(&[path(a), path(b), "--fail-if", "cpu_per_request > +1%"]);
        expect_code(&out, 0);
        let stdout = text(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.contains("cpu_per_request"))
            .unwrap();
        assert!(line.ends_with(&format!("  ~  {p}")), "{line}");
        assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    }
}

#[test]
fn absolute_thresholds_judge_new_values_with_their_units() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    // One repetition of three with errors; p99 1.5 ms.
    let new = fixture(
        &tmp.path().join("new"),
        no_manifest_change(),
        &[step("epoll", 10, vec![10.0, 10.0, 10.0])
            .with(column::ERRORS, vec![0.0, 3.0, 0.0])
            .with(column::P99_US, vec![1500.0, 1400.0, 1600.0])],
    );
    let out = compare(&[
        path(&old),
        path(&new),
        "--fail-if",
        "errors > 0",
        "--fail-if",
        "p99 > 1ms",
        "--fail-if",
        "p99 > 2ms",
        "--fail-if",
        "memory_per_connection > 1KiB",
    ]);
    expect_code(&out, 1);
    assert_eq!(
        text(&out.stderr).lines().collect::<Vec<_>>(),
        [
            "echolab compare: 'errors > 0' crossed at epoll c10-s64: errors is 3",
            "echolab compare: 'p99 > 1ms' crossed at epoll c10-s64: p99 is 1.50 ms",
        ]
    );
    expect_code(
        &compare(&[path(&new), path(&old), "--fail-if", "errors > 0"]),
        0,
    );
}

#[test]
fn steps_match_by_parameters_and_what_is_on_one_side_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let old = fixture(
        &tmp.path().join("old"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)),
            step("epoll", 20, five(10.0)),
            step("poll", 10, five(10.0)),
        ],
    );
    // NEW lists its steps the other way round, lacks 10 and adds 40, and runs tokio
    // instead of poll.
    let new = fixture(
        &tmp.path().join("new"),
        no_manifest_change(),
        &[
            step("epoll", 40, five(10.0)),
            step("epoll", 20, five(12.0)),
            step("tokio", 10, five(10.0)),
        ],
    );
    let (doc, out) = json(&[path(&old), path(&new)]);
    expect_code(&out, 0);
    let steps: Vec<(&str, &str, f64)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["old_model"].as_str().unwrap(),
                s["old_step"].as_str().unwrap(),
                s["parameters"]["connections"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(steps, [("epoll", "c20-s64", 20.0)]);
    assert_eq!(figure(&doc, 20, "cpu_per_request")["significant"], true);
    assert_eq!(
        doc["only_old"],
        serde_json::json!([
            "model poll (every step)",
            "epoll c10-s64 (connections 10, size 64)"
        ])
    );
    assert_eq!(
        doc["only_new"],
        serde_json::json!([
            "model tokio (every step)",
            "epoll c40-s64 (connections 40, size 64)"
        ])
    );
    let table = text(&compare(&[path(&old), path(&new)]).stdout);
    assert!(
        table.contains("only in OLD: epoll c10-s64 (connections 10, size 64)")
            && table.contains("only in NEW: model tokio (every step)"),
        "{table}"
    );

    // Two models of one run.
    let (doc, out) = json(&[path(&old), "--models", "poll,epoll"]);
    expect_code(&out, 0);
    let pairs: Vec<(&str, &str, &str)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["old_model"].as_str().unwrap(),
                s["new_model"].as_str().unwrap(),
                s["old_step"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [("poll", "epoll", "c10-s64")]);
    assert_eq!(
        doc["only_new"],
        serde_json::json!(["epoll c20-s64 (connections 20, size 64)"])
    );
    assert_eq!(doc["warnings"], serde_json::json!([]));

    // Nothing in common: an error, exit 2.
    let other = fixture(
        &tmp.path().join("other"),
        no_manifest_change(),
        &[step("epoll", 99, five(10.0))],
    );
    let out = compare(&[path(&old), path(&other)]);
    fails_saying(
        &out,
        "no step of OLD (epoll c10-s64, epoll c20-s64, poll c10-s64) matches a step of NEW \
             (epoll c99-s64) by model and parameters",
    );
    let out = compare(&[path(&old), "--models", "poll,uring"]);
    fails_saying(&out, "NEW has no model 'uring' (its models: epoll, poll)");
}

#[test]
fn manifests_that_differ_are_warned_above_the_table_naming_both_values() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let new = fixture(
        &tmp.path().join("new"),
        serde_json::json!({
            "kernel": "6.8.0",
            "cores": 4,
            "echolab_version": "0.2.0",
            "scenario_toml": "name = \"fixture\"\n[load]\nsize = 128\n",
            "conditions": {"server_limits": {"epoll": {"cpu_quota": 0.5}}},
        }),
        &[step("epoll", 10, five(10.0))],
    );
    let expected = [
        "kernel differs: OLD 6.1.0, NEW 6.8.0",
        "core count differs: OLD 2, NEW 4",
        "echolab version differs: OLD 0.1.0, NEW 0.2.0",
        "scenario definition differs: OLD `size = 64`, NEW `size = 128`",
        "epoll's cgroup limit differs: OLD none, NEW cpu 0.5 core",
    ];
    let out = compare(&[path(&old), path(&new)]);
    expect_code(&out, 0);
    let stdout = text(&out.stdout);
    let top: Vec<&str> = stdout.lines().take(expected.len()).collect();
    let warned: Vec<String> = expected.iter().map(|w| format!("warning: {w}")).collect();
    assert_eq!(top, warned, "{stdout}");
    let (doc, _) = json(&[path(&old), path(&new)]);
    assert_eq!(doc["warnings"], serde_json::json!(expected));
    let md = text(&compare(&[path(&old), path(&new), "--format", "markdown"]).stdout);
    assert!(
        md.contains(&format!("- warning: {}\n", expected[0])),
        "{md}"
    );
}

#[test]
fn a_missing_or_damaged_results_directory_is_an_error_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let good = plain(tmp.path(), "good");
    let missing = tmp.path().join("missing");
    let out = compare(&[path(&good), path(&missing)]);
    fails_saying(
        &out,
        &format!(
            "echolab compare: NEW: results directory {} does not exist or is not a directory\n",
            missing.display()
        ),
    );
    // A results.csv with a cell that is not a number.
    let damaged = tmp.path().join("damaged");
    fs::create_dir_all(&damaged).unwrap();
    fs::copy(good.join("manifest.json"), damaged.join("manifest.json")).unwrap();
    let csv = fs::read_to_string(good.join("results.csv"))
        .unwrap()
        .replacen(",1000,", ",fast,", 1);
    fs::write(damaged.join("results.csv"), csv).unwrap();
    let out = compare(&[path(&damaged), path(&good)]);
    fails_saying(
        &out,
        &format!(
            "echolab compare: OLD: {} line 2, column throughput_rps: 'fast' is not a number",
            damaged.join("results.csv").display()
        ),
    );
    // No results.csv; a manifest that is not JSON.
    fs::remove_file(damaged.join("results.csv")).unwrap();
    let out = compare(&[path(&good), path(&damaged)]);
    fails_saying(
        &out,
        &format!("cannot read {}", damaged.join("results.csv").display()),
    );
    fs::write(damaged.join("manifest.json"), "{not json").unwrap();
    let out = compare(&[path(&good), path(&damaged)]);
    fails_saying(&out, "invalid manifest");
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let good = plain(tmp.path(), "good");
    for (args, message) in [
        (
            vec![path(&good), path(&good), "--fail-if", "p98 > +10%"],
            "echolab compare: --fail-if 'p98 > +10%': 'p98' is not a figure: use throughput, \
             p50, p99, p999, mean, cpu, cpu_per_request, memory_per_connection, errors, held \
             or a numeric results.csv column",
        ),
        (
            vec![path(&good), path(&good), "--fail-if", "p99 > 10%"],
            "echolab compare: --fail-if 'p99 > 10%': '10%': write a change with its sign \
             (+10% or -10%)",
        ),
        (
            vec![path(&good), path(&good), "--fail-if", "p99 +10%"],
            "echolab compare: --fail-if 'p99 +10%': no comparison: use > or <",
        ),
        (
            vec![path(&good)],
            "echolab compare: give two results directories (OLD NEW), or one with --models \
             OLD_MODEL,NEW_MODEL",
        ),
        (
            vec![path(&good), "--models", "epoll"],
            "echolab compare: --models takes two models, OLD's and NEW's (e.g. --models \
             mine,epoll)",
        ),
    ] {
        let out = compare(&args);
        expect_code(&out, 2);
        assert!(
            text(&out.stderr).starts_with(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
    // clap's own errors exit 2 as well.
    expect_code(&compare(&[path(&good), "--format", "yaml"]), 2);
}

#[test]
fn every_format_says_the_same_and_the_json_follows_its_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = old_and_slower(tmp.path());
    // Markdown: a table row per figure and step, the change named at 10 connections.
    let md = text(&compare(&[path(&old), path(&new), "--format", "markdown"]).stdout);
    assert!(md.starts_with("# echolab compare: "), "{md}");
    assert!(
        md.contains("| step | figure | old | new | change | p, n |\n| --- | --- | ---: | ---: | ---: | --- |\n"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.contains("| cpu_per_request |"))
        .unwrap();
    assert!(
        row.starts_with(
            "|  | cpu_per_request | 10.00 µs CPU/req ±1% | 12.00 µs CPU/req ±1% | +20.0% (+"
        ),
        "{row}"
    );
    // Two steps, and the geometric mean.
    assert_eq!(md.matches("| throughput |").count(), 3, "{md}");
    assert!(md.contains("## Geometric means"), "{md}");

    // CSV: one row per step and figure, then one per figure's geometric mean.
    let out = compare(&[path(&old), path(&new), "--format", "csv"]);
    expect_code(&out, 0);
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[..6],
        [
            "old_model",
            "new_model",
            "old_step",
            "new_step",
            "figure",
            "column"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let steps = rows.iter().filter(|r| &r[2] != "geomean").count();
    assert_eq!(steps, 2 * 10);
    let cpu = rows
        .iter()
        .find(|r| &r[2] == "c10-s64" && &r[4] == "cpu_per_request")
        .unwrap();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        (
            &cpu[col("old_value")],
            &cpu[col("new_value")],
            &cpu[col("significant")]
        ),
        ("10", "12", "true")
    );
    let gm = rows
        .iter()
        .find(|r| &r[2] == "geomean" && &r[4] == "cpu_per_request")
        .unwrap();
    // sqrt(12 * 10) / sqrt(10 * 10) = 1.0954...
    let pct: f64 = gm[col("change_pct")].parse().unwrap();
    assert!(
        (pct - ((1.2f64).sqrt() - 1.0) * 100.0).abs() < 1e-9,
        "{pct}"
    );

    // JSON: the documented keys, in order, with their types.
    let (doc, _) = json(&[path(&old), path(&new), "--fail-if", "p99 > +10%"]);
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let mut top = keys(&doc);
    top.sort();
    let mut expected = [
        "schema",
        "old",
        "new",
        "alpha",
        "min_effect",
        "warnings",
        "thresholds",
        "crossed",
        "steps",
        "geomean",
        "only_old",
        "only_new",
    ];
    expected.sort();
    assert_eq!(top, expected);
    assert_eq!(doc["schema"], "echolab-compare/1");
    assert_eq!(
        (doc["alpha"].as_f64(), doc["min_effect"].as_f64()),
        (Some(0.05), Some(1.05))
    );
    assert_eq!(doc["thresholds"], serde_json::json!(["p99 > +10%"]));
    let step = &doc["steps"][0];
    let mut step_keys = keys(step);
    step_keys.sort();
    assert_eq!(
        step_keys,
        [
            "figures",
            "new_model",
            "new_step",
            "old_model",
            "old_step",
            "parameters"
        ]
    );
    let figures: Vec<&str> = step["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figures,
        [
            "throughput",
            "p50",
            "p99",
            "p999",
            "mean",
            "cpu",
            "cpu_per_request",
            "memory_per_connection",
            "errors",
            "held"
        ]
    );
    let f = figure(&doc, 10, "cpu_per_request");
    let mut f_keys = keys(f);
    f_keys.sort();
    assert_eq!(
        f_keys,
        [
            "change_pct",
            "column",
            "figure",
            "higher_is_better",
            "interval_pct",
            "new",
            "old",
            "p",
            "significant",
            "unit"
        ]
    );
    assert_eq!(f["column"], "server_cpu_us_per_request");
    assert_eq!(f["unit"], "µs");
    assert_eq!(
        f["old"],
        serde_json::json!({"value": 10.0, "min": 9.9, "max": 10.1, "n": 5, "broke": false})
    );
    // A figure the fixture has no value for: nulls, no test.
    let p999 = figure(&doc, 10, "p999");
    assert_eq!(
        (
            &p999["old"]["value"],
            &p999["p"],
            &p999["change_pct"],
            &p999["significant"]
        ),
        (
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::json!(false)
        )
    );
    let gm = doc["geomean"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["figure"] == "cpu_per_request")
        .unwrap();
    assert_eq!(gm["steps"], 2);

    // compare.html: self-contained, a chart per figure with values.
    let html_dir = tmp.path().join("html");
    let out = compare(&[path(&old), path(&new), "--out", path(&html_dir)]);
    expect_code(&out, 0);
    let html = fs::read_to_string(html_dir.join("compare.html")).unwrap();
    assert_eq!(
        html.matches("<figure id=\"chart-compare-").count(),
        6,
        "one per figure with values"
    );
    assert!(html.contains("<figure id=\"chart-compare-cpu_per_request\">"));
    assert!(!html.contains("src=\"http") && !html.contains("<script"));
    assert!(html.contains("No --fail-if threshold crossed."));
}

/// Every step of a real run: two models, two repetitions, on loopback.
#[test]
fn a_real_run_against_its_copy_changes_nothing_and_latency_is_the_histograms_added() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"poll\", \"epoll\"]\nrepetitions = 2",
        "",
    );
    let run = tmp.path().join("run");
    common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    let copy = tmp.path().join("copy");
    let status = Command::new("cp")
        .args(["-a", path(&run), path(&copy)])
        .status()
        .unwrap();
    assert!(status.success());
    let (doc, out) = json(&[
        path(&run),
        path(&copy),
        "--fail-if",
        "p99 > +1%",
        "--fail-if",
        "throughput < -1%",
    ]);
    expect_code(&out, 0);
    // Nothing differs between a run and its copy; only a machine busy with other work
    // while it ran is said (of both sides alike).
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().all(|w| w
            .as_str()
            .unwrap()
            .contains("repetitions shared the machine")),
        "{warnings:?}"
    );
    assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    for step in doc["steps"].as_array().unwrap() {
        for f in step["figures"].as_array().unwrap() {
            assert_eq!(f["significant"], false, "{f}");
            assert_eq!(f["old"], f["new"], "{f}");
        }
    }
    // p99 of a step: the 99th percentile of both repetitions' histograms added.
    let mut sum = echolab::load::measurements::new_histogram();
    for rep in ["rep-1", "rep-2"] {
        let hlog = run.join("epoll/c5-s32").join(rep).join("load/latency.hlog");
        let (_, intervals) = echolab::load::merge::read_hlog(&hlog).unwrap();
        for i in intervals.into_iter().filter(|i| !i.raw) {
            sum.add(&i.histogram).unwrap();
        }
    }
    assert_eq!(sum.len(), 2 * 5 * 20, "every request of both repetitions");
    let epoll_p99 = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["old_model"] == "epoll")
        .unwrap()["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == "p99")
        .unwrap();
    assert_eq!(
        epoll_p99["old"]["value"].as_f64().unwrap(),
        sum.value_at_quantile(0.99) as f64
    );
    // Two models of one run, and the table.
    let out = compare(&[path(&run), "--models", "poll,epoll"]);
    expect_code(&out, 0);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("poll c5-s32 → epoll"), "{stdout}");
    assert_eq!(stdout.matches("poll c5-s32").count(), 1, "{stdout}");

    // `run --baseline`: the same scenario again, compared with the first run in the
    // console and in the report; a baseline that cannot be read is refused first.
    let second = tmp.path().join("second");
    let output = common::run_scenario(&scenario, &second, &["--quiet", "--baseline", path(&run)]);
    expect_code(&output, 0);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&format!("against the baseline {}:", run.display())),
        "{stdout}"
    );
    let report = fs::read_to_string(second.join("report.md")).unwrap();
    let section = report
        .split("## Against the baseline")
        .nth(1)
        .unwrap_or_default();
    assert!(
        section.contains("| step | figure | old | new | change | p, n |"),
        "{report}"
    );
    assert_eq!(section.matches("| throughput |").count(), 3, "{section}");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(second.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["baseline"], path(&fs::canonicalize(&run).unwrap()));
    let refused = common::run_scenario(
        &scenario,
        &tmp.path().join("third"),
        &["--quiet", "--baseline", path(&tmp.path().join("nothing"))],
    );
    fails_saying(&refused, "--baseline: results directory");
    assert!(!tmp.path().join("third").exists());
}

/// A scenario's `[thresholds]`: judged at the end of `run` and in the report; only
/// `--enforce-thresholds` makes one not met fail the run (exit 3).
#[test]
fn scenario_thresholds_are_judged_and_enforced_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"epoll\"]",
        "[thresholds]\np99 = \"< 1h\"\nerror_rate = \"< 0.001\"\nheld = \"> 5\"\n",
    );
    let out = tmp.path().join("run");
    let enforced = common::run_scenario(&scenario, &out, &["--quiet", "--enforce-thresholds"]);
    expect_code(&enforced, 3);
    // Five connections held, never more than five: only `held > 5` is not met.
    let stdout = text(&enforced.stdout);
    let judged: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("thresholds"))
        .take(2)
        .collect();
    assert_eq!(
        judged,
        [
            "thresholds (error_rate < 0.001, held > 5, p99 < 1h): not all met",
            "  'held > 5' not met at epoll c5-s32: held is 5",
        ],
        "{stdout}"
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("## Thresholds\n\nThresholds: error_rate < 0.001, held > 5, p99 < 1h. Not met (1):\n\n- 'held > 5' not met at epoll c5-s32: held is 5\n"),
        "{report}"
    );
    // The same run without the flag: judged and printed, exit 0.
    let plain_run = common::run_scenario(&scenario, &out, &["--quiet", "--no-report", "--force"]);
    expect_code(&plain_run, 0);
    assert!(text(&plain_run.stdout).contains("'held > 5' not met"));

    // A composite whose part has thresholds: judged per part, enforced the same way.
    let composite = tmp.path().join("composite.toml");
    fs::write(
        &composite,
        format!("parts = [{:?}]\n", scenario.file_name().unwrap()),
    )
    .unwrap();
    let both = tmp.path().join("both");
    let enforced = common::run_scenario(
        &composite,
        &both,
        &["--quiet", "--no-report", "--enforce-thresholds"],
    );
    expect_code(&enforced, 3);
    assert!(
        text(&enforced.stdout)
            .contains("thresholds of tiny (error_rate < 0.001, held > 5, p99 < 1h): not all met"),
        "{}",
        text(&enforced.stdout)
    );

    // A threshold that is a change, or names no figure, is a scenario error.
    let text_of = fs::read_to_string(&scenario).unwrap();
    for (bad, message) in [
        (
            "held = \"> +5%\"",
            "[thresholds] held: 'held = \"> +5%\"': a run's threshold is a value with its unit",
        ),
        (
            "latency = \"< 1ms\"",
            "[thresholds] latency: [thresholds] 'latency < 1ms': 'latency' is not a figure",
        ),
    ] {
        fs::write(&scenario, text_of.replace("held = \"> 5\"", bad)).unwrap();
        let rejected = common::run_scenario(&scenario, &tmp.path().join("bad"), QUIET_NO_REPORT);
        assert!(!rejected.status.success());
        let stderr = text(&rejected.stderr);
        assert!(stderr.contains(message), "{stderr}");
        assert!(!tmp.path().join("bad").exists());
    }
}

/// The A/B check at a tiny scale: epoll against itself with `work_us` (10 ms of CPU per
/// read, at least one read per request in a closed loop), five repetitions each, as
/// two models of one run. CPU per request is at least ten times epoll's in every
/// repetition, so the change is named whichever single repetition is left out, and
/// the gate fails on it.
#[test]
fn a_server_made_slower_with_work_us_is_flagged_on_cpu_per_request() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"epoll\", \"slow\"]\nrepetitions = 5",
        "[model.slow]\nbase = \"epoll\"\nwork_us = 10000\n",
    );
    let run = tmp.path().join("run");
    let rows = common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    let cpu = |model: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r["model"] == model)
            .map(|r| r["server_cpu_us_per_request"].parse().unwrap())
            .collect()
    };
    let (fast, slow) = (cpu("epoll"), cpu("slow"));
    assert_eq!((fast.len(), slow.len()), (5, 5));
    let fastest_slow = slow.iter().copied().fold(f64::INFINITY, f64::min);
    let slowest_fast = fast.iter().copied().fold(0.0, f64::max);
    assert!(
        fastest_slow >= 2500.0 && fastest_slow >= 10.0 * slowest_fast,
        "epoll {fast:?}, with work_us {slow:?}"
    );
    let (doc, out) = json(&[
        path(&run),
        "--models",
        "epoll,slow",
        "--fail-if",
        "cpu_per_request > +5%",
    ]);
    expect_code(&out, 1);
    let c = figure(&doc, 5, "cpu_per_request");
    assert_eq!(c["significant"], true, "{c}");
    assert!(c["change_pct"].as_f64().unwrap() > 900.0, "{c}");
    // The gate passes epoll against itself.
    let copy = tmp.path().join("copy");
    assert!(Command::new("cp")
        .args(["-a", path(&run), path(&copy)])
        .status()
        .unwrap()
        .success());
    expect_code(
        &compare(&[
            path(&run),
            path(&copy),
            "--fail-if",
            "cpu_per_request > +5%",
        ]),
        0,
    );
}
