//! Where a run writes: an earlier run not overwritten unless forced, names that cannot leave results, a server's stderr escaped.

use super::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::*;

/// A one-step scenario of epoll, 300 ms, named by the TOML string `name` (quoted).
fn short_scenario(dir: &Path, name: &str) -> PathBuf {
    common::write_scenario(
        dir,
        &format!(
            "name = {name}\nmodels = [\"epoll\"]\n[load]\nconnections = 2\nsize = 64\n\
             duration = \"300ms\"\n"
        ),
    )
}

/// `run --out DIR` over a directory an earlier run wrote is refused (exit 2, the old
/// results untouched) unless `--force`, which removes the old run's files first.
#[test]
fn run_out_over_an_earlier_run_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = short_scenario(tmp.path(), "\"twice\"");
    let out = tmp.path().join("out");
    common::run_scenario_ok(&scenario, &out, common::QUIET_NO_REPORT);
    let first = std::fs::read_to_string(out.join("results.csv")).unwrap();
    // A file only the earlier run has (an old report): it must not survive --force.
    std::fs::write(out.join("report.html"), "old report").unwrap();
    let again = common::run_scenario(&scenario, &out, common::QUIET_NO_REPORT);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        first
    );
    let forced = [common::QUIET_NO_REPORT, &["--force"]].concat();
    common::run_scenario_ok(&scenario, &out, &forced);
    assert!(
        !out.join("report.html").exists(),
        "the old report survived --force"
    );
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1, "two runs mixed in one results.csv");
}

/// A scenario `name` is one safe path component: `/`, `..`, a leading dot or a control
/// character is refused at the name's line, before any directory is made.
#[test]
fn a_scenario_name_cannot_leave_results() {
    for (name, why) in [
        (r#""../../escaped""#, "path separator"),
        (r#""a/b""#, "path separator"),
        ("\"..\"", "starts with a dot"),
        (r#"".hidden""#, "starts with a dot"),
        (r#""bell\u0007""#, "control character"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let scenario = short_scenario(tmp.path(), name);
        let out = output_within(
            Command::new(BIN)
                .current_dir(tmp.path())
                .arg("run")
                .arg(&scenario)
                .args(common::QUIET_NO_REPORT),
            common::RUN_LIMIT,
        );
        let text = stderr(&out);
        assert!(!out.status.success(), "{name:?} accepted: {text}");
        assert!(
            text.contains("line 1") && text.contains(why),
            "{name:?}: {text}"
        );
        let made: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(made.len(), 1, "{name:?}: the run made {made:?}");
    }
}

/// A server's stderr was copied raw (ESC, NUL) into the terminal, results.csv and the
/// report: its control characters are escaped wherever its words are quoted.
#[test]
fn a_servers_control_characters_are_escaped_where_its_stderr_is_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        "models = [\"noisy\"]\n\
         [model.noisy]\n\
         command = [\"sh\", \"-c\", \"printf 'boom\\\\033[2J\\\\000 \\\\007gone\\\\n' >&2; exit 3\", \"{port}\"]\n\
         [load]\nconnections = 1\nsize = 64\nduration = \"1s\"\n",
    );
    let out = tmp.path().join("out");
    let run = common::run_scenario(&scenario, &out, &[]);
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1, "{}", stderr(&run));
    let reason = &rows[0]["failure_reason"];
    assert!(
        reason.contains("boom\\u{1b}[2J\\0 \\u{7}gone"),
        "{reason:?}"
    );
    let raw = |bytes: &[u8]| bytes.iter().any(|b| matches!(b, 0 | 7 | 0x1b));
    assert!(!raw(&run.stderr), "{:?}", stderr(&run));
    assert!(
        !raw(&run.stdout),
        "{:?}",
        String::from_utf8_lossy(&run.stdout)
    );
    for file in ["results.csv", "report.md", "report.html"] {
        let bytes = std::fs::read(out.join(file)).unwrap();
        assert!(!raw(&bytes), "{file} holds a raw control character");
    }
}
