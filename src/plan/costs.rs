//! A model's unit costs, read from a results directory's rows: memory per held
//! connection (the server's, the kernel's for both ends, the generators'), fds and
//! threads per connection, CPU per request as a line in the connections, and the
//! set-up rate; each with its spread over the repetitions (median, least and most).

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::Costs;
use crate::results::{column, Row, Status};
use crate::server::Model;
use crate::stats::median;

/// A figure over the repetitions: the median and the least and most measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        Some(Spread {
            median: median(&values)?,
            low: values.iter().copied().fold(f64::INFINITY, f64::min),
            high: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// `a + b·x`, fitted by least squares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Line {
    pub a: f64,
    pub b: f64,
}

impl Line {
    /// The least-squares line through the points; with one distinct x, the line through
    /// the origin and their mean. None without a point.
    pub fn fit(points: &[(f64, f64)]) -> Option<Line> {
        let n = points.len() as f64;
        if points.is_empty() {
            return None;
        }
        let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
        let my = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
        if sxx == 0.0 {
            return Some(Line {
                a: 0.0,
                b: if mx > 0.0 { my / mx } else { 0.0 },
            });
        }
        let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let b = sxy / sxx;
        Some(Line { a: my - b * mx, b })
    }

    /// [`Line::fit`] for a cost that cannot fall as the connections grow (a request's CPU:
    /// no model scans less for watching more): a fitted fall is the repetitions' noise,
    /// so the line is flat at the points' mean, and what is shown is what predicts.
    pub fn fit_never_falling(points: &[(f64, f64)]) -> Option<Line> {
        let line = Line::fit(points)?;
        if line.b >= 0.0 {
            return Some(line);
        }
        let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
        Some(Line { a: mean, b: 0.0 })
    }
}

/// Which side of the intervals: the median costs, or the least or the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Median,
    Low,
    High,
}

/// One model's measured unit costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitCosts {
    pub model: String,
    /// Server RSS per held connection (`server_rss_hold_per_conn_bytes`).
    pub user_bytes: Spread,
    /// Slab per connection, both ends (`kernel_slab_per_conn_bytes`).
    pub kernel_bytes: Spread,
    /// Generators' RSS per connection (`load_rss_per_conn_bytes`); 0 when not measured.
    pub load_bytes: Option<Spread>,
    /// Server fds against the connections it held (`server_fds_max`).
    pub fds: Line,
    /// Server threads against the connections it held (`server_threads_max`).
    pub threads: Line,
    /// CPU per request against the connections (`server_cpu_us_per_request`), in µs:
    /// through the repetitions' medians, least and most at each count.
    pub cpu_us: [Line; 3],
    /// The connection counts the CPU line was measured at.
    pub cpu_connections: Vec<u64>,
    /// CPU per request saturated (the steps without think time), the lines as `cpu_us`'s:
    /// a wait returns many requests, and a request costs what it costs at the most the
    /// server serves. None in a run without such steps: then `cpu_us` stands in, and the
    /// rate it predicts is a floor.
    pub saturated_us: Option<[Line; 3]>,
    /// The connection counts that line was measured at.
    pub saturated_connections: Vec<u64>,
    /// The message size those requests carried.
    pub size: u64,
    /// Connections established per second (`establish_per_s`).
    pub setup_per_s: Option<Spread>,
    /// The connections the server's memory was measured at.
    pub memory_connections: u64,
    /// The connections the kernel's and the generators' shares were measured at (the
    /// run's most, for a model that held fewer than half as many).
    pub kernel_connections: u64,
}

impl UnitCosts {
    /// The costs of one side of the intervals, as the model takes them (the low side is
    /// the cheap one: the least memory and CPU measured).
    pub fn costs(&self, side: Side) -> Costs {
        let pick = |s: &Spread| match side {
            Side::Median => s.median,
            Side::Low => s.low,
            Side::High => s.high,
        };
        let i = match side {
            Side::Median => 0,
            Side::Low => 1,
            Side::High => 2,
        };
        let cpu = self.cpu_us[i];
        let saturated = self.saturated_us.map_or(cpu, |s| s[i]);
        let model: Option<Model> = self.model.parse().ok();
        Costs {
            user_bytes: pick(&self.user_bytes).max(0.0),
            kernel_bytes: pick(&self.kernel_bytes).max(0.0),
            load_bytes: self.load_bytes.as_ref().map_or(0.0, pick).max(0.0),
            base_fds: self.fds.a.max(0.0),
            fds_per_conn: self.fds.b.max(0.0),
            base_threads: self.threads.a.max(0.0),
            // Under a tenth of a thread a connection is the runtime's workers, not a
            // thread per connection.
            threads_per_conn: if self.threads.b >= 0.1 {
                self.threads.b
            } else {
                0.0
            },
            cpu_us: cpu.a,
            cpu_us_per_conn: cpu.b,
            saturated_us: saturated.a,
            saturated_us_per_conn: saturated.b,
            fd_set: model == Some(Model::Select),
            multi_process: model.is_none_or(Model::supports_processes),
        }
    }
}

