//! The completion engine: one io_uring per thread.
//!
//! Each established connection has one multishot recv on the thread's provided buffers
//! ([`BufRing`], consumed incrementally where the kernel can): echoes arrive as completions
//! with no system call of their own, and the loop checks each piece where the kernel put it
//! and gives it straight back. A send is a submission entry pointing
//! into the shared payload; one is in flight per connection and a short one is resubmitted
//! for the rest, so the loop counts a send's bytes as taken when it queues them. What a loop
//! turn queued goes to the kernel with the wait that ends the turn: one `io_uring_enter` for
//! any number of sends, receives and connects.
//!
//! The ring belongs to one thread (IORING_SETUP_SINGLE_ISSUER) and defers task work
//! (IORING_SETUP_DEFER_TASKRUN, Linux 6.1+; without it, cooperative task work): a receive's
//! work is done when the thread next enters the kernel, not by interrupting it. A connecting
//! socket is watched by a one-shot poll for output. Closing a connection cancels its requests,
//! which hold the socket open until they end.

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{Io, IoEvent, Piece, Sent};
use crate::load::schedule::{Payload, Plan};
use crate::sys::uring::{self, BufRing, BUFFER_GROUP};

const SQ_ENTRIES: u32 = 4096;
/// Completions the ring holds: a recv and a send per connection can complete in one turn.
const CQ_ENTRIES: u32 = 65536;
/// Provided buffers per thread with incremental consumption (Linux 6.12+): 16 of 64 KiB;
/// a receive takes up to 64 KiB in one completion, as the epoll engine's read does, and
/// small echoes share a buffer. The echo check reads each piece right after the wait that
/// filled it: 1 MiB in all stays in a core's cache (64 buffers were about 5 % slower
/// at 1 MiB messages, the check then missing the cache).
const INCREMENTAL: (u16, usize) = (16, 64 * 1024);
/// Without it (older kernels) every completion uses a whole buffer: 1024 buffers of 8 KiB.
const WHOLE: (u16, usize) = (1024, uring::BUFFER_SIZE);
/// Completions a wait asks for before it returns...
const WAIT_FOR: u32 = 32;
/// ...unless this long passed with at least one there (Linux 6.12+; older kernels return at
/// the first completion). It bounds what batching adds to a measured latency.
const MIN_WAIT_US: u32 = 20;
const ENTER_GETEVENTS: u32 = 1;
const ENTER_EXT_ARG: u32 = 1 << 3;

/// The kernel's `struct io_uring_getevents_arg` (its `min_wait_usec` since Linux 6.12).
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

// What a request is, in the top bits of its user_data; the rest is the connection's token.
const CONNECT: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;
const CANCEL: u64 = 4;
const KIND_SHIFT: u32 = 60;
/// IORING_RECVSEND_POLL_FIRST (the crate keeps its copy private): wait for room, then send.
const POLL_FIRST: u16 = 1;
const TOKEN_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// What the ring is doing for one connection slot (by index; the token says which attempt).
#[derive(Default)]
struct Slot {
    /// The connection now in this slot; 0 when there is none.
    token: u64,
    fd: RawFd,
    connecting: bool,
    receiving: bool,
    /// The send in flight: where its unsent rest starts, and how long it is.
    sending: Option<(*const u8, usize)>,
    /// Report the connection writable when the send in flight completes.
    notify: bool,
}

pub struct UringIo {
    // Dropped in this order: the ring (ending its requests) before the memory they point to.
    ring: IoUring,
    buffers: BufRing,
    /// Sends point into it; kept until the ring is gone.
    _payload: Arc<Payload>,
    slots: Vec<Slot>,
    /// Recvs that found the buffer ring empty, re-armed once the loop gave buffers back.
    starved: Vec<u64>,
    /// Events raised outside a wait, handed over by the next one.
    pending: Vec<IoEvent>,
    completions: Vec<cqueue::Entry>,
    /// Whether the kernel takes a minimum wait: then a wait batches up to [`WAIT_FOR`].
    min_wait: bool,
    /// The completions being handled (handling may reap more into `completions`).
    batch: Vec<cqueue::Entry>,
}

impl UringIo {
    /// Sets up a ring and its buffers once, so a missing or forbidden io_uring, or a memlock
    /// limit too low, is one clear error.
    pub fn check_available() -> anyhow::Result<()> {
        ring_with_buffers().map(|_| ())
    }

    pub fn new(plan: &Plan) -> anyhow::Result<UringIo> {
        let (ring, buffers) = ring_with_buffers()?;
        Ok(UringIo {
            min_wait: ring.params().is_feature_min_timeout(),
            ring,
            buffers,
            _payload: Arc::clone(&plan.payload),
            slots: Vec::new(),
            starved: Vec::new(),
            pending: Vec::new(),
            completions: Vec::new(),
            batch: Vec::new(),
        })
    }

    fn slot(&mut self, token: u64) -> &mut Slot {
        let idx = (token >> 32) as usize;
        if self.slots.len() <= idx {
            self.slots.resize_with(idx + 1, Slot::default);
        }
        &mut self.slots[idx]
    }

