//! Lays out the report: the alerts, setup, verdict and findings, one section per
//! sweep (its figures from figures.rs, its timelines from timelines.rs), and
//! every step as results.csv has it.

use super::{figures, findings, per_host, timelines};
use crate::claims;
use crate::claims::MachineLimits;
use crate::render::document::{self, Block, Document, Section, Table};
use crate::results::column;
use crate::results::reader::{Results, Status};
use crate::results::Manifest;
use crate::verdict::sweep::{self, Sweep};
use crate::verdict::{self, fmt_count, fmt_ratio_interval, BASELINE};

pub fn document(
    results: &mut Results,
    partial: Option<super::Partial>,
) -> anyhow::Result<Document> {
    let sweeps = sweep::sweeps(results);
    // Step files are read first so that problems with them become alerts.
    let mut heavy = Vec::new();
    let mut missing_folders = Vec::new();
    for s in &sweeps {
        heavy.push(timelines::heaviest_steps(results, s, &mut missing_folders));
    }
    let scenario = results
        .manifest
        .scenario_name
        .clone()
        .unwrap_or_else(|| "unnamed scenario".into());
    // The answer first: the verdict, then the setup and the full tables.
    let mut sections = vec![verdict_section(results, &sweeps, partial.is_some())];
    sections.push(setup_section(results));
    let judged: Vec<claims::Claim> = claims::claims_of(&scenario)
        .into_iter()
        .map(|number| super::judge_claim(number, &results.rows, &results.manifest))
        .collect();
    if !judged.is_empty() {
        sections.extend(claims::section(&judged, |_| None));
    }
    for (s, heavy) in sweeps.iter().zip(heavy) {
        sections.extend(figures::sweep_sections(results, s, &heavy)?);
    }
    sections.extend(per_host::section(results));
    sections.extend(crate::compare::report_sections(results));
    sections.extend(crate::plan::report_sections(results));
    sections.extend(super::profiles::section(results));
    sections.push(steps_section(results));
    Ok(Document {
        title: format!("echolab report: {scenario}"),
        status: document::RUN_STATUS,
        alerts: alerts(results, partial.is_some()),
        notes: [notes(results), missing_folders].concat(),
        caveat: caveat(results),
        partial: partial.map(|p| partial_line(results, p)),
        sections,
    })
}

/// The most repetitions any model ran of a step.
fn repetitions(results: &Results) -> u32 {
    results.rows.iter().map(|r| r.repetition).max().unwrap_or(0)
}

/// The repetitions that finished ok but measured their load generator (generator_bound).
fn generator_bound(results: &Results) -> impl Iterator<Item = &crate::results::reader::Row> {
    results
        .rows
        .iter()
        .filter(|r| r.status == Status::Ok && r.raw(column::GENERATOR_BOUND) == "true")
}

/// What the top line must add to "every step finished as ok" when some of those steps
/// measured their load generator rather than the server.
pub(super) fn caveat(results: &Results) -> Option<String> {
    let bound = generator_bound(results).count();
    (bound > 0).then(|| {
        format!(
            "{bound} of them measured the load generator, not the server (generator-bound, \
             see the notes): their figures decide no verdict."
        )
    })
}

/// Facts a reader should know that are not failures.
pub(super) fn notes(results: &Results) -> Vec<String> {
    let mut notes = Vec::new();
    let bound: Vec<String> = generator_bound(results)
        .map(|r| {
            let why = match (
                r.failure_reason.as_str(),
                r.raw(column::LOAD_CPU_PCT).as_str(),
            ) {
                ("", "") => String::new(),
                ("", cpu) => format!(" (load generator CPU {cpu} % of one core)"),
                (reason, _) => format!(" ({reason})"),
            };
            format!("{} {} rep {}{why}", r.model, r.step, r.repetition)
        })
        .collect();
    if !bound.is_empty() {
        notes.push(format!(
            "{} repetition(s) are generator-bound: the load generator, not the server, may \
             have set their pace; they are shown but never decide a verdict alone: {}.",
            bound.len(),
            super::first_named(&bound, "; ")
        ));
    }
    notes.extend(looks_note(&results.manifest));
    let machine_wide = results
        .rows
        .iter()
        .filter(|r| r.raw(column::NET_SCOPE) == "host")
        .count();
    if machine_wide > 0 {
        notes.push(format!(
            "The network counters (net_* columns, segment timelines) of {machine_wide} rows \
             were read in the machine's own network namespace: they include any other traffic \
             on this machine, not only the step's. `[network] own_namespace = true` (as root) \
             gives each step counters of its own."
        ));
    }
    let disturbed = results
        .rows
        .iter()
        .filter(|r| r.raw(column::DISTURBED) == "true")
        .count();
    if disturbed > 0 {
        notes.push(format!(
            "{disturbed} repetition(s) were disturbed: more than {}% of a core went to work \
             outside the server and the load generator (interference_pct). They are shown but \
             never decide a verdict.",
            crate::results::DISTURBED_PCT
        ));
    }
    notes
}

