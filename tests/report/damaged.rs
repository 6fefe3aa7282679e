//! Bad and damaged inputs: named errors, malformed or cut-off files listed and left out.

use super::*;

use super::common::{edit_results_csv, read_results_csv};
use echolab::results::column;

fn error_of(dir: &Path) -> String {
    format!(
        "{:#}",
        write_report(dir).expect_err("the report should refuse this input")
    )
}

#[test]
fn bad_input_gives_an_error_naming_the_problem() {
    let missing = std::env::temp_dir().join("echolab-report-no-such-dir");
    let error = error_of(&missing);
    assert_eq!(
        error,
        format!(
            "results directory {} does not exist or is not a directory",
            missing.display()
        )
    );

    let dir = fixture_copy("bad-number");
    let csv_path = dir.join("results.csv");
    let text = read(&csv_path);
    // Each case damages threads c100-s128 repetition 2, on line 5.
    let damaged = |row: &common::ResultsRow| {
        row[column::MODEL] == "threads"
            && row[column::STEP] == "c100-s128"
            && row[column::REPETITION] == "2"
    };
    // Its throughput becomes text.
    let lines = edit_results_csv(&csv_path, damaged, &[(column::THROUGHPUT_RPS, "fast")]);
    assert_eq!(lines, [5]);
    assert_eq!(
        error_of(&dir),
        format!(
            "{} line 5, column throughput_rps: 'fast' is not a number",
            csv_path.display()
        )
    );

    // A row with a missing field.
    let line = text.lines().nth(4).unwrap();
    fs::write(&csv_path, text.replace(line, "threads,c100-s128,2,100")).unwrap();
    let error = error_of(&dir);
    assert!(
        error.starts_with(&format!("{} line 5: malformed CSV", csv_path.display())),
        "{error}"
    );

    // An unknown status.
    fs::write(&csv_path, &text).unwrap();
    let lines = edit_results_csv(&csv_path, damaged, &[(column::STATUS, "fine")]);
    assert_eq!(lines, [5]);
    assert_eq!(
        error_of(&dir),
        format!(
            "{} line 5, column status: 'fine' is not one of ok, failed, skipped, interrupted, not-run",
            csv_path.display()
        )
    );

    fs::remove_file(&csv_path).unwrap();
    assert!(error_of(&dir).starts_with(&format!("cannot read {}", csv_path.display())));

    let manifest_path = dir.join("manifest.json");
    fs::write(&manifest_path, "{\"scenario_name\": \n").unwrap();
    assert!(error_of(&dir).starts_with(&format!("{} line 2", manifest_path.display())));
    fs::remove_dir_all(&dir).unwrap();
}

/// docs/report.md: a malformed step file only leaves that step out of the timeline charts
/// and is listed at the top of the report, naming the file, line and column.
#[test]
fn a_malformed_step_file_is_listed_and_left_out_of_the_timelines() {
    let dir = fixture_copy("malformed-step");
    let step = dir.join("poll/c4000-s128/rep-1/load");
    let timeline = step.join("timeline.csv");
    let text = read(&timeline);
    let requests = text
        .lines()
        .next()
        .and_then(|header| header.split(',').position(|c| c == "requests"))
        .expect("timeline.csv has a requests column");
    let line3 = text.lines().nth(2).unwrap();
    let mut cells: Vec<&str> = line3.split(',').collect();
    cells[requests] = "many";
    fs::write(&timeline, text.replace(line3, &cells.join(","))).unwrap();
    let percentiles = step.join("percentiles.csv");
    let text = read(&percentiles);
    let line2 = text.lines().nth(1).unwrap().to_string();
    fs::write(&percentiles, text.replacen(&line2, "0,soon,", 1)).unwrap();
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    let html = read(&dir.join("report.html"));
    for warning in [
        format!(
            "{} line 3, column requests: 'many' is not a number (left out of the charts)",
            timeline.display()
        ),
        format!(
            "{} line 2, column latency_us: 'soon' is not a number (left out of the charts)",
            percentiles.display()
        ),
    ] {
        assert!(md.contains(&format!("> - {warning}")), "{warning}\n{md}");
        assert!(html.contains(&format!("<li>{warning}</li>")), "{warning}");
    }
    let chart = read(&dir.join("charts/connections-timeline-throughput.svg"));
    assert_eq!(
        legend(&chart),
        ["threads", "select", "epoll", "uring", "tokio"],
        "poll's step is left out, the others stay"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A step file cut off mid-row (a run killed while writing it) is malformed too; today the
/// reader takes the short row as it is (a flexible CSV reader): poll's last second keeps a
/// cut-off p50 of `1` µs and nothing is listed.
#[test]
fn a_step_file_cut_off_mid_row_is_listed() {
    let dir = fixture_copy("truncated-step");
    let timeline = dir.join("poll/c4000-s128/rep-1/load/timeline.csv");
    let text = read(&timeline);
    let line3 = text.lines().nth(2).unwrap();
    let cut = text.find(line3).unwrap() + line3.len() - 5;
    fs::write(&timeline, &text[..cut]).unwrap();
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    assert!(
        md.contains(&format!("> - {} line 3", timeline.display())),
        "{md}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A run killed while appending to results.csv leaves its last row cut short: the report
/// reads every whole row, skips that one and says so on stderr and at the top of the page.
#[test]
fn a_last_row_cut_short_is_skipped_and_announced() {
    let dir = fixture_copy("cut-short");
    let csv_path = dir.join("results.csv");
    let text = read(&csv_path);
    let whole = text.lines().count();
    let last = text.lines().last().unwrap().to_string();
    let (_, rows) = read_results_csv(&csv_path);
    let before_step = rows[rows.len() - 2][column::STEP].clone();
    // Cut the last row in the middle of a field: it still parses as CSV, with a wrong value.
    fs::write(&csv_path, &text[..text.len() - 1 - last.len() / 2]).unwrap();
    let out = common::output_within(
        Command::new(common::BIN).arg("report").arg(&dir),
        common::COMMAND_LIMIT,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warning = format!(
        "{} line {whole} is cut short (the run was stopped while writing it): skipped that row",
        csv_path.display()
    );
    assert!(stderr.contains(&warning), "{stderr}");
    let md = read(&dir.join("report.md"));
    assert!(
        md.contains(&warning),
        "report.md does not say it skipped a row"
    );
    // The whole rows are all there: the step of the row before the cut one is tabled.
    assert!(
        md.contains(&before_step),
        "{before_step} missing from report.md"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_results_csv_without_columns_of_the_schema_says_which() {
    let dir = fixture_copy("missing-columns");
    let csv_path = dir.join("results.csv");
    let every = echolab::results::RESULTS_HEADER;
    rewrite_columns(&csv_path, &every);
    write_report(&dir).unwrap();
    assert!(!read(&dir.join("report.md")).contains("of the results schema"));
    let without: Vec<&str> = every
        .into_iter()
        .filter(|c| *c != "throughput_rps" && *c != "p99_us")
        .collect();
    rewrite_columns(&csv_path, &without);
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    assert!(
        md.contains("> **This run is not complete or has failures.**"),
        "{md}"
    );
    assert!(
        md.contains(
            "lacks 2 column(s) of the results schema (an older or edited file): \
             throughput_rps, p99_us; their figures are missing from every table, chart and \
             verdict."
        ),
        "{}",
        &md[..md.len().min(3000)]
    );
    fs::remove_dir_all(&dir).unwrap();
}
