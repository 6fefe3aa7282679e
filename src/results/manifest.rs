//! manifest.json's schema: what was run, on what machine, with which limits, and
//! whether it finished; written by the runner, read by the report.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::column;
use crate::results::files::MANIFEST;
use crate::units::{format_size, trim_float};

/// manifest.json, as the runner writes it and the report reads it back. The runner
/// fills every field; the reader takes a default for any that is absent (a manifest
/// from an interrupted or an older run still gives a report, absent facts shown as
/// "unknown"), so the facts of the machine are options.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct Manifest {
    pub scenario_name: Option<String>,
    pub scenario_toml: Option<String>,
    pub scenario_description: Option<String>,
    /// The swept results.csv columns ([`axis_column`]: older manifests hold `[sweep]` keys).
    pub sweep_axes: Vec<String>,
    pub models: Vec<String>,
    pub repetitions: u32,
    /// `[claims] max_repetitions`, when the run may add repetitions to a claim left
    /// undecided: its claims are judged at the level of its looks ([`Manifest::looks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repetitions: Option<u32>,
    pub steps: Vec<String>,
    pub echolab_version: Option<String>,
    pub git_revision: Option<String>,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub cores: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub fd_limit_soft: Option<u64>,
    pub fd_limit_hard: Option<u64>,
    /// Name -> value, whitespace normalised (`32768 60999`); written as strings, read
    /// as any JSON value.
    pub sysctls: BTreeMap<String, serde_json::Value>,
    pub command: Option<String>,
    pub started_unix: Option<f64>,
    pub ended_unix: Option<f64>,
    /// True until the run ends normally, so a runner killed outright leaves a truthful manifest.
    pub interrupted: bool,
    /// running, complete, interrupted or stopped (a fault of the machine: `stop_reason`).
    pub status: String,
    /// Why a `stopped` run stopped: a fault of the machine (disk full, no fds) or an
    /// error of the runner, never a model's failure.
    pub stop_reason: Option<String>,
    pub duration_s: Option<f64>,
    /// The servers' cgroup limits and the client links' shaping.
    pub conditions: Conditions,
    /// A composite scenario's parts, each run into the folder of its name.
    pub parts: Vec<String>,
    /// Parts that could not run at all, with the reason (not root, too few fds).
    pub part_errors: BTreeMap<String, String>,
    /// `run --baseline DIR`: the results directory this run is compared against in its
    /// report (as given on the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

impl Manifest {
    /// The looks the run planned: one, unless it may add repetitions.
    pub fn looks(&self) -> crate::stats::Looks {
        let most = self.max_repetitions.unwrap_or(self.repetitions);
        crate::stats::Looks::planned(self.repetitions, most)
    }

    /// Writes manifest.json atomically ([`super::replace`]), so it is never half-written
    /// nor written through a planted link; a write that fails (a full disk) names the file.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(MANIFEST);
        let text = serde_json::to_string_pretty(self)? + "\n";
        let written = super::replace(&path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot replace {}: {e}", path.display()));
        if written.is_err() && rewrite_in_place(&path, &text).is_ok() {
            // A full disk has no room for a second copy, but the blocks of the first are
            // still this file's: rewritten in place, the manifest never keeps saying
            // `running` about a run that stopped.
            return Ok(());
        }
        written
    }

    /// Reads DIR/manifest.json; an error names the file (and the line and column of
    /// what cannot be read).
    pub fn read(dir: &Path) -> anyhow::Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} line {}, column {}: invalid manifest: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })
    }
}

/// Rewrites an existing manifest.json in its own blocks; a link at its name is refused
/// (O_NOFOLLOW), never written through.
fn rewrite_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(text.as_bytes())
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
    /// The server's own port in each direction (tbf), beside the client links' `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_rate_bit_s: Option<u64>,
}

impl Limits {
    /// `cpu 0.5 core, memory 256 MiB, tasks 2000`, for the report and messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cpu_quota {
            parts.push(format!("cpu {c} core"));
        }
        if let Some(m) = self.memory_max_bytes {
            parts.push(format!("memory {}", format_size(m)));
        }
        if let Some(t) = self.tasks_max {
            parts.push(format!("tasks {t}"));
        }
        parts.join(", ")
    }
}

impl Shaping {
    /// `100 Mbit/s, delay 0.2 ms (tbf)`, for the report and the console.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.rate_bit_s {
            parts.push(format!("{} Mbit/s", trim_float(r as f64 / 1e6)));
        }
        if let Some(d) = self.delay_ms {
            let jitter = self
                .jitter_ms
                .map_or(String::new(), |j| format!(" ± {} ms", trim_float(j)));
            parts.push(format!("delay {} ms{jitter}", trim_float(d)));
        }
        if let Some(l) = self.loss_pct {
            parts.push(format!("loss {}%", trim_float(l)));
        }
        if let Some(r) = self.server_rate_bit_s {
            parts.push(format!("server port {} Mbit/s", trim_float(r as f64 / 1e6)));
        }
        let mut text = parts.join(", ");
        if let Some(q) = &self.qdisc {
            text += &format!(" ({q})");
        }
        if let Some(n) = &self.note {
            text += &format!("; {n}");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_manifest_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = Manifest {
            scenario_name: Some("tiny".into()),
            models: vec!["poll".into()],
            cores: Some(2),
            sysctls: [("net.core.somaxconn".to_string(), "4096".into())].into(),
            started_unix: Some(1.5),
            interrupted: true,
            status: "running".into(),
            conditions: Conditions {
                server_limits: [(
                    "poll".to_string(),
                    Limits {
                        tasks_max: Some(9),
                        ..Limits::default()
                    },
                )]
                .into(),
                ..Conditions::default()
            },
            ..Manifest::default()
        };
        manifest.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), manifest);
    }

    #[test]
    fn a_manifest_missing_fields_reads_with_defaults_and_a_corrupt_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        fs::write(
            &path,
            "{\"models\": [\"epoll\"], \"sysctls\": {\"fs.nr_open\": 1048576}}",
        )
        .unwrap();
        let manifest = Manifest::read(dir.path()).unwrap();
        assert_eq!(manifest.models, ["epoll"]);
        assert_eq!(manifest.sysctls["fs.nr_open"], 1048576);
        assert_eq!((manifest.kernel, manifest.interrupted), (None, false));

        fs::write(&path, "{\"cores\": \"two\"}").unwrap();
        assert_eq!(
            Manifest::read(dir.path()).unwrap_err().to_string(),
            format!(
                "{} line 1, column 15: invalid manifest: invalid type: string \"two\", \
                 expected u64 at line 1 column 15",
                path.display()
            )
        );
    }

    #[test]
    fn manifest_json_has_its_fields_in_order() {
        let text = serde_json::to_string_pretty(&Manifest::default()).unwrap();
        let keys: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("  \"")?.split_once('"'))
            .map(|(key, _)| key)
            .collect();
        assert_eq!(
            keys,
            [
                "scenario_name",
                "scenario_toml",
                "scenario_description",
                "sweep_axes",
                "models",
                "repetitions",
                "steps",
                "echolab_version",
                "git_revision",
                "kernel",
                "cpu_model",
                "cores",
                "memory_bytes",
                "fd_limit_soft",
                "fd_limit_hard",
                "sysctls",
                "command",
                "started_unix",
                "ended_unix",
                "interrupted",
                "status",
                "stop_reason",
                "duration_s",
                "conditions",
                "parts",
                "part_errors",
            ]
        );
    }
}
