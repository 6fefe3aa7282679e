//! The server of one step: `echolab serve` with its arguments, or any echo server
//! given as a command (`{port}` and `{addr}` substituted); its start (inside the
//! server host's namespace when there are emulated hosts, in a cgroup of its own
//! when the scenario limits it), and the moment it is ready.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::tail;
use super::RunConfig;
use crate::experiment::measurement::probe;
use crate::experiment::placement::conditions::Cgroup;
use crate::experiment::placement::process::{self, Guard};
use crate::experiment::placement::Placement;
use crate::results::files::{SERVER_COMMAND, SERVER_STDERR, SERVER_STDOUT};
use crate::results::Limits;
use crate::scenario::{server_config, ModelEntry, ModelKind, Step};
use crate::server::{Listening, ServerConfig};
use crate::units::trim_float;

/// How long a server may take to be ready, unless the scenario says (`start_timeout`).
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a server may take to close its connections and write its summary.
pub(super) const STOP_GRACE: Duration = Duration::from_secs(30);

/// Why a server did not start listening.
#[derive(Debug, PartialEq)]
pub(in crate::experiment) enum StartError {
    /// A stop signal came first: the step is interrupted, not failed.
    Interrupted,
    /// The step fails with this reason.
    Failed(String),
}

impl From<String> for StartError {
    fn from(reason: String) -> StartError {
        StartError::Failed(reason)
    }
}

/// How a step's server is started and known to be ready: one flow for both kinds.
enum Launch {
    /// `echolab serve`: ready when it prints `listening on ADDR`.
    Builtin(ServerConfig),
    /// Any echo server: ready when `addr` accepts a connection.
    Command { argv: Vec<String>, addr: SocketAddr },
}

impl Launch {
    fn of(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> Result<Launch, String> {
        Ok(match &entry.kind {
            ModelKind::Builtin(_) => Launch::Builtin(server_config(entry, step, dir, bind)),
            ModelKind::Command(command) => {
                let addr = SocketAddr::new(bind, free_port()?);
                Launch::Command {
                    argv: substitute(command, addr),
                    addr,
                }
            }
        })
    }

    /// The program and its arguments.
    fn program(&self, exe: &Path) -> (PathBuf, Vec<String>) {
        match self {
            Launch::Builtin(config) => (
                exe.to_path_buf(),
                config
                    .to_args()
                    .into_iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
            ),
            Launch::Command { argv, .. } => (PathBuf::from(&argv[0]), argv[1..].to_vec()),
        }
    }

    /// How the server is named in messages.
    fn describe(&self) -> String {
        match self {
            Launch::Builtin(_) => "server".to_string(),
            Launch::Command { argv, .. } => format!("`{}`", argv.join(" ")),
        }
    }
}

/// `{port}` and `{addr}` replaced in every argument of a command.
pub fn substitute(command: &[String], addr: SocketAddr) -> Vec<String> {
    command
        .iter()
        .map(|a| {
            a.replace("{port}", &addr.port().to_string())
                .replace("{addr}", &addr.ip().to_string())
        })
        .collect()
}

/// A port free on loopback now (the kernel's pick, released for the server to take).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// A started server: its guard, address, the pid to probe, its stdout copier and its cgroup.
pub(in crate::experiment) struct Started {
    pub guard: Guard,
    pub addr: SocketAddr,
    pub pid: u32,
    pub reader: std::thread::JoinHandle<()>,
    /// The server's own cgroup when the scenario limits it (removed when dropped).
    pub cgroup: Option<Cgroup>,
}

/// Starts the server at `host` (in a cgroup of its own when the entry
/// has limits) and waits until it is ready: its `listening on ADDR` line for echolab's
/// own servers, a connection accepted on its port for a command.
pub(in crate::experiment) fn start_server(
    config: &RunConfig,
    entry: &ModelEntry,
    step: &Step,
    dir: &Path,
    host: &dyn Placement,
) -> Result<Started, StartError> {
    let launch = Launch::of(entry, step, dir, host.ip())?;
    let (program, args) = launch.program(&config.exe);
    let line = match &launch {
        Launch::Builtin(_) => command_line(&program, &args),
        Launch::Command { argv, .. } => argv.join(" ") + "\n",
    };
    let (program, args) = host.command(&program, args);
    fs::write(dir.join(SERVER_COMMAND), line).ok();
    let stderr_path = dir.join(SERVER_STDERR);
    let stderr = File::create(&stderr_path).map_err(|e| e.to_string())?;
    let cgroup = match Limits::of(&entry.options) {
        Some(_) if host.remote() => {
            return Err(StartError::Failed(
                "cpu, memory and task limits need the server on this machine (a cgroup of the \
                 runner's), not on an ssh host"
                    .into(),
            ))
        }
        None if host.remote() => None,
        Some(limits) => Some(Cgroup::create(limits).map_err(|e| format!("{e:#}"))?),
        // A command may fork anything: contained in a group of its own, killed whole.
        None if matches!(launch, Launch::Command { .. }) => contain_or_warn(),
        None => None,
    };
    let cgroup_fds = cgroup.as_ref().map_or(Vec::new(), Cgroup::procs_fds);
    let cpus = entry.options.cpus.as_deref().and_then(process::cpu_set);
    let spawned = if host.remote() {
        process::spawn_relayed(&program, &args, Stdio::piped(), stderr.into())
    } else {
        process::spawn_in(
            &program,
            &args,
            cpus,
            &cgroup_fds,
            Stdio::piped(),
            stderr.into(),
        )
    };
    let mut guard = spawned.map_err(|e| format!("cannot start {}: {e}", launch.describe()))?;
    let stdout = guard.child.stdout.take().expect("stdout is piped");
    let mut copy = File::create(dir.join(SERVER_STDOUT)).map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel();
    // Copies the server's stdout to its file for the whole run, handing over the listening line.
    let reader = std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(copy, "{line}");
            if !sent && line.starts_with("listening on ") {
                let _ = tx.send(line);
                sent = true;
            }
        }
    });
    let timeout = entry.options.start_timeout.map_or(START_TIMEOUT, |t| t.0);
    let (addr, pid) = wait_ready(
        &launch,
        &mut guard,
        &rx,
        host,
        &cgroup,
        &stderr_path,
        timeout,
    )?;
    Ok(Started {
        guard,
        addr,
        pid,
        reader,
        cgroup,
    })
}

