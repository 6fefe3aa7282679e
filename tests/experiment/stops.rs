//! SIGTERM to a run: the step stops, its results kept, no process left.

use super::*;

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
    assert_all_gone(&children, "the run's processes");
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
    assert_all_gone(&children, "the run's processes");
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
