//! One step of an experiment as processes: the server started and watched, the
//! load generators started, stopped and collected, and what they left behind
//! (the two summaries, read into the crate's own types, and the server's /proc
//! samples) handed to the judge.

use std::path::Path;
use std::time::{Duration, Instant};

use super::session::{
    collect_load, exit_reason, load_cores, step_timeout, RunConfig, Session, StartError, Unstarted,
    PROBE_INTERVAL,
};
use crate::experiment::measurement::judge::{LoadSide, ServerSide};
use crate::experiment::measurement::probe::{self, Probe, Sample};
use crate::experiment::measurement::request_cost::Counting;
use crate::experiment::placement::process;
use crate::experiment::placement::Lab;
use crate::scenario::{ModelEntry, Scenario, Step};

pub use super::session::substitute;
pub use crate::scenario::{load_args, load_config, server_args};

/// How often the kernel's socket and slab memory is read during a step.
const KERNEL_READ_INTERVAL: Duration = Duration::from_millis(250);

/// What one run of a step left behind, and whether a stop signal cut it short.
pub struct StepOutcome {
    pub server: ServerSide,
    pub load: LoadSide,
    pub interrupted: bool,
}

/// The CPU of every generator together, in % of one core: each one's CPU between its
/// first and last sample over that time. None when no generator gave two samples.
fn load_cpu_pct(probes: impl Iterator<Item = Vec<probe::Sample>>) -> Option<f64> {
    let mut total = None;
    for samples in probes {
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
            continue;
        };
        let wall = last.t_s - first.t_s;
        if wall > 0.0 {
            *total.get_or_insert(0.0) += (last.cpu_s() - first.cpu_s()) / wall * 100.0;
        }
    }
    total
}

/// At the load's start: the idle server's and the kernel's memory, the baseline of what a
/// connection costs; without a warm-up, also the readings the measured window starts from.
fn mark_load_start(session: &mut Session, warmup: Duration) -> Option<Counting> {
    let idle = session.sample().0;
    session.side.idle = idle;
    session.side.kernel.before = session.kernel();
    if warmup.is_zero() {
        // The same instant: one sample serves both (over ssh, one reading fewer).
        mark_measured_start(session, idle)
    } else {
        None
    }
}

/// The readings the measured window starts from: the server's CPU (`server`, sampled
/// now), the machine's busy time, the network counters and the counting of the
/// server's calls.
fn mark_measured_start(session: &mut Session, server: Option<Sample>) -> Option<Counting> {
    session.side.at_load_start = server;
    session.side.machine_busy_at_load_start = session.machine_busy_s();
    session.side.net_at_load_start = session.net();
    session.count_calls()
}

