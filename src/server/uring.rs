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
//! - received bytes are copied into the connection's send queue and the buffer goes
//!   straight back to the ring; a **send** is in flight per connection at most, and a
//!   short send is resubmitted for the rest;
//! - backpressure: each multishot recv is armed with a byte limit, the room left under
//!   `--max-pending` (Linux 6.17+), so the kernel ends it at the cap (overshoot below one
//!   buffer); it is re-armed once the sends drain. Older kernels reject the limit, and
//!   the recv is then cancelled when the cap is reached (overshoot up to what the kernel
//!   received before the cancel);
//! - a poll on the shutdown eventfd ends the loop; a timeout request ticks for
//!   `--idle-timeout` and for an accept paused after fd exhaustion.
//!
//! Multishot requests end whenever a completion lacks IORING_CQE_F_MORE (the buffer
//! ring ran dry: ENOBUFS; an error; the kernel's own reasons), and are then re-armed.
//! A full submission queue is submitted and retried, never dropped.
//!
//! Costs: a system call per loop turn submits any number of requests and reaps any
//! number of completions, and recv needs no readiness round trip. The buffer pool is
//! fixed per worker (`BUFFERS` x `BUFFER_SIZE`, touched only as used), not per
//! connection. `ECHOLAB_URING_BUFFERS` overrides the buffer count (a power of two).

use std::collections::VecDeque;
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::echo::close_reason_for;
use super::stats::{CloseReason, ServerConnRecord, Stats};
use super::{
    idle_check_interval, request_shutdown, shutdown_fd, shutdown_requested, sockaddr_to_std,
    Accepted, Acceptor, Setup,
};
use crate::syscall;

/// Submission queue entries per ring.
const SQ_ENTRIES: u32 = 2048;
/// Completion queue entries per ring: room for a burst of completions from many connections.
const CQ_ENTRIES: u32 = 32768;
/// Provided buffers per worker (a power of two) and their size.
const BUFFERS: u16 = 1024;
const BUFFER_SIZE: usize = 8 * 1024;
const BUFFER_GROUP: u16 = 0;

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
    let buffers = buffer_count()?;
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
                        request_shutdown();
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

fn buffer_count() -> anyhow::Result<u16> {
    match std::env::var("ECHOLAB_URING_BUFFERS") {
        Ok(text) => match text.parse::<u16>() {
            Ok(n) if n.is_power_of_two() && n <= 32768 => Ok(n),
            _ => anyhow::bail!("ECHOLAB_URING_BUFFERS must be a power of two up to 32768"),
        },
        Err(_) => Ok(BUFFERS),
    }
}

/// One connection: its socket, counters, send queue and the state of its requests.
struct Conn {
    fd: OwnedFd,
    record: ServerConnRecord,
    /// Echo being sent: the kernel reads `sending[sent..]` while a send is in flight,
    /// so this vector is never touched then; bytes arriving meanwhile go to `queued`.
    sending: Vec<u8>,
    sent: usize,
    queued: Vec<u8>,
    send_in_flight: bool,
    recv_armed: bool,
    recv_cancelling: bool,
    /// The multishot recv ended on ENOBUFS; re-armed once the batch returned its buffers.
    recv_starved: bool,
    read_closed: bool,
    /// Set when the connection is to close; it is freed once no request is in flight.
    closing: Option<CloseReason>,
    last_active: Instant,
}

impl Conn {
    fn pending(&self) -> usize {
        self.sending.len() - self.sent + self.queued.len()
    }

    fn busy(&self) -> bool {
        self.recv_armed || self.send_in_flight
    }
}

