//! Exact merging of load result directories, for `--processes` (its children's directories)
//! and `echolab merge` (distributed agents'): the latency histograms read back from each
//! latency.hlog are added and the counts summed, so merged percentiles are exact, never
//! averages of percentiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hdrhistogram::Histogram;

use super::measurements::{
    new_histogram, round3, Counters, LoadConnRecord, LoadSummary, Outputs, TimelineRow,
};
use crate::load::measurements::{CONNECTIONS, LATENCY_LOG, LOAD_SUMMARY, TIMELINE};

/// Reads `dir`/summary.json.
pub fn read_summary(dir: &Path) -> anyhow::Result<LoadSummary> {
    let path = dir.join(LOAD_SUMMARY);
    let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Refuses a merge that would double-count or mix what cannot be mixed: a directory given
/// twice, `--out` equal to an input, shards that share connections (`0/2` with `1/3`), parts
/// with different message sizes or modes (closed and open loop).
pub fn check_mergeable(dirs: &[PathBuf], out: &Path) -> Result<(), String> {
    check_distinct(dirs, out)?;
    let parts: Vec<LoadSummary> = dirs
        .iter()
        .map(|d| read_summary(d).map_err(|e| format!("{e:#}")))
        .collect::<Result<_, _>>()?;
    check_same_load(dirs, &parts)?;
    check_sums(&parts)?;
    check_shards(dirs, &parts)
}

/// Each input once, and none of them the output.
fn check_distinct(dirs: &[PathBuf], out: &Path) -> Result<(), String> {
    let canonical = |dir: &Path| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let out = canonical(out);
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let path = canonical(dir);
        if path == out {
            return Err(format!(
                "--out {} is one of the inputs: merging would overwrite it",
                dir.display()
            ));
        }
        if seen.contains(&path) {
            return Err(format!("{} is given twice", dir.display()));
        }
        seen.push(path);
    }
    Ok(())
}

/// Every part sent the same messages, after the same warm-up, in the same loop.
fn check_same_load(dirs: &[PathBuf], parts: &[LoadSummary]) -> Result<(), String> {
    let first = (&dirs[0], &parts[0]);
    for (dir, part) in dirs.iter().zip(parts).skip(1) {
        if part.message_bytes != first.1.message_bytes {
            return Err(format!(
                "{} sent {}-byte messages but {} sent {}-byte ones",
                first.0.display(),
                first.1.message_bytes,
                dir.display(),
                part.message_bytes
            ));
        }
        if part.warmup_s != first.1.warmup_s {
            return Err(format!(
                "{} measured after a {} s warm-up but {} after a {} s one",
                first.0.display(),
                first.1.warmup_s,
                dir.display(),
                part.warmup_s
            ));
        }
        if part.mode != first.1.mode {
            return Err(format!(
                "{} ran the {} loop but {} ran the {} loop",
                first.0.display(),
                first.1.mode,
                dir.display(),
                part.mode
            ));
        }
    }
    Ok(())
}

/// Shards and whole loads are not mixed, and no two shards share a connection.
fn check_shards(dirs: &[PathBuf], parts: &[LoadSummary]) -> Result<(), String> {
    // An unsharded part opened every connection id: beside a shard its ids repeat.
    if parts.iter().any(|p| p.shard.is_some()) {
        if let Some((dir, _)) = dirs.iter().zip(parts).find(|(_, p)| p.shard.is_none()) {
            return Err(format!(
                "{} is not a shard (no --shard): it opened every connection id, which the \
                 shards among the inputs share",
                dir.display()
            ));
        }
    }
    let shards: Vec<(&PathBuf, (u64, u64))> = dirs
        .iter()
        .zip(parts)
        .filter_map(|(dir, p)| Some((dir, super::schedule::parse_shard(p.shard.as_ref()?).ok()?)))
        .collect();
    for (i, (dir_a, a)) in shards.iter().enumerate() {
        for (dir_b, b) in &shards[i + 1..] {
            if shards_overlap(*a, *b) {
                return Err(format!(
                    "shards {}/{} ({}) and {}/{} ({}) share connections",
                    a.0,
                    a.1,
                    dir_a.display(),
                    b.0,
                    b.1,
                    dir_b.display()
                ));
            }
        }
    }
    Ok(())
}

