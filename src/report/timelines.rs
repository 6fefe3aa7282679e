//! Each model's heaviest step of a sweep, second by second: its step files
//! (load/timeline.csv, load/percentiles.csv, probe.csv, net-timeline.csv) and the
//! timeline charts.

use std::path::Path;

use crate::render::charts::{chart, model_color, time_unit, Pt, Series, XFormat, XySpec};
use crate::render::document::Block;
use crate::results::files::{LOAD_DIR, NET_TIMELINE, PERCENTILES, PROBE, TIMELINE};
use crate::results::reader::{self, NumberTable, Results, Row, Status};
use crate::verdict::sweep::{self, at, Sweep};

/// The step files of one model's heaviest step in a sweep.
pub(super) struct HeavyStep {
    pub(super) model: String,
    /// "connections=4000"
    pub(super) at: String,
    /// "4000": the x value alone, for legends.
    pub(super) x: String,
    pub(super) step: String,
    /// (repetition, table) for each of the first [`PERCENTILE_REPETITIONS`] repetitions
    /// that have the file.
    pub(super) percentiles: Vec<(u32, NumberTable)>,
    /// The repetitions the step ran (more than `percentiles` holds when beyond the bound).
    pub(super) repetitions: usize,
    pub(super) timeline: Option<NumberTable>,
    pub(super) probe: Option<NumberTable>,
    /// The kernel's TCP counters second by second (absent in older results).
    pub(super) net: Option<NumberTable>,
}

/// Reads a step file, turning a malformed one into a warning: one bad file
/// should not cost the whole report.
fn read_step_file(results: &mut Results, path: &Path) -> Option<NumberTable> {
    match reader::read_table(path) {
        Ok(table) => table,
        Err(error) => {
            results
                .warnings
                .push(format!("{error:#} (left out of the charts)"));
            None
        }
    }
}

/// At most this many repetitions' percentile curves are read and drawn per model: a
/// step of thousands of repetitions drew a curve each (a 10 MB chart, the tables held
/// 700 MB); the chart's caption says how many it shows.
pub(super) const PERCENTILE_REPETITIONS: usize = 20;

/// For each model: the heaviest x whose step folder has load files, preferring
/// steps that finished ok (a failed step's numbers describe a broken server). A model
/// whose steps ran but left no folder is named in `missing`.
pub(super) fn heaviest_steps(
    results: &mut Results,
    s: &Sweep,
    missing: &mut Vec<String>,
) -> Vec<HeavyStep> {
    let mut out = Vec::new();
    for model in sweep::models(results) {
        let mut candidates: Vec<Row> = s
            .rows(results)
            .filter(|r| r.model == model && r.status != Status::Skipped)
            .cloned()
            .collect();
        candidates.sort_by(|a, b| {
            let ok = |r: &Row| r.status == Status::Ok;
            ok(b)
                .cmp(&ok(a))
                .then(
                    s.x_of(b)
                        .unwrap_or(0.0)
                        .total_cmp(&s.x_of(a).unwrap_or(0.0)),
                )
                .then(a.repetition.cmp(&b.repetition))
        });
        let dir = results.dir.clone();
        let chosen = candidates
            .iter()
            .find(|r| {
                r.step_dir(&dir).join(LOAD_DIR).is_dir() || r.step_dir(&dir).join(PROBE).is_file()
            })
            .cloned();
        let Some(first) = chosen else {
            // Steps that ran left folders: say which one is gone rather than chart nothing.
            if let Some(ran) = candidates
                .iter()
                .find(|r| matches!(r.status, Status::Ok | Status::Failed))
            {
                missing.push(format!(
                    "{model}: the step folder {} is missing (no load/ nor probe.csv in any of \
                     its steps of the {} sweep): its timelines are left out",
                    ran.step_dir(&dir).display(),
                    s.title()
                ));
            }
            continue;
        };
        let same_step: Vec<Row> = candidates
            .iter()
            .filter(|r| r.step == first.step)
            .cloned()
            .collect();
        let mut percentiles = Vec::new();
        for r in same_step.iter().take(PERCENTILE_REPETITIONS) {
            let path = r.step_dir(&dir).join(LOAD_DIR).join(PERCENTILES);
            if let Some(table) = read_step_file(results, &path) {
                percentiles.push((r.repetition, table));
            }
        }
        let step_dir = first.step_dir(&dir);
        let timeline = read_step_file(results, &step_dir.join(LOAD_DIR).join(TIMELINE));
        let probe = read_step_file(results, &step_dir.join(PROBE));
        let net = read_step_file(results, &step_dir.join(NET_TIMELINE));
        out.push(HeavyStep {
            at: s.x_of(&first).map(|x| at(&s.axis, x)).unwrap_or_default(),
            x: s.x_of(&first).map(sweep::plain_number).unwrap_or_default(),
            step: first.step.clone(),
            model,
            percentiles,
            repetitions: same_step.len(),
            timeline,
            probe,
            net,
        });
    }
    out
}

