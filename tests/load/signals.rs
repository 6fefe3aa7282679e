//! SIGINT and SIGTERM: final valid files, one stop per process, a second signal stops at once.

use super::*;

/// Sends `signal` to `child`.
fn send_signal(child: &Child, signal: i32) {
    // SAFETY: kill has no memory preconditions; the pid is our own live child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

/// Waits (at most 30 s) for `child`, signalled to stop, and returns its output.
fn wait_output(child: Child) -> Output {
    common::finish_within(
        child,
        "echolab load after the signal",
        Duration::from_secs(30),
    )
}

fn spawn_load(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("load")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C: summary.json says `"complete": false` while the run goes; after SIGINT the run
/// stops, exits 0, and its files are final, valid and exact (every echo in flight was
/// waited for, so each message sent came back whole).
#[test]
fn ctrl_c_leaves_final_valid_files_and_exits_0() {
    let server = thread_server(Faults::default());
    let dir = out_dir("sigint");
    let child = spawn_load(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "4",
        "--duration",
        "30s",
        "--delay",
        "5ms",
        "--size",
        "64",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let started = Instant::now();
    // summary.json is rewritten every second while the run goes; the signal comes once it
    // shows every connection open and echoing (the first is written before any connects).
    let deadline = started + Duration::from_secs(10);
    let running = loop {
        let text = std::fs::read(dir.join("summary.json")).unwrap_or_default();
        if let Ok(running) = serde_json::from_slice::<LoadSummary>(&text) {
            if running.connections_established == 4 && running.requests_completed >= 4 {
                break running;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no summary.json of 4 connections echoing while running"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!running.complete, "complete while the run goes");
    send_signal(&child, libc::SIGINT);
    let out = wait_output(child);
    let wall = started.elapsed().as_secs_f64();
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert!(s.complete && s.interrupted);
    assert_eq!(s.cut_short_reason.as_deref(), Some("SIGINT received"));
    assert!(
        s.duration_s < wall,
        "{} s of a {wall} s process",
        s.duration_s
    );
    assert_eq!(s.connections_established, 4);
    assert_eq!(s.errors_total, 0);
    // 4 connections, at most one request per 5 ms each.
    assert!(s.requests_completed >= 4, "{}", s.requests_completed);
    assert!(s.requests_completed as f64 <= 4.0 * s.duration_s * 200.0);
    assert_eq!(s.bytes_sent, s.requests_completed * 64);
    assert_eq!(s.bytes_received, s.requests_completed * 64);
    assert_eq!(server.bytes.load(Ordering::SeqCst), s.bytes_sent);
    let rows = connections(&dir);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.end == "stopped"), "{rows:?}");
    assert_summary_matches_files(&dir);
}

/// Ctrl-C in a terminal signals the whole process group: a load split over processes
/// passes it on to each child once, so every child drains its echoes in flight (a child
/// that also got the group's signal would count two and stop without waiting).
#[test]
fn a_group_sigint_stops_every_process_once_and_drains() {
    let server = thread_server(Faults::default());
    let dir = out_dir("group-sigint");
    let child = Command::new(BIN)
        .arg("load")
        .args([
            "--target",
            &server.addr.to_string(),
            "--connections",
            "6",
            "--processes",
            "2",
            "--duration",
            "30s",
            "--delay",
            "2ms",
            "--size",
            "64",
            "--out",
            dir.to_str().unwrap(),
        ])
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both children are running once each has written a summary.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(0..2).all(|i| dir.join(format!("process-{i}/summary.json")).is_file()) {
        assert!(Instant::now() < deadline, "the children did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory preconditions; the group is our own child's.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGINT);
    }
    let out = wait_output(child);
    assert_exit_ok(&out);
    let s = summary(&dir);
    let reason = s.cut_short_reason.clone().unwrap_or_default();
    assert_eq!(
        reason, "process-0: SIGINT received; process-1: SIGINT received",
        "each child saw one signal"
    );
    assert_eq!((s.errors_total, s.short_echoes), (0, 0));
    assert!(s.requests_completed > 0);
    assert_eq!(
        s.bytes_received, s.bytes_sent,
        "every echo in flight came back"
    );
    assert_eq!(server.bytes.load(Ordering::SeqCst), s.bytes_sent);
}

/// A second signal stops at once, without waiting for echoes that will never come (the
/// server accepts and never answers): each connection's one message is sent, none
/// completes, and none counts as an error.
#[test]
fn a_second_signal_stops_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(60));
        drop(held);
    });
    let dir = out_dir("sigint-twice");
    let child = spawn_load(&[
        "--target",
        &addr.to_string(),
        "--connections",
        "2",
        "--duration",
        "30s",
        "--size",
        "64",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // Both connections up and their message sent: the summary of the first second.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_slice::<LoadSummary>(&t).ok())
        .is_none_or(|s| s.bytes_sent < 128)
    {
        assert!(Instant::now() < deadline, "the load did not send");
        std::thread::sleep(Duration::from_millis(50));
    }
    send_signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(100));
    send_signal(&child, libc::SIGINT);
    let out = wait_output(child);
    // Stopped at once, so the echoes awaited are not timeouts; but nothing completed.
    assert_eq!(out.status.code(), Some(1));
    let s = summary(&dir);
    assert!(s.complete && s.interrupted);
    assert_eq!(
        s.cut_short_reason.as_deref(),
        Some("SIGINT received twice: stopped without waiting for in-flight echoes")
    );
    assert_eq!(s.connections_established, 2);
    assert_eq!((s.bytes_sent, s.bytes_received), (128, 0));
    assert_eq!((s.requests_completed, s.errors_total), (0, 0));
    assert_summary_matches_files(&dir);
}
