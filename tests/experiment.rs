//! `echolab run` end to end: real servers and load generators on loopback.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{alive, descendants, write_scenario, ResultsRow, QUIET_NO_REPORT, RUN_LIMIT};

const EXE: &str = env!("CARGO_BIN_EXE_echolab");

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
    let mut keys: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["model"].as_str(),
                r["step"].as_str(),
                r["repetition"].as_str(),
                r["status"].as_str(),
            )
        })
        .collect();
    // Rows come round by round, the models in each round's own order.
    let rounds: Vec<&str> = keys.iter().map(|k| k.1).collect();
    assert_eq!(rounds, ["c5-s32", "c5-s32", "c10-s32", "c10-s32"]);
    keys.sort();
    assert_eq!(
        keys,
        [
            ("epoll", "c10-s32", "1", "ok"),
            ("epoll", "c5-s32", "1", "ok"),
            ("poll", "c10-s32", "1", "ok"),
            ("poll", "c5-s32", "1", "ok"),
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

/// A scenario refused at its line is a usage error: exit 2 (an ssh URL with a password
/// exited 1, docs/scenarios.md saying 2).
#[test]
fn bad_scenarios_are_rejected_with_their_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nconections = 5\n",
            "line 4, column 1: unknown field `conections`",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\ndelay = \"soon\"\n",
            "line 4, column 9: 'soon' is not a duration",
        ),
        (
            "models = [\"poll\", \"epol\"]\n[load]\nrequests = 3\n",
            "line 1, column 19: unknown model 'epol'",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nsize = \"17MiB\"\n",
            "line 4, column 8: step c10-s17825792: the load generator would refuse it: --size must be 1 B to 16 MiB",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\npayload_file = \"/no/such/payload\"\n",
            "line 4, column 16: payload_file /no/such/payload: No such file or directory",
        ),
        (
            "models = [\"poll\"]\nstep_timeout = \"0s\"\n[load]\nrequests = 3\n",
            "line 2, column 16: step_timeout must be above 0",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nconnections = 10_000_000\n",
            "line 4, column 15: step c10000000-s64 opens 10000000 connections from each client, more than the",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\n[sweep]\nconnections = [4, 0]\n",
            "line 5, column 15: must be at least 1, not 0",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nwarmup = \"1s\"\n",
            "line 4, column 10: [load] warmup does not go with requests",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\n[hosts]\nserver = \"ssh://lab:secret@pc1\"\n\
             clients = [\"ssh://pc2\"]\nserver_addr = \"10.0.0.1\"\n",
            "line 5, column 10: [hosts] server: \"ssh://lab:secret@pc1\" is not an ssh URL",
        ),
    ];
    for (text, expected) in cases {
        let path = write_scenario(tmp.path(), text);
        let output = common::run_scenario(&path, tmp.path(), &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected '{expected}' in: {stderr}"
        );
        assert!(!tmp.path().join("results.csv").exists());
    }
    let output = common::echolab_run(&["no-such-scenario"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("neither a built-in scenario"));
}

#[test]
fn list_names_every_builtin_scenario() {
    let output = common::echolab_run(&["--list"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let names: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        names,
        [
            "quick",
            "max-clients",
            "request-frequency",
            "message-size",
            "churn",
            "ramp",
            "hosts",
            "c1m",
            "c2m",
            "languages",
            "lan-100mbit",
            "claim-1",
            "claim-2",
            "claim-3",
            "claim-4",
            "claim-5",
            "claim-6",
            "claim-7",
            "claim-8",
            "classic",
            "claim-9",
            "claim-10",
            "claim-11",
            "claim-12",
            "claim-13",
            "claim-14",
            "claim-15",
            "claim-16",
            "claim-17",
            "claim-18",
            "claim-19",
            "claim-20",
            "claim-21"
        ]
    );
}

#[test]
fn failure_rule_stops_selects_sweep_past_fd_setsize() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["select"]
[load]
size = 16
requests = 2
hold = "1s"
connect_timeout = "5s"
[sweep]
connections = [500, 1100, 1500]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let statuses: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["step"].as_str(), r["status"].as_str()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("c500-s16", "ok"),
            ("c1100-s16", "failed"),
            ("c1500-s16", "skipped")
        ]
    );
    // The server refuses the fds past FD_SETSIZE (1024) cleanly, and says so.
    let reason = &rows[1]["failure_reason"];
    assert!(reason.starts_with("server refused "), "{reason}");
    assert!(reason.contains("fd_setsize"), "{reason}");
    assert_eq!(
        rows[2]["failure_reason"],
        "at least as heavy as failed step c1100-s16"
    );
    assert!(!out.join("select/c1500-s16").exists());
}

