//! The schema of a results directory, below both its writer ([`crate::experiment`])
//! and its reader ([`crate::report`]): results.csv's columns and [`Row`] (each column
//! declared once, in `row.rs`), manifest.json's [`Manifest`] (read and written here),
//! the thresholds a run or a comparison judges its figures by ([`threshold`]), how a
//! file in it is written whole ([`replace`]), and the name of a step's [`LOAD_HOSTS`] file.

mod columns;
mod manifest;
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

/// The step file naming each client host's shard folder and address (`host-1 198.18.0.11`),
/// and its name when it has one (`host-1 10.0.0.2 ssh://pc2`).
pub const LOAD_HOSTS: &str = "load-hosts.txt";
/// The step file with the server link's `tc -s qdisc show`, before and after the load
/// (`[network] server_rate`).
pub const SERVER_LINK: &str = "server-link.txt";
