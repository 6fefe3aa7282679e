//! The table `echolab run` prints at its end: each model at the point the verdict
//! compares its throughput ([`compared_x`]), as medians over its repetitions there, so
//! the table and the verdict under it speak of the same step; which model is better is
//! the verdict's to say.

use crate::results::column;
use crate::results::reader::{Results, Row, Status};
use crate::units::{fmt_bytes, trim_float};
use crate::verdict::sweep::{self, at, Sweep};
use crate::verdict::{compared_x, completed};

const HEADER: [&str; 7] = [
    "model",
    "req/s",
    "p99 (median rep)",
    "max conns",
    "CPU %",
    "RSS/conn",
    "status",
];

/// The table of every sweep of `results` (one with a heading of its own when the run
/// swept more than one axis).
pub fn models_table(results: &Results) -> String {
    let sweeps = sweep::sweeps(results);
    if sweeps.is_empty() {
        return format!(
            "no step recorded\n{}",
            aligned(&[HEADER.map(str::to_string)])
        );
    }
    let models = sweep::models(results);
    let mut out = String::new();
    for s in &sweeps {
        let by_x: Vec<(String, sweep::Points)> = models
            .iter()
            .map(|m| (m.clone(), s.by_x(results, m)))
            .collect();
        let x = compared_x(s, &by_x, column::THROUGHPUT_RPS);
        let title = if sweeps.len() > 1 {
            format!("{}: ", s.title())
        } else {
            String::new()
        };
        out += &match x {
            Some(x) => format!(
                "{title}each model at {} (the verdict's point: the heaviest that at least two \
                 models completed), medians over its repetitions there:\n",
                at(&s.axis, x)
            ),
            None => format!("{title}no model completed a step:\n"),
        };
        let mut table = vec![HEADER.map(str::to_string)];
        for (model, groups) in &by_x {
            table.push(model_line(results, s, model, groups, x));
        }
        out += &aligned(&table);
    }
    out
}

/// One model's line: its medians at `x` (when it completed it), the most connections
/// it established in an ok step, and its status (its first failure and why).
fn model_line(
    results: &Results,
    sweep: &Sweep,
    model: &str,
    groups: &sweep::Points,
    x: Option<f64>,
) -> [String; 7] {
    let mine: Vec<&Row> = sweep.rows(results).filter(|r| r.model == model).collect();
    let at_x: Vec<&Row> = groups
        .iter()
        .find(|(gx, rows)| Some(*gx) == x && completed(rows, column::THROUGHPUT_RPS))
        .map(|(_, rows)| {
            rows.iter()
                .copied()
                .filter(|r| r.status == Status::Ok)
                .collect()
        })
        .unwrap_or_default();
    let median_of = |column: &str| {
        crate::stats::median(
            &at_x
                .iter()
                .filter_map(|r| r.num(column))
                .collect::<Vec<_>>(),
        )
    };
    let max_conns = mine
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.num(column::CONNECTIONS_ESTABLISHED))
        .reduce(f64::max);
    let status = match mine
        .iter()
        .find(|r| !matches!(r.status, Status::Ok | Status::Skipped))
    {
        // Nothing failed, but nothing completed either (a staircase that climbed no stair).
        None if !mine.iter().any(|r| r.status == Status::Ok) => "no step completed".to_string(),
        None => "ok".to_string(),
        Some(r) if r.status == Status::NotRun => format!("not run: {}", r.failure_reason),
        Some(r) => format!("{} at {}: {}", r.status, r.step, r.failure_reason),
    };
    let dash = || "-".to_string();
    [
        model.to_string(),
        median_of(column::THROUGHPUT_RPS).map_or_else(dash, |t| trim_float(t.round())),
        median_of(column::P99_US).map_or_else(dash, |p| format!("{} us", trim_float(p.round()))),
        max_conns.map_or_else(dash, |c| trim_float(c.round())),
        median_of(column::SERVER_CPU_PCT).map_or_else(dash, |c| format!("{c:.0}")),
        median_of(column::SERVER_RSS_PER_CONN_BYTES).map_or_else(dash, fmt_bytes),
        status,
    ]
}

/// The lines of `table`, the model left-aligned, the figures right-aligned, the status
/// last as it is.
fn aligned(table: &[[String; 7]]) -> String {
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in table {
        for (i, w) in widths.iter().enumerate() {
            if i == 0 {
                out += &format!("{:<w$}  ", r[i]);
            } else {
                out += &format!("{:>w$}  ", r[i]);
            }
        }
        out += &r[6];
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Manifest;

    /// One repetition of `model` at `conns` connections.
    fn record(model: &str, conns: u64, status: Status, rps: f64) -> Row {
        let row = Row {
            model: model.into(),
            step: format!("c{conns}"),
            repetition: 1,
            status,
            failure_reason: if status == Status::Failed {
                "why".into()
            } else {
                String::new()
            },
            connections: conns,
            p99_us: Some(1234.4),
            server_cpu_pct: Some(87.6),
            server_rss_per_conn_bytes: Some(2048),
            ..Row::default()
        };
        if status == Status::Ok {
            row.with(column::THROUGHPUT_RPS, rps)
                .with(column::CONNECTIONS_ESTABLISHED, conns as f64)
        } else {
            row
        }
    }

    fn results(rows: Vec<Row>) -> Results {
        Results {
            dir: std::env::temp_dir().join("echolab-no-such-dir"),
            manifest: Manifest {
                models: vec!["select".into(), "epoll".into()],
                ..Manifest::default()
            },
            rows,
            profiled: Vec::new(),
            columns: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn each_model_is_shown_at_the_verdicts_point() {
        let results = results(vec![
            record("select", 500, Status::Ok, 900.0),
            record("select", 1100, Status::Failed, 0.0),
            record("select", 1500, Status::Skipped, 0.0),
            record("epoll", 500, Status::Ok, 1000.0),
            record("epoll", 1100, Status::Ok, 800.0),
            // Two more repetitions: the median, not the best, is shown.
            record("epoll", 1100, Status::Ok, 2000.0),
            record("epoll", 1100, Status::Ok, 700.0),
            record("epoll", 500, Status::Ok, 3000.0),
            record("epoll", 500, Status::Ok, 1100.0),
        ]);
        // epoll alone completed 1100: the verdict compares at 500, and so does the table.
        let sweeps = sweep::sweeps(&results);
        let throughput = &crate::verdict::verdicts(&results, &sweeps[0])[0];
        assert_eq!(throughput.compared_at, "connections=500");
        let table = models_table(&results);
        let lines: Vec<&str> = table.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "each model at connections=500 (the verdict's point: the heaviest that at least \
                 two models completed), medians over its repetitions there:",
                "model   req/s  p99 (median rep)  max conns  CPU %  RSS/conn  status",
                "select    900           1234 us        500     88   2.0 KiB  failed at c1100: why",
                "epoll    1100           1234 us       1100     88   2.0 KiB  ok",
            ]
        );
    }

    #[test]
    fn a_model_that_completed_no_step_is_not_shown_ok() {
        let results = results(vec![
            record("select", 500, Status::Skipped, 0.0),
            record("select", 1100, Status::Skipped, 0.0),
            record("epoll", 500, Status::Ok, 1000.0),
        ]);
        let table = models_table(&results);
        let status = |model: &str| {
            let line = table.lines().find(|l| l.starts_with(model)).unwrap();
            line.trim_end().rsplit("  ").next().unwrap().to_string()
        };
        assert_eq!(status("select"), "no step completed", "{table}");
        assert_eq!(status("epoll"), "ok", "{table}");
    }
}
