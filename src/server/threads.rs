//! threads: one blocking OS thread per connection, the "traditional" server.
//!
//! The acceptor thread waits with poll(2) on the listener and the shutdown
//! eventfd, accepts, makes the socket blocking and spawns a thread for it. The
//! connection thread loops `read` then `send` until everything is written: a
//! client that does not read blocks its thread in `send`, which stops it
//! reading, so backpressure comes for free and nothing is buffered beyond one
//! read. `--idle-timeout` is SO_RCVTIMEO on the socket.
//!
//! The costs are per connection and paid even when it is idle: a thread (its
//! stack, `--thread-stack`, plus a kernel stack and a scheduler entry), its read
//! buffer, and a context switch for every read and write. Threads are made with
//! pthread_create(3) as the classic servers made them: a small stack and its guard
//! page (two memory maps), and no signal stack (std's threads map one more stack and
//! guard each). Nothing caps them but the kernel: a thread that cannot be created
//! refuses the connection (counted as `thread_spawn`, with the error the kernel
//! returned, e.g. EAGAIN at threads-max, pid_max or RLIMIT_NPROC, ENOMEM at
//! vm.max_map_count or memory) and the server lives on.
//!
//! Shutdown: blocked threads never look at a flag, so the acceptor keeps a
//! registry of open connection fds and shutdown(2)s every one of them, which
//! wakes the blocked `read`/`send`; each thread then closes its record with
//! reason `shutdown` and leaves the registry, and the acceptor waits (bounded)
//! until the registry is empty.

use std::collections::HashSet;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::accept::{Accepted, Acceptor};
use super::counters::{CloseReason, RefuseReason, ServerConnRecord, Stats};
use super::stop::{stop_fd, stop_requested};
use super::{timeout_ms, wake_up, Setup};
use crate::syscall;

/// Read buffer of each connection thread. Its pages are only touched as far as
/// reads fill them, so an idle connection costs little of it.
const BUFFER_SIZE: usize = 64 * 1024;
/// How long shutdown waits for the connection threads to close their records.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let listener_fd = setup.listener.as_raw_fd();
    let mut acceptor = Acceptor::new(&setup.listener, setup.stats.clone());
    let registry = Arc::new(Registry::default());
    let options = ConnOptions {
        stack: setup.config.thread_stack,
        idle_timeout: setup.config.idle_timeout,
    };
    setup.announce()?;

    while !stop_requested() {
        // 1. Wait for a connection or shutdown; leave the listener out while accepting is paused.
        let accepting = !acceptor.paused();
        let mut pollfds = vec![pollfd(stop_fd())];
        if accepting {
            pollfds.push(pollfd(listener_fd));
        }
        let timeout = timeout_ms(wake_up(acceptor.pause_left(), None));
        match syscall!(poll(
            pollfds.as_mut_ptr(),
            pollfds.len() as libc::nfds_t,
            timeout
        )) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
        if stop_requested() || !accepting || pollfds[1].revents == 0 {
            continue;
        }

        // 2. Accept everything waiting and give each connection its own thread.
        loop {
            match acceptor.accept() {
                Accepted::Conn(fd, record) => {
                    spawn_connection(fd, record, &options, &setup.stats, &registry)
                }
                Accepted::Refused => continue,
                Accepted::WouldBlock | Accepted::Paused => break,
            }
        }
    }

    // 3. Wake every blocked connection thread and wait for them to close their records.
    let open = registry.shutdown_all();
    if !registry.wait_empty(SHUTDOWN_WAIT) {
        crate::errln!(
            "echolab serve: {} of {open} connection threads did not stop within {SHUTDOWN_WAIT:?}",
            registry.open()
        );
    }
    Ok(())
}

struct ConnOptions {
    stack: usize,
    idle_timeout: Option<Duration>,
}

/// Makes the socket blocking (with the idle timeout on reads) and starts its thread;
/// a thread the kernel refuses turns the connection into a refused one, with its error.
fn spawn_connection(
    fd: OwnedFd,
    record: ServerConnRecord,
    options: &ConnOptions,
    stats: &Arc<Stats>,
    registry: &Arc<Registry>,
) {
    if let Err(e) = make_blocking(&fd, options.idle_timeout) {
        stats.close(&record, CloseReason::from_io_error(&e));
        return;
    }
    let raw = fd.as_raw_fd();
    // Registered before the thread exists, so shutdown cannot miss it.
    registry.add(raw);
    let peer_record = record.clone();
    let thread_stats = Arc::clone(stats);
    let thread_registry = Arc::clone(registry);
    let spawned = spawn_detached(options.stack, move || {
        let mut record = record;
        let reason = echo_until_closed(&fd, &mut record);
        thread_stats.close(&record, reason);
        // Leave the registry before the fd is closed, so the acceptor never
        // shuts down a reused fd number.
        thread_registry.remove(raw, fd);
    });
    if let Err(e) = spawned {
        // The closure, and with it the fd, is gone; only this thread shuts fds down,
        // so taking the number out of the registry now is safe.
        registry.forget(raw);
        stats.refuse_admitted_with(&peer_record, RefuseReason::ThreadSpawn, &e);
    }
}

