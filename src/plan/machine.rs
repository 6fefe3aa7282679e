//! This machine's limits, the defaults of a plan: its cores, the memory a staircase
//! would let connections take, its fd limit, the threads it may still start and its
//! memory maps per process, read from /proc and getrlimit; or the machine a run was on,
//! from its manifest.

use super::model::Machine;
use crate::results::Manifest;
use crate::scenario::default_keep_available;
use crate::sys::meminfo_bytes;

/// A /proc file's first number (`/proc/sys/kernel/pid_max`).
fn proc_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Cores this process may run on.
pub fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

/// The memory connections may take here: MemAvailable less the margin a staircase
/// keeps ([`default_keep_available`]), so the prediction is where a staircase stops.
pub fn memory_bytes() -> u64 {
    let total = meminfo_bytes("MemTotal:").unwrap_or(0);
    meminfo_bytes("MemAvailable:")
        .unwrap_or(0)
        .saturating_sub(default_keep_available(total))
}

/// The hard RLIMIT_NOFILE: the runner raises every process's soft limit to it.
pub fn fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the rlimit we own; it has no other effect.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if read {
        limit.rlim_max
    } else {
        1024
    }
}

/// The threads the machine may start: the smaller of pid_max and threads-max.
pub fn pid_max() -> u64 {
    let pid_max = proc_number("/proc/sys/kernel/pid_max").unwrap_or(32_768);
    let threads_max = proc_number("/proc/sys/kernel/threads-max").unwrap_or(pid_max);
    pid_max.min(threads_max)
}

/// Threads running now on the machine (the fourth field of /proc/loadavg, `2/345`):
/// they hold pids a server cannot have.
pub fn threads_running() -> u64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| {
            let field = t.split_whitespace().nth(3)?;
            field.split_once('/')?.1.parse().ok()
        })
        .unwrap_or(0)
}

/// `vm.max_map_count`.
pub fn max_map_count() -> u64 {
    proc_number("/proc/sys/vm/max_map_count").unwrap_or(65_530)
}

/// The machine a run was on, as its manifest recorded it: its cores, MemTotal less a
/// staircase's margin (the manifest has no MemAvailable), the hard fd limit, the smaller
/// of pid_max and threads-max, `vm.max_map_count`; the load on it too, as the run had it.
/// None when the manifest lacks the cores, memory or fd limit.
pub fn of_manifest(manifest: &Manifest) -> Option<Machine> {
    let sysctl = |name: &str| -> Option<u64> {
        match manifest.sysctls.get(name)? {
            serde_json::Value::String(s) => s.trim().parse().ok(),
            serde_json::Value::Number(n) => n.as_u64(),
            _ => None,
        }
    };
    let memory = manifest.memory_bytes?;
    Some(Machine {
        cores: manifest.cores? as f64,
        memory_bytes: memory.saturating_sub(default_keep_available(memory)),
        fd_limit: manifest.fd_limit_hard?,
        processes: 1,
        threads: match (sysctl("kernel.pid_max"), sysctl("kernel.threads-max")) {
            (Some(p), Some(t)) => p.min(t),
            (p, t) => p.or(t).unwrap_or(32_768),
        },
        max_map_count: sysctl("vm.max_map_count").unwrap_or(65_530),
        with_load: true,
    })
}
