//! `echolab load` against real `echolab serve` servers on loopback: both ends count every byte,
//! so the client's totals, its connections.csv, the server's summary and the server's log must
//! agree exactly, and every client connection (local port) must join one server log row.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{
    count, finish_within, out_dir, reason_count, LogRow, Server, Stopped, BIN, LOAD_LIMIT,
};
use echolab::load::measurements::{LoadConnRecord, LoadSummary};

/// Result files of one `echolab load` run.
struct Run {
    dir: PathBuf,
    output: Output,
    summary: LoadSummary,
    rows: Vec<LoadConnRecord>,
}

fn load_command(addr: SocketAddr, dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(["load", "--target", &addr.to_string(), "--quiet", "--out"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for a load child (at most [`LOAD_LIMIT`]; every run here takes a few seconds)
/// and reads its files.
fn finish(child: Child, dir: PathBuf, args: &[&str]) -> Run {
    let output = finish_within(child, &format!("echolab load {args:?}"), LOAD_LIMIT);
    assert!(
        output.status.success(),
        "echolab load {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: LoadSummary =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let rows = csv::Reader::from_path(dir.join("connections.csv"))
        .unwrap()
        .deserialize()
        .map(|r| r.unwrap())
        .collect();
    Run {
        dir,
        output,
        summary,
        rows,
    }
}

/// Runs `echolab load` against `server` to the end.
fn load(server: &Server, name: &str, args: &[&str]) -> Run {
    let dir = out_dir(name);
    let child = load_command(server.addr, &dir, args).spawn().unwrap();
    finish(child, dir, args)
}

/// Server-side sockets on 127.0.0.1:`port` the server has not closed yet (ESTABLISHED or
/// CLOSE_WAIT in /proc/net/tcp), or None if there is no listener on the port.
fn server_side_open(port: u16) -> Option<usize> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{port:04X}");
    let mut listening = false;
    let mut open = 0;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&local.as_str()) {
            continue;
        }
        match fields.get(3).copied() {
            Some("0A") => listening = true,
            Some("01") | Some("08") => open += 1,
            _ => {}
        }
    }
    listening.then_some(open)
}

/// Waits (at most 20 s) until the server on `port` has closed every connection the load
/// opened, so each log row has its final counts and the close reason is the client's.
fn wait_server_closed_all(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(open) = server_side_open(port).filter(|&n| n > 0) {
        assert!(
            Instant::now() < deadline,
            "{open} connections on port {port} still open 20 s after the load ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn stop_when_idle(server: Server) -> Stopped {
    wait_server_closed_all(server.addr.port());
    let stopped = server.stop();
    assert!(stopped.status.success(), "server: {}", stopped.stderr);
    stopped
}

/// The client's totals, its connections.csv and the server's summary and log all agree, and
/// each connection's bytes are the same on both ends. Returns the number of joined rows.
fn assert_both_ends_agree(run: &Run, server: &Stopped) -> usize {
    let s = &run.summary;
    let sum = |f: fn(&LoadConnRecord) -> u64| run.rows.iter().map(f).sum::<u64>();
    assert_eq!(s.requests_completed, sum(|r| r.requests));
    assert_eq!(s.bytes_sent, sum(|r| r.bytes_sent));
    assert_eq!(s.bytes_received, sum(|r| r.bytes_received));
    assert_eq!(
        s.bytes_verified, s.bytes_received,
        "every echoed byte verified"
    );
    assert_eq!((s.mismatches, s.errors_total), (0, 0), "{:?}", s.errors);
    assert_eq!(s.latency_us.count, s.requests_completed);
    assert!(s.complete && !s.interrupted, "{:?}", s.cut_short_reason);

    let summary = &server.summary;
    assert_eq!(count(summary, "bytes_in"), s.bytes_sent, "server bytes_in");
    assert_eq!(
        count(summary, "bytes_out"),
        s.bytes_received,
        "server bytes_out"
    );
    assert_eq!(count(summary, "accepted"), s.connections_established);
    assert_eq!(server.log.len() as u64, s.connections_established);
    assert_eq!(
        reason_count(summary, "closed", "client_closed"),
        s.connections_established,
        "every connection closed by the client: {summary}"
    );

    let by_port: HashMap<u16, &LogRow> = server.log.iter().map(|r| (r.peer_port, r)).collect();
    assert_eq!(by_port.len(), server.log.len(), "client ports are distinct");
    for row in &run.rows {
        let Some(log) = by_port.get(&row.local_port) else {
            panic!("connection {row:?} has no server log row");
        };
        assert_eq!(Some(log.peer_ip.parse().unwrap()), row.local_addr);
        assert_eq!(
            (log.bytes_in, log.bytes_out),
            (row.bytes_sent, row.bytes_received),
            "bytes of the connection from port {}",
            row.local_port
        );
        assert_eq!(row.end, "done");
    }
    run.rows.len()
}

/// 20 connections x 50 requests of 300 B, closed loop, against `model`: exact on both ends.
fn closed_loop_against(model: &str) {
    let server = Server::start(model, &[]);
    let args = ["--connections", "20", "--requests", "50", "--size", "300"];
    let run = load(&server, &format!("closed-{model}"), &args);
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.mode, "closed");
    assert_eq!(s.connections_established, 20);
    assert_eq!(s.requests_completed, 1000);
    assert_eq!(s.bytes_sent, 300_000);
    assert_eq!(s.bytes_received, 300_000);
    assert_eq!(assert_both_ends_agree(&run, &stopped), 20);
    for row in &run.rows {
        assert_eq!((row.requests, row.bytes_sent), (50, 15_000), "{row:?}");
    }
    // Not exactly 20: a connection may finish before the server accepts the last one.
    assert!((1..=20).contains(&count(&stopped.summary, "max_concurrent")));
    let _ = std::fs::remove_dir_all(&run.dir);
}

#[test]
fn closed_loop_epoll() {
    closed_loop_against("epoll");
}

#[test]
fn closed_loop_poll() {
    closed_loop_against("poll");
}

#[test]
fn closed_loop_select() {
    closed_loop_against("select");
}

#[test]
fn closed_loop_uring() {
    closed_loop_against("uring");
}

#[test]
fn closed_loop_tokio() {
    closed_loop_against("tokio");
}

#[test]
fn closed_loop_threads() {
    closed_loop_against("threads");
}

#[test]
fn open_loop_against_epoll_sends_exactly_the_requests_asked() {
    let server = Server::start("epoll", &[]);
    // 1000 requests at 2000/s in total: half a second of schedule.
    let args = [
        "--connections",
        "10",
        "--requests",
        "100",
        "--rate",
        "2000",
        "--size",
        "64",
    ];
    let started = Instant::now();
    let run = load(&server, "open-epoll", &args);
    let wall_us = started.elapsed().as_micros() as u64;
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.mode, "open");
    assert_eq!(s.requests_completed, 1000);
    assert_eq!((s.bytes_sent, s.bytes_received), (64_000, 64_000));
    let raw = s
        .latency_raw_us
        .as_ref()
        .expect("open loop has raw latency");
    assert_eq!(raw.count, 1000);
    // The schedule paces the sends: the 1000th is due 999/2000 s after the first, so the
    // run cannot be shorter; and no latency can exceed the time the process ran.
    assert!(s.duration_s >= 0.4995, "{} s", s.duration_s);
    assert!(s.latency_us.max <= wall_us, "{:?}", s.latency_us);
    assert!(raw.max <= wall_us, "{raw:?}");
    assert_eq!(assert_both_ends_agree(&run, &stopped), 10);
    let _ = std::fs::remove_dir_all(&run.dir);
}

#[test]
fn pipelined_requests_are_exact() {
    let server = Server::start("epoll", &[]);
    let args = [
        "--connections",
        "8",
        "--requests",
        "250",
        "--pipeline",
        "16",
        "--size",
        "100",
    ];
    let run = load(&server, "pipeline-epoll", &args);
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.pipeline, 16);
    assert_eq!(s.requests_completed, 2000);
    assert_eq!((s.bytes_sent, s.bytes_received), (200_000, 200_000));
    assert_eq!(assert_both_ends_agree(&run, &stopped), 8);
    let _ = std::fs::remove_dir_all(&run.dir);
}

