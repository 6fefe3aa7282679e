//! SVG charts drawn with plotters. Every chart keeps its legend and its failure
//! notes in panels of their own (right and bottom) so that no text is drawn over
//! the data, and each model has the same colour in every chart.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::render::document::{Block, Chart};

const WIDTH: u32 = 960;
const PLOT_HEIGHT: u32 = 440;
const LEGEND_WIDTH: u32 = 200;
const NOTE_LINE: u32 = 20;
const FONT: &str = "sans-serif";

/// Okabe-Ito colours (distinguishable with the common colour-vision deficiencies),
/// fixed per model so that a model looks the same in every chart.
pub fn model_color(model: &str) -> RGBColor {
    let base = model.split(['-', ':', '/', ' ']).next().unwrap_or(model);
    match base {
        "threads" => RGBColor(0xE6, 0x9F, 0x00),
        "select" => RGBColor(0xD5, 0x5E, 0x00),
        "poll" => RGBColor(0xCC, 0x79, 0xA7),
        "epoll" => RGBColor(0x00, 0x72, 0xB2),
        "uring" => RGBColor(0x00, 0x9E, 0x73),
        "tokio" => RGBColor(0x33, 0x33, 0x33),
        _ => {
            // Unknown models (e.g. a variant a scenario named itself) still get a
            // stable colour: the same name always hashes to the same entry.
            const OTHERS: [RGBColor; 4] = [
                RGBColor(0x56, 0xB4, 0xE9),
                RGBColor(0x88, 0x66, 0x22),
                RGBColor(0x99, 0x99, 0x99),
                RGBColor(0x66, 0x33, 0x99),
            ];
            let hash = model
                .bytes()
                .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
            OTHERS[hash % OTHERS.len()]
        }
    }
}

/// One point of a line: the mean of the repetitions and their min and max.
#[derive(Debug, Clone, Copy)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub dashed: bool,
    /// Thinner, lighter line (a second repetition drawn beside the first).
    pub faint: bool,
    pub points: Vec<Pt>,
}

/// A step that failed: a cross on the x axis, numbered, explained in the notes.
pub struct Mark {
    pub x: f64,
    pub color: RGBColor,
    pub note: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum XFormat {
    Number,
    /// x holds 1/(1-p): labels show the percentile p.
    Percentile,
}

pub struct XySpec {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
    pub x_format: XFormat,
    /// None: decide from the data's range.
    pub x_log: Option<bool>,
    pub y_log: Option<bool>,
    /// Extra notes printed under the chart (besides the failure marks).
    pub notes: Vec<String>,
}

pub struct Bar {
    pub label: String,
    pub color: RGBColor,
    pub value: f64,
}

pub struct BarSpec {
    pub title: String,
    pub y_desc: String,
    pub bars: Vec<Bar>,
    pub notes: Vec<String>,
}

/// Short numbers for tick labels: 1500 -> "1.5k", 2000000 -> "2M".
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if scaled.abs() >= 100.0 || scaled.fract() == 0.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else if scaled.abs() >= 0.01 || scaled == 0.0 {
        format!("{scaled:.2}")
    } else {
        format!("{scaled:.1e}")
    };
    let text = if text.contains('.') && !text.contains('e') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// Tick label for x = 1/(1-p): 2 -> "50%", 1000 -> "99.9%".
pub fn percentile_label(x: f64) -> String {
    if x <= 1.0 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().ceil() as i64 - 2).max(0) as usize;
    format!("{p:.decimals$}%")
}

/// Linear unless the values span more than `ratio` and are all positive.
fn wants_log(values: impl Iterator<Item = f64>, ratio: f64) -> bool {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        if v <= 0.0 || !v.is_finite() {
            return false;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    hi.is_finite() && hi / lo >= ratio
}

fn range_of(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

fn padded(lo: f64, hi: f64, log: bool, from_zero: bool) -> (f64, f64) {
    if log {
        return (lo / 1.4, hi * 1.4);
    }
    let lo = if from_zero { lo.min(0.0) } else { lo };
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.5 };
        return (if from_zero { lo } else { lo - pad }, hi + pad);
    }
    let pad = (hi - lo) * 0.06;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
            line.push_str("    ");
        }
        if !line.is_empty() && !line.ends_with("    ") {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        lines.push(line);
    }
    lines
}

/// Turns plotters' fixed-size SVG into one that scales with its container.
fn responsive(svg: String) -> String {
    let Some(start) = svg.find("<svg") else {
        return svg;
    };
    let end = svg[start..].find('>').map(|e| start + e).unwrap_or(start);
    let tag = &svg[start..end];
    let mut new_tag = String::from("<svg");
    let mut rest = tag.trim_start_matches("<svg").to_string();
    for attr in ["width", "height"] {
        let needle = format!(" {attr}=\"");
        if let Some(i) = rest.find(&needle) {
            if let Some(j) = rest[i + needle.len()..].find('"') {
                rest.replace_range(i..i + needle.len() + j + 1, "");
            }
        }
    }
    new_tag.push_str(&rest);
    new_tag.push_str(" preserveAspectRatio=\"xMidYMid meet\" role=\"img\"");
    format!("{}{}{}", &svg[..start], new_tag, &svg[end..])
}

