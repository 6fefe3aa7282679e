//! The claims of the classic study end to end: the built-in claim scenarios are
//! listed, scaled-down claims 1, 9, 16 and 18 run against real servers are judged
//! from their rows in the report's Claims section, and a scenario made of parts runs
//! each part into its own folder and judges them in one report (a part that cannot
//! run is "not run").

use std::fs;

mod common;

use common::ResultsRow;

/// This file's runs write their report (the claims are judged there) without progress lines.
const QUIET: &[&str] = &["--quiet"];

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
    for n in 1..=23 {
        assert!(names.contains(&format!("claim-{n}").as_str()), "{list}");
    }
    assert!(!names.contains(&"claim-24"), "{list}");
    assert!(list.contains("classic            16 parts"), "{list}");
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
hold_together = "500ms"
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

/// The row of the Claims table for claim `n` in report.md.
fn claims_row(report: &str, n: usize) -> &str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("| {n} | ")))
        .unwrap_or_else(|| panic!("no Claims row {n} in\n{report}"))
}

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
fn a_scaled_down_claim_1_is_confirmed_from_its_rows() {
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
    assert!(
        row.ends_with("| confirmed | select held 900 connections and failed at 1,100 |"),
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
        html.contains("<h3 id=\"claim-1\">Claim 1: confirmed</h3>"),
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
            .contains("| confirmed | select held 900 connections and failed at 1,100 |"),
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

/// (model, step, repetition, status) of each results.csv row, sorted: the runner
/// interleaves models and repetitions in rounds.
fn outcomes(rows: &[ResultsRow]) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r["model"].clone(),
                r["step"].clone(),
                r["repetition"].clone(),
                r["status"].clone(),
            )
        })
        .collect();
    v.sort();
    v
}

fn outcome(model: &str, step: &str, rep: u32, status: &str) -> (String, String, String, String) {
    (model.into(), step.into(), rep.to_string(), status.into())
}

/// Claim 9 scaled down: threads and select at 100 and 1100 connections, 4 repetitions.
const TINY_CLAIM_9: &str = r#"
name = "claim-9"
description = "Claim: epoll, then select, then threads. Test: threads and select at 100 and 1100."
models = ["threads", "select"]
repetitions = 4
step_timeout = "30s"
[server]
thread_stack = "64KiB"
[load]
size = 50
requests = 3
hold_together = "2s"
connect_rate = 10000
connect_timeout = "5s"
[sweep]
connections = [100, 1100]
[failure]
min_established = 1.0
min_concurrent = 1.0
"#;

#[test]
fn a_scaled_down_claim_9_refutes_select_above_threads() {
    let _heavy = common::heavy();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-9.toml");
    fs::write(&scenario, TINY_CLAIM_9).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    // select refuses fds >= 1024: it fails 1100 once and the runner skips the rest.
    let mut expected = Vec::new();
    for rep in 1..=4 {
        expected.push(outcome("select", "c100-s50", rep, "ok"));
        expected.push(outcome(
            "select",
            "c1100-s50",
            rep,
            if rep == 1 { "failed" } else { "skipped" },
        ));
        expected.push(outcome("threads", "c100-s50", rep, "ok"));
        expected.push(outcome("threads", "c1100-s50", rep, "ok"));
    }
    expected.sort();
    assert_eq!(outcomes(&rows), expected);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 9);
    assert!(
        row.starts_with(
            "| 9 | “our hypothesis is that multi threaded servers will be the least scalable, \
             with Epoll servers being the most and followed by Select servers being second.” \
             (000_14b4c3a438bf57e1.txt, Background (hypothesis); Observations, Max Clients)\
             <br>The report: "
        ),
        "{row}"
    );
    assert!(
        row.ends_with(
            "| refuted | the reverse of “select holds more connections than threads”, \
             significantly: select 100 against threads 1,100 (connections held): x0.09 \
             (0.09–0.09), p = 0.013, n = 4 |"
        ),
        "{row}"
    );
    assert!(
        report.contains("- connections held: no finished repetition of epoll"),
        "{report}"
    );
}

/// Claim 16 scaled down: epoll at 40 and 45 connections of 100 messages each.
const TINY_CLAIM_16: &str = r#"
name = "claim-16"
description = "Claim: epoll finishes 40000 clients. Test: epoll at 40 and 45 clients."
models = ["epoll"]
step_timeout = "30s"
[load]
message = "Gary’s spamming"
requests = 100
connect_timeout = "5s"
[sweep]
connections = [40, 45]
[failure]
min_established = 1.0
max_error_rate = 0.0
"#;

