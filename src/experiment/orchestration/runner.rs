//! The sweep: for each model, each step and each repetition, a fresh server and
//! one load-generator run ([`step`](super::step)), judged ([`judge`](crate::experiment::measurement::judge))
//! and written to results.csv ([`results`](crate::experiment::orchestration::results_csv)) as it finishes.
//!
//! A fresh server per step and repetition keeps each step's server counters
//! (bytes, connections, CPU, memory) exact and joinable with the client's, and
//! keeps a step that broke a server from spoiling the next one.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use super::order::RoundOrder;
pub use super::order::{round_order, ORDER_FILE};
use super::progress::Progress;
pub use super::session::RunConfig;
use super::staircase::{run_staircase, Plan, Watch};
use super::step::{run_step, StepOutcome};
use crate::experiment::measurement::judge::{judge, LoadSide, ServerSide};
use crate::experiment::measurement::row::{self, base_row, Origin};
use crate::experiment::orchestration::results_csv::ResultsCsv;
use crate::experiment::placement::conditions;
use crate::experiment::placement::hosts::{self, Hosts};
use crate::experiment::placement::process;
use crate::experiment::placement::ssh::SshLab;
use crate::experiment::placement::Lab;
use crate::results::files::{LOAD_DIR, RESULTS};
use crate::results::{Row, Shaping, Status};
use crate::scenario::{ModelEntry, ModelKind, Scenario, Step};

/// What a run produced.
pub struct RunOutcome {
    pub rows: Vec<Row>,
    pub interrupted: bool,
    /// Why the run stopped early on a fault of the machine (disk full, no fds).
    pub fault: Option<String>,
    /// The shaping applied to the links (`[network]`).
    pub network: Option<Shaping>,
    /// The sysctls of the lab's namespaces as read back there (`[hosts]`).
    pub lab_sysctls: Option<BTreeMap<String, String>>,
}

