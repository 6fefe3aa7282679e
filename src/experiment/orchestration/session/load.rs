//! `echolab load` for one step: its arguments and time bound, and its load
//! generators: one, or one per client host started together (`--shard`, a common
//! `--start-at`) and merged afterwards with `echolab merge`.

use std::fs::{self, File};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::server::command_line;
use super::RunConfig;
use super::{read_summary, tail};
use crate::experiment::measurement::judge::LoadSide;
use crate::experiment::placement::process::{self, Guard};
use crate::experiment::placement::{Placement, ThisMachine};
use crate::load::LoadArgs;
use crate::results::files::LOAD_HOSTS;
use crate::results::files::{LOAD_COMMAND, LOAD_DIR, LOAD_SUMMARY, MERGE_STDERR, MERGE_STDOUT};
use crate::scenario::{load_args, load_config, processes_for, ramp_time, Scenario, Step};

/// How long the load generator may take to flush after SIGINT.
const LOAD_GRACE: Duration = Duration::from_secs(10);
/// How long `echolab merge` may take to combine the client hosts' results.
const MERGE_TIMEOUT: Duration = Duration::from_secs(120);

/// The wall-clock bound of one load run: the scenario's, or one derived from the load shape.
pub(in crate::experiment) fn step_timeout(scenario: &Scenario, step: &Step) -> Duration {
    if let Some(t) = scenario.step_timeout {
        return t;
    }
    let load = &scenario.load;
    let mut t = Duration::from_secs(60);
    match load.duration {
        Some(d) => t += d.0,
        None => t += Duration::from_secs(240),
    }
    if let Some(w) = load.warmup {
        t += w.0;
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

/// One load generator of a step: the only one, or the one on a client host.
pub(in crate::experiment) struct Agent {
    /// Where it runs, for failure reasons: `load` or `host c2 (198.18.0.12)`.
    name: String,
    out: PathBuf,
    stderr: PathBuf,
    pub guard: Option<Guard>,
    pub exit: Option<String>,
    /// Started over ssh: its guard's pid is the local `ssh`, not the generator.
    pub remote: bool,
}

/// A load generator about to be started.
struct Planned<'a> {
    name: String,
    args: Vec<String>,
    host: &'a dyn Placement,
    out: PathBuf,
    /// The beginning of its stdout/stderr file names.
    files: String,
}

/// The step's load generators to start: one, or one per client host with `--shard`
/// and a common `--start-at` (returned as the instant it names).
fn plan<'a>(
    scenario: &Scenario,
    step: &Step,
    dir: &Path,
    target: SocketAddr,
    clients: &[&'a dyn Placement],
) -> (Vec<Planned<'a>>, Option<Instant>) {
    let mut planned: Vec<Planned> = Vec::new();
    let mut start_at = None;
    if clients.is_empty() {
        let out = dir.join(LOAD_DIR);
        let args = load_args(&scenario.load, step, target, &out);
        planned.push(Planned {
            name: "load".into(),
            args,
            host: &ThisMachine,
            out,
            files: "load".into(),
        });
    } else {
        // Far enough ahead that every agent is running (namespace entered, preflight
        // done) when the load starts, so the hosts load the server together.
        // Over ssh, a session to open and a binary to start on each host.
        let per_host = if clients.iter().any(|c| c.remote()) {
            150
        } else {
            50
        };
        let margin = Duration::from_millis(500 + per_host * clients.len() as u64);
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + margin;
        start_at = Some(Instant::now() + margin);
        let n = clients.len();
        // Which client host ran which shard, for the report's per-host figures.
        let hosts: String = clients
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let name = host.host_name().map_or(String::new(), |n| format!(" {n}"));
                format!("host-{} {}{name}\n", i + 1, host.source_addr())
            })
            .collect();
        fs::write(dir.join(LOAD_HOSTS), hosts).ok();
        for (i, &host) in clients.iter().enumerate() {
            let file = format!("host-{}", i + 1);
            let out = dir.join(LOAD_DIR).join(&file);
            let mut load = LoadArgs {
                shard: Some(format!("{i}/{n}")),
                start_at: Some((at.as_secs_f64() * 1000.0).round() / 1000.0),
                ..load_config(&scenario.load, step, target, &out)
            };
            if scenario.load.processes.is_none() {
                // `conns_per_process` bounds each host's share, not the whole step's.
                let share = step.connections.div_ceil(n as u64);
                let per = scenario.load.conns_per_process.map(|c| c.0);
                load.processes = processes_for(share, per).unwrap_or(1).min(u32::MAX as u64) as u32;
            }
            let args = load.to_args();
            let name = format!("host {}", host.label());
            planned.push(Planned {
                name,
                args,
                host,
                out,
                files: format!("load-{file}"),
            });
        }
    }
    (planned, start_at)
}

