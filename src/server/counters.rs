//! Per-connection and per-host counters, the CSV connection log and the summary.
//!
//! Every model reports to one [`Stats`]: `admit` when a connection is accepted,
//! `refuse` when one is turned away, `close` with its [`ServerConnRecord`] when it ends.
//! Closing appends one row to the `--log` CSV and adds to the per-host totals.

use crate::sys::unix_now;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// The client shut down its side and everything pending was echoed.
    ClientClosed,
    /// The client reset the connection (ECONNRESET, EPIPE).
    Reset,
    /// No byte arrived for `--idle-timeout`.
    IdleTimeout,
    /// The server was stopped while the connection was open.
    Shutdown,
    /// Any other I/O error.
    Error,
}

/// Why an accepted connection was turned away at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseReason {
    /// `--max-conns` connections were already open.
    MaxConns,
    /// select(2) cannot watch an fd >= FD_SETSIZE.
    FdSetsize,
    /// The process ran out of file descriptors (EMFILE/ENFILE).
    FdLimit,
    /// No thread could be spawned for the connection.
    ThreadSpawn,
    /// The model could not register the connection (e.g. epoll_ctl or io_uring failed).
    Resources,
}

impl CloseReason {
    /// The reason a connection is closed for after `error` on it: the peer's reset
    /// (or its timeout) is `Reset`, anything else `Error`.
    pub fn from_io_error(error: &io::Error) -> CloseReason {
        match error.raw_os_error() {
            Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED) => {
                CloseReason::Reset
            }
            Some(libc::ETIMEDOUT) => CloseReason::Reset,
            _ => CloseReason::Error,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CloseReason::ClientClosed => "client_closed",
            CloseReason::Reset => "reset",
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Error => "error",
        }
    }
}

impl RefuseReason {
    pub fn name(self) -> &'static str {
        match self {
            RefuseReason::MaxConns => "max_conns",
            RefuseReason::FdSetsize => "fd_setsize",
            RefuseReason::FdLimit => "fd_limit",
            RefuseReason::ThreadSpawn => "thread_spawn",
            RefuseReason::Resources => "resources",
        }
    }
}

/// What one connection did; kept by the model while it is open.
#[derive(Clone, Debug)]
pub struct ServerConnRecord {
    pub peer: SocketAddr,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub reads: u64,
    pub opened_unix: f64,
}

impl ServerConnRecord {
    pub fn new(peer: SocketAddr) -> Self {
        ServerConnRecord {
            peer,
            bytes_in: 0,
            bytes_out: 0,
            reads: 0,
            opened_unix: unix_now(),
        }
    }
}

/// One row of the `--log` CSV: a closed connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LogRow {
    pub peer_ip: IpAddr,
    pub peer_port: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub reads: u64,
    pub opened_unix: f64,
    pub closed_unix: f64,
    pub close_reason: CloseReason,
}

/// Totals for one client host (peer IP address).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostTotals {
    pub host: String,
    pub connections: u64,
    pub refused: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub reads: u64,
}

/// The server's summary, printed on shutdown and written by `--summary-json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerSummary {
    pub model: String,
    pub addr: String,
    pub pid: u32,
    pub processes: usize,
    pub workers: usize,
    pub fd_limit: u64,
    pub started_unix: f64,
    pub stopped_unix: f64,
    /// Most connections open at one moment (for several processes: the sum of each one's maximum).
    pub max_concurrent: u64,
    pub accepted: u64,
    pub refused: BTreeMap<String, u64>,
    /// The first error the kernel returned for a refusal reason, as observed
    /// ("thread_spawn" -> "EAGAIN (Resource temporarily unavailable)").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub refusal_errors: BTreeMap<String, String>,
    pub closed: BTreeMap<String, u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub reads: u64,
    pub hosts: Vec<HostTotals>,
}

impl ServerSummary {
    pub fn refused_total(&self) -> u64 {
        self.refused.values().sum()
    }

