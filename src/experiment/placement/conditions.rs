//! A weak machine for the server: a cgroup of its own, created by the runner for
//! one server and removed after it, with the CPU quota, memory cap and task cap a
//! scenario names (`[server] cpu_quota`, `memory_max`, `tasks_max`).
//!
//! cgroup v2 is used when the runner's own v2 group delegates the cpu, memory and
//! pids controllers; otherwise each v1 hierarchy (`/sys/fs/cgroup/cpu`, `memory`,
//! `pids`) gets a group. Groups are made beneath the runner's own group in each
//! hierarchy, so the host's accounting and limits still cover the server, and
//! only groups named `echolab-<runner pid>-<n>` are ever created, written or
//! removed: the host's own groups are only read. A runner killed outright leaves
//! its groups behind, with any daemon a command server double-forked still inside;
//! the next run kills what is left in those whose owner is gone and removes them.
//!
//! The server joins its group in the child before exec (the fds of the
//! `cgroup.procs` files are opened here, written `0` there), so it is limited
//! from its first instruction on.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::results::{Conditions, Limits, Shaping};
use crate::scenario::ServerOptions;
use crate::units::format_size;

/// The message for a machine where the runner cannot make cgroups.
pub const NEEDS: &str = "cpu_quota, memory_max and tasks_max need root and cgroups \
                         (v2 with the cpu, memory and pids controllers, or the v1 hierarchies)";
/// The beginning of every group name this module makes.
const NAME_STEM: &str = "echolab-";
/// The CFS period the quota is a share of (the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

// `Limits` and `Conditions` are manifest.json's, declared in crate::results; here is how
// the runner finds and applies them.
impl Limits {
    /// The limits an entry's options ask for; None when there are none.
    pub fn of(options: &ServerOptions) -> Option<Limits> {
        let limits = Limits {
            cpu_quota: options.cpu_quota.map(|c| c.0),
            memory_max_bytes: options.memory_max.map(|b| b.0),
            tasks_max: options.tasks_max.map(|t| t.0),
        };
        (limits != Limits::default()).then_some(limits)
    }

    /// The CFS quota for a period of [`CPU_PERIOD_US`].
    fn quota_us(cores: f64) -> u64 {
        ((cores * CPU_PERIOD_US as f64).round() as u64).max(1000)
    }

    /// The (v1 controller, file, value) writes that set these limits.
    fn v1_writes(&self) -> Vec<(&'static str, &'static str, String)> {
        let mut w = Vec::new();
        if let Some(c) = self.cpu_quota {
            w.push(("cpu", "cpu.cfs_period_us", CPU_PERIOD_US.to_string()));
            w.push(("cpu", "cpu.cfs_quota_us", Self::quota_us(c).to_string()));
        }
        if let Some(m) = self.memory_max_bytes {
            w.push(("memory", "memory.limit_in_bytes", m.to_string()));
            // With swap the cap would push pages out instead of killing: swap counts too.
            w.push(("memory", "memory.memsw.limit_in_bytes", m.to_string()));
        }
        if let Some(t) = self.tasks_max {
            w.push(("pids", "pids.max", t.to_string()));
        }
        w
    }

    /// The (file, value) writes that set these limits on a v2 group.
    fn v2_writes(&self) -> Vec<(&'static str, String)> {
        let mut w = Vec::new();
        if let Some(c) = self.cpu_quota {
            w.push(("cpu.max", format!("{} {CPU_PERIOD_US}", Self::quota_us(c))));
        }
        if let Some(m) = self.memory_max_bytes {
            w.push(("memory.max", m.to_string()));
            w.push(("memory.swap.max", "0".to_string()));
        }
        if let Some(t) = self.tasks_max {
            w.push(("pids.max", t.to_string()));
        }
        w
    }