/// Why a command entry cannot run here: its program is not installed. None when it can
/// (or it is one of echolab's own models).
pub fn missing_program(entry: &ModelEntry) -> Option<String> {
    let ModelKind::Command(argv) = &entry.kind else {
        return None;
    };
    let program = Path::new(&argv[0]);
    let found = if argv[0].contains('/') {
        program.is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    (!found).then(|| format!("`{}` is not installed here (not found on PATH)", argv[0]))
}

/// Runs every model over every step and repetition, writing into `config.out`;
/// `written(done, total)` is told each time a row (or a stair's) is in results.csv.
pub fn run(
    scenario: &Scenario,
    config: &RunConfig,
    written: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<RunOutcome> {
    let adding = config.first_repetition > 1;
    let csv = if adding {
        ResultsCsv::append_to(&config.out.join(RESULTS))?
    } else {
        ResultsCsv::create(&config.out.join(RESULTS))?
    };
    // One set of emulated hosts for the whole run; dropping it (on every way out of
    // this function, an interrupt included) deletes the namespaces.
    let mut hosts = create_hosts(scenario, config.quiet)?;
    let network = match (&mut hosts, &scenario.network) {
        (Some(hosts), Some(network)) => {
            let shaping = hosts.shape(network)?;
            if !config.quiet {
                crate::errln!("links shaped: {}", shaping.describe());
            }
            Some(shaping)
        }
        _ => None,
    };
    let lab_sysctls = hosts.as_ref().map(|h| h.sysctls().clone());
    // Real machines over ssh: connected and checked before anything starts.
    let ssh = match &scenario.ssh {
        Some(spec) => {
            let lab = SshLab::connect(spec, scenario, &config.exe, &config.out)?;
            if !config.quiet {
                crate::errln!("{}", lab.describe());
            }
            Some(lab)
        }
        None => None,
    };
    let lab: Option<&dyn Lab> = match (&hosts, &ssh) {
        (Some(hosts), _) => Some(hosts),
        (None, Some(ssh)) => Some(ssh),
        (None, None) => None,
    };
    remove_leftover_cgroups(config.quiet);
    let mut sweep = Running {
        scenario,
        config,
        hosts: lab,
        csv,
        progress: Progress::new(
            total_rows(scenario, config.first_repetition),
            config.progress_bar,
            config.quiet,
        ),
        written,
        rows: Vec::new(),
        fault: None,
        profiling: false,
    };
    // A round added to a run is of fresh servers only (a scenario that adds them has no
    // staircase).
    let mut interrupted = !adding && sweep.staircases()?;
    if !interrupted {
        interrupted = sweep.rounds()?;
    }
    sweep.progress.close();
    Ok(RunOutcome {
        rows: sweep.rows,
        interrupted,
        fault: sweep.fault,
        network,
        lab_sysctls,
    })
}

/// The rows a run writes from repetition `first` on: every step of every model and
/// repetition, and a staircase's hold row.
fn total_rows(scenario: &Scenario, first: u32) -> u64 {
    let holds = scenario
        .staircase
        .filter(|s| s.hold.is_some())
        .map_or(0, |s| scenario.steps.len() / s.stairs().len());
    // A staircase profiles its stairs' own rows, adding none.
    let profiled = scenario
        .steps
        .iter()
        .filter(|s| scenario.staircase.is_none() && scenario.profiles(s))
        .count();
    let reps = (scenario.repetitions + 1).saturating_sub(first) as usize;
    (scenario.models.len() * ((scenario.steps.len() + holds) * reps + profiled)) as u64
}

/// The namespace lab of `[hosts]` (None without it), after removing the namespaces of
/// runs that died.
fn create_hosts(scenario: &Scenario, quiet: bool) -> anyhow::Result<Option<Hosts>> {
    let Some(clients) = scenario.client_hosts else {
        return Ok(None);
    };
    hosts::check_available()?;
    let removed = hosts::remove_leftovers()?;
    if !removed.is_empty() && !quiet {
        crate::errln!(
            "removed namespaces left by runs that died: {}",
            removed.join(" ")
        );
    }
    let hosts = Hosts::create(clients, &scenario.lab_sysctls)?;
    if !quiet {
        let clients: Vec<String> = hosts.clients().iter().map(|c| c.addr.to_string()).collect();
        crate::errln!(
            "hosts: server {}, clients {} (network namespaces {}*)",
            hosts.server().addr,
            clients.join(" "),
            hosts.prefix()
        );
    }
    Ok(Some(hosts))
}

/// Ends the cgroups of runs that died (their command servers' daemons included), in one
/// line. Every run does it: a run killed outright cannot, and the next must not leave
/// its processes running beside its own servers.
fn remove_leftover_cgroups(quiet: bool) {
    let (removed, killed) = conditions::remove_leftovers();
    if !removed.is_empty() && !quiet {
        let paths: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
        crate::errln!(
            "removed {} cgroups left by runs that died, killing the {killed} processes still in them: {}",
            removed.len(),
            paths.join(" ")
        );
    }
}

/// A run in progress: where its rows go as they finish.
struct Running<'a> {
    scenario: &'a Scenario,
    config: &'a RunConfig,
    hosts: Option<&'a dyn Lab>,
    csv: ResultsCsv,
    progress: Progress,
    /// Told (rows done, rows in all) after each row written.
    written: &'a mut dyn FnMut(u64, u64),
    rows: Vec<Row>,
    /// A fault of the machine that stopped the sweep.
    fault: Option<String>,
    /// The repetition running now is the profiled one.
    profiling: bool,
}

/// Why a sweep stops early: a stop signal, or a fault of the machine (`Running::fault`).
type Interrupted = bool;

impl<'a> Running<'a> {
    /// Writes a finished row.
    fn record(&mut self, what: &str, row: Row) -> anyhow::Result<()> {
        self.csv.append(&row)?;
        self.progress.finished(what, &row);
        self.rows.push(row);
        (self.written)(self.progress.done, self.progress.total);
        Ok(())
    }

    /// Staircases: each model's on its own live server, as before.
    fn staircases(&mut self) -> anyhow::Result<Interrupted> {
        let scenario = self.scenario;
        let Some(staircase) = &scenario.staircase else {
            return Ok(false);
        };
        let reps = scenario.repetitions;
        for entry in scenario
            .models
            .iter()
            .filter(|m| missing_program(m).is_none())
        {
            // Consecutive steps that differ only in connections are one staircase.
            for stairs in scenario.steps.chunks(staircase.stairs().len()) {
                for rep in 1..=reps {
                    if process::stop_requested() {
                        return Ok(true);
                    }
                    // Each stair's row is written as it is judged, and replaced by the
                    // final rows once the server has stopped.
                    let mark = self.csv.mark()?;
                    let mut watch = Climbing {
                        progress: &self.progress,
                        csv: &mut self.csv,
                        written: &mut *self.written,
                        stair: 0,
                        unwritten: None,
                    };
                    let plan = Plan {
                        config: self.config,
                        scenario,
                        staircase,
                        entry,
                        stairs,
                        rep,
                        hosts: self.hosts,
                    };
                    let outcome = run_staircase(&plan, &mut watch);
                    if let Some(e) = watch.unwritten {
                        return Err(e);
                    }
                    self.csv.rewind(mark)?;
                    for row in outcome.rows {
                        let what = format!("{} {} rep {rep}/{reps}", entry.label, row.step);
                        self.record(&what, row)?;
                    }
                    if outcome.interrupted {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Fresh servers: round r of a step runs every model's repetition r, in an order
    /// shuffled per round, so a slow minute of the machine falls on every model alike.
    fn rounds(&mut self) -> anyhow::Result<Interrupted> {
        let scenario = self.scenario;
        let stepped: Vec<&ModelEntry> = scenario
            .models
            .iter()
            .filter(|m| scenario.staircase.is_none() || missing_program(m).is_some())
            .collect();
        let missing: Vec<Option<String>> = stepped.iter().map(|m| missing_program(m)).collect();
        let first = self.config.first_repetition;
        let mut failed = self.failed_before(&stepped, first)?;
        let order_path = self.config.out.join(ORDER_FILE);
        let mut order_csv = (!stepped.is_empty())
            .then(|| match first {
                1 => RoundOrder::create(&order_path),
                _ => RoundOrder::append_to(&order_path),
            })
            .transpose()?;
        let reps = scenario.repetitions;
        for step in &scenario.steps {
            for rep in first..=reps {
                let order = round_order(&scenario.name, &step.name, rep, stepped.len());
                if let Some(o) = &mut order_csv {
                    o.append(
                        &step.name,
                        rep,
                        order.iter().map(|&i| stepped[i].label.as_str()),
                    )?;
                }
                for i in order {
                    let entry = stepped[i];
                    // Checked before every row, skipped and not-run rows too: a stream of
                    // rows that start nothing still stops within a second of SIGINT.
                    if process::stop_requested() {
                        return Ok(true);
                    }
                    let mut row = base_row(scenario, entry, step, rep);
                    let what = format!("{} {} rep {rep}/{reps}", entry.label, step.name);
                    let mut interrupted = false;
                    if let Some(why) = &missing[i] {
                        row.status = Status::NotRun;
                        row.failure_reason = why.clone();
                    } else if let Some(f) = failed[i].filter(|f| {
                        let again = scenario.failure.repeat_failed && f.name == step.name;
                        step.at_least_as_heavy_as(f) && !again
                    }) {
                        row.status = Status::Skipped;
                        row.failure_reason = if f.name == step.name {
                            "step failed in an earlier repetition".to_string()
                        } else {
                            format!("at least as heavy as failed step {}", f.name)
                        };
                    } else {
                        let Some((ran, stopped)) = self.fresh(entry, step, rep, &what) else {
                            return Ok(true);
                        };
                        row = ran;
                        interrupted = stopped;
                        if row.status == Status::Failed {
                            failed[i] = Some(step);
                        }
                    }
                    self.record(&what, row)?;
                    if interrupted {
                        return Ok(true);
                    }
                }
            }
            if first == 1
                && scenario.profiles(step)
                && self.profiled(&stepped, &missing, &failed, step)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The step each model failed first in the repetitions before `first` (none for a
    /// run's first rounds): a round added to a run skips what its earlier rounds did.
    fn failed_before(
        &self,
        stepped: &[&ModelEntry],
        first: u32,
    ) -> anyhow::Result<Vec<Option<&'a Step>>> {
        if first == 1 {
            return Ok(vec![None; stepped.len()]);
        }
        let earlier = crate::results::reader::load(&self.config.out)?.rows;
        Ok(stepped
            .iter()
            .map(|entry| {
                self.scenario.steps.iter().find(|step| {
                    earlier.iter().any(|r| {
                        r.model == entry.label && r.step == step.name && r.status == Status::Failed
                    })
                })
            })
            .collect())
    }

    /// The profiled repetition of `step`: one more per model that ran it, under perf,
    /// labelled `profiled` (the report never judges it). Returns whether it was stopped.
    fn profiled(
        &mut self,
        stepped: &[&ModelEntry],
        missing: &[Option<String>],
        failed: &[Option<&Step>],
        step: &Step,
    ) -> anyhow::Result<Interrupted> {
        let rep = self.scenario.repetitions + 1;
        for (i, entry) in stepped.iter().enumerate() {
            if missing[i].is_some() || failed[i].is_some_and(|f| step.at_least_as_heavy_as(f)) {
                continue;
            }
            let what = format!("{} {} profiled", entry.label, step.name);
            self.profiling = true;
            let ran = self.fresh(entry, step, rep, &what);
            self.profiling = false;
            let Some((mut row, interrupted)) = ran else {
                return Ok(true);
            };
            row.profiled = Some(true);
            self.record(&what, row)?;
            if interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// One repetition of one step on a fresh server, judged: its row and whether a
    /// stop signal came. A disturbed repetition is run again, up to `rerun_disturbed`
    /// times; the last attempt's row is the one kept. None: stopped before it started.
    fn fresh(
        &mut self,
        entry: &ModelEntry,
        step: &Step,
        rep: u32,
        what: &str,
    ) -> Option<(Row, Interrupted)> {
        let (scenario, config) = (self.scenario, self.config);
        let mut attempt = 0;
        loop {
            if process::stop_requested() {
                return None;
            }
            self.progress.starting(what);
            let dir = config
                .out
                .join(&entry.label)
                .join(&step.name)
                .join(format!("rep-{rep}"));
            if attempt > 0 {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let StepOutcome {
                server,
                load,
                interrupted: stopped,
            } = run_step(
                config,
                scenario,
                entry,
                step,
                &dir,
                self.hosts,
                self.profiling,
            );
            if let (Some(note), false) = (&server.run.net_note, config.quiet) {
                eprintln!("warning: {what}: {note}; its network counters are the machine's, other traffic included");
            }
            let (status, reason, interrupted) = self.verdict(stopped, step, &server, &load);
            let row = row::build(
                base_row(scenario, entry, step, rep),
                &Origin::Step {
                    load_dir: dir.join(LOAD_DIR),
                },
                Some((&server, &load)),
                status,
                reason,
            );
            if !scenario.pause.is_zero() && !interrupted {
                pause_unless_stopped(scenario.pause);
            }
            let again = row.status == Status::Ok
                && row.disturbed == Some(true)
                && attempt < scenario.failure.rerun_disturbed;
            if !again {
                return Some((row, interrupted));
            }
            attempt += 1;
            if !config.quiet {
                crate::errln!(
                    "{what}: disturbed ({}% of a core went to other work): run again ({attempt} of {})",
                    row.interference_pct.unwrap_or(0.0),
                    scenario.failure.rerun_disturbed
                );
            }
        }
    }

    /// A fresh step's status and reason, and whether the run stops here: a stop signal,
    /// a fault of the machine (the row unjudged), or the failure rule's judgement.
    fn verdict(
        &mut self,
        stopped: bool,
        step: &Step,
        server: &ServerSide,
        load: &LoadSide,
    ) -> (Status, String, Interrupted) {
        if stopped || process::stop_requested() {
            let signal = process::stop_signal().unwrap_or(0);
            let reason = format!("run interrupted by signal {signal}");
            return (Status::Interrupted, reason, true);
        }
        let Some(reason) = judge(&self.scenario.failure, step, server, load) else {
            return (Status::Ok, String::new(), false);
        };
        match super::fault::machine_fault(&self.config.out, &reason) {
            // Not the model's failure: the run stops here, this row unjudged.
            Some(fault) => {
                let reason = format!("run stopped: {fault}");
                self.fault = Some(fault);
                (Status::Interrupted, reason, true)
            }
            None => (Status::Failed, reason, false),
        }
    }
}

/// The runner's side of a staircase: its progress, and each stair's row written to
/// results.csv as soon as it is judged (the first write error kept for after the climb).
struct Climbing<'r> {
    progress: &'r Progress,
    csv: &'r mut ResultsCsv,
    written: &'r mut dyn FnMut(u64, u64),
    /// The stairs started so far.
    stair: u64,
    unwritten: Option<anyhow::Error>,
}

impl Watch for Climbing<'_> {
    fn starting(&mut self, what: &str) {
        // The server's start is the first stair's.
        self.stair += u64::from(!what.ends_with(": server"));
        let nth = self.progress.done + self.stair.max(1);
        self.progress.starting_nth(nth, what);
    }

    fn judged(&mut self, row: Row) {
        if self.unwritten.is_none() {
            self.unwritten = self.csv.append(&row).err();
            if self.unwritten.is_none() {
                (self.written)(self.progress.done + self.stair, self.progress.total);
            }
        }
    }
}

/// Sleeps `pause` between steps, in slices, so SIGINT or SIGTERM is honoured at once.
fn pause_unless_stopped(pause: std::time::Duration) {
    let end = Instant::now() + pause;
    while !process::stop_requested() {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
    }
}

/// Whether progress should be a bar (stderr is a terminal).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::measurement::probe;
    use crate::load::measurements::{LatencyStats, LoadSummary};
    use crate::results::RESULTS_HEADER;
    use crate::scenario;
    use crate::server::counters::ServerSummary;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in for the echolab binary: `serve` prints a listening line (port 1 for
    /// select, 2 otherwise) and writes a summary on SIGTERM; `load` writes a summary in
    /// which select's server holds at most 1000 connections (as FD_SETSIZE allows).
    /// The summaries are the crate's own types, serialized here.
    fn fake_echolab() -> String {
        let server = serde_json::to_string(&ServerSummary {
            max_concurrent: 7,
            bytes_in: 300,
            bytes_out: 300,
            workers: 1,
            ..ServerSummary::default()
        })
        .unwrap();
        // Sentinels the script replaces with its shell variables.
        let (established, requests) = (111_111_111, 222_222_222);
        let load = serde_json::to_string(&LoadSummary {
            duration_s: 0.5,
            connections_established: established,
            requests_completed: requests,
            throughput_rps: 2000.0,
            throughput_bytes_per_s: 2_097_152.0,
            latency_us: LatencyStats {
                p50: 100,
                p90: 200,
                p99: 300,
                p999: 400,
                max: 500,
                ..LatencyStats::default()
            },
            bytes_sent: 300,
            bytes_received: 300,
            ..LoadSummary::default()
        })
        .unwrap()
        .replace(&established.to_string(), "'\"$est\"'")
        .replace(&requests.to_string(), "'\"$conns\"'");
        format!(
            r#"#!/bin/sh
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
  trap 'echo '\''{server}'\'' > "$sj"; exit 0' TERM
  echo "listening on 127.0.0.1:$port model=$model pid=$$"
  while :; do sleep 0.02; done;;
load)
  est=$conns
  [ "${{target##*:}}" = 1 ] && [ "$conns" -gt 1000 ] && est=1000
  mkdir -p "$out"
  echo '{load}' > "$out/summary.json"
  sleep 0.3;;
esac
"#
        )
    }

    /// Runs the scenario `text` with [`fake_echolab`] into a temporary directory: the
    /// directory (kept while it lives), its results folder and the run's outcome.
    fn fake_run(text: &str) -> (tempfile::TempDir, std::path::PathBuf, RunOutcome) {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("fake-echolab");
        fs::write(&exe, fake_echolab()).unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let s = scenario::parse("t", "t", text).unwrap();
        let out = dir.path().join("results");
        fs::create_dir_all(&out).unwrap();
        let config = RunConfig {
            exe,
            out: out.clone(),
            progress_bar: false,
            quiet: true,
            first_repetition: 1,
        };
        let outcome = run(&s, &config, &mut |_, _| {}).unwrap();
        (dir, out, outcome)
    }

    #[test]
    fn an_added_round_is_appended_and_skips_what_failed_before() {
        let text = "models = [\"poll\", \"select\"]\n[load]\nrequests = 1\n[sweep]\nconnections = [500, 1100, 1500]\n";
        let (dir, out, first) = fake_run(text);
        // The run's manifest, as experiment::run_into leaves it.
        crate::results::Manifest::default().write(&out).unwrap();
        let s = scenario::parse("t", "t", &format!("repetitions = 2\n{text}")).unwrap();
        let config = RunConfig {
            exe: dir.path().join("fake-echolab"),
            out: out.clone(),
            progress_bar: false,
            quiet: true,
            first_repetition: 2,
        };
        let added = run(&s, &config, &mut |_, _| {}).unwrap();
        let summary: Vec<(&str, &str, u32, &str)> = added
            .rows
            .iter()
            .map(|r| {
                (
                    r.model.as_str(),
                    r.step.as_str(),
                    r.repetition,
                    r.status.name(),
                )
            })
            .collect();
        // Round 2 of each step: select, which failed 1100 in round 1, skips it and 1500,
        // as a run of two repetitions would have.
        let mut sorted = summary.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            [
                ("poll", "c1100-s64", 2, "ok"),
                ("poll", "c1500-s64", 2, "ok"),
                ("poll", "c500-s64", 2, "ok"),
                ("select", "c1100-s64", 2, "skipped"),
                ("select", "c1500-s64", 2, "skipped"),
                ("select", "c500-s64", 2, "ok"),
            ]
        );
        // Appended after round 1's rows, under its one header.
        let csv = fs::read_to_string(out.join(RESULTS)).unwrap();
        assert_eq!(csv.lines().next().unwrap(), RESULTS_HEADER.join(","));
        assert_eq!(csv.lines().count(), 1 + first.rows.len() + added.rows.len());
        let order = fs::read_to_string(out.join(ORDER_FILE)).unwrap();
        let rounds: Vec<&str> = order.lines().map(|l| &l[..l.rfind(',').unwrap()]).collect();
        assert_eq!(
            rounds,
            [
                "step,repetition",
                "c500-s64,1",
                "c1100-s64,1",
                "c1500-s64,1",
                "c500-s64,2",
                "c1100-s64,2",
                "c1500-s64,2"
            ]
        );
    }

    #[test]
    fn failure_stops_a_sweep_and_rows_are_written() {
        let (_dir, out, outcome) = fake_run(
            "models = [\"poll\", \"select\"]\n[load]\nrequests = 1\n[sweep]\nconnections = [500, 1100, 1500]\n",
        );
        assert!(!outcome.interrupted);
        let summary: Vec<(&str, &str, &str, &str)> = outcome
            .rows
            .iter()
            .map(|r| {
                (
                    r.model.as_str(),
                    r.step.as_str(),
                    r.status.name(),
                    r.failure_reason.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            // Round by round (each step's repetition 1 of every model), in each
            // round's seeded order; select skips what is heavier than its failure.
            [
                ("poll", "c500-s64", "ok", ""),
                ("select", "c500-s64", "ok", ""),
                (
                    "select",
                    "c1100-s64",
                    "failed",
                    "1000 of 1100 connections established (needed 1100)"
                ),
                ("poll", "c1100-s64", "ok", ""),
                ("poll", "c1500-s64", "ok", ""),
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
}