/// Every count the merge adds up fits in a u64: past 2^64 - 1 it would wrap silently,
/// so a corrupt or hand-edited summary.json is refused, naming the field.
fn check_sums(parts: &[LoadSummary]) -> Result<(), String> {
    type Count = fn(&LoadSummary) -> u64;
    let summed: [(&str, Count); 24] = [
        ("connections_target", |p| p.connections_target),
        ("connections_established", |p| p.connections_established),
        ("connections_failed", |p| p.connections_failed),
        ("connect_attempts", |p| p.connect_attempts),
        ("connections_ended_early", |p| p.connections_ended_early),
        ("max_concurrent", |p| p.max_concurrent),
        ("requests_completed", |p| p.requests_completed),
        ("bytes_sent", |p| p.bytes_sent),
        ("bytes_received", |p| p.bytes_received),
        ("bytes_verified", |p| p.bytes_verified),
        ("mismatches", |p| p.mismatches),
        ("short_echoes", |p| p.short_echoes),
        ("unexpected_closes", |p| p.unexpected_closes),
        ("errors_total", |p| p.errors_total),
        ("errors.refused", |p| p.errors.refused),
        ("errors.reset", |p| p.errors.reset),
        ("errors.timeout", |p| p.errors.timeout),
        ("errors.emfile", |p| p.errors.emfile),
        ("errors.eaddrnotavail", |p| p.errors.eaddrnotavail),
        ("errors.other", |p| p.errors.other),
        ("threads", |p| p.threads),
        ("processes", |p| p.processes.max(1)),
        ("requests_planned", |p| p.requests_planned.unwrap_or(0)),
        ("requests_sent", |p| p.requests_sent.unwrap_or(0)),
    ];
    for (name, count) in summed {
        if parts
            .iter()
            .try_fold(0u64, |sum, p| sum.checked_add(count(p)))
            .is_none()
        {
            return Err(format!(
                "the parts' {name} add up past 2^64 - 1: a summary.json is corrupt"
            ));
        }
    }
    Ok(())
}

/// What the inputs lack when they are shards: the missing indexes of their common N
/// (`shard 2/3 is missing` beside 0/3 and 1/3; ten named at most), or for shards of
/// different N the share of the connection ids none of them holds. None when they hold
/// every id (shards never overlap: [`check_mergeable`] refuses that first) or are not
/// shards.
pub fn missing_shards(dirs: &[PathBuf]) -> Option<String> {
    let shards: Vec<(u64, u64)> = dirs
        .iter()
        .filter_map(|d| read_summary(d).ok()?.shard)
        .filter_map(|s| super::schedule::parse_shard(&s).ok())
        .collect();
    let n = shards.first()?.1;
    if shards.iter().all(|s| s.1 == n) {
        let held: std::collections::BTreeSet<u64> = shards.iter().map(|s| s.0).collect();
        let missing = n - held.len() as u64;
        let named: Vec<String> = (0..n)
            .filter(|i| !held.contains(i))
            .take(10)
            .map(|i| format!("{i}/{n}"))
            .collect();
        return match missing {
            0 => None,
            1 => Some(format!("shard {} is missing", named[0])),
            _ if missing > named.len() as u64 => Some(format!(
                "{missing} shards are missing: {} and {} more",
                named.join(", "),
                missing - named.len() as u64
            )),
            _ => Some(format!("shards {} are missing", named.join(", "))),
        };
    }
    let held: f64 = shards.iter().map(|s| 1.0 / s.1 as f64).sum();
    (held < 1.0 - 1e-9).then(|| {
        format!(
            "the shards hold {:.1} % of the connection ids: the shards of the rest are missing",
            held * 100.0
        )
    })
}

/// The start of the warning a merge leaves when its latency logs hold fewer requests
/// than its summaries count.
const CUT_OFF: &str = "the latency logs hold";

