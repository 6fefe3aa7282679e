//! `echolab load` against small independent echo servers written here: a thread-per-connection
//! server (with faults: a corrupted byte, a 200 ms stall) and an epoll server run as child
//! processes of this test binary (to be killed, or to hold 25 000 connections over two
//! SO_REUSEPORT processes).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use echolab::load::measurements::{LoadConnRecord, LoadSummary, TimelineRow};
use echolab::load::merge::read_hlog;

mod common;

use common::{load_within, out_dir, output_within, COMMAND_LIMIT};

const ECHOLAB: &str = env!("CARGO_BIN_EXE_echolab");

/// Faults the thread server can inject.
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Flip this byte (stream offset) of the first connection's echo.
    corrupt_at: Option<u64>,
    /// Stall 200 ms once, after this many bytes of the first connection.
    stall_after: Option<u64>,
}

struct ThreadServer {
    addr: SocketAddr,
    bytes: Arc<AtomicU64>,
}

fn thread_server(faults: Faults) -> ThreadServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let bytes = Arc::new(AtomicU64::new(0));
    let total = Arc::clone(&bytes);
    let stalled = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for (index, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let total = Arc::clone(&total);
            let stalled = Arc::clone(&stalled);
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                let mut offset = 0u64;
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if index == 0 {
                        if let Some(at) = faults.corrupt_at {
                            if (offset..offset + n as u64).contains(&at) {
                                buf[(at - offset) as usize] ^= 0x20;
                            }
                        }
                        if let Some(after) = faults.stall_after {
                            if offset >= after && !stalled.swap(true, Ordering::SeqCst) {
                                std::thread::sleep(Duration::from_millis(200));
                            }
                        }
                    }
                    offset += n as u64;
                    total.fetch_add(n as u64, Ordering::SeqCst);
                    if stream.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    ThreadServer { addr, bytes }
}

/// An epoll echo server in a child process (this test binary re-run as the ignored test
/// `epoll_echo_server_child`), listening with SO_REUSEPORT on `port`.
fn spawn_epoll_server(port: u16, ready: &Path) -> Child {
    let _ = std::fs::remove_file(ready);
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "epoll_echo_server_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("ECHOLAB_TEST_SERVER_PORT", port.to_string())
        .env("ECHOLAB_TEST_SERVER_READY", ready)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "test server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
#[ignore = "run as a child process by the tests that need a separate server"]
fn epoll_echo_server_child() {
    let Ok(port) = std::env::var("ECHOLAB_TEST_SERVER_PORT") else {
        return;
    };
    let ready = std::env::var("ECHOLAB_TEST_SERVER_READY").unwrap();
    epoll_echo_server(port.parse().unwrap(), Path::new(&ready));
}

/// Level-triggered epoll echo server; a connection with unsent echo is not read until it drains.
fn epoll_echo_server(port: u16, ready: &Path) {
    use std::collections::HashMap;
    use std::os::fd::{AsRawFd, IntoRawFd};
    echolab::sys::raise_fd_limit().unwrap();
    echolab::sys::ignore_sigpipe();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_reuse_port(true).unwrap();
    socket.set_reuse_address(true).unwrap();
    socket.set_nonblocking(true).unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    socket.bind(&addr.into()).unwrap();
    socket.listen(4096).unwrap();
    std::fs::write(ready, b"ready").unwrap();
    let lfd = socket.as_raw_fd();
    // SAFETY: plain epoll calls on descriptors owned by this function.
    unsafe {
        let ep = libc::epoll_create1(0);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: lfd as u64,
        };
        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, lfd, &mut ev);
        let mut pending: HashMap<i32, Vec<u8>> = HashMap::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 512];
        // Bounded: the parent kills this process; give up on our own after 10 minutes.
        let deadline = Instant::now() + Duration::from_secs(600);
        while Instant::now() < deadline {
            let n = libc::epoll_wait(ep, events.as_mut_ptr(), 512, 1000);
            for e in &events[..n.max(0) as usize] {
                let fd = e.u64 as i32;
                if fd == lfd {
                    loop {
                        let c = libc::accept4(
                            lfd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_NONBLOCK,
                        );
                        if c < 0 {
                            break;
                        }
                        let mut ev = libc::epoll_event {
                            events: libc::EPOLLIN as u32,
                            u64: c as u64,
                        };
                        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, c, &mut ev);
                    }
                    continue;
                }
                let mut close = false;
                if let Some(out) = pending.get_mut(&fd) {
                    let w = libc::write(fd, out.as_ptr().cast(), out.len());
                    if w > 0 {
                        out.drain(..w as usize);
                    } else if w < 0 && *libc::__errno_location() != libc::EAGAIN {
                        close = true;
                    }
                    if out.is_empty() && !close {
                        pending.remove(&fd);
                        let mut ev = libc::epoll_event {
                            events: libc::EPOLLIN as u32,
                            u64: fd as u64,
                        };
                        libc::epoll_ctl(ep, libc::EPOLL_CTL_MOD, fd, &mut ev);
                    }
                } else {
                    let r = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                    if r == 0 || (r < 0 && *libc::__errno_location() != libc::EAGAIN) {
                        close = true;
                    } else if r > 0 {
                        let r = r as usize;
                        let w = libc::write(fd, buf.as_ptr().cast(), r);
                        let w = if w < 0 { 0 } else { w as usize };
                        if w < r {
                            pending.insert(fd, buf[w..r].to_vec());
                            let mut ev = libc::epoll_event {
                                events: libc::EPOLLOUT as u32,
                                u64: fd as u64,
                            };
                            libc::epoll_ctl(ep, libc::EPOLL_CTL_MOD, fd, &mut ev);
                        }
                    }
                }
                if close {
                    pending.remove(&fd);
                    libc::close(fd);
                }
            }
        }
    }
    let _ = socket.into_raw_fd();
}

