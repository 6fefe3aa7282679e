//! Lays out the report: status, setup, verdict and findings, one section per
//! sweep with its charts and tables, timelines of the heaviest step, and every
//! step as results.csv has it.

use std::path::Path;

use super::charts::{self, model_color, Bar, BarSpec, Mark, Pt, Series, XFormat, XySpec};
use super::data::{self, Results, Row, Status, Table as DataTable};
use super::document::{Block, Chart, Document, Section, Table};
use super::sweep::{self, aggregate, at, axis_desc, problems, Sweep};
use super::verdict::{self, fmt_bytes, fmt_count, fmt_latency, fmt_ratio, BASELINE};

pub fn document(results: &mut Results) -> anyhow::Result<Document> {
    let sweeps = sweep::sweeps(results);
    // Step files are read first so that problems with them become alerts.
    let mut heavy = Vec::new();
    for s in &sweeps {
        heavy.push(heaviest_steps(results, s));
    }
    let scenario = results
        .manifest
        .scenario_name
        .clone()
        .unwrap_or_else(|| "unnamed scenario".into());
    let mut sections = vec![setup_section(results)];
    let multi = sweeps.len() > 1;
    let mut verdict_blocks = vec![Block::Paragraph(format!(
        "Each figure is compared at the heaviest point of the sweep that at least two models \
         completed, using the mean of the repetitions. A ratio says how many times better the \
         winner is (higher throughput or capacity, lower latency, CPU or memory); the baseline \
         is {BASELINE}."
    ))];
    for s in &sweeps {
        if multi {
            verdict_blocks.push(Block::Paragraph(s.title()));
        }
        verdict_blocks.push(Block::Table(verdict_table(results, s)));
        verdict_blocks.push(Block::List(verdict::findings(results, s)));
    }
    sections.push(Section {
        heading: "Verdict and findings".into(),
        level: 2,
        id: "verdict".into(),
        blocks: verdict_blocks,
    });
    for (s, heavy) in sweeps.iter().zip(heavy) {
        sections.extend(sweep_sections(results, s, &heavy)?);
    }
    sections.push(steps_section(results));
    Ok(Document {
        title: format!("echolab report: {scenario}"),
        alerts: alerts(results),
        sections,
    })
}

fn alerts(results: &Results) -> Vec<String> {
    let mut alerts = Vec::new();
    if results.manifest.interrupted {
        alerts.push(
            "The run was interrupted (manifest.json says \"interrupted\": true): steps that had \
             not finished are missing or marked interrupted, and the figures cover only what ran."
                .into(),
        );
    }
    if results.rows.is_empty() {
        alerts.push(
            "results.csv has no rows: no step was recorded, so there is nothing to chart.".into(),
        );
    }
    for status in [Status::Interrupted, Status::Failed, Status::Skipped] {
        // Group repetitions of one step so each step is listed once.
        let mut steps: Vec<(String, String, Vec<u32>, String)> = Vec::new();
        for row in results.rows.iter().filter(|r| r.status == status) {
            match steps
                .iter_mut()
                .find(|(m, s, _, _)| *m == row.model && *s == row.step)
            {
                Some((_, _, reps, _)) => reps.push(row.repetition),
                None => steps.push((
                    row.model.clone(),
                    row.step.clone(),
                    vec![row.repetition],
                    row.failure_reason.clone(),
                )),
            }
        }
        if steps.is_empty() {
            continue;
        }
        let total: usize = steps.iter().map(|s| s.2.len()).sum();
        let list: Vec<String> = steps
            .iter()
            .map(|(m, s, reps, reason)| {
                let reps: Vec<String> = reps.iter().map(u32::to_string).collect();
                let reason = if reason.is_empty() {
                    "no reason recorded"
                } else {
                    reason
                };
                format!("{m} {s} (rep {}): {reason}", reps.join(", "))
            })
            .collect();
        let verb = match (status, total) {
            (Status::Failed, _) => "failed",
            (Status::Skipped, 1) => "was skipped",
            (Status::Skipped, _) => "were skipped",
            (_, 1) => "was interrupted",
            _ => "were interrupted",
        };
        alerts.push(format!(
            "{total} repetition{} {verb}: {}.",
            if total == 1 { "" } else { "s" },
            list.join("; ")
        ));
    }
    alerts.extend(results.warnings.iter().cloned());
    alerts
}

