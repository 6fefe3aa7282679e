//! The engine: one epoll event loop per thread, each owning a fixed set of connections.
//!
//! Sockets are nonblocking and registered once, edge-triggered, for input and output, so the
//! loop never calls `epoll_ctl` again after connecting. Sends come straight out of the shared
//! payload (a repeated copy makes a run of pipelined messages one slice); echoes are read into
//! one buffer per thread and compared in place with the payload, so no byte is copied per
//! request. Each thread hands its measurements to the recorder (the main thread) every 100 ms.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::mem::ManuallyDrop;
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, IntoRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::preflight;
use super::record::{
    self, round3, unix_now, ErrorKind, Interval, LoadConnRecord, LoadSummary, Outputs,
};
use super::schedule::{Mode, Payload, Plan};

/// How long in-flight echoes may still arrive after the run stops sending.
const DRAIN: Duration = Duration::from_secs(1);
/// How often a thread hands its measurements to the recorder.
const FLUSH_NS: u64 = 100_000_000;
/// Connections a thread opens per loop turn, so events keep flowing during a fast ramp.
const OPEN_BATCH: usize = 256;
/// An open-loop request released later than this counts as the generator falling behind.
const LATE_NS: u64 = 5_000_000;
const NO_TIMER: u64 = u64::MAX;
const UNLIMITED: u64 = u64::MAX;

/// Signal that asked the run to stop (0 = none), set by the signal handler.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// A second signal: stop at once without waiting for in-flight echoes.
static ABORT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only atomics here: they are async-signal-safe.
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        ABORT.store(true, Ordering::SeqCst);
    }
}

