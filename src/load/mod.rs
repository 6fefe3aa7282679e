//! The load generator: puts many clients on any RFC 862 echo server and measures it honestly.
//!
//! - [`schedule`]: the validated plan (connections, payload, closed/open loop, ramp, shards);
//! - [`preflight`]: checks the limits that cap the connection count before anything is opened;
//! - [`in_process`]: the recorder: runs a plan in this process, starts the engine, records each second;
//! - [`engine`]: one epoll event loop per thread driving the connections ([`conn`]);
//! - [`check`]: the echo check, pure;
//! - [`measurements`]: histograms, counters and the output files, written as the run goes;
//! - [`multi`]: `--processes` children, run as shards and merged;
//! - [`merge`]: exact merging of result directories (`--processes` and `echolab merge`).

pub mod check;
pub mod conn;
pub mod engine;
pub mod in_process;
pub mod measurements;
pub mod merge;
pub mod multi;
pub mod preflight;
pub mod schedule;
mod summary_table;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::console::usage_error;
use crate::units::{parse_duration, parse_size};

pub use crate::console::EXIT_USAGE;
use crate::load::measurements::LOAD_SUMMARY;
/// Exit code of a run that failed `--max-error-rate` or could not run at all.
pub const EXIT_FAILED: u8 = 1;

/// A load flag's duration, at most [`crate::units::MAX_DURATION`] as every duration.
fn duration_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

fn size_arg(text: &str) -> Result<u64, String> {
    parse_size(text)
}

/// `echolab load`: generate load against an echo server, verify every byte, measure latency.
#[derive(clap::Parser, Debug, Clone, PartialEq)]
#[command(
    name = "load",
    after_help = "Closed loop (default): each connection sends a message, waits for its whole echo, \
                  waits --delay, repeats (--requests per connection or until --duration).\n\
                  Open loop (--rate): requests are sent on a fixed schedule; latency is measured from \
                  the intended send time (coordinated omission corrected) and also raw."
)]
pub struct LoadArgs {
    /// Echo server to load, HOST:PORT
    #[arg(long, short = 't', value_name = "HOST:PORT")]
    pub target: String,
    /// Connections to open (in total, over all processes and shards)
    #[arg(long, short = 'c', default_value_t = 1)]
    pub connections: u64,
    /// Connections opened per second, a ramp (0 = as fast as possible); with --duration
    /// it must open the last connection within it
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    pub connect_rate: f64,
    /// Give up on a connection attempt after this long
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub connect_timeout: Duration,
    /// Count a request as timed out when its echo takes longer than this
    #[arg(long, default_value = "30s", value_parser = duration_arg)]
    pub response_timeout: Duration,
    /// Message to send (the payload is these bytes)
    #[arg(long, short = 'm')]
    pub message: Option<String>,
    /// Message size: seeded random printable bytes (1 B to 16 MiB)
    #[arg(long, short = 's', value_parser = size_arg, value_name = "BYTES")]
    pub size: Option<u64>,
    /// Message read from a regular file (1 B to 16 MiB)
    #[arg(long, value_name = "PATH")]
    pub payload_file: Option<PathBuf>,
    /// Seed of the random payload (--size)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Requests per connection (default: run for --duration, 10s if neither is given)
    #[arg(long, short = 'n')]
    pub requests: Option<u64>,
    /// Stop sending after this long; in-flight echoes then get the drain: it ends once no
    /// echo byte came for twice the slowest echo (at least 1 s), at most --response-timeout
    #[arg(long, short = 'd', value_parser = duration_arg)]
    pub duration: Option<Duration>,
    /// Run this long before --duration starts, sending and verifying but not measuring:
    /// requests sent in the warm-up (open loop: due) are left out of the latency, the
    /// request counts and duration_s (counted as warmup_requests), so connection set-up and
    /// first requests do not set the tail. Not with --requests or --hold.
    #[arg(long, default_value = "0", value_parser = duration_arg)]
    pub warmup: Duration,
    /// Think time between an echo and the next message (closed loop)
    #[arg(long, default_value = "0", value_parser = duration_arg)]
    pub delay: Duration,
    /// Messages in flight per connection
    #[arg(long, default_value_t = 1)]
    pub pipeline: u32,
    /// Open loop: requests per second in total, spread evenly over the connections
    #[arg(long, value_name = "PER_SECOND")]
    pub rate: Option<f64>,
    /// Keep each connection open and idle this long after its requests (max-clients tests)
    #[arg(long, value_parser = duration_arg)]
    pub hold: Option<Duration>,
    /// Reopen a connection that failed or was closed, with exponential backoff
    #[arg(long)]
    pub reconnect: bool,
    /// Event-loop threads (default: number of CPUs; half of them for a loopback target)
    #[arg(long)]
    pub threads: Option<usize>,
    /// Kernel interface of the event loops: epoll (a read and a send per echo) or uring
    /// (io_uring, Linux 6.0+: multishot receives and batched sends, less CPU per request)
    #[arg(long, value_enum, default_value_t = Engine::Epoll)]
    pub engine: Engine,
    /// Split the connections (and rate) over this many child processes
    #[arg(long, default_value_t = 1)]
    pub processes: u32,
    /// Source addresses to spread connections over: A, A-B (a range) or A,B,C
    #[arg(long, value_name = "A-B")]
    pub source_addrs: Option<String>,
    /// Run shard I of N (0-based) of a distributed run: this agent's share of connections and rate
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Wait until this Unix time (seconds) before starting, so agents start together
    #[arg(long, value_name = "UNIX_TIME")]
    pub start_at: Option<f64>,
    /// Write summary.json, connections.csv, timeline.csv, latency.hlog, percentiles.csv here
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Exit 1 when errors / (requests + errors) exceeds this fraction
    #[arg(long, value_name = "FRACTION")]
    pub max_error_rate: Option<f64>,
    /// No progress line
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl LoadArgs {
    /// The command line that parses back into these arguments, verb first (`load --target
    /// ...`): every option is written out, so a child or a step runs exactly this load.
    pub fn to_args(&self) -> Vec<String> {
        fn seconds(d: Duration) -> String {
            format!("{}s", d.as_secs_f64())
        }
        let mut v: Vec<String> = vec!["load".into()];
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                v.push(format!("--{name}"));
                v.push(value);
            }
        };
        let text = |value: &dyn ToString| Some(value.to_string());
        flag("target", text(&self.target));
        flag("connections", text(&self.connections));
        flag("connect-rate", text(&self.connect_rate));
        flag("connect-timeout", Some(seconds(self.connect_timeout)));
        flag("response-timeout", Some(seconds(self.response_timeout)));
        flag("message", self.message.clone());
        flag("size", self.size.map(|s| s.to_string()));
        let path = self.payload_file.as_ref();
        flag("payload-file", path.map(|p| p.display().to_string()));
        flag("seed", text(&self.seed));
        flag("requests", self.requests.map(|n| n.to_string()));
        flag("duration", self.duration.map(seconds));
        flag("warmup", Some(seconds(self.warmup)));
        flag("delay", Some(seconds(self.delay)));
        flag("pipeline", text(&self.pipeline));
        flag("rate", self.rate.map(|r| r.to_string()));
        flag("hold", self.hold.map(seconds));
        flag("threads", self.threads.map(|n| n.to_string()));
        flag("engine", Some(self.engine.name().to_string()));
        flag("processes", text(&self.processes));
        flag("source-addrs", self.source_addrs.clone());
        flag("shard", self.shard.clone());
        flag("start-at", self.start_at.map(|t| t.to_string()));
        flag("out", self.out.as_ref().map(|p| p.display().to_string()));
        flag("max-error-rate", self.max_error_rate.map(|r| r.to_string()));
        if self.reconnect {
            v.push("--reconnect".into());
        }
        if self.quiet {
            v.push("--quiet".into());
        }
        v
    }
}

