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

#[path = "../common/mod.rs"]
mod common;

use common::{load_within, out_dir, output_within, BIN, COMMAND_LIMIT};

mod bounds;
mod exact;
mod failures;
mod merge;
mod merge_refusals;
mod preflight;
mod signals;
mod verdict;

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

/// Reads until the client closes, so the server's close is a FIN, never a reset.
fn drain(mut stream: std::net::TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}

/// This machine's net.core.somaxconn.
fn somaxconn() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
