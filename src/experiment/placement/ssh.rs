//! Real machines as placements: hosts reached with the system `ssh` found on PATH (the
//! user's config, keys and agent; `ECHOLAB_SSH_CONFIG=FILE` adds `-F FILE`).
//!
//! Each host gets one multiplexed master connection (ControlMaster, its socket in a
//! private directory of the runner's) that every command of the run goes through, in
//! BatchMode so nothing ever waits for a password. Before anything starts, every host
//! is checked (reachable, `echolab --version` equal to the runner's or copied there by
//! `--install`, the fd limit the heaviest step needs, a clock within
//! [`CLOCK_TOLERANCE`] of the runner's); one failing host names itself and nothing is
//! started anywhere.
//!
//! Processes there run under `echolab remote run` ([`super::remote`]): in a process
//! group of their own that the end of the ssh session kills, so a lost host or a
//! killed runner leaves nothing running. Results are written under a temporary
//! directory of each host's (`$TMPDIR` there, else /tmp), brought back with `tar` over the master, and removed
//! with it when the run ends.

use std::fs::{self, File};
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;

use super::process::{self, Guard};
use super::remote::{parse_probe_csv, parse_snapshot, Snapshot};
use crate::experiment::measurement::netstat::NetCounters;
use crate::experiment::measurement::probe::Sample;
use crate::experiment::placement::{connects, Lab, Observer, Placement};
use crate::scenario::{Scenario, SshHosts, SshUrl};

/// The clock offset between a host and the runner beyond which agents would not start
/// together at the common `--start-at` (its margin is half a second and more).
pub const CLOCK_TOLERANCE: Duration = Duration::from_millis(200);
/// How long a master connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// A lost host is noticed after this many seconds without an answer (ssh's keepalive).
const ALIVE_INTERVAL_S: u32 = 2;
const ALIVE_COUNT: u32 = 3;

/// Every ssh host of a run, connected and checked; dropping it removes each host's
/// temporary directory and closes the masters.
pub struct SshLab {
    server: SshHost,
    clients: Vec<SshHost>,
    /// The private directory of the control sockets and the masters' stderr.
    dir: PathBuf,
}

/// One host: its master connection and where echolab and the run's files are there.
pub struct SshHost {
    url: SshUrl,
    /// `ssh` options for a command over the master, the destination last.
    base: Vec<String>,
    master: Option<Guard>,
    /// The server's bind address (the data network's `server_addr`), or the address
    /// this client host reaches it from.
    ip: IpAddr,
    source: String,
    /// The echolab program there.
    echolab: String,
    /// The run's temporary directory there (the results directory's stand-in).
    work: String,
    local_root: PathBuf,
    local_exe: PathBuf,
}

/// What the check of a host found.
struct Checked {
    version: String,
    nofile: Option<u64>,
    /// The host's clock less the runner's, and the measurement's half round trip.
    offset_s: f64,
    uncertainty_s: f64,
    source: Option<String>,
}

/// Quotes `text` for a POSIX shell.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The fds the heaviest step needs on the server host and on each client host.
fn fds_needed(scenario: &Scenario, clients: usize) -> (u64, u64) {
    let most = scenario
        .steps
        .iter()
        .map(|s| s.connections)
        .max()
        .unwrap_or(0);
    (most + 64, most.div_ceil(clients.max(1) as u64) + 64)
}

