//! `echolab run` studying servers it did not write, on a weak machine, over a shaped
//! network: command model entries (the reference servers of examples/servers), a
//! command that never listens, a memory cap that kills its server, a 10 Mbit client
//! link, and a missing qdisc.
//!
//! These need root (cgroups, namespaces, tc), python3 and node, as CI has; elsewhere
//! they are skipped visibly (and fail under CI=true: see common::skip).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::number;
use serde_json::Value;

/// The five reference servers of examples/servers, as scenario model tables.
const REFERENCE_SERVERS: [(&str, &str, &str); 5] = [
    (
        "python-threads",
        "python3",
        "examples/servers/python-threads.py",
    ),
    (
        "python-select",
        "python3",
        "examples/servers/python-select.py",
    ),
    (
        "python-asyncio",
        "python3",
        "examples/servers/python-asyncio.py",
    ),
    ("node-net", "node", "examples/servers/node-net.js"),
    ("node-cluster", "node", "examples/servers/node-cluster.js"),
];

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether this test can run: root, python3, node, ip and tc. Skips visibly otherwise
/// (a failure under CI).
fn lab_available(test: &str) -> bool {
    let root = common::is_root();
    let missing: Vec<&str> = ["python3", "node", "ip", "tc"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !root || !missing.is_empty() {
        common::skip(
            test,
            &format!("needs root (root: {root}) and python3, node, ip, tc (missing: {missing:?})"),
        );
        return false;
    }
    true
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn model_table(label: &str, argv: &[&str], extra: &str) -> String {
    let quoted: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[model.{label}]\ncommand = [{}]\n{extra}\n",
        quoted.join(", ")
    )
}

#[test]
fn reference_servers_studied_end_to_end() {
    if !lab_available("external::reference_servers_studied_end_to_end") {
        return;
    }
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let labels: Vec<String> = REFERENCE_SERVERS
        .iter()
        .map(|(l, _, _)| format!("{l:?}"))
        .collect();
    let mut scenario = format!("models = [{}]\nstep_timeout = \"30s\"\n", labels.join(", "));
    for (label, interpreter, script) in REFERENCE_SERVERS {
        scenario += &model_table(label, &[interpreter, script, "{port}", "{addr}"], "");
    }
    let (connections, size) = (4u64, 1000u64);
    scenario += &format!(
        "[load]\nconnections = {connections}\nsize = {size}\nduration = \"1s\"\nconnect_timeout = \"5s\"\n"
    );
    let out = dir.path().join("out");
    let output = common::run_scenario(&common::write_scenario(dir.path(), &scenario), &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows = common::results_rows(&out);
    // Rows come in the rounds' order (shuffled per round): compare as sets.
    let mut got = common::cells(&rows, ["model", "status"]);
    let mut want: Vec<[&str; 2]> = REFERENCE_SERVERS
        .iter()
        .map(|(l, _, _)| [*l, "ok"])
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{}", stderr(&output));
    for row in &rows {
        let model = &row["model"];
        assert_eq!(
            number(row, "connections_established"),
            connections as f64,
            "{model}"
        );
        // Byte counts come from the client: every request of `size` bytes came back.
        let requests = number(row, "requests");
        assert!(requests > 0.0, "{model}");
        assert_eq!(
            number(row, "client_bytes_sent"),
            requests * size as f64,
            "{model}"
        );
        assert_eq!(
            number(row, "client_bytes_received"),
            requests * size as f64,
            "{model}"
        );
        assert_eq!(number(row, "mismatches"), 0.0, "{model}");
        // A server given as a command keeps no counts: absent, never a false match.
        for column in [
            "server_bytes_in",
            "server_bytes_out",
            "bytes_match",
            "max_concurrent_server",
        ] {
            assert_eq!(row[column], "", "{model} {column}");
        }
        // Its process tree measured from /proc: an interpreter's RSS is megabytes, and
        // a second of echoing costs CPU time.
        let rss = number(row, "server_rss_max_bytes");
        assert!(
            (4.0 * 1048576.0..2048.0 * 1048576.0).contains(&rss),
            "{model} rss {rss}"
        );
        let cpu = number(row, "server_cpu_user_s") + number(row, "server_cpu_sys_s");
        assert!(cpu > 0.0, "{model} used no CPU time");
        let cores = std::thread::available_parallelism().unwrap().get() as f64;
        let pct = number(row, "server_cpu_pct");
        assert!(
            (0.0..=100.0 * cores + 5.0).contains(&pct),
            "{model} cpu {pct}%"
        );
        // The listener and a socket per connection at least.
        assert!(
            number(row, "server_fds_max") > connections as f64,
            "{model}"
        );
    }
    let threads = |m: &str| {
        number(
            rows.iter().find(|r| r["model"] == m).unwrap(),
            "server_threads_max",
        )
    };
    // A thread per client, and node-cluster's workers are separate processes of its tree.
    assert!(threads("python-threads") > connections as f64, "{rows:?}");
    assert!(threads("node-cluster") > threads("node-net"), "{rows:?}");
    let python = rows
        .iter()
        .find(|r| r["model"] == "python-threads")
        .unwrap();
    let command =
        fs::read_to_string(out.join("python-threads/c4-s1000/rep-1/server-command.txt")).unwrap();
    assert!(
        command.starts_with("python3 examples/servers/python-threads.py "),
        "{command}"
    );
    assert!(!command.contains("{port}"), "{command}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains(
            "none from python-threads, python-select, python-asyncio, node-net, node-cluster"
        ),
        "the report says which servers report no byte counts"
    );
    assert!(
        !report.contains("client and server byte counts agreed, in all"),
        "{python:?}"
    );
}

#[test]
fn a_command_that_never_listens_times_out_naming_it() {
    if !lab_available("external::a_command_that_never_listens_times_out_naming_it") {
        return;
    }
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let script =
        "import sys, time; print('still warming up', file=sys.stderr, flush=True); time.sleep(60)";
    let scenario = format!(
        "models = [\"sleeper\", \"nothere\"]\n{}{}[load]\nconnections = 1\nrequests = 1\n",
        model_table(
            "sleeper",
            &["python3", "-c", script, "{port}"],
            "start_timeout = \"1s\""
        ),
        model_table("nothere", &["echolab-no-such-program", "{port}"], ""),
    );
    let out = dir.path().join("out");
    let output = common::run_scenario(&common::write_scenario(dir.path(), &scenario), &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["status"], "failed");
    let reason = &rows[0]["failure_reason"];
    assert!(
        reason.starts_with("`python3 -c import sys, time;"),
        "{reason}"
    );
    assert!(
        reason.contains("did not accept connections on 127.0.0.1:"),
        "{reason}"
    );
    assert!(
        reason.contains("within 1 s; its stderr ends: still warming up"),
        "{reason}"
    );
    // A program that is not installed is a row that says so, not a silent gap.
    assert_eq!(rows[1]["status"], "not-run");
    assert_eq!(
        rows[1]["failure_reason"],
        "`echolab-no-such-program` is not installed here (not found on PATH)"
    );
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("not run: `echolab-no-such-program` is not installed"),
        "{table}"
    );
}

