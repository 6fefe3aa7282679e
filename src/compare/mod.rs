//! `echolab compare OLD NEW`: every figure of the verdict, step by step, old against
//! new, a change named only where the verdict's own test names one ("~" otherwise),
//! and a gate for CI (`--fail-if`).
//!
//! matching.rs pairs the two sides' steps by their parameters and compares the two
//! manifests, changes.rs measures each figure on both sides and decides, gate.rs parses
//! and judges the thresholds, render.rs writes the table, Markdown, CSV and JSON, and
//! page.rs writes compare.html. docs/compare.md says how to read it.

mod changes;
pub mod gate;
mod matching;
mod page;
mod render;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};

use crate::render::document::{Block, Section};
use crate::results::reader::{self, Results};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The results directory before the change (written by `echolab run`)
    pub old: PathBuf,

    /// The results directory after the change (default: OLD itself, with --models)
    pub new: Option<PathBuf>,

    /// Compare two models: OLD's first against NEW's second (one directory: two models
    /// of one run, e.g. --models mine,epoll)
    #[arg(long, value_delimiter = ',', value_name = "OLD_MODEL,NEW_MODEL")]
    pub models: Vec<String>,

    /// Exit 1 when a significant change crosses this threshold: 'p99 > +10%',
    /// 'throughput < -5%', 'cpu_per_request > +5%', or an absolute 'p99 > 2ms',
    /// 'errors > 0' (judged on NEW's value); repeatable
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,

    /// How to print the comparison
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Also write compare.html (self-contained: tables and a paired chart per figure)
    /// into this directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal
    Table,
    /// A Markdown table, to paste into a pull request
    Markdown,
    /// One JSON document (schema: docs/compare.md)
    Json,
    /// One CSV row per step and figure
    Csv,
}

/// A significant change crossed a `--fail-if` threshold.
pub const EXIT_CROSSED: u8 = 1;
/// A usage error, a results directory missing or damaged, or steps that do not match:
/// the usage exit every verb has.
pub use crate::console::EXIT_USAGE;

pub fn main(args: CompareArgs) -> anyhow::Result<ExitCode> {
    match compare(&args) {
        Ok(code) => Ok(code),
        Err(error) => {
            crate::errln!("echolab compare: {error:#}");
            Ok(ExitCode::from(EXIT_USAGE))
        }
    }
}

fn compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let thresholds = args
        .fail_if
        .iter()
        .map(|text| gate::Threshold::parse(text))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let models = match args.models.as_slice() {
        [] => None,
        [old, new] => Some((old.as_str(), new.as_str())),
        _ => bail!("--models takes two models, OLD's and NEW's (e.g. --models mine,epoll)"),
    };
    let new_dir = match (&args.new, models) {
        (Some(new), _) => new.clone(),
        (None, Some(_)) => args.old.clone(),
        (None, None) => {
            bail!(
                "give two results directories (OLD NEW), or one with --models OLD_MODEL,NEW_MODEL"
            )
        }
    };
    // However spelled (a link, `..`), one directory is one run: compared with itself, as
    // a whole or one model with itself, it can find no change and no gate could fire.
    let same_dir = match (args.old.canonicalize(), new_dir.canonicalize()) {
        (Ok(old), Ok(new)) => old == new,
        _ => new_dir == args.old,
    };
    if same_dir && models.is_none_or(|(old, new)| old == new) {
        bail!(
            "OLD and NEW are the same run ({}): a run compared with itself has no change to \
             find; give another run, or two of its models with --models OLD_MODEL,NEW_MODEL",
            args.old.display()
        );
    }
    let old = reader::load(&args.old).context("OLD")?;
    // Two models of one directory: read once, not held twice.
    let read_new;
    let new = if same_dir {
        &old
    } else {
        read_new = reader::load(&new_dir).context("NEW")?;
        &read_new
    };
    let figures = changes::figures(&gate::columns(&thresholds));
    let changes = changes::compare(&old, new, models, figures)?;
    let crossed = gate::judge(&thresholds, &changes);
    if matches!(args.format, Format::Json | Format::Csv) {
        for warning in &changes.warnings {
            crate::errln!("echolab compare: warning: {warning}");
        }
    }
    crate::out!(
        "{}",
        match args.format {
            Format::Table => render::text(&changes),
            Format::Markdown => render::markdown(&changes, &crossed),
            Format::Json => render::json(&changes, &thresholds, &crossed)?,
            Format::Csv => render::csv(&changes)?,
        }
    );
    // The gate's answer first: a page that cannot be written never hides a crossing.
    for crossing in &crossed {
        crate::errln!("echolab compare: {}", crossing.describe());
    }
    let gate = if crossed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CROSSED)
    };
    if let Some(dir) = &args.out {
        match write_page(dir, &changes, &crossed) {
            Ok(path) => crate::errln!("{}", path.display()),
            // A crossed threshold keeps its exit 1; otherwise the page not written is 2.
            Err(e) if !crossed.is_empty() => crate::errln!("echolab compare: {e:#}"),
            Err(e) => return Err(e),
        }
    }
    Ok(gate)
}

