//! The scenario format: a TOML file naming the models, their server options,
//! the load shape, the sweep, repetitions and the failure rule of a step.
//!
//! Every table denies unknown keys, and value errors carry the line they come
//! from (toml spans), so a typo is reported where it is. docs/scenarios.md
//! documents every key.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::server::{AcceptMode, Model, Trigger};

/// The built-in scenarios, embedded so `echolab run NAME` works from any directory.
pub const BUILTIN: [(&str, &str); 7] = [
    ("quick", include_str!("../../scenarios/quick.toml")),
    (
        "max-clients",
        include_str!("../../scenarios/max-clients.toml"),
    ),
    (
        "request-frequency",
        include_str!("../../scenarios/request-frequency.toml"),
    ),
    (
        "message-size",
        include_str!("../../scenarios/message-size.toml"),
    ),
    ("churn", include_str!("../../scenarios/churn.toml")),
    ("ramp", include_str!("../../scenarios/ramp.toml")),
    ("hosts", include_str!("../../scenarios/hosts.toml")),
];

/// A byte count written as an integer (`1024`) or a string with a unit (`"1KiB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// A duration written as a string with a unit (`"250ms"`) or a number of seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dur(pub Duration);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as 128, \"64KiB\" or \"1MiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom(format!("size {v} is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                crate::units::parse_size(v).map(Bytes).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"250ms\", \"10s\" or a number of seconds")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                u64::try_from(v)
                    .map(|s| Dur(Duration::from_secs(s)))
                    .map_err(|_| E::custom(format!("duration {v} is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                Ok(Dur(Duration::from_secs(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                Duration::try_from_secs_f64(v)
                    .map(Dur)
                    .map_err(|_| E::custom(format!("{v} is not a valid duration")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                crate::units::parse_duration(v).map(Dur).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// An integer that must be at least 1 (connections, workers, processes, repetitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(deserializer)?;
        if v < 1 {
            return Err(de::Error::custom(format!("must be at least 1, not {v}")));
        }
        Ok(Count(v as u64))
    }
}

/// A positive rate in requests (or connections) per second.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Rate(pub f64);

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(deserializer)?;
        if !(v.is_finite() && v > 0.0) {
            return Err(de::Error::custom(format!(
                "must be a positive rate, not {v}"
            )));
        }
        Ok(Rate(v))
    }
}

/// A fraction between 0 and 1.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Fraction(pub f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(deserializer)?;
        if !(0.0..=1.0).contains(&v) {
            return Err(de::Error::custom(format!(
                "must be a fraction between 0 and 1, not {v}"
            )));
        }
        Ok(Fraction(v))
    }
}

/// The whole scenario file.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    pub expected_duration: Option<String>,
    pub requirements: Option<String>,
    pub models: Option<Vec<Spanned<String>>>,
    pub repetitions: Option<Count>,
    pub step_timeout: Option<Dur>,
    pub pause: Option<Dur>,
    #[serde(default)]
    pub server: ServerOptions,
    #[serde(default)]
    pub model: BTreeMap<String, Spanned<ServerOptions>>,
    #[serde(default)]
    pub load: LoadOptions,
    #[serde(default)]
    pub sweep: SweepFile,
    #[serde(default)]
    pub failure: FailureRule,
    pub hosts: Option<Spanned<HostsFile>>,
}

/// `[hosts]`: run the server and the load on emulated hosts (network namespaces).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct HostsFile {
    /// Client hosts the load of every step is split over (1..=16).
    pub clients: Spanned<i64>,
}

/// Server options: `[server]` for every model, `[model.NAME]` for one entry of `models`.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerOptions {
    /// Only in `[model.NAME]`: the model a named variant runs (`base = "epoll"`).
    pub base: Option<Model>,
    pub workers: Option<Count>,
    pub trigger: Option<Trigger>,
    pub accept: Option<AcceptMode>,
    pub processes: Option<Count>,
    pub conns_per_process: Option<Count>,
    pub max_conns: Option<Count>,
    pub idle_timeout: Option<Dur>,
    pub max_pending: Option<Bytes>,
    pub thread_stack: Option<Bytes>,
    pub backlog: Option<Count>,
    pub sqpoll: Option<bool>,
    pub cpus: Option<Vec<usize>>,
    pub args: Option<Vec<String>>,
}

