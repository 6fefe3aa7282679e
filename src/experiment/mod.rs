//! Experiments: a scenario (models x load steps x repetitions) run as child
//! processes, measured, judged and written to a results directory.
//!
//! - [`scenario`]: the TOML format, its validation and its expansion into steps (docs/scenarios.md).
//! - [`runner`]: the sweep: every model over every step and repetition.
//! - [`step`]: one step as processes: start the server and the load, collect what they left.
//! - [`judge`]: a step's summaries and samples to a failure reason and a row (pure).
//! - [`results`]: results.csv (its rows, columns and statuses) and the comparison table.
//! - [`probe`]: the server's CPU, memory, threads and fds from /proc.
//! - [`hosts`]: network namespaces standing in for a server host and client hosts.
//! - [`process`]: children that never outlive the runner; SIGINT/SIGTERM handling.
//! - [`manifest`]: manifest.json (machine, limits, scenario, run status).

pub mod hosts;
pub mod judge;
pub mod manifest;
pub mod netstat;
pub mod probe;
pub mod process;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod step;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

/// `echolab run`: an experiment.
#[derive(clap::Args, Debug)]
#[command(about = "Run an experiment: every model of a scenario over its load steps")]
pub struct RunArgs {
    /// A built-in scenario name (see --list) or a path to a scenario TOML file
    #[arg(default_value = "quick")]
    pub scenario: String,

    /// Results directory (default: results/NAME-YYYYmmdd-HHMMSS)
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// List the built-in scenarios and exit
    #[arg(long)]
    pub list: bool,

    /// Run only these models (comma-separated labels from the scenario)
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,

    /// Override the scenario's repetitions
    #[arg(long)]
    pub repetitions: Option<u32>,

    /// Do not write report.html/report.md at the end
    #[arg(long)]
    pub no_report: bool,

    /// No progress output (the comparison table is still printed)
    #[arg(long)]
    pub quiet: bool,
}

/// The local time as YYYYmmdd-HHMMSS, for results directory names.
fn local_timestamp() -> String {
    // SAFETY: time(NULL) has no preconditions; localtime_r writes only into `tm`,
    // which is a plain-data struct for which all-zero is valid.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        )
    }
}

/// The built-in scenarios with their descriptions, for `--list`.
pub fn list_builtin() -> anyhow::Result<String> {
    let mut out = String::new();
    for (name, text) in scenario::BUILTIN {
        let s = scenario::parse(name, name, text)?;
        out += &format!(
            "{name:<18} {} steps x {} models, {}\n{:18} {}\n",
            s.steps.len(),
            s.models.len(),
            s.expected_duration.as_deref().unwrap_or("duration unknown"),
            "",
            first_sentence(&s.description)
        );
    }
    Ok(out)
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

/// A fresh results directory: `results/NAME-STAMP`, with a suffix if that already exists.
fn default_out(name: &str) -> PathBuf {
    let base = PathBuf::from("results").join(format!("{name}-{}", local_timestamp()));
    let mut dir = base.clone();
    let mut n = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    dir
}

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        print!("{}", list_builtin()?);
        return Ok(ExitCode::SUCCESS);
    }
    let (origin, default_name, text) = scenario::locate(&args.scenario)?;
    let mut scenario = scenario::parse(&origin, &default_name, &text)?;
    if !args.models.is_empty() {
        for m in &args.models {
            if !scenario.models.iter().any(|e| &e.label == m) {
                anyhow::bail!(
                    "--models: '{m}' is not a model of scenario '{}'",
                    scenario.name
                );
            }
        }
        scenario.models.retain(|e| args.models.contains(&e.label));
    }
    if let Some(r) = args.repetitions {
        anyhow::ensure!(r >= 1, "--repetitions must be at least 1");
        scenario.repetitions = r;
    }

    if scenario.client_hosts.is_some() {
        // Before anything is written: a machine that cannot make namespaces cannot run it.
        hosts::check_available()?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create results directory {}", out.display()))?;
    let exe = std::env::current_exe().context("cannot find the echolab binary to start servers")?;

    println!(
        "scenario {}: {} models x {} steps x {} repetitions -> {}",
        scenario.name,
        scenario.models.len(),
        scenario.steps.len(),
        scenario.repetitions,
        out.display()
    );
    if !scenario.description.is_empty() {
        println!("  {}", scenario.description);
    }
    if let Some(d) = &scenario.expected_duration {
        println!("  expected duration: {d}");
    }
    if let Some(r) = &scenario.requirements {
        println!("  needs: {r}");
    }

    process::install_stop_handlers().context("cannot install SIGINT/SIGTERM handlers")?;
    let mut manifest = manifest::Manifest::new(&scenario);
    manifest.write(&out)?;
    let config = runner::RunConfig {
        exe,
        out: out.clone(),
        progress_bar: runner::stderr_is_terminal(),
        quiet: args.quiet,
    };
    let outcome = runner::run(&scenario, &config);
    manifest.finish(outcome.as_ref().map_or(true, |o| o.interrupted));
    manifest.write(&out)?;
    let outcome = outcome?;

    if !args.no_report {
        match crate::report::write_report(&out) {
            Ok(path) => println!("report: {}", path.display()),
            Err(e) => eprintln!(
                "warning: the report could not be written ({e:#}); the results are in {}",
                out.display()
            ),
        }
    }
    let labels: Vec<String> = scenario.models.iter().map(|m| m.label.clone()).collect();
    println!();
    print!("{}", results::comparison_table(&outcome.rows, &labels));
    println!("results: {}", out.display());
    if outcome.interrupted {
        eprintln!(
            "interrupted: the finished steps are kept in {}",
            out.display()
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
