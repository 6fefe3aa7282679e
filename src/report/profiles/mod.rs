//! "Where the CPU goes": the profiled repetitions (`run --profile`) as the report shows
//! them. Each model's flame graph, the table of its CPU per request by layer
//! ([`layers`]), the profiled CPU per request against the measured repetitions' (the
//! profiler's overhead) and one differential flame graph of two models. These rows are
//! kept apart from the measured ones when results.csv is read, and nothing here judges.
//! A staircase's profiled stairs ([`stairs`]) are its own rows, their recordings found
//! in their folders.

pub mod layers;
mod stairs;

use std::fs;

use crate::render::document::{Block, Chart, Section, Table};
use crate::render::flame;
use crate::results::column;
use crate::results::files::{
    flame_path, folded_path, PROFILED_LOAD, PROFILED_SERVER, PROFILE_NOTES,
};
use crate::results::reader::{Results, Row, Status};
use layers::Layer;

/// How far the profiled repetition's CPU per request may sit outside the measured
/// repetitions' range and still count as agreeing: perf at 999 Hz costs the server a
/// few per cent (docs/report.md), and one repetition varies more than that.
pub const TOLERANCE: f64 = 0.15;

/// The pair the differential graph prefers: select against epoll.
const DIFFERENCE: [&str; 2] = ["epoll", "select"];

/// The profiles section, when the run has profiled repetitions.
pub fn section(results: &Results) -> Option<Section> {
    let stairs = stairs::profiled(results);
    if results.profiled.is_empty() && stairs.is_empty() {
        return None;
    }
    let mut blocks = Vec::new();
    if !results.profiled.is_empty() {
        blocks = repetitions(results);
    }
    if !stairs.is_empty() {
        let notes = stairs::missing(results, &stairs);
        if !notes.is_empty() {
            blocks.push(Block::Paragraph(
                "Not every stair could be profiled (the staircase went on without it):".into(),
            ));
            blocks.push(Block::List(notes));
        }
        blocks.extend(stairs::blocks(results, &stairs));
    }
    Some(Section {
        heading: "Where the CPU goes".into(),
        level: 2,
        id: "profiles".into(),
        blocks,
    })
}

/// The profiled repetitions' blocks: notes, overhead, layers, graphs.
fn repetitions(results: &Results) -> Vec<Block> {
    let mut blocks = vec![Block::Paragraph(
        "One more repetition per model ran under perf (server and load generator, kernel \
         stacks included). It is labelled profiled in results.csv and never judged. Reading \
         the graphs and the table: docs/report.md, \"Where the CPU goes\"."
            .into(),
    )];
    let notes = missing(results);
    if !notes.is_empty() {
        blocks.push(Block::Paragraph(
            "Not everything could be profiled (the run went on without it):".into(),
        ));
        blocks.push(Block::List(notes));
    }
    blocks.push(Block::Paragraph(format!(
        "The profiler's overhead: the profiled repetition's server CPU per request against \
         the measured repetitions' range at the same step; it agrees within {:.0} % beyond \
         that range.",
        TOLERANCE * 100.0
    )));
    blocks.push(Block::Table(overhead_table(results)));
    blocks.push(Block::Paragraph(
        "Server CPU per request by layer, in µs (share of the samples): the profiled \
         repetition's CPU per request split by where perf found the server's stacks."
            .into(),
    ));
    blocks.push(Block::Table(layer_table(results)));
    for record in &results.profiled {
        let dir = record.step_dir(&results.dir);
        let Ok(svg) = fs::read_to_string(flame_path(&dir, PROFILED_SERVER)) else {
            continue;
        };
        let load = flame_path(&dir, PROFILED_LOAD);
        let load_note = match load.strip_prefix(&results.dir) {
            Ok(rel) if load.is_file() => format!(" The load generator's: {}.", rel.display()),
            _ => String::new(),
        };
        blocks.push(Block::Chart(Chart {
            file: format!("flame-{}-{}", record.model, record.step),
            title: format!(
                "{} at {}: the server's flame graph",
                record.model, record.step
            ),
            svg,
            caption: format!(
                "Each box a function, its width its share of the server's samples, its \
                 callers below it; kernel frames end in _[k]. Open charts/flame-{}-{}.svg \
                 alone to zoom and search.{load_note}",
                record.model, record.step
            ),
        }));
    }
    blocks.extend(difference(results));
    blocks
}

