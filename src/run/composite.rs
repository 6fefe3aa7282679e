//! A composite scenario (`parts = [...]`, as `classic` is): each part, a built-in
//! scenario, runs into the folder of its name inside one results directory; the
//! top-level manifest lists the parts (and why any could not run) and the top-level
//! report judges them together.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{default_out, run_into, write_report, RunArgs};
use crate::experiment::orchestration::results_csv::ResultsCsv;
use crate::experiment::placement::process;
use crate::scenario::{self, Scenario};

pub fn run(args: &RunArgs, composite: &Scenario) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.server_cmd.is_none(),
        "--server-cmd cannot be added to '{}': it is made of parts, each with its own models",
        composite.name
    );
    if let Some(r) = args.repetitions {
        anyhow::ensure!(r >= 1, "--repetitions must be at least 1");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&composite.name));
    let _claim = match super::claim::claim(&out, args.force) {
        Ok(claim) => claim,
        Err(message) => return Ok(crate::load::usage_error("run", &message)),
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
    ResultsCsv::create(&out.join("results.csv"))?;
    let mut interrupted = false;
    for part in &composite.parts {
        if process::stop_requested() {
            interrupted = true;
            break;
        }
        match run_part(&part.locator, &out.join(&part.name), args) {
            Ok(stopped) => interrupted = stopped,
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
        write_report(&out);
    }
    crate::outln!("results: {}", out.display());
    if interrupted {
        crate::errln!(
            "interrupted: the finished parts and steps are kept in {}",
            out.display()
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one part (a built-in name or a path) into `dir`; true when the run was interrupted.
fn run_part(part: &str, dir: &Path, args: &RunArgs) -> anyhow::Result<bool> {
    let (origin, name, text) = scenario::locate(part)?;
    let mut scenario = scenario::parse(&origin, &name, &text)?;
    if !args.models.is_empty() {
        scenario.models.retain(|e| args.models.contains(&e.label));
        anyhow::ensure!(
            !scenario.models.is_empty(),
            "--models {} leaves none of its models",
            args.models.join(",")
        );
    }
    if let Some(r) = args.repetitions {
        scenario.repetitions = r;
    }
    let outcome = run_into(&scenario, dir, args)?;
    // A fault of the machine stopped the part: the next would meet it too.
    Ok(outcome.interrupted || outcome.fault.is_some())
}
