//! echolab: a laboratory for scalable TCP servers.
//!
//! One RFC 862 echo service on every classic Linux I/O model ([`server`]), a
//! load generator that verifies every echoed byte ([`load`]), an experiment
//! runner that sweeps load steps over the models ([`experiment`]) and a report
//! that turns the results into charts and a verdict ([`report`]), whose every
//! comparison is a test of significance ([`stats`]). The runner writes and the
//! report reads a results directory, whose schema is [`results`]; [`compare`] sets two
//! results directories side by side with the verdict's own test.

pub mod compare;
pub mod console;
pub mod experiment;
pub mod load;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod server;
pub mod stats;
pub mod sys;
pub mod units;
