//! The engine: one event loop per thread, each owning a fixed set of connections.
//!
//! The loop ([`Worker`]) is the same whatever the kernel interface: it opens connections on
//! schedule, releases requests (closed or open loop), checks every echoed byte, records
//! latency, and drains and closes. Its I/O goes through an [`Io`], chosen by `--engine`:
//!
//! - [`epoll`] (the default): readiness. Each echo costs a `read` and the next request a
//!   `send`, with an `epoll_wait` now and then;
//! - [`uring`]: completions. Each connection has one multishot recv on provided buffers and
//!   sends are submission entries, so any number of echoes and requests share one
//!   `io_uring_enter`.
//!
//! Sends come straight out of the shared payload (a repeated copy makes a run of pipelined
//! messages one slice); echoes are checked against the payload ([`super::check`]) in one
//! buffer per thread. Each thread hands its measurements to the [recorder](super::in_process)
//! (the main thread) every 100 ms through its [`Shared`]. How connections end (done, failed,
//! drained, timed out) is in [`ending`].

mod ending;
mod epoll;
mod interface;
mod shared;
mod uring;

use interface::{Io, IoEvent, Piece, Sent};
pub use shared::{Shared, Stop};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::check::EchoCursor;
use super::conn::{
    connect_socket, local_addr, socket_error, Conn, Drain, State, NO_TIMER, UNLIMITED,
};
use super::measurements::{record_us, round3, ErrorKind, Interval, LoadConnRecord};
use super::schedule::{Payload, Plan};
use super::Engine;
use crate::syscall;

/// How often a thread hands its measurements to the recorder.
const FLUSH_NS: u64 = 100_000_000;
/// Connections a thread opens per loop turn, so events keep flowing during a fast ramp.
const OPEN_BATCH: usize = 256;
/// An open-loop request released later than this counts as the generator falling behind.
const LATE_NS: u64 = 5_000_000;
/// A connection that thinks this long between requests frees its in-flight queue while it
/// waits (one allocation a request, against ~80 bytes held by each idle connection).
const IDLE_FOR: Duration = Duration::from_secs(1);

/// Starts one event-loop thread per slot of `shared`, each with its share of the connections.
pub fn start(
    plan: &Plan,
    shared: &Arc<Shared>,
    clock: Instant,
    started_unix: f64,
) -> anyhow::Result<Vec<JoinHandle<anyhow::Result<()>>>> {
    match plan.engine {
        Engine::Epoll => spawn(plan, shared, clock, started_unix, epoll::EpollIo::new),
        Engine::Uring => {
            // A missing or forbidden io_uring is reported once, before any thread starts.
            uring::UringIo::check_available()?;
            spawn(plan, shared, clock, started_unix, uring::UringIo::new)
        }
    }
}

fn spawn<I: Io + 'static>(
    plan: &Plan,
    shared: &Arc<Shared>,
    clock: Instant,
    started_unix: f64,
    new_io: fn(&Plan) -> anyhow::Result<I>,
) -> anyhow::Result<Vec<JoinHandle<anyhow::Result<()>>>> {
    let threads = shared.threads();
    let handles = (0..threads)
        .map(|index| {
            let plan = plan.clone();
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name(format!("load-{index}"))
                .spawn(move || -> anyhow::Result<()> {
                    crate::sys::tighten_timer_slack();
                    // Made in its own thread: an io_uring ring is used by this thread only.
                    let io = new_io(&plan)?;
                    let mut worker =
                        Worker::new(&plan, &shared, index, threads, clock, started_unix, io);
                    worker.run()
                })
        })
        .collect::<io::Result<_>>()?;
    Ok(handles)
}

/// Where received bytes are: read into the loop's buffer (readiness), or left by the
/// kernel in one of the I/O's buffers (completion).
enum Input {
    Buf(usize),
    Piece(Piece),
}

struct Worker<'a, I: Io> {
    plan: &'a Plan,
    shared: &'a Shared,
    index: usize,
    io: I,
    conns: Vec<Conn>,
    next_open: usize,
    remaining: usize,
    timers: BinaryHeap<Reverse<(u64, u32)>>,
    local: Interval,
    buf: Vec<u8>,
    payload: Arc<Payload>,
    size: u64,
    clock: Instant,
    started_unix: f64,
    deadline: u64,
    /// Requests sent before this (ns since the run started) are the warm-up's: checked, not measured.
    measured_from: u64,
    drain: Drain,
    open_loop: Option<u64>,
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

