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

/// `echolab report DIR`, within the command limit and successful: its report.md.
fn report_md(dir: &Path) -> String {
    let output = common::output_within(
        Command::new(common::BIN).arg("report").arg(dir),
        common::COMMAND_LIMIT,
    );
    assert!(output.status.success(), "{output:?}");
    fs::read_to_string(dir.join("report.md")).unwrap()
}

/// A results directory of epoll and uring swept over connections, and the header of its
/// results.csv: model, step, repetition, connections, status, throughput, then `more`.
fn epoll_and_uring(tmp: &Path, more: &[&str]) -> (std::path::PathBuf, String) {
    let dir = tmp.join("results");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("manifest.json"),
        r#"{"scenario_name": "many-rows", "sweep_axes": ["connections"], "models": ["epoll", "uring"]}"#,
    )
    .unwrap();
    let header = [
        column::MODEL,
        column::STEP,
        column::REPETITION,
        column::CONNECTIONS,
        column::STATUS,
        column::THROUGHPUT_RPS,
    ];
    (dir, [&header[..], more].concat().join(",") + "\n")
}

#[test]
fn a_sweep_of_thousands_of_rows_reports_its_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut csv) =
        epoll_and_uring(tmp.path(), &[column::P99_US, column::MAX_CONCURRENT_SERVER]);
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
    let md = report_md(&dir);
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
    // The all-steps table holds its first 2 000 rows, and says so.
    assert_eq!(
        md.matches("| uring | c").count() + md.matches("| epoll | c").count(),
        2000
    );
    assert!(
        md.contains("The first 2,000 of its 5,000 repetitions (results.csv has every one)"),
        "{}",
        &md[..4000]
    );
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
    let md = report_md(&dir);
    // The all-steps table holds the first 2 000 rows, and says so.
    assert_eq!(md.matches("| epoll | c").count(), 2000);
    assert!(md.contains("The first 2,000 of its 20,000 repetitions"));
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

/// Thousands of repetitions of one step, every one disturbed: each flagged repetition
/// left out in turn was a decision per repetition over every repetition, with a bootstrap
/// each (a 50 000-row results.csv ran over 20 minutes). Beyond the bound, each model's
/// highest and lowest flagged repetition is left out, and the verdict says so; the lists
/// of repetitions and the all-steps table name the first ones and count the rest.
#[test]
fn thousands_of_disturbed_repetitions_per_step_report_bounded_and_say_what_was_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut csv) =
        epoll_and_uring(tmp.path(), &[column::DISTURBED, column::INTERFERENCE_PCT]);
    let reps = 3000;
    for rep in 1..=reps {
        for (model, rps) in [("epoll", 1000), ("uring", 2000)] {
            writeln!(csv, "{model},c100,{rep},100,ok,{},true,20", rps + rep % 7).unwrap();
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    let md = report_md(&dir);
    assert!(
        md.contains(
            "| Throughput | connections=100 | uring | 2,003 req/s | epoll | 1,003 req/s | ×2.00 ("
        ),
        "{}",
        &md[..4000]
    );
    assert!(
        md.contains(
            "6000 disturbed repetition(s), more than 20: each model's highest and lowest of \
             them left out in turn, not every one |"
        ),
        "{}",
        &md[..4000]
    );
    assert!(md.contains(
        "Disturbed: in 6000 repetition(s) more than 10% of a core went to other work on the \
         machine (epoll c100 rep 1 (20.0%), uring c100 rep 1 (20.0%), epoll c100 rep 2 (20.0%)"
    ));
    assert!(md.contains(", uring c100 rep 5 (20.0%) and 5990 more); a winner must stay one"));
    assert_eq!(md.matches("| epoll | c100 |").count(), 1000);
    let html = fs::metadata(dir.join("report.html")).unwrap().len();
    assert!(html < 2_000_000, "report.html is {html} bytes");
}

/// A step of thousands of repetitions drew a percentile curve for each (a 10 MB chart,
/// 700 MB of tables held): at most 20 per model are read and drawn, and the caption
/// says so.
#[test]
fn the_percentile_chart_draws_a_bounded_number_of_repetitions_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut csv) = epoll_and_uring(tmp.path(), &[]);
    for rep in 1..=30 {
        writeln!(csv, "epoll,c100,{rep},100,ok,{}", 1000 + rep).unwrap();
        let load = dir.join(format!("epoll/c100/rep-{rep}/load"));
        fs::create_dir_all(&load).unwrap();
        fs::write(
            load.join("percentiles.csv"),
            "percentile,latency_us\n50,100\n90,200\n99,300\n",
        )
        .unwrap();
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    let md = report_md(&dir);
    assert!(
        md.contains(
            "the first repetition solid, the next ones faint (at most 20 repetitions per model \
             drawn)"
        ),
        "{md}"
    );
}
