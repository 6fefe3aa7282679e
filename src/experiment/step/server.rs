//! `echolab serve` for one step: its arguments, its start (inside the server
//! host's namespace when there are emulated hosts), and its `listening on` line.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{processes_for, tail};
use crate::experiment::hosts::Host;
use crate::experiment::probe;
use crate::experiment::process::{self, Guard};
use crate::experiment::runner::RunConfig;
use crate::experiment::scenario::{ms, ModelEntry, Step};

/// How long a server may take to print its `listening on` line.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a server may take to close its connections and write its summary.
pub(super) const STOP_GRACE: Duration = Duration::from_secs(30);

/// Why a server did not start listening.
#[derive(Debug, PartialEq)]
pub(super) enum StartError {
    /// A stop signal came first: the step is interrupted, not failed.
    Interrupted,
    /// The step fails with this reason.
    Failed(String),
}

impl From<String> for StartError {
    fn from(reason: String) -> StartError {
        StartError::Failed(reason)
    }
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

/// A started server: its guard, address, the pid to probe and its stdout copier.
pub(super) struct Started {
    pub guard: Guard,
    pub addr: SocketAddr,
    pub pid: u32,
    pub reader: std::thread::JoinHandle<()>,
}

/// The pid a `listening on ... pid=N` line announces.
fn announced_pid(line: &str) -> Option<u32> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("pid="))
        .and_then(|p| p.parse().ok())
}

/// The address and announced pid of a `listening on ADDR ... pid=N` line.
fn parse_listening(line: &str) -> Result<(SocketAddr, Option<u32>), String> {
    let Some(addr) = line.split_whitespace().nth(2) else {
        return Err("server printed no address on its listening line".into());
    };
    let Ok(addr) = addr.parse() else {
        return Err(format!("server printed an unreadable address '{addr}'"));
    };
    Ok((addr, announced_pid(line)))
}

/// Starts the server (inside `host` when given) and waits for its `listening on ADDR` line.
pub(super) fn start_server(
    config: &RunConfig,
    entry: &ModelEntry,
    step: &Step,
    dir: &Path,
    host: Option<&Host>,
) -> Result<Started, StartError> {
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
                let (addr, announced) = parse_listening(&line)?;
                // Probe the pid the server announces when it is the child or below it (a
                // wrapper such as `ip netns exec` that forked); else the child itself.
                let child = guard.pid();
                let pid = announced
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
                return Err(StartError::Failed(format!(
                    "server exited before listening ({status}): {}",
                    tail(&dir.join("server-stderr.txt"))
                )));
            }
            Err(_) if process::stop_requested() => return Err(StartError::Interrupted),
            Err(_) if Instant::now() >= deadline => {
                return Err(StartError::Failed(format!(
                    "server did not print `listening on` within {} s",
                    START_TIMEOUT.as_secs()
                )))
            }
            Err(_) => {}
        }
    }
}

/// `program args`, or `ip netns exec NS program args` to run inside `host`.
pub(super) fn wrap_in_host(
    program: &Path,
    args: Vec<String>,
    host: Option<&Host>,
) -> (PathBuf, Vec<String>) {
    match host {
        None => (program.to_path_buf(), args),
        Some(h) => (
            PathBuf::from("ip"),
            h.exec_args(&program.display().to_string(), &args),
        ),
    }
}

/// A command as one line for the *-command.txt files (the echolab binary itself is implied).
pub(super) fn command_line(program: &Path, args: &[String]) -> String {
    if program == Path::new("ip") {
        format!("ip {}\n", args.join(" "))
    } else {
        args.join(" ") + "\n"
    }
}