#[test]
fn held_connections_stay_open_together() {
    let server = Server::start("epoll", &[]);
    // One request each, opened 20/s over a second: without --hold each would close long
    // before the next opens; with a 2 s hold all 20 are open at once.
    let args = [
        "--connections",
        "20",
        "--connect-rate",
        "20",
        "--requests",
        "1",
        "--size",
        "32",
        "--hold",
        "2s",
    ];
    let run = load(&server, "hold-epoll", &args);
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.requests_completed, 20);
    assert_eq!(s.max_concurrent, 20);
    assert_eq!(count(&stopped.summary, "max_concurrent"), 20);
    assert_eq!(assert_both_ends_agree(&run, &stopped), 20);
    for row in &stopped.log {
        let open_for = row.closed_unix - row.opened_unix;
        // The client holds each connection 2 s after its echo; the log rounds to milliseconds.
        assert!(
            open_for >= 1.99,
            "connection {row:?} closed after {open_for} s"
        );
    }
    let _ = std::fs::remove_dir_all(&run.dir);
}

#[test]
fn one_mebibyte_messages_are_echoed_byte_exact() {
    let server = Server::start("epoll", &[]);
    let args = ["--connections", "2", "--requests", "4", "--size", "1MiB"];
    let run = load(&server, "mib-epoll", &args);
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.message_bytes, 1 << 20);
    assert_eq!(s.requests_completed, 8);
    assert_eq!((s.bytes_sent, s.bytes_received), (8 << 20, 8 << 20));
    assert_eq!(s.bytes_verified, 8 << 20);
    assert_eq!(assert_both_ends_agree(&run, &stopped), 2);
    let _ = std::fs::remove_dir_all(&run.dir);
}

