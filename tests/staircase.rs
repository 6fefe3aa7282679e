//! The staircase load shape end to end: one live server, batches of real connections
//! on loopback that stay open, one row per stair.

use std::fs;
use std::path::{Path, PathBuf};

mod common;

use common::{number, QUIET_NO_REPORT};

/// Every file named `name` under `dir`.
fn find(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}

#[test]
fn three_stairs_on_one_live_server_then_the_hold() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[server]
workers = 1
[load]
size = 16
delay = "100ms"
connect_timeout = "5s"
[staircase]
batch = 50
every = "1s"
to = 150
hold = "1s"
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let steps = common::cells(&rows, ["step", "stair", "connections", "status"]);
    assert_eq!(
        steps,
        [
            ["c50-s16-d100ms", "1", "50", "ok"],
            ["c100-s16-d100ms", "2", "100", "ok"],
            ["c150-s16-d100ms", "3", "150", "ok"],
            ["c150-s16-d100ms-hold", "3", "150", "ok"],
        ],
        "{rows:?}"
    );
    for row in &rows {
        // Every connection of every stair so far is open at the stair's end.
        assert_eq!(
            row["connections_established"], row["connections"],
            "{row:?}"
        );
        assert!(number(row, "requests") > 0.0, "{row:?}");
        assert_eq!(number(row, "errors"), 0.0, "{row:?}");
        assert!(number(row, "p99_us") > 0.0, "{row:?}");
        // The generators' CPU in the stair's window (counted in 10 ms ticks: a quiet
        // stair's may be 0), and the judgement it gives.
        assert!(number(row, "load_cpu_pct") >= 0.0, "{row:?}");
        assert_eq!(row["generator_bound"], "false", "{row:?}");
    }
    for row in &rows[..3] {
        assert!(number(row, "ramp_s") > 0.0, "{row:?}");
        assert!(number(row, "connect_rate_per_s") > 0.0, "{row:?}");
    }
    assert_eq!(rows[3]["ramp_s"], "");
    // The first stair's deadline is the connect timeout and 2 s; the next ones add twice
    // their batch at the stair before's rate, at most four connect timeouts of it.
    assert_eq!(number(&rows[0], "stair_deadline_s"), 7.0);
    for row in &rows[1..3] {
        let deadline = number(row, "stair_deadline_s");
        assert!(deadline > 7.0 && deadline <= 47.0, "{row:?}");
    }
    assert_eq!(rows[3]["stair_deadline_s"], "");
    // One server for the whole staircase: one summary, every connection accepted once.
    let summaries = find(&out.join("epoll"), "server-summary.json");
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&summaries[0]).unwrap()).unwrap();
    assert_eq!(summary["accepted"], 150, "{summary}");
    assert_eq!(summary["max_concurrent"], 150, "{summary}");
    // Each batch's load ran to the end of the staircase and wrote its summary on the stop.
    for (stair, batch) in [("c50-s16-d100ms", 50), ("c150-s16-d100ms", 50)] {
        let path = out
            .join("epoll")
            .join(stair)
            .join("rep-1/load/summary.json");
        let load: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(load["connections_established"], batch, "{load}");
        assert_eq!(load["mismatches"], 0, "{load}");
    }
}

#[test]
fn select_breaks_above_fd_setsize_and_climbs_no_further() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["select"]
[load]
size = 16
delay = "200ms"
connect_timeout = "5s"
[staircase]
batch = 400
every = "1s"
to = 1600
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    let steps = common::cells(&rows, ["step", "status"]);
    assert_eq!(
        steps,
        [
            ["c400-s16-d200ms", "ok"],
            ["c800-s16-d200ms", "ok"],
            ["c1200-s16-d200ms", "failed"],
            ["c1600-s16-d200ms", "skipped"],
        ],
        "{rows:?}"
    );
    let broke = &rows[2];
    // select holds fds below FD_SETSIZE (1024) only: fewer than 1200 stay open.
    assert!(
        number(broke, "connections_established") < 1024.0,
        "{broke:?}"
    );
    assert!(
        broke["failure_reason"].contains("connections established (needed 1200)"),
        "{broke:?}"
    );
    assert_eq!(
        rows[3]["failure_reason"],
        "at least as heavy as failed stair c1200-s16-d200ms"
    );
    assert_eq!(rows[3]["requests"], "");
}

