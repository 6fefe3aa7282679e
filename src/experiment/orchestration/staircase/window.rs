//! A stair's figures from the files its live load generators write once a second:
//! summary.json (connections established so far), timeline.csv (connections open,
//! requests, bytes and errors per second) and latency.hlog (one latency histogram
//! per second). A window's latency is the sum of every live load's histograms of
//! the seconds inside it: percentiles are taken from that sum, never averaged.

use std::fs;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::load::measurements::{
    new_histogram, round3, LatencyStats, LoadConnRecord, LoadSummary, TimelineRow,
};
use crate::load::merge::read_hlog;
use crate::results::files::{CONNECTIONS, LATENCY_LOG, LOAD_SUMMARY, TIMELINE};

/// The result directories one load run writes as it goes: each generator's own
/// (client hosts' `host-N`, `--processes` children's `process-N`), else `root` itself.
pub fn live_dirs(root: &Path) -> Vec<PathBuf> {
    let mut subdirs: Vec<PathBuf> = fs::read_dir(root)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    subdirs.sort();
    let nested: Vec<PathBuf> = subdirs.iter().flat_map(|d| live_dirs(d)).collect();
    if !nested.is_empty() {
        return nested;
    }
    if root.join(LOAD_SUMMARY).is_file() {
        vec![root.to_path_buf()]
    } else {
        Vec::new()
    }
}

/// The result directories of every load run under `roots` ([`live_dirs`]), as they are
/// now: a load that has not begun yet has none.
pub fn live_dirs_of(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots.iter().flat_map(|d| live_dirs(d)).collect()
}

/// When a second of a load's timeline (or its interval log) falls in a window: by its
/// middle, so each second counts in exactly one of two adjacent windows.
fn inside(start_unix: f64, length_s: f64, from: f64, to: f64) -> bool {
    let middle = start_unix + length_s / 2.0;
    from <= middle && middle < to
}

/// Connections of every live load together, as their summaries and timelines say now.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Connections {
    /// Connections established so far (over the loads' whole runs).
    pub established: u64,
    /// Connection attempts that failed so far.
    pub failed: u64,
    /// Connections open in each load's latest timeline second, summed.
    pub open: u64,
}

fn read_summary(dir: &Path) -> Option<LoadSummary> {
    serde_json::from_str(&fs::read_to_string(dir.join(LOAD_SUMMARY)).ok()?).ok()
}

fn read_timeline(dir: &Path) -> Vec<TimelineRow> {
    csv::Reader::from_path(dir.join(TIMELINE))
        .map(|mut r| r.deserialize().filter_map(Result::ok).collect())
        .unwrap_or_default()
}

pub fn connections(dirs: &[PathBuf]) -> Connections {
    let mut c = Connections::default();
    for dir in dirs {
        if let Some(s) = read_summary(dir) {
            c.established += s.connections_established;
            c.failed += s.connections_failed;
        }
        c.open += read_timeline(dir)
            .last()
            .map_or(0, |row| row.active_connections);
    }
    c
}

/// Whether every live load still running has written each second that falls in a window
/// ending at `to`: its latest timeline row is the last such second or later (the next
/// second's middle is at or past `to`).
pub fn written_through(dirs: &[PathBuf], to: f64) -> bool {
    dirs.iter().all(|dir| {
        let Some(summary) = read_summary(dir) else {
            return true;
        };
        summary.complete
            || read_timeline(dir)
                .last()
                .is_some_and(|row| summary.started_unix + row.second as f64 + 1.5 >= to)
    })
}