/// What a model lacks for a plan: the columns, and the scenario that measures them.
pub const MEASURED_BY: &str = "scenarios/plan.toml measures every one (`echolab run plan`)";

/// The unit costs of every model in `rows` (measured repetitions, the profiled ones left
/// out), or for each model that lacks some what it lacks. `size`: the message size whose
/// CPU per request is wanted (the nearest measured is taken).
pub fn unit_costs(rows: &[Row], size: u64) -> (Vec<UnitCosts>, Vec<String>) {
    let mut by_model: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for row in rows {
        if row.status != Status::Ok || row.profiled == Some(true) {
            continue;
        }
        if !by_model.contains_key(row.model.as_str()) {
            order.push(&row.model);
        }
        by_model.entry(&row.model).or_default().push(row);
    }
    let (mut costs, mut missing) = (Vec::new(), Vec::new());
    for model in order {
        match model_costs(model, &by_model[model], size) {
            Ok(c) => costs.push(c),
            Err(lacks) => missing.push(format!("{model}: no {}", lacks.join(", no "))),
        }
    }
    // The kernel's socket objects are the same whatever the model (docs/scale.md), and a
    // few hundred connections' slab is lost in the machine's own: a model that held
    // fewer than half the run's most (select, at FD_SETSIZE) takes the kernel's share
    // measured there, over every model.
    // So is the generators' share.
    let most = costs
        .iter()
        .map(|c| c.memory_connections)
        .max()
        .unwrap_or(0);
    let at_most = |name: &str| {
        let values: Vec<f64> = by_model
            .values()
            .flat_map(|rows| of_kind(rows, false))
            .filter(|r| r.held_connections.is_some_and(|h| h * 2 >= most))
            .filter_map(|r| r.num(name))
            .collect();
        Spread::of(&values)
    };
    let kernel = at_most(column::KERNEL_SLAB_PER_CONN_BYTES);
    let load = at_most(column::LOAD_RSS_PER_CONN_BYTES);
    for c in costs.iter_mut().filter(|c| c.kernel_connections * 2 < most) {
        if let Some(kernel) = kernel {
            c.kernel_bytes = kernel;
            c.kernel_connections = most;
        }
        c.load_bytes = load.or(c.load_bytes);
    }
    (costs, missing)
}

/// A closed loop without think time: each connection sends again as soon as its echo is
/// back, so the server always has a request waiting and is saturated.
pub fn saturated(row: &Row) -> bool {
    row.rate.is_none() && row.delay_ms == 0.0
}

/// The rows of one kind: the saturated steps (`busy`) or the others, which give the
/// connections' memory apart from a busy server's buffers and a request's CPU when it
/// arrives alone. A run without both kinds (an older plan run, a test's) gives every row
/// to both.
fn of_kind<'a>(rows: &[&'a Row], busy: bool) -> Vec<&'a Row> {
    let kind: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| saturated(r) == busy)
        .collect();
    if kind.is_empty() || kind.len() == rows.len() {
        rows.to_vec()
    } else {
        kind
    }
}

