//! Real runs compared: a copy changes nothing, a slower server is flagged.

use super::*;

/// Every step of a real run: two models, two repetitions, on loopback.
#[test]
fn a_real_run_against_its_copy_changes_nothing_and_latency_is_the_histograms_added() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"poll\", \"epoll\"]\nrepetitions = 2",
        "",
    );
    let run = tmp.path().join("run");
    common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    let copy = tmp.path().join("copy");
    let status = Command::new("cp")
        .args(["-a", path(&run), path(&copy)])
        .status()
        .unwrap();
    assert!(status.success());
    let (doc, out) = json(&[
        path(&run),
        path(&copy),
        "--fail-if",
        "p99 > +1%",
        "--fail-if",
        "throughput < -1%",
    ]);
    expect_code(&out, 0);
    // Nothing differs between a run and its copy; only a machine busy with other work
    // while it ran is said (of both sides alike).
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().all(|w| w
            .as_str()
            .unwrap()
            .contains("repetitions shared the machine")),
        "{warnings:?}"
    );
    assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    for step in doc["steps"].as_array().unwrap() {
        for f in step["figures"].as_array().unwrap() {
            assert_eq!(f["significant"], false, "{f}");
            assert_eq!(f["old"], f["new"], "{f}");
        }
    }
    // p99 of a step: the 99th percentile of both repetitions' histograms added.
    let mut sum = echolab::load::measurements::new_histogram();
    for rep in ["rep-1", "rep-2"] {
        let hlog = run.join("epoll/c5-s32").join(rep).join("load/latency.hlog");
        let (_, intervals) = echolab::load::merge::read_hlog(&hlog).unwrap();
        for i in intervals.into_iter().filter(|i| !i.raw) {
            sum.add(&i.histogram).unwrap();
        }
    }
    assert_eq!(sum.len(), 2 * 5 * 20, "every request of both repetitions");
    let epoll_p99 = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["old_model"] == "epoll")
        .unwrap()["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == "p99")
        .unwrap();
    assert_eq!(
        epoll_p99["old"]["value"].as_f64().unwrap(),
        sum.value_at_quantile(0.99) as f64
    );
    // Two models of one run, and the table.
    let out = compare(&[path(&run), "--models", "poll,epoll"]);
    expect_code(&out, 0);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("poll c5-s32 → epoll"), "{stdout}");
    assert_eq!(stdout.matches("poll c5-s32").count(), 1, "{stdout}");

    // `run --baseline`: the same scenario again, compared with the first run in the
    // console and in the report; a baseline that cannot be read is refused first.
    let second = tmp.path().join("second");
    let output = common::run_scenario(&scenario, &second, &["--quiet", "--baseline", path(&run)]);
    expect_code(&output, 0);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&format!("against the baseline {}:", run.display())),
        "{stdout}"
    );
    let report = fs::read_to_string(second.join("report.md")).unwrap();
    let section = report
        .split("## Against the baseline")
        .nth(1)
        .unwrap_or_default();
    assert!(
        section.contains("| step | figure | old | new | change | p, n |"),
        "{report}"
    );
    assert_eq!(section.matches("| throughput |").count(), 3, "{section}");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(second.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["baseline"], path(&fs::canonicalize(&run).unwrap()));
    let refused = common::run_scenario(
        &scenario,
        &tmp.path().join("third"),
        &["--quiet", "--baseline", path(&tmp.path().join("nothing"))],
    );
    fails_saying(&refused, "--baseline: results directory");
    assert!(!tmp.path().join("third").exists());
}

/// The A/B check at a tiny scale: epoll against itself with `work_us` (10 ms of CPU per
/// read, at least one read per request in a closed loop), five repetitions each, as
/// two models of one run. CPU per request is at least ten times epoll's in every
/// repetition, so the change is named whichever single repetition is left out, and
/// the gate fails on it.
#[test]
fn a_server_made_slower_with_work_us_is_flagged_on_cpu_per_request() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny_scenario(
        tmp.path(),
        "models = [\"epoll\", \"slow\"]\nrepetitions = 5",
        "[model.slow]\nbase = \"epoll\"\nwork_us = 10000\n",
    );
    let run = tmp.path().join("run");
    let rows = common::run_scenario_ok(&scenario, &run, QUIET_NO_REPORT);
    let cpu = |model: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r["model"] == model)
            .map(|r| r["server_cpu_us_per_request"].parse().unwrap())
            .collect()
    };
    let (fast, slow) = (cpu("epoll"), cpu("slow"));
    assert_eq!((fast.len(), slow.len()), (5, 5));
    let fastest_slow = slow.iter().copied().fold(f64::INFINITY, f64::min);
    let slowest_fast = fast.iter().copied().fold(0.0, f64::max);
    assert!(
        fastest_slow >= 2500.0 && fastest_slow >= 10.0 * slowest_fast,
        "epoll {fast:?}, with work_us {slow:?}"
    );
    let (doc, out) = json(&[
        path(&run),
        "--models",
        "epoll,slow",
        "--fail-if",
        "cpu_per_request > +5%",
    ]);
    expect_code(&out, 1);
    let c = figure(&doc, 5, "cpu_per_request");
    assert_eq!(c["significant"], true, "{c}");
    assert!(c["change_pct"].as_f64().unwrap() > 900.0, "{c}");
    // The gate passes epoll against itself.
    let copy = tmp.path().join("copy");
    assert!(Command::new("cp")
        .args(["-a", path(&run), path(&copy)])
        .status()
        .unwrap()
        .success());
    expect_code(
        &compare(&[
            path(&run),
            path(&copy),
            "--fail-if",
            "cpu_per_request > +5%",
        ]),
        0,
    );
}
