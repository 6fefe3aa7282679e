//! The classic study's measures and load shapes end to end: `echolab run` with real
//! servers and load generators on loopback, each figure checked against what the
//! step's own files say.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;

use common::{number, BIN, QUIET_NO_REPORT};

/// Sums of (requests, total_response_us) over a load's connections.csv.
fn response_totals(path: &Path) -> (f64, f64) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (requests, total) = (at("requests"), at("total_response_us"));
    reader.records().fold((0.0, 0.0), |(n, t), r| {
        let r = r.unwrap();
        (
            n + r[requests].parse::<f64>().unwrap(),
            t + r[total].parse::<f64>().unwrap(),
        )
    })
}

#[test]
fn mean_and_completion_time_of_a_fixed_workload() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[server]
workers = 1
[load]
connections = 4
size = 16
requests = 30
delay = "2ms"
hold = "1s"
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["status"], "ok");
    assert_eq!(row["requests"], "120");
    // The mean is the histogram's: within its 3 significant digits of the exact mean
    // that the per-connection totals give.
    let mean = number(row, "mean_us");
    let (requests, total_us) = response_totals(
        &tmp.path()
            .join("out/epoll/c4-s16-d2ms/rep-1/load/connections.csv"),
    );
    assert_eq!(requests, 120.0);
    let exact = total_us / requests;
    assert!(
        (mean - exact).abs() <= exact * 0.002 + 1.0,
        "mean {mean} vs {exact}"
    );
    assert!(mean <= number(row, "max_us"));
    // Each connection waits 2 ms before each of its 30 requests; the hold of 1 s
    // comes after the last one finished, so the completion time excludes it.
    let completion = number(row, "completion_s");
    let duration = number(row, "duration_s");
    assert!(completion >= 0.058, "completion {completion} s");
    assert!(
        completion + 1.0 <= duration,
        "{completion} + 1 s hold > {duration}"
    );
}

#[test]
fn a_timed_run_has_no_completion_time() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[load]
connections = 2
duration = "1s"
delay = "5ms"
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[0]["completion_s"], "");
    assert!(number(&rows[0], "mean_us") > 0.0);
}

#[test]
fn the_requests_axis_sets_each_steps_workload() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["poll"]
[load]
connections = 3
size = 8
[sweep]
requests = [4, 25]
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    let seen = common::cells(
        &rows,
        [
            "step",
            "requests_per_conn",
            "requests",
            "client_bytes_received",
        ],
    );
    assert_eq!(
        seen,
        [
            ["c3-s8-n4", "4", "12", "96"],
            ["c3-s8-n25", "25", "75", "600"]
        ]
    );
    for row in &rows {
        assert!(number(row, "completion_s") > 0.0);
    }
}

#[test]
fn the_hosts_axis_splits_the_load_over_the_first_n_hosts() {
    if !common::netns_available("the_hosts_axis_splits_the_load_over_the_first_n_hosts") {
        return;
    }
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[load]
connections = 6
size = 8
requests = 5
[hosts]
clients = 3
[sweep]
hosts = [1, 3]
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    let seen = common::cells(&rows, ["step", "status", "client_hosts", "requests"]);
    assert_eq!(
        seen,
        [["c6-s8-h1", "ok", "1", "30"], ["c6-s8-h3", "ok", "3", "30"]]
    );
    // The server's per-host table counts the client addresses it saw.
    for (step, hosts) in [("c6-s8-h1", 1), ("c6-s8-h3", 3)] {
        let path = tmp
            .path()
            .join(format!("out/epoll/{step}/rep-1/server-summary.json"));
        let summary: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        let table = summary["hosts"].as_array().map(Vec::len);
        assert_eq!(table, Some(hosts), "{step}: {}", summary["hosts"]);
    }
}

#[test]
fn network_counters_come_from_the_steps_own_namespace() {
    if !common::netns_available("network_counters_come_from_the_steps_own_namespace") {
        return;
    }
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll"]
[load]
connections = 5
size = 32
requests = 40
hold = "1500ms"
[network]
own_namespace = true
"#,
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    let row = &rows[0];
    assert_eq!(row["status"], "ok");
    assert_eq!(row["net_scope"], "step");
    // Server and load share the step's namespace: each segment one side sends, the
    // other receives, and nothing else runs there. 200 requests and 200 echoes are
    // at least 400 segments.
    let seg_in = number(row, "net_segs_in_per_s");
    assert_eq!(seg_in, number(row, "net_segs_out_per_s"));
    assert!(
        seg_in * number(row, "duration_s") >= 400.0 * 0.9,
        "{seg_in}/s"
    );
    assert_eq!(row["net_retrans_segs"], "0");
    assert_eq!(row["net_listen_drops"], "0");
    let timeline =
        fs::read_to_string(tmp.path().join("out/epoll/c5-s32/rep-1/net-timeline.csv")).unwrap();
    assert!(timeline.starts_with("t_s,segs_in_per_s,segs_out_per_s,"));
    assert!(timeline.lines().count() >= 2, "{timeline}");
}

#[test]
fn without_a_namespace_the_counters_are_the_machines_and_say_so() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        "models = [\"poll\"]\n[load]\nconnections = 2\nrequests = 20\n",
    );
    let rows = common::run_scenario_ok(&scenario, &tmp.path().join("out"), QUIET_NO_REPORT);
    assert_eq!(rows[0]["net_scope"], "host");
    assert!(number(&rows[0], "net_segs_in_per_s") > 0.0);
    let out = tmp.path().join("out");
    let status = common::output_within(
        Command::new(BIN).args(["report", out.to_str().unwrap()]),
        common::RUN_LIMIT,
    );
    assert!(status.status.success());
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("were read in the machine's own network namespace"),
        "the report must say that other traffic is included"
    );
}