#[test]
fn a_scaled_down_claim_16_is_confirmed_with_every_echo_counted() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-16.toml");
    fs::write(&scenario, TINY_CLAIM_16).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    // "Gary’s spamming" is 17 bytes (the apostrophe is three): 100 echoes per client.
    let counted: Vec<(String, String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["status"].clone(),
                r["requests"].clone(),
                r["errors"].clone(),
                r["client_bytes_received"].clone(),
            )
        })
        .collect();
    assert_eq!(
        counted,
        [
            ("ok".into(), "4000".into(), "0".into(), "68000".into()),
            ("ok".into(), "4500".into(), "0".into(), "76500".into()),
        ]
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 16);
    assert!(
        row.starts_with(
            "| 16 | “Increasing the number of clients further to 40000, we find that the \
             clients and server still finish successfully without any error.” \
             (002_87dc33d9ed75de88.txt, Test Case 10 (and 11: 45000))<br>The report: "
        ),
        "{row}"
    );
    assert!(
        row.ends_with(
            "| confirmed | epoll finished every client without an error up to 45 (1 \
             repetition at the top) |"
        ),
        "{row}"
    );
}

/// Claim 18 scaled down: 20 clients at 250 and 125 ms, each step in its own namespace.
const TINY_CLAIM_18: &str = r#"
name = "claim-18"
description = "Claim: retransmissions below 250 ms. Test: epoll at 250 and 125 ms."
models = ["epoll"]
repetitions = 4
step_timeout = "30s"
[network]
own_namespace = true
[load]
connections = 20
size = 64
duration = "1s"
connect_timeout = "5s"
[sweep]
delay = ["250ms", "125ms"]
"#;

#[test]
fn a_scaled_down_claim_18_counts_no_retransmission_on_loopback_and_says_it_cannot_test() {
    if !common::netns_available(
        "claims::a_scaled_down_claim_18_counts_no_retransmission_on_loopback_and_says_it_cannot_test",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-18.toml");
    fs::write(&scenario, TINY_CLAIM_18).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 8);
    for r in &rows {
        // The step's own namespace: its counters are its alone, and loopback loses nothing.
        assert_eq!(
            (
                r["status"].as_str(),
                r["net_scope"].as_str(),
                r["net_retrans_segs"].as_str()
            ),
            ("ok", "step", "0"),
            "{r:?}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    // Loopback loses nothing: the claim cannot be tested here, and the row says why.
    let row = claims_row(&report, 18);
    assert!(
        row.contains("| cannot be tested here | retransmissions need a link whose queue overflows"),
        "{row}"
    );
    assert!(
        report.contains("- delay 125 ms: retransmitted segments median 0"),
        "{report}"
    );
}

/// 003's topology scaled down: the server's own port at 10 Mbit behind gigabit client
/// links (its setup is 100 Mbit; 10 keeps the test's byte counts small).
const SERVER_PORT_10MBIT: &str = r#"
models = ["epoll"]
step_timeout = "30s"
[load]
connections = 4
size = 16384
duration = "2s"
connect_timeout = "5s"
[hosts]
clients = 1
[network]
rate = "1gbit"
server_rate = "10mbit"
"#;

/// The `Sent N bytes` counter of the part of server-link.txt headed `heading`, in its
/// `before the load:` or `after the load:` half, with that part's text.
fn qdisc_sent(link: &str, half: &str, heading: &str) -> (u64, String) {
    let half_text = &link[link
        .find(half)
        .unwrap_or_else(|| panic!("no {half}: {link}"))..];
    let part = &half_text[half_text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading} in {half_text}"))..];
    let part = part
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("server "))
        .collect::<Vec<_>>()
        .join("\n");
    let sent = part
        .split_whitespace()
        .skip_while(|w| *w != "Sent")
        .nth(1)
        .unwrap_or_else(|| panic!("no Sent counter in {part}"));
    (sent.parse().unwrap(), part)
}

#[test]
fn the_servers_own_link_rate_bounds_the_echo_throughput() {
    if !common::netns_available("claims::the_servers_own_link_rate_bounds_the_echo_throughput") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("server-port.toml");
    fs::write(&scenario, SERVER_PORT_10MBIT).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["status"], "ok", "{row:?}");
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["conditions"]["network"]["server_rate_bit_s"], 10_000_000,
        "{manifest}"
    );
    let rep = out.join("epoll/c4-s16384/rep-1");
    let link = fs::read_to_string(rep.join("server-link.txt"))
        .unwrap_or_else(|e| panic!("{}: {e}", rep.display()));
    let bytes_out = common::number(row, "server_bytes_out") as u64;
    let bytes_in = common::number(row, "server_bytes_in") as u64;
    assert!(bytes_out > 0 && bytes_out == bytes_in, "{row:?}");
    // Both ends of the server's link carry tbf at 10 Mbit, and each one's counter grew by
    // the payload it carried at least, and by at most a quarter more (headers and acks).
    for (heading, payload) in [("server sends", bytes_out), ("server receives", bytes_in)] {
        let (before, _) = qdisc_sent(&link, "before the load:", heading);
        let (after, part) = qdisc_sent(&link, "after the load:", heading);
        assert!(
            part.contains("qdisc tbf") && part.contains("rate 10Mbit"),
            "{part}"
        );
        let grew = after - before;
        assert!(
            grew >= payload && grew <= payload + payload / 4 + 100_000,
            "{heading}: the qdisc sent {grew} bytes for {payload} bytes of payload\n{link}"
        );
    }
    // The echo cannot outrun the server's port: 1.25 MB/s plus one burst (unshaped, a
    // veth carries hundreds of MB/s). Only an upper bound: a busy machine goes slower.
    let received = common::number(row, "client_bytes_received");
    let seconds = common::number(row, "duration_s");
    assert!(
        received <= 1.25e6 * seconds * 1.1 + 62_500.0,
        "{received} echo bytes in {seconds} s through a 10 Mbit port"
    );
}

