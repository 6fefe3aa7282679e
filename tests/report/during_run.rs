//! The report while a run goes on: report.html is there after the first steps, marked
//! partial, reloading itself, with the steps done so far; the final one replaces it.

use std::time::Instant;

use super::*;

/// The "N of M steps" of a partial report.
fn steps_done(html: &str) -> (usize, usize) {
    let line = html
        .split_once("<p class=\"partial\" id=\"partial\">Partial report: the run goes on, ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no partial line: {html:.1500}"));
    let mut words = line.split_whitespace();
    let done = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("of"));
    let total = words.next().unwrap().parse().unwrap();
    (done, total)
}

/// The rows of the "All steps" table: every repetition results.csv had.
fn step_rows(html: &str) -> usize {
    let steps = &html[html.find("<h2 id=\"steps\">").expect("no steps section")..];
    let table = &steps[..steps.find("</table>").unwrap()];
    table.matches("</tr>").count() - 1
}

#[test]
fn report_html_follows_a_run_and_the_final_one_replaces_it() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
models = ["epoll", "tokio"]
repetitions = 2
[load]
size = 16
duration = "1s"
[sweep]
connections = [1, 2]
"#,
    );
    let out = tmp.path().join("out");
    let mut child = Command::new(common::BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start echolab run");
    let html_path = out.join("report.html");
    // Waits for the first partial report (written after the first step) while the run
    // goes on: a run that ends first, or never writes one, fails here.
    let deadline = Instant::now() + common::COMMAND_LIMIT;
    let partial = loop {
        if let Ok(html) = fs::read_to_string(&html_path) {
            break html;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before a partial report.html"
        );
        assert!(Instant::now() < deadline, "no report.html during the run");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (done, total) = steps_done(&partial);
    // 2 models x 2 steps x 2 repetitions; the last row's report is the final one.
    assert_eq!(total, 8);
    assert!((1..total).contains(&done), "{done} of {total}");
    assert_eq!(
        step_rows(&partial),
        done,
        "the steps table of a partial report"
    );
    assert!(partial.contains("<meta http-equiv=\"refresh\" content=\"10\">"));
    assert!(partial.contains("This page reloads itself every 10 s."));
    // What has not run yet is no failure: no alert, and no "complete run" either.
    assert!(!partial.contains("id=\"status\""), "{partial:.2000}");
    let md = read(&out.join("report.md"));
    assert!(
        md.contains(&format!(
            "**Partial report: the run goes on, {done} of 8 steps"
        )),
        "{md:.600}"
    );

    let finished = common::finish_within(child, "echolab run", common::RUN_LIMIT);
    assert!(
        finished.status.success(),
        "{}",
        String::from_utf8_lossy(&finished.stderr)
    );
    let html = read(&html_path);
    assert!(!html.contains("id=\"partial\"") && !html.contains("Partial report"));
    assert!(!html.contains("http-equiv=\"refresh\""));
    assert!(
        html.contains("<p class=\"ok\" id=\"status\">Complete run: every step finished as ok.</p>")
    );
    assert_eq!(step_rows(&html), 8);
    assert!(!read(&out.join("report.md")).contains("Partial report"));
    // Written whole, through a temporary file renamed over it: none is left.
    let left: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .chain(fs::read_dir(out.join("charts")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
