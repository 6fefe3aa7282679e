//! The gate: significant changes past a threshold exit 1 naming them; absolute and scenario thresholds.

use super::*;

#[test]
fn a_significant_change_crossing_a_threshold_exits_1_naming_it_and_the_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = old_and_slower(tmp.path());
    let out = compare(&[
        path(&old),
        path(&new),
        "--fail-if",
        "cpu_per_request > +5%",
        "--fail-if",
        "p99 > +10%",
    ]);
    expect_code(&out, 1);
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        ["echolab compare: 'cpu_per_request > +5%' crossed at epoll c10-s64: +20.0% (p = 0.012, n = 5)"],
    );
    // The table names the change with its interval at 10 connections, "~" at 20.
    let stdout = text(&out.stdout);
    let line = |prefix: &str, nth: usize| {
        stdout
            .lines()
            .filter(|l| l.contains(prefix))
            .nth(nth)
            .unwrap_or_else(|| panic!("no line {prefix} in\n{stdout}"))
            .to_string()
    };
    let changed = line("cpu_per_request", 0);
    assert!(
        changed.contains("10.00 µs CPU/req ±1%")
            && changed.contains("12.00 µs CPU/req ±1%")
            && changed.contains("+20.0% (+")
            && changed.ends_with("p = 0.012, n = 5"),
        "{changed}"
    );
    let same = line("cpu_per_request", 1);
    assert!(same.contains("  ~  p = 1.00, n = 5"), "{same}");

    let (doc, out) = json(&[path(&old), path(&new), "--fail-if", "cpu_per_request > +5%"]);
    expect_code(&out, 1);
    let c = figure(&doc, 10, "cpu_per_request");
    assert_eq!(c["significant"], true);
    assert!(
        (c["change_pct"].as_f64().unwrap() - 20.0).abs() < 1e-9,
        "{c}"
    );
    let (lo, hi) = (
        c["interval_pct"][0].as_f64().unwrap(),
        c["interval_pct"][1].as_f64().unwrap(),
    );
    assert!(lo <= 20.0 && 20.0 <= hi && lo > 15.0 && hi < 25.0, "{c}");
    assert!((c["p"].as_f64().unwrap() - 0.01219).abs() < 1e-4, "{c}");
    assert_eq!(figure(&doc, 20, "cpu_per_request")["significant"], false);
    assert_eq!(
        doc["crossed"],
        serde_json::json!([{
            "threshold": "cpu_per_request > +5%",
            "step": "epoll c10-s64",
            "what": "+20.0% (p = 0.012, n = 5)"
        }])
    );
    // The other direction does not cross, nor does a threshold above the change.
    for threshold in ["cpu_per_request < -5%", "cpu_per_request > +25%"] {
        expect_code(
            &compare(&[path(&old), path(&new), "--fail-if", threshold]),
            0,
        );
    }
    // Lower is worse for throughput: a 20 % drop crosses '< -5%'.
    let slower = fixture(
        &tmp.path().join("slower"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)).with(column::THROUGHPUT_RPS, five(800.0)),
            step("epoll", 20, five(10.0)),
        ],
    );
    let old_rps = fixture(
        &tmp.path().join("old-rps"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)).with(column::THROUGHPUT_RPS, five(1000.0)),
            step("epoll", 20, five(10.0)),
        ],
    );
    let out = compare(&[
        path(&old_rps),
        path(&slower),
        "--fail-if",
        "throughput < -5%",
    ]);
    expect_code(&out, 1);
    assert!(
        text(&out.stderr).contains("'throughput < -5%' crossed at epoll c10-s64: -20.0%"),
        "{}",
        text(&out.stderr)
    );
    expect_code(
        &compare(&[
            path(&old_rps),
            path(&slower),
            "--fail-if",
            "throughput > +5%",
        ]),
        0,
    );
}

