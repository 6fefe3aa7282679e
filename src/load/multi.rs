//! `--processes P`: P child `echolab load` processes as one run. Each child is a shard of this
//! run with its own --out subdirectory; the parent forwards signals, shows their progress and
//! [merges](super::merge) their results when all have ended. Children are supervised: killed
//! with SIGKILL, the parent takes them with it (they get SIGTERM and write what they measured).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use anyhow::Context;

use super::measurements::{LoadSummary, Outputs};
use super::merge::{merge_dirs, read_summary};
use super::preflight;
use super::schedule::Plan;
use super::LoadArgs;
use crate::load::measurements::LOAD_SUMMARY;
use crate::sys::signal;
use crate::sys::spawn::Supervision;
use crate::syscall;

/// The command line of child `index` of `processes`: this run's arguments with the shard
/// narrowed (shard j of M split P ways is shard j + M*i of M*P), its share of the threads and
/// its own output directory, quiet and in one process.
pub fn child_args(
    args: &LoadArgs,
    plan: &Plan,
    index: u64,
    processes: u64,
    out: &Path,
) -> Vec<String> {
    let (j, m) = plan.shard;
    LoadArgs {
        shard: Some(format!("{}/{}", j + m * index, m * processes)),
        out: Some(out.to_path_buf()),
        quiet: true,
        threads: Some(
            args.threads
                .unwrap_or_else(|| (plan.threads / processes as usize).max(1)),
        ),
        processes: 1,
        // The parent judges the merged error rate.
        max_error_rate: None,
        ..args.clone()
    }
    .to_args()
}

/// Runs `--processes P` children and merges their outputs. `None` when preflight refused.
pub fn run_processes(
    args: &LoadArgs,
    plan: &Plan,
    show_progress: bool,
) -> anyhow::Result<Option<LoadSummary>> {
    let processes = u64::from(plan.processes);
    let per_process = plan.connections().div_ceil(processes);
    if let Err(explanation) = preflight::check(plan, per_process) {
        crate::errln!("echolab load: {explanation}");
        return Ok(None);
    }
    let (out, temporary) = match &args.out {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("echolab-load-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    signal::install().context("installing the SIGINT/SIGTERM handlers")?;
    write_in_progress(&out, processes, &[])?;
    let (dirs, mut children) = spawn_children(args, plan, &out, processes)?;
    let statuses = supervise(&mut children, &dirs, &out, processes, show_progress)?;
    for (dir, status) in dirs.iter().zip(&statuses) {
        if !dir.join(LOAD_SUMMARY).is_file() {
            anyhow::bail!(
                "load process for {} ended ({}) without results",
                dir.display(),
                status.map_or("unknown".into(), |s| s.to_string())
            );
        }
    }
    let mut summary = merge_dirs(&dirs, &out)?;
    summary.processes = processes;
    summary.merged_from.clear();
    if temporary {
        let _ = std::fs::remove_dir_all(&out);
    } else {
        Outputs::rewrite_summary(&out, &summary)?;
    }
    Ok(Some(summary))
}

/// Starts the children, each in its own group, writing into `out`/process-N.
fn spawn_children(
    args: &LoadArgs,
    plan: &Plan,
    out: &Path,
    processes: u64,
) -> anyhow::Result<(Vec<PathBuf>, Vec<Child>)> {
    let exe = std::env::current_exe().context("finding the echolab executable")?;
    let mut dirs = Vec::new();
    let mut children: Vec<Child> = Vec::new();
    for index in 0..processes {
        let dir = out.join(format!("process-{index}"));
        let mut command = Command::new(&exe);
        command
            .args(child_args(args, plan, index, processes, &dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // SIGTERM, not SIGKILL: an orphaned child still stops cleanly and leaves its results.
        // A group of its own: a stop signal sent to this process's group (a terminal's
        // Ctrl-C, the runner stopping a load) reaches the children once, passed on below,
        // not twice, which would stop them without waiting for the echoes in flight.
        let child = Supervision::new(libc::SIGTERM)
            .own_group()
            .spawn(&mut command)
            .with_context(|| format!("starting {}", exe.display()))?;
        dirs.push(dir);
        children.push(child);
    }
    Ok((dirs, children))
}

/// Waits for every child, passing stop signals on and keeping the in-progress summary
/// and the progress line; returns how each ended.
fn supervise(
    children: &mut [Child],
    dirs: &[PathBuf],
    out: &Path,
    processes: u64,
    show_progress: bool,
) -> anyhow::Result<Vec<Option<ExitStatus>>> {
    let progress = if show_progress {
        indicatif::ProgressBar::new_spinner()
    } else {
        indicatif::ProgressBar::hidden()
    };
    // Stop signals passed on so far.
    let mut forwarded = 0;
    let mut statuses = vec![None; children.len()];
    let mut last_progress = std::time::Instant::now();
    while statuses.iter().any(Option::is_none) {
        for (child, status) in children.iter_mut().zip(statuses.iter_mut()) {
            if status.is_none() {
                *status = child.try_wait()?;
            }
        }
        // Pass each signal on once, so a second Ctrl-C also reaches the children.
        let received = signal::signal_count();
        if received > forwarded {
            let signal = signal::stop_signal().unwrap_or(libc::SIGTERM);
            for child in children.iter() {
                let _ = syscall!(kill(child.id() as libc::pid_t, signal));
            }
            forwarded = received;
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = std::time::Instant::now();
            let parts: Vec<LoadSummary> =
                dirs.iter().filter_map(|d| read_summary(d).ok()).collect();
            write_in_progress(out, processes, &parts)?;
            progress.set_message(format!(
                "{} processes: connections {}  requests {}  errors {}",
                processes,
                parts.iter().map(|s| s.connections_established).sum::<u64>(),
                parts.iter().map(|s| s.requests_completed).sum::<u64>(),
                parts.iter().map(|s| s.errors_total).sum::<u64>(),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    progress.finish_and_clear();
    Ok(statuses)
}

/// Keeps a summary.json in the parent's directory while the children run: `"complete":
/// false` and the children's totals so far, so a parent killed outright still leaves one.
fn write_in_progress(out: &Path, processes: u64, parts: &[LoadSummary]) -> anyhow::Result<()> {
    let summary = LoadSummary {
        complete: false,
        processes,
        connections_established: parts.iter().map(|s| s.connections_established).sum(),
        requests_completed: parts.iter().map(|s| s.requests_completed).sum(),
        errors_total: parts.iter().map(|s| s.errors_total).sum(),
        ..LoadSummary::default()
    };
    Outputs::rewrite_summary(out, &summary)
}
