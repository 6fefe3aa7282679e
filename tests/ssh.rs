//! `[hosts]` over ssh, for real: a namespace lab whose every host runs Debian's
//! OpenSSH server (`/usr/sbin/sshd`, in inetd mode: the test's ssh_config reaches a
//! host with `ProxyCommand ip netns exec NS sshd -i`, so each connection is an sshd in
//! that host's namespace), a key pair and host key made for the test, and the system
//! `ssh` client driven by `echolab run` through `ECHOLAB_SSH_CONFIG`.
//!
//! Root, iproute2 and openssh-server are needed (CI has them: .ci/run installs
//! openssh-server); elsewhere these are skipped visibly (common::skip).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::BIN;

const SSHD: &str = "/usr/sbin/sshd";

/// Runs a command that must succeed; its stderr in the panic otherwise.
fn must(command: &mut Command) -> String {
    let out = command.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ip(args: &[&str]) {
    must(Command::new("ip").args(args));
}

/// A server host `srv` (198.18.0.1) and client hosts `c1`.. (198.18.0.11..) as
/// namespaces on a bridge, each reachable over ssh as its name; removed on drop.
struct SshLab {
    prefix: String,
    names: Vec<String>,
    dir: tempfile::TempDir,
}

impl SshLab {
    /// None (a visible skip) where the lab cannot be made.
    fn new(test: &str, tag: &str, clients: usize) -> Option<SshLab> {
        if !common::netns_available(test) {
            return None;
        }
        if !Path::new(SSHD).exists() || Command::new("ssh").arg("-V").output().is_err() {
            common::skip(test, "needs openssh-server (/usr/sbin/sshd) and ssh");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let prefix = format!("essh{}{tag}-", std::process::id());
        let mut names = vec!["srv".to_string()];
        names.extend((1..=clients).map(|i| format!("c{i}")));
        let lab = SshLab { prefix, names, dir };
        lab.build();
        lab.keys();
        Some(lab)
    }

    fn ns(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    fn build(&self) {
        let br = self.ns("br");
        ip(&["netns", "add", &br]);
        ip(&["-n", &br, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &br, "link", "set", "br0", "up"]);
        for (i, name) in self.names.iter().enumerate() {
            let ns = self.ns(name);
            let addr = if i == 0 {
                "198.18.0.1/16".to_string()
            } else {
                format!("198.18.0.{}/16", 10 + i)
            };
            ip(&["netns", "add", &ns]);
            ip(&[
                "-n", &br, "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns",
                &ns,
            ]);
            ip(&["-n", &br, "link", "set", name, "master", "br0", "up"]);
            ip(&["-n", &ns, "addr", "add", &addr, "dev", "eth0"]);
            ip(&["-n", &ns, "link", "set", "eth0", "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The client key, the hosts' key, sshd's config and the client's ssh_config.
    fn keys(&self) {
        for key in ["id", "host"] {
            must(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                    .arg(self.path(key)),
            );
        }
        fs::copy(self.path("id.pub"), self.path("authorized_keys")).unwrap();
        let host_key = fs::read_to_string(self.path("host.pub")).unwrap();
        let mut aliases = self.names.clone();
        aliases.push("gone".into());
        fs::write(
            self.path("known_hosts"),
            format!("{} {}", aliases.join(","), host_key),
        )
        .unwrap();
        // sshd's privilege separation directory, as the package's service makes it.
        fs::create_dir_all("/run/sshd").unwrap();
        let bin = Path::new(BIN).parent().unwrap().display().to_string();
        fs::write(
            self.path("sshd_config"),
            format!(
                "HostKey {host}\nAuthorizedKeysFile {keys}\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nPidFile none\nLogLevel ERROR\n\
                 SetEnv PATH={bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin TMPDIR={tmp}\n",
                host = self.path("host").display(),
                keys = self.path("authorized_keys").display(),
                tmp = self.dir.path().display(),
            ),
        )
        .unwrap();
        let mut config = String::new();
        // A host is reachable while its `down` file does not exist: its sshd "stopped".
        for name in &self.names {
            config += &format!(
                "Host {name}\n  ProxyCommand sh -c 'test ! -e {down} && exec ip netns exec {ns} {SSHD} -i -f {cfg}'\n",
                down = self.path(&format!("down-{name}")).display(),
                ns = self.ns(name),
                cfg = self.path("sshd_config").display(),
            );
        }
        config += "Host gone\n  ProxyCommand sh -c 'exit 1'\n";
        config += &format!(
            "Host *\n  User root\n  IdentityFile {id}\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n",
            id = self.path("id").display(),
            known = self.path("known_hosts").display(),
        );
        fs::write(self.path("ssh_config"), config).unwrap();
    }

    /// `[hosts]` naming the server and `clients` client hosts over ssh.
    fn hosts_table(&self, clients: &[&str]) -> String {
        let urls: Vec<String> = clients.iter().map(|c| format!("\"ssh://{c}\"")).collect();
        format!(
            "[hosts]\nserver = \"ssh://srv\"\nclients = [{}]\nserver_addr = \"198.18.0.1\"\n",
            urls.join(", ")
        )
    }

    /// `echolab run SCENARIO --out OUT EXTRA` with the lab's ssh_config, to its end.
    fn run(&self, scenario: &Path, out: &Path, extra: &[&str]) -> Output {
        let mut command = Command::new(BIN);
        command
            .arg("run")
            .arg(scenario)
            .arg("--out")
            .arg(out)
            .args(extra)
            .env("ECHOLAB_SSH_CONFIG", self.path("ssh_config"));
        common::output_within(&mut command, common::RUN_LIMIT)
    }

    /// The pids of processes named `comm` in host `name`'s namespace.
    fn pids(&self, name: &str, comm: &str) -> Vec<u32> {
        let out = Command::new("ip")
            .args(["netns", "pids", &self.ns(name)])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter(|p| {
                fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == comm)
            })
            .collect()
    }

    /// How many TCP connections host `name` has established (sshd speaks over the
    /// ProxyCommand's pipes, so these are the load's).
    fn established(&self, name: &str) -> usize {
        must(Command::new("ip").args([
            "netns",
            "exec",
            &self.ns(name),
            "ss",
            "-H",
            "-t",
            "-n",
            "state",
            "established",
        ]))
        .lines()
        .count()
    }

    /// Every echolab process left on any host.
    fn echolab_left(&self) -> Vec<(String, u32)> {
        self.names
            .iter()
            .flat_map(|n| {
                self.pids(n, "echolab")
                    .into_iter()
                    .map(move |p| (n.clone(), p))
            })
            .collect()
    }

    /// Stops host `name`'s sshd: new connections refused, every session killed.
    fn stop_sshd(&self, name: &str) {
        fs::write(self.path(&format!("down-{name}")), "").unwrap();
        for pid in self.pids(name, "sshd") {
            // SAFETY: kill has no memory preconditions; pid is an sshd of this test's namespace.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

impl Drop for SshLab {
    fn drop(&mut self) {
        for name in self.names.iter().chain(std::iter::once(&"br".to_string())) {
            let _ = Command::new("ip")
                .args(["netns", "delete", &self.ns(name)])
                .status();
        }
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_scenario_runs_through_ssh_with_every_client_host_in_the_report() {
    let test = "ssh::a_scenario_runs_through_ssh_with_every_client_host_in_the_report";
    let Some(lab) = SshLab::new(test, "a", 3) else {
        return;
    };
    let scenario = common::write_scenario(
        lab.dir.path(),
        &format!(
            "name = \"ssh-test\"\nmodels = [\"epoll\"]\n{}\
             [server]\nworkers = 1\n[load]\nsize = 32\nrequests = 20\nconnect_timeout = \"5s\"\n\
             [sweep]\nconnections = [6]\n",
            lab.hosts_table(&["c1", "c2", "c3"])
        ),
    );
    let out = lab.dir.path().join("out");
    let run = lab.run(&scenario, &out, &[]);
    assert!(run.status.success(), "{}", text(&run));
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let cells: Vec<&str> = [
        "status",
        "failure_reason",
        "connections_established",
        "requests",
        "client_bytes_sent",
        "client_bytes_received",
        "server_bytes_in",
        "server_bytes_out",
        "bytes_match",
        "client_hosts",
    ]
    .iter()
    .map(|c| row[*c].as_str())
    .collect();
    // 6 connections x 20 requests x 32 bytes, counted by the agents and by the server.
    assert_eq!(
        cells,
        ["ok", "", "6", "120", "3840", "3840", "3840", "3840", "true", "3"]
    );
    // The server ran on srv and was probed there; its files came back.
    let step = out.join("epoll").join("c6-s32").join("rep-1");
    let listening = fs::read_to_string(step.join("server-stdout.txt")).unwrap();
    assert!(
        listening.starts_with("listening on 198.18.0.1:"),
        "{listening}"
    );
    let probe = fs::read_to_string(step.join("probe.csv")).unwrap();
    assert!(probe.lines().count() >= 2, "{probe}");
    assert!(step.join("net-timeline.csv").is_file());
    // Each client host connected from its own address, as the server counted them.
    let summary = common::read_json(&step.join("server-summary.json"));
    let mut seen: Vec<(String, u64)> = summary["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["connections"].as_u64().unwrap(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("198.18.0.11".to_string(), 2),
            ("198.18.0.12".to_string(), 2),
            ("198.18.0.13".to_string(), 2)
        ]
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    for (i, host) in ["c1", "c2", "c3"].iter().enumerate() {
        let line = format!(
            "| ssh://{host} (host-{}) | 198.18.0.1{} | 2 | 2 | 40 |",
            i + 1,
            i + 1
        );
        assert!(
            report.contains(&line),
            "{line} not in the per-host table:\n{report}"
        );
    }
    // Nothing of the run is left on any host (processes or run directories), and no
    // key material in the results.
    assert_eq!(lab.echolab_left(), []);
    assert!(
        !fs::read_dir(lab.dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("echolab-run.")),
        "a host's run directory was left"
    );
    let keys = Command::new("grep")
        .args(["-r", "-l", "PRIVATE KEY"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&keys.stdout), "");
}

#[test]
fn a_host_lost_mid_step_fails_the_step_and_leaves_nothing_behind() {
    let test = "ssh::a_host_lost_mid_step_fails_the_step_and_leaves_nothing_behind";
    let Some(lab) = SshLab::new(test, "b", 2) else {
        return;
    };
    let scenario = common::write_scenario(
        lab.dir.path(),
        &format!(
            "name = \"ssh-lost\"\nmodels = [\"epoll\"]\n{}\
             [server]\nworkers = 1\n[load]\nsize = 32\nduration = \"20s\"\nrate = 200\n\
             connect_timeout = \"5s\"\n[sweep]\nconnections = [4]\n",
            lab.hosts_table(&["c1", "c2"])
        ),
    );
    let out = lab.dir.path().join("out");
    let mut command = Command::new(BIN);
    command
        .args(["run", "--no-report", "--quiet"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .env("ECHOLAB_SSH_CONFIG", lab.path("ssh_config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let run = command.spawn().unwrap();
    // The load is running on c2 (its two connections of the four open) when its sshd
    // and every session of it are killed.
    let deadline = Instant::now() + Duration::from_secs(60);
    while lab.pids("c2", "echolab").len() < 2 || lab.established("c2") < 2 {
        assert!(Instant::now() < deadline, "no load running on c2");
        std::thread::sleep(Duration::from_millis(50));
    }
    lab.stop_sshd("c2");
    let killed = Instant::now();
    let output = common::finish_within(run, "the run that lost a host", common::RUN_LIMIT);
    // The step failed with the lost host named, well before its 20 s of load.
    assert!(
        killed.elapsed() < Duration::from_secs(15),
        "the run went on for {:?} after losing c2",
        killed.elapsed()
    );
    // The run itself completes: the failed step is its result.
    assert!(output.status.success(), "{}", text(&output));
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "failed");
    let reason = &rows[0]["failure_reason"];
    assert!(
        reason.contains("ssh://c2") && reason.contains("ssh session"),
        "{reason}"
    );
    // Nothing echolab started is left on any host; only the lost host keeps its run
    // directory (the run could not reach it to remove it), the others' are gone.
    assert_eq!(lab.echolab_left(), []);
    let left: Vec<_> = fs::read_dir(lab.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("echolab-run."))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn an_unreachable_host_is_named_and_nothing_starts() {
    let test = "ssh::an_unreachable_host_is_named_and_nothing_starts";
    let Some(lab) = SshLab::new(test, "c", 1) else {
        return;
    };
    let scenario = common::write_scenario(
        lab.dir.path(),
        &format!(
            "name = \"ssh-gone\"\nmodels = [\"epoll\"]\n{}\
             [load]\nsize = 32\nrequests = 5\n[sweep]\nconnections = [2]\n",
            lab.hosts_table(&["c1", "gone"])
        ),
    );
    let out = lab.dir.path().join("out");
    let started = Instant::now();
    let run = lab.run(&scenario, &out, &["--no-report", "--quiet"]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("ssh://gone: unreachable") && stderr.contains("nothing was started"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("ssh://c1:"),
        "only the failing host is named: {stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    // Nothing ran anywhere: no step folder, no process on the reachable hosts.
    assert!(!out.join("epoll").exists());
    assert_eq!(lab.echolab_left(), []);
}

#[test]
fn the_worked_example_is_refused_clearly_while_its_hosts_are_placeholders() {
    let test = "ssh::the_worked_example_is_refused_clearly_while_its_hosts_are_placeholders";
    if Command::new("ssh").arg("-V").output().is_err() {
        common::skip(test, "needs the ssh client");
        return;
    }
    // The placeholders' domain is reserved (RFC 2606): a config that fails every
    // connection to it stands for an unreachable lab without asking any resolver.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ssh_config");
    fs::write(
        &config,
        "Host *.lab.example\n  ProxyCommand sh -c 'exit 1'\n",
    )
    .unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ssh-lab.toml");
    let out = dir.path().join("out");
    let mut command = Command::new(BIN);
    command
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args(["--no-report", "--quiet"])
        .env("ECHOLAB_SSH_CONFIG", &config);
    let run = common::output_within(&mut command, common::COMMAND_LIMIT);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("ssh hosts not ready, nothing was started"),
        "{stderr}"
    );
    for host in ["server", "client1", "client2", "client3"] {
        let named = format!("ssh://lab@{host}.lab.example: unreachable");
        assert!(stderr.contains(&named), "{named} not in: {stderr}");
    }
    assert!(!out.join("epoll").exists());
}

#[test]
fn ctrl_c_stops_every_hosts_processes() {
    let test = "ssh::ctrl_c_stops_every_hosts_processes";
    let Some(lab) = SshLab::new(test, "d", 2) else {
        return;
    };
    let scenario = common::write_scenario(
        lab.dir.path(),
        &format!(
            "name = \"ssh-interrupted\"\nmodels = [\"epoll\"]\n{}\
             [load]\nsize = 32\nduration = \"30s\"\nrate = 100\n[sweep]\nconnections = [4]\n",
            lab.hosts_table(&["c1", "c2"])
        ),
    );
    let out = lab.dir.path().join("out");
    let run = Command::new(BIN)
        .args(["run", "--no-report", "--quiet"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .env("ECHOLAB_SSH_CONFIG", lab.path("ssh_config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lab.pids("c2", "echolab").len() < 2 || lab.pids("srv", "echolab").len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the step did not start on every host"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill has no memory preconditions; the pid is the run this test started.
    unsafe { libc::kill(run.id() as i32, libc::SIGINT) };
    let stopped = Instant::now();
    let output = common::finish_within(run, "the interrupted run", common::RUN_LIMIT);
    assert!(
        stopped.elapsed() < Duration::from_secs(20),
        "{:?}",
        stopped.elapsed()
    );
    assert_eq!(lab.echolab_left(), [], "{}", text(&output));
    // The agents flushed their partial results, which came back and were merged.
    let step = out.join("epoll").join("c4-s32-r100").join("rep-1");
    for host in ["host-1", "host-2"] {
        assert!(
            step.join("load").join(host).join("summary.json").is_file(),
            "{host}: {}",
            text(&output)
        );
    }
    assert!(
        step.join("server-summary.json").is_file(),
        "{}",
        text(&output)
    );
}