#[test]
fn a_change_the_verdict_does_not_name_never_fails_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    // Three against three, 50 % apart: Mann–Whitney cannot reach p < 0.05 (0.081).
    let three_old = fixture(
        &tmp.path().join("three-old"),
        no_manifest_change(),
        &[step("epoll", 10, vec![10.0, 10.1, 9.9])],
    );
    let three_new = fixture(
        &tmp.path().join("three-new"),
        no_manifest_change(),
        &[step("epoll", 10, vec![15.0, 15.1, 14.9])],
    );
    // Five against five completely apart, but 3 % : significant, under ×1.05.
    let small = fixture(
        &tmp.path().join("small"),
        no_manifest_change(),
        &[step(
            "epoll",
            10,
            five(10.0).iter().map(|v| v * 1.03).collect(),
        )],
    );
    // The same run twice.
    let same = plain(tmp.path(), "same");
    for (a, b, p) in [
        (&three_old, &three_new, "p = 0.081, n = 3"),
        (&old, &small, "p = 0.012, n = 5"),
        (&old, &same, "p = 1.00, n = 5"),
    ] {
        let out = compare(&[path(a), path(b), "--fail-if", "cpu_per_request > +1%"]);
        expect_code(&out, 0);
        let stdout = text(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.contains("cpu_per_request"))
            .unwrap();
        assert!(line.ends_with(&format!("  ~  {p}")), "{line}");
        assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    }
}

#[test]
fn absolute_thresholds_judge_new_values_with_their_units() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    // One repetition of three with errors; p99 1.5 ms.
    let new = fixture(
        &tmp.path().join("new"),
        no_manifest_change(),
        &[step("epoll", 10, vec![10.0, 10.0, 10.0])
            .with(column::ERRORS, vec![0.0, 3.0, 0.0])
            .with(column::P99_US, vec![1500.0, 1400.0, 1600.0])],
    );
    let out = compare(&[
        path(&old),
        path(&new),
        "--fail-if",
        "errors > 0",
        "--fail-if",
        "p99 > 1ms",
        "--fail-if",
        "p99 > 2ms",
        "--fail-if",
        "memory_per_connection > 1KiB",
    ]);
    expect_code(&out, 1);
    assert_eq!(
        text(&out.stderr).lines().collect::<Vec<_>>(),
        [
            "echolab compare: 'errors > 0' crossed at epoll c10-s64: errors is 3",
            "echolab compare: 'p99 > 1ms' crossed at epoll c10-s64: p99 is 1.50 ms",
            // The fixture has no memory per connection: a figure that cannot be read
            // never passes.
            "echolab compare: 'memory_per_connection > 1KiB' crossed at epoll c10-s64: no \
             value (the step failed, or the column is empty): it cannot be judged",
        ]
    );
    expect_code(
        &compare(&[path(&new), path(&old), "--fail-if", "errors > 0"]),
        0,
    );
}

