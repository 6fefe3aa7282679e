//! Setting up one uring worker's ring and provided buffers, and turning a set-up failure
//! (io_uring missing or forbidden, memlock too low) into advice the user can act on.

use std::io;

use anyhow::Context as _;
use io_uring::IoUring;

use super::buf_ring::BufRing;
use crate::server::ServerConfig;
use crate::syscall;

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
    let ring = builder
        .build(SQ_ENTRIES)
        .map_err(|e| setup_error(e, "creating the ring"))?;
    let mut buffers = BufRing::new(buffers).context("allocating the provided buffers")?;
    buffers
        .register(&ring)
        .map_err(|e| setup_error(e, "registering the provided buffer ring"))?;
    Ok((ring, buffers))
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
