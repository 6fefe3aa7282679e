//! `echolab serve` itself: a port in use, usage errors, leftovers of a killed parent, uring at the fd limit.

use super::*;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

#[test]
fn uring_with_two_workers_at_the_fd_limit_answers_or_closes_every_connection() {
    let _guard = heavy();
    raise_fd_limit();
    const CONNECTIONS: usize = 300;
    // The race lost about one round in five before the fix; a fixed round takes a second.
    for round in 0..12 {
        let server = Server::start_with("uring", &["--workers", "2"], |command| {
            limit_in_child(command, libc::RLIMIT_NOFILE, 100)
        });
        let mut streams: Vec<TcpStream> = (0..CONNECTIONS)
            .map(|_| {
                let mut stream = TcpStream::connect(server.addr).unwrap();
                stream.write_all(b"hello").unwrap();
                stream.set_nonblocking(true).unwrap();
                stream
            })
            .collect();
        // Each connection must get its echo or an EOF/reset; a generous bound, not a timing.
        let mut waiting: Vec<usize> = (0..CONNECTIONS).collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !waiting.is_empty() && Instant::now() < deadline {
            waiting.retain(|&i| {
                let mut buf = [0u8; 16];
                match streams[i].read(&mut buf) {
                    Ok(0) => false,
                    Ok(n) => {
                        assert_eq!(&buf[..n], &b"hello"[..n], "connection {i}: wrong echo");
                        false
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => true,
                    Err(_) => false,
                }
            });
            std::thread::sleep(Duration::from_millis(20));
        }
        let hanging = waiting.len();
        drop(streams.drain(..));
        let stopped = server.stop();
        assert_eq!(
            hanging, 0,
            "round {round}: {hanging} of {CONNECTIONS} connections got neither an echo nor a close"
        );
        let summary = &stopped.summary;
        let refused: u64 = summary["refused"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
        assert_eq!(
            common::count(summary, "accepted") + refused,
            CONNECTIONS as u64,
            "round {round}: accepted + refused: {summary}"
        );
    }
}

#[test]
fn a_second_server_on_a_port_in_use_exits_1_saying_so() {
    let first = Server::start("epoll", &["--workers", "1"]);
    let addr = first.addr.to_string();
    for model in ["threads", "epoll"] {
        // A server that starts would run until killed: it must exit at once instead.
        let out = echolab(&["serve", "--model", model, "--addr", &addr]);
        assert_eq!(out.status.code(), Some(1), "{model}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("address already in use"),
            "{model}: {}",
            stderr(&out)
        );
    }
    // The first server still has every connection.
    let mut stream = first.connect();
    assert_eq!(common::echo_once(&mut stream, b"mine"), b"mine");
    drop(stream);
    let stopped = first.stop();
    assert_eq!(common::count(&stopped.summary, "accepted"), 1);
}

#[test]
fn serve_processes_removes_what_a_killed_parent_left_in_tmp() {
    // A PID that ran and is gone: its echolab-processes directory is a leftover.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let stale = std::env::temp_dir().join(format!("echolab-processes-{pid}"));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("summary-0.json"), "{}").unwrap();
    let server = Server::start("epoll", &["--processes", "2", "--workers", "1"]);
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{}", stopped.stderr);
    assert!(!stale.exists(), "{} is still there", stale.display());
}

/// Usage errors exit 2 everywhere: `serve --workers 0` (it exited 1) and `serve
/// --max-conns 0` (it was accepted, while the scenario key `max_conns = 0` is refused).
#[test]
fn serve_usage_errors_exit_2() {
    for (flag, value) in [("--workers", "0"), ("--max-conns", "0")] {
        let out = echolab(&[
            "serve",
            "--model",
            "epoll",
            "--addr",
            "127.0.0.1:0",
            flag,
            value,
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(flag), "{flag}: {}", stderr(&out));
    }
}
