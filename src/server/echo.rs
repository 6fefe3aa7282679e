//! Per-connection echo state shared by the readiness-based models (select, poll, epoll),
//! and the one way they serve a ready connection ([`EchoConn::serve_ready`]).
//!
//! Bytes read are written back at once from the caller's scratch buffer; only
//! what the socket does not take is copied into the connection's `pending`
//! queue. An idle connection therefore holds no buffer at all, and `pending`
//! never grows past the `--max-pending` cap: while it is full the model stops
//! asking for readability (backpressure), as Redis does with its reply buffers.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::accept::{Accepted, Acceptor};
use super::counters::{CloseReason, ServerConnRecord, Stats};
use crate::syscall;

/// Bytes read from one connection per wakeup, so one fast client cannot starve the rest.
pub const READ_BUDGET: usize = 256 * 1024;
/// Size of the buffer a loop reads into before echoing.
pub const SCRATCH_SIZE: usize = 64 * 1024;

/// The buffer one loop reads every connection into: bytes pass through it and are
/// echoed at once, so connections themselves hold no read buffer.
pub struct Scratch(Vec<u8>);

impl Scratch {
    pub fn new() -> Scratch {
        Scratch(vec![0u8; SCRATCH_SIZE])
    }
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch::new()
    }
}

/// What the kernel reported for a connection, in the terms every readiness model shares.
/// Hang-ups and errors count as readable (and, for epoll, writable): the read or write
/// then tells a clean close from a reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready {
    pub readable: bool,
    pub writable: bool,
    /// A read that returns less than asked drained the socket, and whatever comes later
    /// is reported again, so the turn ends there instead of spending a read on EAGAIN:
    /// true under level triggering (poll, select, epoll), and under edge triggering when
    /// the report carried no end of stream (a half-close that came with the data is not
    /// reported a second time, so then the read goes on to the end).
    pub short_read_drains: bool,
}

/// Why [`EchoConn::serve_ready`] stopped reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStop {
    /// The socket has nothing more to read now (EAGAIN).
    Drained,
    /// The per-wakeup byte budget is used up; more may be waiting (matters for edge-triggered loops).
    Budget,
    /// Unsent echo reached the cap: stop reading until it drains.
    Backpressure,
    /// The client shut down its write side; what is pending is still to be sent.
    Eof,
}

/// One echo connection of an event-driven model.
pub struct EchoConn {
    pub fd: OwnedFd,
    pub record: ServerConnRecord,
    /// Echo bytes the socket has not taken yet; `pending[sent..]` is still to be written.
    pending: Vec<u8>,
    sent: usize,
    read_closed: bool,
    pub last_active: Instant,
}