/// Cgroups named `echolab-<pid>-<n>` whose runner is gone, anywhere under /sys/fs/cgroup.
fn orphan_cgroups() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) || path.is_symlink() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix("echolab-")
                .and_then(|r| r.split_once('-'))
                .and_then(|(p, _)| p.parse::<u32>().ok())
            {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    found.push(path.clone());
                }
            }
            if path.components().count() < 8 {
                stack.push(path);
            }
        }
    }
    found
}

#[test]
fn a_memory_cap_that_kills_the_server_is_the_failure_reason() {
    if !lab_available("external::a_memory_cap_that_kills_the_server_is_the_failure_reason") {
        return;
    }
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    // Listens, and on its first connection holds 200 MiB (written, so resident).
    let script = "import socket, sys\n\
                  s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
                  s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(16)\n\
                  print('listening', flush=True)\n\
                  held = []\n\
                  while True:\n\
                  \x20   c, _ = s.accept()\n\
                  \x20   held.append(c)\n\
                  \x20   if len(held) == 2: hog = b'x' * (200 << 20)\n";
    let scenario = format!(
        "models = [\"hog\"]\n{}[load]\nconnections = 1\nrequests = 3\nresponse_timeout = \"5s\"\n",
        model_table(
            "hog",
            &["python3", "-c", script, "{port}"],
            "memory_max = \"64MiB\"\ncpu_quota = 0.5\ntasks_max = 50"
        ),
    );
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&common::write_scenario(dir.path(), &scenario), &out, &[]);
    assert_eq!(rows[0]["status"], "failed", "{rows:?}");
    // The runner's readiness check is the first connection; the load's is the second.
    assert_eq!(rows[0]["failure_reason"], "oom-killed at 64 MiB");
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["conditions"]["server_limits"]["hog"],
        serde_json::json!({"cpu_quota": 0.5, "memory_max_bytes": 64u64 << 20, "tasks_max": 50})
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("cpu 0.5 core, memory 64 MiB, tasks 50 (a cgroup of its own)"));
    assert_eq!(
        orphan_cgroups(),
        Vec::<PathBuf>::new(),
        "the run removed its cgroups"
    );
}

