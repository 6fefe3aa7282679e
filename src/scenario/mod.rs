//! The scenario format: a TOML file naming the models, their server options,
//! the load shape, the sweep, repetitions and the failure rule of a step.
//!
//! Parsing runs in phases, one file each: [`file`] reads the TOML as written
//! (every table denies unknown keys, and value errors carry the line they come
//! from), [`validate`] resolves the models and checks the load shape and the
//! hosts, [`expand`] turns the sweep into steps, and [`runnable`] checks each
//! step's load as the load generator will. docs/scenarios.md documents every key.

mod builtin;
mod configs;
mod expand;
mod file;
mod lab_sysctls;
mod parts;
mod profile;
mod runnable;
mod ssh_hosts;
mod stairs;
mod validate;

pub use parts::Part;
pub use profile::{machine_clock_mhz, quota_for, Profile};

use std::net::SocketAddr;
use std::ops::Range;
use std::time::Duration;

use clap::Parser as _;

use crate::load::LoadArgs;
use crate::server::{Model, ServerConfig};

pub use configs::{load_args, load_config, processes_for, ramp_time, server_args, server_config};
pub use file::{
    thresholds_of, Axis, AxisRange, BitRate, Bytes, Cores, Count, Dur, FailureRule, Fraction,
    HostsFile, LoadOptions, NetworkFile, Profiled, Rate, ScenarioFile, ServerOptions, SweepFile,
};
pub use lab_sysctls::LabSysctls;
pub use ssh_hosts::{SshHosts, SshUrl};
pub use stairs::{default_keep_available, Staircase};

pub use builtin::BUILTIN;

/// What a model entry runs: one of echolab's own servers, or any echo server as a command.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelKind {
    Builtin(Model),
    /// The program and its arguments, `{port}` and `{addr}` still to be substituted.
    Command(Vec<String>),
}

/// A model entry of the scenario: its label (the results folder and csv `model`), the
/// server model it runs and its effective options.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub label: String,
    pub kind: ModelKind,
    pub options: ServerOptions,
}

impl ModelEntry {
    /// The built-in model this entry runs; None for a command.
    pub fn model(&self) -> Option<Model> {
        match &self.kind {
            ModelKind::Builtin(m) => Some(*m),
            ModelKind::Command(_) => None,
        }
    }

    /// `serve --model M` with the entry's free-form `args`, parsed as the server parses
    /// them: the configuration every step of this entry starts from (built-in models only).
    pub fn base_config(&self) -> Result<ServerConfig, String> {
        let model = self
            .model()
            .ok_or_else(|| format!("'{}' is a command, not an echolab model", self.label))?;
        let argv = ["serve", "--model", model.name()]
            .into_iter()
            .map(String::from)
            .chain(self.options.args.iter().flatten().cloned());
        ServerConfig::try_parse_from(argv).map_err(|e| clap_message(&e))
    }
}

impl LoadOptions {
    /// `load --target ADDR` with the scenario's free-form `args`, parsed as the load
    /// generator parses them: the arguments every step starts from.
    pub fn base_args(&self, target: SocketAddr) -> Result<LoadArgs, String> {
        let argv = ["load".to_string(), "--target".into(), target.to_string()]
            .into_iter()
            .chain(self.args.iter().flatten().cloned());
        LoadArgs::try_parse_from(argv).map_err(|e| clap_message(&e))
    }
}

/// The first line of a clap error, without its `error: ` prefix.
fn clap_message(error: &clap::Error) -> String {
    let text = error.to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// The values of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    pub connections: u64,
    pub size: u64,
    pub delay: Option<Duration>,
    pub rate: Option<f64>,
    pub workers: Option<u64>,
    /// Requests per connection, when the sweep varies them (else `[load] requests`).
    pub requests: Option<u64>,
    /// Client hosts this step's load is split over, when the sweep varies them
    /// (else all of `[hosts] clients`).
    pub hosts: Option<u32>,
}