    /// Adds another process's summary into this one (used by `--processes`).
    pub fn absorb(&mut self, other: &ServerSummary) {
        self.max_concurrent += other.max_concurrent;
        self.accepted += other.accepted;
        for (reason, count) in &other.refused {
            *self.refused.entry(reason.clone()).or_default() += count;
        }
        for (reason, error) in &other.refusal_errors {
            self.refusal_errors
                .entry(reason.clone())
                .or_insert_with(|| error.clone());
        }
        for (reason, count) in &other.closed {
            *self.closed.entry(reason.clone()).or_default() += count;
        }
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.reads += other.reads;
        for host in &other.hosts {
            match self.hosts.iter_mut().find(|h| h.host == host.host) {
                Some(mine) => {
                    mine.connections += host.connections;
                    mine.refused += host.refused;
                    mine.bytes_in += host.bytes_in;
                    mine.bytes_out += host.bytes_out;
                    mine.reads += host.reads;
                }
                None => self.hosts.push(host.clone()),
            }
        }
        self.hosts.sort_by(|a, b| a.host.cmp(&b.host));
    }

    /// The human-readable summary printed on stderr at shutdown.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let duration = (self.stopped_unix - self.started_unix).max(0.0);
        out.push_str(&format!(
            "echolab serve summary: model {} on {} ({} process{}, {} worker{}, fd limit {}), ran {:.1} s\n",
            self.model,
            self.addr,
            self.processes,
            if self.processes == 1 { "" } else { "es" },
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.fd_limit,
            duration
        ));
        out.push_str(&format!(
            "  max concurrent connections  {}\n",
            self.max_concurrent
        ));
        out.push_str(&format!(
            "  accepted                    {}\n",
            self.accepted
        ));
        out.push_str(&format!(
            "  refused                     {}",
            self.refused_total()
        ));
        push_reasons(&mut out, &self.refused);
        for (reason, error) in &self.refusal_errors {
            out.push_str(&format!("    {reason}: the kernel returned {error}\n"));
        }
        out.push_str(&format!(
            "  closed                      {}",
            self.closed.values().sum::<u64>()
        ));
        push_reasons(&mut out, &self.closed);
        out.push_str(&format!(
            "  bytes in / out              {} / {}\n",
            self.bytes_in, self.bytes_out
        ));
        out.push_str(&format!("  reads                       {}\n", self.reads));
        if !self.hosts.is_empty() {
            out.push_str(&format!(
                "  {:<40} {:>11} {:>8} {:>14} {:>14} {:>10}\n",
                "host", "connections", "refused", "bytes in", "bytes out", "reads"
            ));
            for host in &self.hosts {
                out.push_str(&format!(
                    "  {:<40} {:>11} {:>8} {:>14} {:>14} {:>10}\n",
                    host.host,
                    host.connections,
                    host.refused,
                    host.bytes_in,
                    host.bytes_out,
                    host.reads
                ));
            }
        }
        out
    }
}

fn push_reasons(out: &mut String, reasons: &BTreeMap<String, u64>) {
    let listed: Vec<String> = reasons
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(reason, n)| format!("{reason}: {n}"))
        .collect();
    if listed.is_empty() {
        out.push('\n');
    } else {
        out.push_str(&format!("  ({})\n", listed.join(", ")));
    }
}

/// Totals that change together, behind one lock.
#[derive(Default)]
struct Totals {
    refused: BTreeMap<RefuseReason, u64>,
    refusal_errors: BTreeMap<RefuseReason, String>,
    closed: BTreeMap<CloseReason, u64>,
    bytes_in: u64,
    bytes_out: u64,
    reads: u64,
    hosts: BTreeMap<IpAddr, HostTotals>,
}

