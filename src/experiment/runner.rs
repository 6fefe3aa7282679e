//! The runner: for each model, each step and each repetition, a fresh server and
//! one load-generator run, measured, judged and written to results.csv.
//!
//! A fresh server per step and repetition keeps each step's server counters
//! (bytes, connections, CPU, memory) exact and joinable with the client's, and
//! keeps a step that broke a server from spoiling the next one.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde::Serialize;
use serde_json::Value;

use super::hosts::{self, Host, Hosts};
use super::probe::{self, Probe, Sample};
use super::process::{self, Guard};
use super::scenario::{trim_float, FailureRule, LoadOptions, ModelEntry, Scenario, Step};

/// How long a server may take to print its `listening on` line.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a server may take to close its connections and write its summary.
const STOP_GRACE: Duration = Duration::from_secs(30);
/// How long the load generator may take to flush after SIGINT.
const LOAD_GRACE: Duration = Duration::from_secs(10);
const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// How long `echolab merge` may take to combine the client hosts' results.
const MERGE_TIMEOUT: Duration = Duration::from_secs(120);

/// The header of results.csv, in order (the report reads it).
pub const RESULTS_HEADER: [&str; 36] = [
    "model",
    "step",
    "repetition",
    "connections",
    "size",
    "delay_ms",
    "rate",
    "workers",
    "status",
    "failure_reason",
    "duration_s",
    "connections_established",
    "max_concurrent_server",
    "requests",
    "throughput_rps",
    "throughput_mib_s",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "errors",
    "error_rate",
    "mismatches",
    "server_cpu_pct",
    "server_cpu_user_s",
    "server_cpu_sys_s",
    "server_rss_max_bytes",
    "server_rss_per_conn_bytes",
    "server_threads_max",
    "server_fds_max",
    "client_bytes_sent",
    "client_bytes_received",
    "server_bytes_in",
    "server_bytes_out",
    "bytes_match",
];

/// One row of results.csv (fields in header order; None is an empty cell).
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub model: String,
    pub step: String,
    pub repetition: u32,
    pub connections: u64,
    pub size: u64,
    pub delay_ms: f64,
    pub rate: Option<f64>,
    pub workers: Option<u64>,
    pub status: String,
    pub failure_reason: String,
    pub duration_s: Option<f64>,
    pub connections_established: Option<u64>,
    pub max_concurrent_server: Option<u64>,
    pub requests: Option<u64>,
    pub throughput_rps: Option<f64>,
    pub throughput_mib_s: Option<f64>,
    pub p50_us: Option<f64>,
    pub p90_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub errors: Option<u64>,
    pub error_rate: Option<f64>,
    pub mismatches: Option<u64>,
    pub server_cpu_pct: Option<f64>,
    pub server_cpu_user_s: Option<f64>,
    pub server_cpu_sys_s: Option<f64>,
    pub server_rss_max_bytes: Option<u64>,
    pub server_rss_per_conn_bytes: Option<u64>,
    pub server_threads_max: Option<u64>,
    pub server_fds_max: Option<u64>,
    pub client_bytes_sent: Option<u64>,
    pub client_bytes_received: Option<u64>,
    pub server_bytes_in: Option<u64>,
    pub server_bytes_out: Option<u64>,
    pub bytes_match: Option<bool>,
}

/// results.csv, flushed after every row so an interrupted run keeps what it finished.
pub struct ResultsCsv {
    writer: csv::Writer<File>,
}

impl ResultsCsv {
    pub fn create(path: &Path) -> anyhow::Result<ResultsCsv> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        writer.write_record(RESULTS_HEADER)?;
        writer.flush()?;
        Ok(ResultsCsv { writer })
    }

    pub fn append(&mut self, row: &Row) -> anyhow::Result<()> {
        self.writer.serialize(row)?;
        self.writer.flush()?;
        Ok(())
    }
}

/// Where and how to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The echolab binary the servers and load generators are started from.
    pub exe: PathBuf,
    pub out: PathBuf,
    /// Show an indicatif bar (a terminal) or print plain lines.
    pub progress_bar: bool,
    /// Print progress at all.
    pub quiet: bool,
}

/// What a run produced.
pub struct RunOutcome {
    pub rows: Vec<Row>,
    pub interrupted: bool,
}

/// What the server side of a step left behind.
#[derive(Debug, Default)]
struct ServerSide {
    summary: Option<Value>,
    died: Option<String>,
    start_error: Option<String>,
    stop_problem: Option<String>,
    samples: Vec<Sample>,
    at_load_start: Option<Sample>,
    at_load_end: Option<Sample>,
    load_wall_s: f64,
}

/// What the client side of a step left behind.
#[derive(Debug, Default)]
struct LoadSide {
    summary: Option<Value>,
    exit: Option<String>,
    timed_out: bool,
}

fn get_u64(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_u64().or_else(|| cur.as_f64().map(|f| f as u64))
}

