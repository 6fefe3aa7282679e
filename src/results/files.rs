//! Every file of a results directory, named once: the run's own files, each step's
//! files, and the files the load generator writes into a step's `load/` folder (named
//! by the load generator, which writes them outside any run too, and re-exported here).

use std::path::{Path, PathBuf};

pub use crate::load::measurements::{
    CONNECTIONS, LATENCY_LOG, LOAD_SUMMARY, PERCENTILES, TIMELINE,
};

/// The run's manifest, at the results directory's top.
pub const MANIFEST: &str = "manifest.json";
/// One row per step and repetition, at the results directory's top.
pub const RESULTS: &str = "results.csv";

/// A step's folder of the load generator's outputs (merged, when the load was split).
pub const LOAD_DIR: &str = "load";
/// The server's own summary and per-connection log in a step's folder.
pub const SERVER_SUMMARY: &str = "server-summary.json";
pub const SERVER_LOG: &str = "server-log.csv";
/// The server's command line and its output in a step's folder.
pub const SERVER_COMMAND: &str = "server-command.txt";
pub const SERVER_STDOUT: &str = "server-stdout.txt";
pub const SERVER_STDERR: &str = "server-stderr.txt";
/// The load generators' command lines, and the merge's output when the load was split.
pub const LOAD_COMMAND: &str = "load-command.txt";
pub const MERGE_STDOUT: &str = "merge-stdout.txt";
pub const MERGE_STDERR: &str = "merge-stderr.txt";
/// The server process's probe (CPU, memory, fds) and its sockets' timeline in a step.
pub const PROBE: &str = "probe.csv";
pub const NET_TIMELINE: &str = "net-timeline.csv";
/// The step file naming each client host's shard folder and address (`host-1 198.18.0.11`),
/// and its name when it has one (`host-1 10.0.0.2 ssh://pc2`).
pub const LOAD_HOSTS: &str = "load-hosts.txt";
/// The step file with the server link's `tc -s qdisc show`, before and after the load
/// (`[network] server_rate`).
pub const SERVER_LINK: &str = "server-link.txt";

/// Where the notes of a repetition that could not be (fully) profiled are written.
pub const PROFILE_NOTES: &str = "profile-notes.txt";
/// The two sides a profiled repetition records, as its files' stems name them.
pub const PROFILED_SERVER: &str = "server";
pub const PROFILED_LOAD: &str = "load";

/// The folded stacks of one profiled side in a repetition's folder.
pub fn folded_path(dir: &Path, side: &str) -> PathBuf {
    dir.join(format!("{side}.folded"))
}

/// The flame graph of one profiled side in a repetition's folder.
pub fn flame_path(dir: &Path, side: &str) -> PathBuf {
    dir.join(format!("{side}-flame.svg"))
}