fn notes_lines(marks: &[Mark], notes: &[String]) -> Vec<(String, RGBColor)> {
    let mut lines = Vec::new();
    for (i, mark) in marks.iter().enumerate() {
        for (k, line) in wrap(&format!("× {}  {}", i + 1, mark.note), 140)
            .into_iter()
            .enumerate()
        {
            let color = if k == 0 {
                mark.color
            } else {
                RGBColor(0x22, 0x22, 0x22)
            };
            lines.push((line, color));
        }
    }
    for note in notes {
        for line in wrap(note, 140) {
            lines.push((line, RGBColor(0x22, 0x22, 0x22)));
        }
    }
    lines
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_notes(area: &Area<'_>, lines: &[(String, RGBColor)]) -> anyhow::Result<()> {
    for (i, (line, color)) in lines.iter().enumerate() {
        let style = TextStyle::from((FONT, 16).into_font()).color(color);
        area.draw_text(line, &style, (16, 6 + i as i32 * NOTE_LINE as i32))?;
    }
    Ok(())
}

struct LegendEntry {
    label: String,
    color: RGBColor,
    kind: LegendKind,
}

enum LegendKind {
    Line { dashed: bool },
    Cross,
    Range,
}

fn draw_legend(area: &Area<'_>, entries: &[LegendEntry]) -> anyhow::Result<()> {
    let x0 = 8;
    let mut y = 58;
    for entry in entries {
        let style = entry.color.stroke_width(2);
        match entry.kind {
            LegendKind::Line { dashed: false } => {
                area.draw(&PathElement::new(vec![(x0, y), (x0 + 30, y)], style))?;
                area.draw(&Circle::new((x0 + 15, y), 3, entry.color.filled()))?;
            }
            LegendKind::Line { dashed: true } => {
                for s in [0, 12, 24] {
                    area.draw(&PathElement::new(vec![(x0 + s, y), (x0 + s + 7, y)], style))?;
                }
            }
            LegendKind::Cross => {
                area.draw(&Cross::new((x0 + 15, y), 5, style))?;
            }
            LegendKind::Range => {
                let thin = entry.color.stroke_width(1);
                area.draw(&PathElement::new(
                    vec![(x0 + 15, y - 7), (x0 + 15, y + 7)],
                    thin,
                ))?;
                area.draw(&PathElement::new(
                    vec![(x0 + 11, y - 7), (x0 + 19, y - 7)],
                    thin,
                ))?;
                area.draw(&PathElement::new(
                    vec![(x0 + 11, y + 7), (x0 + 19, y + 7)],
                    thin,
                ))?;
            }
        }
        let text = TextStyle::from((FONT, 17).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw_text(&entry.label, &text, (x0 + 40, y))?;
        y += 22;
    }
    Ok(())
}

/// The axes of an xy chart: log or linear (as the spec says, else as the data spans), and
/// their padded ranges.
struct Axes {
    x_log: bool,
    y_log: bool,
    x: (f64, f64),
    y: (f64, f64),
}

fn axes(spec: &XySpec) -> Axes {
    let all_points = || spec.series.iter().flat_map(|s| s.points.iter());
    let x_log = spec.x_log.unwrap_or_else(|| {
        wants_log(
            all_points()
                .map(|p| p.x)
                .chain(spec.marks.iter().map(|m| m.x)),
            20.0,
        )
    });
    let y_log = spec
        .y_log
        .unwrap_or_else(|| wants_log(all_points().flat_map(|p| [p.lo, p.y, p.hi]), 50.0));
    let (x_lo, x_hi) = range_of(
        all_points()
            .map(|p| p.x)
            .chain(spec.marks.iter().map(|m| m.x)),
    )
    .unwrap_or((0.0, 1.0));
    let (y_lo, y_hi) = range_of(all_points().flat_map(|p| [p.lo, p.y, p.hi])).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = if spec.x_format == XFormat::Percentile {
        (1.0, x_hi.max(10.0) * 1.5)
    } else {
        padded(x_lo, x_hi, x_log, false)
    };
    let (y_lo, y_hi) = padded(y_lo, y_hi, y_log, true);
    Axes {
        x_log,
        y_log,
        x: (x_lo, x_hi),
        y: (y_lo, y_hi),
    }
}

/// The legend: each solid series, then the range bars and failure marks when drawn.
fn legend_entries(spec: &XySpec) -> Vec<LegendEntry> {
    let mut entries: Vec<LegendEntry> = spec
        .series
        .iter()
        .filter(|s| !s.faint)
        .map(|s| LegendEntry {
            label: s.label.clone(),
            color: s.color,
            kind: LegendKind::Line { dashed: s.dashed },
        })
        .collect();
    if spec
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .any(|p| p.hi > p.lo)
    {
        entries.push(LegendEntry {
            label: "min–max of reps".into(),
            color: RGBColor(0x55, 0x55, 0x55),
            kind: LegendKind::Range,
        });
    }
    if !spec.marks.is_empty() {
        entries.push(LegendEntry {
            label: "failed step (notes)".into(),
            color: RGBColor(0x55, 0x55, 0x55),
            kind: LegendKind::Cross,
        });
    }
    entries
}

/// Renders an x/y line chart to a responsive SVG string.
pub fn xy_chart(spec: &XySpec) -> anyhow::Result<String> {
    let Axes {
        x_log,
        y_log,
        x: (x_lo, x_hi),
        y: (y_lo, y_hi),
    } = axes(spec);

    let notes = notes_lines(&spec.marks, &spec.notes);
    let footer = if notes.is_empty() {
        0
    } else {
        notes.len() as u32 * NOTE_LINE + 14
    };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, PLOT_HEIGHT + footer)).into_drawing_area();
        root.fill(&WHITE)?;
        let (main, bottom) = root.split_vertically(PLOT_HEIGHT);
        let (plot, legend) = main.split_horizontally(WIDTH - LEGEND_WIDTH);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(&spec.title, (FONT, 24))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(84);
        let y_at = |fraction: f64| {
            if y_log {
                y_lo * (y_hi / y_lo).powf(fraction)
            } else {
                y_lo + (y_hi - y_lo) * fraction
            }
        };
        match (x_log, y_log) {
            (false, false) => {
                let mut chart = builder.build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
                fill_xy(&mut chart, spec, &y_at)?;
            }
            (true, false) => {
                let mut chart = builder.build_cartesian_2d((x_lo..x_hi).log_scale(), y_lo..y_hi)?;
                fill_xy(&mut chart, spec, &y_at)?;
            }
            (false, true) => {
                let mut chart = builder.build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale())?;
                fill_xy(&mut chart, spec, &y_at)?;
            }
            (true, true) => {
                let mut chart = builder
                    .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
                fill_xy(&mut chart, spec, &y_at)?;
            }
        }
        let entries = legend_entries(spec);
        draw_legend(&legend, &entries)?;
        let scale_note = match (x_log, y_log) {
            (true, true) => "log x and y axes",
            (true, false) => "log x axis",
            (false, true) => "log y axis",
            (false, false) => "",
        };
        if !scale_note.is_empty() {
            let style = TextStyle::from((FONT, 15).into_font()).color(&RGBColor(0x66, 0x66, 0x66));
            legend.draw_text(scale_note, &style, (8, PLOT_HEIGHT as i32 - 40))?;
        }
        draw_notes(&bottom, &notes)?;
        root.present()?;
    }
    Ok(responsive(svg))
}