    /// The controllers these limits need.
    fn controllers(&self) -> Vec<&'static str> {
        let mut c = Vec::new();
        if self.cpu_quota.is_some() {
            c.push("cpu");
        }
        if self.memory_max_bytes.is_some() {
            c.push("memory");
        }
        if self.tasks_max.is_some() || c.is_empty() {
            // No limit: a group only to contain the server (see Cgroup::contain).
            c.push("pids");
        }
        c
    }
}

impl Conditions {
    pub fn of(scenario: &crate::scenario::Scenario) -> Conditions {
        Conditions {
            server_limits: scenario
                .models
                .iter()
                .filter_map(|m| Limits::of(&m.options).map(|l| (m.label.clone(), l)))
                .collect(),
            network: scenario.network.as_ref().map(Shaping::requested),
            lab_sysctls: None,
        }
    }
}

/// One group per hierarchy (v1) or one group (v2), removed on drop.
#[derive(Debug)]
pub struct Cgroup {
    /// The directories made, with the controller each is for ("" for v2).
    dirs: Vec<(&'static str, PathBuf)>,
    /// Open `cgroup.procs` files the child writes itself into before exec.
    procs: Vec<OwnedFd>,
    limits: Limits,
    v2: bool,
}

/// The runner's own group path in each hierarchy, from /proc/self/cgroup
/// (`4:memory:/a/b`, `0::/a/b` for v2).
fn own_paths(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers.to_string(), path.to_string()))
        })
        .collect()
}

/// The v1 mount of `controller` and the runner's group beneath it.
fn v1_parent(controller: &str, own: &[(String, String)]) -> Option<PathBuf> {
    let path = own
        .iter()
        .find(|(c, _)| c.split(',').any(|c| c == controller))
        .map(|(_, p)| p.clone())?;
    // Mounts are named by their controllers (`cpu`, or `cpu,cpuacct` with symlinks).
    let mount = Path::new(CGROUP_ROOT).join(controller);
    let parent = mount.join(path.trim_start_matches('/'));
    if parent.join("cgroup.procs").exists() {
        Some(parent)
    } else {
        // A namespaced view shows the runner's group as the mount's root.
        mount.join("cgroup.procs").exists().then_some(mount)
    }
}

/// The runner's v2 group when it delegates every controller in `needed`.
fn v2_parent(needed: &[&str], own: &[(String, String)]) -> Option<PathBuf> {
    let path = own.iter().find(|(c, _)| c.is_empty()).map(|(_, p)| p)?;
    let mount = [
        Path::new(CGROUP_ROOT),
        &Path::new(CGROUP_ROOT).join("unified"),
    ]
    .into_iter()
    .find(|m| m.join("cgroup.controllers").exists())?
    .to_path_buf();
    let parent = mount.join(path.trim_start_matches('/'));
    let parent = if parent.join("cgroup.controllers").exists() {
        parent
    } else {
        mount
    };
    let enabled = fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
    needed
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == *c))
        .then_some(parent)
}

/// The pid in a group name made by this module (`echolab-1234-7` -> 1234).
fn owner_of(name: &str) -> Option<u32> {
    let (digits, _) = name.strip_prefix(NAME_STEM)?.split_once('-')?;
    digits.parse().ok()
}

/// Groups left by runners that are gone, beneath the runner's own groups: every process
/// still in one (a daemon a command server double-forked, which a runner killed by
/// SIGKILL could not take along) is killed, then the group is removed. Returns the
/// groups removed and how many processes were killed.
pub fn remove_leftovers() -> (Vec<PathBuf>, usize) {
    let own = own_paths(&fs::read_to_string("/proc/self/cgroup").unwrap_or_default());
    let mut parents: Vec<PathBuf> = ["cpu", "memory", "pids"]
        .iter()
        .filter_map(|c| v1_parent(c, &own))
        .collect();
    parents.extend(v2_parent(&[], &own));
    let (mut removed, mut killed) = (Vec::new(), 0);
    for parent in parents {
        let Ok(entries) = fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let gone = owner_of(&name).is_some_and(|pid| {
                !fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim_end().starts_with("echolab"))
            });
            if !gone {
                continue;
            }
            killed += kill_members(&entry.path(), Instant::now() + Duration::from_secs(2));
            if remove_when_empty(&entry.path()) {
                removed.push(entry.path());
            }
        }
    }
    (removed, killed)
}