/// Asserts the run exited 1 with `message` on stderr.
fn assert_exit_failed(out: &Output, message: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
}

/// Asserts the run exited 0, showing its stderr when it did not.
fn assert_exit_ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The load's event-loop engines: the tests that name them pass on both.
const ENGINES: [&str; 2] = ["epoll", "uring"];

fn summary(dir: &Path) -> LoadSummary {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn connections(dir: &Path) -> Vec<LoadConnRecord> {
    csv::Reader::from_path(dir.join("connections.csv"))
        .unwrap()
        .deserialize()
        .map(|r| r.unwrap())
        .collect()
}

fn timeline(dir: &Path) -> Vec<TimelineRow> {
    csv::Reader::from_path(dir.join("timeline.csv"))
        .unwrap()
        .deserialize()
        .map(|r| r.unwrap())
        .collect()
}

/// Requests in latency.hlog: (untagged, tagged raw).
fn hlog_counts(dir: &Path) -> (u64, u64) {
    let (_, intervals) = read_hlog(&dir.join("latency.hlog")).unwrap();
    let count = |raw: bool| {
        intervals
            .iter()
            .filter(|i| i.raw == raw)
            .map(|i| i.histogram.len())
            .sum()
    };
    (count(false), count(true))
}

fn assert_summary_matches_files(dir: &Path) {
    let s = summary(dir);
    let rows = connections(dir);
    let sum = |f: fn(&LoadConnRecord) -> u64| rows.iter().map(f).sum::<u64>();
    assert_eq!(s.requests_completed, sum(|r| r.requests));
    assert_eq!(s.bytes_sent, sum(|r| r.bytes_sent));
    assert_eq!(s.bytes_received, sum(|r| r.bytes_received));
    assert_eq!(s.mismatches, sum(|r| r.mismatches));
    assert_eq!(s.errors_total, sum(|r| r.errors));
    let tl = timeline(dir);
    assert_eq!(
        s.requests_completed,
        tl.iter().map(|r| r.requests).sum::<u64>()
    );
    assert_eq!(s.bytes_received, tl.iter().map(|r| r.bytes).sum::<u64>());
    assert_eq!(s.latency_us.count, s.requests_completed);
    assert_eq!(hlog_counts(dir).0, s.requests_completed);
    let percentiles = std::fs::read_to_string(dir.join("percentiles.csv")).unwrap();
    assert!(percentiles.starts_with("percentile,latency_us,latency_raw_us\n"));
    if s.requests_completed > 0 {
        let last = percentiles.lines().last().unwrap();
        assert!(last.starts_with("100.000000,"), "{last}");
    }
}

#[test]
fn closed_loop_totals_are_exact() {
    for engine in ENGINES {
        closed_loop_totals_are_exact_with(engine);
    }
}

fn closed_loop_totals_are_exact_with(engine: &str) {
    let server = thread_server(Faults::default());
    let dir = out_dir(&format!("exact-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &server.addr.to_string(),
        "--connections",
        "8",
        "--requests",
        "50",
        "--size",
        "1000",
        "--pipeline",
        "2",
        "--threads",
        "2",
        // Held after their requests, so all 8 are open together however the two threads'
        // starts are spread (one thread's connections can finish before the other's open).
        "--hold",
        "1s",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert!(s.complete);
    assert!(!s.interrupted);
    assert_eq!(s.cut_short_reason, None);
    assert_eq!(s.mode, "closed");
    assert_eq!(s.connections_target, 8);
    assert_eq!(s.connections_established, 8);
    assert_eq!(s.max_concurrent, 8);
    assert_eq!(s.requests_completed, 400);
    assert_eq!(s.bytes_sent, 400_000);
    assert_eq!(s.bytes_received, 400_000);
    assert_eq!(s.bytes_verified, 400_000);
    assert_eq!(s.errors_total, 0);
    assert_eq!(s.latency_raw_us, None);
    assert_eq!(server.bytes.load(Ordering::SeqCst), 400_000);
    let rows = connections(&dir);
    assert_eq!(rows.len(), 8);
    assert!(rows
        .iter()
        .all(|r| r.requests == 50 && r.end == "done" && r.local_port > 0));
    assert_summary_matches_files(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("400 completed"), "{stdout}");
}

/// Messages of 1 MiB, two in flight: every send meets a full socket buffer (a short send
/// or EAGAIN, then a wait for room), and every byte still comes back in order.
#[test]
fn messages_larger_than_the_socket_buffers_stay_exact() {
    let server = thread_server(Faults::default());
    for engine in ENGINES {
        let dir = out_dir(&format!("large-{engine}"));
        let out = load_within(&[
            "--engine",
            engine,
            "--target",
            &server.addr.to_string(),
            "--connections",
            "4",
            "--requests",
            "5",
            "--size",
            "1MiB",
            "--pipeline",
            "2",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_exit_ok(&out);
        let s = summary(&dir);
        assert_eq!(s.requests_completed, 20, "{engine}");
        assert_eq!(s.bytes_sent, 20 << 20, "{engine}");
        assert_eq!(s.bytes_verified, 20 << 20, "{engine}");
        assert_eq!((s.mismatches, s.errors_total), (0, 0), "{engine}");
        assert_summary_matches_files(&dir);
    }
    assert_eq!(server.bytes.load(Ordering::SeqCst), 2 * (20 << 20));
}

#[test]
fn a_corrupted_byte_is_counted_as_a_mismatch() {
    for engine in ENGINES {
        a_corrupted_byte_is_counted_as_a_mismatch_with(engine);
    }
}

fn a_corrupted_byte_is_counted_as_a_mismatch_with(engine: &str) {
    let server = thread_server(Faults {
        corrupt_at: Some(5_500),
        ..Faults::default()
    });
    let dir = out_dir(&format!("mismatch-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--requests",
        "20",
        "--size",
        "1000",
        "--max-error-rate",
        "0",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a mismatch must fail --max-error-rate 0"
    );
    let s = summary(&dir);
    assert_eq!(s.mismatches, 1);
    assert_eq!(s.requests_completed, 19);
    assert_eq!(s.bytes_received, 20_000);
    assert_eq!(s.bytes_verified, 19_999);
    assert_eq!(s.errors_total, 1);
    assert_eq!(s.error_rate, 1.0 / 20.0);
    assert_summary_matches_files(&dir);
}

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
fn open_loop_latency_is_corrected_for_a_stall() {
    for engine in ENGINES {
        open_loop_latency_is_corrected_for_a_stall_with(engine);
    }
}

fn open_loop_latency_is_corrected_for_a_stall_with(engine: &str) {
    // 500 requests/s on one connection for 4 s; the server stalls 200 ms once after 1 s.
    let server = thread_server(Faults {
        stall_after: Some(16 * 500),
        ..Faults::default()
    });
    let dir = out_dir(&format!("stall-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--rate",
        "500",
        "--duration",
        "4s",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert_eq!(s.mode, "open");
    let raw = s.latency_raw_us.clone().unwrap();
    assert_eq!(raw.count, s.latency_us.count);
    assert_eq!(s.requests_completed, s.latency_us.count);
    // About 2000 requests: the ~100 scheduled during the stall waited up to 200 ms.
    assert!(s.requests_completed >= 1900, "{}", s.requests_completed);
    assert!(
        s.latency_us.p999 >= 150_000,
        "corrected p99.9 {}",
        s.latency_us.p999
    );
    assert!(
        s.latency_us.p99 >= 50_000,
        "corrected p99 {}",
        s.latency_us.p99
    );
    // Only the one request in flight during the stall saw it when measured from its send.
    assert!(raw.max >= 190_000, "raw max {}", raw.max);
    // Measured from the intended send, every request due in the stall's first 100 ms (50
    // at 500/s) waited 100 ms or more; measured from the actual send, only the one in
    // flight saw the stall. Wide of both on a shared machine: a scheduling hiccup may
    // delay a few sends by 150 ms, not ten.
    let (_, intervals) = read_hlog(&dir.join("latency.hlog")).unwrap();
    let at_least = |raw: bool, us: u64| -> u64 {
        intervals
            .iter()
            .filter(|i| i.raw == raw)
            .map(|i| i.histogram.count_between(us, u64::MAX))
            .sum()
    };
    assert!(
        at_least(false, 100_000) >= 40,
        "{}",
        at_least(false, 100_000)
    );
    assert!(at_least(true, 150_000) <= 10, "{}", at_least(true, 150_000));
    let (corrected, raw_logged) = hlog_counts(&dir);
    assert_eq!(corrected, s.requests_completed);
    assert_eq!(raw_logged, s.requests_completed);
    assert_summary_matches_files(&dir);
    let percentiles = std::fs::read_to_string(dir.join("percentiles.csv")).unwrap();
    let last = percentiles.lines().last().unwrap();
    assert!(
        !last.ends_with(','),
        "raw column filled in open loop: {last}"
    );
}

#[test]
fn twenty_five_thousand_connections_over_two_processes_and_source_addresses() {
    let _heavy = common::heavy();
    // 25 000 where one process may hold 20 000 fds (the reference machine); fewer where the
    // hard limit or the port range is smaller: each of the two load processes, each of
    // the two servers and each source address then has at most 4/5 of its limit.
    let (_, fd_hard) = common::fd_limits();
    let by_fds = fd_hard.saturating_sub(1000) * 8 / 5;
    let by_ports = common::ephemeral_ports() * 8 / 5;
    let conns = 25_000u64.min(by_fds).min(by_ports) / 2 * 2;
    let half = conns / 2;
    let port = free_port();
    let ready_a = out_dir("25k-ready-a");
    let ready_b = out_dir("25k-ready-b");
    // Two server processes share the port: one process may hold fewer descriptors.
    let mut servers = [
        spawn_epoll_server(port, &ready_a),
        spawn_epoll_server(port, &ready_b),
    ];
    let dir = out_dir("25k");
    let out = load_within(&[
        "--target",
        &format!("127.0.0.1:{port}"),
        "--connections",
        &conns.to_string(),
        "--processes",
        "2",
        "--source-addrs",
        "127.0.0.2-127.0.0.3",
        "--requests",
        "1",
        "--hold",
        "6s",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    for server in &mut servers {
        server.kill().unwrap();
        server.wait().unwrap();
    }
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert_eq!(s.connections_target, conns);
    assert_eq!(s.connections_established, conns);
    assert_eq!(s.max_concurrent, conns);
    assert_eq!(s.requests_completed, conns);
    assert_eq!(s.bytes_verified, conns * 16);
    assert_eq!(s.errors_total, 0);
    assert_eq!(s.processes, 2);
    let rows = connections(&dir);
    assert_eq!(rows.len() as u64, conns);
    let from = |addr: &str| rows.iter().filter(|r| r.local_addr == addr).count() as u64;
    assert_eq!(from("127.0.0.2"), half);
    assert_eq!(from("127.0.0.3"), half);
    let mut ids: Vec<u64> = rows.iter().map(|r| r.conn_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, conns);
    assert!(dir.join("process-0/summary.json").is_file());
    assert!(dir.join("process-1/summary.json").is_file());
    assert_summary_matches_files(&dir);
}

#[test]
fn shards_merge_exactly() {
    let server = thread_server(Faults::default());
    let target = server.addr.to_string();
    let a = out_dir("shard-a");
    let b = out_dir("shard-b");
    for (shard, dir) in [("0/2", &a), ("1/2", &b)] {
        let out = load_within(&[
            "--target",
            &target,
            "--connections",
            "5",
            "--requests",
            "7",
            "--size",
            "100",
            "--shard",
            shard,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_exit_ok(&out);
    }
    assert_eq!(summary(&a).connections_target, 3);
    assert_eq!(summary(&b).connections_target, 2);
    let merged = out_dir("shard-merged");
    let out = output_within(
        Command::new(ECHOLAB)
            .args(["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out"])
            .arg(&merged),
        COMMAND_LIMIT,
    );
    assert_exit_ok(&out);
    let s = summary(&merged);
    assert_eq!(s.connections_target, 5);
    assert_eq!(s.requests_completed, 35);
    assert_eq!(s.bytes_verified, 3_500);
    assert_eq!(s.latency_us.count, 35);
    let ids: Vec<u64> = connections(&merged).iter().map(|r| r.conn_id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    assert_summary_matches_files(&merged);
}

#[test]
fn bad_arguments_exit_2_with_usage() {
    let cases: &[&[&str]] = &[
        &["--target", "127.0.0.1:9", "--connections", "0"],
        &[
            "--target",
            "127.0.0.1:9",
            "--processes",
            "3",
            "--connections",
            "2",
        ],
        &["--target", "127.0.0.1:9", "--size", "0"],
        &["--target", "127.0.0.1:9", "--size", "17MiB"],
        &["--target", "127.0.0.1:9", "--message", "hi", "--size", "10"],
        &[
            "--target",
            "127.0.0.1:9",
            "--source-addrs",
            "127.0.0.9-127.0.0.2",
        ],
        &["--target", "127.0.0.1:9", "--shard", "3/2"],
        &["--target", "127.0.0.1:9", "--pipeline", "0"],
        &["--target", "127.0.0.1:9", "--rate", "0"],
        &["--target", "127.0.0.1:9", "--connections", "many"],
        &["--target", "nowhere"],
        &["--connections", "3"],
        &[
            "--target",
            "127.0.0.1:9",
            "--warmup",
            "1s",
            "--requests",
            "5",
        ],
        &["--target", "127.0.0.1:9", "--warmup", "1s", "--hold", "1s"],
        &["--target", "127.0.0.1:9", "--warmup", "soon"],
    ];
    for args in cases {
        let out = load_within(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        // clap's value errors end with the --help hint; semantic errors add the usage line too.
        assert!(stderr.contains("try '--help'"), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// The counts come from this machine's limits: 2.5 processes' worth of connections needs
/// `--processes 3`; twice the ephemeral port range and one more needs three source
/// addresses.
#[test]
fn preflight_names_the_limit_and_the_way_out() {
    let fd_hard = common::raise_fd_limit();
    let too_many = (fd_hard * 5 / 2).to_string();
    let out = load_within(&["--target", "127.0.0.1:9", "--connections", &too_many]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--processes 3"), "{stderr}");
    let ports = common::ephemeral_ports();
    let connections = 2 * ports + 1;
    let processes = connections.div_ceil(fd_hard / 2).max(2);
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        &connections.to_string(),
        "--processes",
        &processes.to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ip_local_port_range"), "{stderr}");
    assert!(
        stderr.contains("--source-addrs 127.0.0.2-127.0.0.4"),
        "{stderr}"
    );
}

// ---- connection errors, signals and the independent HdrHistogram reader ----

/// A port on 127.0.0.1 that is bound (so nobody else takes it) but not listening: every
/// connection to it is refused (RST). Keep the socket alive while it is used.
fn refusing_port() -> (socket2::Socket, SocketAddr) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    (socket, addr)
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
    Command::new(ECHOLAB)
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
    // summary.json is rewritten every second while the run goes.
    let deadline = started + Duration::from_secs(10);
    let running = loop {
        let text = std::fs::read(dir.join("summary.json")).unwrap_or_default();
        if let Ok(running) = serde_json::from_slice::<LoadSummary>(&text) {
            break running;
        }
        assert!(Instant::now() < deadline, "no summary.json while running");
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
    let child = Command::new(ECHOLAB)
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

/// latency.hlog read by the Python `hdrhistogram` package (module `hdrh`), an HdrHistogram
/// implementation independent of echolab's: an open-loop run of exactly 100 requests
/// logs 100 corrected and 100 raw (tag `raw`) latencies, none longer than the run.
#[test]
fn latency_hlog_reads_in_the_python_hdrhistogram_package() {
    const SCRIPT: &str = r#"
import sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 1000 * 1000, 3))
counts, maxima = {}, {}
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    tag = h.get_tag() or "corrected"
    counts[tag] = counts.get(tag, 0) + h.get_total_count()
    maxima[tag] = max(maxima.get(tag, 0), h.get_max_value())
for tag in sorted(counts):
    print(tag, counts[tag], maxima[tag])
"#;
    let has_hdrh = Command::new("python3")
        .args(["-c", "import hdrh.log"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_hdrh {
        common::skip(
            "load::latency_hlog_reads_in_the_python_hdrhistogram_package",
            "python3 with the `hdrhistogram` package is not installed (pip install hdrhistogram)",
        );
        return;
    }
    let server = thread_server(Faults::default());
    let dir = out_dir("hlog-python");
    let started = Instant::now();
    let out = load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "2",
        "--rate",
        "200",
        "--requests",
        "50",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let wall_us = started.elapsed().as_micros() as u64;
    assert_exit_ok(&out);
    let read = output_within(
        Command::new("python3")
            .args(["-c", SCRIPT])
            .arg(dir.join("latency.hlog")),
        COMMAND_LIMIT,
    );
    let stdout = String::from_utf8_lossy(&read.stdout);
    assert!(
        read.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let lines: Vec<(String, u64, u64)> = stdout
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    let tags: Vec<(&str, u64)> = lines.iter().map(|(t, n, _)| (t.as_str(), *n)).collect();
    assert_eq!(tags, [("corrected", 100), ("raw", 100)]);
    for (tag, _, max) in &lines {
        assert!(
            (1..=wall_us).contains(max),
            "{tag}: max {max} µs in a {wall_us} µs run"
        );
    }
}

/// Preflight refuses a source address this host does not have (exit 1, no output files),
/// and a run that starts late records it in summary.json's `warnings`: `--start-at` 100 s
/// in the past is 100 s late, give or take the time the process took to start.
#[test]
fn preflight_source_address_and_the_warnings_array() {
    let dir = out_dir("bad-source");
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        "2",
        "--source-addrs",
        "192.0.2.1-192.0.2.2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("source address 192.0.2.1 cannot be bound")
            && stderr.contains("ip addr add 192.0.2.1/32 dev lo"),
        "{stderr}"
    );
    assert!(!dir.join("summary.json").exists());

    let server = thread_server(Faults::default());
    let dir = out_dir("late-start");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let out = load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--requests",
        "2",
        "--start-at",
        &format!("{:.3}", now - 100.0),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert_eq!(s.requests_completed, 2);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let late: f64 = s.warnings[0]
        .strip_prefix("started ")
        .and_then(|w| w.strip_suffix(" s after --start-at"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", s.warnings));
    assert!((100.0..110.0).contains(&late), "{late} s late");
}

// ---- servers that answer wrong, preflight's memory and somaxconn, merge's refusals ----

/// A server that runs `handle` on a thread for each connection.
fn scripted_server(handle: fn(std::net::TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || handle(stream));
        }
    });
    addr
}

/// Reads until the client closes, so the server's close is a FIN, never a reset.
fn drain(mut stream: std::net::TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}

/// Four 100-byte messages come in (pipeline 1: each after the last one's echo); the first
/// three are echoed whole, the fourth only its first 40 bytes, then the server closes.
fn echo_340_of_400_then_close(mut stream: std::net::TcpStream) {
    let mut buf = [0u8; 4096];
    let (mut read, mut written) = (0usize, 0usize);
    while read < 400 {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        read += n;
        let echo = n.min(340 - written);
        stream.write_all(&buf[..echo]).unwrap();
        written += echo;
    }
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    drain(stream);
}

/// A short echo: each connection completes 3 requests, gets 40 bytes of the fourth
/// message, and then EOF while it has requests left: one short echo and one unexpected
/// close per connection, in summary.json and in each connections.csv row.
#[test]
fn a_short_echo_is_counted_with_the_unexpected_close() {
    for engine in ENGINES {
        a_short_echo_is_counted_with_the_unexpected_close_with(engine);
    }
}

fn a_short_echo_is_counted_with_the_unexpected_close_with(engine: &str) {
    let addr = scripted_server(echo_340_of_400_then_close);
    let dir = out_dir(&format!("short-echo-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &addr.to_string(),
        "--connections",
        "2",
        "--requests",
        "5",
        "--size",
        "100",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // Every connection ended in an error, so the run fails (docs/outputs.md, exit codes).
    assert_exit_failed(&out, "echolab load: all 2 connections failed (2 errors)");
    let s = summary(&dir);
    assert_eq!(s.requests_completed, 6);
    assert_eq!((s.bytes_sent, s.bytes_received), (800, 680));
    assert_eq!(s.bytes_verified, 680);
    assert_eq!(s.short_echoes, 2);
    assert_eq!(s.unexpected_closes, 2);
    assert_eq!(s.mismatches, 0);
    assert_eq!(s.errors_total, 2);
    assert_eq!(s.connections_ended_early, 2);
    let rows = connections(&dir);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(
            (r.requests, r.bytes_sent, r.bytes_received),
            (3, 400, 340),
            "{r:?}"
        );
        assert_eq!((r.short_echoes, r.mismatches, r.errors), (1, 0, 1), "{r:?}");
        assert_eq!((r.error_kind.as_str(), r.end.as_str()), ("closed", "error"));
    }
    assert_summary_matches_files(&dir);
}

/// Answers the first 100-byte message with its echo and one byte more, in one write.
fn echo_one_byte_too_many(mut stream: std::net::TcpStream) {
    let mut message = [0u8; 100];
    if stream.read_exact(&mut message).is_err() {
        return;
    }
    let mut answer = message.to_vec();
    answer.push(b'!');
    let _ = stream.write_all(&answer);
    drain(stream);
}

/// More bytes back than were sent: not an echo of this stream. Per connection one
/// mismatch, one `other` error (docs/outputs.md), the unanswered message a short echo,
/// nothing verified and no request completed.
#[test]
fn too_many_bytes_back_count_as_a_mismatch_and_an_error() {
    for engine in ENGINES {
        too_many_bytes_back_count_as_a_mismatch_and_an_error_with(engine);
    }
}

fn too_many_bytes_back_count_as_a_mismatch_and_an_error_with(engine: &str) {
    let addr = scripted_server(echo_one_byte_too_many);
    let dir = out_dir(&format!("too-many-{engine}"));
    let out = load_within(&[
        "--engine",
        engine,
        "--target",
        &addr.to_string(),
        "--connections",
        "2",
        "--requests",
        "3",
        "--size",
        "100",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // Nothing completed and every echo was wrong: the run fails.
    assert_exit_failed(&out, "echolab load: no request completed (4 errors)");
    let s = summary(&dir);
    assert_eq!(s.requests_completed, 0);
    assert_eq!((s.bytes_sent, s.bytes_verified), (200, 0));
    assert_eq!(s.mismatches, 2);
    assert_eq!(s.errors.other, 2);
    assert_eq!(s.short_echoes, 2);
    assert_eq!(s.unexpected_closes, 0);
    assert_eq!(s.errors_total, 4);
    assert_eq!(s.error_rate, 1.0);
    let rows = connections(&dir);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!((r.requests, r.bytes_sent), (0, 100), "{r:?}");
        assert_eq!((r.mismatches, r.short_echoes, r.errors), (1, 1, 2), "{r:?}");
        assert_eq!((r.error_kind.as_str(), r.end.as_str()), ("other", "error"));
    }
    assert_summary_matches_files(&dir);
}

/// This machine's MemAvailable in bytes.
fn mem_available() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Preflight refuses a run whose connections (8 KiB each, docs) need more memory than
/// MemAvailable, naming both figures. The run is sized from this machine: twice the
/// connections MemAvailable holds, over enough processes and source addresses that the
/// fd and port checks (made first) pass.
#[test]
fn preflight_refuses_more_connections_than_memory_holds() {
    let fd_hard = common::raise_fd_limit();
    let before = mem_available();
    // A multiple of 128, so 8 KiB each is a whole number of MiB.
    let connections = (before / 8192 * 2).div_ceil(128) * 128;
    let per_process = fd_hard - 64;
    let processes = connections.div_ceil(per_process);
    let sources = connections.div_ceil(common::ephemeral_ports());
    assert!(sources < 65_000, "{sources} source addresses");
    let last = 2 + sources;
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        &connections.to_string(),
        "--processes",
        &processes.to_string(),
        "--source-addrs",
        &format!("127.1.0.2-127.1.{}.{}", last / 256, last % 256),
    ]);
    let after = mem_available();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let need_mib = (connections * 8192) >> 20;
    let prefix = format!(
        "{connections} connections need about {need_mib} MiB of memory (8 KiB each, kernel \
         socket and client state) but only "
    );
    let rest = stderr
        .split_once(&prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {stderr}"))
        .1;
    let available_mib: u64 = rest
        .split_once(" MiB is available (MemAvailable)")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    // MemAvailable moves while other tests run: the figure must be one this machine had.
    let (low, high) = (before.min(after) >> 20, before.max(after) >> 20);
    assert!(
        (low.saturating_sub(512)..=high + 512).contains(&available_mib),
        "{available_mib} MiB available, read {low}..{high} MiB around the run"
    );
    assert!(stderr.contains("--shard I/N"), "{stderr}");
}

/// This machine's net.core.somaxconn.
fn somaxconn() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Connections to a refusing loopback port, opened all at once: the run's warnings.
fn warnings_for(connections: u64, extra: &[&str], name: &str) -> Vec<String> {
    let (_port, addr) = refusing_port();
    let dir = out_dir(name);
    let connections = connections.to_string();
    let mut args = vec![
        "--target",
        &addr.to_string(),
        "--connections",
        &connections,
        "--requests",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]
    .into_iter()
    .map(str::to_string)
    .collect::<Vec<_>>();
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = load_within(&args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = summary(&dir);
    assert_eq!(s.errors.refused, connections.parse::<u64>().unwrap());
    s.warnings
}

/// More loopback connections opened at once than net.core.somaxconn: summary.json's
/// `warnings` says so with both numbers; at somaxconn exactly, or paced with
/// `--connect-rate`, it does not.
#[test]
fn preflight_warns_past_somaxconn() {
    let _heavy = common::heavy();
    let max = somaxconn();
    let (_, fd_hard) = common::fd_limits();
    if max + 1 + 64 > fd_hard || max + 1 > common::ephemeral_ports() {
        common::skip(
            "load::preflight_warns_past_somaxconn",
            &format!("net.core.somaxconn {max} is more connections than one process may open here"),
        );
        return;
    }
    let over = max + 1;
    assert_eq!(
        warnings_for(over, &[], "somaxconn-over"),
        [format!(
            "{over} connections opened at once exceed net.core.somaxconn ({max}): a server on \
             this host may drop SYNs and connects then take a 1 s retransmit; use \
             --connect-rate or sysctl -w net.core.somaxconn=65535"
        )]
    );
    assert_eq!(warnings_for(max, &[], "somaxconn-at"), Vec::<String>::new());
    assert_eq!(
        warnings_for(over, &["--connect-rate", "100000"], "somaxconn-paced"),
        Vec::<String>::new()
    );
}

/// `echolab merge` refuses, before writing anything: a directory that does not exist or
/// has no summary.json (usage error, exit 2), a summary.json that does not parse and a
/// part without its timeline.csv (exit 1, naming the file), and --max-error-rate outside
/// 0..1 (exit 2).
#[test]
fn merge_refuses_missing_and_invalid_inputs() {
    let server = thread_server(Faults::default());
    let good = out_dir("merge-good");
    assert_exit_ok(&load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--requests",
        "3",
        "--out",
        good.to_str().unwrap(),
    ]));
    let copy = |name: &str| {
        let dir = out_dir(name);
        std::fs::create_dir_all(&dir).unwrap();
        for file in std::fs::read_dir(&good).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
        }
        dir
    };
    let missing = out_dir("merge-missing");
    let empty = out_dir("merge-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let garbled = copy("merge-garbled");
    std::fs::write(garbled.join("summary.json"), "{\"requests_completed\": ").unwrap();
    let no_timeline = copy("merge-no-timeline");
    std::fs::remove_file(no_timeline.join("timeline.csv")).unwrap();
    let merge = |dirs: &[&Path], extra: &[&str]| {
        let out = out_dir("merge-refused");
        let output = output_within(
            Command::new(ECHOLAB)
                .arg("merge")
                .args(dirs)
                .arg("--out")
                .arg(&out)
                .args(extra),
            COMMAND_LIMIT,
        );
        assert!(!out.exists(), "{dirs:?}: wrote {}", out.display());
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    for bad in [&missing, &empty] {
        let (code, stderr) = merge(&[&good, bad], &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{} has no summary.json", bad.display())),
            "{stderr}"
        );
    }
    // An agent directory whose summary cannot be read is refused before anything is
    // written, like the other inputs merge cannot combine (exit 2).
    let (code, stderr) = merge(&[&good, &garbled], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "parsing {}",
            garbled.join("summary.json").display()
        )),
        "{stderr}"
    );
    let (code, stderr) = merge(&[&good, &no_timeline], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("reading {}/timeline.csv", no_timeline.display())),
        "{stderr}"
    );
    let (code, stderr) = merge(&[&good], &["--max-error-rate", "1.5"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--max-error-rate must be between 0 and 1"));
}

#[test]
fn the_help_states_the_drain_after_the_duration_as_it_is() {
    // The drain waits while echo bytes keep arriving (1 000 connections of 16 MiB echoes
    // took 19.7 s past a 2 s duration), bounded by --response-timeout: "one more second"
    // promised what the load never did.
    let out = Command::new(common::BIN)
        .args(["load", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("one more second"), "{help}");
    assert!(
        help.contains(
            "echo byte came for twice the slowest echo (at least 1 s), at most --response-timeout"
        ) || help.contains("twice the slowest echo (at least 1 s), at most"),
        "{help}"
    );
}

/// Echoes one byte of what it read every 50 ms, forever: an echo that keeps arriving
/// and never completes.
fn trickle(mut stream: std::net::TcpStream) {
    let mut buf = [0u8; 1];
    while matches!(stream.read(&mut buf), Ok(1)) {
        if stream.write_all(&buf).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_drain_of_an_echo_still_arriving_ends_at_the_response_timeout() {
    let addr = scripted_server(trickle);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("load");
    let target = addr.to_string();
    let output = common::load_within(&[
        "--target",
        &target,
        "-c",
        "1",
        "--size",
        "1MiB",
        "--duration",
        "1s",
        "--response-timeout",
        "2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let summary: LoadSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // Bytes kept coming, so the drain went past its 1 s of silence, but no further than
    // --response-timeout after the duration; the echo it never finished is a timeout.
    let ran = summary.ended_unix - summary.started_unix;
    // (Generous: the bound is the drain's cap, 3 s, not a measure of speed.)
    assert!((2.0..6.0).contains(&ran), "{ran} s: {output:?}");
    assert_eq!(summary.requests_completed, 0, "{summary:?}");
    assert_eq!(summary.errors_total, 1, "{summary:?}");
}