    /// The slot of `token`, if that connection is still the one in it.
    fn live(&mut self, token: u64) -> Option<&mut Slot> {
        let idx = (token >> 32) as usize;
        self.slots.get_mut(idx).filter(|slot| slot.token == token)
    }

    /// Queues a request; when the submission queue is full, submits it and retries.
    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every pointer an entry carries stays valid until its completion: the
            // provided buffers and the payload (sends) outlive the ring (field order above).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            // A failed submit (EBUSY: completions overflowing) leaves the queue full; the
            // next loop turn reaps, and the entry is pushed once there is room.
            if self.ring.submit().is_err() {
                self.reap();
            }
        }
    }

    fn push_recv(&mut self, fd: RawFd, token: u64) {
        let recv = opcode::RecvMulti::new(types::Fd(fd), BUFFER_GROUP)
            .build()
            .user_data(RECV << KIND_SHIFT | token);
        self.push(recv);
    }

    fn push_send(&mut self, fd: RawFd, token: u64, at: *const u8, len: usize, poll_first: bool) {
        let len = len.min(u32::MAX as usize);
        let send = opcode::Send::new(types::Fd(fd), at, len as u32)
            .flags(libc::MSG_NOSIGNAL)
            .ioprio(if poll_first { POLL_FIRST } else { 0 })
            .build()
            .user_data(SEND << KIND_SHIFT | token);
        self.push(send);
    }

    fn cancel(&mut self, kind: u64, token: u64) {
        let cancel = opcode::AsyncCancel::new(kind << KIND_SHIFT | token)
            .build()
            .user_data(CANCEL << KIND_SHIFT | token);
        self.push(cancel);
    }

    /// Submits what is queued and waits up to `timeout_ns` for completions: for [`WAIT_FOR`]
    /// of them, or [`MIN_WAIT_US`] after the first, so one enter serves many echoes.
    fn enter(&mut self, timeout_ns: u64) -> io::Result<()> {
        let timeout = types::Timespec::new()
            .sec(timeout_ns / 1_000_000_000)
            .nsec((timeout_ns % 1_000_000_000) as u32);
        let (want, min_wait_usec) = if self.min_wait {
            (WAIT_FOR, MIN_WAIT_US)
        } else {
            (1, 0)
        };
        let arg = GeteventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            min_wait_usec,
            ts: std::ptr::addr_of!(timeout) as u64,
        };
        let to_submit = self.ring.submission().len() as u32;
        // SAFETY: a plain enter on this ring (no SQPOLL, so nothing else to flag) with the
        // kernel's getevents argument, whose timespec lives until the call returns.
        let entered = unsafe {
            self.ring.submitter().enter(
                to_submit,
                want,
                ENTER_GETEVENTS | ENTER_EXT_ARG,
                Some(&arg),
            )
        };
        entered.map(|_| ())
    }

    fn reap(&mut self) {
        self.completions.extend(self.ring.completion());
    }

    fn complete(&mut self, cqe: &cqueue::Entry, events: &mut Vec<IoEvent>) {
        let token = cqe.user_data() & TOKEN_MASK;
        let (result, flags) = (cqe.result(), cqe.flags());
        match cqe.user_data() >> KIND_SHIFT {
            CONNECT => {
                if let Some(slot) = self.live(token) {
                    slot.connecting = false;
                }
                match result {
                    r if r == -libc::ECANCELED => {}
                    r if r < 0 => events.push(IoEvent::Failed { token, errno: -r }),
                    mask => events.push(IoEvent::Ready {
                        token,
                        readable: false,
                        writable: mask & i32::from(libc::POLLOUT) != 0,
                        read_closed: false,
                        error: mask & i32::from(libc::POLLERR | libc::POLLHUP) != 0,
                    }),
                }
            }
            RECV => self.on_recv(token, result, flags, events),
            SEND => self.on_send(token, result, events),
            _ => {} // a cancellation's own result says nothing its request will not
        }
    }

    fn on_recv(&mut self, token: u64, result: i32, flags: u32, events: &mut Vec<IoEvent>) {
        if let Some(buffer) = cqueue::buffer_select(flags) {
            let len = result.max(0) as usize;
            let piece = self.buffers.take(buffer, len, cqueue::buffer_more(flags));
            if len > 0 {
                events.push(IoEvent::Received { token, piece });
            } else {
                self.buffers.release(piece);
            }
        }
        if cqueue::more(flags) {
            return;
        }
        // The multishot recv ended: re-arm it, unless the stream or the connection did.
        let Some(slot) = self.live(token).filter(|slot| slot.receiving) else {
            return;
        };
        match result {
            r if r > 0 => {
                let fd = slot.fd;
                self.push_recv(fd, token);
            }
            r if r == -libc::ENOBUFS => self.starved.push(token),
            0 => {
                slot.receiving = false;
                events.push(IoEvent::Ended { token });
            }
            r if r == -libc::ECANCELED => slot.receiving = false,
            r => {
                slot.receiving = false;
                events.push(IoEvent::Failed { token, errno: -r });
            }
        }
    }

    fn on_send(&mut self, token: u64, result: i32, events: &mut Vec<IoEvent>) {
        let Some(slot) = self.live(token) else {
            return; // the connection was closed since
        };
        let (fd, Some((at, left))) = (slot.fd, slot.sending) else {
            return;
        };
        match result {
            n if n >= 0 && (n as usize) < left => {
                // A short send: the rest goes next, before anything queued after it.
                // SAFETY: `n` bytes of the `left` starting at `at` were sent; the rest
                // lies within the same payload slice.
                let rest = unsafe { at.add(n as usize) };
                slot.sending = Some((rest, left - n as usize));
                self.push_send(fd, token, rest, left - n as usize, false);
            }
            n if n >= 0 => {
                slot.sending = None;
                if std::mem::take(&mut slot.notify) {
                    events.push(writable(token));
                }
            }
            // No room in the socket buffer: send once the kernel reports room.
            r if r == -libc::EAGAIN => self.push_send(fd, token, at, left, true),
            r => {
                slot.sending = None;
                if r != -libc::ECANCELED {
                    events.push(IoEvent::Failed { token, errno: -r });
                }
            }
        }
    }
}

