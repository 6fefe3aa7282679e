//! The epoll model over real loopback sockets: every trigger x accept mode, fairness
//! under edge triggering, the spread over workers, shutdown, backpressure and options.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{
    count, echo_once, echo_stream, expect_server_eof, limit_in_child, payload,
    push_without_reading, reason_count, server_held_bytes, Server, Stopped,
};

const TRIGGERS: [&str; 2] = ["edge", "level"];
const ACCEPT_MODES: [&str; 3] = ["dispatcher", "reuseport", "exclusive"];

/// Sizes from 1 B to 1 MiB, cycled over the connections.
const SIZES: [usize; 8] = [1, 17, 333, 1000, 4096, 65_536, 200_000, 1 << 20];

fn start(trigger: &str, accept: &str, workers: &str, extra: &[&str]) -> Server {
    let mut args = vec![
        "--workers",
        workers,
        "--trigger",
        trigger,
        "--accept",
        accept,
    ];
    args.extend_from_slice(extra);
    Server::start("epoll", &args)
}

/// Per-worker connection counts from the `epoll worker N served M connections` lines.
fn served_per_worker(stopped: &Stopped) -> Vec<u64> {
    stopped
        .stderr
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("echolab serve: epoll worker ")?;
            let mut words = rest.split_whitespace();
            let _id = words.next()?;
            (words.next()? == "served").then_some(())?;
            words.next()?.parse().ok()
        })
        .collect()
}

#[test]
fn every_trigger_and_accept_mode_echoes_200_concurrent_connections_exactly() {
    for trigger in TRIGGERS {
        for accept in ACCEPT_MODES {
            let label = format!("--trigger {trigger} --accept {accept}");
            let server = start(trigger, accept, "2", &[]);
            // All 200 are connected before any data flows, so they are open at once.
            let streams: Vec<TcpStream> = (0..200).map(|_| server.connect()).collect();
            let mut expected_by_port = HashMap::new();
            let mut clients = Vec::new();
            for (i, stream) in streams.into_iter().enumerate() {
                let size = SIZES[i % SIZES.len()];
                expected_by_port.insert(stream.local_addr().unwrap().port(), size as u64);
                clients.push(std::thread::spawn(move || {
                    let data = payload(size, i as u64);
                    let got = echo_stream(stream, &data);
                    assert_eq!(got.len(), data.len(), "connection {i}: echo length");
                    assert!(got == data, "connection {i}: echo differs");
                }));
            }
            for client in clients {
                client
                    .join()
                    .unwrap_or_else(|_| panic!("{label}: a client failed"));
            }
            let sent: u64 = expected_by_port.values().sum();

            let stopped = server.stop();
            assert!(stopped.status.success(), "{label}: {}", stopped.stderr);
            let summary = &stopped.summary;
            assert_eq!(count(summary, "accepted"), 200, "{label}");
            assert_eq!(count(summary, "workers"), 2, "{label}");
            assert_eq!(count(summary, "bytes_in"), sent, "{label}");
            assert_eq!(count(summary, "bytes_out"), sent, "{label}");
            assert_eq!(
                reason_count(summary, "closed", "client_closed"),
                200,
                "{label}"
            );
            assert_eq!(stopped.log.len(), 200, "{label}: log rows");
            for row in &stopped.log {
                let size = expected_by_port
                    .get(&row.peer_port)
                    .unwrap_or_else(|| panic!("{label}: unknown peer port {}", row.peer_port));
                assert_eq!((row.bytes_in, row.bytes_out), (*size, *size), "{label}");
                assert_eq!(row.close_reason, "client_closed", "{label}");
            }
            assert_eq!(
                stopped.log.iter().map(|r| r.reads).sum::<u64>(),
                count(summary, "reads"),
                "{label}"
            );
            assert_eq!(served_per_worker(&stopped).iter().sum::<u64>(), 200);
        }
    }
}

