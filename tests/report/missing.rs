//! What is missing from a run: impossible values, no rows, missing step folders.

use super::*;

use echolab::results::column;

use super::common::*;

/// `report` rendered negative, NaN and 1e308 cells as figures (a 300-digit latency, "inf
/// MiB"): they are missing values now, and the report says which cells it left out.
#[test]
fn report_shows_impossible_values_as_missing_with_a_note() {
    let dir = fixture_copy("report-impossible");
    edit_results_csv(
        &dir.join("results.csv"),
        |row| row[column::MODEL] == "epoll",
        &[
            (column::P99_US, "-5"),
            (column::P50_US, "NaN"),
            (column::MAX_US, "1e308"),
            (column::THROUGHPUT_RPS, "inf"),
            (column::SERVER_RSS_PER_CONN_BYTES, "1e308"),
        ],
    );
    let md = report_md(&dir);
    let (notes, figures): (Vec<&str>, Vec<&str>) =
        md.lines().partition(|l| l.contains("not possible"));
    // The run's own path (pid and counter in its name) is no figure.
    let path = dir.display().to_string();
    for line in figures {
        let line = line.replace(&path, "<run>");
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
    let dir = fixture_copy("report-no-rows");
    let path = dir.join("results.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{}\n", text.lines().next().unwrap())).unwrap();
    let md = report_md(&dir);
    let note = md
        .lines()
        .find(|l| l.contains("not run"))
        .unwrap_or_else(|| panic!("no model is said to be not run:\n{md}"));
    for model in fixture_models() {
        assert!(note.contains(&model), "{model} missing from: {note}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Step folders gone: the report drew empty timeline charts without a word. It names
/// the folders it looked for and draws no empty timeline.
#[test]
fn report_names_missing_step_folders_and_draws_no_empty_timeline() {
    let dir = fixture_copy("report-no-folders");
    for model in fixture_models() {
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
