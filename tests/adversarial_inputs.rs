//! The adversarial suite's hostile inputs to `echolab run`: names that would be paths,
//! two runs into one results directory, formula and markup text, scenario files that are
//! not small regular files, parts that form a cycle, sweep values equal once parsed.
//! Each is refused with exit 2 naming what is wrong, or neutralised where it is written.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// A short run: two models, two steps, a few requests each.
const SHORT: &str = "models = [\"poll\", \"epoll\"]\n[load]\nconnections = 2\nrequests = 3\n\
                     [sweep]\nsize = [16, 32]\n";

/// A run that lasts `duration` on one model and one step.
fn long(duration: &str) -> String {
    format!("models = [\"poll\"]\n[load]\nconnections = 1\nsize = 64\nduration = \"{duration}\"\n")
}

/// Asserts a usage error (exit 2) whose stderr contains every one of `said`.
fn assert_refused(output: &Output, said: &[&str], what: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{what}: {text}");
    for s in said {
        assert!(text.contains(s), "{what}: {s:?} not in: {text}");
    }
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Model labels, `--server-name` and part names become folders: one that is not one
/// plain folder inside the results directory is refused at validation, naming the key,
/// and nothing is created, inside OUT or beside it.
#[test]
fn names_that_would_be_paths_are_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results").join("out");
    for label in ["../evil", "..", "a/b", ".hidden"] {
        let text = format!(
            "models = [\"{label}\"]\n[model.\"{label}\"]\nbase = \"epoll\"\n[load]\nrequests = 3\n"
        );
        let scenario = write_scenario(tmp.path(), &text);
        let output = run_scenario(&scenario, &out, QUIET_NO_REPORT);
        let key = format!("`models`: label {label:?}");
        assert_refused(&output, &[&key, "line 1, column 11"], label);
    }
    let output = run_scenario(
        &write_scenario(tmp.path(), SHORT),
        &out,
        &[
            "--server-cmd",
            "python3 srv.py {port}",
            "--server-name",
            "../evil",
        ],
    );
    assert_refused(
        &output,
        &["--server-cmd's label \"../evil\""],
        "--server-name",
    );
    // A part without a `name` is named after its file: `.hidden`.
    std::fs::write(tmp.path().join(".hidden.toml"), SHORT).unwrap();
    let composite = tmp.path().join("composite.toml");
    std::fs::write(&composite, "parts = [\".hidden.toml\"]\n").unwrap();
    let output = run_scenario(&composite, &out, QUIET_NO_REPORT);
    assert_refused(
        &output,
        &["part '.hidden.toml': its name \".hidden\" starts with a dot"],
        "part",
    );
    assert_eq!(
        listing(tmp.path()),
        [".hidden.toml", "composite.toml", "scenario.toml"]
    );
}

/// Two runs started together into one directory: one runs, the other is refused with
/// exit 2 naming the live run's pid; the directory holds one run's rows, all ok.
#[test]
fn two_runs_into_one_directory_one_is_refused_naming_the_other() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(tmp.path(), SHORT);
    let out = tmp.path().join("out");
    let first = start_run(&scenario, &out);
    let second = start_run(&scenario, &out);
    let pids = [first.id(), second.id()];
    let outputs = [
        finish_within(first, "first run", RUN_LIMIT),
        finish_within(second, "second run", RUN_LIMIT),
    ];
    let codes: Vec<Option<i32>> = outputs.iter().map(|o| o.status.code()).collect();
    let ran = codes.iter().position(|c| *c == Some(0));
    let (Some(ran), true) = (ran, codes.contains(&Some(2))) else {
        panic!(
            "exits {codes:?}, not one 0 and one 2: {}\n{}",
            stderr(&outputs[0]),
            stderr(&outputs[1])
        );
    };
    let refused = &outputs[1 - ran];
    assert_refused(
        refused,
        &[&format!("belongs to a live run (pid {})", pids[ran])],
        "the refused run",
    );
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 4, "two models x two steps: {rows:?}");
    for row in &rows {
        assert_eq!(row["status"], "ok", "{row:?}");
    }
    let mut names: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r["model"], r["step"]))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["epoll c2-s16", "epoll c2-s32", "poll c2-s16", "poll c2-s32"]
    );
}

