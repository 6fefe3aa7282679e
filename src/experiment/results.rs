//! results.csv: one [`Row`] per repetition of a step, its column names (shared with
//! the report, which reads the file back), the [`Status`] of a row, and the
//! per-model comparison table printed at the end of a run.

use std::fmt;
use std::fs::File;
use std::path::Path;
use std::str::FromStr;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::units::trim_float;

/// The name of every results.csv column, written by [`ResultsCsv`] and read by the report.
/// Each is the name of the [`Row`] field that fills it (a unit test holds them together).
pub mod column {
    pub const MODEL: &str = "model";
    pub const STEP: &str = "step";
    pub const REPETITION: &str = "repetition";
    pub const CONNECTIONS: &str = "connections";
    pub const SIZE: &str = "size";
    pub const DELAY_MS: &str = "delay_ms";
    pub const RATE: &str = "rate";
    pub const WORKERS: &str = "workers";
    pub const STATUS: &str = "status";
    pub const FAILURE_REASON: &str = "failure_reason";
    pub const DURATION_S: &str = "duration_s";
    pub const CONNECTIONS_ESTABLISHED: &str = "connections_established";
    pub const MAX_CONCURRENT_SERVER: &str = "max_concurrent_server";
    pub const REQUESTS: &str = "requests";
    pub const THROUGHPUT_RPS: &str = "throughput_rps";
    pub const THROUGHPUT_MIB_S: &str = "throughput_mib_s";
    pub const P50_US: &str = "p50_us";
    pub const P90_US: &str = "p90_us";
    pub const P99_US: &str = "p99_us";
    pub const P999_US: &str = "p999_us";
    pub const MAX_US: &str = "max_us";
    pub const ERRORS: &str = "errors";
    pub const ERROR_RATE: &str = "error_rate";
    pub const MISMATCHES: &str = "mismatches";
    pub const SERVER_CPU_PCT: &str = "server_cpu_pct";
    pub const SERVER_CPU_USER_S: &str = "server_cpu_user_s";
    pub const SERVER_CPU_SYS_S: &str = "server_cpu_sys_s";
    pub const SERVER_RSS_MAX_BYTES: &str = "server_rss_max_bytes";
    pub const SERVER_RSS_PER_CONN_BYTES: &str = "server_rss_per_conn_bytes";
    pub const SERVER_THREADS_MAX: &str = "server_threads_max";
    pub const SERVER_FDS_MAX: &str = "server_fds_max";
    pub const CLIENT_BYTES_SENT: &str = "client_bytes_sent";
    pub const CLIENT_BYTES_RECEIVED: &str = "client_bytes_received";
    pub const SERVER_BYTES_IN: &str = "server_bytes_in";
    pub const SERVER_BYTES_OUT: &str = "server_bytes_out";
    pub const BYTES_MATCH: &str = "bytes_match";
    pub const LOAD_CPU_PCT: &str = "load_cpu_pct";
    pub const GENERATOR_BOUND: &str = "generator_bound";
    pub const MEAN_US: &str = "mean_us";
    pub const COMPLETION_S: &str = "completion_s";
    pub const REQUESTS_PER_CONN: &str = "requests_per_conn";
    pub const CLIENT_HOSTS: &str = "client_hosts";
    pub const NET_SEGS_IN_PER_S: &str = "net_segs_in_per_s";
    pub const NET_SEGS_OUT_PER_S: &str = "net_segs_out_per_s";
    pub const NET_RETRANS_SEGS: &str = "net_retrans_segs";
    pub const NET_RESETS_SENT: &str = "net_resets_sent";
    pub const NET_LISTEN_DROPS: &str = "net_listen_drops";
    pub const NET_LISTEN_OVERFLOWS: &str = "net_listen_overflows";
    pub const NET_SYN_RETRANS: &str = "net_syn_retrans";
    pub const NET_SCOPE: &str = "net_scope";
    pub const STAIR: &str = "stair";
    pub const RAMP_S: &str = "ramp_s";
    pub const CONNECT_RATE_PER_S: &str = "connect_rate_per_s";
    pub const HELD_CONNECTIONS: &str = "held_connections";
    pub const ESTABLISH_S: &str = "establish_s";
    pub const ESTABLISH_PER_S: &str = "establish_per_s";
    pub const SERVER_RSS_HOLD_PER_CONN_BYTES: &str = "server_rss_hold_per_conn_bytes";
    pub const SERVER_CPU_HOLD_PCT: &str = "server_cpu_hold_pct";
    pub const LOAD_RSS_PER_CONN_BYTES: &str = "load_rss_per_conn_bytes";
    pub const KERNEL_SLAB_PER_CONN_BYTES: &str = "kernel_slab_per_conn_bytes";
    pub const KERNEL_UNRECLAIMABLE_PER_CONN_BYTES: &str = "kernel_unreclaimable_per_conn_bytes";
    pub const KERNEL_TCP_MEM_PER_CONN_BYTES: &str = "kernel_tcp_mem_per_conn_bytes";
    pub const INTERFERENCE_PCT: &str = "interference_pct";
    pub const DISTURBED: &str = "disturbed";
    pub const SERVER_CPU_US_PER_REQUEST: &str = "server_cpu_us_per_request";
    pub const SERVER_SYSCALLS_PER_REQ: &str = "server_syscalls_per_req";
    pub const SERVER_WAIT_CALLS_PER_REQ: &str = "server_wait_calls_per_req";
    pub const SERVER_READ_CALLS_PER_REQ: &str = "server_read_calls_per_req";
    pub const SERVER_WRITE_CALLS_PER_REQ: &str = "server_write_calls_per_req";
    pub const SERVER_VOLUNTARY_SWITCHES_PER_REQ: &str = "server_voluntary_switches_per_req";
    pub const SERVER_INVOLUNTARY_SWITCHES_PER_REQ: &str = "server_involuntary_switches_per_req";
}

