//! Measurements and the output files: counters, HdrHistograms (microseconds), per-connection
//! records, and the writers of summary.json, connections.csv, timeline.csv, latency.hlog and
//! percentiles.csv. Files are written as the run goes so a cut-short run leaves valid results.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Connection-level errors by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorCounts {
    pub refused: u64,
    pub reset: u64,
    pub timeout: u64,
    pub emfile: u64,
    pub eaddrnotavail: u64,
    pub other: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.refused + self.reset + self.timeout + self.emfile + self.eaddrnotavail + self.other
    }

    pub fn add(&mut self, other: &ErrorCounts) {
        self.refused += other.refused;
        self.reset += other.reset;
        self.timeout += other.timeout;
        self.emfile += other.emfile;
        self.eaddrnotavail += other.eaddrnotavail;
        self.other += other.other;
    }

    pub fn count(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Refused => self.refused += 1,
            ErrorKind::Reset => self.reset += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Emfile => self.emfile += 1,
            ErrorKind::AddrNotAvail => self.eaddrnotavail += 1,
            ErrorKind::Other => self.other += 1,
            ErrorKind::Closed => {}
        }
    }
}

/// Why a connection ended badly. `Closed` is the server closing while the client still
/// expected echoes or had requests to send (counted as `unexpected_closes`, not in `errors`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ErrorKind {
    Refused,
    Reset,
    Timeout,
    Emfile,
    AddrNotAvail,
    Other,
    Closed,
}

impl ErrorKind {
    pub fn from_errno(errno: i32) -> ErrorKind {
        match errno {
            libc::ECONNREFUSED => ErrorKind::Refused,
            libc::ECONNRESET | libc::EPIPE | libc::ECONNABORTED => ErrorKind::Reset,
            libc::ETIMEDOUT => ErrorKind::Timeout,
            libc::EMFILE | libc::ENFILE => ErrorKind::Emfile,
            // Port exhaustion shows as either, depending on where the kernel ran out.
            libc::EADDRNOTAVAIL | libc::EADDRINUSE => ErrorKind::AddrNotAvail,
            _ => ErrorKind::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Emfile => "emfile",
            ErrorKind::AddrNotAvail => "eaddrnotavail",
            ErrorKind::Other => "other",
            ErrorKind::Closed => "closed",
        }
    }
}

/// One row of connections.csv: one TCP connection (or failed attempt) of a connection slot.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LoadConnRecord {
    pub conn_id: u64,
    pub attempt: u32,
    /// An address, not its text: a held connection's record keeps no heap allocation.
    pub local_addr: Option<IpAddr>,
    pub local_port: u16,
    pub connect_us: u64,
    pub opened_unix: f64,
    pub closed_unix: f64,
    pub requests: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub total_response_us: u64,
    pub mean_response_us: f64,
    pub mismatches: u64,
    pub short_echoes: u64,
    pub errors: u64,
    pub error_kind: String,
    pub end: String,
}

/// Counters of one interval (or of the whole run).
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Requests echoed intact and measured (sent after the warm-up).
    pub requests: u64,
    /// Requests echoed intact that were sent in the warm-up.
    pub warmup_requests: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_verified: u64,
    pub mismatches: u64,
    pub short_echoes: u64,
    pub unexpected_closes: u64,
    pub errors: ErrorCounts,
    pub connect_attempts: u64,
    pub established: u64,
    pub failed: u64,
    /// Connection slots that ended before finishing their requests or the duration.
    pub ended_early: u64,
    /// Open loop: requests released by the schedule, and those released over 5 ms late.
    pub releases: u64,
    pub late_releases: u64,
    /// Messages started (written in part or whole).
    pub sends: u64,
    pub max_lateness_ns: u64,
    /// When the last connection finished its requests (ns since the run started; 0: none did).
    pub last_finished_ns: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.requests += o.requests;
        self.warmup_requests += o.warmup_requests;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.bytes_verified += o.bytes_verified;
        self.mismatches += o.mismatches;
        self.short_echoes += o.short_echoes;
        self.unexpected_closes += o.unexpected_closes;
        self.errors.add(&o.errors);
        self.connect_attempts += o.connect_attempts;
        self.established += o.established;
        self.failed += o.failed;
        self.ended_early += o.ended_early;
        self.releases += o.releases;
        self.late_releases += o.late_releases;
        self.sends += o.sends;
        self.max_lateness_ns = self.max_lateness_ns.max(o.max_lateness_ns);
        self.last_finished_ns = self.last_finished_ns.max(o.last_finished_ns);
    }

    /// Connection errors + mismatched messages + unexpected closes.
    pub fn errors_total(&self) -> u64 {
        self.errors.total() + self.mismatches + self.unexpected_closes
    }
}