/// Runs one repetition of one step for one model (on the emulated hosts when given);
/// `profiled`: under perf from the load's start to its end (the profiled repetition).
pub fn run_step(
    config: &RunConfig,
    scenario: &Scenario,
    entry: &ModelEntry,
    step: &Step,
    dir: &Path,
    hosts: Option<&dyn Lab>,
    profiled: bool,
) -> StepOutcome {
    let mut load_side = LoadSide::default();
    let mut session = match Session::start(config, scenario, entry, step, dir, hosts) {
        Ok(session) => session,
        Err(unstarted) => {
            let Unstarted { mut side, error } = *unstarted;
            let interrupted = error == StartError::Interrupted;
            if let StartError::Failed(reason) = error {
                side.start_error = Some(reason);
            }
            return StepOutcome {
                server: side,
                load: load_side,
                interrupted,
            };
        }
    };
    // The idle server, sampled when the load starts (on client hosts, the common
    // --start-at instant); what is measured starts then too, or when a warm-up ends.
    let warmup = scenario.load.warmup.map_or(Duration::ZERO, |w| w.0);
    let link_before = hosts.and_then(|lab| lab.server_link_counters());
    let on_clients = !session.clients().is_empty();
    let mut counting = None;
    if !on_clients {
        counting = mark_load_start(&mut session, warmup);
    }
    // The server's perf starts before the load, so its first requests are sampled too.
    let mut recording = profiled.then(|| session.start_profile());
    let reaped_before = probe::reaped_children_cpu_s();
    let (_, load_start) = session.start_load(scenario, step, dir, |clients| clients);
    // The generators are probed like the server, to tell a saturated generator from a slow server.
    let load_probes: Vec<Probe> = session
        .agents
        .iter()
        .enumerate()
        .filter_map(|(i, agent)| {
            let csv = dir.join(format!("load-probe-{}.csv", i + 1));
            let local = agent.guard.as_ref().filter(|_| !agent.remote)?;
            Probe::start(local.pid(), PROBE_INTERVAL, &csv).ok()
        })
        .collect();
    load_side.cores = load_cores(scenario);
    if let Some(recording) = &mut recording {
        recording.add_load(&session.local_load_pids());
    }
    if on_clients {
        counting = mark_load_start(&mut session, warmup);
    }
    let measured_from = load_start + warmup;
    let mark_at = (!warmup.is_zero()).then_some(measured_from);
    let interrupted = watch_load(
        &mut session,
        scenario,
        step,
        load_start,
        mark_at,
        &mut counting,
        &mut load_side,
    );
    session.end_load();
    if let Some(recording) = recording {
        for note in recording.finish() {
            crate::errln!(
                "warning: {} {}: not profiled: {note}",
                entry.label,
                step.name
            );
        }
    }
    // The server's window is the measured part; the generators' CPU covers the whole run.
    session.side.load_wall_s = measured_from.elapsed().as_secs_f64();
    let run_wall_s = load_start.elapsed().as_secs_f64();
    if let (Some(before), Some(after)) = (
        link_before,
        hosts.and_then(|lab| lab.server_link_counters()),
    ) {
        let text = format!("before the load:\n{before}after the load:\n{after}");
        if let Err(e) = std::fs::write(dir.join(crate::results::SERVER_LINK), text) {
            crate::errln!("warning: cannot write {}: {e}", crate::results::SERVER_LINK);
        }
    }
    session.side.at_load_end = session.sample().0;
    session.side.machine_busy_at_load_end = session.machine_busy_s();
    session.side.calls = counting.and_then(|c| c.read().ok());
    load_side.samples = load_probes.into_iter().map(Probe::finish).collect();
    load_side.cpu_pct = load_cpu_pct(load_side.samples.iter().cloned());
    // Every generator reaped and the server alive: the runner's reaped children since the
    // load began are exactly the generators, counted whole.
    let all_reaped = session.agents.iter().all(|a| a.exit.is_some());
    if all_reaped && session.died_at().is_none() && run_wall_s > 0.0 {
        let cpu_s = probe::reaped_children_cpu_s() - reaped_before;
        load_side.cpu_pct = Some(cpu_s / run_wall_s * 100.0);
    }
    session.side.net_at_load_end = session.net();
    session.bring_back(dir);
    collect_load(config, dir, &session.agents, &mut load_side);
    StepOutcome {
        server: session.stop(),
        load: load_side,
        interrupted,
    }
}

