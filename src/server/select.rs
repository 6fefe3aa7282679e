//! select(2): one thread, level-triggered, watching fds through two `fd_set` bitmaps.
//!
//! Each turn clears the read and write sets and sets a bit for the shutdown
//! eventfd, the listener (unless accepting is paused after fd exhaustion) and every
//! connection: in the read set while it may read (its unsent echo is under the
//! cap), in the write set while it has echo to send. select(2) overwrites the sets
//! with the ready fds, so they are rebuilt on every call, and both the kernel and
//! the loop scan every fd number up to the highest one, open or not.
//!
//! An `fd_set` is a fixed bitmap of FD_SETSIZE (1024) bits: FD_SET on a larger fd
//! writes past its end. So a connection whose fd is FD_SETSIZE or more is closed at
//! once by the acceptor, before it is admitted, and counted as refused (`fd_setsize`);
//! its fd never reaches a set, and `FdSet::insert` asserts so. The model holds about
//! a thousand connections, whatever the fd limit.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use super::accept::Acceptor;
use super::counters::CloseReason;
use super::echo::{accept_all, close_all, close_idle, ConnTable, Ready, Scratch};
use super::stop::{stop_fd, stop_requested};
use super::{wake_up, IdleScan, Setup};
use crate::syscall;
/// The first fd number an `fd_set` cannot hold.
const FD_LIMIT: RawFd = libc::FD_SETSIZE as RawFd;

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let listener_fd = setup.listener.as_raw_fd();
    anyhow::ensure!(
        listener_fd < FD_LIMIT && stop_fd() < FD_LIMIT,
        "select(2) cannot watch the listener or shutdown fd: fd number is FD_SETSIZE or more"
    );
    // The acceptor closes, before admitting, every connection whose fd is FD_SETSIZE or more.
    let mut acceptor =
        Acceptor::new(&setup.listener, setup.stats.clone()).refuse_fds_from(FD_LIMIT);
    let cap = setup.config.max_pending;
    let mut idle_scan = IdleScan::new(setup.config.idle_timeout);
    let mut conns = ConnTable::new();
    let mut read_set = FdSet::new();
    let mut write_set = FdSet::new();
    let mut scratch = Scratch::new();
    setup.announce()?;

    while !stop_requested() {
        // 1. Build the interest sets; every fd here is known to be below FD_SETSIZE.
        read_set.clear();
        write_set.clear();
        read_set.insert(stop_fd());
        let accepting = !acceptor.paused();
        if accepting {
            read_set.insert(listener_fd);
        }
        for conn in conns.values() {
            if conn.wants_read(cap) {
                read_set.insert(conn.raw_fd());
            }
            if conn.wants_write() {
                write_set.insert(conn.raw_fd());
            }
        }
        let highest = read_set.highest.max(write_set.highest);

        // 2. Wait: until something is ready, a pause ends or an idle check is due.
        let mut timeout =
            wake_up(acceptor.pause_left(), idle_scan.as_ref()).map(|wait| libc::timeval {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_usec: wait.subsec_micros() as libc::suseconds_t,
            });
        let timeout_ptr = timeout
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut libc::timeval);
        let ready = match syscall!(select(
            highest + 1,
            &mut read_set.bits,
            &mut write_set.bits,
            std::ptr::null_mut(),
            timeout_ptr
        )) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };

        // 3. Serve the ready connections.
        if ready > 0 {
            // select reports EOF and errors as readable: the read tells which it was.
            conns.retain(|&fd, conn| {
                let ready = Ready {
                    readable: read_set.contains(fd),
                    writable: write_set.contains(fd),
                    short_read_drains: true,
                };
                if !ready.readable && !ready.writable {
                    return true;
                }
                match conn.serve_ready(ready, &mut scratch, cap) {
                    Ok(_) => true,
                    Err(reason) => {
                        setup.stats.close(&conn.record, reason);
                        false
                    }
                }
            });
            // 4. Accept new connections last, so their fds are not tested against this turn's sets.
            if accepting && read_set.contains(listener_fd) {
                accept_all(&mut acceptor, &mut conns);
            }
        }

        if let Some(limit) = idle_scan.as_mut().and_then(IdleScan::due) {
            close_idle(&mut conns, limit, &setup.stats);
        }
    }

    close_all(&mut conns, CloseReason::Shutdown, &setup.stats);
    Ok(())
}

/// An `fd_set` and the highest fd in it. Only fds below FD_SETSIZE may be inserted.
struct FdSet {
    bits: libc::fd_set,
    highest: RawFd,
}

impl FdSet {
    fn new() -> FdSet {
        // SAFETY: fd_set is a plain bitmap; all-zero is the empty set.
        let bits = unsafe { std::mem::zeroed() };
        FdSet { bits, highest: -1 }
    }

    fn clear(&mut self) {
        // SAFETY: FD_ZERO writes only within the fd_set it is given.
        unsafe { libc::FD_ZERO(&mut self.bits) };
        self.highest = -1;
    }

    fn insert(&mut self, fd: RawFd) {
        // Checked at accept; a larger fd here would be a bug, never a write past the set.
        assert!(
            (0..FD_LIMIT).contains(&fd),
            "fd {fd} does not fit an fd_set"
        );
        // SAFETY: 0 <= fd < FD_SETSIZE, so the bit is inside the set.
        unsafe { libc::FD_SET(fd, &mut self.bits) };
        self.highest = self.highest.max(fd);
    }

    fn contains(&self, fd: RawFd) -> bool {
        if !(0..FD_LIMIT).contains(&fd) {
            return false;
        }
        // SAFETY: 0 <= fd < FD_SETSIZE, so the bit is inside the set.
        unsafe { libc::FD_ISSET(fd, &self.bits) }
    }
}