/// Starts `body` on a detached pthread with a `stack`-byte stack (at least
/// PTHREAD_STACK_MIN): the stack and its guard page are the only maps it adds. The
/// error is pthread_create's, which is the kernel's (clone's EAGAIN, mmap's ENOMEM).
fn spawn_detached(stack: usize, body: impl FnOnce() + Send + 'static) -> io::Result<()> {
    type Body = Box<dyn FnOnce() + Send>;
    extern "C" fn start(arg: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: `arg` is the Box<Body> leaked by spawn_detached below, handed to
        // exactly this thread, which takes it back once.
        let body = unsafe { Box::from_raw(arg.cast::<Body>()) };
        // A panic must not unwind into C; the connection's thread ends either way.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        std::ptr::null_mut()
    }
    let arg = Box::into_raw(Box::new(Box::new(body) as Body));
    let stack = stack.max(libc::PTHREAD_STACK_MIN);
    // SAFETY: attr is initialised before use and destroyed after; on success the new
    // thread owns `arg`, on failure it is reclaimed here and never seen by a thread.
    let rc = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        let mut rc = libc::pthread_attr_init(&mut attr);
        if rc == 0 {
            rc = libc::pthread_attr_setstacksize(&mut attr, stack);
        }
        if rc == 0 {
            rc = libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        }
        if rc == 0 {
            let mut thread: libc::pthread_t = 0;
            rc = libc::pthread_create(&mut thread, &attr, start, arg.cast());
        }
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 {
            drop(Box::from_raw(arg));
        }
        rc
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// The connection thread: read, write it all back, repeat; returns why the connection ended.
fn echo_until_closed(fd: &OwnedFd, record: &mut ServerConnRecord) -> CloseReason {
    let mut buffer = vec![0u8; BUFFER_SIZE];
    let raw = fd.as_raw_fd();
    let reason = loop {
        let n = match syscall!(read(raw, buffer.as_mut_ptr().cast(), buffer.len())) {
            Ok(0) => break CloseReason::ClientClosed,
            Ok(n) => n as usize,
            // SO_RCVTIMEO expired: nothing arrived for --idle-timeout.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break CloseReason::IdleTimeout,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break CloseReason::from_io_error(&e),
        };
        record.bytes_in += n as u64;
        record.reads += 1;
        if !crate::server::work::per_read() {
            break CloseReason::Shutdown;
        }
        if let Err(e) = send_all(raw, &buffer[..n], record) {
            break CloseReason::from_io_error(&e);
        }
    };
    // Woken by the acceptor's shutdown(2): whatever read or send said, that is why it ended.
    if stop_requested() {
        CloseReason::Shutdown
    } else {
        reason
    }
}

/// Blocking send until every byte is written (MSG_NOSIGNAL: a reset peer is an error, not a signal).
fn send_all(fd: RawFd, mut bytes: &[u8], record: &mut ServerConnRecord) -> io::Result<()> {
    while !bytes.is_empty() {
        match syscall!(send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL
        )) {
            Ok(n) => {
                record.bytes_out += n as u64;
                bytes = &bytes[n as usize..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Clears O_NONBLOCK (the acceptor hands out non-blocking sockets) and sets SO_RCVTIMEO.
fn make_blocking(fd: &OwnedFd, idle_timeout: Option<Duration>) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    let flags = syscall!(fcntl(raw, libc::F_GETFL))?;
    syscall!(fcntl(raw, libc::F_SETFL, flags & !libc::O_NONBLOCK))?;
    if let Some(limit) = idle_timeout {
        let timeout = libc::timeval {
            tv_sec: limit.as_secs() as libc::time_t,
            tv_usec: limit.subsec_micros() as libc::suseconds_t,
        };
        syscall!(setsockopt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t
        ))?;
    }
    Ok(())
}

/// The fds of the open connections, so shutdown can wake their threads.
#[derive(Default)]
struct Registry {
    open: Mutex<HashSet<RawFd>>,
    emptied: Condvar,
}

impl Registry {
    fn add(&self, fd: RawFd) {
        self.lock().insert(fd);
    }

    /// Called by a connection thread when it is done: leaves the registry, then closes the fd.
    fn remove(&self, fd: RawFd, owned: OwnedFd) {
        let mut open = self.lock();
        open.remove(&fd);
        drop(owned);
        if open.is_empty() {
            self.emptied.notify_all();
        }
    }

    fn forget(&self, fd: RawFd) {
        self.lock().remove(&fd);
    }

    fn open(&self) -> usize {
        self.lock().len()
    }

    /// shutdown(2)s every open connection; their blocked reads and sends return at once.
    fn shutdown_all(&self) -> usize {
        let open = self.lock();
        for &fd in open.iter() {
            // Errors (e.g. ENOTCONN after a reset) do not matter: the thread is ending anyway.
            let _ = syscall!(shutdown(fd, libc::SHUT_RDWR));
        }
        open.len()
    }

    /// Waits until every connection thread has closed its record; false if `limit` passed first.
    fn wait_empty(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut open = self.lock();
        while !open.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            open = self
                .emptied
                .wait_timeout(open, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<RawFd>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn pollfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}