impl ServerOptions {
    /// These options with `over`'s set values taking precedence.
    fn overlaid(&self, over: &ServerOptions) -> ServerOptions {
        ServerOptions {
            base: over.base.or(self.base),
            workers: over.workers.or(self.workers),
            trigger: over.trigger.or(self.trigger),
            accept: over.accept.or(self.accept),
            processes: over.processes.or(self.processes),
            conns_per_process: over.conns_per_process.or(self.conns_per_process),
            max_conns: over.max_conns.or(self.max_conns),
            idle_timeout: over.idle_timeout.or(self.idle_timeout),
            max_pending: over.max_pending.or(self.max_pending),
            thread_stack: over.thread_stack.or(self.thread_stack),
            backlog: over.backlog.or(self.backlog),
            sqpoll: over.sqpoll.or(self.sqpoll),
            cpus: over.cpus.clone().or_else(|| self.cpus.clone()),
            args: over.args.clone().or_else(|| self.args.clone()),
        }
    }
}

/// `[load]`: the load shape of every step (sweep axes replace single values).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct LoadOptions {
    pub connections: Option<Count>,
    pub size: Option<Bytes>,
    pub message: Option<String>,
    pub payload_file: Option<String>,
    pub requests: Option<Count>,
    pub duration: Option<Dur>,
    pub delay: Option<Dur>,
    pub rate: Option<Rate>,
    pub connect_rate: Option<Rate>,
    pub connect_timeout: Option<Dur>,
    pub hold: Option<Dur>,
    /// Hold long enough that every connection is open together for this long:
    /// `--hold` = this + connections / connect_rate (max-clients studies).
    pub hold_together: Option<Dur>,
    pub threads: Option<Count>,
    pub processes: Option<Count>,
    pub conns_per_process: Option<Count>,
    pub source_addrs: Option<String>,
    pub seed: Option<u64>,
    pub reconnect: Option<bool>,
    pub cpus: Option<Vec<usize>>,
    pub args: Option<Vec<String>>,
}

/// One sweep axis: a list of values or a range.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum Axis<T> {
    List(Vec<T>),
    Range(AxisRange<T>),
}

/// `{ from = 1000, to = 20000, step = 1000 }` (arithmetic) or `factor = 2` (geometric).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AxisRange<T> {
    pub from: T,
    pub to: T,
    pub step: Option<T>,
    pub factor: Option<f64>,
}

/// `[sweep]`: the axes; every combination is a step.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub connections: Option<Spanned<Axis<Count>>>,
    pub size: Option<Spanned<Axis<Bytes>>>,
    pub delay: Option<Spanned<Axis<Dur>>>,
    pub rate: Option<Spanned<Axis<Rate>>>,
    pub workers: Option<Spanned<Axis<Count>>>,
}

/// `[failure]`: when a step counts as failed (a dead server always fails it).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FailureRule {
    /// Fraction of the connections that must be established.
    #[serde(default = "all_established")]
    pub min_established: Fraction,
    /// Largest error rate (errors / (requests + errors)) that still passes.
    #[serde(default = "default_error_rate")]
    pub max_error_rate: Fraction,
    /// Largest p99 latency that still passes; no bound when absent.
    pub max_p99: Option<Dur>,
    /// Fail when client and server byte counts differ.
    #[serde(default = "yes")]
    pub bytes_match: bool,
    /// Connections the server may refuse (accept and close: FD_SETSIZE, fd limit, --max-conns).
    #[serde(default)]
    pub max_refused: u64,
    /// Fraction of the connections the server must have held open at once; no bound when absent.
    pub min_concurrent: Option<Fraction>,
}

fn all_established() -> Fraction {
    Fraction(1.0)
}
fn default_error_rate() -> Fraction {
    Fraction(0.01)
}
fn yes() -> bool {
    true
}