fn cmdline(pid: u32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Starts a run whose load lasts 60 s and waits until its server and load are running.
// The runner is handed to the caller, which kills and waits for it.
#[allow(clippy::zombie_processes)]
fn start_long_run(out: &Path, scenario: &Path) -> (Child, Vec<u32>) {
    let mut runner = Command::new(EXE)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--no-report", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let kids = descendants(runner.id());
        let serving = kids.iter().any(|p| cmdline(*p).contains(" serve "));
        let loading = kids.iter().any(|p| cmdline(*p).contains(" load "));
        if serving && loading {
            // Let the load connect, so both sides hold sockets when the runner goes.
            std::thread::sleep(Duration::from_millis(500));
            let kids = descendants(runner.id());
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

fn assert_all_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let survivors: Vec<String> = pids
        .iter()
        .filter(|p| alive(**p))
        .map(|p| format!("{p}: {}", cmdline(*p)))
        .collect();
    assert_eq!(survivors, Vec::<String>::new());
}

/// Two server processes and two load processes, so grandchildren must go too.
const LONG_SCENARIO: &str = r#"
models = ["poll", "epoll"]
[server]
processes = 2
[load]
processes = 2
connections = 4
size = 16
delay = "10ms"
duration = "60s"
"#;

#[test]
fn no_child_survives_a_killed_runner() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(tmp.path(), LONG_SCENARIO);
    let (mut runner, children) = start_long_run(&tmp.path().join("out"), &scenario);
    // The server, its two copies, the load generator and its two processes.
    assert!(children.len() >= 6, "{children:?}");
    runner.kill().unwrap();
    runner.wait().unwrap();
    assert_all_gone(&children);
    // The manifest written at the start says the run did not end normally.
    let m = manifest(&tmp.path().join("out"));
    assert_eq!(m["interrupted"], true);
    assert_eq!(m["status"], "running");
}

#[test]
fn sigterm_stops_the_step_and_keeps_its_results() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(tmp.path(), LONG_SCENARIO);
    let out = tmp.path().join("out");
    let (runner, children) = start_long_run(&out, &scenario);
    // SAFETY: kill has no memory preconditions; the pid is our own child.
    unsafe {
        libc::kill(runner.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = common::finish_within(runner, "the runner after SIGTERM", RUN_LIMIT).status;
    assert_eq!(status.code(), Some(130));
    assert_all_gone(&children);
    let m = manifest(&out);
    assert_eq!(m["interrupted"], true);
    assert_eq!(m["status"], "interrupted");
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1);
    // The interrupted row is the first model of the first round (order.csv).
    let order = fs::read_to_string(out.join("order.csv")).unwrap();
    let first = order.lines().nth(1).unwrap().rsplit(',').next().unwrap();
    let first_model = first.split(' ').next().unwrap();
    assert_eq!(
        (rows[0]["model"].as_str(), rows[0]["step"].as_str()),
        (first_model, "c4-s16-d10ms")
    );
    assert_eq!(rows[0]["status"], "interrupted");
    // Both sides flushed what they had: the client's partial result and the server's summary.
    let step = out.join(format!("{first_model}/c4-s16-d10ms/rep-1"));
    assert!(step.join("load/summary.json").exists());
    assert!(step.join("server-summary.json").exists());
    assert_eq!(rows[0]["bytes_match"], "true");
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

/// `--models` runs only the models named (in the scenario's order); `--repetitions`
/// overrides the scenario's count.
#[test]
fn models_and_repetitions_flags_override_the_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["select", "poll", "epoll"]
repetitions = 1
[load]
size = 16
requests = 3
connect_timeout = "5s"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(
        &scenario,
        &out,
        &[
            "--models",
            "epoll,poll",
            "--repetitions",
            "2",
            "--no-report",
            "--quiet",
        ],
    );
    // The rows' order is the rounds' (tests/interleave.rs); here only which rows ran.
    let mut rows: Vec<(String, String, String, String)> = outcomes(&rows)
        .into_iter()
        .map(|(m, s, r, st, _)| (m, s, r, st))
        .collect();
    rows.sort_by_key(|(m, _, r, _)| (m != "poll", r.clone()));
    let expected: Vec<(String, String, String, String)> =
        [("poll", "1"), ("poll", "2"), ("epoll", "1"), ("epoll", "2")]
            .iter()
            .map(|(m, r)| (m.to_string(), "c2-s16".into(), r.to_string(), "ok".into()))
            .collect();
    assert_eq!(rows, expected);
    assert_eq!(
        manifest(&out)["models"],
        serde_json::json!(["poll", "epoll"])
    );
}

/// `step_timeout` bounds a load that would run 60 s: the step fails with that reason well
/// before, and the model's heavier step is skipped, not run.
#[test]
fn step_timeout_fails_the_step_and_skips_the_heavier_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
step_timeout = "2s"
[load]
size = 16
duration = "60s"
delay = "10ms"
[sweep]
connections = [2, 4]
"#,
    );
    let out = tmp.path().join("out");
    let started = Instant::now();
    let rows = outcomes(&common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT));
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "the 60 s load was not cut at the step timeout"
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    let failed = &rows[0];
    assert_eq!(
        (failed.0.as_str(), failed.3.as_str(), failed.4.as_str()),
        (
            "epoll",
            "failed",
            "load generator did not finish within the step timeout"
        )
    );
    assert_eq!(rows[1].3, "skipped");
    assert_eq!(
        rows[1].4,
        format!("at least as heavy as failed step {}", failed.1)
    );
}