/// The header of results.csv, in order.
pub const RESULTS_HEADER: [&str; 71] = [
    column::MODEL,
    column::STEP,
    column::REPETITION,
    column::CONNECTIONS,
    column::SIZE,
    column::DELAY_MS,
    column::RATE,
    column::WORKERS,
    column::STATUS,
    column::FAILURE_REASON,
    column::DURATION_S,
    column::CONNECTIONS_ESTABLISHED,
    column::MAX_CONCURRENT_SERVER,
    column::REQUESTS,
    column::THROUGHPUT_RPS,
    column::THROUGHPUT_MIB_S,
    column::P50_US,
    column::P90_US,
    column::P99_US,
    column::P999_US,
    column::MAX_US,
    column::ERRORS,
    column::ERROR_RATE,
    column::MISMATCHES,
    column::SERVER_CPU_PCT,
    column::SERVER_CPU_USER_S,
    column::SERVER_CPU_SYS_S,
    column::SERVER_RSS_MAX_BYTES,
    column::SERVER_RSS_PER_CONN_BYTES,
    column::SERVER_THREADS_MAX,
    column::SERVER_FDS_MAX,
    column::CLIENT_BYTES_SENT,
    column::CLIENT_BYTES_RECEIVED,
    column::SERVER_BYTES_IN,
    column::SERVER_BYTES_OUT,
    column::BYTES_MATCH,
    column::LOAD_CPU_PCT,
    column::GENERATOR_BOUND,
    column::MEAN_US,
    column::COMPLETION_S,
    column::REQUESTS_PER_CONN,
    column::CLIENT_HOSTS,
    column::NET_SEGS_IN_PER_S,
    column::NET_SEGS_OUT_PER_S,
    column::NET_RETRANS_SEGS,
    column::NET_RESETS_SENT,
    column::NET_LISTEN_DROPS,
    column::NET_LISTEN_OVERFLOWS,
    column::NET_SYN_RETRANS,
    column::NET_SCOPE,
    column::STAIR,
    column::RAMP_S,
    column::CONNECT_RATE_PER_S,
    column::HELD_CONNECTIONS,
    column::ESTABLISH_S,
    column::ESTABLISH_PER_S,
    column::SERVER_RSS_HOLD_PER_CONN_BYTES,
    column::SERVER_CPU_HOLD_PCT,
    column::LOAD_RSS_PER_CONN_BYTES,
    column::KERNEL_SLAB_PER_CONN_BYTES,
    column::KERNEL_UNRECLAIMABLE_PER_CONN_BYTES,
    column::KERNEL_TCP_MEM_PER_CONN_BYTES,
    column::INTERFERENCE_PCT,
    column::DISTURBED,
    column::SERVER_CPU_US_PER_REQUEST,
    column::SERVER_SYSCALLS_PER_REQ,
    column::SERVER_WAIT_CALLS_PER_REQ,
    column::SERVER_READ_CALLS_PER_REQ,
    column::SERVER_WRITE_CALLS_PER_REQ,
    column::SERVER_VOLUNTARY_SWITCHES_PER_REQ,
    column::SERVER_INVOLUNTARY_SWITCHES_PER_REQ,
];