fn utc(unix: f64) -> String {
    let secs = unix.floor() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn setup_section(results: &Results) -> Section {
    let m = &results.manifest;
    let unknown = || "unknown".to_string();
    let opt = |v: &Option<String>| v.clone().filter(|s| !s.is_empty()).unwrap_or_else(unknown);
    let num = |v: Option<u64>| v.map(|n| fmt_count(n as f64)).unwrap_or_else(unknown);
    let repetitions = results.rows.iter().map(|r| r.repetition).max().unwrap_or(0);
    let mut rows = vec![
        vec!["Scenario".into(), opt(&m.scenario_name)],
        vec!["Command".into(), opt(&m.command)],
        vec![
            "Started".into(),
            m.started_unix.map(utc).unwrap_or_else(unknown),
        ],
        vec![
            "Ended".into(),
            m.ended_unix.map(utc).unwrap_or_else(unknown),
        ],
        vec![
            "Duration".into(),
            m.duration_s
                .map(|d| format!("{d:.0} s"))
                .unwrap_or_else(unknown),
        ],
        vec![
            "Interrupted".into(),
            if m.interrupted { "yes" } else { "no" }.into(),
        ],
        vec![
            "echolab".into(),
            format!("{} (git {})", opt(&m.echolab_version), opt(&m.git_revision)),
        ],
        vec!["Kernel".into(), opt(&m.kernel)],
        vec!["CPU".into(), opt(&m.cpu_model)],
        vec!["Cores".into(), num(m.cores)],
        vec![
            "Memory".into(),
            m.memory_bytes
                .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64))
                .unwrap_or_else(unknown),
        ],
        vec![
            "File descriptor limit".into(),
            format!(
                "soft {}, hard {}",
                num(m.fd_limit_soft),
                num(m.fd_limit_hard)
            ),
        ],
    ];
    for (name, value) in &m.sysctls {
        let value = match value {
            serde_json::Value::String(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
            other => other.to_string(),
        };
        rows.push(vec![format!("sysctl {name}"), value]);
    }
    rows.push(vec!["Models".into(), sweep::models(results).join(", ")]);
    rows.push(vec!["Swept".into(), sweep::swept_axes(results).join(", ")]);
    rows.push(vec!["Repetitions per step".into(), repetitions.to_string()]);
    rows.push(vec![
        "Rows in results.csv".into(),
        results.rows.len().to_string(),
    ]);
    let n = rows.len();
    let mut blocks = vec![Block::Table(Table {
        headers: vec!["Setting".into(), "Value".into()],
        rows,
        numeric: vec![false, false],
        flagged: vec![false; n],
    })];
    if let Some(toml) = m.scenario_toml.as_ref().filter(|t| !t.trim().is_empty()) {
        blocks.push(Block::Paragraph("The scenario as run:".into()));
        blocks.push(Block::Code(toml.trim_end().to_string()));
    }
    Section {
        heading: "Setup".into(),
        level: 2,
        id: "setup".into(),
        blocks,
    }
}

