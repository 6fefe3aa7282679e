//! Scenario files and the built-in scenarios: refused lines, the list, the default run, flags over the scenario.

use super::*;

/// A scenario refused at its line is a usage error: exit 2 (an ssh URL with a password
/// exited 1, docs/scenarios.md saying 2).
#[test]
fn bad_scenarios_are_rejected_with_their_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nconections = 5\n",
            "line 4, column 1: unknown field `conections`",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\ndelay = \"soon\"\n",
            "line 4, column 9: 'soon' is not a duration",
        ),
        (
            "models = [\"poll\", \"epol\"]\n[load]\nrequests = 3\n",
            "line 1, column 19: unknown model 'epol'",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nsize = \"17MiB\"\n",
            "line 4, column 8: step c10-s17825792: the load generator would refuse it: --size must be 1 B to 16 MiB",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\npayload_file = \"/no/such/payload\"\n",
            "line 4, column 16: payload_file /no/such/payload: No such file or directory",
        ),
        (
            "models = [\"poll\"]\nstep_timeout = \"0s\"\n[load]\nrequests = 3\n",
            "line 2, column 16: step_timeout must be above 0",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nconnections = 10_000_000\n",
            "line 4, column 15: step c10000000-s64 opens 10000000 connections from each client, more than the",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\n[sweep]\nconnections = [4, 0]\n",
            "line 5, column 15: must be at least 1, not 0",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\nwarmup = \"1s\"\n",
            "line 4, column 10: [load] warmup does not go with requests",
        ),
        (
            "models = [\"poll\"]\n[load]\nrequests = 3\n[hosts]\nserver = \"ssh://lab:secret@pc1\"\n\
             clients = [\"ssh://pc2\"]\nserver_addr = \"10.0.0.1\"\n",
            "line 5, column 10: [hosts] server: \"ssh://lab:secret@pc1\" is not an ssh URL",
        ),
    ];
    for (text, expected) in cases {
        let path = write_scenario(tmp.path(), text);
        let output = common::run_scenario(&path, tmp.path(), &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected '{expected}' in: {stderr}"
        );
        assert!(!tmp.path().join("results.csv").exists());
    }
    let output = common::echolab_run(&["no-such-scenario"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("neither a built-in scenario"));
}

#[test]
fn list_names_every_builtin_scenario() {
    let output = common::echolab_run(&["--list"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let names: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // Every declared scenario, in the declaration's order, quick (the default) first.
    let declared: Vec<&str> = echolab::scenario::BUILTIN.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, declared);
    assert_eq!(names.first(), Some(&"quick"));
}

/// `--models` runs only the models named (in the scenario's order); `--repetitions`
/// overrides the scenario's count.
#[test]
fn models_and_repetitions_flags_override_the_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        r#"
models = ["select", "poll", "epoll"]
repetitions = 1
[load]
size = 16
requests = 3
connect_timeout = "5s"
[sweep]
connections = [2]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(
        &scenario,
        &out,
        &[
            "--models",
            "epoll,poll",
            "--repetitions",
            "2",
            "--no-report",
            "--quiet",
        ],
    );
    // The rows' order is the rounds' (tests/interleave.rs); here only which rows ran.
    let mut rows: Vec<(String, String, String, String)> = outcomes(&rows)
        .into_iter()
        .map(|(m, s, r, st, _)| (m, s, r, st))
        .collect();
    rows.sort_by_key(|(m, _, r, _)| (m != "poll", r.clone()));
    let expected: Vec<(String, String, String, String)> =
        [("poll", "1"), ("poll", "2"), ("epoll", "1"), ("epoll", "2")]
            .iter()
            .map(|(m, r)| (m.to_string(), "c2-s16".into(), r.to_string(), "ok".into()))
            .collect();
    assert_eq!(rows, expected);
    assert_eq!(
        manifest(&out)["models"],
        serde_json::json!(["poll", "epoll"])
    );
}