/// `echolab run --enforce-thresholds` exits with this when a scenario threshold is not met.
pub const EXIT_THRESHOLDS: u8 = 3;

/// The `[thresholds]` of the scenario that wrote `results` (from its manifest), each
/// judged on every step of every model: None when it has none, else each one not met
/// ("'p99 < 1ms' not met at epoll c100-s64: p99 is 1.50 ms").
pub fn scenario_thresholds(
    results: &Results,
) -> anyhow::Result<Option<(Vec<String>, Vec<String>)>> {
    let Some(toml_text) = results.manifest.scenario_toml.as_deref() else {
        return Ok(None);
    };
    let requirements =
        crate::scenario::thresholds_of(toml_text).context("the manifest's scenario")?;
    if requirements.is_empty() {
        return Ok(None);
    }
    let figures = changes::figures(&gate::columns(&requirements));
    let changes = changes::compare(results, results, None, figures)?;
    let unmet = gate::unmet(&requirements, &changes)
        .iter()
        .map(|c| format!("'{}' not met at {}: {}", c.threshold, c.step, c.what))
        .collect();
    let all = requirements.iter().map(|t| t.text.clone()).collect();
    Ok(Some((all, unmet)))
}

/// What the comparison adds to a run's report: the
/// scenario's thresholds judged, and the run against its baseline.
pub fn report_sections(results: &Results) -> Vec<Section> {
    thresholds_section(results)
        .into_iter()
        .chain(baseline_section(results))
        .collect()
}

/// The scenario's `[thresholds]`, judged on every step: each one not met, or that all were.
fn thresholds_section(results: &Results) -> Option<Section> {
    let blocks = match scenario_thresholds(results) {
        Ok(None) => return None,
        Ok(Some((all, unmet))) if unmet.is_empty() => vec![Block::Paragraph(format!(
            "Every step of every model met every threshold: {}.",
            all.join(", ")
        ))],
        Ok(Some((all, unmet))) => vec![
            Block::Paragraph(format!(
                "Thresholds: {}. Not met ({}):",
                all.join(", "),
                unmet.len()
            )),
            Block::List(unmet),
        ],
        Err(e) => vec![Block::Paragraph(format!(
            "The thresholds could not be judged: {e:#}"
        ))],
    };
    Some(Section {
        heading: "Thresholds".into(),
        level: 2,
        id: "thresholds".into(),
        blocks,
    })
}

/// A run's results (`new`, as read once at its end) against the `baseline` directory,
/// as `echolab compare` prints it.
pub fn against_baseline_text(baseline: &Path, new: &Results) -> anyhow::Result<String> {
    let old = reader::load(baseline)?;
    Ok(render::text(&changes::compare(
        &old,
        new,
        None,
        changes::figures(&[]),
    )?))
}

/// The report's section comparing `results` with its manifest's baseline (`run
/// --baseline`): the comparison's tables and warnings, or why there are none.
fn baseline_section(results: &Results) -> Option<Section> {
    let baseline = results.manifest.baseline.as_deref()?;
    let dir = Path::new(baseline);
    let blocks = match reader::load(dir)
        .and_then(|old| changes::compare(&old, results, None, changes::figures(&[])))
    {
        Ok(changes) => {
            let doc = render::document(&changes, &[], false);
            let mut blocks = vec![Block::Paragraph(format!(
                "This run (NEW) against the baseline {baseline} (OLD), as `echolab compare` \
                 prints it (docs/compare.md)."
            ))];
            if !doc.notes.is_empty() {
                blocks.push(Block::List(doc.notes));
            }
            blocks.extend(doc.sections.into_iter().flat_map(|s| {
                s.blocks
                    .into_iter()
                    .filter(|b| !matches!(b, Block::Paragraph(_)))
            }));
            blocks
        }
        Err(e) => vec![Block::Paragraph(format!(
            "The baseline {baseline} could not be compared: {e:#}"
        ))],
    };
    Some(Section {
        heading: "Against the baseline".into(),
        level: 2,
        id: "baseline".into(),
        blocks,
    })
}

/// Writes DIR/compare.html; returns its path.
fn write_page(
    dir: &Path,
    changes: &changes::Changes,
    crossed: &[gate::Crossing],
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("compare.html");
    let doc = render::document(changes, crossed, true);
    crate::results::replace(&path, crate::render::html::render(&doc).as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
