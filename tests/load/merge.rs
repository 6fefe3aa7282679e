//! Shards over processes and source addresses, merged exactly; merges refused.

use super::*;

#[test]
fn twenty_five_thousand_connections_over_two_processes_and_source_addresses() {
    let _heavy = common::heavy();
    // 25 000 where one process may hold 20 000 fds (the reference machine); fewer where the
    // hard limit or the port range is smaller: each of the two load processes, each of
    // the two servers and each source address then has at most 4/5 of its limit.
    let (_, fd_hard) = common::fd_limits();
    let by_fds = fd_hard.saturating_sub(1000) * 8 / 5;
    let by_ports = common::ephemeral_ports() * 8 / 5;
    let conns = 25_000u64.min(by_fds).min(by_ports) / 2 * 2;
    let half = conns / 2;
    let port = free_port();
    let ready_a = out_dir("25k-ready-a");
    let ready_b = out_dir("25k-ready-b");
    // Two server processes share the port: one process may hold fewer descriptors.
    let mut servers = [
        spawn_epoll_server(port, &ready_a),
        spawn_epoll_server(port, &ready_b),
    ];
    let dir = out_dir("25k");
    let out = load_within(&[
        "--target",
        &format!("127.0.0.1:{port}"),
        "--connections",
        &conns.to_string(),
        "--processes",
        "2",
        "--source-addrs",
        "127.0.0.2-127.0.0.3",
        "--requests",
        "1",
        // Long enough that the last connection, however slow the connects (a SYN the
        // servers' backlog drops is retried after 1 s, then 3 s), opens before the first closes.
        "--hold",
        "15s",
        "--size",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    for server in &mut servers {
        server.kill().unwrap();
        server.wait().unwrap();
    }
    assert_exit_ok(&out);
    let s = summary(&dir);
    assert_eq!(s.connections_target, conns);
    assert_eq!(s.connections_established, conns);
    assert_eq!(s.max_concurrent, conns);
    assert_eq!(s.requests_completed, conns);
    assert_eq!(s.bytes_verified, conns * 16);
    assert_eq!(s.errors_total, 0);
    assert_eq!(s.processes, 2);
    let rows = connections(&dir);
    assert_eq!(rows.len() as u64, conns);
    let from = |addr: &str| {
        let addr = Some(addr.parse().unwrap());
        rows.iter().filter(|r| r.local_addr == addr).count() as u64
    };
    assert_eq!(from("127.0.0.2"), half);
    assert_eq!(from("127.0.0.3"), half);
    let mut ids: Vec<u64> = rows.iter().map(|r| r.conn_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, conns);
    assert!(dir.join("process-0/summary.json").is_file());
    assert!(dir.join("process-1/summary.json").is_file());
    assert_summary_matches_files(&dir);
}

#[test]
fn shards_merge_exactly() {
    let server = thread_server(Faults::default());
    let target = server.addr.to_string();
    let a = out_dir("shard-a");
    let b = out_dir("shard-b");
    for (shard, dir) in [("0/2", &a), ("1/2", &b)] {
        let out = load_within(&[
            "--target",
            &target,
            "--connections",
            "5",
            "--requests",
            "7",
            "--size",
            "100",
            "--shard",
            shard,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_exit_ok(&out);
    }
    assert_eq!(summary(&a).connections_target, 3);
    assert_eq!(summary(&b).connections_target, 2);
    let merged = out_dir("shard-merged");
    let out = output_within(
        Command::new(BIN)
            .args(["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out"])
            .arg(&merged),
        COMMAND_LIMIT,
    );
    assert_exit_ok(&out);
    let s = summary(&merged);
    assert_eq!(s.connections_target, 5);
    assert_eq!(s.requests_completed, 35);
    assert_eq!(s.bytes_verified, 3_500);
    assert_eq!(s.latency_us.count, 35);
    let ids: Vec<u64> = connections(&merged).iter().map(|r| r.conn_id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    assert_summary_matches_files(&merged);
}

/// `echolab merge` refuses, before writing anything: a directory that does not exist or
/// has no summary.json (usage error, exit 2), a summary.json that does not parse and a
/// part without its timeline.csv (exit 1, naming the file), and --max-error-rate outside
/// 0..1 (exit 2).
#[test]
fn merge_refuses_missing_and_invalid_inputs() {
    let server = thread_server(Faults::default());
    let good = out_dir("merge-good");
    assert_exit_ok(&load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "1",
        "--requests",
        "3",
        "--out",
        good.to_str().unwrap(),
    ]));
    let copy = |name: &str| {
        let dir = out_dir(name);
        std::fs::create_dir_all(&dir).unwrap();
        for file in std::fs::read_dir(&good).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
        }
        dir
    };
    let missing = out_dir("merge-missing");
    let empty = out_dir("merge-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let garbled = copy("merge-garbled");
    std::fs::write(garbled.join("summary.json"), "{\"requests_completed\": ").unwrap();
    let no_timeline = copy("merge-no-timeline");
    std::fs::remove_file(no_timeline.join("timeline.csv")).unwrap();
    let merge = |dirs: &[&Path], extra: &[&str]| {
        let out = out_dir("merge-refused");
        let output = output_within(
            Command::new(BIN)
                .arg("merge")
                .args(dirs)
                .arg("--out")
                .arg(&out)
                .args(extra),
            COMMAND_LIMIT,
        );
        assert!(!out.exists(), "{dirs:?}: wrote {}", out.display());
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    for bad in [&missing, &empty] {
        let (code, stderr) = merge(&[&good, bad], &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{} has no summary.json", bad.display())),
            "{stderr}"
        );
    }
    // An agent directory whose summary cannot be read is refused before anything is
    // written, like the other inputs merge cannot combine (exit 2).
    let (code, stderr) = merge(&[&good, &garbled], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "parsing {}",
            garbled.join("summary.json").display()
        )),
        "{stderr}"
    );
    let (code, stderr) = merge(&[&good, &no_timeline], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("reading {}/timeline.csv", no_timeline.display())),
        "{stderr}"
    );
    let (code, stderr) = merge(&[&good], &["--max-error-rate", "1.5"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--max-error-rate must be between 0 and 1"));
}
