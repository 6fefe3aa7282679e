//! Orchestration: a scenario's models run over its steps and repetitions, one process
//! set at a time, and each row written as it is judged.
//!
//! - [`runner`]: the sweep: every model over every step and repetition.
//! - [`step`]: one step as processes: start the server and the load, collect what they left.
//! - [`staircase`]: the staircase load shape: one live server, connections added in batches.
//! - [`session`]: a server started at a placement with its observers and load agents,
//!   watched and stopped: what a step and a stair share.
//! - [`results_csv`]: results.csv written row by row ([`crate::results`] is its schema) and
//!   the comparison table.
//! - [`order`]: each round's model order, shuffled by a seed and written to order.csv.
//! - [`progress`]: the run's progress over its rows, on a bar or as lines.
//! - [`fault`]: a step failed by the machine (disk full, no fds), told from a model's.

pub mod fault;
pub mod order;
pub mod progress;
pub mod results_csv;
pub mod runner;
pub mod session;
pub mod staircase;
pub mod step;
