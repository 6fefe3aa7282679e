//! The recorder: runs a plan in this process. It starts the [engine]'s event-loop threads,
//! then once a second gathers what they measured into the timeline, the interval log, the
//! connection records and a summary.json rewritten each second, so a run cut short still
//! leaves valid results; at the end it writes the final summary and says why a run fell short.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::engine::{self, Shared, Stop};
use super::measurements::{self, round3, Interval, LoadSummary, Outputs};
use super::preflight;
use super::schedule::{Mode, Plan};
use super::Engine;
use crate::sys::signal;
use crate::sys::unix_now;
use crate::syscall;

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
            crate::errln!("echolab load: {explanation}");
            return Ok(None);
        }
    };
    signal::install().context("installing the SIGINT/SIGTERM handlers")?;
    wait_for_start(plan, &mut warnings);
    let threads = plan.threads.min(plan.connections() as usize).max(1);
    let shared = Arc::new(Shared::new(threads));
    let started_unix = unix_now();
    let clock = Instant::now();
    let cpu_start = cpu_times();
    let base = summary_base(plan, threads, started_unix);
    let outputs = match out {
        Some(dir) => Some(Outputs::create(
            dir,
            started_unix,
            &in_progress(&base, 0.0),
        )?),
        None => None,
    };
    let handles = engine::start(plan, &shared, clock, started_unix)?;

    let mut recorder = Recorder {
        plan,
        shared: &shared,
        clock,
        base,
        outputs,
        progress: progress_bar(show_progress),
        totals: Interval::default(),
        second: 0,
        cpu_busy_seconds: 0,
        last_cpu: cpu_start,
        cores: std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(threads) as f64,
    };
    recorder.record_until_finished(&handles)?;
    recorder.progress.finish_and_clear();
    for handle in handles {
        handle
            .join()
            .map_err(|_| anyhow::anyhow!("a load thread panicked"))??;
    }
    recorder.finish(started_unix, cpu_start, warnings).map(Some)
}

/// Waits for `--start-at` (or a signal); a start more than a second late is a warning.
fn wait_for_start(plan: &Plan, warnings: &mut Vec<String>) {
    if let Some(at) = plan.start_at {
        let wait = at - unix_now();
        if wait > 1.0 {
            crate::errln!("echolab load: waiting {wait:.1} s, until --start-at {at}");
        }
        if wait > 0.0 {
            wait_or_signal(Duration::from_secs_f64(wait));
        } else if wait < -1.0 {
            warnings.push(format!("started {:.1} s after --start-at", -wait));
        }
    }
}

/// The recorder's state while the threads run: what it has gathered and where it writes.
struct Recorder<'a> {
    plan: &'a Plan,
    shared: &'a Shared,
    clock: Instant,
    base: LoadSummary,
    outputs: Option<Outputs>,
    progress: indicatif::ProgressBar,
    totals: Interval,
    second: u64,
    cpu_busy_seconds: u64,
    last_cpu: (f64, f64),
    cores: f64,
}

impl Recorder<'_> {
    /// Passes signals on to the threads and records each second until every thread ended.
    fn record_until_finished<T>(&mut self, handles: &[JoinHandle<T>]) -> anyhow::Result<()> {
        loop {
            let finished = handles.iter().all(|h| h.is_finished());
            if !finished {
                // Wake often enough to pass signals on promptly; write once per second.
                std::thread::sleep(Duration::from_millis(20));
                match signal::signal_count() {
                    0 => {}
                    1 => self.shared.request_stop(Stop::Drain),
                    _ => self.shared.request_stop(Stop::Now),
                }
                if self.clock.elapsed() < Duration::from_secs(self.second + 1) {
                    continue;
                }
            }
            let elapsed = self.clock.elapsed().as_secs_f64();
            self.record_second(elapsed, finished)?;
            if finished {
                return Ok(());
            }
            self.write_partial_summary(elapsed)?;
            self.second += 1;
        }
    }

    /// Takes what the threads measured this second (the last one may be shorter): its
    /// timeline row, interval histogram and connection records, the busy-CPU count and the
    /// progress line.
    fn record_second(&mut self, elapsed: f64, finished: bool) -> anyhow::Result<()> {
        let plan = self.plan;
        let second = self.second;
        let mut interval = self.shared.take_interval();
        let length = if finished {
            elapsed - second as f64
        } else {
            1.0
        };
        let active = self.shared.active.load(Ordering::Relaxed);
        let row = measurements::timeline_row(second, active, &interval);
        let cpu = cpu_times();
        let last_cpu = self.last_cpu;
        if (cpu.0 + cpu.1 - last_cpu.0 - last_cpu.1) / length.max(1e-3) >= 0.9 * self.cores {
            self.cpu_busy_seconds += 1;
        }
        self.last_cpu = cpu;
        if let Some(o) = self.outputs.as_mut() {
            o.write_records(&interval.records)?;
            o.write_second(
                &row,
                second as f64,
                length,
                &interval.latency,
                raw_of(plan, &interval),
            )?;
        }
        let totals = &mut self.totals;
        totals.add(&mut interval);
        totals.records.clear();
        let c = &totals.counters;
        self.progress.set_message(format!(
            "connections {}/{}  req/s {}  p50 {} us  p99 {} us  errors {}",
            active,
            plan.connections(),
            row.requests,
            row.p50_us,
            row.p99_us,
            c.errors_total()
        ));
        self.progress.tick();
        Ok(())
    }

    /// Rewrites summary.json with the totals so far (and percentiles.csv every 5 s), so a
    /// run cut short still leaves valid results.
    fn write_partial_summary(&self, elapsed: f64) -> anyhow::Result<()> {
        let (plan, totals) = (self.plan, &self.totals);
        if let Some(o) = self.outputs.as_ref() {
            let mut partial = in_progress(&self.base, elapsed);
            partial.max_concurrent = self.shared.max_active.load(Ordering::Relaxed);
            partial.set_totals(&totals.counters, &totals.latency, raw_of(plan, totals));
            o.write_summary(&partial)?;
            if self.second.is_multiple_of(5) {
                o.write_percentiles(&totals.latency, raw_of(plan, totals))?;
            }
        }
        Ok(())
    }

    /// The final summary, with why the run ended and its warnings, written last.
    fn finish(
        self,
        started_unix: f64,
        cpu_start: (f64, f64),
        mut warnings: Vec<String>,
    ) -> anyhow::Result<LoadSummary> {
        let Recorder {
            plan,
            shared,
            clock,
            mut base,
            outputs,
            totals,
            second,
            cpu_busy_seconds,
            cores,
            ..
        } = self;
        let elapsed = clock.elapsed().as_secs_f64();
        let cpu = cpu_times();
        base.ended_unix = started_unix + elapsed;
        base.duration_s = measured_s(&base, elapsed);
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
        Ok(base)
    }
}

