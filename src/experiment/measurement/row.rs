//! One results row from one measured window, for a fresh server's step and a stair of a
//! staircase alike: what ran ([`base_row`]), what the server and the load left behind
//! (the two sides' summaries, /proc samples and kernel counters) and whose window it
//! was ([`Origin`]). Every row of a run is built by [`build`], so a new column is
//! thought about once.

use std::path::PathBuf;

use super::judge::{LoadSide, ServerSide};
use super::probe::Sample;
use crate::results::{generator_bound, Row, Status, DISTURBED_PCT};
use crate::scenario::{ModelEntry, Scenario, Step};

/// Whose window a row measures: what a stair's row takes from its staircase beside the
/// two sides, and what it leaves out.
pub enum Origin {
    /// A fresh server's step; its load writes into `load_dir`, read for the spread of
    /// its connections and seconds.
    Step { load_dir: PathBuf },
    /// One stair (or the hold) on a live server.
    Stair(StairRow),
}

/// What a stair's row takes from its staircase: the server's counts are for the whole
/// run, so its byte counts are not compared per stair, and its time to establish is its
/// batch's ramp, not the time since the idle server.
#[derive(Default)]
pub struct StairRow {
    /// 1-based; the hold repeats the last stair's.
    pub index: u32,
    /// The live server before the first stair, the baseline of its memory per connection
    /// (none before the server has stopped: no stair falls back to another baseline).
    pub idle: Option<Sample>,
    /// The server's workers, from its summary once it has stopped.
    pub workers: Option<u64>,
    /// The live generators' RSS gained since before their batches connected.
    pub load_rss_gained: Option<u64>,
    /// How long its batch could take to connect, in seconds (none for the hold).
    pub deadline_s: Option<f64>,
    /// Its batch's ramp: the seconds from its start to its last connection, and the rate.
    pub ramp: Option<(f64, Option<f64>)>,
}

/// A row's columns that say what ran: the model, the step's values and the repetition.
pub fn base_row(scenario: &Scenario, entry: &ModelEntry, step: &Step, rep: u32) -> Row {
    Row {
        model: entry.label.clone(),
        step: step.name.clone(),
        repetition: rep,
        connections: step.connections,
        size: step.size,
        delay_ms: step.delay.map_or(0.0, |d| d.as_secs_f64() * 1e3),
        rate: step.rate,
        workers: step.workers.or(entry.options.workers.map(|w| w.0)),
        requests_per_conn: step.requests.or(scenario.load.requests.map(|r| r.0)),
        client_hosts: step
            .hosts
            .or(scenario.client_hosts)
            .or(scenario.ssh.as_ref().map(|s| s.clients.len() as u32)),
        ..Row::default()
    }
}

/// The row of one window: what ran, measured from the two sides (`None`: nothing was
/// measured, as for a stair cut short before its window), judged `status`. A non-empty
/// `reason` replaces the one measuring may give (an open loop that could not offer its
/// rate), which an `ok` row keeps.
pub fn build(
    base: Row,
    origin: &Origin,
    measured: Option<(&ServerSide, &LoadSide)>,
    status: Status,
    reason: String,
) -> Row {
    let mut row = base;
    if let Origin::Stair(stair) = origin {
        row.stair = Some(stair.index);
    }
    if let Some((server, load)) = measured {
        measure_origin(&mut row, server, load, origin);
    }
    row.status = status;
    if !reason.is_empty() {
        row.failure_reason = reason;
    }
    row
}

