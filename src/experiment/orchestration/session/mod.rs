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
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::experiment::measurement::cost::KernelSnapshot;
use crate::experiment::measurement::judge::ServerRun;
use crate::experiment::measurement::netstat::{self, NetCounters, Scope};
use crate::experiment::measurement::probe::Sample;
use crate::experiment::measurement::profile::{Recording, Sampling};
use crate::experiment::measurement::request_cost::Counting;
use crate::experiment::placement::hosts::Hosts;
use crate::experiment::placement::process::{self, tail};
use crate::experiment::placement::{Lab, Observer, Placement, ThisMachine};
use crate::scenario::{ModelEntry, Scenario, Step};
pub(in crate::experiment) use load::{collect_load, exit_reason, step_timeout, Agent};
use load::{start_load, stop_agents};
pub(in crate::experiment) use server::StartError;
use server::{start_server, Started, STOP_GRACE};

use crate::results::files::{NET_TIMELINE, PROBE, SERVER_STDERR, SERVER_SUMMARY};
pub use server::substitute;

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
    /// The first repetition to run: 1 for a run, later for a round added to it (its
    /// rows appended to its results.csv).
    pub first_repetition: u32,
}

/// A summary file read into the crate's own type: None when it is absent or
/// unreadable (the judge then says which side left none).
pub(in crate::experiment) fn read_summary<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
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
fn died_now(
    server: &mut process::Guard,
    remote: bool,
    side: &mut ServerRun,
    dir: &Path,
) -> Option<Instant> {
    let status = server.try_wait()?;
    side.died = Some(format!(
        "server died during the step ({}): {}",
        exit_reason(status, remote),
        tail(&dir.join(SERVER_STDERR))
    ));
    Some(Instant::now())
}

/// Where a session's server and load run.
enum Site<'a> {
    /// The machine's loopback.
    Loopback,
    /// A namespace made for this session alone (`[network] own_namespace`), server and
    /// load inside, so its TCP counters are the session's alone; deleted when it ends.
    Own(Hosts),
    /// The run's hosts (the namespace lab, or ssh hosts): its server host and its first
    /// `clients` client hosts.
    Lab { hosts: &'a dyn Lab, clients: usize },
}

/// One server started at a placement with its observers (the /proc probe and the
/// network timeline), the load agents started against it, and [`Session::stop`] that
/// stops all of it: what the fresh-server step and every stair of a staircase share.
pub(in crate::experiment) struct Session<'a> {
    config: &'a RunConfig,
    entry: &'a ModelEntry,
    /// The server's folder (its stdout, stderr, summary and probe files).
    dir: PathBuf,
    site: Site<'a>,
    server: Started,
    probe: Option<Box<dyn Observer>>,
    timeline: Option<netstat::Timeline>,
    /// How the server runs, as recorded so far (placement, notes, how it died).
    pub server_run: ServerRun,
    /// Every load agent started, in order.
    pub agents: Vec<Agent>,
    died_at: Option<Instant>,
}

/// Why a session did not start, with how far its server got.
pub(in crate::experiment) struct Unstarted {
    pub run: ServerRun,
    pub error: StartError,
}