/// The pids in the group `dir`.
fn members(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

/// Kills every process of the group `dir`, again until none is left (a process forking
/// while the list is read appears in the next read) or `deadline`; returns how many
/// distinct processes were signalled.
fn kill_members(dir: &Path, deadline: Instant) -> usize {
    // cgroup v2: frozen, nothing forks while the list is read; and the one-write kill,
    // where the kernel has it. v1's `pids` hierarchy has neither: kill until empty.
    let _ = fs::write(dir.join("cgroup.freeze"), "1");
    let _ = fs::write(dir.join("cgroup.kill"), "1");
    super::process::kill_until_gone(deadline, || members(dir))
}

/// Removes the group `dir` once its killed members have left (they take a moment; a
/// group with members cannot be removed), killing again any that remain; at most five
/// seconds. Whether it was removed.
fn remove_when_empty(dir: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while fs::remove_dir(dir).is_err() && Instant::now() < deadline {
        kill_members(dir, Instant::now());
        std::thread::sleep(Duration::from_millis(20));
    }
    !dir.exists()
}

/// A group name unique within this runner.
fn next_name() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{NAME_STEM}{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

fn write(path: &Path, value: &str) -> anyhow::Result<()> {
    fs::write(path, value).with_context(|| format!("cannot write {value} to {}", path.display()))
}

impl Cgroup {
    /// Creates a group with `limits`. On any error, whatever was made is removed.
    pub fn create(limits: Limits) -> anyhow::Result<Cgroup> {
        if !crate::sys::is_root() {
            anyhow::bail!("{NEEDS}: this process is not root");
        }
        let own = own_paths(&fs::read_to_string("/proc/self/cgroup").unwrap_or_default());
        let name = next_name();
        let needed = limits.controllers();
        let mut group = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
            limits,
            v2: false,
        };
        if let Some(parent) = v2_parent(&needed, &own) {
            group.v2 = true;
            let dir = parent.join(&name);
            fs::create_dir(&dir)
                .with_context(|| format!("{NEEDS}: cannot create {}", dir.display()))?;
            group.dirs.push(("", dir.clone()));
            for (file, value) in limits.v2_writes() {
                // memory.swap.max is absent on a kernel without swap accounting: nothing to cap.
                if file == "memory.swap.max" && !dir.join(file).exists() {
                    continue;
                }
                write(&dir.join(file), &value)?;
            }
        } else {
            for controller in needed {
                let parent = v1_parent(controller, &own).ok_or_else(|| {
                    anyhow::anyhow!("{NEEDS}: no cgroup v2 delegation of `{controller}` and no v1 `{controller}` hierarchy under {CGROUP_ROOT}")
                })?;
                let dir = parent.join(&name);
                fs::create_dir(&dir)
                    .with_context(|| format!("{NEEDS}: cannot create {}", dir.display()))?;
                group.dirs.push((controller, dir));
            }
            for (controller, file, value) in limits.v1_writes() {
                let dir = &group.dir_of(controller).expect("made above");
                // memsw exists only with swap accounting; without it there is no swap to cap.
                if file.contains("memsw") && !dir.join(file).exists() {
                    continue;
                }
                write(&dir.join(file), &value)?;
            }
        }
        for (_, dir) in &group.dirs {
            let path = dir.join("cgroup.procs");
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            group.procs.push(file.into());
        }
        Ok(group)
    }

    /// A group with no limit, only to contain a server and every process it forks
    /// (a daemon that double-forks or calls setsid cannot leave it), as a service
    /// manager does; [`Cgroup::kill_all`] ends them all.
    pub fn contain() -> anyhow::Result<Cgroup> {
        Cgroup::create(Limits::default())
    }

    /// Kills every process of the group, again until none is left; at most two seconds.
    pub fn kill_all(&self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        for (_, dir) in &self.dirs {
            kill_members(dir, deadline);
        }
    }

    fn dir_of(&self, controller: &str) -> Option<PathBuf> {
        self.dirs
            .iter()
            .find(|(c, _)| self.v2 || *c == controller)
            .map(|(_, d)| d.clone())
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// `v2` or `v1`, for the manifest.
    pub fn version(&self) -> &'static str {
        if self.v2 {
            "v2"
        } else {
            "v1"
        }
    }

    /// The `cgroup.procs` fds a child writes `0` into before exec (see sys::spawn).
    pub fn procs_fds(&self) -> Vec<i32> {
        self.procs.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// How many times the kernel's OOM killer killed a process of this group.
    pub fn oom_kills(&self) -> u64 {
        let Some(dir) = self.dir_of("memory") else {
            return 0;
        };
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        let counter = fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|t| counter(&t, "oom_kill"))
            .unwrap_or(0);
        if counter > 0 || self.v2 {
            return counter;
        }
        // Kernels without oom_kill in oom_control: the cap was hit (failcnt) and
        // the caller sees the SIGKILL.
        0
    }

    /// Whether the memory cap was ever reached (v1 failcnt, v2 `max` events).
    pub fn memory_cap_hit(&self) -> bool {
        let Some(dir) = self.dir_of("memory") else {
            return false;
        };
        if self.v2 {
            fs::read_to_string(dir.join("memory.events"))
                .ok()
                .and_then(|t| counter(&t, "max"))
                .is_some_and(|n| n > 0)
        } else {
            fs::read_to_string(dir.join("memory.failcnt"))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .is_some_and(|n| n > 0)
        }
    }

    /// The step's failure reason when the server was killed for memory: the group's
    /// OOM counter, or a SIGKILL (`killed`) after the cap was reached.
    pub fn oom_reason(&self, killed: bool) -> Option<String> {
        let cap = self.limits.memory_max_bytes?;
        (self.oom_kills() > 0 || (killed && self.memory_cap_hit()))
            .then(|| format!("oom-killed at {}", format_size(cap)))
    }
}

/// The value of `key N` in a flat-keyed cgroup file.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.procs.clear();
        for (_, dir) in self.dirs.drain(..).rev() {
            if !remove_when_empty(&dir) {
                crate::errln!("warning: cgroup {} not removed", dir.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_counters_and_writes() {
        let own = own_paths("4:memory:/process_api/ab\n1:cpu,cpuacct:/\n0::/user.slice\n");
        assert_eq!(own[0], ("memory".into(), "/process_api/ab".into()));
        assert_eq!(own[2], ("".into(), "/user.slice".into()));
        assert_eq!(owner_of("echolab-1234-7"), Some(1234));
        assert_eq!(owner_of("echolab-x-7"), None);
        assert_eq!(owner_of("system.slice"), None);
        let oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(counter(oom, "oom_kill"), Some(2));
        assert_eq!(counter(oom, "oom"), None);
        let limits = Limits {
            cpu_quota: Some(0.5),
            memory_max_bytes: Some(256 << 20),
            tasks_max: Some(2000),
        };
        assert_eq!(
            limits.describe(),
            "cpu 0.5 core, memory 256 MiB, tasks 2000"
        );
        let w = limits.v1_writes();
        assert!(w.contains(&("cpu", "cpu.cfs_quota_us", "50000".into())));
        assert!(w.contains(&("memory", "memory.limit_in_bytes", "268435456".into())));
        assert!(w.contains(&("pids", "pids.max", "2000".into())));
        assert!(limits
            .v2_writes()
            .contains(&("cpu.max", "50000 100000".into())));
        assert_eq!(limits.controllers(), ["cpu", "memory", "pids"]);
    }
}