impl<'a, I: Io> Worker<'a, I> {
    fn new(
        plan: &'a Plan,
        shared: &'a Shared,
        index: usize,
        threads: usize,
        clock: Instant,
        started_unix: f64,
        io: I,
    ) -> Worker<'a, I> {
        let to_release = plan.requests.unwrap_or(UNLIMITED);
        let conns: Vec<Conn> = (index as u64..plan.connections())
            .step_by(threads)
            .map(|local| Conn::new(plan.global_id(local), to_release))
            .collect();
        Worker {
            plan,
            shared,
            index,
            io,
            remaining: conns.len(),
            conns,
            next_open: 0,
            timers: BinaryHeap::new(),
            local: Interval::default(),
            buf: vec![0; 256 * 1024],
            payload: Arc::clone(&plan.payload),
            size: plan.payload.len(),
            clock,
            started_unix,
            deadline: plan
                .duration
                .map_or(NO_TIMER, |d| ns(plan.warmup).saturating_add(ns(d))),
            measured_from: ns(plan.warmup),
            drain: Drain::default(),
            open_loop: plan.open_loop_ns(0).map(|(_, period)| period),
        }
    }

    fn now(&self) -> u64 {
        ns(self.clock.elapsed())
    }

    fn run(&mut self) -> anyhow::Result<()> {
        let mut events = Vec::new();
        let mut next_flush = FLUSH_NS;
        let mut next_sweep = 1_000_000_000;
        loop {
            let now = self.now();
            let stop = self.shared.stop_requested();
            if !self.drain.active() && (stop.is_some() || now >= self.deadline) {
                self.begin_drain(now);
            }
            let drain_over = self.drain.over(now);
            if stop == Some(Stop::Now) || drain_over {
                self.close_all(now, drain_over);
            }
            if self.remaining == 0 {
                break;
            }
            self.open_due(now);
            self.fire_timers(now);
            if now >= next_sweep {
                self.sweep_response_timeouts(now);
                next_sweep = now + 1_000_000_000;
            }
            if now >= next_flush {
                self.flush();
                next_flush = now + FLUSH_NS;
            }
            let mut wake = next_flush.min(next_sweep).min(self.deadline);
            if let Some(Reverse((at, _))) = self.timers.peek() {
                wake = wake.min(*at);
            }
            if let Some(d) = self.drain.until {
                wake = wake.min(d);
            }
            if !self.drain.active() && self.next_open < self.conns.len() {
                wake = wake.min(self.plan.open_at_ns(self.conns[self.next_open].global));
            }
            let timeout_ns = wake.saturating_sub(self.now()).min(100_000_000);
            self.io.wait(timeout_ns, &mut events)?;
            for event in events.drain(..) {
                self.handle(event);
            }
        }
        self.flush();
        Ok(())
    }

    fn flush(&mut self) {
        if self.local.is_empty() {
            return;
        }
        self.shared.hand_over(self.index, &mut self.local);
    }

    fn set_timer(&mut self, idx: usize, at: u64) {
        self.conns[idx].timer_at = at;
        if at != NO_TIMER {
            self.timers.push(Reverse((at, idx as u32)));
        }
    }

    fn open_due(&mut self, now: u64) {
        let mut budget = OPEN_BATCH;
        while !self.drain.active()
            && budget > 0
            && self.next_open < self.conns.len()
            && self.plan.open_at_ns(self.conns[self.next_open].global) <= now
        {
            let idx = self.next_open;
            self.next_open += 1;
            budget -= 1;
            self.open_conn(idx, now);
        }
    }

    fn fire_timers(&mut self, now: u64) {
        while let Some(&Reverse((at, idx))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let idx = idx as usize;
            if self.conns[idx].timer_at != at {
                continue; // replaced or cancelled
            }
            self.conns[idx].timer_at = NO_TIMER;
            match self.conns[idx].state {
                State::Connecting => self.fail(idx, ErrorKind::Timeout, now),
                State::Holding => self.close_conn(idx, now, "done"),
                State::Backoff => self.open_conn(idx, now),
                State::Active => self.release_due(idx, now, at),
                State::Pending | State::Done => {}
            }
        }
    }

    /// Active timer: the think time ended (closed loop) or requests came due (open loop).
    fn release_due(&mut self, idx: usize, now: u64, at: u64) {
        if self.drain.active() {
            return;
        }
        let c = &mut self.conns[idx];
        if let Some(period) = self.open_loop {
            let lateness = now - at;
            if c.next_intended <= now && c.to_release > 0 {
                // Every send time due by now, counted, not queued.
                let due = ((now - c.next_intended) / period + 1).min(c.to_release);
                c.released += due;
                c.next_intended += due * period;
                if c.to_release != UNLIMITED {
                    c.to_release -= due;
                }
                self.local.counters.releases += due;
                if lateness > LATE_NS {
                    self.local.counters.late_releases += due;
                }
            }
            let counters = &mut self.local.counters;
            counters.max_lateness_ns = counters.max_lateness_ns.max(lateness);
            let next = if c.to_release > 0 {
                c.next_intended
            } else {
                NO_TIMER
            };
            self.set_timer(idx, next);
        } else {
            let n = std::mem::take(&mut c.delayed).min(c.to_release);
            c.release_now(n);
        }
        self.try_send(idx, now);
    }

    fn open_conn(&mut self, idx: usize, now: u64) {
        let target = self.plan.target;
        let source = (!self.plan.source_addrs.is_empty()).then(|| {
            let addrs = &self.plan.source_addrs;
            addrs[(self.conns[idx].global % addrs.len() as u64) as usize]
        });
        let c = &mut self.conns[idx];
        c.attempt += 1;
        c.state = State::Connecting;
        c.established = false;
        c.echo = EchoCursor::default();
        c.writable = false;
        c.connect_started = now;
        c.rec = LoadConnRecord {
            conn_id: c.global,
            attempt: c.attempt,
            opened_unix: round3(self.started_unix + now as f64 / 1e9),
            ..LoadConnRecord::default()
        };
        self.local.counters.connect_attempts += 1;
        match connect_socket(target, source) {
            Ok(socket) => {
                let c = &mut self.conns[idx];
                let (fd, token) = (socket.as_raw_fd(), c.token(idx));
                c.socket = Some(socket);
                c.out_armed = true; // the connect completes as writability
                if let Err(e) = self.io.watch_connect(fd, token) {
                    self.fail(
                        idx,
                        ErrorKind::from_errno(e.raw_os_error().unwrap_or(0)),
                        now,
                    );
                    return;
                }
                let timeout = now + ns(self.plan.connect_timeout);
                self.set_timer(idx, timeout);
            }
            Err(e) => self.fail(
                idx,
                ErrorKind::from_errno(e.raw_os_error().unwrap_or(0)),
                now,
            ),
        }
    }

    /// The connection an event is about, unless it was closed since (or reopened).
    fn live(&self, token: u64) -> Option<usize> {
        let idx = (token >> 32) as usize;
        let c = self.conns.get(idx)?;
        (c.socket.is_some() && c.token(idx) == token).then_some(idx)
    }

    fn handle(&mut self, event: IoEvent) {
        match event {
            IoEvent::Ready {
                token,
                readable,
                writable,
                read_closed,
                error,
            } => {
                if let Some(idx) = self.live(token) {
                    self.on_ready(idx, readable, writable, read_closed || error, error);
                }
            }
            IoEvent::Received { token, piece } => {
                if let Some(idx) = self.live(token) {
                    let now = self.now();
                    if self.on_bytes(idx, now, Input::Piece(piece)) {
                        self.after_input(idx, now);
                    }
                }
                // The buffer goes back whether or not the connection still lives.
                self.io.release(piece);
            }
            IoEvent::Ended { token } => {
                if let Some(idx) = self.live(token) {
                    self.on_eof(idx, self.now());
                }
            }
            IoEvent::Failed { token, errno } => {
                if let Some(idx) = self.live(token) {
                    self.fail(idx, ErrorKind::from_errno(errno), self.now());
                }
            }
        }
    }

    fn on_ready(&mut self, idx: usize, readable: bool, writable: bool, to_end: bool, error: bool) {
        let now = self.now();
        let c = &self.conns[idx];
        if c.state == State::Connecting {
            if writable || error {
                let socket = c.socket.as_ref().expect("a live connection has a socket");
                match socket_error(socket) {
                    0 if !error => self.on_established(idx, now),
                    0 => self.fail(idx, ErrorKind::Other, now),
                    errno => self.fail(idx, ErrorKind::from_errno(errno), now),
                }
            }
            return;
        }
        if (readable || to_end) && !self.on_readable(idx, now, to_end) {
            return;
        }
        if writable && self.conns[idx].is_open() {
            self.conns[idx].writable = true;
            self.try_send(idx, now);
        }
    }

    fn on_established(&mut self, idx: usize, now: u64) {
        let active = self.shared.active.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.max_active.fetch_max(active, Ordering::Relaxed);
        self.local.counters.established += 1;
        let open_loop = self.plan.open_loop_ns(self.conns[idx].global);
        let pipeline = self.plan.pipeline as u64;
        let c = &mut self.conns[idx];
        c.state = State::Active;
        c.established = true;
        c.writable = true;
        c.rec.connect_us = (now - c.connect_started) / 1000;
        let (fd, token) = (
            c.fd().expect("an established connection is open"),
            c.token(idx),
        );
        match self.io.watch_input(fd, token) {
            Ok(()) => c.out_armed = false,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                return self.fail(idx, ErrorKind::from_errno(errno), now);
            }
        }
        if let Some(local) = c.socket.as_ref().and_then(local_addr) {
            c.rec.local_addr = Some(local.ip());
            c.rec.local_port = local.port();
        }
        if c.to_release == 0 {
            self.set_timer(idx, NO_TIMER);
            self.finish(idx, now);
            return;
        }
        match open_loop {
            Some((phase, period)) => {
                c.period = period;
                c.next_intended = now + phase;
                let first = c.next_intended;
                self.set_timer(idx, first);
            }
            None => {
                let n = pipeline.min(c.to_release);
                c.release_now(n);
                self.set_timer(idx, NO_TIMER);
                self.try_send(idx, now);
            }
        }
    }

    /// Writes as much of the released messages as the socket takes.
    fn try_send(&mut self, idx: usize, now: u64) {
        let size = self.size;
        let pipeline = self.plan.pipeline;
        loop {
            let c = &mut self.conns[idx];
            let Some(fd) = c.fd().filter(|_| c.writable && c.state == State::Active) else {
                return;
            };
            let started = c.echo.sent.div_ceil(size);
            let startable = c
                .released
                .min(pipeline.saturating_sub(c.inflight.len()) as u64);
            let end = (started + startable) * size;
            if c.echo.sent >= end {
                return;
            }
            let offset = (c.echo.sent % size) as usize;
            let window = self.payload.repeated.len() - size as usize;
            let len = ((end - c.echo.sent) as usize).min(window);
            let chunk = &self.payload.repeated[offset..offset + len];
            match self.io.send(fd, c.token(idx), chunk) {
                Sent::Bytes(written) => {
                    let written = written as u64;
                    let new_started = (c.echo.sent + written).div_ceil(size) - started;
                    for _ in 0..new_started {
                        let intended = c.start_released();
                        c.inflight.push_back((intended, now));
                    }
                    self.local.counters.sends += new_started;
                    c.echo.sent += written;
                    c.rec.bytes_sent += written;
                    self.local.counters.bytes_sent += written;
                    if (written as usize) < len {
                        // The socket buffer is full: wait for EPOLLOUT.
                        self.wait_writable(idx, now);
                        return;
                    }
                }
                Sent::WouldBlock => {
                    self.wait_writable(idx, now);
                    return;
                }
                Sent::Interrupted => {}
                Sent::Failed(errno) => return self.fail(idx, ErrorKind::from_errno(errno), now),
            }
        }
    }

    fn wait_writable(&mut self, idx: usize, now: u64) {
        let c = &mut self.conns[idx];
        c.writable = false;
        let fd = c.fd().expect("only an open connection waits to write");
        if let Err(e) = self.io.wait_writable(fd, c.token(idx), &mut c.out_armed) {
            let errno = e.raw_os_error().unwrap_or(0);
            self.fail(idx, ErrorKind::from_errno(errno), now);
        }
    }

    /// Reads and verifies echoes (readiness). Returns false when the connection ended.
    fn on_readable(&mut self, idx: usize, now: u64, read_to_end: bool) -> bool {
        loop {
            let Some(fd) = self.conns[idx].fd() else {
                return false;
            };
            let n = match syscall!(read(fd, self.buf.as_mut_ptr().cast(), self.buf.len())) {
                Ok(0) => {
                    self.on_eof(idx, now);
                    return false;
                }
                Ok(n) => n as usize,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => {
                    self.fail(
                        idx,
                        ErrorKind::from_errno(e.raw_os_error().unwrap_or(0)),
                        now,
                    );
                    return false;
                }
            };
            if !self.on_bytes(idx, now, Input::Buf(n)) {
                return false;
            }
            if n < self.buf.len() && !read_to_end {
                break; // drained: with edge triggering, new data raises a new event
            }
        }
        self.after_input(idx, now)
    }

    /// Verifies bytes received and releases the requests their echoes complete. Returns
    /// false when the connection failed.
    fn on_bytes(&mut self, idx: usize, now: u64, input: Input) -> bool {
        let bytes = match input {
            Input::Buf(n) => &self.buf[..n],
            Input::Piece(piece) => self.io.received(piece),
        };
        let n = bytes.len();
        let c = &mut self.conns[idx];
        let local = &mut self.local;
        let drain = &mut self.drain;
        let open_loop = self.open_loop.is_some();
        let measured_from = self.measured_from;
        let check = c.echo.check(&self.payload.message, bytes, |intact| {
            let (intended, sent) = c.inflight.pop_front().unwrap_or((now, now));
            drain.echoed(now.saturating_sub(sent));
            if intact {
                c.failures = 0;
                let from = if intended == 0 { sent } else { intended };
                if from < measured_from {
                    // The warm-up's: echoed and checked, left out of every measurement.
                    local.counters.warmup_requests += 1;
                    return;
                }
                let latency = now.saturating_sub(from) / 1000;
                record_us(&mut local.latency, latency);
                if open_loop {
                    let raw = now.saturating_sub(sent) / 1000;
                    record_us(&mut local.latency_raw, raw);
                }
                c.rec.total_response_us += latency;
                c.rec.requests += 1;
                local.counters.requests += 1;
            }
        });
        let mismatches = check.mismatched + u64::from(check.too_many);
        local.counters.mismatches += mismatches;
        c.rec.mismatches += mismatches;
        c.rec.errors += mismatches;
        if check.too_many {
            // More bytes than were sent: not an echo of this stream.
            self.fail(idx, ErrorKind::Other, now);
            return false;
        }
        c.rec.bytes_received += n as u64;
        local.counters.bytes_received += n as u64;
        self.drain.progress(now);
        local.counters.bytes_verified += check.verified;
        let completed = check.completed;
        if completed > 0 && self.open_loop.is_none() && !self.drain.active() {
            let c = &mut self.conns[idx];
            if self.plan.delay.is_zero() {
                let k = completed.min(c.to_release);
                c.release_now(k);
            } else {
                c.delayed += completed.min(c.to_release.saturating_sub(c.delayed));
                if c.inflight.is_empty() && self.plan.delay >= IDLE_FOR {
                    // A long think time (c1m's trickle waits 60 s): give the queue back.
                    c.inflight = VecDeque::new();
                }
                if c.delayed > 0 && c.timer_at == NO_TIMER {
                    let at = now + ns(self.plan.delay);
                    self.set_timer(idx, at);
                }
            }
        }
        true
    }

    /// After input: sends what was released, and holds or closes a connection that is done.
    /// Returns false when the connection ended.
    fn after_input(&mut self, idx: usize, now: u64) -> bool {
        self.try_send(idx, now);
        let c = &self.conns[idx];
        if !c.is_open() {
            return false;
        }
        let idle = c.inflight.is_empty() && c.released == 0 && c.echo.is_settled();
        if c.state == State::Active && idle {
            if self.drain.active() {
                self.close_conn(idx, now, "stopped");
                return false;
            }
            if c.to_release == 0 && c.delayed == 0 {
                self.finish(idx, now);
                return self.conns[idx].is_open();
            }
        }
        true
    }
}
