//! io_uring: completions instead of readiness, N rings, and no buffer per idle connection.
//!
//! Each of the `--workers` threads owns one ring, one SO_REUSEPORT listener and one
//! provided buffer ring. Everything is a request on the ring, and the loop only
//! reacts to completions:
//!
//! - one **multishot accept** on the listener posts a completion per new connection;
//! - each connection has one **multishot recv** with buffer select: the kernel picks
//!   a buffer from the worker's buffer ring only when data arrives, so an idle
//!   connection holds no buffer at all (its state is a small slab entry);
//! - received bytes stay in the provided buffer they arrived in (a piece; no copy, no
//!   allocation) until echoed. A **send** is in flight per connection at most and
//!   starts once the batch of completions is handled, taking every piece held (a
//!   sendmsg gathering up to 16), so a loop turn's bytes leave in one request. A send
//!   from pieces does not wait (MSG_DONTWAIT): what the socket did not take is copied
//!   to the connection's queue and its buffers go back at once, as epoll keeps only
//!   what its write did not take, so a client that does not read holds no buffer; the
//!   queue is sent by sends that wait, and later bytes are copied behind it, in order.
//!   With incremental consumption (Linux 6.12+) a buffer is shared by successive recvs,
//!   and goes back to the ring once the kernel is done filling it and every piece of it
//!   is sent;
//! - the pool is small and shared, so an **empty buffer ring** is the normal state under
//!   many connections of large messages. A turn that saw one submits its sends at once
//!   (the kernel completes them at submission, handing their buffers back) and then
//!   re-arms the starved recvs oldest first, only as many as the ring has buffers for;
//! - each multishot recv is armed with a **byte limit** (Linux 6.17+): epoll's read
//!   budget per wakeup ([`READ_BUDGET`]), or less, the room left under `--max-pending`,
//!   so one connection cannot take the whole pool in a turn and the kernel itself stops
//!   at the cap (overshoot below one buffer); it is re-armed when it ends. Older kernels
//!   reject the limit, and the recv is then cancelled when the cap is reached (overshoot
//!   up to what the kernel received before the cancel);
//! - a poll on the shutdown eventfd ends the loop; a timeout request ticks for
//!   `--idle-timeout` and for an accept paused after fd exhaustion.
//!
//! Multishot requests end whenever a completion lacks IORING_CQE_F_MORE (the buffer
//! ring ran dry: ENOBUFS; an error; the kernel's own reasons), and are then re-armed.
//! A full submission queue is submitted and retried, never dropped.
//!
//! The accept and each connection's recv are small state machines ([`AcceptState`],
//! [`RecvState`]): armed, being cancelled, ended for a reason, and what comes next.
//!
//! Costs: a system call per loop turn submits any number of requests and reaps any
//! number of completions, and recv needs no readiness round trip. The buffer pool is
//! fixed per worker, not per connection ([`crate::sys::uring::BufRing`]; 16 incremental
//! buffers of 64 KiB, or 1024 whole buffers of 8 KiB before Linux 6.12: [`setup`]).
//! `ECHOLAB_URING_BUFFERS` overrides the buffer count (a power of two).
//! The ring's set-up and its errors are in [`setup`].

mod conn;
mod ring;
mod setup;

use std::collections::VecDeque;
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use io_uring::{cqueue, opcode, types, IoUring};

use super::accept::{keep_spare_fd, peer_addr, Accepted, Acceptor};
use super::counters::{CloseReason, RefuseReason, ServerConnRecord, Stats};
use super::echo::READ_BUDGET;
use super::stop::{request_stop, stop_fd, stop_requested};
use super::{wake_up, IdleScan, Setup};
use crate::sys::uring::{BufRing, BUFFER_GROUP};
use conn::{AcceptState, Conn, Gather, RecvState, GATHER};
use ring::with_recv_limit;

// What a request is, in the top half of its user_data; the bottom half is the connection slot.
const ACCEPT: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;
const CANCEL: u64 = 4;
const TIMER: u64 = 5;
const SHUTDOWN: u64 = 6;