/// The kernel interface of the load's event loops ([`engine`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Readiness: edge-triggered epoll, a read per echo and a send per request
    #[default]
    Epoll,
    /// Completions: io_uring with a multishot receive per connection and batched sends
    Uring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Epoll => "epoll",
            Engine::Uring => "uring",
        }
    }
}

/// `echolab merge`: combine the result directories of shards or agents exactly.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Result directories written by `echolab load --out`
    #[arg(required = true, value_name = "AGENT_DIR")]
    pub dirs: Vec<PathBuf>,
    /// Directory for the merged results
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Exit 1 when the merged error rate exceeds this fraction
    #[arg(long, value_name = "FRACTION")]
    pub max_error_rate: Option<f64>,
    /// Merge shards that do not hold every connection, or a latency log cut off before
    /// its part finished, with a warning instead of refusing (exit 2) or failing (exit 1)
    #[arg(long)]
    pub allow_partial: bool,
}

/// How `echolab load` is called, for its usage errors.
const USAGE: &str = "load --target HOST:PORT [OPTIONS]";
/// How `echolab merge` is called, for its usage errors.
const MERGE_USAGE: &str = "merge AGENT_DIR... --out DIR";

pub fn main(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let plan = match schedule::Plan::from_args(&args) {
        Ok(plan) => plan,
        Err(message) => return Ok(usage_error(USAGE, &message)),
    };
    crate::sys::ignore_sigpipe();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let outcome = if args.processes > 1 {
        multi::run_processes(&args, &plan, show_progress)?
    } else {
        in_process::run(&plan, args.out.as_deref(), show_progress)?
    };
    let Some(summary) = outcome else {
        return Ok(ExitCode::from(EXIT_FAILED));
    };
    crate::outln!("{}", summary_table::human_summary(&summary));
    Ok(exit_code(&summary, args.max_error_rate))
}

