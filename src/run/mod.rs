//! `echolab run`: the verb that runs an experiment ([`experiment`]) and then writes
//! its report ([`report`]); the two compose here, neither calls the other.
//!
//! - [`composite`]: a scenario made of parts, each run into a folder of its own.
//! - [`added_rounds`]: a claim left undecided by its repetitions, given more.

mod added_rounds;
mod composite;
mod lock;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::experiment::{self, orchestration::runner::RunOutcome};
use crate::results::reader::Results;
use crate::scenario;

/// How `echolab run` is called, for its usage errors.
const USAGE: &str = "run [OPTIONS] [SCENARIO]";

/// `echolab run`: an experiment.
#[derive(clap::Args, Debug, Clone)]
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
    /// Relative paths are resolved against the current directory. Repeat it to run
    /// several (two builds of your server, interleaved in one run, compare the fairest)
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Vec<String>,

    /// The label of the --server-cmd server (default: its script's or program's name);
    /// with several, one per --server-cmd, in the same order
    #[arg(long, value_name = "LABEL", requires = "server_cmd")]
    pub server_name: Vec<String>,

    /// Compare the run with this earlier results directory (as `echolab compare DIR
    /// NEW`): the table after the verdict, and a section of the report
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,

    /// Exit 3 when a threshold of the scenario's `[thresholds]` is not met (without it
    /// they are judged and printed, and the exit status does not change)
    #[arg(long)]
    pub enforce_thresholds: bool,

    /// With ssh hosts ([hosts] server = "ssh://..."): copy this echolab binary into
    /// the run's temporary directory on every host whose echolab differs from it
    #[arg(long)]
    pub install: bool,

    /// After the heaviest step's measured repetitions, one more per model under perf
    /// (server and load generator, kernel stacks included): flame graphs and where the
    /// CPU per request goes in the report; never judged (scenario key `profiled`). On a
    /// staircase, every stair recorded from its batch's start to its window's end
    #[arg(long)]
    pub profile: bool,
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
    if let Some(why) = scenario::not_a_label(&label) {
        anyhow::bail!(
            "--server-cmd's label {label:?} {why}: it becomes one folder name inside the \
             results directory; give a plain one with --server-name"
        );
    }
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

/// The command line's changes to one scenario, the same for a plain run and for each
/// part of a composite one; Err is a usage error.
fn apply_overrides(scenario: &mut scenario::Scenario, args: &RunArgs) -> Result<(), String> {
    if !args.server_name.is_empty() && args.server_name.len() != args.server_cmd.len() {
        return Err(format!(
            "{} --server-name for {} --server-cmd: give one label per server, in the same \
             order, or none",
            args.server_name.len(),
            args.server_cmd.len()
        ));
    }
    for (i, line) in args.server_cmd.iter().enumerate() {
        add_server_cmd(scenario, line, args.server_name.get(i).map(String::as_str))
            .map_err(|e| format!("{e:#}"))?;
    }
    if !args.models.is_empty() {
        if let Some(m) = args
            .models
            .iter()
            .find(|m| !scenario.models.iter().any(|e| &e.label == *m))
        {
            let known: Vec<&str> = scenario.models.iter().map(|e| e.label.as_str()).collect();
            return Err(format!(
                "--models: '{m}' is not a model of scenario '{}' (its models: {})",
                scenario.name,
                known.join(", ")
            ));
        }
        scenario.models.retain(|e| args.models.contains(&e.label));
    }
    if let Some(r) = repetitions(args)? {
        scenario.repetitions = r;
    }
    if let Some(ssh) = &mut scenario.ssh {
        ssh.install = args.install;
    }
    Ok(())
}

/// `--repetitions`, checked against its bounds; Err is a usage error.
fn repetitions(args: &RunArgs) -> Result<Option<u32>, String> {
    let most = scenario::MAX_REPETITIONS;
    match args.repetitions {
        Some(r) if r < 1 || u64::from(r) > most => {
            Err(format!("--repetitions must be 1 to {most}, not {r}"))
        }
        r => Ok(r),
    }
}

