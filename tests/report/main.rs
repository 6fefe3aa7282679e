//! `echolab report` on the stored results fixture (tests/fixtures/results-small):
//! charts, tables, verdict, failure banners, bad input, and the page as Chromium
//! renders it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use echolab::run::write_report;

#[path = "../common/mod.rs"]
mod common;
use common::copy_dir;

mod charts;
mod damaged;
mod during_run;
mod missing;
mod page;

/// The models of the stored fixture, as its manifest lists them (every model it was
/// run with, each with its step folders).
fn fixture_models() -> Vec<String> {
    let models = echolab::results::Manifest::read(&fixture())
        .expect("the fixture's manifest.json")
        .models;
    assert_eq!(models.len(), 6, "the fixture's models: {models:?}");
    models
}

const CHARTS: [&str; 12] = [
    "connections-cpu.svg",
    "connections-latency-percentiles.svg",
    "connections-max-connections.svg",
    "connections-memory-per-connection.svg",
    "connections-response-time.svg",
    "connections-throughput.svg",
    "connections-timeline-bytes.svg",
    "connections-timeline-connections.svg",
    "connections-timeline-cpu.svg",
    "connections-timeline-memory.svg",
    "connections-timeline-p99.svg",
    "connections-timeline-throughput.svg",
];

/// The all-steps table's columns (as the report promises: exactly results.csv's values).
const STEP_COLUMNS: [&str; 18] = [
    "model",
    "step",
    "repetition",
    "status",
    "connections",
    "size",
    "delay_ms",
    "rate",
    "workers",
    "connections_established",
    "max_concurrent_server",
    "throughput_rps",
    "p50_us",
    "p99_us",
    "server_cpu_pct",
    "server_rss_per_conn_bytes",
    "errors",
    "failure_reason",
];

fn fixture() -> PathBuf {
    fixture_named("results-small")
}

