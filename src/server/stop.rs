//! The stop on SIGINT or SIGTERM, in the server's words: the process-wide stop request of
//! [`crate::sys::signal`] that every model loop checks, and its eventfd, readable from the
//! same moment, for loops that wait in the kernel.

use std::io;
use std::os::fd::RawFd;

use crate::sys::signal;

/// Installs SIGINT and SIGTERM handlers that request the stop, and creates the eventfd
/// [`stop_fd`] returns, so event loops can watch it with their other fds.
pub fn install_stop_handler() -> io::Result<()> {
    signal::wake_fd()?;
    signal::install()
}

/// Asks every model loop to stop: they close their connections (reason `shutdown`) and return.
pub fn request_stop() {
    signal::request_stop();
}

/// Whether SIGINT or SIGTERM has arrived (or [`request_stop`] was called).
pub fn stop_requested() -> bool {
    signal::stop_requested()
}

/// An eventfd that becomes readable (and stays readable: nobody drains it) on the stop;
/// created by [`install_stop_handler`] (or on first use); -1 only if it cannot be created.
pub fn stop_fd() -> RawFd {
    signal::wake_fd().unwrap_or(-1)
}