fn model_costs(model: &str, rows: &[&Row], size: u64) -> Result<UnitCosts, Vec<&'static str>> {
    let mut lacks = Vec::new();
    // Memory at the most connections held, at the trickle: a few pages more or less in a
    // small step are many bytes a connection.
    let trickle = of_kind(rows, false);
    let most = trickle
        .iter()
        .filter_map(|r| r.held_connections)
        .max()
        .unwrap_or(0);
    let at_most: Vec<&&Row> = trickle
        .iter()
        .filter(|r| r.held_connections.is_some_and(|h| h * 2 >= most) && most > 0)
        .collect();
    let values = |name: &str| -> Vec<f64> { at_most.iter().filter_map(|r| r.num(name)).collect() };
    let user = Spread::of(&values(column::SERVER_RSS_HOLD_PER_CONN_BYTES));
    let kernel = Spread::of(&values(column::KERNEL_SLAB_PER_CONN_BYTES));
    let load = Spread::of(&values(column::LOAD_RSS_PER_CONN_BYTES));
    if user.is_none() {
        lacks.push(column::SERVER_RSS_HOLD_PER_CONN_BYTES);
    }
    if kernel.is_none() {
        lacks.push(column::KERNEL_SLAB_PER_CONN_BYTES);
    }
    let held = |r: &Row| r.max_concurrent_server.map(|c| c as f64);
    let points = |name: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| Some((held(r)?, r.num(name)?)))
            .collect()
    };
    let fds = Line::fit(&points(column::SERVER_FDS_MAX));
    let threads = Line::fit(&points(column::SERVER_THREADS_MAX));
    if fds.is_none() {
        lacks.push(column::SERVER_FDS_MAX);
    }
    if threads.is_none() {
        lacks.push(column::SERVER_THREADS_MAX);
    }
    let (cpu, cpu_connections, measured_size) = match cpu_lines(&unqueued(&trickle), size) {
        (Some(line), counts, measured) => (Some(line), counts, measured),
        _ => cpu_lines(&trickle, size),
    };
    let busy: Vec<&Row> = rows.iter().copied().filter(|r| saturated(r)).collect();
    let (saturated_us, saturated_connections, _) = cpu_lines(&busy, size);
    if cpu.is_none() {
        lacks.push("server_cpu_us_per_request at two connection counts or more");
    }
    let setup = Spread::of(
        &rows
            .iter()
            .filter_map(|r| r.num(column::ESTABLISH_PER_S))
            .collect::<Vec<_>>(),
    );
    match (user, kernel, fds, threads, cpu) {
        (Some(user_bytes), Some(kernel_bytes), Some(fds), Some(threads), Some(cpu_us)) => {
            Ok(UnitCosts {
                model: model.to_string(),
                user_bytes,
                kernel_bytes,
                load_bytes: load,
                fds,
                threads,
                cpu_us,
                cpu_connections,
                saturated_us,
                saturated_connections,
                size: measured_size,
                setup_per_s: setup,
                memory_connections: most,
                kernel_connections: most,
            })
        }
        _ => Err(lacks),
    }
}

/// CPU per request against the connections, at the measured size nearest `size`: the
/// lines through each count's median, least and most over the repetitions. None with
/// fewer than two counts (no slope to fit).
/// A trickle's server close to a whole core (`QUEUED_PCT`) was queueing its requests:
/// its CPU over the requests it answered is the core over the rate, a floor of what a
/// request costs alone, not the cost. The line leaves those steps out (poll at 4 000
/// connections at 2 000 requests/s takes 97 % of its core).
const QUEUED_PCT: f64 = 90.0;

fn unqueued<'a>(rows: &[&'a Row]) -> Vec<&'a Row> {
    rows.iter()
        .copied()
        .filter(|r| r.server_cpu_pct.is_none_or(|pct| pct < QUEUED_PCT))
        .collect()
}

