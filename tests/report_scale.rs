//! `echolab report` on a sweep of many steps: the report reads every row a bounded number
//! of times (grouping by model and step once), so 500 steps of 2 models and 5 repetitions
//! each report within the command limit, and the verdict is the right one; one model of
//! 20 000 steps (twice the documented maximum) too, where reading the rows once per step
//! took over ten minutes. A step file is streamed and thinned to what a chart draws, so a
//! probe.csv of a million rows reports under a data limit it once needed four times.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
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

/// A results directory of one model whose `steps` steps each ran once, at connections 1,
/// 2, ..., `steps`.
fn one_model_sweep(dir: &Path, steps: usize) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("manifest.json"),
        r#"{"scenario_name": "one-model", "sweep_axes": ["connections"], "models": ["epoll"]}"#,
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
    ];
    let mut csv = header.join(",") + "\n";
    for step in 1..=steps {
        writeln!(
            csv,
            "epoll,c{step},1,{step},ok,{},{}",
            1000 + step,
            900 + step
        )
        .unwrap();
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
}

#[test]
fn one_model_of_twenty_thousand_steps_reports_within_the_command_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    let steps = 20_000;
    one_model_sweep(&dir, steps);
    // Seconds now; before the grouping was once per model, 10 000 steps took 155 s in a
    // release build and this twice as many over ten minutes (each x searched every row).
    let output = common::output_within(
        Command::new(common::BIN).arg("report").arg(&dir),
        common::COMMAND_LIMIT,
    );
    assert!(output.status.success(), "{output:?}");
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    assert_eq!(md.matches("| epoll | c").count(), steps);
    // One model: its figures at the heaviest step, nothing to compare.
    assert!(
        md.contains("| epoll | 20000 | 1/1 | 21,000 | 20.90 ms | ok |"),
        "{}",
        &md[..md.len().min(4000)]
    );
}

#[test]
fn a_probe_of_a_million_samples_reports_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    one_model_sweep(&dir, 1);
    let step = dir.join("epoll/c1/rep-1");
    fs::create_dir_all(&step).unwrap();
    // 100 000 s at ten samples a second: 40 MB, one row in 256 drawn.
    let samples = 1_000_000;
    let mut probe = String::with_capacity(samples * 40);
    probe.push_str("t_s,cpu_user_s,cpu_sys_s,rss_bytes,threads,fds\n");
    for i in 0..samples {
        let t = i as f64 / 10.0;
        writeln!(
            probe,
            "{t:.1},{:.3},{:.3},{},2,5",
            t * 0.25,
            t * 0.25,
            8 << 20
        )
        .unwrap();
    }
    fs::write(step.join("probe.csv"), probe).unwrap();
    // Every row held as parsed took about 25 bytes for each byte of the file (a 112 MB
    // probe.csv: 2.6 GB): this one, 1 GB, over the limit.
    let mut command = Command::new(common::BIN);
    command.arg("report").arg(&dir);
    common::limit_in_child(&mut command, libc::RLIMIT_DATA, 256 << 20);
    let output = common::output_within(&mut command, common::COMMAND_LIMIT);
    assert!(output.status.success(), "{output:?}");
    // The CPU chart is drawn from the rows kept: 50 % of one core throughout.
    let svg = fs::read_to_string(dir.join("charts/connections-timeline-cpu.svg")).unwrap();
    assert!(
        svg.contains("server CPU"),
        "{}",
        &svg[..svg.len().min(2000)]
    );
}
