//! compare.html's charts: a paired chart per figure (OLD and NEW at each matched step,
//! each with the span of its repetitions), drawn by the report's own chart writer. The
//! page is the comparison's document with them, rendered by the report's HTML writer in
//! one self-contained file ([`super::write_page`]).

use plotters::style::RGBColor;

use super::changes::Changes;
use crate::render::charts::{self, Pt, Series, XFormat, XySpec};
use crate::render::document::{Block, Chart, Section};

const OLD_COLOR: RGBColor = RGBColor(0x88, 0x88, 0x88);
const NEW_COLOR: RGBColor = RGBColor(0x00, 0x72, 0xB2);

/// A chart per figure: x is the matched step's number in the table, OLD and NEW side by
/// side, the bars spanning the repetitions.
pub fn charts_section(changes: &Changes) -> Section {
    let steps: Vec<String> = changes
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}: {}", i + 1, s.label()))
        .collect();
    let mut blocks = Vec::new();
    for (f, compared) in changes.figures.iter().enumerate() {
        let spec = XySpec {
            title: compared.figure.name.to_string(),
            x_desc: "matched step (numbered as in the caption)".into(),
            y_desc: match compared.unit() {
                "" => compared.short.clone(),
                unit => format!("{} ({unit})", compared.short),
            },
            series: vec![
                series(changes, f, "OLD", OLD_COLOR, false),
                series(changes, f, "NEW", NEW_COLOR, true),
            ],
            marks: Vec::new(),
            x_format: XFormat::Number,
            x_log: Some(false),
            y_log: Some(false),
            notes: Vec::new(),
        };
        if spec.series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let svg = match charts::xy_chart(&spec) {
            Ok(svg) => svg,
            Err(e) => {
                blocks.push(Block::Paragraph(format!(
                    "{}: the chart could not be drawn: {e:#}",
                    compared.figure.name
                )));
                continue;
            }
        };
        blocks.push(Block::Chart(Chart {
            file: format!("compare-{}", compared.short),
            title: compared.figure.name.to_string(),
            svg,
            caption: format!(
                "{}: OLD (grey, dashed) and NEW (blue) at each matched step, the bars \
                 spanning the repetitions. Steps: {}.",
                compared.figure.name,
                steps.join("; ")
            ),
        }));
    }
    Section {
        heading: "Charts".into(),
        level: 2,
        id: "charts".into(),
        blocks,
    }
}

/// Figure `f` of one side (NEW when `new`) at each matched step, numbered from 1.
fn series(changes: &Changes, f: usize, label: &str, color: RGBColor, new: bool) -> Series {
    Series {
        label: label.to_string(),
        color,
        dashed: !new,
        faint: false,
        points: changes
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let m = if new {
                    &s.changes[f].new
                } else {
                    &s.changes[f].old
                };
                let y = m.value?;
                let (lo, hi) = m.range().unwrap_or((y, y));
                Some(Pt {
                    x: (i + 1) as f64,
                    y,
                    lo: lo.min(y),
                    hi: hi.max(y),
                })
            })
            .collect(),
    }
}