/// The measured columns of a window of `origin`: [`measure`], and what only a step's folder or a
/// stair's staircase gives.
fn measure_origin(row: &mut Row, server: &ServerSide, load: &LoadSide, origin: &Origin) {
    let stair = match origin {
        Origin::Step { load_dir } => {
            measure(row, server, load);
            super::spread::join_order(row, load_dir);
            super::spread::request_rate_spread(row, load_dir);
            return;
        }
        Origin::Stair(stair) => stair,
    };
    row.workers = row.workers.or(stair.workers);
    measure_sides(row, server, load, false);
    let open = row.connections_established.unwrap_or(0);
    row.server_rss_per_conn_bytes = match (row.server_rss_max_bytes, stair.idle) {
        (Some(max), Some(idle)) if open > 0 => Some(max.saturating_sub(idle.rss_bytes) / open),
        _ => None,
    };
    if let (Some(gained), true) = (stair.load_rss_gained, open > 0) {
        row.load_rss_per_conn_bytes = Some((gained as f64 / open as f64).round());
    }
    row.stair_deadline_s = stair.deadline_s;
    row.establish_s = None;
    row.establish_per_s = None;
    if let Some((seconds, rate)) = stair.ramp {
        row.ramp_s = Some((seconds * 1000.0).round() / 1000.0);
        row.connect_rate_per_s = rate.map(|r| r.round());
        row.establish_s = row.ramp_s;
        row.establish_per_s = row.connect_rate_per_s;
    }
}

/// Fills a row's measured columns from a step's summaries and samples.
pub fn measure(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    measure_sides(row, server, load, true);
}

/// [`measure`], with the load's byte counts (and their comparison with the server's)
/// only when `bytes` (the two sides count over the same window).
fn measure_sides(row: &mut Row, server: &ServerSide, load: &LoadSide, bytes: bool) {
    measure_summaries(row, server, load, bytes);
    measure_cpu(row, server, load);
    measure_memory(row, server);
    super::cost::measure(
        row,
        &server.run.samples,
        &server.window.kernel,
        server.run.kernel_ends,
        &load.samples,
    );
    super::request_cost::measure(row, server.window.calls);
    measure_net(row, server, load);
    if let (Some(cs), Some(cr), Some(si), Some(so)) = (
        row.client_bytes_sent,
        row.client_bytes_received,
        row.server_bytes_in,
        row.server_bytes_out,
    ) {
        row.bytes_match = Some(cs == si && cr == so);
    }
}

/// The two summaries' figures: the load's throughput, latency, errors and bytes, the
/// server's connections and bytes.
fn measure_summaries(row: &mut Row, server: &ServerSide, load: &LoadSide, bytes: bool) {
    if let Some(l) = &load.summary {
        row.duration_s = Some(l.duration_s);
        row.connections_established = Some(l.connections_established);
        row.requests = Some(l.requests_completed);
        row.throughput_rps = Some(l.throughput_rps);
        row.throughput_mib_s = Some(l.throughput_bytes_per_s / (1u64 << 20) as f64);
        row.p50_us = Some(l.latency_us.p50 as f64);
        row.p90_us = Some(l.latency_us.p90 as f64);
        row.p99_us = Some(l.latency_us.p99 as f64);
        row.p999_us = Some(l.latency_us.p999 as f64);
        row.max_us = Some(l.latency_us.max as f64);
        row.mean_us = (l.latency_us.count > 0).then_some(l.latency_us.mean);
        row.completion_s = l.completion_s;
        row.errors = Some(l.errors_total);
        row.error_rate = Some(l.error_rate);
        row.mismatches = Some(l.mismatches);
        if bytes {
            row.client_bytes_sent = Some(l.bytes_sent);
            row.client_bytes_received = Some(l.bytes_received);
        }
    }
    if let Some(s) = &server.run.summary {
        row.max_concurrent_server = Some(s.max_concurrent);
        row.server_bytes_in = Some(s.bytes_in);
        row.server_bytes_out = Some(s.bytes_out);
        if row.workers.is_none() {
            row.workers = Some(s.workers as u64);
        }
    }
}

