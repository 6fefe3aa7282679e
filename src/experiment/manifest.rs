//! manifest.json's facts: what was run, on what machine, with which limits, and whether
//! it finished ([`crate::results::Manifest`] is its schema).

use std::collections::BTreeMap;
use std::fs;

use crate::results::{axis_column, Conditions, Manifest};
use crate::sys::unix_now;

/// The sysctls that bound what a connection-heavy experiment can do.
const SYSCTLS: [&str; 15] = [
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_max_tw_buckets",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_mem",
    "fs.file-max",
    "fs.nr_open",
    "kernel.threads-max",
    "kernel.pid_max",
    "vm.max_map_count",
    "vm.overcommit_memory",
];

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The value of a sysctl, whitespace normalised (`32768 60999`).
pub fn sysctl(name: &str) -> Option<String> {
    read_trimmed(&format!("/proc/sys/{}", name.replace('.', "/")))
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn memory_bytes() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// The revision of the source tree the binary was built from, when it is still a git checkout.
fn git_revision() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Manifest {
    /// The manifest of a run of `scenario` starting now; `limits` is the fd limit the
    /// run has, as the caller raised it (`sys::raise_fd_limit`), None when unknown.
    pub fn new(
        scenario: &crate::scenario::Scenario,
        limits: Option<crate::sys::FdLimit>,
    ) -> Manifest {
        let kernel = format!(
            "{} {}",
            read_trimmed("/proc/sys/kernel/ostype").unwrap_or_else(|| "Linux".into()),
            read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default()
        );
        Manifest {
            scenario_name: Some(scenario.name.clone()),
            scenario_toml: Some(scenario.toml.clone()),
            scenario_description: Some(scenario.description.clone()),
            sweep_axes: scenario
                .sweep_axes
                .iter()
                .map(|s| axis_column(s).to_string())
                .collect(),
            models: scenario.models.iter().map(|m| m.label.clone()).collect(),
            repetitions: scenario.repetitions,
            max_repetitions: (scenario.max_repetitions > scenario.repetitions)
                .then_some(scenario.max_repetitions),
            steps: scenario.steps.iter().map(|s| s.name.clone()).collect(),
            echolab_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            git_revision: git_revision(),
            kernel: Some(kernel),
            cpu_model: Some(cpu_model()),
            cores: Some(std::thread::available_parallelism().map_or(1, |n| n.get() as u64)),
            memory_bytes: Some(memory_bytes()),
            fd_limit_soft: Some(limits.map_or(0, |l| l.soft)),
            fd_limit_hard: Some(limits.map_or(0, |l| l.hard)),
            sysctls: SYSCTLS
                .iter()
                .filter_map(|name| sysctl(name).map(|v| (name.to_string(), v.into())))
                .collect(),
            command: Some(std::env::args().collect::<Vec<_>>().join(" ")),
            started_unix: Some(unix_now()),
            ended_unix: None,
            interrupted: true,
            status: "running".into(),
            stop_reason: None,
            duration_s: None,
            conditions: Conditions::of(scenario),
            parts: scenario.parts.iter().map(|p| p.name.clone()).collect(),
            part_errors: BTreeMap::new(),
            baseline: None,
        }
    }

    /// Marks the run stopped before its end by `reason`, a fault of the machine or an
    /// error of the runner: never `complete`, never `running`.
    pub fn stop(&mut self, reason: String) {
        self.finish(true);
        self.status = "stopped".into();
        self.stop_reason = Some(reason);
    }

    /// Marks the run ended (interrupted or complete).
    pub fn finish(&mut self, interrupted: bool) {
        let now = unix_now();
        self.ended_unix = Some(now);
        self.duration_s = self.started_unix.map(|started| now - started);
        self.interrupted = interrupted;
        self.status = if interrupted {
            "interrupted"
        } else {
            "complete"
        }
        .into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_no_temp_file_and_names_the_file() {
        let scenario =
            crate::scenario::parse("t", "tiny", "models=[\"poll\"]\n[load]\nrequests=1\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        // A directory where manifest.json should be: the rename fails after the temp is written.
        fs::create_dir(dir.path().join("manifest.json")).unwrap();
        let e = Manifest::new(&scenario, None)
            .write(dir.path())
            .unwrap_err();
        assert!(e.to_string().contains("manifest.json"), "{e}");
        // Nothing is left beside it: no temporary file, whatever its name.
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["manifest.json"]);
    }

    #[test]
    fn manifest_describes_machine_and_run() {
        let scenario =
            crate::scenario::parse("t", "tiny", "models=[\"poll\"]\n[load]\nrequests=1\n").unwrap();
        let mut m = Manifest::new(&scenario, None);
        assert_eq!(m.scenario_name.as_deref(), Some("tiny"));
        assert_eq!(m.models, ["poll"]);
        assert_eq!(m.steps, ["c10-s64"]);
        assert!(m.kernel.as_ref().unwrap().starts_with("Linux "));
        assert!(m.cores >= Some(1) && m.memory_bytes > Some(0));
        assert_eq!(
            m.sysctls
                .get("net.ipv4.ip_local_port_range")
                .and_then(|v| v.as_str())
                .map(|v| v.split(' ').count()),
            Some(2)
        );
        assert!(m.interrupted && m.ended_unix.is_none());
        m.finish(false);
        assert!(!m.interrupted);
        assert_eq!(m.status, "complete");
        let dir = std::env::temp_dir().join(format!("echolab-manifest-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        m.write(&dir).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        for key in [
            "scenario_name",
            "scenario_toml",
            "sweep_axes",
            "models",
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
            "duration_s",
        ] {
            assert!(v.get(key).is_some(), "manifest lacks {key}");
        }
        assert_eq!(v["interrupted"], serde_json::Value::Bool(false));
        let swept = crate::scenario::parse(
            "t",
            "t",
            "models=[\"poll\"]\n[load]\nrequests=1\n[sweep]\ndelay=[\"1ms\",\"2ms\"]\n",
        )
        .unwrap();
        assert_eq!(Manifest::new(&swept, None).sweep_axes, ["delay_ms"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
