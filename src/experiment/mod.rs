//! Experiments: a scenario (models x load steps x repetitions) run as child
//! processes, measured, judged and written to a results directory.
//!
//! - [`scenario`]: the TOML format, its validation and its expansion into steps (docs/scenarios.md).
//! - [`runner`]: the sweep: every model over every step and repetition.
//! - [`staircase`]: the staircase load shape: one live server, connections added in batches.
//! - [`session`]: a server started at a placement with its observers and load agents,
//!   watched and stopped: what a step and a stair share.
//! - [`step`]: one step as processes: start the server and the load, collect what they left.
//! - [`judge`]: a step's summaries and samples to a failure reason and a row (pure).
//! - [`results`]: results.csv written row by row ([`crate::results`] is its schema) and the
//!   comparison table.
//! - [`probe`]: the server's CPU, memory, threads and fds from /proc.
//! - [`cost`]: what each connection costs in user space and in the kernel, from snapshots.
//! - [`hosts`]: network namespaces standing in for a server host and client hosts, and
//!   the shaping of their links (`[network]`).
//! - [`conditions`]: a cgroup of the server's own with its CPU, memory and task caps.
//! - `placement`: where a process runs (this machine, a lab namespace, an ssh host), one trait.
//! - `ssh`: hosts reached with the system `ssh`: checked, placed on, brought back from.
//! - [`remote`]: `echolab remote`, what the runner starts on an ssh host.
//! - [`process`]: children that never outlive the runner; SIGINT/SIGTERM handling.
//! - [`fault`]: a step failed by the machine (disk full, no fds), told from a model's.
//! - [`manifest`]: the facts of manifest.json (machine, limits, scenario, run status).
//!
//! Data flows one way: scenario → session (step, staircase) → judge → results;
//! `scripts/module-graph.sh src/experiment` shows the imports and any cycle. The
//! `run` verb ([`crate::run`]) composes an experiment and its report.

pub mod conditions;
pub mod cost;
pub mod fault;
pub mod hosts;
pub mod judge;
pub mod manifest;
pub mod netstat;
mod placement;
pub mod probe;
pub mod process;
pub mod remote;
pub mod request_cost;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod session;
pub mod spread;
mod ssh;
pub mod staircase;
pub mod step;

use anyhow::Context as _;

/// Runs one (ordinary) scenario into `out`: checks it can run here, then writes the
/// manifest and results.csv as it goes. `quiet`: no progress output.
pub fn run_into(
    scenario: &scenario::Scenario,
    out: &std::path::Path,
    quiet: bool,
) -> anyhow::Result<runner::RunOutcome> {
    check_can_run(scenario)?;
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create results directory {}", out.display()))?;
    let exe = std::env::current_exe().context("cannot find the echolab binary to start servers")?;

    crate::outln!(
        "scenario {}: {} models x {} steps x {} repetitions -> {}",
        scenario.name,
        scenario.models.len(),
        scenario.steps.len(),
        scenario.repetitions,
        out.display()
    );
    if !scenario.description.is_empty() {
        crate::outln!("  {}", scenario.description);
    }
    if let Some(staircase) = &scenario.staircase {
        crate::outln!("  {} (one live server per model)", staircase.describe());
    }
    if let Some(d) = &scenario.expected_duration {
        crate::outln!("  expected duration: {d}");
    }
    if let Some(r) = &scenario.requirements {
        crate::outln!("  needs: {r}");
    }

    process::install_stop_handlers().context("cannot install SIGINT/SIGTERM handlers")?;
    let mut manifest = crate::results::Manifest::new(scenario);
    manifest.write(out)?;
    let config = runner::RunConfig {
        exe,
        out: out.to_path_buf(),
        progress_bar: runner::stderr_is_terminal(),
        quiet,
    };
    let outcome = runner::run(scenario, &config);
    if let Some(applied) = outcome.as_ref().ok().and_then(|o| o.network.clone()) {
        manifest.conditions.network = Some(applied);
    }
    if let Some(sysctls) = outcome.as_ref().ok().and_then(|o| o.lab_sysctls.clone()) {
        manifest.conditions.lab_sysctls = Some(sysctls);
    }
    match &outcome {
        Ok(o) => match &o.fault {
            Some(fault) => manifest.stop(fault.clone()),
            None => manifest.finish(o.interrupted),
        },
        Err(e) => manifest.stop(format!("{e:#}")),
    }
    manifest.write(out)?;
    let outcome = outcome?;

    Ok(outcome)
}

/// What this machine must offer the scenario before anything of its run is written:
/// root for server limits, network namespaces for emulated hosts.
pub fn check_can_run(scenario: &scenario::Scenario) -> anyhow::Result<()> {
    if scenario
        .models
        .iter()
        .any(|m| crate::results::Limits::of(&m.options).is_some())
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        anyhow::ensure!(
            unsafe { libc::geteuid() } == 0,
            "{}: this process is not root",
            conditions::NEEDS
        );
    }
    if scenario.client_hosts.is_some() {
        // A machine that cannot make namespaces cannot run it.
        hosts::check_available()?;
    }
    Ok(())
}
