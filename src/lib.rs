//! echolab: a laboratory for scalable TCP servers.
//!
//! One RFC 862 echo service on every classic Linux I/O model ([`server`]), a
//! load generator that verifies every echoed byte ([`load`]), an experiment
//! runner that sweeps load steps over the models ([`experiment`]) and a report
//! that turns the results into charts and a verdict ([`report`]). The runner writes a
//! results directory, whose schema and reader are [`results`]; the [`verdict`] decides
//! each figure with a test of significance ([`stats`]); [`claims`] judges the classic
//! study's claims against their sources; [`compare`] sets two results directories side
//! by side with the verdict's own test; [`plan`] predicts what each model would hold on
//! a machine from the unit costs a run measured; [`render`] draws the documents they compose.

pub mod claims;
pub mod compare;
pub mod console;
pub mod experiment;
pub mod load;
pub mod plan;
pub mod render;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod server;
pub mod stats;
pub mod sys;
pub mod units;
pub mod verdict;