/// Writes the v1 (or v2) cgroup limits the server process sits under, and the CPUs it may
/// run on, to the file `$2`, then becomes echolab's epoll server on port `$1`.
const SHOW_OWN_CGROUP: &str = r#"
v1() { awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup; }
cpu=$(v1 cpu); mem=$(v1 memory)
if [ -n "$cpu" ]; then
  echo "quota $(cat /sys/fs/cgroup/cpu$cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu$cpu/cpu.cfs_period_us)" > "$2"
  echo "memory $(cat /sys/fs/cgroup/memory$mem/memory.limit_in_bytes)" >> "$2"
else
  g=$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)
  echo "quota $(cat /sys/fs/cgroup$g/cpu.max)" > "$2"
  echo "memory $(cat /sys/fs/cgroup$g/memory.max)" >> "$2"
fi
grep Cpus_allowed_list /proc/self/status >> "$2"
exec "$3" serve --model epoll --workers 1 --addr "127.0.0.1:$1"
"#;

/// The clock the weak-2016 profile divides 700 MHz by: cpu0's cpufreq maximum, else
/// its `cpu MHz` in /proc/cpuinfo.
fn cpu0_mhz() -> f64 {
    if let Ok(khz) = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") {
        return khz.trim().parse::<f64>().unwrap() / 1e3;
    }
    let info = fs::read_to_string("/proc/cpuinfo").unwrap();
    let first = info.split("\n\n").next().unwrap();
    let line = first.lines().find(|l| l.starts_with("cpu MHz")).unwrap();
    line.split(':').nth(1).unwrap().trim().parse().unwrap()
}

#[test]
fn the_weak_2016_profile_puts_the_server_on_one_core_at_700_mhz_and_256_mib() {
    let test = "claims::the_weak_2016_profile_puts_the_server_on_one_core_at_700_mhz_and_256_mib";
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        common::skip(test, "cgroups need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("cgroup.txt");
    let scenario = format!(
        "models = [\"weak\"]\nstep_timeout = \"30s\"\n[model.weak]\nprofile = \"weak-2016\"\n\
         command = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{port}}\", {seen:?}, {bin:?}]\n\
         [load]\nconnections = 2\nrequests = 3\nsize = 64\nconnect_timeout = \"5s\"\n",
        script = SHOW_OWN_CGROUP,
        seen = seen.display().to_string(),
        bin = common::BIN,
    );
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&common::write_scenario(dir.path(), &scenario), &out, QUIET);
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    assert_eq!(rows[0]["requests"], "6", "{rows:?}");
    // 700 MHz over this machine's clock, to four decimals, as µs of a 100 ms period.
    let quota_us = ((700.0 / cpu0_mhz()).min(1.0) * 1e4).round() as u64 * 10;
    let expected = format!(
        "quota {quota_us} 100000\nmemory {}\nCpus_allowed_list:\t0\n",
        256u64 << 20
    );
    assert_eq!(fs::read_to_string(&seen).unwrap(), expected);
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["conditions"]["server_limits"]["weak"],
        serde_json::json!({
            "cpu_quota": quota_us as f64 / 1e5,
            "memory_max_bytes": 256u64 << 20,
            "tasks_max": null
        }),
        "{manifest}"
    );
}

