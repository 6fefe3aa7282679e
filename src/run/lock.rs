//! One live run per results directory: a run holds an exclusive flock(2) on the
//! directory's `.lock` file (which records its pid) from before it writes anything
//! until it exits; the kernel releases it when the run dies, even by SIGKILL.

use crate::results::files::{MANIFEST, RESULTS};
use std::fs::{self, File};
use std::io::{Read as _, Seek as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The lock file inside a results directory.
pub const LOCK_FILE: &str = ".lock";

/// The lock on a results directory: held while it lives (for the whole run).
pub struct Lock {
    _lock: File,
}

/// Locks `out` for this run: creates it, takes its lock, then refuses an earlier run's
/// results in it (a manifest.json or a results.csv) unless `force`, which removes them
/// first. A directory a live run holds is refused, `force` or not, naming that run.
/// The error is a usage error's message.
pub fn lock(out: &Path, force: bool) -> Result<Lock, String> {
    let shown = out.display();
    fs::create_dir_all(out).map_err(|e| format!("cannot create results directory {shown}: {e}"))?;
    let path = out.join(LOCK_FILE);
    let mut lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        // A link planted at the name is refused (ELOOP), never written through.
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| {
            format!(
                "cannot open {} (a regular file of its own): {e}",
                path.display()
            )
        })?;
    // SAFETY: flock takes an fd this function owns and changes nothing else.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("cannot lock {}: {error}", path.display()));
        }
        let pid = holder(&mut lock);
        return Err(format!(
            "--out {shown} belongs to a live run (pid {pid}): wait for it to end or choose \
             another directory (--force never removes a live run's results)"
        ));
    }
    let recorded = lock
        .set_len(0)
        .and_then(|()| lock.rewind())
        .and_then(|()| writeln!(lock, "{}", std::process::id()));
    recorded.map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    clear_old_run(out, force)?;
    Ok(Lock { _lock: lock })
}

/// The pid a live run recorded in its lock file (it does so just after taking the
/// lock: a moment is given to read it).
fn holder(lock: &mut File) -> String {
    let mut pid = String::new();
    for _ in 0..50 {
        pid.clear();
        let _ = lock.rewind().and_then(|()| lock.read_to_string(&mut pid));
        if !pid.trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    match pid.trim() {
        "" => "not yet recorded".to_string(),
        pid => pid.chars().take(20).collect(),
    }
}

/// The pid of the live run that holds `dir`'s lock, if one does: its results are still
/// being written. A shared lock taken and dropped at once never keeps a run out for
/// longer than this call.
pub fn live_run(dir: &Path) -> Option<String> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(LOCK_FILE))
        .ok()?;
    // SAFETY: flock takes an fd this function owns and changes nothing else.
    let held = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK);
    held.then(|| holder(&mut file))
}

/// Refuses a results directory an earlier run wrote (it has a manifest.json or a
/// results.csv) unless `force`, which removes everything in it but the lock first: a
/// report must never describe files of two runs.
fn clear_old_run(out: &Path, force: bool) -> Result<(), String> {
    let written = [MANIFEST, RESULTS].iter().any(|f| out.join(f).exists());
    if !written {
        return Ok(());
    }
    if !force {
        return Err(format!(
            "--out {} holds an earlier run's results: choose another directory, or add \
             --force to remove them first",
            out.display()
        ));
    }
    let cannot = |e: std::io::Error| {
        format!(
            "--force: cannot remove the earlier run in {}: {e}",
            out.display()
        )
    };
    for entry in fs::read_dir(out).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        if entry.file_name() == LOCK_FILE {
            continue;
        }
        let path = entry.path();
        let removed = if entry.file_type().map_err(cannot)?.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(cannot)?;
    }
    Ok(())
}
