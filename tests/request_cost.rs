//! The cost-of-a-request columns (src/experiment/measurement/request_cost.rs) filled by a real run of
//! every model: context switches in every run, the system calls counted whole when
//! ECHOLAB_COUNT_SYSCALLS=1 and sampled in windows when it is `sampled`. perf events need
//! root here.

mod common;

use common::{model_names, number, write_scenario, ResultsRow};

/// A scenario of `models` at 20 connections whose load is `load` (TOML lines), then
/// `tables` (more TOML tables).
fn scenario(models: &[&str], load: &str, tables: &str) -> String {
    let models: Vec<String> = models.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        r#"
name = "request-cost"
models = [{}]
[server]
workers = 1
[load]
size = 64
{load}
connect_timeout = "5s"
[sweep]
connections = [20]
{tables}
"#,
        models.join(", ")
    )
}

fn row<'a>(rows: &'a [ResultsRow], model: &str) -> &'a ResultsRow {
    rows.iter()
        .find(|r| r["model"] == model)
        .unwrap_or_else(|| panic!("no row for {model}"))
}

#[test]
fn every_model_has_its_cost_per_request() {
    if !common::is_root() {
        common::skip(
            "every_model_has_its_cost_per_request",
            "perf events need root",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Sampled (ECHOLAB_COUNT_SYSCALLS=sampled): system calls counted in windows (10 ms of
    // every second) and scaled to the load by the TCP segments of the step's own
    // namespace, which carries this step's traffic alone (docs/outputs.md).
    let load = "duration = \"3s\"\nrate = 4000";
    let own = "[network]\nown_namespace = true";
    let sampled = write_scenario(tmp.path(), &scenario(&["epoll"], load, own));
    std::env::set_var("ECHOLAB_COUNT_SYSCALLS", "sampled");
    let rows = common::run_scenario_ok(&sampled, &tmp.path().join("sampled"), &["--quiet"]);
    std::env::remove_var("ECHOLAB_COUNT_SYSCALLS");
    let epoll = row(&rows, "epoll");
    assert_eq!(epoll["status"], "ok");
    let syscalls = number(epoll, "server_syscalls_per_req");
    let reads = number(epoll, "server_read_calls_per_req");
    // A read, a send and about one wait per echo: 3 calls (exactly counted, 2.99–3.20 in
    // quick's steps), one read; scaled by segments, the reads come out within 7 % and the
    // total within 20 % (docs/outputs.md).
    assert!((2.0..4.5).contains(&syscalls), "{syscalls}");
    assert!((0.8..1.3).contains(&reads), "{reads}");
    assert!(number(epoll, "server_wait_calls_per_req") > 0.0);

    // By default: switches only, free and exact; no system call column.
    let rows = common::run_scenario_ok(&sampled, &tmp.path().join("default"), &["--quiet"]);
    let epoll = row(&rows, "epoll");
    assert_eq!(epoll["server_syscalls_per_req"], "");
    assert!(number(epoll, "server_voluntary_switches_per_req") >= 0.0);
    assert!(number(epoll, "server_involuntary_switches_per_req") >= 0.0);
    let report = std::fs::read_to_string(tmp.path().join("default/report.md")).unwrap();
    assert!(
        report.contains("epoll at connections=20:")
            && report.contains("context switches per request"),
        "{report}"
    );

    // Every system call counted: the child inherits the setting.
    std::env::set_var("ECHOLAB_COUNT_SYSCALLS", "1");
    let models = model_names();
    let every = write_scenario(tmp.path(), &scenario(&models, "requests = 400", ""));
    let out = tmp.path().join("every");
    let rows = common::run_scenario_ok(&every, &out, &["--quiet"]);
    std::env::remove_var("ECHOLAB_COUNT_SYSCALLS");
    for model in models {
        let r = row(&rows, model);
        assert_eq!(r["status"], "ok", "{model}");
        let syscalls = number(r, "server_syscalls_per_req");
        let voluntary = number(r, "server_voluntary_switches_per_req");
        let involuntary = number(r, "server_involuntary_switches_per_req");
        assert!(voluntary >= 0.0 && involuntary >= 0.0, "{model}");
        if model == "uring" {
            // Completions: no read or write calls, a fraction of a syscall per request.
            assert_eq!(number(r, "server_read_calls_per_req"), 0.0);
            assert!(syscalls > 0.0 && syscalls < 1.0, "uring {syscalls}");
        } else {
            // A read and a write per request at least; few others at a closed-loop step.
            assert!((2.0..50.0).contains(&syscalls), "{model} {syscalls}");
            assert!(number(r, "server_read_calls_per_req") >= 1.0, "{model}");
            assert!(number(r, "server_write_calls_per_req") >= 1.0, "{model}");
        }
        // Every model but threads waits in a call of its own; threads block in read.
        let wait = number(r, "server_wait_calls_per_req");
        if model == "threads" {
            assert!(wait < 0.01, "threads {wait}");
        } else {
            assert!(wait > 0.0 && wait <= 2.0, "{model} {wait}");
        }
    }
    // A thread per connection blocks in read: about one voluntary switch per request.
    assert!(number(row(&rows, "threads"), "server_voluntary_switches_per_req") > 0.5);
    assert!(
        number(row(&rows, "uring"), "server_syscalls_per_req")
            < number(row(&rows, "epoll"), "server_syscalls_per_req")
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("charts/connections-syscalls-per-request.svg"));
    assert!(report.contains("charts/connections-context-switches-per-request.svg"));
    assert!(
        report.contains("select at connections=20 makes 1 select call per")
            && report.contains("requests and scans 20 descriptors each time"),
        "{report}"
    );
    assert!(
        report.contains("fewer system calls per request than"),
        "{report}"
    );
}
