//! How a results.csv column is declared: [`results_columns!`] takes each column once
//! (its `column::` const, its [`Row`](super::Row) field and type, its unit and its doc
//! line) and makes the `column` consts, [`COLUMNS`](super::COLUMNS),
//! [`RESULTS_HEADER`](super::RESULTS_HEADER) and `Row` from it, all in one order.

/// One results.csv column as declared; docs/outputs.md's results tables list the same
/// names with the same units, in the same order (a test in `row.rs` compares them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub name: &'static str,
    /// The type of its `Row` field as written there (`Option<f64>`: empty when not measured).
    pub kind: &'static str,
    /// Empty for names and flags.
    pub unit: &'static str,
    /// The field's doc comment, line by line.
    pub doc: &'static [&'static str],
}

impl Column {
    /// Whether its cells are numbers (an integer or a float type, or an option of one).
    pub fn is_number(&self) -> bool {
        let inner = self
            .kind
            .strip_prefix("Option<")
            .and_then(|k| k.strip_suffix('>'))
            .unwrap_or(self.kind);
        matches!(inner, "u32" | "u64" | "f64")
    }

    /// The doc comment as one line.
    pub fn doc(&self) -> String {
        let lines: Vec<&str> = self.doc.iter().map(|l| l.trim()).collect();
        lines.join(" ")
    }
}

/// `/// doc` then `CONST field: Type, "unit";` for every column, in header order.
macro_rules! results_columns {
    ($( $(#[doc = $doc:literal])+ $konst:ident $field:ident: $ty:ty, $unit:literal; )*) => {
        /// The name of every results.csv column, written by the runner and read by the report.
        pub mod column {
            $( pub const $konst: &str = stringify!($field); )*
        }

        /// Every results.csv column, in header order.
        pub const COLUMNS: [Column; [$(stringify!($field)),*].len()] = [$(
            Column {
                name: stringify!($field),
                kind: stringify!($ty),
                unit: $unit,
                doc: &[$($doc),+],
            }
        ),*];

        /// The header of results.csv, in order.
        pub const RESULTS_HEADER: [&str; COLUMNS.len()] = [$(column::$konst),*];

        /// One row of results.csv (fields in header order; None is an empty cell).
        #[derive(Serialize, Debug, Clone, Default, PartialEq)]
        pub struct Row {
            $( $(#[doc = $doc])+ pub $field: $ty, )*
        }

        impl Row {
            /// The row as results.csv holds it: every text cell through
            /// [`neutralise`](super::columns::neutralise).
            pub fn neutralised(&self) -> Row {
                let mut row = self.clone();
                $( super::columns::Cell::neutralise(&mut row.$field); )*
                row
            }
        }
    };
}
pub(super) use results_columns;

/// The first characters that make a spreadsheet read a cell as a formula (OWASP's
/// CSV injection list), and the quote that marks a cell as neutralised.
const FORMULA_STARTS: [char; 7] = ['=', '+', '-', '@', '\t', '\r', '\''];

/// A text cell as results.csv holds it: one that a spreadsheet would run as a formula
/// (a label `=cmd|...`) gets a leading `'`, which spreadsheets show as text; one that
/// starts with `'` gets another, so [`restore`] gives back exactly what was written.
pub fn neutralise(text: &str) -> String {
    if text.starts_with(FORMULA_STARTS) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

/// The text [`neutralise`] was given.
pub fn restore(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(FORMULA_STARTS) => rest,
        _ => cell,
    }
}

/// A results.csv cell's value: text is neutralised, numbers and flags stay as they are.
pub trait Cell {
    fn neutralise(&mut self) {}
}

impl Cell for String {
    fn neutralise(&mut self) {
        *self = neutralise(self);
    }
}

impl<T: Cell> Cell for Option<T> {
    fn neutralise(&mut self) {
        if let Some(value) = self {
            value.neutralise();
        }
    }
}

impl Cell for u32 {}
impl Cell for u64 {}
impl Cell for f64 {}
impl Cell for bool {}
impl Cell for super::Status {}