/// Judges and prints the `[thresholds]` of a run's `results` as read (`part`: a
/// composite's part); how many are not met. One that cannot be judged counts as not met
/// when they are enforced, so a gate never passes on a run it could not read.
fn print_thresholds(
    results: &anyhow::Result<Results>,
    part: Option<&str>,
    enforced: bool,
) -> usize {
    let of = part.map(|p| format!(" of {p}")).unwrap_or_default();
    let judged = match results {
        Ok(results) => crate::compare::scenario_thresholds(results),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    };
    match judged {
        Ok(Some((all, unmet))) => {
            crate::outln!(
                "\nthresholds{of} ({}): {}",
                all.join(", "),
                if unmet.is_empty() {
                    "all met"
                } else {
                    "not all met"
                }
            );
            for line in &unmet {
                crate::outln!("  {line}");
            }
            unmet.len()
        }
        Ok(None) => {
            if enforced {
                crate::errln!(
                    "warning: --enforce-thresholds: the scenario{of} has no [thresholds], so \
                     there is nothing to enforce"
                );
            }
            0
        }
        Err(e) => {
            crate::errln!("warning: the thresholds{of} could not be judged: {e:#}");
            usize::from(enforced)
        }
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
    // A scenario that cannot be found or is not valid is a usage error.
    let found = scenario::locate(&args.scenario)
        .and_then(|(origin, default_name, text)| scenario::parse(&origin, &default_name, &text));
    let mut scenario = match found {
        Ok(scenario) => scenario,
        Err(e) => return Ok(crate::console::usage_error(USAGE, &format!("{e:#}"))),
    };
    if !scenario.parts.is_empty() {
        return composite::run(&args, &scenario);
    }
    if let Err(message) = apply_overrides(&mut scenario, &args) {
        return Ok(crate::console::usage_error(USAGE, &message));
    }
    if args.profile && scenario.profiled.is_none() {
        // A staircase profiles each stair in its own window: growth is read across the
        // stairs, and its top may be where it fails.
        scenario.profiled = Some(match scenario.staircase {
            Some(_) => scenario::Profiled::All,
            None => scenario::Profiled::Heaviest,
        });
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    // Before the directory is made: a run this machine cannot do leaves nothing.
    experiment::check_can_run(&scenario)?;
    if let Some(baseline) = &args.baseline {
        // Checked before the run: a baseline that cannot be read would be found out
        // only after it.
        if let Err(e) = crate::results::reader::load(baseline) {
            return Ok(crate::console::usage_error(
                USAGE,
                &format!("--baseline: {e:#}"),
            ));
        }
    }
    if let Some(baseline) = args.baseline.as_deref().filter(|b| is_within(b, &out)) {
        return Ok(crate::console::usage_error(
            USAGE,
            &format!(
                "--baseline {} is inside --out {} (or is it): the run would replace it and \
                 then be compared with itself; give the baseline a directory of its own",
                baseline.display(),
                out.display()
            ),
        ));
    }
    let _lock = match lock::lock(&out, args.force) {
        Ok(lock) => lock,
        Err(message) => return Ok(crate::console::usage_error(USAGE, &message)),
    };
    let (outcome, results) = run_into(&scenario, &out, &args)?;
    if let Ok(results) = &results {
        crate::outln!();
        crate::out!("{}", crate::report::models_table(results));
    }
    print_verdict(&results);
    let unmet = print_thresholds(&results, None, args.enforce_thresholds);
    if let (Some(baseline), Ok(results)) = (&args.baseline, &results) {
        match crate::compare::against_baseline_text(baseline, results) {
            Ok(table) => crate::out!("\nagainst the baseline {}:\n{table}", baseline.display()),
            Err(e) => {
                crate::errln!("warning: the run could not be compared with the baseline: {e:#}")
            }
        }
    }
    crate::outln!("results: {}", out.display());
    if let Some(fault) = &outcome.fault {
        crate::errln!("echolab: run stopped: {fault}");
        return Ok(ExitCode::FAILURE);
    }
    if outcome.interrupted {
        crate::errln!(
            "interrupted: the finished steps are kept in {}",
            out.display()
        );
        return Ok(ExitCode::from(130));
    }
    if unmet > 0 && args.enforce_thresholds {
        return Ok(ExitCode::from(crate::compare::EXIT_THRESHOLDS));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `inner` is `outer` or inside it, however either is spelled (relative, `..`,
/// symbolic links), `outer` perhaps not made yet.
fn is_within(inner: &Path, outer: &Path) -> bool {
    match (resolved(inner), resolved(outer)) {
        (Some(inner), Some(outer)) => inner.starts_with(outer),
        _ => false,
    }
}

/// `path` made absolute, each link and `..` resolved as far as it exists, the rest of it
/// (not made yet) taken as written.
fn resolved(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let absolute = std::env::current_dir().ok()?.join(path);
    let mut out = PathBuf::from("/");
    for component in absolute.components() {
        match component {
            Component::Normal(name) => {
                out.push(name);
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
            }
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// `echolab report DIR`, composed with the comparison's sections ([`write_report`]):
/// refused (a usage error) while a live run still holds DIR, whose report that run
/// writes itself when it ends.
pub fn report_main(args: crate::report::ReportArgs) -> anyhow::Result<ExitCode> {
    if let Some(pid) = lock::live_run(&args.results_dir) {
        return Ok(crate::console::usage_error(
            "report <RESULTS_DIR>",
            &format!(
                "{} belongs to a live run (pid {pid}) that is still writing it: report it \
                 once that run has ended",
                args.results_dir.display()
            ),
        ));
    }
    crate::report::main(args)
}

/// Prints the verdict with its significance: a winner only where the test names one.
fn print_verdict(results: &anyhow::Result<Results>) {
    if let Ok(results) = results {
        let lines = crate::report::verdict_lines(results);
        if !lines.is_empty() {
            crate::outln!(
                "\nverdict (Mann-Whitney U: a winner only when p < {a} against every other model \
                 and x{e} or more apart; tied leaders when each of a group beats every other \
                 model so):",
                a = crate::stats::ALPHA,
                e = crate::stats::MIN_EFFECT
            );
            for line in lines {
                crate::outln!("  {line}");
            }
        }
    }
}

/// Runs one (ordinary) scenario into `out` and reads its results once, for its report
/// (written unless told not to), its table, verdict, thresholds and baseline.
fn run_into(
    scenario: &scenario::Scenario,
    out: &Path,
    args: &RunArgs,
) -> anyhow::Result<(RunOutcome, anyhow::Result<Results>)> {
    let mut partial = PartialReports::new(out, !args.no_report);
    let mut written = |done, total| partial.written(done, total);
    let outcome = experiment::run_into(scenario, out, args.quiet, &mut written)?;
    let outcome = added_rounds::add_rounds(scenario, out, args.quiet, outcome, &mut written)?;
    if let Some(baseline) = &args.baseline {
        let mut manifest = crate::results::Manifest::read(out)?;
        // Absolute, so that a report written later from elsewhere still finds it.
        let absolute = std::fs::canonicalize(baseline).unwrap_or_else(|_| baseline.clone());
        manifest.baseline = Some(absolute.display().to_string());
        manifest.write(out)?;
    }
    let mut results = crate::results::reader::load(out);
    if !args.no_report {
        write_report_or_warn(out, &mut results);
    }
    Ok((outcome, results))
}

/// The report while a run goes on: rewritten after a row is written, as often as keeps
/// its cost to a tenth of the run (a report of a large run takes a second or more;
/// steps of quick last about one), so a long run's report follows it step by step.
struct PartialReports<'a> {
    out: &'a Path,
    enabled: bool,
    /// When the last one was written and how long it took.
    last: Option<(std::time::Instant, std::time::Duration)>,
    /// A failure is said once; the run goes on whatever the report does.
    warned: bool,
}

impl<'a> PartialReports<'a> {
    /// The run's time per unit of report time.
    const RATIO: u32 = 10;

    fn new(out: &'a Path, enabled: bool) -> Self {
        PartialReports {
            out,
            enabled,
            last: None,
            warned: false,
        }
    }

    fn written(&mut self, done: u64, total: u64) {
        let due = self
            .last
            .is_none_or(|(at, took)| at.elapsed() >= took * Self::RATIO);
        // The last row's report is the final one, written after the run.
        if !self.enabled || done >= total || !due {
            return;
        }
        let start = std::time::Instant::now();
        let partial = crate::report::Partial { done, total };
        let written = crate::report::write_partial_report(self.out, partial);
        self.last = Some((std::time::Instant::now(), start.elapsed()));
        if let Err(e) = written {
            if !std::mem::replace(&mut self.warned, true) {
                crate::errln!("warning: the partial report could not be written ({e:#})");
            }
        }
    }
}

/// Writes the report of the run in `dir` with the comparison's sections (its thresholds,
/// its baseline): the report and the comparison compose here, as experiment and report do.
pub fn write_report(dir: &Path) -> anyhow::Result<PathBuf> {
    crate::report::write_report(dir)
}

/// [`write_report`] of the `results` read from `out`, a failure said as a warning: the
/// results stay whatever the report does.
fn write_report_or_warn(out: &Path, results: &mut anyhow::Result<Results>) {
    let written = match results {
        Ok(results) => crate::report::write_report_of(results),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    };
    match written {
        Ok(path) => crate::outln!("report: {}", path.display()),
        Err(e) => crate::errln!(
            "warning: the report could not be written ({e:#}); the results are in {}",
            out.display()
        ),
    }
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

    #[test]
    fn several_servers_are_added_in_order_each_with_its_label() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            run: RunArgs,
        }
        let args = |extra: &[&str]| {
            let argv = ["echolab", "quick"].iter().chain(extra);
            <Cli as clap::Parser>::try_parse_from(argv).unwrap().run
        };
        let quick = || scenario::parse("quick", "quick", scenario::BUILTIN[0].1).unwrap();
        let two = [
            "--server-cmd",
            "./old-server {port}",
            "--server-name",
            "old",
            "--server-cmd",
            "./new-server {port}",
            "--server-name",
            "new",
            "--models",
            "old,new",
        ];
        let mut s = quick();
        apply_overrides(&mut s, &args(&two)).unwrap();
        let labels: Vec<&str> = s.models.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["old", "new"]);
        assert_eq!(
            s.models[1].options.command.as_deref(),
            Some(&["./new-server".to_string(), "{port}".to_string()][..])
        );
        // Unnamed, each takes its program's name.
        let mut s = quick();
        let unnamed = ["--server-cmd", "./a {port}", "--server-cmd", "./b {port}"];
        apply_overrides(&mut s, &args(&unnamed)).unwrap();
        assert_eq!(s.models.len(), 8);
        // One name for two servers is refused, naming both counts.
        let one_name = &two[..6];
        let err = apply_overrides(&mut quick(), &args(one_name)).unwrap_err();
        assert!(
            err.starts_with("1 --server-name for 2 --server-cmd"),
            "{err}"
        );
    }
}