/// `--force` never removes the directory of a live run: it is refused (exit 2, naming the
/// run), and the live run ends with its results whole.
#[test]
fn force_against_a_live_run_is_refused_and_leaves_its_results() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(tmp.path(), &long("5s"));
    let out = tmp.path().join("out");
    let mut live = start_run(&scenario, &out);
    let pid = live.id();
    wait_for_file(&mut live, &out.join("manifest.json"));
    let forced = run_scenario(&scenario, &out, &["--force", "--no-report", "--quiet"]);
    assert_refused(
        &forced,
        &[
            &format!("belongs to a live run (pid {pid})"),
            "--force never removes",
        ],
        "--force",
    );
    let done = finish_within(live, "the live run", RUN_LIMIT);
    assert!(done.status.success(), "{}", stderr(&done));
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    assert_eq!(read_json(&out.join("manifest.json"))["status"], "complete");
}

/// The lock dies with its run: the directory of a run killed by SIGKILL is an earlier
/// run's (refused without --force) and is reused with --force.
#[test]
fn a_sigkilled_runs_directory_is_reused_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(tmp.path(), &long("60s"));
    let out = tmp.path().join("out");
    let mut killed = start_run(&scenario, &out);
    wait_for_file(&mut killed, &out.join("manifest.json"));
    signal(killed.id() as i32, libc::SIGKILL);
    wait_timeout(&mut killed, COMMAND_LIMIT).expect("SIGKILL ends the run");
    let short = tmp.path().join("short.toml");
    std::fs::write(&short, SHORT).unwrap();
    let again = run_scenario(&short, &out, QUIET_NO_REPORT);
    assert_refused(
        &again,
        &["holds an earlier run's results"],
        "without --force",
    );
    let rows = run_scenario_ok(&short, &out, &["--force", "--no-report", "--quiet"]);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(read_json(&out.join("manifest.json"))["status"], "complete");
}

/// A composite scenario refuses an earlier run's directory without --force, as a plain
/// one does.
#[test]
fn a_composite_run_refuses_an_earlier_runs_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("part.toml"), SHORT).unwrap();
    let composite = tmp.path().join("composite.toml");
    std::fs::write(&composite, "parts = [\"part.toml\"]\n").unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let earlier = "model,step\nthreads,c1-s1\n";
    std::fs::write(out.join("results.csv"), earlier).unwrap();
    let output = run_scenario(&composite, &out, QUIET_NO_REPORT);
    assert_refused(&output, &["holds an earlier run's results"], "composite");
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        earlier
    );
    assert!(!out.join("part").exists());
}

/// The command line's overrides get the same refusals in a composite run as in a plain
/// one, before anything is written: a model no part has once ran every part into a
/// "could not run" and exited 0; --baseline was ignored without a word.
#[test]
fn a_composite_runs_overrides_are_refused_as_a_plain_runs_are() {
    let tmp = tempfile::tempdir().unwrap();
    let part = tmp.path().join("part.toml");
    std::fs::write(&part, SHORT).unwrap();
    let composite = tmp.path().join("composite.toml");
    std::fs::write(&composite, "parts = [\"part.toml\"]\n").unwrap();
    let out = tmp.path().join("out");
    let baseline = tmp.path().to_str().unwrap();
    for (scenario, extra, said) in [
        (
            &composite,
            vec!["--models", "nope"],
            "'nope' is not a model of any part of 'composite'",
        ),
        (
            &part,
            vec!["--models", "nope"],
            "'nope' is not a model of scenario 'part' (its models: poll, epoll)",
        ),
        (
            &composite,
            vec!["--repetitions", "0"],
            "--repetitions must be 1 to 1000, not 0",
        ),
        (
            &part,
            vec!["--repetitions", "0"],
            "--repetitions must be 1 to 1000, not 0",
        ),
        (
            &composite,
            vec!["--server-cmd", "x {port}"],
            "it is made of parts",
        ),
        (
            &composite,
            vec!["--baseline", baseline],
            "compare them one by one",
        ),
    ] {
        let mut args = QUIET_NO_REPORT.to_vec();
        args.extend(extra.iter().copied());
        let output = run_scenario(scenario, &out, &args);
        assert_refused(&output, &[said], &format!("{extra:?}"));
        assert!(!out.exists(), "{extra:?}: nothing written");
    }
}

