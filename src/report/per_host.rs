//! Per-host figures: when a step's load was split over client hosts (the namespace
//! lab), each host's own load summary (load/host-N/summary.json) beside what the
//! server counted from that host's address, for the heaviest such step of each model.

use std::fs;
use std::path::Path;

use crate::load::measurements::LoadSummary;
use crate::render::document::{Block, Section, Table};
use crate::results::column;
use crate::results::files::LOAD_HOSTS;
use crate::results::files::{LOAD_DIR, LOAD_SUMMARY, SERVER_SUMMARY};
use crate::results::reader::{Results, Row, Status};
use crate::server::counters::ServerSummary;
use crate::verdict::{fmt_count, fmt_latency};

/// The heaviest ok repetition of each model whose load was split over two or more
/// client hosts (most connections, then most requests per connection).
fn heaviest_split_rows(results: &Results) -> Vec<&Row> {
    let mut chosen: Vec<&Row> = Vec::new();
    for row in results
        .rows
        .iter()
        .filter(|r| r.status == Status::Ok && r.num(column::CLIENT_HOSTS).is_some_and(|h| h > 1.0))
    {
        let weight = |r: &Row| {
            (
                r.num(column::CONNECTIONS).unwrap_or(0.0),
                r.num(column::REQUESTS_PER_CONN).unwrap_or(0.0),
            )
        };
        match chosen.iter_mut().find(|c| c.model == row.model) {
            Some(c) if weight(row) > weight(c) => *c = row,
            Some(_) => {}
            None => chosen.push(row),
        }
    }
    chosen
}

/// One table row per client host of the step in `dir`; None when the step has no
/// per-host files (a run from before they were written).
fn host_rows(dir: &Path) -> Option<Vec<Vec<String>>> {
    let hosts = fs::read_to_string(dir.join(LOAD_HOSTS)).ok()?;
    let server: Option<ServerSummary> = fs::read_to_string(dir.join(SERVER_SUMMARY))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let mut rows = Vec::new();
    for line in hosts.lines() {
        // `host-N ADDR`, and the host's name after them when it has one (an ssh URL).
        let mut words = line.split_whitespace();
        let (Some(shard), Some(addr)) = (words.next(), words.next()) else {
            continue;
        };
        let host = words
            .next()
            .map_or(shard.to_string(), |name| format!("{name} ({shard})"));
        let summary: Option<LoadSummary> =
            fs::read_to_string(dir.join(LOAD_DIR).join(shard).join(LOAD_SUMMARY))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let from_server = server
            .as_ref()
            .and_then(|s| s.hosts.iter().find(|h| h.host == addr))
            .map_or("—".into(), |h| fmt_count(h.connections as f64));
        let row = match summary {
            Some(s) => vec![
                host,
                addr.to_string(),
                fmt_count(s.connections_established as f64),
                from_server,
                fmt_count(s.requests_completed as f64),
                fmt_latency(s.latency_us.mean),
                fmt_latency(s.latency_us.p99 as f64),
                fmt_count(s.errors_total as f64),
            ],
            None => {
                let mut row = vec![host, addr.to_string()];
                row.extend(["no summary".to_string(), from_server]);
                row.extend(std::iter::repeat_n("—".to_string(), 4));
                row
            }
        };
        rows.push(row);
    }
    Some(rows)
}

/// The per-host section, or None when no step's load was split over client hosts.
pub fn section(results: &Results) -> Option<Section> {
    let mut blocks = vec![Block::Paragraph(
        "Each client host's own figures at the heaviest step whose load was split over \
         client hosts, per model: connections the host established and those the server \
         counted from its address, requests, mean and p99 response time, errors."
            .into(),
    )];
    for row in heaviest_split_rows(results) {
        let Some(rows) = host_rows(&row.step_dir(&results.dir)) else {
            continue;
        };
        blocks.push(Block::Paragraph(format!(
            "{} at {} (repetition {})",
            row.model, row.step, row.repetition
        )));
        let n = rows.len();
        blocks.push(Block::Table(Table {
            headers: [
                "Host",
                "Address",
                "Connections",
                "Server's count",
                "Requests",
                "Mean",
                "p99",
                "Errors",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            numeric: vec![false, false, true, true, true, true, true, true],
            flagged: vec![false; n],
        }));
    }
    (blocks.len() > 1).then(|| Section {
        heading: "Per-host figures".into(),
        level: 2,
        id: "per-host".into(),
        blocks,
    })
}