/// Waits for the load to end, reading the kernel's memory as it goes, and stops it at
/// the step's deadline, on a stop signal, or when its server has been dead too long.
/// At `mark_at` (the end of a warm-up) it takes the readings the measured window starts
/// from. Returns whether a stop signal cut it short.
fn watch_load(
    session: &mut Session,
    scenario: &Scenario,
    step: &Step,
    load_start: Instant,
    mut mark_at: Option<Instant>,
    counting: &mut Option<Counting>,
    load_side: &mut LoadSide,
) -> bool {
    let mut next_kernel_read = Instant::now();
    let deadline = load_start + step_timeout(scenario, step);
    loop {
        if mark_at.is_some_and(|at| Instant::now() >= at) {
            let server = session.sample().0;
            *counting = mark_measured_start(session, server);
            mark_at = None;
        }
        let mut running = 0;
        for agent in &mut session.agents {
            if let Some(guard) = &mut agent.guard {
                match guard.try_wait() {
                    Some(status) if agent.exit.is_none() => {
                        agent.exit = Some(exit_reason(status, agent.remote))
                    }
                    Some(_) => {}
                    None => running += 1,
                }
            }
        }
        // A client host lost (its ssh session gone) fails the step now: the rest of
        // the load cannot make it whole.
        if running > 0 && session.agents.iter().any(|a| a.lost()) {
            session.stop_agents(step.connections);
            for agent in &mut session.agents {
                if let (Some(guard), None) = (&mut agent.guard, &agent.exit) {
                    agent.exit = guard.try_wait().map(|s| exit_reason(s, agent.remote));
                }
            }
            return false;
        }
        // Checked before the load's end: a load that ends because its server died
        // must fail the step for that reason, not for the errors it then saw.
        session.dead();
        if running == 0 {
            return false;
        }
        // The kernel's memory at the hold: the snapshot with the most sockets in use.
        if Instant::now() >= next_kernel_read {
            let now = session.kernel();
            session.side.kernel.observe(now);
            next_kernel_read = Instant::now() + KERNEL_READ_INTERVAL;
        }
        // With its server gone the load may wait on timeouts; let it finish briefly.
        let dead_too_long = session
            .died_at()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(10));
        if process::stop_requested() || Instant::now() >= deadline || dead_too_long {
            let interrupted = process::stop_requested();
            load_side.timed_out = !interrupted && !dead_too_long;
            session.stop_agents(step.connections);
            for agent in &mut session.agents {
                if let (Some(guard), None) = (&mut agent.guard, &agent.exit) {
                    agent.exit = guard.try_wait().map(|s| exit_reason(s, agent.remote));
                }
            }
            return interrupted;
        }
        let tick = Duration::from_millis(20);
        let until_mark = mark_at.map_or(tick, |at| at.saturating_duration_since(Instant::now()));
        std::thread::sleep(tick.min(until_mark));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::LoadArgs;
    use crate::scenario;
    use crate::server::{Model, ServerConfig, Trigger};
    use clap::Parser as _;
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    use std::time::Duration;

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
engine = "uring"
[sweep]
connections = [100, 30000]
"#,
        )
        .unwrap();
        let dir = Path::new("/r/m/s/rep-1");
        let big = &s.steps[1];
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let parse_server =
            |args: Vec<String>| ServerConfig::try_parse_from(args).expect("server args parse");
        let epoll = parse_server(server_args(&s.models[0], big, dir, lo));
        assert_eq!(epoll.model, Model::Epoll);
        assert_eq!(epoll.addr, "127.0.0.1:0".parse().unwrap());
        assert_eq!(epoll.log, Some(dir.join("server-log.csv")));
        assert_eq!(epoll.summary_json, Some(dir.join("server-summary.json")));
        assert_eq!(epoll.trigger, Trigger::Level);
        assert_eq!(epoll.processes, 2);
        assert_eq!(epoll.idle_timeout, Some(Duration::from_secs(30)));
        let select = parse_server(server_args(&s.models[1], big, dir, lo));
        assert_eq!(select.processes, 1, "select runs in one process");
        let out = dir.join("load");
        let target: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let load = LoadArgs::try_parse_from(load_args(&s.load, big, target, &out)).unwrap();
        assert_eq!(load.target, "127.0.0.1:7000");
        assert_eq!(load.connections, 30000);
        assert_eq!(load.size, Some(64));
        assert_eq!(load.requests, Some(3));
        assert_eq!(load.delay, Duration::from_micros(1500));
        assert_eq!(load.connect_rate, 5000.0);
        // hold_together 2 s + twice the 6 s ramp of 30000 connections at 5000/s.
        assert_eq!(load.hold, Some(Duration::from_secs(14)));
        assert_eq!(load.processes, 2);
        assert_eq!(load.source_addrs.as_deref(), Some("127.0.0.2-127.0.0.9"));
        assert_eq!(load.engine, crate::load::Engine::Uring);
        assert_eq!(load.out, Some(out.clone()));
        assert!(load.quiet);
        let small =
            LoadArgs::try_parse_from(load_args(&s.load, &s.steps[0], target, &out)).unwrap();
        assert_eq!(small.processes, 1);
    }
}
