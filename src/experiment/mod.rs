//! Experiments: a scenario (models x load steps x repetitions) run as child
//! processes, measured, judged and written to a results directory.
//!
//! - [`scenario`]: the TOML format, its validation and its expansion into steps (docs/scenarios.md).
//! - [`runner`]: the sweep: every model over every step and repetition.
//! - [`staircase`]: the staircase load shape: one live server, connections added in batches.
//! - [`step`]: one step as processes: start the server and the load, collect what they left.
//! - [`judge`]: a step's summaries and samples to a failure reason and a row (pure).
//! - [`results`]: results.csv (its rows, columns and statuses) and the comparison table.
//! - [`probe`]: the server's CPU, memory, threads and fds from /proc.
//! - [`cost`]: what each connection costs in user space and in the kernel, from snapshots.
//! - [`hosts`]: network namespaces standing in for a server host and client hosts, and
//!   the shaping of their links (`[network]`).
//! - [`conditions`]: a cgroup of the server's own with its CPU, memory and task caps.
//! - [`process`]: children that never outlive the runner; SIGINT/SIGTERM handling.
//! - [`manifest`]: manifest.json (machine, limits, scenario, run status).

pub mod conditions;
pub mod cost;
pub mod hosts;
pub mod judge;
pub mod manifest;
pub mod netstat;
mod parts;
mod placement;
pub mod probe;
pub mod process;
pub mod request_cost;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod session;
pub mod staircase;
pub mod step;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

/// `echolab run`: an experiment.
#[derive(clap::Args, Debug)]
#[command(
    about = "Run an experiment: every model of a scenario over its load steps",
    after_help = "Load shapes: a fresh server per step (a [sweep]), or a staircase on one live \
                  server ([staircase] batch, every, to, hold: connections added in batches and \
                  never closed until a stair fails); --list shows each scenario's shape."
)]
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

    /// Run into an existing results directory (--out): its old run's files are removed
    /// first, so two runs are never mixed. Without it such a directory is refused.
    #[arg(long)]
    pub force: bool,

    /// Do not write report.html/report.md at the end
    #[arg(long)]
    pub no_report: bool,

    /// No progress output (the comparison table is still printed)
    #[arg(long)]
    pub quiet: bool,

    /// Add any echo server, given as a command with `{port}` (and `{addr}`), to the
    /// scenario's models: e.g. --server-cmd "node examples/servers/node-net.js {port}".
    /// Relative paths are resolved against the current directory
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,

    /// The label of the --server-cmd server (default: its script's or program's name)
    #[arg(long, value_name = "LABEL", requires = "server_cmd")]
    pub server_name: Option<String>,
}

/// Splits a command line into words: whitespace separates, single and double quotes group.
fn split_command(line: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    anyhow::ensure!(quote.is_none(), "--server-cmd: unclosed quote in {line:?}");
    words.extend(word);
    Ok(words)
}