fn user_data(kind: u64, slot: usize) -> u64 {
    kind << 32 | slot as u64
}

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let workers = setup.config.worker_count();
    let buffers = setup::buffer_count()?;
    // Set every ring up before serving, so a missing io_uring or a low memlock limit is
    // reported at once and clearly.
    let mut prepared = Vec::with_capacity(workers);
    for id in 0..workers {
        let listener = if id == 0 {
            setup.listener.try_clone()?
        } else {
            setup
                .bind_another_listener()
                .context("binding another SO_REUSEPORT listener")?
        };
        prepared.push(Worker::new(id, listener, &setup, buffers)?);
    }
    setup.announce()?;

    let threads: Vec<_> = prepared
        .into_iter()
        .map(|mut worker| {
            std::thread::Builder::new()
                .name(format!("echolab-uring-{}", worker.id))
                .spawn(move || {
                    let result = worker.run();
                    if result.is_err() {
                        // One ring failing stops the server, rather than serving on with fewer.
                        request_stop();
                    }
                    result
                })
        })
        .collect::<Result<_, _>>()
        .context("spawning the uring workers")?;
    let mut first_error = None;
    for thread in threads {
        let result = thread
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a uring worker panicked")));
        if let Err(error) = result {
            first_error.get_or_insert(error);
        }
    }
    match first_error {
        Some(error) => Err(anyhow::Error::new(error).context("a uring worker failed")),
        None => Ok(()),
    }
}

/// Events worth knowing about when reading a run, printed when the worker stops.
#[derive(Default)]
struct Counters {
    buffer_ring_empty: u64,
    short_sends: u64,
    /// Multishot recvs that ended with bytes: at their byte limit (or the kernel's reasons).
    recv_limit_ends: u64,
    /// Turns that submitted their sends before re-arming starved recvs.
    early_submits: u64,
    sq_full: u64,
    accept_rearms: u64,
    max_pending: usize,
    /// Echo bytes received, and those of them copied out of the provided buffers.
    bytes_in: u64,
    bytes_copied: u64,
}

struct Worker {
    id: usize,
    ring: IoUring,
    buffers: BufRing,
    listener: TcpListener,
    /// Sheds connections with a spare fd when the process is out of fds.
    acceptor: Acceptor,
    stats: Arc<Stats>,
    cap: usize,
    idle_scan: Option<IdleScan>,
    sqpoll: bool,
    /// Whether the kernel takes a byte limit for multishot recv (Linux 6.17+).
    recv_limit_supported: bool,
    conns: Vec<Option<Conn>>,
    free_slots: Vec<usize>,
    accept: AcceptState,
    timer_armed: bool,
    /// Read by the kernel when it prepares the timeout request (by the SQ thread with SQPOLL).
    timespec: types::Timespec,
    /// Connections whose recv ended on an empty buffer ring, in the order they ran dry.
    starved: VecDeque<usize>,
    /// Connections with echo to send once the batch of completions is handled.
    to_send: Vec<usize>,
    /// Buffers one recv arming can take (its byte budget over the buffer size, at least 1).
    recv_buffers: usize,
    completions: VecDeque<cqueue::Entry>,
    stopping: bool,
    counters: Counters,
}

impl Worker {
    fn run(&mut self) -> io::Result<()> {
        let watch_stop = opcode::PollAdd::new(types::Fd(stop_fd()), libc::POLLIN as u32)
            .build()
            .user_data(user_data(SHUTDOWN, 0));
        self.push(watch_stop)?;
        self.arm_accept()?;
        self.arm_timer()?;

        while !self.stopping && !stop_requested() {
            // 1. Submit what the last turn queued and wait for at least one completion.
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // The completion queue is overflowing: reap before submitting more.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
            // 2. Handle every completion; handlers queue new requests as they go.
            self.handle_completions()?;
            // 3. The buffer ring ran dry. The sends just queued hold most of its buffers,
            //    and the kernel completes them at submission (inline, the socket has room):
            //    submit them now and reap, so the recvs re-armed below find those buffers
            //    this turn rather than after the next wait.
            if !self.starved.is_empty() {
                self.counters.early_submits += 1;
                self.submit()?;
                self.handle_completions()?;
            }
            // 4. Re-arm the recvs that found the ring empty, oldest first, as many as the
            //    ring has buffers for: each takes at most `READ_BUDGET` bytes, and a recv
            //    armed on an empty ring only ends again (ENOBUFS) at a cost.
            let mut room = self.buffers.in_kernel() as usize;
            while room > 0 {
                let Some(slot) = self.starved.pop_front() else {
                    break;
                };
                if let Some(conn) = self.conns[slot].as_mut() {
                    if conn.recv == RecvState::Starved {
                        conn.recv = RecvState::Idle;
                        room = room.saturating_sub(self.recv_buffers);
                    }
                }
                self.after_io(slot)?;
            }
            self.start_sends()?;
        }

        for conn in self.conns.drain(..).flatten() {
            let reason = conn.closing.unwrap_or(CloseReason::Shutdown);
            self.stats.close(&conn.record, reason);
        }
        let c = &self.counters;
        crate::errln!(
            "echolab serve: uring worker {}: {} recv re-arms after an empty buffer ring (ENOBUFS), \
             {} after a byte limit, {} early submits, {} short sends, {} full submission queues, {} accept re-arms, \
             most unsent echo {} bytes, {} of {} bytes received copied out of their buffers",
            self.id, c.buffer_ring_empty, c.recv_limit_ends, c.early_submits, c.short_sends, c.sq_full,
            c.accept_rearms, c.max_pending, c.bytes_copied, c.bytes_in
        );
        Ok(())
    }

