//! Reading a results directory: manifest.json, results.csv and the per-step files
//! (probe.csv, load/timeline.csv, load/percentiles.csv) that `echolab run` writes.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::results::files::RESULTS;
use crate::results::{column, Manifest, COLUMNS};
pub use crate::results::{Row, Status};

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

/// Whether a results.csv column holds free text or flags (text is neutralised when
/// written, so it is restored when read).
fn is_text(column: &str) -> bool {
    COLUMNS.iter().any(|c| c.name == column && !c.is_number())
}

pub struct Results {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// The measured repetitions: everything the report judges and charts.
    pub rows: Vec<Row>,
    /// The profiled repetitions (`profiled` = true): only the profiles section reads
    /// them, so sampling never reaches a verdict, claim, compare or threshold.
    pub profiled: Vec<Row>,
    /// results.csv's columns of the schema, in file order (for the all-steps table).
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
    let mut whole = WholeRows::open(&csv_path)?;
    let (header, all, impossible) = read_results_csv(&csv_path, &mut whole)?;
    let cut = whole.cut_line();
    let (profiled, rows) = all.into_iter().partition(|r| r.profiled == Some(true));
    let mut warnings = Vec::new();
    if let Some(alert) = missing_columns(&header, &csv_path) {
        warnings.push(alert);
    }
    let (columns, unknown): (Vec<String>, Vec<String>) =
        header.into_iter().partition(|h| is_column(h));
    if !unknown.is_empty() {
        warnings.push(format!(
            "{} has {} column(s) outside the results schema (a newer or edited file), \
             not read: {}",
            csv_path.display(),
            unknown.len(),
            unknown.join(", ")
        ));
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

/// results.csv read up to its last line end, streamed: the runner ends every row it
/// writes with a line end, so what follows the last one is a row cut short.
struct WholeRows {
    file: std::io::Take<fs::File>,
    /// Whether bytes follow the last line end.
    cut: bool,
    /// The line ends read so far.
    line_ends: u64,
}

impl WholeRows {
    fn open(path: &Path) -> anyhow::Result<WholeRows> {
        let cannot = || format!("cannot read {}", path.display());
        let mut file = fs::File::open(path).with_context(cannot)?;
        let len = file.metadata().with_context(cannot)?.len();
        let whole = last_line_end(&mut file, len).with_context(cannot)?;
        file.rewind().with_context(cannot)?;
        Ok(WholeRows {
            file: file.take(whole.unwrap_or(len)),
            cut: whole.is_some_and(|end| end < len),
            line_ends: 0,
        })
    }

    /// The number of the line cut short, once every whole row has been read.
    fn cut_line(&self) -> Option<u64> {
        self.cut.then_some(self.line_ends + 1)
    }
}

impl Read for WholeRows {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.line_ends += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
        Ok(n)
    }
}

/// The length of `file` up to and with its last line end (None when it has none), read
/// backwards from its end a block at a time.
fn last_line_end(file: &mut fs::File, len: u64) -> std::io::Result<Option<u64>> {
    let mut block = [0u8; 8192];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let part = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(start + i as u64 + 1));
        }
        end = start;
    }
    Ok(None)
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

/// results.csv's header, rows and impossible cells, streamed from `source` (csv's reader
/// buffers it).
fn read_results_csv(
    path: &Path,
    source: impl Read,
) -> anyhow::Result<(Vec<String>, Vec<Row>, Impossible)> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(source);
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
        let row = read_row(&header, &record, at, &mut impossible_cells)?;
        once(&mut seen, &row, at)?;
        rows.push(row);
    }
    Ok((header, rows, impossible_cells))
}

/// Whether a results.csv column holds whole numbers.
fn is_whole(column: &str) -> bool {
    COLUMNS.iter().any(|c| c.name == column && c.is_whole())
}

/// Whether results.csv's schema has this column.
fn is_column(name: &str) -> bool {
    COLUMNS.iter().any(|c| c.name == name)
}

