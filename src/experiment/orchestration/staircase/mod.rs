//! The staircase load shape (`[staircase]`): one live server per model, combination
//! of the other sweep axes and repetition; connections added in batches that stay
//! open until the staircase ends. Each batch is one `echolab load` run (split over
//! the client hosts like a step's), long enough to outlive the staircase; once its
//! connections are established the stair is measured for `every` and judged by the
//! step judge's rules; the first stair that fails ends the staircase. At the end
//! every load is stopped (it writes its summary) and the server last.
//!
//! A stair's figures come from its window ([`window`]): latency, requests and errors
//! from every live load's per-second files, CPU and TCP counters read at the
//! window's two ends, memory from the server's /proc samples inside it.
//!
//! A profiled stair (`run --profile`: every stair) is recorded under perf into its own
//! folder from just before its batch starts to its window's end: the batch's set-up,
//! then the trickle of every live connection while the window is measured.

mod deadline;
mod generators;
mod margin;
mod window;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::session::{load_cores, RunConfig, Session, StartError, Unstarted};
use crate::experiment::measurement::cost::{KernelSnapshot, KernelWatch};
use crate::experiment::measurement::judge::{judge, LoadSide, Readings, ServerRun, ServerSide};
use crate::experiment::measurement::netstat::Scope;
use crate::experiment::measurement::probe::Sample;
use crate::experiment::measurement::profile::Sampling;
use crate::experiment::measurement::row::{self, base_row, Origin};
use crate::experiment::placement::process;
use crate::experiment::placement::Lab;
use crate::results::files::LOAD_DIR;
use crate::results::{Row, Status};
use crate::scenario::{Dur, FailureRule, Fraction, ModelEntry, Scenario, Staircase, Step};
use crate::server::counters::ServerSummary;
use crate::sys::unix_now;
use deadline::{missed_deadline, Deadline};
use generators::Generators;
use margin::Margin;
use window::{live_dirs, Window};

/// How often the staircase looks at its server, its loads and the stop signals.
const TICK: Duration = Duration::from_millis(50);
/// How long a window waits, once closed, for its loads to write its last second (each
/// writes a second just after it ends; a starved machine later). A window whose loads
/// stopped writing is measured from what they wrote.
const WRITE_WAIT: Duration = Duration::from_secs(3);

/// The rows of one staircase, and whether a stop signal cut it short.
pub struct StaircaseOutcome {
    pub rows: Vec<Row>,
    pub interrupted: bool,
}

/// What one stair (or the hold) measured in its window.
struct Measured {
    load: LoadSide,
    /// The server's readings at the window's two ends.
    readings: Readings,
    /// Whose traffic the server's network counters include.
    net_scope: Option<Scope>,
    /// The ends of a connection the server's namespace holds.
    kernel_ends: u64,
    /// The window on the probe's clock, to pick the server's samples inside it.
    probe_window: (f64, f64),
    /// The live load generators' RSS at the window's end, over their RSS before their
    /// batches connected: the bytes their connections cost them.
    load_rss_gained: Option<u64>,
}

/// One stair as it went.
struct Stair {
    /// 1-based; the hold repeats the last stair's.
    index: u32,
    step: Step,
    /// Where its batch's load writes (`None` for the hold, which adds no load).
    load_dir: Option<PathBuf>,
    /// When its batch started (Unix seconds, the runner's clock).
    started_unix: f64,
    measured: Option<Measured>,
    /// How long its batch could take to connect (none for the hold).
    deadline: Option<Deadline>,
    status: Status,
    reason: String,
}

/// The connections each stair's batch adds (the last may be partial).
fn batch_of(stairs: &[Step], i: usize) -> u64 {
    stairs[i].connections - i.checked_sub(1).map_or(0, |p| stairs[p].connections)
}

/// The client hosts that load stair `i`: each host takes an equal share of the top
/// (`to / hosts`), filled in turn as a lab adds client machines, so a host runs one load
/// per stair it is in rather than a sliver of every stair.
fn stair_hosts<'a, T>(clients: &'a [T], stairs: &[Step], i: usize) -> &'a [T] {
    let Some(top) = stairs.last().filter(|_| !clients.is_empty()) else {
        return clients;
    };
    let share = top.connections.div_ceil(clients.len() as u64).max(1);
    let first = stairs[i].connections - batch_of(stairs, i);
    let last = stairs[i].connections.saturating_sub(1);
    let from = (first / share) as usize;
    let to = ((last / share) as usize).min(clients.len() - 1);
    &clients[from.min(to)..=to]
}