fn raw_of<'a>(plan: &Plan, interval: &'a Interval) -> Option<&'a hdrhistogram::Histogram<u64>> {
    matches!(plan.mode, Mode::Open { .. }).then_some(&interval.latency_raw)
}

/// Sleeps until `wait` has passed or a signal arrived.
pub fn wait_or_signal(wait: Duration) {
    let until = Instant::now() + wait;
    while Instant::now() < until && !signal::stop_requested() {
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

/// The summary rewritten while the run goes: incomplete, and saying so.
fn in_progress(base: &LoadSummary, elapsed: f64) -> LoadSummary {
    LoadSummary {
        ended_unix: unix_now(),
        duration_s: measured_s(base, elapsed),
        interrupted: true,
        cut_short_reason: Some("run in progress (or killed before it could finish)".into()),
        ..base.clone()
    }
}

/// The measured part of `elapsed` seconds of a run: what follows its warm-up, so that
/// throughput (requests / duration_s) counts measured requests over measured time.
fn measured_s(base: &LoadSummary, elapsed: f64) -> f64 {
    round3((elapsed - base.warmup_s).max(0.0))
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
        engine: plan.engine.name().to_string(),
        processes: 1,
        shard: (plan.shard.1 > 1).then(|| format!("{}/{}", plan.shard.0, plan.shard.1)),
        warmup_s: plan.warmup.as_secs_f64(),
        ..LoadSummary::default()
    }
}

/// Says whether and why the run was cut short.
fn describe_end(summary: &mut LoadSummary, plan: &Plan, c: &measurements::Counters) {
    if let Some(received) = signal::stop_signal() {
        summary.interrupted = true;
        summary.cut_short_reason = Some(format!(
            "{} received{}",
            signal::name(received),
            if signal::signal_count() > 1 {
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
    c: &measurements::Counters,
    cpu_busy_seconds: u64,
    seconds: u64,
    cores: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if c.releases > 0
        && (c.late_releases * 100 > c.releases || measurements::fell_behind(c.sends, c.releases))
    {
        warnings.push(format!(
            "the generator fell behind its schedule: sent {} of the {} requests it planned \
             ({} behind); {} released over 5 ms late (worst {:.1} ms); the rate asked was not \
             offered",
            c.sends,
            c.releases,
            c.releases.saturating_sub(c.sends),
            c.late_releases,
            c.max_lateness_ns as f64 / 1e6
        ));
    }
    if cpu_busy_seconds * 2 > seconds && seconds >= 2 {
        let cheaper = match plan.engine {
            Engine::Epoll => "--engine uring (less CPU per request), ",
            Engine::Uring => "",
        };
        warnings.push(format!(
            "the client was CPU-bound ({cpu_busy_seconds} of {seconds} s at over 90% of {cores} \
             cores): results may measure the client; use {cheaper}more --threads, --processes \
             or hosts"
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
    if syscall!(getrusage(libc::RUSAGE_SELF, &mut usage)).is_err() {
        return (0.0, 0.0);
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (seconds(usage.ru_utime), seconds(usage.ru_stime))
}