impl SshLab {
    /// Connects to and checks every host of `hosts`; on any failure, an error naming
    /// each failing host, and nothing started anywhere.
    pub fn connect(
        hosts: &SshHosts,
        scenario: &Scenario,
        exe: &Path,
        out: &Path,
    ) -> anyhow::Result<SshLab> {
        let dir = std::env::temp_dir().join(format!(
            "echolab-ssh-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .subsec_nanos()
        ));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let local_root = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
        let host = |i: usize, url: &SshUrl, ip: IpAddr| SshHost {
            base: base_args(url, &dir.join(i.to_string())),
            url: url.clone(),
            master: None,
            ip,
            source: url.host.clone(),
            echolab: "echolab".into(),
            work: String::new(),
            local_root: local_root.clone(),
            local_exe: exe.to_path_buf(),
        };
        let mut lab = SshLab {
            server: host(0, &hosts.server, hosts.server_addr),
            clients: hosts
                .clients
                .iter()
                .enumerate()
                .map(|(i, url)| host(i + 1, url, hosts.server_addr))
                .collect(),
            dir,
        };
        let (server_fds, client_fds) = fds_needed(scenario, hosts.clients.len());
        let server_addr = hosts.server_addr;
        let dir = lab.dir.clone();
        let mut problems = Vec::new();
        // The masters open together: one slow host does not delay the others.
        for (i, host) in lab.hosts_mut().into_iter().enumerate() {
            if let Err(e) = host.open_master(&dir.join(format!("{i}.stderr"))) {
                problems.push(format!("{}: {e}", host.url));
            }
        }
        for (i, host) in lab.hosts_mut().into_iter().enumerate() {
            if host.master.is_none() {
                continue;
            }
            let needed = if i == 0 { server_fds } else { client_fds };
            if let Err(e) = host
                .wait_master(&dir.join(format!("{i}.stderr")))
                .and_then(|()| host.check(server_addr, needed, hosts.install))
            {
                problems.push(format!("{}: {e}", host.url));
            }
        }
        if !problems.is_empty() {
            anyhow::bail!(
                "ssh hosts not ready, nothing was started:\n  {}",
                problems.join("\n  ")
            );
        }
        for host in lab.hosts_mut() {
            host.prepare(hosts.install)
                .map_err(|e| anyhow::anyhow!("{}: {e}", host.url))?;
        }
        Ok(lab)
    }

    fn hosts_mut(&mut self) -> Vec<&mut SshHost> {
        std::iter::once(&mut self.server)
            .chain(self.clients.iter_mut())
            .collect()
    }

    /// One line per host for the run's progress output.
    pub fn describe(&self) -> String {
        let clients: Vec<String> = self.clients.iter().map(|c| c.label()).collect();
        format!(
            "ssh hosts: server {}, clients {}",
            self.server.label(),
            clients.join(", ")
        )
    }
}

impl Lab for SshLab {
    fn server(&self) -> &dyn Placement {
        &self.server
    }

    fn clients(&self) -> Vec<&dyn Placement> {
        self.clients.iter().map(|c| c as &dyn Placement).collect()
    }
}