/// Events worth knowing about when reading a run, printed when the worker stops.
#[derive(Default)]
struct Counters {
    buffer_ring_empty: u64,
    short_sends: u64,
    sq_full: u64,
    accept_rearms: u64,
    max_pending: usize,
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
    idle_timeout: Option<Duration>,
    sqpoll: bool,
    /// Whether the kernel takes a byte limit for multishot recv (Linux 6.17+).
    recv_limit_supported: bool,
    conns: Vec<Option<Conn>>,
    free_slots: Vec<usize>,
    accept_armed: bool,
    accept_cancelling: bool,
    shed_when_accept_ends: bool,
    accept_paused: bool,
    accept_resume_at: Instant,
    timer_armed: bool,
    /// Read by the kernel when it prepares the timeout request (by the SQ thread with SQPOLL).
    timespec: types::Timespec,
    starved: Vec<usize>,
    completions: VecDeque<cqueue::Entry>,
    stopping: bool,
    counters: Counters,
}

impl Worker {
    fn new(
        id: usize,
        listener: TcpListener,
        setup: &Setup,
        buffers: u16,
    ) -> anyhow::Result<Worker> {
        let mut builder = IoUring::builder();
        builder.setup_cqsize(CQ_ENTRIES);
        if setup.config.sqpoll {
            builder.setup_sqpoll(1000);
        } else {
            // Completions are reaped only when the loop enters the kernel anyway: no need
            // to interrupt the thread for them (the kernel refuses this flag with SQPOLL).
            builder.setup_coop_taskrun();
        }
        let ring = builder
            .build(SQ_ENTRIES)
            .map_err(|e| setup_error(e, "creating the ring"))?;
        let mut buffers = BufRing::new(buffers).context("allocating the provided buffers")?;
        buffers
            .register(&ring)
            .map_err(|e| setup_error(e, "registering the provided buffer ring"))?;
        Ok(Worker {
            id,
            ring,
            buffers,
            acceptor: Acceptor::new(&listener, setup.stats.clone()),
            listener,
            stats: setup.stats.clone(),
            cap: setup.config.max_pending,
            idle_timeout: setup.config.idle_timeout,
            sqpoll: setup.config.sqpoll,
            recv_limit_supported: true,
            conns: Vec::new(),
            free_slots: Vec::new(),
            accept_armed: false,
            accept_cancelling: false,
            shed_when_accept_ends: false,
            accept_paused: false,
            accept_resume_at: Instant::now(),
            timer_armed: false,
            timespec: types::Timespec::new(),
            starved: Vec::new(),
            completions: VecDeque::new(),
            stopping: false,
            counters: Counters::default(),
        })
    }

    fn run(&mut self) -> io::Result<()> {
        let watch_shutdown = opcode::PollAdd::new(types::Fd(shutdown_fd()), libc::POLLIN as u32)
            .build()
            .user_data(user_data(SHUTDOWN, 0));
        self.push(watch_shutdown)?;
        self.arm_accept()?;
        self.arm_timer()?;

        while !self.stopping && !shutdown_requested() {
            // 1. Submit what the last turn queued and wait for at least one completion.
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // The completion queue is overflowing: reap before submitting more.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
            // 2. Handle every completion; handlers queue new requests as they go.
            self.reap();
            while let Some(cqe) = self.completions.pop_front() {
                self.complete(cqe)?;
            }
            // 3. The batch gave its buffers back: re-arm the recvs that found the ring empty.
            for slot in std::mem::take(&mut self.starved) {
                if let Some(conn) = self.conns[slot].as_mut() {
                    conn.recv_starved = false;
                }
                self.after_io(slot)?;
            }
        }

        for conn in self.conns.drain(..).flatten() {
            let reason = conn.closing.unwrap_or(CloseReason::Shutdown);
            self.stats.close(&conn.record, reason);
        }
        let c = &self.counters;
        eprintln!(
            "echolab serve: uring worker {}: {} recv re-arms after an empty buffer ring (ENOBUFS), \
             {} short sends, {} full submission queues, {} accept re-arms, most unsent echo {} bytes",
            self.id, c.buffer_ring_empty, c.short_sends, c.sq_full, c.accept_rearms, c.max_pending
        );
        Ok(())
    }

