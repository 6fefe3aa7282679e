//! results.csv's schema: every column declared once (name, type, unit, doc line), the
//! [`Row`] that fills them in header order, the [`Status`] of a row, and the thresholds
//! behind its flags.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::columns::{results_columns, Column};

// Every column of results.csv, once, in header order: a new column is one entry here
// (and docs/outputs.md's table, which a test holds to it) plus the code that fills it.
results_columns! {
    /// The model's label in the scenario (`epoll`, `threads`, a `--server-cmd` server's name).
    MODEL model: String, "";
    /// The step's name (`c1000-s64`, docs/scenarios.md); a stair's, or `-hold`.
    STEP step: String, "";
    /// The repetition of the step, 1-based.
    REPETITION repetition: u32, "index";
    /// Connections the step opens (a staircase's stair: all its stairs' together).
    CONNECTIONS connections: u64, "count";
    /// Bytes of one message.
    SIZE size: u64, "bytes";
    /// The pause between a connection's requests.
    DELAY_MS delay_ms: f64, "ms";
    /// Open loop: the requests per second offered; empty in the closed loop.
    RATE rate: Option<f64>, "requests/s";
    /// The server's worker threads when the scenario sets them; empty otherwise.
    WORKERS workers: Option<u64>, "count";
    /// How the repetition ended: `ok`, `failed`, `skipped`, `interrupted` or `not-run`.
    STATUS status: Status, "";
    /// Why it failed, was skipped or did not run; for an ok repetition whose open loop fell
    /// behind its schedule, why it is generator-bound; empty otherwise.
    FAILURE_REASON failure_reason: String, "";
    /// The load's measured time (its summary's `duration_s`, after a warm-up; a stair: its window).
    DURATION_S duration_s: Option<f64>, "s";
    /// Connections the load established (a stair: those open at the window's end).
    CONNECTIONS_ESTABLISHED connections_established: Option<u64>, "count";
    /// The most connections the server held at once (its summary's `max_concurrent`).
    MAX_CONCURRENT_SERVER max_concurrent_server: Option<u64>, "count";
    /// Requests completed.
    REQUESTS requests: Option<u64>, "count";
    /// Requests completed per second of the load.
    THROUGHPUT_RPS throughput_rps: Option<f64>, "requests/s";
    /// Echo bytes received per second of the load / 2^20.
    THROUGHPUT_MIB_S throughput_mib_s: Option<f64>, "MiB/s";
    /// The median response time (open loop: corrected).
    P50_US p50_us: Option<f64>, "µs";
    /// The 90th percentile of the response time.
    P90_US p90_us: Option<f64>, "µs";
    /// The 99th percentile of the response time.
    P99_US p99_us: Option<f64>, "µs";
    /// The 99.9th percentile of the response time.
    P999_US p999_us: Option<f64>, "µs";
    /// The longest response time.
    MAX_US max_us: Option<f64>, "µs";
    /// The load's `errors_total`: socket errors, mismatches and unexpected closes.
    ERRORS errors: Option<u64>, "count";
    /// `errors / (requests + errors)`.
    ERROR_RATE error_rate: Option<f64>, "fraction";
    /// Messages whose echo differed from what was sent in any byte.
    MISMATCHES mismatches: Option<u64>, "count";
    /// Server CPU (user + system, all threads and processes) over the load's wall time.
    SERVER_CPU_PCT server_cpu_pct: Option<f64>, "% of one core";
    /// Server user CPU time during the load.
    SERVER_CPU_USER_S server_cpu_user_s: Option<f64>, "s";
    /// Server system CPU time during the load.
    SERVER_CPU_SYS_S server_cpu_sys_s: Option<f64>, "s";
    /// The server's peak RSS (its whole process tree).
    SERVER_RSS_MAX_BYTES server_rss_max_bytes: Option<u64>, "bytes";
    /// (Peak RSS − the idle server's RSS before the load) / `max_concurrent_server`.
    SERVER_RSS_PER_CONN_BYTES server_rss_per_conn_bytes: Option<u64>, "bytes";
    /// The most threads of the server's process tree.
    SERVER_THREADS_MAX server_threads_max: Option<u64>, "count";
    /// The most open fds of the server's process tree.
    SERVER_FDS_MAX server_fds_max: Option<u64>, "count";
    /// Payload bytes the load wrote.
    CLIENT_BYTES_SENT client_bytes_sent: Option<u64>, "bytes";
    /// Echo bytes the load read.
    CLIENT_BYTES_RECEIVED client_bytes_received: Option<u64>, "bytes";
    /// Bytes the server read (its summary's `bytes_in`).
    SERVER_BYTES_IN server_bytes_in: Option<u64>, "bytes";
    /// Bytes the server wrote back (its summary's `bytes_out`).
    SERVER_BYTES_OUT server_bytes_out: Option<u64>, "bytes";
    /// Client bytes sent = server bytes in, and client bytes received = server bytes out.
    BYTES_MATCH bytes_match: Option<bool>, "true/false";
    /// The load generators' CPU over the load, in % of one core (all of them together).
    LOAD_CPU_PCT load_cpu_pct: Option<f64>, "% of one core";
    /// The generators used more than [`GENERATOR_BOUND_SHARE`] of the cores they were
    /// given, or an open loop sent under nine in ten of the requests its schedule planned
    /// (the rate asked was not offered): they, not the server, may have set the pace.
    GENERATOR_BOUND generator_bound: Option<bool>, "true/false";
    /// Mean response time (the load's histogram mean, corrected like the percentiles).
    MEAN_US mean_us: Option<f64>, "µs";
    /// A fixed workload: seconds until the last connection finished its requests.
    COMPLETION_S completion_s: Option<f64>, "s";
    /// Requests each connection sends (empty for timed runs).
    REQUESTS_PER_CONN requests_per_conn: Option<u64>, "count";
    /// Client hosts (network namespaces) the load was split over (empty: loopback).
    CLIENT_HOSTS client_hosts: Option<u32>, "count";
    /// TCP segments received per second of the load, from the kernel's counters.
    NET_SEGS_IN_PER_S net_segs_in_per_s: Option<f64>, "segments/s";
    /// TCP segments sent per second of the load.
    NET_SEGS_OUT_PER_S net_segs_out_per_s: Option<f64>, "segments/s";
    /// Segments retransmitted during the load.
    NET_RETRANS_SEGS net_retrans_segs: Option<u64>, "count";
    /// Resets sent during the load.
    NET_RESETS_SENT net_resets_sent: Option<u64>, "count";
    /// Connections dropped at a listen queue during the load.
    NET_LISTEN_DROPS net_listen_drops: Option<u64>, "count";
    /// Listen-queue overflows during the load.
    NET_LISTEN_OVERFLOWS net_listen_overflows: Option<u64>, "count";
    /// SYNs retransmitted during the load.
    NET_SYN_RETRANS net_syn_retrans: Option<u64>, "count";
    /// Whose traffic the counters include: `step` (a namespace of its own),
    /// `server-host` (the namespace lab's server) or `host` (the machine: other traffic too).
    NET_SCOPE net_scope: Option<String>, "";
    /// The mean response time of the last tenth of the step's connections to open (by
    /// `opened_unix` in load's connections.csv), each connection's mean counted once.
    JOINED_LAST_TENTH_MEAN_US joined_last_tenth_mean_us: Option<f64>, "µs";
    /// The same for the tenth of the connections that opened just before them.
    JOINED_NINTH_TENTH_MEAN_US joined_ninth_tenth_mean_us: Option<f64>, "µs";
    /// The spread of the request rate over the load: the standard deviation of the
    /// requests completed in each whole second over their mean (load's timeline.csv).
    REQUESTS_PER_S_CV requests_per_s_cv: Option<f64>, "fraction";
    /// A staircase's stair, 1-based (the hold row repeats the last); empty otherwise.
    STAIR stair: Option<u32>, "index";
    /// Seconds from the stair's batch starting until its connections were established
    /// (their first attempts: a reconnection is not the batch connecting).
    RAMP_S ramp_s: Option<f64>, "s";
    /// The batch's connections established per second of `ramp_s`.
    CONNECT_RATE_PER_S connect_rate_per_s: Option<f64>, "connections/s";
    /// The cost per connection (src/experiment/measurement/cost.rs): connections held at the hold
    /// (the server's fds gained).
    HELD_CONNECTIONS held_connections: Option<u64>, "count";
    /// Seconds to establish the held connections.
    ESTABLISH_S establish_s: Option<f64>, "s";
    /// `held_connections / establish_s`.
    ESTABLISH_PER_S establish_per_s: Option<f64>, "conn/s";
    /// Server RSS gained by the end of the hold, per connection held.
    SERVER_RSS_HOLD_PER_CONN_BYTES server_rss_hold_per_conn_bytes: Option<f64>, "bytes";
    /// Server CPU while holding, in % of one core.
    SERVER_CPU_HOLD_PCT server_cpu_hold_pct: Option<f64>, "% of one core";
    /// The load generators' RSS gained per connection they held.
    LOAD_RSS_PER_CONN_BYTES load_rss_per_conn_bytes: Option<f64>, "bytes";
    /// Machine-wide slab gained per connection (both ends and everything else on the machine).
    KERNEL_SLAB_PER_CONN_BYTES kernel_slab_per_conn_bytes: Option<f64>, "bytes";
    /// The unreclaimable part of that slab, per connection.
    KERNEL_UNRECLAIMABLE_PER_CONN_BYTES kernel_unreclaimable_per_conn_bytes: Option<f64>, "bytes";
    /// The server namespace's TCP buffer pages gained, per connection.
    KERNEL_TCP_MEM_PER_CONN_BYTES kernel_tcp_mem_per_conn_bytes: Option<f64>, "bytes";
    /// CPU time the machine spent outside the server's and the load generators' process
    /// trees during the load (from /proc/stat, steal included), in % of one core.
    INTERFERENCE_PCT interference_pct: Option<f64>, "% of one core";
    /// `interference_pct` above [`DISTURBED_PCT`]: the step shared the machine with other
    /// work, and never decides a verdict alone.
    DISTURBED disturbed: Option<bool>, "true/false";
    /// Server CPU seconds (user + system) over the load per request completed, in µs.
    SERVER_CPU_US_PER_REQUEST server_cpu_us_per_request: Option<f64>, "µs";
    /// The cost of a request (src/experiment/measurement/request_cost.rs): the server's system calls
    /// per request over the load. Empty where perf events are not allowed (not root).
    SERVER_SYSCALLS_PER_REQ server_syscalls_per_req: Option<f64>, "calls";
    /// Its wait calls (epoll_wait, select, poll, io_uring_enter) per request.
    SERVER_WAIT_CALLS_PER_REQ server_wait_calls_per_req: Option<f64>, "calls";
    /// Its read-class calls per request.
    SERVER_READ_CALLS_PER_REQ server_read_calls_per_req: Option<f64>, "calls";
    /// Its write-class calls per request.
    SERVER_WRITE_CALLS_PER_REQ server_write_calls_per_req: Option<f64>, "calls";
    /// Its threads' voluntary context switches per request.
    SERVER_VOLUNTARY_SWITCHES_PER_REQ server_voluntary_switches_per_req: Option<f64>, "switches";
    /// Its threads' involuntary context switches per request.
    SERVER_INVOLUNTARY_SWITCHES_PER_REQ server_involuntary_switches_per_req: Option<f64>, "switches";
    /// A staircase stair's connect deadline from its batch's start (the rule in
    /// src/experiment/orchestration/staircase/deadline.rs, `Deadline`); empty otherwise.
    STAIR_DEADLINE_S stair_deadline_s: Option<f64>, "s";
    /// `true` on the profiled repetition (`run --profile`: one more repetition under
    /// perf); the report shows its profiles and never judges it (no verdict, claim,
    /// compare or threshold); empty otherwise.
    PROFILED profiled: Option<bool>, "true/false";
}