/// Below this many per-second points a timeline says nothing (a 1.5 s step has two).
const MIN_TIMELINE_POINTS: usize = 5;

pub(super) fn blocks(slug: &str, heavy: &[HeavyStep]) -> anyhow::Result<Vec<Block>> {
    if heavy.is_empty() {
        return Ok(vec![Block::Paragraph(
            "No model's steps left their step folders (load/, probe.csv): no timelines; the \
             folders missing are named in the notes at the top."
                .into(),
        )]);
    }
    let mut blocks = vec![Block::Paragraph(format!(
        "Second by second through each model's heaviest step (first repetition): {}.",
        heavy
            .iter()
            .map(|h| format!("{} {} ({})", h.model, h.step, h.at))
            .collect::<Vec<_>>()
            .join(", ")
    ))];
    blocks.extend(load_blocks(slug, heavy)?);
    blocks.extend(server_blocks(slug, heavy)?);
    blocks.extend(segments_block(slug, heavy)?);
    Ok(blocks)
}

/// One model's line through `points`.
fn line(h: &HeavyStep, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: h.model.clone(),
        color: model_color(&h.model),
        dashed: false,
        faint: false,
        points: points
            .into_iter()
            .map(|(x, y)| Pt { x, y, lo: y, hi: y })
            .collect(),
    }
}

/// A timeline chart: time since the step started on x.
fn spec(title: &str, y_desc: String, series: Vec<Series>, y_log: Option<bool>) -> XySpec {
    XySpec {
        title: title.into(),
        x_desc: "time since the step started (s)".into(),
        y_desc,
        series,
        marks: vec![],
        x_format: XFormat::Number,
        x_log: Some(false),
        y_log,
        notes: vec![],
    }
}

/// Each model's line through a column of load/timeline.csv, divided by `scale`.
fn load_series(heavy: &[HeavyStep], column: &str, scale: f64) -> Vec<Series> {
    heavy
        .iter()
        .filter_map(|h| {
            let t = h.timeline.as_ref()?;
            let points = t
                .pairs("second", column)
                .into_iter()
                .map(|(x, y)| (x, y / scale))
                .collect();
            Some(line(h, points))
        })
        .collect()
}

/// The load generator's timelines (throughput, p99, connections), or why they are left out.
fn load_blocks(slug: &str, heavy: &[HeavyStep]) -> anyhow::Result<Vec<Block>> {
    let seconds = heavy
        .iter()
        .filter_map(|h| Some(h.timeline.as_ref()?.rows.len()))
        .max()
        .unwrap_or(0);
    if seconds < MIN_TIMELINE_POINTS {
        return Ok(vec![Block::Paragraph(format!(
            "The steps lasted {seconds} second(s): per-second timelines (throughput, p99, \
             connections) of fewer than {MIN_TIMELINE_POINTS} points are left out, as their \
             points would be noise; the server's CPU and memory below are sampled every 100 ms."
        ))]);
    }
    let mut blocks = vec![chart(
        format!("{slug}-timeline-throughput"),
        &spec(
            "Timeline: throughput",
            "requests completed per second".into(),
            load_series(heavy, "requests", 1.0),
            Some(false),
        ),
        "From load/timeline.csv.".into(),
    )?];
    // 003 graphed its continuous transfers as a rate of bytes: with large messages the
    // bytes moved, not the requests, show a link or a server falling behind.
    blocks.push(chart(
        format!("{slug}-timeline-bytes"),
        &spec(
            "Timeline: bytes echoed",
            "MiB echoed per second".into(),
            load_series(heavy, "bytes", 1048576.0),
            Some(false),
        ),
        "Echo bytes the load generator received in each second, from load/timeline.csv.".into(),
    )?);
    let p99_max = heavy
        .iter()
        .filter_map(|h| h.timeline.as_ref())
        .flat_map(|t| t.pairs("second", "p99_us"))
        .map(|(_, v)| v)
        .fold(0.0, f64::max);
    let (unit, scale) = time_unit(p99_max);
    blocks.push(chart(
        format!("{slug}-timeline-p99"),
        &spec(
            "Timeline: p99 response time",
            format!("p99 response time ({unit})"),
            load_series(heavy, "p99_us", scale),
            None,
        ),
        "p99 of the requests completed in each second, from load/timeline.csv.".into(),
    )?);
    blocks.push(chart(
        format!("{slug}-timeline-connections"),
        &spec(
            "Timeline: active connections",
            "open client connections".into(),
            load_series(heavy, "active_connections", 1.0),
            Some(false),
        ),
        "Connections the load generator held open, from load/timeline.csv.".into(),
    )?);
    Ok(blocks)
}