/// Text between fenced code blocks of a Markdown document (the scenario's TOML is shown
/// as it is, inside a fence, where Markdown runs nothing).
fn outside_fences(md: &str) -> String {
    let mut inside = false;
    let mut kept = String::new();
    for line in md.lines() {
        if line.starts_with("```") {
            inside = !inside;
        } else if !inside {
            kept += line;
            kept.push('\n');
        }
    }
    kept
}

/// Labels that a spreadsheet would run as formulas are written to results.csv behind a
/// `'` and read back as they were (a label `-x` still names model `-x`); labels and a
/// server's stderr with HTML or links are escaped in report.md.
#[test]
fn formula_and_markup_text_is_neutralised_in_results_and_report() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = ["=cmd|' -C calc'!A0", "-x", "@x", "<b>bold<b>x"];
    let mut text = String::from("models = [");
    for label in labels {
        text += &format!("{label:?}, ");
    }
    text += "\"bad\"]\n";
    for label in labels {
        text += &format!("[model.{label:?}]\nbase = \"poll\"\n");
    }
    // The command names no markup itself: the stderr it writes does.
    text += "[model.bad]\ncommand = [\"sh\", \"-c\", \
             \"printf '\\\\074script\\\\076alert(1)\\\\074/script\\\\076 \\\\133a\\\\135(http://x)' >&2; exit 3\", \
             \"{port}\"]\n[load]\nconnections = 1\nrequests = 3\n";
    let scenario = write_scenario(tmp.path(), &text);
    let out = tmp.path().join("out");
    let rows = run_scenario_ok(&scenario, &out, &["--quiet"]);
    let mut models: Vec<&str> = rows.iter().map(|r| r["model"].as_str()).collect();
    models.sort();
    assert_eq!(
        models,
        ["'-x", "'=cmd|' -C calc'!A0", "'@x", "<b>bold<b>x", "bad"]
    );
    let bad = rows.iter().find(|r| r["model"] == "bad").unwrap();
    assert!(
        bad["failure_reason"].contains("<script>alert(1)</script> [a](http://x)"),
        "{bad:?}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let prose = outside_fences(&md);
    for raw in ["<script>", "<b>", "[a](http"] {
        assert!(!prose.contains(raw), "report.md shows {raw:?} raw:\n{md}");
    }
    assert!(
        prose.contains("&lt;script>alert(1)&lt;/script> [a\\](http://x)"),
        "{md}"
    );
    // Every label read back as it was: each has its row in the table of every repetition.
    for label in ["=cmd\\|' -C calc'!A0", "-x", "@x", "&lt;b>bold&lt;b>x"] {
        let row = format!("| {label} | c1-s64 | 1 | ok |");
        assert!(prose.contains(&row), "report.md lacks {row}:\n{md}");
    }
    assert!(!prose.contains("'-x") && !prose.contains("not run"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("<script>") && !html.contains("<b>bold"));
}

/// A scenario file must be a regular file of at most 1 MiB: `/dev/zero` is not read,
/// a FIFO is not waited on, a larger file is refused, each with exit 2.
#[test]
fn scenario_files_must_be_small_regular_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let output = run_scenario(Path::new("/dev/zero"), &out, QUIET_NO_REPORT);
    assert_refused(
        &output,
        &["cannot read scenario file /dev/zero: not a regular file"],
        "/dev/zero",
    );
    let fifo = tmp.path().join("fifo.toml");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let output = run_scenario(&fifo, &out, QUIET_NO_REPORT);
    assert_refused(&output, &["fifo.toml: not a regular file"], "a FIFO");
    let big = tmp.path().join("big.toml");
    let padding = "# padding\n".repeat(110_000);
    std::fs::write(&big, format!("{SHORT}{padding}")).unwrap();
    let output = run_scenario(&big, &out, QUIET_NO_REPORT);
    assert_refused(&output, &["big.toml: larger than 1 MiB"], "1.1 MB");
    assert!(!out.exists());
}

