//! The comparison written out: one document (the report's format-neutral
//! [`Document`]) printed as aligned text or rendered as Markdown and HTML, and the
//! same numbers as CSV and as JSON (schema: docs/compare.md).

use std::collections::BTreeMap;

use serde::Serialize;

use super::changes::{Change, Changes, Measure, StepChange};
use super::gate::{Crossing, Threshold};
use crate::render::document::{Block, Document, Section, StatusWords, Table};
use crate::render::markdown;
use crate::stats;

/// What compare.html and the Markdown say at the top.
const COMPARE_STATUS: StatusWords = StatusWords {
    ok: "No --fail-if threshold crossed.",
    alert: "A --fail-if threshold was crossed.",
};

/// The version of the JSON document's schema; a change to it that is not an addition
/// changes this.
pub const JSON_SCHEMA: &str = "echolab-compare/1";

/// "12.3 µs ±4%": the value as the figure writes it and the farthest repetition from it.
fn fmt_measure(m: &Measure, format: fn(f64) -> String) -> String {
    match (m.value, m.spread_pct()) {
        (None, _) => "—".into(),
        (Some(v), Some(s)) => format!("{} ±{s:.0}%", format(v)),
        (Some(v), None) => format(v),
    }
}

/// "+8.2% (+6.0% to +10.1%)" for a change the verdict names, "fixed by the load" where
/// an open loop set both sides' value, "~" otherwise.
fn fmt_change(c: &Change) -> String {
    if c.fixed_by_load.is_some() {
        return "fixed by the load".into();
    }
    if !c.significant {
        return "~".into();
    }
    match (c.pct(), c.interval_pct()) {
        (Some(pct), _) if pct.is_infinite() => "from 0".into(),
        (Some(pct), Some((lo, hi))) => format!("{pct:+.1}% ({lo:+.1}% to {hi:+.1}%)"),
        (Some(pct), None) => format!("{pct:+.1}%"),
        (None, _) => "from 0".into(),
    }
}

/// The comparison as a document: the changes step by step, the geometric means, what
/// is in one run only, and (for the page) a chart per figure.
pub fn document(changes: &Changes, crossed: &[Crossing], charts: bool) -> Document {
    let mut sections = vec![changes_section(changes)];
    sections.extend(geomean_section(changes));
    let only: Vec<String> = changes
        .only_old
        .iter()
        .map(|s| format!("only in OLD: {s}"))
        .chain(changes.only_new.iter().map(|s| format!("only in NEW: {s}")))
        .collect();
    if !only.is_empty() {
        sections.push(Section {
            heading: "In one run only".into(),
            level: 2,
            id: "one-side".into(),
            blocks: vec![Block::List(only)],
        });
    }
    if charts {
        sections.push(super::page::charts_section(changes));
    }
    Document {
        title: format!(
            "echolab compare: {} → {}",
            changes.old_dir.display(),
            changes.new_dir.display()
        ),
        status: COMPARE_STATUS,
        caveat: None,
        partial: None,
        alerts: crossed.iter().map(Crossing::describe).collect(),
        notes: changes
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect(),
        sections,
    }
}

/// The changes step by step: each figure old and new, its change where the verdict's
/// test names one, and the test's p.
fn changes_section(changes: &Changes) -> Section {
    let mut rows = Vec::new();
    let mut flagged = Vec::new();
    for step in &changes.steps {
        for (i, (figure, c)) in changes.figures.iter().zip(&step.changes).enumerate() {
            let where_ = match i {
                0 => step.label(),
                1 => format!("({})", step.params()),
                _ => String::new(),
            };
            rows.push(vec![
                where_,
                figure.short.clone(),
                fmt_measure(&c.old, figure.figure.format),
                fmt_measure(&c.new, figure.figure.format),
                fmt_change(c),
                c.test.map_or(String::new(), |t| t.describe_p()),
            ]);
            flagged.push(c.significant);
        }
    }
    Section {
        heading: "Changes".into(),
        level: 2,
        id: "changes".into(),
        blocks: vec![
            Block::Paragraph(format!(
                "OLD {} against NEW {}. Each figure: the median of the repetitions (latency \
                 from their histograms added, errors summed) ± the farthest repetition; the \
                 change of the median with its 95 % bootstrap interval where the test names \
                 one (Mann–Whitney p < {}, and ×{} or more), ~ where it does not.",
                changes.old_dir.display(),
                changes.new_dir.display(),
                stats::ALPHA,
                stats::MIN_EFFECT
            )),
            Block::Table(Table {
                headers: ["step", "figure", "old", "new", "change", "p, n"]
                    .map(String::from)
                    .to_vec(),
                rows,
                numeric: vec![false, false, true, true, true, false],
                flagged,
            }),
        ],
    }
}