/// Starts `echolab serve --model epoll` on a fixed address (for a restart on the same port).
fn serve_at(addr: SocketAddr, dir: &Path, tag: &str) -> Child {
    let mut child = Command::new(BIN)
        .args(["serve", "--model", "epoll", "--addr", &addr.to_string()])
        .arg("--log")
        .arg(dir.join(format!("{tag}-log.csv")))
        .arg("--summary-json")
        .arg(dir.join(format!("{tag}-summary.json")))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on"), "serve said {line:?}");
    child
}

fn stop_child(mut child: Child) {
    common::signal(child.id() as i32, libc::SIGTERM);
    let status = common::wait_timeout(&mut child, Duration::from_secs(20)).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("server did not stop")
    });
    assert!(status.success());
}

#[test]
fn reconnect_survives_a_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let addr: SocketAddr = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let first = serve_at(addr, dir.path(), "first");
    // 5 connections x 150 requests with 10 ms think time: at least 1.5 s of work, cut by the
    // restart; every request lost with the first server is sent again.
    let args = [
        "--connections",
        "5",
        "--requests",
        "150",
        "--delay",
        "10ms",
        "--size",
        "50",
        "--reconnect",
    ];
    let out = out_dir("reconnect");
    let child = load_command(addr, &out, &args).spawn().unwrap();
    // Stop the first server once all 5 connections are up and some requests have gone through.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server_side_open(addr.port()) != Some(5) {
        assert!(Instant::now() < deadline, "the load did not connect");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop_child(first);
    let second = serve_at(addr, dir.path(), "second");
    let run = finish(child, out, &args);
    wait_server_closed_all(addr.port());
    stop_child(second);

    let s = &run.summary;
    assert_eq!(s.requests_completed, 750, "{:?}", s.cut_short_reason);
    assert_eq!(s.mismatches, 0);
    assert_eq!(s.bytes_verified, s.bytes_received);
    assert!(
        s.unexpected_closes + s.errors.reset >= 5,
        "each connection saw the first server go: {s:?}"
    );
    let read_summary = |tag: &str| -> serde_json::Value {
        serde_json::from_slice(
            &std::fs::read(dir.path().join(format!("{tag}-summary.json"))).unwrap(),
        )
        .unwrap()
    };
    let (first_s, second_s) = (read_summary("first"), read_summary("second"));
    assert_eq!(count(&second_s, "accepted"), 5, "one reconnection per slot");
    let second_log = common::read_log(&dir.path().join("second-log.csv"));
    let first_log = common::read_log(&dir.path().join("first-log.csv"));
    // A reconnection can land in the first server's backlog while it stops: established,
    // never accepted, then reset with nothing echoed. Every other connection is in one log.
    let logged = |port: u16| {
        first_log
            .iter()
            .chain(&second_log)
            .any(|l| l.peer_port == port)
    };
    let unaccepted: Vec<&LoadConnRecord> = run
        .rows
        .iter()
        .filter(|r| r.local_port != 0 && !logged(r.local_port))
        .collect();
    assert!(
        unaccepted
            .iter()
            .all(|r| r.attempt > 1 && r.requests == 0 && r.end == "error"),
        "{unaccepted:?}"
    );
    assert_eq!(
        count(&first_s, "accepted") + count(&second_s, "accepted") + unaccepted.len() as u64,
        s.connections_established
    );
    let done: Vec<&LoadConnRecord> = run.rows.iter().filter(|r| r.end == "done").collect();
    assert_eq!(done.len(), 5);
    for row in done {
        let log = second_log
            .iter()
            .find(|l| l.peer_port == row.local_port)
            .unwrap_or_else(|| panic!("no second-server row for {row:?}"));
        assert_eq!(
            (log.bytes_in, log.bytes_out),
            (row.bytes_sent, row.bytes_received)
        );
    }
    // Connections the first server closed: it cannot have read more than was sent, nor the
    // client received more than it wrote.
    for row in run.rows.iter().filter(|r| r.attempt == 1) {
        assert_eq!(row.end, "error", "{row:?}");
        let log = first_log
            .iter()
            .find(|l| l.peer_port == row.local_port)
            .unwrap_or_else(|| panic!("no first-server row for {row:?}"));
        assert!(log.bytes_in <= row.bytes_sent, "{log:?} vs {row:?}");
        assert!(row.bytes_received <= log.bytes_out, "{log:?} vs {row:?}");
    }
    assert_eq!(
        s.requests_completed,
        run.rows.iter().map(|r| r.requests).sum::<u64>()
    );
    let _ = std::fs::remove_dir_all(&run.dir);
    drop(run.output);
}