fn verdict_table(results: &Results, s: &Sweep) -> Table {
    let mut rows = Vec::new();
    for v in verdict::verdicts(results, s) {
        let fmt = v.format;
        let name_value = |e: Option<&(String, f64)>| match e {
            Some((m, value)) => (m.clone(), fmt(*value)),
            None => ("—".into(), "—".into()),
        };
        let (mut winner, winner_value) = name_value(v.winner());
        let winners = v.winners();
        if winners.len() > 1 {
            winner = format!("tie: {}", winners.join(", "));
        }
        let (runner, runner_value) = name_value(v.runner_up());
        let ratio = |r: Option<f64>| r.map(fmt_ratio).unwrap_or_else(|| "—".into());
        rows.push(vec![
            v.figure.clone(),
            v.compared_at.clone(),
            winner,
            winner_value,
            runner,
            runner_value,
            ratio(v.ratio_to_runner_up()),
            v.baseline().map(fmt).unwrap_or_else(|| "—".into()),
            ratio(v.ratio_to_baseline()),
        ]);
    }
    let n = rows.len();
    Table {
        headers: vec![
            "Figure".into(),
            "Compared at".into(),
            "Winner".into(),
            "Winner's value".into(),
            "Runner-up".into(),
            "Runner-up's value".into(),
            "Winner vs runner-up".into(),
            format!("Baseline ({BASELINE})"),
            format!("Winner vs {BASELINE}"),
        ],
        rows,
        numeric: vec![false, false, false, true, false, true, true, true, true],
        flagged: vec![false; n],
    }
}

/// Chooses a time unit so that tick labels stay short.
fn time_unit(max_us: f64) -> (&'static str, f64) {
    if max_us >= 2e6 {
        ("s", 1e6)
    } else if max_us >= 2e3 {
        ("ms", 1e3)
    } else {
        ("µs", 1.0)
    }
}

fn failure_marks(results: &Results, s: &Sweep) -> Vec<Mark> {
    let mut marks = Vec::new();
    for model in sweep::models(results) {
        for p in problems(results, s, &model, &[Status::Failed, Status::Interrupted]) {
            marks.push(Mark {
                x: p.x,
                color: model_color(&model),
                note: format!(
                    "{model} at {}: {} in {} of {} repetitions: {}",
                    at(&s.axis, p.x),
                    p.status.name(),
                    p.rows.len(),
                    p.total,
                    p.reasons()
                ),
            });
        }
    }
    marks
}

fn series_of(
    results: &Results,
    s: &Sweep,
    model: &str,
    column: &str,
    scale: f64,
    label: String,
    dashed: bool,
) -> Series {
    let points = aggregate(results, s, model, &|r: &Row| r.num(column))
        .into_iter()
        .map(|a| Pt {
            x: a.x,
            y: a.mean / scale,
            lo: a.min / scale,
            hi: a.max / scale,
        })
        .collect();
    Series {
        label,
        color: model_color(model),
        dashed,
        faint: false,
        points,
    }
}

fn max_of(results: &Results, s: &Sweep, columns: &[&str]) -> f64 {
    s.rows(results)
        .filter(|r| r.status == Status::Ok)
        .flat_map(|r| columns.iter().filter_map(|c| r.num(c)))
        .fold(0.0, f64::max)
}

fn chart(file: String, spec: &XySpec, caption: String) -> anyhow::Result<Block> {
    Ok(Block::Chart(Chart {
        file,
        title: spec.title.clone(),
        svg: charts::xy_chart(spec)?,
        caption,
    }))
}

const SPREAD: &str =
    "Points are the mean of the repetitions that finished ok; bars show their min–max.";

