//! The gate against results that would have it pass what failed: repetitions that
//! failed, a change from zero, a page that cannot be written, rows read twice, servers
//! that chose their own workers, latency logs that cannot be read, planted links.

use super::*;

/// Marks the repetitions `reps` of `dir`'s step at `connections` as failed.
fn fail(dir: &Path, connections: u64, reps: &[u32]) {
    common::edit_results_csv(
        &dir.join("results.csv"),
        |row| {
            row[column::CONNECTIONS] == connections.to_string()
                && reps.contains(&row[column::REPETITION].parse().unwrap())
        },
        &[
            (column::STATUS, "failed"),
            ("failure_reason", "connections reset"),
        ],
    );
}

#[test]
fn a_failed_repetitions_errors_count_and_a_failed_step_fails_every_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    // One repetition of five failed with 30 errors: `errors > 0` is crossed by them.
    let one = fixture(
        &tmp.path().join("one"),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0)).with(column::ERRORS, vec![0.0, 0.0, 0.0, 0.0, 30.0])],
    );
    fail(&one, 10, &[5]);
    let out = compare(&[path(&old), path(&one), "--fail-if", "errors > 0"]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains("'errors > 0' crossed at epoll c10-s64: errors is 30"),
        "{}",
        text(&out.stderr)
    );
    // A relative threshold cannot pass a step where a repetition of NEW failed.
    let out = compare(&[path(&old), path(&one), "--fail-if", "p99 > +10%"]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains(
            "'p99 > +10%' crossed at epoll c10-s64: a repetition of NEW failed or was \
             interrupted there: it cannot be judged"
        ),
        "{}",
        text(&out.stderr)
    );
    // Every repetition failed, each with errors: both gates fail, none passes.
    let all = fixture(
        &tmp.path().join("all"),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0)).with(column::ERRORS, vec![4.0; 5])],
    );
    fail(&all, 10, &[1, 2, 3, 4, 5]);
    let out = compare(&[path(&old), path(&all), "--fail-if", "errors > 0"]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains("errors is 20"),
        "{}",
        text(&out.stderr)
    );
    let out = compare(&[path(&old), path(&all), "--fail-if", "throughput < -5%"]);
    expect_code(&out, 1);
    // The same NEW with every repetition ok (a run of its own) passes both.
    let ok = plain(tmp.path(), "ok");
    let out = compare(&[
        path(&old),
        path(&ok),
        "--fail-if",
        "errors > 0",
        "--fail-if",
        "p99 > +10%",
    ]);
    expect_code(&out, 0);
}

#[test]
fn a_relative_gate_from_zero_is_crossed_by_any_named_increase() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let new = fixture(
        &tmp.path().join("new"),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0)).with(column::ERRORS, vec![5.0; 5])],
    );
    let out = compare(&[path(&old), path(&new), "--fail-if", "errors > +10%"]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains("'errors > +10%' crossed at epoll c10-s64: +inf%"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("from 0"),
        "{}",
        text(&out.stdout)
    );
    // From zero to zero is no change.
    let again = plain(tmp.path(), "again");
    let out = compare(&[path(&old), path(&again), "--fail-if", "errors > +10%"]);
    expect_code(&out, 0);
}

#[test]
fn a_run_compared_with_itself_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&old, &link).unwrap();
    let spelled = tmp.path().join("old").join("..").join("old");
    // However spelled, one directory is one run: no gate can pass it against itself.
    for new in [&old, &link, &spelled] {
        let out = compare(&[path(&old), path(new), "--fail-if", "p99 > +10%"]);
        fails_saying(&out, "OLD and NEW are the same run");
    }
    // One model against itself is the same run too.
    let out = compare(&[path(&old), "--models", "epoll,epoll"]);
    fails_saying(&out, "OLD and NEW are the same run");
    // Two identical runs in two directories are two runs: compared, no change.
    let again = plain(tmp.path(), "again");
    let out = compare(&[path(&old), path(&again), "--fail-if", "p99 > +10%"]);
    expect_code(&out, 0);
}

#[test]
fn percentages_that_are_not_finite_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let again = plain(tmp.path(), "again");
    for limit in [
        "p99 > +NaN%",
        "p99 > +inf%",
        "p99 > +1e400%",
        "throughput < -inf%",
    ] {
        let out = compare(&[path(&old), path(&again), "--fail-if", limit]);
        fails_saying(&out, "is not a finite change in percent");
    }
    // A number with an exponent is a number.
    let out = compare(&[path(&old), path(&again), "--fail-if", "throughput < 1e9"]);
    expect_code(&out, 1);
}