/// Each model's line from its probe.csv, as `f` reads it.
fn probe_series(heavy: &[HeavyStep], f: &dyn Fn(&NumberTable) -> Vec<(f64, f64)>) -> Vec<Series> {
    heavy
        .iter()
        .filter_map(|h| Some(line(h, f(h.probe.as_ref()?))))
        .collect()
}

/// probe.csv holds cumulative CPU seconds: the rate between samples is the load.
fn cpu_percent(t: &NumberTable) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut prev: Option<(f64, f64)> = None;
    for row in &t.rows {
        let (Some(&ts), Some(&u), Some(&sy)) =
            (row.get("t_s"), row.get("cpu_user_s"), row.get("cpu_sys_s"))
        else {
            continue;
        };
        if let Some((pt, pc)) = prev {
            if ts > pt {
                out.push((ts, ((u + sy - pc) / (ts - pt) * 100.0).max(0.0)));
            }
        }
        prev = Some((ts, u + sy));
    }
    out
}

fn rss_mib(t: &NumberTable) -> Vec<(f64, f64)> {
    t.pairs("t_s", "rss_bytes")
        .into_iter()
        .map(|(x, b)| (x, b / 1048576.0))
        .collect()
}

/// The server's CPU and memory, sampled every 100 ms by the probe.
fn server_blocks(slug: &str, heavy: &[HeavyStep]) -> anyhow::Result<Vec<Block>> {
    Ok(vec![
        chart(
            format!("{slug}-timeline-cpu"),
            &spec(
                "Timeline: server CPU",
                "server CPU (% of one core)".into(),
                probe_series(heavy, &cpu_percent),
                Some(false),
            ),
            "CPU used between consecutive /proc samples (probe.csv, every 100 ms).".into(),
        )?,
        chart(
            format!("{slug}-timeline-memory"),
            &spec(
                "Timeline: server memory",
                "server RSS (MiB)".into(),
                probe_series(heavy, &rss_mib),
                Some(false),
            ),
            "Resident memory of the server process, from probe.csv.".into(),
        )?,
    ])
}

/// TCP segments in and out per second, when the kernel's counters were sampled.
fn segments_block(slug: &str, heavy: &[HeavyStep]) -> anyhow::Result<Option<Block>> {
    if !heavy.iter().any(|h| h.net.is_some()) {
        return Ok(None);
    }
    let segments: Vec<Series> = heavy
        .iter()
        .filter_map(|h| {
            let t = h.net.as_ref()?;
            let inbound = t.pairs("t_s", "segs_in_per_s");
            let outbound = t.pairs("t_s", "segs_out_per_s");
            let mut out = line(h, outbound);
            out.label = format!("{} out", h.model);
            let mut inn = line(h, inbound);
            inn.label = format!("{} in", h.model);
            inn.dashed = true;
            Some([out, inn])
        })
        .flatten()
        .collect();
    Ok(Some(chart(
        format!("{slug}-timeline-segments"),
        &spec(
            "Timeline: TCP segments per second",
            "TCP segments per second".into(),
            segments,
            Some(false),
        ),
        "Segments sent (solid) and received (dashed) each second, from the kernel's \
         counters (net-timeline.csv, /proc/net/snmp of the server's network namespace; \
         results.csv's net_scope says whether other traffic is included)."
            .into(),
    )?))
}
