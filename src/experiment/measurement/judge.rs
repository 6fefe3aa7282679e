//! What a step left behind, judged and measured: pure functions from the two
//! summaries (the server's and the load generator's, as the crate's own types)
//! and the server's /proc samples to a failure reason and a results.csv row.
//! No processes and no files here, so every rule is unit-tested directly.

use super::cost::KernelWatch;
use super::netstat::{NetCounters, Scope};
use super::probe::Sample;
use crate::load::measurements::LoadSummary;
use crate::results::{generator_bound, Row, DISTURBED_PCT};
use crate::scenario::{FailureRule, ModelEntry, Scenario, Step};
use crate::server::counters::ServerSummary;
use crate::units::{ms, trim_float};

/// What the server side of a step left behind.
#[derive(Debug, Default)]
pub struct ServerSide {
    /// server-summary.json, when the server wrote one.
    pub summary: Option<ServerSummary>,
    pub died: Option<String>,
    pub start_error: Option<String>,
    pub stop_problem: Option<String>,
    pub samples: Vec<Sample>,
    /// The server before the load, the baseline of its memory per connection; None when
    /// `at_load_start` is that moment too (a stair's window).
    pub idle: Option<Sample>,
    pub at_load_start: Option<Sample>,
    pub at_load_end: Option<Sample>,
    pub load_wall_s: f64,
    /// The TCP counters of the server's network namespace when the load started and ended.
    pub net_at_load_start: Option<NetCounters>,
    pub net_at_load_end: Option<NetCounters>,
    /// Whose traffic those counters include.
    pub net_scope: Option<Scope>,
    /// Why the step has no namespace of its own although the scenario asked for one.
    pub net_note: Option<String>,
    /// The kernel's socket and slab memory before the load and at its most sockets.
    pub kernel: KernelWatch,
    /// The ends of a connection the server's namespace holds (1 in the lab, else 2).
    pub kernel_ends: u64,
    /// The machine's busy CPU seconds (probe::machine_busy_s) when the load started and ended.
    pub machine_busy_at_load_start: Option<f64>,
    pub machine_busy_at_load_end: Option<f64>,
    /// The kernel's counts of the server's system calls and context switches over the load.
    pub calls: Option<super::request_cost::Calls>,
}

/// What the client side of a step left behind.
#[derive(Debug, Default)]
pub struct LoadSide {
    /// load/summary.json (merged over the client hosts when there are several).
    pub summary: Option<LoadSummary>,
    pub exit: Option<String>,
    pub timed_out: bool,
    /// The generators' CPU over the load, % of one core, from probing their process trees.
    pub cpu_pct: Option<f64>,
    /// The cores the generators could use: their `cpus` pinning or every CPU, at most
    /// their threads.
    pub cores: usize,
    /// Each generator's /proc samples (load-probe-N.csv).
    pub samples: Vec<Vec<Sample>>,
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

/// Applies the failure rule; None when the step passed.
pub fn judge(
    rule: &FailureRule,
    step: &Step,
    server: &ServerSide,
    load: &LoadSide,
) -> Option<String> {
    let client = match finished_summary(server, load) {
        Ok(client) => client,
        Err(why) => return Some(why),
    };
    connections_failure(rule, step, server, client)
        .or_else(|| traffic_failure(rule, server, client))
        .or_else(|| server.stop_problem.clone())
}

/// The load's summary to judge, or why the step left none: the server did not start or
/// died, or the generator timed out or wrote nothing.
fn finished_summary<'a>(
    server: &ServerSide,
    load: &'a LoadSide,
) -> Result<&'a LoadSummary, String> {
    if let Some(e) = &server.start_error {
        return Err(e.clone());
    }
    if let Some(d) = &server.died {
        return Err(d.clone());
    }
    if load.timed_out {
        return Err("load generator did not finish within the step timeout".into());
    }
    load.summary.as_ref().ok_or_else(|| {
        format!(
            "load generator left no summary ({})",
            load.exit.as_deref().unwrap_or("no exit status")
        )
    })
}

