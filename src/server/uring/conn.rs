//! The state of one uring connection and of a worker's multishot accept, as explicit
//! state machines: which request is in flight decides what a completion means; and a
//! connection's bookkeeping of the provided buffers its echo is held in.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::Instant;

use crate::server::counters::{CloseReason, ServerConnRecord};
use crate::sys::uring::{BufRing, Piece};

/// One connection: its socket, counters, send queue and the state of its requests.
pub(super) struct Conn {
    pub(super) fd: OwnedFd,
    pub(super) record: ServerConnRecord,
    /// Echo still in the provided buffers it arrived in, oldest first: always ahead of
    /// the copied bytes below. A send in flight reads the first piece while there is one.
    pub(super) lent: VecDeque<Piece>,
    pub(super) lent_bytes: usize,
    /// Copied echo (when pieces held too many buffers): the kernel reads `sending[sent..]`
    /// while a send from it is in flight, so it is never touched then; `queued` takes
    /// what arrives meanwhile.
    pub(super) sending: Vec<u8>,
    pub(super) sent: usize,
    pub(super) queued: Vec<u8>,
    /// Where a send of several pieces at once finds them (made at the first such send).
    pub(super) gather: Option<Box<Gather>>,
    /// Bytes the send in flight offered (a completion with fewer is a short send).
    pub(super) in_flight_len: usize,
    pub(super) send_in_flight: bool,
    /// Listed to send at the end of the batch of completions.
    pub(super) send_wanted: bool,
    pub(super) recv: RecvState,
    /// Set when the connection is to close; it is freed once no request is in flight.
    pub(super) closing: Option<CloseReason>,
    pub(super) last_active: Instant,
}

impl Conn {
    pub(super) fn new(fd: OwnedFd, record: ServerConnRecord) -> Conn {
        Conn {
            fd,
            record,
            lent: VecDeque::new(),
            lent_bytes: 0,
            sending: Vec::new(),
            sent: 0,
            queued: Vec::new(),
            gather: None,
            in_flight_len: 0,
            send_in_flight: false,
            send_wanted: false,
            recv: RecvState::Idle,
            closing: None,
            last_active: Instant::now(),
        }
    }

    /// Drops `written` bytes from the front of the held pieces, giving each piece sent in
    /// full back to the ring; a piece sent in part is sent on from the same buffer.
    pub(super) fn release_sent_pieces(&mut self, written: usize, buffers: &mut BufRing) {
        self.lent_bytes -= written;
        let mut left = written;
        while left > 0 {
            let piece = self.lent.front_mut().expect("sent bytes were held");
            if left < piece.len as usize {
                // The rest of the piece is sent next, from the same buffer.
                piece.offset += left as u32;
                piece.len -= left as u32;
                left = 0;
            } else {
                left -= piece.len as usize;
                let piece = self.lent.pop_front().expect("the piece just sent");
                buffers.release(piece);
            }
        }
    }

    /// Copies the bytes a send from pieces left unsent (the socket was full) out of their
    /// buffers, ahead of the bytes copied before, and gives the buffers back at once, as
    /// epoll keeps only what its write did not take: a client that reads slowly, or
    /// never, holds no provided buffer. Returns the bytes copied out of buffers.
    pub(super) fn copy_unsent_pieces(&mut self, buffers: &mut BufRing) -> usize {
        let mut unsent = Vec::with_capacity(self.lent_bytes + self.copied());
        for piece in self.lent.drain(..) {
            unsent.extend_from_slice(buffers.slice(piece));
            buffers.release(piece);
        }
        let copied = self.lent_bytes;
        self.lent_bytes = 0;
        unsent.extend_from_slice(&self.sending[self.sent..]);
        unsent.extend_from_slice(&self.queued);
        self.sending = unsent;
        self.sent = 0;
        self.queued = Vec::new();
        copied
    }

    pub(super) fn pending(&self) -> usize {
        self.lent_bytes + self.copied()
    }

    /// Echo bytes copied out of the provided buffers, not sent yet.
    pub(super) fn copied(&self) -> usize {
        self.sending.len() - self.sent + self.queued.len()
    }

    pub(super) fn busy(&self) -> bool {
        matches!(self.recv, RecvState::Armed | RecvState::Cancelling) || self.send_in_flight
    }
}

/// Most pieces one send gathers: 16 pieces, up to 1 MiB with 64 KiB buffers.
pub(super) const GATHER: usize = 16;

/// The message header and iovecs of a send of several pieces (sendmsg), boxed so they
/// stay put while the kernel may read them: connections move when the slab grows.
pub(super) struct Gather {
    pub(super) msg: libc::msghdr,
    pub(super) iov: [libc::iovec; GATHER],
}

// SAFETY: the pointers inside point into this box and the worker's provided buffers,
// both used only by the worker's own thread.
unsafe impl Send for Gather {}

impl Gather {
    pub(super) fn new() -> Box<Gather> {
        // SAFETY: msghdr and iovec are plain C structs; all-zero is valid (null pointers,
        // zero lengths).
        Box::new(unsafe { std::mem::zeroed() })
    }
}

/// Where a connection's multishot recv is. A completion without IORING_CQE_F_MORE
/// ends it (back to `Idle`); the end of stream (0 bytes) and errors always end it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RecvState {
    /// Not in flight: armed again whenever the connection may read (under the cap, not closing).
    Idle,
    /// In flight: each completion carries bytes in a provided buffer.
    Armed,
    /// In flight, its cancel too (backpressure without a kernel byte limit, or closing).
    Cancelling,
    /// Ended on an empty buffer ring (ENOBUFS): armed again after the batch, which
    /// gives buffers back.
    Starved,
    /// The client shut down its write side: never armed again.
    Eof,
}

/// Where the worker's multishot accept is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AcceptState {
    /// Not in flight: armed again at once, unless the worker is stopping.
    Ended,
    /// In flight: each completion is a new connection, or an error.
    Armed,
    /// In flight, its cancel too; at its last completion, the waiting connections are
    /// shed first (`shed`, out of fds), then accepting resumes or waits until `paused_until`.
    Cancelling {
        shed: bool,
        paused_until: Option<Instant>,
    },
    /// Not in flight until `until` (an accept error, or out of fds with nothing to
    /// shed); the timer arms it again.
    Paused { until: Instant },
}
