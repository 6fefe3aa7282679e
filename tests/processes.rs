//! `--processes P`: P server processes on one port hold more connections than one
//! process's fd limit, and report one log and one summary with exact totals.
//!
//! The big test needs more client sockets than one process may open and more than one
//! source address has ephemeral ports: it re-runs this test binary as client workers
//! (the ignored `client_worker` entry, run with `--ignored` and `ECHOLAB_CLIENT_WORKER`
//! set), each binding its sockets to 127.0.0.2 or 127.0.0.3 with
//! IP_BIND_ADDRESS_NO_PORT. Its connection count comes from this machine's fd limit and
//! port range, read at run time.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const WORKER_ENV: &str = "ECHOLAB_CLIENT_WORKER";

/// A client worker: `ECHOLAB_CLIENT_WORKER=ADDR,SOURCE_IP,COUNT,SEED` opens COUNT
/// connections from SOURCE_IP, echoes one message on each (checked byte for byte),
/// prints `ready COUNT`, and holds them until its stdin closes.
#[test]
#[ignore = "a client process of processes_hold_45k_connections, not a test of its own"]
fn client_worker() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    raise_fd_limit();
    let parts: Vec<&str> = spec.split(',').collect();
    let target: SocketAddr = parts[0].parse().unwrap();
    let source: Ipv4Addr = parts[1].parse().unwrap();
    let n: usize = parts[2].parse().unwrap();
    let seed: usize = parts[3].parse().unwrap();
    let mut streams = Vec::with_capacity(n);
    for i in 0..n {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("socket");
        let one: libc::c_int = 1;
        // SAFETY: setsockopt with a live fd and a c_int option value.
        let rc = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "IP_BIND_ADDRESS_NO_PORT");
        socket
            .bind(&SocketAddrV4::new(source, 0).into())
            .expect("bind source address");
        socket
            .connect(&target.into())
            .unwrap_or_else(|e| panic!("connection {i} from {source}: {e}"));
        let mut stream: TcpStream = socket.into();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let message = format!("client {} says hello\n", seed + i);
        assert_eq!(
            echo_once(&mut stream, message.as_bytes()),
            message.as_bytes()
        );
        streams.push(stream);
    }
    println!("ready {n}");
    std::io::stdout().flush().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    drop(streams);
}

/// Three uring processes hold 45 000 connections (over twice one process's fd limit of
/// 20 000 on the reference machine; fewer where the limits are lower), each echoing one
/// message; the merged summary and log count every one exactly.
#[test]
fn processes_hold_45k_connections() {
    const WORKERS: usize = 4;
    let _heavy = heavy();
    let (_, fd_hard) = fd_limits();
    // Each server process gets about a third of the connections (SO_REUSEPORT hashes them),
    // so 2.4 x (its fds less a margin) leaves each one a fifth spare; each source address
    // carries half the connections within its ephemeral port range.
    let by_fds = fd_hard.saturating_sub(1000) * 12 / 5;
    let by_ports = ephemeral_ports() * 9 / 5;
    let conns = 45_000.min(by_fds).min(by_ports) as usize / WORKERS * WORKERS;
    let server = Server::start("uring", &["--processes", "3", "--workers", "1"]);
    assert_eq!(children(server.pid() as u32).len(), 3);

    let exe = std::env::current_exe().unwrap();
    let per_worker = conns / WORKERS;
    let mut workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let source = if w % 2 == 0 { "127.0.0.2" } else { "127.0.0.3" };
            Command::new(&exe)
                .args([
                    "--exact",
                    "client_worker",
                    "--ignored",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env(
                    WORKER_ENV,
                    format!("{},{source},{per_worker},{}", server.addr, w * per_worker),
                )
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("spawn client worker")
        })
        .collect();
    let mut outputs = Vec::with_capacity(WORKERS);
    for (w, worker) in workers.iter_mut().enumerate() {
        let mut lines = BufReader::new(worker.stdout.take().unwrap()).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.contains(&format!("ready {per_worker}")));
        assert!(ready, "client worker {w} did not open its connections");
        // Keep reading: the test harness in the worker still reports its result.
        outputs.push(lines);
    }
    // Every connection is open and has echoed; now the clients close them all.
    for worker in &mut workers {
        drop(worker.stdin.take());
    }
    for (mut worker, lines) in workers.into_iter().zip(outputs) {
        lines.map_while(Result::ok).for_each(drop);
        let status = wait_timeout(&mut worker, Duration::from_secs(60)).expect("worker exits");
        assert!(status.success(), "a client worker failed");
    }

    let stopped = server.stop();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    let summary = &stopped.summary;
    let message_bytes: u64 = (0..conns)
        .map(|i| format!("client {i} says hello\n").len() as u64)
        .sum();
    assert_eq!(count(summary, "processes"), 3);
    assert_eq!(count(summary, "accepted"), conns as u64);
    assert_eq!(count(summary, "max_concurrent"), conns as u64);
    assert_eq!(count(summary, "bytes_in"), message_bytes);
    assert_eq!(count(summary, "bytes_out"), message_bytes);
    let closed: u64 = ["client_closed", "shutdown", "reset"]
        .iter()
        .map(|reason| reason_count(summary, "closed", reason))
        .sum();
    assert_eq!(closed, conns as u64, "closed: {}", summary["closed"]);
    assert_eq!(stopped.log.len(), conns);
    let hosts: Vec<&str> = summary["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["127.0.0.2", "127.0.0.3"]);
}