/// A bound on the whole staircase: each stair's longest deadline ([`Deadline`]) and its
/// window, then the hold and a minute's margin. The loads run this long so they outlive
/// it; the end of the staircase stops them.
fn lifetime(scenario: &Scenario, staircase: &Staircase, stairs: usize) -> Duration {
    let longest = Deadline::of(scenario, staircase.batch, Some(f64::MIN_POSITIVE)).total();
    (staircase.every.saturating_add(longest))
        .saturating_mul(stairs as u32)
        .saturating_add(staircase.hold.unwrap_or_default())
        .saturating_add(Duration::from_secs(60))
}

/// The scenario whose load keeps each connection open for `lifetime`: a timed load
/// (at the scenario's delay or rate), or with `requests`, those then an idle hold.
fn live_scenario(scenario: &Scenario, stairs: &[Step], lifetime: Duration) -> Scenario {
    let mut live = scenario.clone();
    let fixed = stairs[0].requests.or(scenario.load.requests.map(|r| r.0));
    if fixed.is_some() {
        live.load.hold = Some(Dur(lifetime));
    } else {
        live.load.duration = Some(Dur(lifetime));
    }
    live
}

/// Waits until `until`, or until the server dies or a stop signal comes; Err(()) then.
fn wait_until(until: Instant, server: &mut Session) -> Result<(), ()> {
    while Instant::now() < until {
        if process::stop_requested() || server.dead() {
            return Err(());
        }
        std::thread::sleep(TICK.min(until - Instant::now()));
    }
    Ok(())
}

/// Measures the window starting now for `length` over the loads writing under `roots`
/// (errors counted from `errors_from`, the stair's start; the kernel's memory from
/// `kernel_before`, before the first stair). None when cut short. Each load's folder is
/// looked for when the window is read, not when it opens: a load that began late (a
/// stair past its deadline) writes its first files inside the window.
fn measure_window(
    server: &mut Session,
    scenario: &Scenario,
    (roots, errors_from): (&[PathBuf], f64),
    length: Duration,
    loads: &Generators,
    kernel_before: Option<KernelSnapshot>,
) -> Option<Measured> {
    let (cpu_from, probe_from) = server.sample();
    let net_from = server.net();
    let loads_from = loads.usage();
    let from = unix_now();
    let end = Instant::now() + length;
    wait_until(end, server).ok()?;
    let (cpu_to, probe_to) = server.sample();
    let net_to = server.net();
    let kernel_to = server.kernel();
    let loads_to = loads.usage();
    let to = unix_now();
    let give_up = Instant::now() + WRITE_WAIT;
    while !window::written_through(&window::live_dirs_of(roots), to) && Instant::now() < give_up {
        wait_until(Instant::now() + TICK, server).ok()?;
    }
    let window: Window = window::window(&window::live_dirs_of(roots), errors_from, from, to);
    let readings = Readings {
        at_start: cpu_from,
        at_end: cpu_to,
        wall_s: to - from,
        net_at_start: net_from,
        net_at_end: net_to,
        kernel: KernelWatch {
            before: kernel_before,
            at_peak: kernel_to,
        },
        ..Readings::default()
    };
    let load = LoadSide {
        summary: Some(window.as_summary()),
        cores: load_cores(scenario),
        cpu_pct: generators::cpu_pct(loads_from.as_ref(), loads_to.as_ref(), to - from),
        ..LoadSide::default()
    };
    Some(Measured {
        load,
        readings,
        net_scope: server.server_run.net_scope,
        kernel_ends: server.server_run.kernel_ends,
        probe_window: (probe_from, probe_to),
        load_rss_gained: loads_to.map(|u| u.rss_gained),
    })
}

