//! Experiments: a scenario ([`crate::scenario`]: models x load steps x repetitions) run
//! as child processes, measured, judged and written to a results directory.
//!
//! Three rooms, data flowing one way (orchestration → placement and measurement), and
//! the manifest beside them:
//!
//! - [`orchestration`]: the sweep, its steps and stairs, the session they share, and
//!   the results.csv writer.
//! - [`placement`]: where a process runs (this machine, a lab namespace, an ssh host),
//!   the cgroup caps and the children that never outlive the runner.
//! - [`measurement`]: what is read from a server and its host (/proc, counters) and the
//!   pure judging of a step into a row.
//!
//! [`manifest`] holds the facts of manifest.json (machine, limits, scenario, run status).
//!
//! `scripts/module-graph.sh src/experiment` shows the imports and any cycle. The `run`
//! verb ([`crate::run`]) composes an experiment and its report.

pub mod manifest;
pub mod measurement;
pub mod orchestration;
pub mod placement;

use anyhow::Context as _;

/// Runs one (ordinary) scenario into `out`: checks it can run here, then writes the
/// manifest and results.csv as it goes, telling `written(done, total)` after each row.
/// `quiet`: no progress output.
pub fn run_into(
    scenario: &crate::scenario::Scenario,
    out: &std::path::Path,
    quiet: bool,
    written: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<orchestration::runner::RunOutcome> {
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

    placement::process::install_stop_handlers()
        .context("cannot install SIGINT/SIGTERM handlers")?;
    // The run's children inherit the limit; the manifest records it as raised.
    let fd_limit = crate::sys::raise_fd_limit().ok();
    let mut manifest = crate::results::Manifest::new(scenario, fd_limit);
    manifest.write(out)?;
    let config = orchestration::runner::RunConfig {
        exe,
        out: out.to_path_buf(),
        progress_bar: orchestration::runner::stderr_is_terminal(),
        quiet,
        first_repetition: 1,
    };
    let outcome = orchestration::runner::run(scenario, &config, written);
    ended(&mut manifest, &outcome);
    manifest.write(out)?;
    outcome
}

/// Adds round `repetition` (one more repetition of every step, every model in it) to
/// the run of `scenario` in `out`: its rows appended to results.csv as any repetition's,
/// its manifest running again until the round ends. The runner, not the experiment,
/// decides whether a round is added (a claim left undecided).
pub fn add_round(
    scenario: &crate::scenario::Scenario,
    out: &std::path::Path,
    repetition: u32,
    quiet: bool,
    written: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<orchestration::runner::RunOutcome> {
    anyhow::ensure!(
        repetition > 1 && scenario.staircase.is_none() && scenario.profiled.is_none(),
        "repetition {repetition} cannot be added: a round is added after the first, to a \
         run of fresh servers without profiled repetitions"
    );
    let exe = std::env::current_exe().context("cannot find the echolab binary to start servers")?;
    let mut manifest = crate::results::Manifest::read(out)?;
    manifest.interrupted = true;
    manifest.status = "running".into();
    manifest.write(out)?;
    let round = crate::scenario::Scenario {
        repetitions: repetition,
        ..scenario.clone()
    };
    let config = orchestration::runner::RunConfig {
        exe,
        out: out.to_path_buf(),
        progress_bar: orchestration::runner::stderr_is_terminal(),
        quiet,
        first_repetition: repetition,
    };
    let outcome = orchestration::runner::run(&round, &config, written);
    ended(&mut manifest, &outcome);
    manifest.write(out)?;
    outcome
}

/// The manifest of a run (or round) that ended with `outcome`.
fn ended(
    manifest: &mut crate::results::Manifest,
    outcome: &anyhow::Result<orchestration::runner::RunOutcome>,
) {
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
}

/// What this machine must offer the scenario before anything of its run is written:
/// root for server limits, network namespaces for emulated hosts.
pub fn check_can_run(scenario: &crate::scenario::Scenario) -> anyhow::Result<()> {
    if scenario
        .models
        .iter()
        .any(|m| crate::results::Limits::of(&m.options).is_some())
    {
        anyhow::ensure!(
            crate::sys::is_root(),
            "{}: this process is not root",
            placement::conditions::NEEDS
        );
    }
    if scenario.client_hosts.is_some() {
        // A machine that cannot make namespaces cannot run it.
        placement::hosts::check_available()?;
    }
    Ok(())
}