/// `--warmup`: the first 0.5 s of traffic is sent, echoed and verified but not measured.
/// Every echo is either a measured request or a warm-up one; the histogram holds the
/// measured ones only; duration_s is the measured second; both ends count every byte.
#[test]
fn a_warmup_is_sent_and_verified_but_not_measured() {
    let server = Server::start("epoll", &[]);
    let args = [
        "--connections",
        "10",
        "--rate",
        "1000",
        "--size",
        "64",
        "--warmup",
        "0.5s",
        "--duration",
        "1s",
    ];
    let run = load(&server, "warmup-epoll", &args);
    let stopped = stop_when_idle(server);
    let s = &run.summary;
    assert_eq!(s.warmup_s, 0.5);
    // 1000/s for 0.5 s schedules 500 warm-up requests; a slow start sends fewer.
    assert!(
        (1..=500).contains(&s.warmup_requests),
        "{}",
        s.warmup_requests
    );
    assert!(s.requests_completed > 0);
    assert_eq!(
        s.requests_completed + s.warmup_requests,
        s.bytes_received / 64,
        "every echo is a measured or a warm-up request"
    );
    assert_eq!((s.mismatches, s.errors_total), (0, 0), "{:?}", s.errors);
    assert_eq!(s.bytes_verified, s.bytes_received);
    assert_eq!(s.latency_us.count, s.requests_completed);
    let raw = s
        .latency_raw_us
        .as_ref()
        .expect("open loop has raw latency");
    assert_eq!(raw.count, s.requests_completed);
    let per_connection: u64 = run.rows.iter().map(|r| r.requests).sum();
    assert_eq!(per_connection, s.requests_completed);
    // A wall time: the measured second and the drain, without the warm-up.
    assert!(
        (0.9..3.0).contains(&s.duration_s),
        "duration_s {}",
        s.duration_s
    );
    let timeline_requests: u64 = csv::Reader::from_path(run.dir.join("timeline.csv"))
        .unwrap()
        .deserialize::<echolab::load::measurements::TimelineRow>()
        .map(|r| r.unwrap().requests)
        .sum();
    assert_eq!(timeline_requests, s.requests_completed);
    let summary = &stopped.summary;
    assert_eq!(count(summary, "bytes_in"), s.bytes_sent, "server bytes_in");
    assert_eq!(count(summary, "bytes_out"), s.bytes_received);
    let _ = std::fs::remove_dir_all(&run.dir);
}