/// Waits until the batch in `dir` has established (or failed) all its `batch`
/// connections: Ok(Ok(())). When its connect deadline passes first: Ok(Err(what the
/// loads had decided by then)). Err(()) when cut short.
fn wait_established(
    dir: &Path,
    batch: u64,
    deadline: Instant,
    server: &mut Session,
    first_agent: usize,
) -> Result<Result<(), window::Connections>, ()> {
    let mut next_look = Instant::now();
    let mut seen = window::Connections::default();
    while Instant::now() < deadline {
        if process::stop_requested() || server.dead() {
            return Err(());
        }
        // A load that ended already cannot add more connections.
        let ended = server.agents[first_agent..]
            .iter_mut()
            .all(|a| a.guard.as_mut().is_none_or(|g| g.try_wait().is_some()));
        if Instant::now() >= next_look || ended {
            seen = window::connections(&live_dirs(dir));
            if seen.established + seen.failed >= batch || ended {
                return Ok(Ok(()));
            }
            next_look = Instant::now() + Duration::from_millis(250);
        }
        std::thread::sleep(TICK);
    }
    Ok(Err(seen))
}

/// One staircase to climb: a model's repetition over `stairs`, its steps (cumulative
/// connections, the other axes fixed), on one live server.
pub struct Plan<'a> {
    pub config: &'a RunConfig,
    pub scenario: &'a Scenario,
    pub staircase: &'a Staircase,
    pub entry: &'a ModelEntry,
    pub stairs: &'a [Step],
    pub rep: u32,
    pub hosts: Option<&'a dyn Lab>,
}

/// What the runner is told as a staircase climbs.
pub trait Watch {
    /// The server, a stair or the hold starts; the server's name ends in `: server`.
    fn starting(&mut self, what: &str);
    /// A stair's row as soon as it is judged, so a run killed mid-staircase keeps the
    /// stairs it climbed. It lacks what only the end gives, which exists only once the
    /// processes have exited: the server's /proc samples inside the window (the probe
    /// hands them over when it stops, from a remote host when they are brought back),
    /// its workers (server-summary.json, written on SIGTERM), the batch's ramp
    /// (connections.csv, written when its load ends) and a failure the end shows
    /// (refusals and byte counts over the staircase, an unclean stop). The outcome's
    /// rows, with them, replace these.
    fn judged(&mut self, row: Row);
}

/// Runs one staircase, telling `watch` as it goes. The outcome's rows are final: in
/// stair order, a `-hold` row last when the scenario holds; stairs after a failure are
/// `skipped`.
pub fn run_staircase(plan: &Plan, watch: &mut dyn Watch) -> StaircaseOutcome {
    let Plan {
        config,
        scenario,
        staircase,
        entry,
        stairs,
        rep,
        hosts,
    } = *plan;
    let top = stairs.last().expect("a staircase has at least one stair");
    let label = &entry.label;
    let server_dir = config
        .out
        .join(label)
        .join(format!("staircase-{}", top.name))
        .join(format!("rep-{rep}"));
    watch.starting(&format!("{label} {} rep {rep}: server", top.name));
    let mut server = match Session::start(config, scenario, entry, top, &server_dir, hosts) {
        Ok(session) => session,
        Err(unstarted) => {
            let Unstarted { error, .. } = *unstarted;
            let interrupted = error == StartError::Interrupted;
            let first = match error {
                StartError::Interrupted => {
                    stair_of(stairs, 0, Status::Interrupted, interrupted_reason())
                }
                StartError::Failed(reason) => stair_of(stairs, 0, Status::Failed, reason),
            };
            return finish(plan, vec![first], None, interrupted);
        }
    };
    let idle = server.sample().0;
    let mut climb = Climb::new(scenario, staircase, stairs);
    climb.kernel_before = server.kernel();
    let (mut done, mut interrupted) = climb.climb_all(plan, &mut server, watch);
    let climbed = done.len() == stairs.len() && done.iter().all(|s| s.status == Status::Ok);
    if let (Some(hold), true) = (staircase.hold, climbed) {
        watch.starting(&format!("{label} {}-hold rep {rep}", top.name));
        let mut record = stair_of(stairs, stairs.len() - 1, Status::Ok, String::new());
        record.step.name = format!("{}-hold", top.name);
        climb.hold(&mut server, hold, &mut record);
        watch.judged(stair_row(plan, &record, None));
        interrupted |= record.status == Status::Interrupted;
        done.push(record);
    }
    let run = end(server, top, &scenario.failure, &climb, &mut done);
    let server = Finished { run, idle };
    finish(plan, done, Some(server), interrupted)
}

/// Stair `i`'s record before it runs, started now.
fn stair_of(stairs: &[Step], i: usize, status: Status, reason: String) -> Stair {
    Stair {
        index: i as u32 + 1,
        step: stairs[i].clone(),
        load_dir: None,
        started_unix: unix_now(),
        measured: None,
        deadline: None,
        status,
        reason,
    }
}