/// `max_error_rate`: a server with `--max-conns 3` accepts and closes 2 of 5 connections,
/// so 2 of the 5 one-request connections end in an error: a rate of 2 / (3 + 2) = 0.4,
/// over the 0.01 allowed; `max_refused` and `min_established` are relaxed so the error
/// rate is the rule that trips.
#[test]
fn max_error_rate_fails_the_step_with_the_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[server]
max_conns = 3
[load]
size = 16
requests = 1
hold = "1s"
connect_timeout = "5s"
[sweep]
connections = [5]
[failure]
max_refused = 5
min_established = 0.0
max_error_rate = 0.01
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "failed");
    assert_eq!(
        rows[0]["failure_reason"],
        "error rate 0.4000 above 0.01 (2 errors)"
    );
    assert_eq!(rows[0]["requests"], "3");
}

/// A server that cannot start (epoll with `--workers 0`) fails its step with the server's
/// own message; the run goes on and exits 0.
#[test]
fn a_server_that_fails_to_start_fails_its_step() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll", "poll"]
[model.epoll]
args = ["--workers", "0"]
[load]
size = 16
requests = 2
connect_timeout = "5s"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let mut rows = outcomes(&common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT));
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Rows come in the rounds' order; epoll's first here.
    rows.sort_by_key(|r| r.0 != "epoll");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].3.as_str()),
        ("epoll", "failed")
    );
    assert!(
        rows[0].4.starts_with("server exited before listening")
            && rows[0].4.contains("--workers must be at least 1"),
        "{}",
        rows[0].4
    );
    assert_eq!((rows[1].0.as_str(), rows[1].3.as_str()), ("poll", "ok"));
}

/// A server killed during its step fails the step as "server died during the step".
#[test]
fn a_server_that_dies_mid_step_fails_it() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[load]
connections = 4
size = 16
delay = "10ms"
duration = "60s"
"#,
    );
    let out = tmp.path().join("out");
    let (runner, children) = start_long_run(&out, &scenario);
    let server = children
        .iter()
        .copied()
        .find(|p| cmdline(*p).contains(" serve "))
        .expect("the server process");
    // SAFETY: kill has no memory preconditions; the pid is the runner's server child.
    unsafe {
        libc::kill(server as libc::pid_t, libc::SIGKILL);
    }
    let output = common::finish_within(runner, "the runner", RUN_LIMIT);
    assert!(output.status.success(), "runner exit {:?}", output.status);
    let rows = outcomes(&common::results_rows(&out));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].3, "failed");
    assert!(
        rows[0].4.starts_with("server died during the step"),
        "{}",
        rows[0].4
    );
}

