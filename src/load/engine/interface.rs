//! The kernel interface an event loop runs on: what it asks ([`Io`]) and what it is told
//! ([`IoEvent`]).

use std::io;
use std::os::fd::RawFd;

pub use crate::sys::uring::Piece;

/// What an [`Io`] reports about a connection, by its token ([`Conn::token`]).
pub enum IoEvent {
    /// Readiness: epoll's report, or a connecting socket's poll completing.
    Ready {
        token: u64,
        readable: bool,
        writable: bool,
        read_closed: bool,
        error: bool,
    },
    /// Bytes received into one of the I/O's buffers ([`Io::received`]), held until
    /// [`Io::release`].
    Received { token: u64, piece: Piece },
    /// The peer ended its stream (a receive of 0 bytes).
    Ended { token: u64 },
    /// A send or receive failed with this errno.
    Failed { token: u64, errno: i32 },
}

/// What became of a send.
pub enum Sent {
    /// This many bytes were taken (an asynchronous engine takes them all, or none).
    Bytes(usize),
    /// Nothing was taken: wait for room ([`Io::wait_writable`]).
    WouldBlock,
    Interrupted,
    Failed(i32),
}

/// The kernel interface of one event loop: how it watches sockets, sends, and waits.
pub trait Io: Sized {
    /// A socket whose connect is under way: report it ready for output (or failed).
    fn watch_connect(&mut self, fd: RawFd, token: u64) -> io::Result<()>;
    /// An established connection: report its input from now on.
    fn watch_input(&mut self, fd: RawFd, token: u64) -> io::Result<()>;
    /// Sends from `bytes`, a slice of the plan's payload.
    fn send(&mut self, fd: RawFd, token: u64, bytes: &[u8]) -> Sent;
    /// The last send did not take everything: report the connection writable again.
    /// `armed` is the connection's own note that output is watched already.
    fn wait_writable(&mut self, fd: RawFd, token: u64, armed: &mut bool) -> io::Result<()>;
    /// The connection is about to be closed: stop watching it.
    fn forget(&mut self, token: u64);
    /// The bytes of a [`IoEvent::Received`], read where the kernel put them (no copy).
    fn received(&self, piece: Piece) -> &[u8];
    /// Gives a received piece's buffer back, once read.
    fn release(&mut self, piece: Piece);
    /// Waits at most `timeout_ns` for events and appends them to `events`.
    fn wait(&mut self, timeout_ns: u64, events: &mut Vec<IoEvent>) -> io::Result<()>;
}
