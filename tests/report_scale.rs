//! `echolab report` on a sweep of many steps: the report reads every row a bounded number
//! of times (grouping by model and step once), so 500 steps of 2 models and 5 repetitions
//! each report within the command limit, and the verdict is the right one.

use std::fmt::Write as _;
use std::fs;
use std::process::Command;

use echolab::results::column;

mod common;

#[test]
fn a_sweep_of_thousands_of_rows_reports_its_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("manifest.json"),
        r#"{"scenario_name": "many-steps", "sweep_axes": ["connections"], "models": ["epoll", "uring"]}"#,
    )
    .unwrap();
    let header = [
        column::MODEL,
        column::STEP,
        column::REPETITION,
        column::CONNECTIONS,
        column::STATUS,
        column::THROUGHPUT_RPS,
        column::P99_US,
        column::MAX_CONCURRENT_SERVER,
    ];
    let mut csv = header.join(",") + "\n";
    let (steps, reps) = (500, 5);
    for step in 1..=steps {
        for rep in 1..=reps {
            for (model, rps, p99) in [("epoll", 1000, 900), ("uring", 2000, 400)] {
                // Repetitions a little apart, the two models far apart at every step.
                writeln!(
                    csv,
                    "{model},c{step},{rep},{step},ok,{},{},{step}",
                    rps + rep,
                    p99 + rep
                )
                .unwrap();
            }
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    let output = common::output_within(
        Command::new(common::BIN).arg("report").arg(&dir),
        common::COMMAND_LIMIT,
    );
    assert!(output.status.success(), "{output:?}");
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    // 500 x 2 x 5 rows: uring wins each figure at the heaviest step, 5 against 5 apart.
    for row in [
        "| Throughput | connections=500 | uring | 2,003 req/s | epoll | 1,003 req/s | ×2.00 (",
        "| Response time p99 | connections=500 | uring | 403 µs | epoll | 903 µs | ×2.24 (",
        "| Max connections held | whole sweep | no difference: p = 1.00, n = 5 |",
    ] {
        assert!(
            md.contains(row),
            "verdict lacks {row}:\n{}",
            &md[..md.len().min(4000)]
        );
    }
    assert!(md.contains("| p = 0.012, n = 5 |"), "{}", &md[..4000]);
    // Every row reached the all-steps table.
    assert_eq!(md.matches("| uring | c").count(), steps * reps);
}
