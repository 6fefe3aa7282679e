//! The scenario file as written: the raw TOML tables (every one denies unknown
//! keys) and the value types that check a single value where it is read (a size,
//! a duration, a count, a rate, a fraction), so toml can point at its line.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::server::{AcceptMode, Model, Trigger};

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

/// `[load] size`: a message's size, at least 1 byte (the step's check sees the upper
/// bound, as `--size` does).
fn message_size<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Bytes>, D::Error> {
    match Bytes::deserialize(deserializer)? {
        Bytes(0) => Err(de::Error::custom("a message needs at least 1 byte, not 0")),
        size => Ok(Some(size)),
    }
}

/// `[load] message`: the text every request sends, at least 1 byte.
fn message<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.is_empty() {
        return Err(de::Error::custom(
            "a message needs at least 1 byte, not \"\"",
        ));
    }
    Ok(Some(text))
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
    pub network: Option<Spanned<NetworkFile>>,
    pub staircase: Option<Spanned<StaircaseFile>>,
    /// Built-in scenarios run one after the other into folders of one results
    /// directory, judged together (`classic`); such a file has nothing else to run.
    pub parts: Option<Spanned<Vec<String>>>,
}

/// `[network]`: shaping of the client hosts' links (needs `[hosts]`), and where a
/// step's network counters come from.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Link rate in each direction, as tc writes it (`"100mbit"`, `"10mbit"`, `"1gbit"`).
    pub rate: Option<BitRate>,
    /// One-way delay added on each client link (netem).
    pub delay: Option<Dur>,
    /// Delay variation around `delay` (netem).
    pub jitter: Option<Dur>,
    /// Fraction of packets dropped on each client link (netem).
    pub loss: Option<Fraction>,
    /// When the kernel has no netem: run without delay, jitter and loss (saying so in
    /// the manifest) instead of refusing to start.
    #[serde(default)]
    pub netem_optional: bool,
    /// Run each step's server and load in a network namespace made for the step, so
    /// its TCP counters are the step's alone (needs root; off by default, because a
    /// new namespace starts from the kernel's default sysctls, not the machine's).
    pub own_namespace: Option<bool>,
}

/// A link rate in bits per second, written as tc writes it (`"100mbit"`) or a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BitRate(pub u64);

impl BitRate {
    /// Parses `100mbit`, `1.5gbit`, `64kbit`, `1000bit` (decimal units, as tc's).
    pub fn parse(text: &str) -> Result<BitRate, String> {
        let t = text.trim().to_ascii_lowercase();
        let (number, scale) = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)]
            .iter()
            .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n.trim(), *scale)))
            .ok_or_else(|| format!("rate {text:?} needs a unit: bit, kbit, mbit or gbit"))?;
        let value: f64 = number
            .parse()
            .map_err(|_| format!("rate {text:?} is not a number with a unit"))?;
        let bits = value * scale;
        if !(bits.is_finite() && bits >= 8.0) {
            return Err(format!("rate {text:?} must be at least 8bit"));
        }
        Ok(BitRate(bits.round() as u64))
    }
}

impl<'de> Deserialize<'de> for BitRate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        BitRate::parse(&text).map_err(de::Error::custom)
    }
}

/// `[hosts]`: run the server and the load on emulated hosts (network namespaces).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct HostsFile {
    /// Client hosts the load of every step is split over (1..=250).
    pub clients: Spanned<i64>,
    /// net.core.somaxconn in the lab's namespaces (default 65535).
    pub somaxconn: Option<Count>,
    /// net.ipv4.tcp_max_syn_backlog in the lab's namespaces (default 65535).
    pub tcp_max_syn_backlog: Option<Count>,
    /// net.ipv4.ip_local_port_range in the lab's namespaces, `LOW-HIGH` (default 1024-65535).
    pub ip_local_port_range: Option<Spanned<String>>,
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
    /// Only in `[model.NAME]`: any echo server as a command, `{port}` and `{addr}` substituted.
    pub command: Option<Vec<String>>,
    /// How long the server may take to listen (default 15 s).
    pub start_timeout: Option<Dur>,
    /// The server's CPU cap, in cores (`0.5` = half of one core), via its own cgroup.
    pub cpu_quota: Option<Cores>,
    /// The server's memory cap via its own cgroup; past it the kernel's OOM killer acts.
    pub memory_max: Option<Bytes>,
    /// The most processes and threads the server may have at once (cgroup pids.max).
    pub tasks_max: Option<Count>,
}

/// A positive number of CPU cores (a CPU quota).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Cores(pub f64);

impl<'de> Deserialize<'de> for Cores {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(deserializer)?;
        if !(v.is_finite() && v >= 0.01) {
            return Err(de::Error::custom(format!(
                "must be a number of cores of at least 0.01, not {v}"
            )));
        }
        Ok(Cores(v))
    }
}

