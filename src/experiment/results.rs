//! results.csv as the runner writes it: one [`Row`] per repetition of a step,
//! flushed as it comes, and the per-model comparison table printed at the end of a run.

use std::fs::File;
use std::path::Path;

use anyhow::Context as _;

use crate::results::{Row, Status, RESULTS_HEADER};
use crate::units::trim_float;

/// results.csv, flushed after every row so an interrupted run keeps what it finished.
pub struct ResultsCsv {
    writer: csv::Writer<File>,
}

impl ResultsCsv {
    pub fn create(path: &Path) -> anyhow::Result<ResultsCsv> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        writer.write_record(RESULTS_HEADER)?;
        writer.flush()?;
        Ok(ResultsCsv { writer })
    }

    pub fn append(&mut self, row: &Row) -> anyhow::Result<()> {
        self.writer.serialize(row)?;
        self.writer.flush()?;
        Ok(())
    }
}

/// The per-model comparison printed at the end of a run.
pub fn comparison_table(rows: &[Row], models: &[String]) -> String {
    let mut out = String::new();
    let header = [
        "model",
        "best req/s",
        "p99 (heaviest ok)",
        "max conns",
        "CPU %",
        "RSS/conn",
        "status",
    ];
    let mut table: Vec<[String; 7]> = vec![header.map(str::to_string)];
    for model in models {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.model == model).collect();
        if mine.is_empty() {
            continue;
        }
        let ok: Vec<&&Row> = mine.iter().filter(|r| r.status == Status::Ok).collect();
        let best = ok
            .iter()
            .filter_map(|r| r.throughput_rps)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
        let heaviest = ok.last();
        let max_conns = ok.iter().filter_map(|r| r.connections_established).max();
        let status = match mine
            .iter()
            .find(|r| !matches!(r.status, Status::Ok | Status::Skipped))
        {
            None => "ok".to_string(),
            Some(r) if r.status == Status::NotRun => format!("not run: {}", r.failure_reason),
            Some(r) => format!("{} at {}: {}", r.status, r.step, r.failure_reason),
        };
        let dash = || "-".to_string();
        table.push([
            model.clone(),
            best.map_or_else(dash, |t| trim_float(t.round())),
            heaviest
                .and_then(|r| r.p99_us)
                .map_or_else(dash, |p| format!("{} us", trim_float(p.round()))),
            max_conns.map_or_else(dash, |c| c.to_string()),
            heaviest
                .and_then(|r| r.server_cpu_pct)
                .map_or_else(dash, |c| format!("{c:.0}")),
            heaviest
                .and_then(|r| r.server_rss_per_conn_bytes)
                .map_or_else(dash, human_bytes),
            status,
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
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

fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_table_summarises_each_model() {
        let row = |model: &str, step: &str, status: Status, rps: f64, conns: u64| Row {
            model: model.into(),
            step: step.into(),
            status,
            failure_reason: if status == Status::Failed {
                "why".into()
            } else {
                String::new()
            },
            throughput_rps: (status == Status::Ok).then_some(rps),
            connections_established: (status == Status::Ok).then_some(conns),
            p99_us: Some(1234.4),
            server_cpu_pct: Some(87.6),
            server_rss_per_conn_bytes: Some(2048),
            ..Row::default()
        };
        let rows = [
            row("select", "c500", Status::Ok, 900.0, 500),
            row("select", "c1100", Status::Failed, 0.0, 0),
            row("select", "c1500", Status::Skipped, 0.0, 0),
            row("epoll", "c500", Status::Ok, 1000.0, 500),
            row("epoll", "c1100", Status::Ok, 800.0, 1100),
        ];
        let table = comparison_table(&rows, &["select".into(), "epoll".into()]);
        let lines: Vec<&str> = table.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "model   best req/s  p99 (heaviest ok)  max conns  CPU %  RSS/conn  status",
                "select         900            1234 us        500     88   2.0 KiB  failed at c1100: why",
                "epoll         1000            1234 us       1100     88   2.0 KiB  ok",
            ]
        );
    }
}
