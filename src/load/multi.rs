//! Several load processes as one: `--processes P` runs P child `echolab load` processes (each a
//! shard with its own --out subdirectory) and merges their results; `echolab merge` does the
//! same for the directories of distributed agents. Merging is exact: histograms are added and
//! counts summed, percentiles are never averaged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use hdrhistogram::Histogram;

use super::engine::{install_signal_handlers, received_signal};
use super::preflight;
use super::record::{
    self, new_histogram, round3, Counters, LoadConnRecord, LoadSummary, Outputs, TimelineRow,
};
use super::schedule::Plan;
use super::LoadArgs;

fn micros(d: Duration) -> String {
    format!("{}us", d.as_micros())
}

/// The command line of child `index` of `processes`: this run's arguments with the shard
/// narrowed (shard j of M split P ways is shard j + M*i of M*P) and its own output directory.
pub fn child_args(
    args: &LoadArgs,
    plan: &Plan,
    index: u64,
    processes: u64,
    out: &Path,
) -> Vec<String> {
    let (j, m) = plan.shard;
    let mut v: Vec<String> = vec![
        "load".into(),
        "--target".into(),
        args.target.clone(),
        "--connections".into(),
        args.connections.to_string(),
        "--connect-rate".into(),
        args.connect_rate.to_string(),
        "--connect-timeout".into(),
        micros(args.connect_timeout),
        "--response-timeout".into(),
        micros(args.response_timeout),
        "--seed".into(),
        args.seed.to_string(),
        "--delay".into(),
        micros(args.delay),
        "--pipeline".into(),
        args.pipeline.to_string(),
        "--shard".into(),
        format!("{}/{}", j + m * index, m * processes),
        "--out".into(),
        out.display().to_string(),
        "--quiet".into(),
        "--threads".into(),
        args.threads
            .unwrap_or_else(|| (plan.threads / processes as usize).max(1))
            .to_string(),
    ];
    let mut push = |flag: &str, value: Option<String>| {
        if let Some(value) = value {
            v.push(flag.into());
            v.push(value);
        }
    };
    push("--message", args.message.clone());
    push("--size", args.size.map(|s| s.to_string()));
    push(
        "--payload-file",
        args.payload_file.as_ref().map(|p| p.display().to_string()),
    );
    push("--requests", args.requests.map(|r| r.to_string()));
    push("--duration", args.duration.map(micros));
    push("--rate", args.rate.map(|r| r.to_string()));
    push("--hold", args.hold.map(micros));
    push("--source-addrs", args.source_addrs.clone());
    push("--start-at", args.start_at.map(|t| t.to_string()));
    if args.reconnect {
        v.push("--reconnect".into());
    }
    v
}

