//! The results directory, below its writer ([`crate::experiment`]) and everything
//! that reads it: results.csv's columns and [`Row`] (each column declared once, in
//! `row.rs`), its reader ([`reader`]) and the latency logs' ([`latency`]),
//! manifest.json's [`Manifest`] (read and written here), the thresholds a run or a
//! comparison judges its figures by ([`threshold`]), how a file in it is written whole
//! ([`replace`]), and every file's name ([`files`]).

mod columns;
pub mod files;
pub mod latency;
mod manifest;
pub mod reader;
mod replace;
mod row;
pub mod threshold;

pub use columns::{neutralise, restore, Column};
pub use manifest::{axis_column, Conditions, Limits, Manifest, Shaping};
pub use replace::replace;
pub use row::{
    column, generator_bound, Row, Status, COLUMNS, DISTURBED_PCT, GENERATOR_BOUND_SHARE,
    RESULTS_HEADER,
};
