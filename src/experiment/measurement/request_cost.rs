//! What a request costs the server in the kernel's own counts: its system calls (all of
//! them, and the model's wait, read and write calls apart) and its context switches
//! (voluntary: it blocked; involuntary: it was preempted), per request of a step.
//!
//! Context switches are counted with perf_event_open(2) on the tracepoint
//! `sched/sched_switch`, in counting mode (the kernel adds one to a counter; nothing is
//! recorded), on every thread of the server's process tree when the load starts, each
//! counter inherited by the threads and processes created later and keeping their counts
//! when they exit. System calls (every one, and the wait, read and write calls) are
//! counted on `raw_syscalls/sys_enter`, which costs a syscall-bound server 10 to 20 % of
//! its CPU while a counter is open: so only when asked ([`COUNT_SYSCALLS_ENV`] = 1, over
//! the whole load, exact; `sampled`, in short windows, [`PERIOD`], [`WINDOW`], scaled to
//! the load by the server namespace's TCP segments ([`Scaling`]): docs/outputs.md has the
//! measured cost and error). (/proc/PID/io's `syscw` misses send(2), which the servers
//! write with.) Root only (or CAP_PERFMON): elsewhere the columns stay empty.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::netstat::segments;
use super::probe::process_tree;
use crate::results::Row;
use crate::sys::perf::{tracepoint_ids, Counter};

/// The kernel's counts for a process tree over some time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    /// Every system call entered.
    pub syscalls: u64,
    /// The model's wait for readiness or completions: epoll_wait, select, poll,
    /// io_uring_enter and their variants.
    pub wait: u64,
    /// read, readv, recvfrom, recvmsg, recvmmsg.
    pub read: u64,
    /// write, writev, sendto, sendmsg, sendmmsg.
    pub write: u64,
    /// Times a thread was switched out: all of them, and those while still runnable.
    pub switches: u64,
    pub involuntary: u64,
    /// The system calls were counted; else only the switches.
    pub every_call: bool,
}

impl Calls {
    /// The counts gained since `earlier`.
    pub fn since(&self, earlier: &Calls) -> Calls {
        Calls {
            syscalls: self.syscalls.saturating_sub(earlier.syscalls),
            wait: self.wait.saturating_sub(earlier.wait),
            read: self.read.saturating_sub(earlier.read),
            write: self.write.saturating_sub(earlier.write),
            switches: self.switches.saturating_sub(earlier.switches),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
            every_call: self.every_call && earlier.every_call,
        }
    }

    pub fn voluntary(&self) -> u64 {
        self.switches.saturating_sub(self.involuntary)
    }
}

/// The system call numbers of each kind counted apart.
const WAIT_CALLS: [libc::c_long; 8] = [
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_io_uring_enter,
];
const READ_CALLS: [libc::c_long; 5] = [
    libc::SYS_read,
    libc::SYS_readv,
    libc::SYS_recvfrom,
    libc::SYS_recvmsg,
    libc::SYS_recvmmsg,
];
const WRITE_CALLS: [libc::c_long; 5] = [
    libc::SYS_write,
    libc::SYS_writev,
    libc::SYS_sendto,
    libc::SYS_sendmsg,
    libc::SYS_sendmmsg,
];

/// A tracepoint filter passing the system calls numbered `calls`.
fn syscall_filter(calls: &[libc::c_long]) -> String {
    let terms: Vec<String> = calls.iter().map(|n| format!("id == {n}")).collect();
    terms.join(" || ")
}

/// sched_switch's `prev_state` of a thread switched out while runnable: 0 when it
/// yielded, TASK_REPORT_MAX (256) when it was preempted; the kernel counts both as
/// involuntary (`nonvoluntary_ctxt_switches`).
const INVOLUNTARY_FILTER: &str = "prev_state == 0 || prev_state == 256";

/// How the runner counts the server's system calls: `sampled` (the default), `1` (every
/// one over the whole load, at 10 to 20 % of a syscall-bound server's CPU) or `0` (none;
/// context switches only).
pub const COUNT_SYSCALLS_ENV: &str = "ECHOLAB_COUNT_SYSCALLS";

/// The sampled windows: system calls are counted for [`WINDOW`] out of every [`PERIOD`] of
/// the load (1 %), each window in the middle of its period, so the windows are an even
/// sample of the whole load. An open `raw_syscalls/sys_enter` counter puts every system
/// call of the machine on the kernel's slow path (TIF_SYSCALL_TRACEPOINT) until it is
/// closed, so the counters are opened for each window and closed after it. Each window
/// also has a fixed cost besides its share of time (measured, its cause not isolated), so
/// one window a second is cheaper than several (docs/outputs.md has both measured).
pub const PERIOD: Duration = Duration::from_secs(1);
pub const WINDOW: Duration = Duration::from_millis(10);

