//! `echolab report` on the stored results fixture (tests/fixtures/results-small):
//! charts, tables, verdict, failure banners, bad input, and the page as Chromium
//! renders it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use echolab::run::write_report;

mod common;
use common::copy_dir;

const MODELS: [&str; 6] = ["threads", "select", "poll", "epoll", "uring", "tokio"];

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
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small")
}

/// A fresh copy of the fixture: the report writes into the results directory.
fn fixture_copy(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "echolab-report-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = fs::remove_dir_all(&dir);
    copy_dir(&fixture(), &dir);
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

#[test]
fn every_chart_is_written_with_labelled_axes_and_legends() {
    let dir = fixture_copy("charts");
    let html_path = write_report(&dir).unwrap();
    assert_eq!(html_path, dir.join("report.html"));
    let mut names: Vec<String> = fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, CHARTS);

    let expect = [
        (
            "connections-response-time.svg",
            "concurrent connections",
            "response time (ms)",
        ),
        (
            "connections-throughput.svg",
            "concurrent connections",
            "throughput (requests/s)",
        ),
        (
            "connections-cpu.svg",
            "concurrent connections",
            "server CPU (% of one core)",
        ),
        (
            "connections-memory-per-connection.svg",
            "concurrent connections",
            "server RSS per connection (KiB)",
        ),
        (
            "connections-latency-percentiles.svg",
            "percentile (log scale of 1/(1−p))",
            "response time (ms)",
        ),
        (
            "connections-timeline-p99.svg",
            "time since the step started (s)",
            "p99 response time (ms)",
        ),
        (
            "connections-timeline-bytes.svg",
            "time since the step started (s)",
            "MiB echoed per second",
        ),
        (
            "connections-timeline-cpu.svg",
            "time since the step started (s)",
            "server CPU (% of one core)",
        ),
        (
            "connections-timeline-memory.svg",
            "time since the step started (s)",
            "server RSS (MiB)",
        ),
    ];
    for (file, x_desc, y_desc) in expect {
        let texts = svg_texts(&read(&dir.join("charts").join(file)));
        assert!(
            texts.iter().any(|t| t == x_desc),
            "{file}: no x axis label '{x_desc}'"
        );
        assert!(
            texts.iter().any(|t| t == y_desc),
            "{file}: no y axis label '{y_desc}'"
        );
    }
    for file in CHARTS {
        let svg = read(&dir.join("charts").join(file));
        let tag_end = svg.find('>').unwrap();
        let tag = &svg[svg.find("<svg").unwrap()..tag_end];
        assert!(tag.contains("viewBox=\"0 0 960 "), "{file}: {tag}");
        assert!(!tag.contains(" width="), "{file} has a fixed width: {tag}");
        // Every model has a step folder, so every chart's legend (or, for the
        // bars, the axis) names all six, e.g. "epoll p99", "select (2000)".
        let texts = svg_texts(&svg);
        for model in MODELS {
            assert!(
                texts.iter().any(|t| t.split(' ').next() == Some(model)),
                "{file}: legend or labels lack {model}: {texts:?}"
            );
        }
    }
    let legend = svg_texts(&read(&dir.join("charts/connections-response-time.svg")));
    for entry in [
        "threads p99",
        "threads p50",
        "tokio p99",
        "min–max of reps",
        "failed step (notes)",
    ] {
        assert!(
            legend.iter().any(|t| t == entry),
            "legend lacks {entry}: {legend:?}"
        );
    }
    // The percentile axis reads in percent.
    let pct = svg_texts(&read(
        &dir.join("charts/connections-latency-percentiles.svg"),
    ));
    for label in [
        "90%",
        "99%",
        "99.9%",
        "99.99%",
        "select (2000)",
        "epoll (4000)",
    ] {
        assert!(
            pct.iter().any(|t| t == label),
            "percentile chart lacks {label}: {pct:?}"
        );
    }
    // The bar chart writes each model's capacity above its bar.
    let bars = svg_texts(&read(&dir.join("charts/connections-max-connections.svg")));
    // Five bars at 4000, plus the y axis tick of that name.
    assert_eq!(bars.iter().filter(|t| *t == "4000").count(), 6, "{bars:?}");
    assert_eq!(bars.iter().filter(|t| *t == "1020").count(), 1, "{bars:?}");

    let html = read(&html_path);
    // Every chart once, beside one small picture per answer on the first screen.
    let answers = html.matches("<div class=\"answer\">").count();
    assert!(answers > 0);
    assert_eq!(html.matches("<svg").count(), CHARTS.len() + answers);
    assert!(
        !html.contains("<script"),
        "the page must not need JavaScript"
    );
    assert!(!html.contains("<?xml"));
    for forbidden in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(
            !html.contains(forbidden),
            "the page loads something: {forbidden}"
        );
    }
    assert!(html.contains("@media print"));
    let md = read(&dir.join("report.md"));
    for file in CHARTS {
        assert!(
            md.contains(&format!("](charts/{file})")),
            "report.md lacks {file}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failures_are_marked_on_the_charts_with_their_reason() {
    let dir = fixture_copy("marks");
    write_report(&dir).unwrap();
    for file in [
        "connections-response-time.svg",
        "connections-throughput.svg",
        "connections-cpu.svg",
        "connections-memory-per-connection.svg",
    ] {
        let texts = svg_texts(&read(&dir.join("charts").join(file)));
        let note = texts
            .iter()
            .position(|t| {
                t == "× 1 select at connections=2000: failed in 2 of 2 repetitions: 980 of \
                      2000 connections not established: server refused fd &gt;= FD_SETSIZE"
            })
            .unwrap_or_else(|| panic!("{file} does not explain the failed step: {texts:?}"));
        // The note's wrapped rest, and the numbered cross on the plot.
        assert_eq!(texts[note + 1], "(1024)");
        assert!(texts.iter().any(|t| t == "1"));
    }
    let bars = read(&dir.join("charts/connections-max-connections.svg"));
    assert!(bars.contains("select failed at connections=2000: 980 of 2000 connections"));
    fs::remove_dir_all(&dir).unwrap();
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

#[test]
fn step_tables_equal_results_csv() {
    let dir = fixture_copy("tables");
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
    let text: String = read(&csv_path)
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            if fields[3] == "4000" && fields[0] != "uring" && fields[8] == "ok" {
                line.replacen(",ok,,", ",failed,too slow,", 1)
            } else {
                line.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
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
    // Line 5 is threads c100-s128 rep 2; its throughput becomes text.
    let line = text.lines().nth(4).unwrap().to_string();
    assert!(line.starts_with("threads,c100-s128,2,"));
    fs::write(
        &csv_path,
        text.replace(&line, &line.replacen(",23800,", ",fast,", 1)),
    )
    .unwrap();
    assert_eq!(
        error_of(&dir),
        format!(
            "{} line 5, column throughput_rps: 'fast' is not a number",
            csv_path.display()
        )
    );

    // A row with a missing field.
    fs::write(&csv_path, text.replace(&line, "threads,c100-s128,2,100")).unwrap();
    let error = error_of(&dir);
    assert!(
        error.starts_with(&format!("{} line 5: malformed CSV", csv_path.display())),
        "{error}"
    );

    // An unknown status.
    fs::write(
        &csv_path,
        text.replace(&line, &line.replacen(",ok,", ",fine,", 1)),
    )
    .unwrap();
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

#[test]
fn the_sweep_axis_falls_back_to_the_column_that_varies() {
    let dir = fixture_copy("size-sweep");
    for model in MODELS {
        let _ = fs::remove_dir_all(dir.join(model));
    }
    fs::write(
        dir.join("manifest.json"),
        "{\"scenario_name\": \"message-size\", \"models\": [\"epoll\", \"tokio\"]}",
    )
    .unwrap();
    // workers differs between models but not within one: it is not a sweep.
    let header = read(&fixture().join("results.csv"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut csv = header + "\n";
    for (model, workers, base) in [("epoll", 2, 40000.0), ("tokio", 4, 30000.0)] {
        for (i, size) in [1, 1024, 65536].iter().enumerate() {
            let thr = base / (i + 1) as f64;
            csv.push_str(&format!(
                "{model},c100-s{size},1,100,{size},0,,{workers},ok,,5.0,100,100,{},{thr},1.0,\
                 1000,1500,2000,3000,4000,0,0,0,50.0,1.0,1.5,8388608,83886.1,3,105,1,1,1,1,true\n",
                thr as u64 * 5
            ));
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    write_report(&dir).unwrap();
    let throughput = read(&dir.join("charts/size-throughput.svg"));
    assert!(throughput.contains("message size (bytes)"));
    assert!(!dir.join("charts/workers-throughput.svg").exists());
    let md = read(&dir.join("report.md"));
    assert!(md.contains("## Message size sweep"));
    assert!(md.contains(
        "| Throughput | size=65536 | no difference: p = 1.00, n = 1 | — | — | — | — | — | 10,000 req/s | — |"
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_command_prints_the_paths_it_wrote() {
    let dir = fixture_copy("cli");
    let out = common::output_within(
        Command::new(common::BIN).arg("report").arg(&dir),
        common::COMMAND_LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2 + CHARTS.len());
    assert_eq!(lines[0], dir.join("report.html").display().to_string());
    assert_eq!(lines[1], dir.join("report.md").display().to_string());
    for line in &lines {
        assert!(Path::new(line).is_file(), "{line} was not written");
    }

    let missing = dir.join("nothing-here");
    let out = common::output_within(
        Command::new(common::BIN).arg("report").arg(&missing),
        common::COMMAND_LIMIT,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("{} does not exist", missing.display())),
        "{stderr}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

// ---- the page in a real browser ----

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The longest one headless Chromium run may take; past it Chromium is killed and the
/// test fails.
const CHROMIUM_LIMIT: Duration = Duration::from_secs(90);

/// Runs headless Chromium on `page`, screenshots it and returns (PNG path, stderr).
fn screenshot(chromium: &Path, page: &Path, work: &Path, size: (u32, u32)) -> (PathBuf, String) {
    let png = work.join("shot.png");
    let _ = fs::remove_file(&png);
    let child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start chromium");
    let stderr = common::finish_within(child, "chromium", CHROMIUM_LIMIT).stderr;
    (png, String::from_utf8_lossy(&stderr).into_owned())
}

/// Console output from the page: a script error, a resource that failed to
/// load, anything the page itself logged. The report has no scripts, so any
/// such line is a fault.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn the_page_renders_in_headless_chromium() {
    let Some(chromium) = find_chromium() else {
        // CI installs chromium (.ci/run), so there a missing browser fails (common::skip
        // panics under CI=true); elsewhere the rest of the suite runs and this says so.
        let why = if std::env::var_os("ECHOLAB_SKIP_BROWSER").is_some() {
            "chromium is not installed and ECHOLAB_SKIP_BROWSER is set"
        } else {
            "chromium is not installed (apt-get install -y chromium)"
        };
        common::skip("report::the_page_renders_in_headless_chromium", why);
        return;
    };
    let dir = fixture_copy("browser");
    let html = write_report(&dir).unwrap();
    let work = dir.join("browser");
    fs::create_dir_all(&work).unwrap();

    // The console check must be able to see an error: a page that throws.
    let broken = work.join("broken.html");
    fs::write(&broken, "<p>x</p><script>throw new Error('probe')</script>").unwrap();
    let (_, stderr) = screenshot(&chromium, &broken, &work, (400, 300));
    assert!(
        console_lines(&stderr)
            .iter()
            .any(|l| l.contains("Uncaught Error: probe")),
        "the console check does not see a thrown error:\n{stderr}"
    );

    let (png, stderr) = screenshot(&chromium, &html, &work, (1200, 2000));
    assert_eq!(
        console_lines(&stderr),
        Vec::<&str>::new(),
        "console output:\n{stderr}"
    );
    let decoder = png::Decoder::new(fs::File::open(&png).expect("no screenshot written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1200, 2000));
    let bytes_per_pixel = info.line_size / info.width as usize;
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(bytes_per_pixel).collect();
    let first = pixels[0];
    let differing = pixels.iter().filter(|p| *p != &first).count();
    // Text, tables and the red status banner: well over 2% of the first screen.
    assert!(
        differing * 50 > pixels.len(),
        "the screenshot is blank: only {differing} of {} pixels differ from the first",
        pixels.len()
    );
    let reddish = pixels
        .iter()
        .filter(|p| p[0] > 150 && p[1] < 60 && p[2] < 80)
        .count();
    assert!(
        reddish > 500,
        "the failure banner's red border is not visible ({reddish} px)"
    );
    fs::remove_dir_all(&dir).unwrap();
}

// ---- malformed step files, two swept axes, the narrow layout ----

/// The legend entries (model names) of a chart.
fn legend(svg: &str) -> Vec<String> {
    svg_texts(svg)
        .into_iter()
        .filter(|t| MODELS.contains(&t.as_str()))
        .collect()
}

/// docs/report.md: a malformed step file only leaves that step out of the timeline charts
/// and is listed at the top of the report, naming the file, line and column.
#[test]
fn a_malformed_step_file_is_listed_and_left_out_of_the_timelines() {
    let dir = fixture_copy("malformed-step");
    let step = dir.join("poll/c4000-s128/rep-1/load");
    let timeline = step.join("timeline.csv");
    let text = read(&timeline);
    let line3 = text.lines().nth(2).unwrap().to_string();
    let field = line3.split(',').nth(3).unwrap().to_string();
    fs::write(
        &timeline,
        text.replace(&line3, &line3.replacen(&format!(",{field},"), ",many,", 1)),
    )
    .unwrap();
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

/// Connections x size: one section per value of the other axis (docs/report.md), each
/// with its own charts, and the verdict compares each at its heaviest point. Throughput
/// here is base x connections / 100, halved at 1024 bytes.
#[test]
fn two_swept_axes_give_one_section_per_value_of_the_other() {
    let dir = fixture_copy("two-axes");
    for model in MODELS {
        let _ = fs::remove_dir_all(dir.join(model));
    }
    fs::write(
        dir.join("manifest.json"),
        "{\"scenario_name\": \"grid\", \"models\": [\"epoll\", \"tokio\"]}",
    )
    .unwrap();
    let header = read(&fixture().join("results.csv"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let throughput = |base: f64, conns: u64, size: u64| {
        base * conns as f64 / 100.0 / if size == 64 { 1.0 } else { 2.0 }
    };
    let mut csv = header + "\n";
    for (model, base) in [("epoll", 40000.0), ("tokio", 30000.0)] {
        for size in [64, 1024] {
            for conns in [10, 100] {
                let thr = throughput(base, conns, size);
                csv.push_str(&format!(
                    "{model},c{conns}-s{size},1,{conns},{size},0,,1,ok,,5.0,{conns},{conns},{},\
                     {thr},1.0,1000,1500,2000,3000,4000,0,0,0,50.0,1.0,1.5,8388608,83886.1,3,105,\
                     1,1,1,1,true\n",
                    thr as u64 * 5
                ));
            }
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    let sections: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("## ") && l.contains("sweep"))
        .collect();
    assert_eq!(
        sections,
        [
            "## Connections sweep (size=64)",
            "## Connections sweep (size=1024)",
            "## Message size sweep (connections=10)",
            "## Message size sweep (connections=100)",
        ]
    );
    for slug in [
        "connections-size64",
        "connections-size1024",
        "size-connections10",
        "size-connections100",
    ] {
        for figure in [
            "response-time",
            "throughput",
            "cpu",
            "memory-per-connection",
        ] {
            let chart = dir.join(format!("charts/{slug}-{figure}.svg"));
            assert!(chart.is_file(), "{} missing", chart.display());
        }
        let chart = read(&dir.join(format!("charts/{slug}-throughput.svg")));
        assert_eq!(legend(&chart), ["epoll", "tokio"], "{slug}");
    }
    assert!(!dir.join("charts/connections-throughput.svg").exists());
    // The verdict of each section, at its heaviest point, each with its baseline; one
    // repetition a model decides nothing.
    for (at, conns, size) in [
        ("connections=100", 100, 64),
        ("connections=100", 100, 1024),
        ("size=1024", 10, 1024),
        ("size=1024", 100, 1024),
    ] {
        let t = throughput(30000.0, conns, size) as u64;
        let tokio = if t >= 1000 {
            format!("{},{:03}", t / 1000, t % 1000)
        } else {
            t.to_string()
        };
        let row = format!(
            "| Throughput | {at} | no difference: p = 1.00, n = 1 | — | — | — | — | — | {tokio} req/s | — |"
        );
        assert!(md.contains(&row), "{row}\n{md}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// The narrow layout: the stylesheet has a media query that applies at 420 px, and, in
/// headless Chromium 420 px wide, the page is no wider than the window (measured by a
/// script added to a copy of the page: the report itself has none).
#[test]
fn the_page_fits_a_420_px_window() {
    let dir = fixture_copy("narrow");
    let html_path = write_report(&dir).unwrap();
    let html = read(&html_path);
    let widths: Vec<u32> = html
        .match_indices("@media (max-width: ")
        .filter_map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find("px")?].parse().ok()
        })
        .collect();
    assert!(
        widths.iter().any(|&w| w >= 420),
        "no narrow-window media query: {widths:?}"
    );
    let Some(chromium) = find_chromium() else {
        common::skip(
            "report::the_page_fits_a_420_px_window",
            "chromium is not installed (apt-get install -y chromium)",
        );
        return;
    };
    let probe = dir.join("narrow.html");
    fs::write(
        &probe,
        html.replace(
            "</body>",
            "<script>parent.document.title = 'width=' + \
             document.documentElement.scrollWidth + ' viewport=' + window.innerWidth;\
             </script></body>",
        ),
    )
    .unwrap();
    // Headless Chromium's window is at least 500 px wide: the page goes in a 420 px frame,
    // whose viewport its media queries see.
    let frame = dir.join("frame.html");
    fs::write(
        &frame,
        "<!DOCTYPE html><title>-</title><iframe src=\"narrow.html\" width=\"420\" \
         height=\"900\" style=\"border:0\"></iframe>",
    )
    .unwrap();
    let work = dir.join("browser");
    fs::create_dir_all(&work).unwrap();
    let out = common::output_within(
        Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--hide-scrollbars",
                "--window-size=800,900",
                "--allow-file-access-from-files",
                "--virtual-time-budget=5000",
                "--dump-dom",
            ])
            .arg(format!(
                "--user-data-dir={}",
                work.join("profile").display()
            ))
            .arg(format!("file://{}", frame.display())),
        CHROMIUM_LIMIT,
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let title = dom
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("no title in the dumped DOM: {dom:.300}"));
    let numbers: Vec<u32> = title
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=')?.1.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{title}");
    assert_eq!(numbers[1], 420, "viewport: {title}");
    assert!(
        numbers[0] <= 420,
        "the page is {} px wide in a 420 px window",
        numbers[0]
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
    let before = text.lines().nth(whole - 2).unwrap();
    let before_step = before.split(',').nth(1).unwrap();
    assert!(
        md.contains(before_step),
        "{before_step} missing from report.md"
    );
    fs::remove_dir_all(&dir).unwrap();
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

/// The verdict opens on one sentence and one picture per figure; the method and the full
/// table are one click away, and a tally of nothing but zeros is not shown.
#[test]
fn the_answer_comes_first_in_sentences_and_pictures() {
    let dir = fixture_copy("answer");
    let html = read(&write_report(&dir).unwrap());
    let md = read(&dir.join("report.md"));
    let verdict = &html[html.find("<h2 id=\"verdict\"").unwrap()..];
    let answers = &verdict[..verdict.find("<details>").unwrap()];
    // One per row of the verdict table.
    let figures =
        md.matches("| connections=4000 |").count() + md.matches("| whole sweep |").count();
    assert!(figures >= 7, "{figures}");
    assert_eq!(
        answers.matches("<div class=\"answer\">").count(),
        figures,
        "{answers}"
    );
    assert_eq!(answers.matches("<svg").count(), figures);
    // Two repetitions a model can tell nobody apart: every model within the noise.
    assert!(
        answers.contains(
            "<p>Throughput at connections=4000: no model leads: epoll, tokio, threads and poll \
         within the noise of uring at 20,500–55,500 req/s (p = 0.25, n = 2).</p>"
        ),
        "{answers}"
    );
    // The full table inside <details>, the method with it.
    let details = &verdict[verdict.find("<details>").unwrap()..];
    let details = &details[..details.find("</details>").unwrap()];
    assert!(details.contains("<th scope=\"col\">Winner</th>"));
    assert!(details.contains("Mann–Whitney U test"));
    // Every tally here is zero: not shown.
    assert!(!html.contains("Overall tally") && !md.contains("Overall tally"));
    assert!(!md.contains("| tokio | 0 |"));
    // report.md: the same sentences first under the heading.
    let md_verdict = &md[md.find("## Verdict and findings\n\n").unwrap()..];
    assert!(md_verdict["## Verdict and findings\n\n".len()..]
        .starts_with("- Throughput at connections=4000: no model leads: epoll, tokio"));
    // Tables scroll inside their box; the answers fold to one column on a phone.
    assert!(html.contains(".table-wrap { overflow-x: auto;"));
    assert!(html.contains(".answer { grid-template-columns: minmax(0, 1fr); }"));
    assert_eq!(
        html.matches("<table>").count(),
        html.matches("<div class=\"table-wrap\"><table>").count()
    );
    fs::remove_dir_all(&dir).unwrap();
}
