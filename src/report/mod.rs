//! `echolab report RESULTS_DIR`: turns a results directory (manifest.json,
//! results.csv and the per-step files) into report.html, report.md and
//! charts/*.svg inside that directory.
//!
//! This room only composes the page: the results are read by `results::reader`, the
//! verdict is decided in `verdict`, the classic study is judged in `claims`, and the
//! page is drawn by `render`. build.rs lays out the document with the figures of each
//! sweep (figures.rs, driven by a table of metrics) and its timelines (timelines.rs);
//! composite.rs lays out the report of a scenario made of parts (`classic`);
//! per_host.rs shows each client host's figures when the load was split over hosts.
//! The comparison adds its sections (thresholds, baseline) from its own room below.

mod answer;
mod build;
mod composite;
mod cost_findings;
mod figures;
mod findings;
mod models_table;
mod per_host;
mod profiles;
mod timelines;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::render::{document, html, markdown};
use crate::results::reader;
use crate::verdict::{self, sweep};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The results directory written by `echolab run` (manifest.json, results.csv, step folders)
    pub results_dir: PathBuf,
}

pub use models_table::models_table;

/// At most this many items (repetitions, reasons) are named in one line of the report;
/// the rest are counted, so a run of thousands of repetitions per step gives a line, not
/// a page.
const NAMED: usize = 10;

/// `items` joined with `separator`, the first [`NAMED`] named and the rest counted
/// ("a, b and 40 more").
fn first_named<S: AsRef<str>>(items: &[S], separator: &str) -> String {
    let named: Vec<&str> = items.iter().take(NAMED).map(AsRef::as_ref).collect();
    match items.len().saturating_sub(NAMED) {
        0 => named.join(separator),
        more => format!("{} and {more} more", named.join(separator)),
    }
}

/// How far a run that goes on has got: the rows written of all it will write (each a
/// repetition of a step, or a stair).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Partial {
    pub done: u64,
    pub total: u64,
}

pub fn main(args: ReportArgs) -> anyhow::Result<ExitCode> {
    // A directory that cannot be read is the caller's to fix, as compare says it: exit 2.
    let mut results = match reader::load(&args.results_dir) {
        Ok(results) => results,
        Err(e) => {
            crate::errln!("echolab report: {e:#}");
            return Ok(ExitCode::from(crate::console::EXIT_USAGE));
        }
    };
    let written = write_all(&mut results, None);
    for warning in &results.warnings {
        crate::errln!("echolab report: warning: {warning}");
    }
    let written = written?;
    for path in written {
        crate::outln!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes report.html, report.md and charts/*.svg into `results_dir`; returns
/// report.html's path.
pub fn write_report(results_dir: &Path) -> anyhow::Result<PathBuf> {
    write_report_of(&mut reader::load(results_dir)?)
}

/// [`write_report`] of results already read (into their directory, `results.dir`).
pub fn write_report_of(results: &mut reader::Results) -> anyhow::Result<PathBuf> {
    Ok(write_all(results, None)?.remove(0))
}

/// The report of a run that goes on, from the rows written so far: marked partial, what
/// is not done yet said so, reloading itself in the browser until the final report
/// replaces it.
pub fn write_partial_report(results_dir: &Path, partial: Partial) -> anyhow::Result<PathBuf> {
    Ok(write_all(&mut reader::load(results_dir)?, Some(partial))?.remove(0))
}

/// Claim `number` judged from a run's `rows`: at the level of the looks the run planned
/// ([`crate::results::Manifest::looks`]) and against the limits of its machine.
pub fn judge_claim(
    number: usize,
    rows: &[reader::Row],
    manifest: &crate::results::Manifest,
) -> crate::claims::Claim {
    let limits = build::limits(manifest);
    crate::stats::with_looks(manifest.looks(), || {
        crate::claims::judge(number, rows, limits)
    })
}

/// The verdict of every sweep as lines of plain text, for the end of `echolab run`:
/// a winner only where the test of significance names one.
pub fn verdict_lines(results: &reader::Results) -> Vec<String> {
    let mut lines = Vec::new();
    for s in sweep::sweeps(results) {
        for v in verdict::verdicts(results, &s) {
            let leaders = v.winners();
            let answer = match (leaders.as_slice(), v.margin(), v.runner_up()) {
                ([], ..) | (_, None, _) | (_, _, None) => v.significance(),
                (_, Some(margin), Some((runner, _))) => {
                    let values: Vec<String> = v
                        .winners_with_values()
                        .into_iter()
                        .map(|(m, value)| format!("{m} ({value})"))
                        .collect();
                    let who = match values.split_last() {
                        Some((last, rest)) if !rest.is_empty() => {
                            format!("{} and {last} tie,", rest.join(", "))
                        }
                        _ => values.join(""),
                    };
                    format!(
                        "{who} {} over {runner}, {}",
                        verdict::fmt_ratio_interval(&margin),
                        v.significance()
                    )
                }
            };
            lines.push(format!("{} at {}: {answer}", v.figure, v.compared_at));
        }
    }
    lines
}

/// Every file written into the results' directory, report.html first.
fn write_all(
    results: &mut reader::Results,
    partial: Option<Partial>,
) -> anyhow::Result<Vec<PathBuf>> {
    results
        .warnings
        .extend(crate::results::latency::unreadable(results));
    let doc = if results.manifest.parts.is_empty() {
        build::document(results, partial)?
    } else {
        composite::document(results)
    };
    let results_dir = results.dir.as_path();
    let charts_dir = results_dir.join("charts");
    if fs::symlink_metadata(&charts_dir).is_ok_and(|m| m.file_type().is_symlink()) {
        // A link planted in place of the folder is removed, never written through.
        fs::remove_file(&charts_dir)
            .with_context(|| format!("cannot remove the link {}", charts_dir.display()))?;
    }
    fs::create_dir_all(&charts_dir)
        .with_context(|| format!("cannot create {}", charts_dir.display()))?;
    let html_path = results_dir.join("report.html");
    let md_path = results_dir.join("report.md");
    let mut written = vec![html_path.clone(), md_path.clone()];
    for section in &doc.sections {
        for block in &section.blocks {
            if let document::Block::Chart(chart) = block {
                let path = charts_dir.join(format!("{}.svg", chart.file));
                crate::results::replace(&path, chart.svg.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                written.push(path);
            }
        }
    }
    crate::results::replace(&html_path, html::render(&doc).as_bytes())
        .with_context(|| format!("cannot write {}", html_path.display()))?;
    crate::results::replace(&md_path, markdown::render(&doc).as_bytes())
        .with_context(|| format!("cannot write {}", md_path.display()))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_names_its_first_items_and_counts_the_rest() {
        let reps: Vec<String> = (1..=NAMED + 3).map(|r| r.to_string()).collect();
        assert_eq!(
            first_named(&reps, ", "),
            "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more"
        );
        assert_eq!(first_named(&reps[..2], "; "), "1; 2");
        assert_eq!(first_named::<String>(&[], ", "), "");
    }
}
