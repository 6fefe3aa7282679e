//! SIGINT and SIGTERM as a request to stop, for every verb: the handler records which signal
//! came and how many, sets the stop flag, and makes the optional [`wake_fd`] readable so an
//! event loop blocked in epoll/poll/select wakes with its other fds. Loops then stop in their
//! own order (the load generator drains in-flight echoes, the runner stops load before the
//! server, the server closes its connections and writes its summary).

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

use crate::syscall;

static STOP: AtomicBool = AtomicBool::new(false);
/// The last stop signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static COUNT: AtomicU32 = AtomicU32::new(0);
/// The eventfd made readable on a stop (-1 until [`wake_fd`] creates it).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    // Only async-signal-safe work here: atomics and, in request_stop, write(2).
    SIGNAL.store(signal, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
    request_stop();
}

/// Makes SIGINT and SIGTERM request a stop instead of ending the process. Interrupted
/// system calls restart (SA_RESTART); loops notice the flag or the [`wake_fd`].
pub fn install() -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value to fill in.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action` is fully initialised and its handler only does async-signal-safe
        // work; the old action is not wanted.
        syscall!(sigaction(signal, &action, std::ptr::null_mut()))?;
    }
    Ok(())
}

/// Asks every loop to stop, as a signal would (but records no signal).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
    wake(WAKE_FD.load(Ordering::SeqCst));
}

fn wake(fd: RawFd) {
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd; async-signal-safe. It cannot
        // block (EFD_NONBLOCK) and a full counter is still readable, so the result is moot.
        unsafe {
            libc::write(fd, (&one as *const u64).cast(), 8);
        }
    }
}

/// Whether a stop was requested (by a signal or [`request_stop`]).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The signal that asked to stop, if one did.
pub fn stop_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// Stop signals received so far: a second one asks to stop at once, without draining.
pub fn signal_count() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// An eventfd that becomes readable on a stop request and stays readable (nobody drains it),
/// created on first use and kept for the life of the process.
pub fn wake_fd() -> io::Result<RawFd> {
    let existing = WAKE_FD.load(Ordering::SeqCst);
    if existing >= 0 {
        return Ok(existing);
    }
    let fd = syscall!(eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC))?;
    match WAKE_FD.compare_exchange(-1, fd, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {
            // A stop requested before the eventfd existed must still leave it readable.
            if stop_requested() {
                wake(fd);
            }
            Ok(fd)
        }
        Err(winner) => {
            // Another thread created one first: keep theirs.
            let _ = syscall!(close(fd));
            Ok(winner)
        }
    }
}

/// The name of a stop signal, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_stop_signals() {
        assert_eq!(name(libc::SIGINT), "SIGINT");
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(libc::SIGHUP), "a signal");
    }
}
