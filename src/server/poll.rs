//! poll(2): one thread watches the listener and every connection in one `pollfd` array.
//!
//! Each turn rebuilds the array from the connection table — the listener (unless
//! accepting is paused after fd exhaustion), the shutdown eventfd, and each
//! connection with POLLIN while it may read (its unsent echo is under the cap) and
//! POLLOUT while it has echo to send. The kernel scans the whole array on every
//! call, which is why poll's cost grows with the number of connections, idle or not.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use super::accept::Acceptor;
use super::counters::CloseReason;
use super::echo::{accept_all, close_all, close_idle, ConnTable, Ready, Scratch};
use super::stop::{stop_fd, stop_requested};
use super::{timeout_ms, wake_up, IdleScan, Setup};
use crate::syscall;

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let listener_fd = setup.listener.as_raw_fd();
    let mut acceptor = Acceptor::new(&setup.listener, setup.stats.clone());
    let cap = setup.config.max_pending;
    let mut idle_scan = IdleScan::new(setup.config.idle_timeout);
    let mut conns = ConnTable::new();
    let mut pollfds: Vec<libc::pollfd> = Vec::new();
    let mut scratch = Scratch::new();
    setup.announce()?;

    while !stop_requested() {
        // 1. Build the interest set.
        pollfds.clear();
        pollfds.push(pollfd(stop_fd(), libc::POLLIN));
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
        let timeout = timeout_ms(wake_up(acceptor.pause_left(), idle_scan.as_ref()));
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
                // POLLHUP/POLLERR: read to learn whether it was a clean close or a reset.
                let ready = Ready {
                    readable: entry.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0,
                    writable: entry.revents & libc::POLLOUT != 0,
                    short_read_drains: true,
                };
                if let Err(reason) = conn.serve_ready(ready, &mut scratch, cap) {
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

        if let Some(limit) = idle_scan.as_mut().and_then(IdleScan::due) {
            close_idle(&mut conns, limit, &setup.stats);
        }
    }

    close_all(&mut conns, CloseReason::Shutdown, &setup.stats);
    Ok(())
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}
