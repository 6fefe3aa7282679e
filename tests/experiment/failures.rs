//! Failed steps: timeouts, error rates, servers that fail to start, die or exit uncleanly, a failing load generator.

use super::*;

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
    let statuses = common::cells(&rows, ["step", "status"]);
    assert_eq!(
        statuses,
        [
            ["c500-s16", "ok"],
            ["c1100-s16", "failed"],
            ["c1500-s16", "skipped"]
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
    let runner = start_run(&scenario, &out);
    let step = out.join("poll").join("c2-s16-d10ms").join("rep-1");
    // Once the load writes, the server listens: past its start-up check that it can
    // write its summary, which a directory put there earlier would fail instead.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !step.join("load").join("summary.json").is_file() {
        assert!(Instant::now() < deadline, "the step's load never started");
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
