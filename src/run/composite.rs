//! A composite scenario (`parts = [...]`, as `classic` is): each part, a built-in
//! scenario, runs into the folder of its name inside one results directory; the
//! top-level manifest lists the parts (and why any could not run) and the top-level
//! report judges them together.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{default_out, print_thresholds, run_into, write_report_or_warn, RunArgs};
use crate::experiment::orchestration::results_csv::ResultsCsv;
use crate::experiment::placement::process;
use crate::results::files::RESULTS;
use crate::results::reader::Results;
use crate::scenario::{self, Scenario};

pub fn run(args: &RunArgs, composite: &Scenario) -> anyhow::Result<ExitCode> {
    if let Err(message) = check_overrides(args, composite) {
        return Ok(crate::console::usage_error(super::USAGE, &message));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&composite.name));
    let _lock = match super::lock::lock(&out, args.force) {
        Ok(lock) => lock,
        Err(message) => return Ok(crate::console::usage_error(super::USAGE, &message)),
    };
    crate::outln!(
        "scenario {}: {} parts ({}) -> {}",
        composite.name,
        composite.parts.len(),
        composite
            .parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        out.display()
    );
    if let Some(d) = &composite.expected_duration {
        crate::outln!("  expected duration: {d}");
    }
    process::install_stop_handlers().context("cannot install SIGINT/SIGTERM handlers")?;
    // The parts' children inherit the limit; the manifest records it as raised.
    let fd_limit = crate::sys::raise_fd_limit().ok();
    let mut manifest = crate::results::Manifest::new(composite, fd_limit);
    manifest.write(&out)?;
    // The parts' rows are in their own folders; an empty results.csv keeps the
    // directory readable by anything that expects one.
    ResultsCsv::create(&out.join(RESULTS))?;
    let mut interrupted = false;
    let mut unmet = 0;
    for part in &composite.parts {
        if process::stop_requested() {
            interrupted = true;
            break;
        }
        let dir = out.join(&part.name);
        match run_part(&part.locator, &dir, args) {
            Ok((stopped, results)) => {
                interrupted = stopped;
                unmet += print_thresholds(&results, Some(&part.name), args.enforce_thresholds);
            }
            Err(e) => {
                crate::errln!("part {} could not run: {e:#}", part.name);
                manifest
                    .part_errors
                    .insert(part.name.clone(), format!("{e:#}"));
            }
        }
        manifest.write(&out)?;
        if interrupted {
            break;
        }
    }
    manifest.finish(interrupted);
    manifest.write(&out)?;
    if !args.no_report {
        write_report_or_warn(&out, &mut crate::results::reader::load(&out));
    }
    crate::outln!("results: {}", out.display());
    if interrupted {
        crate::errln!(
            "interrupted: the finished parts and steps are kept in {}",
            out.display()
        );
        return Ok(ExitCode::from(130));
    }
    if unmet > 0 && args.enforce_thresholds {
        return Ok(ExitCode::from(crate::compare::EXIT_THRESHOLDS));
    }
    Ok(ExitCode::SUCCESS)
}

/// The command line's changes that a composite cannot take, refused before anything
/// runs (a usage error): each part is its own scenario with its own models.
fn check_overrides(args: &RunArgs, composite: &Scenario) -> Result<(), String> {
    if !args.server_cmd.is_empty() {
        return Err(format!(
            "--server-cmd cannot be added to '{}': it is made of parts, each with its own \
             models; run a part with it instead",
            composite.name
        ));
    }
    if args.baseline.is_some() {
        return Err(format!(
            "--baseline compares one scenario's steps, and '{}' is made of parts: compare \
             them one by one (echolab compare OLD/PART NEW/PART)",
            composite.name
        ));
    }
    super::repetitions(args)?;
    if args.profile {
        crate::errln!(
            "warning: --profile is ignored by '{}', which is made of parts: profile a part \
             on its own (echolab run PART --profile)",
            composite.name
        );
    }
    // A label no part has would leave every part without models: refused here, not
    // found out part by part.
    let mut known = Vec::new();
    for part in &composite.parts {
        if let Ok((origin, name, text)) = scenario::locate(&part.locator) {
            if let Ok(s) = scenario::parse(&origin, &name, &text) {
                known.extend(s.models.into_iter().map(|m| m.label));
            }
        }
    }
    match args.models.iter().find(|m| !known.contains(m)) {
        Some(m) => Err(format!(
            "--models: '{m}' is not a model of any part of '{}'",
            composite.name
        )),
        None => Ok(()),
    }
}

/// Runs one part (a built-in name or a path) into `dir`: true when the run was
/// interrupted, and its results as read once at its end.
fn run_part(
    part: &str,
    dir: &Path,
    args: &RunArgs,
) -> anyhow::Result<(bool, anyhow::Result<Results>)> {
    let (origin, name, text) = scenario::locate(part)?;
    let mut scenario = scenario::parse(&origin, &name, &text)?;
    // The labels of --models this part has; a part with none of them does not run.
    let mut args = args.clone();
    if !args.models.is_empty() {
        let labels = args.models.join(",");
        args.models
            .retain(|m| scenario.models.iter().any(|e| &e.label == m));
        anyhow::ensure!(
            !args.models.is_empty(),
            "--models {labels} leaves none of its models"
        );
    }
    if let Err(message) = super::apply_overrides(&mut scenario, &args) {
        anyhow::bail!(message);
    }
    let (outcome, results) = run_into(&scenario, dir, &args)?;
    // A fault of the machine stopped the part: the next would meet it too.
    Ok((outcome.interrupted || outcome.fault.is_some(), results))
}