/// A stored results directory under tests/fixtures.
fn fixture_named(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh copy of the fixture: the report writes into the results directory.
fn fixture_copy(name: &str) -> PathBuf {
    fixture_copy_of("results-small", name)
}

/// A fresh copy of the stored results `fixture` (a folder of tests/fixtures).
fn fixture_copy_of(fixture: &str, name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "echolab-report-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = fs::remove_dir_all(&dir);
    copy_dir(&fixture_named(fixture), &dir);
    dir
}

/// The text elements of an SVG, trimmed (plotters writes each on its own line).
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|part| {
            let start = part.find('>')? + 1;
            let end = part.find("</text>")?;
            Some(part[start..end].trim().to_string())
        })
        .collect()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn csv_records(dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// Rewrites results.csv's numbers as echolab writes them today: the fixture comes from
/// an older echolab, which wrote `0` for a float and fractions for some counts.
fn as_written_today(dir: &Path) {
    let (header, rows) = csv_records(dir);
    let mut writer = csv::Writer::from_path(dir.join("results.csv")).unwrap();
    writer.write_record(&header).unwrap();
    for row in rows {
        let cells = header.iter().zip(row).map(|(name, cell)| {
            let Some(c) = echolab::results::COLUMNS.iter().find(|c| c.name == name) else {
                return cell;
            };
            match cell.parse::<f64>() {
                Ok(v) if c.is_whole() && name != "repetition" => format!("{}", v.round()),
                Ok(v) if c.is_number() && !c.is_whole() => format!("{v:?}"),
                _ => cell,
            }
        });
        writer.write_record(cells).unwrap();
    }
    writer.flush().unwrap();
}

#[test]
fn step_tables_equal_results_csv() {
    let dir = fixture_copy("tables");
    as_written_today(&dir);
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    let html = read(&dir.join("report.html"));
    let (header, rows) = csv_records(&dir);
    assert_eq!(rows.len(), 60);
    let index: Vec<usize> = STEP_COLUMNS
        .iter()
        .map(|c| header.iter().position(|h| h == c).unwrap())
        .collect();
    for row in &rows {
        let cells: Vec<&str> = index.iter().map(|&i| row[i].as_str()).collect();
        let md_row = format!("| {} |", cells.join(" | "));
        assert!(md.contains(&md_row), "report.md lacks the row {md_row}");
        let html_row: String = STEP_COLUMNS
            .iter()
            .zip(&cells)
            .map(|(column, cell)| {
                let cell = cell.replace('>', "&gt;");
                match *column {
                    "model" | "step" | "status" | "failure_reason" => format!("<td>{cell}</td>"),
                    _ => format!("<td class=\"num\">{cell}</td>"),
                }
            })
            .collect();
        assert!(
            html.contains(&html_row),
            "report.html lacks the row {html_row}"
        );
    }
    // The per-sweep summary: the mean of the two repetitions with their range.
    assert!(md.contains(
        "| uring | 4000 | 2/2 | 55,500 [55,000–56,000] | 64.87 ms [64.29 ms–65.45 ms] |"
    ));
    assert!(md.contains("| select | 4000 | 0/2 | — | — | — | — | — | — | skipped: model broke at c2000-s128; later steps skipped |"));
    // The setup comes from the manifest.
    assert!(md.contains("| Kernel | Linux 6.1.0-18-amd64 x86_64 |"));
    assert!(md.contains("| File descriptor limit | soft 20,000, hard 20,000 |"));
    assert!(md.contains("| Started | 2025-01-01 00:00:00 UTC |"));
    assert!(md.contains("| sysctl net.ipv4.ip_local_port_range | 32768 60999 |"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verdict_and_findings_are_computed_from_the_data() {
    let dir = fixture_copy("verdict");
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    // Two repetitions a model: 2 against 2 completely apart give p = 0.25, the least
    // they can, so no figure names a winner; the baseline's value is still shown.
    for row in [
        "| Throughput | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 45,500 req/s | — |",
        "| Response time p99 | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 174.09 ms | — |",
        "| Server memory per connection | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 5.0 KiB | — |",
        "| Response time p50 | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 79.13 ms | — |",
        "| Tail latency p99.9 | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 278.54 ms | — |",
        "| Server CPU | connections=4000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 176.0% of a core | — |",
        // Five models held 4000 in both repetitions, select 1020: no model above all.
        "| Max connections held | whole sweep | no difference: p = 1.00, n = 2 | — | — | — | — | — | 4,000 | — |",
    ] {
        assert!(md.contains(row), "verdict lacks {row}");
    }
    for finding in [
        "- select failed at connections=2000 (2 of 2 repetitions); its server held at most 1,020 connections there: 980 of 2000 connections not established: server refused fd >= FD_SETSIZE (1024).",
        "- select was skipped at connections=4000: model broke at c2000-s128; later steps skipped.",
        "- threads used 24.45 MiB per 1000 connections (server RSS at connections=4000), ×7.63 poll's.",
        "- At connections=4000, no model served significantly more than every other (no difference: p = 0.25, n = 2): no winner is declared.",
        "- Every byte was accounted for: no echo mismatches, and client and server byte counts agreed, in all 56 completed repetitions.",
    ] {
        assert!(md.contains(finding), "findings lack {finding}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// When fewer than two models complete the heaviest point, each figure is compared at the
/// heaviest point two models did complete: here only uring passes connections=4000, so
/// throughput is judged at 2000: uring (55,500 + 56,500) / 2 = 56,000 req/s, epoll
/// 51,500 (×1.087), tokio 46,500 (×1.204).
#[test]
fn the_verdict_falls_back_to_the_heaviest_point_two_models_completed() {
    let dir = fixture_copy("verdict-fallback");
    let csv_path = dir.join("results.csv");
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(String::from).collect();
        if row[col("connections")] == "4000"
            && row[col("model")] != "uring"
            && row[col("status")] == "ok"
        {
            assert_eq!(row[col("failure_reason")], "");
            row[col("status")] = "failed".into();
            row[col("failure_reason")] = "too slow".into();
        }
        writer.write_record(&row).unwrap();
    }
    let text = writer.into_inner().unwrap();
    fs::write(&csv_path, text).unwrap();
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    // Two repetitions a model: 2 against 2 apart give p = 0.25 at best, no winner.
    let row = "| Throughput | connections=2000 | no difference: p = 0.25, n = 2 | — | — | — | — | — | 46,500 req/s | — |";
    assert!(md.contains(row), "verdict lacks {row}:\n{md}");
    assert!(!md.contains("| Throughput | connections=4000 |"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_and_interrupted_steps_are_announced_at_the_top() {
    let dir = fixture_copy("interrupted");
    let manifest_path = dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&read(&manifest_path)).unwrap();
    manifest["interrupted"] = serde_json::Value::Bool(true);
    fs::write(&manifest_path, manifest.to_string()).unwrap();
    let csv_path = dir.join("results.csv");
    let text = read(&csv_path);
    let line = text
        .lines()
        .find(|l| l.starts_with("tokio,c4000-s128,2,"))
        .unwrap();
    let interrupted = line.replacen(",ok,,", ",interrupted,run interrupted by SIGINT,", 1);
    fs::write(&csv_path, text.replace(line, &interrupted)).unwrap();

    write_report(&dir).unwrap();
    let html = read(&dir.join("report.html"));
    let body = &html[html.find("<body>").unwrap()..];
    let banner = &body[..body.find("<nav>").unwrap()];
    for text in [
        "This run is not complete or has failures.",
        "The run was interrupted (manifest.json says &quot;interrupted&quot;: true)",
        "1 repetition was interrupted: tokio c4000-s128 (rep 2): run interrupted by SIGINT.",
        "2 repetitions failed: select c2000-s128 (rep 1, 2): 980 of 2000 connections not established: server refused fd &gt;= FD_SETSIZE (1024).",
        "2 repetitions were skipped: select c4000-s128 (rep 1, 2): model broke at c2000-s128; later steps skipped.",
    ] {
        assert!(banner.contains(text), "the banner lacks {text}:\n{banner}");
    }
    let md = read(&dir.join("report.md"));
    assert!(md.contains("> **This run is not complete or has failures.**"));
    assert!(md.contains("> - 1 repetition was interrupted: tokio c4000-s128 (rep 2)"));
    // The interrupted repetition is out of the means: tokio's throughput at 4000 is rep 1's.
    assert!(md.contains("| tokio | 4000 | 1/2 | 45,000 |"));
    assert!(read(&dir.join("charts/connections-throughput.svg"))
        .contains("tokio at connections=4000: interrupted in 1 of 2 repetitions: run interrupted by SIGINT"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_complete_run_says_so() {
    let dir = fixture_copy("complete");
    let csv_path = dir.join("results.csv");
    let kept: String = read(&csv_path)
        .lines()
        .filter(|l| !l.starts_with("select,c2000") && !l.starts_with("select,c4000"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(&csv_path, kept).unwrap();
    // The fixture predates some columns: a run writes every one of the schema.
    rewrite_columns(&csv_path, &echolab::results::RESULTS_HEADER);
    write_report(&dir).unwrap();
    let html = read(&dir.join("report.html"));
    assert!(html.contains("Complete run: every step finished as ok."));
    assert!(!html.contains("This run is not complete"));
    fs::remove_dir_all(&dir).unwrap();
}

// ---- malformed step files, two swept axes, the narrow layout ----

/// The legend entries (model names) of a chart.
fn legend(svg: &str) -> Vec<String> {
    let models = fixture_models();
    svg_texts(svg)
        .into_iter()
        .filter(|t| models.contains(t))
        .collect()
}

/// Rewrites results.csv with `columns` in that order: the cells it has, empty ones for
/// the columns it lacks.
fn rewrite_columns(csv_path: &Path, columns: &[&str]) {
    let text = read(csv_path);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(columns).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        let cell = |c: &str| {
            header
                .iter()
                .position(|h| h == c)
                .map_or("", |i| &record[i])
        };
        writer
            .write_record(columns.iter().map(|c| cell(c)))
            .unwrap();
    }
    fs::write(csv_path, writer.into_inner().unwrap()).unwrap();
}