impl Default for FailureRule {
    fn default() -> Self {
        FailureRule {
            min_established: all_established(),
            max_error_rate: default_error_rate(),
            max_p99: None,
            bytes_match: true,
            max_refused: 0,
            min_concurrent: None,
        }
    }
}

/// A model entry of the scenario: its label (the results folder and csv `model`), the
/// server model it runs and its effective options.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub label: String,
    pub model: Model,
    pub options: ServerOptions,
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
}

impl Step {
    /// Whether this step loads a server at least as hard as `other` on every axis
    /// (more or equal connections, size and rate, less or equal delay, same workers).
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
    pub step_timeout: Option<Duration>,
    pub pause: Duration,
    pub load: LoadOptions,
    pub steps: Vec<Step>,
    pub sweep_axes: Vec<&'static str>,
    pub failure: FailureRule,
    /// `[hosts] clients`: client hosts (network namespaces) to split each step's load over.
    pub client_hosts: Option<u32>,
}

const DEFAULT_CONNECTIONS: u64 = 10;
const DEFAULT_SIZE: u64 = 64;
/// Above this many steps a sweep is surely a typo (a range with a tiny step).
const MAX_STEPS: usize = 10_000;

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
        let text = std::fs::read_to_string(path)
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

/// Parses and validates a scenario. `origin` names the file in error messages,
/// `default_name` is used when the file has no `name`.
pub fn parse(origin: &str, default_name: &str, source: &str) -> anyhow::Result<Scenario> {
    let file: ScenarioFile =
        toml::from_str(source).map_err(|e| located(origin, source, e.span(), e.message()))?;
    let err = |span: Option<Range<usize>>, message: String| located(origin, source, span, &message);

    // Models: plain model names, or variant labels defined by a [model.LABEL] table with `base`.
    let listed: Vec<Spanned<String>> = match &file.models {
        Some(models) => models.clone(),
        None => Model::ALL
            .iter()
            .map(|m| Spanned::new(0..0, m.name().to_string()))
            .collect(),
    };
    if listed.is_empty() {
        return Err(err(
            None,
            "`models` is empty: name at least one model".into(),
        ));
    }
    if let Some(base) = file.server.base {
        return Err(err(
            None,
            format!("[server] cannot have `base` (= {base}); it belongs in a [model.NAME] table"),
        ));
    }
    let all_names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
    let mut models = Vec::new();
    for entry in &listed {
        let label = entry.get_ref().as_str();
        let span = (entry.span() != (0..0)).then(|| entry.span());
        if models.iter().any(|m: &ModelEntry| m.label == label) {
            return Err(err(span, format!("model '{label}' is listed twice")));
        }
        let own = file.model.get(label);
        let plain = Model::ALL.iter().copied().find(|m| m.name() == label);
        let model = match (own.and_then(|o| o.get_ref().base), plain) {
            (Some(base), Some(plain)) if base != plain => {
                return Err(err(
                    own.map(|o| o.span()),
                    format!("[model.{label}] has base = \"{base}\", but '{label}' is itself a model"),
                ))
            }
            (Some(base), _) => base,
            (None, Some(plain)) => plain,
            (None, None) => {
                return Err(err(
                    span,
                    format!(
                        "unknown model '{label}' (models: {}; or define a variant with [model.{label}] base = \"epoll\")",
                        all_names.join(", ")
                    ),
                ))
            }
        };
        let options = match own {
            Some(o) => file.server.overlaid(o.get_ref()),
            None => file.server.clone(),
        };
        if let Some(p) = options.processes {
            if p.0 > 1 && !model.supports_processes() {
                return Err(err(
                    own.map(|o| o.span()),
                    format!(
                        "model '{label}' ({model}) cannot run with processes = {}",
                        p.0
                    ),
                ));
            }
        }
        models.push(ModelEntry {
            label: label.to_string(),
            model,
            options,
        });
    }
    for (label, table) in &file.model {
        if !models.iter().any(|m| &m.label == label) {
            return Err(err(
                Some(table.span()),
                format!("[model.{label}] is not in `models`; add it there or remove the table"),
            ));
        }
    }

    // The load shape.
    let load = file.load.clone();
    let payloads = [
        load.size.is_some() || file.sweep.size.is_some(),
        load.message.is_some(),
        load.payload_file.is_some(),
    ];
    if payloads.iter().filter(|p| **p).count() > 1 {
        return Err(err(
            None,
            "[load] size (or a size sweep), message and payload_file are mutually exclusive".into(),
        ));
    }
    if load.rate.is_some() && load.delay.is_some() {
        return Err(err(
            None,
            "[load] rate (open loop) and delay (closed loop) are mutually exclusive".into(),
        ));
    }
    if load.hold.is_some() && load.hold_together.is_some() {
        return Err(err(
            None,
            "[load] hold and hold_together are mutually exclusive".into(),
        ));
    }
    if load.hold_together.is_some() && load.connect_rate.is_none() {
        return Err(err(
            None,
            "[load] hold_together needs connect_rate (the hold covers the connection ramp)".into(),
        ));
    }
    if load.requests.is_none() && load.duration.is_none() && load.hold.is_none() {
        return Err(err(
            None,
            "[load] needs `requests` or `duration` (or `hold`) so every step ends".into(),
        ));
    }

    // Sweep axes, expanded outermost first: workers, size, delay, rate, connections.
    let mut axes = Vec::new();
    let connections = expand_counts(&file.sweep.connections, "connections", &err)?
        .unwrap_or_else(|| vec![load.connections.map_or(DEFAULT_CONNECTIONS, |c| c.0)]);
    let message_len = load.message.as_ref().map(|m| m.len() as u64);
    let sizes = match &file.sweep.size {
        Some(axis) => expand(
            axis,
            "size",
            &err,
            |b: &Bytes| b.0 as f64,
            |v| Bytes(v.round() as u64),
        )?
        .into_iter()
        .map(|b| b.0)
        .collect(),
        None => vec![load
            .size
            .map(|b| b.0)
            .or(message_len)
            .unwrap_or(DEFAULT_SIZE)],
    };
    if let Some(zero) = sizes.iter().position(|s| *s == 0) {
        return Err(err(
            file.sweep.size.as_ref().map(|s| s.span()),
            format!("size {} is 0: messages need at least 1 byte", zero + 1),
        ));
    }
    let delays: Vec<Option<Duration>> = match &file.sweep.delay {
        Some(axis) => expand(
            axis,
            "delay",
            &err,
            |d: &Dur| d.0.as_secs_f64(),
            |v| Dur(Duration::from_secs_f64(v.max(0.0))),
        )?
        .into_iter()
        .map(|d| Some(d.0))
        .collect(),
        None => vec![load.delay.map(|d| d.0)],
    };
    let rates: Vec<Option<f64>> = match &file.sweep.rate {
        Some(axis) => expand(axis, "rate", &err, |r: &Rate| r.0, Rate)?
            .into_iter()
            .map(|r| Some(r.0))
            .collect(),
        None => vec![load.rate.map(|r| r.0)],
    };
    if file.sweep.rate.is_some() && (load.delay.is_some() || file.sweep.delay.is_some()) {
        return Err(err(
            None,
            "a rate sweep (open loop) cannot have a delay".into(),
        ));
    }
    let workers: Vec<Option<u64>> = match expand_counts(&file.sweep.workers, "workers", &err)? {
        Some(list) => list.into_iter().map(Some).collect(),
        None => vec![None],
    };
    for (name, present) in [
        ("connections", file.sweep.connections.is_some()),
        ("size", file.sweep.size.is_some()),
        ("delay", file.sweep.delay.is_some()),
        ("rate", file.sweep.rate.is_some()),
        ("workers", file.sweep.workers.is_some()),
    ] {
        if present {
            axes.push(name);
        }
    }
    let total = connections.len() * sizes.len() * delays.len() * rates.len() * workers.len();
    if total > MAX_STEPS {
        return Err(err(
            None,
            format!("the sweep has {total} steps; at most {MAX_STEPS}"),
        ));
    }
    let mut steps = Vec::new();
    for w in &workers {
        for size in &sizes {
            for delay in &delays {
                for rate in &rates {
                    for c in &connections {
                        let mut name = format!("c{c}-s{size}");
                        if let Some(d) = delay {
                            name += &format!("-d{}ms", trim_float(d.as_secs_f64() * 1e3));
                        }
                        if let Some(r) = rate {
                            name += &format!("-r{}", trim_float(*r));
                        }
                        if let Some(w) = w {
                            name += &format!("-w{w}");
                        }
                        steps.push(Step {
                            name,
                            connections: *c,
                            size: *size,
                            delay: *delay,
                            rate: *rate,
                            workers: *w,
                        });
                    }
                }
            }
        }
    }

    let client_hosts = match &file.hosts {
        None => None,
        Some(hosts) => {
            let clients = &hosts.get_ref().clients;
            let max = super::hosts::MAX_CLIENTS;
            let n = *clients.get_ref();
            if !(1..=i64::from(max)).contains(&n) {
                return Err(err(
                    Some(clients.span()),
                    format!("[hosts] clients must be between 1 and {max}, not {n}"),
                ));
            }
            if load.source_addrs.is_some() {
                return Err(err(
                    Some(hosts.span()),
                    "[load] source_addrs cannot be used with [hosts]: each client host has its own address".into(),
                ));
            }
            if let Some(step) = steps.iter().find(|s| s.connections < n as u64) {
                return Err(err(
                    Some(clients.span()),
                    format!(
                        "step {} has {} connections, fewer than the {n} client hosts that share them",
                        step.name, step.connections
                    ),
                ));
            }
            Some(n as u32)
        }
    };

    Ok(Scenario {
        name: file
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string()),
        description: file.description.trim().to_string(),
        expected_duration: file.expected_duration.clone(),
        requirements: file.requirements.clone(),
        toml: source.to_string(),
        models,
        repetitions: file
            .repetitions
            .map_or(1, |r| r.0.min(u32::MAX as u64) as u32),
        step_timeout: file.step_timeout.map(|d| d.0),
        pause: file.pause.map_or(Duration::ZERO, |d| d.0),
        load,
        steps,
        sweep_axes: axes,
        failure: file.failure.clone(),
        client_hosts,
    })
}

