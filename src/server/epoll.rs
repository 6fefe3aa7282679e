//! epoll(7): N worker threads, each with its own epoll set and its own connection table.
//!
//! Unlike select and poll, the kernel keeps the interest set between calls: a
//! connection is registered once (EPOLL_CTL_ADD) and epoll_wait returns only the
//! ready ones, so the cost of a wakeup grows with the number of *ready*
//! connections, not with the number open. The price is a system call whenever
//! the interest of a connection changes (EPOLL_CTL_MOD), so each connection
//! remembers the mask it registered and the loop only calls MOD when the wanted
//! mask differs: EPOLLIN is dropped while its unsent echo is over `--max-pending`
//! (backpressure), EPOLLOUT is added only while echo is pending.
//!
//! Each worker's table is a `Vec<Option<Slot>>` indexed by fd (like Redis's events
//! array); `data.u64` of every registration is the fd itself. An idle connection
//! holds no buffer, so the table is most of its user-space cost; but fds are numbered
//! process-wide, so every worker's table spans the highest fd it has served: with W
//! workers that is about W x 130 B per open fd (measured: ~280 B of RSS per idle
//! connection at 10 000 connections and 2 workers). Kernel socket memory comes on top.
//!
//! Threads: one per worker, plus the acceptor with `--accept dispatcher`. Every epoll
//! set, registration and spare fd is created before any thread starts, so no worker
//! needs a new fd once connections have filled the fd table.
//!
//! `--trigger`:
//! - `level`: epoll reports a connection for as long as it is readable or
//!   writable, like poll; a turn reads at most a fairness budget and the rest is
//!   reported again on the next epoll_wait.
//! - `edge` (EPOLLET): epoll reports a connection once per change of state, so a
//!   wakeup must read until EAGAIN or that data is never reported again. To stay
//!   fair, a wakeup still reads at most a byte budget; a connection that used its
//!   budget without reaching EAGAIN goes on the worker's ready list and is served
//!   again after the other ready connections, and epoll_wait does not block (timeout
//!   0) while that list is non-empty. Fewer wakeups than level-triggered, at the
//!   cost of this bookkeeping. Turning EPOLLIN back on with EPOLL_CTL_MOD re-checks
//!   the socket, so data that arrived while it was off is reported.
//!
//! `--accept` (how connections reach the workers):
//! - `dispatcher`: one acceptor thread (its own epoll set with the listener) accepts
//!   and hands each connection round-robin to a worker through that worker's inbox:
//!   a locked queue and an eventfd the worker watches. An even spread and one place
//!   that accepts, at the cost of an extra thread and a hand-off per connection.
//! - `reuseport`: one SO_REUSEPORT listener per worker; the kernel spreads incoming
//!   connections over the listeners by a hash of the addresses, with no hand-off and
//!   no shared accept queue, but a busy or paused worker keeps its share waiting.
//! - `exclusive`: one listener in every worker's epoll set with EPOLLEXCLUSIVE, so a
//!   new connection wakes one (or a few) of the waiting workers instead of all of them
//!   (the thundering herd). Only a worker blocked in epoll_wait can be woken, and the
//!   kernel wakes the first such worker on the listener's wait queue: under light load
//!   one worker takes nearly every connection; the spread follows the load, it is not
//!   round-robin.
//!
//! Every worker also watches the shutdown eventfd (level-triggered: it stays
//! readable), so all of them wake and close their connections on SIGINT/SIGTERM.
//! Accepting pauses after fd exhaustion by taking the listener out of the set
//! (EPOLL_CTL_DEL, the only change EPOLLEXCLUSIVE allows) and adding it back after.

use std::collections::VecDeque;
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::accept::{Accepted, Acceptor};
use super::counters::{CloseReason, ServerConnRecord, Stats};
use super::echo::{EchoConn, ReadStop, Ready, Scratch};
use super::stop::{request_stop, stop_fd, stop_requested};
use super::{timeout_ms, wake_up, AcceptMode, IdleScan, Setup, Trigger};
use crate::sys::epoll::{Epoll, Event, Events, Interest};
use crate::syscall;

