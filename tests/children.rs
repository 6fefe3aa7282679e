//! Children never outlive their parent: `echolab load --processes 2` killed with SIGKILL (no
//! chance to stop its children itself) leaves no load process behind.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{signal, wait_timeout, Server, BIN};

/// The pids of the live (not zombie) processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(state, ppid)| state != 'Z' && ppid == parent))
        .collect()
}

/// (state, ppid) from /proc/PID/stat.
fn stat(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields follow the last ')'.
    let mut fields = text[text.rfind(')')? + 2..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Whether `pid` is still the load child started for `target` (and not a zombie).
fn still_running(pid: u32, target: &str) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline);
    stat(pid).is_some_and(|(state, _)| state != 'Z')
        && cmdline.contains("load")
        && cmdline.contains(target)
}

#[test]
fn load_processes_killed_leave_no_child_behind() {
    let _heavy = common::heavy();
    let server = Server::start("epoll", &[]);
    let target = server.addr.to_string();
    let out = tempfile::tempdir().unwrap();
    let mut load = Command::new(BIN)
        .args(["load", "--target", &target, "--processes", "2"])
        .args(["--connections", "4", "--duration", "60s", "--quiet"])
        .arg("--out")
        .arg(out.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let parent = load.id();

    let deadline = Instant::now() + Duration::from_secs(10);
    let mut children = children_of(parent);
    while children.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        children = children_of(parent);
    }
    assert_eq!(children.len(), 2, "load --processes 2 started {children:?}");
    // Let the children get going, past their own start-up.
    std::thread::sleep(Duration::from_millis(500));

    signal(parent as i32, libc::SIGKILL);
    assert!(wait_timeout(&mut load, Duration::from_secs(5)).is_some());

    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left: Vec<u32> = children.clone();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(|&pid| still_running(pid, &target));
    }
    // Do not leave them running for their minute if the check fails.
    for &pid in &left {
        signal(pid as i32, libc::SIGKILL);
    }
    assert_eq!(
        left,
        Vec::<u32>::new(),
        "load children outlived their parent"
    );
    server.stop();
}