impl<'a> Session<'a> {
    /// Starts `entry`'s server for `step` with its observers, writing into `dir`: on
    /// the lab's server host when `hosts` are given (with its first `step.hosts` client
    /// hosts for the load), in a namespace of its own when the scenario asks, else on
    /// this machine's loopback.
    pub fn start(
        config: &'a RunConfig,
        scenario: &Scenario,
        entry: &'a ModelEntry,
        step: &Step,
        dir: &Path,
        hosts: Option<&'a dyn Lab>,
    ) -> Result<Session<'a>, Box<Unstarted>> {
        let mut side = ServerRun::default();
        if let Err(e) = fs::create_dir_all(dir) {
            let reason = format!("cannot create {}: {e}", dir.display());
            return Err(Box::new(Unstarted {
                run: side,
                error: StartError::Failed(reason),
            }));
        }
        let site = Site::of(scenario, hosts, step, &mut side);
        let scope = site.scope();
        side.net_scope = Some(scope);
        side.kernel_ends = scope.connection_ends();
        let server = match start_server(config, entry, step, dir, site.server()) {
            Ok(server) => server,
            Err(error) => return Err(Box::new(Unstarted { run: side, error })),
        };
        let host = site.server();
        let probe = host.probe(server.pid, PROBE_INTERVAL, &dir.join(PROBE));
        let timeline = host.net_timeline(server.pid, &dir.join(NET_TIMELINE));
        Ok(Session {
            config,
            entry,
            dir: dir.to_path_buf(),
            site,
            server,
            probe,
            timeline,
            server_run: side,
            agents: Vec::new(),
            died_at: None,
        })
    }

    /// Where the server listens.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    /// The client hosts the load may use (none: this machine's loopback).
    pub fn clients(&self) -> Vec<&dyn Placement> {
        self.site.clients()
    }

    /// The server's CPU and memory now, and the time on its probe's clock.
    pub fn sample(&self) -> (Option<Sample>, f64) {
        let t = self.probe.as_ref().map_or(0.0, |p| p.elapsed());
        (self.site.server().sample(self.server.pid, t), t)
    }

    /// The TCP counters of the server's network namespace now.
    pub fn net(&self) -> Option<NetCounters> {
        self.site.server().net(self.server.pid)
    }

    /// The kernel's socket and slab memory as the server sees it now.
    pub fn kernel(&self) -> Option<KernelSnapshot> {
        self.site.server().kernel(self.server.pid)
    }

    /// The server host's busy CPU time now.
    pub fn machine_busy_s(&self) -> Option<f64> {
        self.site.server().machine_busy_s()
    }

    /// Counts the server's context switches (and system calls) from now.
    pub fn count_calls(&self) -> Option<Counting> {
        self.site.server().count_calls(self.server.pid)
    }

    /// Starts perf on the server, writing into `dir` (the profiled repetition's, or a
    /// stair's).
    pub fn start_profile(&self, dir: &Path, sampling: Sampling) -> Recording {
        Recording::start(dir, self.server.pid, self.site.server().remote(), sampling)
    }

    /// The pids of the load generators running on this machine.
    pub fn local_load_pids(&self) -> Vec<u32> {
        let local = self.agents.iter().filter(|a| !a.remote);
        local
            .filter_map(|a| a.guard.as_ref().map(|g| g.pid()))
            .collect()
    }

    /// Whether the server has exited on its own (recorded in `server_run.died` once).
    pub fn dead(&mut self) -> bool {
        if self.died_at.is_none() {
            let remote = self.site.server().remote();
            self.died_at = died_now(
                &mut self.server.guard,
                remote,
                &mut self.server_run,
                &self.dir,
            );
        }
        self.died_at.is_some()
    }

    /// When the server was seen to have exited on its own.
    pub fn died_at(&self) -> Option<Instant> {
        self.died_at
    }

    /// Starts `step`'s load against the server, writing into `dir`, on the client hosts
    /// `pick` chooses of [`Session::clients`]. Returns the index of its first agent in
    /// `agents` and the instant it starts loading.
    pub fn start_load(
        &mut self,
        scenario: &Scenario,
        step: &Step,
        dir: &Path,
        pick: impl for<'h> FnOnce(&'h [&'h dyn Placement]) -> &'h [&'h dyn Placement],
    ) -> (usize, Instant) {
        let all = self.site.clients();
        let clients = pick(&all);
        let (agents, start) = start_load(self.config, scenario, step, dir, self.addr(), clients);
        let first = self.agents.len();
        self.agents.extend(agents);
        (first, start)
    }

    /// Brings back what the server's and the load's hosts wrote under `dir` (a step's or
    /// a stair's folder); a host that cannot be reached leaves its files missing, which
    /// the judge then names.
    pub fn bring_back(&self, dir: &Path) {
        for host in std::iter::once(self.site.server()).chain(self.site.clients()) {
            if let Err(e) = host.bring_back(dir) {
                crate::errln!("warning: {e}");
            }
        }
    }

    /// Stops the agents still running (SIGINT, a grace that grows with the
    /// `connections` they hold, then SIGKILL).
    pub fn stop_agents(&mut self, connections: u64) {
        stop_agents(&mut self.agents, connections);
    }

    /// Ends the load: the agents' process groups killed (forked load processes,
    /// --processes, go with their leaders) and the network timeline closed.
    pub fn end_load(&mut self) {
        for guard in self.agents.iter().filter_map(|a| a.guard.as_ref()) {
            guard.signal_group(libc::SIGKILL);
        }
        if let Some(timeline) = self.timeline.take() {
            timeline.finish();
        }
    }

    /// Stops everything left: the agents, the server (SIGTERM, then SIGKILL after its
    /// grace) and its observers, and the session's own namespace. Returns how the
    /// server ran, with how it ended.
    pub fn stop(mut self) -> ServerRun {
        self.end_load();
        drop(std::mem::take(&mut self.agents));
        let Session {
            entry,
            dir,
            site,
            server,
            probe,
            server_run: mut side,
            died_at,
            ..
        } = self;
        stop_server(
            entry,
            &dir,
            site.server(),
            server,
            probe,
            died_at.is_some(),
            &mut side,
        );
        drop(site);
        side
    }
}

impl<'a> Site<'a> {
    fn of(
        scenario: &Scenario,
        hosts: Option<&'a dyn Lab>,
        step: &Step,
        side: &mut ServerRun,
    ) -> Site<'a> {
        if let Some(hosts) = hosts {
            // A `hosts` sweep uses the first N client hosts of those the run created.
            let clients = step.hosts.map_or(hosts.clients().len(), |n| n as usize);
            return Site::Lab { hosts, clients };
        }
        // Not with emulated hosts, whose server host is the step's already.
        if !scenario.own_namespace {
            return Site::Loopback;
        }
        match Hosts::create(1, &scenario.lab_sysctls) {
            Ok(own) => Site::Own(own),
            Err(e) => {
                side.net_note = Some(format!("no network namespace for the step: {e:#}"));
                Site::Loopback
            }
        }
    }

    /// Where the server runs.
    fn server(&self) -> &dyn Placement {
        match self {
            Site::Loopback => &ThisMachine,
            Site::Own(own) => own.server() as &dyn Placement,
            Site::Lab { hosts, .. } => hosts.server(),
        }
    }

    /// Where the load runs: the client hosts (in its own namespace, the server's host).
    fn clients(&self) -> Vec<&dyn Placement> {
        match self {
            Site::Loopback => Vec::new(),
            Site::Own(own) => vec![own.server() as &dyn Placement],
            Site::Lab { hosts, clients } => {
                let mut all = hosts.clients();
                all.truncate(*clients);
                all
            }
        }
    }

    /// Whose traffic the server's network counters include.
    fn scope(&self) -> Scope {
        match self {
            Site::Loopback => Scope::Host,
            Site::Own(_) => Scope::Step,
            Site::Lab { .. } => Scope::ServerHost,
        }
    }
}

/// Stops a server (SIGTERM, then SIGKILL after its grace) and records how it ended in
/// `side`: its /proc samples, its summary, and why its stop was not clean (a kill by
/// the kernel for memory included). `died`: it had already exited on its own.
fn stop_server(
    entry: &ModelEntry,
    dir: &Path,
    host: &dyn Placement,
    server: Started,
    probe: Option<Box<dyn Observer>>,
    died: bool,
    side: &mut ServerRun,
) {
    let Started {
        guard: mut server,
        reader,
        cgroup,
        ..
    } = server;
    let (status, killed) = server.stop(libc::SIGTERM, STOP_GRACE);
    let mut unwritten = None;
    if let Some(probe) = probe {
        (side.samples, unwritten) = probe.finish();
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
                tail(&dir.join(SERVER_STDERR))
            ));
        }
    }
    if let Err(e) = host.bring_back(dir) {
        side.stop_problem.get_or_insert(e);
    }
    // A step whose files could not be written (a full disk) is not ok, whatever it measured.
    if side.stop_problem.is_none() {
        side.stop_problem = unwritten;
    }
    side.summary = read_summary(&dir.join(SERVER_SUMMARY));
}