impl Step {
    /// Whether this step loads a server at least as hard as `other` on every axis
    /// (more or equal connections, size, rate and requests, less or equal delay, same
    /// workers and client hosts).
    pub fn at_least_as_heavy_as(&self, other: &Step) -> bool {
        let delay = |s: &Step| s.delay.unwrap_or(Duration::ZERO);
        let rate_ok = match (self.rate, other.rate) {
            (Some(a), Some(b)) => a >= b,
            (None, None) => true,
            _ => false,
        };
        self.connections >= other.connections
            && self.size >= other.size
            && delay(self) <= delay(other)
            && rate_ok
            && self.workers == other.workers
            && self.requests.unwrap_or(0) >= other.requests.unwrap_or(0)
            && self.hosts == other.hosts
    }
}

/// A validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub expected_duration: Option<String>,
    pub requirements: Option<String>,
    pub toml: String,
    pub models: Vec<ModelEntry>,
    pub repetitions: u32,
    /// `[claims] max_repetitions`: the repetitions a claim left undecided may go on to,
    /// one round at a time (`repetitions` when none are added).
    pub max_repetitions: u32,
    pub step_timeout: Option<Duration>,
    pub pause: Duration,
    pub load: LoadOptions,
    pub steps: Vec<Step>,
    pub sweep_axes: Vec<&'static str>,
    pub failure: FailureRule,
    /// `[hosts] clients`: client hosts (network namespaces) to split each step's load over.
    pub client_hosts: Option<u32>,
    /// `[hosts]` with ssh URLs: real machines for the server and the load.
    pub ssh: Option<SshHosts>,
    /// `[hosts]` somaxconn, tcp_max_syn_backlog, ip_local_port_range, tcp_max_tw_buckets:
    /// set in the lab's namespaces.
    pub lab_sysctls: LabSysctls,
    /// `[network]`: shaping of the client hosts' links.
    pub network: Option<NetworkFile>,
    /// `[network] own_namespace`: each step in a network namespace of its own.
    pub own_namespace: bool,
    /// `[staircase]`: one live server, connections added in batches; `steps` are its
    /// stairs (each combination of the other axes is one staircase).
    pub staircase: Option<Staircase>,
    /// `parts`: the scenarios a composite scenario runs, each into a folder of its own
    /// (empty for an ordinary scenario, which runs its own models and steps).
    pub parts: Vec<Part>,
    /// `profiled` (or `run --profile`): the steps with a profiled repetition.
    pub profiled: Option<Profiled>,
    /// `[thresholds]`: the condition each step's figure must meet, in figure order
    /// (none for a composite: each part has its own).
    pub thresholds: Vec<crate::results::threshold::Threshold>,
}

pub use validate::{not_a_label, not_one_folder, MAX_CLIENTS, MAX_REPETITIONS, MAX_ROWS};

/// Builds an error pointing at a place in the scenario being parsed.
type ErrAt<'a> = &'a dyn Fn(Option<Range<usize>>, String) -> anyhow::Error;

/// 1-based line and column of a byte offset.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}

/// An error message pointing at a place in the scenario file.
fn located(origin: &str, source: &str, span: Option<Range<usize>>, message: &str) -> anyhow::Error {
    match span {
        Some(span) => {
            let (line, col) = line_col(source, span.start);
            let text = source.lines().nth(line - 1).unwrap_or("");
            anyhow::anyhow!("{origin}: line {line}, column {col}: {message}\n  | {text}")
        }
        None => anyhow::anyhow!("{origin}: {message}"),
    }
}

/// Finds a scenario: a built-in name, or a path to a TOML file. Returns (origin, text).
pub fn locate(arg: &str) -> anyhow::Result<(String, String, String)> {
    if let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == arg) {
        return Ok((
            format!("built-in scenario '{name}'"),
            name.to_string(),
            text.to_string(),
        ));
    }
    let path = std::path::Path::new(arg);
    if path.exists() || arg.ends_with(".toml") || arg.contains('/') {
        let text = read_scenario_file(path)
            .map_err(|e| anyhow::anyhow!("cannot read scenario file {arg}: {e}"))?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        return Ok((arg.to_string(), stem, text));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    anyhow::bail!(
        "'{arg}' is neither a built-in scenario ({}) nor a scenario file",
        names.join(", ")
    )
}

