//! Children never outlive their parent: `echolab load --processes 2` killed with SIGKILL (no
//! chance to stop its children itself) leaves no load process behind; a command server's
//! daemon left by a runner killed with SIGKILL is ended by the next run; `remote run` takes
//! its whole tree along, setsid or not.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    alive, children, cmdline, descendants, output_within, run_scenario, signal, skip, wait_timeout,
    write_scenario, Server, BIN, COMMAND_LIMIT, QUIET_NO_REPORT,
};

/// Whether `pid` is still the load child started for `target` (and not a zombie).
fn still_running(pid: u32, target: &str) -> bool {
    let cmdline = cmdline(pid);
    alive(pid) && cmdline.contains("load") && cmdline.contains(target)
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
    let mut started = children(parent);
    while started.len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        started = children(parent);
    }
    assert_eq!(started.len(), 2, "load --processes 2 started {started:?}");
    // Wait until both children run the load generator: PR_SET_PDEATHSIG is set before
    // their exec, so from then on their parent's death ends them.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !started.iter().all(|&pid| still_running(pid, &target)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        started.iter().all(|&pid| still_running(pid, &target)),
        "load children {started:?} never started"
    );

    signal(parent as i32, libc::SIGKILL);
    assert!(wait_timeout(&mut load, Duration::from_secs(5)).is_some());

    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left: Vec<u32> = started.clone();
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

/// Kills a process the test made on every way out, so a failing test leaves no daemon.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if alive(self.0) {
            signal(self.0 as i32, libc::SIGKILL);
        }
    }
}

/// Whether `pid` is gone (or a zombie) within five seconds.
fn gone_soon(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

/// The cgroup directory named `echolab-...` that `pid` is in, from /proc/PID/cgroup
/// (v1 `N:pids:/a/echolab-1-0`, or v2 `0::/a/echolab-1-0`).
fn echolab_group_of(pid: u32) -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        path.rsplit('/')
            .next()?
            .starts_with("echolab-")
            .then_some(())?;
        let controller = controllers.split(',').next().unwrap_or("");
        let mounts = [
            "/sys/fs/cgroup".to_string(),
            "/sys/fs/cgroup/unified".into(),
        ];
        let mut candidates: Vec<std::path::PathBuf> = if controller.is_empty() {
            mounts.iter().map(|m| format!("{m}{path}").into()).collect()
        } else {
            vec![format!("/sys/fs/cgroup/{controller}{path}").into()]
        };
        candidates.retain(|c| c.is_dir());
        candidates.pop()
    })
}

/// A command server that double-forks a daemon with setsid, the runner killed with
/// SIGKILL: the daemon lived on with ppid 1 in the leftover group `echolab-PID-0`, and the
/// next run removed neither. The next run kills what is left in the groups of dead runners
/// and removes them, saying so.
#[test]
fn a_killed_runners_daemon_is_ended_by_the_next_run() {
    let test = "a_killed_runners_daemon_is_ended_by_the_next_run";
    if !common::is_root() {
        skip(test, "a command server's cgroup needs root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("daemon.pid");
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 300' & exec {BIN} serve --model epoll \
         --workers 1 --addr 127.0.0.1:$1",
        pid_file.display()
    );
    let scenario = write_scenario(
        tmp.path(),
        &format!(
            "models = [\"daemon\"]\n[model.daemon]\n\
             command = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{port}}\"]\n\
             [load]\nconnections = 1\nsize = 64\nduration = \"60s\"\n"
        ),
    );
    let mut runner = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(&scenario)
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(tmp.path().join("killed"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let (daemon, group) = loop {
        let daemon = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if let Some(group) = daemon.and_then(echolab_group_of) {
            break (daemon.unwrap(), group);
        }
        if Instant::now() > deadline {
            signal(runner.id() as i32, libc::SIGKILL);
            panic!("the daemon never started in an echolab cgroup (pid {daemon:?})");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _daemon = KillOnDrop(daemon);
    assert!(
        group
            .display()
            .to_string()
            .contains(&format!("echolab-{}-", runner.id())),
        "{}",
        group.display()
    );
    signal(runner.id() as i32, libc::SIGKILL);
    assert!(wait_timeout(&mut runner, Duration::from_secs(10)).is_some());
    // What SIGKILL cannot do: the runner had no chance to end its daemon.
    assert!(
        alive(daemon) && group.is_dir(),
        "the daemon died with its runner"
    );

    let next = write_scenario(
        tmp.path(),
        "models = [\"epoll\"]\n[load]\nconnections = 1\nsize = 64\nrequests = 1\n",
    );
    let output = run_scenario(&next, &tmp.path().join("next"), &["--no-report"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("cgroups left by runs that died"))
        .unwrap_or_else(|| panic!("no line on the leftovers: {stderr}"));
    assert!(
        line.contains(&group.display().to_string()) && line.contains("killing the "),
        "{line}"
    );
    assert!(
        gone_soon(daemon),
        "the daemon {daemon} outlived the next run: {stderr}"
    );
    assert!(!group.exists(), "{} left", group.display());
}

/// `remote run -- sh -c 'setsid sleep 321 & sleep 300'`, its stdin closed: the `sleep 321`
/// left the group with setsid and survived. `remote run` is the subreaper of its tree and
/// kills all of it.
#[test]
fn remote_run_takes_its_whole_tree_along() {
    let mut remote = Command::new(BIN)
        .args([
            "remote",
            "run",
            "--",
            "sh",
            "-c",
            "setsid sleep 321 & sleep 300",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let escaped = loop {
        if let Some(p) = descendants(remote.id())
            .into_iter()
            .find(|p| cmdline(*p) == "sleep 321")
        {
            break p;
        }
        if Instant::now() > deadline {
            signal(remote.id() as i32, libc::SIGKILL);
            panic!("sleep 321 never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _escaped = KillOnDrop(escaped);
    drop(remote.stdin.take());
    let status = wait_timeout(&mut remote, Duration::from_secs(10));
    assert!(status.is_some(), "remote run did not end with its stdin");
    assert!(
        gone_soon(escaped),
        "the setsid sleep {escaped} outlived remote run"
    );
}

/// `remote snapshot --pid 999999999` printed the host's busy time and exited 0: a pid
/// that is not there is an error.
#[test]
fn remote_snapshot_of_a_missing_pid_fails() {
    let out = output_within(
        Command::new(BIN).args(["remote", "snapshot", "--pid", "999999999"]),
        COMMAND_LIMIT,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no process 999999999"), "{stderr}");
    assert!(out.stdout.is_empty());
}