/// The rules on connections: how many were established, refused, and held open at once.
fn connections_failure(
    rule: &FailureRule,
    step: &Step,
    server: &ServerSide,
    client: &LoadSummary,
) -> Option<String> {
    let established = client.connections_established;
    let needed = (rule.min_established.0 * step.connections as f64).ceil() as u64;
    if established < needed {
        return Some(format!(
            "{established} of {} connections established (needed {needed})",
            step.connections
        ));
    }
    if let Some(s) = &server.summary {
        let total = s.refused_total();
        if total > rule.max_refused {
            let why: Vec<String> = s
                .refused
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(reason, n)| format!("{reason}: {n}"))
                .collect();
            let errors: String = s
                .refusal_errors
                .iter()
                .map(|(reason, error)| format!("; {reason}: the kernel returned {error}"))
                .collect();
            return Some(format!(
                "server refused {total} connections ({}){errors}",
                why.join(", ")
            ));
        }
    }
    if let (Some(fraction), Some(s)) = (rule.min_concurrent, &server.summary) {
        let held = s.max_concurrent;
        let needed = (fraction.0 * step.connections as f64).ceil() as u64;
        let client_held = client.max_concurrent;
        if held < needed && client_held < needed {
            return Some(format!(
                "connections opened too slowly to be open all at once: at most {client_held} of {} \
                 on the client, {held} on the server (a slow accept or a busy machine; a longer \
                 hold_together tells them apart)",
                step.connections
            ));
        }
        if held < needed {
            return Some(format!(
                "server held at most {held} of {} connections at once (needed {needed})",
                step.connections
            ));
        }
    }
    None
}

/// The rules on traffic: errors, mismatched echoes, p99 and the two sides' byte counts.
fn traffic_failure(
    rule: &FailureRule,
    server: &ServerSide,
    client: &LoadSummary,
) -> Option<String> {
    if client.error_rate > rule.max_error_rate.0 {
        return Some(format!(
            "error rate {:.4} above {} ({} errors)",
            client.error_rate, rule.max_error_rate.0, client.errors_total
        ));
    }
    if client.mismatches > 0 {
        return Some(format!(
            "{} echoed bytes did not match what was sent",
            client.mismatches
        ));
    }
    if let Some(bound) = rule.max_p99 {
        let p99 = client.latency_us.p99 as f64;
        if p99 > bound.0.as_secs_f64() * 1e6 {
            return Some(format!("p99 {} us above {}", trim_float(p99), ms(bound.0)));
        }
    }
    if let (true, Some(s)) = (rule.bytes_match, &server.summary) {
        let pairs = [
            ("sent", client.bytes_sent, "received", s.bytes_in),
            ("received", client.bytes_received, "sent", s.bytes_out),
        ];
        for (client_verb, c, server_verb, sv) in pairs {
            if c != sv {
                return Some(format!(
                    "bytes differ: client {client_verb} {c}, server {server_verb} {sv}"
                ));
            }
        }
    }
    None
}

