//! Shared test harness: runs `echolab serve` as a child process on an ephemeral
//! loopback port and talks to it over real sockets.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_echolab");

/// A running `echolab serve` child with its log and summary files in a temp dir.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
    pub model: String,
}

/// What a stopped server left behind.
pub struct Stopped {
    pub status: ExitStatus,
    pub stderr: String,
    pub summary: Value,
    pub log: Vec<LogRow>,
}

#[derive(Debug, Clone, serde::Deserialize)]
pub struct LogRow {
    pub peer_ip: String,
    pub peer_port: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub reads: u64,
    pub opened_unix: f64,
    pub closed_unix: f64,
    pub close_reason: String,
}

impl Server {
    /// Starts `echolab serve --model MODEL --addr 127.0.0.1:0` plus `extra` arguments.
    pub fn start(model: &str, extra: &[&str]) -> Server {
        Server::start_with(model, extra, |_| {})
    }

    /// Like `start`, with a hook to adjust the command (e.g. a lower fd limit via pre_exec).
    pub fn start_with(model: &str, extra: &[&str], adjust: impl FnOnce(&mut Command)) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--model", model, "--addr", "127.0.0.1:0"])
            .arg("--log")
            .arg(dir.path().join("log.csv"))
            .arg("--summary-json")
            .arg(dir.path().join("summary.json"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("stderr.txt")).expect("stderr file"),
            ));
        adjust(&mut command);
        let mut child = command.spawn().expect("spawn echolab serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let addr = line
            .split_whitespace()
            .nth(2)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                let stderr =
                    std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap_or_default();
                panic!("{model}: no 'listening on ADDR' line, got {line:?}; stderr: {stderr}")
            });
        Server {
            child,
            addr,
            dir,
            model: model.to_string(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).expect("connect to the server");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends SIGTERM, waits for exit (at most 30 s) and reads the summary and log.
    pub fn stop(self) -> Stopped {
        self.sigterm();
        self.wait_stopped()
    }

    /// Sends SIGTERM without waiting: the caller can watch the shutdown happen (e.g.
    /// read each connection's EOF) before [`Server::wait_stopped`].
    pub fn sigterm(&self) {
        signal(self.pid(), libc::SIGTERM);
    }

    /// Waits for the exit SIGTERM (or SIGINT) asked for, at most 30 s, and reads the
    /// summary and log.
    pub fn wait_stopped(mut self) -> Stopped {
        let status = wait_timeout(&mut self.child, Duration::from_secs(30)).unwrap_or_else(|| {
            let _ = self.child.kill();
            panic!("{}: server did not exit within 30 s of SIGTERM", self.model)
        });
        let stderr = std::fs::read_to_string(self.path("stderr.txt")).unwrap_or_default();
        let summary = std::fs::read_to_string(self.path("summary.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        let log = read_log(&self.path("log.csv"));
        Stopped {
            status,
            stderr,
            summary,
            log,
        }
    }

    /// Resident set size of the server process (and its children for --processes), in bytes.
    pub fn rss_bytes(&self) -> u64 {
        let mut total = rss_of(self.pid());
        for child in child_pids(self.pid()) {
            total += rss_of(child);
        }
        total
    }

    /// CPU seconds (user + system) the server has used so far.
    pub fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks: f64 = fields
            .get(11)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            + fields
                .get(12)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
        // SAFETY: sysconf has no preconditions.
        ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sets `resource` (e.g. RLIMIT_NOFILE) to `value`, soft and hard, in the child
/// `command` starts, before it runs: the server cannot raise it back.
pub fn limit_in_child(command: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Sets the soft RLIMIT_NOFILE of the running process `pid` to `value`, keeping its hard
/// limit (prlimit(2): allowed on one's own child without privilege).
pub fn set_soft_fd_limit(pid: i32, value: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit writes the old limit into the struct we own and sets nothing.
    let read = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, std::ptr::null(), &mut limit) };
    assert_eq!(
        read,
        0,
        "prlimit({pid}): {}",
        std::io::Error::last_os_error()
    );
    limit.rlim_cur = value;
    // SAFETY: prlimit reads the struct we own.
    let set = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) };
    assert_eq!(
        set,
        0,
        "prlimit({pid}, RLIMIT_NOFILE, {value}): {}",
        std::io::Error::last_os_error()
    );
}

pub fn signal(pid: i32, sig: i32) {
    // SAFETY: sending a signal to a child we started.
    unsafe {
        libc::kill(pid, sig);
    }
}

