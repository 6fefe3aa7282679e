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
        // A full disk fails here first: the error names the file.
        writer
            .write_record(RESULTS_HEADER)
            .map_err(anyhow::Error::from)
            .and_then(|()| writer.flush().map_err(anyhow::Error::from))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(ResultsCsv { writer })
    }

    /// Appends `row`, its text cells neutralised against spreadsheet formulas.
    pub fn append(&mut self, row: &Row) -> anyhow::Result<()> {
        self.writer.serialize(row.neutralised())?;
        self.writer.flush()?;
        Ok(())
    }

    /// Where the next row goes: rows appended from here can be taken back with
    /// [`ResultsCsv::rewind`] (a staircase's stairs, written when judged, replaced by
    /// their final rows once the server has stopped).
    pub fn mark(&mut self) -> anyhow::Result<u64> {
        use std::io::Seek as _;
        self.writer.flush()?;
        // `&File` seeks the file itself: csv's writer lends no `&mut`.
        let mut file: &File = self.writer.get_ref();
        Ok(file.stream_position()?)
    }

    /// Removes every row appended since `mark`.
    pub fn rewind(&mut self, mark: u64) -> anyhow::Result<()> {
        use std::io::{Seek as _, SeekFrom};
        self.writer.flush()?;
        let mut file: &File = self.writer.get_ref();
        file.set_len(mark)?;
        file.seek(SeekFrom::Start(mark))?;
        Ok(())
    }
}

/// The per-model comparison printed at the end of a run: each model at the heaviest step
/// it completed, as the median over that step's repetitions (one lucky or unlucky
/// repetition does not set a figure); which model is better is the verdict's to say.
pub fn comparison_table(rows: &[Row], models: &[String]) -> String {
    let mut out = String::from(
        "each model at its heaviest completed step, medians over its repetitions there:\n",
    );
    let header = [
        "model",
        "req/s",
        "p99 (median rep)",
        "max conns",
        "CPU %",
        "RSS/conn",
        "status",
    ];
    let mut table: Vec<[String; 7]> = vec![header.map(str::to_string)];
    for model in models {
        // The profiled repetition is never compared.
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.model == model && r.profiled != Some(true))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let ok: Vec<&Row> = mine
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok)
            .collect();
        let heaviest: Vec<&Row> = match ok.last() {
            Some(last) => ok.iter().copied().filter(|r| r.step == last.step).collect(),
            None => Vec::new(),
        };
        let median_of = |field: fn(&Row) -> Option<f64>| {
            crate::stats::median(&heaviest.iter().filter_map(|r| field(r)).collect::<Vec<_>>())
        };
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
            median_of(|r| r.throughput_rps).map_or_else(dash, |t| trim_float(t.round())),
            median_of(|r| r.p99_us).map_or_else(dash, |p| format!("{} us", trim_float(p.round()))),
            max_conns.map_or_else(dash, |c| c.to_string()),
            median_of(|r| r.server_cpu_pct).map_or_else(dash, |c| format!("{c:.0}")),
            median_of(|r| r.server_rss_per_conn_bytes.map(|b| b as f64))
                .map_or_else(dash, crate::units::fmt_bytes),
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
            // Two more repetitions: the median, not the best, is shown.
            row("epoll", "c1100", Status::Ok, 2000.0, 1100),
            row("epoll", "c1100", Status::Ok, 700.0, 1100),
        ];
        let table = comparison_table(&rows, &["select".into(), "epoll".into()]);
        let lines: Vec<&str> = table.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "each model at its heaviest completed step, medians over its repetitions there:",
                "model   req/s  p99 (median rep)  max conns  CPU %  RSS/conn  status",
                "select    900           1234 us        500     88   2.0 KiB  failed at c1100: why",
                "epoll     800           1234 us       1100     88   2.0 KiB  ok",
            ]
        );
    }
}
