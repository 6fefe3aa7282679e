//! An unwritable console, a full disk, a load killed at once: named, not panicked on.

use super::*;

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn dev_full() -> File {
    File::options().write(true).open("/dev/full").unwrap()
}

#[test]
fn an_unwritable_console_is_not_a_panic() {
    for model in model_names() {
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("summary.json");
        let mut child = Command::new(BIN)
            .args(["serve", "--model", model, "--addr", "127.0.0.1:0"])
            .arg("--summary-json")
            .arg(&summary)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(dev_full())
            .spawn()
            .unwrap();
        let mut line = [0u8; 1];
        // The listening line arrives, then the server stops on SIGTERM as usual.
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut line)
            .unwrap();
        signal(child.id() as i32, libc::SIGTERM);
        let what = format!("{model} server after SIGTERM");
        let status = finish_within(child, &what, Duration::from_secs(30)).status;
        assert_eq!(status.code(), Some(0), "{model} with stderr on /dev/full");
        assert!(
            summary.is_file(),
            "{model}: the summary file is still written"
        );
    }

    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    let load = Command::new(BIN)
        .args(["load", "--target", &target, "--requests", "5", "--quiet"])
        .stdout(dev_full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(load, "echolab load >/dev/full", COMMAND_LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "load >/dev/full: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("cannot write to stdout"),
        "{}",
        stderr(&out)
    );

    let results = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(results.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let report = Command::new(BIN)
        .arg("report")
        .arg(results.path().join("results-small"))
        .stdout(dev_full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(report, "echolab report >/dev/full", COMMAND_LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "report >/dev/full: {}",
        stderr(&out)
    );
}

#[test]
fn a_load_killed_at_once_leaves_a_summary_saying_it_is_incomplete() {
    let addr = fake_server(silent);
    let dir = out_dir("killed");
    let target = addr.to_string();
    let mut child = Command::new(BIN)
        .args(["load", "--target", &target, "--duration", "30s", "--quiet"])
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as its outputs exist: well inside its first second.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dir.join("connections.csv").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let summary = read_json(&dir.join("summary.json"));
    assert_eq!(summary["complete"], false, "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_disk_is_reported_with_the_file_it_hit() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let dir = out_dir("full");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("connections.csv")).unwrap();
    let target = server.addr.to_string();
    let out = echolab(&[
        "load",
        "--target",
        &target,
        "--requests",
        "2",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("No space left on device"), "{text}");
    assert!(
        text.contains(&dir.join("connections.csv").display().to_string()),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