/// Runs `--processes P` children and merges their outputs. `None` when preflight refused.
pub fn run_processes(
    args: &LoadArgs,
    plan: &Plan,
    show_progress: bool,
) -> anyhow::Result<Option<LoadSummary>> {
    let processes = u64::from(plan.processes);
    let per_process = plan.connections().div_ceil(processes);
    if let Err(explanation) = preflight::check(plan, per_process) {
        eprintln!("echolab load: {explanation}");
        return Ok(None);
    }
    let (out, temporary) = match &args.out {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("echolab-load-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    install_signal_handlers();
    let exe = std::env::current_exe().context("finding the echolab executable")?;
    let mut dirs = Vec::new();
    let mut children: Vec<Child> = Vec::new();
    for index in 0..processes {
        let dir = out.join(format!("process-{index}"));
        let child = Command::new(&exe)
            .args(child_args(args, plan, index, processes, &dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        dirs.push(dir);
        children.push(child);
    }
    let progress = if show_progress {
        indicatif::ProgressBar::new_spinner()
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut forwarded = None;
    let mut statuses = vec![None; children.len()];
    let mut last_progress = std::time::Instant::now();
    while statuses.iter().any(Option::is_none) {
        for (child, status) in children.iter_mut().zip(statuses.iter_mut()) {
            if status.is_none() {
                *status = child.try_wait()?;
            }
        }
        // Pass each signal on once, so a second Ctrl-C also reaches the children.
        let signal = received_signal();
        if signal.is_some() && signal != forwarded {
            for child in &children {
                let _ = libc_call!(kill(child.id() as libc::pid_t, signal.unwrap_or(0)));
            }
            forwarded = signal;
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = std::time::Instant::now();
            let parts: Vec<LoadSummary> =
                dirs.iter().filter_map(|d| read_summary(d).ok()).collect();
            progress.set_message(format!(
                "{} processes: connections {}  requests {}  errors {}",
                processes,
                parts.iter().map(|s| s.connections_established).sum::<u64>(),
                parts.iter().map(|s| s.requests_completed).sum::<u64>(),
                parts.iter().map(|s| s.errors_total).sum::<u64>(),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    progress.finish_and_clear();
    for (dir, status) in dirs.iter().zip(&statuses) {
        if !dir.join("summary.json").is_file() {
            anyhow::bail!(
                "load process for {} ended ({}) without results",
                dir.display(),
                status.map_or("unknown".into(), |s| s.to_string())
            );
        }
    }
    let mut summary = merge_dirs(&dirs, &out)?;
    summary.processes = processes;
    summary.merged_from.clear();
    if temporary {
        let _ = std::fs::remove_dir_all(&out);
    } else {
        Outputs::rewrite_summary(&out, &summary)?;
    }
    Ok(Some(summary))
}

fn read_summary(dir: &Path) -> anyhow::Result<LoadSummary> {
    let path = dir.join("summary.json");
    let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
}

/// One second of merged results.
struct MergedSecond {
    row: TimelineRow,
    length: f64,
    latency: Histogram<u64>,
    raw: Histogram<u64>,
}

/// Merges result directories into `out` exactly and returns the merged summary.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path) -> anyhow::Result<LoadSummary> {
    let parts: Vec<LoadSummary> = dirs
        .iter()
        .map(|d| read_summary(d))
        .collect::<anyhow::Result<_>>()?;
    let started = parts
        .iter()
        .map(|s| s.started_unix)
        .fold(f64::INFINITY, f64::min);
    let ended = parts.iter().map(|s| s.ended_unix).fold(0.0, f64::max);
    let open_loop = parts.iter().any(|s| s.latency_raw_us.is_some());

    let mut seconds: BTreeMap<u64, MergedSecond> = BTreeMap::new();
    let mut total = new_histogram();
    let mut total_raw = new_histogram();
    let mut records: Vec<LoadConnRecord> = Vec::new();
    for (dir, part) in dirs.iter().zip(&parts) {
        let (hlog_start, intervals) = record::read_hlog(&dir.join("latency.hlog"))?;
        let offset = hlog_start.unwrap_or(part.started_unix) - started;
        let shift = |second: f64| (second + offset).round().max(0.0) as u64;
        let mut reader = csv::Reader::from_path(dir.join("timeline.csv"))
            .with_context(|| format!("reading {}/timeline.csv", dir.display()))?;
        for row in reader.deserialize::<TimelineRow>() {
            let row = row?;
            let entry = seconds
                .entry(shift(row.second as f64))
                .or_insert_with(empty_second);
            let r = &mut entry.row;
            r.active_connections += row.active_connections;
            r.new_connections += row.new_connections;
            r.requests += row.requests;
            r.bytes += row.bytes;
            r.errors += row.errors;
        }
        for interval in intervals {
            let entry = seconds
                .entry(shift(interval.start_s))
                .or_insert_with(empty_second);
            entry.length = entry.length.max(interval.length_s);
            let (into, sum) = if interval.raw {
                (&mut entry.raw, &mut total_raw)
            } else {
                (&mut entry.latency, &mut total)
            };
            into.add(&interval.histogram)?;
            sum.add(&interval.histogram)?;
        }
        let mut reader = csv::Reader::from_path(dir.join("connections.csv"))
            .with_context(|| format!("reading {}/connections.csv", dir.display()))?;
        for rec in reader.deserialize::<LoadConnRecord>() {
            records.push(rec?);
        }
    }
    records.sort_by_key(|r| (r.conn_id, r.attempt));

    let mut outputs = Outputs::create(out, started)?;
    outputs.write_records(&records)?;
    for (second, mut merged) in seconds {
        merged.row.second = second;
        let h = &merged.latency;
        merged.row.p50_us = if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.5)
        };
        merged.row.p99_us = if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.99)
        };
        outputs.write_second(
            &merged.row,
            second as f64,
            if merged.length > 0.0 {
                merged.length
            } else {
                1.0
            },
            &merged.latency,
            open_loop.then_some(&merged.raw),
        )?;
    }

    let mut counters = Counters::default();
    let mut summary = LoadSummary {
        echolab_version: env!("CARGO_PKG_VERSION").to_string(),
        target: parts[0].target.clone(),
        mode: parts[0].mode.clone(),
        complete: parts.iter().all(|p| p.complete),
        started_unix: round3(started),
        ended_unix: round3(ended),
        duration_s: round3((ended - started).max(0.0)),
        message_bytes: parts[0].message_bytes,
        requests_per_connection: parts[0].requests_per_connection,
        pipeline: parts[0].pipeline,
        merged_from: dirs.iter().map(|d| d.display().to_string()).collect(),
        ..LoadSummary::default()
    };
    let mut reasons = Vec::new();
    for (dir, p) in dirs.iter().zip(&parts) {
        counters.add(&Counters {
            requests: p.requests_completed,
            bytes_sent: p.bytes_sent,
            bytes_received: p.bytes_received,
            bytes_verified: p.bytes_verified,
            mismatches: p.mismatches,
            short_echoes: p.short_echoes,
            unexpected_closes: p.unexpected_closes,
            errors: p.errors,
            connect_attempts: p.connect_attempts,
            established: p.connections_established,
            failed: p.connections_failed,
            ended_early: p.connections_ended_early,
            ..Counters::default()
        });
        if p.target != summary.target && !summary.target.split(',').any(|t| t == p.target) {
            summary.target = format!("{},{}", summary.target, p.target);
        }
        if p.mode != summary.mode {
            summary.mode = "mixed".into();
        }
        summary.connections_target += p.connections_target;
        // Each part's peak; their sum bounds the merged peak from above.
        summary.max_concurrent += p.max_concurrent;
        summary.client_cpu_user_s += p.client_cpu_user_s;
        summary.client_cpu_sys_s += p.client_cpu_sys_s;
        summary.threads += p.threads;
        summary.processes += p.processes.max(1);
        summary.rate = match (summary.rate, p.rate) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        summary.interrupted |= p.interrupted;
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        if let Some(reason) = &p.cut_short_reason {
            reasons.push(format!("{name}: {reason}"));
        }
        for warning in &p.warnings {
            summary.warnings.push(format!("{name}: {warning}"));
        }
    }
    summary.client_cpu_user_s = round3(summary.client_cpu_user_s);
    summary.client_cpu_sys_s = round3(summary.client_cpu_sys_s);
    summary.cut_short_reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    summary.set_totals(&counters, &total, open_loop.then_some(&total_raw));
    if total.len() != counters.requests {
        summary.warnings.push(format!(
            "the latency logs hold {} requests but the summaries count {}: a part was cut off \
             before it finished writing",
            total.len(),
            counters.requests
        ));
    }
    outputs.write_percentiles(&total, open_loop.then_some(&total_raw))?;
    outputs.write_summary(&summary)?;
    Ok(summary)
}

fn empty_second() -> MergedSecond {
    MergedSecond {
        row: TimelineRow::default(),
        length: 0.0,
        latency: new_histogram(),
        raw: new_histogram(),
    }
}