/// CPU: the generators', the server's, what the machine did besides them, and the
/// server's CPU per request.
fn measure_cpu(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    if let Some(pct) = load.cpu_pct {
        // Judged on the figure written, so the two columns never disagree at the threshold.
        let pct = round(pct, 1);
        row.load_cpu_pct = Some(pct);
        row.generator_bound = Some(generator_bound(pct, load.cores));
    }
    // An open loop that could not offer its rate measured the generator, whatever its
    // CPU: flagged with why (a failure found later replaces the reason).
    if let Some(why) = load.summary.as_ref().and_then(|s| s.rate_not_offered()) {
        row.generator_bound = Some(true);
        row.failure_reason = why;
    }
    if let (Some(a), Some(b)) = (server.window.at_start, server.window.at_end) {
        // Each sample splits its exact total by the tick counts of that moment, so the
        // split of a difference can come out below zero on one side: the total is
        // exact, the split is bounded by it.
        let total = (b.cpu_s() - a.cpu_s()).max(0.0);
        let user = (b.cpu_user_s - a.cpu_user_s).clamp(0.0, total);
        let sys = total - user;
        row.server_cpu_user_s = Some(round(user, 3));
        row.server_cpu_sys_s = Some(round(sys, 3));
        if let Some(window) = load_window_s(server, load) {
            row.server_cpu_pct = Some(round(total / window * 100.0, 1));
        }
    }
    // The quiet-machine check: what the machine did besides this step's server and load.
    // The machine's and the server's CPU over the same readings' window, the runner's.
    if let (Some(a), Some(b), Some(server_s), Some(load_pct)) = (
        server.window.machine_busy_at_start,
        server.window.machine_busy_at_end,
        row.server_cpu_user_s
            .zip(row.server_cpu_sys_s)
            .map(|(u, s)| u + s),
        row.load_cpu_pct,
    ) {
        if server.window.wall_s > 0.0 {
            let busy_pct = (b - a) / server.window.wall_s * 100.0;
            let server_pct = server_s / server.window.wall_s * 100.0;
            // Clock ticks (10 ms) and the generators' own probe window blur the three
            // figures by a few %: the result is held within the machine's cores.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            let pct = round(
                (busy_pct - server_pct - load_pct).clamp(0.0, 100.0 * cores),
                1,
            );
            row.interference_pct = Some(pct);
            row.disturbed = Some(pct > DISTURBED_PCT);
        }
    }
    if let (Some(user), Some(sys), Some(requests)) =
        (row.server_cpu_user_s, row.server_cpu_sys_s, row.requests)
    {
        if requests > 0 {
            row.server_cpu_us_per_request = Some(round((user + sys) / requests as f64 * 1e6, 3));
        }
    }
}

/// The server's memory, threads and fds at their most, and its memory per connection.
fn measure_memory(row: &mut Row, server: &ServerSide) {
    let window: Vec<&Sample> = server
        .run
        .samples
        .iter()
        .chain(server.window.at_start.iter())
        .chain(server.window.at_end.iter())
        .collect();
    if !window.is_empty() {
        let rss_max = window.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
        row.server_rss_max_bytes = Some(rss_max);
        row.server_threads_max = window.iter().map(|s| s.threads).max();
        row.server_fds_max = window.iter().map(|s| s.fds).max();
        // Memory a connection costs: growth over the idle server, per connection held.
        let held = row
            .max_concurrent_server
            .filter(|c| *c > 0)
            .or(row.connections_established.filter(|c| *c > 0));
        if let (Some(idle), Some(held)) = (server.window.idle.or(server.window.at_start), held) {
            row.server_rss_per_conn_bytes = Some(rss_max.saturating_sub(idle.rss_bytes) / held);
        }
    }
}

/// The seconds the server's rates are counted over: the load's own measured time. The
/// runner's readings enclose it (taken before the generators start and after they exit),
/// and a generator that starts late or takes long to exit would otherwise spread the
/// same work over idle seconds. The runner's window where the load has no summary.
fn load_window_s(server: &ServerSide, load: &LoadSide) -> Option<f64> {
    let measured = load
        .summary
        .as_ref()
        .map(|s| s.duration_s)
        .filter(|d| *d > 0.0);
    let window = measured.map_or(server.window.wall_s, |d| d.min(server.window.wall_s));
    (window > 0.0).then_some(window)
}

