//! `--work-us`: a fixed CPU time spent on every read that returned data, in every
//! model, as a real server computes an answer per request: the models studied under
//! CPU-bound requests, or a server made measurably slower on purpose (an A/B check of
//! `echolab compare`). Set once when the server starts; every model's read path calls
//! [`per_read`].

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys::thread_cpu_ns;

/// The CPU time to spend per read, in ns; 0 (the default) spends none.
static WORK_NS: AtomicU64 = AtomicU64::new(0);

/// The most work per read, in µs (1 s): a request's work, not a server that spins a core
/// for hours.
pub const MAX_WORK_US: u64 = 1_000_000;

/// Sets the work per read for this process.
pub fn set(work_us: u64) {
    WORK_NS.store(work_us.saturating_mul(1000), Ordering::Relaxed);
}

/// Spins until this thread has used the set CPU time: its own CPU clock, so time the
/// scheduler gives other threads does not count. A stop (SIGTERM) ends the work at once:
/// the server is going away. False then: a request whose work was cut short has no
/// answer, so the caller echoes nothing and closes the connection (as `shutdown`).
#[must_use]
pub fn per_read() -> bool {
    let ns = WORK_NS.load(Ordering::Relaxed);
    if ns == 0 {
        return true;
    }
    let start = thread_cpu_ns();
    while thread_cpu_ns().saturating_sub(start) < ns {
        if super::stop::stop_requested() {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_spends_the_set_cpu_time_on_its_own_thread() {
        set(2000);
        let before = thread_cpu_ns();
        assert!(per_read());
        let spent = thread_cpu_ns() - before;
        set(0);
        assert!(spent >= 2_000_000, "{spent} ns");
        let before = thread_cpu_ns();
        assert!(per_read());
        assert!(thread_cpu_ns() - before < 2_000_000);
    }
}