/// A label for a command: the name of the script it runs (the first argument that
/// names an existing file or has an extension), else the program's name.
fn command_label(argv: &[String]) -> String {
    let stem = |a: &str| {
        std::path::Path::new(a)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    };
    argv.iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') && !a.contains('{'))
        .find(|a| std::path::Path::new(a).is_file() || a.contains('.') && !a.contains(':'))
        .and_then(|a| stem(a))
        .or_else(|| stem(&argv[0]))
        .unwrap_or_else(|| "server".into())
}

/// The scenario's models with the --server-cmd entry added.
fn add_server_cmd(
    scenario: &mut scenario::Scenario,
    line: &str,
    name: Option<&str>,
) -> anyhow::Result<()> {
    let argv = split_command(line)?;
    anyhow::ensure!(!argv.is_empty(), "--server-cmd is empty: name a program");
    anyhow::ensure!(
        argv.iter().any(|a| a.contains("{port}")),
        "--server-cmd must contain {{port}}, where the runner puts the port it picked: {line:?}"
    );
    let label = name.map_or_else(|| command_label(&argv), str::to_string);
    anyhow::ensure!(
        !scenario.models.iter().any(|m| m.label == label),
        "--server-cmd: scenario '{}' already has a model '{label}'; name it with --server-name",
        scenario.name
    );
    let general = scenario.models.first().map(|m| m.options.clone());
    scenario.models.push(scenario::ModelEntry {
        label,
        kind: scenario::ModelKind::Command(argv.clone()),
        options: scenario::ServerOptions {
            // Same CPUs as the scenario's other servers, for a fair comparison.
            cpus: general.and_then(|o| o.cpus),
            command: Some(argv),
            ..Default::default()
        },
    });
    Ok(())
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
        let size = if s.parts.is_empty() {
            format!("{} steps x {} models", s.steps.len(), s.models.len())
        } else {
            format!("{} parts", s.parts.len())
        };
        out += &format!(
            "{name:<18} {size}, {}\n{:18} {}\n",
            s.expected_duration.as_deref().unwrap_or("duration unknown"),
            "",
            first_sentence(&s.description)
        );
        if let Some(staircase) = &s.staircase {
            out += &format!("{:18} {}\n", "", staircase.describe());
        }
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
        crate::out!("{}", list_builtin()?);
        return Ok(ExitCode::SUCCESS);
    }
    let (origin, default_name, text) = scenario::locate(&args.scenario)?;
    let mut scenario = scenario::parse(&origin, &default_name, &text)?;
    if !scenario.parts.is_empty() {
        return parts::run(&args, &scenario);
    }
    if let Some(line) = &args.server_cmd {
        add_server_cmd(&mut scenario, line, args.server_name.as_deref())?;
    }
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
        let most = scenario::MAX_REPETITIONS;
        if r < 1 || u64::from(r) > most {
            let message = format!("--repetitions must be 1 to {most}, not {r}");
            return Ok(crate::load::usage_error("run", &message));
        }
        scenario.repetitions = r;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    if let Err(message) = clear_old_run(&out, args.force) {
        return Ok(crate::load::usage_error("run", &message));
    }
    let outcome = run_into(&scenario, &out, &args)?;
    let labels: Vec<String> = scenario.models.iter().map(|m| m.label.clone()).collect();
    crate::outln!();
    crate::out!("{}", results::comparison_table(&outcome.rows, &labels));
    // The verdict with its significance: a winner only where the test names one.
    if let Ok(lines) = crate::report::verdict_lines(&out) {
        if !lines.is_empty() {
            crate::outln!(
                "\nverdict (Mann-Whitney U, a winner only when p < {} against every other model):",
                crate::stats::ALPHA
            );
            for line in lines {
                crate::outln!("  {line}");
            }
        }
    }
    crate::outln!("results: {}", out.display());
    if outcome.interrupted {
        crate::errln!(
            "interrupted: the finished steps are kept in {}",
            out.display()
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a results directory an earlier run wrote (it has a manifest.json or a
/// results.csv) unless `force`, which removes it whole first: a report must never
/// describe files of two runs.
fn clear_old_run(out: &std::path::Path, force: bool) -> Result<(), String> {
    let written = ["manifest.json", "results.csv"]
        .iter()
        .any(|f| out.join(f).exists());
    if !written {
        return Ok(());
    }
    if !force {
        return Err(format!(
            "--out {} holds an earlier run's results: choose another directory, or add \
             --force to remove them first",
            out.display()
        ));
    }
    std::fs::remove_dir_all(out).map_err(|e| {
        format!(
            "--force: cannot remove the earlier run in {}: {e}",
            out.display()
        )
    })
}

/// Runs one (ordinary) scenario into `out`: checks it can run here, writes the
/// manifest and results.csv as it goes, then the report unless told not to.
fn run_into(
    scenario: &scenario::Scenario,
    out: &std::path::Path,
    args: &RunArgs,
) -> anyhow::Result<runner::RunOutcome> {
    if scenario
        .models
        .iter()
        .any(|m| conditions::Limits::of(&m.options).is_some())
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        anyhow::ensure!(
            unsafe { libc::geteuid() } == 0,
            "{}: this process is not root",
            conditions::NEEDS
        );
    }
    if scenario.client_hosts.is_some() {
        // Before anything is written: a machine that cannot make namespaces cannot run it.
        hosts::check_available()?;
    }
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
    let mut manifest = manifest::Manifest::new(scenario);
    manifest.write(out)?;
    let config = runner::RunConfig {
        exe,
        out: out.to_path_buf(),
        progress_bar: runner::stderr_is_terminal(),
        quiet: args.quiet,
    };
    let outcome = runner::run(scenario, &config);
    if let Some(applied) = outcome.as_ref().ok().and_then(|o| o.network.clone()) {
        manifest.conditions.network = Some(applied);
    }
    if let Some(sysctls) = outcome.as_ref().ok().and_then(|o| o.lab_sysctls.clone()) {
        manifest.conditions.lab_sysctls = Some(sysctls);
    }
    manifest.finish(outcome.as_ref().map_or(true, |o| o.interrupted));
    manifest.write(out)?;
    let outcome = outcome?;

    if !args.no_report {
        match crate::report::write_report(out) {
            Ok(path) => crate::outln!("report: {}", path.display()),
            Err(e) => crate::errln!(
                "warning: the report could not be written ({e:#}); the results are in {}",
                out.display()
            ),
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_cmd_words_and_labels() {
        assert_eq!(
            split_command("node  'my dir/x.js' \"{port}\" --x").unwrap(),
            ["node", "my dir/x.js", "{port}", "--x"]
        );
        assert!(split_command("node 'x").is_err());
        let words = |l: &str| split_command(l).unwrap();
        assert_eq!(
            command_label(&words("node examples/servers/node-net.js {port}")),
            "node-net"
        );
        assert_eq!(
            command_label(&words("/usr/bin/my-echo --port {port}")),
            "my-echo"
        );
        let mut s = scenario::parse("quick", "quick", scenario::BUILTIN[0].1).unwrap();
        add_server_cmd(&mut s, "python3 srv.py {port}", None).unwrap();
        let last = s.models.last().unwrap();
        assert_eq!(last.label, "srv");
        assert_eq!(last.options.cpus, Some(vec![0]));
        assert!(add_server_cmd(&mut s, "python3 srv.py 7000", Some("x")).is_err());
        assert!(add_server_cmd(&mut s, "python3 srv.py {port}", None).is_err());
        add_server_cmd(&mut s, "python3 srv.py {port}", Some("srv2")).unwrap();
    }
}
