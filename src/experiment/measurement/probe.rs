//! Sampling a server's CPU, memory, threads and open fds from /proc.
//!
//! A server is a process tree: `--processes` servers fork copies, so every
//! sample sums the process and its live descendants. CPU is cumulative
//! (user and system seconds of all threads, plus reaped children's), so the
//! CPU used during a step is the difference of two samples.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One reading of a process tree.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the probe started.
    pub t_s: f64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub rss_bytes: u64,
    pub threads: u64,
    pub fds: u64,
}

impl Sample {
    pub fn cpu_s(&self) -> f64 {
        self.cpu_user_s + self.cpu_sys_s
    }
}

/// The header of probe.csv.
pub const CSV_HEADER: &str = "t_s,cpu_user_s,cpu_sys_s,rss_bytes,threads,fds";

/// The CPU seconds of every child this process has reaped, and of the children they
/// reaped in turn (getrusage RUSAGE_CHILDREN, to the microsecond): across a window in
/// which only the load generators exit, their whole CPU, start-up and exit included,
/// which their own probe's 100 ms samples miss.
pub fn reaped_children_cpu_s() -> f64 {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: usage points to a rusage this function owns.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// CPU seconds the machine's cores have spent on processes since boot, or steal: every
/// core's time (the cores times CLOCK_BOOTTIME) less idle, iowait, irq and softirq from
/// /proc/stat. Idle time is measured at each idle entry and exit, and irq and softirq
/// time at each interrupt; user and system time are only sampled at the timer tick,
/// which misses a server's bursts of tens of microseconds on an otherwise idle core
/// (a step at 45 % of a core read 0–4 % there). Steal (the hypervisor running another
/// guest while this one wanted the core) counts as busy. irq and softirq are left out
/// because the kernel receives the step's own packets there (loopback and veth deliver
/// in softirq), charged to no process: counting them would call the step's own network
/// work (about a tenth of a core at 1 000 connections) a disturbance. None where
/// /proc/stat or the clock is unreadable.
pub fn machine_busy_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let cores = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    let not_busy: f64 = [3, 4, 5, 6]
        .iter()
        .map(|&i| fields.get(i).copied().unwrap_or(0.0))
        .sum();
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    crate::syscall!(clock_gettime(libc::CLOCK_BOOTTIME, &mut now)).ok()?;
    let uptime = now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9;
    Some(cores as f64 * uptime - not_busy / clock_ticks())
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// The fields of /proc/PID/stat after the command name (which may contain spaces).
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    // Field 3 (state) is a letter; keep positions by mapping it to 0.
    Some(
        after
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// The CPU time of process `pid`, every thread's (exited ones too), to the nanosecond:
/// its CPU-time clock (clock_getcpuclockid(3)). /proc's utime and stime come in clock
/// ticks of 10 ms, which is 5 % of what a server at 20 % of a core spends in a 1 s step.
fn process_cpu_s(pid: u32) -> Option<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock points to a clockid_t this function owns.
    let err = unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) };
    if err != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    crate::syscall!(clock_gettime(clock, &mut ts)).ok()?;
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Splits a process's exact CPU time into user and system time in the proportion of its
/// clock-tick counts, as the kernel itself scales them (`cputime_adjust`: all user time
/// when no system tick was seen); the tick counts alone when the exact time is unknown.
fn split_cpu(exact_s: Option<f64>, user_s: f64, sys_s: f64) -> (f64, f64) {
    match exact_s {
        Some(total) if sys_s == 0.0 => (total, 0.0),
        Some(total) => {
            let user = total * user_s / (user_s + sys_s);
            (user, total - user)
        }
        None => (user_s, sys_s),
    }
}

/// The pids of a process's live children (all threads' children).
fn children(pid: u32) -> Vec<u32> {
    let mut kids = Vec::new();
    if let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(text) = fs::read_to_string(task.path().join("children")) {
                kids.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    kids
}

/// The process and its descendants.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() && tree.len() < 10_000 {
        let kids = children(tree[i]);
        tree.extend(kids);
        i += 1;
    }
    tree
}

/// How many fds process `p` has open. Linux 6.2 and later give the count as the size of
/// /proc/PID/fd, which a 1 000 000-connection server's probe needs: listing the
/// directory ten times a second would cost more than the server. Older kernels report 0:
/// list it then.
fn open_fds(p: u32) -> u64 {
    let dir = format!("/proc/{p}/fd");
    match fs::metadata(&dir).map(|m| m.len()) {
        Ok(n) if n > 0 => n,
        _ => fs::read_dir(&dir).map_or(0, |d| d.count() as u64),
    }
}