fn sweep_sections(
    results: &Results,
    s: &Sweep,
    heavy: &[HeavyStep],
) -> anyhow::Result<Vec<Section>> {
    let models = sweep::models(results);
    let slug = s.slug();
    let x_desc = axis_desc(&s.axis);
    let name = sweep::axis_name(&s.axis);
    let marks = || failure_marks(results, s);
    let mut blocks = Vec::new();

    let (unit, scale) = time_unit(max_of(results, s, &["p50_us", "p99_us"]));
    let mut series = Vec::new();
    for m in &models {
        series.push(series_of(
            results,
            s,
            m,
            "p99_us",
            scale,
            format!("{m} p99"),
            false,
        ));
        series.push(series_of(
            results,
            s,
            m,
            "p50_us",
            scale,
            format!("{m} p50"),
            true,
        ));
    }
    blocks.push(chart(
        format!("{slug}-response-time"),
        &XySpec {
            title: format!("Response time vs {name}"),
            x_desc: x_desc.clone(),
            y_desc: format!("response time ({unit})"),
            series,
            marks: marks(),
            x_format: XFormat::Number,
            x_log: None,
            y_log: None,
            notes: vec![],
        },
        format!("p99 (solid) and p50 (dashed) response time per model. {SPREAD}"),
    )?);

    let simple = |column: &str, scale: f64| -> Vec<Series> {
        models
            .iter()
            .map(|m| series_of(results, s, m, column, scale, m.clone(), false))
            .collect()
    };
    blocks.push(chart(
        format!("{slug}-throughput"),
        &XySpec {
            title: format!("Throughput vs {name}"),
            x_desc: x_desc.clone(),
            y_desc: "throughput (requests/s)".into(),
            series: simple("throughput_rps", 1.0),
            marks: marks(),
            x_format: XFormat::Number,
            x_log: None,
            y_log: Some(false),
            notes: vec![],
        },
        format!("Completed echo requests per second, all connections together. {SPREAD}"),
    )?);
    blocks.push(chart(
        format!("{slug}-cpu"),
        &XySpec {
            title: format!("Server CPU vs {name}"),
            x_desc: x_desc.clone(),
            y_desc: "server CPU (% of one core)".into(),
            series: simple("server_cpu_pct", 1.0),
            marks: marks(),
            x_format: XFormat::Number,
            x_log: None,
            y_log: Some(false),
            notes: vec![],
        },
        format!(
            "User plus system CPU of the server process, sampled from /proc; 200% is two cores busy. {SPREAD}"
        ),
    )?);
    blocks.push(chart(
        format!("{slug}-memory-per-connection"),
        &XySpec {
            title: format!("Server memory per connection vs {name}"),
            x_desc: x_desc.clone(),
            y_desc: "server RSS per connection (KiB)".into(),
            series: simple("server_rss_per_conn_bytes", 1024.0),
            marks: marks(),
            x_format: XFormat::Number,
            x_log: None,
            y_log: None,
            notes: vec![],
        },
        format!(
            "Peak resident memory of the server divided by its connections; at few connections the fixed cost dominates. {SPREAD}"
        ),
    )?);

    // Capacity bars.
    let mut bars = Vec::new();
    let mut bar_notes = Vec::new();
    for m in &models {
        let held = s
            .rows(results)
            .filter(|r| &r.model == m && r.status != Status::Skipped)
            .filter_map(|r| r.num("max_concurrent_server"))
            .reduce(f64::max);
        if let Some(held) = held {
            bars.push(Bar {
                label: m.clone(),
                color: model_color(m),
                value: held,
            });
        }
        if let Some(p) = problems(results, s, m, &[Status::Failed, Status::Interrupted]).first() {
            bar_notes.push(format!(
                "{m} {} at {}: {}",
                p.status.name(),
                at(&s.axis, p.x),
                p.reasons()
            ));
        }
    }
    let bar_spec = BarSpec {
        title: "Max connections held per model".into(),
        y_desc: "connections held at once by the server".into(),
        bars,
        notes: bar_notes,
    };
    blocks.push(Block::Chart(Chart {
        file: format!("{slug}-max-connections"),
        title: bar_spec.title.clone(),
        svg: charts::bar_chart(&bar_spec)?,
        caption:
            "The most connections each server held at once (max_concurrent_server) in any step \
                  it ran, failed steps included; notes say where a model broke."
                .into(),
    }));

    // Percentile distribution at each model's heaviest step.
    let mut pct_series = Vec::new();
    let mut pct_max: f64 = 0.0;
    for h in heavy {
        for (_, table) in &h.percentiles {
            for (_, v) in table.pairs("percentile", "latency_us") {
                pct_max = pct_max.max(v);
            }
        }
    }
    let (unit, scale) = time_unit(pct_max);
    for h in heavy {
        for (i, (rep, table)) in h.percentiles.iter().enumerate() {
            let to_points = |column: &str| -> Vec<Pt> {
                table
                    .pairs("percentile", column)
                    .into_iter()
                    .filter(|(p, _)| *p < 100.0)
                    .map(|(p, v)| {
                        let x = 1.0 / (1.0 - p / 100.0);
                        Pt {
                            x,
                            y: v / scale,
                            lo: v / scale,
                            hi: v / scale,
                        }
                    })
                    .collect()
            };
            let label = format!("{} ({})", h.model, h.x);
            pct_series.push(Series {
                label: if i == 0 {
                    label.clone()
                } else {
                    format!("{label} rep {rep}")
                },
                color: model_color(&h.model),
                dashed: false,
                faint: i > 0,
                points: to_points("latency_us"),
            });
            let raw = to_points("latency_raw_us");
            if i == 0 && !raw.is_empty() {
                pct_series.push(Series {
                    label: format!("{} uncorrected", h.model),
                    color: model_color(&h.model),
                    dashed: true,
                    faint: false,
                    points: raw,
                });
            }
        }
    }
    blocks.push(chart(
        format!("{slug}-latency-percentiles"),
        &XySpec {
            title: "Latency percentile distribution".into(),
            x_desc: "percentile (log scale of 1/(1−p))".into(),
            y_desc: format!("response time ({unit})"),
            series: pct_series,
            marks: vec![],
            x_format: XFormat::Percentile,
            x_log: Some(true),
            y_log: None,
            notes: vec![],
        },
        format!(
            "HdrHistogram-style percentile plot from load/percentiles.csv at each model's heaviest \
             step (its {name} in brackets in the legend); the first repetition solid, others \
             faint; open-loop runs also show the uncorrected latency dashed."
        ),
    )?);

    blocks.push(Block::Paragraph(format!(
        "Per {name} and model: mean of the repetitions that finished ok, with [min–max] when they differ."
    )));
    blocks.push(Block::Table(summary_table(results, s)));

    let mut sections = vec![Section {
        heading: s.title(),
        level: 2,
        id: format!("sweep-{slug}"),
        blocks,
    }];
    sections.push(Section {
        heading: format!("Timelines at the heaviest step ({})", s.title()),
        level: 3,
        id: format!("timelines-{slug}"),
        blocks: timeline_blocks(&slug, heavy)?,
    });
    Ok(sections)
}