/// What every live load did in one window, summed.
#[derive(Debug, Clone)]
pub struct Window {
    /// The window, Unix seconds.
    pub from: f64,
    pub to: f64,
    pub requests: u64,
    /// Bytes received (echoed back) in the window.
    pub bytes: u64,
    /// Errors from `errors_from` (the stair's start: a refused or reset connection
    /// shows while its batch connects) to the window's end.
    pub errors: u64,
    /// Echoed bytes that did not match, over the loads' whole runs so far.
    pub mismatches: u64,
    /// Requests and bytes per second: each load's counts over the whole timeline seconds
    /// it had in the window, summed over the loads (a load's seconds start when it
    /// started, so a window of 1.5 s holds one or two of them, never 1.5).
    pub requests_per_s: f64,
    pub bytes_per_s: f64,
    /// Latency of the requests completed in the window.
    pub latency: Histogram<u64>,
    /// Connections open at the window's end.
    pub connections: Connections,
}

/// The window [from, to) of the loads writing into `dirs`.
pub fn window(dirs: &[PathBuf], errors_from: f64, from: f64, to: f64) -> Window {
    let mut w = Window {
        from,
        to,
        requests: 0,
        bytes: 0,
        requests_per_s: 0.0,
        bytes_per_s: 0.0,
        errors: 0,
        mismatches: 0,
        latency: new_histogram(),
        connections: connections(dirs),
    };
    for dir in dirs {
        let Some(summary) = read_summary(dir) else {
            continue;
        };
        let started = summary.started_unix;
        w.mismatches += summary.mismatches;
        let (mut seconds, mut requests, mut bytes) = (0u64, 0, 0);
        for row in read_timeline(dir) {
            let at = started + row.second as f64;
            if inside(at, 1.0, from, to) {
                seconds += 1;
                requests += row.requests;
                bytes += row.bytes;
            }
            if inside(at, 1.0, errors_from, to) {
                w.errors += row.errors;
            }
        }
        w.requests += requests;
        w.bytes += bytes;
        if seconds > 0 {
            w.requests_per_s += requests as f64 / seconds as f64;
            w.bytes_per_s += bytes as f64 / seconds as f64;
        }
        if let Ok((start, intervals)) = read_hlog(&dir.join(LATENCY_LOG)) {
            let start = start.unwrap_or(started);
            for interval in intervals.iter().filter(|i| !i.raw) {
                if inside(start + interval.start_s, interval.length_s, from, to) {
                    // Same bounds as every load histogram, so adding cannot fail.
                    let _ = w.latency.add(&interval.histogram);
                }
            }
        }
    }
    w
}

impl Window {
    /// The window as a load summary, so the step judge's rules apply to it unchanged:
    /// its connections are those open at the window's end.
    pub fn as_summary(&self) -> LoadSummary {
        let attempts = self.requests + self.errors;
        LoadSummary {
            duration_s: self.to - self.from,
            connections_established: self.connections.open,
            max_concurrent: self.connections.open,
            connections_failed: self.connections.failed,
            requests_completed: self.requests,
            errors_total: self.errors,
            error_rate: if attempts == 0 {
                0.0
            } else {
                self.errors as f64 / attempts as f64
            },
            mismatches: self.mismatches,
            throughput_rps: round3(self.requests_per_s),
            throughput_bytes_per_s: round3(self.bytes_per_s),
            latency_us: LatencyStats::of(&self.latency),
            complete: true,
            ..LoadSummary::default()
        }
    }
}

/// How a batch connected, from its loads' connections.csv (complete once they stopped).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ramp {
    /// Seconds from the batch's start until its last connection was established.
    pub seconds: f64,
    /// Connections of the batch that were established.
    pub established: u64,
}

impl Ramp {
    pub fn rate_per_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.established as f64 / self.seconds)
    }
}