    /// Handles every completion there is, then sends what they brought.
    fn handle_completions(&mut self) -> io::Result<()> {
        self.reap();
        while let Some(cqe) = self.completions.pop_front() {
            self.complete(cqe)?;
        }
        self.start_sends()
    }

    /// Starts the sends the last completions asked for: one per connection, gathering every
    /// piece its recvs of the batch brought.
    fn start_sends(&mut self) -> io::Result<()> {
        for slot in std::mem::take(&mut self.to_send) {
            let Some(conn) = self.conns[slot].as_mut() else {
                continue;
            };
            conn.send_wanted = false;
            if conn.closing.is_none() && !conn.send_in_flight && conn.pending() > 0 {
                self.start_send(slot)?;
            }
        }
        Ok(())
    }

    fn complete(&mut self, cqe: cqueue::Entry) -> io::Result<()> {
        let data = cqe.user_data();
        let slot = (data & 0xffff_ffff) as usize;
        match data >> 32 {
            ACCEPT => self.on_accept(cqe.result(), cqe.flags()),
            RECV => self.on_recv(slot, cqe.result(), cqe.flags()),
            SEND => self.on_send(slot, cqe.result()),
            TIMER => self.on_timer(),
            SHUTDOWN => {
                self.stopping = true;
                Ok(())
            }
            // A cancellation's own result says nothing the cancelled request will not.
            _ => Ok(()),
        }
    }

