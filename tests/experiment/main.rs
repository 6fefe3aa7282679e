//! `echolab run` end to end: real servers and load generators on loopback.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

#[path = "../common/mod.rs"]
mod common;

use common::{
    assert_all_gone, cmdline, descendants, open_fds, start_run, write_scenario, ResultsRow, BIN,
    QUIET_NO_REPORT, RUN_LIMIT,
};

mod failures;
mod outputs;
mod scenarios;
mod stops;

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn tiny_scenario_runs_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
name = "tiny"
models = ["poll", "epoll"]
[server]
workers = 1
[load]
size = 32
requests = 20
hold = "500ms"
connect_timeout = "5s"
[sweep]
connections = [5, 10]
"#,
    );
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, QUIET_NO_REPORT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = common::results_rows(&out);
    let mut keys = common::cells(&rows, ["model", "step", "repetition", "status"]);
    // Rows come round by round, the models in each round's own order.
    let rounds: Vec<&str> = keys.iter().map(|k| k[1]).collect();
    assert_eq!(rounds, ["c5-s32", "c5-s32", "c10-s32", "c10-s32"]);
    keys.sort();
    assert_eq!(
        keys,
        [
            ["epoll", "c10-s32", "1", "ok"],
            ["epoll", "c5-s32", "1", "ok"],
            ["poll", "c10-s32", "1", "ok"],
            ["poll", "c5-s32", "1", "ok"],
        ]
    );
    for row in &rows {
        let conns: u64 = row["connections"].parse().unwrap();
        let bytes = (conns * 20 * 32).to_string();
        assert_eq!(row["connections_established"], conns.to_string());
        assert_eq!(row["requests"], (conns * 20).to_string());
        assert_eq!(row["client_bytes_sent"], bytes);
        assert_eq!(row["client_bytes_received"], bytes);
        assert_eq!(row["server_bytes_in"], bytes);
        assert_eq!(row["server_bytes_out"], bytes);
        assert_eq!(row["bytes_match"], "true");
        assert_eq!(row["mismatches"], "0");
        // The hold keeps every connection open until all are: the server held them at once.
        assert_eq!(row["max_concurrent_server"], conns.to_string());
        assert_eq!(row["workers"], "1");
        // A live echolab server process: more than 1 MiB resident, far less than 1 GiB.
        let rss: u64 = row["server_rss_max_bytes"].parse().unwrap();
        assert!((1 << 20..1 << 30).contains(&rss), "{rss} B");
        let step = out.join(&row["model"]).join(&row["step"]).join("rep-1");
        for file in [
            "server-summary.json",
            "server-log.csv",
            "server-stdout.txt",
            "server-stderr.txt",
            "probe.csv",
            "load/summary.json",
        ] {
            assert!(step.join(file).exists(), "{} lacks {file}", step.display());
        }
        // One server log row per connection: the client's connections join the server's.
        let log = fs::read_to_string(step.join("server-log.csv")).unwrap();
        assert_eq!(log.lines().count() as u64, conns + 1);
    }
    let m = manifest(&out);
    assert_eq!(m["scenario_name"], "tiny");
    assert_eq!(m["interrupted"], false);
    assert_eq!(m["models"], serde_json::json!(["poll", "epoll"]));
    assert_eq!(m["sweep_axes"], serde_json::json!(["connections"]));
    // The comparison table: a header and one line per model.
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("model "))
        .take(3)
        .collect();
    assert!(
        table[1].starts_with("poll ") && table[1].ends_with(" ok"),
        "{stdout}"
    );
    assert!(
        table[2].starts_with("epoll ") && table[2].ends_with(" ok"),
        "{stdout}"
    );
}

/// `[load] warmup`: the step runs 0.2 s longer, and its row counts only the measured
/// second: throughput near the rate, the generator's and the server's bytes equal.
#[test]
fn a_step_with_a_warmup_is_measured_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
name = "warm"
models = ["epoll"]
[server]
workers = 1
[load]
size = 64
rate = 2000
duration = "1s"
warmup = "0.2s"
connect_timeout = "5s"
[sweep]
connections = [20]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["status"], "ok", "{row:?}");
    let rps = common::number(row, "throughput_rps");
    assert!(
        (1500.0..2500.0).contains(&rps),
        "throughput_rps {rps}: {row:?}"
    );
    let step = out.join("epoll").join(&row["step"]).join("rep-1");
    let load = common::read_json(&step.join("load").join("summary.json"));
    assert_eq!(load["warmup_s"], 0.2);
    let warm = load["warmup_requests"].as_u64().unwrap();
    assert!(warm > 0, "{load}");
    let measured = load["requests_completed"].as_u64().unwrap();
    assert_eq!(common::number(row, "requests") as u64, measured);
    assert_eq!(
        (measured + warm) * 64,
        load["bytes_received"].as_u64().unwrap(),
        "every echo is measured or warm-up"
    );
    let command = fs::read_to_string(step.join("load-command.txt")).unwrap();
    assert!(command.contains("--warmup 0.2s"), "{command}");
}