/// Whether a merged summary's latency logs miss requests its parts counted (a part's
/// latency.hlog cut off).
pub fn cut_off(summary: &LoadSummary) -> bool {
    summary.warnings.iter().any(|w| w.starts_with(CUT_OFF))
}

/// Shard `(i, n)` owns the ids `g % n == i`: two shards share an id exactly when their
/// indexes agree modulo the gcd of their counts.
fn shards_overlap((i, n): (u64, u64), (j, m): (u64, u64)) -> bool {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = gcd(n, m);
    i % g == j % g
}

/// One second of merged results.
struct MergedSecond {
    row: TimelineRow,
    length: f64,
    latency: Histogram<u64>,
    raw: Histogram<u64>,
}

/// What the parts' files hold, gathered: seconds on the merged clock, the whole run's
/// histograms and every connection record.
struct Gathered {
    seconds: BTreeMap<u64, MergedSecond>,
    total: Histogram<u64>,
    total_raw: Histogram<u64>,
    records: Vec<LoadConnRecord>,
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

    let mut gathered = Gathered {
        seconds: BTreeMap::new(),
        total: new_histogram(),
        total_raw: new_histogram(),
        records: Vec::new(),
    };
    for (dir, part) in dirs.iter().zip(&parts) {
        gather_part(dir, part, started, &mut gathered)?;
    }
    let Gathered {
        seconds,
        total,
        total_raw,
        mut records,
    } = gathered;
    records.sort_by_key(|r| (r.conn_id, r.attempt));

    let in_progress = LoadSummary {
        merged_from: dirs.iter().map(|d| d.display().to_string()).collect(),
        ..LoadSummary::default()
    };
    let mut outputs = Outputs::create(out, started, &in_progress)?;
    outputs.write_records(&records)?;
    write_seconds(&mut outputs, seconds, open_loop)?;

    let (mut summary, counters) = merged_summary(dirs, &parts, started, ended);
    summary.set_totals(&counters, &total, open_loop.then_some(&total_raw));
    if total.len() != counters.requests {
        summary.warnings.push(format!(
            "{CUT_OFF} {} requests but the summaries count {}: a part was cut off \
             before it finished writing",
            total.len(),
            counters.requests
        ));
    }
    outputs.write_percentiles(&total, open_loop.then_some(&total_raw))?;
    outputs.write_summary(&summary)?;
    Ok(summary)
}

/// Adds one part's timeline, latency log and connection records, its seconds shifted onto
/// the merged clock (which starts with the earliest part).
fn gather_part(
    dir: &Path,
    part: &LoadSummary,
    started: f64,
    gathered: &mut Gathered,
) -> anyhow::Result<()> {
    let seconds = &mut gathered.seconds;
    let (hlog_start, intervals) = read_hlog(&dir.join(LATENCY_LOG))?;
    let offset = hlog_start.unwrap_or(part.started_unix) - started;
    let shift = |second: f64| (second + offset).round().max(0.0) as u64;
    let mut reader = csv::Reader::from_path(dir.join(TIMELINE))
        .with_context(|| format!("reading {}/timeline.csv", dir.display()))?;
    for row in reader.deserialize::<TimelineRow>() {
        let row = row?;
        let entry = seconds
            .entry(shift(row.second as f64))
            .or_insert_with(empty_second);
        let r = &mut entry.row;
        let past = || {
            format!(
                "{}/timeline.csv second {}: counts add up past 2^64 - 1",
                dir.display(),
                row.second
            )
        };
        for (sum, add) in [
            (&mut r.active_connections, row.active_connections),
            (&mut r.new_connections, row.new_connections),
            (&mut r.requests, row.requests),
            (&mut r.bytes, row.bytes),
            (&mut r.errors, row.errors),
        ] {
            *sum = sum.checked_add(add).with_context(past)?;
        }
    }
    for interval in intervals {
        let entry = seconds
            .entry(shift(interval.start_s))
            .or_insert_with(empty_second);
        entry.length = entry.length.max(interval.length_s);
        let (into, sum) = if interval.raw {
            (&mut entry.raw, &mut gathered.total_raw)
        } else {
            (&mut entry.latency, &mut gathered.total)
        };
        into.add(&interval.histogram)?;
        sum.add(&interval.histogram)?;
    }
    let mut reader = csv::Reader::from_path(dir.join(CONNECTIONS))
        .with_context(|| format!("reading {}/connections.csv", dir.display()))?;
    for rec in reader.deserialize::<LoadConnRecord>() {
        gathered.records.push(rec?);
    }
    Ok(())
}

