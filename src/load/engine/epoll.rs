//! The readiness engine: one epoll set per thread.
//!
//! Sockets are registered edge-triggered, for output until connected and then for input
//! only; `epoll_ctl` runs again only the first time a send finds the socket buffer full
//! (output interest is then kept). The loop reads a readable connection itself
//! ([`super::Worker`]'s `on_readable`) into its one buffer, so nothing here holds data.

use std::io;
use std::os::fd::RawFd;

use super::{Io, IoEvent, Piece, Sent};
use crate::load::schedule::Plan;
use crate::sys::epoll::{Epoll, Events, Interest};
use crate::syscall;

/// Events taken from the kernel per epoll_wait.
const EVENTS_PER_WAIT: usize = 1024;
/// What every connection is registered for: input and hang-ups, edge-triggered.
const READ: Interest = Interest::READABLE
    .union(Interest::READ_CLOSED)
    .union(Interest::EDGE);

pub struct EpollIo {
    epoll: Epoll,
    events: Events,
}

impl EpollIo {
    pub fn new(_plan: &Plan) -> anyhow::Result<EpollIo> {
        Ok(EpollIo {
            epoll: Epoll::new()?,
            events: Events::with_capacity(EVENTS_PER_WAIT),
        })
    }
}

impl Io for EpollIo {
    fn watch_connect(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        // The connect completes as writability.
        self.epoll.add(fd, token, READ | Interest::WRITABLE)
    }

    fn watch_input(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        self.epoll.modify(fd, token, READ)
    }

    fn send(&mut self, fd: RawFd, _token: u64, bytes: &[u8]) -> Sent {
        let sent = syscall!(send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL
        ));
        match sent {
            Ok(written) => Sent::Bytes(written as usize),
            Err(e) => match e.raw_os_error().unwrap_or(0) {
                libc::EAGAIN => Sent::WouldBlock,
                libc::EINTR => Sent::Interrupted,
                errno => Sent::Failed(errno),
            },
        }
    }

    fn wait_writable(&mut self, fd: RawFd, token: u64, armed: &mut bool) -> io::Result<()> {
        if !*armed {
            // Kept from now on: edge-triggered, it reports each time room appears.
            self.epoll.modify(fd, token, READ | Interest::WRITABLE)?;
            *armed = true;
        }
        Ok(())
    }

    fn forget(&mut self, _token: u64) {
        // Closing the socket takes it out of the epoll set.
    }

    fn received(&self, _piece: Piece) -> &[u8] {
        unreachable!("the epoll engine reads into the loop's buffer itself")
    }

    fn release(&mut self, _piece: Piece) {
        unreachable!("the epoll engine reads into the loop's buffer itself")
    }

    fn wait(&mut self, timeout_ns: u64, events: &mut Vec<IoEvent>) -> io::Result<()> {
        self.epoll.wait_ns(&mut self.events, timeout_ns)?;
        events.extend(self.events.iter().map(|event| IoEvent::Ready {
            token: event.token(),
            readable: event.is_readable(),
            writable: event.is_writable(),
            read_closed: event.is_read_closed(),
            error: event.is_error(),
        }));
        Ok(())
    }
}
