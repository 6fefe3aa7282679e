//! The scenario file as written: the raw TOML tables (every one denies unknown
//! keys) and the value types that check a single value where it is read (a size,
//! a duration, a count, a rate, a fraction), so toml can point at its line.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::results::threshold::{self, Threshold};
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

/// `[hosts] tcp_max_tw_buckets`: 0 up to the kernel's int.
fn tw_buckets<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let v = i64::deserialize(deserializer)?;
    if !(0..=i64::from(i32::MAX)).contains(&v) {
        return Err(de::Error::custom(format!(
            "must be between 0 and {}, not {v}",
            i32::MAX
        )));
    }
    Ok(Some(v as u64))
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
        let least = crate::load::schedule::MIN_RATE;
        if !(v.is_finite() && v >= least) {
            return Err(de::Error::custom(format!(
                "must be a rate of at least {least} per second, not {v:e}"
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

/// Which steps a run profiles (docs/report.md, "Where the CPU goes"): after a step's
/// measured repetitions, one more per model runs under perf, labelled `profiled` in
/// results.csv and never judged.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Profiled {
    /// The sweep's last (heaviest) step: the one the verdict compares.
    Heaviest,
    /// Every step.
    All,
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
    /// `profiled`: which steps get one more repetition per model under perf.
    pub profiled: Option<Profiled>,
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
    /// `[thresholds]`: a figure (`p99`, `error_rate`, any numeric results.csv column)
    /// and the condition every step's value must meet (`"< 1ms"`), judged at the end of
    /// the run (docs/compare.md).
    #[serde(default)]
    pub thresholds: BTreeMap<String, String>,
    /// `[claims]`: how a claim's scenario may go on when its claim is left undecided.
    pub claims: Option<Spanned<ClaimsFile>>,
}

/// `[claims]`: the repetitions a claim's scenario may add, one round of every model at a
/// time, while its claim is left undecided (docs/scenarios.md, "Repetitions added").
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    /// The most repetitions of each step (default: `repetitions`, none added).
    pub max_repetitions: Option<Count>,
}

/// The `[thresholds]` of a scenario's text, read alone: a results directory keeps only
/// its scenario's text, and one written by an older echolab (whose other keys today's
/// [`ScenarioFile`] may refuse) is still judged, by the one rule a scenario is parsed with.
pub fn thresholds_of(source: &str) -> anyhow::Result<Vec<Threshold>> {
    #[derive(Deserialize)]
    struct ThresholdsOnly {
        #[serde(default)]
        thresholds: BTreeMap<String, String>,
    }
    let file: ThresholdsOnly = toml::from_str(source)?;
    threshold::requirements(&file.thresholds)
}

/// `[network]`: shaping of the client hosts' links (needs `[hosts]`), and where a
/// step's network counters come from.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Link rate in each direction, as tc writes it (`"100mbit"`, `"10mbit"`, `"1gbit"`).
    pub rate: Option<BitRate>,
    /// The server's own port, in each direction (tbf on the server host's link): a slow
    /// server port behind fast client links, as 003's 100 Mbit server on a gigabit switch.
    pub server_rate: Option<BitRate>,
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
        // tc takes a rate in bytes per second as a u64: beyond it would saturate.
        if bits >= 18_446_744_073_709_551_616.0 {
            return Err(format!(
                "rate {text:?} is too large (18 446 744 Tbit at most)"
            ));
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

/// `[hosts]`: run the server and the load on emulated hosts (network namespaces), or
/// on real machines over ssh.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct HostsFile {
    /// Client hosts the load of every step is split over: a count (1..=250) of
    /// namespaces, or the ssh URLs of real machines.
    pub clients: Spanned<ClientHosts>,
    /// The server's machine, `ssh://[user@]host[:port]` (with ssh client hosts).
    pub server: Option<Spanned<String>>,
    /// The server host's IP address on the data network, which the load targets.
    pub server_addr: Option<Spanned<String>>,
    /// net.core.somaxconn in the lab's namespaces (default 65535).
    pub somaxconn: Option<Count>,
    /// net.ipv4.tcp_max_syn_backlog in the lab's namespaces (default 65535).
    pub tcp_max_syn_backlog: Option<Count>,
    /// net.ipv4.ip_local_port_range in the lab's namespaces, `LOW-HIGH` (default 1024-65535).
    pub ip_local_port_range: Option<Spanned<String>>,
    /// net.ipv4.tcp_max_tw_buckets in the lab's namespaces (default 0: no TIME_WAIT).
    #[serde(default, deserialize_with = "tw_buckets")]
    pub tcp_max_tw_buckets: Option<u64>,
}

/// `[hosts] clients`: a number of namespaces, or a list of ssh URLs.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientHosts {
    Count(i64),
    Ssh(Vec<String>),
}

impl ClientHosts {
    /// How many client hosts, either way.
    pub fn count(&self) -> i64 {
        match self {
            ClientHosts::Count(n) => *n,
            ClientHosts::Ssh(urls) => urls.len() as i64,
        }
    }
}

impl<'de> Deserialize<'de> for ClientHosts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = ClientHosts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of client hosts or a list of ssh URLs (\"ssh://host\")")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<ClientHosts, E> {
                Ok(ClientHosts::Count(n))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<ClientHosts, A::Error> {
                let mut urls = Vec::new();
                while let Some(url) = seq.next_element::<String>()? {
                    urls.push(url);
                }
                Ok(ClientHosts::Ssh(urls))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Declares a table of scenario options once: each key with its type, `[builtin]`
/// when only echolab's own servers take it (a command server cannot), and how it sets
/// the configuration it becomes (`=> |config, value| ...`; keys without one are read
/// where they are used). From that one list come the struct serde reads, the keys a
/// command cannot take ([`ServerOptions::builtin_only`]), the overlay of `[model.NAME]`
/// on `[server]`, and `apply_to`, which sets every such key on the configuration.
macro_rules! options {
    (
        $(#[$attr:meta])*
        pub struct $name:ident => $target:ty {
            $(
                $(#[$field_attr:meta])*
                $key:ident: $ty:ty $([$only:ident])? $(=> |$config:ident, $value:ident| $set:expr)?,
            )*
        }
    ) => {
        $(#[$attr])*
        pub struct $name {
            $(
                $(#[$field_attr])*
                pub $key: Option<$ty>,
            )*
        }

        impl $name {
            /// Every key of the table, in declaration order.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($key)),*];

            /// The set keys only echolab's own servers take, in declaration order.
            pub fn builtin_only(&self) -> Vec<&'static str> {
                let keys: Vec<(&'static str, bool)> = vec![$($(
                    (stringify!($key), stringify!($only) == "builtin" && self.$key.is_some()),
                )?)*];
                keys.into_iter()
                    .filter_map(|(key, set)| set.then_some(key))
                    .collect()
            }

            /// These options with `over`'s set values taking precedence.
            #[allow(clippy::clone_on_copy)]
            pub fn overlaid(&self, over: &$name) -> $name {
                $name {
                    $($key: over.$key.clone().or_else(|| self.$key.clone()),)*
                }
            }

            /// Sets every set key that has a setter on `config`.
            pub fn apply_to(&self, config: &mut $target) {
                $($(
                    if let Some($value) = &self.$key {
                        let $config = &mut *config;
                        $set;
                    }
                )?)*
            }
        }
    };
}

options! {
    /// Server options: `[server]` for every model, `[model.NAME]` for one entry of `models`.
    #[derive(Deserialize, Debug, Clone, Default, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct ServerOptions => crate::server::ServerConfig {
        /// Only in `[model.NAME]`: the model a named variant runs (`base = "epoll"`).
        base: Model [builtin],
        /// Set with the step's `workers`, which comes first.
        workers: Count [builtin],
        trigger: Trigger [builtin] => |c, v| c.trigger = *v,
        accept: AcceptMode [builtin] => |c, v| c.accept = *v,
        /// Set with `conns_per_process` and the model's support for processes.
        processes: Count [builtin],
        conns_per_process: Count [builtin],
        max_conns: Count [builtin] => |c, v| c.max_conns = Some(v.0 as usize),
        idle_timeout: Dur [builtin] => |c, v| c.idle_timeout = Some(v.0),
        max_pending: Bytes [builtin] => |c, v| c.max_pending = v.0 as usize,
        thread_stack: Bytes [builtin] => |c, v| c.thread_stack = v.0 as usize,
        backlog: Count [builtin] => |c, v| c.backlog = v.0.min(i32::MAX as u64) as i32,
        sqpoll: bool [builtin] => |c, v| c.sqpoll = *v,
        /// CPU time spent on every read that returned data (`--work-us`), in µs.
        work_us: Count [builtin] => |c, v| c.work_us = v.0,
        cpus: Vec<usize>,
        args: Vec<String> [builtin],
        /// Only in `[model.NAME]`: any echo server as a command, `{port}` and `{addr}` substituted.
        command: Vec<String>,
        /// How long the server may take to listen (default 15 s).
        start_timeout: Dur,
        /// A named server machine (`"weak-2016"`): cpus, cpu_quota and memory_max
        /// together, where the table sets none of its own.
        profile: super::Profile,
        /// The server's CPU cap, in cores (`0.5` = half of one core), via its own cgroup.
        cpu_quota: Cores,
        /// The server's memory cap via its own cgroup; past it the kernel's OOM killer acts.
        memory_max: Bytes,
        /// The most processes and threads the server may have at once (cgroup pids.max).
        tasks_max: Count,
    }
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

options! {
    /// `[load]`: the load shape of every step (sweep axes replace single values).
    #[derive(Deserialize, Debug, Clone, Default)]
    #[serde(deny_unknown_fields)]
    pub struct LoadOptions => crate::load::LoadArgs {
        /// A sweep axis too: the step's.
        connections: Count,
        /// The step's (or the message's or payload file's).
        #[serde(default, deserialize_with = "message_size")]
        size: Bytes,
        #[serde(default, deserialize_with = "message")]
        message: String,
        payload_file: String,
        /// The step's, else this.
        requests: Count,
        duration: Dur => |a, v| a.duration = Some(v.0),
        /// Sent and verified before `duration`, not measured (`--warmup`); the step's
        /// server CPU, machine-busy and network readings start when it ends.
        warmup: Dur => |a, v| a.warmup = v.0,
        /// A sweep axis too: the step's.
        delay: Dur,
        /// A sweep axis too: the step's.
        rate: Rate,
        connect_rate: Rate => |a, v| a.connect_rate = v.0,
        connect_timeout: Dur => |a, v| a.connect_timeout = v.0,
        response_timeout: Dur => |a, v| a.response_timeout = v.0,
        /// Messages in flight per connection (`--pipeline`).
        pipeline: Count => |a, v| a.pipeline = v.0.min(u32::MAX as u64) as u32,
        hold: Dur => |a, v| a.hold = Some(v.0),
        /// Hold long enough that every connection is open together for this long:
        /// `--hold` = this + 2 x connections / connect_rate (max-clients studies).
        hold_together: Dur,
        threads: Count => |a, v| a.threads = Some(v.0 as usize),
        /// The load's event-loop engine (`--engine`): "epoll" or "uring".
        engine: crate::load::Engine => |a, v| a.engine = *v,
        /// Set with `conns_per_process`.
        processes: Count,
        conns_per_process: Count,
        source_addrs: String => |a, v| a.source_addrs = Some(v.clone()),
        seed: u64 => |a, v| a.seed = *v,
        reconnect: bool => |a, v| a.reconnect = *v,
        cpus: Vec<usize>,
        args: Vec<String>,
    }
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
    /// Run a failed step again in every later repetition (heavier steps are still
    /// skipped): for the claims that rest on a failure, so a verdict says whether every
    /// repetition failed, not one.
    #[serde(default)]
    pub repeat_failed: bool,
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
            repeat_failed: false,
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
    /// The memory a stair must leave available (MemAvailable less the reclaimable slab):
    /// the staircase stops before a stair predicted to leave less.
    pub keep_available: Option<Bytes>,
}