/// Writes the merged seconds: timeline rows (percentiles from the merged histogram) and the
/// interval log.
fn write_seconds(
    outputs: &mut Outputs,
    seconds: BTreeMap<u64, MergedSecond>,
    open_loop: bool,
) -> anyhow::Result<()> {
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
    Ok(())
}

/// The merged summary from the parts' summaries (without its latency totals), and the
/// parts' counters added up.
fn merged_summary(
    dirs: &[PathBuf],
    parts: &[LoadSummary],
    started: f64,
    ended: f64,
) -> (LoadSummary, Counters) {
    let mut counters = Counters::default();
    let mut summary = LoadSummary {
        echolab_version: env!("CARGO_PKG_VERSION").to_string(),
        target: parts[0].target.clone(),
        mode: parts[0].mode.clone(),
        complete: parts.iter().all(|p| p.complete),
        started_unix: round3(started),
        ended_unix: round3(ended),
        // The measured time: the run's wall time less the warm-up all parts share.
        duration_s: round3((ended - started - parts[0].warmup_s).max(0.0)),
        warmup_s: parts[0].warmup_s,
        message_bytes: parts[0].message_bytes,
        requests_per_connection: parts[0].requests_per_connection,
        pipeline: parts[0].pipeline,
        engine: parts[0].engine.clone(),
        merged_from: dirs.iter().map(|d| d.display().to_string()).collect(),
        ..LoadSummary::default()
    };
    let mut reasons = Vec::new();
    for (dir, p) in dirs.iter().zip(parts) {
        counters.add(&part_counters(p, started));
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
    (summary, counters)
}

/// A part's counters as its summary recorded them.
fn part_counters(p: &LoadSummary, started: f64) -> Counters {
    Counters {
        requests: p.requests_completed,
        warmup_requests: p.warmup_requests,
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
        releases: p.requests_planned.unwrap_or(0),
        sends: p.requests_sent.unwrap_or(0),
        // The part's last finish, measured from the merged start.
        last_finished_ns: p.completion_s.map_or(0, |c| {
            ((p.started_unix + c - started).max(0.0) * 1e9).round() as u64
        }),
        ..Counters::default()
    }
}

fn empty_second() -> MergedSecond {
    MergedSecond {
        row: TimelineRow::default(),
        length: 0.0,
        latency: new_histogram(),
        raw: new_histogram(),
    }
}

/// The encoded histogram of an interval log line: strict standard base64, and as many
/// bytes as its V2 compressed header says it holds. A line cut short can still decode
/// to a whole histogram when the cut falls in the zlib checksum, so the length is checked.
pub fn decode_histogram_bytes(text: &str) -> anyhow::Result<Vec<u8>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| anyhow::anyhow!("not base64: {e}"))?;
    // Cookie (4 bytes), then the compressed payload's length (4 bytes, big-endian).
    let stated = bytes
        .get(4..8)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
    match stated {
        Some(len) if bytes.len() == 8 + len => Ok(bytes),
        Some(len) => anyhow::bail!("{} bytes where its header says {}", bytes.len(), 8 + len),
        None => anyhow::bail!("{} bytes, shorter than a header", bytes.len()),
    }
}

/// An interval read back from latency.hlog.
pub struct LoggedInterval {
    pub start_s: f64,
    pub length_s: f64,
    pub raw: bool,
    pub histogram: Histogram<u64>,
}