/// Catches SIGINT and SIGTERM so the run stops cleanly and writes its results.
pub fn install_signal_handlers() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics, which is async-signal-safe.
        unsafe {
            libc::signal(signal, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The signal received so far, if any.
pub fn received_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// State shared by the threads and the recorder.
struct Shared {
    /// 0 running, 1 stop sending and drain, 2 stop at once.
    stop: AtomicU8,
    active: AtomicU64,
    max_active: AtomicU64,
    intervals: Vec<Mutex<Interval>>,
}

/// Runs the plan in this process. `None` when preflight found the run cannot fit (explained on
/// stderr).
pub fn run(
    plan: &Plan,
    out: Option<&Path>,
    show_progress: bool,
) -> anyhow::Result<Option<LoadSummary>> {
    let mut warnings = match preflight::check(plan, plan.connections()) {
        Ok(report) => report.warnings,
        Err(explanation) => {
            eprintln!("echolab load: {explanation}");
            return Ok(None);
        }
    };
    install_signal_handlers();
    if let Some(at) = plan.start_at {
        let wait = at - unix_now();
        if wait > 0.0 {
            wait_or_signal(Duration::from_secs_f64(wait));
        } else if wait < -1.0 {
            warnings.push(format!("started {:.1} s after --start-at", -wait));
        }
    }
    let threads = plan.threads.min(plan.connections() as usize).max(1);
    let shared = Arc::new(Shared {
        stop: AtomicU8::new(0),
        active: AtomicU64::new(0),
        max_active: AtomicU64::new(0),
        intervals: (0..threads)
            .map(|_| Mutex::new(Interval::default()))
            .collect(),
    });
    let started_unix = unix_now();
    let clock = Instant::now();
    let cpu_start = cpu_times();
    let mut outputs = match out {
        Some(dir) => Some(Outputs::create(dir, started_unix)?),
        None => None,
    };
    let mut handles = Vec::new();
    for index in 0..threads {
        let plan = plan.clone();
        let shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name(format!("load-{index}"))
            .spawn(move || -> anyhow::Result<()> {
                let mut worker = Worker::new(&plan, &shared, index, threads, clock, started_unix)?;
                worker.run()
            })?;
        handles.push(handle);
    }

    let progress = progress_bar(show_progress);
    let mut totals = Interval::default();
    let mut base = summary_base(plan, threads, started_unix);
    let mut second = 0u64;
    let mut cpu_busy_seconds = 0u64;
    let mut last_cpu = cpu_start;
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(threads) as f64;
    loop {
        let finished = handles.iter().all(|h| h.is_finished());
        if !finished {
            // Wake often enough to pass signals on promptly; write once per second.
            std::thread::sleep(Duration::from_millis(20));
            if let Some(_signal) = received_signal() {
                let level = if ABORT.load(Ordering::SeqCst) { 2 } else { 1 };
                shared.stop.fetch_max(level, Ordering::SeqCst);
            }
            if clock.elapsed() < Duration::from_secs(second + 1) {
                continue;
            }
        }
        let elapsed = clock.elapsed().as_secs_f64();
        let mut interval = Interval::default();
        for slot in &shared.intervals {
            let mut taken = std::mem::take(&mut *slot.lock().expect("interval lock"));
            interval.add(&mut taken);
        }
        let length = if finished {
            elapsed - second as f64
        } else {
            1.0
        };
        let active = shared.active.load(Ordering::Relaxed);
        let row = record::timeline_row(second, active, &interval);
        let cpu = cpu_times();
        if (cpu.0 + cpu.1 - last_cpu.0 - last_cpu.1) / length.max(1e-3) >= 0.9 * cores {
            cpu_busy_seconds += 1;
        }
        last_cpu = cpu;
        if let Some(o) = outputs.as_mut() {
            o.write_records(&interval.records)?;
            o.write_second(
                &row,
                second as f64,
                length,
                &interval.latency,
                raw_of(plan, &interval),
            )?;
        }
        totals.add(&mut interval);
        totals.records.clear();
        let c = &totals.counters;
        progress.set_message(format!(
            "connections {}/{}  req/s {}  p50 {} us  p99 {} us  errors {}",
            active,
            plan.connections(),
            row.requests,
            row.p50_us,
            row.p99_us,
            c.errors_total()
        ));
        progress.tick();
        if finished {
            break;
        }
        if let Some(o) = outputs.as_ref() {
            let mut partial = base.clone();
            partial.ended_unix = unix_now();
            partial.duration_s = round3(elapsed);
            partial.interrupted = true;
            partial.cut_short_reason =
                Some("run in progress (or killed before it could finish)".into());
            partial.max_concurrent = shared.max_active.load(Ordering::Relaxed);
            partial.set_totals(&totals.counters, &totals.latency, raw_of(plan, &totals));
            o.write_summary(&partial)?;
            if second.is_multiple_of(5) {
                o.write_percentiles(&totals.latency, raw_of(plan, &totals))?;
            }
        }
        second += 1;
    }
    progress.finish_and_clear();
    for handle in handles {
        handle
            .join()
            .map_err(|_| anyhow::anyhow!("a load thread panicked"))??;
    }
    let elapsed = clock.elapsed().as_secs_f64();
    let cpu = cpu_times();
    base.ended_unix = started_unix + elapsed;
    base.duration_s = round3(elapsed);
    base.max_concurrent = shared.max_active.load(Ordering::Relaxed);
    base.client_cpu_user_s = round3(cpu.0 - cpu_start.0);
    base.client_cpu_sys_s = round3(cpu.1 - cpu_start.1);
    base.set_totals(&totals.counters, &totals.latency, raw_of(plan, &totals));
    let c = &totals.counters;
    describe_end(&mut base, plan, c);
    warnings.extend(run_warnings(plan, c, cpu_busy_seconds, second + 1, cores));
    base.warnings = warnings;
    base.complete = true;
    if let Some(o) = outputs.as_ref() {
        o.write_percentiles(&totals.latency, raw_of(plan, &totals))?;
        o.write_summary(&base)?;
    }
    Ok(Some(base))
}

fn raw_of<'a>(plan: &Plan, interval: &'a Interval) -> Option<&'a hdrhistogram::Histogram<u64>> {
    matches!(plan.mode, Mode::Open { .. }).then_some(&interval.latency_raw)
}

