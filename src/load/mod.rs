//! The load generator: puts many clients on any RFC 862 echo server and measures it honestly.
//!
//! - [`schedule`]: the validated plan (connections, payload, closed/open loop, ramp, shards);
//! - [`preflight`]: checks the limits that cap the connection count before anything is opened;
//! - [`engine`]: one epoll event loop per thread driving the connections;
//! - [`record`]: histograms, counters and the output files, written as the run goes;
//! - [`multi`]: `--processes` children and `merge` of several result directories.

/// Calls a libc function and turns its `-1` into the `errno` as an [`std::io::Error`]; the
/// module's own copy of `crate::syscall!`, private so its arguments are this module's to check.
macro_rules! libc_call {
    ($fn: ident ( $($arg: expr),* $(,)* ) ) => {{
        // SAFETY: every call site passes arguments valid for this libc call (see each site).
        #[allow(unused_unsafe)]
        let res = unsafe { libc::$fn($($arg, )*) };
        if res == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(res)
        }
    }};
}

pub mod engine;
pub mod multi;
pub mod preflight;
pub mod record;
pub mod schedule;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::units::{parse_duration, parse_size};

/// Exit code of a usage error (as clap's own parse errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a run that failed `--max-error-rate` or could not run at all.
pub const EXIT_FAILED: u8 = 1;

fn duration_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

fn size_arg(text: &str) -> Result<u64, String> {
    parse_size(text)
}

/// `echolab load`: generate load against an echo server, verify every byte, measure latency.
#[derive(clap::Args, Debug, Clone)]
#[command(
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
    /// Connections opened per second, a ramp (0 = as fast as possible)
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
    /// Message read from a file (1 B to 16 MiB)
    #[arg(long, value_name = "PATH")]
    pub payload_file: Option<PathBuf>,
    /// Seed of the random payload (--size)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Requests per connection (default: run for --duration, 10s if neither is given)
    #[arg(long, short = 'n')]
    pub requests: Option<u64>,
    /// Stop sending after this long (in-flight echoes get one more second)
    #[arg(long, short = 'd', value_parser = duration_arg)]
    pub duration: Option<Duration>,
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
}

/// Prints a usage error the way clap does and returns exit code 2.
pub(crate) fn usage_error(verb: &str, message: &str) -> ExitCode {
    eprintln!(
        "error: {message}\n\nUsage: echolab {verb} {}\n\nFor more information, try '--help'.",
        if verb == "load" {
            "--target HOST:PORT [OPTIONS]"
        } else {
            "AGENT_DIR... --out DIR"
        }
    );
    ExitCode::from(EXIT_USAGE)
}

pub fn main(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let plan = match schedule::Plan::from_args(&args) {
        Ok(plan) => plan,
        Err(message) => return Ok(usage_error("load", &message)),
    };
    crate::sys::ignore_sigpipe();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let outcome = if args.processes > 1 {
        multi::run_processes(&args, &plan, show_progress)?
    } else {
        engine::run(&plan, args.out.as_deref(), show_progress)?
    };
    let Some(summary) = outcome else {
        return Ok(ExitCode::from(EXIT_FAILED));
    };
    println!("{}", record::human_summary(&summary));
    Ok(exit_code(&summary, args.max_error_rate))
}

pub fn merge_main(args: MergeArgs) -> anyhow::Result<ExitCode> {
    if let Some(rate) = args.max_error_rate {
        if !(0.0..=1.0).contains(&rate) {
            return Ok(usage_error(
                "merge",
                "--max-error-rate must be between 0 and 1",
            ));
        }
    }
    for dir in &args.dirs {
        if !dir.join("summary.json").is_file() {
            return Ok(usage_error(
                "merge",
                &format!("{} has no summary.json", dir.display()),
            ));
        }
    }
    let summary = multi::merge_dirs(&args.dirs, &args.out)?;
    println!("{}", record::human_summary(&summary));
    Ok(exit_code(&summary, args.max_error_rate))
}

/// 1 when nothing could be measured or the error rate is over the bound, else 0.
fn exit_code(summary: &record::LoadSummary, max_error_rate: Option<f64>) -> ExitCode {
    if summary.connections_established == 0 && summary.connections_target > 0 {
        eprintln!("echolab load: no connection could be established");
        return ExitCode::from(EXIT_FAILED);
    }
    if let Some(bound) = max_error_rate {
        if summary.error_rate > bound {
            eprintln!(
                "echolab load: error rate {:.4} is over --max-error-rate {bound}",
                summary.error_rate
            );
            return ExitCode::from(EXIT_FAILED);
        }
    }
    ExitCode::SUCCESS
}