/// Reads one sample of `pid` and its descendants; None when the process is gone.
pub fn sample(pid: u32, t_s: f64) -> Option<Sample> {
    let ticks = clock_ticks();
    let page = page_size();
    let mut s = Sample {
        t_s,
        ..Sample::default()
    };
    let mut any = false;
    for p in process_tree(pid) {
        // After the command name: state(0) ppid(1) ... utime(11) stime(12) cutime(13)
        // cstime(14) ... num_threads(17) ... rss(21), as in proc(5) minus 3.
        let Some(f) = stat_fields(p) else { continue };
        if f.len() < 22 {
            continue;
        }
        any = true;
        let (user, sys) = split_cpu(process_cpu_s(p), f[11] as f64 / ticks, f[12] as f64 / ticks);
        // Reaped children's time exists only in clock ticks.
        s.cpu_user_s += user + f[13] as f64 / ticks;
        s.cpu_sys_s += sys + f[14] as f64 / ticks;
        s.threads += f[17];
        s.rss_bytes += f[21] * page;
        s.fds += open_fds(p);
    }
    any.then_some(s)
}

/// A thread sampling a process tree every `interval` into probe.csv and memory.
pub struct Probe {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Sample>>>,
    start: Instant,
    handle: Option<JoinHandle<()>>,
    /// The first error writing the CSV (a full disk), naming the file.
    write_error: Arc<Mutex<Option<String>>>,
}

impl Probe {
    pub fn start(pid: u32, interval: Duration, csv: &Path) -> std::io::Result<Probe> {
        let mut file = std::io::BufWriter::new(fs::File::create(csv)?);
        writeln!(file, "{CSV_HEADER}")?;
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let write_error = Arc::new(Mutex::new(None));
        let start = Instant::now();
        let handle = {
            let (stop, samples) = (stop.clone(), samples.clone());
            let write_error = write_error.clone();
            let path = csv.display().to_string();
            // The first write error is kept (the step then fails with it); sampling goes
            // on, in memory, so the step's other figures stay whole.
            let failed = move |e: std::io::Error| {
                let mut kept = write_error.lock().unwrap_or_else(|e| e.into_inner());
                kept.get_or_insert_with(|| format!("cannot write {path}: {e}"));
            };
            std::thread::Builder::new()
                .name("probe".into())
                .spawn(move || {
                    let mut next = start;
                    while !stop.load(Ordering::Relaxed) {
                        let Some(s) = sample(pid, start.elapsed().as_secs_f64()) else {
                            break;
                        };
                        if let Err(e) = writeln!(
                            file,
                            "{:.3},{:.2},{:.2},{},{},{}",
                            s.t_s, s.cpu_user_s, s.cpu_sys_s, s.rss_bytes, s.threads, s.fds
                        ) {
                            failed(e);
                        }
                        samples.lock().unwrap_or_else(|e| e.into_inner()).push(s);
                        next += interval;
                        let now = Instant::now();
                        if next > now {
                            std::thread::sleep(next - now);
                        } else {
                            next = now;
                        }
                    }
                    if let Err(e) = file.flush().and_then(|()| file.get_ref().sync_data()) {
                        failed(e);
                    }
                })?
        };
        Ok(Probe {
            stop,
            samples,
            start,
            handle: Some(handle),
            write_error,
        })
    }

    /// Seconds since the probe started (the t_s of a sample taken now).
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Stops sampling and returns every sample taken.
    pub fn finish(self) -> Vec<Sample> {
        self.finish_checked().0
    }