fn get_f64(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_f64()
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// The last line of a file (a child's stderr), for failure reasons.
fn tail(path: &Path) -> String {
    fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{}ms", trim_float(d.as_secs_f64() * 1e3))
}

/// Processes needed so no process holds more than `per` connections.
fn processes_for(connections: u64, per: Option<u64>) -> Option<u64> {
    per.filter(|per| connections > *per)
        .map(|per| connections.div_ceil(per))
}

/// `echolab serve` arguments for one step.
pub fn server_args(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> Vec<String> {
    let o = &entry.options;
    let mut a: Vec<String> = vec![
        "serve".into(),
        "--model".into(),
        entry.model.name().into(),
        "--addr".into(),
        SocketAddr::new(bind, 0).to_string(),
        "--log".into(),
        dir.join("server-log.csv").display().to_string(),
        "--summary-json".into(),
        dir.join("server-summary.json").display().to_string(),
    ];
    let mut push = |flag: &str, value: String| {
        a.push(flag.into());
        a.push(value);
    };
    if let Some(w) = step.workers.or(o.workers.map(|w| w.0)) {
        push("--workers", w.to_string());
    }
    if let Some(t) = o.trigger {
        push("--trigger", format!("{t:?}").to_lowercase());
    }
    if let Some(m) = o.accept {
        push("--accept", format!("{m:?}").to_lowercase());
    }
    let processes = o.processes.map(|p| p.0).or_else(|| {
        entry
            .model
            .supports_processes()
            .then(|| processes_for(step.connections, o.conns_per_process.map(|c| c.0)))
            .flatten()
    });
    if let Some(p) = processes {
        push("--processes", p.to_string());
    }
    if let Some(m) = o.max_conns {
        push("--max-conns", m.0.to_string());
    }
    if let Some(d) = o.idle_timeout {
        push("--idle-timeout", ms(d.0));
    }
    if let Some(b) = o.max_pending {
        push("--max-pending", b.0.to_string());
    }
    if let Some(b) = o.thread_stack {
        push("--thread-stack", b.0.to_string());
    }
    if let Some(b) = o.backlog {
        push("--backlog", b.0.to_string());
    }
    if o.sqpoll == Some(true) {
        a.push("--sqpoll".into());
    }
    a.extend(o.args.iter().flatten().cloned());
    a
}

/// How long opening `connections` at `rate` per second takes.
fn ramp_time(connections: u64, rate: f64) -> Duration {
    Duration::from_secs_f64(connections as f64 / rate)
}

/// `echolab load` arguments for one step, writing its results into `out`.
pub fn load_args(load: &LoadOptions, step: &Step, target: SocketAddr, out: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "load".into(),
        "--target".into(),
        target.to_string(),
        "--connections".into(),
        step.connections.to_string(),
    ];
    let mut push = |flag: &str, value: String| {
        a.push(flag.into());
        a.push(value);
    };
    if let Some(m) = &load.message {
        push("--message", m.clone());
    } else if let Some(p) = &load.payload_file {
        push("--payload-file", p.clone());
    } else {
        push("--size", step.size.to_string());
    }
    if let Some(r) = load.requests {
        push("--requests", r.0.to_string());
    }
    if let Some(d) = load.duration {
        push("--duration", ms(d.0));
    }
    if let Some(d) = step.delay {
        push("--delay", ms(d));
    }
    if let Some(r) = step.rate {
        push("--rate", trim_float(r));
    }
    if let Some(r) = load.connect_rate {
        push("--connect-rate", trim_float(r.0));
    }
    if let Some(d) = load.connect_timeout {
        push("--connect-timeout", ms(d.0));
    }
    if let Some(d) = load.hold {
        push("--hold", ms(d.0));
    }
    if let (Some(d), Some(r)) = (load.hold_together, load.connect_rate) {
        // Twice the nominal ramp: a busy machine opens connections slower than asked.
        push("--hold", ms(d.0 + ramp_time(step.connections, r.0) * 2));
    }
    if let Some(t) = load.threads {
        push("--threads", t.0.to_string());
    }
    let processes = load
        .processes
        .map(|p| p.0)
        .or_else(|| processes_for(step.connections, load.conns_per_process.map(|c| c.0)));
    if let Some(p) = processes {
        push("--processes", p.to_string());
    }
    if let Some(s) = &load.source_addrs {
        push("--source-addrs", s.clone());
    }
    if let Some(s) = load.seed {
        push("--seed", s.to_string());
    }
    if load.reconnect == Some(true) {
        a.push("--reconnect".into());
    }
    a.extend(load.args.iter().flatten().cloned());
    a.push("--out".into());
    a.push(out.display().to_string());
    a.push("--quiet".into());
    a
}

/// The wall-clock bound of one load run: the scenario's, or one derived from the load shape.
fn step_timeout(scenario: &Scenario, step: &Step) -> Duration {
    if let Some(t) = scenario.step_timeout {
        return t;
    }
    let load = &scenario.load;
    let mut t = Duration::from_secs(60);
    match load.duration {
        Some(d) => t += d.0,
        None => t += Duration::from_secs(240),
    }
    if let Some(h) = load.hold.or(load.hold_together) {
        t += h.0;
    }
    if let Some(r) = load.connect_rate {
        // Once for opening, twice more for a hold_together that covers the ramp.
        t += ramp_time(step.connections, r.0) * 3;
    }
    t
}

/// Applies the failure rule; None when the step passed.
fn judge(rule: &FailureRule, step: &Step, server: &ServerSide, load: &LoadSide) -> Option<String> {
    if let Some(e) = &server.start_error {
        return Some(e.clone());
    }
    if let Some(d) = &server.died {
        return Some(d.clone());
    }
    if load.timed_out {
        return Some("load generator did not finish within the step timeout".into());
    }
    let Some(summary) = &load.summary else {
        return Some(format!(
            "load generator left no summary ({})",
            load.exit.as_deref().unwrap_or("no exit status")
        ));
    };
    let established = get_u64(summary, &["connections_established"]).unwrap_or(0);
    let needed = (rule.min_established.0 * step.connections as f64).ceil() as u64;
    if established < needed {
        return Some(format!(
            "{established} of {} connections established (needed {needed})",
            step.connections
        ));
    }
    if let Some(refused) = server
        .summary
        .as_ref()
        .and_then(|s| s.get("refused"))
        .and_then(|r| r.as_object())
    {
        let total: u64 = refused.values().filter_map(|v| v.as_u64()).sum();
        if total > rule.max_refused {
            let why: Vec<String> = refused
                .iter()
                .filter(|(_, v)| v.as_u64().unwrap_or(0) > 0)
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            return Some(format!(
                "server refused {total} connections ({})",
                why.join(", ")
            ));
        }
    }
    if let (Some(fraction), Some(held)) = (
        rule.min_concurrent,
        server
            .summary
            .as_ref()
            .and_then(|s| get_u64(s, &["max_concurrent"])),
    ) {
        let needed = (fraction.0 * step.connections as f64).ceil() as u64;
        let client_held = get_u64(summary, &["max_concurrent"]).unwrap_or(held);
        if held < needed && client_held < needed {
            return Some(format!(
                "connections opened too slowly to be open all at once: at most {client_held} of {} \
                 on the client, {held} on the server (a slow accept or a busy machine; a longer \
                 hold_together tells them apart)",
                step.connections
            ));
        }
        if held < needed {
            return Some(format!(
                "server held at most {held} of {} connections at once (needed {needed})",
                step.connections
            ));
        }
    }
    let error_rate = get_f64(summary, &["error_rate"]).unwrap_or(0.0);
    if error_rate > rule.max_error_rate.0 {
        return Some(format!(
            "error rate {:.4} above {} ({} errors)",
            error_rate,
            rule.max_error_rate.0,
            get_u64(summary, &["errors_total"]).unwrap_or(0)
        ));
    }
    let mismatches = get_u64(summary, &["mismatches"]).unwrap_or(0);
    if mismatches > 0 {
        return Some(format!(
            "{mismatches} echoed bytes did not match what was sent"
        ));
    }
    if let (Some(bound), Some(p99)) = (rule.max_p99, get_f64(summary, &["latency_us", "p99"])) {
        if p99 > bound.0.as_secs_f64() * 1e6 {
            return Some(format!(
                "p99 {} us above {}",
                trim_float(p99.round()),
                ms(bound.0)
            ));
        }
    }
    if rule.bytes_match {
        if let Some(s) = &server.summary {
            let pairs = [
                ("sent", "bytes_sent", "received", "bytes_in"),
                ("received", "bytes_received", "sent", "bytes_out"),
            ];
            for (client_verb, client_key, server_verb, server_key) in pairs {
                let c = get_u64(summary, &[client_key]);
                let sv = get_u64(s, &[server_key]);
                if c != sv {
                    return Some(format!(
                        "bytes differ: client {client_verb} {}, server {server_verb} {}",
                        c.map_or("?".into(), |v| v.to_string()),
                        sv.map_or("?".into(), |v| v.to_string())
                    ));
                }
            }
        }
    }
    if let Some(p) = &server.stop_problem {
        return Some(p.clone());
    }
    None
}

/// Builds a row from a step's measurements.
fn measure(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    if let Some(l) = &load.summary {
        row.duration_s = get_f64(l, &["duration_s"]);
        row.connections_established = get_u64(l, &["connections_established"]);
        row.requests = get_u64(l, &["requests_completed"]);
        row.throughput_rps = get_f64(l, &["throughput_rps"]);
        row.throughput_mib_s =
            get_f64(l, &["throughput_bytes_per_s"]).map(|b| b / (1u64 << 20) as f64);
        row.p50_us = get_f64(l, &["latency_us", "p50"]);
        row.p90_us = get_f64(l, &["latency_us", "p90"]);
        row.p99_us = get_f64(l, &["latency_us", "p99"]);
        row.p999_us = get_f64(l, &["latency_us", "p999"]);
        row.max_us = get_f64(l, &["latency_us", "max"]);
        row.errors = get_u64(l, &["errors_total"]);
        row.error_rate = get_f64(l, &["error_rate"]);
        row.mismatches = get_u64(l, &["mismatches"]);
        row.client_bytes_sent = get_u64(l, &["bytes_sent"]);
        row.client_bytes_received = get_u64(l, &["bytes_received"]);
    }
    if let Some(s) = &server.summary {
        row.max_concurrent_server = get_u64(s, &["max_concurrent"]);
        row.server_bytes_in = get_u64(s, &["bytes_in"]);
        row.server_bytes_out = get_u64(s, &["bytes_out"]);
        if row.workers.is_none() {
            row.workers = get_u64(s, &["workers"]);
        }
    }
    if let (Some(a), Some(b)) = (server.at_load_start, server.at_load_end) {
        let user = b.cpu_user_s - a.cpu_user_s;
        let sys = b.cpu_sys_s - a.cpu_sys_s;
        row.server_cpu_user_s = Some(round(user, 3));
        row.server_cpu_sys_s = Some(round(sys, 3));
        if server.load_wall_s > 0.0 {
            row.server_cpu_pct = Some(round((user + sys) / server.load_wall_s * 100.0, 1));
        }
    }
    let window: Vec<&Sample> = server
        .samples
        .iter()
        .chain(server.at_load_start.iter())
        .chain(server.at_load_end.iter())
        .collect();
    if !window.is_empty() {
        let rss_max = window.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
        row.server_rss_max_bytes = Some(rss_max);
        row.server_threads_max = window.iter().map(|s| s.threads).max();
        row.server_fds_max = window.iter().map(|s| s.fds).max();
        // Memory a connection costs: growth over the idle server, per connection held.
        let held = row
            .max_concurrent_server
            .filter(|c| *c > 0)
            .or(row.connections_established.filter(|c| *c > 0));
        if let (Some(idle), Some(held)) = (server.at_load_start, held) {
            row.server_rss_per_conn_bytes = Some(rss_max.saturating_sub(idle.rss_bytes) / held);
        }
    }
    if let (Some(cs), Some(cr), Some(si), Some(so)) = (
        row.client_bytes_sent,
        row.client_bytes_received,
        row.server_bytes_in,
        row.server_bytes_out,
    ) {
        row.bytes_match = Some(cs == si && cr == so);
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// A started server: its guard, address, the pid to probe and its stdout copier.
struct Started {
    guard: Guard,
    addr: SocketAddr,
    pid: u32,
    reader: std::thread::JoinHandle<()>,
}

/// The pid a `listening on ... pid=N` line announces.
fn announced_pid(line: &str) -> Option<u32> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("pid="))
        .and_then(|p| p.parse().ok())
}

/// Starts the server (inside `host` when given) and waits for its `listening on ADDR` line.
fn start_server(
    config: &RunConfig,
    entry: &ModelEntry,
    step: &Step,
    dir: &Path,
    host: Option<&Host>,
) -> Result<Started, String> {
    let bind = host.map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |h| IpAddr::V4(h.addr));
    let args = server_args(entry, step, dir, bind);
    let (program, args) = wrap_in_host(&config.exe, args, host);
    fs::write(
        dir.join("server-command.txt"),
        command_line(&program, &args),
    )
    .ok();
    let stderr = File::create(dir.join("server-stderr.txt")).map_err(|e| e.to_string())?;
    let cpus = entry.options.cpus.as_deref().and_then(process::cpu_set);
    let mut guard = process::spawn(&program, &args, cpus, Stdio::piped(), stderr.into())
        .map_err(|e| format!("cannot start server: {e}"))?;
    let stdout = guard.child.stdout.take().expect("stdout is piped");
    let mut copy = File::create(dir.join("server-stdout.txt")).map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel();
    // Copies the server's stdout to its file for the whole run, handing over the listening line.
    let reader = std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(copy, "{line}");
            if !sent && line.starts_with("listening on ") {
                let _ = tx.send(line);
                sent = true;
            }
        }
    });
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => {
                let Some(addr) = line.split_whitespace().nth(2) else {
                    return Err("server printed no address on its listening line".into());
                };
                let Ok(addr) = addr.parse() else {
                    return Err(format!("server printed an unreadable address '{addr}'"));
                };
                // Probe the pid the server announces when it is the child or below it (a
                // wrapper such as `ip netns exec` that forked); else the child itself.
                let child = guard.pid();
                let pid = announced_pid(&line)
                    .filter(|p| *p == child || probe::process_tree(child).contains(p))
                    .unwrap_or(child);
                return Ok(Started {
                    guard,
                    addr,
                    pid,
                    reader,
                });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) | Err(mpsc::RecvTimeoutError::Timeout)
                if guard.try_wait().is_some() =>
            {
                let status = guard.try_wait().expect("checked");
                return Err(format!(
                    "server exited before listening ({status}): {}",
                    tail(&dir.join("server-stderr.txt"))
                ));
            }
            Err(_) if process::stop_requested() => return Err("interrupted".into()),
            Err(_) if Instant::now() >= deadline => {
                return Err(format!(
                    "server did not print `listening on` within {} s",
                    START_TIMEOUT.as_secs()
                ))
            }
            Err(_) => {}
        }
    }
}