pub fn new_histogram() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits: small while latencies are small.
    Histogram::new(3).expect("3 significant digits is a valid histogram precision")
}

/// Records a latency. Not `saturating_record`: on an auto-resizing histogram that clamps to the
/// current top instead of growing.
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    // Capped at a day, far beyond any run, so the record cannot fail.
    let _ = h.record(us.min(86_400_000_000));
}

/// What one thread hands to the recorder: everything measured since its last hand-over.
#[derive(Clone, Debug)]
pub struct Interval {
    pub counters: Counters,
    /// Latency in microseconds (open loop: from the intended send time).
    pub latency: Histogram<u64>,
    /// Open loop: latency from the actual send time.
    pub latency_raw: Histogram<u64>,
    pub records: Vec<LoadConnRecord>,
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            counters: Counters::default(),
            latency: new_histogram(),
            latency_raw: new_histogram(),
            records: Vec::new(),
        }
    }
}

impl Interval {
    pub fn add(&mut self, other: &mut Interval) {
        self.counters.add(&other.counters);
        self.latency
            .add(&other.latency)
            .expect("auto-resizing histograms always add");
        self.latency_raw
            .add(&other.latency_raw)
            .expect("auto-resizing histograms always add");
        self.records.append(&mut other.records);
    }

    pub fn reset(&mut self) {
        self.counters = Counters::default();
        self.latency.reset();
        self.latency_raw.reset();
    }

    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
            && self.latency_raw.is_empty()
            && self.records.is_empty()
            && self.counters.requests == 0
            && self.counters.warmup_requests == 0
            && self.counters.bytes_sent == 0
            && self.counters.bytes_received == 0
            && self.counters.connect_attempts == 0
            && self.counters.errors_total() == 0
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl LatencyStats {
    pub fn of(h: &Histogram<u64>) -> LatencyStats {
        if h.is_empty() {
            return LatencyStats::default();
        }
        LatencyStats {
            count: h.len(),
            min: h.min(),
            mean: (h.mean() * 10.0).round() / 10.0,
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// summary.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LoadSummary {
    pub echolab_version: String,
    pub target: String,
    pub mode: String,
    /// False while the run is going (the file is rewritten every second).
    pub complete: bool,
    pub started_unix: f64,
    pub ended_unix: f64,
    pub duration_s: f64,
    pub interrupted: bool,
    pub cut_short_reason: Option<String>,
    pub connections_target: u64,
    pub connections_established: u64,
    pub connections_failed: u64,
    pub connect_attempts: u64,
    pub connections_ended_early: u64,
    pub max_concurrent: u64,
    pub requests_completed: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_verified: u64,
    pub mismatches: u64,
    pub short_echoes: u64,
    pub unexpected_closes: u64,
    pub errors: ErrorCounts,
    pub errors_total: u64,
    pub error_rate: f64,
    pub throughput_rps: f64,
    pub throughput_bytes_per_s: f64,
    pub latency_us: LatencyStats,
    pub latency_raw_us: Option<LatencyStats>,
    pub client_cpu_user_s: f64,
    pub client_cpu_sys_s: f64,
    pub warnings: Vec<String>,
    pub message_bytes: u64,
    pub requests_per_connection: Option<u64>,
    pub rate: Option<f64>,
    pub pipeline: u64,
    pub threads: u64,
    #[serde(default)] // `--engine`: the event loops' kernel interface
    pub engine: String,
    pub processes: u64,
    pub shard: Option<String>,
    /// Result directories merged into this one (empty for a single process).
    pub merged_from: Vec<String>,
    /// A fixed workload (`--requests`): seconds from the start until the last connection
    /// finished its requests (holding time excluded); None for timed runs or none finished.
    #[serde(default)]
    pub completion_s: Option<f64>,
    /// Open loop: requests the schedule planned by the end, and how many were sent; a
    /// generator that fell behind (a rate above what the server takes) sent fewer.
    #[serde(default)]
    pub requests_planned: Option<u64>,
    #[serde(default)]
    pub requests_sent: Option<u64>,
    /// `--warmup`: seconds run before the measured `duration_s`, sent and verified but not
    /// measured; the requests sent in it and echoed intact.
    #[serde(default)]
    pub warmup_s: f64,
    #[serde(default)]
    pub warmup_requests: u64,
}

/// Whether an open loop that sent `sent` of the `planned` requests fell behind its
/// schedule: under nine in ten sent, the rate asked was not offered.
pub fn fell_behind(sent: u64, planned: u64) -> bool {
    sent.saturating_mul(10) < planned.saturating_mul(9)
}

impl LoadSummary {
    /// Why this open loop's figures measured the generator rather than the server: it
    /// fell behind its schedule, so the rate asked was never offered. None in the closed
    /// loop or when it kept up.
    pub fn rate_not_offered(&self) -> Option<String> {
        let (planned, sent) = (self.requests_planned?, self.requests_sent?);
        fell_behind(sent, planned).then(|| {
            format!(
                "generator-bound: the open loop sent {sent} of the {planned} requests its \
                 schedule planned, so the rate asked was not offered"
            )
        })
    }

    /// Fills the counter-derived fields from the run's totals.
    pub fn set_totals(
        &mut self,
        c: &Counters,
        latency: &Histogram<u64>,
        raw: Option<&Histogram<u64>>,
    ) {
        self.connections_established = c.established;
        self.connections_failed = c.failed;
        self.connect_attempts = c.connect_attempts;
        self.connections_ended_early = c.ended_early;
        self.requests_completed = c.requests;
        self.warmup_requests = c.warmup_requests;
        self.bytes_sent = c.bytes_sent;
        self.bytes_received = c.bytes_received;
        self.bytes_verified = c.bytes_verified;
        self.mismatches = c.mismatches;
        self.short_echoes = c.short_echoes;
        self.unexpected_closes = c.unexpected_closes;
        self.errors = c.errors;
        self.errors_total = c.errors_total();
        if self.rate.is_some() {
            self.requests_planned = Some(c.releases);
            self.requests_sent = Some(c.sends);
        }
        self.completion_s = (self.requests_per_connection.is_some() && c.last_finished_ns > 0)
            .then(|| (c.last_finished_ns as f64 / 1e6).round() / 1e3);
        // Errors are counted over the whole run, warm-up included, and so are attempts.
        let attempts = c.requests + c.warmup_requests + self.errors_total;
        self.error_rate = if attempts == 0 {
            0.0
        } else {
            self.errors_total as f64 / attempts as f64
        };
        let seconds = self.duration_s.max(1e-9);
        self.throughput_rps = round3(c.requests as f64 / seconds);
        self.throughput_bytes_per_s = round3(c.bytes_received as f64 / seconds);
        self.latency_us = LatencyStats::of(latency);
        self.latency_raw_us = raw.map(LatencyStats::of);
    }
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One row of timeline.csv.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimelineRow {
    pub second: u64,
    pub active_connections: u64,
    pub new_connections: u64,
    pub requests: u64,
    pub bytes: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub errors: u64,
}

/// The writers of a results directory.
pub struct Outputs {
    dir: PathBuf,
    connections: csv::Writer<BufWriter<File>>,
    timeline: csv::Writer<BufWriter<File>>,
    hlog: BufWriter<File>,
    serializer: V2DeflateSerializer,
}

/// The files the load generator writes into its output folder, each named once.
pub const LOAD_SUMMARY: &str = "summary.json";
pub const CONNECTIONS: &str = "connections.csv";
pub const TIMELINE: &str = "timeline.csv";
pub const LATENCY_LOG: &str = "latency.hlog";
pub const PERCENTILES: &str = "percentiles.csv";

impl Outputs {
    /// Creates every output in `dir`, `summary` first: a summary always exists beside them.
    pub fn create(dir: &Path, started_unix: f64, summary: &LoadSummary) -> anyhow::Result<Outputs> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Outputs::rewrite_summary(dir, summary)?;
        let open = |name: &str| -> anyhow::Result<BufWriter<File>> {
            let path = dir.join(name);
            let file =
                File::create(&path).with_context(|| format!("creating {}", path.display()))?;
            Ok(BufWriter::new(file))
        };
        // Headers are written by hand so a file without rows still has them.
        let mut connections = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open(CONNECTIONS)?);
        connections
            .write_record([
                "conn_id",
                "attempt",
                "local_addr",
                "local_port",
                "connect_us",
                "opened_unix",
                "closed_unix",
                "requests",
                "bytes_sent",
                "bytes_received",
                "total_response_us",
                "mean_response_us",
                "mismatches",
                "short_echoes",
                "errors",
                "error_kind",
                "end",
            ])
            .and_then(|()| Ok(connections.flush()?))
            .with_context(|| format!("writing {}", dir.join(CONNECTIONS).display()))?;
        let timeline = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open(TIMELINE)?);
        let mut hlog = open(LATENCY_LOG)?;
        Self::write_hlog_header(&mut hlog, started_unix)
            .with_context(|| format!("writing {}", dir.join(LATENCY_LOG).display()))?;
        let mut outputs = Outputs {
            dir: dir.to_path_buf(),
            connections,
            timeline,
            hlog,
            serializer: V2DeflateSerializer::new(),
        };
        outputs
            .write_timeline_header()
            .with_context(|| outputs.writing(TIMELINE))?;
        Ok(outputs)
    }

    fn write_hlog_header(hlog: &mut BufWriter<File>, started_unix: f64) -> anyhow::Result<()> {
        // The Java HistogramLogWriter's header, so standard tools (HistogramLogProcessor) read it.
        writeln!(hlog, "#[Histogram log format version 1.3]")?;
        writeln!(hlog, "#[echolab load latency in microseconds; untagged: latency (open loop: corrected), tag raw: from actual send]")?;
        let mut serializer = V2DeflateSerializer::new();
        let start = std::time::UNIX_EPOCH + Duration::from_secs_f64(started_unix);
        IntervalLogWriterBuilder::new()
            .with_start_time(start)
            .with_base_time(start)
            .begin_log_with(hlog, &mut serializer)?;
        writeln!(
            hlog,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        hlog.flush()?;
        Ok(())
    }

    fn write_timeline_header(&mut self) -> anyhow::Result<()> {
        self.timeline.write_record([
            "second",
            "active_connections",
            "new_connections",
            "requests",
            "bytes",
            "p50_us",
            "p99_us",
            "errors",
        ])?;
        self.timeline.flush()?;
        Ok(())
    }

    pub fn write_records(&mut self, records: &[LoadConnRecord]) -> anyhow::Result<()> {
        let write = |this: &mut Self| -> anyhow::Result<()> {
            for r in records {
                this.connections.serialize(r)?;
            }
            this.connections.flush()?;
            Ok(())
        };
        write(self).with_context(|| self.writing(CONNECTIONS))
    }

    /// "writing DIR/NAME": every write error names the file it could not write.
    fn writing(&self, name: &str) -> String {
        format!("writing {}", self.dir.join(name).display())
    }

    /// One second of the run: a timeline row and its latency histograms in the interval log.
    pub fn write_second(
        &mut self,
        row: &TimelineRow,
        start_s: f64,
        length_s: f64,
        latency: &Histogram<u64>,
        raw: Option<&Histogram<u64>>,
    ) -> anyhow::Result<()> {
        // The interval first: a reader that finds a second's timeline row finds its
        // latency too (a staircase window waits for the row).
        self.write_interval(start_s, length_s, latency, raw)
            .with_context(|| self.writing(LATENCY_LOG))?;
        let timeline = &mut self.timeline;
        (|| -> anyhow::Result<()> {
            timeline.serialize(row)?;
            Ok(timeline.flush()?)
        })()
        .with_context(|| self.writing(TIMELINE))
    }

    fn write_interval(
        &mut self,
        start_s: f64,
        length_s: f64,
        latency: &Histogram<u64>,
        raw: Option<&Histogram<u64>>,
    ) -> anyhow::Result<()> {
        let start = Duration::from_secs_f64(start_s.max(0.0));
        let length = Duration::from_secs_f64(length_s.max(0.0));
        let mut writer =
            IntervalLogWriterBuilder::new().begin_log_with(&mut self.hlog, &mut self.serializer)?;
        writer
            .write_histogram(latency, start, length, None)
            .map_err(|e| anyhow::anyhow!("writing latency.hlog: {e:?}"))?;
        if let Some(raw) = raw {
            writer
                .write_histogram(raw, start, length, Tag::new("raw"))
                .map_err(|e| anyhow::anyhow!("writing latency.hlog: {e:?}"))?;
        }
        self.hlog.flush()?;
        Ok(())
    }

    pub fn write_summary(&self, summary: &LoadSummary) -> anyhow::Result<()> {
        Outputs::rewrite_summary(&self.dir, summary)
    }

    /// Writes `dir`/summary.json aside and renames it, so a reader never sees half a file.
    pub fn rewrite_summary(dir: &Path, summary: &LoadSummary) -> anyhow::Result<()> {
        let path = dir.join(LOAD_SUMMARY);
        let tmp = dir.join(format!(".{LOAD_SUMMARY}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(summary)?)
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    pub fn write_percentiles(
        &self,
        latency: &Histogram<u64>,
        raw: Option<&Histogram<u64>>,
    ) -> anyhow::Result<()> {
        self.write_percentiles_file(latency, raw)
            .with_context(|| self.writing(PERCENTILES))
    }

    fn write_percentiles_file(
        &self,
        latency: &Histogram<u64>,
        raw: Option<&Histogram<u64>>,
    ) -> anyhow::Result<()> {
        let tmp = self.dir.join(".percentiles.csv.tmp");
        let mut w = csv::Writer::from_path(&tmp)?;
        w.write_record(["percentile", "latency_us", "latency_raw_us"])?;
        if !latency.is_empty() {
            // HdrHistogram's percentile distribution: 5 steps per halving of the distance to 100%.
            let mut last_quantile = -1.0;
            for step in latency.iter_quantiles(5) {
                let q = step.quantile_iterated_to();
                if q <= last_quantile {
                    continue;
                }
                last_quantile = q;
                let value = latency.highest_equivalent(step.value_iterated_to());
                let raw_value = raw
                    .filter(|r| !r.is_empty())
                    .map(|r| r.value_at_quantile(q).to_string())
                    .unwrap_or_default();
                w.write_record([format!("{:.6}", q * 100.0), value.to_string(), raw_value])?;
                if q >= 1.0 {
                    break;
                }
            }
        }
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, self.dir.join(PERCENTILES))?;
        Ok(())
    }
}

/// The timeline row of one second from its interval.
pub fn timeline_row(second: u64, active: u64, interval: &Interval) -> TimelineRow {
    let c = &interval.counters;
    let h = &interval.latency;
    TimelineRow {
        second,
        active_connections: active,
        new_connections: c.established,
        requests: c.requests,
        bytes: c.bytes_received,
        p50_us: if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.5)
        },
        p99_us: if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.99)
        },
        errors: c.errors_total(),
    }
}