/// How a repetition of a step ended; results.csv holds the lowercase name.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran and passed the failure rule.
    #[default]
    Ok,
    /// It ran and the failure rule tripped (`failure_reason` says why).
    Failed,
    /// Not run: at least as heavy as a step that failed.
    Skipped,
    /// Cut short by SIGINT or SIGTERM.
    Interrupted,
    /// Never started: what the model needs is missing here (`failure_reason` says what).
    #[serde(rename = "not-run")]
    NotRun,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Ok,
        Status::Failed,
        Status::Skipped,
        Status::Interrupted,
        Status::NotRun,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Interrupted => "interrupted",
            Status::NotRun => "not-run",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Status, String> {
        Status::ALL
            .into_iter()
            .find(|status| status.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Status::ALL.iter().map(|s| s.name()).collect();
                format!("'{s}' is not one of {}", names.join(", "))
            })
    }
}

/// One row of results.csv (fields in header order; None is an empty cell).
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub model: String,
    pub step: String,
    pub repetition: u32,
    pub connections: u64,
    pub size: u64,
    pub delay_ms: f64,
    pub rate: Option<f64>,
    pub workers: Option<u64>,
    pub status: Status,
    pub failure_reason: String,
    pub duration_s: Option<f64>,
    pub connections_established: Option<u64>,
    pub max_concurrent_server: Option<u64>,
    pub requests: Option<u64>,
    pub throughput_rps: Option<f64>,
    pub throughput_mib_s: Option<f64>,
    pub p50_us: Option<f64>,
    pub p90_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub errors: Option<u64>,
    pub error_rate: Option<f64>,
    pub mismatches: Option<u64>,
    pub server_cpu_pct: Option<f64>,
    pub server_cpu_user_s: Option<f64>,
    pub server_cpu_sys_s: Option<f64>,
    pub server_rss_max_bytes: Option<u64>,
    pub server_rss_per_conn_bytes: Option<u64>,
    pub server_threads_max: Option<u64>,
    pub server_fds_max: Option<u64>,
    pub client_bytes_sent: Option<u64>,
    pub client_bytes_received: Option<u64>,
    pub server_bytes_in: Option<u64>,
    pub server_bytes_out: Option<u64>,
    pub bytes_match: Option<bool>,
    /// The load generators' CPU over the load, in % of one core (all of them together).
    pub load_cpu_pct: Option<f64>,
    /// The generators used more than [`GENERATOR_BOUND_SHARE`] of the cores they were
    /// given: they, not the server, may have set the pace.
    pub generator_bound: Option<bool>,
    /// Mean response time (the load's histogram mean, corrected like the percentiles).
    pub mean_us: Option<f64>,
    /// A fixed workload: seconds until the last connection finished its requests.
    pub completion_s: Option<f64>,
    /// Requests each connection sends (empty for timed runs).
    pub requests_per_conn: Option<u64>,
    /// Client hosts (network namespaces) the load was split over (empty: loopback).
    pub client_hosts: Option<u32>,
    /// TCP segments received and sent per second of the load, from the kernel's counters.
    pub net_segs_in_per_s: Option<f64>,
    pub net_segs_out_per_s: Option<f64>,
    /// Counts over the load: retransmitted segments, resets sent, listen-queue drops
    /// and overflows, SYN retransmits.
    pub net_retrans_segs: Option<u64>,
    pub net_resets_sent: Option<u64>,
    pub net_listen_drops: Option<u64>,
    pub net_listen_overflows: Option<u64>,
    pub net_syn_retrans: Option<u64>,
    /// Whose traffic the counters include: `step` (a namespace of its own),
    /// `server-host` (the namespace lab's server) or `host` (the machine: other traffic too).
    pub net_scope: Option<String>,
    /// A staircase's stair, 1-based (the hold row repeats the last); empty otherwise.
    pub stair: Option<u32>,
    /// Seconds from the stair's batch starting until its connections were established.
    pub ramp_s: Option<f64>,
    /// The batch's connections established per second of `ramp_s`.
    pub connect_rate_per_s: Option<f64>,

    /// The cost per connection (src/experiment/cost.rs): connections held at the hold
    /// (the server's fds gained), seconds to establish them and their rate.
    pub held_connections: Option<u64>,
    pub establish_s: Option<f64>,
    pub establish_per_s: Option<f64>,
    /// Server RSS gained by the end of the hold, per connection held.
    pub server_rss_hold_per_conn_bytes: Option<f64>,
    /// Server CPU while holding, in % of one core.
    pub server_cpu_hold_pct: Option<f64>,
    /// The load generators' RSS gained per connection they held.
    pub load_rss_per_conn_bytes: Option<f64>,
    /// Kernel memory gained per connection: machine-wide slab and its unreclaimable
    /// part (both ends and everything else on the machine), and the server
    /// namespace's TCP buffer pages.
    pub kernel_slab_per_conn_bytes: Option<f64>,
    pub kernel_unreclaimable_per_conn_bytes: Option<f64>,
    pub kernel_tcp_mem_per_conn_bytes: Option<f64>,
    /// CPU time the machine spent outside the server's and the load generators' process
    /// trees during the load (from /proc/stat, steal included), in % of one core.
    pub interference_pct: Option<f64>,
    /// `interference_pct` above [`DISTURBED_PCT`]: the step shared the machine with other
    /// work, and never decides a verdict alone.
    pub disturbed: Option<bool>,
    /// Server CPU seconds (user + system) over the load per request completed, in µs.
    pub server_cpu_us_per_request: Option<f64>,

    /// The cost of a request (src/experiment/request_cost.rs), per request over the load:
    /// the server's system calls, its wait (epoll_wait, select, poll, io_uring_enter),
    /// read-class and write-class calls, and its threads' voluntary and involuntary
    /// context switches. Empty where perf events are not allowed (not root).
    pub server_syscalls_per_req: Option<f64>,
    pub server_wait_calls_per_req: Option<f64>,
    pub server_read_calls_per_req: Option<f64>,
    pub server_write_calls_per_req: Option<f64>,
    pub server_voluntary_switches_per_req: Option<f64>,
    pub server_involuntary_switches_per_req: Option<f64>,
}

