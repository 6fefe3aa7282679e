//! Usage errors and the preflight's limits and warnings.

use super::*;

#[test]
fn bad_arguments_exit_2_with_usage() {
    let cases: &[&[&str]] = &[
        &["--target", "127.0.0.1:9", "--connections", "0"],
        &[
            "--target",
            "127.0.0.1:9",
            "--processes",
            "3",
            "--connections",
            "2",
        ],
        &["--target", "127.0.0.1:9", "--size", "0"],
        &["--target", "127.0.0.1:9", "--size", "17MiB"],
        &["--target", "127.0.0.1:9", "--message", "hi", "--size", "10"],
        &[
            "--target",
            "127.0.0.1:9",
            "--source-addrs",
            "127.0.0.9-127.0.0.2",
        ],
        &["--target", "127.0.0.1:9", "--shard", "3/2"],
        &["--target", "127.0.0.1:9", "--pipeline", "0"],
        &["--target", "127.0.0.1:9", "--rate", "0"],
        &["--target", "127.0.0.1:9", "--connections", "many"],
        &["--target", "nowhere"],
        &["--connections", "3"],
        &[
            "--target",
            "127.0.0.1:9",
            "--warmup",
            "1s",
            "--requests",
            "5",
        ],
        &["--target", "127.0.0.1:9", "--warmup", "1s", "--hold", "1s"],
        &["--target", "127.0.0.1:9", "--warmup", "soon"],
    ];
    for args in cases {
        let out = load_within(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        // clap's value errors end with the --help hint; semantic errors add the usage line too.
        assert!(stderr.contains("try '--help'"), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// The counts come from this machine's limits: 2.5 processes' worth of connections needs
/// `--processes 3`; twice the ephemeral port range and one more needs three source
/// addresses.
#[test]
fn preflight_names_the_limit_and_the_way_out() {
    let fd_hard = common::raise_fd_limit();
    let too_many = (fd_hard * 5 / 2).to_string();
    let out = load_within(&["--target", "127.0.0.1:9", "--connections", &too_many]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--processes 3"), "{stderr}");
    let ports = common::ephemeral_ports();
    let connections = 2 * ports + 1;
    let processes = connections.div_ceil(fd_hard / 2).max(2);
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        &connections.to_string(),
        "--processes",
        &processes.to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ip_local_port_range"), "{stderr}");
    assert!(
        stderr.contains("--source-addrs 127.0.0.2-127.0.0.4"),
        "{stderr}"
    );
}

/// Preflight refuses a source address this host does not have (exit 1, no output files),
/// and a run that starts late records it in summary.json's `warnings`: `--start-at` 100 s
/// in the past is 100 s late, give or take the time the process took to start.
#[test]
fn preflight_source_address_and_the_warnings_array() {
    let dir = out_dir("bad-source");
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        "2",
        "--source-addrs",
        "192.0.2.1-192.0.2.2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("source address 192.0.2.1 cannot be bound")
            && stderr.contains("ip addr add 192.0.2.1/32 dev lo"),
        "{stderr}"
    );
    assert!(!dir.join("summary.json").exists());

    let server = thread_server(Faults::default());
    let dir = out_dir("late-start");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let out = load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--requests",
        "2",
        "--start-at",
        &format!("{:.3}", now - 100.0),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert_eq!(s.requests_completed, 2);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let late: f64 = s.warnings[0]
        .strip_prefix("started ")
        .and_then(|w| w.strip_suffix(" s after --start-at"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", s.warnings));
    assert!((100.0..110.0).contains(&late), "{late} s late");
}

/// This machine's MemAvailable in bytes.
fn mem_available() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Preflight refuses a run whose connections (8 KiB each, docs) need more memory than
/// MemAvailable, naming both figures. The run is sized from this machine: twice the
/// connections MemAvailable holds, over enough processes and source addresses that the
/// fd and port checks (made first) pass.
#[test]
fn preflight_refuses_more_connections_than_memory_holds() {
    let fd_hard = common::raise_fd_limit();
    let before = mem_available();
    // A multiple of 128, so 8 KiB each is a whole number of MiB.
    let connections = (before / 8192 * 2).div_ceil(128) * 128;
    let per_process = fd_hard - 64;
    let processes = connections.div_ceil(per_process);
    let sources = connections.div_ceil(common::ephemeral_ports());
    assert!(sources < 65_000, "{sources} source addresses");
    let last = 2 + sources;
    let out = load_within(&[
        "--target",
        "127.0.0.1:9",
        "--connections",
        &connections.to_string(),
        "--processes",
        &processes.to_string(),
        "--source-addrs",
        &format!("127.1.0.2-127.1.{}.{}", last / 256, last % 256),
    ]);
    let after = mem_available();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let need_mib = (connections * 8192) >> 20;
    let prefix = format!(
        "{connections} connections need about {need_mib} MiB of memory (8 KiB each, kernel \
         socket and client state) but only "
    );
    let rest = stderr
        .split_once(&prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {stderr}"))
        .1;
    let available_mib: u64 = rest
        .split_once(" MiB is available (MemAvailable)")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    // MemAvailable moves while other tests run: the figure must be one this machine had.
    let (low, high) = (before.min(after) >> 20, before.max(after) >> 20);
    assert!(
        (low.saturating_sub(512)..=high + 512).contains(&available_mib),
        "{available_mib} MiB available, read {low}..{high} MiB around the run"
    );
    assert!(stderr.contains("--shard I/N"), "{stderr}");
}

/// Connections to a refusing loopback port, opened all at once: the run's warnings.
fn warnings_for(connections: u64, extra: &[&str], name: &str) -> Vec<String> {
    let (_port, addr) = refusing_port();
    let dir = out_dir(name);
    let connections = connections.to_string();
    let mut args = vec![
        "--target",
        &addr.to_string(),
        "--connections",
        &connections,
        "--requests",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]
    .into_iter()
    .map(str::to_string)
    .collect::<Vec<_>>();
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = load_within(&args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = summary(&dir);
    assert_eq!(s.errors.refused, connections.parse::<u64>().unwrap());
    s.warnings
}

/// More loopback connections opened at once than net.core.somaxconn: summary.json's
/// `warnings` says so with both numbers; at somaxconn exactly, or paced with
/// `--connect-rate`, it does not.
#[test]
fn preflight_warns_past_somaxconn() {
    let _heavy = common::heavy();
    let max = somaxconn();
    let (_, fd_hard) = common::fd_limits();
    if max + 1 + 64 > fd_hard || max + 1 > common::ephemeral_ports() {
        common::skip(
            "load::preflight_warns_past_somaxconn",
            &format!("net.core.somaxconn {max} is more connections than one process may open here"),
        );
        return;
    }
    let over = max + 1;
    assert_eq!(
        warnings_for(over, &[], "somaxconn-over"),
        [format!(
            "{over} connections opened at once exceed net.core.somaxconn ({max}): a server on \
             this host may drop SYNs and connects then take a 1 s retransmit; use \
             --connect-rate or sysctl -w net.core.somaxconn=65535"
        )]
    );
    assert_eq!(warnings_for(max, &[], "somaxconn-at"), Vec::<String>::new());
    assert_eq!(
        warnings_for(over, &["--connect-rate", "100000"], "somaxconn-paced"),
        Vec::<String>::new()
    );
}

#[test]
fn the_help_states_the_drain_after_the_duration_as_it_is() {
    // The drain waits while echo bytes keep arriving (1 000 connections of 16 MiB echoes
    // took 19.7 s past a 2 s duration), bounded by --response-timeout: "one more second"
    // promised what the load never did.
    let out = Command::new(common::BIN)
        .args(["load", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("one more second"), "{help}");
    assert!(
        help.contains(
            "echo byte came for twice the slowest echo (at least 1 s), at most --response-timeout"
        ) || help.contains("twice the slowest echo (at least 1 s), at most"),
        "{help}"
    );
}