/// `program args`, or `ip netns exec NS program args` to run inside `host`.
fn wrap_in_host(program: &Path, args: Vec<String>, host: Option<&Host>) -> (PathBuf, Vec<String>) {
    match host {
        None => (program.to_path_buf(), args),
        Some(h) => (
            PathBuf::from("ip"),
            h.exec_args(&program.display().to_string(), &args),
        ),
    }
}

/// A command as one line for the *-command.txt files (the echolab binary itself is implied).
fn command_line(program: &Path, args: &[String]) -> String {
    if program == Path::new("ip") {
        format!("ip {}\n", args.join(" "))
    } else {
        args.join(" ") + "\n"
    }
}

/// One load generator of a step: the only one, or the one on a client host.
struct Agent {
    /// Where it runs, for failure reasons: `load` or `host c2 (198.18.0.12)`.
    name: String,
    out: PathBuf,
    stderr: PathBuf,
    guard: Option<Guard>,
    exit: Option<String>,
}

/// A load generator about to be started.
struct Planned<'a> {
    name: String,
    args: Vec<String>,
    host: Option<&'a Host>,
    out: PathBuf,
    /// The beginning of its stdout/stderr file names.
    files: String,
}

/// Starts the step's load generators: one, or one per client host with `--shard` and a
/// common `--start-at`. Returns them and the instant they start loading.
fn start_load(
    config: &RunConfig,
    scenario: &Scenario,
    step: &Step,
    dir: &Path,
    target: SocketAddr,
    clients: &[Host],
) -> (Vec<Agent>, Instant) {
    let cpus = scenario.load.cpus.as_deref().and_then(process::cpu_set);
    let mut planned: Vec<Planned> = Vec::new();
    let mut start_at = None;
    if clients.is_empty() {
        let out = dir.join("load");
        let args = load_args(&scenario.load, step, target, &out);
        planned.push(Planned {
            name: "load".into(),
            args,
            host: None,
            out,
            files: "load".into(),
        });
    } else {
        // Far enough ahead that every agent is running (namespace entered, preflight
        // done) when the load starts, so the hosts load the server together.
        let margin = Duration::from_millis(500 + 50 * clients.len() as u64);
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + margin;
        start_at = Some(Instant::now() + margin);
        let n = clients.len();
        for (i, host) in clients.iter().enumerate() {
            let file = format!("host-{}", i + 1);
            let out = dir.join("load").join(&file);
            let mut args = load_args(&scenario.load, step, target, &out);
            args.extend([
                "--shard".to_string(),
                format!("{i}/{n}"),
                "--start-at".to_string(),
                format!("{:.3}", at.as_secs_f64()),
            ]);
            let name = format!(
                "host {} ({})",
                &host.namespace[host.namespace.rfind('-').map_or(0, |p| p + 1)..],
                host.addr
            );
            planned.push(Planned {
                name,
                args,
                host: Some(host),
                out,
                files: format!("load-{file}"),
            });
        }
    }
    let mut commands = String::new();
    let mut agents = Vec::new();
    for Planned {
        name,
        args,
        host,
        out,
        files,
    } in planned
    {
        let (program, args) = wrap_in_host(&config.exe, args, host);
        commands += &command_line(&program, &args);
        let stderr = dir.join(format!("{files}-stderr.txt"));
        let spawned = match (
            File::create(dir.join(format!("{files}-stdout.txt"))),
            File::create(&stderr),
        ) {
            (Ok(o), Ok(e)) => {
                process::spawn(&program, &args, cpus, o.into(), e.into()).map_err(|e| e.to_string())
            }
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
        };
        let (guard, exit) = match spawned {
            Ok(g) => (Some(g), None),
            Err(e) => (None, Some(format!("cannot start load generator: {e}"))),
        };
        agents.push(Agent {
            name,
            out,
            stderr,
            guard,
            exit,
        });
    }
    fs::write(dir.join("load-command.txt"), commands).ok();
    // The step's clock (and the server's CPU window) starts when the load does.
    if let Some(at) = start_at {
        while Instant::now() < at && !process::stop_requested() {
            std::thread::sleep(Duration::from_millis(10).min(at - Instant::now()));
        }
    }
    (agents, Instant::now())
}

