//! What a step left behind, judged: pure functions from the two summaries (the
//! server's and the load generator's, as the crate's own types) to a failure reason;
//! [`row`](super::row) measures the same sides into a results.csv row. No processes and
//! no files here, so every rule is unit-tested directly.

use super::cost::KernelWatch;
use super::netstat::{NetCounters, Scope};
use super::probe::Sample;
use super::request_cost::Calls;
use crate::load::measurements::LoadSummary;
use crate::scenario::{FailureRule, Step};
use crate::server::counters::ServerSummary;
use crate::units::{ms, trim_float};

/// What the server side of a step left behind: how its server ran and what its window
/// read, each as its own part records it.
#[derive(Debug, Default)]
pub struct ServerSide {
    pub run: ServerRun,
    pub window: Readings,
}

/// How a session's server ran, as the session records it: where its network counters
/// count, how it ended and what it left (its /proc samples and its summary).
#[derive(Debug, Default)]
pub struct ServerRun {
    pub summary: Option<ServerSummary>,
    pub died: Option<String>,
    pub start_error: Option<String>,
    pub stop_problem: Option<String>,
    pub samples: Vec<Sample>,
    pub net_scope: Option<Scope>,
    pub net_note: Option<String>,
    pub kernel_ends: u64,
}

/// What a measured window read of its server and machine at its two ends (a step's
/// load, a stair's `every`), and the kernel's memory over it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Readings {
    /// The server before the load, when that is not the window's start.
    pub idle: Option<Sample>,
    pub at_start: Option<Sample>,
    pub at_end: Option<Sample>,
    pub wall_s: f64,
    pub net_at_start: Option<NetCounters>,
    pub net_at_end: Option<NetCounters>,
    pub machine_busy_at_start: Option<f64>,
    pub machine_busy_at_end: Option<f64>,
    pub kernel: KernelWatch,
    pub calls: Option<Calls>,
}

impl ServerSide {
    /// The server side of one window: how its server ran and what the window read.
    pub fn new(run: ServerRun, window: Readings) -> ServerSide {
        ServerSide { run, window }
    }
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
        .or_else(|| server.run.stop_problem.clone())
}

/// The load's summary to judge, or why the step left none: the server did not start or
/// died, or the generator timed out or wrote nothing.
fn finished_summary<'a>(
    server: &ServerSide,
    load: &'a LoadSide,
) -> Result<&'a LoadSummary, String> {
    if let Some(e) = &server.run.start_error {
        return Err(e.clone());
    }
    if let Some(d) = &server.run.died {
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
    if let Some(s) = &server.run.summary {
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
    if let (Some(fraction), Some(s)) = (rule.min_concurrent, &server.run.summary) {
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
    if let (true, Some(s)) = (rule.bytes_match, &server.run.summary) {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::load::measurements::LatencyStats;
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
    pub(in crate::experiment::measurement) fn client() -> LoadSummary {
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

    pub(in crate::experiment::measurement) fn server_summary() -> ServerSummary {
        ServerSummary {
            workers: 4,
            max_concurrent: 100,
            accepted: 100,
            bytes_in: 640,
            bytes_out: 640,
            ..ServerSummary::default()
        }
    }

    pub(in crate::experiment::measurement) fn load_side(summary: LoadSummary) -> LoadSide {
        LoadSide {
            summary: Some(summary),
            ..LoadSide::default()
        }
    }

    pub(in crate::experiment::measurement) fn server_side(summary: ServerSummary) -> ServerSide {
        ServerSide {
            run: ServerRun {
                summary: Some(summary),
                ..ServerSide::default().run
            },
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
            run: ServerRun {
                died: Some("server died during the step".into()),
                ..server_side(server_summary()).run
            },
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
            run: ServerRun {
                stop_problem: Some("server exited with exit status: 1 on SIGTERM".into()),
                ..server_side(server_summary()).run
            },
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
}