/// What could not be profiled, per repetition, from its notes file.
fn missing(results: &Results) -> Vec<String> {
    let mut notes = Vec::new();
    for record in &results.profiled {
        let dir = record.step_dir(&results.dir);
        if let Ok(text) = fs::read_to_string(dir.join(PROFILE_NOTES)) {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                notes.push(format!("{} at {}: {line}", record.model, record.step));
            }
        } else if record.status != Status::Ok {
            notes.push(format!(
                "{} at {}: the profiled repetition {}: {}",
                record.model, record.step, record.status, record.failure_reason
            ));
        }
    }
    // A model whose measured repetitions of a profiled step failed gets no profiled one.
    let mut unprofiled: Vec<(&str, &str)> = results
        .rows
        .iter()
        .filter(|r| results.profiled.iter().any(|p| p.step == r.step))
        .filter(|r| {
            !results
                .profiled
                .iter()
                .any(|p| p.step == r.step && p.model == r.model)
        })
        .map(|r| (r.model.as_str(), r.step.as_str()))
        .collect();
    unprofiled.dedup();
    notes.extend(unprofiled.into_iter().map(|(model, step)| {
        format!("{model} at {step}: not profiled: the step failed, was skipped or did not run")
    }));
    notes
}

/// The measured repetitions of `record`'s model and step with a CPU per request.
fn measured(results: &Results, record: &Row) -> Vec<f64> {
    results
        .rows
        .iter()
        .filter(|r| r.model == record.model && r.step == record.step && r.status == Status::Ok)
        .filter_map(|r| r.num(column::SERVER_CPU_US_PER_REQUEST))
        .collect()
}

fn overhead_table(results: &Results) -> Table {
    let rows: Vec<Vec<String>> = results
        .profiled
        .iter()
        .map(|record| {
            let profiled = record.num(column::SERVER_CPU_US_PER_REQUEST);
            let others = measured(results, record);
            let low = others.iter().copied().fold(f64::INFINITY, f64::min);
            let high = others.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let (range, agrees) = match profiled {
                Some(p) if !others.is_empty() => (
                    format!("{low:.1}–{high:.1}"),
                    if p >= low * (1.0 - TOLERANCE) && p <= high * (1.0 + TOLERANCE) {
                        "yes".to_string()
                    } else {
                        format!("no: {:+.0} % from the median", overhead(p, &others))
                    },
                ),
                _ => (String::new(), "not measured".into()),
            };
            vec![
                record.model.clone(),
                record.step.clone(),
                profiled.map_or(String::new(), |p| format!("{p:.1}")),
                range,
                agrees,
            ]
        })
        .collect();
    Table {
        headers: [
            "model",
            "step",
            "profiled µs/request",
            "measured µs/request (range)",
            "agrees",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, true, true, false],
        flagged: vec![false; rows.len()],
        rows,
    }
}

/// The profiled value against the measured repetitions' median, in per cent.
fn overhead(profiled: f64, measured: &[f64]) -> f64 {
    let median = crate::stats::median(measured).unwrap_or(profiled);
    (profiled / median - 1.0) * 100.0
}

/// The server's CPU per request of a profiled repetition split by layer: each layer's
/// share of the samples times the repetition's CPU per request (None when it has none:
/// a repetition that failed). None without samples.
pub fn by_layer(results: &Results, record: &Row) -> Option<[(Option<f64>, f64); 7]> {
    let folded = folded_path(&record.step_dir(&results.dir), PROFILED_SERVER);
    let (shares, _) = layers::shares(&fs::read_to_string(folded).ok()?)?;
    let per_request = record
        .num(column::SERVER_CPU_US_PER_REQUEST)
        .filter(|_| record.status == Status::Ok);
    Some(shares.map(|s| (per_request.map(|p| s * p), s)))
}

