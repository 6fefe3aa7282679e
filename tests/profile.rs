//! The profiled repetition (`echolab run --profile`, src/experiment/measurement/profile.rs
//! and src/report/profiles/): real servers on loopback under the system's perf, the
//! report's flame graphs and layer table, the repetition kept out of every verdict, and
//! a run that goes on, saying why, when perf cannot profile.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{output_within, report_md, results_rows, write_scenario, BIN, RUN_LIMIT};

/// select and epoll at 200 connections, two measured repetitions each.
const SCENARIO: &str = r#"
name = "profiled"
models = ["select", "epoll"]
repetitions = 2
[server]
workers = 1
[load]
size = 64
duration = "1s"
rate = 4000
connect_timeout = "5s"
[sweep]
connections = [200]
"#;

/// `echolab run SCENARIO --out OUT --profile --quiet` with `env` set.
fn run_profiled(dir: &Path, env: &[(&str, &str)]) -> Output {
    run_profiled_scenario(dir, SCENARIO, env)
}

/// [`run_profiled`] of the scenario `text`.
fn run_profiled_scenario(dir: &Path, text: &str, env: &[(&str, &str)]) -> Output {
    let scenario = write_scenario(dir, text);
    let mut command = Command::new(BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--profile", "--quiet"])
        .envs(env.iter().copied());
    let output = output_within(&mut command, RUN_LIMIT);
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Whether perf can profile here (root and perf on PATH); else a skip (a failure under CI).
fn perf_usable(test: &str) -> bool {
    let root = common::is_root();
    let perf = Command::new("perf").arg("--version").output();
    if root && perf.is_ok_and(|o| o.status.success()) {
        return true;
    }
    common::skip(test, "profiling needs root and perf (Debian: linux-perf)");
    false
}

#[test]
fn a_profiled_run_draws_every_model_and_never_judges_the_profiled_repetition() {
    let test = "a_profiled_run_draws_every_model_and_never_judges_the_profiled_repetition";
    if !perf_usable(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    run_profiled(tmp.path(), &[]);
    let out = tmp.path().join("out");
    let rows = results_rows(&out);
    // Two measured repetitions and one profiled per model, labelled.
    for model in ["select", "epoll"] {
        let mine: Vec<_> = rows.iter().filter(|r| r["model"] == model).collect();
        let profiled: Vec<&str> = mine.iter().map(|r| r["profiled"].as_str()).collect();
        assert_eq!(profiled, ["", "", "true"], "{model}");
        assert_eq!(mine[2]["repetition"], "3");
        let rep = out.join(model).join("c200-s64-r4000").join("rep-3");
        let folded = std::fs::read_to_string(rep.join("server.folded")).unwrap();
        assert!(folded.contains("_[k]"), "kernel stacks in {folded}");
        assert!(
            std::fs::read_to_string(rep.join("server-flame.svg"))
                .unwrap()
                .contains("<svg"),
            "{model}'s flame graph"
        );
    }
    let with = report_md(&out);
    let start = with
        .find("## Where the CPU goes")
        .expect("the profiles section");
    let end = start + with[start..].find("\n## All steps").unwrap();
    let section = &with[start..end];
    for model in ["select", "epoll"] {
        assert!(
            with.contains(&format!("(charts/flame-{model}-c200-s64-r4000.svg)")),
            "{model}'s flame graph in the report"
        );
        let layer_row = format!("| {model} | c200-s64-r4000 | ");
        let rows = section.matches(&layer_row).count();
        assert_eq!(rows, 2, "{model}: overhead and layers\n{section}");
    }
    assert!(
        section.contains("system-call entry/exit"),
        "the layer table"
    );
    assert!(with.contains("(charts/flame-select-vs-epoll-c200-s64-r4000.svg)"));
    // The same results without the profiled rows give the same report up to its
    // profiles section: the verdict, claims and tables never saw them.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    let at = header.split(',').position(|c| c == "profiled").unwrap();
    let kept: Vec<&str> = csv
        .lines()
        .filter(|l| l.split(',').nth(at) != Some("true"))
        .collect();
    assert_eq!(kept.len(), 5, "a header and four measured rows");
    std::fs::write(out.join("results.csv"), kept.join("\n") + "\n").unwrap();
    let without = report_md(&out);
    let cut = |text: &str| {
        let start = text.find("## Where the CPU goes").unwrap_or(text.len());
        let end = text[start..]
            .find("\n## All steps")
            .map_or(text.len(), |e| start + e + 1);
        format!("{}{}", &text[..start], &text[end..])
    };
    assert!(!without.contains("Where the CPU goes"));
    assert_eq!(cut(&with), cut(&without));
}

#[test]
fn a_perf_that_fails_is_named_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    // A perf whose events the kernel lacks: it fails at once, as perf does then.
    let fake = tmp.path().join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'event syntax error: cycles not supported' >&2\nexit 129\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = run_profiled(tmp.path(), &[("ECHOLAB_PERF", fake.to_str().unwrap())]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let out = tmp.path().join("out");
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 6, "every repetition ran");
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:?}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let note = "select at c200-s64-r4000: perf record failed (exit status: 129): \
                event syntax error: cycles not supported";
    assert!(report.contains(note), "{report}\n{stderr}");
    assert!(stderr.contains("not profiled"), "{stderr}");
}

#[test]
fn no_perf_on_path_is_named_with_how_to_install_it() {
    let tmp = tempfile::tempdir().unwrap();
    // A PATH that holds no perf: echolab's own processes need nothing from it.
    let empty = tmp.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    run_profiled(tmp.path(), &[("PATH", empty.to_str().unwrap())]);
    let out = tmp.path().join("out");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let note = "epoll at c200-s64-r4000: no `perf` on PATH: install it (Debian: apt-get \
                install linux-perf) to profile";
    assert!(report.contains(note), "{report}");
    assert_eq!(results_rows(&out).len(), 6);
}

/// A thread per connection, 1 000 of them, each running far less than one sampling
/// period (1 ms) in the repetition: sampled on every CPU, the server's graph holds most
/// of the CPU time the server spent (all of it on a quiet machine, about half under two
/// concurrent builds, where perf starts late). Followed as a process, perf sampled each
/// thread on its own CPU time and kept a tenth (quiet) to a quarter (busy) of it.
#[test]
fn a_thread_per_connection_server_is_sampled_for_all_its_cpu_time() {
    if !perf_usable("a_thread_per_connection_server_is_sampled_for_all_its_cpu_time") {
        return;
    }
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    run_profiled_scenario(
        tmp.path(),
        r#"
name = "profiled-threads"
models = ["threads"]
repetitions = 1
[load]
size = 64
duration = "1s"
rate = 5000
connect_rate = 10000
connect_timeout = "5s"
[sweep]
connections = [1000]
"#,
        &[],
    );
    let out = tmp.path().join("out");
    let rows = results_rows(&out);
    let profiled = rows
        .iter()
        .find(|r| r["profiled"] == "true")
        .expect("a profiled row");
    let cpu_s: f64 = ["server_cpu_user_s", "server_cpu_sys_s"]
        .iter()
        .map(|c| profiled[*c].parse::<f64>().unwrap())
        .sum();
    // inferno weighs each folded stack by perf's period: nanoseconds of CPU clock.
    let folded = std::fs::read_to_string(out.join("threads/c1000-s64-r5000/rep-2/server.folded"))
        .expect("the server's samples");
    let sampled_s: f64 = folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9;
    assert!(cpu_s > 0.05, "the server did work: {cpu_s} s");
    assert!(
        sampled_s >= cpu_s * 0.35,
        "sampled {sampled_s:.3} s of the server's {cpu_s:.3} s of CPU"
    );
}

/// A staircase of three stairs of 50 connections on one live server: each stair
/// recorded into its own folder (server and load, their perf.data deleted once folded),
/// its rows measured as ever (none labelled profiled) and the report's table naming
/// every stair and side.
#[test]
fn a_profiled_staircase_records_each_stair_into_its_own_folder() {
    if !perf_usable("a_profiled_staircase_records_each_stair_into_its_own_folder") {
        return;
    }
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let output = run_profiled_scenario(
        tmp.path(),
        r#"
name = "profiled-staircase"
models = ["epoll"]
[server]
workers = 1
[load]
size = 16
delay = "100ms"
connect_timeout = "5s"
[staircase]
batch = 50
every = "1s"
to = 150
"#,
        &[],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("--profile is ignored"), "{stderr}");
    let out = tmp.path().join("out");
    let rows = results_rows(&out);
    let steps = common::cells(&rows, ["step", "stair", "status", "profiled"]);
    assert_eq!(
        steps,
        [
            ["c50-s16-d100ms", "1", "ok", ""],
            ["c100-s16-d100ms", "2", "ok", ""],
            ["c150-s16-d100ms", "3", "ok", ""],
        ],
        "{rows:?}"
    );
    for step in ["c50-s16-d100ms", "c100-s16-d100ms", "c150-s16-d100ms"] {
        let dir = out.join("epoll").join(step).join("rep-1");
        let notes = std::fs::read_to_string(dir.join("profile-notes.txt")).unwrap_or_default();
        for side in ["server", "load"] {
            // A side perf caught no sample of in a stair this short is named in the notes.
            let folded = std::fs::read_to_string(dir.join(format!("{side}.folded")));
            match folded {
                Ok(text) if !text.is_empty() => {
                    assert!(
                        text.contains("_[k]"),
                        "{step} {side}: kernel stacks\n{text}"
                    );
                    let svg = std::fs::read_to_string(dir.join(format!("{side}-flame.svg")));
                    assert!(svg.unwrap().contains("<svg"), "{step} {side}'s graph");
                }
                _ => assert!(
                    notes.contains(&format!("{side}: perf recorded no samples")),
                    "{step} {side}: neither samples nor a note: {notes}"
                ),
            }
        }
        assert!(
            !dir.join("profile.perf.data").exists(),
            "{step}: perf.data is deleted once folded"
        );
    }
    let report = report_md(&out);
    let start = report
        .find("## Where the CPU goes")
        .expect("the profiles section");
    let section = &report[start..];
    for (stair, connections) in [(1, 50), (2, 100), (3, 150)] {
        for side in ["server", "load"] {
            let row = format!("| epoll | {stair} | {connections} | {side} | ");
            assert_eq!(section.matches(&row).count(), 1, "{row}\n{section}");
        }
    }
}
