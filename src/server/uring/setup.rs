//! Setting up one uring worker's ring and provided buffers; a set-up failure (io_uring
//! missing or forbidden, memlock too low) becomes advice (`crate::sys::uring::setup_error`).

use io_uring::IoUring;

use crate::server::ServerConfig;
use crate::sys::uring::{self, BufRing};

/// Submission queue entries per ring.
const SQ_ENTRIES: u32 = 2048;
/// Completion queue entries per ring: room for a burst of completions from many connections.
const CQ_ENTRIES: u32 = 32768;
/// Provided buffers per worker (a power of two); `ECHOLAB_URING_BUFFERS` overrides it.
const BUFFERS: u16 = 1024;

/// The provided buffer count: `ECHOLAB_URING_BUFFERS` or [`BUFFERS`].
pub fn buffer_count() -> anyhow::Result<u16> {
    match std::env::var("ECHOLAB_URING_BUFFERS") {
        Ok(text) => match text.parse::<u16>() {
            Ok(n) if n.is_power_of_two() && n <= 32768 => Ok(n),
            _ => anyhow::bail!("ECHOLAB_URING_BUFFERS must be a power of two up to 32768"),
        },
        Err(_) => Ok(BUFFERS),
    }
}

/// Creates a worker's ring and registers its buffer ring of `buffers` buffers with it.
pub fn ring_with_buffers(
    config: &ServerConfig,
    buffers: u16,
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
    uring::ring_with_buffers(builder.build(SQ_ENTRIES), buffers, "--model epoll")
}
