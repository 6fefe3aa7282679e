//! Claims scaled down to run in seconds: the list, claim 1, a scenario of parts, rows shared between claims, per-host figures.

use super::*;

#[test]
fn run_list_names_every_claim_and_classic() {
    let output = common::echolab_run(&["--list"]);
    assert!(output.status.success(), "{output:?}");
    let list = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let claims = echolab::claims::CLAIMS.len();
    assert_eq!(claims, 53);
    for n in 1..=claims {
        assert!(names.contains(&format!("claim-{n}").as_str()), "{list}");
    }
    assert!(!names.contains(&"claim-54"), "{list}");
    assert!(list.contains("classic            23 parts"), "{list}");
}

/// Claim 1 scaled down: select at 900 and 1100 connections, two repetitions.
const TINY_CLAIM_1: &str = r#"
name = "claim-1"
description = "Claim: select stops at FD_SETSIZE. Test: select at 900 and 1100 connections."
models = ["select"]
repetitions = 2
step_timeout = "30s"
[load]
size = 64
requests = 2
hold_together = "2s"
connect_rate = 10000
connect_timeout = "5s"
[sweep]
connections = [900, 1100]
[failure]
min_established = 1.0
min_concurrent = 1.0
"#;

/// A part that cannot run here: its only server is a program that is not installed.
const UNRUNNABLE_CLAIM_5: &str = r#"
name = "claim-5"
models = ["ghost"]
[model.ghost]
command = ["echolab-no-such-program", "{port}"]
[load]
requests = 1
"#;

/// (step, status, max_concurrent_server) of each results.csv row.
fn select_rows(rows: &[ResultsRow]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|r| {
            (
                r["step"].clone(),
                r["status"].clone(),
                r["max_concurrent_server"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_scaled_down_claim_1_shows_select_stopped_at_fd_setsize() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-1.toml");
    fs::write(&scenario, TINY_CLAIM_1).unwrap();
    let out = dir.path().join("out");
    let rows = select_rows(&common::run_scenario_ok(&scenario, &out, QUIET));
    // 900 held twice; 1100 failed once (select refuses fds >= 1024), its second
    // repetition skipped.
    assert_eq!(
        rows,
        [
            ("c900-s64".into(), "ok".into(), "900".into()),
            ("c900-s64".into(), "ok".into(), "900".into()),
            ("c1100-s64".into(), "failed".into(), rows[2].2.clone()),
            ("c1100-s64".into(), "skipped".into(), String::new()),
        ]
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 1);
    assert!(
        row.starts_with(
            "| 1 | “With select, it seems that we hit a physical limitation of FD_SETSIZE” \
             (002_87dc33d9ed75de88.txt, Conclusion; Test Case 3)<br>The report: Python 2.7 \
             select server"
        ),
        "{row}"
    );
    assert!(
        row.contains("<br>echolab: Rust select server, not Python 2.7;"),
        "{row}"
    );
    // select's limit is fixed by FD_SETSIZE: a demonstration, its reason, then the rows' story.
    assert!(
        row.contains("| demonstration, not a test | the setup fixes the outcome: echolab's select"),
        "{row}"
    );
    assert!(
        row.ends_with("; what the run showed: select held 900 connections and failed at 1,100 |"),
        "{row}"
    );
    assert!(report.contains("- select at 900 connections: held in 2 of 2 repetitions, server's max concurrent median 900 (900–900, 2 reps)"), "{report}");
    // The test shown is the claim's own declaration, not the scenario's prose.
    assert!(
        report.contains("Test: select holds 900, 1000, 1100 and 2000 connections"),
        "{report}"
    );
    assert!(
        !report.contains("\nTest: select at 900 and 1100"),
        "{report}"
    );
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<h3 id=\"claim-1\">Claim 1: demonstration, not a test</h3>"),
        "{html}"
    );
}

#[test]
fn a_scenario_of_parts_runs_each_into_its_folder_and_judges_them_together() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tiny-1.toml"), TINY_CLAIM_1).unwrap();
    fs::write(dir.path().join("ghost-5.toml"), UNRUNNABLE_CLAIM_5).unwrap();
    let composite = dir.path().join("mini-classic.toml");
    fs::write(
        &composite,
        "name = \"mini-classic\"\nparts = [\"tiny-1.toml\", \"ghost-5.toml\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    common::run_scenario_ok(&composite, &out, &["--quiet", "--repetitions", "1"]);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["parts"], serde_json::json!(["claim-1", "claim-5"]));
    assert_eq!(manifest["status"], "complete");
    // Each part has its own results and report; --repetitions reached the parts.
    let rows = select_rows(&common::results_rows(&out.join("claim-1")));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(out.join("claim-1").join("report.md").is_file());
    assert!(out.join("claim-5").join("results.csv").is_file());
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.starts_with("# echolab report: mini-classic"),
        "{report}"
    );
    assert!(
        claims_row(&report, 1)
            .ends_with("; what the run showed: select held 900 connections and failed at 1,100 |"),
        "{report}"
    );
    let row = claims_row(&report, 5);
    assert!(
        row.starts_with(
            "| 5 | “Epoll is useful when implementing a server that deals with massive number \
             of short live connections in a short period of time.” (001_847778bf516bd6a1.txt, \
             Conclusion; Analysis, case 5)<br>The report: "
        ),
        "{row}"
    );
    assert!(
        row.ends_with(
            "| not run | `echolab-no-such-program` is not installed here (not found on PATH) |"
        ),
        "{row}"
    );
    assert!(
        report.contains("Tables and charts: claim-1/report.html"),
        "{report}"
    );
    assert!(
        report.contains("> - Claim 5 was not run: `echolab-no-such-program`"),
        "{report}"
    );
}