/// Sleeps until `wait` has passed or a signal arrived.
pub fn wait_or_signal(wait: Duration) {
    let until = Instant::now() + wait;
    while Instant::now() < until && received_signal().is_none() {
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
}

fn progress_bar(show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar
}

fn summary_base(plan: &Plan, threads: usize, started_unix: f64) -> LoadSummary {
    LoadSummary {
        echolab_version: env!("CARGO_PKG_VERSION").to_string(),
        target: plan.target_text.clone(),
        mode: plan.mode_name().to_string(),
        started_unix: round3(started_unix),
        connections_target: plan.connections(),
        message_bytes: plan.payload.len(),
        requests_per_connection: plan.requests,
        rate: plan.shard_rate(),
        pipeline: plan.pipeline as u64,
        threads: threads as u64,
        processes: 1,
        shard: (plan.shard.1 > 1).then(|| format!("{}/{}", plan.shard.0, plan.shard.1)),
        ..LoadSummary::default()
    }
}

/// Says whether and why the run was cut short.
fn describe_end(summary: &mut LoadSummary, plan: &Plan, c: &record::Counters) {
    if let Some(signal) = received_signal() {
        summary.interrupted = true;
        summary.cut_short_reason = Some(format!(
            "{} received{}",
            signal_name(signal),
            if ABORT.load(Ordering::SeqCst) {
                " twice: stopped without waiting for in-flight echoes"
            } else {
                ""
            }
        ));
    } else if c.ended_early > 0 {
        let all = c.ended_early >= plan.connections();
        summary.interrupted = all;
        let e = &c.errors;
        summary.cut_short_reason = Some(format!(
            "{} of {} connections ended early (refused {}, reset {}, timeout {}, emfile {}, \
             eaddrnotavail {}, other {}, closed by the server {}){}",
            c.ended_early,
            plan.connections(),
            e.refused,
            e.reset,
            e.timeout,
            e.emfile,
            e.eaddrnotavail,
            e.other,
            c.unexpected_closes,
            if all {
                ": the server stopped serving"
            } else {
                ""
            }
        ));
    }
}

fn run_warnings(
    plan: &Plan,
    c: &record::Counters,
    cpu_busy_seconds: u64,
    seconds: u64,
    cores: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if c.releases > 0 && c.late_releases * 100 > c.releases {
        warnings.push(format!(
            "the generator fell behind its schedule: {} of {} requests released over 5 ms late \
             (worst {:.1} ms); the client, not the server, limits these results",
            c.late_releases,
            c.releases,
            c.max_lateness_ns as f64 / 1e6
        ));
    }
    if cpu_busy_seconds * 2 > seconds && seconds >= 2 {
        warnings.push(format!(
            "the client was CPU-bound ({cpu_busy_seconds} of {seconds} s at over 90% of {cores} \
             cores): results may measure the client; use more --threads, --processes or hosts"
        ));
    }
    if plan.mode != Mode::Closed && c.requests == 0 && c.established > 0 {
        warnings.push("no request completed".into());
    }
    warnings
}

/// (user, system) CPU seconds of this process.
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if libc_call!(getrusage(libc::RUSAGE_SELF, &mut usage)).is_err() {
        return (0.0, 0.0);
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Not opened yet (waiting for its turn in the ramp).
    Pending,
    Connecting,
    Active,
    /// Requests done; kept open idle until its hold ends.
    Holding,
    /// Waiting to reconnect.
    Backoff,
    Done,
}

struct Conn {
    global: u64,
    state: State,
    fd: RawFd,
    /// TCP connections opened so far for this slot; tags epoll events against stale ones.
    attempt: u32,
    /// Consecutive failures, for the backoff.
    failures: u32,
    timer_at: u64,
    established: bool,
    send_pos: u64,
    recv_pos: u64,
    writable: bool,
    /// EPOLLOUT is in the registration. Left out while sends never block, so a small-message
    /// run is not woken once more per request when the peer's ACK frees send buffer space.
    out_armed: bool,
    /// The message being received has a wrong byte.
    mismatch: bool,
    /// (intended send time or 0 in closed loop, actual send time) of messages started, not echoed.
    inflight: VecDeque<(u64, u64)>,
    /// Intended send times of messages allowed to start but not started.
    released: VecDeque<u64>,
    /// Requests not released yet (UNLIMITED when the run is bounded by time).
    to_release: u64,
    /// Closed loop with --delay: releases waiting for the think time.
    delayed: u64,
    next_intended: u64,
    connect_started: u64,
    rec: LoadConnRecord,
}

struct Worker<'a> {
    plan: &'a Plan,
    shared: &'a Shared,
    index: usize,
    epfd: RawFd,
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
    draining: Option<u64>,
    open_loop: Option<u64>,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        for conn in &self.conns {
            if conn.fd >= 0 {
                let _ = libc_call!(close(conn.fd));
            }
        }
        let _ = libc_call!(close(self.epfd));
    }
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