fn summary_table(results: &Results, s: &Sweep) -> Table {
    let models = sweep::models(results);
    let mut rows = Vec::new();
    let mut flagged = Vec::new();
    for m in &models {
        for &x in &s.xs {
            let at_x: Vec<&Row> = s
                .rows(results)
                .filter(|r| &r.model == m && s.x_of(r) == Some(x))
                .collect();
            if at_x.is_empty() {
                continue;
            }
            let ok = at_x.iter().filter(|r| r.status == Status::Ok).count();
            let cell = |column: &str, fmt: &dyn Fn(f64) -> String| -> String {
                let aggs = aggregate(results, s, m, &|r: &Row| r.num(column));
                match aggs.iter().find(|a| a.x == x) {
                    Some(a) if a.max > a.min => {
                        format!("{} [{}–{}]", fmt(a.mean), fmt(a.min), fmt(a.max))
                    }
                    Some(a) => fmt(a.mean),
                    None => "—".into(),
                }
            };
            let mut statuses: Vec<&str> = Vec::new();
            for r in &at_x {
                if !statuses.contains(&r.status.name()) {
                    statuses.push(r.status.name());
                }
            }
            let reasons: Vec<&str> = at_x
                .iter()
                .map(|r| r.failure_reason.as_str())
                .filter(|r| !r.is_empty())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            flagged.push(ok < at_x.len());
            rows.push(vec![
                m.clone(),
                sweep::plain_number(x),
                format!("{ok}/{}", at_x.len()),
                cell("throughput_rps", &fmt_count),
                cell("p50_us", &fmt_latency),
                cell("p99_us", &fmt_latency),
                cell("server_cpu_pct", &|v| format!("{v:.1}")),
                cell("server_rss_per_conn_bytes", &fmt_bytes),
                cell("max_concurrent_server", &fmt_count),
                if reasons.is_empty() {
                    statuses.join(", ")
                } else {
                    format!("{}: {}", statuses.join(", "), reasons.join("; "))
                },
            ]);
        }
    }
    Table {
        headers: vec![
            "Model".into(),
            s.axis.clone(),
            "Reps ok".into(),
            "Throughput (req/s)".into(),
            "p50".into(),
            "p99".into(),
            "Server CPU %".into(),
            "RSS per connection".into(),
            "Max held".into(),
            "Status".into(),
        ],
        rows,
        numeric: vec![false, true, true, true, true, true, true, true, true, false],
        flagged,
    }
}