/// The TCP counters of the server's namespace over the load.
fn measure_net(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    if let (Some(a), Some(b)) = (server.window.net_at_start, server.window.net_at_end) {
        let d = b.since(&a);
        if let Some(window) = load_window_s(server, load) {
            row.net_segs_in_per_s = Some(round(d.segs_in as f64 / window, 1));
            row.net_segs_out_per_s = Some(round(d.segs_out as f64 / window, 1));
        }
        row.net_retrans_segs = Some(d.retrans_segs);
        row.net_resets_sent = Some(d.resets_sent);
        row.net_listen_drops = Some(d.listen_drops);
        row.net_listen_overflows = Some(d.listen_overflows);
        row.net_syn_retrans = Some(d.syn_retrans);
        row.net_scope = server.run.net_scope.map(|s| s.name().to_string());
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::super::judge::tests::{client, load_side, server_side, server_summary};
    use super::super::judge::{Readings, ServerRun};
    use super::*;

    fn sample(t_s: f64, cpu_s: f64, rss_bytes: u64) -> Sample {
        Sample {
            t_s,
            cpu_user_s: cpu_s,
            cpu_sys_s: cpu_s / 2.0,
            rss_bytes,
            threads: 5,
            fds: 104,
        }
    }

    #[test]
    fn the_split_of_the_server_cpu_is_never_below_zero() {
        // Each sample's exact total split by its own ticks: 0.010 s all user at the
        // start (one user tick), 0.146 s at the end split 1:20, so user time "fell".
        let at = |t_s, user, sys| Sample {
            t_s,
            cpu_user_s: user,
            cpu_sys_s: sys,
            ..Sample::default()
        };
        let server = ServerSide {
            window: Readings {
                at_start: Some(at(0.1, 0.010, 0.0)),
                at_end: Some(at(1.1, 0.146 / 21.0, 0.146 * 20.0 / 21.0)),
                wall_s: 1.0,
                ..Readings::default()
            },
            ..server_side(server_summary())
        };
        let mut row = Row::default();
        measure(&mut row, &server, &load_side(client()));
        assert_eq!(row.server_cpu_user_s, Some(0.0));
        assert_eq!(row.server_cpu_sys_s, Some(0.136));
        assert_eq!(row.server_cpu_pct, Some(13.6));
    }

    #[test]
    fn after_a_warmup_cpu_is_measured_from_its_end_and_memory_from_the_idle_server() {
        // 100 connections: the idle server at 1 MB, 1.2 MB once they are open (the warm-up's
        // end, where the measured CPU starts), 1.3 MB at most.
        let server = ServerSide {
            window: Readings {
                idle: Some(sample(0.1, 0.5, 1_000_000)),
                at_start: Some(sample(0.3, 1.0, 1_200_000)),
                at_end: Some(sample(1.3, 1.5, 1_300_000)),
                wall_s: 1.0,
                ..Readings::default()
            },
            ..server_side(server_summary())
        };
        let mut row = Row::default();
        measure(&mut row, &server, &load_side(client()));
        assert_eq!(row.server_cpu_user_s, Some(0.5));
        assert_eq!(row.server_cpu_pct, Some(75.0));
        assert_eq!(row.server_rss_per_conn_bytes, Some(3_000));
    }

    #[test]
    fn rates_are_counted_over_the_loads_own_time_not_the_runners_readings() {
        // The runner read the server 4 s apart, but the generator started 2.4 s late
        // and measured 1.6 s: 430 segments and 0.16 s of CPU were spent in those 1.6 s.
        let counters = |segs| super::super::netstat::NetCounters {
            segs_in: segs,
            segs_out: segs,
            ..Default::default()
        };
        let server = ServerSide {
            window: Readings {
                at_start: Some(sample(0.1, 1.0, 1_000_000)),
                at_end: Some(sample(4.1, 1.0 + 0.16 / 1.5, 1_000_000)),
                net_at_start: Some(counters(1_000)),
                net_at_end: Some(counters(1_430)),
                machine_busy_at_start: Some(10.0),
                machine_busy_at_end: Some(10.4),
                wall_s: 4.0,
                ..Readings::default()
            },
            ..server_side(server_summary())
        };
        let mut client = client();
        client.duration_s = 1.6;
        let load = LoadSide {
            cpu_pct: Some(5.0),
            ..load_side(client)
        };
        let mut row = Row::default();
        measure(&mut row, &server, &load);
        assert_eq!(row.net_segs_in_per_s, Some(268.8));
        assert_eq!(row.net_segs_out_per_s, Some(268.8));
        assert_eq!(row.server_cpu_pct, Some(10.0));
        // The machine's busy time is read with the server's, over the runner's 4 s:
        // 10 % busy, 4 % of it the server's, 5 % the generators'.
        assert_eq!(row.interference_pct, Some(1.0));
    }

    #[test]
    fn measure_fills_a_row_from_both_sides() {
        let server = ServerSide {
            run: ServerRun {
                samples: vec![sample(1.0, 1.5, 1_300_000)],
                ..server_side(server_summary()).run
            },
            window: Readings {
                at_start: Some(sample(0.1, 1.0, 1_000_000)),
                at_end: Some(sample(2.1, 2.0, 1_100_000)),
                wall_s: 2.0,
                ..Readings::default()
            },
        };
        let mut row = Row::default();
        measure(&mut row, &server, &load_side(client()));
        assert_eq!(row.connections_established, Some(100));
        assert_eq!(row.requests, Some(10));
        assert_eq!(row.throughput_mib_s, Some(2.0));
        assert_eq!(row.p99_us, Some(900.0));
        assert_eq!(row.max_us, Some(990.0));
        assert_eq!(row.max_concurrent_server, Some(100));
        assert_eq!(row.workers, Some(4));
        assert_eq!(row.bytes_match, Some(true));
        assert_eq!(row.server_cpu_user_s, Some(1.0));
        assert_eq!(row.server_cpu_sys_s, Some(0.5));
        assert_eq!(row.server_cpu_pct, Some(75.0));
        assert_eq!(row.server_rss_max_bytes, Some(1_300_000));
        assert_eq!(row.server_rss_per_conn_bytes, Some(3_000));
        assert_eq!(row.server_fds_max, Some(104));
    }

    #[test]
    fn a_generator_above_ninety_percent_of_its_cores_is_flagged() {
        let server = server_side(server_summary());
        // Judged as written: 90.04 % of one core is written 90.0 and is not above 90.
        let cases = [
            (185.0, 2, true, 185.0),
            (150.0, 2, false, 150.0),
            (95.0, 1, true, 95.0),
            (90.04, 1, false, 90.0),
        ];
        for (cpu_pct, cores, bound, written) in cases {
            let load = LoadSide {
                cpu_pct: Some(cpu_pct),
                cores,
                ..load_side(client())
            };
            let mut row = Row::default();
            measure(&mut row, &server, &load);
            assert_eq!(row.load_cpu_pct, Some(written));
            assert_eq!(
                row.generator_bound,
                Some(bound),
                "{cpu_pct}% of {cores} cores"
            );
        }
        let mut row = Row::default();
        measure(&mut row, &server, &load_side(client()));
        assert_eq!((row.load_cpu_pct, row.generator_bound), (None, None));
    }

    #[test]
    fn measure_leaves_what_was_not_measured_empty() {
        let mut short = server_summary();
        short.bytes_out = 1;
        let mut row = Row {
            workers: Some(2),
            ..Row::default()
        };
        measure(&mut row, &server_side(short), &load_side(client()));
        assert_eq!(row.bytes_match, Some(false));
        assert_eq!(row.workers, Some(2), "the step's own workers are kept");
        assert_eq!(row.server_cpu_pct, None);

        let mut row = Row::default();
        measure(&mut row, &ServerSide::default(), &load_side(client()));
        assert_eq!(row.bytes_match, None);
        assert_eq!(row.max_concurrent_server, None);
        assert_eq!(row.server_rss_max_bytes, None);
        assert_eq!(row.p50_us, Some(500.0));
    }

    #[test]
    fn a_stairs_row_takes_its_staircases_columns_and_no_byte_counts() {
        // 100 connections open: the live server idle at 1 MB, 1.3 MB at most in the window.
        let server = ServerSide {
            window: Readings {
                at_start: Some(sample(0.1, 1.0, 1_200_000)),
                at_end: Some(sample(1.1, 1.5, 1_300_000)),
                wall_s: 1.0,
                ..Readings::default()
            },
            ..ServerSide::default()
        };
        let stair = StairRow {
            index: 2,
            idle: Some(sample(0.0, 0.5, 1_000_000)),
            workers: Some(3),
            load_rss_gained: Some(50_000),
            deadline_s: Some(7.0),
            ramp: Some((0.12345, Some(810.4))),
        };
        let row = build(
            Row::default(),
            &Origin::Stair(stair),
            Some((&server, &load_side(client()))),
            Status::Ok,
            String::new(),
        );
        assert_eq!(row.stair, Some(2));
        assert_eq!(row.workers, Some(3));
        assert_eq!(row.connections_established, Some(100));
        assert_eq!(row.requests, Some(10));
        assert_eq!(
            (
                row.client_bytes_sent,
                row.client_bytes_received,
                row.bytes_match
            ),
            (None, None, None)
        );
        assert_eq!(row.server_rss_per_conn_bytes, Some(3_000));
        assert_eq!(row.load_rss_per_conn_bytes, Some(500.0));
        assert_eq!(row.stair_deadline_s, Some(7.0));
        assert_eq!(
            (row.ramp_s, row.connect_rate_per_s),
            (Some(0.123), Some(810.0))
        );
        assert_eq!(
            (row.establish_s, row.establish_per_s),
            (Some(0.123), Some(810.0))
        );
        assert_eq!(row.status, Status::Ok);

        // Cut short before its window: what ran and why, nothing measured.
        let row = build(
            Row::default(),
            &Origin::Stair(StairRow {
                index: 1,
                workers: Some(3),
                ..StairRow::default()
            }),
            None,
            Status::Interrupted,
            "run interrupted by signal 2".into(),
        );
        assert_eq!(
            (row.stair, row.workers, row.requests),
            (Some(1), None, None)
        );
        assert_eq!(row.failure_reason, "run interrupted by signal 2");
    }

    #[test]
    fn an_ok_row_keeps_the_reason_measuring_gave_and_a_failure_replaces_it() {
        let mut behind = client();
        behind.requests_planned = Some(1_000);
        behind.requests_sent = Some(500);
        let server = server_side(server_summary());
        let load = load_side(behind);
        let origin = Origin::Step {
            load_dir: PathBuf::from("/nonexistent"),
        };
        let ok = build(
            Row::default(),
            &origin,
            Some((&server, &load)),
            Status::Ok,
            String::new(),
        );
        assert!(ok.failure_reason.starts_with("generator-bound:"), "{ok:?}");
        assert_eq!(ok.generator_bound, Some(true));
        assert_eq!(ok.bytes_match, Some(true));
        let failed = build(
            Row::default(),
            &origin,
            Some((&server, &load)),
            Status::Failed,
            "p99 900 us above 1 ms".into(),
        );
        assert_eq!(failed.failure_reason, "p99 900 us above 1 ms");
    }
}
