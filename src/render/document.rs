//! The report as a format-neutral document: the HTML and Markdown writers render
//! the same sections, tables and charts, so the two never disagree.

pub struct Document {
    pub title: String,
    /// What the top of the page says when there are no alerts, and above the alerts.
    pub status: StatusWords,
    /// Shown at the top, prominently: the run is incomplete or has failures.
    pub alerts: Vec<String>,
    /// Shown at the top as notes: facts worth knowing that are not failures (where the
    /// network counters were read, disturbed repetitions).
    pub notes: Vec<String>,
    /// When there is no alert but some figures measured something else than the servers
    /// (generator-bound repetitions): said in place of "Complete run: every step finished
    /// as ok.", which would claim more than the run showed.
    pub caveat: Option<String>,
    /// While the run goes on: what is done and what is not yet, said in place of the
    /// status line (report.html then refreshes itself).
    pub partial: Option<String>,
    pub sections: Vec<Section>,
}

/// The words of a document's status line.
#[derive(Clone, Copy)]
pub struct StatusWords {
    pub ok: &'static str,
    pub alert: &'static str,
}

/// A run's report: complete, or not complete or with failures.
pub const RUN_STATUS: StatusWords = StatusWords {
    ok: "Complete run: every step finished as ok.",
    alert: "This run is not complete or has failures.",
};

impl Document {
    /// The line at the top when there is no alert.
    pub fn complete_line(&self) -> String {
        match &self.caveat {
            None => self.status.ok.into(),
            Some(caveat) => format!("Every step finished as ok, but {caveat}"),
        }
    }
}

pub struct Section {
    pub heading: String,
    /// 2 for a top-level section, 3 inside one.
    pub level: u8,
    pub id: String,
    pub blocks: Vec<Block>,
}

pub enum Block {
    Paragraph(String),
    List(Vec<String>),
    Table(Table),
    Chart(Chart),
    /// Preformatted text (the scenario TOML).
    Code(String),
    /// The answer in two or three plain sentences, above the figures' own.
    Headline(String),
    /// The answer for each figure: a sentence and a compact picture.
    Answers(Vec<Answer>),
    /// Blocks one click away (HTML's <details>): the method, the full tables.
    Details {
        summary: String,
        blocks: Vec<Block>,
    },
}

pub struct Answer {
    pub sentence: String,
    /// An inline SVG placing every model.
    pub svg: String,
}

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Right-aligned (numeric) columns.
    pub numeric: Vec<bool>,
    /// Rows to highlight (failed or skipped steps): true for each such row.
    pub flagged: Vec<bool>,
}

impl Table {
    /// A table as text: each column as wide as its widest cell, numbers to the right.
    pub fn aligned(&self) -> String {
        let width = |j: usize| {
            std::iter::once(&self.headers[j])
                .chain(self.rows.iter().map(|r| &r[j]))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.headers.len()).map(width).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    if self.numeric.get(j).copied().unwrap_or(false) {
                        format!("{c:>w$}", w = widths[j])
                    } else {
                        format!("{c:<w$}", w = widths[j])
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }
}

pub struct Chart {
    /// File stem under charts/ (the Markdown links to charts/<file>.svg).
    pub file: String,
    pub title: String,
    pub svg: String,
    pub caption: String,
}