/// The stairs climbed so far: the scenario their loads run (long enough to outlive the
/// staircase), and every batch's generators and load folder.
struct Climb<'s> {
    scenario: &'s Scenario,
    staircase: &'s Staircase,
    stairs: &'s [Step],
    live: Scenario,
    generators: Generators,
    load_dirs: Vec<PathBuf>,
    /// The last stair's connect rate as the runner saw it, which sets the next one's
    /// deadline.
    last_rate: Option<f64>,
    /// The memory the stairs must leave available, from MemAvailable at the start.
    margin: Option<Margin>,
    /// The kernel's socket and slab memory before the first stair.
    kernel_before: Option<KernelSnapshot>,
}

impl<'s> Climb<'s> {
    fn new(scenario: &'s Scenario, staircase: &'s Staircase, stairs: &'s [Step]) -> Climb<'s> {
        let lifetime = lifetime(scenario, staircase, stairs.len());
        Climb {
            scenario,
            staircase,
            stairs,
            live: live_scenario(scenario, stairs, lifetime),
            generators: Generators::default(),
            load_dirs: Vec::new(),
            last_rate: None,
            margin: Margin::here(staircase),
            kernel_before: None,
        }
    }

    /// The folders every live load writes into, as they are now.
    fn dirs(&self) -> Vec<PathBuf> {
        window::live_dirs_of(&self.load_dirs)
    }

    /// Every stair in turn, each into its own folder, until one ends the staircase or a
    /// stop signal comes: their records, and whether a stop signal cut the climb short.
    fn climb_all(
        &mut self,
        plan: &Plan,
        server: &mut Session,
        watch: &mut dyn Watch,
    ) -> (Vec<Stair>, bool) {
        let (label, rep) = (&plan.entry.label, plan.rep);
        let stairs = self.stairs;
        let mut done: Vec<Stair> = Vec::new();
        let mut interrupted = false;
        for (i, stair) in stairs.iter().enumerate() {
            if process::stop_requested() {
                interrupted = true;
                break;
            }
            watch.starting(&format!("{label} {} rep {rep}", stair.name));
            let dir = plan
                .config
                .out
                .join(label)
                .join(&stair.name)
                .join(format!("rep-{rep}"));
            let mut record = stair_of(stairs, i, Status::Ok, String::new());
            if let Some(reason) = self.past_margin(i) {
                record.status = Status::Skipped;
                record.reason = reason;
                watch.judged(stair_row(plan, &record, None));
                done.push(record);
                break;
            }
            if let Err(e) = fs::create_dir_all(&dir) {
                record.status = Status::Failed;
                record.reason = format!("cannot create {}: {e}", dir.display());
                watch.judged(stair_row(plan, &record, None));
                done.push(record);
                break;
            }
            let ended = self.stair(server, i, &dir, &mut record);
            watch.judged(stair_row(plan, &record, None));
            done.push(record);
            if ended {
                interrupted = process::stop_requested();
                break;
            }
        }
        (done, interrupted)
    }

    /// Why stair `i` is not climbed: its batch is predicted to leave less memory than
    /// the margin keeps. The stairs before it were all climbed, so it adds to theirs.
    fn past_margin(&self, i: usize) -> Option<String> {
        let held = i.checked_sub(1).map_or(0, |p| self.stairs[p].connections);
        let available = margin::available_now()?;
        self.margin?
            .refuses(available, held, batch_of(self.stairs, i))
    }

    /// Stair `i`: its batch started into `dir`, waited for until established, its
    /// window measured and judged into `record`. True when the staircase ends here.
    fn stair(&mut self, server: &mut Session, i: usize, dir: &Path, record: &mut Stair) -> bool {
        let stairs = self.stairs;
        let batch = Step {
            connections: batch_of(stairs, i),
            ..stairs[i].clone()
        };
        let net_at_start = server.net();
        // perf starts before the batch, so its first connections are sampled too.
        let mut recording = self
            .scenario
            .profiles(&stairs[i])
            .then(|| server.start_profile(dir, Sampling::Stair));
        let (first_agent, load_start) = server.start_load(&self.live, &batch, dir, |clients| {
            stair_hosts(clients, stairs, i)
        });
        if let Some(recording) = &mut recording {
            // Every live batch's generators: each carries its connections' trickle.
            recording.add_load(&server.local_load_pids());
        }
        self.generators
            .add(&server.agents[first_agent..], load_start);
        record.started_unix = unix_now();
        record.load_dir = Some(dir.join(LOAD_DIR));
        self.load_dirs.push(dir.join(LOAD_DIR));
        let deadline = Deadline::of(self.scenario, batch.connections, self.last_rate);
        record.deadline = Some(deadline);
        let established = wait_established(
            &dir.join(LOAD_DIR),
            batch.connections,
            load_start + deadline.total(),
            server,
            first_agent,
        );
        let counted = match (&established, net_at_start, server.net()) {
            (Ok(Err(_)), Some(start), Some(now)) => Some(now.since(&start)),
            _ => None,
        };
        // The rate the runner saw (its summaries are written once a second), known now;
        // connections.csv, which `ramp_s` is read from, is written when the load ends.
        self.last_rate = (established == Ok(Ok(())))
            .then(|| batch.connections as f64 / load_start.elapsed().as_secs_f64());
        // A late stair is still measured, so its row shows what it reached.
        let measured = established.ok().and_then(|_| {
            measure_window(
                server,
                self.scenario,
                (&self.load_dirs, record.started_unix),
                self.staircase.every,
                &self.generators,
                self.kernel_before,
            )
        });
        for note in recording.map(|r| r.finish()).unwrap_or_default() {
            crate::errln!("warning: {}: not profiled: {note}", dir.display());
        }
        let ended = judge_stair(&self.scenario.failure, record, measured, server);
        match established {
            Ok(Err(by_deadline)) => {
                missed_deadline(
                    record,
                    &by_deadline,
                    batch.connections,
                    &deadline,
                    counted.as_ref(),
                ) || ended
            }
            _ => ended,
        }
    }

    /// The hold: every connection held together for `hold`, measured and judged.
    fn hold(&self, server: &mut Session, hold: Duration, record: &mut Stair) {
        let measured = measure_window(
            server,
            self.scenario,
            (&self.load_dirs, record.started_unix),
            hold,
            &self.generators,
            self.kernel_before,
        );
        judge_stair(&self.scenario.failure, record, measured, server);
    }
}

/// The end: every load stops (and writes its summary and connections), then the
/// server. Only a staircase that passed every row so far can still fail on what the
/// end shows: after a failure, the refusals and differences belong to the stair that
/// failed. Returns how the server ran.
fn end(
    mut server: Session,
    top: &Step,
    rule: &FailureRule,
    climb: &Climb,
    done: &mut [Stair],
) -> ServerRun {
    server.stop_agents(top.connections);
    server.end_load();
    server.dead();
    let side = server.stop();
    // A stair the memory margin kept ends the climb without failing it: the end is
    // judged on the last stair climbed.
    if done
        .iter()
        .all(|s| matches!(s.status, Status::Ok | Status::Skipped))
    {
        let climbed = done.iter_mut().rev().find(|s| s.status == Status::Ok);
        if let (Some(reason), Some(last)) = (end_problem(rule, &side, &climb.dirs()), climbed) {
            last.status = Status::Failed;
            last.reason = reason;
        }
    }
    side
}

fn interrupted_reason() -> String {
    format!(
        "run interrupted by signal {}",
        process::stop_signal().unwrap_or(0)
    )
}

/// Judges a stair from its window; true when the staircase ends here (a failure, a
/// dead server or a stop signal).
fn judge_stair(
    rule: &FailureRule,
    stair: &mut Stair,
    measured: Option<Measured>,
    server: &mut Session,
) -> bool {
    if process::stop_requested() {
        stair.status = Status::Interrupted;
        stair.reason = interrupted_reason();
        stair.measured = measured;
        return true;
    }
    let reason = match &measured {
        _ if server.dead() => server.server_run.died.clone(),
        Some(m) => {
            // No server summary per stair (the server's counts are for the whole run), so
            // min_concurrent is held on the client's open connections, as min_established is.
            let needed = rule
                .min_concurrent
                .map_or(rule.min_established.0, |c| c.0.max(rule.min_established.0));
            let stricter = FailureRule {
                min_established: Fraction(needed),
                min_concurrent: None,
                ..rule.clone()
            };
            judge(&stricter, &stair.step, &ServerSide::default(), &m.load)
        }
        None => Some("the stair could not be measured".into()),
    };
    stair.measured = measured;
    if let Some(reason) = reason {
        stair.status = Status::Failed;
        stair.reason = reason;
        return true;
    }
    false
}

/// What only the end shows: connections the server refused over the staircase, byte
/// counts that differ between the two sides, a server that did not stop cleanly.
fn end_problem(rule: &FailureRule, server: &ServerRun, loads: &[PathBuf]) -> Option<String> {
    if let Some(p) = server.stop_problem.as_ref().or(server.died.as_ref()) {
        return Some(p.clone());
    }
    let s: &ServerSummary = server.summary.as_ref()?;
    if s.refused_total() > rule.max_refused {
        return Some(format!(
            "server refused {} connections over the staircase",
            s.refused_total()
        ));
    }
    let (sent, received) = window::bytes(loads);
    if rule.bytes_match && (sent != s.bytes_in || received != s.bytes_out) {
        return Some(format!(
            "bytes differ over the staircase: client sent {sent}, server received {}; client received {received}, server sent {}",
            s.bytes_in, s.bytes_out
        ));
    }
    None
}

/// The server once stopped: how it ended, and its idle sample before the first stair.
struct Finished {
    run: ServerRun,
    idle: Option<Sample>,
}

/// The staircase's rows: each stair's from its window ([`stair_row`]), then a
/// `skipped` row for each stair never climbed.
fn finish(
    plan: &Plan,
    done: Vec<Stair>,
    server: Option<Finished>,
    interrupted: bool,
) -> StaircaseOutcome {
    let Plan {
        scenario,
        entry,
        stairs,
        rep,
        ..
    } = *plan;
    let mut rows: Vec<Row> = Vec::new();
    // The stair that ended the climb: one that failed, or one the memory margin kept.
    let ended = done
        .iter()
        .find(|s| matches!(s.status, Status::Failed | Status::Skipped))
        .map(|s| (s.status, s.step.name.clone()));
    // The hold row comes only after every stair, so stairs past `done` were never run.
    let climbed = done.len().min(stairs.len());
    for stair in &done {
        rows.push(stair_row(plan, stair, server.as_ref()));
    }
    if !interrupted {
        for step in &stairs[climbed..] {
            let mut row = base_row(scenario, entry, step, rep);
            row.status = Status::Skipped;
            row.failure_reason = match &ended {
                Some((Status::Failed, f)) => format!("at least as heavy as failed stair {f}"),
                Some((_, f)) => format!(
                    "not climbed: the staircase stopped at the memory margin before stair {f}"
                ),
                None => "not climbed".into(),
            };
            rows.push(row);
        }
    }
    StaircaseOutcome { rows, interrupted }
}

/// One stair's row from its window: the server's samples inside the window, after its
/// idle sample so the cost columns count what the stairs so far added, and how its
/// batch connected.
fn stair_row(plan: &Plan, stair: &Stair, server: Option<&Finished>) -> Row {
    let mut taken = row::StairRow {
        index: stair.index,
        idle: server.and_then(|s| s.idle),
        workers: server.and_then(|s| s.run.summary.as_ref().map(|s| s.workers as u64)),
        ..row::StairRow::default()
    };
    let mut side = ServerSide::default();
    if let Some(m) = &stair.measured {
        let mut run = ServerRun {
            net_scope: m.net_scope,
            kernel_ends: m.kernel_ends,
            ..ServerRun::default()
        };
        if let Some(server) = server {
            let (from, to) = m.probe_window;
            let inside = server
                .run
                .samples
                .iter()
                .filter(|s| from <= s.t_s && s.t_s <= to);
            run.samples = server.idle.into_iter().chain(inside.copied()).collect();
        }
        side = ServerSide::new(run, m.readings);
        taken.load_rss_gained = m.load_rss_gained;
        taken.deadline_s = stair.deadline.map(|d| d.total().as_secs_f64());
        if let Some(dir) = &stair.load_dir {
            // From the instant its deadline counts from: a load slow to begin connecting
            // (its own clock starts late) ramps slowly, as the runner saw it.
            taken.ramp = window::ramp(&live_dirs(dir), stair.started_unix)
                .map(|r| (r.seconds, r.rate_per_s()));
        }
    }
    row::build(
        base_row(plan.scenario, plan.entry, &stair.step, plan.rep),
        &Origin::Stair(taken),
        stair.measured.as_ref().map(|m| (&side, &m.load)),
        stair.status,
        stair.reason.clone(),
    )
}

#[cfg(test)]
mod tests;
