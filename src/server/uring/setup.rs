//! Setting up one uring worker: its ring, provided buffers and initial state; a set-up failure (io_uring
//! missing or forbidden, memlock too low) becomes advice (`crate::sys::uring::setup_error`).

use std::collections::VecDeque;
use std::net::TcpListener;

use io_uring::{types, IoUring};

use super::conn::AcceptState;
use super::{Counters, Worker};
use crate::server::accept::Acceptor;
use crate::server::echo::READ_BUDGET;
use crate::server::{IdleScan, ServerConfig, Setup};
use crate::sys::uring::{self, BufRing};

/// Submission queue entries per ring.
const SQ_ENTRIES: u32 = 2048;
/// Completion queue entries per ring: room for a burst of completions from many connections.
const CQ_ENTRIES: u32 = 32768;
/// Provided buffers per worker with incremental consumption (Linux 6.12+): 16 buffers of
/// 64 KiB (1 MiB), a recv taking up to 64 KiB at once (epoll's read size) and small
/// messages sharing a buffer. A larger pool only holds more of what arrives between two
/// loop turns (all of it is touched, FIFO): an empty ring ends recvs (ENOBUFS), leaving
/// the bytes in the socket until the next turn re-arms them, which costs less than memory.
/// Measured with 200 and 1 000 connections of 64 KiB and 1 MiB messages: 16 moved as many
/// bytes as 32 and held 1.8-2.3 MB less at its peak (docs/benchmarks.md).
const INCREMENTAL: (u16, usize) = (16, 64 * 1024);
/// Without it (older kernels) every completion uses a whole buffer: 1024 buffers of 8 KiB.
const WHOLE: (u16, usize) = (1024, uring::BUFFER_SIZE);

/// The provided buffer count, if `ECHOLAB_URING_BUFFERS` sets one (a power of two).
pub fn buffer_count() -> anyhow::Result<Option<u16>> {
    match std::env::var("ECHOLAB_URING_BUFFERS") {
        Ok(text) => match text.parse::<u16>() {
            Ok(n) if n.is_power_of_two() && n <= 32768 => Ok(Some(n)),
            _ => anyhow::bail!("ECHOLAB_URING_BUFFERS must be a power of two up to 32768"),
        },
        Err(_) => Ok(None),
    }
}

/// Creates a worker's ring and registers its buffer ring with it: incremental
/// consumption where the kernel has it, whole buffers otherwise (or when
/// `ECHOLAB_URING_WHOLE_BUFFERS` is set, to test or compare the older kernels' way);
/// `buffers` overrides the count.
pub fn ring_with_buffers(
    config: &ServerConfig,
    buffers: Option<u16>,
) -> anyhow::Result<(IoUring, BufRing)> {
    let mut builder = IoUring::builder();
    builder.setup_cqsize(CQ_ENTRIES);
    if config.sqpoll {
        builder.setup_sqpoll(1000);
    } else {
        // Completions are reaped only when the loop enters the kernel anyway: no need
        // to interrupt the thread for them (the kernel refuses this flag with SQPOLL).
        builder.setup_coop_taskrun();
    }
    let count = |(count, size): (u16, usize)| (buffers.unwrap_or(count), size);
    let whole_only = std::env::var_os("ECHOLAB_URING_WHOLE_BUFFERS").is_some();
    uring::ring_with_buffers(
        builder.build(SQ_ENTRIES),
        count(INCREMENTAL),
        count(WHOLE),
        whole_only,
        "--model epoll",
    )
}

impl Worker {
    /// A worker serving `listener` on a ring of its own, nothing armed yet.
    pub(super) fn new(
        id: usize,
        listener: TcpListener,
        setup: &Setup,
        buffers: Option<u16>,
    ) -> anyhow::Result<Worker> {
        let (ring, buffers) = ring_with_buffers(&setup.config, buffers)?;
        let recv_buffers = READ_BUDGET.div_ceil(buffers.size()).max(1);
        Ok(Worker {
            id,
            ring,
            buffers,
            acceptor: Acceptor::new(&listener, setup.stats.clone()),
            listener,
            stats: setup.stats.clone(),
            cap: setup.config.max_pending,
            idle_scan: IdleScan::new(setup.config.idle_timeout),
            sqpoll: setup.config.sqpoll,
            recv_limit_supported: true,
            conns: Vec::new(),
            free_slots: Vec::new(),
            accept: AcceptState::Ended,
            timer_armed: false,
            timespec: types::Timespec::new(),
            starved: VecDeque::new(),
            to_send: Vec::new(),
            recv_buffers,
            completions: VecDeque::new(),
            stopping: false,
            counters: Counters::default(),
        })
    }
}
