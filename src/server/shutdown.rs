//! Shutdown on SIGINT or SIGTERM, in the server's words: the process-wide stop request of
//! [`crate::sys::signal`] that every model loop checks, and its eventfd, readable from the
//! same moment, for loops that wait in the kernel.

use std::io;
use std::os::fd::RawFd;

use crate::sys::signal;

/// Installs SIGINT and SIGTERM handlers that request shutdown, and creates the eventfd
/// [`shutdown_fd`] returns, so event loops can watch it with their other fds.
pub fn install_shutdown_handler() -> io::Result<()> {
    signal::wake_fd()?;
    signal::install()
}

/// Asks every model loop to stop: they close their connections (reason `shutdown`) and return.
pub fn request_shutdown() {
    signal::request_stop();
}

/// Whether SIGINT or SIGTERM has arrived (or [`request_shutdown`] was called).
pub fn shutdown_requested() -> bool {
    signal::stop_requested()
}

/// An eventfd that becomes readable (and stays readable: nobody drains it) on shutdown;
/// created by [`install_shutdown_handler`] (or on first use); -1 only if it cannot be created.
pub fn shutdown_fd() -> RawFd {
    signal::wake_fd().unwrap_or(-1)
}