/// A scenario's `[thresholds]`: judged at the end of `run` and in the report; only
/// `--enforce-thresholds` makes one not met fail the run (exit 3).
#[test]
fn scenario_thresholds_are_judged_and_enforced_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"epoll\"]",
        "[thresholds]\np99 = \"< 1h\"\nerror_rate = \"< 0.001\"\nheld = \"> 5\"\n",
    );
    let out = tmp.path().join("run");
    let enforced = common::run_scenario(&scenario, &out, &["--quiet", "--enforce-thresholds"]);
    expect_code(&enforced, 3);
    // Five connections held, never more than five: only `held > 5` is not met.
    let stdout = text(&enforced.stdout);
    let judged: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("thresholds"))
        .take(2)
        .collect();
    assert_eq!(
        judged,
        [
            "thresholds (error_rate < 0.001, held > 5, p99 < 1h): not all met",
            "  'held > 5' not met at epoll c5-s32: held is 5",
        ],
        "{stdout}"
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("## Thresholds\n\nThresholds: error_rate < 0.001, held > 5, p99 < 1h. Not met (1):\n\n- 'held > 5' not met at epoll c5-s32: held is 5\n"),
        "{report}"
    );
    // The same run without the flag: judged and printed, exit 0.
    let plain_run = common::run_scenario(&scenario, &out, &["--quiet", "--no-report", "--force"]);
    expect_code(&plain_run, 0);
    assert!(text(&plain_run.stdout).contains("'held > 5' not met"));

    // A composite whose part has thresholds: judged per part, enforced the same way.
    let composite = tmp.path().join("composite.toml");
    fs::write(
        &composite,
        format!("parts = [{:?}]\n", scenario.file_name().unwrap()),
    )
    .unwrap();
    let both = tmp.path().join("both");
    let enforced = common::run_scenario(
        &composite,
        &both,
        &["--quiet", "--no-report", "--enforce-thresholds"],
    );
    expect_code(&enforced, 3);
    assert!(
        text(&enforced.stdout)
            .contains("thresholds of tiny (error_rate < 0.001, held > 5, p99 < 1h): not all met"),
        "{}",
        text(&enforced.stdout)
    );

    // A threshold that is a change, or names no figure, is a scenario error.
    let text_of = fs::read_to_string(&scenario).unwrap();
    for (bad, message) in [
        (
            "held = \"> +5%\"",
            "[thresholds] held: 'held = \"> +5%\"': a run's threshold is a value with its unit",
        ),
        (
            "latency = \"< 1ms\"",
            "[thresholds] latency: [thresholds] 'latency < 1ms': 'latency' is not a figure",
        ),
    ] {
        fs::write(&scenario, text_of.replace("held = \"> 5\"", bad)).unwrap();
        let rejected = common::run_scenario(&scenario, &tmp.path().join("bad"), QUIET_NO_REPORT);
        assert!(!rejected.status.success());
        let stderr = text(&rejected.stderr);
        assert!(stderr.contains(message), "{stderr}");
        assert!(!tmp.path().join("bad").exists());
    }
}

/// Throughput an open loop fixed on both sides (every repetition served the rate it
/// offered) is no change: "fixed by the load", as the report's verdict names no model
/// there. A side that fell behind its rate measured the server, and its change is named.
#[test]
fn throughput_an_open_loop_fixed_is_no_change() {
    let tmp = tempfile::tempdir().unwrap();
    let offered = |tp: f64| {
        step("epoll", 10, five(10.0))
            .with(column::THROUGHPUT_RPS, five(tp))
            .with(column::RATE, vec![1000.0; 5])
    };
    let old = fixture(
        &tmp.path().join("old"),
        no_manifest_change(),
        &[offered(1000.0)],
    );
    // 3 % below the rate, consistently: still within the least difference named.
    let kept_up = fixture(
        &tmp.path().join("kept"),
        no_manifest_change(),
        &[offered(970.0)],
    );
    let behind = fixture(
        &tmp.path().join("behind"),
        no_manifest_change(),
        &[offered(800.0)],
    );

    let (doc, out) = json(&[path(&old), path(&kept_up)]);
    expect_code(&out, 0);
    let t = figure(&doc, 10, "throughput");
    assert_eq!(t["fixed_by_load"], 1000.0, "{t}");
    assert_eq!(t["significant"], false, "{t}");
    // No gate crosses on it.
    let table = compare(&[path(&old), path(&kept_up), "--fail-if", "throughput < -1%"]);
    expect_code(&table, 0);
    let row = text(&table.stdout)
        .lines()
        .find(|l| l.contains("throughput"))
        .map(String::from)
        .unwrap_or_else(|| panic!("{}", text(&table.stdout)));
    assert!(row.contains("fixed by the load"), "{row}");

    let (doc, out) = json(&[path(&old), path(&behind)]);
    expect_code(&out, 0);
    let t = figure(&doc, 10, "throughput");
    assert_eq!(t["fixed_by_load"], serde_json::Value::Null, "{t}");
    assert_eq!(t["significant"], true, "{t}");
    expect_code(
        &compare(&[path(&old), path(&behind), "--fail-if", "throughput < -1%"]),
        1,
    );
}