/// What the level of a run that could add repetitions was ([`Manifest::looks`]); None for
/// a run that looked once, at 0.05.
pub(super) fn looks_note(manifest: &Manifest) -> Option<String> {
    let most = manifest.max_repetitions?;
    let looks = manifest.looks();
    let level = match looks.count() {
        1 => "p < 0.05: of its looks only the last has the repetitions to reach it".into(),
        k => format!(
            "p < {} rather than 0.05 (Bonferroni over the {k} looks whose repetitions can \
             reach it, so that looking again does not raise the chance of a difference \
             called where there is none)",
            crate::stats::fmt_level(looks.alpha())
        ),
    };
    Some(format!(
        "The run could add repetitions while a claim was undecided, up to {most}: its claims \
         are judged at {level}."
    ))
}

/// What a report written while the run goes on says first: how far it has got and what
/// has not run yet.
fn partial_line(results: &Results, partial: super::Partial) -> String {
    let unrecorded = unrecorded_models(results);
    let not_yet = match unrecorded.as_slice() {
        [] => String::new(),
        models => format!(" Not run yet: {}.", models.join(", ")),
    };
    format!(
        "Partial report: the run goes on, {} of {} steps (each repetition counted) done.{not_yet} \
         The figures and verdicts cover only the steps done; the final report replaces this one \
         when the run ends.",
        partial.done, partial.total
    )
}

/// The scenario's models that left no row (a run stopped before them, or one that goes
/// on and has not reached them).
fn unrecorded_models(results: &Results) -> Vec<&str> {
    results
        .manifest
        .models
        .iter()
        .filter(|m| !results.rows.iter().any(|r| &r.model == *m))
        .map(String::as_str)
        .collect()
}

/// The alerts at the top; `running`: the run goes on, so what it has not done yet is no
/// failure (the partial line says it).
pub(super) fn alerts(results: &Results, running: bool) -> Vec<String> {
    let mut alerts = if running {
        Vec::new()
    } else {
        whole_run_alerts(results)
    };
    for status in [
        Status::Interrupted,
        Status::Failed,
        Status::NotRun,
        Status::Skipped,
    ] {
        alerts.extend(status_alert(results, status));
    }
    alerts.extend(results.warnings.iter().cloned());
    alerts
}

/// What concerns the run as a whole: interrupted, no rows, models that left no row.
fn whole_run_alerts(results: &Results) -> Vec<String> {
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
    // The scenario's models that left no row (a run stopped before them): said, not
    // silently dropped from every table.
    let unrecorded = unrecorded_models(results);
    if !unrecorded.is_empty() {
        alerts.push(format!(
            "{}: not run (models of the manifest without a row in results.csv).",
            unrecorded.join(", ")
        ));
    }
    alerts
}

/// One step's rows of a status: model, step, their repetitions and the first reason.
type StepReps = (String, String, Vec<u32>, String);

/// The rows of one status, repetitions of a step grouped so each step is listed once.
fn steps_with_status(results: &Results, status: Status) -> Vec<StepReps> {
    let mut steps: Vec<StepReps> = Vec::new();
    let mut index: std::collections::HashMap<(&str, &str), usize> = Default::default();
    for row in results.rows.iter().filter(|r| r.status == status) {
        match index.get(&(row.model.as_str(), row.step.as_str())) {
            Some(&i) => steps[i].2.push(row.repetition),
            None => steps.push((
                row.model.clone(),
                row.step.clone(),
                vec![row.repetition],
                row.failure_reason.clone(),
            )),
        }
        let next = steps.len() - 1;
        index
            .entry((row.model.as_str(), row.step.as_str()))
            .or_insert(next);
    }
    steps
}

