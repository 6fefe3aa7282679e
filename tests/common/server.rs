//! The server harness: `echolab serve` as a child process on an ephemeral loopback port,
//! its log and summary, and signals and bounded waits for child processes.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::*;

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
        for child in children(self.pid() as u32) {
            total += rss_of(child as i32);
        }
        total
    }

    /// CPU seconds (user + system) the server has used so far.
    pub fn cpu_seconds(&self) -> f64 {
        let fields = stat_fields(self.pid() as u32).unwrap_or_default();
        let field = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
        let ticks = field(11).unwrap_or(0.0) + field(12).unwrap_or(0.0);
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

    /// Waits (at most 10 s) until the server's fd count has stayed the same for 1 s: long
    /// enough for a server slow to react on a loaded machine.
    pub fn wait_fds_settled(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = fd_count(self.pid());
        let mut stable_since = Instant::now();
        while stable_since.elapsed() < Duration::from_secs(1) {
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

/// The name of every server model, from the crate's own list.
pub fn model_names() -> Vec<&'static str> {
    echolab::server::Model::ALL
        .iter()
        .map(|m| m.name())
        .collect()
}

/// Expands the suite macro `$suite` with every model and the epoll variants, each as
/// `module: "model" [its server arguments]`: the suites that run once per variant take
/// their list from here (conformance checks it holds every model).
#[macro_export]
macro_rules! every_variant {
    ($suite:ident) => {
        $suite! {
            threads: "threads" [],
            select: "select" [],
            poll: "poll" [],
            epoll: "epoll" [],
            epoll_level: "epoll" ["--trigger", "level", "--accept", "reuseport"],
            epoll_exclusive: "epoll" ["--accept", "exclusive"],
            uring: "uring" [],
            tokio: "tokio" [],
        }
    };
}

/// A model and the server arguments every test of its module starts it with (one module
/// per model or variant, e.g. `epoll_level: "epoll" ["--trigger", "level"]`).
pub struct Variant {
    pub name: &'static str,
    pub model: &'static str,
    pub args: &'static [&'static str],
}

/// Starts the variant's server with its own arguments plus `extra`.
pub fn start(variant: &Variant, extra: &[&str]) -> Server {
    start_with(variant, extra, |_| {})
}

/// [`start`], with `adjust` applied to the command before it runs.
pub fn start_with(variant: &Variant, extra: &[&str], adjust: impl FnOnce(&mut Command)) -> Server {
    let args: Vec<&str> = variant.args.iter().chain(extra).copied().collect();
    Server::start_with(variant.model, &args, adjust)
}
