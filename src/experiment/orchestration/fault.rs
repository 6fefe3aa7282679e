//! Faults of the machine told from a model's: a step that failed because the results'
//! filesystem is full, or because the load generator's fd limit (the runner's, which
//! it inherits) cannot hold the step, says nothing of the model. The run stops there
//! with that reason (docs/scenarios.md), its manifest saying so.

use std::path::Path;

use crate::units::format_size;

/// Below this much free space on the results' filesystem, a step's files cannot have
/// been written whole.
const MIN_FREE_BYTES: u64 = 64 * 1024;

/// Why the failure of a step (its reason `failure`, its files under `out`) is the
/// machine's: the filesystem of `out` full; a write that met ENOSPC or EDQUOT; the load
/// generator's preflight refusing a plan this fd limit cannot hold. None: the model's.
/// A server's own EMFILE is not here: what a server does at its fd limit is measured.
pub fn machine_fault(out: &Path, failure: &str) -> Option<String> {
    if let Some(free) = free_bytes(out).filter(|f| *f < MIN_FREE_BYTES) {
        return Some(format!(
            "the filesystem of {} is full ({} free): {failure}",
            out.display(),
            format_size(free)
        ));
    }
    let disk = [libc::ENOSPC, libc::EDQUOT]
        .iter()
        .any(|e| failure.contains(&format!("(os error {e})")));
    // The words of the load's preflight (load::preflight::check_fds).
    let fds = failure.contains("RLIMIT_NOFILE");
    (disk || fds).then(|| format!("a fault of this machine, not of the model: {failure}"))
}

/// The bytes an unprivileged writer may still write on the filesystem of `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt as _;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes only into the zeroed struct it is given; the path is a
    // NUL-terminated string that outlives the call.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_faults_are_told_from_a_models() {
        let here = Path::new(".");
        assert_eq!(machine_fault(here, "3 of 3 connections reset"), None);
        assert_eq!(
            machine_fault(
                here,
                "server exited (exit status: 1): Too many open files (os error 24)"
            ),
            None,
            "a server at its fd limit is measured, not a fault"
        );
        let full =
            "load generator left no summary: writing x: No space left on device (os error 28)";
        assert!(machine_fault(here, full).unwrap().ends_with(full));
        let fds = "3 connections in one process need 67 file descriptors, but the limit is 64 \
                   (hard limit 64, RLIMIT_NOFILE)";
        assert!(machine_fault(here, fds).is_some());
        assert!(free_bytes(here).is_some());
    }
}