/// The two-host lab with one shaped client link; the load runs `seconds` of `size` messages.
fn shaped_scenario(network: &str, connections: u64, size: &str, seconds: u64) -> String {
    format!(
        "models = [\"epoll\"]\nstep_timeout = \"60s\"\n[hosts]\nclients = 1\n[network]\n{network}\n\
         [load]\nconnections = {connections}\nsize = \"{size}\"\nduration = \"{seconds}s\"\nconnect_timeout = \"5s\"\n"
    )
}

#[test]
fn a_10_mbit_link_caps_the_throughput() {
    if !lab_available("external::a_10_mbit_link_caps_the_throughput") {
        return;
    }
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let rate_bit_s = 10_000_000.0;
    let out = dir.path().join("out");
    let scenario = shaped_scenario("rate = \"10mbit\"", 4, "64KiB", 6);
    let rows = common::run_scenario_ok(
        &common::write_scenario(dir.path(), &scenario),
        &out,
        &["--no-report"],
    );
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    // One client host: its own summary, nothing to merge.
    let summary: Value = serde_json::from_str(
        &fs::read_to_string(out.join("epoll/c4-s65536/rep-1/load/host-1/summary.json")).unwrap(),
    )
    .unwrap();
    let measured = summary["throughput_bytes_per_s"].as_f64().unwrap();
    // tbf counts each frame's bytes past the Ethernet header's start: a full segment
    // carries MSS = 1500 - 20 (IP) - 32 (TCP with timestamps) = 1448 payload bytes in
    // 1448 + 52 + 14 = 1514; the same link also carries a 66-byte ACK for every two
    // segments of the echo coming the other way.
    let (mss, frame, ack_share) = (1448.0, 1514.0, 66.0 / 2.0);
    let expected = rate_bit_s / 8.0 * mss / (frame + ack_share);
    let ratio = measured / expected;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "measured {measured:.0} B/s, expected {expected:.0} B/s on a 10 Mbit/s link (ratio {ratio:.3})"
    );
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["conditions"]["network"]["rate_bit_s"], 10_000_000);
    assert_eq!(manifest["conditions"]["network"]["qdisc"], "tbf");
}

/// Whether this kernel has netem, found out in a namespace of the test's own.
fn kernel_has_netem() -> bool {
    // A pid above the kernel's maximum is never alive: a leftover is cleaned by any run.
    let ns = "elab4999998-netemprobe";
    let _ = Command::new("ip").args(["netns", "add", ns]).status();
    let has = Command::new("ip")
        .args([
            "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    let _ = Command::new("ip").args(["netns", "delete", ns]).status();
    has
}

#[test]
fn a_missing_qdisc_is_a_clear_start_up_error() {
    if !lab_available("external::a_missing_qdisc_is_a_clear_start_up_error") {
        return;
    }
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scenario = shaped_scenario("rate = \"100mbit\"\ndelay = \"1ms\"", 2, "64", 1);
    let output = common::run_scenario(
        &common::write_scenario(dir.path(), &scenario),
        &out,
        &["--no-report"],
    );
    if kernel_has_netem() {
        // Then the delay must be there: two one-way delays in every round trip.
        assert!(output.status.success(), "{}", stderr(&output));
        let rows = common::results_rows(&out);
        assert_eq!(rows[0]["status"], "ok", "{rows:?}");
        assert!(number(&rows[0], "p50_us") >= 2000.0, "{rows:?}");
    } else {
        assert!(!output.status.success());
        let err = stderr(&output);
        assert!(
            err.contains("[network] delay, jitter and loss need the `netem` qdisc, which this kernel does not have"),
            "{err}"
        );
        assert!(err.contains("rate alone works (tbf)"), "{err}");
        // It failed before any step ran.
        assert_eq!(common::results_rows(&out).len(), 0);
    }
}