/// The step files of one model's heaviest step in a sweep.
struct HeavyStep {
    model: String,
    /// "connections=4000"
    at: String,
    /// "4000": the x value alone, for legends.
    x: String,
    step: String,
    /// (repetition, table) for each repetition that has the file.
    percentiles: Vec<(u32, DataTable)>,
    timeline: Option<DataTable>,
    probe: Option<DataTable>,
}

/// Reads a step file, turning a malformed one into a warning: one bad file
/// should not cost the whole report.
fn read_step_file(results: &mut Results, path: &Path) -> Option<DataTable> {
    match data::read_table(path) {
        Ok(table) => table,
        Err(error) => {
            results
                .warnings
                .push(format!("{error:#} (left out of the charts)"));
            None
        }
    }
}

/// For each model: the heaviest x whose step folder has load files, preferring
/// steps that finished ok (a failed step's numbers describe a broken server).
fn heaviest_steps(results: &mut Results, s: &Sweep) -> Vec<HeavyStep> {
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
                r.step_dir(&dir).join("load").is_dir()
                    || r.step_dir(&dir).join("probe.csv").is_file()
            })
            .cloned();
        let Some(first) = chosen else { continue };
        let same_step: Vec<Row> = candidates
            .iter()
            .filter(|r| r.step == first.step)
            .cloned()
            .collect();
        let mut percentiles = Vec::new();
        for r in &same_step {
            let path = r.step_dir(&dir).join("load").join("percentiles.csv");
            if let Some(table) = read_step_file(results, &path) {
                percentiles.push((r.repetition, table));
            }
        }
        let step_dir = first.step_dir(&dir);
        let timeline = read_step_file(results, &step_dir.join("load").join("timeline.csv"));
        let probe = read_step_file(results, &step_dir.join("probe.csv"));
        out.push(HeavyStep {
            at: s.x_of(&first).map(|x| at(&s.axis, x)).unwrap_or_default(),
            x: s.x_of(&first).map(sweep::plain_number).unwrap_or_default(),
            step: first.step.clone(),
            model,
            percentiles,
            timeline,
            probe,
        });
    }
    out
}