/// Above this much CPU outside the server and the generator (% of one core), a step is
/// disturbed. The runner's own sampling costs 1–3 %; a tenth of a core is more than
/// the differences in server CPU the quick comparison measures between models (see
/// docs/report.md).
pub const DISTURBED_PCT: f64 = 10.0;

/// Above this share of the cores it was given, a load generator counts as saturated.
pub const GENERATOR_BOUND_SHARE: f64 = 0.9;

/// Whether a generator that used `cpu_pct` (% of one core) of `cores` cores was saturated.
pub fn generator_bound(cpu_pct: f64, cores: usize) -> bool {
    cpu_pct > GENERATOR_BOUND_SHARE * 100.0 * cores.max(1) as f64
}

/// results.csv, flushed after every row so an interrupted run keeps what it finished.
pub struct ResultsCsv {
    writer: csv::Writer<File>,
}

impl ResultsCsv {
    pub fn create(path: &Path) -> anyhow::Result<ResultsCsv> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        writer.write_record(RESULTS_HEADER)?;
        writer.flush()?;
        Ok(ResultsCsv { writer })
    }

    pub fn append(&mut self, row: &Row) -> anyhow::Result<()> {
        self.writer.serialize(row)?;
        self.writer.flush()?;
        Ok(())
    }
}