/// Starts a run whose load lasts 60 s and waits until its server and load are running.
// The runner is handed to the caller, which kills and waits for it.
#[allow(clippy::zombie_processes)]
fn start_long_run(out: &Path, scenario: &Path) -> (Child, Vec<u32>) {
    let mut runner = start_run(scenario, out);
    // Sockets a process holds: the server's listener, and each connection on either side.
    let sockets = |pid: u32| {
        open_fds(pid as i32)
            .iter()
            .filter(|(_, what)| what.starts_with("socket:"))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let kids = descendants(runner.id());
        // Both sides hold sockets when the runner goes: the load a connection, the server
        // an accepted one beside its listener.
        let holds = |verb: &str, least: usize| {
            kids.iter()
                .any(|&p| cmdline(p).contains(verb) && sockets(p) >= least)
        };
        let serving = holds(" serve ", 2);
        let loading = holds(" load ", 1);
        if serving && loading {
            return (runner, kids);
        }
        if Instant::now() >= deadline {
            runner.kill().unwrap();
            runner.wait().unwrap();
            panic!("server and load did not start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---- the report, the flags, and the failure rules ----

/// (model, step, repetition, status, failure_reason) of every results.csv row.
fn outcomes(rows: &[ResultsRow]) -> Vec<(String, String, String, String, String)> {
    rows.iter()
        .map(|r| {
            (
                r["model"].clone(),
                r["step"].clone(),
                r["repetition"].clone(),
                r["status"].clone(),
                r["failure_reason"].clone(),
            )
        })
        .collect()
}

/// Without `--no-report` the run ends by writing report.html and report.md into the
/// results directory, and both name every model that ran.
#[test]
fn run_writes_the_report_naming_each_model() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["poll", "epoll"]
[load]
size = 16
requests = 5
connect_timeout = "5s"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, &["--quiet"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(&out.join("report.html").display().to_string()),
        "{stdout}"
    );
    let html = fs::read_to_string(out.join("report.html")).expect("report.html");
    let md = fs::read_to_string(out.join("report.md")).expect("report.md");
    for model in ["poll", "epoll"] {
        assert!(
            html.contains(&format!("<td>{model}</td>")),
            "report.html lacks {model}"
        );
        assert!(
            md.contains(&format!("| {model} | c2-s16 | 1 | ok |")),
            "report.md lacks {model}:\n{md}"
        );
    }
    assert!(!html.contains("select") && !md.contains("| select |"));
}

/// `pause` sleeps between steps: two steps with a 3 s pause after each take at least 6 s,
/// however fast the steps themselves are (a lower bound only: the machine may be slow).
#[test]
fn pause_waits_between_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
pause = "3s"
[load]
size = 16
requests = 2
connect_timeout = "5s"
[sweep]
connections = [1, 2]
"#,
    );
    let out = tmp.path().join("out");
    let started = Instant::now();
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let wall = started.elapsed();
    assert_eq!(rows.len(), 2);
    assert!(
        wall >= Duration::from_secs(6),
        "two steps with pause = 3s took {wall:?}"
    );
}

/// `rerun_disturbed = 2`: a repetition that shared the machine (here with a thread of
/// this test spinning on a core all through the run) is run again twice, each time
/// said, and the last attempt's row is the one kept, still flagged disturbed.
#[test]
fn a_disturbed_repetition_is_run_again_as_often_as_allowed() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[server]
workers = 1
[load]
size = 16
duration = "0.5s"
rate = 200
connect_timeout = "5s"
[sweep]
connections = [2]
[failure]
rerun_disturbed = 2
"#,
    );
    let out = tmp.path().join("out");
    let spinning = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spinner = {
        let spinning = spinning.clone();
        std::thread::spawn(move || {
            while spinning.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    let output = common::run_scenario(&scenario, &out, &["--no-report"]);
    spinning.store(false, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let again: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_once(": run again ").map(|(_, n)| n))
        .collect();
    assert_eq!(again, ["(1 of 2)", "(2 of 2)"], "{stderr}");
    let rows = common::results_rows(&out);
    assert_eq!(
        common::cells(&rows, ["step", "repetition", "status", "disturbed"]),
        [["c2-s16-r200", "1", "ok", "true"]]
    );
}