/// Each figure's geometric mean over the matched steps, old and new; None when no
/// figure has one.
fn geomean_section(changes: &Changes) -> Option<Section> {
    let geomean_rows: Vec<Vec<String>> = changes
        .figures
        .iter()
        .zip(&changes.geomeans)
        .filter_map(|(figure, g)| {
            let g = g.as_ref()?;
            Some(vec![
                figure.short.clone(),
                (figure.figure.format)(g.old),
                (figure.figure.format)(g.new),
                format!("{:+.1}%", g.pct()),
                g.steps.to_string(),
            ])
        })
        .collect();
    if geomean_rows.is_empty() {
        return None;
    }
    Some(Section {
        heading: "Geometric means".into(),
        level: 2,
        id: "geomean".into(),
        blocks: vec![
            Block::Paragraph(
                "Each figure's geometric mean over the matched steps where both runs \
                 have a value above zero: the overall change, not a test."
                    .into(),
            ),
            Block::Table(Table {
                headers: ["figure", "old", "new", "change", "steps"]
                    .map(String::from)
                    .to_vec(),
                numeric: vec![false, true, true, true, true],
                flagged: vec![false; geomean_rows.len()],
                rows: geomean_rows,
            }),
        ],
    })
}

/// The terminal's table: the document's warnings, tables (columns aligned) and lists.
/// Crossed thresholds go to stderr, not here.
pub fn text(changes: &Changes) -> String {
    let doc = document(changes, &[], false);
    let mut out = String::new();
    for note in &doc.notes {
        out += &format!("{note}\n");
    }
    for section in &doc.sections {
        for block in &section.blocks {
            match block {
                Block::Table(table) => {
                    out.push('\n');
                    out += &table.aligned();
                }
                Block::List(items) => {
                    out.push('\n');
                    for item in items {
                        out += &format!("{item}\n");
                    }
                }
                Block::Paragraph(_)
                | Block::Chart(_)
                | Block::Code(_)
                | Block::Headline(_)
                | Block::Answers(_)
                | Block::Details { .. } => {}
            }
        }
    }
    out
}

/// The Markdown to paste into a pull request (no charts).
pub fn markdown(changes: &Changes, crossed: &[Crossing]) -> String {
    markdown::render(&document(changes, crossed, false))
}

/// One CSV row per matched step and figure, then one per figure's geometric mean
/// (`old_step` = `geomean`).
pub fn csv(changes: &Changes) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "old_model",
        "new_model",
        "old_step",
        "new_step",
        "figure",
        "column",
        "old_value",
        "old_min",
        "old_max",
        "old_n",
        "new_value",
        "new_min",
        "new_max",
        "new_n",
        "change_pct",
        "interval_lo_pct",
        "interval_hi_pct",
        "p",
        "significant",
        "fixed_by_load",
    ])?;
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for step in &changes.steps {
        for (figure, c) in changes.figures.iter().zip(&step.changes) {
            let (old_range, new_range) = (c.old.range(), c.new.range());
            let interval = c.interval_pct();
            w.write_record([
                step.old_model.clone(),
                step.new_model.clone(),
                step.old_step.clone(),
                step.new_step.clone(),
                figure.short.clone(),
                figure.figure.column.to_string(),
                num(c.old.value),
                num(old_range.map(|r| r.0)),
                num(old_range.map(|r| r.1)),
                c.old.samples.len().to_string(),
                num(c.new.value),
                num(new_range.map(|r| r.0)),
                num(new_range.map(|r| r.1)),
                c.new.samples.len().to_string(),
                num(c.pct()),
                num(interval.map(|i| i.0)),
                num(interval.map(|i| i.1)),
                num(c.test.map(|t| t.p)),
                c.significant.to_string(),
                num(c.fixed_by_load),
            ])?;
        }
    }
    for (figure, g) in changes.figures.iter().zip(&changes.geomeans) {
        let Some(g) = g else { continue };
        let mut record = vec![String::new(); 20];
        record[2] = "geomean".into();
        record[4] = figure.short.clone();
        record[5] = figure.figure.column.to_string();
        record[6] = g.old.to_string();
        record[9] = g.steps.to_string();
        record[10] = g.new.to_string();
        record[13] = g.steps.to_string();
        record[14] = g.pct().to_string();
        w.write_record(&record)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    schema: &'static str,
    old: String,
    new: String,
    alpha: f64,
    min_effect: f64,
    warnings: &'a [String],
    thresholds: Vec<&'a str>,
    crossed: Vec<JsonCrossing<'a>>,
    steps: Vec<JsonStep<'a>>,
    geomean: Vec<JsonGeomean<'a>>,
    only_old: &'a [String],
    only_new: &'a [String],
}