pub fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn read_log(path: &Path) -> Vec<LogRow> {
    match csv::Reader::from_path(path) {
        Ok(mut reader) => reader
            .deserialize()
            .map(|row| row.expect("valid log row"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// RSS from /proc/PID/smaps_rollup, which counts pages exactly (VmRSS in /proc/PID/status
/// comes from per-CPU counters that may lag), falling back to VmRSS.
fn rss_of(pid: i32) -> u64 {
    let field_kib = |file: &str, key: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/{file}"))
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
    };
    field_kib("smaps_rollup", "Rss:")
        .or_else(|| field_kib("status", "VmRSS:"))
        .unwrap_or(0)
        * 1024
}

fn child_pids(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Writes `data` on one thread while reading the echo on another; returns what came back
/// once the server closes after our half-close.
pub fn echo_stream(mut stream: TcpStream, data: &[u8]) -> Vec<u8> {
    let mut reader = stream.try_clone().expect("clone stream");
    let expected = data.len();
    let receiver = std::thread::spawn(move || {
        let mut got = Vec::with_capacity(expected);
        reader.read_to_end(&mut got).expect("read echo");
        got
    });
    stream.write_all(data).expect("write payload");
    stream.shutdown(Shutdown::Write).expect("half-close");
    receiver.join().expect("reader thread")
}

/// Sends `data` and reads exactly `data.len()` bytes back, keeping the connection open.
pub fn echo_once(stream: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    stream.write_all(data).expect("write");
    let mut got = vec![0u8; data.len()];
    stream.read_exact(&mut got).expect("read echo");
    got
}

/// Deterministic test payload: `len` bytes covering every byte value, NUL included.
pub fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

/// The summary's counter `key` (e.g. "accepted") as u64.
pub fn count(summary: &Value, key: &str) -> u64 {
    summary[key]
        .as_u64()
        .unwrap_or_else(|| panic!("summary has no '{key}': {summary}"))
}

/// The summary's `refused` or `closed` count for `reason` (0 when absent).
pub fn reason_count(summary: &Value, group: &str, reason: &str) -> u64 {
    summary[group][reason].as_u64().unwrap_or(0)
}

/// Serialises the tests that hold thousands of sockets, so two of them never share
/// the test process's fd limit, the ephemeral ports or the 2 CPUs. Hold the guard
/// for the whole test.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens `n` connections to `addr` (each with the 30 s read timeout of [`Server::connect`]).
/// Raises the soft fd limit first: the shell's `ulimit -n` (often 1024) must not decide.
pub fn connect_many(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    raise_fd_limit();
    (0..n)
        .map(|i| {
            let stream = TcpStream::connect(addr)
                .unwrap_or_else(|e| panic!("connection {i} of {n} to {addr} failed: {e}"));
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            stream
        })
        .collect()
}

/// Echoes `data` on an open connection in chunks, reading each chunk's echo before
/// writing the next, so blocking sockets never deadlock on full buffers. Returns the echo.
pub fn echo_chunked(stream: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    const CHUNK: usize = 64 * 1024;
    let mut got = vec![0u8; data.len()];
    for (sent, back) in data.chunks(CHUNK).zip(got.chunks_mut(CHUNK)) {
        stream.write_all(sent).expect("write chunk");
        stream.read_exact(back).expect("read the chunk's echo");
    }
    got
}

/// Expects the server to close `stream` cleanly (FIN, not a reset) without sending
/// anything more; the read timeout (30 s) bounds the wait.
pub fn expect_server_eof(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    stream
        .read_to_end(&mut rest)
        .expect("a clean close (EOF) from the server, not an error");
    assert!(
        rest.is_empty(),
        "{} unexpected bytes before EOF",
        rest.len()
    );
}

/// Half-closes and expects the server to close without sending anything more.
pub fn expect_eof_after_half_close(stream: &mut TcpStream) {
    stream.shutdown(Shutdown::Write).expect("half-close");
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("read until EOF");
    assert!(
        rest.is_empty(),
        "{} unexpected bytes after the echo",
        rest.len()
    );
}

/// What happened to a probe message sent on a connection the server may have refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The message came back byte for byte: the server serves this connection.
    Echoed,
    /// EOF or a reset: the server closed the connection (refused it or closed it).
    Closed,
}

/// Sends `message` and classifies the answer; panics on a wrong echo or a timeout.
pub fn probe(stream: &mut TcpStream, message: &[u8]) -> Probe {
    if let Err(e) = stream.write_all(message) {
        assert!(is_closed_error(&e), "probe write failed: {e}");
        return Probe::Closed;
    }
    let mut got = Vec::with_capacity(message.len());
    let mut buf = [0u8; 4096];
    while got.len() < message.len() {
        match stream.read(&mut buf) {
            Ok(0) => return Probe::Closed,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if is_closed_error(&e) => return Probe::Closed,
            Err(e) => panic!("probe read failed: {e}"),
        }
    }
    assert_eq!(got, message, "wrong echo");
    Probe::Echoed
}

fn is_closed_error(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED)
    )
}

/// Connections waiting in the accept queues of the listeners on 127.0.0.1:`port` (the
/// rx_queue of LISTEN sockets in /proc/net/tcp, summed over SO_REUSEPORT listeners),
/// or None if there is no such listener.
pub fn accept_queue_len(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{port:04X}");
    let queues: Vec<u64> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&local.as_str()) || fields.get(3) != Some(&"0A") {
                return None;
            }
            let rx = fields.get(4)?.split(':').nth(1)?;
            u64::from_str_radix(rx, 16).ok()
        })
        .collect();
    (!queues.is_empty()).then(|| queues.iter().sum())
}