/// Parts may not form a cycle: a scenario that is its own part, or a -> b -> a, is
/// refused with exit 2 naming the cycle (it was a stack overflow).
#[test]
fn parts_that_form_a_cycle_are_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let me = tmp.path().join("self.toml");
    std::fs::write(&me, "parts = [\"self.toml\"]\n").unwrap();
    let output = run_scenario(&me, &tmp.path().join("out"), QUIET_NO_REPORT);
    let cycle = format!("(a cycle: {0} -> {0})", me.display());
    assert_refused(&output, &["part 'self.toml'", &cycle], "self");
    let a = tmp.path().join("a.toml");
    let b = tmp.path().join("b.toml");
    std::fs::write(&a, "parts = [\"b.toml\"]\n").unwrap();
    std::fs::write(&b, "parts = [\"a.toml\"]\n").unwrap();
    let output = run_scenario(&a, &tmp.path().join("out"), QUIET_NO_REPORT);
    let cycle = format!(
        "(a cycle: {} -> {} -> {})",
        a.display(),
        b.display(),
        a.display()
    );
    assert_refused(&output, &["part 'b.toml'", &cycle], "a -> b -> a");
    assert!(!tmp.path().join("out").exists());
}

/// Sweep values equal once parsed would be two steps of one name: refused with exit 2,
/// naming the axis and the values, on every axis.
#[test]
fn sweep_values_equal_once_parsed_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for (axis, values, shown) in [
        (
            "size",
            "[1024, \"1KiB\"]",
            "values 1 and 2 are equal once parsed (1024)",
        ),
        (
            "connections",
            "[2, 4, 2]",
            "values 1 and 3 are equal once parsed (2)",
        ),
        (
            "delay",
            "[\"10ms\", \"0.01s\"]",
            "values 1 and 2 are equal once parsed",
        ),
        (
            "rate",
            "[100, 100.0]",
            "values 1 and 2 are equal once parsed (100)",
        ),
        (
            "requests",
            "[5, 5]",
            "values 1 and 2 are equal once parsed (5)",
        ),
    ] {
        let load = if axis == "requests" {
            "duration = \"1s\""
        } else {
            "requests = 3"
        };
        let text = format!("models = [\"poll\"]\n[load]\n{load}\n[sweep]\n{axis} = {values}\n");
        let scenario = write_scenario(tmp.path(), &text);
        let output = run_scenario(&scenario, &out, QUIET_NO_REPORT);
        let key = format!("sweep `{axis}`: {shown}");
        assert_refused(&output, &[&key], axis);
    }
    assert!(!out.exists());
}

/// `--baseline` equal to `--out`, or inside it, however spelled (`..`, a link): refused
/// before anything is removed, so a run is never compared with itself.
#[test]
fn a_baseline_inside_the_output_is_refused_before_anything_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("parent");
    let base = parent.join("base");
    copy_dir(Path::new("tests/fixtures/results-small"), &base);
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&base, &link).unwrap();
    let scenario = write_scenario(tmp.path(), SHORT);
    let base_s = base.to_str().unwrap();
    let dotted = format!("{}/../base", base_s);
    for (baseline, out) in [
        (base.clone(), base.clone()),
        (base.clone(), Path::new(&dotted).to_path_buf()),
        (base.clone(), link.clone()),
        (link.clone(), parent.clone()),
        (base.join("epoll").join(".."), parent.clone()),
    ] {
        let output = run_scenario(
            &scenario,
            &out,
            &[
                "--quiet",
                "--no-report",
                "--force",
                "--baseline",
                baseline.to_str().unwrap(),
            ],
        );
        assert_refused(
            &output,
            &["is inside --out", "compared with itself"],
            &format!("{out:?}"),
        );
        assert!(
            base.join("results.csv").is_file(),
            "{out:?} removed the baseline"
        );
        assert!(!base.join(".lock").exists(), "{out:?} was locked");
    }
}