/// Claim 10 scaled down: 000's load of 10 connections for 1 s, one repetition; its
/// rows also judge claims 11 and 12.
const TINY_CLAIM_10: &str = r#"
name = "claim-10"
description = "Claim: epoll is slower. Test: the part's own test of claim 10."
models = ["threads", "select", "epoll"]
repetitions = 1
step_timeout = "30s"
[load]
connections = 10
size = 50
delay = "100ms"
duration = "1s"
connect_timeout = "5s"
[failure]
min_established = 1.0
max_error_rate = 0.1
"#;

/// The section of claim `n` in report.md, up to the next heading.
fn claim_section(report: &str, n: usize) -> &str {
    let start = report
        .find(&format!("### Claim {n}: "))
        .unwrap_or_else(|| panic!("no section for claim {n} in\n{report}"));
    let rest = &report[start + 4..];
    &rest[..rest.find("\n#").unwrap_or(rest.len())]
}

/// Claim-10's part may add rounds: one repetition, up to 3. Three against three never
/// reaches p < 0.05, so claim 10 stays undecided and the part runs every round.
#[test]
fn a_parts_added_rounds_run_in_its_folder_and_judge_the_claims_from_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let budget = TINY_CLAIM_10.replace(
        "step_timeout = \"30s\"\n",
        "step_timeout = \"30s\"\n[claims]\nmax_repetitions = 3\n",
    );
    fs::write(dir.path().join("tiny-10.toml"), budget).unwrap();
    let composite = dir.path().join("mini-classic.toml");
    fs::write(
        &composite,
        "name = \"mini-classic\"\nparts = [\"tiny-10.toml\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    common::run_scenario_ok(&composite, &out, QUIET);
    // Every model at every repetition, in the part's own folder, one round at a time.
    let rows = common::results_rows(&out.join("claim-10"));
    let mut seen: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r["repetition"].clone(), r["model"].clone()))
        .collect();
    let rounds: Vec<&str> = seen.iter().map(|(rep, _)| rep.as_str()).collect();
    assert_eq!(
        rounds,
        ["1", "1", "1", "2", "2", "2", "3", "3", "3"],
        "{seen:?}"
    );
    seen.sort();
    let models: Vec<&str> = seen.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(models, ["epoll", "select", "threads"].repeat(3), "{seen:?}");
    // Claim 11, judged from claim-10's rows, sees the added rounds.
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let eleven = claim_section(&report, 11);
    assert!(eleven.contains("n = 3"), "{eleven}");
    assert!(
        report.contains(
            "claim-10: The run could add repetitions while a claim was undecided, up to 3: \
             its claims are judged at p < 0.05: of its looks only the last has the \
             repetitions to reach it."
        ),
        "{report}"
    );
}

