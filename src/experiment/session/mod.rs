//! What a step and a stair share: a server started at a placement with its observers,
//! load generators started against it, and everything stopped again.
//!
//! - [`server`]: the server (`echolab serve`, or any echo server as a command),
//!   started (in its own cgroup when limited) and waited for until it is ready.
//! - [`load`]: `echolab load`, on one host or split over client hosts
//!   (`--shard`, a common `--start-at`, then `echolab merge`).

mod load;
mod server;

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use super::hosts::{Host, Hosts};
use super::judge::ServerSide;
use super::netstat::Scope;
use super::probe::Probe;
use super::process;
use super::scenario::{ModelEntry, Scenario, Step};
pub(in crate::experiment) use load::{collect_load, start_load, step_timeout, stop_agents, Agent};
use server::STOP_GRACE;
pub(in crate::experiment) use server::{start_server, StartError, Started};

pub use load::{load_args, load_config, LOAD_HOSTS};
pub use server::{server_args, substitute};

/// How often a server (and a load generator) is sampled from /proc.
pub(in crate::experiment) const PROBE_INTERVAL: Duration = Duration::from_millis(100);

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

/// A summary file read into the crate's own type: None when it is absent or
/// unreadable (the judge then says which side left none).
pub(in crate::experiment) fn read_summary<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// The last line of a file (a child's stderr), for failure reasons.
pub(in crate::experiment) fn tail(path: &Path) -> String {
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

/// Processes needed so no process holds more than `per` connections.
pub(in crate::experiment) fn processes_for(connections: u64, per: Option<u64>) -> Option<u64> {
    per.filter(|per| connections > *per)
        .map(|per| connections.div_ceil(per))
}

/// The cores a step's load generator may use: its `cpus` pinning or every CPU, and no
/// more than its threads (times its processes) when the scenario sets them.
pub(in crate::experiment) fn load_cores(scenario: &Scenario) -> usize {
    let load = &scenario.load;
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let given = match &load.cpus {
        Some(cpus) if process::cpu_set(cpus).is_some() => cpus.len(),
        _ => online,
    };
    let runnable = load
        .threads
        .map(|t| t.0.saturating_mul(load.processes.map_or(1, |p| p.0)) as usize);
    given.min(runnable.unwrap_or(usize::MAX)).max(1)
}

/// When the server has exited on its own: records why and returns the moment seen.
pub(in crate::experiment) fn died_now(
    server: &mut process::Guard,
    side: &mut ServerSide,
    dir: &Path,
) -> Option<Instant> {
    let status = server.try_wait()?;
    side.died = Some(format!(
        "server died during the step ({status}): {}",
        tail(&dir.join("server-stderr.txt"))
    ));
    Some(Instant::now())
}

/// `[network] own_namespace`: a namespace made for the step, server and load inside, so
/// its TCP counters are the step's alone (None, with a note, when it cannot be made).
/// Not with emulated hosts, whose server host is the step's already.
pub(in crate::experiment) fn own_namespace(
    scenario: &Scenario,
    hosts: Option<&Hosts>,
    server_side: &mut ServerSide,
) -> Option<Hosts> {
    if !scenario.own_namespace || hosts.is_some() {
        return None;
    }
    match Hosts::create(1, &scenario.lab_sysctls) {
        Ok(own) => Some(own),
        Err(e) => {
            server_side.net_note = Some(format!("no network namespace for the step: {e:#}"));
            None
        }
    }
}

/// Where a step's server and load run (the server host and the client hosts; none on
/// the machine's loopback) and whose traffic its network counters include.
pub(in crate::experiment) fn placement<'a>(
    own: Option<&'a Hosts>,
    hosts: Option<&'a Hosts>,
    step: &Step,
) -> (Option<&'a Host>, &'a [Host], Scope) {
    match (own, hosts) {
        (Some(own), _) => (
            Some(own.server()),
            std::slice::from_ref(own.server()),
            Scope::Step,
        ),
        (None, Some(h)) => {
            // A `hosts` sweep uses the first N client hosts of those the run created.
            let n = step.hosts.map_or(h.clients().len(), |n| n as usize);
            (Some(h.server()), &h.clients()[..n], Scope::ServerHost)
        }
        (None, None) => (None, &[][..], Scope::Host),
    }
}

/// Stops a server (SIGTERM, then SIGKILL after its grace) and records how it ended in
/// `side`: its /proc samples, its summary, and why its stop was not clean (a kill by
/// the kernel for memory included). `died`: it had already exited on its own.
pub(in crate::experiment) fn stop_server(
    entry: &ModelEntry,
    dir: &Path,
    server: Started,
    probe: Option<Probe>,
    died: bool,
    side: &mut ServerSide,
) {
    let Started {
        guard: mut server,
        reader,
        cgroup,
        ..
    } = server;
    let (status, killed) = server.stop(libc::SIGTERM, STOP_GRACE);
    if let Some(probe) = probe {
        side.samples = probe.finish();
    }
    // Whatever the server forked goes with it, setsid or not.
    if let Some(group) = &cgroup {
        group.kill_all();
    }
    // A descendant outside any group may still hold the stdout pipe: wait a second for
    // the copier, then leave it (it ends when the pipe closes), never the step.
    let copied = Instant::now() + Duration::from_secs(1);
    while !reader.is_finished() && Instant::now() < copied {
        std::thread::sleep(Duration::from_millis(10));
    }
    if reader.is_finished() {
        let _ = reader.join();
    }
    // A server killed by the kernel for memory: the step's reason is the cap.
    let sigkilled = died && status.and_then(|s| s.signal()) == Some(libc::SIGKILL);
    if let Some(oom) = cgroup.as_ref().and_then(|c| c.oom_reason(sigkilled)) {
        side.died = Some(oom);
    }
    drop(cgroup);
    // A command without a SIGTERM handler dies of the signal: that is its clean stop.
    let clean_stop = |s: &std::process::ExitStatus| {
        s.success() || (entry.model().is_none() && s.signal() == Some(libc::SIGTERM))
    };
    if side.died.is_none() {
        if killed {
            side.stop_problem = Some(format!(
                "server did not exit within {} s of SIGTERM",
                STOP_GRACE.as_secs()
            ));
        } else if let Some(s) = status.filter(|s| !clean_stop(s)) {
            side.stop_problem = Some(format!(
                "server exited with {s} on SIGTERM: {}",
                tail(&dir.join("server-stderr.txt"))
            ));
        }
    }
    side.summary = read_summary(&dir.join("server-summary.json"));
}
