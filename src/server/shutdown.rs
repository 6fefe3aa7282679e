//! Shutdown on SIGINT or SIGTERM: a process-wide flag every model loop checks, and an
//! eventfd that becomes readable at the same moment, for loops that wait in the kernel.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::syscall;

static SHUTDOWN: AtomicBool = AtomicBool::new(false);
static SHUTDOWN_FD: AtomicI32 = AtomicI32::new(-1);

/// Installs SIGINT and SIGTERM handlers that request shutdown. The request sets a flag
/// and makes [`shutdown_fd`] readable, so event loops can watch it with their other fds.
pub fn install_shutdown_handler() -> io::Result<()> {
    if SHUTDOWN_FD.load(Ordering::Acquire) < 0 {
        let fd = syscall!(eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC))?;
        SHUTDOWN_FD.store(fd, Ordering::Release);
    }
    extern "C" fn on_signal(_signal: libc::c_int) {
        request_shutdown();
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls write(2), both async-signal-safe.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action` is fully initialised; the old action is not wanted.
        syscall!(sigaction(signal, &action, std::ptr::null_mut()))?;
    }
    Ok(())
}

/// Asks every model loop to stop: they close their connections (reason `shutdown`) and return.
pub fn request_shutdown() {
    SHUTDOWN.store(true, Ordering::Release);
    let fd = SHUTDOWN_FD.load(Ordering::Acquire);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to the eventfd; async-signal-safe.
        unsafe {
            libc::write(fd, (&one as *const u64).cast(), 8);
        }
    }
}

/// Whether SIGINT or SIGTERM has arrived.
pub fn shutdown_requested() -> bool {
    SHUTDOWN.load(Ordering::Acquire)
}

/// An eventfd that becomes readable (and stays readable: nobody drains it) on shutdown.
pub fn shutdown_fd() -> RawFd {
    SHUTDOWN_FD.load(Ordering::Acquire)
}