/// Stops the load generators still running: SIGINT (they flush a partial result),
/// a shared grace period, then SIGKILL.
fn stop_agents(agents: &mut [Agent]) {
    for guard in agents.iter().filter_map(|a| a.guard.as_ref()) {
        guard.signal_group(libc::SIGINT);
    }
    let deadline = Instant::now() + LOAD_GRACE;
    for guard in agents.iter_mut().filter_map(|a| a.guard.as_mut()) {
        if guard
            .wait_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_none()
        {
            guard.signal_group(libc::SIGKILL);
            guard.wait_timeout(Duration::from_secs(5));
        }
    }
}

/// The step's load summary: the one generator's, or the client hosts' merged with
/// `echolab merge` into STEPDIR/load. Sets `exit` when there is none.
fn collect_load(config: &RunConfig, dir: &Path, agents: &[Agent], load_side: &mut LoadSide) {
    let statuses: Vec<String> = agents
        .iter()
        .map(|a| {
            let status = a.exit.clone().unwrap_or_else(|| "killed".into());
            if agents.len() == 1 {
                status
            } else {
                format!("{}: {status}", a.name)
            }
        })
        .collect();
    load_side.exit = Some(statuses.join("; "));
    if agents.len() == 1 {
        load_side.summary = read_json(&agents[0].out.join("summary.json"));
        return;
    }
    if let Some(missing) = agents
        .iter()
        .find(|a| !a.out.join("summary.json").is_file())
    {
        load_side.exit = Some(format!(
            "{} left no summary ({}): {}",
            missing.name,
            missing.exit.as_deref().unwrap_or("killed"),
            tail(&missing.stderr)
        ));
        return;
    }
    let merged = dir.join("load");
    let mut args = vec!["merge".to_string()];
    args.extend(agents.iter().map(|a| a.out.display().to_string()));
    args.extend(["--out".to_string(), merged.display().to_string()]);
    let mut commands = fs::read_to_string(dir.join("load-command.txt")).unwrap_or_default();
    commands += &command_line(&config.exe, &args);
    fs::write(dir.join("load-command.txt"), commands).ok();
    let files = (
        File::create(dir.join("merge-stdout.txt")),
        File::create(dir.join("merge-stderr.txt")),
    );
    let merge = match files {
        (Ok(o), Ok(e)) => {
            process::spawn(&config.exe, &args, None, o.into(), e.into()).map_err(|e| e.to_string())
        }
        (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
    };
    match merge {
        Err(e) => load_side.exit = Some(format!("cannot start echolab merge: {e}")),
        Ok(mut merge) => match merge.wait_timeout(MERGE_TIMEOUT) {
            Some(_) => load_side.summary = read_json(&merged.join("summary.json")),
            None => {
                load_side.exit = Some(format!(
                    "echolab merge did not finish within {} s",
                    MERGE_TIMEOUT.as_secs()
                ))
            }
        },
    }
    if load_side.summary.is_none() && load_side.exit.is_some() {
        let why = tail(&dir.join("merge-stderr.txt"));
        if !why.is_empty() {
            load_side.exit = Some(format!("echolab merge failed: {why}"));
        }
    }
}

/// Runs one repetition of one step for one model (on the emulated hosts when given).
fn run_step(
    config: &RunConfig,
    scenario: &Scenario,
    entry: &ModelEntry,
    step: &Step,
    dir: &Path,
    hosts: Option<&Hosts>,
) -> (ServerSide, LoadSide, bool) {
    let mut server_side = ServerSide::default();
    let mut load_side = LoadSide::default();
    if let Err(e) = fs::create_dir_all(dir) {
        server_side.start_error = Some(format!("cannot create {}: {e}", dir.display()));
        return (server_side, load_side, false);
    }
    let started = match start_server(config, entry, step, dir, hosts.map(|h| h.server())) {
        Ok(started) => started,
        Err(e) if e == "interrupted" => return (server_side, load_side, true),
        Err(e) => {
            server_side.start_error = Some(e);
            return (server_side, load_side, false);
        }
    };
    let Started {
        guard: mut server,
        addr,
        pid,
        reader,
    } = started;
    let probe = Probe::start(pid, PROBE_INTERVAL, &dir.join("probe.csv")).ok();
    let now = |p: &Option<Probe>| p.as_ref().map_or(0.0, |p| p.elapsed());

    let clients = hosts.map_or(&[][..], |h| h.clients());
    // The idle server before the load: sampled when the load starts, which on client
    // hosts is the common --start-at instant.
    if clients.is_empty() {
        server_side.at_load_start = probe::sample(pid, now(&probe));
    }
    let (mut agents, load_start) = start_load(config, scenario, step, dir, addr, clients);
    if !clients.is_empty() {
        server_side.at_load_start = probe::sample(pid, now(&probe));
    }
    let deadline = load_start + step_timeout(scenario, step);
    let mut server_died_at: Option<Instant> = None;
    let mut interrupted = false;
    loop {
        let mut running = 0;
        for agent in &mut agents {
            if let Some(guard) = &mut agent.guard {
                match guard.try_wait() {
                    Some(status) if agent.exit.is_none() => agent.exit = Some(status.to_string()),
                    Some(_) => {}
                    None => running += 1,
                }
            }
        }
        if running == 0 {
            break;
        }
        if server_died_at.is_none() {
            if let Some(status) = server.try_wait() {
                server_side.died = Some(format!(
                    "server died during the step ({status}): {}",
                    tail(&dir.join("server-stderr.txt"))
                ));
                server_died_at = Some(Instant::now());
            }
        }
        // With its server gone the load may wait on timeouts; let it finish briefly.
        let dead_too_long = server_died_at.is_some_and(|t| t.elapsed() > Duration::from_secs(10));
        if process::stop_requested() || Instant::now() >= deadline || dead_too_long {
            interrupted = process::stop_requested();
            load_side.timed_out = !interrupted && !dead_too_long;
            stop_agents(&mut agents);
            for agent in &mut agents {
                if let (Some(guard), None) = (&mut agent.guard, &agent.exit) {
                    agent.exit = guard.try_wait().map(|s| s.to_string());
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Forked load processes (--processes) go with their leaders.
    for guard in agents.iter().filter_map(|a| a.guard.as_ref()) {
        guard.signal_group(libc::SIGKILL);
    }
    server_side.load_wall_s = load_start.elapsed().as_secs_f64();
    server_side.at_load_end = probe::sample(pid, now(&probe));
    collect_load(config, dir, &agents, &mut load_side);
    drop(agents);

    let (status, killed) = server.stop(libc::SIGTERM, STOP_GRACE);
    if let Some(probe) = probe {
        server_side.samples = probe.finish();
    }
    let _ = reader.join();
    if server_side.died.is_none() {
        if killed {
            server_side.stop_problem = Some(format!(
                "server did not exit within {} s of SIGTERM",
                STOP_GRACE.as_secs()
            ));
        } else if let Some(s) = status.filter(|s| !s.success()) {
            server_side.stop_problem = Some(format!(
                "server exited with {s} on SIGTERM: {}",
                tail(&dir.join("server-stderr.txt"))
            ));
        }
    }
    server_side.summary = read_json(&dir.join("server-summary.json"));
    (server_side, load_side, interrupted)
}

/// Progress over the whole experiment: an indicatif bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: u64,
    done: u64,
    started: Instant,
    quiet: bool,
}

impl Progress {
    fn new(total: u64, bar: bool, quiet: bool) -> Progress {
        let bar = (bar && !quiet).then(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} {msg} (ETA {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            total,
            done: 0,
            started: Instant::now(),
            quiet,
        }
    }

    fn eta(&self) -> String {
        if self.done == 0 {
            return "?".into();
        }
        let per = self.started.elapsed().as_secs_f64() / self.done as f64;
        let left = (per * (self.total - self.done) as f64) as u64;
        format!("{}:{:02}", left / 60, left % 60)
    }

    fn starting(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(what.to_string()),
            None if !self.quiet => {
                eprintln!("[{}/{}] {what} ...", self.done + 1, self.total)
            }
            None => {}
        }
    }

    fn finished(&mut self, what: &str, row: &Row) {
        self.done += 1;
        let verdict = match row.status.as_str() {
            "ok" => format!(
                "ok, {} req/s, p99 {} us",
                row.throughput_rps
                    .map_or("?".into(), |t| trim_float(t.round())),
                row.p99_us.map_or("?".into(), |t| trim_float(t.round()))
            ),
            other => format!("{other}: {}", row.failure_reason),
        };
        match &self.bar {
            Some(bar) => {
                bar.println(format!("{what}: {verdict}"));
                bar.inc(1);
            }
            None if !self.quiet => eprintln!(
                "[{}/{}] {what}: {verdict} (elapsed {}s, ETA {})",
                self.done,
                self.total,
                self.started.elapsed().as_secs(),
                self.eta()
            ),
            None => {}
        }
    }

    fn close(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Runs every model over every step and repetition, writing into `config.out`.
pub fn run(scenario: &Scenario, config: &RunConfig) -> anyhow::Result<RunOutcome> {
    let mut csv = ResultsCsv::create(&config.out.join("results.csv"))?;
    let reps = scenario.repetitions;
    let total = (scenario.models.len() * scenario.steps.len()) as u64 * reps as u64;
    // One set of emulated hosts for the whole run; dropping it (on every way out of
    // this function, an interrupt included) deletes the namespaces.
    let hosts = match scenario.client_hosts {
        None => None,
        Some(clients) => {
            hosts::check_available()?;
            let removed = hosts::remove_leftovers()?;
            if !removed.is_empty() && !config.quiet {
                eprintln!(
                    "removed namespaces left by runs that died: {}",
                    removed.join(" ")
                );
            }
            let hosts = Hosts::create(clients)?;
            if !config.quiet {
                let clients: Vec<String> =
                    hosts.clients().iter().map(|c| c.addr.to_string()).collect();
                eprintln!(
                    "hosts: server {}, clients {} (network namespaces {}*)",
                    hosts.server().addr,
                    clients.join(" "),
                    hosts.prefix()
                );
            }
            Some(hosts)
        }
    };
    let mut progress = Progress::new(total, config.progress_bar, config.quiet);
    let mut rows = Vec::new();
    let mut interrupted = false;
    'models: for entry in &scenario.models {
        let mut failed: Option<&Step> = None;
        for step in &scenario.steps {
            for rep in 1..=reps {
                let mut row = Row {
                    model: entry.label.clone(),
                    step: step.name.clone(),
                    repetition: rep,
                    connections: step.connections,
                    size: step.size,
                    delay_ms: step.delay.map_or(0.0, |d| d.as_secs_f64() * 1e3),
                    rate: step.rate,
                    workers: step.workers.or(entry.options.workers.map(|w| w.0)),
                    ..Row::default()
                };
                let what = format!("{} {} rep {rep}/{reps}", entry.label, step.name);
                if let Some(f) = failed.filter(|f| step.at_least_as_heavy_as(f)) {
                    row.status = "skipped".into();
                    row.failure_reason = if f.name == step.name {
                        "step failed in an earlier repetition".to_string()
                    } else {
                        format!("at least as heavy as failed step {}", f.name)
                    };
                } else {
                    if process::stop_requested() {
                        interrupted = true;
                        break 'models;
                    }
                    progress.starting(&what);
                    let dir = config
                        .out
                        .join(&entry.label)
                        .join(&step.name)
                        .join(format!("rep-{rep}"));
                    let (server, load, stopped) =
                        run_step(config, scenario, entry, step, &dir, hosts.as_ref());
                    measure(&mut row, &server, &load);
                    if stopped || process::stop_requested() {
                        row.status = "interrupted".into();
                        row.failure_reason = format!(
                            "run interrupted by signal {}",
                            process::stop_signal().unwrap_or(0)
                        );
                        interrupted = true;
                    } else if let Some(reason) = judge(&scenario.failure, step, &server, &load) {
                        row.status = "failed".into();
                        row.failure_reason = reason;
                        failed = Some(step);
                    } else {
                        row.status = "ok".into();
                    }
                    if !scenario.pause.is_zero() && !interrupted {
                        std::thread::sleep(scenario.pause);
                    }
                }
                csv.append(&row)?;
                progress.finished(&what, &row);
                rows.push(row);
                if interrupted {
                    break 'models;
                }
            }
        }
    }
    progress.close();
    Ok(RunOutcome { rows, interrupted })
}

/// The per-model comparison printed at the end of a run.
pub fn comparison_table(rows: &[Row], models: &[String]) -> String {
    let mut out = String::new();
    let header = [
        "model",
        "best req/s",
        "p99 (heaviest ok)",
        "max conns",
        "CPU %",
        "RSS/conn",
        "status",
    ];
    let mut table: Vec<[String; 7]> = vec![header.map(str::to_string)];
    for model in models {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.model == model).collect();
        if mine.is_empty() {
            continue;
        }
        let ok: Vec<&&Row> = mine.iter().filter(|r| r.status == "ok").collect();
        let best = ok
            .iter()
            .filter_map(|r| r.throughput_rps)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
        let heaviest = ok.last();
        let max_conns = ok.iter().filter_map(|r| r.connections_established).max();
        let status = match mine
            .iter()
            .find(|r| r.status != "ok" && r.status != "skipped")
        {
            None => "ok".to_string(),
            Some(r) => format!("{} at {}: {}", r.status, r.step, r.failure_reason),
        };
        let dash = || "-".to_string();
        table.push([
            model.clone(),
            best.map_or_else(dash, |t| trim_float(t.round())),
            heaviest
                .and_then(|r| r.p99_us)
                .map_or_else(dash, |p| format!("{} us", trim_float(p.round()))),
            max_conns.map_or_else(dash, |c| c.to_string()),
            heaviest
                .and_then(|r| r.server_cpu_pct)
                .map_or_else(dash, |c| format!("{c:.0}")),
            heaviest
                .and_then(|r| r.server_rss_per_conn_bytes)
                .map_or_else(dash, human_bytes),
            status,
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
        for (i, w) in widths.iter().enumerate() {
            if i == 0 {
                out += &format!("{:<w$}  ", r[i]);
            } else {
                out += &format!("{:>w$}  ", r[i]);
            }
        }
        out += &r[6];
        out += "\n";
    }
    out
}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

/// Whether progress should be a bar (stderr is a terminal).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::scenario;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in for the echolab binary: `serve` prints a listening line (port 1 for
    /// select, 2 otherwise) and writes a summary on SIGTERM; `load` writes a summary in
    /// which select's server holds at most 1000 connections (as FD_SETSIZE allows).
    const FAKE: &str = r#"#!/bin/sh
verb=$1; shift
while [ $# -gt 0 ]; do
  case $1 in
    --summary-json) sj=$2; shift;;
    --model) model=$2; shift;;
    --target) target=$2; shift;;
    --connections) conns=$2; shift;;
    --out) out=$2; shift;;
  esac
  shift
done
case $verb in
serve)
  port=2; [ "$model" = select ] && port=1
  trap 'echo "{\"max_concurrent\":7,\"bytes_in\":300,\"bytes_out\":300,\"workers\":1,\"refused\":{}}" > "$sj"; exit 0' TERM
  echo "listening on 127.0.0.1:$port model=$model pid=$$"
  while :; do sleep 0.02; done;;
load)
  est=$conns
  [ "${target##*:}" = 1 ] && [ "$conns" -gt 1000 ] && est=1000
  mkdir -p "$out"
  echo "{\"duration_s\":0.5,\"connections_established\":$est,\"requests_completed\":$conns,\"throughput_rps\":2000,\"throughput_bytes_per_s\":2097152,\"latency_us\":{\"p50\":100,\"p90\":200,\"p99\":300,\"p999\":400,\"max\":500},\"errors_total\":0,\"error_rate\":0.0,\"mismatches\":0,\"bytes_sent\":300,\"bytes_received\":300}" > "$out/summary.json"
  sleep 0.3;;
