//! Where a process of an experiment runs: this machine, a host of the namespace lab, or
//! a machine reached over ssh. One interface the session uses to start a process there,
//! to reach a server from there, to read the counters of a process and of the host it
//! runs on, and to bring back what it wrote; a new kind of host is one more
//! implementation, and a set of them (the lab, the ssh hosts) one [`Lab`].
//!
//! The room's other modules:
//!
//! - [`hosts`]: network namespaces standing in for a server host and client hosts, and
//!   the shaping of their links (`[network]`).
//! - [`conditions`]: a cgroup of the server's own with its CPU, memory and task caps.
//! - `ssh`: hosts reached with the system `ssh`: checked, placed on, brought back from.
//! - [`remote`]: `echolab remote`, what the runner starts on an ssh host.
//! - [`process`]: children that never outlive the runner; SIGINT/SIGTERM handling; the
//!   last line of a child's stderr.

pub mod conditions;
pub mod hosts;
pub mod process;
pub mod remote;
pub(crate) mod ssh;

use std::fs::File;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::experiment::measurement::cost::{self, KernelSnapshot};
use crate::experiment::measurement::netstat::{self, NetCounters, Timeline};
use crate::experiment::measurement::probe::{self, Probe, Sample};
use crate::experiment::measurement::request_cost::Counting;
use crate::experiment::placement::hosts::Host;

/// A place processes run: how to start one there, and how to read what it and its host
/// count. The readers default to this machine's /proc, which also sees the processes
/// of its namespaces (by pid, in the namespace each one is in).
pub trait Placement {
    /// The address a server there binds to.
    fn ip(&self) -> IpAddr;

    /// `program args` as the command that runs them there.
    fn command(&self, program: &Path, args: Vec<String>) -> (PathBuf, Vec<String>);

    /// Whether `addr` accepts a TCP connection made from there.
    fn accepts(&self, addr: SocketAddr) -> bool;

    /// How messages name it: `c2 (198.18.0.12)`.
    fn label(&self) -> String {
        self.ip().to_string()
    }

    /// The host's own name where it has one apart from its address (an ssh URL).
    fn host_name(&self) -> Option<String> {
        None
    }

    /// The address a server sees its connections come from, for the per-host table.
    fn source_addr(&self) -> String {
        self.ip().to_string()
    }

    /// One CPU and memory sample of process `pid` (and its descendants) at `t_s`.
    fn sample(&self, pid: u32, t_s: f64) -> Option<Sample> {
        probe::sample(pid, t_s)
    }

    /// Samples process `pid` every `interval` into the CSV at `path` until finished.
    fn probe(&self, pid: u32, interval: Duration, path: &Path) -> Option<Box<dyn Observer>> {
        Probe::start(pid, interval, path)
            .ok()
            .map(|p| Box::new(p) as Box<dyn Observer>)
    }

    /// Whether processes there are reached through a session (ssh): their pids are the
    /// far side's, and signals go through [`crate::experiment::placement::process::spawn_relayed`].
    fn remote(&self) -> bool {
        false
    }

    /// Copies what processes there wrote under the results directory `dir` back into
    /// it (nothing to do where the results directory is this machine's).
    fn bring_back(&self, _dir: &Path) -> Result<(), String> {
        Ok(())
    }

    /// Writes the TCP counters of `pid`'s network namespace each second to `path`.
    fn net_timeline(&self, pid: u32, path: &Path) -> Option<Timeline> {
        Timeline::start(pid, path).ok()
    }

    /// The TCP counters of the network namespace process `pid` is in.
    fn net(&self, pid: u32) -> Option<NetCounters> {
        netstat::read(pid)
    }

    /// The kernel's socket and slab memory as `pid` sees it.
    fn kernel(&self, pid: u32) -> Option<KernelSnapshot> {
        cost::read_kernel(pid)
    }

    /// The host's CPU time spent busy, all cores together, in seconds.
    fn machine_busy_s(&self) -> Option<f64> {
        probe::machine_busy_s()
    }

    /// Counts the context switches (and system calls) of process `pid` from now.
    fn count_calls(&self, pid: u32) -> Option<Counting> {
        Counting::start(pid).ok()
    }
}

/// A probe of a server's CPU and memory, wherever it runs.
pub trait Observer {
    /// Seconds since it started (the t_s of a sample taken now).
    fn elapsed(&self) -> f64;
    /// Stops sampling: every sample taken, and why the samples' file could not be
    /// written whole (its file named), if it could not.
    fn finish(self: Box<Self>) -> (Vec<Sample>, Option<String>);
}

impl Observer for Probe {
    fn elapsed(&self) -> f64 {
        Probe::elapsed(self)
    }

    fn finish(self: Box<Self>) -> (Vec<Sample>, Option<String>) {
        Probe::finish_checked(*self)
    }
}

/// A set of hosts a run places its server and load on: the namespace lab, or machines
/// reached over ssh.
pub trait Lab {
    fn server(&self) -> &dyn Placement;
    fn clients(&self) -> Vec<&dyn Placement>;

    /// The counters of the server's own shaped link, as text; None when it is not shaped.
    fn server_link_counters(&self) -> Option<String> {
        None
    }
}

impl Lab for crate::experiment::placement::hosts::Hosts {
    fn server(&self) -> &dyn Placement {
        crate::experiment::placement::hosts::Hosts::server(self)
    }

    fn clients(&self) -> Vec<&dyn Placement> {
        crate::experiment::placement::hosts::Hosts::clients(self)
            .iter()
            .map(|h| h as &dyn Placement)
            .collect()
    }

    fn server_link_counters(&self) -> Option<String> {
        crate::experiment::placement::hosts::Hosts::server_link_counters(self)
    }
}

/// The machine the runner runs on, on its loopback.
pub struct ThisMachine;

impl Placement for ThisMachine {
    fn ip(&self) -> IpAddr {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    }

    fn command(&self, program: &Path, args: Vec<String>) -> (PathBuf, Vec<String>) {
        (program.to_path_buf(), args)
    }

    fn accepts(&self, addr: SocketAddr) -> bool {
        connects(addr)
    }
}

/// A host of the namespace lab: `ip netns exec` runs a command in it.
impl Placement for Host {
    fn ip(&self) -> IpAddr {
        IpAddr::V4(self.addr)
    }

    fn command(&self, program: &Path, args: Vec<String>) -> (PathBuf, Vec<String>) {
        (
            PathBuf::from("ip"),
            self.exec_args(&program.display().to_string(), &args),
        )
    }

    /// Tried from a thread of its own that joins the host's network namespace, so the
    /// runner stays outside.
    fn label(&self) -> String {
        let short = &self.namespace[self.namespace.rfind('-').map_or(0, |p| p + 1)..];
        format!("{short} ({})", self.addr)
    }

    fn accepts(&self, addr: SocketAddr) -> bool {
        let path = format!("/run/netns/{}", self.namespace);
        std::thread::spawn(move || {
            let Ok(ns) = File::open(path) else {
                return false;
            };
            // SAFETY: setns on an open namespace fd; it changes only this thread's network
            // namespace, and the thread ends right after the connection attempt.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return false;
            }
            connects(addr)
        })
        .join()
        .unwrap_or(false)
    }
}

pub(super) fn connects(addr: SocketAddr) -> bool {
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}
