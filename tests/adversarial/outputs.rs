//! Outputs that cannot be written (a read-only directory, a full disk, a full server log) are named, not panicked on.

use super::*;

/// Output paths that cannot be written (under a regular file; in /proc, read-only even
/// for root): serve, load and run exit with an error naming the path, never a panic.
#[test]
fn unwritable_outputs_are_named_not_panicked() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let scenario = tmp.path().join("s.toml");
    std::fs::write(&scenario, "models = [\"poll\"]\n[load]\nrequests = 1\n").unwrap();
    for bad in [file.join("out"), "/proc/echolab-out".into()] {
        let bad_str = bad.to_str().unwrap();
        let runs: [Vec<&str>; 3] = [
            vec![
                "load",
                "--target",
                "127.0.0.1:9",
                "--requests",
                "1",
                "--out",
                bad_str,
            ],
            vec!["run", scenario.to_str().unwrap(), "--out", bad_str],
            vec![
                "serve",
                "--model",
                "poll",
                "--addr",
                "127.0.0.1:0",
                "--log",
                bad_str,
            ],
        ];
        for args in runs {
            let out = output_within(Command::new(BIN).args(&args), COMMAND_LIMIT);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert!(
                matches!(out.status.code(), Some(1 | 2)),
                "{args:?}: exit {:?}: {stderr}",
                out.status
            );
            assert!(
                stderr.contains(bad_str),
                "{args:?} does not name {bad_str}: {stderr}"
            );
        }
    }
}

/// Asserts an exit 1 that names a file under `under` and ENOSPC, without a panic.
fn assert_enospc_named(out: &std::process::Output, under: &std::path::Path, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(
        stderr.contains("No space left on device"),
        "{what}: no ENOSPC on stderr: {stderr}"
    );
    let under = under.display().to_string();
    assert!(
        stderr
            .split_whitespace()
            .any(|word| word.trim_end_matches(':').starts_with(&under)),
        "{what}: no path under {under} named: {stderr}"
    );
}

/// `load --out` and `run --out` on a disk that fills during the run: exit 1 with the file
/// that hit ENOSPC named, no panic.
#[test]
fn a_full_disk_under_load_and_run_is_named_not_panicked() {
    let Some(disk) = FullDisk::mount("a_full_disk_under_load_and_run_is_named_not_panicked") else {
        return;
    };
    let server = Server::start("epoll", &["--workers", "1"]);
    let load_out = disk.path("load");
    let out = load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "200",
        "--requests",
        "400",
        "--quiet",
        "--out",
        load_out.to_str().unwrap(),
    ]);
    assert_enospc_named(&out, &load_out, "load");

    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("full.toml");
    std::fs::write(
        &scenario,
        "models = [\"poll\"]\n[load]\nconnections = 200\nrequests = 400\n",
    )
    .unwrap();
    std::fs::remove_dir_all(&load_out).unwrap();
    let run_out = disk.path("run");
    let out = run_scenario(&scenario, &run_out, QUIET_NO_REPORT);
    assert_enospc_named(&out, &run_out, "run");
    server.stop();
}

/// The disk filled during a run: the row said "failed: 0 of 3 connections established",
/// blaming the model, and the manifest stayed "running". The run stops at the step the
/// full disk failed, no row blames a model, the manifest (rewritten in place) says
/// `stopped` with the reason, and the run exits 1.
#[test]
fn a_disk_filling_during_a_run_stops_it_as_the_machines_fault() {
    let test = "a_disk_filling_during_a_run_stops_it_as_the_machines_fault";
    // Room for the manifest, results.csv and a step or two of files, not for ten.
    let Some(disk) = FullDisk::mount_leaving(test, 1024 * KIB, 160 * KIB) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        "models = [\"epoll\"]\n[load]\nconnections = 3\nsize = 64\nduration = \"500ms\"\n\
         [sweep]\nconnections = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n",
    );
    let out = disk.path("run");
    let output = run_scenario(&scenario, &out, QUIET_NO_REPORT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["status"], "stopped", "{manifest}");
    let reason = manifest["stop_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("is full") || reason.contains("No space left on device"),
        "{manifest}"
    );
    // Rows as far as results.csv could hold them: none blames the model.
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap_or_default();
    for line in text.lines().skip(1) {
        assert!(
            !line.contains(",failed,"),
            "a model blamed for a full disk: {line}"
        );
    }
    assert!(text.lines().count() < 11, "the run went on: {text}");
}

/// `serve --log` on a disk that fills while connections close: at SIGTERM the server still
/// prints its summary and writes --summary-json, names the log and the error on stderr, and
/// exits 1 (docs/outputs.md).
#[test]
fn a_full_server_log_is_reported_at_exit() {
    let Some(disk) = FullDisk::mount("a_full_server_log_is_reported_at_exit") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = disk.path("log.csv");
    let summary_json = tmp.path().join("summary.json");
    let mut child = Command::new(BIN)
        .args(["serve", "--model", "epoll", "--workers", "1"])
        .args(["--addr", "127.0.0.1:0", "--log"])
        .arg(&log)
        .arg("--summary-json")
        .arg(&summary_json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr: std::net::SocketAddr = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    let baseline = fd_count(child.id() as i32);
    // About 60 bytes a row: 1000 rows are 60 KB, far over the 8 KiB left.
    const CONNECTIONS: u64 = 1000;
    for _ in 0..CONNECTIONS {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        assert_eq!(echo_once(&mut stream, b"ping"), b"ping");
    }
    // Every connection closed and logged (or failed to be) before the signal.
    let deadline = Instant::now() + Duration::from_secs(5);
    while fd_count(child.id() as i32) > baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(child.id() as i32, libc::SIGTERM);
    let out = finish_within(child, "serve after SIGTERM", Duration::from_secs(10));
    let (status, stderr) = (out.status, String::from_utf8_lossy(&out.stderr));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("echolab serve summary"), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&log.display().to_string()) && last.contains("No space left on device"),
        "the last line does not name the log and the error: {stderr}"
    );
    let summary = parsed_json(&summary_json, "serve");
    assert_eq!(count(&summary, "accepted"), CONNECTIONS, "{summary}");
}