/// Reads every interval of a latency.hlog, and its StartTime (Unix seconds). Only whole
/// lines are read, so a log still being written (a live load's) reads up to its last one.
pub fn read_hlog(path: &Path) -> anyhow::Result<(Option<f64>, Vec<LoggedInterval>)> {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let mut bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    bytes.truncate(bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1));
    let mut deserializer = hdrhistogram::serialization::Deserializer::new();
    let mut start = None;
    let mut intervals = Vec::new();
    // Line by line (each entry is one line), so an error names the line it is on.
    for (i, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let at = || format!("{} line {}", path.display(), i + 1);
        for entry in IntervalLogIterator::new(line) {
            let entry = entry.map_err(|_| anyhow::anyhow!("{}: not an interval log line", at()))?;
            match entry {
                LogEntry::StartTime(t) => start = Some(t.as_secs_f64()),
                LogEntry::BaseTime(_) => {}
                LogEntry::Interval(interval) => {
                    let encoded = decode_histogram_bytes(interval.encoded_histogram())
                        .map_err(|e| anyhow::anyhow!("{}: damaged histogram: {e}", at()))?;
                    let histogram: Histogram<u64> = deserializer
                        .deserialize(&mut encoded.as_slice())
                        .map_err(|e| anyhow::anyhow!("{}: damaged histogram: {e}", at()))?;
                    intervals.push(LoggedInterval {
                        start_s: interval.start_timestamp().as_secs_f64(),
                        length_s: interval.duration().as_secs_f64(),
                        raw: interval.tag().is_some_and(|t| t.as_str() == "raw"),
                        histogram,
                    });
                }
            }
        }
    }
    Ok((start, intervals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_overlap_when_they_share_an_id() {
        assert!(shards_overlap((0, 2), (1, 3)));
        assert!(shards_overlap((1, 4), (1, 2)));
        assert!(!shards_overlap((0, 2), (1, 2)));
        assert!(!shards_overlap((1, 4), (0, 2)));
    }

    #[test]
    fn an_encoded_histogram_must_be_whole() {
        // The interval of a short run whose cut (9 characters, the zlib checksum and the
        // padding) still decompressed to a whole histogram.
        let whole =
            "HISTFAAAADV4nC3GsREAEBAF0W/FAmNkMkUIRTrTgXr0pATB3SZv2z5FUpIV3eAyn81ikOncQOUDaGgEGA==";
        let bytes = decode_histogram_bytes(whole).unwrap();
        assert_eq!(bytes.len(), 8 + 0x35);
        let cut = &whole[..whole.len() - 9];
        assert!(decode_histogram_bytes(cut).is_err());
        // Valid base64 of the cut bytes: the length check catches it.
        use base64::Engine as _;
        let shorter = base64::engine::general_purpose::STANDARD.encode(&bytes[..bytes.len() - 4]);
        let e = decode_histogram_bytes(&shorter).unwrap_err().to_string();
        assert_eq!(e, "57 bytes where its header says 61");
        assert!(decode_histogram_bytes("aGk=").is_err());
    }

    #[test]
    fn hlog_round_trip_keeps_every_count() {
        let dir = std::env::temp_dir().join(format!("echolab-hlog-{}", std::process::id()));
        let mut outputs = Outputs::create(&dir, 1_700_000_000.0, &LoadSummary::default()).unwrap();
        let mut h = new_histogram();
        let mut raw = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
            raw.record(v).unwrap();
        }
        let row = TimelineRow::default();
        outputs
            .write_second(&row, 0.0, 1.0, &h, Some(&raw))
            .unwrap();
        outputs
            .write_second(&row, 1.0, 1.0, &h, Some(&raw))
            .unwrap();
        let (start, intervals) = read_hlog(&dir.join("latency.hlog")).unwrap();
        assert_eq!(start, Some(1_700_000_000.0));
        assert_eq!(intervals.len(), 4);
        assert_eq!(intervals.iter().filter(|i| i.raw).count(), 2);
        assert_eq!(intervals[0].histogram.len(), 1000);
        assert_eq!(intervals[0].histogram.max(), h.max());
        assert_eq!(intervals[3].start_s, 1.0);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