/// The counters one server process shares across its threads.
pub struct Stats {
    active: AtomicU64,
    max_active: AtomicU64,
    accepted: AtomicU64,
    max_conns: Option<u64>,
    started_unix: f64,
    totals: Mutex<Totals>,
    log: Mutex<Option<csv::Writer<BufWriter<File>>>>,
    /// The log's path, for the messages.
    log_path: Option<PathBuf>,
    /// The first write to the log that failed: the log stops there, and the exit reports it.
    log_failure: Mutex<Option<String>>,
}

impl Stats {
    /// Creates the counters; with a log path, creates the CSV log and writes its header.
    pub fn new(log_path: Option<&Path>, max_conns: Option<usize>) -> io::Result<Stats> {
        let log = match log_path {
            Some(path) => {
                let file = File::create(path).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot create log {}: {e}", path.display()),
                    )
                })?;
                let mut writer = csv::WriterBuilder::new()
                    .has_headers(false)
                    .from_writer(BufWriter::new(file));
                writer.write_record([
                    "peer_ip",
                    "peer_port",
                    "bytes_in",
                    "bytes_out",
                    "reads",
                    "opened_unix",
                    "closed_unix",
                    "close_reason",
                ])?;
                Some(writer)
            }
            None => None,
        };
        Ok(Stats {
            active: AtomicU64::new(0),
            max_active: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            max_conns: max_conns.map(|n| n as u64),
            started_unix: unix_now(),
            totals: Mutex::new(Totals::default()),
            log: Mutex::new(log),
            log_path: log_path.map(Path::to_path_buf),
            log_failure: Mutex::new(None),
        })
    }

    /// Counts an accepted connection as open, unless `--max-conns` are already open:
    /// then it is counted as refused and `None` is returned (the caller closes it).
    pub fn admit(&self, peer: SocketAddr) -> Option<ServerConnRecord> {
        let mut active = self.active.load(Ordering::Relaxed);
        loop {
            if self.max_conns.is_some_and(|max| active >= max) {
                self.refuse(RefuseReason::MaxConns, Some(peer));
                return None;
            }
            match self.active.compare_exchange_weak(
                active,
                active + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => active = now,
            }
        }
        self.max_active.fetch_max(active + 1, Ordering::Relaxed);
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Some(ServerConnRecord::new(peer))
    }

    /// Counts a connection turned away (its peer, when known, is added to the host's refusals).
    pub fn refuse(&self, reason: RefuseReason, peer: Option<SocketAddr>) {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        *totals.refused.entry(reason).or_default() += 1;
        if let Some(peer) = peer {
            host_entry(&mut totals.hosts, peer.ip()).refused += 1;
        }
    }

    /// Turns an admitted connection into a refused one, for a model that cannot serve it
    /// after all (no thread for it, an fd select(2) cannot watch, a failed registration):
    /// it no longer counts as open or accepted, and gets no log row.
    pub fn refuse_admitted(&self, record: &ServerConnRecord, reason: RefuseReason) {
        self.active.fetch_sub(1, Ordering::AcqRel);
        self.accepted.fetch_sub(1, Ordering::Relaxed);
        self.refuse(reason, Some(record.peer));
    }

    /// [`Stats::refuse_admitted`] with the error the kernel returned; the first one
    /// of each reason is kept for the summary.
    pub fn refuse_admitted_with(
        &self,
        record: &ServerConnRecord,
        reason: RefuseReason,
        error: &io::Error,
    ) {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .refusal_errors
            .entry(reason)
            .or_insert_with(|| describe_os_error(error));
        self.refuse_admitted(record, reason);
    }

    /// Counts a connection as closed, adds it to the totals and appends its row to the log.
    pub fn close(&self, record: &ServerConnRecord, reason: CloseReason) {
        self.active.fetch_sub(1, Ordering::AcqRel);
        {
            let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
            *totals.closed.entry(reason).or_default() += 1;
            totals.bytes_in += record.bytes_in;
            totals.bytes_out += record.bytes_out;
            totals.reads += record.reads;
            let host = host_entry(&mut totals.hosts, record.peer.ip());
            host.connections += 1;
            host.bytes_in += record.bytes_in;
            host.bytes_out += record.bytes_out;
            host.reads += record.reads;
        }
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(writer) = log.as_mut() {
            let row = LogRow {
                peer_ip: record.peer.ip(),
                peer_port: record.peer.port(),
                bytes_in: record.bytes_in,
                bytes_out: record.bytes_out,
                reads: record.reads,
                opened_unix: record.opened_unix,
                closed_unix: unix_now(),
                close_reason: reason,
            };
            if let Err(error) = writer.serialize(row) {
                self.log_failed(&error.to_string());
                *log = None;
            }
        }
    }

    /// Connections open right now.
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Acquire)
    }

    /// Records the log's first write failure (said at once, and again by `flush_log`).
    fn log_failed(&self, error: &str) {
        let mut failure = self.log_failure.lock().unwrap_or_else(|e| e.into_inner());
        if failure.is_none() {
            let path = self.log_path.as_deref().unwrap_or(Path::new("?"));
            let message = format!(
                "writing the connection log {} failed: {error}; later rows are lost",
                path.display()
            );
            crate::errln!("echolab serve: {message}");
            *failure = Some(message);
        }
    }

    /// Flushes the connection log to disk; an error when this or any earlier write failed.
    pub fn flush_log(&self) -> io::Result<()> {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(writer) = log.as_mut() {
            if let Err(error) = writer.flush() {
                self.log_failed(&error.to_string());
                *log = None;
            }
        }
        match &*self.log_failure.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(message) => Err(io::Error::other(message.clone())),
            None => Ok(()),
        }
    }

    /// The totals so far; `model`, `addr` and the other settings are filled in by the caller.
    pub fn summary(&self) -> ServerSummary {
        let totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        ServerSummary {
            pid: std::process::id(),
            processes: 1,
            started_unix: self.started_unix,
            stopped_unix: unix_now(),
            max_concurrent: self.max_active.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: totals
                .refused
                .iter()
                .map(|(r, n)| (r.name().to_string(), *n))
                .collect(),
            refusal_errors: totals
                .refusal_errors
                .iter()
                .map(|(r, e)| (r.name().to_string(), e.clone()))
                .collect(),
            closed: totals
                .closed
                .iter()
                .map(|(r, n)| (r.name().to_string(), *n))
                .collect(),
            bytes_in: totals.bytes_in,
            bytes_out: totals.bytes_out,
            reads: totals.reads,
            hosts: totals.hosts.values().cloned().collect(),
            ..ServerSummary::default()
        }
    }
}

