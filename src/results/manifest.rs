//! manifest.json's schema: what was run, on what machine, with which limits, and
//! whether it finished; written by the runner, read by the report.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::column;

#[derive(Serialize, Debug, Clone)]
pub struct Manifest {
    pub scenario_name: String,
    pub scenario_toml: String,
    pub scenario_description: String,
    pub sweep_axes: Vec<String>,
    pub models: Vec<String>,
    pub repetitions: u32,
    pub steps: Vec<String>,
    pub echolab_version: String,
    pub git_revision: Option<String>,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub fd_limit_soft: u64,
    pub fd_limit_hard: u64,
    pub sysctls: BTreeMap<String, String>,
    pub command: String,
    pub started_unix: f64,
    pub ended_unix: Option<f64>,
    /// True until the run ends normally, so a runner killed outright leaves a truthful manifest.
    pub interrupted: bool,
    /// running, complete or interrupted.
    pub status: String,
    pub duration_s: Option<f64>,
    /// The servers' cgroup limits and the client links' shaping.
    pub conditions: Conditions,
    /// A composite scenario's parts, each run into the folder of its name.
    pub parts: Vec<String>,
    /// Parts that could not run at all, with the reason (not root, too few fds).
    pub part_errors: BTreeMap<String, String>,
}

impl Manifest {
    /// Writes manifest.json atomically (temp file, then rename), so it is never half-written;
    /// a write that fails (a full disk) removes its temp file and names the file.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let tmp = dir.join("manifest.json.tmp");
        let path = dir.join("manifest.json");
        let written = fs::write(&tmp, serde_json::to_string_pretty(self)? + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))
            .and_then(|()| {
                fs::rename(&tmp, &path)
                    .map_err(|e| anyhow::anyhow!("cannot replace {}: {e}", path.display()))
            });
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}

/// The results.csv column of a sweep axis named as the scenario's `[sweep]` names it.
pub fn axis_column(key: &str) -> &str {
    match key {
        "delay" => column::DELAY_MS,
        "requests" => column::REQUESTS_PER_CONN,
        "hosts" => column::CLIENT_HOSTS,
        other => other,
    }
}

/// The conditions of a run, in manifest.json: each limited model's cgroup limits
/// and the client links' shaping.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Conditions {
    /// Model label -> its limits (only models that have some).
    pub server_limits: std::collections::BTreeMap<String, Limits>,
    /// As asked for until the links are shaped, then as applied.
    pub network: Option<Shaping>,
    /// The namespace lab's sysctls as read back in its namespaces (`[hosts]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_sysctls: Option<std::collections::BTreeMap<String, String>>,
}

/// The limits of one server; recorded in the manifest as written here.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Limits {
    /// CPU cores' worth of time per period (0.5 = half of one core).
    pub cpu_quota: Option<f64>,
    pub memory_max_bytes: Option<u64>,
    pub tasks_max: Option<u64>,
}

/// The shaping of the client links, as asked for and (once applied) how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shaping {
    pub rate_bit_s: Option<u64>,
    pub delay_ms: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub loss_pct: Option<f64>,
    /// The qdisc that shapes (`tbf` or `netem`); None until applied.
    pub qdisc: Option<String>,
    /// What was not applied and why (netem_optional on a kernel without netem).
    pub note: Option<String>,
}