/// `--processes 2` for a model: exact totals over both processes, one log, and the
/// listening line of the parent; a child killed mid-run is reported while the other
/// keeps serving.
fn two_processes(model: &str) {
    let server = Server::start(model, &["--processes", "2", "--workers", "1"]);
    let parent = server.pid() as u64;
    let kids = children(server.pid() as u32);
    assert_eq!(kids.len(), 2, "{model}: children {kids:?}");
    let mut expected = 0u64;
    let mut held: Vec<TcpStream> = Vec::new();
    for i in 0..20 {
        let data = payload(500 + i * 100, i as u64);
        expected += data.len() as u64;
        if i % 2 == 0 {
            assert_eq!(echo_stream(server.connect(), &data), data);
        } else {
            let mut stream = server.connect();
            assert_eq!(echo_once(&mut stream, &data), data);
            held.push(stream);
        }
    }
    server.wait_accepted(Duration::from_secs(30));
    let stopped = server.stop();
    assert!(stopped.status.success(), "{model}: {}", stopped.stderr);
    let summary = &stopped.summary;
    assert_eq!(count(summary, "processes"), 2);
    assert_eq!(count(summary, "pid"), parent);
    assert_eq!(count(summary, "accepted"), 20);
    assert_eq!(reason_count(summary, "closed", "client_closed"), 10);
    assert_eq!(reason_count(summary, "closed", "shutdown"), 10);
    assert_eq!(count(summary, "bytes_in"), expected);
    assert_eq!(count(summary, "bytes_out"), expected);
    assert_eq!(stopped.log.len(), 20);
    assert_eq!(
        stopped.stderr.matches("echolab serve summary").count(),
        1,
        "{model}: one summary, not one per child: {}",
        stopped.stderr
    );
    drop(held);
}

#[test]
fn poll_two_processes() {
    two_processes("poll");
}

#[test]
fn tokio_two_processes() {
    two_processes("tokio");
}

/// A child that dies is reported; the other keeps serving, and the parent still exits 0.
#[test]
fn a_dead_child_is_reported_and_the_rest_serve() {
    let server = Server::start("poll", &["--processes", "2"]);
    let parent = server.pid();
    let kids = children(parent as u32);
    assert_eq!(kids.len(), 2);
    signal(kids[0] as i32, libc::SIGKILL);
    // Until the parent notices (it reaps the child, then says so), a connection may still
    // land in the dead child's backlog; once it is reaped its listener is gone, every new
    // connection reaches the survivor, and the parent has said the others keep serving.
    let reaped = || !std::path::Path::new(&format!("/proc/{}", kids[0])).exists();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !reaped() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        reaped(),
        "the parent never reaped its killed child {}",
        kids[0]
    );
    for i in 0..10 {
        let data = payload(1000, i);
        assert_eq!(echo_stream(server.connect(), &data), data);
    }
    let line_pid = parent as u64;
    let stopped = server.stop();
    assert!(stopped.status.success(), "{}", stopped.stderr);
    assert!(
        stopped
            .stderr
            .contains("exited with signal 9; the others keep serving"),
        "{}",
        stopped.stderr
    );
    assert!(
        stopped.stderr.contains("left no summary"),
        "{}",
        stopped.stderr
    );
    assert_eq!(count(&stopped.summary, "pid"), line_pid);
    assert_eq!(count(&stopped.summary, "accepted"), 10);
    assert_eq!(stopped.log.len(), 10);
}

/// README, docs/models.md, docs/scenarios.md and `serve --help` named poll, epoll, uring
/// and tokio as the models that take `--processes`, while `serve` runs threads so too
/// (claim-2 does): each now names exactly the models `serve --processes 2` starts, the
/// others refused with exit 2.
#[test]
fn the_docs_name_the_models_that_take_processes() {
    let mut accepted = Vec::new();
    for model in model_names() {
        let mut child = Command::new(BIN)
            .args(["serve", "--model", model, "--processes", "2"])
            .args(["--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A started server says where it listens; a refused one exits with nothing said.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if line.starts_with("listening on") {
            accepted.push(model);
            signal(child.id() as i32, libc::SIGTERM);
        }
        let status = wait_timeout(&mut child, Duration::from_secs(30)).expect("serve ended");
        if !line.starts_with("listening on") {
            assert_eq!(status.code(), Some(2), "{model}: {line:?}");
        }
    }
    assert_eq!(accepted, ["threads", "poll", "epoll", "uring", "tokio"]);
    let list = format!("({}", accepted.join(", "));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "docs/models.md", "docs/scenarios.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let said = text.replace('\n', " ");
        assert!(said.contains(&list), "{doc} does not say {list}");
    }
    let help = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains(&list),
        "serve --help does not say {list}: {help}"
    );
}