impl ServerOptions {
    /// The options a built-in model takes and a command cannot (set ones, by key name).
    pub fn builtin_only(&self) -> Vec<&'static str> {
        [
            ("base", self.base.is_some()),
            ("workers", self.workers.is_some()),
            ("trigger", self.trigger.is_some()),
            ("accept", self.accept.is_some()),
            ("processes", self.processes.is_some()),
            ("conns_per_process", self.conns_per_process.is_some()),
            ("max_conns", self.max_conns.is_some()),
            ("idle_timeout", self.idle_timeout.is_some()),
            ("max_pending", self.max_pending.is_some()),
            ("thread_stack", self.thread_stack.is_some()),
            ("backlog", self.backlog.is_some()),
            ("sqpoll", self.sqpoll.is_some()),
            ("args", self.args.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }

    /// These options with `over`'s set values taking precedence.
    pub(super) fn overlaid(&self, over: &ServerOptions) -> ServerOptions {
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
            command: over.command.clone().or_else(|| self.command.clone()),
            start_timeout: over.start_timeout.or(self.start_timeout),
            cpu_quota: over.cpu_quota.or(self.cpu_quota),
            memory_max: over.memory_max.or(self.memory_max),
            tasks_max: over.tasks_max.or(self.tasks_max),
        }
    }
}

/// `[load]`: the load shape of every step (sweep axes replace single values).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct LoadOptions {
    pub connections: Option<Count>,
    #[serde(default, deserialize_with = "message_size")]
    pub size: Option<Bytes>,
    #[serde(default, deserialize_with = "message")]
    pub message: Option<String>,
    pub payload_file: Option<String>,
    pub requests: Option<Count>,
    pub duration: Option<Dur>,
    pub delay: Option<Dur>,
    pub rate: Option<Rate>,
    pub connect_rate: Option<Rate>,
    pub connect_timeout: Option<Dur>,
    pub response_timeout: Option<Dur>,
    /// Messages in flight per connection (`--pipeline`).
    pub pipeline: Option<Count>,
    pub hold: Option<Dur>,
    /// Hold long enough that every connection is open together for this long:
    /// `--hold` = this + connections / connect_rate (max-clients studies).
    pub hold_together: Option<Dur>,
    pub threads: Option<Count>,
    /// The load's event-loop engine (`--engine`): "epoll" or "uring".
    pub engine: Option<crate::load::Engine>,
    pub processes: Option<Count>,
    pub conns_per_process: Option<Count>,
    pub source_addrs: Option<String>,
    pub seed: Option<u64>,
    pub reconnect: Option<bool>,
    pub cpus: Option<Vec<usize>>,
    pub args: Option<Vec<String>>,
}

/// One sweep axis: a list of values or a range.
#[derive(Debug, Clone)]
pub enum Axis<T> {
    List(Vec<T>),
    Range(AxisRange<T>),
}

/// By the shape written (an array or a table), so an error in one value names that
/// value and what is wrong with it, not "no variant matched".
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Axis<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Axis<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of values or a range such as { from = 1, to = 8, factor = 2 }")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Axis<T>, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Axis::List)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Axis<T>, A::Error> {
                AxisRange::deserialize(de::value::MapAccessDeserializer::new(map)).map(Axis::Range)
            }
        }
        deserializer.deserialize_any(V(std::marker::PhantomData))
    }
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
    /// Requests per connection (a fixed workload per step).
    pub requests: Option<Spanned<Axis<Count>>>,
    /// Client hosts the step's load is split over (the first N of `[hosts] clients`).
    pub hosts: Option<Spanned<Axis<Count>>>,
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
    /// Times a disturbed repetition (results.csv `disturbed`) is run again, at most
    /// [`MAX_RERUNS`]; 0 keeps it as it is (flagged, never deciding a verdict alone).
    #[serde(default, deserialize_with = "reruns")]
    pub rerun_disturbed: u64,
}

/// The most reruns `rerun_disturbed` may ask for: each one costs a step's time.
pub const MAX_RERUNS: u64 = 5;

fn reruns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let v = i64::deserialize(deserializer)?;
    if !(0..=MAX_RERUNS as i64).contains(&v) {
        return Err(de::Error::custom(format!(
            "must be 0 to {MAX_RERUNS} (reruns of a disturbed repetition), not {v}"
        )));
    }
    Ok(v as u64)
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
            rerun_disturbed: 0,
        }
    }
}

/// `[staircase]` as written: every key optional here, so a missing one gets an error
/// that names it instead of serde's.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StaircaseFile {
    /// Connections added per stair.
    pub batch: Option<Count>,
    /// Each stair's measuring window, from the moment its batch is established.
    pub every: Option<Dur>,
    /// The top: stairs go up to and including this many connections.
    pub to: Option<Count>,
    /// After the last stair, every connection held together this long (one more row).
    pub hold: Option<Dur>,
}