#[test]
fn claims_judged_from_another_claims_rows_show_their_own_test() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tiny-10.toml"), TINY_CLAIM_10).unwrap();
    let composite = dir.path().join("mini-classic.toml");
    fs::write(
        &composite,
        "name = \"mini-classic\"\nparts = [\"tiny-10.toml\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    common::run_scenario_ok(&composite, &out, QUIET);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let test = |n| {
        let section = claim_section(&report, n);
        let line = section
            .lines()
            .find(|l| l.starts_with("Test: "))
            .unwrap_or_else(|| panic!("claim {n} shows no test:\n{section}"));
        line.to_string()
    };
    let (ten, eleven, twelve) = (test(10), test(11), test(12));
    // Each claim's own rule: the mean response time, the server's CPU, its memory.
    assert!(
        ten.contains("The mean response time of the repetitions is compared"),
        "{ten}"
    );
    assert!(
        eleven.contains("The server's CPU (% of one core over the step"),
        "{eleven}"
    );
    assert!(
        twelve.contains("The server's peak resident memory is compared"),
        "{twelve}"
    );
    for t in [&ten, &eleven, &twelve] {
        assert!(!t.contains("the part's own test"), "{t}");
    }
}

#[test]
fn per_host_figures_show_each_client_host_at_the_heaviest_split_step() {
    if !common::netns_available(
        "claims::per_host_figures_show_each_client_host_at_the_heaviest_split_step",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("split.toml");
    fs::write(
        &scenario,
        "models = [\"epoll\"]\nstep_timeout = \"30s\"\n[load]\nsize = 64\nrequests = 3\n\
         connect_timeout = \"5s\"\n[hosts]\nclients = 2\n[sweep]\nconnections = [2, 6]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    common::run_scenario_ok(&scenario, &out, QUIET);
    let hosts = fs::read_to_string(out.join("epoll/c6-s64/rep-1/load-hosts.txt")).unwrap();
    assert_eq!(hosts, "host-1 198.18.0.11\nhost-2 198.18.0.12\n");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let section = &report[report
        .find("## Per-host figures")
        .expect("a per-host section")..];
    assert!(
        section.contains("epoll at c6-s64 (repetition 1)"),
        "{section}"
    );
    // 6 connections over 2 hosts: 3 each, 3 requests per connection, counted on both sides.
    for (host, addr) in [("host-1", "198.18.0.11"), ("host-2", "198.18.0.12")] {
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("| {host} |")))
            .unwrap_or_else(|| panic!("no row for {host} in {section}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(&cells[1..6], [host, addr, "3", "3", "9"], "{line}");
        assert_eq!(cells[8], "0", "{line}");
    }
}

/// Claim 25 scaled down: epoll at 4 and 8 connections from 1 and 2 client hosts, 2
/// repetitions (too few for p < 0.05 whatever the times, so the verdict is known).
const TINY_CLAIM_25: &str = r#"
name = "claim-25"
description = "Claim: the time rises with the client hosts. Test: 1 and 2 hosts."
models = ["epoll"]
repetitions = 2
step_timeout = "30s"
[hosts]
clients = 2
[server]
workers = 1
[load]
size = 50
delay = "10ms"
duration = "1s"
connect_timeout = "5s"
[sweep]
connections = [4, 8]
hosts = [1, 2]
"#;

#[test]
fn a_scaled_down_claim_25_compares_the_most_hosts_with_the_fewest() {
    if !common::netns_available(
        "claims::a_scaled_down_claim_25_compares_the_most_hosts_with_the_fewest",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-25.toml");
    fs::write(&scenario, TINY_CLAIM_25).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
    }
    let mut steps = common::cells(&rows, ["connections", "client_hosts", "repetition"]);
    steps.sort();
    let expected: Vec<[&str; 3]> = ["4", "8"]
        .into_iter()
        .flat_map(|c| ["1", "2"].map(move |h| (c, h)))
        .flat_map(|(c, h)| ["1", "2"].map(move |rep| [c, h, rep]))
        .collect();
    assert_eq!(steps, expected);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let section = claim_section(&report, 25);
    assert!(section.starts_with("Claim 25: inconclusive"), "{section}");
    for line in [
        "- 1 client host (4 connections): mean response time median ",
        "- 1 client host (8 connections): mean response time median ",
        "- 2 client hosts (4 connections): mean response time median ",
        "- 2 client hosts (8 connections): mean response time median ",
        "- 2 client hosts (8 connections) ",
    ] {
        assert!(section.contains(line), "{line:?} not in\n{section}");
    }
    assert!(
        section.contains("Verdict: inconclusive: too few repetitions for p < 0.05: 2 client hosts (8 connections)"),
        "{section}"
    );
}