#[test]
fn a_staircase_killed_keeps_the_rows_of_the_stairs_it_judged() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[server]
workers = 1
[load]
size = 16
delay = "100ms"
connect_timeout = "5s"
[staircase]
batch = 5
every = "1s"
to = 30
"#,
    );
    let out = tmp.path().join("out");
    let mut child = common::start_run(&scenario, &out);
    // Stair 3's folder is made once stairs 1 and 2 are judged.
    let third = out.join("epoll").join("c15-s16-d100ms");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !third.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(third.exists(), "stair 3 never started");
    let rows = common::results_rows(&out);
    let judged = common::cells(&rows[..rows.len().min(2)], ["step", "stair", "status"]);
    assert_eq!(
        judged,
        [["c5-s16-d100ms", "1", "ok"], ["c10-s16-d100ms", "2", "ok"]],
        "{rows:?}"
    );
    assert_eq!(rows[1]["connections_established"], "10", "{rows:?}");
    assert!(number(&rows[1], "requests") > 0.0, "{rows:?}");
}

/// The runner `run`'s `echolab load` processes that write under `dir`.
fn loads_under(run: &std::process::Child, dir: &Path) -> Vec<u32> {
    let dir = dir.to_string_lossy();
    common::descendants(run.id())
        .into_iter()
        .filter(|pid| {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<_> = cmdline
                .split(|b| *b == 0)
                .map(String::from_utf8_lossy)
                .collect();
            args.iter().any(|a| a == "load") && args.iter().any(|a| a.starts_with(&*dir))
        })
        .collect()
}

#[test]
fn a_stair_connected_after_its_deadline_fails_though_its_window_finds_every_connection() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    // Stair 2's deadline is 1 s + 2 x its ramp at stair 1's rate (1-2 s at 20/s as the
    // runner sees it, at most 4 x connect_timeout on a slow machine) + 2 s: 5-11 s. Its
    // generator is frozen for 12 s from its start, past any such deadline, then connects
    // (at once, or at 20/s when frozen before it began) inside the 14 s window that
    // follows the deadline. Frozen before it began, it writes its first files only inside
    // that window: the window must find it there, not only the loads it saw open.
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[server]
workers = 1
[load]
size = 16
delay = "100ms"
connect_timeout = "1s"
connect_rate = 20
[failure]
min_established = 0.9
[staircase]
batch = 20
every = "14s"
to = 40
"#,
    );
    let out = tmp.path().join("out");
    let child = common::start_run(&scenario, &out);
    let second = out.join("epoll").join("c40-s16-d100ms");
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut frozen = Vec::new();
    while frozen.is_empty() && std::time::Instant::now() < give_up {
        if second.exists() {
            frozen = loads_under(&child, &second);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(!frozen.is_empty(), "stair 2's load never started");
    for &pid in &frozen {
        common::signal(pid as i32, libc::SIGSTOP);
    }
    std::thread::sleep(std::time::Duration::from_secs(12));
    for &pid in &frozen {
        common::signal(pid as i32, libc::SIGCONT);
    }
    let ran = common::finish_within(child, "the run", std::time::Duration::from_secs(120));
    assert!(ran.status.success());
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    let late = &rows[1];
    assert_eq!(late["status"], "failed", "{late:?}");
    // The window after the deadline found the batch connected...
    assert_eq!(late["connections_established"], "40", "{late:?}");
    // ...and the deadline decides.
    let reason = &late["failure_reason"];
    assert!(
        reason.contains(" of 20 connections established within its deadline of "),
        "{reason}"
    );
    // ...with what the server's TCP counted while the batch connected, to tell a full
    // listen queue from a load that was late (this one was frozen).
    assert!(
        reason.contains("; while it connected the server's TCP counted ")
            && reason.ends_with(" SYN or SYN-ACK retransmission(s)"),
        "{reason}"
    );
    assert!(
        number(late, "ramp_s") > number(late, "stair_deadline_s"),
        "{late:?}"
    );
}

#[test]
fn a_window_of_a_second_and_a_half_rates_the_requests_of_the_seconds_it_holds() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[load]
size = 16
delay = "10ms"
[staircase]
batch = 2
every = "1.5s"
to = 2
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (requests, rate) = (
        number(&rows[0], "requests"),
        number(&rows[0], "throughput_rps"),
    );
    // The window holds one or two whole timeline seconds of each load: the rate is the
    // requests over them (divided by 1.5 s it was 2/3 or 4/3 of the true rate).
    let seconds = requests / rate;
    assert!(
        (seconds - 1.0).abs() < 1e-3 || (seconds - 2.0).abs() < 1e-3,
        "{requests} requests at {rate}/s: {seconds} s"
    );
    // Two connections, each waiting 10 ms between requests: at most 2 x 101 a second,
    // a few more in a timeline second the load's recorder cut late (it wakes every 20 ms),
    // and well under the 4/3 x 200 of a rate divided by the window's 1.5 s.
    assert!(rate > 0.0 && rate <= 230.0, "{:?}", rows[0]);
}