fn layer_table(results: &Results) -> Table {
    let mut headers = vec!["model".to_string(), "step".to_string()];
    headers.extend(Layer::ALL.iter().map(|l| l.name().to_string()));
    let rows: Vec<Vec<String>> = results
        .profiled
        .iter()
        .map(|record| {
            let mut row = vec![record.model.clone(), record.step.clone()];
            match by_layer(results, record) {
                Some(split) => row.extend(split.iter().map(|(us, share)| match us {
                    Some(us) => format!("{us:.1} ({:.0} %)", share * 100.0),
                    None => format!("— ({:.0} %)", share * 100.0),
                })),
                None => row.extend(Layer::ALL.iter().map(|_| "no samples".to_string())),
            }
            row
        })
        .collect();
    Table {
        numeric: (0..headers.len()).map(|i| i >= 2).collect(),
        headers,
        flagged: vec![false; rows.len()],
        rows,
    }
}

/// One differential flame graph: select against epoll at the heaviest step both were
/// profiled at, else the first two models profiled at one step.
fn difference(results: &Results) -> Option<Block> {
    let with_samples: Vec<&Row> = results
        .profiled
        .iter()
        .filter(|r| folded_path(&r.step_dir(&results.dir), PROFILED_SERVER).is_file())
        .collect();
    let find = |model: &str, step: &str| {
        with_samples
            .iter()
            .copied()
            .find(|r| r.model == model && r.step == step)
    };
    let preferred = with_samples
        .iter()
        .rev()
        .find_map(|r| Some((find(DIFFERENCE[0], &r.step)?, find(DIFFERENCE[1], &r.step)?)));
    let pair = preferred.or_else(|| {
        with_samples.iter().find_map(|a| {
            let b = with_samples
                .iter()
                .find(|b| b.step == a.step && b.model != a.model)?;
            Some((*a, *b))
        })
    })?;
    let (before, after) = pair;
    let folded = |r: &Row| folded_path(&r.step_dir(&results.dir), PROFILED_SERVER);
    let title = format!(
        "{} against {} at {}: red where {} spends more of its CPU",
        after.model, before.model, after.step, after.model
    );
    let svg = flame::draw_difference(&folded(before), &folded(after), &title).ok()?;
    Some(Block::Chart(Chart {
        file: format!("flame-{}-vs-{}-{}", after.model, before.model, after.step),
        title,
        svg,
        caption: format!(
            "{}'s stacks, both profiles scaled to the same total: red where {} spends a \
             larger share of its samples than {}, blue where a smaller one.",
            after.model, after.model, before.model
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Manifest;

    #[test]
    fn a_failed_repetitions_layers_have_shares_and_no_time() {
        let dir = tempfile::tempdir().unwrap();
        let record = |status: Status, cpu: Option<f64>| Row {
            model: "epoll".into(),
            step: "c10-s64".into(),
            repetition: 6,
            status,
            server_cpu_us_per_request: cpu,
            ..Row::default()
        };
        let failed = record(Status::Failed, None);
        let step = failed.step_dir(dir.path());
        fs::create_dir_all(&step).unwrap();
        fs::write(
            folded_path(&step, PROFILED_SERVER),
            "main;echo 30\nmain;echo;write 10\n",
        )
        .unwrap();
        let results = Results {
            dir: dir.path().to_path_buf(),
            manifest: Manifest::default(),
            rows: Vec::new(),
            profiled: vec![failed.clone()],
            columns: Vec::new(),
            warnings: Vec::new(),
        };
        let split = by_layer(&results, &failed).unwrap();
        assert!(split.iter().all(|(us, _)| us.is_none()), "{split:?}");
        assert!((split.iter().map(|(_, share)| share).sum::<f64>() - 1.0).abs() < 1e-9);
        // An ok one with its CPU per request: each layer's time is its share of it.
        let ok = record(Status::Ok, Some(8.0));
        let split = by_layer(&results, &ok).unwrap();
        let time: f64 = split.iter().filter_map(|(us, _)| *us).sum();
        assert!((time - 8.0).abs() < 1e-9, "{split:?}");
    }
}
