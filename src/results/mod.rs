//! The results directory, below its writer ([`crate::experiment`]) and everything
//! that reads it: results.csv's columns and [`Row`] (each column declared once, in
//! `row.rs`), its reader ([`reader`]) and the latency logs' ([`latency`]), manifest.json's [`Manifest`] (read and written here),
//! the thresholds a run or a comparison judges its figures by ([`threshold`]), and the
//! name of a step's [`LOAD_HOSTS`] file.

mod columns;
pub mod latency;
mod manifest;
pub mod reader;
mod row;
pub mod threshold;

pub use columns::{neutralise, restore, Column};
pub use manifest::{axis_column, Conditions, Limits, Manifest, Shaping};
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