/// Waits until the server is ready (its listening line, or its port accepting), and
/// returns its address and the pid to probe; why not when it exits, a stop signal
/// comes or `timeout` passes first.
fn wait_ready(
    launch: &Launch,
    guard: &mut Guard,
    listening: &mpsc::Receiver<String>,
    host: &dyn Placement,
    cgroup: &Option<Cgroup>,
    stderr_path: &Path,
    timeout: Duration,
) -> Result<(SocketAddr, u32), StartError> {
    let deadline = Instant::now() + timeout;
    loop {
        let ready = match launch {
            Launch::Builtin(_) => match listening.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    let listening: Listening = line
                        .parse()
                        .map_err(|e| format!("server printed an unreadable listening line: {e}"))?;
                    // Probe the pid the server announces when it is the child or below it
                    // (a wrapper that forked); else the child itself.
                    // On an ssh host the pid is the far side's, and only it knows.
                    let child = guard.pid();
                    let pid = listening
                        .pid
                        .filter(|p| {
                            host.remote() || *p == child || probe::process_tree(child).contains(p)
                        })
                        .unwrap_or(child);
                    Some((listening.addr, pid))
                }
                Err(_) => None,
            },
            Launch::Command { addr, .. } => {
                let ready = host.accepts(*addr).then(|| (*addr, guard.pid()));
                if ready.is_none() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                ready
            }
        };
        if let Some(ready) = ready {
            return Ok(ready);
        }
        if let Some(status) = guard.try_wait() {
            let oom = cgroup
                .as_ref()
                .and_then(|c| c.oom_reason(status.signal() == Some(libc::SIGKILL)));
            return Err(StartError::Failed(oom.unwrap_or_else(|| {
                format!(
                    "{} exited before listening ({status}): {}",
                    launch.describe(),
                    tail(stderr_path)
                )
            })));
        }
        if process::stop_requested() {
            return Err(StartError::Interrupted);
        }
        if Instant::now() >= deadline {
            let stderr = tail(stderr_path);
            let stderr = if stderr.is_empty() {
                "its stderr is empty".to_string()
            } else {
                format!("its stderr ends: {stderr}")
            };
            return Err(StartError::Failed(match launch {
                Launch::Builtin(_) => format!(
                    "server did not print `listening on` within {} s; {stderr}",
                    trim_float(timeout.as_secs_f64())
                ),
                Launch::Command { addr, .. } => format!(
                    "{} did not accept connections on {addr} within {} s; {stderr}",
                    launch.describe(),
                    trim_float(timeout.as_secs_f64())
                ),
            }));
        }
    }
}

/// A containment group for a command server, or None (its process group only, which a
/// process calling setsid leaves) with a warning once per run when cgroups cannot be made.
fn contain_or_warn() -> Option<Cgroup> {
    static WARNED: std::sync::Once = std::sync::Once::new();
    Cgroup::contain()
        .map_err(|e| {
            WARNED.call_once(|| {
                crate::errln!(
                    "warning: command servers are contained by their process group only \
                     (a descendant that calls setsid may outlive its step): {e:#}"
                )
            })
        })
        .ok()
}

/// A command as one line for the *-command.txt files (the echolab binary itself is implied).
pub(super) fn command_line(program: &Path, args: &[String]) -> String {
    if program == Path::new("ip") || program == Path::new("ssh") {
        format!("{} {}\n", program.display(), args.join(" "))
    } else {
        args.join(" ") + "\n"
    }
}