/// A threshold that cannot be judged (every step failed: no value) is not met, and
/// `--enforce-thresholds` with no `[thresholds]` says there is nothing to enforce.
#[test]
fn thresholds_without_a_value_are_not_met() {
    let tmp = tempfile::tempdir().unwrap();
    let failing = "models = [\"bad\"]\n[model.bad]\ncommand = [\"sh\", \"-c\", \"exit 3\", \
                   \"{port}\"]\n[load]\nconnections = 1\nrequests = 3\n";
    let scenario = write_scenario(
        tmp.path(),
        &format!("{failing}[thresholds]\np99 = \"< 100ms\"\n"),
    );
    let out = tmp.path().join("out");
    let output = run_scenario(&scenario, &out, &["--quiet", "--enforce-thresholds"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}{}", stderr(&output));
    assert!(
        stdout.contains(
            "'p99 < 100ms' not met at bad c1-s64: no value (the step failed, or the column is \
             empty): it cannot be judged"
        ),
        "{stdout}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Not met (1):"), "{md}");
    let none = write_scenario(tmp.path(), failing);
    let output = run_scenario(
        &none,
        &tmp.path().join("none"),
        &["--quiet", "--no-report", "--enforce-thresholds"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("has no [thresholds], so there is nothing to enforce"),
        "{}",
        stderr(&output)
    );
}

/// What a run would accept and then ignore or never match is refused, or said.
#[test]
fn what_a_run_would_ignore_is_refused_or_said() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // A composite's own [thresholds] would never be judged.
    std::fs::write(tmp.path().join("part.toml"), SHORT).unwrap();
    let composite = tmp.path().join("composite.toml");
    std::fs::write(
        &composite,
        "parts = [\"part.toml\"]\n[thresholds]\np99 = \"< 1ms\"\n",
    )
    .unwrap();
    let output = run_scenario(&composite, &out, QUIET_NO_REPORT);
    assert_refused(
        &output,
        &["cannot have [thresholds] of its own"],
        "composite thresholds",
    );
    // --profile on a composite is said to be ignored (here before a usage error).
    std::fs::write(&composite, "parts = [\"part.toml\"]\n").unwrap();
    let output = run_scenario(&composite, &out, &["--profile", "--models", "nosuch"]);
    assert_refused(
        &output,
        &["--profile is ignored", "'nosuch'"],
        "composite --profile",
    );
    // --profile on a staircase profiles its stairs: nothing said to be ignored (here
    // before a usage error).
    let staircase = "models = [\"poll\"]\n[load]\nsize = 16\n[staircase]\nbatch = 2\n\
                     every = \"1s\"\nto = 4\nhold = \"1s\"\n";
    let missing = tmp.path().join("no-baseline");
    let output = run_scenario(
        &write_scenario(tmp.path(), staircase),
        &out,
        &["--profile", "--baseline", missing.to_str().unwrap()],
    );
    assert_refused(&output, &["--baseline"], "staircase --profile");
    assert!(
        !stderr(&output).contains("--profile is ignored"),
        "staircase --profile"
    );
    // A label with a comma could never be selected by --models.
    let output = run_scenario(
        &write_scenario(tmp.path(), SHORT),
        &out,
        &[
            "--server-cmd",
            "python3 srv.py {port}",
            "--server-name",
            "a,b",
        ],
    );
    assert_refused(&output, &["\"a,b\" contains a comma"], "--server-name a,b");
    // A scenario name is letters, digits, `-`, `_` and `.`, as its error says.
    for name in ["my run", "rocket🚀"] {
        let text = format!("name = {name:?}\n{SHORT}");
        let output = run_scenario(&write_scenario(tmp.path(), &text), &out, QUIET_NO_REPORT);
        assert_refused(&output, &["has other characters", "letters, digits"], name);
    }
    assert!(!out.exists());
    // The work per read is bounded, in a scenario and on the command line.
    let text = format!("{SHORT}[server]\nwork_us = 2000000\n");
    let output = run_scenario(&write_scenario(tmp.path(), &text), &out, QUIET_NO_REPORT);
    assert_refused(
        &output,
        &["work_us = 2000000 is more than 1000000"],
        "work_us",
    );
    let output = echolab(&[
        "serve",
        "--model",
        "epoll",
        "--work-us",
        "18446744073709551615",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--work-us"), "{}", stderr(&output));
}

/// A `.lock` planted as a link to a file outside: refused, the file untouched.
#[test]
fn a_planted_lock_link_is_refused_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, "not echolab's").unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&outside, out.join(".lock")).unwrap();
    let output = run_scenario(&write_scenario(tmp.path(), SHORT), &out, QUIET_NO_REPORT);
    assert_refused(&output, &["cannot open", ".lock"], ".lock link");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not echolab's");
}