impl EchoConn {
    pub fn new(fd: OwnedFd, record: ServerConnRecord) -> EchoConn {
        EchoConn {
            fd,
            record,
            pending: Vec::new(),
            sent: 0,
            read_closed: false,
            last_active: Instant::now(),
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Bytes read but not yet echoed.
    pub fn pending_len(&self) -> usize {
        self.pending.len() - self.sent
    }

    /// Whether the model should watch this connection for readability.
    pub fn wants_read(&self, cap: usize) -> bool {
        !self.read_closed && self.pending_len() < cap
    }

    /// Whether the model should watch this connection for writability.
    pub fn wants_write(&self) -> bool {
        self.pending_len() > 0
    }

    /// The client has half-closed and every byte has been echoed: close it now.
    pub fn finished(&self) -> bool {
        self.read_closed && self.pending_len() == 0
    }

    /// Serves one readiness report, as every readiness loop does: sends pending echo
    /// when writable, then reads and echoes when readable and under the cap. Returns
    /// why the read stopped (`None`: no read), or why to close the connection now,
    /// `ClientClosed` once the client half-closed and every byte was echoed.
    pub fn serve_ready(
        &mut self,
        ready: Ready,
        scratch: &mut Scratch,
        cap: usize,
    ) -> Result<Option<ReadStop>, CloseReason> {
        if ready.writable && self.wants_write() {
            self.flush()?;
        }
        let mut stop = None;
        if ready.readable && self.wants_read(cap) {
            stop = Some(self.read_and_echo(
                &mut scratch.0,
                READ_BUDGET,
                cap,
                ready.short_read_drains,
            )?);
        }
        if self.finished() {
            return Err(CloseReason::ClientClosed);
        }
        Ok(stop)
    }

    /// Reads and echoes until the socket would block, `budget` bytes were read,
    /// the unsent echo reaches `cap`, or the client half-closes; with `short_read_drains`,
    /// also after a read shorter than asked (see [`Ready::short_read_drains`]).
    fn read_and_echo(
        &mut self,
        scratch: &mut [u8],
        budget: usize,
        cap: usize,
        short_read_drains: bool,
    ) -> Result<ReadStop, CloseReason> {
        let mut read_total = 0;
        loop {
            if self.read_closed {
                return Ok(ReadStop::Eof);
            }
            let room = cap.saturating_sub(self.pending_len());
            if room == 0 {
                return Ok(ReadStop::Backpressure);
            }
            if read_total >= budget {
                return Ok(ReadStop::Budget);
            }
            let want = room.min(scratch.len());
            let n = match syscall!(read(self.raw_fd(), scratch.as_mut_ptr().cast(), want)) {
                Ok(0) => {
                    self.read_closed = true;
                    return Ok(ReadStop::Eof);
                }
                Ok(n) => n as usize,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadStop::Drained),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(CloseReason::from_io_error(&e)),
            };
            read_total += n;
            self.record.bytes_in += n as u64;
            self.record.reads += 1;
            if !crate::server::work::per_read() {
                return Err(CloseReason::Shutdown);
            }
            self.last_active = Instant::now();
            if self.pending_len() == 0 {
                // Fast path: echo straight from the scratch buffer, keep only the rest.
                let written = self.send(&scratch[..n])?;
                if written < n {
                    self.queue(&scratch[written..n]);
                }
            } else {
                // Earlier bytes are still queued: keep the order.
                self.queue(&scratch[..n]);
            }
            if short_read_drains && n < want {
                return Ok(ReadStop::Drained);
            }
        }
    }

    /// Writes as much of the pending echo as the socket takes.
    fn flush(&mut self) -> Result<(), CloseReason> {
        while self.pending_len() > 0 {
            let written = {
                let (start, end) = (self.sent, self.pending.len());
                let chunk = &self.pending[start..end];
                send_some(self.raw_fd(), chunk, &mut self.record)?
            };
            if written == 0 {
                return Ok(());
            }
            self.sent += written;
        }
        // Drained: give the memory back so an idle connection holds no buffer.
        self.pending = Vec::new();
        self.sent = 0;
        Ok(())
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, CloseReason> {
        let mut written = 0;
        while written < bytes.len() {
            let n = send_some(self.raw_fd(), &bytes[written..], &mut self.record)?;
            if n == 0 {
                break;
            }
            written += n;
        }
        Ok(written)
    }

    fn queue(&mut self, bytes: &[u8]) {
        if self.sent > 0 && self.sent == self.pending.len() {
            self.pending.clear();
            self.sent = 0;
        }
        self.pending.extend_from_slice(bytes);
    }
}

/// One send(2); returns 0 when the socket buffer is full.
fn send_some(fd: RawFd, bytes: &[u8], record: &mut ServerConnRecord) -> Result<usize, CloseReason> {
    loop {
        match syscall!(send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL
        )) {
            Ok(n) => {
                record.bytes_out += n as u64;
                return Ok(n as usize);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CloseReason::from_io_error(&e)),
        }
    }
}

/// The connections of a one-thread readiness loop (select, poll), by fd.
pub type ConnTable = HashMap<RawFd, EchoConn>;

/// Accepts every waiting connection into `conns`; refused ones (over `--max-conns`,
/// out of fds, an fd select cannot hold) were already closed and counted by the acceptor.
pub fn accept_all(acceptor: &mut Acceptor, conns: &mut ConnTable) {
    loop {
        match acceptor.accept() {
            Accepted::Conn(fd, record) => {
                conns.insert(fd.as_raw_fd(), EchoConn::new(fd, record));
            }
            Accepted::Refused => continue,
            Accepted::WouldBlock | Accepted::Paused => return,
        }
    }
}

/// Closes every connection of the table for `reason` (at shutdown: `shutdown`).
pub fn close_all(conns: &mut ConnTable, reason: CloseReason, stats: &Stats) {
    for (_, conn) in conns.drain() {
        stats.close(&conn.record, reason);
    }
}

/// Closes (reason `idle_timeout`) every connection that sent nothing for `limit`.
pub fn close_idle(conns: &mut ConnTable, limit: Duration, stats: &Stats) {
    let now = Instant::now();
    conns.retain(|_, conn| {
        let idle = now.duration_since(conn.last_active) >= limit;
        if idle {
            stats.close(&conn.record, CloseReason::IdleTimeout);
        }
        !idle
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;

    /// A connected pair of nonblocking stream sockets: (server side, client side).
    fn pair() -> (EchoConn, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK,
                0,
                fds.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0, "socketpair: {}", io::Error::last_os_error());
        // SAFETY: socketpair just returned these two descriptors, owned by nobody else.
        let (server, client) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let record = ServerConnRecord::new(([127, 0, 0, 1], 0).into());
        (EchoConn::new(server, record), client)
    }

    /// Sends `bytes` from the client side, then half-closes it.
    fn send_and_half_close(client: &OwnedFd, bytes: &[u8]) {
        let n = syscall!(send(
            client.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            0
        ))
        .unwrap();
        assert_eq!(n as usize, bytes.len());
        syscall!(shutdown(client.as_raw_fd(), libc::SHUT_WR)).unwrap();
    }

    fn readable(short_read_drains: bool) -> Ready {
        Ready {
            readable: true,
            writable: false,
            short_read_drains,
        }
    }

    #[test]
    fn a_short_read_that_drained_the_socket_ends_the_turn() {
        let (mut conn, client) = pair();
        send_and_half_close(&client, b"ten bytes!");
        let mut scratch = Scratch::new();
        // One read of 10 bytes: the socket is drained, the end of stream waits for the next report.
        let stop = conn.serve_ready(readable(true), &mut scratch, 1 << 20);
        assert_eq!(stop, Ok(Some(ReadStop::Drained)));
        assert_eq!(
            (
                conn.record.reads,
                conn.record.bytes_in,
                conn.record.bytes_out
            ),
            (1, 10, 10)
        );
        let stop = conn.serve_ready(readable(true), &mut scratch, 1 << 20);
        assert_eq!(stop, Err(CloseReason::ClientClosed));
        let mut echoed = [0u8; 16];
        let n = syscall!(read(
            client.as_raw_fd(),
            echoed.as_mut_ptr().cast(),
            echoed.len()
        ))
        .unwrap();
        assert_eq!(&echoed[..n as usize], b"ten bytes!");
    }

    #[test]
    fn a_report_with_an_end_of_stream_reads_on_to_it() {
        let (mut conn, client) = pair();
        send_and_half_close(&client, b"ten bytes!");
        let mut scratch = Scratch::new();
        // An edge-triggered report that carried the half-close is not repeated: read on to it.
        let stop = conn.serve_ready(readable(false), &mut scratch, 1 << 20);
        assert_eq!(stop, Err(CloseReason::ClientClosed));
        assert_eq!((conn.record.reads, conn.record.bytes_out), (1, 10));
    }
}
