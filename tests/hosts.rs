//! `[hosts]`: a server host and client hosts as network namespaces, end to end.
//!
//! These need root and iproute2 (`ip netns`), as CI has; elsewhere they fail with a
//! message saying so, unless ECHOLAB_SKIP_NETNS=1 skips them (a visible skip, and a
//! failure under CI=true: see common::skip).

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::NETNS_NEEDS as NEEDS;
use common::{alive, read_json, results_rows, start_run, wait_for_file, write_scenario, BIN};

/// The names of the namespaces starting with `prefix`.
fn namespaces(prefix: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// The two-client-hosts scenario with `load` added to its [load] table.
fn two_hosts_scenario(dir: &Path, load: &str) -> PathBuf {
    write_scenario(
        dir,
        &format!(
            r#"
name = "two-hosts"
models = ["epoll"]
[hosts]
clients = 2
[server]
workers = 1
[load]
size = 32
connect_timeout = "5s"
{load}
[sweep]
connections = [5]
"#
        ),
    )
}

/// Waits (bounded) for the run to exit; returns its exit code.
fn wait_exit(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the run did not exit within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server's pid from its `listening on ... pid=N` line.
fn server_pid(step: &Path) -> u32 {
    let stdout = fs::read_to_string(step.join("server-stdout.txt")).unwrap();
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix("pid="))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {stdout:?}"))
}

#[test]
fn two_client_hosts_run_end_to_end() {
    if !common::netns_available("hosts::two_client_hosts_run_end_to_end") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let scenario = two_hosts_scenario(tmp.path(), "requests = 20\nhold = \"300ms\"");
    let out = tmp.path().join("out");
    let child = start_run(&scenario, &out);
    let prefix = format!("elab{}-", child.id());
    let output = common::finish_within(child, "the two-host run", common::RUN_LIMIT);
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let rows = results_rows(&out);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let cells: Vec<&str> = [
        "model",
        "step",
        "status",
        "failure_reason",
        "connections_established",
        "max_concurrent_server",
        "requests",
        "client_bytes_sent",
        "client_bytes_received",
        "server_bytes_in",
        "server_bytes_out",
        "bytes_match",
    ]
    .iter()
    .map(|c| row[*c].as_str())
    .collect();
    // 5 connections x 20 requests x 32 bytes.
    assert_eq!(
        cells,
        ["epoll", "c5-s32", "ok", "", "5", "5", "100", "3200", "3200", "3200", "3200", "true"]
    );

    let step = out.join("epoll").join("c5-s32").join("rep-1");
    let listening = fs::read_to_string(step.join("server-stdout.txt")).unwrap();
    assert!(
        listening.starts_with("listening on 198.18.0.1:"),
        "{listening}"
    );
    // Shard 0 of 2 owns connections 0, 2, 4; shard 1 owns 1, 3.
    let summary = read_json(&step.join("server-summary.json"));
    let hosts: Vec<(String, u64, u64, u64)> = summary["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["connections"].as_u64().unwrap(),
                h["bytes_in"].as_u64().unwrap(),
                h["bytes_out"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hosts,
        [
            ("198.18.0.11".to_string(), 3, 1920, 1920),
            ("198.18.0.12".to_string(), 2, 1280, 1280)
        ]
    );
    for (host, established) in [("host-1", 3), ("host-2", 2)] {
        let part = read_json(&step.join("load").join(host).join("summary.json"));
        assert_eq!(part["connections_established"], established, "{host}");
    }
    let merged = read_json(&step.join("load").join("summary.json"));
    assert_eq!(merged["connections_established"], 5);
    assert_eq!(merged["requests_completed"], 100);
    // The probe watched the server itself: `ip netns exec` runs it under the child's pid.
    let probe = fs::read_to_string(step.join("probe.csv")).unwrap();
    assert!(probe.lines().count() >= 2, "{probe}");
    assert!(!alive(server_pid(&step)));

    assert_eq!(namespaces(&prefix), Vec::<String>::new());
}

#[test]
fn sigterm_mid_run_removes_the_namespaces() {
    if !common::netns_available("hosts::sigterm_mid_run_removes_the_namespaces") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let scenario = two_hosts_scenario(tmp.path(), "duration = \"30s\"");
    let out = tmp.path().join("out");
    let mut child = start_run(&scenario, &out);
    let prefix = format!("elab{}-", child.id());
    let step = out.join("epoll").join("c5-s32").join("rep-1");
    // The load-command file is written once every client host's agent is started.
    wait_for_file(&mut child, &step.join("load-command.txt"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        namespaces(&prefix),
        ["br", "c1", "c2", "srv"].map(|n| format!("{prefix}{n}"))
    );
    // SAFETY: kill has no memory preconditions; the pid is our own live child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    assert_eq!(wait_exit(&mut child), Some(130));
    assert_eq!(namespaces(&prefix), Vec::<String>::new());
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "interrupted");
    assert_eq!(rows[0]["failure_reason"], "run interrupted by signal 15");
    assert!(!alive(server_pid(&step)));
    // Each host's agent flushed a partial result, and they were merged.
    let merged = read_json(&step.join("load").join("summary.json"));
    assert_eq!(merged["interrupted"], true);
    assert_eq!(merged["connections_established"], 5);
}

#[test]
fn a_run_killed_outright_is_cleaned_up_by_the_next() {
    if !common::netns_available("hosts::a_run_killed_outright_is_cleaned_up_by_the_next") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let scenario = two_hosts_scenario(tmp.path(), "duration = \"30s\"");
    let out = tmp.path().join("killed");
    let mut child = start_run(&scenario, &out);
    let prefix = format!("elab{}-", child.id());
    let step = out.join("epoll").join("c5-s32").join("rep-1");
    wait_for_file(&mut child, &step.join("load-command.txt"));
    child.kill().unwrap();
    child.wait().unwrap();
    // SIGKILL leaves no chance to clean up; the next multi-host run removes the dead
    // run's namespaces (its children died with it through PR_SET_PDEATHSIG).
    let short = two_hosts_scenario(tmp.path(), "requests = 1");
    let next = start_run(&short, &tmp.path().join("next"));
    let output = common::finish_within(next, "the run after a killed one", common::RUN_LIMIT);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(namespaces(&prefix), Vec::<String>::new());
    assert!(!alive(server_pid(&step)));
}

#[test]
fn without_root_the_run_says_what_it_needs() {
    if !common::netns_available("hosts::without_root_the_run_says_what_it_needs") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The unprivileged run must be able to read the scenario.
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let scenario = two_hosts_scenario(tmp.path(), "requests = 1");
    let out = tmp.path().join("out");
    // The unprivileged run must be able to execute the binary too: a clone under a
    // directory others cannot enter (root's home is 0700) holds it where nobody can, so
    // run a copy from the temporary directory.
    let bin = tmp.path().join("echolab");
    fs::copy(BIN, &bin).unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let mut command = Command::new(&bin);
    command.arg("run").arg(&scenario).arg("--out").arg(&out);
    // SAFETY: setgid/setuid are async-signal-safe and touch no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::setgid(65534) == -1 || libc::setuid(65534) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = common::output_within(&mut command, common::COMMAND_LIMIT);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim(),
        format!("echolab: {NEEDS}: this process is not root")
    );
    assert!(!out.exists());
}