pub fn merge_main(args: MergeArgs) -> anyhow::Result<ExitCode> {
    if let Some(rate) = args.max_error_rate {
        if !(0.0..=1.0).contains(&rate) {
            return Ok(usage_error(
                MERGE_USAGE,
                "--max-error-rate must be between 0 and 1",
            ));
        }
    }
    for dir in &args.dirs {
        if !dir.join(LOAD_SUMMARY).is_file() {
            return Ok(usage_error(
                MERGE_USAGE,
                &format!("{} has no summary.json", dir.display()),
            ));
        }
    }
    if let Err(message) = merge::check_mergeable(&args.dirs, &args.out) {
        return Ok(usage_error(MERGE_USAGE, &message));
    }
    let missing = merge::missing_shards(&args.dirs);
    if let (Some(missing), false) = (&missing, args.allow_partial) {
        let message = format!(
            "{missing}: a merge of some agents is not the whole load; add --allow-partial \
             to merge them anyway"
        );
        return Ok(usage_error(MERGE_USAGE, &message));
    }
    let mut summary = merge::merge_dirs(&args.dirs, &args.out)?;
    if let Some(missing) = missing {
        summary.warnings.push(format!("partial merge: {missing}"));
        measurements::Outputs::rewrite_summary(&args.out, &summary)?;
    }
    crate::outln!("{}", summary_table::human_summary(&summary));
    for warning in &summary.warnings {
        crate::errln!("warning: {warning}");
    }
    if merge::cut_off(&summary) && !args.allow_partial {
        crate::errln!(
            "echolab merge: a part's latency log was cut off, so the merged percentiles \
             miss requests; --allow-partial accepts it"
        );
        return Ok(ExitCode::from(EXIT_FAILED));
    }
    Ok(exit_code(&summary, args.max_error_rate))
}

/// 1 when the run measured nothing or found the server wrong, else 0: no connection
/// established, no request completed (when requests were asked for), a mismatched echo
/// (unless `--max-error-rate` tolerates it), or an error rate over `--max-error-rate`.
fn exit_code(summary: &measurements::LoadSummary, max_error_rate: Option<f64>) -> ExitCode {
    match failure(summary, max_error_rate) {
        Some(why) => {
            crate::errln!("echolab load: {why}");
            ExitCode::from(EXIT_FAILED)
        }
        None => ExitCode::SUCCESS,
    }
}

/// Why this summary is a failed run, if it is one.
fn failure(summary: &measurements::LoadSummary, max_error_rate: Option<f64>) -> Option<String> {
    if summary.connections_target == 0 {
        return None;
    }
    if summary.connections_established == 0 {
        return Some("no connection could be established".into());
    }
    let requests_asked = summary.requests_per_connection != Some(0);
    if requests_asked && summary.requests_completed == 0 {
        return Some(format!(
            "no request completed ({} errors)",
            summary.errors_total
        ));
    }
    if summary.connections_ended_early >= summary.connections_target {
        return Some(format!(
            "all {} connections failed ({} errors)",
            summary.connections_target, summary.errors_total
        ));
    }
    if let (Some(planned), Some(sent)) = (summary.requests_planned, summary.requests_sent) {
        if sent.saturating_mul(100) < planned {
            return Some(format!(
                "the open loop sent {sent} of the {planned} requests its schedule planned (under \
                 1 %): the rate asked is far above what this client and server carry, so the \
                 run measured something else"
            ));
        }
    }
    match max_error_rate {
        Some(bound) if summary.error_rate > bound => Some(format!(
            "error rate {:.4} is over --max-error-rate {bound}",
            summary.error_rate
        )),
        None if summary.mismatches > 0 => Some(format!(
            "{} echoes did not match what was sent (--max-error-rate tolerates a stated rate)",
            summary.mismatches
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn round_trip(args: &LoadArgs) {
        let line = args.to_args();
        assert_eq!(&LoadArgs::try_parse_from(&line).unwrap(), args, "{line:?}");
    }

    #[test]
    fn to_args_parses_back_with_defaults() {
        round_trip(&LoadArgs::try_parse_from(["load", "--target", "127.0.0.1:7000"]).unwrap());
    }

    #[test]
    fn to_args_parses_back_with_every_option_set() {
        let args = LoadArgs {
            target: "[::1]:9".into(),
            connections: 12_345,
            connect_rate: 250.5,
            connect_timeout: Duration::from_millis(1_500),
            response_timeout: Duration::from_micros(2_000_001),
            message: Some("hello, echo".into()),
            size: Some(4096),
            payload_file: Some(PathBuf::from("/tmp/payload file.bin")),
            seed: 42,
            requests: Some(7),
            duration: Some(Duration::from_secs(90)),
            warmup: Duration::from_millis(200),
            delay: Duration::from_nanos(1_500),
            pipeline: 3,
            rate: Some(0.1),
            hold: Some(Duration::from_millis(250)),
            reconnect: true,
            threads: Some(5),
            engine: Engine::Uring,
            processes: 4,
            source_addrs: Some("127.0.0.2-127.0.0.9".into()),
            shard: Some("1/3".into()),
            start_at: Some(1_700_000_000.123),
            out: Some(PathBuf::from("results/load")),
            max_error_rate: Some(0.01),
            quiet: true,
        };
        round_trip(&args);
    }
}
