//! tokio: the async runtime most Rust users would reach for, written the way they write it.
//!
//! A multi-thread runtime with `--workers` worker threads runs one accept loop and
//! one task per connection. Each task owns a fixed buffer and loops: read into it,
//! write all of it back, repeat. Backpressure is natural: a task does not read
//! again until its echo was written, so the unsent echo never exceeds the buffer
//! (well under `--max-pending`). Underneath, tokio's reactor is epoll and its
//! scheduler steals tasks between workers.
//!
//! Costs: every connection holds its task and its [`BUF_SIZE`] buffer for its whole
//! life, idle or not, and each readiness event goes through the reactor, a task
//! wake-up and the scheduler. That is the baseline the hand-written models are
//! measured against.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use ::tokio::io::unix::AsyncFd;
use ::tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use ::tokio::net::{TcpListener, TcpStream};
use ::tokio::sync::watch;
use ::tokio::task::JoinSet;
use anyhow::Context as _;

use super::accept::{is_fd_exhaustion, reserve_spare_fd, shed_connection, Acceptor};
use super::counters::{CloseReason, RefuseReason, ServerConnRecord, Stats};
use super::stop::stop_fd;
use super::Setup;

/// Each connection's read buffer, allocated when the connection opens.
const BUF_SIZE: usize = 16 * 1024;

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let runtime = ::tokio::runtime::Builder::new_multi_thread()
        .worker_threads(setup.config.worker_count())
        .thread_name("echolab-tokio")
        .enable_io()
        .enable_time()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(accept_loop(setup))
}

/// The shutdown eventfd, watched by the reactor like any socket (the fd belongs to stop.rs).
struct ShutdownFd;

impl AsRawFd for ShutdownFd {
    fn as_raw_fd(&self) -> RawFd {
        stop_fd()
    }
}

async fn accept_loop(setup: Setup) -> anyhow::Result<()> {
    setup.announce()?;
    let Setup {
        config,
        listener,
        stats,
        ..
    } = setup;
    let listener = TcpListener::from_std(listener)?;
    // SAFETY: the shutdown eventfd is created once per process and never closed.
    let shutdown = unsafe { AsyncFd::register_with_interest(ShutdownFd, Interest::READABLE) }
        .map_err(io::Error::from)?;
    // Dropping the sender tells every connection task to stop.
    let (stop_sender, stop) = watch::channel(());
    let mut tasks = JoinSet::new();
    reserve_spare_fd();
    let mut out_of_fds = false;

    loop {
        ::tokio::select! {
            _ = shutdown.readable() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    out_of_fds = false;
                    // A refused connection was counted by admit; dropping it closes it.
                    if let Some(record) = stats.admit(peer) {
                        // The buffer is 16 KiB, under loopback's 64 KiB segment: a 64 KiB
                        // message goes back as four writes, and Nagle would hold each behind
                        // the client's delayed ACK of the one before (40 ms): 0.21x epoll's
                        // bytes per second at 64 KiB (docs/benchmarks.md, "Sixteen buffers").
                        // Best effort: the echo is right either way.
                        stream.set_nodelay(true).ok();
                        let task = echo(stream, record, stats.clone(), config.idle_timeout, stop.clone());
                        tasks.spawn(task);
                    }
                }
                Err(e) if is_fd_exhaustion(&e) => {
                    if !out_of_fds {
                        crate::errln!("echolab serve: accept failed: {e}; shedding new connections");
                        out_of_fds = true;
                    }
                    // Accept and close one waiting connection through the spare fd, so the
                    // listener does not stay readable for nothing; pause when even that fails.
                    match shed_connection(listener.as_raw_fd()) {
                        Some(peer) => stats.refuse(RefuseReason::FdLimit, Some(peer)),
                        None => ::tokio::time::sleep(Acceptor::PAUSE).await,
                    }
                }
                // The peer gave up before we accepted: nothing to count.
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => {}
                Err(e) => {
                    crate::errln!("echolab serve: accept failed: {e}; pausing accepts");
                    ::tokio::time::sleep(Acceptor::PAUSE).await;
                }
            },
            Some(finished) = tasks.join_next() => {
                if let Err(error) = finished {
                    crate::errln!("echolab serve: a connection task failed: {error}");
                }
            }
        }
    }

    // Stop accepting, then stop every connection and wait until each has counted its close.
    drop(listener);
    drop(stop_sender);
    while let Some(finished) = tasks.join_next().await {
        if let Err(error) = finished {
            crate::errln!("echolab serve: a connection task failed: {error}");
        }
    }
    Ok(())
}

/// One connection's task: echoes until the client closes, fails, idles out or the server stops.
async fn echo(
    mut stream: TcpStream,
    mut record: ServerConnRecord,
    stats: Arc<Stats>,
    idle_timeout: Option<Duration>,
    mut stop: watch::Receiver<()>,
) {
    let reason = ::tokio::select! {
        reason = echo_loop(&mut stream, &mut record, idle_timeout) => reason,
        _ = stop.changed() => CloseReason::Shutdown,
    };
    stats.close(&record, reason);
}

async fn echo_loop(
    stream: &mut TcpStream,
    record: &mut ServerConnRecord,
    idle_timeout: Option<Duration>,
) -> CloseReason {
    let mut buf = vec![0u8; BUF_SIZE];
    loop {
        let read = match idle_timeout {
            Some(limit) => match ::tokio::time::timeout(limit, stream.read(&mut buf)).await {
                Ok(read) => read,
                Err(_elapsed) => return CloseReason::IdleTimeout,
            },
            None => stream.read(&mut buf).await,
        };
        let n = match read {
            // Half-close: everything read so far has been echoed.
            Ok(0) => return CloseReason::ClientClosed,
            Ok(n) => n,
            Err(e) => return CloseReason::from_io_error(&e),
        };
        record.bytes_in += n as u64;
        record.reads += 1;
        if !crate::server::work::per_read() {
            return CloseReason::Shutdown;
        }
        // write() rather than write_all(), so bytes_out stays exact if a shutdown cuts in.
        let mut written = 0;
        while written < n {
            match stream.write(&buf[written..n]).await {
                Ok(0) => {
                    return CloseReason::from_io_error(&io::Error::from(io::ErrorKind::WriteZero))
                }
                Ok(k) => {
                    written += k;
                    record.bytes_out += k as u64;
                }
                Err(e) => return CloseReason::from_io_error(&e),
            }
        }
    }
}
