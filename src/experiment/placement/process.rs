//! The runner's children, which never outlive it, and the runner's own SIGINT/SIGTERM
//! (both through [`crate::sys`]).
//!
//! Every child (server or load generator) is started with PR_SET_PDEATHSIG =
//! SIGKILL, so even a runner killed by SIGKILL takes its children with it, and
//! in its own process group, so a terminal's Ctrl-C reaches only the runner,
//! which then stops the current step in order (load first, so it flushes its
//! partial results, then the server, so it writes its summary). A [`Guard`]
//! kills the child's whole group on every other way out.

use std::io::{self, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub use crate::sys::signal::{stop_requested, stop_signal};
pub use crate::sys::spawn::cpu_set;
use crate::sys::spawn::Supervision;

/// SIGKILLs every pid `alive` lists, again until it lists none (a process forking while
/// the list is read appears in the next read) or `deadline`; returns how many distinct
/// pids were signalled. The callers list only processes echolab started: a group's
/// members, or the descendants of a `remote run`.
pub fn kill_until_gone(deadline: Instant, mut alive: impl FnMut() -> Vec<i32>) -> usize {
    let mut signalled = std::collections::BTreeSet::new();
    loop {
        let pids = alive();
        if pids.is_empty() || Instant::now() >= deadline {
            return signalled.len();
        }
        for pid in pids {
            // SAFETY: kill has no memory preconditions; the pid is one echolab started
            // (see above), so no stranger is signalled.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            signalled.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Makes SIGINT and SIGTERM set the stop flag instead of killing the runner.
pub fn install_stop_handlers() -> io::Result<()> {
    crate::sys::signal::install()
}

/// Starts `program args` as a child that dies with the runner, in its own process
/// group, pinned to `cpus` when given.
pub fn spawn(
    program: &Path,
    args: &[String],
    cpus: Option<libc::cpu_set_t>,
    stdout: Stdio,
    stderr: Stdio,
) -> io::Result<Guard> {
    spawn_in(program, args, cpus, &[], stdout, stderr)
}

/// Like [`spawn`], the child joining the cgroups whose open `cgroup.procs` files are
/// `cgroup_procs` before it execs.
pub fn spawn_in(
    program: &Path,
    args: &[String],
    cpus: Option<libc::cpu_set_t>,
    cgroup_procs: &[libc::c_int],
    stdout: Stdio,
    stderr: Stdio,
) -> io::Result<Guard> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let child = Supervision::new(libc::SIGKILL)
        .own_group()
        .pinned(cpus)
        .in_cgroups(cgroup_procs)
        .spawn(&mut command)?;
    Ok(Guard {
        child,
        relay: None,
        status: None,
    })
}

/// Starts `program args` (an `ssh` to a host) as [`spawn`] does, its stdin the pipe
/// `echolab remote run` reads on the far side: signals other than SIGKILL are written
/// there as numbers, for the remote process group; SIGKILL kills `ssh`, which ends
/// the session, and with it the remote group.
pub fn spawn_relayed(
    program: &Path,
    args: &[String],
    stdout: Stdio,
    stderr: Stdio,
) -> io::Result<Guard> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(stderr);
    let mut child = Supervision::new(libc::SIGKILL)
        .own_group()
        .spawn(&mut command)?;
    Ok(Guard {
        relay: child.stdin.take(),
        child,
        status: None,
    })
}

/// A running child; dropping it kills the child's process group and reaps the child.
pub struct Guard {
    pub child: Child,
    /// The stdin of an `ssh` whose far side relays signals ([`spawn_relayed`]).
    relay: Option<ChildStdin>,
    status: Option<ExitStatus>,
}

impl Guard {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the child's whole process group (it and the processes it forked).
    pub fn signal_group(&self, signal: i32) {
        if let Some(mut relay) = self.relay.as_ref().filter(|_| signal != libc::SIGKILL) {
            // A session already gone has nothing left to signal.
            let _ = writeln!(relay, "{signal}");
            return;
        }
        // SAFETY: kill has no memory preconditions; the group id is the child's pid
        // (setpgid(0, 0) in the child), so no unrelated group is targeted.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), signal);
        }
    }

    /// The exit status if the child has exited (reaping it).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits up to `timeout` for the child to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Asks the group to stop with `signal`, waits up to `grace`, then kills it.
    /// Returns the exit status and whether it had to be killed.
    pub fn stop(&mut self, signal: i32, grace: Duration) -> (Option<ExitStatus>, bool) {
        if let Some(status) = self.try_wait() {
            self.signal_group(libc::SIGKILL);
            return (Some(status), false);
        }
        self.signal_group(signal);
        let status = self.wait_timeout(grace);
        // Forked copies (--processes) may linger after their parent: kill the whole group.
        self.signal_group(libc::SIGKILL);
        match status {
            Some(status) => (Some(status), false),
            None => (self.wait_timeout(Duration::from_secs(5)), true),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.signal_group(libc::SIGKILL);
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The last line of a file (a child's stderr), for failure reasons: read from its last
/// 64 KiB, however much the child wrote.
pub(crate) fn tail(path: &Path) -> String {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let _ = file
            .seek(SeekFrom::End(-(64 * 1024)))
            .or_else(|_| file.rewind().map(|()| 0));
        let _ = file.take(64 * 1024).read_to_end(&mut bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    // Quoted in the terminal, results.csv and the report: escaped and bounded.
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| crate::units::escape_controls(l, 500))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        // A zombie has exited; only its parent has not collected it yet.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
            .unwrap_or(false)
    }

    #[test]
    fn guard_kills_the_whole_group_and_pins() {
        let set = cpu_set(&[0]);
        assert!(set.is_some());
        assert!(cpu_set(&[100_000]).is_none());
        let guard = spawn(
            Path::new("sh"),
            &["-c".into(), "sleep 30 & sleep 30 & wait".into()],
            set,
            Stdio::null(),
            Stdio::null(),
        )
        .unwrap();
        let pid = guard.pid();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut tree = crate::experiment::measurement::probe::process_tree(pid);
        while tree.len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            tree = crate::experiment::measurement::probe::process_tree(pid);
        }
        assert_eq!(tree.len(), 3);
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let allowed = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(allowed.split_whitespace().nth(1), Some("0"));
        drop(guard);
        let deadline = Instant::now() + Duration::from_secs(5);
        while tree.iter().any(|p| alive(*p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let survivors: Vec<u32> = tree.iter().copied().filter(|p| alive(*p)).collect();
        assert_eq!(survivors, Vec::<u32>::new());
    }

    #[test]
    fn stop_reports_a_clean_exit_or_a_kill() {
        let tmp = tempfile::tempdir().unwrap();
        // Each shell says when its trap is set; a signal before that would kill it.
        let sh = |trap: &str, ready: &str| {
            let ready = tmp.path().join(ready);
            let script = format!(
                "trap {trap} TERM; : > '{}'; while :; do sleep 0.05; done",
                ready.display()
            );
            let guard = spawn(
                Path::new("sh"),
                &["-c".into(), script],
                None,
                Stdio::null(),
                Stdio::null(),
            )
            .unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !ready.exists() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "sh never set its trap"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            guard
        };
        let mut guard = sh("'exit 0'", "clean");
        let (status, killed) = guard.stop(libc::SIGTERM, Duration::from_secs(5));
        assert!(!killed);
        assert_eq!(status.and_then(|s| s.code()), Some(0));
        // A child that ignores SIGTERM is killed after the grace period.
        let mut stubborn = sh("''", "stubborn");
        let (_, killed) = stubborn.stop(libc::SIGTERM, Duration::from_millis(300));
        assert!(killed);
        assert!(stubborn.try_wait().is_some());
    }
}
