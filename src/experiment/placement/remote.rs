//! `echolab remote`: what the runner starts on a host it reaches over ssh.
//!
//! - `run -- PROGRAM ARGS`: PROGRAM in a process group of its own, tied to the ssh
//!   session: a signal number written on stdin is sent to the group (the runner's
//!   SIGINT and SIGTERM, which ssh does not carry), and the end of stdin (the session
//!   closed, the runner gone, or the host's sshd lost) kills the group, so nothing
//!   echolab started outlives its session. A descendant that leaves the group
//!   (setsid, a double fork) is still found: `run` is the subreaper of its tree, so
//!   orphans come to it rather than to init, and the whole tree is killed at the end.
//! - `probe --pid PID --out DIR`: the local probe's files on the host itself,
//!   DIR/probe.csv and DIR/net-timeline.csv, until stdin ends.
//! - `snapshot --pid PID`: one reading of PID's CPU and memory, its network
//!   namespace's TCP counters and the host's busy CPU time, one per line.

use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use crate::experiment::measurement::netstat::{self, NetCounters, Timeline};
use crate::experiment::measurement::probe::{self, Probe, Sample};
use crate::results::files::{NET_TIMELINE, PROBE};
use crate::sys::spawn::Supervision;

/// How often the remote probe samples, as the local one does.
const INTERVAL: Duration = Duration::from_millis(100);

#[derive(Args, Debug)]
pub struct RemoteArgs {
    #[command(subcommand)]
    pub what: Remote,
}

#[derive(Subcommand, Debug)]
pub enum Remote {
    /// Run PROGRAM in its own process group until it exits or stdin ends (then the
    /// group is killed); a signal number written on stdin is sent to the group
    Run {
        /// Create this directory first (repeatable)
        #[arg(long, value_name = "DIR")]
        mkdir: Vec<PathBuf>,
        /// The program and its arguments
        #[arg(trailing_var_arg = true, required = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Write probe.csv and net-timeline.csv of process PID into DIR until stdin ends
    Probe {
        #[arg(long)]
        pid: u32,
        #[arg(long)]
        out: PathBuf,
    },
    /// Print one reading of PID's CPU and memory, its TCP counters and the host's busy time
    Snapshot {
        #[arg(long)]
        pid: u32,
    },
}

pub fn main(args: RemoteArgs) -> anyhow::Result<ExitCode> {
    match args.what {
        Remote::Run { mkdir, command } => run(&mkdir, &command),
        Remote::Probe { pid, out } => {
            std::fs::create_dir_all(&out)?;
            let probe = Probe::start(pid, INTERVAL, &out.join(PROBE))?;
            let timeline = Timeline::start(pid, &out.join(NET_TIMELINE))?;
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            probe.finish();
            timeline.finish();
            Ok(ExitCode::SUCCESS)
        }
        Remote::Snapshot { pid } => {
            anyhow::ensure!(
                std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "snapshot: no process {pid} on this host"
            );
            print!("{}", snapshot_lines(pid));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run(mkdir: &[PathBuf], command: &[String]) -> anyhow::Result<ExitCode> {
    for dir in mkdir {
        std::fs::create_dir_all(dir)?;
    }
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == -1 {
        anyhow::bail!(
            "cannot become the subreaper of {}: {}",
            command[0],
            std::io::Error::last_os_error()
        );
    }
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]).stdin(Stdio::null());
    let mut child = Supervision::new(libc::SIGKILL)
        .own_group()
        .spawn(&mut cmd)
        .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", command[0]))?;
    let group = child.id() as libc::pid_t;
    let kill = move |signal| {
        // SAFETY: kill has no memory preconditions; the group is the child's own
        // (own_group), so nothing else is signalled.
        unsafe { libc::kill(-group, signal) };
    };
    std::thread::spawn(move || {
        let mut lines = std::io::stdin().lock();
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line) {
                Ok(n) if n > 0 => {
                    if let Ok(signal) = line.trim().parse::<i32>() {
                        kill(signal);
                    }
                }
                // The session is gone: so is everything it started.
                _ => {
                    kill(libc::SIGKILL);
                    // Anything left unread is dropped.
                    let _ = lines.read_to_end(&mut Vec::new());
                    return;
                }
            }
        }
    });
    let status = child.wait()?;
    // What the program forked goes with it, in its group or not.
    kill(libc::SIGKILL);
    end_descendants();
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        _ => 1,
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// Kills every descendant of this process and reaps it, again until none is left (one
/// forking while the tree is read appears in the next read); at most two seconds. As
/// their subreaper, this process is the parent of every orphan among them.
fn end_descendants() {
    let deadline = Instant::now() + Duration::from_secs(2);
    super::process::kill_until_gone(deadline, || {
        // SAFETY: waitpid with a null status pointer and WNOHANG only reaps exited children.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        let tree = probe::process_tree(std::process::id());
        tree.iter().skip(1).map(|&pid| pid as libc::pid_t).collect()
    });
}

/// The lines `snapshot` prints; [`parse_snapshot`] reads them back.
fn snapshot_lines(pid: u32) -> String {
    let mut out = String::new();
    if let Some(s) = probe::sample(pid, 0.0) {
        out += &format!(
            "sample {} {} {} {} {}\n",
            s.cpu_user_s, s.cpu_sys_s, s.rss_bytes, s.threads, s.fds
        );
    }
    if let Some(n) = netstat::read(pid) {
        out += &format!(
            "net {} {} {} {} {} {} {}\n",
            n.segs_in,
            n.segs_out,
            n.retrans_segs,
            n.resets_sent,
            n.listen_overflows,
            n.listen_drops,
            n.syn_retrans
        );
    }
    if let Some(busy) = probe::machine_busy_s() {
        out += &format!("busy {busy}\n");
    }
    out
}

/// One reading of a remote process and its host.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Snapshot {
    pub sample: Option<Sample>,
    pub net: Option<NetCounters>,
    pub busy_s: Option<f64>,
}