/// The ramp of a batch that started at `start_unix`: the last first connection's connect
/// end (opened + connect time) over every load of the batch.
pub fn ramp(dirs: &[PathBuf], start_unix: f64) -> Option<Ramp> {
    let mut last: Option<f64> = None;
    let mut established = 0;
    for dir in dirs {
        let Ok(mut reader) = csv::Reader::from_path(dir.join(CONNECTIONS)) else {
            continue;
        };
        for record in reader
            .deserialize::<LoadConnRecord>()
            .filter_map(Result::ok)
        {
            // A failed attempt has no local port: it never connected. A later attempt is a
            // reconnection (`--reconnect`), not the batch connecting.
            if record.local_port == 0 || record.attempt != 1 {
                continue;
            }
            established += 1;
            let at = record.opened_unix + record.connect_us as f64 / 1e6;
            last = Some(last.map_or(at, |l: f64| l.max(at)));
        }
    }
    last.map(|at| Ramp {
        seconds: (at - start_unix).max(0.0),
        established,
    })
}

/// Bytes sent and received by every load, as their summaries say (final once they stopped).
pub fn bytes(dirs: &[PathBuf]) -> (u64, u64) {
    dirs.iter()
        .filter_map(|d| read_summary(d))
        .fold((0, 0), |(sent, received), s| {
            (sent + s.bytes_sent, received + s.bytes_received)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::measurements::{record_us, Outputs};

    /// A load directory as a live load leaves it: `seconds` timeline rows and intervals,
    /// each second with `requests` requests of `us` microseconds and one error.
    fn live_load(dir: &Path, started: f64, seconds: u64, requests: u64, us: u64, open: u64) {
        let summary = LoadSummary {
            started_unix: started,
            connections_established: open,
            ..LoadSummary::default()
        };
        let mut outputs = Outputs::create(dir, started, &summary).unwrap();
        for second in 0..seconds {
            let mut h = new_histogram();
            for _ in 0..requests {
                record_us(&mut h, us);
            }
            let row = TimelineRow {
                second,
                active_connections: open,
                requests,
                bytes: requests * 64,
                errors: 1,
                ..TimelineRow::default()
            };
            outputs
                .write_second(&row, second as f64, 1.0, &h, None)
                .unwrap();
        }
    }

    #[test]
    fn a_load_that_begins_after_the_window_opened_is_found_when_it_is_read() {
        let root = tempfile::tempdir().unwrap();
        let (early, late) = (root.path().join("stair-1"), root.path().join("stair-2"));
        live_load(&early, 1000.0, 10, 10, 100, 20);
        std::fs::create_dir_all(&late).unwrap();
        let roots = vec![early.clone(), late.clone()];
        // Stair 2's load has not begun (frozen, or slow to start): no folder of its own yet.
        assert_eq!(live_dirs_of(&roots), std::slice::from_ref(&early));
        // It begins inside the window and connects its batch: read at the window's end,
        // both loads count.
        live_load(&late, 1005.0, 4, 10, 100, 20);
        let dirs = live_dirs_of(&roots);
        assert_eq!(dirs, [early, late]);
        assert_eq!(window(&dirs, 1000.0, 1005.0, 1009.0).connections.open, 40);
    }

    #[test]
    fn a_window_of_a_second_and_a_half_rates_the_whole_seconds_it_holds() {
        let root = tempfile::tempdir().unwrap();
        live_load(root.path(), 1000.0, 10, 100, 100, 2);
        let dirs = live_dirs(root.path());
        // One second's middle (1002.5) or two (1002.5, 1003.5) inside: 100/s either way,
        // where dividing by 1.5 s gave 66.7 or 133.3.
        for (from, seconds) in [(1001.9, 1), (1002.2, 2)] {
            let w = window(&dirs, 1000.0, from, from + 1.5);
            assert_eq!(w.requests, 100 * seconds, "{w:?}");
            assert_eq!(w.as_summary().throughput_rps, 100.0, "{w:?}");
        }
    }

    #[test]
    fn a_window_is_written_once_every_running_load_has_its_last_second() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        // Seconds 0-3 written, their middles 1000.5 to 1003.5.
        live_load(&a, 1000.0, 4, 10, 100, 1);
        let dirs = vec![a.clone()];
        // A window to 1004.0 or 1004.5 holds second 3 (middle 1003.5), not 4 (1004.5):
        // written.
        assert!(written_through(&dirs, 1004.0));
        assert!(written_through(&dirs, 1004.5));
        // To 1004.6, second 4's middle is inside and not written yet.
        assert!(!written_through(&dirs, 1004.6));
        // A load with no second yet is waited for; one that ended is not.
        live_load(&b, 1000.0, 0, 0, 0, 1);
        assert!(!written_through(&[a.clone(), b.clone()], 1001.0));
        let ended = LoadSummary {
            started_unix: 1000.0,
            complete: true,
            ..LoadSummary::default()
        };
        Outputs::rewrite_summary(&b, &ended).unwrap();
        assert!(written_through(&[a, b], 1001.0));
    }

    #[test]
    fn a_window_adds_the_seconds_inside_it_over_every_load() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("host-1"), root.path().join("host-2"));
        // Two loads, the second started half a second later and slower.
        live_load(&a, 1000.0, 6, 10, 100, 5);
        live_load(&b, 1000.5, 6, 10, 900, 7);
        let dirs = live_dirs(root.path());
        assert_eq!(dirs, [a.clone(), b.clone()]);
        // Middles in [1002, 1004.2): seconds 2 and 3 of the first load (1002.5, 1003.5),
        // seconds 1, 2 and 3 of the second (1002, 1003, 1004).
        let w = window(&dirs, 1000.0, 1002.0, 1004.2);
        assert_eq!(w.requests, 50);
        assert_eq!(w.bytes, 50 * 64);
        // Errors from the start: seconds 0 to 3 of both.
        assert_eq!(w.errors, 8);
        assert_eq!(w.latency.len(), 50);
        assert_eq!(w.connections.open, 12);
        assert_eq!(w.connections.established, 12);
        let s = w.as_summary();
        // 20 requests at 100 us and 30 at 900 us, added (not averaged) into one histogram.
        assert!(s.latency_us.p99 >= 900 && s.latency_us.p99 < 910, "{s:?}");
        assert!(s.latency_us.p50 >= 900, "{s:?}");
        assert_eq!(
            w.latency.value_at_quantile(0.3),
            w.latency.lowest_equivalent(100)
        );
        assert_eq!(s.error_rate, 8.0 / 58.0);
        // 10 requests a second per load, whatever the window's length.
        assert_eq!(s.throughput_rps, 20.0);
        assert_eq!(s.throughput_bytes_per_s, 20.0 * 64.0);
    }

    #[test]
    fn a_batch_ramps_from_the_start_it_is_given_to_its_last_connection() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let connected = |opened_unix, connect_us| LoadConnRecord {
            attempt: 1,
            local_port: 40_000,
            opened_unix,
            connect_us,
            ..LoadConnRecord::default()
        };
        // A failed attempt (no local port) is not a connection, however late it ended;
        // a reconnection is not the batch connecting.
        let failed = LoadConnRecord {
            attempt: 1,
            opened_unix: 1030.0,
            connect_us: 1_000_000,
            ..LoadConnRecord::default()
        };
        let reconnected = LoadConnRecord {
            attempt: 2,
            ..connected(1080.0, 100_000)
        };
        for (dir, records) in [
            (&a, vec![connected(1009.0, 250_000), failed, reconnected]),
            (&b, vec![connected(1009.5, 1_000_000)]),
        ] {
            Outputs::create(dir, 1000.0, &LoadSummary::default())
                .and_then(|mut o| o.write_records(&records))
                .unwrap();
        }
        // Loads that began connecting 9 s after the stair started ramp over those 9 s too.
        let r = ramp(&[a, b], 1000.0).unwrap();
        assert_eq!((r.seconds, r.established), (10.5, 2));
        assert_eq!(r.rate_per_s(), Some(2.0 / 10.5));
        assert_eq!(ramp(&[tmp.path().join("none")], 1000.0), None);
    }
}
