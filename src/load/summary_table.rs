//! The table `echolab load` prints on stdout when it ends: one named line each for the
//! target, the run, connections, requests, bytes, latency, errors and the client's CPU.

use super::measurements::{LatencyStats, LoadSummary};

/// The final table printed on stdout.
pub fn human_summary(s: &LoadSummary) -> String {
    let mut out = String::new();
    for (name, value) in summary_rows(s) {
        out.push_str(&format!("{name:>18}  {value}\n"));
    }
    out.pop();
    out
}

/// The final table's rows: name, then value.
fn summary_rows(s: &LoadSummary) -> Vec<(&'static str, String)> {
    let mut rows = traffic_rows(s);
    let latency_name = if s.latency_raw_us.is_some() {
        "latency corrected"
    } else {
        "latency"
    };
    rows.push((latency_name, latency_text(&s.latency_us)));
    if let Some(raw) = &s.latency_raw_us {
        rows.push(("latency raw", latency_text(raw)));
    }
    rows.push(("errors", errors_text(s)));
    rows.push((
        "client cpu",
        format!(
            "{:.2} s user, {:.2} s sys",
            s.client_cpu_user_s, s.client_cpu_sys_s
        ),
    ));
    for w in &s.warnings {
        rows.push(("warning", w.clone()));
    }
    rows
}

/// What was loaded and how much went through: target, run, connections, requests, bytes.
fn traffic_rows(s: &LoadSummary) -> Vec<(&'static str, String)> {
    vec![
        ("target", format!("{} ({} loop)", s.target, s.mode)),
        ("run", run_text(s, &status_text(s))),
        (
            "connections",
            format!(
                "{} established of {} target, {} failed attempts, max concurrent {}",
                s.connections_established,
                s.connections_target,
                s.connections_failed,
                s.max_concurrent
            ),
        ),
        (
            "requests",
            format!(
                "{} completed, {:.1} req/s",
                s.requests_completed, s.throughput_rps
            ),
        ),
        (
            "bytes",
            format!(
                "{} sent, {} received, {} verified ({:.2} MiB/s)",
                s.bytes_sent,
                s.bytes_received,
                s.bytes_verified,
                s.throughput_bytes_per_s / (1 << 20) as f64
            ),
        ),
    ]
}

/// Whether the run completed, and why it ended early when it did.
fn status_text(s: &LoadSummary) -> String {
    match (&s.cut_short_reason, s.interrupted) {
        (Some(reason), true) => format!("cut short: {reason}"),
        (Some(reason), false) => format!("completed ({reason})"),
        (None, _) => "completed".to_string(),
    }
}

/// The run's measured time, after its warm-up when it had one.
fn run_text(s: &LoadSummary, status: &str) -> String {
    if s.warmup_s > 0.0 {
        format!(
            "{:.2} s measured after a {:.2} s warm-up ({} requests, not measured), {status}",
            s.duration_s, s.warmup_s, s.warmup_requests
        )
    } else {
        format!("{:.2} s, {status}", s.duration_s)
    }
}

fn latency_text(l: &LatencyStats) -> String {
    format!(
        "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {:.1}  (us, n={})",
        l.p50, l.p90, l.p99, l.p999, l.max, l.mean, l.count
    )
}

fn errors_text(s: &LoadSummary) -> String {
    format!(
        "{} (rate {:.5}): refused {} reset {} timeout {} emfile {} eaddrnotavail {} other {}; \
         mismatches {} short echoes {} unexpected closes {}",
        s.errors_total,
        s.error_rate,
        s.errors.refused,
        s.errors.reset,
        s.errors.timeout,
        s.errors.emfile,
        s.errors.eaddrnotavail,
        s.errors.other,
        s.mismatches,
        s.short_echoes,
        s.unexpected_closes
    )
}
