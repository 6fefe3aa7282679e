//! Shared test harness: runs `echolab serve` as a child process on an ephemeral
//! loopback port and talks to it over real sockets.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
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
    pub fn stop(mut self) -> Stopped {
        signal(self.pid(), libc::SIGTERM);
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

pub fn read_log(path: &std::path::Path) -> Vec<LogRow> {
    match csv::Reader::from_path(path) {
        Ok(mut reader) => reader
            .deserialize()
            .map(|row| row.expect("valid log row"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn rss_of(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
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
