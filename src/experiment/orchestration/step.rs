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
use crate::experiment::measurement::judge::{LoadSide, Readings, ServerSide};
use crate::experiment::measurement::probe::{self, Probe, Sample};
use crate::experiment::measurement::profile::Sampling;
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

/// A step's measured window as it is read: its readings and the counting of the
/// server's calls, started with the window.
#[derive(Default)]
struct Measuring {
    window: Readings,
    counting: Option<Counting>,
}

impl Measuring {
    /// At the load's start: the idle server's and the kernel's memory, the baseline of
    /// what a connection costs; without a warm-up, also the readings the measured window
    /// starts from.
    fn load_started(&mut self, session: &mut Session, warmup: Duration) {
        let idle = session.sample().0;
        self.window.idle = idle;
        self.window.kernel.before = session.kernel();
        if warmup.is_zero() {
            // The same instant: one sample serves both (over ssh, one reading fewer).
            self.window_started(session, idle);
        }
    }

    /// The readings the measured window starts from: the server's CPU (`server`, sampled
    /// now), the machine's busy time, the network counters and the counting of the
    /// server's calls.
    fn window_started(&mut self, session: &mut Session, server: Option<Sample>) {
        self.window.at_start = server;
        self.window.machine_busy_at_start = session.machine_busy_s();
        self.window.net_at_start = session.net();
        self.counting = session.count_calls();
    }

    /// The readings the window ends with, over `wall_s` (all but the network counters,
    /// read last): the server's CPU, the machine's busy time and the server's calls.
    fn ended(self, session: &Session, wall_s: f64) -> Readings {
        Readings {
            wall_s,
            at_end: session.sample().0,
            machine_busy_at_end: session.machine_busy_s(),
            calls: self.counting.and_then(|c| c.read().ok()),
            ..self.window
        }
    }
}

/// A step whose server did not start: how far it got, and whether a stop signal was why.
fn not_started(unstarted: Unstarted) -> StepOutcome {
    let Unstarted { mut run, error } = unstarted;
    let interrupted = error == StartError::Interrupted;
    if let StartError::Failed(reason) = error {
        run.start_error = Some(reason);
    }
    StepOutcome {
        server: ServerSide::new(run, Readings::default()),
        load: LoadSide::default(),
        interrupted,
    }
}

/// The generators started on this machine, each probed like the server (into
/// load-probe-N.csv), to tell a saturated generator from a slow server.
fn probe_generators(session: &Session, dir: &Path) -> Vec<Probe> {
    session
        .agents
        .iter()
        .enumerate()
        .filter_map(|(i, agent)| {
            let csv = dir.join(format!("load-probe-{}.csv", i + 1));
            let local = agent.guard.as_ref().filter(|_| !agent.remote)?;
            Probe::start(local.pid(), PROBE_INTERVAL, &csv).ok()
        })
        .collect()
}

/// The generators' CPU over the whole run (`run_wall_s`), in % of one core: when every
/// one was reaped and the server is alive, the runner's reaped children since the load
/// began (`reaped_before`), which are exactly the generators, counted whole; else from
/// their probes' `samples`.
fn generators_cpu_pct(
    session: &Session,
    samples: &[Vec<Sample>],
    reaped_before: f64,
    run_wall_s: f64,
) -> Option<f64> {
    let all_reaped = session.agents.iter().all(|a| a.exit.is_some());
    if all_reaped && session.died_at().is_none() && run_wall_s > 0.0 {
        let cpu_s = probe::reaped_children_cpu_s() - reaped_before;
        return Some(cpu_s / run_wall_s * 100.0);
    }
    load_cpu_pct(samples.iter().cloned())
}

