//! `echolab compare`: results directories written by the tests (whose verdicts are
//! certain: five repetitions completely apart, or overlapping) and by a real `echolab
//! run` of a tiny scenario, compared in every format, through the gate's exit codes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../common/mod.rs"]
mod common;

use common::{output_within, write_scenario, COMMAND_LIMIT, QUIET_NO_REPORT};
use echolab::results::{column, RESULTS_HEADER};

mod formats;
mod gate;
mod hostile;
mod matching;
mod runs;

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
            cells.insert(column::DELAY_MS, "0.0".into());
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
