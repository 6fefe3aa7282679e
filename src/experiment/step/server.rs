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
use crate::experiment::scenario::{ModelEntry, Step};
use crate::server::{Listening, ServerConfig};

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

/// The server configuration of one step: `serve --model M` with the scenario's `args`
/// (checked when the scenario was parsed), then the scenario's options and the step's values.
pub fn server_config(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> ServerConfig {
    let o = &entry.options;
    let mut config = entry
        .base_config()
        .expect("a scenario's server args are checked when it is parsed");
    config.addr = SocketAddr::new(bind, 0);
    config.log = Some(dir.join("server-log.csv"));
    config.summary_json = Some(dir.join("server-summary.json"));
    if let Some(w) = step.workers.or(o.workers.map(|w| w.0)) {
        config.workers = Some(w as usize);
    }
    if let Some(t) = o.trigger {
        config.trigger = t;
    }
    if let Some(m) = o.accept {
        config.accept = m;
    }
    let processes = o.processes.map(|p| p.0).or_else(|| {
        entry
            .model
            .supports_processes()
            .then(|| processes_for(step.connections, o.conns_per_process.map(|c| c.0)))
            .flatten()
    });
    if let Some(p) = processes {
        config.processes = p as usize;
    }
    if let Some(m) = o.max_conns {
        config.max_conns = Some(m.0 as usize);
    }
    if let Some(d) = o.idle_timeout {
        config.idle_timeout = Some(d.0);
    }
    if let Some(b) = o.max_pending {
        config.max_pending = b.0 as usize;
    }
    if let Some(b) = o.thread_stack {
        config.thread_stack = b.0 as usize;
    }
    if let Some(b) = o.backlog {
        config.backlog = b.0.min(i32::MAX as u64) as i32;
    }
    if let Some(s) = o.sqpoll {
        config.sqpoll = s;
    }
    config
}

/// `echolab serve` arguments for one step.
pub fn server_args(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> Vec<String> {
    server_config(entry, step, dir, bind)
        .to_args()
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// A started server: its guard, address, the pid to probe and its stdout copier.
pub(super) struct Started {
    pub guard: Guard,
    pub addr: SocketAddr,
    pub pid: u32,
    pub reader: std::thread::JoinHandle<()>,
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
                let listening: Listening = line
                    .parse()
                    .map_err(|e| format!("server printed an unreadable listening line: {e}"))?;
                let (addr, announced) = (listening.addr, listening.pid);
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
