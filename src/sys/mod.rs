//! The thin syscall layer shared by the servers, the load generator and the runner: one
//! [`syscall!`] macro, an owning [`epoll::Epoll`], the SIGINT/SIGTERM [`signal`] handling and
//! [`spawn`] of supervised children, the io_uring pieces both uring loops use ([`uring`]),
//! beside the process-wide settings below.

pub mod epoll;
pub mod perf;
pub mod signal;
pub mod spawn;
pub mod uring;

use std::io;

/// Calls a libc function and turns its `-1` into the `errno` as an [`io::Error`] (as mio does).
#[macro_export]
macro_rules! syscall {
    ($fn: ident ( $($arg: expr),* $(,)* ) ) => {{
        // SAFETY: the caller passes arguments that are valid for this libc call.
        #[allow(unused_unsafe, clippy::macro_metavars_in_unsafe)]
        let res = unsafe { libc::$fn($($arg, )*) };
        if res == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(res)
        }
    }};
}

/// The process's file-descriptor limits after raising the soft limit to the hard one.
#[derive(Clone, Copy, Debug)]
pub struct FdLimit {
    pub soft: u64,
    pub hard: u64,
}

/// Raises the soft RLIMIT_NOFILE to the hard limit and returns the limits now in force.
pub fn raise_fd_limit() -> io::Result<FdLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    syscall!(getrlimit(libc::RLIMIT_NOFILE, &mut limit))?;
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if syscall!(setrlimit(libc::RLIMIT_NOFILE, &raised)).is_ok() {
            limit = raised;
        }
    }
    Ok(FdLimit {
        soft: limit.rlim_cur,
        hard: limit.rlim_max,
    })
}

/// Ignores SIGPIPE so a write to a closed socket returns EPIPE instead of killing the process.
pub fn ignore_sigpipe() {
    // SAFETY: installing SIG_IGN for SIGPIPE has no preconditions and is process-wide by design.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// A `/proc/meminfo` field in bytes (`MemTotal:`, `MemAvailable:`).
pub fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

/// Whether this is a CI run (`CI` set to anything but empty, `0` or `false`): the tests'
/// skip policy, where a test that cannot run fails instead of skipping.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "False"))
}

/// The tests' skip rule: the calling test is skipped (it returns right after) with
/// `reason`, visibly: the line `SKIPPED test: reason` is written straight to the
/// process's stderr (the harness captures `eprintln!` of a passing test, but not a
/// direct write). Under CI this panics instead: no test may be skipped there.
pub fn skip_test(test: &str, reason: &str) {
    use std::io::Write;
    assert!(
        !in_ci(),
        "{test} cannot run: {reason}; under CI=true no test may be skipped"
    );
    let _ = io::stderr().write_all(format!("SKIPPED {test}: {reason}\n").as_bytes());
}

/// Whether this process runs as root (namespaces, cgroups and perf events need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Seconds since the Unix epoch, with microsecond resolution (0 on a clock before 1970).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The CPU time the calling thread has used, in ns (CLOCK_THREAD_CPUTIME_ID): time the
/// scheduler gave other threads does not count.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID always exists
    // on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Lets the calling thread's timed waits end within a microsecond of their deadline. By
/// default Linux may defer a timer by up to 50 µs to batch wake-ups ("timer slack",
/// prctl(2)); an open-loop generator waiting for the next send time would add that to
/// every request it sends after a wait. Best effort: a kernel that refuses keeps 50 µs.
pub fn tighten_timer_slack() {
    /// PR_SET_TIMERSLACK from <linux/prctl.h> (the libc crate exports it only on Android).
    const PR_SET_TIMERSLACK: libc::c_int = 29;
    const SLACK_NS: libc::c_ulong = 1_000;
    // SAFETY: PR_SET_TIMERSLACK takes one integer and changes only this thread's timer slack.
    unsafe {
        libc::prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0);
    }
}