    /// Stops sampling: every sample taken, and why the CSV could not be written whole
    /// (its file named), if it could not.
    pub fn finish_checked(mut self) -> (Vec<Sample>, Option<String>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
        let samples = std::mem::take(&mut *self.samples.lock().unwrap_or_else(|e| e.into_inner()));
        let error = self
            .write_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        (samples, error)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn the_machine_is_busy_at_least_while_this_thread_spins() {
        let me = std::process::id();
        let (busy_0, cpu_0) = (machine_busy_s().unwrap(), process_cpu_s(me).unwrap());
        let wall = Instant::now();
        while process_cpu_s(me).unwrap() - cpu_0 < 0.2 && wall.elapsed() < Duration::from_secs(10) {
        }
        let (busy_1, cpu_1) = (machine_busy_s().unwrap(), process_cpu_s(me).unwrap());
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let cores = stat.lines().filter(|l| l.starts_with("cpu")).count() as f64 - 1.0;
        // The spin is on a core, whatever else runs; the machine cannot be busier than
        // all its cores for the time that passed (a tick of rounding each side).
        assert!(
            busy_1 - busy_0 >= (cpu_1 - cpu_0) - 0.03,
            "{busy_0} {busy_1}"
        );
        assert!(busy_1 - busy_0 <= cores * wall.elapsed().as_secs_f64() + 0.05);
    }

    #[test]
    fn exact_cpu_is_split_as_the_ticks_are() {
        assert_eq!(split_cpu(None, 0.25, 0.5), (0.25, 0.5));
        assert_eq!(split_cpu(Some(0.3), 0.0, 0.0), (0.3, 0.0));
        assert_eq!(split_cpu(Some(0.9), 0.1, 0.2), (0.3, 0.6000000000000001));
        assert_eq!(split_cpu(Some(0.2), 0.0, 0.1), (0.0, 0.2));
    }

    #[test]
    fn reads_a_process_cpu_clock_to_below_a_tick() {
        let me = std::process::id();
        let before = process_cpu_s(me).expect("our own CPU clock");
        let spin = Instant::now();
        let mut after = before;
        while after == before && spin.elapsed() < Duration::from_secs(5) {
            after = process_cpu_s(me).expect("our own CPU clock");
        }
        // Read in a tight loop, the clock moves by microseconds, not by 10 ms ticks.
        assert!(
            after > before && after - before < 0.001,
            "{before} -> {after}"
        );
        let mut gone = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        gone.wait().expect("wait for true");
        assert_eq!(process_cpu_s(gone.id()), None);
    }

    #[test]
    fn samples_a_child_tree() {
        // A shell with two sleeping children: the tree has 3 processes, each with 1 thread.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & wait"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_tree(pid).len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let s = sample(pid, 0.0).unwrap();
        assert_eq!(process_tree(pid).len(), 3);
        assert_eq!(s.threads, 3);
        assert!(s.rss_bytes > 0);
        assert!(
            s.fds >= 3,
            "each process has at least stdin/out/err: {}",
            s.fds
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(sample(pid, 0.0), None);
    }

    #[test]
    fn probe_writes_csv_and_counts_cpu() {
        let dir = std::env::temp_dir().join(format!("echolab-probe-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("probe.csv");
        // Busy for ~0.3 s of CPU, then exit.
        let mut child = Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 0.3",
            ])
            .spawn()
            .unwrap();
        let probe = Probe::start(child.id(), Duration::from_millis(100), &csv).unwrap();
        child.wait().unwrap();
        // Until the probe has written two samples (the header, then a line each).
        let deadline = Instant::now() + Duration::from_secs(10);
        let written = || fs::read_to_string(&csv).map_or(0, |t| t.lines().count());
        while written() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let samples = probe.finish();
        assert!(samples.len() >= 2, "{samples:?}");
        let last = samples.last().unwrap();
        assert!(last.cpu_s() > 0.0, "{samples:?}");
        assert!(samples.windows(2).all(|w| w[1].t_s > w[0].t_s));
        let text = fs::read_to_string(&csv).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(CSV_HEADER));
        assert_eq!(lines.count(), samples.len());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_csv_that_cannot_be_written_is_reported_with_its_file() {
        let probe = Probe::start(
            std::process::id(),
            Duration::from_millis(10),
            Path::new("/dev/full"),
        )
        .unwrap();
        // The lines are buffered and fail at the flush when it stops; the samples taken
        // until then are kept in memory, so it stops once there is one.
        let deadline = Instant::now() + Duration::from_secs(30);
        while probe.samples.lock().unwrap().is_empty() {
            assert!(Instant::now() < deadline, "no sample taken");
            std::thread::sleep(Duration::from_millis(1));
        }
        let (samples, error) = probe.finish_checked();
        assert!(!samples.is_empty());
        let error = error.expect("the full disk is reported");
        assert!(error.contains("/dev/full"), "{error}");
        assert!(error.contains("No space left on device"), "{error}");
    }
}
