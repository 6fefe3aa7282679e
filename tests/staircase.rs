//! The staircase load shape end to end: one live server, batches of real connections
//! on loopback that stay open, one row per stair.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_echolab");

/// Runs `echolab run` on a scenario and returns its results.csv rows as maps.
fn run(dir: &Path, scenario: &str) -> (PathBuf, Vec<HashMap<String, String>>) {
    let path = dir.join("scenario.toml");
    fs::write(&path, scenario).unwrap();
    let out = dir.join("results");
    let output = Command::new(EXE)
        .args([
            "run",
            path.to_str().unwrap(),
            "--quiet",
            "--no-report",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut reader = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, echolab::experiment::results::RESULTS_HEADER);
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect();
    (out, rows)
}

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

fn num(row: &HashMap<String, String>, column: &str) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} = {:?} in {row:?}", row[column]))
}

#[test]
fn three_stairs_on_one_live_server_then_the_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, rows) = run(
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
    let steps: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["step"].as_str(),
                r["stair"].as_str(),
                r["connections"].as_str(),
                r["status"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("c50-s16-d100ms", "1", "50", "ok"),
            ("c100-s16-d100ms", "2", "100", "ok"),
            ("c150-s16-d100ms", "3", "150", "ok"),
            ("c150-s16-d100ms-hold", "3", "150", "ok"),
        ],
        "{rows:?}"
    );
    for row in &rows {
        // Every connection of every stair so far is open at the stair's end.
        assert_eq!(
            row["connections_established"], row["connections"],
            "{row:?}"
        );
        assert!(num(row, "requests") > 0.0, "{row:?}");
        assert_eq!(num(row, "errors"), 0.0, "{row:?}");
        assert!(num(row, "p99_us") > 0.0, "{row:?}");
    }
    for row in &rows[..3] {
        assert!(num(row, "ramp_s") > 0.0, "{row:?}");
        assert!(num(row, "connect_rate_per_s") > 0.0, "{row:?}");
    }
    assert_eq!(rows[3]["ramp_s"], "");
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
    let tmp = tempfile::tempdir().unwrap();
    let (_, rows) = run(
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
    let steps: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["step"].as_str(), r["status"].as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            ("c400-s16-d200ms", "ok"),
            ("c800-s16-d200ms", "ok"),
            ("c1200-s16-d200ms", "failed"),
            ("c1600-s16-d200ms", "skipped"),
        ],
        "{rows:?}"
    );
    let broke = &rows[2];
    // select holds fds below FD_SETSIZE (1024) only: fewer than 1200 stay open.
    assert!(num(broke, "connections_established") < 1024.0, "{broke:?}");
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
