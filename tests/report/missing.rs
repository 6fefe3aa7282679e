//! What is missing from a run: impossible values, no rows, missing step folders.

use super::*;

use std::path::{Path, PathBuf};

use super::common::*;

/// A copy of the stored results fixture (tests/fixtures/results-small) named `name`.
fn results_fixture(name: &str) -> PathBuf {
    let dir = out_dir(name);
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small"),
        &dir,
    );
    dir
}

/// `echolab report DIR`, which must succeed; returns report.md.
fn report_md(dir: &Path) -> String {
    let out = echolab(&["report", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::read_to_string(dir.join("report.md")).unwrap()
}

/// `report` rendered negative, NaN and 1e308 cells as figures (a 300-digit latency, "inf
/// MiB"): they are missing values now, and the report says which cells it left out.
#[test]
fn report_shows_impossible_values_as_missing_with_a_note() {
    let dir = results_fixture("report-impossible");
    let path = dir.join("results.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let mut rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in rows.iter_mut().filter(|r| r[0] == "epoll") {
        row[col("p99_us")] = "-5".into();
        row[col("p50_us")] = "NaN".into();
        row[col("max_us")] = "1e308".into();
        row[col("throughput_rps")] = "inf".into();
        row[col("server_rss_per_conn_bytes")] = "1e308".into();
    }
    let mut writer = csv::Writer::from_path(&path).unwrap();
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    let md = report_md(&dir);
    let (notes, figures): (Vec<&str>, Vec<&str>) =
        md.lines().partition(|l| l.contains("not possible"));
    for line in figures {
        for shown in ["inf", "NaN", "1e308", "-5", "00000000000"] {
            assert!(!line.contains(shown), "report.md shows {shown:?}: {line}");
        }
    }
    assert_eq!(
        notes.len(),
        1,
        "no single note on the cells left out: {notes:?}"
    );
    assert!(notes[0].contains("line 32, p99_us"), "{}", notes[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run that recorded no row: the manifest's models are shown as not run rather than
/// left out.
#[test]
fn report_of_a_run_without_rows_names_the_models_not_run() {
    let dir = results_fixture("report-no-rows");
    let path = dir.join("results.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{}\n", text.lines().next().unwrap())).unwrap();
    let md = report_md(&dir);
    let note = md
        .lines()
        .find(|l| l.contains("not run"))
        .unwrap_or_else(|| panic!("no model is said to be not run:\n{md}"));
    for model in ["threads", "select", "poll", "epoll", "uring", "tokio"] {
        assert!(note.contains(model), "{model} missing from: {note}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Step folders gone: the report drew empty timeline charts without a word. It names
/// the folders it looked for and draws no empty timeline.
#[test]
fn report_names_missing_step_folders_and_draws_no_empty_timeline() {
    let dir = results_fixture("report-no-folders");
    for model in ["threads", "select", "poll", "epoll", "uring", "tokio"] {
        std::fs::remove_dir_all(dir.join(model)).unwrap();
    }
    let md = report_md(&dir);
    assert!(
        md.contains(&format!(
            "epoll{0}c4000-s128{0}rep-1",
            std::path::MAIN_SEPARATOR
        )),
        "the missing folder is not named:\n{md}"
    );
    assert!(!md.contains("(first repetition): ."), "{md}");
    assert!(!dir.join("charts/connections-timeline-cpu.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