/// Fills a row's measured columns from a step's summaries and samples.
pub fn measure(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    measure_summaries(row, server, load);
    measure_cpu(row, server, load);
    measure_memory(row, server);
    super::cost::measure(
        row,
        &server.samples,
        &server.kernel,
        server.kernel_ends,
        &load.samples,
    );
    super::request_cost::measure(row, server.calls);
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
fn measure_summaries(row: &mut Row, server: &ServerSide, load: &LoadSide) {
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
        row.client_bytes_sent = Some(l.bytes_sent);
        row.client_bytes_received = Some(l.bytes_received);
    }
    if let Some(s) = &server.summary {
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
    if let (Some(a), Some(b)) = (server.at_load_start, server.at_load_end) {
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
        server.machine_busy_at_load_start,
        server.machine_busy_at_load_end,
        row.server_cpu_user_s
            .zip(row.server_cpu_sys_s)
            .map(|(u, s)| u + s),
        row.load_cpu_pct,
    ) {
        if server.load_wall_s > 0.0 {
            let busy_pct = (b - a) / server.load_wall_s * 100.0;
            let server_pct = server_s / server.load_wall_s * 100.0;
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
        .samples
        .iter()
        .chain(server.at_load_start.iter())
        .chain(server.at_load_end.iter())
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
        if let (Some(idle), Some(held)) = (server.idle.or(server.at_load_start), held) {
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
    let window = measured.map_or(server.load_wall_s, |d| d.min(server.load_wall_s));
    (window > 0.0).then_some(window)
}

/// The TCP counters of the server's namespace over the load.
fn measure_net(row: &mut Row, server: &ServerSide, load: &LoadSide) {
    if let (Some(a), Some(b)) = (server.net_at_load_start, server.net_at_load_end) {
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
        row.net_scope = server.net_scope.map(|s| s.name().to_string());
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::measurements::LatencyStats;
    use crate::results::Row;
    use crate::scenario::{Dur, Fraction};
    use std::time::Duration;

    fn step(connections: u64) -> Step {
        Step {
            name: format!("c{connections}-s64"),
            connections,
            size: 64,
            delay: None,
            rate: None,
            workers: None,
            requests: None,
            hosts: None,
        }
    }

    /// A clean run of 100 connections: 640 bytes each way, p99 900 us.
    fn client() -> LoadSummary {
        LoadSummary {
            duration_s: 2.0,
            connections_established: 100,
            max_concurrent: 100,
            requests_completed: 10,
            bytes_sent: 640,
            bytes_received: 640,
            throughput_rps: 5.0,
            throughput_bytes_per_s: 2.0 * (1u64 << 20) as f64,
            latency_us: LatencyStats {
                count: 10,
                p50: 500,
                p90: 800,
                p99: 900,
                p999: 950,
                max: 990,
                ..LatencyStats::default()
            },
            ..LoadSummary::default()
        }
    }

    fn server_summary() -> ServerSummary {
        ServerSummary {
            workers: 4,
            max_concurrent: 100,
            accepted: 100,
            bytes_in: 640,
            bytes_out: 640,
            ..ServerSummary::default()
        }
    }

    fn load_side(summary: LoadSummary) -> LoadSide {
        LoadSide {
            summary: Some(summary),
            ..LoadSide::default()
        }
    }

    fn server_side(summary: ServerSummary) -> ServerSide {
        ServerSide {
            summary: Some(summary),
            ..ServerSide::default()
        }
    }

    fn verdict(rule: &FailureRule, server: ServerSummary, client: LoadSummary) -> Option<String> {
        judge(rule, &step(100), &server_side(server), &load_side(client))
    }

    #[test]
    fn a_clean_step_passes() {
        assert_eq!(
            verdict(&FailureRule::default(), server_summary(), client()),
            None
        );
    }

    #[test]
    fn p99_above_the_bound_fails() {
        let rule = FailureRule {
            max_p99: Some(Dur(Duration::from_millis(10))),
            ..FailureRule::default()
        };
        let mut slow = client();
        slow.latency_us.p99 = 10_001;
        assert_eq!(
            verdict(&rule, server_summary(), slow).unwrap(),
            "p99 10001 us above 10ms"
        );
        let mut at_bound = client();
        at_bound.latency_us.p99 = 10_000;
        assert_eq!(verdict(&rule, server_summary(), at_bound), None);
    }

    #[test]
    fn error_rate_above_the_bound_fails() {
        let mut errors = client();
        errors.error_rate = 0.02;
        errors.errors_total = 2;
        assert_eq!(
            verdict(&FailureRule::default(), server_summary(), errors).unwrap(),
            "error rate 0.0200 above 0.01 (2 errors)"
        );
    }

    #[test]
    fn any_mismatch_fails() {
        let mut corrupt = client();
        corrupt.mismatches = 3;
        assert_eq!(
            verdict(&FailureRule::default(), server_summary(), corrupt).unwrap(),
            "3 echoed bytes did not match what was sent"
        );
    }

    #[test]
    fn too_few_established_fails() {
        let mut few = client();
        few.connections_established = 90;
        let rule = FailureRule {
            min_established: Fraction(0.95),
            ..FailureRule::default()
        };
        assert_eq!(
            verdict(&rule, server_summary(), few).unwrap(),
            "90 of 100 connections established (needed 95)"
        );
    }

    #[test]
    fn refused_connections_fail_above_the_allowance() {
        let mut refusing = server_summary();
        refusing.refused.insert("fd_setsize".into(), 3);
        refusing.refused.insert("emfile".into(), 2);
        refusing.refused.insert("max_conns".into(), 0);
        assert_eq!(
            verdict(&FailureRule::default(), refusing.clone(), client()).unwrap(),
            "server refused 5 connections (emfile: 2, fd_setsize: 3)"
        );
        let lenient = FailureRule {
            max_refused: 5,
            ..FailureRule::default()
        };
        assert_eq!(verdict(&lenient, refusing, client()), None);
    }

    #[test]
    fn bytes_must_match_between_the_sides() {
        let mut sent_more = client();
        sent_more.bytes_sent = 650;
        assert_eq!(
            verdict(&FailureRule::default(), server_summary(), sent_more.clone()).unwrap(),
            "bytes differ: client sent 650, server received 640"
        );
        let mut short = server_summary();
        short.bytes_out = 600;
        assert_eq!(
            verdict(&FailureRule::default(), short, client()).unwrap(),
            "bytes differ: client received 640, server sent 600"
        );
        let unchecked = FailureRule {
            bytes_match: false,
            ..FailureRule::default()
        };
        assert_eq!(verdict(&unchecked, server_summary(), sent_more), None);
    }

    #[test]
    fn without_a_server_summary_only_the_client_is_judged() {
        let rule = FailureRule {
            min_concurrent: Some(Fraction(1.0)),
            ..FailureRule::default()
        };
        let no_server = ServerSide::default();
        assert_eq!(
            judge(&rule, &step(100), &no_server, &load_side(client())),
            None
        );
        let mut corrupt = client();
        corrupt.mismatches = 1;
        assert!(judge(&rule, &step(100), &no_server, &load_side(corrupt)).is_some());
    }

    #[test]
    fn without_a_load_summary_the_step_fails() {
        let load = LoadSide {
            exit: Some("exit status: 1".into()),
            ..LoadSide::default()
        };
        assert_eq!(
            judge(
                &FailureRule::default(),
                &step(100),
                &server_side(server_summary()),
                &load
            )
            .unwrap(),
            "load generator left no summary (exit status: 1)"
        );
        let timed_out = LoadSide {
            timed_out: true,
            ..load_side(client())
        };
        assert_eq!(
            judge(
                &FailureRule::default(),
                &step(100),
                &server_side(server_summary()),
                &timed_out
            )
            .unwrap(),
            "load generator did not finish within the step timeout"
        );
    }

    #[test]
    fn concurrency_tells_a_slow_ramp_from_a_server_limit() {
        let rule = FailureRule {
            min_concurrent: Some(Fraction(1.0)),
            ..FailureRule::default()
        };
        let held = |n: u64| ServerSummary {
            max_concurrent: n,
            ..server_summary()
        };
        assert_eq!(
            verdict(&rule, held(90), client()).unwrap(),
            "server held at most 90 of 100 connections at once (needed 100)"
        );
        let mut slow = client();
        slow.max_concurrent = 95;
        assert!(verdict(&rule, held(90), slow)
            .unwrap()
            .starts_with("connections opened too slowly to be open all at once: at most 95 of 100 on the client, 90 on the server"));
    }

    #[test]
    fn process_failures_come_first() {
        let died = ServerSide {
            died: Some("server died during the step".into()),
            ..server_side(server_summary())
        };
        let mut corrupt = client();
        corrupt.mismatches = 1;
        assert_eq!(
            judge(
                &FailureRule::default(),
                &step(100),
                &died,
                &load_side(corrupt)
            )
            .unwrap(),
            "server died during the step"
        );
        let stopped_badly = ServerSide {
            stop_problem: Some("server exited with exit status: 1 on SIGTERM".into()),
            ..server_side(server_summary())
        };
        assert_eq!(
            judge(
                &FailureRule::default(),
                &step(100),
                &stopped_badly,
                &load_side(client())
            )
            .unwrap(),
            "server exited with exit status: 1 on SIGTERM"
        );
    }

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
            at_load_start: Some(at(0.1, 0.010, 0.0)),
            at_load_end: Some(at(1.1, 0.146 / 21.0, 0.146 * 20.0 / 21.0)),
            load_wall_s: 1.0,
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
            idle: Some(sample(0.1, 0.5, 1_000_000)),
            at_load_start: Some(sample(0.3, 1.0, 1_200_000)),
            at_load_end: Some(sample(1.3, 1.5, 1_300_000)),
            load_wall_s: 1.0,
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
            at_load_start: Some(sample(0.1, 1.0, 1_000_000)),
            at_load_end: Some(sample(4.1, 1.0 + 0.16 / 1.5, 1_000_000)),
            net_at_load_start: Some(counters(1_000)),
            net_at_load_end: Some(counters(1_430)),
            machine_busy_at_load_start: Some(10.0),
            machine_busy_at_load_end: Some(10.4),
            load_wall_s: 4.0,
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
            at_load_start: Some(sample(0.1, 1.0, 1_000_000)),
            at_load_end: Some(sample(2.1, 2.0, 1_100_000)),
            samples: vec![sample(1.0, 1.5, 1_300_000)],
            load_wall_s: 2.0,
            ..server_side(server_summary())
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
}
