//! Reading a results directory: manifest.json, results.csv and the per-step files
//! (probe.csv, load/timeline.csv, load/percentiles.csv) that `echolab run` writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::results::files::RESULTS;
pub use crate::results::Status;
use crate::results::{column, Manifest, COLUMNS};

/// The columns a sweep can vary, in the order results.csv lists them.
pub const AXES: [&str; 7] = [
    column::CONNECTIONS,
    column::SIZE,
    column::DELAY_MS,
    column::RATE,
    column::WORKERS,
    column::REQUESTS_PER_CONN,
    column::CLIENT_HOSTS,
];

/// Columns without which a row cannot be placed in the report at all.
const REQUIRED: [&str; 4] = [
    column::MODEL,
    column::STEP,
    column::REPETITION,
    column::STATUS,
];

/// Whether a results.csv column holds free text or booleans rather than numbers: one
/// that places the row (even `repetition`), or one declared so; an unknown column (a
/// newer or older results.csv) is read as numbers.
fn is_text(column: &str) -> bool {
    REQUIRED.contains(&column) || COLUMNS.iter().any(|c| c.name == column && !c.is_number())
}

/// One line of results.csv: one repetition of one step of one model.
#[derive(Debug, Clone)]
pub struct Record {
    pub model: String,
    pub step: String,
    pub repetition: u32,
    pub status: Status,
    pub failure_reason: String,
    pub bytes_match: Option<bool>,
    /// Every numeric column that had a value.
    pub numbers: BTreeMap<String, f64>,
    /// Every column as written, so tables can show exactly what results.csv says.
    pub raw: BTreeMap<String, String>,
}

impl Record {
    pub fn num(&self, column: &str) -> Option<f64> {
        self.numbers.get(column).copied()
    }

    pub fn raw(&self, column: &str) -> &str {
        self.raw.get(column).map(String::as_str).unwrap_or("")
    }

    /// The folder holding this repetition's probe and load files.
    pub fn step_dir(&self, results_dir: &Path) -> PathBuf {
        results_dir
            .join(&self.model)
            .join(&self.step)
            .join(format!("rep-{}", self.repetition))
    }
}

pub struct Results {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// The measured repetitions: everything the report judges and charts.
    pub rows: Vec<Record>,
    /// The profiled repetitions (`profiled` = true): only the profiles section reads
    /// them, so sampling never reaches a verdict, claim, compare or threshold.
    pub profiled: Vec<Record>,
    /// results.csv columns in file order (for the all-steps table).
    pub columns: Vec<String>,
    /// Problems that did not stop the report (an unreadable step file), shown at the top.
    pub warnings: Vec<String>,
}

pub fn load(dir: &Path) -> anyhow::Result<Results> {
    if !dir.is_dir() {
        bail!(
            "results directory {} does not exist or is not a directory",
            dir.display()
        );
    }
    let manifest = Manifest::read(dir)?;
    let csv_path = dir.join(RESULTS);
    let (text, cut) = whole_rows(&csv_path)?;
    let (columns, all, impossible) = read_results_csv(&csv_path, &text)?;
    let (profiled, rows) = all
        .into_iter()
        .partition(|r| r.raw(column::PROFILED) == "true");
    let mut warnings = Vec::new();
    if let Some(alert) = missing_columns(&columns, &csv_path) {
        warnings.push(alert);
    }
    if let Some(note) = impossible.note(&csv_path) {
        warnings.push(note);
    }
    if let Some(line) = cut {
        let warning = format!(
            "{} line {line} is cut short (the run was stopped while writing it): skipped that row",
            csv_path.display()
        );
        warnings.push(warning);
    }
    Ok(Results {
        dir: dir.to_path_buf(),
        manifest,
        rows,
        profiled,
        columns,
        warnings,
    })
}

/// The columns of the schema a results.csv lacks, named: their figures are in no table or
/// chart, which a reader must be told rather than shown a run that looks complete.
fn missing_columns(header: &[String], path: &Path) -> Option<String> {
    let missing: Vec<&str> = COLUMNS
        .iter()
        .map(|c| c.name)
        .filter(|name| !header.iter().any(|h| h == name))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} lacks {} column(s) of the results schema (an older or edited file): {}; \
             their figures are missing from every table, chart and verdict.",
            path.display(),
            missing.len(),
            missing.join(", ")
        )
    })
}