#[test]
fn the_gates_answer_comes_before_a_page_that_cannot_be_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = old_and_slower(tmp.path());
    let file = tmp.path().join("a-file");
    fs::write(&file, "").unwrap();
    let unwritable = file.join("compare");
    let out = compare(&[
        path(&old),
        path(&new),
        "--fail-if",
        "cpu_per_request > +5%",
        "--out",
        path(&unwritable),
    ]);
    // Crossed: exit 1 and the crossing said, the page's failure said after it.
    expect_code(&out, 1);
    let stderr = text(&out.stderr);
    let crossed = stderr
        .find("'cpu_per_request > +5%' crossed at epoll c10-s64")
        .unwrap();
    let cannot = stderr.find("cannot create").unwrap();
    assert!(crossed < cannot, "{stderr}");
    // No threshold to cross: the page not written is the only failure, exit 2.
    let out = compare(&[path(&old), path(&new), "--out", path(&unwritable)]);
    fails_saying(&out, "cannot create");
}

#[test]
fn a_repetition_read_twice_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let twice = plain(tmp.path(), "twice");
    let csv = twice.join("results.csv");
    let text_of = fs::read_to_string(&csv).unwrap();
    let rows: String = text_of.lines().skip(1).map(|l| format!("{l}\n")).collect();
    fs::write(&csv, text_of.clone() + &rows).unwrap();
    let out = compare(&[path(&old), path(&twice)]);
    fails_saying(
        &out,
        "line 7, column repetition: repetition 1 of epoll c10-s64 is already on line 2",
    );
    // The report says the same, with the same exit.
    let out = common::echolab(&["report", path(&twice)]);
    fails_saying(&out, "repetition 1 of epoll c10-s64 is already on line 2");
}

#[test]
fn steps_match_by_what_the_scenario_set_not_the_servers_workers() {
    let tmp = tempfile::tempdir().unwrap();
    // A command server says no worker count; epoll says 2.
    let one = fixture(
        &tmp.path().join("one"),
        no_manifest_change(),
        &[
            step("mine", 10, five(10.0)),
            step("epoll", 10, five(10.0)).with(column::WORKERS, vec![2.0; 5]),
        ],
    );
    let (doc, out) = json(&[path(&one), "--models", "mine,epoll"]);
    expect_code(&out, 0);
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1);
    assert_eq!(
        doc["warnings"],
        serde_json::json!([
            "mine c10-s64 → epoll c10-s64: workers differ (OLD none said, NEW 2): the servers \
             chose them, not the scenario; the figures may show it"
        ])
    );
    // One label served with 2 workers, then with 1.
    let select = fixture(
        &tmp.path().join("select"),
        no_manifest_change(),
        &[step("epoll", 10, five(10.0)).with(column::WORKERS, vec![1.0; 5])],
    );
    let out = compare(&[path(&one), path(&select)]);
    expect_code(&out, 0);
    // Nothing matches: the parameter that differs is named, with both values.
    let other = fixture(
        &tmp.path().join("other"),
        no_manifest_change(),
        &[step("epoll", 99, five(10.0))],
    );
    let out = compare(&[path(&select), path(&other)]);
    fails_saying(
        &out,
        "no step of OLD matches a step of NEW: OLD epoll c10-s64 and NEW epoll c99-s64 differ \
         in connections (OLD 10, NEW 99)",
    );
}