/// "EAGAIN (Resource temporarily unavailable)": the errno's name, then its text.
pub fn describe_os_error(error: &io::Error) -> String {
    let name = match error.raw_os_error() {
        Some(libc::EAGAIN) => "EAGAIN",
        Some(libc::ENOMEM) => "ENOMEM",
        Some(libc::EMFILE) => "EMFILE",
        Some(libc::ENFILE) => "ENFILE",
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::EPERM) => "EPERM",
        _ => return error.to_string(),
    };
    let text = error.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    format!("{name} ({text})")
}

fn host_entry(hosts: &mut BTreeMap<IpAddr, HostTotals>, ip: IpAddr) -> &mut HostTotals {
    hosts.entry(ip).or_insert_with(|| HostTotals {
        host: ip.to_string(),
        ..HostTotals::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_close_reasons() {
        for errno in [
            libc::ECONNRESET,
            libc::EPIPE,
            libc::ECONNABORTED,
            libc::ETIMEDOUT,
        ] {
            let error = io::Error::from_raw_os_error(errno);
            assert_eq!(CloseReason::from_io_error(&error), CloseReason::Reset);
        }
        for error in [
            io::Error::from_raw_os_error(libc::EBADF),
            io::Error::from(io::ErrorKind::WriteZero),
        ] {
            assert_eq!(CloseReason::from_io_error(&error), CloseReason::Error);
        }
    }
}