/// The most bytes a scenario file may hold: the longest built-in is a few KiB.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// A scenario file's text: a regular file of at most [`MAX_SCENARIO_BYTES`]. Opened
/// without blocking and checked before it is read, so a FIFO never waits for a writer
/// and `/dev/zero` is never read.
fn read_scenario_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::{Error, Read as _};
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.take(MAX_SCENARIO_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(Error::other(format!(
            "larger than {} MiB; a scenario is a short TOML file",
            MAX_SCENARIO_BYTES >> 20
        )));
    }
    Ok(text)
}

/// Parses and validates a scenario. `origin` names the file in error messages,
/// `default_name` is used when the file has no `name`.
pub fn parse(origin: &str, default_name: &str, source: &str) -> anyhow::Result<Scenario> {
    let file: ScenarioFile =
        toml::from_str(source).map_err(|e| located(origin, source, e.span(), e.message()))?;
    let err = |span: Option<Range<usize>>, message: String| located(origin, source, span, &message);
    validate::name(&file, source, &err)?;
    let thresholds = crate::results::threshold::requirements(&file.thresholds)
        .map_err(|e| err(None, format!("{e:#}")))?;
    if let Some(parts) = &file.parts {
        return parts::composite(origin, &file, parts, default_name, source, &err);
    }
    let models = validate::models(&file, source, &err)?;
    let staircase = stairs::staircase(&file, &err)?;
    let load = validate::load(&file, staircase.is_some(), source, &err)?;
    validate::warmup(&file, source, &err)?;
    let (steps, axes) = expand::steps(&file, &load, staircase.as_ref(), &err)?;
    validate::rows(&file, models.len(), steps.len(), source, &err)?;
    let max_repetitions = validate::max_repetitions(&file, staircase.is_some(), &err)?;
    let client_hosts = validate::client_hosts(&file, &load, &steps, &err)?;
    let ssh = validate::ssh_hosts(&file, &err)?;
    let lab_sysctls = validate::lab_sysctls(&file, &err)?;
    let network = validate::network(&file, &err)?;
    validate::free_form_args(&models, &load, source, &err)?;
    runnable::steps_can_run(&file, &load, &steps, source, &err)?;
    Ok(Scenario {
        models,
        load,
        steps,
        sweep_axes: axes,
        client_hosts,
        ssh,
        lab_sysctls,
        network,
        staircase,
        thresholds,
        max_repetitions,
        ..Scenario::of_file(&file, default_name, source)
    })
}

impl Scenario {
    /// What the file says of itself and of every step; no models, steps or parts yet.
    fn of_file(file: &ScenarioFile, default_name: &str, source: &str) -> Scenario {
        Scenario {
            name: file
                .name
                .clone()
                .unwrap_or_else(|| default_name.to_string()),
            description: file.description.trim().to_string(),
            expected_duration: file.expected_duration.clone(),
            requirements: file.requirements.clone(),
            toml: source.to_string(),
            models: Vec::new(),
            repetitions: file
                .repetitions
                .map_or(1, |r| r.0.min(u32::MAX as u64) as u32),
            // None added until validated ([`parse`]).
            max_repetitions: file
                .repetitions
                .map_or(1, |r| r.0.min(u32::MAX as u64) as u32),
            step_timeout: file.step_timeout.map(|d| d.0),
            pause: file.pause.map_or(Duration::ZERO, |d| d.0),
            load: file.load.clone(),
            steps: Vec::new(),
            sweep_axes: Vec::new(),
            failure: file.failure.clone(),
            client_hosts: None,
            ssh: None,
            network: None,
            own_namespace: file
                .network
                .as_ref()
                .and_then(|n| n.get_ref().own_namespace)
                .unwrap_or(false),
            lab_sysctls: Default::default(),
            staircase: None,
            parts: Vec::new(),
            profiled: file.profiled,
            thresholds: Vec::new(),
        }
    }

    /// Whether `step` gets a profiled repetition.
    pub fn profiles(&self, step: &Step) -> bool {
        match self.profiled {
            None => false,
            Some(Profiled::All) => true,
            Some(Profiled::Heaviest) => self.steps.last().is_some_and(|s| s.name == step.name),
        }
    }
}

#[cfg(test)]
mod tests;