/// One client streams as fast as it can on a single worker while 100 others each
/// complete 20 small round trips: the budget and ready list keep them served. The stream
/// runs until they are done (at most 4 GiB), so how fast either side is on this machine
/// does not decide the test: only a worker that served the stream alone would.
#[test]
fn small_clients_complete_while_one_client_streams() {
    const CHUNK: usize = 64 << 10;
    const CAP: u64 = 4 << 30;
    let _heavy = common::heavy();
    for trigger in TRIGGERS {
        let server = start(trigger, "dispatcher", "1", &[]);
        let big = server.connect();
        // A stalled connection must fail the test, not hang it.
        big.set_write_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut big_reader = big.try_clone().unwrap();
        let received = Arc::new(AtomicU64::new(0));
        let small_done = Arc::new(AtomicBool::new(false));
        let chunk = Arc::new(payload(CHUNK, 99));

        let writer = {
            let (mut big, chunk, small_done) = (big, Arc::clone(&chunk), Arc::clone(&small_done));
            std::thread::spawn(move || {
                let mut sent = 0u64;
                // A few more chunks after the small clients are done, so the stream
                // still flows as they finish.
                let mut tail = 16;
                while tail > 0 && sent < CAP {
                    big.write_all(&chunk).expect("stream write");
                    sent += CHUNK as u64;
                    if small_done.load(Ordering::Acquire) {
                        tail -= 1;
                    }
                }
                big.shutdown(Shutdown::Write).expect("half-close");
                sent
            })
        };
        let reader = {
            let (received, chunk) = (Arc::clone(&received), Arc::clone(&chunk));
            std::thread::spawn(move || {
                let mut buf = vec![0u8; CHUNK];
                let mut total = 0usize;
                loop {
                    let n = big_reader.read(&mut buf).expect("stream read");
                    if n == 0 {
                        return total as u64;
                    }
                    for (k, byte) in buf[..n].iter().enumerate() {
                        assert_eq!(
                            *byte,
                            chunk[(total + k) % CHUNK],
                            "stream byte {}",
                            total + k
                        );
                    }
                    total += n;
                    received.store(total as u64, Ordering::Release);
                }
            })
        };
        // Start the small clients once the stream is flowing; a stream that never
        // starts fails here rather than letting the small clients run alone.
        let deadline = Instant::now() + Duration::from_secs(30);
        while received.load(Ordering::Acquire) < (1 << 20) {
            assert!(
                Instant::now() < deadline,
                "--trigger {trigger}: the stream did not start within 30 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let small: Vec<_> = (0..100u64)
            .map(|client| {
                let mut stream = server.connect();
                std::thread::spawn(move || {
                    for round in 0..20u64 {
                        let data = payload(64, client * 1000 + round);
                        assert_eq!(echo_once(&mut stream, &data), data, "client {client}");
                    }
                })
            })
            .collect();
        for client in small {
            client.join().expect("a small client failed");
        }
        small_done.store(true, Ordering::Release);
        let streamed_when_small_done = received.load(Ordering::Acquire);
        let sent = writer.join().expect("stream writer");
        assert_eq!(reader.join().expect("stream reader"), sent);
        // Fair: all 100 finished their 20 round trips while the stream was still going,
        // not after the one worker had echoed the whole of it.
        assert!(
            sent < CAP && streamed_when_small_done < sent,
            "--trigger {trigger}: the small clients finished only after the stream \
             ({streamed_when_small_done} of {sent} bytes echoed)"
        );

        let stopped = server.stop();
        assert!(stopped.status.success());
        let small_bytes = 100 * 20 * 64;
        assert_eq!(count(&stopped.summary, "accepted"), 101);
        assert_eq!(count(&stopped.summary, "bytes_in"), sent + small_bytes);
        assert_eq!(count(&stopped.summary, "bytes_out"), sent + small_bytes);
    }
}

/// 100 connections open at once over 2 workers; then SIGTERM closes them all as `shutdown`.
#[test]
fn connections_spread_over_workers_and_shutdown_closes_them() {
    for accept in ACCEPT_MODES {
        let server = start("edge", accept, "2", &[]);
        if accept == "reuseport" {
            // The listening line comes before serve() binds the second listener; a
            // connection made before that can only go to the first.
            wait_for_listeners(server.addr.port(), 2);
        }
        let mut streams: Vec<TcpStream> = (0..100).map(|_| server.connect()).collect();
        for (i, stream) in streams.iter_mut().enumerate() {
            let data = payload(10, i as u64);
            assert_eq!(echo_once(stream, &data), data);
        }
        // Every connection has been served, so each is in a worker's table now. At
        // SIGTERM the server closes each one cleanly (EOF, never a reset or a hang).
        server.sigterm();
        for stream in &mut streams {
            expect_server_eof(stream);
        }
        let stopped = server.wait_stopped();
        assert!(stopped.status.success(), "{accept}: {}", stopped.stderr);
        assert_eq!(count(&stopped.summary, "accepted"), 100, "{accept}");
        assert_eq!(
            reason_count(&stopped.summary, "closed", "shutdown"),
            100,
            "{accept}"
        );
        assert_eq!(stopped.log.len(), 100, "{accept}");
        let served = served_per_worker(&stopped);
        assert_eq!(served.len(), 2, "{accept}: {}", stopped.stderr);
        assert_eq!(served.iter().sum::<u64>(), 100, "{accept}");
        match accept {
            // Round-robin hand-off: exactly half each.
            "dispatcher" => assert_eq!(served, [50, 50]),
            // The kernel hashes 100 distinct source ports over 2 listeners.
            "reuseport" => assert!(served.iter().all(|&n| n > 0), "{served:?}"),
            // EPOLLEXCLUSIVE wakes whichever worker waits first: no spread is promised.
            _ => {}
        }
    }
}

/// Waits (at most 10 s) until `count` sockets listen on 127.0.0.1:`port` (/proc/net/tcp).
fn wait_for_listeners(port: u16, count: usize) {
    let local = format!("0100007F:{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
        let listening = table
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .filter(|fields| fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A"))
            .count();
        if listening >= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{listening} of {count} listeners on port {port} after 10 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A client that pushes up to 16 MiB without reading drives its connection into
/// backpressure (EPOLLIN off): the server must stop reading, holding at most
/// --max-pending (16 KiB) plus one 64 KiB read, as the kernel's queues show; then, once
/// the client reads, turning EPOLLIN back on must not lose an edge.
#[test]
fn backpressure_resumes_under_both_triggers() {
    const TOTAL: usize = 16 << 20;
    const HELD_BOUND: u64 = (16 + 64) << 10;
    for trigger in TRIGGERS {
        let server = start(trigger, "reuseport", "2", &["--max-pending", "16KiB"]);
        // Warm both workers' scratch buffers so they are in the RSS baseline.
        for _ in 0..8 {
            assert_eq!(echo_stream(server.connect(), &[7u8; 70_000]), [7u8; 70_000]);
        }
        let rss_before = server.rss_bytes();
        let mut stream = server.connect();
        // What push_without_reading sends: the same 1 MiB payload over and over.
        let data = Arc::new(payload(1 << 20, 99).repeat(TOTAL >> 20));
        // Not reading: push until the socket stays full.
        stream.set_nonblocking(true).unwrap();
        let pushed = push_without_reading(&stream, TOTAL, Duration::from_secs(5));
        assert!(
            pushed < TOTAL,
            "--trigger {trigger}: the server read all 16 MiB"
        );
        let held = server_held_bytes(&stream, pushed as u64);
        assert!(
            held <= HELD_BOUND,
            "--trigger {trigger}: the server holds {held} B of a client that does not read"
        );
        let grown = server.rss_bytes().saturating_sub(rss_before);
        assert!(
            grown < 1 << 20,
            "--trigger {trigger}: RSS grew {grown} B while the client did not read"
        );
        stream.set_nonblocking(false).unwrap();
        let writer = {
            let (mut stream, data) = (stream.try_clone().unwrap(), Arc::clone(&data));
            std::thread::spawn(move || {
                stream.write_all(&data[pushed..]).expect("write");
                stream.shutdown(Shutdown::Write).expect("half-close");
            })
        };
        let mut got = Vec::with_capacity(TOTAL);
        stream.read_to_end(&mut got).expect("read echo");
        writer.join().expect("writer");
        assert_eq!(got.len(), TOTAL, "--trigger {trigger}");
        assert!(got == *data, "--trigger {trigger}: echo differs");
        let stopped = server.stop();
        let warm = 8 * 70_000;
        assert_eq!(count(&stopped.summary, "bytes_out"), (TOTAL + warm) as u64);
        assert_eq!(reason_count(&stopped.summary, "closed", "client_closed"), 9);
    }
}

#[test]
fn idle_connections_are_closed_after_the_idle_timeout() {
    let server = start("edge", "exclusive", "2", &["--idle-timeout", "300ms"]);
    let mut streams: Vec<TcpStream> = (0..3).map(|_| server.connect()).collect();
    for stream in &mut streams {
        assert_eq!(echo_once(stream, b"hello"), b"hello");
    }
    for mut stream in streams {
        let mut rest = Vec::new();
        // Returns once the server closes the connection (read timeout 30 s).
        stream
            .read_to_end(&mut rest)
            .expect("server closes the idle connection");
        assert!(rest.is_empty());
    }
    let stopped = server.stop();
    assert_eq!(reason_count(&stopped.summary, "closed", "idle_timeout"), 3);
}

#[test]
fn zero_workers_is_a_clear_error() {
    let output = common::output_within(
        std::process::Command::new(common::BIN).args([
            "serve",
            "--model",
            "epoll",
            "--addr",
            "127.0.0.1:0",
            "--workers",
            "0",
        ]),
        common::COMMAND_LIMIT,
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--workers must be at least 1"), "{stderr}");
    assert!(output.stdout.is_empty(), "no listening line expected");
}

/// Under a 64-fd limit every accept mode serves what fits, counts the rest as refused
/// (fd_limit) and keeps running: no worker may fail for want of an fd of its own.
#[test]
fn fd_exhaustion_in_every_accept_mode() {
    const CLIENTS: usize = 100;
    for accept in ACCEPT_MODES {
        let args = ["--workers", "2", "--accept", accept];
        let server = Server::start_with("epoll", &args, |command| {
            limit_in_child(command, libc::RLIMIT_NOFILE, 64)
        });
        let mut streams: Vec<TcpStream> = (0..CLIENTS).map(|_| server.connect()).collect();
        server.wait_accepted(Duration::from_secs(30));
        let mut served = 0;
        for (i, stream) in streams.iter_mut().enumerate() {
            let message = payload(8, i as u64);
            if stream.write_all(&message).is_err() {
                continue;
            }
            let mut got = [0u8; 8];
            if stream.read_exact(&mut got).is_ok() {
                assert_eq!(got[..], message[..], "{accept}");
                served += 1;
            }
        }
        assert!(
            served > 0 && served < CLIENTS,
            "{accept}: {served} of {CLIENTS} served under a 64 fd limit"
        );
        drop(streams);
        let stopped = server.stop();
        assert!(stopped.status.success(), "{accept}: {}", stopped.stderr);
        let summary = &stopped.summary;
        assert_eq!(count(summary, "accepted"), served as u64, "{accept}");
        assert_eq!(
            reason_count(summary, "refused", "fd_limit"),
            (CLIENTS - served) as u64,
            "{accept}"
        );
    }
}