/// An error when `row`'s repetition (model, step, repetition; a profiled one apart) came
/// before, naming both lines: read twice, it would count as two repetitions.
fn once(
    seen: &mut std::collections::HashMap<(String, String, u32, bool), u64>,
    row: &Row,
    at: CellAt,
) -> anyhow::Result<()> {
    let id = (
        row.model.clone(),
        row.step.clone(),
        row.repetition,
        row.profiled == Some(true),
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

/// One line of results.csv as its [`Row`]: a column outside the schema is not read, an
/// empty cell is the field's default (None), and an impossible number is counted and
/// left empty.
fn read_row(
    header: &[String],
    record: &csv::StringRecord,
    at: CellAt,
    impossible_cells: &mut Impossible,
) -> anyhow::Result<Row> {
    let mut row = Row::default();
    for (column, value) in header.iter().zip(record.iter()) {
        let column = column.as_str();
        if !is_column(column) {
            continue;
        }
        let value = value.trim();
        let required = REQUIRED.contains(&column);
        if value.is_empty() && !required {
            continue;
        }
        if is_text(column) {
            // As the runner gave it (a label `-x` must still name model `-x`), escaped: a
            // results.csv from an older echolab may quote a server's raw stderr.
            let text = crate::units::escape_controls(crate::results::restore(value), usize::MAX);
            row.set(column, &text).map_err(|e| at.error(column, e))?;
            continue;
        }
        let number: f64 = value
            .parse()
            .map_err(|_| at.error(column, format!("'{value}' is not a number")))?;
        if let Some(why) = impossible(column, number).filter(|_| !required) {
            impossible_cells.add(at.line, column, value, why);
            continue;
        }
        // An older echolab wrote some counts (`server_rss_per_conn_bytes`) as fractions.
        let rounded;
        let value = if is_whole(column) && !required && value.parse::<u64>().is_err() {
            rounded = number.round().to_string();
            &rounded
        } else {
            value
        };
        row.set(column, value).map_err(|e| at.error(column, e))?;
    }
    if row.model.is_empty() {
        return Err(at.error(column::MODEL, "empty model name".into()));
    }
    Ok(row)
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
    fn text_columns_are_the_declared_text_and_flags() {
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
                column::STATUS,
                column::FAILURE_REASON,
                column::BYTES_MATCH,
                column::GENERATOR_BOUND,
                column::NET_SCOPE,
                column::DISTURBED,
                column::PROFILED,
            ]
        );
    }

    /// results.csv's text holding `rows` as the runner writes them.
    fn written(rows: &[Row]) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        for row in rows {
            writer.serialize(row.neutralised()).unwrap();
        }
        String::from_utf8(writer.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn a_row_reads_back_as_written_and_renders_each_cell_as_the_file_holds_it() {
        let row = Row {
            model: "-x".into(),
            step: "c10-s64".into(),
            repetition: 2,
            connections: 10,
            delay_ms: 0.0,
            rate: Some(10000.0),
            status: Status::Failed,
            failure_reason: "=1+2, \"quoted\"".into(),
            throughput_mib_s: Some(0.7227433567047119),
            p99_us: Some(1e-7),
            bytes_match: Some(false),
            net_scope: Some("host".into()),
            ..Row::default()
        };
        let text = written(std::slice::from_ref(&row));
        let path = Path::new("results.csv");
        let (header, rows, impossible) = read_results_csv(path, text.as_bytes()).unwrap();
        assert_eq!(header, crate::results::RESULTS_HEADER);
        assert_eq!(rows, std::slice::from_ref(&row));
        assert_eq!(impossible.count, 0);
        // Every cell renders as the file holds it (a text cell before neutralising).
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let cells = reader.records().next().unwrap().unwrap();
        for (name, cell) in header.iter().zip(cells.iter()) {
            assert_eq!(rows[0].raw(name), crate::results::restore(cell), "{name}");
        }
        assert_eq!(rows[0].raw(column::DELAY_MS), "0.0");
        assert_eq!(rows[0].raw(column::THROUGHPUT_MIB_S), "0.7227433567047119");
        assert_eq!(rows[0].num(column::CONNECTIONS), Some(10.0));
        assert_eq!(rows[0].num(column::P50_US), None);
        assert_eq!(rows[0].num(column::STATUS), None);
        assert_eq!(rows[0].raw(column::STATUS), "failed");
    }

    #[test]
    fn a_column_outside_the_schema_is_not_read_and_named_in_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let row = Row {
            model: "epoll".into(),
            step: "c10".into(),
            repetition: 1,
            connections: 10,
            throughput_rps: Some(5.5),
            ..Row::default()
        };
        let text = written(std::slice::from_ref(&row));
        // A hand-edited file: a column of notes after p99_us, another after the last.
        let after = COLUMNS
            .iter()
            .position(|c| c.name == column::P99_US)
            .unwrap()
            + 1;
        let edited: String = text
            .lines()
            .zip([["note", "extra"], ["fast", "7"]])
            .map(|(line, [note, extra])| {
                let mut cells: Vec<&str> = line.split(',').collect();
                cells.insert(after, note);
                cells.push(extra);
                cells.join(",") + "\n"
            })
            .collect();
        assert!(edited.starts_with("model,"), "{edited}");
        fs::write(dir.path().join(RESULTS), &edited).unwrap();
        Manifest::default().write(dir.path()).unwrap();
        let results = load(dir.path()).unwrap();
        assert_eq!(results.rows, [row]);
        assert_eq!(results.columns, crate::results::RESULTS_HEADER);
        let path = dir.path().join(RESULTS);
        assert_eq!(
            results.warnings,
            [format!(
                "{} has 2 column(s) outside the results schema (a newer or edited file), \
                 not read: note, extra",
                path.display()
            )]
        );
        assert_eq!(results.rows[0].raw("note"), "");
        assert_eq!(results.rows[0].num("extra"), None);
    }
}