/// One matched step of the JSON document: the two sides' steps, its parameters and
/// every figure's change.
fn json_step<'a>(changes: &'a Changes, s: &'a StepChange) -> JsonStep<'a> {
    JsonStep {
        old_model: &s.old_model,
        new_model: &s.new_model,
        old_step: &s.old_step,
        new_step: &s.new_step,
        parameters: s
            .params
            .iter()
            .map(|(c, v)| {
                let value = v
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(serde_json::Value::String(v.clone()), Into::into);
                (*c, value)
            })
            .collect(),
        figures: changes
            .figures
            .iter()
            .zip(&s.changes)
            .map(|(f, c)| JsonFigure {
                figure: &f.short,
                column: f.figure.column,
                unit: f.unit(),
                higher_is_better: f.figure.higher_is_better,
                old: side(&c.old),
                new: side(&c.new),
                change_pct: c.pct(),
                interval_pct: c.interval_pct().map(|(lo, hi)| [lo, hi]),
                p: c.test.map(|t| t.p),
                significant: c.significant,
                fixed_by_load: c.fixed_by_load,
            })
            .collect(),
    }
}

#[derive(Serialize)]
struct JsonCrossing<'a> {
    threshold: &'a str,
    step: String,
    what: &'a str,
}

#[derive(Serialize)]
struct JsonStep<'a> {
    old_model: &'a str,
    new_model: &'a str,
    old_step: &'a str,
    new_step: &'a str,
    parameters: BTreeMap<&'static str, serde_json::Value>,
    figures: Vec<JsonFigure<'a>>,
}

#[derive(Serialize)]
struct JsonFigure<'a> {
    figure: &'a str,
    column: &'a str,
    unit: &'static str,
    higher_is_better: bool,
    old: JsonSide,
    new: JsonSide,
    change_pct: Option<f64>,
    interval_pct: Option<[f64; 2]>,
    p: Option<f64>,
    significant: bool,
    /// The offered rate, when an open loop fixed the figure on both sides.
    fixed_by_load: Option<f64>,
}

#[derive(Serialize)]
struct JsonSide {
    value: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    n: usize,
    broke: bool,
}

#[derive(Serialize)]
struct JsonGeomean<'a> {
    figure: &'a str,
    old: f64,
    new: f64,
    change_pct: f64,
    steps: usize,
}

fn side(m: &Measure) -> JsonSide {
    let range = m.range();
    JsonSide {
        value: m.value,
        min: range.map(|r| r.0),
        max: range.map(|r| r.1),
        n: m.samples.len(),
        broke: m.broke,
    }
}

/// The whole comparison as one JSON document (docs/compare.md, "JSON").
pub fn json(
    changes: &Changes,
    thresholds: &[Threshold],
    crossed: &[Crossing],
) -> anyhow::Result<String> {
    let doc = JsonDoc {
        schema: JSON_SCHEMA,
        old: changes.old_dir.display().to_string(),
        new: changes.new_dir.display().to_string(),
        alpha: stats::ALPHA,
        min_effect: stats::MIN_EFFECT,
        warnings: &changes.warnings,
        thresholds: thresholds.iter().map(|t| t.text.as_str()).collect(),
        crossed: crossed
            .iter()
            .map(|c| JsonCrossing {
                threshold: &c.threshold,
                step: c.step.clone(),
                what: &c.what,
            })
            .collect(),
        steps: changes
            .steps
            .iter()
            .map(|s| json_step(changes, s))
            .collect(),
        geomean: changes
            .figures
            .iter()
            .zip(&changes.geomeans)
            .filter_map(|(f, g)| {
                let g = g.as_ref()?;
                Some(JsonGeomean {
                    figure: &f.short,
                    old: g.old,
                    new: g.new,
                    change_pct: g.pct(),
                    steps: g.steps,
                })
            })
            .collect(),
        only_old: &changes.only_old,
        only_new: &changes.only_new,
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}