fn timeline_blocks(slug: &str, heavy: &[HeavyStep]) -> anyhow::Result<Vec<Block>> {
    let mut blocks = vec![Block::Paragraph(format!(
        "Second by second through each model's heaviest step (first repetition): {}.",
        heavy
            .iter()
            .map(|h| format!("{} {} ({})", h.model, h.step, h.at))
            .collect::<Vec<_>>()
            .join(", ")
    ))];
    let line = |h: &HeavyStep, points: Vec<(f64, f64)>| Series {
        label: h.model.clone(),
        color: model_color(&h.model),
        dashed: false,
        faint: false,
        points: points
            .into_iter()
            .map(|(x, y)| Pt { x, y, lo: y, hi: y })
            .collect(),
    };
    let timeline = |column: &str, scale: f64| -> Vec<Series> {
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
    };
    let spec = |title: &str, y_desc: String, series: Vec<Series>, y_log: Option<bool>| XySpec {
        title: title.into(),
        x_desc: "time since the step started (s)".into(),
        y_desc,
        series,
        marks: vec![],
        x_format: XFormat::Number,
        x_log: Some(false),
        y_log,
        notes: vec![],
    };
    blocks.push(chart(
        format!("{slug}-timeline-throughput"),
        &spec(
            "Timeline: throughput",
            "requests completed per second".into(),
            timeline("requests", 1.0),
            Some(false),
        ),
        "From load/timeline.csv.".into(),
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
            timeline("p99_us", scale),
            None,
        ),
        "p99 of the requests completed in each second, from load/timeline.csv.".into(),
    )?);
    blocks.push(chart(
        format!("{slug}-timeline-connections"),
        &spec(
            "Timeline: active connections",
            "open client connections".into(),
            timeline("active_connections", 1.0),
            Some(false),
        ),
        "Connections the load generator held open, from load/timeline.csv.".into(),
    )?);
    let probe_series = |f: &dyn Fn(&DataTable) -> Vec<(f64, f64)>| -> Vec<Series> {
        heavy
            .iter()
            .filter_map(|h| Some(line(h, f(h.probe.as_ref()?))))
            .collect()
    };
    // probe.csv holds cumulative CPU seconds: the rate between samples is the load.
    let cpu = |t: &DataTable| -> Vec<(f64, f64)> {
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
    };
    blocks.push(chart(
        format!("{slug}-timeline-cpu"),
        &spec(
            "Timeline: server CPU",
            "server CPU (% of one core)".into(),
            probe_series(&cpu),
            Some(false),
        ),
        "CPU used between consecutive /proc samples (probe.csv, every 100 ms).".into(),
    )?);
    let rss = |t: &DataTable| -> Vec<(f64, f64)> {
        t.pairs("t_s", "rss_bytes")
            .into_iter()
            .map(|(x, b)| (x, b / 1048576.0))
            .collect()
    };
    blocks.push(chart(
        format!("{slug}-timeline-memory"),
        &spec(
            "Timeline: server memory",
            "server RSS (MiB)".into(),
            probe_series(&rss),
            Some(false),
        ),
        "Resident memory of the server process, from probe.csv.".into(),
    )?);
    Ok(blocks)
}

/// Columns of the all-steps table, shown exactly as results.csv has them.
pub const STEP_COLUMNS: [&str; 18] = [
    "model",
    "step",
    "repetition",
    "status",
    "connections",
    "size",
    "delay_ms",
    "rate",
    "workers",
    "connections_established",
    "max_concurrent_server",
    "throughput_rps",
    "p50_us",
    "p99_us",
    "server_cpu_pct",
    "server_rss_per_conn_bytes",
    "errors",
    "failure_reason",
];

fn steps_section(results: &Results) -> Section {
    let columns: Vec<&str> = STEP_COLUMNS
        .iter()
        .copied()
        .filter(|c| results.columns.iter().any(|h| h == c))
        .collect();
    let rows: Vec<Vec<String>> = results
        .rows
        .iter()
        .map(|r| columns.iter().map(|c| r.raw(c).to_string()).collect())
        .collect();
    let flagged = results
        .rows
        .iter()
        .map(|r| r.status != Status::Ok)
        .collect();
    let numeric = columns
        .iter()
        .map(|c| !matches!(*c, "model" | "step" | "status" | "failure_reason"))
        .collect();
    Section {
        heading: "All steps".into(),
        level: 2,
        id: "steps".into(),
        blocks: vec![
            Block::Paragraph(
                "Every repetition as results.csv records it (latencies in µs, memory in bytes, \
                 CPU in % of one core); rows that did not finish as ok are highlighted."
                    .into(),
            ),
            Block::Table(Table {
                headers: columns.iter().map(|c| c.to_string()).collect(),
                rows,
                numeric,
                flagged,
            }),
        ],
    }
}
