//! Kernel introspection and limits: /proc/net/tcp queues, a process's fds, rlimits and
//! the ephemeral port range, read rather than assumed.

use std::net::{SocketAddr, TcpStream};
use std::process::Command;

/// Sets `resource` (e.g. RLIMIT_NOFILE) to `value`, soft and hard, in the child
/// `command` starts, before it runs: the server cannot raise it back.
pub fn limit_in_child(command: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Sets the soft RLIMIT_NOFILE of the running process `pid` to `value`, keeping its hard
/// limit (prlimit(2): allowed on one's own child without privilege).
pub fn set_soft_fd_limit(pid: i32, value: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit writes the old limit into the struct we own and sets nothing.
    let read = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, std::ptr::null(), &mut limit) };
    assert_eq!(
        read,
        0,
        "prlimit({pid}): {}",
        std::io::Error::last_os_error()
    );
    limit.rlim_cur = value;
    // SAFETY: prlimit reads the struct we own.
    let set = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) };
    assert_eq!(
        set,
        0,
        "prlimit({pid}, RLIMIT_NOFILE, {value}): {}",
        std::io::Error::last_os_error()
    );
}

/// Connections waiting in the accept queues of the listeners on 127.0.0.1:`port` (the
/// rx_queue of LISTEN sockets in /proc/net/tcp, summed over SO_REUSEPORT listeners),
/// or None if there is no such listener.
pub fn accept_queue_len(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{port:04X}");
    let queues: Vec<u64> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&local.as_str()) || fields.get(3) != Some(&"0A") {
                return None;
            }
            let rx = fields.get(4)?.split(':').nth(1)?;
            u64::from_str_radix(rx, 16).ok()
        })
        .collect();
    (!queues.is_empty()).then(|| queues.iter().sum())
}

/// Open file descriptors of process `pid`.
pub fn fd_count(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

/// The open fds of process `pid`: (number, what it points to, e.g. "/dev/null").
/// RLIMIT_NOFILE caps fd numbers, not their count, so tests that move the limit need these.
pub fn open_fds(pid: i32) -> Vec<(usize, String)> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(|entry| {
                let entry = entry.ok()?;
                let fd = entry.file_name().to_str()?.parse().ok()?;
                let target = std::fs::read_link(entry.path()).ok()?;
                Some((fd, target.display().to_string()))
            })
            .collect()
        })
        .unwrap_or_default()
}

/// RLIMIT_NOFILE of this process as (soft, hard).
pub fn fd_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    (limit.rlim_cur, limit.rlim_max)
}

/// Raises this process's soft fd limit to its hard limit (as echolab does for itself), so
/// the tests that hold thousands of client sockets do not depend on the shell's `ulimit -n`.
/// Returns the new soft limit.
pub fn raise_fd_limit() -> u64 {
    let (soft, hard) = fd_limits();
    if soft < hard {
        let limit = libc::rlimit {
            rlim_cur: hard,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads the struct we own; raising soft up to hard is always allowed.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    }
    hard
}

/// The number of ports in net.ipv4.ip_local_port_range.
pub fn ephemeral_ports() -> u64 {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .expect("read net.ipv4.ip_local_port_range");
    let bounds: Vec<u64> = text
        .split_whitespace()
        .map(|n| n.parse().expect("a port number"))
        .collect();
    bounds[1] - bounds[0] + 1
}

// ---- what the kernel holds for a connection ----

/// (send queue, receive queue) in bytes of the loopback socket `local` -> `remote`, from
/// /proc/net/tcp (tx_queue: bytes written but not yet acknowledged by the peer; rx_queue:
/// bytes received but not yet read).
pub fn socket_queues(local: SocketAddr, remote: SocketAddr) -> (u64, u64) {
    let hex = |addr: SocketAddr| match addr {
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_le_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => panic!("IPv4 only"),
    };
    let (local, remote) = (hex(local), hex(remote));
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(1) == Some(&local.as_str()) && f.get(2) == Some(&remote.as_str()))
        .and_then(|f| {
            let (tx, rx) = f.get(4)?.split_once(':')?;
            Some((
                u64::from_str_radix(tx, 16).ok()?,
                u64::from_str_radix(rx, 16).ok()?,
            ))
        })
        .unwrap_or_else(|| panic!("no socket {local} -> {remote} in /proc/net/tcp"))
}

/// Bytes the server has read from `client` but not yet handed back to the kernel as
/// echo, i.e. what it holds in user space for that connection, when the client has
/// written `sent` bytes and read nothing: what left the client (sent minus its send
/// queue) minus what waits unread in the server's receive queue is what the server
/// read; minus the echo sitting in the server's send queue and the client's receive
/// queue. Counted from the kernel's queues only, never from the server's own figures.
pub fn server_held_bytes(client: &TcpStream, sent: u64) -> u64 {
    let (me, server) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
    let (client_tx, client_rx) = socket_queues(me, server);
    let (server_tx, server_rx) = socket_queues(server, me);
    let read_by_server = sent.saturating_sub(client_tx + server_rx);
    read_by_server.saturating_sub(server_tx + client_rx)
}

// ---- processes, from /proc ----

/// (pid, parent pid) of every live (not zombie) process, from /proc.
fn parent_links() -> Vec<(u32, u32)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (state, ppid) = proc_stat(pid)?;
            (state != 'Z').then_some((pid, ppid))
        })
        .collect()
}

/// The live (not zombie) children of `parent`, whichever of its threads started them.
pub fn children(parent: u32) -> Vec<u32> {
    parent_links()
        .into_iter()
        .filter(|&(_, p)| p == parent)
        .map(|(c, _)| c)
        .collect()
}

/// The live (not zombie) descendants of `root`, found through /proc's parent links.
pub fn descendants(root: u32) -> Vec<u32> {
    let parents = parent_links();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|&&(_, p)| p == parent)
                .map(|&(c, _)| c),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The fields of /proc/PID/stat after the command name: state, ppid, ... (field 3 on of
/// proc(5), so utime and stime are at 11 and 12).
pub fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields follow the last ')'.
    let after = text.get(text.rfind(')')? + 2..)?;
    Some(after.split_whitespace().map(String::from).collect())
}

/// (state, ppid) from /proc/PID/stat.
pub fn proc_stat(pid: u32) -> Option<(char, u32)> {
    let fields = stat_fields(pid)?;
    let state = fields.first()?.chars().next()?;
    Some((state, fields.get(1)?.parse().ok()?))
}

/// Whether `pid` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// How long processes may take to be gone after what should end them: generous, as a
/// loaded 2-core machine can take seconds to reap a tree of servers and load processes.
pub const GONE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The command line of `pid`, its arguments joined by spaces ("" once it is gone).
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// Waits up to [`GONE_WITHIN`] for every one of `pids` to be gone (or a zombie); kills
/// those that are not and fails naming each with its command line.
pub fn assert_all_gone(pids: &[u32], what: &str) {
    let deadline = std::time::Instant::now() + GONE_WITHIN;
    let mut left = pids.to_vec();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        left.retain(|&pid| alive(pid));
    }
    let survivors: Vec<String> = left
        .iter()
        .map(|&p| format!("{p}: {}", cmdline(p)))
        .collect();
    for &pid in &left {
        super::signal(pid as i32, libc::SIGKILL);
    }
    assert!(
        survivors.is_empty(),
        "{what}: processes left behind: {survivors:?}"
    );
}