/// A real run's latency logs damaged three ways: each repetition named, left out.
#[test]
fn a_latency_log_that_cannot_be_read_is_named_and_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(tmp.path(), "models = [\"epoll\"]\nrepetitions = 4", "");
    let run = tmp.path().join("run");
    common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    // The run as written (beside a copy of itself): no latency log is said to be unreadable.
    let twin = tmp.path().join("twin");
    common::copy_dir(&run, &twin);
    let (doc, out) = json(&[path(&run), path(&twin)]);
    expect_code(&out, 0);
    let said = |doc: &serde_json::Value| -> Vec<String> {
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .filter(|w| w.contains("latency log"))
            .collect()
    };
    assert_eq!(said(&doc), Vec::<String>::new());
    let damaged = tmp.path().join("damaged");
    common::copy_dir(&run, &damaged);
    let hlog = |rep: u32| damaged.join(format!("epoll/c5-s32/rep-{rep}/load/latency.hlog"));
    fs::remove_file(hlog(1)).unwrap();
    let whole = fs::read(hlog(2)).unwrap();
    fs::write(hlog(2), &whole[..whole.len() / 2]).unwrap();
    fs::write(
        hlog(3),
        (0..4096u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let (doc, out) = json(&[path(&run), path(&damaged)]);
    expect_code(&out, 0);
    let warnings = said(&doc);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert!(
        w.starts_with(
            "NEW: the latency log (load/latency.hlog) of 3 repetition(s) could not be read"
        ),
        "{w}"
    );
    for rep in [
        "epoll c5-s32 repetition 1 (missing)",
        "epoll c5-s32 repetition 2 (",
        "epoll c5-s32 repetition 3 (",
    ] {
        assert!(w.contains(rep), "{rep}: {w}");
    }
    assert!(!w.contains("repetition 4"), "{w}");
    // NEW's p99 is repetition 4's alone, from its own histogram.
    let (_, intervals) = echolab::load::merge::read_hlog(&hlog(4)).unwrap();
    let mut h = echolab::load::measurements::new_histogram();
    for i in intervals.into_iter().filter(|i| !i.raw) {
        h.add(&i.histogram).unwrap();
    }
    let p99 = figure(&doc, 5, "p99");
    assert_eq!(
        p99["new"]["value"],
        h.value_at_quantile(0.99) as f64,
        "{p99}"
    );
    // The report says it too, on stderr and at the top of the page.
    let md = common::report_md(&damaged);
    assert!(md.contains("of 3 repetition(s) could not be read"), "{md}");
}

/// Links planted where compare and report write: replaced, their targets untouched.
#[test]
fn planted_links_are_replaced_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = plain(tmp.path(), "planted");
    let other = plain(tmp.path(), "other");
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, "not echolab's").unwrap();
    for name in ["report.html", "report.md", ".report.html.tmp"] {
        std::os::unix::fs::symlink(&outside, dir.join(name)).unwrap();
    }
    let md = common::report_md(&dir);
    assert!(md.starts_with("# echolab report"), "{md}");
    assert!(
        !md.contains("The baseline is tokio"),
        "tokio did not run: {md}"
    );
    let out_dir = tmp.path().join("page");
    fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink(&outside, out_dir.join("compare.html")).unwrap();
    let out = compare(&[path(&dir), path(&other), "--out", path(&out_dir)]);
    expect_code(&out, 0);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "not echolab's");
    for written in [dir.join("report.html"), out_dir.join("compare.html")] {
        let meta = fs::symlink_metadata(&written).unwrap();
        assert!(meta.file_type().is_file(), "{}", written.display());
    }
}

/// A run still holding its directory's lock: `report` refuses it rather than call it
/// interrupted.
#[test]
fn a_directory_a_live_run_holds_is_not_reported() {
    use std::os::fd::AsRawFd as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = plain(tmp.path(), "live");
    let lock = fs::File::create(dir.join(".lock")).unwrap();
    fs::write(dir.join(".lock"), "4242\n").unwrap();
    // SAFETY: flock on an fd this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = common::echolab(&["report", path(&dir)]);
    fails_saying(
        &out,
        "belongs to a live run (pid 4242) that is still writing it",
    );
    assert!(!dir.join("report.html").exists());
    drop(lock);
    common::report_md(&dir);
}

/// A warning compare prints comes as compare's, never as the report's.
#[test]
fn compare_speaks_as_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let cut = plain(tmp.path(), "cut");
    let csv = cut.join("results.csv");
    let whole = fs::read_to_string(&csv).unwrap();
    fs::write(&csv, &whole[..whole.len() - 5]).unwrap();
    let (_, out) = json(&[path(&old), path(&cut)]);
    expect_code(&out, 0);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("echolab report"), "{stderr}");
    assert!(
        stderr.contains("echolab compare: warning: NEW: ") && stderr.contains("is cut short"),
        "{stderr}"
    );
}

/// A staircase's stairs count their window's requests, and its hold has no load of its
/// own: neither is a latency log missing or cut short.
#[test]
fn a_staircases_latency_logs_are_not_called_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        "models = [\"epoll\"]\n[server]\nworkers = 1\n[load]\nsize = 16\ndelay = \"100ms\"\n\
         connect_timeout = \"5s\"\n[staircase]\nbatch = 5\nevery = \"1s\"\nto = 10\nhold = \"1s\"\n",
    );
    let run = tmp.path().join("run");
    let rows = common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    assert_eq!(rows.len(), 3, "two stairs and the hold");
    let md = common::report_md(&run);
    assert!(!md.contains("latency log"), "{md}");
}