/// The per-model comparison printed at the end of a run.
pub fn comparison_table(rows: &[Row], models: &[String]) -> String {
    let mut out = String::new();
    let header = [
        "model",
        "best req/s",
        "p99 (heaviest ok)",
        "max conns",
        "CPU %",
        "RSS/conn",
        "status",
    ];
    let mut table: Vec<[String; 7]> = vec![header.map(str::to_string)];
    for model in models {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.model == model).collect();
        if mine.is_empty() {
            continue;
        }
        let ok: Vec<&&Row> = mine.iter().filter(|r| r.status == Status::Ok).collect();
        let best = ok
            .iter()
            .filter_map(|r| r.throughput_rps)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
        let heaviest = ok.last();
        let max_conns = ok.iter().filter_map(|r| r.connections_established).max();
        let status = match mine
            .iter()
            .find(|r| !matches!(r.status, Status::Ok | Status::Skipped))
        {
            None => "ok".to_string(),
            Some(r) if r.status == Status::NotRun => format!("not run: {}", r.failure_reason),
            Some(r) => format!("{} at {}: {}", r.status, r.step, r.failure_reason),
        };
        let dash = || "-".to_string();
        table.push([
            model.clone(),
            best.map_or_else(dash, |t| trim_float(t.round())),
            heaviest
                .and_then(|r| r.p99_us)
                .map_or_else(dash, |p| format!("{} us", trim_float(p.round()))),
            max_conns.map_or_else(dash, |c| c.to_string()),
            heaviest
                .and_then(|r| r.server_cpu_pct)
                .map_or_else(dash, |c| format!("{c:.0}")),
            heaviest
                .and_then(|r| r.server_rss_per_conn_bytes)
                .map_or_else(dash, human_bytes),
            status,
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
        for (i, w) in widths.iter().enumerate() {
            if i == 0 {
                out += &format!("{:<w$}  ", r[i]);
            } else {
                out += &format!("{:>w$}  ", r[i]);
            }
        }
        out += &r[6];
        out += "\n";
    }
    out
}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_the_row_fields_in_order() {
        // serde names the columns after Row's fields; RESULTS_HEADER must say the same.
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(Row::default()).unwrap();
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), RESULTS_HEADER.join(","));
    }

    #[test]
    fn status_reads_back_what_is_written() {
        for status in Status::ALL {
            let mut writer = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            writer.serialize([status]).unwrap();
            let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
            assert_eq!(text.trim_end(), status.name());
            assert_eq!(status.name().parse::<Status>(), Ok(status));
        }
        assert_eq!(
            "fine".parse::<Status>().unwrap_err(),
            "'fine' is not one of ok, failed, skipped, interrupted, not-run"
        );
    }

    #[test]
    fn comparison_table_summarises_each_model() {
        let row = |model: &str, step: &str, status: Status, rps: f64, conns: u64| Row {
            model: model.into(),
            step: step.into(),
            status,
            failure_reason: if status == Status::Failed {
                "why".into()
            } else {
                String::new()
            },
            throughput_rps: (status == Status::Ok).then_some(rps),
            connections_established: (status == Status::Ok).then_some(conns),
            p99_us: Some(1234.4),
            server_cpu_pct: Some(87.6),
            server_rss_per_conn_bytes: Some(2048),
            ..Row::default()
        };
        let rows = [
            row("select", "c500", Status::Ok, 900.0, 500),
            row("select", "c1100", Status::Failed, 0.0, 0),
            row("select", "c1500", Status::Skipped, 0.0, 0),
            row("epoll", "c500", Status::Ok, 1000.0, 500),
            row("epoll", "c1100", Status::Ok, 800.0, 1100),
        ];
        let table = comparison_table(&rows, &["select".into(), "epoll".into()]);
        let lines: Vec<&str> = table.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "model   best req/s  p99 (heaviest ok)  max conns  CPU %  RSS/conn  status",
                "select         900            1234 us        500     88   2.0 KiB  failed at c1100: why",
                "epoll         1000            1234 us       1100     88   2.0 KiB  ok",
            ]
        );
    }
}