/// Starts the step's load generators: one, or one per client host with `--shard` and a
/// common `--start-at`. Returns them and the instant they start loading.
pub(in crate::experiment) fn start_load(
    config: &RunConfig,
    scenario: &Scenario,
    step: &Step,
    dir: &Path,
    target: SocketAddr,
    clients: &[&dyn Placement],
) -> (Vec<Agent>, Instant) {
    let cpus = scenario.load.cpus.as_deref().and_then(process::cpu_set);
    let (planned, start_at) = plan(scenario, step, dir, target, clients);
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
        let (program, args) = host.command(&config.exe, args);
        commands += &command_line(&program, &args);
        let stderr = dir.join(format!("{files}-stderr.txt"));
        let spawned = match (
            File::create(dir.join(format!("{files}-stdout.txt"))),
            File::create(&stderr),
        ) {
            (Ok(o), Ok(e)) if host.remote() => {
                process::spawn_relayed(&program, &args, o.into(), e.into())
                    .map_err(|e| e.to_string())
            }
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
            remote: host.remote(),
        });
    }
    fs::write(dir.join(LOAD_COMMAND), commands).ok();
    // The step's clock (and the server's CPU window) starts when the load does.
    if let Some(at) = start_at {
        while Instant::now() < at && !process::stop_requested() {
            std::thread::sleep(Duration::from_millis(10).min(at - Instant::now()));
        }
    }
    (agents, Instant::now())
}

/// How an agent ended, for failure reasons: over ssh, exit status 255 is ssh's own
/// (the session was lost: the host, its sshd or the network went away).
pub(in crate::experiment) fn exit_reason(status: std::process::ExitStatus, remote: bool) -> String {
    if remote && status.code() == Some(255) {
        format!("its ssh session was lost ({status})")
    } else {
        status.to_string()
    }
}

impl Agent {
    /// Whether its host was lost: its ssh session ended under it.
    pub fn lost(&self) -> bool {
        self.remote
            && self
                .exit
                .as_deref()
                .is_some_and(|e| e.contains("ssh session was lost"))
    }
}

/// Stops the load generators still running: SIGINT (they flush a partial result),
/// a shared grace period, then SIGKILL.
///
/// `connections` are those the agents hold: each is closed and written to
/// connections.csv before a generator exits, which takes seconds per hundred thousand
/// on a busy machine, so the grace grows with them (a killed generator loses the last
/// second of its counts).
pub(in crate::experiment) fn stop_agents(agents: &mut [Agent], connections: u64) {
    for guard in agents.iter().filter_map(|a| a.guard.as_ref()) {
        guard.signal_group(libc::SIGINT);
    }
    let deadline = Instant::now() + LOAD_GRACE + Duration::from_secs(connections / 10_000);
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
pub(in crate::experiment) fn collect_load(
    config: &RunConfig,
    dir: &Path,
    agents: &[Agent],
    load_side: &mut LoadSide,
) {
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
        load_side.summary = read_summary(&agents[0].out.join(LOAD_SUMMARY));
        let why = tail(&agents[0].stderr);
        if load_side.summary.is_none() && !why.is_empty() {
            // The exit status alone hides the reason, which is the child's last word.
            load_side.exit = Some(format!("{}; stderr: {why}", statuses[0]));
        }
        return;
    }
    if let Some(missing) = agents.iter().find(|a| !a.out.join(LOAD_SUMMARY).is_file()) {
        load_side.exit = Some(format!(
            "{} left no summary ({}): {}",
            missing.name,
            missing.exit.as_deref().unwrap_or("killed"),
            tail(&missing.stderr)
        ));
        return;
    }
    let merged = dir.join(LOAD_DIR);
    let mut args = vec!["merge".to_string()];
    args.extend(agents.iter().map(|a| a.out.display().to_string()));
    args.extend(["--out".to_string(), merged.display().to_string()]);
    let mut commands = fs::read_to_string(dir.join(LOAD_COMMAND)).unwrap_or_default();
    commands += &command_line(&config.exe, &args);
    fs::write(dir.join(LOAD_COMMAND), commands).ok();
    let files = (
        File::create(dir.join(MERGE_STDOUT)),
        File::create(dir.join(MERGE_STDERR)),
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
            Some(_) => load_side.summary = read_summary(&merged.join(LOAD_SUMMARY)),
            None => {
                load_side.exit = Some(format!(
                    "echolab merge did not finish within {} s",
                    MERGE_TIMEOUT.as_secs()
                ))
            }
        },
    }
    if load_side.summary.is_none() && load_side.exit.is_some() {
        let why = tail(&dir.join(MERGE_STDERR));
        if !why.is_empty() {
            load_side.exit = Some(format!("echolab merge failed: {why}"));
        }
    }
}
