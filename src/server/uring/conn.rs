//! The state of one uring connection and of a worker's multishot accept, as explicit
//! state machines: which request is in flight decides what a completion means.

use std::os::fd::OwnedFd;
use std::time::Instant;

use crate::server::stats::{CloseReason, ServerConnRecord};

/// One connection: its socket, counters, send queue and the state of its requests.
pub(super) struct Conn {
    pub(super) fd: OwnedFd,
    pub(super) record: ServerConnRecord,
    /// Echo being sent: the kernel reads `sending[sent..]` while a send is in flight,
    /// so this vector is never touched then; bytes arriving meanwhile go to `queued`.
    pub(super) sending: Vec<u8>,
    pub(super) sent: usize,
    pub(super) queued: Vec<u8>,
    /// The provided buffer (id, length) the send in flight reads from; `sending` is empty
    /// meanwhile. It goes back to the ring when that send completes.
    pub(super) lent: Option<(u16, usize)>,
    pub(super) send_in_flight: bool,
    pub(super) recv: RecvState,
    /// Set when the connection is to close; it is freed once no request is in flight.
    pub(super) closing: Option<CloseReason>,
    pub(super) last_active: Instant,
}

impl Conn {
    pub(super) fn pending(&self) -> usize {
        self.sending.len() - self.sent + self.queued.len() + self.lent.map_or(0, |(_, len)| len)
    }

    pub(super) fn busy(&self) -> bool {
        matches!(self.recv, RecvState::Armed | RecvState::Cancelling) || self.send_in_flight
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