/// The repetitions that ended with `status`, each step listed with its reason; None
/// when there are none.
fn status_alert(results: &Results, status: Status) -> Option<String> {
    let steps = steps_with_status(results, status);
    if steps.is_empty() {
        return None;
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
            format!(
                "{m} {s} (rep {}): {reason}",
                super::first_named(&reps, ", ")
            )
        })
        .collect();
    let verb = match (status, total) {
        (Status::Failed, _) => "failed",
        (Status::NotRun, 1) => "was not run",
        (Status::NotRun, _) => "were not run",
        (Status::Skipped, 1) => "was skipped",
        (Status::Skipped, _) => "were skipped",
        (_, 1) => "was interrupted",
        _ => "were interrupted",
    };
    Some(format!(
        "{total} repetition{} {verb}: {}.",
        if total == 1 { "" } else { "s" },
        super::first_named(&list, "; ")
    ))
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

/// The verdict of every sweep, its findings and the overall tally.
/// `running`: the run goes on ([`super::answer::headline`]).
fn verdict_section(results: &Results, sweeps: &[Sweep], running: bool) -> Section {
    let multi = sweeps.len() > 1;
    let models = sweep::models(results);
    let method = Block::Paragraph(format!(
        "Compared: {} over {} repetition(s) per step. Each figure is compared at the heaviest \
         point of the sweep that at least two models completed. A winner is named only when a \
         Mann–Whitney U test finds it better than every other model, each pair with p < {} \
         and medians x{} or more apart; where none does, the smallest group of best models (at most half of them) each \
         better than every model behind them is named as tied leaders (otherwise: no \
         difference, with the largest p and the repetitions n); a winner or a group must \
         stay one with each generator-bound or disturbed repetition left out in turn (with more than {} at \
         a point, each model's highest and lowest of them). A ratio is the ratio of the \
         repetitions' medians, how many times better the winner is, with its 95 % bootstrap \
         interval; latency values are percentiles of the repetitions' histograms added.{}",
        models.join(", "),
        repetitions(results),
        crate::stats::ALPHA,
        crate::stats::MIN_EFFECT,
        verdict::LEFT_OUT_IN_TURN,
        // Named only when it ran: a baseline absent from the run is none.
        if models.iter().any(|m| m == BASELINE) {
            format!(" The baseline is {BASELINE}.")
        } else {
            String::new()
        }
    ));
    // The answer first, a sentence and a picture per figure; the method and the full
    // table one click away under it.
    let mut method = Some(method);
    let mut verdict_blocks = Vec::new();
    let mut all_verdicts = Vec::new();
    for s in sweeps {
        if multi {
            verdict_blocks.push(Block::Paragraph(s.title()));
        }
        let verdicts = verdict::verdicts(results, s);
        verdict_blocks.push(Block::Headline(super::answer::headline(&verdicts, running)));
        verdict_blocks.push(Block::Answers(super::answer::answers(&verdicts)));
        let details: Vec<Block> = method
            .take()
            .into_iter()
            .chain([Block::Table(verdict_table(&verdicts))])
            .collect();
        verdict_blocks.push(Block::Details {
            summary: "How each figure is decided, and the full verdict table".into(),
            blocks: details,
        });
        verdict_blocks.push(Block::List(findings::findings(results, s, &verdicts)));
        all_verdicts.extend(verdicts);
        verdict_blocks.extend(super::cost_findings::findings_block(results, s));
    }
    let tally = verdict::tally(results, &all_verdicts);
    // A tally of nothing but zeros says nothing the sentences do not.
    if tally.iter().any(|(_, wins)| *wins > 0) {
        let mut blocks = vec![Block::Paragraph(
            "Overall tally: figures won outright per model over every table above (a figure \
             without a significant winner, or led by tied models, counts for nobody)."
                .into(),
        )];
        let n = tally.len();
        blocks.push(Block::Table(Table {
            headers: vec!["Model".into(), "Figures won".into()],
            rows: tally
                .into_iter()
                .map(|(m, wins)| vec![m, wins.to_string()])
                .collect(),
            numeric: vec![false, true],
            flagged: vec![false; n],
        }));
        verdict_blocks.push(Block::Details {
            summary: "Figures won outright per model".into(),
            blocks,
        });
    }
    Section {
        heading: "Verdict and findings".into(),
        level: 2,
        id: "verdict".into(),
        blocks: verdict_blocks,
    }
}