impl<'a> Worker<'a> {
    fn new(
        plan: &'a Plan,
        shared: &'a Shared,
        index: usize,
        threads: usize,
        clock: Instant,
        started_unix: f64,
    ) -> anyhow::Result<Worker<'a>> {
        let epfd = libc_call!(epoll_create1(libc::EPOLL_CLOEXEC))?;
        let to_release = plan.requests.unwrap_or(UNLIMITED);
        let conns: Vec<Conn> = (index as u64..plan.connections())
            .step_by(threads)
            .map(|local| Conn {
                global: plan.global_id(local),
                state: State::Pending,
                fd: -1,
                attempt: 0,
                failures: 0,
                timer_at: NO_TIMER,
                established: false,
                send_pos: 0,
                recv_pos: 0,
                writable: false,
                out_armed: false,
                mismatch: false,
                inflight: VecDeque::new(),
                released: VecDeque::new(),
                to_release,
                delayed: 0,
                next_intended: 0,
                connect_started: 0,
                rec: LoadConnRecord::default(),
            })
            .collect();
        Ok(Worker {
            plan,
            shared,
            index,
            epfd,
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
            deadline: plan.duration.map_or(NO_TIMER, ns),
            draining: None,
            open_loop: plan.open_loop_ns(0).map(|(_, period)| period),
        })
    }

    fn now(&self) -> u64 {
        ns(self.clock.elapsed())
    }

    fn run(&mut self) -> anyhow::Result<()> {
        let mut events: Vec<libc::epoll_event> =
            vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
        let mut next_flush = FLUSH_NS;
        let mut next_sweep = 1_000_000_000;
        loop {
            let now = self.now();
            let stop = self.shared.stop.load(Ordering::Relaxed);
            if self.draining.is_none() && (stop > 0 || now >= self.deadline) {
                self.begin_drain(now);
            }
            if stop == 2 || self.draining.is_some_and(|d| now >= d) {
                self.close_all(now);
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
            if let Some(d) = self.draining {
                wake = wake.min(d);
            }
            if self.draining.is_none() && self.next_open < self.conns.len() {
                wake = wake.min(self.plan.open_at_ns(self.conns[self.next_open].global));
            }
            let now = self.now();
            let timeout_ms = wake.saturating_sub(now).div_ceil(1_000_000).min(100) as i32;
            let n = match libc_call!(epoll_wait(
                self.epfd,
                events.as_mut_ptr(),
                events.len() as i32,
                timeout_ms
            )) {
                Ok(n) => n as usize,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => 0,
                Err(e) => return Err(e.into()),
            };
            for event in &events[..n] {
                let (flags, data) = (event.events, event.u64);
                self.handle_event(flags, data);
            }
        }
        self.flush();
        Ok(())
    }

    fn flush(&mut self) {
        if self.local.is_empty() {
            return;
        }
        let mut shared = self.shared.intervals[self.index]
            .lock()
            .expect("interval lock");
        shared.add(&mut self.local);
        self.local.reset();
    }

    fn set_timer(&mut self, idx: usize, at: u64) {
        self.conns[idx].timer_at = at;
        if at != NO_TIMER {
            self.timers.push(Reverse((at, idx as u32)));
        }
    }

    fn open_due(&mut self, now: u64) {
        let mut budget = OPEN_BATCH;
        while self.draining.is_none()
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
        if self.draining.is_some() {
            return;
        }
        let c = &mut self.conns[idx];
        if let Some(period) = self.open_loop {
            let lateness = now - at;
            while c.next_intended <= now && c.to_release > 0 {
                c.released.push_back(c.next_intended);
                c.next_intended += period;
                if c.to_release != UNLIMITED {
                    c.to_release -= 1;
                }
                self.local.counters.releases += 1;
                if lateness > LATE_NS {
                    self.local.counters.late_releases += 1;
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
            release_now(c, n);
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
        c.send_pos = 0;
        c.recv_pos = 0;
        c.mismatch = false;
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
            Ok(fd) => {
                let c = &mut self.conns[idx];
                c.fd = fd;
                c.out_armed = true; // the connect completes as writability
                let mut event = libc::epoll_event {
                    events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET)
                        as u32,
                    u64: ((idx as u64) << 32) | u64::from(c.attempt),
                };
                if let Err(e) =
                    libc_call!(epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut event))
                {
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

    fn handle_event(&mut self, flags: u32, data: u64) {
        let idx = (data >> 32) as usize;
        let Some(c) = self.conns.get(idx) else { return };
        if c.fd < 0 || u64::from(c.attempt) != (data & 0xffff_ffff) {
            return; // an event of a connection closed earlier in this batch
        }
        let now = self.now();
        let error = flags & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0;
        if c.state == State::Connecting {
            if flags & libc::EPOLLOUT as u32 != 0 || error {
                match socket_error(c.fd) {
                    0 if !error => self.on_established(idx, now),
                    0 => self.fail(idx, ErrorKind::Other, now),
                    errno => self.fail(idx, ErrorKind::from_errno(errno), now),
                }
            }
            return;
        }
        if flags & (libc::EPOLLIN | libc::EPOLLRDHUP) as u32 != 0 || error {
            let eof_seen = flags & (libc::EPOLLRDHUP | libc::EPOLLHUP) as u32 != 0;
            if !self.on_readable(idx, now, eof_seen || error) {
                return;
            }
        }
        if flags & libc::EPOLLOUT as u32 != 0 && self.conns[idx].fd >= 0 {
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
        let data = ((idx as u64) << 32) | u64::from(c.attempt);
        if set_interest(self.epfd, c.fd, data, false).is_ok() {
            c.out_armed = false;
        }
        if let Some(local) = local_addr(c.fd) {
            c.rec.local_addr = local.ip().to_string();
            c.rec.local_port = local.port();
        }
        if c.to_release == 0 {
            self.set_timer(idx, NO_TIMER);
            self.finish(idx, now);
            return;
        }
        match open_loop {
            Some((phase, _)) => {
                c.next_intended = now + phase;
                let first = c.next_intended;
                self.set_timer(idx, first);
            }
            None => {
                let n = pipeline.min(c.to_release);
                release_now(c, n);
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
            if !c.writable || c.fd < 0 || c.state != State::Active {
                return;
            }
            let started = c.send_pos.div_ceil(size);
            let startable = c
                .released
                .len()
                .min(pipeline.saturating_sub(c.inflight.len()));
            let end = (started + startable as u64) * size;
            if c.send_pos >= end {
                return;
            }
            let offset = (c.send_pos % size) as usize;
            let window = self.payload.repeated.len() - size as usize;
            let len = ((end - c.send_pos) as usize).min(window);
            let chunk = &self.payload.repeated[offset..offset + len];
            match libc_call!(send(
                c.fd,
                chunk.as_ptr().cast(),
                chunk.len(),
                libc::MSG_NOSIGNAL
            )) {
                Ok(written) => {
                    let written = written as u64;
                    let new_started = (c.send_pos + written).div_ceil(size) - started;
                    for _ in 0..new_started {
                        let intended = c.released.pop_front().unwrap_or(0);
                        c.inflight.push_back((intended, now));
                    }
                    c.send_pos += written;
                    c.rec.bytes_sent += written;
                    self.local.counters.bytes_sent += written;
                    if (written as usize) < len {
                        // The socket buffer is full: wait for EPOLLOUT.
                        self.wait_writable(idx, now);
                        return;
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    self.wait_writable(idx, now);
                    return;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    self.fail(
                        idx,
                        ErrorKind::from_errno(e.raw_os_error().unwrap_or(0)),
                        now,
                    );
                    return;
                }
            }
        }
    }

    fn wait_writable(&mut self, idx: usize, now: u64) {
        let c = &mut self.conns[idx];
        c.writable = false;
        if !c.out_armed {
            let data = ((idx as u64) << 32) | u64::from(c.attempt);
            match set_interest(self.epfd, c.fd, data, true) {
                Ok(()) => c.out_armed = true,
                Err(e) => self.fail(
                    idx,
                    ErrorKind::from_errno(e.raw_os_error().unwrap_or(0)),
                    now,
                ),
            }
        }
    }

    /// Reads and verifies echoes. Returns false when the connection ended.
    fn on_readable(&mut self, idx: usize, now: u64, read_to_end: bool) -> bool {
        let size = self.size;
        loop {
            let fd = self.conns[idx].fd;
            let n = match libc_call!(read(fd, self.buf.as_mut_ptr().cast(), self.buf.len())) {
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
            let c = &mut self.conns[idx];
            if c.recv_pos + n as u64 > c.send_pos {
                // More bytes than were sent: not an echo of this stream.
                self.local.counters.mismatches += 1;
                c.rec.mismatches += 1;
                c.rec.errors += 1;
                self.fail(idx, ErrorKind::Other, now);
                return false;
            }
            c.rec.bytes_received += n as u64;
            self.local.counters.bytes_received += n as u64;
            let mut done = 0;
            let mut completed = 0u64;
            while done < n {
                let offset = (c.recv_pos % size) as usize;
                let seg = (n - done).min(size as usize - offset);
                let got = &self.buf[done..done + seg];
                let want = &self.payload.message[offset..offset + seg];
                if got == want {
                    self.local.counters.bytes_verified += seg as u64;
                } else {
                    c.mismatch = true;
                    let equal = got.iter().zip(want).filter(|(a, b)| a == b).count();
                    self.local.counters.bytes_verified += equal as u64;
                }
                done += seg;
                c.recv_pos += seg as u64;
                if c.recv_pos.is_multiple_of(size) {
                    completed += 1;
                    let (intended, sent) = c.inflight.pop_front().unwrap_or((now, now));
                    if std::mem::take(&mut c.mismatch) {
                        self.local.counters.mismatches += 1;
                        c.rec.mismatches += 1;
                        c.rec.errors += 1;
                    } else {
                        let from = if intended == 0 { sent } else { intended };
                        let latency = now.saturating_sub(from) / 1000;
                        record_us(&mut self.local.latency, latency);
                        if self.open_loop.is_some() {
                            let raw = now.saturating_sub(sent) / 1000;
                            record_us(&mut self.local.latency_raw, raw);
                        }
                        c.rec.total_response_us += latency;
                        c.rec.requests += 1;
                        self.local.counters.requests += 1;
                        c.failures = 0;
                    }
                }
            }
            if completed > 0 && self.open_loop.is_none() && self.draining.is_none() {
                let c = &mut self.conns[idx];
                if self.plan.delay.is_zero() {
                    let k = completed.min(c.to_release);
                    release_now(c, k);
                } else {
                    c.delayed += completed.min(c.to_release.saturating_sub(c.delayed));
                    if c.delayed > 0 && c.timer_at == NO_TIMER {
                        let at = now + ns(self.plan.delay);
                        self.set_timer(idx, at);
                    }
                }
            }
            if n < self.buf.len() && !read_to_end {
                break; // drained: with edge triggering, new data raises a new event
            }
        }
        self.try_send(idx, now);
        let c = &self.conns[idx];
        if c.fd < 0 {
            return false;
        }
        let idle = c.inflight.is_empty() && c.released.is_empty() && c.recv_pos == c.send_pos;
        if c.state == State::Active && idle {
            if self.draining.is_some() {
                self.close_conn(idx, now, "stopped");
                return false;
            }
            if c.to_release == 0 && c.delayed == 0 {
                self.finish(idx, now);
                return self.conns[idx].fd >= 0;
            }
        }
        true
    }

    fn on_eof(&mut self, idx: usize, now: u64) {
        // An EOF is expected by nobody: the client closes first. A server that closes while
        // the client holds the connection is reported the same way.
        self.fail(idx, ErrorKind::Closed, now);
    }

    /// The connection did all its requests: hold it or close it.
    fn finish(&mut self, idx: usize, now: u64) {
        match self.plan.hold {
            Some(hold) if self.draining.is_none() => {
                self.conns[idx].state = State::Holding;
                self.set_timer(idx, now + ns(hold));
            }
            _ => self.close_conn(idx, now, "done"),
        }
    }

    fn end_record(&mut self, idx: usize, now: u64, end: &str) {
        let started_unix = self.started_unix;
        let c = &mut self.conns[idx];
        if c.fd >= 0 {
            let _ = libc_call!(close(c.fd));
            c.fd = -1;
        }
        if c.established {
            c.established = false;
            self.shared.active.fetch_sub(1, Ordering::Relaxed);
        }
        c.timer_at = NO_TIMER;
        let mut rec = std::mem::take(&mut c.rec);
        rec.closed_unix = round3(started_unix + now as f64 / 1e9);
        rec.mean_response_us = if rec.requests == 0 {
            0.0
        } else {
            round3(rec.total_response_us as f64 / rec.requests as f64)
        };
        rec.end = end.to_string();
        self.local.records.push(rec);
    }

    fn close_conn(&mut self, idx: usize, now: u64, end: &str) {
        self.end_record(idx, now, end);
        let c = &mut self.conns[idx];
        c.state = State::Done;
        c.inflight.clear();
        c.released.clear();
        self.remaining -= 1;
    }

    /// The connection failed: count the error, then reconnect later or give up.
    fn fail(&mut self, idx: usize, kind: ErrorKind, now: u64) {
        let counters = &mut self.local.counters;
        let c = &mut self.conns[idx];
        if kind == ErrorKind::Closed {
            counters.unexpected_closes += 1;
        } else {
            counters.errors.count(kind);
        }
        if c.state == State::Connecting {
            counters.failed += 1;
        }
        let short = c.inflight.len() as u64;
        counters.short_echoes += short;
        c.rec.short_echoes += short;
        c.rec.errors += 1;
        c.rec.error_kind = kind.name().to_string();
        if c.to_release != UNLIMITED {
            c.to_release += short + c.released.len() as u64;
        }
        c.inflight.clear();
        c.released.clear();
        c.delayed = 0;
        self.end_record(idx, now, "error");
        let c = &mut self.conns[idx];
        if self.plan.reconnect && self.draining.is_none() {
            c.state = State::Backoff;
            c.failures += 1;
            let exponent = (c.failures - 1).min(7);
            let jitter = (c.global * 7919) % 50_000_000;
            let backoff = (50_000_000u64 << exponent).min(5_000_000_000) + jitter;
            self.set_timer(idx, now + backoff);
        } else {
            c.state = State::Done;
            self.local.counters.ended_early += 1;
            self.remaining -= 1;
        }
    }

    /// Stop releasing requests; let in-flight echoes arrive until the drain deadline.
    fn begin_drain(&mut self, now: u64) {
        self.draining = Some(now + ns(DRAIN));
        for idx in 0..self.conns.len() {
            let c = &mut self.conns[idx];
            c.released.clear();
            c.delayed = 0;
            match c.state {
                State::Pending | State::Backoff => {
                    c.state = State::Done;
                    self.remaining -= 1;
                }
                State::Connecting => self.close_conn(idx, now, "stopped"),
                State::Holding => self.close_conn(idx, now, "done"),
                State::Active if c.inflight.is_empty() => self.close_conn(idx, now, "stopped"),
                State::Active | State::Done => {}
            }
        }
        self.next_open = self.conns.len();
    }

    fn close_all(&mut self, now: u64) {
        for idx in 0..self.conns.len() {
            match self.conns[idx].state {
                State::Done => {}
                State::Pending | State::Backoff => {
                    self.conns[idx].state = State::Done;
                    self.remaining -= 1;
                }
                _ => self.close_conn(idx, now, "stopped"),
            }
        }
    }

    fn sweep_response_timeouts(&mut self, now: u64) {
        let limit = ns(self.plan.response_timeout);
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            if c.state == State::Active
                && c.inflight
                    .front()
                    .is_some_and(|&(_, sent)| now.saturating_sub(sent) > limit)
            {
                self.fail(idx, ErrorKind::Timeout, now);
            }
        }
    }
}

/// Records a latency. Not `saturating_record`: on an auto-resizing histogram that clamps to the
/// current top instead of growing.
fn record_us(h: &mut hdrhistogram::Histogram<u64>, us: u64) {
    // Capped at a day, far beyond any run, so the record cannot fail.
    let _ = h.record(us.min(86_400_000_000));
}

/// Allows `n` more messages to start now (closed loop).
fn release_now(c: &mut Conn, n: u64) {
    for _ in 0..n {
        c.released.push_back(0);
    }
    if c.to_release != UNLIMITED {
        c.to_release -= n;
    }
}

/// Sets what epoll reports for `fd`: input and hang-ups, plus output when `output`.
fn set_interest(epfd: RawFd, fd: RawFd, data: u64, output: bool) -> std::io::Result<()> {
    let mut events = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
    if output {
        events |= libc::EPOLLOUT;
    }
    let mut event = libc::epoll_event {
        events: events as u32,
        u64: data,
    };
    libc_call!(epoll_ctl(epfd, libc::EPOLL_CTL_MOD, fd, &mut event))?;
    Ok(())
}

/// A nonblocking socket with a connect in progress to `target`, from `source` if given.
fn connect_socket(target: SocketAddr, source: Option<std::net::IpAddr>) -> std::io::Result<RawFd> {
    let socket = Socket::new(
        Domain::for_address(target),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )?;
    socket.set_nodelay(true)?;
    if let Some(source) = source {
        let fd = {
            use std::os::fd::AsRawFd;
            socket.as_raw_fd()
        };
        if source.is_ipv4() {
            // Leave the port unchosen until connect, so each source address can use the whole
            // port range once per destination instead of once in total.
            let one: libc::c_int = 1;
            libc_call!(setsockopt(
                fd,
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t
            ))?;
        }
        socket.bind(&SockAddr::from(SocketAddr::new(source, 0)))?;
    }
    match socket.connect(&SockAddr::from(target)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(socket.into_raw_fd())
}

fn borrow_socket(fd: RawFd) -> ManuallyDrop<Socket> {
    // SAFETY: fd is an open socket owned by a Conn; ManuallyDrop keeps it from being closed here.
    ManuallyDrop::new(unsafe { Socket::from_raw_fd(fd) })
}

/// The pending error of a socket (SO_ERROR) as an errno, 0 if none.
fn socket_error(fd: RawFd) -> i32 {
    match borrow_socket(fd).take_error() {
        Ok(None) => 0,
        Ok(Some(e)) => e.raw_os_error().unwrap_or(libc::EIO),
        Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
    }
}

fn local_addr(fd: RawFd) -> Option<SocketAddr> {
    borrow_socket(fd).local_addr().ok()?.as_socket()
}