/// Events taken from the kernel per epoll_wait.
const EVENTS_PER_WAIT: usize = 1024;
/// Connections a worker accepts per wakeup before serving its others again
/// (the listener is level-triggered, so the rest are reported on the next wait).
const ACCEPT_BATCH: usize = 64;

/// `data.u64` tokens of the fds that are not connections (connections use their fd).
const SHUTDOWN_TOKEN: u64 = u64::MAX;
const LISTENER_TOKEN: u64 = u64::MAX - 1;
const INBOX_TOKEN: u64 = u64::MAX - 2;

const IN: Interest = Interest::READABLE;
const OUT: Interest = Interest::WRITABLE;
// With EPOLLET, EPOLLRDHUP tells a report that carried an end of stream from one that did
// not, so a short read ends the turn only when no half-close can be left unread.
const ET: Interest = Interest::EDGE.union(Interest::READ_CLOSED);
const EXCLUSIVE: Interest = Interest::EXCLUSIVE;

pub fn serve(setup: Setup) -> anyhow::Result<()> {
    let workers = setup.config.worker_count();
    let accept = setup.config.accept;
    let reuseport_listeners: Vec<TcpListener> = match accept {
        AcceptMode::Reuseport => (1..workers)
            .map(|_| setup.bind_another_listener())
            .collect::<io::Result<_>>()
            .context("binding one SO_REUSEPORT listener per worker")?,
        _ => Vec::new(),
    };
    let inboxes: Vec<Inbox> = match accept {
        AcceptMode::Dispatcher => (0..workers)
            .map(|_| Inbox::new())
            .collect::<io::Result<_>>()
            .context("creating the worker inboxes")?,
        _ => Vec::new(),
    };

    // Every epoll set, registration and spare fd exists before the first accept: a
    // thread that set itself up later could find the fd table already full.
    let mut worker_loops = Vec::with_capacity(workers);
    for id in 0..workers {
        let source = match accept {
            AcceptMode::Dispatcher => Source::Inbox(&inboxes[id]),
            AcceptMode::Reuseport if id == 0 => {
                Source::listener(&setup, &setup.listener, Interest::NONE)
            }
            AcceptMode::Reuseport => {
                Source::listener(&setup, &reuseport_listeners[id - 1], Interest::NONE)
            }
            AcceptMode::Exclusive => Source::listener(&setup, &setup.listener, EXCLUSIVE),
        };
        let worker =
            Worker::new(&setup, &source).with_context(|| format!("setting up worker {id}"))?;
        worker_loops.push((worker, source));
    }
    let dispatcher = match accept {
        AcceptMode::Dispatcher => {
            Some(Dispatcher::new(&setup, &inboxes).context("setting up the acceptor")?)
        }
        _ => None,
    };
    setup.announce()?;

    let outcome = std::thread::scope(|scope| {
        let mut worker_threads = Vec::with_capacity(workers);
        let mut spawn_error = None;
        for (id, (worker, source)) in worker_loops.into_iter().enumerate() {
            let spawned = std::thread::Builder::new()
                .name(format!("epoll-worker-{id}"))
                .spawn_scoped(scope, move || worker.run_to_end(source));
            match spawned {
                Ok(handle) => worker_threads.push(handle),
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        let mut dispatcher_thread = None;
        if let Some(dispatcher) = dispatcher.filter(|_| spawn_error.is_none()) {
            match std::thread::Builder::new()
                .name("epoll-acceptor".into())
                .spawn_scoped(scope, move || dispatcher.run())
            {
                Ok(handle) => dispatcher_thread = Some(handle),
                Err(e) => spawn_error = Some(e),
            }
        }
        if spawn_error.is_some() {
            // Stop the threads that did start, then report why.
            request_stop();
        }

        let mut first_error: Option<anyhow::Error> =
            spawn_error.map(|e| anyhow::Error::new(e).context("spawning an epoll thread"));
        if let Some(handle) = dispatcher_thread {
            let result = handle.join().expect("the epoll acceptor thread panicked");
            if let Err(e) = result {
                first_error.get_or_insert(anyhow::Error::new(e).context("the acceptor failed"));
            }
        }
        let mut per_worker = Vec::with_capacity(workers);
        for (id, handle) in worker_threads.into_iter().enumerate() {
            match handle.join().expect("an epoll worker thread panicked") {
                Ok(served) => per_worker.push(served),
                Err(e) => {
                    per_worker.push(0);
                    first_error.get_or_insert(
                        anyhow::Error::new(e).context(format!("epoll worker {id} failed")),
                    );
                }
            }
        }
        (per_worker, first_error)
    });
    let (per_worker, first_error) = outcome;

    // Every thread has stopped: what the acceptor handed over after a worker left is closed here.
    for inbox in &inboxes {
        inbox.close_all(&setup.stats);
    }
    for (id, served) in per_worker.iter().enumerate() {
        crate::errln!("echolab serve: epoll worker {id} served {served} connections");
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Where a worker's connections come from.
enum Source<'a> {
    /// Handed over by the acceptor thread.
    Inbox(&'a Inbox),
    /// Accepted by the worker itself from this listener, registered with `flags` added.
    Listener {
        listener: &'a TcpListener,
        flags: Interest,
        acceptor: Acceptor,
        /// False while accepting is paused after fd exhaustion (the listener is out of the set).
        listening: bool,
    },
}

impl<'a> Source<'a> {
    fn listener(setup: &Setup, listener: &'a TcpListener, flags: Interest) -> Source<'a> {
        Source::Listener {
            listener,
            flags,
            acceptor: Acceptor::new(listener, Arc::clone(&setup.stats)),
            listening: true,
        }
    }
}

/// One connection in a worker's table.
struct Slot {
    conn: EchoConn,
    /// The events mask registered with epoll, so MOD is called only when it changes.
    registered: Interest,
    /// On the ready list (edge-triggered: budget used, more may be waiting).
    queued: bool,
}

struct Worker<'a> {
    epoll: Epoll,
    stats: &'a Arc<Stats>,
    trigger: Trigger,
    cap: usize,
    idle_scan: Option<IdleScan>,
    /// Indexed by fd.
    conns: Vec<Option<Slot>>,
    /// Edge-triggered connections that used their budget before EAGAIN, in service order.
    ready: VecDeque<RawFd>,
    scratch: Scratch,
    served: u64,
}

impl<'a> Worker<'a> {
    /// Creates the worker's epoll set with the shutdown eventfd and the connection source in it.
    fn new(setup: &'a Setup, source: &Source) -> io::Result<Worker<'a>> {
        let epoll = Epoll::new()?;
        epoll.add(stop_fd(), SHUTDOWN_TOKEN, IN)?;
        match source {
            Source::Inbox(inbox) => epoll.add(inbox.wake_fd(), INBOX_TOKEN, IN)?,
            Source::Listener {
                listener, flags, ..
            } => {
                let fd = listener.as_raw_fd();
                // Level-triggered: a batch may leave connections waiting for the next wait.
                epoll.add(fd, LISTENER_TOKEN, IN | *flags)?
            }
        }
        Ok(Worker {
            epoll,
            stats: &setup.stats,
            trigger: setup.config.trigger,
            cap: setup.config.max_pending,
            idle_scan: IdleScan::new(setup.config.idle_timeout),
            conns: Vec::new(),
            ready: VecDeque::new(),
            scratch: Scratch::new(),
            served: 0,
        })
    }

    /// Runs the loop until shutdown (or an error), then closes every connection; returns
    /// how many connections this worker served.
    fn run_to_end(mut self, mut source: Source) -> io::Result<u64> {
        let result = self.run(&mut source);
        if result.is_err() {
            // Without this worker the server cannot serve everyone: stop the others too.
            request_stop();
        }
        // Whatever ended the loop, every connection is closed and counted exactly once.
        self.close_all(CloseReason::Shutdown);
        if let Source::Inbox(inbox) = source {
            inbox.close_all(self.stats);
        }
        result.map(|()| self.served)
    }

    fn run(&mut self, source: &mut Source) -> io::Result<()> {
        let mut events = Events::with_capacity(EVENTS_PER_WAIT);

        while !stop_requested() {
            // 1. Take the listener back after an fd-exhaustion pause.
            if let Source::Listener {
                listener,
                flags,
                acceptor,
                listening: listening @ false,
            } = source
            {
                if !acceptor.paused() {
                    let fd = listener.as_raw_fd();
                    self.epoll.add(fd, LISTENER_TOKEN, IN | *flags)?;
                    *listening = true;
                }
            }

            // 2. Wait; never block while the ready list has work.
            let timeout = if self.ready.is_empty() {
                let pause_left = match source {
                    Source::Listener {
                        acceptor,
                        listening: false,
                        ..
                    } => acceptor.pause_left(),
                    _ => None,
                };
                timeout_ms(wake_up(pause_left, self.idle_scan.as_ref()))
            } else {
                0
            };
            self.epoll.wait(&mut events, timeout)?;

            // 3. Serve the connections epoll reported. Those already on the ready list
            //    read in their turn below, so each gets one budget per round.
            let carried = self.ready.len();
            let (mut accept_due, mut inbox_due) = (false, false);
            for event in events.iter() {
                match event.token() {
                    SHUTDOWN_TOKEN => return Ok(()),
                    LISTENER_TOKEN => accept_due = true,
                    INBOX_TOKEN => inbox_due = true,
                    fd => self.serve_event(fd as RawFd, event),
                }
            }

            // 4. Then the edge-triggered connections left over from earlier rounds.
            self.serve_ready_list(carried);

            // 5. New connections last, so this round's events never refer to their fds.
            if accept_due {
                if let Source::Listener {
                    listener,
                    acceptor,
                    listening,
                    ..
                } = source
                {
                    if !self.accept_batch(acceptor) {
                        self.epoll.delete(listener.as_raw_fd())?;
                        *listening = false;
                    }
                }
            }
            if inbox_due {
                if let Source::Inbox(inbox) = source {
                    for (fd, record) in inbox.take() {
                        self.add_conn(fd, record);
                    }
                }
            }

            // 6. Idle timeout: a scan of the table now and then, not on every wakeup.
            if let Some(limit) = self.idle_scan.as_mut().and_then(IdleScan::due) {
                self.close_idle(limit);
            }
        }
        Ok(())
    }

    /// Accepts up to a batch; returns false when accepting paused (take the listener out).
    fn accept_batch(&mut self, acceptor: &mut Acceptor) -> bool {
        for _ in 0..ACCEPT_BATCH {
            match acceptor.accept() {
                Accepted::Conn(fd, record) => self.add_conn(fd, record),
                Accepted::Refused => continue,
                Accepted::WouldBlock => return true,
                Accepted::Paused => return false,
            }
        }
        true
    }

    /// Registers a new connection for reading and puts it in the table.
    fn add_conn(&mut self, fd: OwnedFd, record: ServerConnRecord) {
        let raw = fd.as_raw_fd();
        let conn = EchoConn::new(fd, record);
        let mask = self.mask(IN);
        // With EPOLLET, ADD reports data that arrived before it, so nothing is missed.
        if let Err(e) = self.epoll.add(raw, raw as u64, mask) {
            crate::errln!("echolab serve: epoll_ctl(ADD) failed for a new connection: {e}");
            self.stats.close(&conn.record, CloseReason::Error);
            return;
        }
        let index = raw as usize;
        if self.conns.len() <= index {
            self.conns.resize_with(index + 1, || None);
        }
        self.conns[index] = Some(Slot {
            conn,
            registered: mask,
            queued: false,
        });
        self.served += 1;
    }

    /// Serves a connection epoll reported in `event`.
    fn serve_event(&mut self, fd: RawFd, event: Event) {
        let level = self.trigger == Trigger::Level;
        let ended = event.is_read_closed() || event.is_error();
        let Some(slot) = self.slot(fd) else {
            return;
        };
        // ERR/HUP: write or read to learn whether it was a clean close or a reset.
        let ready = Ready {
            writable: event.is_writable() || event.is_error(),
            readable: (event.is_readable() || event.is_error()) && !slot.queued,
            short_read_drains: level || !ended,
        };
        self.serve_conn(fd, ready);
    }

    /// Serves up to `count` connections from the front of the ready list.
    fn serve_ready_list(&mut self, count: usize) {
        for _ in 0..count {
            let Some(fd) = self.ready.pop_front() else {
                return;
            };
            let Some(slot) = self.slot(fd) else {
                continue;
            };
            slot.queued = false;
            let ready = Ready {
                readable: true,
                writable: true,
                short_read_drains: false, // queued: it stopped at its budget, not drained
            };
            self.serve_conn(fd, ready);
        }
    }

    /// Flushes, reads and echoes; then closes the connection, queues it on the ready
    /// list or updates its registration, as its new state asks.
    fn serve_conn(&mut self, fd: RawFd, ready: Ready) {
        let (cap, edge) = (self.cap, self.trigger == Trigger::Edge);
        let Some(slot) = self.conns.get_mut(fd as usize).and_then(Option::as_mut) else {
            return;
        };
        match slot.conn.serve_ready(ready, &mut self.scratch, cap) {
            Err(reason) => return self.close(fd, reason),
            Ok(Some(ReadStop::Budget)) if edge && !slot.queued => {
                slot.queued = true;
                self.ready.push_back(fd);
            }
            Ok(_) => {}
        }
        let wanted = {
            let conn = &slot.conn;
            let none = Interest::NONE;
            let read = if conn.wants_read(cap) { IN } else { none };
            let write = if conn.wants_write() { OUT } else { none };
            read | write | if edge { ET } else { none }
        };
        if wanted != slot.registered {
            // Re-enabling EPOLLIN makes the kernel re-check the socket, so no edge is lost.
            match self.epoll.modify(fd, fd as u64, wanted) {
                Ok(()) => slot.registered = wanted,
                Err(e) => {
                    crate::errln!("echolab serve: epoll_ctl(MOD) failed: {e}");
                    self.close(fd, CloseReason::Error);
                }
            }
        }
    }

    fn slot(&mut self, fd: RawFd) -> Option<&mut Slot> {
        self.conns.get_mut(fd as usize).and_then(Option::as_mut)
    }

    fn mask(&self, events: Interest) -> Interest {
        match self.trigger {
            Trigger::Edge => events | ET,
            Trigger::Level => events,
        }
    }

    /// Closes a connection (its fd leaves the epoll set as it closes) and counts it.
    fn close(&mut self, fd: RawFd, reason: CloseReason) {
        let Some(slot) = self.conns.get_mut(fd as usize).and_then(Option::take) else {
            return;
        };
        if slot.queued {
            self.ready.retain(|&queued| queued != fd);
        }
        self.stats.close(&slot.conn.record, reason);
    }

    fn close_idle(&mut self, limit: Duration) {
        let now = Instant::now();
        let idle: Vec<RawFd> = self
            .conns
            .iter()
            .enumerate()
            .filter_map(|(fd, slot)| {
                let slot = slot.as_ref()?;
                (now.duration_since(slot.conn.last_active) >= limit).then_some(fd as RawFd)
            })
            .collect();
        for fd in idle {
            self.close(fd, CloseReason::IdleTimeout);
        }
    }

    fn close_all(&mut self, reason: CloseReason) {
        self.ready.clear();
        for slot in self.conns.iter_mut().filter_map(Option::take) {
            self.stats.close(&slot.conn.record, reason);
        }
    }
}

/// `--accept dispatcher`: accepts on its own epoll set and deals connections round-robin.
struct Dispatcher<'a> {
    epoll: Epoll,
    listener: RawFd,
    acceptor: Acceptor,
    inboxes: &'a [Inbox],
}

impl<'a> Dispatcher<'a> {
    fn new(setup: &Setup, inboxes: &'a [Inbox]) -> io::Result<Dispatcher<'a>> {
        let epoll = Epoll::new()?;
        let listener = setup.listener.as_raw_fd();
        epoll.add(stop_fd(), SHUTDOWN_TOKEN, IN)?;
        epoll.add(listener, LISTENER_TOKEN, IN)?;
        Ok(Dispatcher {
            epoll,
            listener,
            acceptor: Acceptor::new(&setup.listener, Arc::clone(&setup.stats)),
            inboxes,
        })
    }

    fn run(mut self) -> io::Result<()> {
        let listener = self.listener;
        let mut listening = true;
        let mut next_worker = 0;
        let mut events = Events::with_capacity(2);

        while !stop_requested() {
            if !listening && !self.acceptor.paused() {
                self.epoll.add(listener, LISTENER_TOKEN, IN)?;
                listening = true;
            }
            let timeout = timeout_ms(wake_up(
                self.acceptor.pause_left().filter(|_| !listening),
                None,
            ));
            self.epoll.wait(&mut events, timeout)?;
            if events.iter().any(|e| e.token() == SHUTDOWN_TOKEN) {
                return Ok(());
            }
            if !events.iter().any(|e| e.token() == LISTENER_TOKEN) {
                continue;
            }
            loop {
                match self.acceptor.accept() {
                    Accepted::Conn(fd, record) => {
                        self.inboxes[next_worker].push(fd, record);
                        next_worker = (next_worker + 1) % self.inboxes.len();
                    }
                    Accepted::Refused => continue,
                    Accepted::WouldBlock => break,
                    Accepted::Paused => {
                        self.epoll.delete(listener)?;
                        listening = false;
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A worker's inbox in dispatcher mode: connections queued by the acceptor, and an
/// eventfd (in the worker's epoll set) that the acceptor writes after each push.
///
/// The worker resets the eventfd *before* taking the queue, so a push it does not
/// see is always followed by a write that wakes it again.
struct Inbox {
    queue: Mutex<Vec<(OwnedFd, ServerConnRecord)>>,
    wake: OwnedFd,
}

impl Inbox {
    fn new() -> io::Result<Inbox> {
        let fd = syscall!(eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC))?;
        Ok(Inbox {
            queue: Mutex::new(Vec::new()),
            // SAFETY: eventfd returned a new fd that nothing else owns.
            wake: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn wake_fd(&self) -> RawFd {
        self.wake.as_raw_fd()
    }

    fn push(&self, fd: OwnedFd, record: ServerConnRecord) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((fd, record));
        let one: u64 = 1;
        // Cannot block (EFD_NONBLOCK) and cannot overflow in practice; the counter's
        // value does not matter, only that it is non-zero.
        let _ = syscall!(write(self.wake_fd(), (&one as *const u64).cast(), 8));
    }

    fn take(&self) -> Vec<(OwnedFd, ServerConnRecord)> {
        let mut count: u64 = 0;
        // Resets the counter; EAGAIN just means it was already zero.
        let _ = syscall!(read(self.wake_fd(), (&mut count as *mut u64).cast(), 8));
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Closes (as `shutdown`) the connections no worker took.
    fn close_all(&self, stats: &Stats) {
        for (fd, record) in self.take() {
            drop(fd);
            stats.close(&record, CloseReason::Shutdown);
        }
    }
}
