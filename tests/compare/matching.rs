//! Steps matched by their parameters, manifests that differ, missing inputs and usage errors.

use super::*;

#[test]
fn steps_match_by_parameters_and_what_is_on_one_side_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let old = fixture(
        &tmp.path().join("old"),
        no_manifest_change(),
        &[
            step("epoll", 10, five(10.0)),
            step("epoll", 20, five(10.0)),
            step("poll", 10, five(10.0)),
        ],
    );
    // NEW lists its steps the other way round, lacks 10 and adds 40, and runs tokio
    // instead of poll.
    let new = fixture(
        &tmp.path().join("new"),
        no_manifest_change(),
        &[
            step("epoll", 40, five(10.0)),
            step("epoll", 20, five(12.0)),
            step("tokio", 10, five(10.0)),
        ],
    );
    let (doc, out) = json(&[path(&old), path(&new)]);
    expect_code(&out, 0);
    let steps: Vec<(&str, &str, f64)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["old_model"].as_str().unwrap(),
                s["old_step"].as_str().unwrap(),
                s["parameters"]["connections"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(steps, [("epoll", "c20-s64", 20.0)]);
    assert_eq!(figure(&doc, 20, "cpu_per_request")["significant"], true);
    assert_eq!(
        doc["only_old"],
        serde_json::json!([
            "model poll (every step)",
            "epoll c10-s64 (connections 10, size 64, delay_ms 0.0)"
        ])
    );
    assert_eq!(
        doc["only_new"],
        serde_json::json!([
            "model tokio (every step)",
            "epoll c40-s64 (connections 40, size 64, delay_ms 0.0)"
        ])
    );
    let table = text(&compare(&[path(&old), path(&new)]).stdout);
    assert!(
        table.contains("only in OLD: epoll c10-s64 (connections 10, size 64, delay_ms 0.0)")
            && table.contains("only in NEW: model tokio (every step)"),
        "{table}"
    );

    // Two models of one run.
    let (doc, out) = json(&[path(&old), "--models", "poll,epoll"]);
    expect_code(&out, 0);
    let pairs: Vec<(&str, &str, &str)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["old_model"].as_str().unwrap(),
                s["new_model"].as_str().unwrap(),
                s["old_step"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [("poll", "epoll", "c10-s64")]);
    assert_eq!(
        doc["only_new"],
        serde_json::json!(["epoll c20-s64 (connections 20, size 64, delay_ms 0.0)"])
    );
    assert_eq!(doc["warnings"], serde_json::json!([]));

    // Nothing in common: an error, exit 2.
    let other = fixture(
        &tmp.path().join("other"),
        no_manifest_change(),
        &[step("epoll", 99, five(10.0))],
    );
    let out = compare(&[path(&old), path(&other)]);
    fails_saying(
        &out,
        "no step of OLD matches a step of NEW: OLD epoll c10-s64 and NEW epoll c99-s64 \
         differ in connections (OLD 10, NEW 99)",
    );
    let out = compare(&[path(&old), "--models", "poll,uring"]);
    fails_saying(&out, "NEW has no model 'uring' (its models: epoll, poll)");
}

