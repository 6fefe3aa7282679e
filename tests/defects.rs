//! One test per defect found by trying echolab as a hostile user would: connections left
//! hanging at the fd limit, a load that passes with nothing echoed, two servers on one
//! port, panics on an unwritable console, unbounded inputs, merges that double-count, and
//! outputs missing or unnamed after a kill or a full disk.

mod common;

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{
    finish_within, heavy, limit_in_child, out_dir, output_within, raise_fd_limit, read_json,
    signal, Server, BIN, COMMAND_LIMIT,
};
use serde_json::Value;

/// Runs `echolab ARGS` to its end (at most [`COMMAND_LIMIT`]) with stdout and stderr
/// captured.
fn echolab(args: &[&str]) -> Output {
    output_within(Command::new(BIN).args(args), COMMAND_LIMIT)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A server that accepts and hands each connection to `serve` on its own thread.
fn fake_server(serve: fn(TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// Reads and never replies, holding the connection until the client closes it.
fn silent(mut stream: TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}

/// Echoes every byte with one bit flipped.
fn corrupting(mut stream: TcpStream) {
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        buf[..n].iter_mut().for_each(|b| *b ^= 0x01);
        if stream.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// Echoes every byte, the first one flipped.
fn corrupting_first_byte(mut stream: TcpStream) {
    let mut buf = [0u8; 4096];
    let mut first = true;
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        if std::mem::take(&mut first) {
            buf[0] ^= 0x01;
        }
        if stream.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// Echoes every byte, one byte every 300 ms: slow, but never silent for a second.
fn trickling(mut stream: TcpStream) {
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        for byte in &buf[..n] {
            std::thread::sleep(Duration::from_millis(300));
            if stream.write_all(std::slice::from_ref(byte)).is_err() {
                return;
            }
        }
    }
}

/// Resets the connection as soon as it is accepted.
fn resetting(stream: TcpStream) {
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
}

#[test]
fn uring_with_two_workers_at_the_fd_limit_answers_or_closes_every_connection() {
    let _guard = heavy();
    raise_fd_limit();
    const CONNECTIONS: usize = 300;
    // The race lost about one round in five before the fix; a fixed round takes a second.
    for round in 0..12 {
        let server = Server::start_with("uring", &["--workers", "2"], |command| {
            limit_in_child(command, libc::RLIMIT_NOFILE, 100)
        });
        let mut streams: Vec<TcpStream> = (0..CONNECTIONS)
            .map(|_| {
                let mut stream = TcpStream::connect(server.addr).unwrap();
                stream.write_all(b"hello").unwrap();
                stream.set_nonblocking(true).unwrap();
                stream
            })
            .collect();
        // Each connection must get its echo or an EOF/reset; a generous bound, not a timing.
        let mut waiting: Vec<usize> = (0..CONNECTIONS).collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !waiting.is_empty() && Instant::now() < deadline {
            waiting.retain(|&i| {
                let mut buf = [0u8; 16];
                match streams[i].read(&mut buf) {
                    Ok(0) => false,
                    Ok(n) => {
                        assert_eq!(&buf[..n], &b"hello"[..n], "connection {i}: wrong echo");
                        false
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => true,
                    Err(_) => false,
                }
            });
            std::thread::sleep(Duration::from_millis(20));
        }
        let hanging = waiting.len();
        drop(streams.drain(..));
        let stopped = server.stop();
        assert_eq!(
            hanging, 0,
            "round {round}: {hanging} of {CONNECTIONS} connections got neither an echo nor a close"
        );
        let summary = &stopped.summary;
        let refused: u64 = summary["refused"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
        assert_eq!(
            common::count(summary, "accepted") + refused,
            CONNECTIONS as u64,
            "round {round}: accepted + refused: {summary}"
        );
    }
}

/// `load` for 1 s against `addr`, with `extra` options; returns its output and summary.
fn load_against(addr: SocketAddr, name: &str, extra: &[&str]) -> (Output, Value) {
    let dir = out_dir(name);
    let target = addr.to_string();
    let mut args = vec![
        "load",
        "--target",
        &target,
        "--connections",
        "2",
        "--duration",
        "1s",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = echolab(&args);
    let summary = read_json(&dir.join("summary.json"));
    let _ = std::fs::remove_dir_all(&dir);
    (out, summary)
}

#[test]
fn a_load_with_nothing_echoed_or_every_echo_wrong_fails() {
    let (out, summary) = load_against(fake_server(silent), "silent", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "silent server: {}",
        stderr(&out)
    );
    assert_eq!(summary["requests_completed"], 0);
    // Each connection's request, still awaited at the end, timed out.
    assert_eq!(summary["errors"]["timeout"], 2, "{summary}");
    assert_eq!(summary["error_rate"], 1.0, "{summary}");

    let (out, summary) = load_against(fake_server(corrupting), "corrupting", &[]);
    assert_eq!(out.status.code(), Some(1), "corrupting: {}", stderr(&out));
    assert!(summary["mismatches"].as_u64().unwrap() > 0, "{summary}");

    let (out, summary) = load_against(fake_server(resetting), "resetting", &[]);
    assert_eq!(out.status.code(), Some(1), "resetting: {}", stderr(&out));
    assert_eq!(summary["requests_completed"], 0);

    // One wrong echo per connection among many good ones: a failure by default, within
    // a stated `--max-error-rate`.
    let (out, summary) = load_against(fake_server(corrupting_first_byte), "one-wrong", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(summary["mismatches"], 2, "{summary}");
    let (out, summary) = load_against(
        fake_server(corrupting_first_byte),
        "tolerated",
        &["--max-error-rate", "0.5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        summary["requests_completed"].as_u64().unwrap() > 2,
        "{summary}"
    );
}

#[test]
fn an_echo_still_arriving_after_the_run_is_awaited_not_a_timeout() {
    // Each 8-byte echo takes 2.4 s, past the 1 s run and the 1 s drain that ended it
    // before: the drain now waits while echo bytes keep coming.
    let (out, summary) = load_against(
        fake_server(trickling),
        "trickling",
        &["--message", "abcdefgh"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary["errors"]["timeout"], 0, "{summary}");
    assert_eq!(summary["requests_completed"], 2, "{summary}");
}

#[test]
fn a_second_server_on_a_port_in_use_exits_1_saying_so() {
    let first = Server::start("epoll", &["--workers", "1"]);
    let addr = first.addr.to_string();
    for model in ["threads", "epoll"] {
        // A server that starts would run until killed: it must exit at once instead.
        let out = echolab(&["serve", "--model", model, "--addr", &addr]);
        assert_eq!(out.status.code(), Some(1), "{model}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("address already in use"),
            "{model}: {}",
            stderr(&out)
        );
    }
    // The first server still has every connection.
    let mut stream = first.connect();
    assert_eq!(common::echo_once(&mut stream, b"mine"), b"mine");
    drop(stream);
    let stopped = first.stop();
    assert_eq!(common::count(&stopped.summary, "accepted"), 1);
}

fn dev_full() -> File {
    File::options().write(true).open("/dev/full").unwrap()
}

#[test]
fn an_unwritable_console_is_not_a_panic() {
    for model in ["threads", "select", "poll", "epoll", "uring", "tokio"] {
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("summary.json");
        let mut child = Command::new(BIN)
            .args(["serve", "--model", model, "--addr", "127.0.0.1:0"])
            .arg("--summary-json")
            .arg(&summary)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(dev_full())
            .spawn()
            .unwrap();
        let mut line = [0u8; 1];
        // The listening line arrives, then the server stops on SIGTERM as usual.
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut line)
            .unwrap();
        signal(child.id() as i32, libc::SIGTERM);
        let what = format!("{model} server after SIGTERM");
        let status = finish_within(child, &what, Duration::from_secs(30)).status;
        assert_eq!(status.code(), Some(0), "{model} with stderr on /dev/full");
        assert!(
            summary.is_file(),
            "{model}: the summary file is still written"
        );
    }

    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    let load = Command::new(BIN)
        .args(["load", "--target", &target, "--requests", "5", "--quiet"])
        .stdout(dev_full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(load, "echolab load >/dev/full", COMMAND_LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "load >/dev/full: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("cannot write to stdout"),
        "{}",
        stderr(&out)
    );

    let results = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(results.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let report = Command::new(BIN)
        .arg("report")
        .arg(results.path().join("results-small"))
        .stdout(dev_full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(report, "echolab report >/dev/full", COMMAND_LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "report >/dev/full: {}",
        stderr(&out)
    );
}

#[test]
fn out_of_bounds_inputs_are_usage_errors() {
    let target = "127.0.0.1:9";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let two_days_ahead = (now + 2 * 86_400).to_string();
    let cases: [&[&str]; 6] = [
        &["--start-at", "1e30"],
        &["--start-at", "1e19"],
        &["--start-at", &two_days_ahead],
        &["--payload-file", "/dev/zero"],
        &["--hold", "6000000h", "--requests", "0"],
        &["--delay", "6000000h"],
    ];
    for extra in cases {
        let mut args = vec!["load", "--target", target];
        args.extend_from_slice(extra);
        let out = echolab(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: "),
            "{extra:?}: {}",
            stderr(&out)
        );
    }

    // --summary-json that cannot be written fails at start, before listening.
    let dir = tempfile::tempdir().unwrap();
    let out = echolab(&[
        "serve",
        "--model",
        "epoll",
        "--addr",
        "127.0.0.1:0",
        "--summary-json",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "it must not start listening");
    assert!(
        stderr(&out).contains(dir.path().to_str().unwrap()),
        "{}",
        stderr(&out)
    );
}

/// A load result directory for shard `shard` with `size`-byte messages.
fn shard_dir(server: SocketAddr, name: &str, shard: &str, size: &str) -> PathBuf {
    let dir = out_dir(name);
    let target = server.to_string();
    let out = echolab(&[
        "load",
        "--target",
        &target,
        "--connections",
        "4",
        "--requests",
        "3",
        "--size",
        size,
        "--shard",
        shard,
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

#[test]
fn merge_refuses_what_would_double_count_or_mix() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "merge-a", "0/2", "64");
    let b = shard_dir(server.addr, "merge-b", "1/2", "64");
    let overlapping = shard_dir(server.addr, "merge-overlap", "1/3", "64");
    let other_size = shard_dir(server.addr, "merge-size", "1/2", "128");
    let open_loop = out_dir("merge-open");
    let out = echolab(&[
        "load",
        "--target",
        &server.addr.to_string(),
        "--connections",
        "4",
        "--duration",
        "1s",
        "--rate",
        "20",
        "--size",
        "64",
        "--shard",
        "1/2",
        "--quiet",
        "--out",
        open_loop.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = out_dir("merge-out");
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let refused: [(&str, Vec<String>, &PathBuf); 5] = [
        ("twice", vec![path(&a), path(&a)], &merged),
        ("overlapping", vec![path(&a), path(&overlapping)], &merged),
        ("sizes", vec![path(&a), path(&other_size)], &merged),
        ("modes", vec![path(&a), path(&open_loop)], &merged),
        ("out is an input", vec![path(&a), path(&b)], &a),
    ];
    let summary_a = std::fs::read(a.join("summary.json")).unwrap();
    for (case, dirs, out_dir) in refused {
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(dirs.iter().map(String::as_str));
        let out_dir = path(out_dir);
        args.extend(["--out", &out_dir]);
        let out = echolab(&args);
        assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
        assert!(stderr(&out).contains("error: "), "{case}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(a.join("summary.json")).unwrap(), summary_a);
    assert!(!merged.exists(), "a refused merge writes nothing");
    let out = echolab(&["merge", &path(&a), &path(&b), "--out", &path(&merged)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read_json(&merged.join("summary.json"))["requests_completed"],
        12
    );
    for dir in [a, b, overlapping, other_size, open_loop, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_load_killed_at_once_leaves_a_summary_saying_it_is_incomplete() {
    let addr = fake_server(silent);
    let dir = out_dir("killed");
    let target = addr.to_string();
    let mut child = Command::new(BIN)
        .args(["load", "--target", &target, "--duration", "30s", "--quiet"])
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as its outputs exist: well inside its first second.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dir.join("connections.csv").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let summary = read_json(&dir.join("summary.json"));
    assert_eq!(summary["complete"], false, "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_disk_is_reported_with_the_file_it_hit() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let dir = out_dir("full");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("connections.csv")).unwrap();
    let target = server.addr.to_string();
    let out = echolab(&[
        "load",
        "--target",
        &target,
        "--requests",
        "2",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("No space left on device"), "{text}");
    assert!(
        text.contains(&dir.join("connections.csv").display().to_string()),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_processes_removes_what_a_killed_parent_left_in_tmp() {
    // A PID that ran and is gone: its echolab-processes directory is a leftover.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let stale = std::env::temp_dir().join(format!("echolab-processes-{pid}"));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("summary-0.json"), "{}").unwrap();
    let server = Server::start("epoll", &["--processes", "2", "--workers", "1"]);
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{}", stopped.stderr);
    assert!(!stale.exists(), "{} is still there", stale.display());
}

/// A one-step scenario of epoll, 300 ms, named by the TOML string `name` (quoted).
fn short_scenario(dir: &Path, name: &str) -> PathBuf {
    common::write_scenario(
        dir,
        &format!(
            "name = {name}\nmodels = [\"epoll\"]\n[load]\nconnections = 2\nsize = 64\n\
             duration = \"300ms\"\n"
        ),
    )
}

/// `run --out DIR` over a directory an earlier run wrote is refused (exit 2, the old
/// results untouched) unless `--force`, which removes the old run's files first.
#[test]
fn run_out_over_an_earlier_run_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = short_scenario(tmp.path(), "\"twice\"");
    let out = tmp.path().join("out");
    common::run_scenario_ok(&scenario, &out, common::QUIET_NO_REPORT);
    let first = std::fs::read_to_string(out.join("results.csv")).unwrap();
    // A file only the earlier run has (an old report): it must not survive --force.
    std::fs::write(out.join("report.html"), "old report").unwrap();
    let again = common::run_scenario(&scenario, &out, common::QUIET_NO_REPORT);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        first
    );
    let forced = [common::QUIET_NO_REPORT, &["--force"]].concat();
    common::run_scenario_ok(&scenario, &out, &forced);
    assert!(
        !out.join("report.html").exists(),
        "the old report survived --force"
    );
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1, "two runs mixed in one results.csv");
}

/// A scenario `name` is one safe path component: `/`, `..`, a leading dot or a control
/// character is refused at the name's line, before any directory is made.
#[test]
fn a_scenario_name_cannot_leave_results() {
    for (name, why) in [
        (r#""../../escaped""#, "path separator"),
        (r#""a/b""#, "path separator"),
        ("\"..\"", "starts with a dot"),
        (r#"".hidden""#, "starts with a dot"),
        (r#""bell\u0007""#, "control character"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let scenario = short_scenario(tmp.path(), name);
        let out = output_within(
            Command::new(BIN)
                .current_dir(tmp.path())
                .arg("run")
                .arg(&scenario)
                .args(common::QUIET_NO_REPORT),
            common::RUN_LIMIT,
        );
        let text = stderr(&out);
        assert!(!out.status.success(), "{name:?} accepted: {text}");
        assert!(
            text.contains("line 1") && text.contains(why),
            "{name:?}: {text}"
        );
        let made: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(made.len(), 1, "{name:?}: the run made {made:?}");
    }
}

/// Usage errors exit 2 everywhere: `serve --workers 0` (it exited 1) and `serve
/// --max-conns 0` (it was accepted, while the scenario key `max_conns = 0` is refused).
#[test]
fn serve_usage_errors_exit_2() {
    for (flag, value) in [("--workers", "0"), ("--max-conns", "0")] {
        let out = echolab(&[
            "serve",
            "--model",
            "epoll",
            "--addr",
            "127.0.0.1:0",
            flag,
            value,
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(flag), "{flag}: {}", stderr(&out));
    }
}

/// `--payload-file` on a FIFO with no writer: open(2) waited for a writer forever,
/// SIGINT or not. Refused at once, a usage error naming what it is.
#[test]
fn a_payload_file_that_is_not_a_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("payload.fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let out = output_within(
        Command::new(BIN).args([
            "load",
            "--target",
            "127.0.0.1:9",
            "--payload-file",
            fifo.to_str().unwrap(),
        ]),
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("not a regular file"), "{text}");
    assert!(text.contains(fifo.to_str().unwrap()), "{text}");
}

/// `--connect-rate 1e-9 -c 2 --duration 1s` reported a completed run with one
/// connection never tried: a rate that cannot open every connection within the
/// duration is a usage error.
#[test]
fn a_connect_rate_too_slow_for_the_duration_is_refused() {
    let out = echolab(&[
        "load",
        "--target",
        "127.0.0.1:9",
        "--connect-rate",
        "1e-9",
        "-c",
        "2",
        "--duration",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("--connect-rate"), "{text}");
    assert!(text.contains("--duration"), "{text}");
}

/// merge took an unsharded directory (every connection id) beside shard 0/2, doubling
/// connection ids, and summed counters past 2^64 - 1 by wrapping: both refused, saying why.
#[test]
fn merge_refuses_an_unsharded_part_among_shards_and_counts_past_u64() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "merge-mix-a", "0/2", "64");
    let b = shard_dir(server.addr, "merge-mix-b", "1/2", "64");
    let whole = out_dir("merge-mix-whole");
    let out = echolab(&[
        "load",
        "--target",
        &server.addr.to_string(),
        "--connections",
        "4",
        "--requests",
        "3",
        "--size",
        "64",
        "--quiet",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = out_dir("merge-mix-out");
    let merge = |dirs: &[&PathBuf]| {
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
        args.extend(["--out", merged.to_str().unwrap()]);
        echolab(&args)
    };
    let out = merge(&[&a, &whole]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a shard"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(whole.to_str().unwrap()),
        "{}",
        stderr(&out)
    );

    let path = b.join("summary.json");
    let mut summary = read_json(&path);
    summary["requests_completed"] = Value::from(u64::MAX);
    std::fs::write(&path, summary.to_string()).unwrap();
    let out = merge(&[&a, &b]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("requests_completed"),
        "{}",
        stderr(&out)
    );
    assert!(!merged.exists(), "a refused merge writes nothing");
    for dir in [a, b, whole] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A copy of the stored results fixture (tests/fixtures/results-small) named `name`.
fn results_fixture(name: &str) -> PathBuf {
    let dir = out_dir(name);
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-small"),
        &dir,
    );
    dir
}

/// `echolab report DIR`, which must succeed; returns report.md.
fn report_md(dir: &Path) -> String {
    let out = echolab(&["report", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::read_to_string(dir.join("report.md")).unwrap()
}

/// `report` rendered negative, NaN and 1e308 cells as figures (a 300-digit latency, "inf
/// MiB"): they are missing values now, and the report says which cells it left out.
#[test]
fn report_shows_impossible_values_as_missing_with_a_note() {
    let dir = results_fixture("report-impossible");
    let path = dir.join("results.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let mut rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in rows.iter_mut().filter(|r| r[0] == "epoll") {
        row[col("p99_us")] = "-5".into();
        row[col("p50_us")] = "NaN".into();
        row[col("max_us")] = "1e308".into();
        row[col("throughput_rps")] = "inf".into();
        row[col("server_rss_per_conn_bytes")] = "1e308".into();
    }
    let mut writer = csv::Writer::from_path(&path).unwrap();
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    let md = report_md(&dir);
    let (notes, figures): (Vec<&str>, Vec<&str>) =
        md.lines().partition(|l| l.contains("not possible"));
    for line in figures {
        for shown in ["inf", "NaN", "1e308", "-5", "00000000000"] {
            assert!(!line.contains(shown), "report.md shows {shown:?}: {line}");
        }
    }
    assert_eq!(
        notes.len(),
        1,
        "no single note on the cells left out: {notes:?}"
    );
    assert!(notes[0].contains("line 32, p99_us"), "{}", notes[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run that recorded no row: the manifest's models are shown as not run rather than
/// left out.
#[test]
fn report_of_a_run_without_rows_names_the_models_not_run() {
    let dir = results_fixture("report-no-rows");
    let path = dir.join("results.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{}\n", text.lines().next().unwrap())).unwrap();
    let md = report_md(&dir);
    let note = md
        .lines()
        .find(|l| l.contains("not run"))
        .unwrap_or_else(|| panic!("no model is said to be not run:\n{md}"));
    for model in ["threads", "select", "poll", "epoll", "uring", "tokio"] {
        assert!(note.contains(model), "{model} missing from: {note}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Step folders gone: the report drew empty timeline charts without a word. It names
/// the folders it looked for and draws no empty timeline.
#[test]
fn report_names_missing_step_folders_and_draws_no_empty_timeline() {
    let dir = results_fixture("report-no-folders");
    for model in ["threads", "select", "poll", "epoll", "uring", "tokio"] {
        std::fs::remove_dir_all(dir.join(model)).unwrap();
    }
    let md = report_md(&dir);
    assert!(
        md.contains(&format!(
            "epoll{0}c4000-s128{0}rep-1",
            std::path::MAIN_SEPARATOR
        )),
        "the missing folder is not named:\n{md}"
    );
    assert!(!md.contains("(first repetition): ."), "{md}");
    assert!(!dir.join("charts/connections-timeline-cpu.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A truncated latency.hlog line was reported as a Rust debug dump (`ParseError { .. }`)
/// without its line: the error names the file and the line.
#[test]
fn a_truncated_hlog_line_is_named_with_its_file_and_line() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "hlog-a", "0/2", "64");
    let b = shard_dir(server.addr, "hlog-b", "1/2", "64");
    let hlog = b.join("latency.hlog");
    let text = std::fs::read_to_string(&hlog).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines.len() - 1;
    assert!(lines[last].contains(','), "{text}");
    // Cut mid-histogram, the line end kept: a whole line, but a damaged one.
    let cut = lines[last].len() - 9;
    lines[last].truncate(cut);
    std::fs::write(&hlog, lines.join("\n") + "\n").unwrap();
    let merged = out_dir("hlog-out");
    let out = echolab(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(&format!("{} line {}", hlog.display(), last + 1)),
        "{text}"
    );
    assert!(!text.contains("{ "), "a debug dump: {text}");
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A server's stderr was copied raw (ESC, NUL) into the terminal, results.csv and the
/// report: its control characters are escaped wherever its words are quoted.
#[test]
fn a_servers_control_characters_are_escaped_where_its_stderr_is_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        "models = [\"noisy\"]\n\
         [model.noisy]\n\
         command = [\"sh\", \"-c\", \"printf 'boom\\\\033[2J\\\\000 \\\\007gone\\\\n' >&2; exit 3\", \"{port}\"]\n\
         [load]\nconnections = 1\nsize = 64\nduration = \"1s\"\n",
    );
    let out = tmp.path().join("out");
    let run = common::run_scenario(&scenario, &out, &[]);
    let rows = common::results_rows(&out);
    assert_eq!(rows.len(), 1, "{}", stderr(&run));
    let reason = &rows[0]["failure_reason"];
    assert!(
        reason.contains("boom\\u{1b}[2J\\0 \\u{7}gone"),
        "{reason:?}"
    );
    let raw = |bytes: &[u8]| bytes.iter().any(|b| matches!(b, 0 | 7 | 0x1b));
    assert!(!raw(&run.stderr), "{:?}", stderr(&run));
    assert!(
        !raw(&run.stdout),
        "{:?}",
        String::from_utf8_lossy(&run.stdout)
    );
    for file in ["results.csv", "report.md", "report.html"] {
        let bytes = std::fs::read(out.join(file)).unwrap();
        assert!(!raw(&bytes), "{file} holds a raw control character");
    }
}

/// `echolab merge A B --out OUT EXTRA...`.
fn merge_two(a: &Path, b: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    echolab(&args)
}

/// `merge` of shards 0/3 and 1/3 exited 0 without a word: a merge missing shards names
/// them and exits 2, and with `--allow-partial` merges with the warning on stderr and in
/// the merged summary.json.
#[test]
fn a_merge_missing_shards_names_them_unless_allowed() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "partial-a", "0/3", "64");
    let b = shard_dir(server.addr, "partial-b", "1/3", "64");
    let merged = out_dir("partial-out");
    let merge = |extra: &[&str]| merge_two(&a, &b, &merged, extra);
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 2/3 is missing") && stderr(&out).contains("--allow-partial"),
        "{}",
        stderr(&out)
    );
    assert!(!merged.exists(), "a refused merge writes nothing");
    let out = merge(&["--allow-partial"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: partial merge: shard 2/3 is missing"),
        "{}",
        stderr(&out)
    );
    let summary = read_json(&merged.join("summary.json"));
    // Of 4 connections, shard 0/3 holds ids 0 and 3, shard 1/3 id 1: three, 3 requests each.
    assert_eq!(summary["requests_completed"], 9, "{summary}");
    assert!(
        summary["warnings"]
            .to_string()
            .contains("partial merge: shard 2/3 is missing"),
        "{summary}"
    );
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A latency.hlog cut off at a line end left only a warning inside summary.json, exit 0:
/// the warning is printed and the merge exits 1, unless `--allow-partial`.
#[test]
fn a_cut_off_latency_log_fails_the_merge_unless_allowed() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "cut-a", "0/2", "64");
    let b = shard_dir(server.addr, "cut-b", "1/2", "64");
    let hlog = b.join("latency.hlog");
    let text = std::fs::read_to_string(&hlog).unwrap();
    // Every interval line of b's histogram gone, its header kept: b's requests unlogged.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('#') || l.starts_with('"'))
        .collect();
    assert!(kept.len() < text.lines().count(), "{text}");
    std::fs::write(&hlog, kept.join("\n") + "\n").unwrap();
    let merged = out_dir("cut-out");
    let merge = |extra: &[&str]| merge_two(&a, &b, &merged, extra);
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("warning: the latency logs hold 6 requests but the summaries count 12"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--allow-partial"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&merged);
    let out = merge(&["--allow-partial"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: the latency logs hold 6"),
        "{}",
        stderr(&out)
    );
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