/// Claim 20 scaled down: 200 clients of 3 requests, 4 repetitions.
const TINY_CLAIM_20: &str = r#"
name = "claim-20"
description = "Claim: the last clients to join are slower. Test: epoll, 200 clients."
models = ["epoll"]
repetitions = 4
step_timeout = "30s"
[load]
connections = 200
size = 64
requests = 3
delay = "10ms"
connect_rate = 2000
connect_timeout = "5s"
"#;

/// Each connection's (opened_unix, conn_id, mean_response_us) in a connections.csv, first
/// attempts with a request only, in the order they opened.
fn join_order(path: &std::path::Path) -> Vec<f64> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let mut joined: Vec<(f64, u64, f64)> = reader
        .deserialize::<std::collections::HashMap<String, String>>()
        .map(|r| r.unwrap())
        .filter(|r| r["attempt"] == "1" && r["requests"] != "0")
        .map(|r| {
            (
                r["opened_unix"].parse().unwrap(),
                r["conn_id"].parse().unwrap(),
                r["mean_response_us"].parse().unwrap(),
            )
        })
        .collect();
    joined.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    joined.into_iter().map(|j| j.2).collect()
}

#[test]
fn a_scaled_down_claim_20_orders_every_connection_by_when_it_joined() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-20.toml");
    fs::write(&scenario, TINY_CLAIM_20).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let rep = out.join(format!("epoll/c200-s64-d10ms/rep-{}/load", r["repetition"]));
        let means = join_order(&rep.join("connections.csv"));
        assert_eq!(means.len(), 200, "every connection once");
        // The last 20 to open, and the 20 before them, each connection's mean once.
        let mean = |s: &[f64]| (s.iter().sum::<f64>() / 20.0 * 10.0).round() / 10.0;
        assert_eq!(
            (
                common::number(r, "joined_last_tenth_mean_us"),
                common::number(r, "joined_ninth_tenth_mean_us")
            ),
            (mean(&means[180..]), mean(&means[160..180])),
            "{r:?}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 20);
    assert!(
        row.starts_with(
            "| 20 | “a line that is best described as a linear model for most of the clients \
             but exponentially increases as we get to the user specified client number” \
             (004_4a07aa620c3379ed.txt, Analysis)<br>The report: "
        ),
        "{row}"
    );
    // Measured on both tenths in all four repetitions: a verdict with p, never "no step".
    assert!(row.contains("n = 4"), "{row}");
}

/// Claim 21 scaled down: select and epoll, 100 clients at a 10 ms pause for 6 s, 3
/// repetitions.
const TINY_CLAIM_21: &str = r#"
name = "claim-21"
description = "Claim: select's requests are steadier. Test: select and epoll, 100 clients."
models = ["select", "epoll"]
repetitions = 3
step_timeout = "30s"
[server]
workers = 1
[load]
connections = 100
size = 64
delay = "10ms"
duration = "6s"
connect_rate = 1000
connect_timeout = "5s"
"#;

#[test]
fn a_scaled_down_claim_21_measures_the_spread_of_each_runs_request_rate() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-21.toml");
    fs::write(&scenario, TINY_CLAIM_21).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let timeline = out.join(format!(
            "{}/c100-s64-d10ms/rep-{}/load/timeline.csv",
            r["model"], r["repetition"]
        ));
        let mut reader = csv::Reader::from_path(&timeline).unwrap();
        let per_second: Vec<f64> = reader
            .deserialize::<std::collections::HashMap<String, String>>()
            .map(|row| row.unwrap()["requests"].parse().unwrap())
            .collect();
        // Seconds 2 to the one before the last: sd / mean, to four decimals.
        let whole = &per_second[2..per_second.len() - 1];
        assert!(whole.len() >= 3, "{per_second:?}");
        let n = whole.len() as f64;
        let mean = whole.iter().sum::<f64>() / n;
        let sd = (whole.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert_eq!(
            common::number(r, "requests_per_s_cv"),
            (sd / mean * 1e4).round() / 1e4,
            "{per_second:?} {r:?}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 21);
    assert!(
        row.starts_with(
            "| 21 | “One thing to note is that the incoming requests for the select server are \
             comparably consistent than the epoll server.” (001_847778bf516bd6a1.txt, \
             Analysis, Case2)<br>The report: "
        ),
        "{row}"
    );
    assert!(row.contains("n = 3"), "{row}");
}