fn fill_xy<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    spec: &XySpec,
    y_at: &dyn Fn(f64) -> f64,
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let x_format = spec.x_format;
    let x_fmt = move |v: &f64| match x_format {
        XFormat::Number => short_number(*v),
        XFormat::Percentile => percentile_label(*v),
    };
    let y_fmt = |v: &f64| short_number(*v);
    chart
        .configure_mesh()
        .x_desc(spec.x_desc.as_str())
        .y_desc(spec.y_desc.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_labels(if x_format == XFormat::Percentile {
            20
        } else {
            10
        })
        .y_labels(8)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .draw()?;
    if spec.series.iter().all(|s| s.points.is_empty()) {
        let style = TextStyle::from((FONT, 16).into_font())
            .color(&RGBColor(0x66, 0x66, 0x66))
            .pos(Pos::new(HPos::Center, VPos::Center));
        let area = chart.plotting_area();
        let (w, h) = area.dim_in_pixel();
        area.strip_coord_spec().draw_text(
            "no successful step to plot",
            &style,
            (w as i32 / 2, h as i32 / 2),
        )?;
    }
    for series in &spec.series {
        draw_line(chart, series)?;
    }
    // Marks sit just above the x axis; several at one x are stacked so their
    // numbers do not overlap.
    let mut stacked: Vec<f64> = Vec::new();
    for (i, mark) in spec.marks.iter().enumerate() {
        let level = stacked.iter().filter(|&&x| x == mark.x).count();
        stacked.push(mark.x);
        let y = y_at(0.04 + 0.07 * level as f64);
        let label = TextStyle::from((FONT, 16).into_font().style(FontStyle::Bold))
            .color(&mark.color)
            .pos(Pos::new(HPos::Left, VPos::Center));
        chart.draw_series(std::iter::once(
            EmptyElement::at((mark.x, y))
                + Cross::new((0, 0), 6, mark.color.stroke_width(3))
                + Text::new(format!("{}", i + 1), (9, 0), label),
        ))?;
    }
    Ok(())
}

