//! Every format says the same; the JSON follows its schema.

use super::*;

#[test]
fn every_format_says_the_same_and_the_json_follows_its_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = old_and_slower(tmp.path());
    // Markdown: a table row per figure and step, the change named at 10 connections.
    let md = text(&compare(&[path(&old), path(&new), "--format", "markdown"]).stdout);
    assert!(md.starts_with("# echolab compare: "), "{md}");
    assert!(
        md.contains("| step | figure | old | new | change | p, n |\n| --- | --- | ---: | ---: | ---: | --- |\n"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.contains("| cpu_per_request |"))
        .unwrap();
    assert!(
        row.starts_with(
            "|  | cpu_per_request | 10.00 µs CPU/req ±1% | 12.00 µs CPU/req ±1% | +20.0% (+"
        ),
        "{row}"
    );
    // Two steps, and the geometric mean.
    assert_eq!(md.matches("| throughput |").count(), 3, "{md}");
    assert!(md.contains("## Geometric means"), "{md}");

    // CSV: one row per step and figure, then one per figure's geometric mean.
    let out = compare(&[path(&old), path(&new), "--format", "csv"]);
    expect_code(&out, 0);
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[..6],
        [
            "old_model",
            "new_model",
            "old_step",
            "new_step",
            "figure",
            "column"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let steps = rows.iter().filter(|r| &r[2] != "geomean").count();
    assert_eq!(steps, 2 * 10);
    let cpu = rows
        .iter()
        .find(|r| &r[2] == "c10-s64" && &r[4] == "cpu_per_request")
        .unwrap();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        (
            &cpu[col("old_value")],
            &cpu[col("new_value")],
            &cpu[col("significant")]
        ),
        ("10", "12", "true")
    );
    let gm = rows
        .iter()
        .find(|r| &r[2] == "geomean" && &r[4] == "cpu_per_request")
        .unwrap();
    // sqrt(12 * 10) / sqrt(10 * 10) = 1.0954...
    let pct: f64 = gm[col("change_pct")].parse().unwrap();
    assert!(
        (pct - ((1.2f64).sqrt() - 1.0) * 100.0).abs() < 1e-9,
        "{pct}"
    );

    // JSON: the documented keys, in order, with their types.
    let (doc, _) = json(&[path(&old), path(&new), "--fail-if", "p99 > +10%"]);
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let mut top = keys(&doc);
    top.sort();
    let mut expected = [
        "schema",
        "old",
        "new",
        "alpha",
        "min_effect",
        "warnings",
        "thresholds",
        "crossed",
        "steps",
        "geomean",
        "only_old",
        "only_new",
    ];
    expected.sort();
    assert_eq!(top, expected);
    assert_eq!(doc["schema"], "echolab-compare/1");
    assert_eq!(
        (doc["alpha"].as_f64(), doc["min_effect"].as_f64()),
        (Some(0.05), Some(1.05))
    );
    assert_eq!(doc["thresholds"], serde_json::json!(["p99 > +10%"]));
    let step = &doc["steps"][0];
    let mut step_keys = keys(step);
    step_keys.sort();
    assert_eq!(
        step_keys,
        [
            "figures",
            "new_model",
            "new_step",
            "old_model",
            "old_step",
            "parameters"
        ]
    );
    let figures: Vec<&str> = step["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figures,
        [
            "throughput",
            "p50",
            "p99",
            "p999",
            "mean",
            "cpu",
            "cpu_per_request",
            "memory_per_connection",
            "errors",
            "held"
        ]
    );
    let f = figure(&doc, 10, "cpu_per_request");
    let mut f_keys = keys(f);
    f_keys.sort();
    assert_eq!(
        f_keys,
        [
            "change_pct",
            "column",
            "figure",
            "fixed_by_load",
            "higher_is_better",
            "interval_pct",
            "new",
            "old",
            "p",
            "significant",
            "unit"
        ]
    );
    assert_eq!(f["column"], "server_cpu_us_per_request");
    assert_eq!(f["unit"], "µs");
    assert_eq!(
        f["old"],
        serde_json::json!({"value": 10.0, "min": 9.9, "max": 10.1, "n": 5, "broke": false})
    );
    // A figure the fixture has no value for: nulls, no test.
    let p999 = figure(&doc, 10, "p999");
    assert_eq!(
        (
            &p999["old"]["value"],
            &p999["p"],
            &p999["change_pct"],
            &p999["significant"]
        ),
        (
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::json!(false)
        )
    );
    let gm = doc["geomean"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["figure"] == "cpu_per_request")
        .unwrap();
    assert_eq!(gm["steps"], 2);

    // compare.html: self-contained, a chart per figure with values.
    let html_dir = tmp.path().join("html");
    let out = compare(&[path(&old), path(&new), "--out", path(&html_dir)]);
    expect_code(&out, 0);
    let html = fs::read_to_string(html_dir.join("compare.html")).unwrap();
    assert_eq!(
        html.matches("<figure id=\"chart-compare-").count(),
        6,
        "one per figure with values"
    );
    assert!(html.contains("<figure id=\"chart-compare-cpu_per_request\">"));
    assert!(!html.contains("src=\"http") && !html.contains("<script"));
    assert!(html.contains("No --fail-if threshold crossed."));
}