/// Reads `snapshot`'s output; the sample's time is `t_s`.
pub fn parse_snapshot(text: &str, t_s: f64) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let kind = words.next();
        let numbers: Vec<f64> = words.filter_map(|w| w.parse().ok()).collect();
        match (kind, numbers.as_slice()) {
            (Some("sample"), &[user, sys, rss, threads, fds]) => {
                snapshot.sample = Some(Sample {
                    t_s,
                    cpu_user_s: user,
                    cpu_sys_s: sys,
                    rss_bytes: rss as u64,
                    threads: threads as u64,
                    fds: fds as u64,
                })
            }
            (Some("net"), &[a, b, c, d, e, f, g]) => {
                snapshot.net = Some(NetCounters {
                    segs_in: a as u64,
                    segs_out: b as u64,
                    retrans_segs: c as u64,
                    resets_sent: d as u64,
                    listen_overflows: e as u64,
                    listen_drops: f as u64,
                    syn_retrans: g as u64,
                })
            }
            (Some("busy"), &[busy]) => snapshot.busy_s = Some(busy),
            _ => {}
        }
    }
    snapshot
}

/// The samples of a probe.csv, as [`Probe`] wrote them.
pub fn parse_probe_csv(text: &str) -> Vec<Sample> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<f64> = line.split(',').filter_map(|v| v.parse().ok()).collect();
            let &[t_s, user, sys, rss, threads, fds] = f.as_slice() else {
                return None;
            };
            Some(Sample {
                t_s,
                cpu_user_s: user,
                cpu_sys_s: sys,
                rss_bytes: rss as u64,
                threads: threads as u64,
                fds: fds as u64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_of_this_process_reads_back() {
        let me = std::process::id();
        let lines = snapshot_lines(me);
        let s = parse_snapshot(&lines, 2.5);
        let sample = s.sample.expect("this process has a sample");
        assert_eq!(sample.t_s, 2.5);
        assert!(
            sample.threads >= 1 && sample.fds >= 3 && sample.rss_bytes > 0,
            "{lines}"
        );
        assert!(s.net.is_some() && s.busy_s.is_some(), "{lines}");
        assert_eq!(parse_snapshot("", 0.0), Snapshot::default());
    }

    #[test]
    fn probe_csv_reads_back() {
        let csv = format!(
            "{}\n0.100,0.50,0.25,4096,3,7\n0.200,0.51,0.26,8192,3,8\nbroken\n",
            probe::CSV_HEADER
        );
        let samples = parse_probe_csv(&csv);
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[1].rss_bytes, 8192);
        assert_eq!(samples[1].fds, 8);
        assert!((samples[0].cpu_s() - 0.75).abs() < 1e-9);
    }
}