/// `echolab merge` keeps the warm-up the parts share, adds their warm-up requests, and
/// refuses parts measured after different warm-ups.
#[test]
fn merge_keeps_the_warmup_and_refuses_parts_that_differ() {
    let server = Server::start("epoll", &[]);
    let shard = |name: &str, shard: &str, warmup: &str| {
        let args = [
            "--connections",
            "4",
            "--rate",
            "400",
            "--warmup",
            warmup,
            "--duration",
            "0.5s",
            "--shard",
            shard,
        ];
        load(&server, name, &args)
    };
    let a = shard("warmup-shard-a", "0/2", "0.3s");
    let b = shard("warmup-shard-b", "1/2", "0.3s");
    let other = shard("warmup-shard-c", "1/2", "0.1s");
    let merged = out_dir("warmup-merged");
    let merge = |parts: [&Path; 2]| {
        common::output_within(
            Command::new(BIN)
                .arg("merge")
                .args(parts)
                .arg("--out")
                .arg(&merged),
            common::COMMAND_LIMIT,
        )
    };
    let out = merge([&a.dir, &b.dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: LoadSummary =
        serde_json::from_slice(&std::fs::read(merged.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s.warmup_s, 0.3);
    assert_eq!(
        s.warmup_requests,
        a.summary.warmup_requests + b.summary.warmup_requests
    );
    assert!(s.warmup_requests > 0);
    assert_eq!(
        s.requests_completed,
        a.summary.requests_completed + b.summary.requests_completed
    );
    assert_eq!(s.latency_us.count, s.requests_completed);
    // The measured time: the parts' span less the warm-up, not the whole wall time.
    assert!((0.4..3.0).contains(&s.duration_s), "{}", s.duration_s);
    let out = merge([&a.dir, &other.dir]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("warm-up"), "{stderr}");
    stop_when_idle(server);
    for dir in [&a.dir, &b.dir, &other.dir, &merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn an_idle_timeout_of_zero_is_a_usage_error() {
    let out = std::process::Command::new(common::BIN)
        .args(["serve", "--model", "epoll", "--idle-timeout", "0s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--idle-timeout") && stderr.contains("must be above 0"),
        "{stderr}"
    );
}

/// SIGTERM while a request's work runs (`--work-us`, 1 s of CPU at its bound) ends the work
/// at once: the connection closes without the echo (a request whose work was cut short
/// has no answer; before, the server finished the work, echoed, then exited) and the
/// server exits with its normal status. Every model spends the work on the thread that
/// read the request, so the condition waited for is the same for each: the server's CPU
/// time grows by more than an idle server uses, so it is spinning in the work.
#[test]
fn sigterm_during_a_requests_work_closes_without_the_echo() {
    for model in common::model_names() {
        let server = Server::start(model, &["--work-us", "1000000"]);
        let mut stream = server.connect();
        let before = server.cpu_seconds();
        stream.write_all(b"ping").unwrap();
        // 50 ms of CPU (5 clock ticks): an idle server uses none; the work uses 1 s.
        while server.cpu_seconds() < before + 0.05 {
            std::thread::sleep(Duration::from_millis(1));
        }
        server.sigterm();
        common::expect_server_eof(&mut stream);
        let stopped = server.wait_stopped();
        assert!(stopped.status.success(), "{model}: {}", stopped.stderr);
        assert_eq!(count(&stopped.summary, "bytes_in"), 4, "{model}");
        assert_eq!(count(&stopped.summary, "bytes_out"), 0, "{model}");
        assert_eq!(
            reason_count(&stopped.summary, "closed", "shutdown"),
            1,
            "{model}"
        );
    }
}