    /// Moves every available completion into the batch, freeing the kernel's queue.
    fn reap(&mut self) {
        self.completions.extend(self.ring.completion());
    }

    /// Queues a request; when the submission queue is full, submits it and retries.
    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every pointer an entry carries stays valid until its completion: the
            // provided buffers and the timespec live in this worker, and a send's bytes in
            // its connection's `sending`, untouched while the send is in flight.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.counters.sq_full += 1;
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => self.reap(),
                Err(e) => return Err(e),
            }
            if self.sqpoll {
                // The SQ thread consumes entries on its own: wait until it made room.
                self.ring.submitter().squeue_wait()?;
            }
        }
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
        self.accept_armed = true;
        self.accept_cancelling = false;
        Ok(())
    }

    fn on_accept(&mut self, result: i32, flags: u32) -> io::Result<()> {
        if !cqueue::more(flags) {
            self.accept_armed = false;
        }
        if result >= 0 {
            // SAFETY: a successful accept completion carries a new fd that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(result) };
            // Multishot accept gives no address: ask for it.
            match peer_addr(&fd) {
                Some(peer) => {
                    if let Some(record) = self.stats.admit(peer) {
                        self.add_conn(fd, record)?;
                    }
                }
                // The peer left already (ENOTCONN): nothing to count, as for ECONNABORTED.
                None => drop(fd),
            }
        } else {
            match -result {
                // Shedding frees a slot with the spare fd: an armed accept could take it
                // first (its task work runs on our next system call), so end it first.
                libc::EMFILE | libc::ENFILE => self.shed_when_accept_ends = true,
                libc::ECONNABORTED | libc::EINTR | libc::EAGAIN | libc::ECANCELED => {}
                errno => {
                    eprintln!(
                        "echolab serve: accept failed: {}; pausing accepts",
                        io::Error::from_raw_os_error(errno)
                    );
                    self.pause_accepts()?;
                }
            }
        }
        if self.shed_when_accept_ends {
            if self.accept_armed {
                self.cancel_accept()?;
                return Ok(());
            }
            self.shed_when_accept_ends = false;
            self.shed_connections()?;
        }
        if !self.accept_armed && !self.accept_paused && !self.stopping {
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
                Accepted::Paused => return self.pause_accepts(),
            }
        }
    }

    /// Stops accepting until the acceptor's pause ends; the timer re-arms the accept.
    fn pause_accepts(&mut self) -> io::Result<()> {
        self.accept_paused = true;
        self.accept_resume_at = Instant::now() + Acceptor::PAUSE;
        if self.accept_armed {
            self.cancel_accept()?;
        }
        self.arm_timer()
    }

    fn cancel_accept(&mut self) -> io::Result<()> {
        if self.accept_cancelling {
            return Ok(());
        }
        self.accept_cancelling = true;
        let cancel = opcode::AsyncCancel::new(user_data(ACCEPT, 0))
            .build()
            .user_data(user_data(CANCEL, 0));
        self.push(cancel)
    }

    fn add_conn(&mut self, fd: OwnedFd, record: ServerConnRecord) -> io::Result<()> {
        let conn = Conn {
            fd,
            record,
            sending: Vec::new(),
            sent: 0,
            queued: Vec::new(),
            send_in_flight: false,
            recv_armed: false,
            recv_cancelling: false,
            recv_starved: false,
            read_closed: false,
            closing: None,
            last_active: Instant::now(),
        };
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
            let room = self.cap.saturating_sub(conn.pending()).max(1);
            recv = with_recv_limit(recv, room.min(u32::MAX as usize) as u32);
        }
        conn.recv_armed = true;
        conn.recv_cancelling = false;
        self.push(recv)
    }

    fn on_recv(&mut self, slot: usize, result: i32, flags: u32) -> io::Result<()> {
        let conn = self.conns[slot]
            .as_mut()
            .expect("recv completion for a live slot");
        if !cqueue::more(flags) {
            conn.recv_armed = false;
        }
        if result > 0 {
            let len = result as usize;
            let bid = cqueue::buffer_select(flags).expect("recv completion names its buffer");
            if conn.closing.is_none() {
                let data = self.buffers.get(bid, len);
                if conn.send_in_flight {
                    conn.queued.extend_from_slice(data);
                } else {
                    conn.sending.extend_from_slice(data);
                }
                conn.record.bytes_in += len as u64;
                conn.record.reads += 1;
                conn.last_active = Instant::now();
            }
            self.buffers.give_back(bid);
            let conn = self.conns[slot].as_mut().expect("live connection");
            self.counters.max_pending = self.counters.max_pending.max(conn.pending());
            if conn.pending() >= self.cap && conn.recv_armed && !conn.recv_cancelling {
                // Backpressure: stop reading until the echo drains.
                conn.recv_cancelling = true;
                let cancel = opcode::AsyncCancel::new(user_data(RECV, slot))
                    .build()
                    .user_data(user_data(CANCEL, slot));
                self.push(cancel)?;
            }
        } else if result == 0 {
            conn.read_closed = true;
        } else {
            match -result {
                libc::ENOBUFS => {
                    self.counters.buffer_ring_empty += 1;
                    conn.recv_starved = true;
                    self.starved.push(slot);
                }
                libc::ECANCELED => {}
                // A kernel before 6.17 rejects the byte limit: arm without it from now on,
                // and rely on cancelling the recv when the cap is reached.
                libc::EINVAL if self.recv_limit_supported => {
                    self.recv_limit_supported = false;
                }
                errno => {
                    let reason = close_reason_for(&io::Error::from_raw_os_error(errno));
                    conn.closing.get_or_insert(reason);
                }
            }
        }
        self.after_io(slot)
    }

    fn start_send(&mut self, slot: usize) -> io::Result<()> {
        let conn = self.conns[slot].as_mut().expect("live connection");
        let rest = &conn.sending[conn.sent..];
        let send = opcode::Send::new(
            types::Fd(conn.fd.as_raw_fd()),
            rest.as_ptr(),
            rest.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .user_data(user_data(SEND, slot));
        conn.send_in_flight = true;
        self.push(send)
    }

    fn on_send(&mut self, slot: usize, result: i32) -> io::Result<()> {
        let conn = self.conns[slot]
            .as_mut()
            .expect("send completion for a live slot");
        conn.send_in_flight = false;
        if result > 0 {
            let written = result as usize;
            conn.record.bytes_out += written as u64;
            conn.sent += written;
            if conn.sent < conn.sending.len() {
                self.counters.short_sends += 1;
            } else {
                // Sent in full: the queued bytes are next; an empty queue frees the memory.
                conn.sending = std::mem::take(&mut conn.queued);
                conn.sent = 0;
            }
        } else if result != -libc::ECANCELED {
            let error = if result == 0 {
                io::Error::from(io::ErrorKind::WriteZero)
            } else {
                io::Error::from_raw_os_error(-result)
            };
            conn.closing.get_or_insert(close_reason_for(&error));
        }
        self.after_io(slot)
    }

    /// Decides a connection's next step after any of its completions: free it once it
    /// is closing and idle, send what is pending, and (re-)arm its recv when it may read.
    fn after_io(&mut self, slot: usize) -> io::Result<()> {
        let Some(conn) = self.conns[slot].as_mut() else {
            return Ok(());
        };
        if conn.closing.is_none() && conn.read_closed && conn.pending() == 0 {
            conn.closing = Some(CloseReason::ClientClosed);
        }
        if let Some(reason) = conn.closing {
            if conn.busy() {
                return self.cancel_requests(slot);
            }
            let conn = self.conns[slot].take().expect("live connection");
            self.stats.close(&conn.record, reason);
            self.free_slots.push(slot);
            return Ok(());
        }
        if !conn.send_in_flight && conn.pending() > 0 {
            self.start_send(slot)?;
        }
        let conn = self.conns[slot].as_mut().expect("live connection");
        let may_read = !conn.read_closed && !conn.recv_starved && conn.pending() < self.cap;
        if may_read && !conn.recv_armed && !self.stopping {
            self.arm_recv(slot)?;
        }
        Ok(())
    }

    /// Cancels a closing connection's requests; their completions then free it.
    fn cancel_requests(&mut self, slot: usize) -> io::Result<()> {
        let conn = self.conns[slot].as_mut().expect("live connection");
        let mut cancels = Vec::with_capacity(2);
        if conn.recv_armed && !conn.recv_cancelling {
            conn.recv_cancelling = true;
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

    /// Arms the timeout request when idle checks or a paused accept need a tick.
    fn arm_timer(&mut self) -> io::Result<()> {
        let idle_tick = self.idle_timeout.map(idle_check_interval);
        let pause_tick = self.accept_paused.then_some(Acceptor::PAUSE);
        let Some(tick) = idle_tick.into_iter().chain(pause_tick).min() else {
            return Ok(());
        };
        if self.timer_armed {
            return Ok(());
        }
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
        if self.accept_paused && Instant::now() >= self.accept_resume_at {
            self.accept_paused = false;
            if !self.accept_armed && !self.stopping {
                self.arm_accept()?;
            }
        }
        if let Some(limit) = self.idle_timeout {
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

/// Sets a multishot recv's total byte limit: after that many bytes its completion comes
/// without IORING_CQE_F_MORE and the recv must be re-armed (Linux 6.17+). The limit is
/// the SQE's `optlen` field, which io-uring 0.7 has no setter for.
fn with_recv_limit(entry: squeue::Entry, limit: u32) -> squeue::Entry {
    /// Offset of `optlen` in the 64-byte `struct io_uring_sqe` (kernel ABI).
    const OPTLEN_OFFSET: usize = 44;
    // SAFETY: squeue::Entry is a repr(C) wrapper of io_uring_sqe, 64 bytes of plain data.
    let mut sqe: [u8; 64] = unsafe { std::mem::transmute::<squeue::Entry, [u8; 64]>(entry) };
    sqe[OPTLEN_OFFSET..OPTLEN_OFFSET + 4].copy_from_slice(&limit.to_ne_bytes());
    // SAFETY: the same bytes with one plain-data field changed are still a valid SQE.
    unsafe { std::mem::transmute::<[u8; 64], squeue::Entry>(sqe) }
}

/// The peer address of an accepted socket (multishot accept does not report it).
fn peer_addr(fd: &OwnedFd) -> Option<std::net::SocketAddr> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    syscall!(getpeername(
        fd.as_raw_fd(),
        (&mut storage as *mut libc::sockaddr_storage).cast(),
        &mut len
    ))
    .ok()?;
    sockaddr_to_std(&storage, len)
}

/// Turns a ring set-up failure into advice: io_uring missing or disabled, or memlock too low.
fn setup_error(error: io::Error, what: &str) -> anyhow::Error {
    let advice = match error.raw_os_error() {
        Some(libc::ENOSYS) => {
            "io_uring is not available: this kernel was built without it; use --model epoll"
                .to_string()
        }
        Some(libc::EPERM) | Some(libc::EACCES) => {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map(|v| v.trim().to_string())
                .unwrap_or_else(|_| "unknown".into());
            format!(
                "io_uring is not permitted for this process (kernel.io_uring_disabled = {disabled}; \
                 1 allows only members of kernel.io_uring_group, 2 disables it; a container's \
                 seccomp policy can also forbid it); set it to 0 or use --model epoll"
            )
        }
        Some(libc::ENOMEM) => format!(
            "not enough locked memory for io_uring (the memlock limit is {}); raise ulimit -l \
             (e.g. `ulimit -l unlimited`, or LimitMEMLOCK= in a systemd unit) or run fewer --workers",
            memlock_limit()
        ),
        _ => "io_uring set-up failed".to_string(),
    };
    anyhow::Error::new(error).context(format!("{advice} ({what})"))
}

fn memlock_limit() -> String {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    match syscall!(getrlimit(libc::RLIMIT_MEMLOCK, &mut limit)) {
        Ok(_) if limit.rlim_cur == libc::RLIM_INFINITY => "unlimited".into(),
        Ok(_) => format!("{} KiB", limit.rlim_cur / 1024),
        Err(_) => "unknown".into(),
    }
}

/// A provided buffer ring: the ring of buffer descriptors the kernel takes from, shared
/// with it through registration, and the buffers themselves, in one anonymous mapping
/// each so pages are only touched (and resident) once the kernel writes into them.
struct BufRing {
    entries: *mut types::BufRingEntry,
    entries_len: usize,
    memory: *mut u8,
    memory_len: usize,
    count: u16,
    /// Our copy of the tail: the next entry to fill; published to the kernel after each give-back.
    tail: u16,
}

// SAFETY: the mappings belong to this BufRing alone; the worker owning it uses it from one thread.
unsafe impl Send for BufRing {}

impl BufRing {
    fn new(count: u16) -> io::Result<BufRing> {
        let entries_len = count as usize * std::mem::size_of::<types::BufRingEntry>();
        let memory_len = count as usize * BUFFER_SIZE;
        let entries = map_anonymous(entries_len)?.cast::<types::BufRingEntry>();
        let memory = match map_anonymous(memory_len) {
            Ok(memory) => memory,
            Err(e) => {
                // SAFETY: unmapping the mapping made just above, used by nothing.
                unsafe { libc::munmap(entries.cast(), entries_len) };
                return Err(e);
            }
        };
        Ok(BufRing {
            entries,
            entries_len,
            memory,
            memory_len,
            count,
            tail: 0,
        })
    }

    /// Registers the ring with the kernel and hands it every buffer.
    fn register(&mut self, ring: &IoUring) -> io::Result<()> {
        // SAFETY: the entries mapping is page-aligned, `count` entries long, and lives
        // until after the ring is dropped (the worker drops its ring first).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                self.entries as u64,
                self.count,
                BUFFER_GROUP,
                0,
            )?;
        }
        for bid in 0..self.count {
            self.give_back(bid);
        }
        Ok(())
    }

    /// The `len` bytes the kernel received into buffer `bid`.
    fn get(&self, bid: u16, len: usize) -> &[u8] {
        assert!(bid < self.count && len <= BUFFER_SIZE);
        // SAFETY: buffer `bid` lies inside the mapping, and the kernel wrote `len` bytes into
        // it and will not touch it again until it is given back.
        unsafe { std::slice::from_raw_parts(self.memory.add(bid as usize * BUFFER_SIZE), len) }
    }

    /// Returns buffer `bid` to the kernel.
    fn give_back(&mut self, bid: u16) {
        let index = (self.tail & (self.count - 1)) as usize;
        // SAFETY: `index` is inside the entries mapping; the kernel reads entries only up to
        // the published tail, which does not cover this one yet.
        unsafe {
            let entry = &mut *self.entries.add(index);
            entry.set_addr(self.memory.add(bid as usize * BUFFER_SIZE) as u64);
            entry.set_len(BUFFER_SIZE as u32);
            entry.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field overlays the first entry's reserved field, a u16 the kernel
        // reads concurrently, hence the atomic release store after the entry is written.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: both mappings were made by `new` and are not used after this.
        unsafe {
            libc::munmap(self.entries.cast(), self.entries_len);
            libc::munmap(self.memory.cast(), self.memory_len);
        }
    }
}

fn map_anonymous(len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let address = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if address == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(address.cast())
}