/// results.csv up to its last line end, and the number of the line after it when
/// that one was cut short: the runner ends every row it writes with a line end.
fn whole_rows(path: &Path) -> anyhow::Result<(String, Option<usize>)> {
    let mut text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    match text.rfind('\n') {
        Some(end) if end + 1 < text.len() => {
            let line = text.matches('\n').count() + 1;
            text.truncate(end + 1);
            Ok((text, Some(line)))
        }
        _ => Ok((text, None)),
    }
}

/// Columns whose values may be below zero: memory gained, which can shrink.
const MAY_BE_NEGATIVE: [&str; 5] = [
    column::SERVER_RSS_HOLD_PER_CONN_BYTES,
    column::LOAD_RSS_PER_CONN_BYTES,
    column::KERNEL_SLAB_PER_CONN_BYTES,
    column::KERNEL_UNRECLAIMABLE_PER_CONN_BYTES,
    column::KERNEL_TCP_MEM_PER_CONN_BYTES,
];

/// Beyond any measure a run can produce (1e18 µs is 30 000 years, 1e18 bytes an
/// exabyte): a larger value is a damaged or hand-edited file, not a figure.
const LARGEST_POSSIBLE: f64 = 1e18;

/// Why a numeric cell cannot be a measure: not finite, below zero where nothing can
/// be, or beyond [`LARGEST_POSSIBLE`].
fn impossible(column: &str, value: f64) -> Option<&'static str> {
    if !value.is_finite() {
        Some("not finite")
    } else if value < 0.0 && !MAY_BE_NEGATIVE.contains(&column) {
        Some("negative")
    } else if value.abs() > LARGEST_POSSIBLE {
        Some("too large")
    } else {
        None
    }
}

/// The cells read as missing because their value is not possible: the first few
/// named, the rest counted, so a whole damaged file gives one short note.
#[derive(Default)]
struct Impossible {
    named: Vec<String>,
    count: usize,
}

impl Impossible {
    const NAMED: usize = 5;

    fn add(&mut self, line: u64, column: &str, value: &str, why: &str) {
        if self.named.len() < Self::NAMED {
            self.named
                .push(format!("line {line}, {column} = {value:?} ({why})"));
        }
        self.count += 1;
    }

    fn note(&self, path: &Path) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let more = match self.count - self.named.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "{}: {} cell(s) hold values that are not possible and are shown as missing: {}{more}",
            path.display(),
            self.count,
            self.named.join("; ")
        ))
    }
}

fn read_results_csv(
    path: &Path,
    text: &str,
) -> anyhow::Result<(Vec<String>, Vec<Record>, Impossible)> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let header = read_header(&mut reader, path)?;
    for column in REQUIRED {
        if !header.iter().any(|h| h == column) {
            bail!(
                "{} line 1: the header has no '{column}' column (header: {})",
                path.display(),
                header.join(",")
            );
        }
    }
    let mut rows = Vec::new();
    let mut impossible_cells = Impossible::default();
    let mut seen = std::collections::HashMap::new();
    for record in reader.records() {
        let (record, line) = record_with_line(record, path)?;
        let at = CellAt { path, line };
        let (raw, numbers) = read_cells(&header, &record, at, &mut impossible_cells)?;
        let row = record_of(raw, numbers, at)?;
        once(&mut seen, &row, at)?;
        rows.push(row);
    }
    Ok((header, rows, impossible_cells))
}

/// An error when `row`'s repetition (model, step, repetition; a profiled one apart) came
/// before, naming both lines: read twice, it would count as two repetitions.
fn once(
    seen: &mut std::collections::HashMap<(String, String, u32, bool), u64>,
    row: &Record,
    at: CellAt,
) -> anyhow::Result<()> {
    let profiled = row.raw(column::PROFILED) == "true";
    let id = (
        row.model.clone(),
        row.step.clone(),
        row.repetition,
        profiled,
    );
    match seen.insert(id, at.line) {
        None => Ok(()),
        Some(first) => Err(at.error(
            column::REPETITION,
            format!(
                "repetition {} of {} {} is already on line {first}: each repetition is one row",
                row.repetition, row.model, row.step
            ),
        )),
    }
}