impl Drop for SshLab {
    fn drop(&mut self) {
        for host in self.hosts_mut() {
            host.close();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `ssh` options for commands over the master at `control`, and the destination.
fn base_args(url: &SshUrl, control: &Path) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(config) = std::env::var_os("ECHOLAB_SSH_CONFIG") {
        args.extend(["-F".to_string(), config.to_string_lossy().into_owned()]);
    }
    for option in [
        "BatchMode=yes".to_string(),
        format!("ControlPath={}", control.display()),
        format!("ServerAliveInterval={ALIVE_INTERVAL_S}"),
        format!("ServerAliveCountMax={ALIVE_COUNT}"),
        format!("ConnectTimeout={}", CONNECT_TIMEOUT.as_secs()),
    ] {
        args.extend(["-o".to_string(), option]);
    }
    args.extend(url.ssh_args());
    args
}

impl SshHost {
    /// `ssh` arguments that run the shell command `command` there over the master.
    fn args_for(&self, command: &str) -> Vec<String> {
        let mut args = vec!["-o".to_string(), "ControlMaster=no".to_string()];
        args.extend(self.base.iter().cloned());
        args.extend(["--".to_string(), command.to_string()]);
        args
    }

    /// Runs `command` there and returns its stdout; the error carries ssh's or the
    /// command's last words.
    fn output(&self, command: &str, stdin: Stdio) -> Result<String, String> {
        let out = Command::new("ssh")
            .args(self.args_for(command))
            .stdin(stdin)
            .output()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr.lines().rev().find(|l| !l.trim().is_empty());
            return Err(format!(
                "`{command}` failed ({}){}",
                out.status,
                why.map_or(String::new(), |w| format!(": {}", w.trim()))
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn open_master(&mut self, stderr: &Path) -> Result<(), String> {
        let mut args = vec![
            "-o".to_string(),
            "ControlMaster=yes".to_string(),
            "-o".to_string(),
            "ControlPersist=no".to_string(),
            "-N".to_string(),
        ];
        args.extend(self.base.iter().cloned());
        let stderr = File::create(stderr).map_err(|e| e.to_string())?;
        let guard = process::spawn(Path::new("ssh"), &args, None, Stdio::null(), stderr.into())
            .map_err(|e| format!("cannot run ssh (the system ssh client must be on PATH): {e}"))?;
        self.master = Some(guard);
        Ok(())
    }

    /// Waits until the master answers, or says why it ended.
    fn wait_master(&mut self, stderr: &Path) -> Result<(), String> {
        let deadline = Instant::now() + CONNECT_TIMEOUT + Duration::from_secs(2);
        loop {
            let mut check = vec!["-O".to_string(), "check".to_string()];
            check.extend(self.base.iter().cloned());
            let ok = Command::new("ssh")
                .args(&check)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(());
            }
            let master = self.master.as_mut().expect("opened");
            if let Some(status) = master.try_wait() {
                self.master = None;
                let why = process::tail(stderr);
                return Err(format!("unreachable ({status}): {why}"));
            }
            if Instant::now() >= deadline {
                self.master = None;
                return Err(format!(
                    "unreachable: no connection within {} s",
                    CONNECT_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Reads the host's echolab version, fd limit, clock and route to the server, and
    /// says what stops the run there.
    fn check(&mut self, server_addr: IpAddr, fds: u64, install: bool) -> Result<(), String> {
        let checked = self.read_facts(server_addr)?;
        // The address it reaches the server from (the server's connections come from
        // there); the host's name when it has no `ip`.
        if let Some(source) = checked.source {
            self.source = source;
        }
        let runner = format!("echolab {}", env!("CARGO_PKG_VERSION"));
        if checked.version != runner && !install {
            let found = if checked.version.is_empty() {
                "no echolab on its PATH".to_string()
            } else {
                format!("{} there", checked.version)
            };
            return Err(format!(
                "{found}, the runner is {runner}: install it there, or run with --install to copy \
                 this binary for the run"
            ));
        }
        if let Some(n) = checked.nofile.filter(|n| *n < fds) {
            return Err(format!(
                "its fd limit (ulimit -Hn) is {n}, below the {fds} the heaviest step needs there"
            ));
        }
        let off = checked.offset_s.abs() - checked.uncertainty_s;
        if off > CLOCK_TOLERANCE.as_secs_f64() {
            return Err(format!(
                "its clock is {:+.3} s from the runner's (± {:.3} s), beyond the {} ms the \
                 agents' common --start-at absorbs: synchronise it (NTP, chrony)",
                checked.offset_s,
                checked.uncertainty_s,
                CLOCK_TOLERANCE.as_millis()
            ));
        }
        Ok(())
    }

    fn read_facts(&self, server_addr: IpAddr) -> Result<Checked, String> {
        let script = format!(
            "printf 'version %s\\n' \"$(echolab --version 2>/dev/null)\"; \
             printf 'nofile %s\\n' \"$(ulimit -Hn)\"; \
             printf 'clock %s\\n' \"$(date +%s.%N)\"; \
             printf 'route %s\\n' \"$(ip -o route get {server_addr} 2>/dev/null | head -n 1)\""
        );
        let before = crate::sys::unix_now();
        let text = self.output(&format!("sh -c {}", quote(&script)), Stdio::null())?;
        let after = crate::sys::unix_now();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .map(str::trim)
                .unwrap_or("")
                .to_string()
        };
        let clock: f64 = field("clock").parse().map_err(|_| {
            format!(
                "cannot read its clock (`date +%s.%N` gave {:?})",
                field("clock")
            )
        })?;
        let route = field("route");
        let source = route
            .split_whitespace()
            .skip_while(|w| *w != "src")
            .nth(1)
            .map(str::to_string);
        Ok(Checked {
            version: field("version"),
            nofile: field("nofile").parse().ok(),
            offset_s: clock - (before + after) / 2.0,
            uncertainty_s: (after - before) / 2.0,
            source,
        })
    }

    /// Makes the run's temporary directory there and, with `install`, copies this
    /// binary into it when the host's echolab differs.
    fn prepare(&mut self, install: bool) -> Result<(), String> {
        let work = self.output(
            "mktemp -d \"${TMPDIR:-/tmp}/echolab-run.XXXXXX\"",
            Stdio::null(),
        )?;
        self.work = work.trim().to_string();
        if !install {
            return Ok(());
        }
        let runner = format!("echolab {}", env!("CARGO_PKG_VERSION"));
        let theirs = self
            .output("echolab --version 2>/dev/null || true", Stdio::null())
            .unwrap_or_default();
        if theirs.trim() == runner {
            return Ok(());
        }
        let target = format!("{}/echolab", self.work);
        let binary = File::open(&self.local_exe).map_err(|e| e.to_string())?;
        self.output(
            &format!("cat > {0} && chmod 755 {0}", quote(&target)),
            binary.into(),
        )?;
        let copied = self.output(&format!("{} --version", quote(&target)), Stdio::null())?;
        if copied.trim() != runner {
            return Err(format!(
                "the copied binary reports {:?}, not {runner}",
                copied.trim()
            ));
        }
        self.echolab = target;
        Ok(())
    }

    /// A results path of this machine as it is there.
    fn remote_path(&self, local: &Path) -> Option<String> {
        let absolute = std::path::absolute(local).ok()?;
        let rel = absolute.strip_prefix(&self.local_root).ok()?;
        Some(if rel.as_os_str().is_empty() {
            self.work.clone()
        } else {
            format!("{}/{}", self.work, rel.display())
        })
    }

    /// An argument with a results path mapped to its place there.
    fn remote_arg(&self, arg: &str) -> String {
        if arg.starts_with('-') {
            return arg.to_string();
        }
        self.remote_path(Path::new(arg))
            .unwrap_or_else(|| arg.to_string())
    }

    fn snapshot(&self, pid: u32, t_s: f64) -> Snapshot {
        let command = format!("{} remote snapshot --pid {pid}", quote(&self.echolab));
        self.output(&command, Stdio::null())
            .map(|text| parse_snapshot(&text, t_s))
            .unwrap_or_default()
    }

    /// Removes the run's directory there and closes the master.
    fn close(&mut self) {
        if self.master.is_some() && !self.work.is_empty() {
            let _ = self.output(&format!("rm -rf {}", quote(&self.work)), Stdio::null());
        }
        if let Some(mut master) = self.master.take() {
            let mut exit = vec!["-O".to_string(), "exit".to_string()];
            exit.extend(self.base.iter().cloned());
            let _ = Command::new("ssh")
                .args(&exit)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            master.wait_timeout(Duration::from_secs(2));
        }
    }
}

impl Placement for SshHost {
    fn ip(&self) -> IpAddr {
        self.ip
    }

    /// `ssh HOST echolab remote run --mkdir DIRS -- PROGRAM ARGS`, the runner's own
    /// binary being the host's echolab and results paths the run's directory there.
    fn command(&self, program: &Path, args: Vec<String>) -> (PathBuf, Vec<String>) {
        let program = if program == self.local_exe {
            self.echolab.clone()
        } else {
            program.display().to_string()
        };
        let mut words = vec![self.echolab.clone(), "remote".into(), "run".into()];
        let mapped: Vec<String> = args.iter().map(|a| self.remote_arg(a)).collect();
        for (arg, remote) in args.iter().zip(&mapped) {
            if arg != remote {
                // The folder of every results path (and an --out folder itself).
                let dir = Path::new(remote).parent().map(|p| p.display().to_string());
                words.extend(["--mkdir".into(), dir.unwrap_or_else(|| remote.clone())]);
            }
        }
        words.push("--".into());
        words.push(program);
        words.extend(mapped);
        let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
        (PathBuf::from("ssh"), self.args_for(&line.join(" ")))
    }

    /// Tried from this machine: a command server on an ssh host must be reachable
    /// from the runner at the data network's address.
    fn accepts(&self, addr: SocketAddr) -> bool {
        connects(addr)
    }

    fn label(&self) -> String {
        format!("{} ({})", self.url, self.source)
    }

    fn source_addr(&self) -> String {
        self.source.clone()
    }

    fn host_name(&self) -> Option<String> {
        Some(self.url.to_string())
    }

    fn remote(&self) -> bool {
        true
    }

    fn sample(&self, pid: u32, t_s: f64) -> Option<Sample> {
        self.snapshot(pid, t_s).sample
    }

    fn probe(&self, pid: u32, _interval: Duration, path: &Path) -> Option<Box<dyn Observer>> {
        let dir = self.remote_path(path.parent()?)?;
        let command = format!(
            "{} remote probe --pid {pid} --out {}",
            quote(&self.echolab),
            quote(&dir)
        );
        let child = Command::new("ssh")
            .args(self.args_for(&command))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        Some(Box::new(RemoteProbe {
            child,
            start: Instant::now(),
            csv: format!("{dir}/probe.csv"),
            local: path.to_path_buf(),
            host: self.args_for(""),
        }))
    }

    /// Written by the remote probe with probe.csv.
    fn net_timeline(
        &self,
        _pid: u32,
        _path: &Path,
    ) -> Option<crate::experiment::measurement::netstat::Timeline> {
        None
    }

    fn net(&self, pid: u32) -> Option<NetCounters> {
        self.snapshot(pid, 0.0).net
    }

    fn kernel(&self, _pid: u32) -> Option<crate::experiment::measurement::cost::KernelSnapshot> {
        None
    }

    fn machine_busy_s(&self) -> Option<f64> {
        // Any pid: the host's busy time is the host's.
        self.snapshot(1, 0.0).busy_s
    }

    fn count_calls(
        &self,
        _pid: u32,
    ) -> Option<crate::experiment::measurement::request_cost::Counting> {
        None
    }

    /// `tar` of the run's directory there for `dir`, unpacked into `dir`.
    fn bring_back(&self, dir: &Path) -> Result<(), String> {
        let Some(remote) = self.remote_path(dir) else {
            return Ok(());
        };
        fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let command = format!("if [ -d {0} ]; then tar -C {0} -cf - .; fi", quote(&remote));
        let mut ssh = Command::new("ssh")
            .args(self.args_for(&command))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: cannot run ssh: {e}", self.url))?;
        let stdout = ssh.stdout.take().expect("piped");
        let unpacked = Command::new("tar")
            .args(["-x", "-f", "-", "-C"])
            .arg(dir)
            .stdin(stdout)
            .stderr(Stdio::null())
            .status();
        let out = ssh.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{}: cannot bring back {}: {}",
                self.url,
                dir.display(),
                stderr.lines().last().unwrap_or("ssh failed").trim()
            ));
        }
        // An empty stream (nothing written there) is no archive: not an error.
        let _ = unpacked;
        Ok(())
    }
}

/// The server's probe on its own host: `echolab remote probe`, ended by closing its
/// stdin, its probe.csv then copied back and read.
struct RemoteProbe {
    child: Child,
    start: Instant,
    csv: String,
    local: PathBuf,
    /// `ssh` arguments to the host, the command last (empty).
    host: Vec<String>,
}

impl Observer for RemoteProbe {
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn finish(mut self: Box<Self>) -> (Vec<Sample>, Option<String>) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut args = self.host.clone();
        args.pop();
        args.push(format!("cat {}", quote(&self.csv)));
        let Ok(out) = Command::new("ssh")
            .args(&args)
            .stdin(Stdio::null())
            .output()
        else {
            return (Vec::new(), None);
        };
        let written = File::create(&self.local).and_then(|mut f| f.write_all(&out.stdout));
        let unwritten = written
            .err()
            .map(|e| format!("cannot write {}: {e}", self.local.display()));
        (
            parse_probe_csv(&String::from_utf8_lossy(&out.stdout)),
            unwritten,
        )
    }
}

impl Drop for RemoteProbe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_once() {
        assert_eq!(
            quote("/tmp/echolab-run.ab12/step-1"),
            "/tmp/echolab-run.ab12/step-1"
        );
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
    }
}