/// One series: its line (dashed or solid, faint or full), its points and their min–max bars.
fn draw_line<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    series: &Series,
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let width = if series.faint { 1 } else { 2 };
    let color = if series.faint {
        series.color.mix(0.55)
    } else {
        series.color.mix(1.0)
    };
    let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.y)).collect();
    if series.dashed {
        chart.draw_series(DashedLineSeries::new(
            points.clone(),
            7,
            5,
            color.stroke_width(width),
        ))?;
    } else {
        chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(width)))?;
    }
    if !series.faint {
        chart.draw_series(
            points
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )?;
    }
    chart.draw_series(
        series
            .points
            .iter()
            .filter(|p| p.hi > p.lo)
            .map(|p| ErrorBar::new_vertical(p.x, p.lo, p.y, p.hi, color.stroke_width(1), 8)),
    )?;
    Ok(())
}

/// Renders a bar chart (one bar per model) to a responsive SVG string.
pub fn bar_chart(spec: &BarSpec) -> anyhow::Result<String> {
    let notes: Vec<(String, RGBColor)> = spec
        .notes
        .iter()
        .flat_map(|n| wrap(n, 140))
        .map(|l| (l, RGBColor(0x22, 0x22, 0x22)))
        .collect();
    let footer = if notes.is_empty() {
        0
    } else {
        notes.len() as u32 * NOTE_LINE + 14
    };
    let n = spec.bars.len().max(1);
    let top = spec.bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let y_hi = if top > 0.0 { top * 1.15 } else { 1.0 };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, PLOT_HEIGHT + footer)).into_drawing_area();
        root.fill(&WHITE)?;
        let (main, bottom) = root.split_vertically(PLOT_HEIGHT);
        let (plot, _legend) = main.split_horizontally(WIDTH - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&spec.title, (FONT, 24))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .build_cartesian_2d(0f64..n as f64, 0f64..y_hi)?;
        let y_fmt = |v: &f64| short_number(*v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_max_light_lines(1)
            .y_desc(spec.y_desc.as_str())
            .y_label_formatter(&y_fmt)
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .draw()?;
        for (i, bar) in spec.bars.iter().enumerate() {
            let x = i as f64;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.18, 0.0), (x + 0.82, bar.value)],
                bar.color.filled(),
            )))?;
            let above = TextStyle::from((FONT, 17).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(std::iter::once(
                EmptyElement::at((x + 0.5, bar.value))
                    + Text::new(short_number(bar.value), (0, -4), above),
            ))?;
        }
        // Model names go under the bars, in the label area that the hidden x
        // axis leaves free.
        let area: &DrawingArea<SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>> =
            chart.plotting_area();
        let (x_pixels, y_pixels) = area.get_pixel_range();
        let (px0, px1, py1) = (x_pixels.start, x_pixels.end, y_pixels.end);
        let plot_width = (px1 - px0) as f64;
        let name_style = TextStyle::from((FONT, 17).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, bar) in spec.bars.iter().enumerate() {
            let cx = px0 as f64 + plot_width * (i as f64 + 0.5) / n as f64;
            root.draw_text(&bar.label, &name_style, (cx as i32, py1 + 8))?;
        }
        root.draw(&PathElement::new(
            vec![(px0, py1), (px1, py1)],
            RGBColor(0x44, 0x44, 0x44).stroke_width(1),
        ))?;
        draw_notes(&bottom, &notes)?;
        root.present()?;
    }
    Ok(responsive(svg))
}

/// Chooses a time unit so that tick labels stay short.
pub(crate) fn time_unit(max_us: f64) -> (&'static str, f64) {
    if max_us >= 2e6 {
        ("s", 1e6)
    } else if max_us >= 2e3 {
        ("ms", 1e3)
    } else {
        ("µs", 1.0)
    }
}

/// A chart block of the document: the spec drawn, under its title, over its caption.
pub(crate) fn chart(file: String, spec: &XySpec, caption: String) -> anyhow::Result<Block> {
    Ok(Block::Chart(Chart {
        file,
        title: spec.title.clone(),
        svg: xy_chart(spec)?,
        caption,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(2.0), "50%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(10000.0), "99.99%");
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(1500.0), "1500");
        assert_eq!(short_number(15000.0), "15k");
        assert_eq!(short_number(2_500_000.0), "2.5M");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(0.0), "0");
    }
}