impl Row {
    /// The folder holding this repetition's probe and load files.
    pub fn step_dir(&self, results_dir: &Path) -> PathBuf {
        results_dir
            .join(&self.model)
            .join(&self.step)
            .join(format!("rep-{}", self.repetition))
    }

    /// The row with a numeric column set (rounded where the column holds whole numbers),
    /// for tests that build rows by hand.
    #[cfg(test)]
    pub(crate) fn with(mut self, name: &str, value: f64) -> Row {
        let whole = COLUMNS.iter().any(|c| c.name == name && c.is_whole());
        let value = if whole { value.round() } else { value };
        if let Err(e) = self.set(name, &value.to_string()) {
            panic!("{name}: {e}");
        }
        self
    }
}

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

    /// docs/outputs.md's results.csv tables: the rows `| column | unit | meaning |` of the
    /// tables in every `## ` section whose heading names results.csv, in file order.
    fn documented_columns() -> Vec<[String; 3]> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/outputs.md");
        let text = std::fs::read_to_string(path).unwrap();
        let mut in_results = false;
        let mut rows = Vec::new();
        for line in text.lines() {
            if let Some(heading) = line.strip_prefix("## ") {
                in_results = heading.contains("results.csv");
            }
            let cells: Vec<String> = line.split('|').map(|c| c.trim().to_string()).collect();
            let is_row = cells.len() == 5 && cells[0].is_empty() && cells[4].is_empty();
            if in_results && is_row && cells[1] != "column" && !cells[1].starts_with("---") {
                rows.push([cells[1].clone(), cells[2].clone(), cells[3].clone()]);
            }
        }
        rows
    }

    #[test]
    fn docs_outputs_md_documents_every_column_in_order_with_its_unit() {
        let documented = documented_columns();
        let names_and_units: Vec<[&str; 2]> = documented
            .iter()
            .map(|[name, unit, _]| [name.as_str(), unit.as_str()])
            .collect();
        let declared: Vec<[&str; 2]> = COLUMNS.iter().map(|c| [c.name, c.unit]).collect();
        let table: String = COLUMNS
            .iter()
            .map(|c| format!("| {} | {} | {} |\n", c.name, c.unit, c.doc()))
            .collect();
        assert_eq!(
            names_and_units, declared,
            "docs/outputs.md's results.csv tables differ from the columns declared in \
             src/results/row.rs, which are:\n{table}"
        );
        for [name, _, meaning] in &documented {
            assert!(
                !meaning.is_empty(),
                "docs/outputs.md: {name} has no meaning"
            );
        }
    }

    #[test]
    fn a_column_is_declared_with_its_type_and_doc() {
        let rate = COLUMNS.iter().find(|c| c.name == column::RATE).unwrap();
        assert_eq!((rate.kind, rate.unit), ("Option<f64>", "requests/s"));
        assert_eq!(
            rate.doc(),
            "Open loop: the requests per second offered; empty in the closed loop."
        );
        let net_scope = COLUMNS
            .iter()
            .find(|c| c.name == column::NET_SCOPE)
            .unwrap();
        assert!(
            net_scope.doc().contains("own), `server-host`"),
            "{}",
            net_scope.doc()
        );
        assert_eq!(COLUMNS.len(), RESULTS_HEADER.len());
    }
}