/// The default `echolab run` (no SCENARIO: the quick scenario), narrowed with `--models
/// epoll --repetitions 1` and run from a fresh directory: it makes results/quick-STAMP
/// there, one results.csv row per quick step, report.html, and prints the comparison
/// table with epoll's row.
#[test]
fn the_default_run_is_the_quick_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let mut default_run = Command::new(EXE);
    default_run.current_dir(tmp.path()).args([
        "run",
        "--models",
        "epoll",
        "--repetitions",
        "1",
        "--quiet",
    ]);
    let output = common::output_within(&mut default_run, RUN_LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let runs: Vec<PathBuf> = fs::read_dir(tmp.path().join("results"))
        .expect("a results directory under the working directory")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let out = &runs[0];
    let name = out.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("quick-"), "{name}");
    assert!(
        stdout.starts_with("scenario quick: 1 models x 3 steps x 1 repetitions"),
        "{stdout}"
    );
    let rows: Vec<(String, String, String)> = outcomes(&common::results_rows(out))
        .into_iter()
        .map(|(m, s, r, _, _)| (m, s, r))
        .collect();
    // The steps of the built-in quick scenario, as its own file names them.
    let (origin, default_name, text) = echolab::scenario::locate("quick").unwrap();
    let quick = echolab::scenario::parse(&origin, &default_name, &text).unwrap();
    assert_eq!(
        quick.steps.len(),
        3,
        "quick sweeps 10, 100 and 1000 connections"
    );
    let expected: Vec<(String, String, String)> = quick
        .steps
        .iter()
        .map(|s| ("epoll".to_string(), s.name.clone(), "1".to_string()))
        .collect();
    assert_eq!(rows, expected);
    assert!(out.join("report.html").is_file());
    assert!(stdout.contains("report: "), "{stdout}");
    let header = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("model"))
        .unwrap_or_else(|| panic!("no comparison table: {stdout}"));
    for column in ["req/s", "p99 (median rep)", "max conns", "status"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with("epoll ")),
        "no epoll row: {stdout}"
    );
    assert!(
        stdout.ends_with(&format!("results: results/{name}\n")),
        "{stdout}"
    );
}

/// A failed step is not repeated: its later repetitions are skipped with that reason.
#[test]
fn a_failed_step_skips_its_later_repetitions() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
repetitions = 3
step_timeout = "1s"
[load]
size = 16
duration = "60s"
delay = "10ms"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let rows: Vec<(String, String, String)> = outcomes(&rows)
        .into_iter()
        .map(|(_, _, rep, status, reason)| (rep, status, reason))
        .collect();
    let skipped = |rep: &str| {
        (
            rep.to_string(),
            "skipped".to_string(),
            "step failed in an earlier repetition".to_string(),
        )
    };
    assert_eq!(
        rows,
        [
            (
                "1".to_string(),
                "failed".to_string(),
                "load generator did not finish within the step timeout".to_string()
            ),
            skipped("2"),
            skipped("3"),
        ]
    );
}

/// With `[failure] repeat_failed`, a failed step runs again in every repetition (each
/// fails on its own), and a heavier step is still skipped.
#[test]
fn repeat_failed_runs_a_failed_step_in_every_repetition() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
repetitions = 2
step_timeout = "1s"
[load]
size = 16
duration = "60s"
delay = "10ms"
[sweep]
connections = [2, 3]
[failure]
repeat_failed = true
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let rows: Vec<(String, String, String, String)> = outcomes(&rows)
        .into_iter()
        .map(|(_, step, rep, status, reason)| (step, rep, status, reason))
        .collect();
    let row = |step: &str, rep: &str, status: &str, reason: &str| {
        (
            step.to_string(),
            rep.to_string(),
            status.to_string(),
            reason.to_string(),
        )
    };
    let timeout = "load generator did not finish within the step timeout";
    let heavier = "at least as heavy as failed step c2-s16-d10ms";
    assert_eq!(
        rows,
        [
            row("c2-s16-d10ms", "1", "failed", timeout),
            row("c2-s16-d10ms", "2", "failed", timeout),
            row("c3-s16-d10ms", "1", "skipped", heavier),
            row("c3-s16-d10ms", "2", "skipped", heavier),
        ]
    );
}

/// A server that exits uncleanly on SIGTERM fails its step with the exit status and its
/// stderr: here the server cannot write its summary (the test puts a directory where the
/// runner told it to write server-summary.json), so it exits 1.
#[test]
fn a_server_exiting_uncleanly_on_sigterm_fails_its_step() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[load]
size = 16
delay = "10ms"
duration = "3s"
connect_timeout = "5s"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let runner = Command::new(EXE)
        .args(["run", scenario.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--no-report", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let step = out.join("poll").join("c2-s16-d10ms").join("rep-1");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !step.is_dir() {
        assert!(Instant::now() < deadline, "the step never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    fs::create_dir_all(step.join("server-summary.json")).unwrap();
    let output = common::finish_within(runner, "the runner", RUN_LIMIT);
    assert!(output.status.success(), "runner exit {:?}", output.status);
    let rows = outcomes(&common::results_rows(&out));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].3, "failed");
    let reason = &rows[0].4;
    assert!(
        reason.starts_with("server exited with exit status: 1 on SIGTERM: ")
            && reason.contains("server-summary.json"),
        "{reason}"
    );
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

/// A load generator that fails once started (here: a source address no interface has)
/// fails its step with its own last stderr line, not only its exit status.
#[test]
fn a_failing_load_generator_says_why_in_the_failure_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[load]
connections = 2
size = 16
requests = 2
source_addrs = "192.0.2.77"
"#,
    );
    let out = tmp.path().join("out");
    let rows = outcomes(&common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].3, "failed");
    let stderr = fs::read_to_string(
        out.join("poll")
            .join(&rows[0].1)
            .join("rep-1")
            .join("load-stderr.txt"),
    )
    .or_else(|_| fs::read_to_string(out.join("poll").join(&rows[0].1).join("load-stderr.txt")))
    .unwrap_or_default();
    assert!(
        rows[0]
            .4
            .starts_with("load generator left no summary (exit status: 1; stderr: ")
            && rows[0]
                .4
                .contains("source address 192.0.2.77 cannot be bound"),
        "{} (load-stderr.txt: {stderr})",
        rows[0].4
    );
}