esac
"#;

    #[test]
    fn failure_stops_a_sweep_and_rows_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("fake-echolab");
        fs::write(&exe, FAKE).unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let s = scenario::parse(
            "t",
            "t",
            "models = [\"poll\", \"select\"]\n[load]\nrequests = 1\n[sweep]\nconnections = [500, 1100, 1500]\n",
        )
        .unwrap();
        let out = dir.path().join("results");
        fs::create_dir_all(&out).unwrap();
        let config = RunConfig {
            exe,
            out: out.clone(),
            progress_bar: false,
            quiet: true,
        };
        let outcome = run(&s, &config).unwrap();
        assert!(!outcome.interrupted);
        let summary: Vec<(&str, &str, &str, &str)> = outcome
            .rows
            .iter()
            .map(|r| {
                (
                    r.model.as_str(),
                    r.step.as_str(),
                    r.status.as_str(),
                    r.failure_reason.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("poll", "c500-s64", "ok", ""),
                ("poll", "c1100-s64", "ok", ""),
                ("poll", "c1500-s64", "ok", ""),
                ("select", "c500-s64", "ok", ""),
                (
                    "select",
                    "c1100-s64",
                    "failed",
                    "1000 of 1100 connections established (needed 1100)"
                ),
                (
                    "select",
                    "c1500-s64",
                    "skipped",
                    "at least as heavy as failed step c1100-s64"
                ),
            ]
        );
        let ok = &outcome.rows[0];
        assert_eq!(ok.connections_established, Some(500));
        assert_eq!(ok.max_concurrent_server, Some(7));
        assert_eq!(ok.throughput_mib_s, Some(2.0));
        assert_eq!(ok.p99_us, Some(300.0));
        assert_eq!(ok.bytes_match, Some(true));
        assert_eq!(ok.workers, Some(1));
        assert!(ok.server_rss_max_bytes.unwrap() > 0);
        assert!(ok.server_cpu_pct.is_some());

        let text = fs::read_to_string(out.join("results.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[0], RESULTS_HEADER.join(","));
        assert!(
            lines[6].starts_with("select,c1500-s64,1,1500,64,0.0,,,skipped,"),
            "{text}"
        );
        let step = out.join("poll").join("c500-s64").join("rep-1");
        assert!(fs::read_to_string(step.join("server-stdout.txt"))
            .unwrap()
            .starts_with("listening on 127.0.0.1:2 model=poll"));
        assert!(fs::read_to_string(step.join("probe.csv"))
            .unwrap()
            .starts_with(probe::CSV_HEADER));
        assert!(step.join("server-summary.json").exists());
        assert!(step.join("load").join("summary.json").exists());
        assert!(!out.join("select").join("c1500-s64").exists());
    }

    #[test]
    fn arguments_follow_the_scenario() {
        let s = scenario::parse(
            "t",
            "t",
            r#"
models = ["epoll", "select"]
[server]
conns_per_process = 18000
trigger = "level"
idle_timeout = "30s"
[load]
requests = 3
delay = "1.5ms"
connect_rate = 5000
hold_together = "2s"
conns_per_process = 18000
source_addrs = "127.0.0.2-127.0.0.9"
[sweep]
connections = [100, 30000]
"#,
        )
        .unwrap();
        let dir = Path::new("/r/m/s/rep-1");
        let big = &s.steps[1];
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let epoll = server_args(&s.models[0], big, dir, lo).join(" ");
        assert_eq!(
            epoll,
            "serve --model epoll --addr 127.0.0.1:0 --log /r/m/s/rep-1/server-log.csv \
             --summary-json /r/m/s/rep-1/server-summary.json --trigger level --processes 2 \
             --idle-timeout 30000ms"
        );
        let select = server_args(&s.models[1], big, dir, lo).join(" ");
        assert!(!select.contains("--processes"), "{select}");
        let out = dir.join("load");
        let load = load_args(&s.load, big, "127.0.0.1:7000".parse().unwrap(), &out).join(" ");
        assert_eq!(
            load,
            "load --target 127.0.0.1:7000 --connections 30000 --size 64 --requests 3 \
             --delay 1.5ms --connect-rate 5000 --hold 14000ms --processes 2 --source-addrs 127.0.0.2-127.0.0.9 \
             --out /r/m/s/rep-1/load --quiet"
        );
        let small = load_args(
            &s.load,
            &s.steps[0],
            "127.0.0.1:7000".parse().unwrap(),
            &out,
        );
        assert!(!small.contains(&"--processes".to_string()));
    }

    #[test]
    fn judge_applies_the_rule_in_order() {
        let rule = FailureRule {
            min_concurrent: Some(scenario::Fraction(1.0)),
            max_p99: Some(scenario::Dur(Duration::from_millis(10))),
            ..FailureRule::default()
        };
        let step = scenario::parse("t", "t", "[load]\nrequests = 1\nconnections = 100\n")
            .unwrap()
            .steps[0]
            .clone();
        let load = |held: u64, p99: u64, sent: u64| LoadSide {
            summary: Some(serde_json::json!({
                "connections_established": 100, "max_concurrent": held, "error_rate": 0.0,
                "mismatches": 0, "latency_us": {"p99": p99}, "bytes_sent": sent,
                "bytes_received": 640
            })),
            ..LoadSide::default()
        };
        let server = |held: u64| ServerSide {
            summary: Some(serde_json::json!({
                "max_concurrent": held, "refused": {}, "bytes_in": 640, "bytes_out": 640
            })),
            ..ServerSide::default()
        };
        assert_eq!(
            judge(&rule, &step, &server(100), &load(100, 900, 640)),
            None
        );
        assert_eq!(
            judge(&rule, &step, &server(90), &load(100, 900, 640)).unwrap(),
            "server held at most 90 of 100 connections at once (needed 100)"
        );
        assert!(judge(&rule, &step, &server(90), &load(95, 900, 640))
            .unwrap()
            .starts_with("connections opened too slowly to be open all at once: at most 95 of 100 on the client, 90 on the server"));
        assert_eq!(
            judge(&rule, &step, &server(100), &load(100, 10_001, 640)).unwrap(),
            "p99 10001 us above 10ms"
        );
        assert_eq!(
            judge(&rule, &step, &server(100), &load(100, 900, 650)).unwrap(),
            "bytes differ: client sent 650, server received 640"
        );
        let died = ServerSide {
            died: Some("server died during the step".into()),
            ..server(100)
        };
        assert_eq!(
            judge(&rule, &step, &died, &load(100, 900, 640)).unwrap(),
            "server died during the step"
        );
    }

    #[test]
    fn comparison_table_summarises_each_model() {
        let row = |model: &str, step: &str, status: &str, rps: f64, conns: u64| Row {
            model: model.into(),
            step: step.into(),
            status: status.into(),
            failure_reason: if status == "failed" {
                "why".into()
            } else {
                String::new()
            },
            throughput_rps: (status == "ok").then_some(rps),
            connections_established: (status == "ok").then_some(conns),
            p99_us: Some(1234.4),
            server_cpu_pct: Some(87.6),
            server_rss_per_conn_bytes: Some(2048),
            ..Row::default()
        };
        let rows = [
            row("select", "c500", "ok", 900.0, 500),
            row("select", "c1100", "failed", 0.0, 0),
            row("select", "c1500", "skipped", 0.0, 0),
            row("epoll", "c500", "ok", 1000.0, 500),
            row("epoll", "c1100", "ok", 800.0, 1100),
        ];
        let table = comparison_table(&rows, &["select".into(), "epoll".into()]);
        let lines: Vec<&str> = table.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "model   best req/s  p99 (heaviest ok)  max conns  CPU %  RSS/conn  status",
                "select         900            1234 us        500     88   2.0 KiB  failed at c1100: why",
                "epoll         1000            1234 us       1100     88   2.0 KiB  ok",
            ]
        );
    }
}