/// The default `echolab run` (no SCENARIO: the quick scenario), narrowed with `--models
/// epoll --repetitions 1` and run from a fresh directory: it makes results/quick-STAMP
/// there, one results.csv row per quick step, report.html, and prints the comparison
/// table with epoll's row.
#[test]
fn the_default_run_is_the_quick_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let mut default_run = Command::new(BIN);
    default_run.current_dir(tmp.path()).args([
        "run",
        "--models",
        "epoll",
        "--repetitions",
        "1",
        "--quiet",
    ]);
    let output = common::output_within(&mut default_run, RUN_LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let runs: Vec<PathBuf> = fs::read_dir(tmp.path().join("results"))
        .expect("a results directory under the working directory")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let out = &runs[0];
    let name = out.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("quick-"), "{name}");
    assert!(
        stdout.starts_with("scenario quick: 1 models x 3 steps x 1 repetitions"),
        "{stdout}"
    );
    let rows: Vec<(String, String, String)> = outcomes(&common::results_rows(out))
        .into_iter()
        .map(|(m, s, r, _, _)| (m, s, r))
        .collect();
    // The steps of the built-in quick scenario, as its own file names them.
    let (origin, default_name, text) = echolab::scenario::locate("quick").unwrap();
    let quick = echolab::scenario::parse(&origin, &default_name, &text).unwrap();
    assert_eq!(
        quick.steps.len(),
        3,
        "quick sweeps 10, 100 and 1000 connections"
    );
    let expected: Vec<(String, String, String)> = quick
        .steps
        .iter()
        .map(|s| ("epoll".to_string(), s.name.clone(), "1".to_string()))
        .collect();
    assert_eq!(rows, expected);
    assert!(out.join("report.html").is_file());
    assert!(stdout.contains("report: "), "{stdout}");
    let header = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("model"))
        .unwrap_or_else(|| panic!("no comparison table: {stdout}"));
    for column in ["req/s", "p99 (median rep)", "max conns", "status"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with("epoll ")),
        "no epoll row: {stdout}"
    );
    assert!(
        stdout.ends_with(&format!("results: results/{name}\n")),
        "{stdout}"
    );
}

/// docs/scenarios.md's row for `quick` said 2 repetitions, 50 000 requests/s, 1.5 s per
/// step and about 1 minute, while scenarios/quick.toml runs 5, 10 000/s, 1 s and about 2
/// minutes. Every row of the table of built-in scenarios is checked against its
/// scenario's `expected_duration`, and quick's words against its keys.
#[test]
fn the_docs_table_of_builtin_scenarios_matches_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join("docs/scenarios.md")).unwrap();
    let scenario = |name: &str| -> Option<toml::Value> {
        let text = fs::read_to_string(root.join(format!("scenarios/{name}.toml"))).ok()?;
        Some(text.parse().unwrap())
    };
    let mut checked = 0;
    let table = doc
        .split("## Built-in scenarios")
        .nth(1)
        .expect("a section of built-in scenarios");
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let name = cells[0].trim_start_matches("| `").trim_end_matches('`');
        let Some(toml) = scenario(name) else {
            continue;
        };
        let expected = toml["expected_duration"].as_str().unwrap();
        let said = cells[2];
        assert!(
            expected == said || expected.starts_with(&format!("{said};")),
            "{name}: the docs say {said:?}, the scenario {expected:?}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} rows checked");

    let quick = scenario("quick").unwrap();
    let row = doc.lines().find(|l| l.starts_with("| `quick` |")).unwrap();
    let spaced = |n: i64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) && digits.len() > 4 {
                out.push(' ');
            }
            out.push(c);
        }
        out
    };
    let connections: Vec<String> = quick["sweep"]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_integer().unwrap().to_string())
        .collect();
    let (last, first) = connections.split_last().unwrap();
    let seconds = |key: &str| {
        quick["load"][key]
            .as_str()
            .unwrap()
            .trim_end_matches('s')
            .to_string()
    };
    for words in [
        format!("{} and {last} connections", first.join(", ")),
        format!(
            "{}-byte messages",
            quick["load"]["size"].as_integer().unwrap()
        ),
        format!(
            "{} requests/s in all",
            spaced(quick["load"]["rate"].as_integer().unwrap())
        ),
        format!("for {} s per step", seconds("duration")),
        format!("after a {} s warm-up", seconds("warmup")),
        format!("{} repetitions", quick["repetitions"].as_integer().unwrap()),
    ] {
        assert!(row.contains(&words), "{words:?} not in {row}");
    }
}