/// Under `ulimit -n 64` every model "failed" at its first step and the run exited 0: the
/// load generator's fd limit (the runner's, inherited) is the machine's fault. The run
/// stops at its first step with that reason, the manifest says `stopped` with it, and the
/// run exits 1.
#[test]
fn a_run_without_fds_stops_as_the_machines_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        "models = [\"epoll\", \"poll\"]\n[load]\nconnections = 3\nsize = 64\nduration = \"500ms\"\n",
    );
    let out = tmp.path().join("out");
    let mut command = Command::new(common::BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(&scenario)
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(&out);
    common::limit_in_child(&mut command, libc::RLIMIT_NOFILE, 64);
    let output = common::output_within(&mut command, RUN_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("echolab: run stopped: a fault of this machine, not of the model")
            && stderr.contains("RLIMIT_NOFILE"),
        "{stderr}"
    );
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(manifest["status"], "stopped", "{manifest}");
    assert!(
        manifest["stop_reason"]
            .as_str()
            .is_some_and(|r| r.contains("RLIMIT_NOFILE")),
        "{manifest}"
    );
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1, "the run stops at its first step: {rows:?}");
    assert_eq!(rows[0]["status"], "interrupted", "{:?}", rows[0]);
    assert!(
        rows[0]["failure_reason"].starts_with("run stopped: "),
        "{:?}",
        rows[0]
    );
}

/// docs/scenarios.md's row for `quick` said 2 repetitions, 50 000 requests/s, 1.5 s per
/// step and about 1 minute, while scenarios/quick.toml runs 5, 10 000/s, 1 s and about 2
/// minutes. Every row of the table of built-in scenarios is checked against its
/// scenario's `expected_duration`, and quick's words against its keys.
#[test]
fn the_docs_table_of_builtin_scenarios_matches_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join("docs/scenarios.md")).unwrap();
    let scenario = |name: &str| -> Option<toml::Value> {
        let text = fs::read_to_string(root.join(format!("scenarios/{name}.toml"))).ok()?;
        Some(text.parse().unwrap())
    };
    let mut checked = 0;
    let table = doc
        .split("## Built-in scenarios")
        .nth(1)
        .expect("a section of built-in scenarios");
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let name = cells[0].trim_start_matches("| `").trim_end_matches('`');
        let Some(toml) = scenario(name) else {
            continue;
        };
        let expected = toml["expected_duration"].as_str().unwrap();
        let said = cells[2];
        assert!(
            expected == said || expected.starts_with(&format!("{said};")),
            "{name}: the docs say {said:?}, the scenario {expected:?}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} rows checked");

    let quick = scenario("quick").unwrap();
    let row = doc.lines().find(|l| l.starts_with("| `quick` |")).unwrap();
    let spaced = |n: i64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) && digits.len() > 4 {
                out.push(' ');
            }
            out.push(c);
        }
        out
    };
    let connections: Vec<String> = quick["sweep"]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_integer().unwrap().to_string())
        .collect();
    let (last, first) = connections.split_last().unwrap();
    let seconds = |key: &str| {
        quick["load"][key]
            .as_str()
            .unwrap()
            .trim_end_matches('s')
            .to_string()
    };
    for words in [
        format!("{} and {last} connections", first.join(", ")),
        format!(
            "{}-byte messages",
            quick["load"]["size"].as_integer().unwrap()
        ),
        format!(
            "{} requests/s in all",
            spaced(quick["load"]["rate"].as_integer().unwrap())
        ),
        format!("for {} s per step", seconds("duration")),
        format!("after a {} s warm-up", seconds("warmup")),
        format!("{} repetitions", quick["repetitions"].as_integer().unwrap()),
    ] {
        assert!(row.contains(&words), "{words:?} not in {row}");
    }
}
