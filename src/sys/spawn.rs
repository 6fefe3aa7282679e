//! Supervised children: every child process echolab starts (servers and load generators for
//! the runner, `serve --processes` and `load --processes` copies) gets PR_SET_PDEATHSIG, so it
//! cannot outlive its parent even when the parent is killed with SIGKILL, and then checks that
//! its parent is still the process that forked it (the parent may have died before the prctl
//! took effect, leaving nobody to send the signal). Optionally the child gets its own process
//! group (so a terminal's Ctrl-C reaches only the parent, and the whole group can be killed)
//! and a CPU set.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// How a child is tied to its parent.
#[derive(Clone, Copy)]
pub struct Supervision {
    death_signal: libc::c_int,
    own_group: bool,
    cpus: Option<libc::cpu_set_t>,
    /// Open `cgroup.procs` files the child writes itself into (at most one per hierarchy).
    cgroups: [libc::c_int; MAX_CGROUP_FILES],
}

/// cgroup v1 hierarchies a child may join at once (cpu, memory, pids) with room to spare.
const MAX_CGROUP_FILES: usize = 4;

impl Supervision {
    /// The child receives `death_signal` when its parent dies: SIGKILL for a child that must
    /// just vanish, SIGTERM for one that should still write its results.
    pub fn new(death_signal: libc::c_int) -> Supervision {
        Supervision {
            death_signal,
            own_group: false,
            cpus: None,
            cgroups: [-1; MAX_CGROUP_FILES],
        }
    }

    /// Moves the child into the cgroups whose open `cgroup.procs` files are `procs`
    /// before it execs, so it is limited from its first instruction.
    pub fn in_cgroups(mut self, procs: &[libc::c_int]) -> Supervision {
        assert!(
            procs.len() <= MAX_CGROUP_FILES,
            "too many cgroup hierarchies"
        );
        self.cgroups[..procs.len()].copy_from_slice(procs);
        self
    }

    /// Puts the child in a process group of its own (its pid is the group id).
    pub fn own_group(mut self) -> Supervision {
        self.own_group = true;
        self
    }

    /// Pins the child to `cpus` when given.
    pub fn pinned(mut self, cpus: Option<libc::cpu_set_t>) -> Supervision {
        self.cpus = cpus;
        self
    }

    /// Starts `command` under this supervision.
    pub fn spawn(self, command: &mut Command) -> io::Result<Child> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let Supervision {
            death_signal,
            own_group,
            cpus,
            cgroups,
        } = self;
        // SAFETY: the closure runs in the forked child before exec and only makes
        // async-signal-safe calls (prctl, getppid, _exit, setpgid, sched_setaffinity) on
        // values copied in before the fork; it allocates nothing. The cgroup fds are
        // open in the parent and stay valid in the child until exec closes them.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    death_signal as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == -1
                {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect: then nothing would stop us.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                if own_group && libc::setpgid(0, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
                // "0" names the writing process, in v1 and v2 alike.
                for fd in cgroups.iter().copied().filter(|fd| *fd >= 0) {
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(set) = &cpus {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == -1
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        command.spawn()
    }
}

/// A CPU set for sched_setaffinity; None when a CPU is not online here (pinning is skipped).
pub fn cpu_set(cpus: &[usize]) -> Option<libc::cpu_set_t> {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus.is_empty() || cpus.iter().any(|&c| c >= online) {
        return None;
    }
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set, and CPU_SET writes
    // inside it for indices below CPU_SETSIZE (checked: c < online <= CPU_SETSIZE).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        Some(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn status_field(pid: u32, field: &str) -> String {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find(|l| l.starts_with(field)).unwrap();
        line[field.len()..].trim().to_string()
    }

    #[test]
    fn the_child_gets_its_death_signal_group_and_cpus() {
        let mut command = Command::new("sleep");
        command.arg("30").stdout(Stdio::null());
        let mut child = Supervision::new(libc::SIGTERM)
            .own_group()
            .pinned(cpu_set(&[0]))
            .spawn(&mut command)
            .unwrap();
        let pid = child.id();
        // The pre_exec hook has run once spawn returns (exec succeeded).
        assert_eq!(status_field(pid, "Cpus_allowed_list:"), "0");
        // SAFETY: getpgid has no memory preconditions.
        let group = unsafe { libc::getpgid(pid as libc::pid_t) };
        assert_eq!(group, pid as libc::pid_t);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(cpu_set(&[100_000]).is_none());
        assert!(cpu_set(&[]).is_none());
    }
}
