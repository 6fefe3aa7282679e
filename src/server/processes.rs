//! `--processes P`: P copies of one server sharing its port, for more connections than
//! one process's file-descriptor limit allows.
//!
//! The parent binds the address first (resolving port 0), then starts P children —
//! this same executable, `serve` with the same options but `--processes 1`, the
//! resolved address and per-child log and summary files — each binding its own
//! SO_REUSEPORT listener, so the kernel spreads new connections over them. Once every
//! child is listening the parent closes its own listener (it would otherwise get a
//! share of the connections and never accept them) and prints the listening line.
//! SIGINT/SIGTERM are forwarded to the children; a child that dies early is reported
//! and the others keep serving. When all have exited, the parent writes one log (every
//! child's rows under one header) and one summary (their sums), as one process would.
//!
//! `--max-conns` applies to each process.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context as _;

use super::counters::{ServerSummary, Stats};
use super::stop::stop_requested;
use super::{bind_first_listener, finish, Listening, ServerConfig};
use crate::sys::spawn::Supervision;
use crate::sys::unix_now;

/// One child server.
struct Process {
    index: usize,
    child: Child,
    summary_path: PathBuf,
    log_path: PathBuf,
    exited: bool,
    stderr_forwarder: Option<std::thread::JoinHandle<()>>,
}