fn writable(token: u64) -> IoEvent {
    IoEvent::Ready {
        token,
        readable: false,
        writable: true,
        read_closed: false,
        error: false,
    }
}

/// A thread's ring with its provided buffers registered (incremental where the kernel has
/// it, or when `ECHOLAB_URING_WHOLE_BUFFERS` is unset); a failure says what to do.
fn ring_with_buffers() -> anyhow::Result<(IoUring, BufRing)> {
    let whole = std::env::var_os("ECHOLAB_URING_WHOLE_BUFFERS").is_some();
    uring::ring_with_buffers(ring(), INCREMENTAL, WHOLE, whole, "--engine epoll")
}

/// A ring for one thread; kernels before 6.1 lack deferred task work and get cooperative.
fn ring() -> io::Result<IoUring> {
    let deferred = IoUring::builder()
        .setup_cqsize(CQ_ENTRIES)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(SQ_ENTRIES);
    match deferred {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::builder()
            .setup_cqsize(CQ_ENTRIES)
            .setup_coop_taskrun()
            .build(SQ_ENTRIES),
        result => result,
    }
}

impl Io for UringIo {
    fn watch_connect(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        assert!(
            token <= TOKEN_MASK,
            "connection index beyond the user_data space"
        );
        *self.slot(token) = Slot {
            token,
            fd,
            connecting: true,
            ..Slot::default()
        };
        let poll = opcode::PollAdd::new(types::Fd(fd), libc::POLLOUT as u32)
            .build()
            .user_data(CONNECT << KIND_SHIFT | token);
        self.push(poll);
        Ok(())
    }

    fn watch_input(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        let slot = self.slot(token);
        slot.receiving = true;
        self.push_recv(fd, token);
        Ok(())
    }

    fn send(&mut self, fd: RawFd, token: u64, bytes: &[u8]) -> Sent {
        let slot = self.slot(token);
        if slot.token != token || slot.sending.is_some() {
            return Sent::WouldBlock;
        }
        slot.sending = Some((bytes.as_ptr(), bytes.len()));
        self.push_send(fd, token, bytes.as_ptr(), bytes.len(), false);
        Sent::Bytes(bytes.len())
    }

    fn wait_writable(&mut self, _fd: RawFd, token: u64, _armed: &mut bool) -> io::Result<()> {
        match self.live(token) {
            Some(slot) if slot.sending.is_some() => slot.notify = true,
            // Nothing in flight: it can send at once.
            _ => self.pending.push(writable(token)),
        }
        Ok(())
    }

    fn forget(&mut self, token: u64) {
        let Some(slot) = self.live(token) else {
            return;
        };
        let (connecting, receiving) = (slot.connecting, slot.receiving);
        *slot = Slot::default();
        if connecting {
            self.cancel(CONNECT, token);
        }
        if receiving {
            self.cancel(RECV, token);
        }
    }

    fn received(&self, piece: Piece) -> &[u8] {
        self.buffers.slice(piece)
    }

    fn release(&mut self, piece: Piece) {
        self.buffers.release(piece);
    }

    fn wait(&mut self, timeout_ns: u64, events: &mut Vec<IoEvent>) -> io::Result<()> {
        events.append(&mut self.pending);
        // The last turn gave its buffers back: re-arm the recvs that found none.
        for token in std::mem::take(&mut self.starved) {
            if let Some(slot) = self.live(token).filter(|slot| slot.receiving) {
                let fd = slot.fd;
                self.push_recv(fd, token);
            }
        }
        let timeout_ns = if events.is_empty() { timeout_ns } else { 0 };
        match self.enter(timeout_ns) {
            Ok(()) => {}
            // ETIME: the timeout passed; EBUSY: completions overflow, reaped below.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        self.reap();
        while !self.completions.is_empty() {
            std::mem::swap(&mut self.completions, &mut self.batch);
            let batch = std::mem::take(&mut self.batch);
            for cqe in &batch {
                self.complete(cqe, events);
            }
            self.batch = batch;
            self.batch.clear();
        }
        Ok(())
    }
}