/// Where a cell of results.csv is, for its error.
#[derive(Clone, Copy)]
struct CellAt<'a> {
    path: &'a Path,
    line: u64,
}

impl CellAt<'_> {
    fn error(self, column: &str, message: String) -> anyhow::Error {
        anyhow::anyhow!(
            "{} line {}, column {column}: {message}",
            self.path.display(),
            self.line
        )
    }
}

/// One row's cells: every cell as text (escaped), and the numeric ones as numbers; an
/// impossible number is counted and blanked.
fn read_cells(
    header: &[String],
    record: &csv::StringRecord,
    at: CellAt,
    impossible_cells: &mut Impossible,
) -> anyhow::Result<(BTreeMap<String, String>, BTreeMap<String, f64>)> {
    let mut raw = BTreeMap::new();
    let mut numbers = BTreeMap::new();
    for (column, value) in header.iter().zip(record.iter()) {
        let value = value.trim();
        // Text as the runner gave it: a label `-x` must still name model `-x`.
        let value = if is_text(column) {
            crate::results::restore(value)
        } else {
            value
        };
        // An empty cell is not kept ([`Record::raw`] reads it as ""): memory goes to
        // what the rows hold, most of a large file's cells being empty.
        if value.is_empty() && !REQUIRED.contains(&column.as_str()) {
            continue;
        }
        // Escaped: a results.csv from an older echolab may quote a server's raw stderr.
        raw.insert(
            column.clone(),
            crate::units::escape_controls(value, usize::MAX),
        );
        if is_text(column) || value.is_empty() {
            continue;
        }
        let number: f64 = value
            .parse()
            .map_err(|_| at.error(column, format!("'{value}' is not a number")))?;
        if let Some(why) = impossible(column, number) {
            impossible_cells.add(at.line, column, value, why);
            raw.remove(column);
            continue;
        }
        numbers.insert(column.clone(), number);
    }
    Ok((raw, numbers))
}

/// The row's identity and status read from its cells.
fn record_of(
    raw: BTreeMap<String, String>,
    numbers: BTreeMap<String, f64>,
    at: CellAt,
) -> anyhow::Result<Record> {
    let model = raw[column::MODEL].clone();
    if model.is_empty() {
        return Err(at.error(column::MODEL, "empty model name".into()));
    }
    let repetition: u32 = raw[column::REPETITION].parse().map_err(|_| {
        at.error(
            column::REPETITION,
            format!("'{}' is not a repetition number", raw[column::REPETITION]),
        )
    })?;
    let status: Status = raw[column::STATUS]
        .parse()
        .map_err(|e| at.error(column::STATUS, e))?;
    let bytes_match = match raw.get(column::BYTES_MATCH).map(String::as_str) {
        None | Some("") => None,
        Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(other) => {
            return Err(at.error(
                column::BYTES_MATCH,
                format!("'{other}' is not true or false"),
            ))
        }
    };
    Ok(Record {
        step: raw[column::STEP].clone(),
        failure_reason: raw.get(column::FAILURE_REASON).cloned().unwrap_or_default(),
        model,
        repetition,
        status,
        bytes_match,
        numbers,
        raw,
    })
}

/// At most this many rows of a step file are kept for its charts, evenly spread over the
/// file: a chart is some hundreds of pixels wide, and a long run's probe.csv (ten samples
/// a second) may hold millions of rows.
pub const MAX_TABLE_ROWS: usize = 4096;

/// A numeric CSV (probe.csv, timeline.csv, percentiles.csv): rows of named optional
/// numbers, at most [`MAX_TABLE_ROWS`] of them (every `stride`-th row of the file).
pub struct NumberTable {
    pub rows: Vec<BTreeMap<String, f64>>,
}

impl NumberTable {
    /// Pairs (x, y) for the rows where both columns have a value.
    pub fn pairs(&self, x: &str, y: &str) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter_map(|r| Some((*r.get(x)?, *r.get(y)?)))
            .collect()
    }
}

/// The trimmed header of a CSV file, or an error naming the file.
fn read_header<R: std::io::Read>(
    reader: &mut csv::Reader<R>,
    path: &Path,
) -> anyhow::Result<Vec<String>> {
    Ok(reader
        .headers()
        .with_context(|| format!("{} line 1: cannot read the header", path.display()))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect())
}

