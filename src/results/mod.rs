//! The schema of a results directory, below both its writer ([`crate::experiment`])
//! and its reader ([`crate::report`]): results.csv's columns and [`Row`], and
//! manifest.json's [`Manifest`].

mod columns;
mod manifest;
mod row;

pub use columns::Column;

pub use manifest::{axis_column, Conditions, Limits, Manifest, Shaping};
pub use row::{
    column, generator_bound, Row, Status, COLUMNS, DISTURBED_PCT, GENERATOR_BOUND_SHARE,
    RESULTS_HEADER,
};
