//! poll(2): one thread watches the listener and every connection in one `pollfd` array.
//!
//! Each turn rebuilds the array from the connection table — the listener (unless
//! accepting is paused after fd exhaustion), the shutdown eventfd, and each
//! connection with POLLIN while it may read (its unsent echo is under the cap) and
//! POLLOUT while it has echo to send. The kernel scans the whole array on every
//! call, which is why poll's cost grows with the number of connections, idle or not.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use super::echo::{accept_all, close_all, close_idle, ConnTable, EchoConn, ReadStop};
use super::stats::CloseReason;
use super::{idle_check_interval, shutdown_fd, shutdown_requested, Acceptor, Setup};
use crate::syscall;

/// Bytes read from one connection per turn, so one fast client cannot starve the rest.
const READ_BUDGET: usize = 256 * 1024;
const SCRATCH_SIZE: usize = 64 * 1024;

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let listener_fd = setup.listener.as_raw_fd();
    let mut acceptor = Acceptor::new(&setup.listener, setup.stats.clone());
    let cap = setup.config.max_pending;
    let idle_timeout = setup.config.idle_timeout;
    let mut conns = ConnTable::new();
    let mut pollfds: Vec<libc::pollfd> = Vec::new();
    let mut scratch = vec![0u8; SCRATCH_SIZE];
    setup.announce()?;

    while !shutdown_requested() {
        // 1. Build the interest set.
        pollfds.clear();
        pollfds.push(pollfd(shutdown_fd(), libc::POLLIN));
        let accepting = !acceptor.paused();
        if accepting {
            pollfds.push(pollfd(listener_fd, libc::POLLIN));
        }
        let first_conn = pollfds.len();
        for conn in conns.values() {
            let mut events = 0;
            if conn.wants_read(cap) {
                events |= libc::POLLIN;
            }
            if conn.wants_write() {
                events |= libc::POLLOUT;
            }
            pollfds.push(pollfd(conn.raw_fd(), events));
        }

        // 2. Wait: until something is ready, a pause ends or an idle check is due.
        let timeout = loop_timeout(acceptor.pause_left(), idle_timeout);
        let ready = match syscall!(poll(
            pollfds.as_mut_ptr(),
            pollfds.len() as libc::nfds_t,
            timeout
        )) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };

        // 3. Serve the ready connections.
        if ready > 0 {
            for entry in &pollfds[first_conn..] {
                if entry.revents == 0 {
                    continue;
                }
                let Some(conn) = conns.get_mut(&entry.fd) else {
                    continue;
                };
                if let Some(reason) = serve_ready(conn, entry.revents, &mut scratch, cap) {
                    let conn = conns
                        .remove(&entry.fd)
                        .expect("ready connection is in the table");
                    setup.stats.close(&conn.record, reason);
                }
            }
            // 4. Accept new connections last, so their fds are not in this turn's array.
            if accepting && pollfds[1].revents & libc::POLLIN != 0 {
                accept_all(&mut acceptor, &mut conns);
            }
        }

        if let Some(limit) = idle_timeout {
            close_idle(&mut conns, limit, &setup.stats);
        }
    }

    close_all(&mut conns, CloseReason::Shutdown, &setup.stats);
    Ok(())
}

/// Reads, echoes and flushes one ready connection; returns why to close it, if so.
fn serve_ready(
    conn: &mut EchoConn,
    revents: libc::c_short,
    scratch: &mut [u8],
    cap: usize,
) -> Option<CloseReason> {
    if revents & libc::POLLOUT != 0 {
        if let Err(reason) = conn.flush() {
            return Some(reason);
        }
    }
    // POLLHUP/POLLERR: read to learn whether it was a clean close or a reset.
    if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && conn.wants_read(cap) {
        match conn.read_and_echo(scratch, READ_BUDGET, cap) {
            Ok(ReadStop::Eof)
            | Ok(ReadStop::Drained)
            | Ok(ReadStop::Budget)
            | Ok(ReadStop::Backpressure) => {}
            Err(reason) => return Some(reason),
        }
    }
    if conn.finished() {
        return Some(CloseReason::ClientClosed);
    }
    None
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// Milliseconds to wait: block until an event, but wake for a paused accept or an idle check.
fn loop_timeout(pause_left: Option<Duration>, idle_timeout: Option<Duration>) -> libc::c_int {
    let idle_check = idle_timeout.map(idle_check_interval);
    match (pause_left, idle_check) {
        (None, None) => -1,
        (a, b) => {
            let wait = a.into_iter().chain(b).min().unwrap_or_default();
            wait.as_millis().max(1) as libc::c_int
        }
    }
}
