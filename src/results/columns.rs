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

    /// Whether its cells are whole numbers (an integer type, or an option of one).
    pub fn is_whole(&self) -> bool {
        self.is_number() && !self.kind.contains("f64")
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

            /// The value of a numeric column (None: empty, not a number, or no such column).
            pub fn num(&self, name: &str) -> Option<f64> {
                match name {
                    $( column::$konst => super::columns::Cell::number(&self.$field), )*
                    _ => None,
                }
            }

            /// A cell as results.csv holds it (before neutralising): "" when empty.
            pub fn raw(&self, name: &str) -> String {
                match name {
                    $( column::$konst => super::columns::Cell::text(&self.$field), )*
                    _ => String::new(),
                }
            }

            /// Sets a column from its cell's text (trimmed and restored); an error says
            /// why the text is not a value of the column.
            pub fn set(&mut self, name: &str, text: &str) -> Result<(), String> {
                match name {
                    $( column::$konst => super::columns::Cell::read(&mut self.$field, text), )*
                    _ => Err(format!("'{name}' is not a results.csv column")),
                }
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

/// A results.csv cell's value: text is neutralised, numbers and flags stay as they are;
/// its text is what the csv writer writes, so a read row renders the file's cells.
pub trait Cell {
    fn neutralise(&mut self) {}
    /// The cell as written ("" for an empty one).
    fn text(&self) -> String;
    /// Its number, for a numeric column.
    fn number(&self) -> Option<f64> {
        None
    }
    /// Reads a cell's text into the value.
    fn read(&mut self, text: &str) -> Result<(), String>;
}

impl Cell for String {
    fn neutralise(&mut self) {
        *self = neutralise(self);
    }
    fn text(&self) -> String {
        self.clone()
    }
    fn read(&mut self, text: &str) -> Result<(), String> {
        *self = text.to_string();
        Ok(())
    }
}

impl<T: Cell + Default> Cell for Option<T> {
    fn neutralise(&mut self) {
        if let Some(value) = self {
            value.neutralise();
        }
    }
    fn text(&self) -> String {
        self.as_ref().map(T::text).unwrap_or_default()
    }
    fn number(&self) -> Option<f64> {
        self.as_ref().and_then(T::number)
    }
    /// An empty cell is None.
    fn read(&mut self, text: &str) -> Result<(), String> {
        if text.is_empty() {
            *self = None;
            return Ok(());
        }
        let mut value = T::default();
        value.read(text)?;
        *self = Some(value);
        Ok(())
    }
}

/// A number's cell: written as the csv writer writes it (ryu for floats).
macro_rules! number_cell {
    ($($ty:ty => $format:expr),*) => {$(
        impl Cell for $ty {
            fn text(&self) -> String {
                $format(*self)
            }
            fn number(&self) -> Option<f64> {
                Some(*self as f64)
            }
            fn read(&mut self, text: &str) -> Result<(), String> {
                *self = text.parse().map_err(|_| format!("'{text}' is not a number"))?;
                Ok(())
            }
        }
    )*};
}

number_cell! {
    u32 => |v: u32| v.to_string(),
    u64 => |v: u64| v.to_string(),
    f64 => |v: f64| ryu::Buffer::new().format(v).to_string()
}

impl Cell for bool {
    fn text(&self) -> String {
        self.to_string()
    }
    /// `1` and `0` too, as older files may hold.
    fn read(&mut self, text: &str) -> Result<(), String> {
        *self = match text {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err(format!("'{text}' is not true or false")),
        };
        Ok(())
    }
}

impl Cell for super::Status {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn read(&mut self, text: &str) -> Result<(), String> {
        *self = text.parse()?;
        Ok(())
    }
}