fn cpu_lines(rows: &[&Row], size: u64) -> (Option<[Line; 3]>, Vec<u64>, u64) {
    // The server's CPU over the requests it completed: a cost whoever set the pace.
    let measured: Vec<(u64, u64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.size, r.connections, r.server_cpu_us_per_request?)))
        .filter(|(_, _, us)| us.is_finite() && *us > 0.0)
        .collect();
    let Some(nearest) = measured
        .iter()
        .map(|m| m.0)
        .min_by_key(|s| s.abs_diff(size))
    else {
        return (None, Vec::new(), size);
    };
    let mut by_count: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for (_, c, us) in measured.iter().filter(|m| m.0 == nearest) {
        by_count.entry(*c).or_default().push(*us);
    }
    let counts: Vec<u64> = by_count.keys().copied().collect();
    if counts.len() < 2 {
        return (None, counts, nearest);
    }
    let spreads: Vec<(f64, Spread)> = by_count
        .iter()
        .filter_map(|(c, v)| Some((*c as f64, Spread::of(v)?)))
        .collect();
    let line = |pick: fn(&Spread) -> f64| {
        Line::fit_never_falling(
            &spreads
                .iter()
                .map(|(c, s)| (*c, pick(s)))
                .collect::<Vec<_>>(),
        )
    };
    let lines = match (line(|s| s.median), line(|s| s.low), line(|s| s.high)) {
        (Some(m), Some(l), Some(h)) => Some([m, l, h]),
        _ => None,
    };
    (lines, counts, nearest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str, connections: u64, rep: u32, cpu_us: f64) -> Row {
        Row {
            model: model.into(),
            step: format!("c{connections}"),
            repetition: rep,
            connections,
            size: 64,
            max_concurrent_server: Some(connections),
            server_fds_max: Some(connections + 9),
            server_threads_max: Some(if model == "threads" {
                connections + 2
            } else {
                2
            }),
            held_connections: Some(connections),
            server_rss_hold_per_conn_bytes: Some(150.0 + rep as f64),
            kernel_slab_per_conn_bytes: Some(9_800.0 + 100.0 * rep as f64),
            load_rss_per_conn_bytes: Some(400.0),
            server_cpu_us_per_request: Some(cpu_us),
            establish_per_s: Some(10_000.0),
            ..Row::default()
        }
    }

    #[test]
    fn a_trickle_step_whose_server_queued_is_left_out_of_the_alone_line() {
        // poll at a trickle: 40 µs at 100 connections, 310 at 1 000, then at 4 000 its
        // core full (97 %), so the CPU over the requests is the core over the rate.
        let mut rows = Vec::new();
        for rep in 1..=2 {
            for (c, us, pct) in [(100, 40.0, 8.0), (1000, 310.0, 62.0), (4000, 490.0, 97.0)] {
                let mut r = row("poll", c, rep, us);
                r.rate = Some(2000.0);
                r.server_cpu_pct = Some(pct);
                rows.push(r);
            }
        }
        let (costs, _) = unit_costs(&rows, 64);
        let alone = costs[0].costs(Side::Median);
        assert_eq!(costs[0].cpu_connections, vec![100, 1000]);
        assert!((alone.cpu_us_per_conn - 0.3).abs() < 1e-9, "{alone:?}");
        assert!((alone.cpu_us - 10.0).abs() < 1e-6, "{alone:?}");
        // Every step queued: the steps are all there is, and they stand.
        for r in &mut rows {
            r.server_cpu_pct = Some(99.0);
        }
        let (costs, _) = unit_costs(&rows, 64);
        assert_eq!(costs[0].cpu_connections, vec![100, 1000, 4000]);
    }

    #[test]
    fn a_line_through_points_and_through_one_count() {
        let l = Line::fit(&[(100.0, 30.0), (1000.0, 120.0), (4000.0, 420.0)]).unwrap();
        assert!(
            (l.a - 20.0).abs() < 1e-9 && (l.b - 0.1).abs() < 1e-12,
            "{l:?}"
        );
        assert_eq!(
            Line::fit(&[(10.0, 5.0), (10.0, 7.0)]),
            Some(Line { a: 0.0, b: 0.6 })
        );
        assert_eq!(Line::fit(&[]), None);
        // A request's CPU that seems to fall with the connections is flat at the mean.
        assert_eq!(
            Line::fit_never_falling(&[(100.0, 50.0), (1000.0, 40.0), (4000.0, 45.0)]),
            Some(Line { a: 45.0, b: 0.0 })
        );
        assert_eq!(
            Line::fit_never_falling(&[(100.0, 30.0), (1000.0, 120.0)]),
            Line::fit(&[(100.0, 30.0), (1000.0, 120.0)])
        );
    }

    #[test]
    fn costs_from_rows_with_their_spread() {
        let mut rows = Vec::new();
        for rep in 1..=3 {
            for (c, us) in [(100, 28.0), (1000, 100.0), (4000, 340.0)] {
                rows.push(row("select", c, rep, us + rep as f64));
            }
            rows.push(row("threads", 300, rep, 50.0));
            rows.push(row("threads", 3000, rep, 50.0));
        }
        let (costs, missing) = unit_costs(&rows, 64);
        assert_eq!(missing, Vec::<String>::new());
        let select = &costs[0];
        assert_eq!(select.model, "select");
        assert_eq!(select.memory_connections, 4000);
        assert_eq!(
            select.user_bytes,
            Spread {
                median: 152.0,
                low: 151.0,
                high: 153.0
            }
        );
        assert_eq!(select.cpu_connections, vec![100, 1000, 4000]);
        let median = select.costs(Side::Median);
        assert!((median.cpu_us_at(1000.0) - 102.0).abs() < 5.0, "{median:?}");
        assert!(median.fd_set && !median.multi_process);
        assert!((median.base_fds - 9.0).abs() < 1e-6 && (median.fds_per_conn - 1.0).abs() < 1e-9);
        assert_eq!(median.threads_per_conn, 0.0);
        let low = select.costs(Side::Low).cpu_us_at(1000.0);
        let high = select.costs(Side::High).cpu_us_at(1000.0);
        assert!(low < median.cpu_us_at(1000.0) && median.cpu_us_at(1000.0) < high);
        let threads = costs[1].costs(Side::Median);
        assert!((threads.threads_per_conn - 1.0).abs() < 1e-9, "{threads:?}");
        // threads held 3 000 at most, select 4 000: its own kernel share, at 3 000.
        assert_eq!(costs[1].kernel_connections, 3000);
        assert!(threads.multi_process && !threads.fd_set);
    }

    #[test]
    fn the_trickle_gives_memory_and_a_lone_requests_cpu_the_saturated_steps_the_rate() {
        let mut rows = Vec::new();
        for rep in 1..=2 {
            for c in [100, 1000] {
                // The trickle, 2 s between a connection's requests: 40 µs a request, one
                // wake-up each.
                let mut trickle = row("epoll", c, rep, 40.0);
                trickle.delay_ms = 2000.0;
                rows.push(trickle);
                // Saturated, a closed loop without think time: 10 µs a request, and the
                // read buffers of a busy server.
                let mut busy = row("epoll", c, rep, 10.0);
                busy.server_rss_hold_per_conn_bytes = Some(5_000.0);
                busy.kernel_slab_per_conn_bytes = Some(20_000.0);
                rows.push(busy);
            }
        }
        let (costs, missing) = unit_costs(&rows, 64);
        assert_eq!(missing, Vec::<String>::new());
        let epoll = &costs[0];
        assert_eq!(epoll.saturated_connections, vec![100, 1000]);
        assert_eq!(epoll.user_bytes.high, 152.0);
        assert_eq!(epoll.kernel_bytes.high, 10_000.0);
        let median = epoll.costs(Side::Median);
        assert_eq!((median.cpu_us, median.cpu_us_per_conn), (40.0, 0.0));
        assert_eq!(
            (median.saturated_us, median.saturated_us_per_conn),
            (10.0, 0.0)
        );
        // One core serves 100 000 requests/s at 1 000 connections at 10 µs each.
        let one = crate::plan::model::Machine {
            cores: 1.0,
            memory_bytes: 1 << 30,
            fd_limit: 20_000,
            processes: 1,
            threads: 30_000,
            max_map_count: 65_530,
            with_load: false,
        };
        assert_eq!(
            crate::plan::model::max_rate(&median, &one, 1000.0),
            100_000.0
        );
    }

    #[test]
    fn a_model_that_held_few_takes_the_kernel_share_of_the_most_connections() {
        let mut rows = vec![row("select", 1000, 1, 90.0), row("select", 100, 1, 30.0)];
        rows[0].kernel_slab_per_conn_bytes = Some(3_000.0);
        for rep in 1..=2 {
            rows.push(row("epoll", 100, rep, 20.0));
            rows.push(row("epoll", 4000, rep, 21.0));
        }
        let (costs, _) = unit_costs(&rows, 64);
        assert_eq!(costs[0].memory_connections, 1000);
        assert_eq!(costs[0].kernel_connections, 4000);
        assert_eq!(costs[0].kernel_bytes, costs[1].kernel_bytes);
        assert_eq!(costs[1].kernel_bytes.low, 9_900.0);
    }

    #[test]
    fn a_model_without_what_plan_needs_is_named_with_what_it_lacks() {
        let mut only = row("epoll", 100, 1, 20.0);
        only.kernel_slab_per_conn_bytes = None;
        let (costs, missing) = unit_costs(&[only], 64);
        assert!(costs.is_empty());
        assert_eq!(
            missing,
            vec![
                "epoll: no kernel_slab_per_conn_bytes, no server_cpu_us_per_request at two \
                 connection counts or more"
                    .to_string()
            ]
        );
    }
}
