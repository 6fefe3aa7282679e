//! A server that dies, refuses or never answers: partial results and counted failures.

use super::*;

#[test]
fn a_server_killed_mid_run_leaves_valid_partial_results() {
    for engine in ENGINES {
        a_server_killed_mid_run_leaves_valid_partial_results_with(engine);
    }
}

fn a_server_killed_mid_run_leaves_valid_partial_results_with(engine: &'static str) {
    let port = free_port();
    let ready = out_dir(&format!("killed-ready-{engine}"));
    let mut server = spawn_epoll_server(port, &ready);
    let dir = out_dir(&format!("killed-{engine}"));
    let target = format!("127.0.0.1:{port}");
    let dir_text = dir.to_str().unwrap().to_string();
    let client = std::thread::spawn(move || {
        load_within(&[
            "--engine",
            engine,
            "--target",
            &target,
            "--connections",
            "20",
            "--duration",
            "30s",
            "--size",
            "64",
            "--delay",
            "1ms",
            "--out",
            &dir_text,
        ])
    });
    std::thread::sleep(Duration::from_millis(1500));
    server.kill().unwrap();
    server.wait().unwrap();
    let out = client.join().unwrap();
    // Every connection failed: the run is a failure, its files still truthful.
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("all 20 connections failed"), "{stderr}");
    let s = summary(&dir);
    assert!(s.complete);
    assert!(s.interrupted);
    let reason = s.cut_short_reason.clone().unwrap();
    assert!(
        reason.contains("20 of 20 connections ended early"),
        "{reason}"
    );
    assert!(
        s.duration_s < 20.0,
        "the run must end when the server is gone"
    );
    assert_eq!(s.connections_established, 20);
    assert_eq!(s.connections_ended_early, 20);
    assert_eq!(s.errors.reset + s.unexpected_closes, 20);
    assert_eq!(s.errors_total, 20);
    assert_eq!(s.mismatches, 0);
    // Each connection echoed before the kill 1.5 s in; the 1 ms delay caps each one
    // at one request per millisecond of the run.
    assert!(s.requests_completed >= 20, "{}", s.requests_completed);
    assert!(
        s.requests_completed as f64 <= 20.0 * s.duration_s * 1000.0,
        "{} requests in {} s",
        s.requests_completed,
        s.duration_s
    );
    assert_summary_matches_files(&dir);
    assert_eq!(
        connections(&dir)
            .iter()
            .filter(|r| r.end == "error")
            .count(),
        20
    );
}

#[test]
fn nothing_connects_exits_1_counting_each_refusal() {
    for engine in ENGINES {
        nothing_connects_exits_1_counting_each_refusal_with(engine);
    }
}

fn nothing_connects_exits_1_counting_each_refusal_with(engine: &str) {
    let (_port, addr) = refusing_port();
    let dir = out_dir(&format!("refused-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &addr.to_string(),
        "--connections",
        "3",
        "--requests",
        "1",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no connection could be established"),
        "{stderr}"
    );
    let s = summary(&dir);
    assert!(s.complete);
    assert_eq!(s.connections_target, 3);
    assert_eq!(s.connections_established, 0);
    assert_eq!(s.connections_failed, 3);
    assert_eq!(s.errors.refused, 3);
    assert_eq!(s.errors_total, 3);
    assert_eq!((s.requests_completed, s.bytes_sent), (0, 0));
    let rows = connections(&dir);
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r.error_kind == "refused" && r.end == "error" && r.errors == 1),
        "{rows:?}"
    );
}

/// A listener with a backlog of 0 that never accepts holds one connection in its queue
/// and drops the SYNs after it: with connections opened 10/s and a 1 s connect timeout,
/// the first connects and the other two time out.
#[test]
fn connect_timeouts_are_counted() {
    for engine in ENGINES {
        connect_timeouts_are_counted_with(engine);
    }
}

fn connect_timeouts_are_counted_with(engine: &str) {
    let listener =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    listener
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    listener.listen(0).unwrap();
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    let dir = out_dir(&format!("timeout-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &addr.to_string(),
        "--connections",
        "3",
        "--connect-rate",
        "10",
        "--connect-timeout",
        "1s",
        "--duration",
        "2500ms",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // Nothing was echoed: a failed run.
    assert_eq!(out.status.code(), Some(1));
    let s = summary(&dir);
    assert_eq!(s.connections_established, 1, "{:?}", s.errors);
    // Two connects timed out; the one queued connection is never accepted, so its
    // message, still awaited when the drain ends, times out too.
    assert_eq!(s.errors.timeout, 3, "{:?}", s.errors);
    assert_eq!(s.errors_total, 3);
    assert_eq!((s.requests_completed, s.bytes_received), (0, 0));
    let kinds: Vec<String> = connections(&dir)
        .iter()
        .filter(|r| r.errors > 0)
        .map(|r| r.error_kind.clone())
        .collect();
    assert_eq!(kinds, ["timeout", "timeout", "timeout"]);
}