pub fn main(config: ServerConfig, fd_limit: u64) -> anyhow::Result<ExitCode> {
    let started_unix = unix_now();
    let listener = bind_first_listener(&config)?;
    let addr = listener.local_addr()?;
    remove_stale_dirs();
    let dir = std::env::temp_dir().join(format!("{DIR_PREFIX}{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = run(&config, listener, addr, &dir, started_unix, fd_limit);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The children's summaries and logs go to `$TMPDIR/echolab-processes-PID`.
const DIR_PREFIX: &str = "echolab-processes-";

/// Removes the directories of parents that died without cleaning up (SIGKILL): those
/// whose PID no longer runs.
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX))
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn run(
    config: &ServerConfig,
    listener: std::net::TcpListener,
    addr: std::net::SocketAddr,
    dir: &Path,
    started_unix: f64,
    fd_limit: u64,
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding the echolab executable")?;
    let (mut processes, workers) = start_all(&exe, config, addr, dir)?;
    // Every child listens on its own socket now; ours would only swallow connections.
    drop(listener);
    let listening = Listening {
        model: Some(config.model),
        workers: Some(workers),
        fd_limit: Some(fd_limit),
        pid: Some(std::process::id()),
        processes: Some(config.processes),
        ..Listening::at(addr)
    };
    crate::outln!("{listening}");

    wait_all(&mut processes)?;

    // Let the children's last messages out before the summary.
    for process in &mut processes {
        if let Some(forwarder) = process.stderr_forwarder.take() {
            let _ = forwarder.join();
        }
    }

    // One log and one summary, as a single process would write them.
    let mut summary = ServerSummary {
        model: config.model.name().to_string(),
        addr: addr.to_string(),
        pid: std::process::id(),
        processes: config.processes,
        workers,
        fd_limit,
        started_unix,
        ..ServerSummary::default()
    };
    for process in &processes {
        match read_summary(&process.summary_path) {
            Ok(child) => summary.absorb(&child),
            Err(error) => crate::errln!(
                "echolab serve: process {} left no summary ({error:#}); its connections are not counted",
                process.index
            ),
        }
    }
    summary.stopped_unix = unix_now();
    if let Some(path) = &config.log {
        merge_logs(path, processes.iter().map(|p| p.log_path.as_path()))?;
    }
    // The log is already written: finish() only prints and writes the summary JSON.
    let no_log = Stats::new(None, None)?;
    finish(config, &no_log, &summary)?;
    Ok(ExitCode::SUCCESS)
}

/// Starts the children one by one, each listening before the next starts; returns them
/// and the last one's worker count. On a failure, stops those already started.
fn start_all(
    exe: &Path,
    config: &ServerConfig,
    addr: std::net::SocketAddr,
    dir: &Path,
) -> anyhow::Result<(Vec<Process>, usize)> {
    let mut processes = Vec::with_capacity(config.processes);
    let mut workers = 1;
    for index in 0..config.processes {
        let mut process = spawn(exe, config, addr, dir, index)?;
        match wait_listening(&mut process) {
            Ok(child_workers) => workers = child_workers,
            Err(error) => {
                for other in &mut processes {
                    stop(other);
                }
                stop(&mut process);
                return Err(error);
            }
        }
        processes.push(process);
    }
    Ok((processes, workers))
}

/// Waits for SIGINT/SIGTERM (forwarded) or for every child to exit, reporting a child
/// that exits on its own or fails.
fn wait_all(processes: &mut [Process]) -> anyhow::Result<()> {
    let mut forwarded = false;
    while processes.iter().any(|p| !p.exited) {
        if stop_requested() && !forwarded {
            for process in processes.iter().filter(|p| !p.exited) {
                signal(&process.child, libc::SIGTERM);
            }
            forwarded = true;
        }
        for process in processes.iter_mut().filter(|p| !p.exited) {
            if let Some(status) = process.child.try_wait()? {
                process.exited = true;
                if !forwarded || !status.success() {
                    crate::errln!(
                        "echolab serve: process {} (pid {}) exited with {}{}",
                        process.index,
                        process.child.id(),
                        describe(status),
                        if forwarded {
                            ""
                        } else {
                            "; the others keep serving"
                        }
                    );
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn spawn(
    exe: &Path,
    config: &ServerConfig,
    addr: std::net::SocketAddr,
    dir: &Path,
    index: usize,
) -> anyhow::Result<Process> {
    let summary_path = dir.join(format!("summary-{index}.json"));
    let log_path = dir.join(format!("log-{index}.csv"));
    // The parent's options, but one process on the resolved address, with its own files.
    let child_config = ServerConfig {
        addr,
        processes: 1,
        log: config.log.as_ref().map(|_| log_path.clone()),
        summary_json: Some(summary_path.clone()),
        share_port: true,
        ..config.clone()
    };
    let mut command = Command::new(exe);
    command
        .args(child_config.to_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Die with the parent (SIGTERM, so the child still shuts down cleanly).
    let mut child = Supervision::new(libc::SIGTERM)
        .spawn(&mut command)
        .with_context(|| format!("starting server process {index}"))?;
    let stderr = child.stderr.take().expect("piped stderr");
    let stderr_forwarder = Some(std::thread::spawn(move || forward_stderr(index, stderr)));
    Ok(Process {
        index,
        child,
        summary_path,
        log_path,
        exited: false,
        stderr_forwarder,
    })
}

/// Reads the child's listening line; returns its worker count.
fn wait_listening(process: &mut Process) -> anyhow::Result<usize> {
    let stdout = process.child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if line.is_empty() {
        let status = process.child.wait()?;
        process.exited = true;
        anyhow::bail!(
            "server process {} exited before listening ({})",
            process.index,
            describe(status)
        );
    }
    let listening: Listening = line.parse().map_err(|error| {
        anyhow::anyhow!(
            "server process {} announced itself oddly: {error}",
            process.index
        )
    })?;
    Ok(listening.workers.unwrap_or(1))
}

/// Passes the child's messages on, prefixed, but not its own summary: the parent prints the total.
fn forward_stderr(index: usize, stderr: std::process::ChildStderr) {
    let mut in_summary = false;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        in_summary |= line.starts_with("echolab serve summary:");
        if !in_summary {
            crate::errln!("[process {index}] {line}");
        }
    }
}

fn stop(process: &mut Process) {
    if !process.exited {
        let _ = process.child.kill();
        let _ = process.child.wait();
        process.exited = true;
    }
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on a child we started and have not reaped yet.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => status.to_string(),
    }
}

fn read_summary(path: &Path) -> anyhow::Result<ServerSummary> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Writes every child's log rows under one header into `path`.
fn merge_logs<'a>(path: &Path, logs: impl Iterator<Item = &'a Path>) -> anyhow::Result<()> {
    let out =
        File::create(path).with_context(|| format!("cannot create log {}", path.display()))?;
    let mut out = io::BufWriter::new(out);
    let mut header_written = false;
    for log in logs {
        let Ok(file) = File::open(log) else {
            continue;
        };
        let mut lines = BufReader::new(file).lines();
        if let Some(header) = lines.next().transpose()? {
            if !header_written {
                writeln!(out, "{header}")?;
                header_written = true;
            }
        }
        for line in lines {
            writeln!(out, "{}", line?)?;
        }
    }
    if !header_written {
        // No child wrote a log: still leave a valid empty log.
        let stats = Stats::new(Some(path), None)?;
        stats.flush_log()?;
        return Ok(());
    }
    out.flush()?;
    Ok(())
}