pub(super) fn setup_section(results: &Results) -> Section {
    let m = &results.manifest;
    let repetitions = results.rows.iter().map(|r| r.repetition).max().unwrap_or(0);
    let mut rows = run_and_machine_rows(m);
    rows.extend(condition_rows(results));
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

/// What ran, when, and on which machine, as the manifest recorded it.
fn run_and_machine_rows(m: &Manifest) -> Vec<Vec<String>> {
    let unknown = || "unknown".to_string();
    let opt = |v: &Option<String>| v.clone().filter(|s| !s.is_empty()).unwrap_or_else(unknown);
    let num = |v: Option<u64>| v.map(|n| fmt_count(n as f64)).unwrap_or_else(unknown);
    vec![
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
    ]
}

/// The conditions the run set (sysctls, server limits, client links) and what the
/// servers could not count.
fn condition_rows(results: &Results) -> Vec<Vec<String>> {
    let m = &results.manifest;
    let mut rows = Vec::new();
    for (name, value) in &m.sysctls {
        let value = match value {
            serde_json::Value::String(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
            other => other.to_string(),
        };
        rows.push(vec![format!("sysctl {name}"), value]);
    }
    for (model, limits) in &m.conditions.server_limits {
        rows.push(vec![
            format!("Server limits of {model}"),
            format!("{} (a cgroup of its own)", limits.describe()),
        ]);
    }
    if let Some(network) = &m.conditions.network {
        rows.push(vec![
            "Client links".into(),
            format!(
                "each direction of every client host's link: {}",
                network.describe()
            ),
        ]);
    }
    let uncounted = sweep::models(results)
        .into_iter()
        .filter(|model| {
            results
                .rows
                .iter()
                .any(|r| &r.model == model && r.status == Status::Ok && r.bytes_match.is_none())
        })
        .collect::<Vec<_>>();
    if !uncounted.is_empty() {
        rows.push(vec![
            "Server byte counts".into(),
            format!(
                "none from {} (a server given as a command keeps none): only the client's echo checks apply",
                uncounted.join(", ")
            ),
        ]);
    }
    rows
}

fn verdict_table(verdicts: &[verdict::Verdict]) -> Table {
    let mut rows = Vec::new();
    for v in verdicts {
        let fmt = v.format;
        let dash = || "—".to_string();
        let name_value = |e: Option<&(String, f64)>| match e {
            Some((m, value)) => (m.clone(), fmt(*value)),
            None => (dash(), dash()),
        };
        let leaders = v.winners_with_values();
        let (winner, winner_value) = match leaders.as_slice() {
            [] => (v.significance(), dash()),
            [(m, value)] => (m.to_string(), value.clone()),
            tied => {
                let (names, values): (Vec<&str>, Vec<String>) = tied.iter().cloned().unzip();
                (format!("{} (tied)", names.join(", ")), values.join(", "))
            }
        };
        let (runner, runner_value) = name_value(v.runner_up());
        let vs_runner = v
            .margin()
            .map(|c| fmt_ratio_interval(&c))
            .unwrap_or_else(dash);
        let decided = !leaders.is_empty();
        let mut significance = if decided { v.significance() } else { dash() };
        if let Some(note) = v.left_out_note() {
            significance = if decided {
                format!("{significance}; {note}")
            } else {
                note
            };
        }
        rows.push(vec![
            v.figure.clone(),
            v.compared_at.clone(),
            winner,
            winner_value,
            runner,
            runner_value,
            vs_runner,
            significance,
            v.baseline().map(fmt).unwrap_or_else(dash),
            v.against_baseline()
                .map(|c| fmt_ratio_interval(&c))
                .unwrap_or_else(dash),
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
            "Significance".into(),
            format!("Baseline ({BASELINE})"),
            format!("Winner vs {BASELINE}"),
        ],
        rows,
        numeric: vec![
            false, false, false, true, false, true, true, false, true, true,
        ],
        flagged: vec![false; n],
    }
}

/// Columns of the all-steps table, shown exactly as results.csv has them.
pub const STEP_COLUMNS: [&str; 29] = [
    column::MODEL,
    column::STEP,
    column::REPETITION,
    column::STATUS,
    column::CONNECTIONS,
    column::SIZE,
    column::DELAY_MS,
    column::RATE,
    column::WORKERS,
    column::CONNECTIONS_ESTABLISHED,
    column::MAX_CONCURRENT_SERVER,
    column::THROUGHPUT_RPS,
    column::P50_US,
    column::P99_US,
    column::MEAN_US,
    column::COMPLETION_S,
    column::NET_SEGS_IN_PER_S,
    column::NET_SEGS_OUT_PER_S,
    column::NET_RETRANS_SEGS,
    column::NET_RESETS_SENT,
    column::NET_LISTEN_DROPS,
    column::SERVER_CPU_PCT,
    column::SERVER_RSS_PER_CONN_BYTES,
    column::ERRORS,
    column::LOAD_CPU_PCT,
    column::GENERATOR_BOUND,
    column::INTERFERENCE_PCT,
    column::DISTURBED,
    column::FAILURE_REASON,
];

/// At most this many rows of results.csv are in the all-steps table: a page of a few
/// thousand rows is already more than a reader scrolls, and a run of 50 000 rows made a
/// report of tens of megabytes. The table says how many it shows.
pub const STEP_ROWS: usize = 2000;

fn steps_section(results: &Results) -> Section {
    let columns: Vec<&str> = STEP_COLUMNS
        .iter()
        .copied()
        .filter(|c| results.columns.iter().any(|h| h == c))
        .collect();
    let shown = &results.rows[..results.rows.len().min(STEP_ROWS)];
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|r| {
            columns
                .iter()
                .map(|&c| match (c, r.raw(c).as_str()) {
                    (column::GENERATOR_BOUND, "true") => "generator-bound".to_string(),
                    (column::GENERATOR_BOUND, _) => String::new(),
                    (_, raw) => raw.to_string(),
                })
                .collect()
        })
        .collect();
    let flagged = shown.iter().map(|r| r.status != Status::Ok).collect();
    let numeric = columns
        .iter()
        .map(|c| {
            ![
                column::MODEL,
                column::STEP,
                column::STATUS,
                column::FAILURE_REASON,
                column::GENERATOR_BOUND,
            ]
            .contains(c)
        })
        .collect();
    Section {
        heading: "All steps".into(),
        level: 2,
        id: "steps".into(),
        blocks: vec![
            Block::Paragraph(format!(
                "{} as results.csv records it (latencies in µs, memory in bytes, CPU in % of \
                 one core); rows that did not finish as ok are highlighted.",
                if shown.len() < results.rows.len() {
                    format!(
                        "The first {} of its {} repetitions (results.csv has every one)",
                        fmt_count(shown.len() as f64),
                        fmt_count(results.rows.len() as f64)
                    )
                } else {
                    "Every repetition".to_string()
                }
            )),
            Block::Table(Table {
                headers: columns.iter().map(|c| c.to_string()).collect(),
                rows,
                numeric,
                flagged,
            }),
        ],
    }
}

/// The limits claim 2 is judged against, as the manifest recorded them.
pub fn limits(manifest: &Manifest) -> MachineLimits {
    let sysctl = |name: &str| -> Option<u64> {
        match manifest.sysctls.get(name)? {
            serde_json::Value::String(s) => s.trim().parse().ok(),
            v => v.as_u64(),
        }
    };
    let threads = match (sysctl("kernel.threads-max"), sysctl("kernel.pid_max")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    MachineLimits {
        threads,
        fds: manifest.fd_limit_hard.filter(|&f| f > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::reader::Row;

    #[test]
    fn the_all_steps_table_shows_at_most_its_bound_and_says_so() {
        let rows: Vec<Row> = (1..=STEP_ROWS as u32 + 5)
            .map(|repetition| Row {
                model: "epoll".into(),
                step: "c10".into(),
                repetition,
                ..Row::default()
            })
            .collect();
        let results = Results {
            dir: std::env::temp_dir().join("echolab-no-such-dir"),
            manifest: Manifest::default(),
            rows,
            profiled: Vec::new(),
            columns: crate::results::RESULTS_HEADER
                .iter()
                .map(|c| c.to_string())
                .collect(),
            warnings: Vec::new(),
        };
        let section = steps_section(&results);
        let [Block::Paragraph(text), Block::Table(table)] = section.blocks.as_slice() else {
            panic!("{:?}", section.blocks.len())
        };
        assert_eq!(table.rows.len(), STEP_ROWS);
        assert_eq!(table.flagged.len(), STEP_ROWS);
        assert_eq!(table.rows[STEP_ROWS - 1][2], STEP_ROWS.to_string());
        assert!(
            text.starts_with(
                "The first 2,000 of its 2,005 repetitions (results.csv has every one)"
            ),
            "{text}"
        );
    }
}