/// How the windows' counts are scaled to the whole load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    /// By the TCP segments of the server's network namespace: its calls per segment in
    /// the windows, times its segments over the load (time when they cannot be read).
    Segments,
    /// By time: the time since the start over the time the windows covered.
    Time,
}

/// Which of the [`Calls`] fields are counted, in field order.
const SYSCALL_FIELDS: [usize; 4] = [0, 1, 2, 3];
const SWITCH_FIELDS: [usize; 2] = [4, 5];

/// The counters of a process tree, from the moment they were opened: the context
/// switches over the whole time, and the system calls over the whole time or in windows.
pub struct Counting {
    whole: ThreadCounters,
    sampler: Option<Sampler>,
}

/// Counters on every thread of a process tree: the index in [`Calls`] field order each
/// counter adds to, and the counter.
struct ThreadCounters(Vec<(usize, Counter)>);

/// The two tracepoints' ids, looked up once per run.
fn ids() -> io::Result<(u64, u64)> {
    static IDS: OnceLock<Result<(u64, u64), String>> = OnceLock::new();
    IDS.get_or_init(|| {
        tracepoint_ids(&["raw_syscalls/sys_enter", "sched/sched_switch"])
            .map(|ids| (ids[0], ids[1]))
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(io::Error::other)
}

impl ThreadCounters {
    /// Opens the counters of the [`Calls`] fields numbered `fields` on every thread of
    /// `pid` and its descendants.
    fn open(pid: u32, fields: &[usize]) -> io::Result<ThreadCounters> {
        let (sys_enter, sched_switch) = ids()?;
        let filters = [
            syscall_filter(&WAIT_CALLS),
            syscall_filter(&READ_CALLS),
            syscall_filter(&WRITE_CALLS),
        ];
        let event = |field: usize| match field {
            0 => (sys_enter, None),
            1..=3 => (sys_enter, Some(filters[field - 1].as_str())),
            4 => (sched_switch, None),
            _ => (sched_switch, Some(INVOLUNTARY_FILTER)),
        };
        let mut counters = Vec::new();
        for process in process_tree(pid) {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
                continue;
            };
            for tid in tasks
                .flatten()
                .filter_map(|t| t.file_name().to_str()?.parse().ok())
            {
                for &field in fields {
                    let (id, filter) = event(field);
                    match Counter::tracepoint(tid, id, filter) {
                        Ok(c) => counters.push((field, c)),
                        // A thread that exited since the listing has nothing more to count.
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => break,
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        if counters.is_empty() {
            return Err(io::Error::other(format!(
                "process {pid} has no thread to count"
            )));
        }
        Ok(ThreadCounters(counters))
    }

    /// The counts so far, summed over the threads, in [`Calls`] field order.
    fn read(&self) -> io::Result<[u64; 6]> {
        let mut sum = [0u64; 6];
        for (field, counter) in &self.0 {
            sum[*field] += counter.read()?;
        }
        Ok(sum)
    }
}

/// The system calls counted in windows so far, the time they covered and the TCP
/// segments the server's namespace took in and sent out meanwhile (None once a reading
/// failed).
#[derive(Debug, Default, Clone, Copy)]
struct Sampled {
    counts: [u64; 6],
    counted_s: f64,
    segments: Option<u64>,
}

/// A thread counting a process tree's system calls in windows until it is dropped.
struct Sampler {
    pid: u32,
    scaling: Scaling,
    started: Instant,
    /// The server namespace's TCP segments (in and out) at the start.
    segments_at_start: Option<u64>,
    sampled: Arc<Mutex<Sampled>>,
    stop: Arc<AtomicBool>,
}

impl Sampler {
    fn start(
        pid: u32,
        period: Duration,
        length: Duration,
        scaling: Scaling,
    ) -> io::Result<Sampler> {
        ids()?;
        let started = Instant::now();
        let segments_at_start = segments(pid);
        let sampled = Arc::new(Mutex::new(Sampled {
            segments: segments_at_start.map(|_| 0),
            ..Sampled::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (into, stopped) = (sampled.clone(), stop.clone());
        std::thread::Builder::new()
            .name("syscall-windows".into())
            .spawn(move || {
                let mut next = started + period / 2;
                loop {
                    while Instant::now() < next {
                        if stopped.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep((next - Instant::now()).min(period / 4));
                    }
                    let Some(w) = window(pid, length) else {
                        return;
                    };
                    let mut s = into.lock().unwrap_or_else(|e| e.into_inner());
                    for (sum, n) in s.counts.iter_mut().zip(w.counts) {
                        *sum += n;
                    }
                    s.counted_s += w.counted_s;
                    s.segments = s.segments.zip(w.segments).map(|(a, b)| a + b);
                    drop(s);
                    next += period;
                }
            })?;
        Ok(Sampler {
            pid,
            scaling,
            started,
            segments_at_start,
            sampled,
            stop,
        })
    }

    /// The system calls since the start, estimated from the windows so far: their counts
    /// times the TCP segments since the start over the segments in the windows (a ratio
    /// estimator: calls per segment hold while the server's pace changes within a
    /// second, or slows in a window, where calls per second do not); times the time
    /// since the start over the time they covered when the segments cannot be read or
    /// the windows saw none. None before a window.
    fn estimate(&self) -> Option<[u64; 6]> {
        let s = *self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        if s.counted_s <= 0.0 {
            return None;
        }
        let by_segments = (self.scaling == Scaling::Segments)
            .then_some(self.segments_at_start)
            .flatten()
            .zip(segments(self.pid))
            .zip(s.segments.filter(|&n| n > 0))
            .map(|((start, now), in_windows)| now.saturating_sub(start) as f64 / in_windows as f64);
        let scale =
            by_segments.unwrap_or_else(|| self.started.elapsed().as_secs_f64() / s.counted_s);
        Some(s.counts.map(|n| (n as f64 * scale).round() as u64))
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What one window counted.
struct WindowCounts {
    counts: [u64; 6],
    /// From the middle of the opening to the middle of the reading.
    counted_s: f64,
    /// TCP segments of the server's namespace from the end of the opening to the start of
    /// the reading.
    segments: Option<u64>,
}

/// One window: the system calls of `pid`'s tree over `length`, counters opened on every
/// thread at its start and closed at its end. None when the tree is gone or cannot be
/// counted.
fn window(pid: u32, length: Duration) -> Option<WindowCounts> {
    let before_open = Instant::now();
    let counters = ThreadCounters::open(pid, &SYSCALL_FIELDS).ok()?;
    let opened = Instant::now();
    let segments_before = segments(pid);
    std::thread::sleep(length);
    let segments_after = segments(pid);
    let before_read = Instant::now();
    let counts = counters.read().ok()?;
    let read = Instant::now();
    drop(counters);
    let start = before_open + (opened - before_open) / 2;
    let end = before_read + (read - before_read) / 2;
    Some(WindowCounts {
        counts,
        counted_s: (end - start).as_secs_f64(),
        segments: segments_after
            .zip(segments_before)
            .map(|(a, b)| a.saturating_sub(b)),
    })
}

impl Counting {
    /// Starts counting every thread of `pid` and its descendants: their context
    /// switches, and their system calls as [`COUNT_SYSCALLS_ENV`] says (1: all of them,
    /// `sampled`: in windows; otherwise none).
    pub fn start(pid: u32) -> io::Result<Counting> {
        match std::env::var(COUNT_SYSCALLS_ENV).as_deref() {
            Ok("1") => Counting::start_every(pid),
            Ok("sampled") => Counting::start_sampled(pid),
            _ => Ok(Counting {
                whole: ThreadCounters::open(pid, &SWITCH_FIELDS)?,
                sampler: None,
            }),
        }
    }

    /// Counts every field of [`Calls`] over the whole time.
    pub fn start_every(pid: u32) -> io::Result<Counting> {
        let fields = [SYSCALL_FIELDS.as_slice(), &SWITCH_FIELDS].concat();
        Ok(Counting {
            whole: ThreadCounters::open(pid, &fields)?,
            sampler: None,
        })
    }

    /// Counts the context switches over the whole time, the system calls in windows
    /// scaled by the server's TCP segments.
    pub fn start_sampled(pid: u32) -> io::Result<Counting> {
        Counting::start_windows(pid, PERIOD, WINDOW, Scaling::Segments)
    }

    /// [`Counting::start_sampled`] with windows of `length` every `period`, scaled as
    /// `scaling` says.
    pub fn start_windows(
        pid: u32,
        period: Duration,
        length: Duration,
        scaling: Scaling,
    ) -> io::Result<Counting> {
        Ok(Counting {
            whole: ThreadCounters::open(pid, &SWITCH_FIELDS)?,
            sampler: Some(Sampler::start(pid, period, length, scaling)?),
        })
    }

    /// The counts since the start, summed over the threads; the system calls estimated
    /// from the windows when sampled.
    pub fn read(&self) -> io::Result<Calls> {
        let mut sum = self.whole.read()?;
        let every_call = match &self.sampler {
            None => self.whole.0.iter().any(|(field, _)| *field == 0),
            Some(sampler) => match sampler.estimate() {
                Some(estimate) => {
                    sum[..4].copy_from_slice(&estimate[..4]);
                    true
                }
                None => false,
            },
        };
        let [syscalls, wait, read, write, switches, involuntary] = sum;
        Ok(Calls {
            syscalls,
            wait,
            read,
            write,
            switches,
            involuntary,
            every_call,
        })
    }
}

/// Fills a row's per-request columns from the counts over its load.
pub fn measure(row: &mut Row, calls: Option<Calls>) {
    let (Some(calls), Some(requests)) = (calls, row.requests.filter(|r| *r > 0)) else {
        return;
    };
    let per = |n: u64| Some((n as f64 / requests as f64 * 10_000.0).round() / 10_000.0);
    if calls.every_call {
        row.server_syscalls_per_req = per(calls.syscalls);
        row.server_wait_calls_per_req = per(calls.wait);
        row.server_read_calls_per_req = per(calls.read);
        row.server_write_calls_per_req = per(calls.write);
    }
    row.server_voluntary_switches_per_req = per(calls.voluntary());
    row.server_involuntary_switches_per_req = per(calls.involuntary);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_name_the_calls() {
        assert_eq!(
            syscall_filter(&[libc::SYS_read, libc::SYS_readv]),
            format!("id == {} || id == {}", libc::SYS_read, libc::SYS_readv)
        );
    }

    #[test]
    fn per_request_divides_the_counts() {
        let calls = Some(Calls {
            syscalls: 3_000,
            wait: 27,
            read: 1_000,
            write: 1_000,
            switches: 50,
            involuntary: 10,
            every_call: true,
        });
        let mut row = Row {
            requests: Some(1_000),
            ..Row::default()
        };
        measure(&mut row, calls);
        assert_eq!(row.server_syscalls_per_req, Some(3.0));
        assert_eq!(row.server_wait_calls_per_req, Some(0.027));
        assert_eq!(row.server_read_calls_per_req, Some(1.0));
        assert_eq!(row.server_voluntary_switches_per_req, Some(0.04));
        assert_eq!(row.server_involuntary_switches_per_req, Some(0.01));
        let mut none = Row {
            requests: Some(0),
            ..Row::default()
        };
        measure(&mut none, calls);
        assert_eq!(none.server_syscalls_per_req, None);
    }

    #[test]
    fn sampled_windows_estimate_a_steady_threads_calls() {
        // Root only; elsewhere there is nothing to count.
        // Scaled by time: the thread makes no TCP traffic.
        let Ok(counting) =
            Counting::start_windows(std::process::id(), PERIOD, WINDOW, Scaling::Time)
        else {
            return;
        };
        let whole = Counting::start_every(std::process::id()).unwrap();
        // A thread created after the start, calling getppid steadily for ten periods.
        std::thread::spawn(|| {
            let end = Instant::now() + PERIOD * 2;
            while Instant::now() < end {
                for _ in 0..100 {
                    // SAFETY: getppid has no preconditions.
                    unsafe { libc::getppid() };
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        })
        .join()
        .unwrap();
        let (estimate, exact) = (counting.read().unwrap(), whole.read().unwrap());
        assert!(estimate.every_call && exact.every_call);
        // Two windows of a steady rate: within a factor of 1.5 of the exact count (the
        // sleeps' lengths vary with the machine, the windows' count of them too).
        let ratio = estimate.syscalls as f64 / exact.syscalls as f64;
        assert!(
            (0.67..1.5).contains(&ratio),
            "{estimate:?} against {exact:?}"
        );
    }

    #[test]
    fn a_thread_that_blocks_and_one_that_spins_are_told_apart() {
        // Root only; elsewhere there is nothing to count.
        let Ok(counting) = Counting::start_every(std::process::id()) else {
            return;
        };
        let before = counting.read().unwrap();
        // A thread created now is counted too (inherited), and kept after it exits.
        std::thread::spawn(|| {
            for _ in 0..20 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let pipe = std::io::pipe().unwrap();
            let (mut r, mut w) = pipe;
            use std::io::{Read, Write};
            for _ in 0..10 {
                w.write_all(b"x").unwrap();
                r.read_exact(&mut [0u8; 1]).unwrap();
            }
        })
        .join()
        .unwrap();
        let d = counting.read().unwrap().since(&before);
        assert!(d.voluntary() >= 20, "{d:?}");
        assert!(d.write >= 10 && d.read >= 10, "{d:?}");
        assert!(d.syscalls >= d.read + d.write + 20, "{d:?}");
    }
}
