//! results.csv as the runner writes it: one [`Row`] per repetition of a step,
//! flushed as it comes.

use std::fs::File;
use std::path::Path;

use anyhow::Context as _;

use crate::results::{Row, RESULTS_HEADER};

/// results.csv, flushed after every row so an interrupted run keeps what it finished.
pub struct ResultsCsv {
    writer: csv::Writer<File>,
}

impl ResultsCsv {
    pub fn create(path: &Path) -> anyhow::Result<ResultsCsv> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        // A full disk fails here first: the error names the file.
        writer
            .write_record(RESULTS_HEADER)
            .map_err(anyhow::Error::from)
            .and_then(|()| writer.flush().map_err(anyhow::Error::from))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(ResultsCsv { writer })
    }

    /// results.csv of a run that goes on: rows are appended after its last.
    pub fn append_to(path: &Path) -> anyhow::Result<ResultsCsv> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {} to append to it", path.display()))?;
        let writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file);
        Ok(ResultsCsv { writer })
    }

    /// Appends `row`, its text cells neutralised against spreadsheet formulas.
    pub fn append(&mut self, row: &Row) -> anyhow::Result<()> {
        self.writer.serialize(row.neutralised())?;
        self.writer.flush()?;
        Ok(())
    }

    /// Where the next row goes: rows appended from here can be taken back with
    /// [`ResultsCsv::rewind`] (a staircase's stairs, written when judged, replaced by
    /// their final rows once the server has stopped).
    pub fn mark(&mut self) -> anyhow::Result<u64> {
        use std::io::Seek as _;
        self.writer.flush()?;
        // `&File` seeks the file itself: csv's writer lends no `&mut`.
        let mut file: &File = self.writer.get_ref();
        Ok(file.stream_position()?)
    }

    /// Removes every row appended since `mark`.
    pub fn rewind(&mut self, mark: u64) -> anyhow::Result<()> {
        use std::io::{Seek as _, SeekFrom};
        self.writer.flush()?;
        let mut file: &File = self.writer.get_ref();
        file.set_len(mark)?;
        file.seek(SeekFrom::Start(mark))?;
        Ok(())
    }
}