/// Formats a number without a trailing `.0` (for step names).
pub fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A duration in milliseconds as flags and messages write it (`250ms`, `1.5ms`).
pub fn ms(d: Duration) -> String {
    format!("{}ms", trim_float(d.as_secs_f64() * 1e3))
}

fn expand_counts(
    axis: &Option<Spanned<Axis<Count>>>,
    name: &str,
    err: &dyn Fn(Option<Range<usize>>, String) -> anyhow::Error,
) -> anyhow::Result<Option<Vec<u64>>> {
    match axis {
        Some(axis) => Ok(Some(
            expand(
                axis,
                name,
                err,
                |c: &Count| c.0 as f64,
                |v| Count(v.round() as u64),
            )?
            .into_iter()
            .map(|c| c.0)
            .collect(),
        )),
        None => Ok(None),
    }
}

/// The values of an axis: the list itself, or the range walked by `step` or `factor`.
fn expand<T: Clone>(
    axis: &Spanned<Axis<T>>,
    name: &str,
    err: &dyn Fn(Option<Range<usize>>, String) -> anyhow::Error,
    to_f64: impl Fn(&T) -> f64,
    from_f64: impl Fn(f64) -> T,
) -> anyhow::Result<Vec<T>> {
    let span = Some(axis.span());
    match axis.get_ref() {
        Axis::List(list) if list.is_empty() => {
            Err(err(span, format!("sweep `{name}` has no values")))
        }
        Axis::List(list) => Ok(list.clone()),
        Axis::Range(range) => {
            let (from, to) = (to_f64(&range.from), to_f64(&range.to));
            if from > to {
                return Err(err(span, format!("sweep `{name}`: from is larger than to")));
            }
            let mut values = Vec::new();
            let mut v = from;
            match (&range.step, range.factor) {
                (Some(step), None) if to_f64(step) > 0.0 => {
                    let step = to_f64(step);
                    while v <= to + 1e-9 && values.len() <= MAX_STEPS {
                        values.push(from_f64(v));
                        v += step;
                    }
                }
                (None, Some(factor)) if factor > 1.0 && from > 0.0 => {
                    while v <= to + 1e-9 && values.len() <= MAX_STEPS {
                        values.push(from_f64(v));
                        v *= factor;
                    }
                }
                _ => {
                    return Err(err(
                        span,
                        format!(
                            "sweep `{name}`: a range needs exactly one of `step` (> 0) or `factor` (> 1, with from > 0)"
                        ),
                    ))
                }
            }
            Ok(values)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> anyhow::Result<Scenario> {
        parse("test.toml", "test", text)
    }

    #[test]
    fn every_builtin_scenario_parses() {
        for (name, text) in BUILTIN {
            let s = parse(name, name, text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(s.name, name);
            assert!(!s.steps.is_empty(), "{name}");
            assert!(s.expected_duration.is_some(), "{name} states its duration");
        }
        let quick = parse("quick", "quick", BUILTIN[0].1).unwrap();
        let labels: Vec<&str> = quick.models.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            labels,
            ["threads", "select", "poll", "epoll", "uring", "tokio"]
        );
    }

    #[test]
    fn sweep_expands_in_order_with_names() {
        let s = parse_str(
            r#"
models = ["poll", "epoll"]
repetitions = 2
[load]
requests = 5
delay = "10ms"
[sweep]
connections = [10, 100]
size = ["1KiB", 2048]
"#,
        )
        .unwrap();
        let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "c10-s1024-d10ms",
                "c100-s1024-d10ms",
                "c10-s2048-d10ms",
                "c100-s2048-d10ms"
            ]
        );
        assert_eq!(s.sweep_axes, ["connections", "size"]);
        assert_eq!(s.repetitions, 2);
        assert_eq!(s.steps[3].connections, 100);
        assert_eq!(s.steps[3].size, 2048);
        assert_eq!(s.steps[3].delay, Some(Duration::from_millis(10)));
    }

    #[test]
    fn ranges_step_and_factor() {
        let s = parse_str(
            "models=[\"epoll\"]\n[load]\nduration=\"5s\"\n[sweep]\nconnections = { from = 1000, to = 4000, step = 1000 }\n",
        )
        .unwrap();
        let c: Vec<u64> = s.steps.iter().map(|s| s.connections).collect();
        assert_eq!(c, [1000, 2000, 3000, 4000]);
        let s = parse_str(
            "models=[\"epoll\"]\n[load]\nduration=\"5s\"\n[sweep]\ndelay = { from = \"1ms\", to = \"8ms\", factor = 2 }\n",
        )
        .unwrap();
        let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "c10-s64-d1ms",
                "c10-s64-d2ms",
                "c10-s64-d4ms",
                "c10-s64-d8ms"
            ]
        );
    }

    #[test]
    fn variants_and_overrides() {
        let s = parse_str(
            r#"
models = ["epoll", "epoll-lt", "select"]
[server]
workers = 2
cpus = [0]
[model.epoll]
workers = 1
[model.epoll-lt]
base = "epoll"
trigger = "level"
[load]
requests = 1
"#,
        )
        .unwrap();
        assert_eq!(s.models[0].model, Model::Epoll);
        assert_eq!(s.models[0].options.workers, Some(Count(1)));
        assert_eq!(s.models[1].label, "epoll-lt");
        assert_eq!(s.models[1].model, Model::Epoll);
        assert_eq!(s.models[1].options.trigger, Some(Trigger::Level));
        assert_eq!(s.models[1].options.workers, Some(Count(2)));
        assert_eq!(s.models[2].options.cpus, Some(vec![0]));
    }

    fn error_of(text: &str) -> String {
        format!("{:#}", parse_str(text).unwrap_err())
    }

    #[test]
    fn errors_name_the_line() {
        let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nconections = 5\n");
        assert!(
            e.starts_with("test.toml: line 4, column 1: unknown field `conections`"),
            "{e}"
        );
        let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nsize = \"12 parsecs\"\n");
        assert!(e.starts_with("test.toml: line 4, column 8: "), "{e}");
        assert!(e.contains("parsecs"), "{e}");
        let e = error_of("models = [\"poll\",\n  \"epol\"]\n[load]\nrequests = 3\n");
        assert!(
            e.starts_with("test.toml: line 2, column 3: unknown model 'epol'"),
            "{e}"
        );
        let e = error_of("models = [\"poll\"]\n[load]\nrequests = 0\n");
        assert!(
            e.starts_with("test.toml: line 3, column 12: must be at least 1, not 0"),
            "{e}"
        );
        let e = error_of(
            "models = [\"epoll\"]\n[server]\ntrigger = \"sideways\"\n[load]\nrequests = 1\n",
        );
        assert!(e.starts_with("test.toml: line 3, column 11: "), "{e}");
        let e = error_of(
            "models = [\"select\"]\n[model.select]\nprocesses = 2\n[load]\nrequests = 1\n",
        );
        assert!(e.contains("cannot run with processes = 2"), "{e}");
        let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nconnections = { from = 5, to = 1 , step = 1}\n");
        assert!(
            e.starts_with(
                "test.toml: line 5, column 15: sweep `connections`: from is larger than to"
            ),
            "{e}"
        );
        let e = error_of("models = [\"poll\"]\n[load]\nsize = 3\n");
        assert!(e.contains("needs `requests` or `duration`"), "{e}");
        let e = error_of("models = [\"poll\"]\n[model.epoll]\nworkers = 1\n[load]\nrequests = 1\n");
        assert!(e.starts_with("test.toml: line 2"), "{e}");
        assert!(e.contains("[model.epoll] is not in `models`"), "{e}");
    }

    #[test]
    fn hosts_table() {
        let base = "models = [\"epoll\"]\n[load]\nrequests = 1\nconnections = 4\n";
        let s = parse_str(&format!("{base}[hosts]\nclients = 4\n")).unwrap();
        assert_eq!(s.client_hosts, Some(4));
        assert_eq!(parse_str(base).unwrap().client_hosts, None);
        let e = error_of(&format!("{base}[hosts]\nclients = 17\n"));
        assert!(
            e.starts_with(
                "test.toml: line 6, column 11: [hosts] clients must be between 1 and 16, not 17"
            ),
            "{e}"
        );
        let e = error_of(&format!("{base}[hosts]\nclients = 0\n"));
        assert!(e.contains("between 1 and 16, not 0"), "{e}");
        let e = error_of(&format!("{base}[hosts]\nclients = 2\nbridge = \"br9\"\n"));
        assert!(
            e.starts_with("test.toml: line 7, column 1: unknown field `bridge`"),
            "{e}"
        );
        let e = error_of(&format!("{base}[hosts]\n"));
        assert!(e.contains("missing field `clients`"), "{e}");
        let e = error_of(&format!("{base}[hosts]\nclients = 5\n"));
        assert!(
            e.starts_with("test.toml: line 6, column 11: step c4-s64 has 4 connections, fewer than the 5 client hosts"),
            "{e}"
        );
        let e = error_of(&format!(
            "{base}source_addrs = \"127.0.0.2-127.0.0.3\"\n[hosts]\nclients = 2\n"
        ));
        assert!(
            e.contains("source_addrs cannot be used with [hosts]"),
            "{e}"
        );
    }

    #[test]
    fn heaviness() {
        let step = |c, d: Option<u64>| Step {
            name: String::new(),
            connections: c,
            size: 64,
            delay: d.map(Duration::from_millis),
            rate: None,
            workers: None,
        };
        assert!(step(1500, None).at_least_as_heavy_as(&step(1100, None)));
        assert!(step(1100, None).at_least_as_heavy_as(&step(1100, None)));
        assert!(!step(500, None).at_least_as_heavy_as(&step(1100, None)));
        assert!(step(100, Some(1)).at_least_as_heavy_as(&step(100, Some(10))));
        assert!(!step(100, Some(100)).at_least_as_heavy_as(&step(100, Some(10))));
        assert!(step(100, None).at_least_as_heavy_as(&step(100, Some(10))));
    }
}