#[test]
fn manifests_that_differ_are_warned_above_the_table_naming_both_values() {
    let tmp = tempfile::tempdir().unwrap();
    let old = plain(tmp.path(), "old");
    let new = fixture(
        &tmp.path().join("new"),
        serde_json::json!({
            "kernel": "6.8.0",
            "cores": 4,
            "echolab_version": "0.2.0",
            "scenario_toml": "name = \"fixture\"\n[load]\nsize = 128\n",
            "conditions": {"server_limits": {"epoll": {"cpu_quota": 0.5}}},
        }),
        &[step("epoll", 10, five(10.0))],
    );
    let expected = [
        "kernel differs: OLD 6.1.0, NEW 6.8.0",
        "core count differs: OLD 2, NEW 4",
        "echolab version differs: OLD 0.1.0, NEW 0.2.0",
        "scenario definition differs: OLD `size = 64`, NEW `size = 128`",
        "epoll's cgroup limit differs: OLD none, NEW cpu 0.5 core",
    ];
    let out = compare(&[path(&old), path(&new)]);
    expect_code(&out, 0);
    let stdout = text(&out.stdout);
    let top: Vec<&str> = stdout.lines().take(expected.len()).collect();
    let warned: Vec<String> = expected.iter().map(|w| format!("warning: {w}")).collect();
    assert_eq!(top, warned, "{stdout}");
    let (doc, _) = json(&[path(&old), path(&new)]);
    assert_eq!(doc["warnings"], serde_json::json!(expected));
    let md = text(&compare(&[path(&old), path(&new), "--format", "markdown"]).stdout);
    assert!(
        md.contains(&format!("- warning: {}\n", expected[0])),
        "{md}"
    );
}

#[test]
fn a_missing_or_damaged_results_directory_is_an_error_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let good = plain(tmp.path(), "good");
    let missing = tmp.path().join("missing");
    let out = compare(&[path(&good), path(&missing)]);
    fails_saying(
        &out,
        &format!(
            "echolab compare: NEW: results directory {} does not exist or is not a directory\n",
            missing.display()
        ),
    );
    // A results.csv with a cell that is not a number.
    let damaged = tmp.path().join("damaged");
    fs::create_dir_all(&damaged).unwrap();
    fs::copy(good.join("manifest.json"), damaged.join("manifest.json")).unwrap();
    let csv = fs::read_to_string(good.join("results.csv"))
        .unwrap()
        .replacen(",1000,", ",fast,", 1);
    fs::write(damaged.join("results.csv"), csv).unwrap();
    let out = compare(&[path(&damaged), path(&good)]);
    fails_saying(
        &out,
        &format!(
            "echolab compare: OLD: {} line 2, column throughput_rps: 'fast' is not a number",
            damaged.join("results.csv").display()
        ),
    );
    // No results.csv; a manifest that is not JSON.
    fs::remove_file(damaged.join("results.csv")).unwrap();
    let out = compare(&[path(&good), path(&damaged)]);
    fails_saying(
        &out,
        &format!("cannot read {}", damaged.join("results.csv").display()),
    );
    fs::write(damaged.join("manifest.json"), "{not json").unwrap();
    let out = compare(&[path(&good), path(&damaged)]);
    fails_saying(&out, "invalid manifest");
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let good = plain(tmp.path(), "good");
    for (args, message) in [
        (
            vec![path(&good), path(&good), "--fail-if", "p98 > +10%"],
            "echolab compare: --fail-if 'p98 > +10%': 'p98' is not a figure: use throughput, \
             p50, p99, p999, mean, cpu, cpu_per_request, memory_per_connection, errors, held \
             or a numeric results.csv column",
        ),
        (
            vec![path(&good), path(&good), "--fail-if", "p99 > 10%"],
            "echolab compare: --fail-if 'p99 > 10%': '10%': write a change with its sign \
             (+10% or -10%)",
        ),
        (
            vec![path(&good), path(&good), "--fail-if", "p99 +10%"],
            "echolab compare: --fail-if 'p99 +10%': no comparison: use > or <",
        ),
        (
            vec![path(&good)],
            "echolab compare: give two results directories (OLD NEW), or one with --models \
             OLD_MODEL,NEW_MODEL",
        ),
        (
            vec![path(&good), "--models", "epoll"],
            "echolab compare: --models takes two models, OLD's and NEW's (e.g. --models \
             mine,epoll)",
        ),
    ] {
        let out = compare(&args);
        expect_code(&out, 2);
        assert!(
            text(&out.stderr).starts_with(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
    // clap's own errors exit 2 as well.
    expect_code(&compare(&[path(&good), "--format", "yaml"]), 2);
}