#[test]
fn a_window_under_a_second_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        "models = [\"epoll\"]\n[load]\ndelay = \"10ms\"\n[staircase]\nbatch = 2\nevery = \"0.25s\"\nto = 2\n",
    );
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, QUIET_NO_REPORT);
    // Exit 2, as every scenario the validation refuses (tests/experiment.rs).
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[staircase] every = 0.25 s is under 1 s"),
        "{stderr}"
    );
    assert!(!out.join("results.csv").exists());
}

/// MemTotal of this machine, in MiB.
fn mem_total_mib() -> u64 {
    let text = fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with("MemTotal:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024
}

/// A staircase scenario of two stairs of 5 on epoll keeping `keep_available`.
fn margin_scenario(dir: &Path, keep_available: &str) -> PathBuf {
    common::write_scenario(
        dir,
        &format!(
            "models = [\"epoll\"]\n[load]\nsize = 16\ndelay = \"100ms\"\nconnect_timeout = \"5s\"\n\
             [staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\nkeep_available = \"{keep_available}\"\n"
        ),
    )
}

#[test]
fn a_margin_that_cannot_be_kept_stops_the_staircase_before_its_first_stair() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    // All of the machine's memory: MemAvailable is always less.
    let total = mem_total_mib();
    let scenario = margin_scenario(tmp.path(), &format!("{total}MiB"));
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET_NO_REPORT);
    let steps = common::cells(&rows, ["step", "status", "connections_established"]);
    assert_eq!(
        steps,
        [
            ["c5-s16-d100ms", "skipped", ""],
            ["c10-s16-d100ms", "skipped", ""]
        ],
        "{rows:?}"
    );
    let reason = &rows[0]["failure_reason"];
    assert!(
        reason.starts_with("stopped at the memory margin: "),
        "{reason}"
    );
    assert!(
        reason.contains(
            "at 16384 bytes per connection assumed before any was measured; 5 more connections would leave"
        ),
        "{reason}"
    );
    assert!(
        reason.ends_with(&format!("under the margin of {total} MiB (keep_available)")),
        "{reason}"
    );
    assert_eq!(
        rows[1]["failure_reason"],
        "not climbed: the staircase stopped at the memory margin before stair c5-s16-d100ms"
    );
    // No load was started: no connection was made.
    assert!(find(&out, "summary.json").is_empty());
}

#[test]
fn a_margin_that_is_kept_changes_nothing() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = margin_scenario(tmp.path(), "512MiB");
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    let steps = common::cells(
        &rows,
        [
            "step",
            "status",
            "connections_established",
            "failure_reason",
        ],
    );
    assert_eq!(
        steps,
        [
            ["c5-s16-d100ms", "ok", "5", ""],
            ["c10-s16-d100ms", "ok", "10", ""]
        ],
        "{rows:?}"
    );
}

#[test]
fn an_absurd_margin_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = margin_scenario(tmp.path(), &format!("{}MiB", mem_total_mib() + 1));
    let out = tmp.path().join("out");
    let output = common::run_scenario(&scenario, &out, QUIET_NO_REPORT);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[staircase] keep_available = ")
            && stderr
                .contains("the margin must be at least 256 MiB and at most this machine's memory"),
        "{stderr}"
    );
    assert!(!out.join("results.csv").exists());
}