/// Writes the server link's counters before and after the load (when the lab shapes it).
fn write_link_counters(dir: &Path, before: Option<String>, after: Option<String>) {
    let (Some(before), Some(after)) = (before, after) else {
        return;
    };
    let text = format!("before the load:\n{before}after the load:\n{after}");
    if let Err(e) = std::fs::write(dir.join(crate::results::files::SERVER_LINK), text) {
        crate::errln!(
            "warning: cannot write {}: {e}",
            crate::results::files::SERVER_LINK
        );
    }
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
        Err(unstarted) => return not_started(*unstarted),
    };
    let mut measuring = Measuring::default();
    // The idle server, sampled when the load starts (on client hosts, the common
    // --start-at instant); what is measured starts then too, or when a warm-up ends.
    let warmup = scenario.load.warmup.map_or(Duration::ZERO, |w| w.0);
    let link_before = hosts.and_then(|lab| lab.server_link_counters());
    let on_clients = !session.clients().is_empty();
    if !on_clients {
        measuring.load_started(&mut session, warmup);
    }
    // The server's perf starts before the load, so its first requests are sampled too.
    let mut recording = profiled.then(|| session.start_profile(dir, Sampling::Repetition));
    let reaped_before = probe::reaped_children_cpu_s();
    let (_, load_start) = session.start_load(scenario, step, dir, |clients| clients);
    let load_probes = probe_generators(&session, dir);
    load_side.cores = load_cores(scenario);
    if let Some(recording) = &mut recording {
        recording.add_load(&session.local_load_pids());
    }
    if on_clients {
        measuring.load_started(&mut session, warmup);
    }
    let measured_from = load_start + warmup;
    let watch = Watched {
        load_start,
        mark_at: (!warmup.is_zero()).then_some(measured_from),
    };
    let interrupted = watch_load(
        &mut session,
        (scenario, step),
        watch,
        &mut measuring,
        &mut load_side,
    );
    session.end_load();
    for note in recording.map(|r| r.finish()).unwrap_or_default() {
        crate::errln!(
            "warning: {} {}: not profiled: {note}",
            entry.label,
            step.name
        );
    }
    // The server's window is the measured part; the generators' CPU covers the whole run.
    let wall_s = measured_from.elapsed().as_secs_f64();
    let run_wall_s = load_start.elapsed().as_secs_f64();
    write_link_counters(
        dir,
        link_before,
        hosts.and_then(|lab| lab.server_link_counters()),
    );
    let mut window = measuring.ended(&session, wall_s);
    load_side.samples = load_probes.into_iter().map(Probe::finish).collect();
    load_side.cpu_pct = generators_cpu_pct(&session, &load_side.samples, reaped_before, run_wall_s);
    window.net_at_end = session.net();
    session.bring_back(dir);
    collect_load(config, dir, &session.agents, &mut load_side);
    StepOutcome {
        server: ServerSide::new(session.stop(), window),
        load: load_side,
        interrupted,
    }
}

/// When a step's load started, and when its warm-up ends (the measured window's start)
/// if it has one.
struct Watched {
    load_start: Instant,
    mark_at: Option<Instant>,
}

/// Waits for the load to end, reading the kernel's memory into `measuring` as it goes,
/// and stops it at the step's deadline, on a stop signal, or when its server has been
/// dead too long. At `mark_at` (the end of a warm-up) it takes the readings the measured
/// window starts from. Returns whether a stop signal cut it short.
fn watch_load(
    session: &mut Session,
    (scenario, step): (&Scenario, &Step),
    watched: Watched,
    measuring: &mut Measuring,
    load_side: &mut LoadSide,
) -> bool {
    let Watched {
        load_start,
        mut mark_at,
    } = watched;
    let mut next_kernel_read = Instant::now();
    let deadline = load_start + step_timeout(scenario, step);
    loop {
        if mark_at.is_some_and(|at| Instant::now() >= at) {
            let server = session.sample().0;
            measuring.window_started(session, server);
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
            stop_load(session, step);
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
            measuring.window.kernel.observe(session.kernel());
            next_kernel_read = Instant::now() + KERNEL_READ_INTERVAL;
        }
        // With its server gone the load may wait on timeouts; let it finish briefly.
        let dead_too_long = session
            .died_at()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(10));
        if process::stop_requested() || Instant::now() >= deadline || dead_too_long {
            let interrupted = process::stop_requested();
            load_side.timed_out = !interrupted && !dead_too_long;
            stop_load(session, step);
            return interrupted;
        }
        let tick = Duration::from_millis(20);
        let until_mark = mark_at.map_or(tick, |at| at.saturating_duration_since(Instant::now()));
        std::thread::sleep(tick.min(until_mark));
    }
}

/// Stops the agents still running and records how each one that stopped exited.
fn stop_load(session: &mut Session, step: &Step) {
    session.stop_agents(step.connections);
    for agent in &mut session.agents {
        if let (Some(guard), None) = (&mut agent.guard, &agent.exit) {
            agent.exit = guard.try_wait().map(|s| exit_reason(s, agent.remote));
        }
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
