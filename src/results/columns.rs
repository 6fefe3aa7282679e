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
    };
}
pub(super) use results_columns;