    fn arm_accept(&mut self) -> io::Result<()> {
        let accept = opcode::AcceptMulti::new(types::Fd(self.listener.as_raw_fd()))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data(ACCEPT, 0));
        self.push(accept)?;
        self.accept = AcceptState::Armed;
        Ok(())
    }

    fn on_accept(&mut self, result: i32, flags: u32) -> io::Result<()> {
        // What this completion asks for: shedding (out of fds) or a pause (another failure).
        let (mut shed, mut paused_until) = (false, None);
        if result >= 0 {
            // SAFETY: a successful accept completion carries a new fd that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(result) };
            // Multishot accept gives no address: ask for it.
            match peer_addr(&fd) {
                Some(peer) => match keep_spare_fd(fd) {
                    Some(fd) => {
                        if let Some(record) = self.stats.admit(peer) {
                            self.add_conn(fd, record)?;
                        }
                    }
                    None => self.stats.refuse(RefuseReason::FdLimit, Some(peer)),
                },
                // The peer left already (ENOTCONN): nothing to count, as for ECONNABORTED.
                None => drop(fd),
            }
        } else {
            match -result {
                // Shedding frees a slot with the spare fd: an armed accept could take it
                // first (its task work runs on our next system call), so it ends first.
                libc::EMFILE | libc::ENFILE => shed = true,
                libc::ECONNABORTED | libc::EINTR | libc::EAGAIN | libc::ECANCELED => {}
                errno => {
                    crate::errln!(
                        "echolab serve: accept failed: {}; pausing accepts",
                        io::Error::from_raw_os_error(errno)
                    );
                    paused_until = Some(Instant::now() + Acceptor::PAUSE);
                }
            }
        }
        // Add what was asked while its cancel was in flight.
        if let AcceptState::Cancelling {
            shed: asked_shed,
            paused_until: asked_pause,
        } = self.accept
        {
            shed |= asked_shed;
            paused_until = paused_until.or(asked_pause);
        }
        if cqueue::more(flags) {
            if shed || paused_until.is_some() {
                self.cancel_accept(shed, paused_until)?;
            }
            return Ok(());
        }

        self.accept = AcceptState::Ended;
        if shed {
            self.shed_connections()?;
        }
        if let Some(until) = paused_until {
            self.pause_accepts(until)?;
        }
        if self.accept == AcceptState::Ended && !self.stopping {
            self.counters.accept_rearms += 1;
            self.arm_accept()?;
        }
        Ok(())
    }

    /// Out of fds: the acceptor frees its spare fd to accept and close waiting connections
    /// (counted as refused, `fd_limit`); if even that fails, accepting pauses.
    fn shed_connections(&mut self) -> io::Result<()> {
        loop {
            match self.acceptor.accept() {
                Accepted::Conn(fd, record) => self.add_conn(fd, record)?,
                Accepted::Refused => continue,
                Accepted::WouldBlock => return Ok(()),
                Accepted::Paused => return self.pause_accepts(Instant::now() + Acceptor::PAUSE),
            }
        }
    }

    /// Leaves the ended accept unarmed until `until`; the timer arms it again.
    fn pause_accepts(&mut self, until: Instant) -> io::Result<()> {
        if self.accept != AcceptState::Ended || Instant::now() >= until {
            return Ok(());
        }
        self.accept = AcceptState::Paused { until };
        self.arm_timer()
    }

    /// Ends the accept that is in flight, then sheds or pauses as asked.
    fn cancel_accept(&mut self, shed: bool, paused_until: Option<Instant>) -> io::Result<()> {
        let cancel_sent = matches!(self.accept, AcceptState::Cancelling { .. });
        self.accept = AcceptState::Cancelling { shed, paused_until };
        if cancel_sent {
            return Ok(());
        }
        let cancel = opcode::AsyncCancel::new(user_data(ACCEPT, 0))
            .build()
            .user_data(user_data(CANCEL, 0));
        self.push(cancel)
    }

    /// Time left in an accept pause, for the timer.
    fn accept_pause_left(&self) -> Option<Duration> {
        match self.accept {
            AcceptState::Paused { until } => Some(until.saturating_duration_since(Instant::now())),
            _ => None,
        }
    }

    fn add_conn(&mut self, fd: OwnedFd, record: ServerConnRecord) -> io::Result<()> {
        let conn = Conn::new(fd, record);
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.conns[slot] = Some(conn);
                slot
            }
            None => {
                self.conns.push(Some(conn));
                self.conns.len() - 1
            }
        };
        self.arm_recv(slot)
    }

    /// Arms the connection's multishot recv, limited to the room left under the cap
    /// (where the kernel supports a limit), so the kernel itself stops at the cap.
    fn arm_recv(&mut self, slot: usize) -> io::Result<()> {
        let conn = self.conns[slot].as_mut().expect("live connection");
        let mut recv = opcode::RecvMulti::new(types::Fd(conn.fd.as_raw_fd()), BUFFER_GROUP)
            .build()
            .user_data(user_data(RECV, slot));
        if self.recv_limit_supported {
            // One arming reads at most the budget epoll reads per wakeup, so one fast
            // connection cannot take the whole buffer ring in a turn.
            let room = self
                .cap
                .saturating_sub(conn.pending())
                .clamp(1, READ_BUDGET);
            recv = with_recv_limit(recv, room as u32);
        }
        conn.recv = RecvState::Armed;
        self.push(recv)
    }

    fn on_recv(&mut self, slot: usize, result: i32, flags: u32) -> io::Result<()> {
        let conn = self.conns[slot]
            .as_mut()
            .expect("recv completion for a live slot");
        if !cqueue::more(flags) {
            conn.recv = RecvState::Idle;
            if result > 0 {
                self.counters.recv_limit_ends += 1;
            }
        }
        if result > 0 {
            let len = result as usize;
            let bid = cqueue::buffer_select(flags).expect("recv completion names its buffer");
            let piece = self.buffers.take(bid, len, cqueue::buffer_more(flags));
            if conn.closing.is_some() {
                self.buffers.release(piece);
            } else {
                conn.record.bytes_in += len as u64;
                conn.record.reads += 1;
                let answered = crate::server::work::per_read();
                self.counters.bytes_in += len as u64;
                if !answered {
                    // A stop cut the work short: no answer, the connection closes.
                    self.buffers.release(piece);
                    conn.closing = Some(CloseReason::Shutdown);
                    return self.after_io(slot);
                }
                conn.last_active = Instant::now();
                if conn.copied() == 0 {
                    // Nothing copied ahead of these bytes: echo them from the buffer they
                    // arrived in (no copy, no allocation). Their send does not wait
                    // (`on_send` copies what the socket did not take), so a piece is held
                    // only until its send is tried, whether or not its client reads.
                    conn.lent.push_back(piece);
                    conn.lent_bytes += len;
                } else {
                    // Behind copied bytes, in order: copy.
                    conn.queued.extend_from_slice(self.buffers.slice(piece));
                    self.buffers.release(piece);
                    self.counters.bytes_copied += len as u64;
                }
            }
            let conn = self.conns[slot].as_mut().expect("live connection");
            self.counters.max_pending = self.counters.max_pending.max(conn.pending());
            if conn.pending() >= self.cap && conn.recv == RecvState::Armed {
                // Backpressure: stop reading until the echo drains.
                conn.recv = RecvState::Cancelling;
                let cancel = opcode::AsyncCancel::new(user_data(RECV, slot))
                    .build()
                    .user_data(user_data(CANCEL, slot));
                self.push(cancel)?;
            }
        } else if result == 0 {
            conn.recv = RecvState::Eof;
        } else {
            match -result {
                libc::ENOBUFS => {
                    self.counters.buffer_ring_empty += 1;
                    conn.recv = RecvState::Starved;
                    self.starved.push_back(slot);
                }
                libc::ECANCELED => {}
                // A kernel before 6.17 rejects the byte limit: arm without it from now on,
                // and rely on cancelling the recv when the cap is reached.
                libc::EINVAL if self.recv_limit_supported => {
                    self.recv_limit_supported = false;
                }
                errno => {
                    let reason = CloseReason::from_io_error(&io::Error::from_raw_os_error(errno));
                    conn.closing.get_or_insert(reason);
                }
            }
        }
        self.after_io(slot)
    }

    /// Sends the pieces still in their provided buffers, several in one sendmsg (every
    /// recv of a loop turn goes out in one send), without waiting (MSG_DONTWAIT: the
    /// kernel completes it at submission with what the socket took); or else the copied
    /// bytes, waiting for room as long as it takes.
    fn start_send(&mut self, slot: usize) -> io::Result<()> {
        let conn = self.conns[slot].as_mut().expect("live connection");
        let fd = types::Fd(conn.fd.as_raw_fd());
        let send = if conn.lent.len() > 1 {
            let gather = conn.gather.get_or_insert_with(Gather::new);
            let mut total = 0;
            for (iov, &piece) in gather.iov.iter_mut().zip(&conn.lent) {
                let bytes = self.buffers.slice(piece);
                iov.iov_base = bytes.as_ptr() as *mut libc::c_void;
                iov.iov_len = bytes.len();
                total += bytes.len();
            }
            gather.msg.msg_iov = gather.iov.as_mut_ptr();
            gather.msg.msg_iovlen = conn.lent.len().min(GATHER);
            conn.in_flight_len = total;
            opcode::SendMsg::new(fd, &gather.msg)
                .flags((libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) as u32)
                .build()
        } else {
            let (rest, flags) = match conn.lent.front() {
                Some(&piece) => (
                    self.buffers.slice(piece),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                ),
                None => {
                    if conn.sent == conn.sending.len() {
                        conn.sending = std::mem::take(&mut conn.queued);
                        conn.sent = 0;
                    }
                    (&conn.sending[conn.sent..], libc::MSG_NOSIGNAL)
                }
            };
            conn.in_flight_len = rest.len();
            opcode::Send::new(fd, rest.as_ptr(), rest.len() as u32)
                .flags(flags)
                .build()
        };
        conn.send_in_flight = true;
        self.push(send.user_data(user_data(SEND, slot)))
    }

    fn on_send(&mut self, slot: usize, result: i32) -> io::Result<()> {
        let conn = self.conns[slot]
            .as_mut()
            .expect("send completion for a live slot");
        conn.send_in_flight = false;
        // A send from pieces that the socket did not take whole: what is left is copied.
        let socket_full = !conn.lent.is_empty()
            && (result == -libc::EAGAIN || (result > 0 && (result as usize) < conn.in_flight_len));
        if result > 0 {
            let written = result as usize;
            conn.record.bytes_out += written as u64;
            if written < conn.in_flight_len {
                self.counters.short_sends += 1;
            }
            // Pieces go ahead of copied bytes: with any held, the send was from them.
            if !conn.lent.is_empty() {
                conn.release_sent_pieces(written, &mut self.buffers);
            } else {
                conn.sent += written;
                if conn.sent == conn.sending.len() {
                    // Sent in full: the queued bytes are next; an empty queue frees the memory.
                    conn.sending = std::mem::take(&mut conn.queued);
                    conn.sent = 0;
                }
            }
        } else if result != -libc::ECANCELED && !socket_full {
            let error = if result == 0 {
                io::Error::from(io::ErrorKind::WriteZero)
            } else {
                io::Error::from_raw_os_error(-result)
            };
            conn.closing
                .get_or_insert(CloseReason::from_io_error(&error));
        }
        if socket_full && conn.closing.is_none() {
            self.counters.bytes_copied += conn.copy_unsent_pieces(&mut self.buffers) as u64;
        }
        self.after_io(slot)
    }

    /// Decides a connection's next step after any of its completions: free it once it
    /// is closing and idle, send what is pending, and (re-)arm its recv when it may read.
    fn after_io(&mut self, slot: usize) -> io::Result<()> {
        let Some(conn) = self.conns[slot].as_mut() else {
            return Ok(());
        };
        if conn.closing.is_none() && conn.recv == RecvState::Eof && conn.pending() == 0 {
            conn.closing = Some(CloseReason::ClientClosed);
        }
        if let Some(reason) = conn.closing {
            if conn.busy() {
                return self.cancel_requests(slot);
            }
            let conn = self.conns[slot].take().expect("live connection");
            for piece in conn.lent {
                self.buffers.release(piece);
            }
            self.stats.close(&conn.record, reason);
            self.free_slots.push(slot);
            return Ok(());
        }
        if !conn.send_in_flight && conn.pending() > 0 && !conn.send_wanted {
            // Sent once the batch is handled, with whatever else it brings.
            conn.send_wanted = true;
            self.to_send.push(slot);
        }
        let conn = self.conns[slot].as_mut().expect("live connection");
        if conn.recv == RecvState::Idle && conn.pending() < self.cap && !self.stopping {
            self.arm_recv(slot)?;
        }
        Ok(())
    }

    /// Cancels a closing connection's requests; their completions then free it.
    fn cancel_requests(&mut self, slot: usize) -> io::Result<()> {
        let conn = self.conns[slot].as_mut().expect("live connection");
        let mut cancels = Vec::with_capacity(2);
        if conn.recv == RecvState::Armed {
            conn.recv = RecvState::Cancelling;
            cancels.push(user_data(RECV, slot));
        }
        if conn.send_in_flight {
            cancels.push(user_data(SEND, slot));
        }
        for target in cancels {
            let cancel = opcode::AsyncCancel::new(target)
                .build()
                .user_data(user_data(CANCEL, slot));
            self.push(cancel)?;
        }
        Ok(())
    }

    /// Arms the timeout request when an idle scan or the end of an accept pause is due.
    fn arm_timer(&mut self) -> io::Result<()> {
        if self.timer_armed {
            return Ok(());
        }
        let Some(tick) = wake_up(self.accept_pause_left(), self.idle_scan.as_ref()) else {
            return Ok(());
        };
        self.timespec = types::Timespec::new()
            .sec(tick.as_secs())
            .nsec(tick.subsec_nanos());
        let timeout = opcode::Timeout::new(&self.timespec)
            .build()
            .user_data(user_data(TIMER, 0));
        self.timer_armed = true;
        self.push(timeout)
    }

    fn on_timer(&mut self) -> io::Result<()> {
        self.timer_armed = false;
        if let AcceptState::Paused { until } = self.accept {
            if Instant::now() >= until {
                self.accept = AcceptState::Ended;
                if !self.stopping {
                    self.arm_accept()?;
                }
            }
        }
        if let Some(limit) = self.idle_scan.as_mut().and_then(IdleScan::due) {
            let now = Instant::now();
            for slot in 0..self.conns.len() {
                let Some(conn) = self.conns[slot].as_mut() else {
                    continue;
                };
                if conn.closing.is_none() && now.duration_since(conn.last_active) >= limit {
                    conn.closing = Some(CloseReason::IdleTimeout);
                    self.after_io(slot)?;
                }
            }
        }
        self.arm_timer()
    }
}