/// Open file descriptors of process `pid`.
pub fn fd_count(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

/// The open fds of process `pid`: (number, what it points to, e.g. "/dev/null").
/// RLIMIT_NOFILE caps fd numbers, not their count, so tests that move the limit need these.
pub fn open_fds(pid: i32) -> Vec<(usize, String)> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(|entry| {
                let entry = entry.ok()?;
                let fd = entry.file_name().to_str()?.parse().ok()?;
                let target = std::fs::read_link(entry.path()).ok()?;
                Some((fd, target.display().to_string()))
            })
            .collect()
        })
        .unwrap_or_default()
}

impl Server {
    /// Waits (at most `limit`) until the server has taken every connection out of its
    /// accept queue and its fd count has stopped changing, i.e. it has accepted or
    /// refused everything the clients opened.
    pub fn wait_accepted(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut last = usize::MAX;
        let mut stable_since = Instant::now();
        loop {
            let queued = accept_queue_len(self.addr.port()).unwrap_or(0);
            let fds = fd_count(self.pid());
            if fds != last || queued > 0 {
                last = fds;
                stable_since = Instant::now();
            } else if stable_since.elapsed() >= Duration::from_millis(300) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: {queued} connections still queued, {fds} fds open after {limit:?}",
                self.model
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (at most 10 s) until the server's fd count has stayed the same for 300 ms.
    pub fn wait_fds_settled(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = fd_count(self.pid());
        let mut stable_since = Instant::now();
        while stable_since.elapsed() < Duration::from_millis(300) {
            assert!(
                Instant::now() < deadline,
                "{}: fds never settled",
                self.model
            );
            std::thread::sleep(Duration::from_millis(20));
            let now = fd_count(self.pid());
            if now != last {
                last = now;
                stable_since = Instant::now();
            }
        }
    }

    /// Waits (at most `limit`) until the server holds exactly `fds` open fds.
    pub fn wait_fds(&self, fds: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        while fd_count(self.pid()) != fds {
            assert!(
                Instant::now() < deadline,
                "{}: {} fds open after {limit:?}, expected {fds}",
                self.model,
                fd_count(self.pid())
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The log row of the connection whose client port was `port`.
pub fn row_for(log: &[LogRow], port: u16) -> &LogRow {
    log.iter()
        .find(|row| row.peer_port == port)
        .unwrap_or_else(|| panic!("no log row for client port {port}"))
}

/// Writes up to `limit` bytes of `payload(1 MiB, 99)` repeated on a non-blocking socket
/// without reading, for at most `time`, stopping once the socket has stayed full for
/// 300 ms. Returns the bytes written.
pub fn push_without_reading(stream: &TcpStream, limit: usize, time: Duration) -> usize {
    let chunk = payload(1 << 20, 99);
    let deadline = Instant::now() + time;
    let mut sent = 0;
    let mut full_since: Option<Instant> = None;
    let mut writer = stream;
    while sent < limit && Instant::now() < deadline {
        let at = sent % chunk.len();
        let want = (chunk.len() - at).min(limit - sent);
        match writer.write(&chunk[at..at + want]) {
            Ok(n) => {
                sent += n;
                full_since = None;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let since = *full_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= Duration::from_millis(300) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("push failed after {sent} bytes: {e}"),
        }
    }
    sent
}

// ---- skips: visible in plain `cargo test`, and never allowed under CI ----

/// Whether this is a CI run (`CI` set to anything but empty, `0` or `false`), where
/// every test must run: a skip is a failure there.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "False"))
}

/// Skips the calling test (the caller returns right after) with `reason`. Under CI
/// this panics instead. Otherwise the line `SKIPPED test: reason` is written straight
/// to the process's stderr: the harness captures `eprintln!` of a passing test, but not
/// a direct write, so plain `cargo test` shows the line among the results.
pub fn skip(test: &str, reason: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run: {reason}; under CI=true no test may be skipped"
    );
    let line = format!("SKIPPED {test}: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

// ---- this machine's limits, read rather than assumed ----

/// RLIMIT_NOFILE of this process as (soft, hard).
pub fn fd_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    (limit.rlim_cur, limit.rlim_max)
}

/// Raises this process's soft fd limit to its hard limit (as echolab does for itself), so
/// the tests that hold thousands of client sockets do not depend on the shell's `ulimit -n`.
/// Returns the new soft limit.
pub fn raise_fd_limit() -> u64 {
    let (soft, hard) = fd_limits();
    if soft < hard {
        let limit = libc::rlimit {
            rlim_cur: hard,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads the struct we own; raising soft up to hard is always allowed.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    }
    hard
}

/// The number of ports in net.ipv4.ip_local_port_range.
pub fn ephemeral_ports() -> u64 {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .expect("read net.ipv4.ip_local_port_range");
    let bounds: Vec<u64> = text
        .split_whitespace()
        .map(|n| n.parse().expect("a port number"))
        .collect();
    bounds[1] - bounds[0] + 1
}

// ---- what the kernel holds for a connection ----

/// (send queue, receive queue) in bytes of the loopback socket `local` -> `remote`, from
/// /proc/net/tcp (tx_queue: bytes written but not yet acknowledged by the peer; rx_queue:
/// bytes received but not yet read).
pub fn socket_queues(local: SocketAddr, remote: SocketAddr) -> (u64, u64) {
    let hex = |addr: SocketAddr| match addr {
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_le_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => panic!("IPv4 only"),
    };
    let (local, remote) = (hex(local), hex(remote));
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(1) == Some(&local.as_str()) && f.get(2) == Some(&remote.as_str()))
        .and_then(|f| {
            let (tx, rx) = f.get(4)?.split_once(':')?;
            Some((
                u64::from_str_radix(tx, 16).ok()?,
                u64::from_str_radix(rx, 16).ok()?,
            ))
        })
        .unwrap_or_else(|| panic!("no socket {local} -> {remote} in /proc/net/tcp"))
}

/// Bytes the server has read from `client` but not yet handed back to the kernel as
/// echo, i.e. what it holds in user space for that connection, when the client has
/// written `sent` bytes and read nothing: what left the client (sent minus its send
/// queue) minus what waits unread in the server's receive queue is what the server
/// read; minus the echo sitting in the server's send queue and the client's receive
/// queue. Counted from the kernel's queues only, never from the server's own figures.
pub fn server_held_bytes(client: &TcpStream, sent: u64) -> u64 {
    let (me, server) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
    let (client_tx, client_rx) = socket_queues(me, server);
    let (server_tx, server_rx) = socket_queues(server, me);
    let read_by_server = sent.saturating_sub(client_tx + server_rx);
    read_by_server.saturating_sub(server_tx + client_rx)
}

/// What the namespace lab needs, in the runner's own words.
pub const NETNS_NEEDS: &str = "multi-host scenarios need root and iproute2 (`ip netns`)";

/// Whether a namespace-lab test can run: false when ECHOLAB_SKIP_NETNS skips it (a visible
/// skip, a failure under CI); panics when namespaces are unusable.
pub fn netns_available(test: &str) -> bool {
    if std::env::var_os("ECHOLAB_SKIP_NETNS").is_some() {
        skip(test, "ECHOLAB_SKIP_NETNS is set");
        return false;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let ip = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        root && ip,
        "{NETNS_NEEDS} (root: {root}, `ip netns list` works: {ip}); set ECHOLAB_SKIP_NETNS=1 to skip"
    );
    true
}

// ---- `echolab run` to its end, and the results.csv it wrote ----

/// The longest one `echolab run` of a test may take: past it the run is killed and the
/// test fails, so a run that never ends cannot hang the test.
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The longest one `echolab load` of a test may take (each asks for seconds at most);
/// past it the load is killed and the test fails.
pub const LOAD_LIMIT: Duration = Duration::from_secs(120);

/// The longest any other command of a test may take: an echolab report, merge or
/// refusal, a server that must exit at once, a script that reads a run's output.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// The arguments of a run that writes its results and no report, without progress lines.
pub const QUIET_NO_REPORT: &[&str] = &["--no-report", "--quiet"];

/// Writes `text` as DIR/scenario.toml and returns its path.
pub fn write_scenario(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("scenario.toml");
    std::fs::write(&path, text).expect("write scenario.toml");
    path
}

/// `echolab run ARGS` from the checkout (command paths in scenarios are relative to
/// it), to its end (at most [`RUN_LIMIT`]) with stdout and stderr captured. The caller
/// checks how it exited.
pub fn echolab_run(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .args(args);
    output_within(&mut command, RUN_LIMIT)
}

/// `echolab load ARGS` to its end (at most [`LOAD_LIMIT`]) with stdout and stderr
/// captured. The caller checks how it exited.
pub fn load_within(args: &[&str]) -> Output {
    output_within(Command::new(BIN).arg("load").args(args), LOAD_LIMIT)
}

/// `echolab run SCENARIO --out OUT EXTRA...` (see [`echolab_run`]); the caller checks
/// how it exited.
pub fn run_scenario(scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        scenario.to_str().expect("a UTF-8 scenario path"),
        "--out",
        out.to_str().expect("a UTF-8 output path"),
    ];
    args.extend_from_slice(extra);
    echolab_run(&args)
}

/// [`run_scenario`], failing the test with the run's stdout and stderr unless it exits 0;
/// returns the rows of the results.csv it wrote.
pub fn run_scenario_ok(scenario: &Path, out: &Path, extra: &[&str]) -> Vec<ResultsRow> {
    let output = run_scenario(scenario, out, extra);
    assert!(
        output.status.success(),
        "echolab run {} --out {} {extra:?}: {}\n{}\n{}",
        scenario.display(),
        out.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    results_rows(out)
}

/// Runs `command` to its end with stdout and stderr captured, like
/// [`Command::output`], but kills it and fails the test after `limit`.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    finish_within(child, &format!("{command:?}"), limit)
}

/// Waits for `child` (`what` names it) to exit and returns what it wrote to the stdout
/// and stderr it was given as pipes (empty for the others). Fails the test, with the
/// stderr so far, when it has not exited within `limit` (it is killed) or a process it
/// started still holds its pipes then. The pipes are read while it runs, so a child that
/// writes more than a pipe holds never blocks on them.
pub fn finish_within(mut child: Child, what: &str, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    let stdout_pipe = read_in_background(child.stdout.take());
    let stderr_pipe = read_in_background(child.stderr.take());
    let status = wait_timeout(&mut child, limit);
    // Once it is killed, echolab's own children die with it (PR_SET_PDEATHSIG) and
    // the pipes close: a second is enough for its last words.
    let read_until = match status {
        Some(_) => deadline,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Instant::now() + Duration::from_secs(1)
        }
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let closed = read_until_closed(&stdout_pipe, &mut stdout, read_until)
        & read_until_closed(&stderr_pipe, &mut stderr, read_until);
    let said = || String::from_utf8_lossy(&stderr).into_owned();
    match status {
        Some(status) if closed => Output {
            status,
            stdout,
            stderr,
        },
        Some(status) => panic!(
            "{what} exited ({status}), but after {limit:?} a process it started still holds \
             its stdout or stderr; its stderr: {}",
            said()
        ),
        None => panic!(
            "{what} did not finish within {limit:?} and was killed; its stderr: {}",
            said()
        ),
    }
}

/// Reads `pipe` on a thread of its own, handing over each piece as it comes; the
/// channel closes at the pipe's end (at once for no pipe).
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (send, receive) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                if send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
    }
    receive
}

/// Appends what `pipe` brings to `into` until the pipe's end (true) or `deadline`
/// (false; what had come by then is appended).
fn read_until_closed(pipe: &Receiver<Vec<u8>>, into: &mut Vec<u8>, deadline: Instant) -> bool {
    loop {
        match pipe.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(piece) => into.extend_from_slice(&piece),
            Err(RecvTimeoutError::Disconnected) => return true,
            Err(RecvTimeoutError::Timeout) => return false,
        }
    }
}

/// A results.csv row: column name to cell.
pub type ResultsRow = std::collections::HashMap<String, String>;

/// The rows of `out`/results.csv by column name, after checking its header is
/// the crate's own.
pub fn results_rows(out: &Path) -> Vec<ResultsRow> {
    let mut reader = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, echolab::results::RESULTS_HEADER);
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// The cell `column` of a results.csv row as a number; fails naming the column and the
/// row when it is not one (e.g. empty).
pub fn number(row: &ResultsRow, column: &str) -> f64 {
    let cell = row
        .get(column)
        .unwrap_or_else(|| panic!("no column {column} in {row:?}"));
    cell.parse()
        .unwrap_or_else(|_| panic!("{column} is {cell:?}, not a number: {row:?}"))
}