/// A CSV record with its line number, or an error naming the file and line.
fn record_with_line(
    record: csv::Result<csv::StringRecord>,
    path: &Path,
) -> anyhow::Result<(csv::StringRecord, u64)> {
    let record = record.map_err(|e| {
        let line = e.position().map(|p| p.line()).unwrap_or(0);
        anyhow::anyhow!("{} line {line}: malformed CSV: {e}", path.display())
    })?;
    let line = record.position().map(|p| p.line()).unwrap_or(0);
    Ok((record, line))
}

/// Reads a per-step CSV, streaming: every row is checked, and rows 0, k, 2k, ... are kept
/// with k doubling whenever [`MAX_TABLE_ROWS`] are held, so memory is bounded whatever the
/// file's length (cumulative columns such as probe.csv's CPU seconds stay exact between
/// the rows kept). Ok(None) when the file does not exist (a step that never ran its
/// load); an error naming file and line when it is malformed.
pub fn read_table(path: &Path) -> anyhow::Result<Option<NumberTable>> {
    if !path.exists() {
        return Ok(None);
    }
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let header = read_header(&mut reader, path)?;
    let mut rows = Vec::new();
    let mut stride = 1;
    for (index, record) in reader.records().enumerate() {
        let (record, line) = record_with_line(record, path)?;
        // A file cut off mid-row (a killed run) ends in a short row: never read as values.
        if record.len() != header.len() {
            bail!(
                "{} line {line}: {} fields where the header has {} (a row cut short?)",
                path.display(),
                record.len(),
                header.len()
            );
        }
        let mut row = BTreeMap::new();
        for (column, value) in header.iter().zip(record.iter()) {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let number: f64 = value.parse().map_err(|_| {
                anyhow::anyhow!(
                    "{} line {line}, column {column}: '{value}' is not a number",
                    path.display()
                )
            })?;
            // Per-step files hold deltas that may be negative: only what no file can hold.
            if let Some(why) = impossible(column, number.abs()) {
                bail!(
                    "{} line {line}, column {column}: '{value}' is not possible ({why})",
                    path.display()
                );
            }
            row.insert(column.clone(), number);
        }
        if index % stride == 0 {
            rows.push(row);
            if rows.len() == MAX_TABLE_ROWS {
                // Keep rows 0, 2k, 4k, ...: the next one kept is row MAX_TABLE_ROWS * k.
                let mut position = 0;
                rows.retain(|_| {
                    position += 1;
                    position % 2 == 1
                });
                stride *= 2;
            }
        }
    }
    Ok(Some(NumberTable { rows }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_step_file_keeps_evenly_spread_rows_up_to_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.csv");
        let rows = MAX_TABLE_ROWS * 5 + 3;
        let mut text = String::from("t_s,cpu_user_s\n");
        for i in 0..rows {
            text.push_str(&format!("{i},{}\n", i * 2));
        }
        fs::write(&path, text).unwrap();
        let table = read_table(&path).unwrap().unwrap();
        // Rows 0, 8, 16, ...: the stride doubled three times (4096, 8192, 16384 held).
        let kept: Vec<f64> = table.rows.iter().map(|r| r["t_s"]).collect();
        let expected: Vec<f64> = (0..rows).step_by(8).map(|i| i as f64).collect();
        assert_eq!(kept, expected);
        assert!(kept.len() <= MAX_TABLE_ROWS);
        assert_eq!(table.pairs("t_s", "cpu_user_s")[1], (8.0, 16.0));
        // A short file is kept whole.
        fs::write(&path, "t_s\n1\n2\n").unwrap();
        assert_eq!(read_table(&path).unwrap().unwrap().rows.len(), 2);
    }

    #[test]
    fn text_columns_are_the_identity_and_the_declared_text_and_flags() {
        let text: Vec<&str> = COLUMNS
            .iter()
            .map(|c| c.name)
            .filter(|c| is_text(c))
            .collect();
        assert_eq!(
            text,
            [
                column::MODEL,
                column::STEP,
                column::REPETITION,
                column::STATUS,
                column::FAILURE_REASON,
                column::BYTES_MATCH,
                column::GENERATOR_BOUND,
                column::NET_SCOPE,
                column::DISTURBED,
                column::PROFILED,
            ]
        );
        assert!(!is_text("a_newer_column"));
    }
}
