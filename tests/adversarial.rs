//! The adversarial suite: every model (and variant) against hostile clients, each case
//! asserting numbers: bytes echoed exactly, server RSS and fds bounded and back to their
//! baseline, every excess connection answered or closed, the summary agreeing with what
//! the clients did. `cargo test --test adversarial -- --ignored table` runs every case
//! on every variant and prints the Markdown table of docs/reliability.md.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// What a case measured, for the table of docs/reliability.md.
#[derive(Debug, Default, Clone)]
pub struct Measured {
    /// Bytes the clients sent and did not get back (on connections the server kept).
    bytes_lost: Option<u64>,
    /// Largest server RSS seen during the case.
    rss_peak: Option<u64>,
    /// Server fds once the clients are gone, minus those before they came.
    fds_after: Option<i64>,
    /// Time from the cause going away (fds freed) to a new connection echoed.
    recovery: Option<Duration>,
}

macro_rules! adversarial {
    ($($name:ident: $model:literal [$($arg:literal),* $(,)?] $(#[$fd_attr:meta])?),* $(,)?) => {$(
        mod $name {
            pub const VARIANT: super::Variant = super::Variant {
                name: stringify!($name),
                model: $model,
                args: &[$($arg),*],
            };
            #[test]
            fn slowloris() {
                super::slowloris(&VARIANT);
            }
            #[test]
            fn pushers() {
                super::pushers(&VARIANT);
            }
            #[test]
            fn reset_storm() {
                super::reset_storm(&VARIANT);
            }
            #[test]
            fn half_close_variants() {
                super::half_close_variants(&VARIANT);
            }
            #[test]
            fn connect_and_never_send() {
                super::connect_and_never_send(&VARIANT);
            }
            #[test]
            fn random_bytes_and_nuls() {
                super::random_bytes_and_nuls(&VARIANT);
            }
            #[test]
            $(#[$fd_attr])?
            fn fd_exhaustion() {
                super::fd_exhaustion(&VARIANT);
            }
            #[test]
            fn signals_at_random_moments() {
                super::signals_at_random_moments(&VARIANT);
            }
            #[test]
            fn open_loop_overload() {
                super::open_loop_overload(&VARIANT);
            }
            #[test]
            fn huge_repetitions() {
                super::huge_repetitions(&VARIANT);
            }
            #[test]
            fn escaping_server() {
                super::escaping_server(&VARIANT);
            }
            #[test]
            fn staircase_killed() {
                super::staircase_killed(&VARIANT);
            }
        }
    )*};
}

// One module per model or variant, as in tests/conformance.rs.
adversarial! {
    threads: "threads" [],
    select: "select" ["--idle-timeout", "1s"],
    poll: "poll" [],
    epoll: "epoll" [],
    epoll_level: "epoll" ["--trigger", "level", "--accept", "reuseport"],
    epoll_exclusive: "epoll" ["--accept", "exclusive"],
    uring: "uring" [],
    tokio: "tokio" [],
}

const VARIANTS: [&Variant; 8] = [
    &threads::VARIANT,
    &select::VARIANT,
    &poll::VARIANT,
    &epoll::VARIANT,
    &epoll_level::VARIANT,
    &epoll_exclusive::VARIANT,
    &uring::VARIANT,
    &tokio::VARIANT,
];

/// The server's fds once it has served one connection and closed it: runtimes that open
/// an fd on first use (tokio's) have it in the baseline.
fn baseline_fds(server: &Server) -> usize {
    let mut first = server.connect();
    assert_eq!(echo_once(&mut first, b"warm"), b"warm");
    expect_eof_after_half_close(&mut first);
    drop(first);
    server.wait_accepted(Duration::from_secs(10));
    fd_count(server.pid())
}

/// The variant's server arguments without `--idle-timeout` and its value.
fn args_without_idle_timeout(variant: &Variant) -> Vec<&'static str> {
    let mut args = Vec::new();
    let mut given = variant.args.iter();
    while let Some(&arg) = given.next() {
        if arg == "--idle-timeout" {
            given.next();
        } else {
            args.push(arg);
        }
    }
    args
}

/// One request and its echo; the time it took.
fn timed_echo(stream: &mut TcpStream, data: &[u8]) -> Duration {
    let start = Instant::now();
    let got = echo_once(stream, data);
    assert_eq!(got, data, "wrong echo");
    start.elapsed()
}

/// Percentile `p` (0..=100) of `samples`, sorted in place.
fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p / 100.0).round() as usize;
    samples[index]
}

/// Sum of the summary's `closed` (or `refused`) reasons.
fn total(summary: &serde_json::Value, group: &str) -> u64 {
    summary[group]
        .as_object()
        .map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum())
}

/// A wide bound on the live clients' p99: slowloris must not starve them, and this
/// machine's 2 shared cores must not fail the test.
const LIVE_P99_BOUND: Duration = Duration::from_millis(500);

/// 2 000 connections trickling one byte every 2 s, and 50 live clients echoing meanwhile:
/// every live echo is exact and their p99 stays under a wide bound. select holds at most
/// FD_SETSIZE connections: it runs with --idle-timeout, refuses the rest as `fd_setsize`
/// and the summary says so.
fn slowloris(variant: &Variant) -> Measured {
    const SLOW: usize = 2000;
    const LIVE: usize = 50;
    const ROUNDS: usize = 3;
    let model = variant.name;
    let _heavy = heavy();
    let server = start(variant, &[]);
    let baseline_fds = baseline_fds(&server) as i64;
    let mut live = connect_many(server.addr, LIVE);
    let slow = connect_many(server.addr, SLOW);
    for s in &slow {
        s.set_nonblocking(true).unwrap();
    }
    let mut rss_peak = server.rss_bytes();
    let mut latencies = Vec::new();
    let message = payload(64, 1);
    for _ in 0..ROUNDS {
        for mut s in &slow {
            let _ = s.write(b"x");
        }
        let round = Instant::now();
        while round.elapsed() < Duration::from_secs(2) {
            for stream in live.iter_mut() {
                latencies.push(timed_echo(stream, &message));
            }
            rss_peak = rss_peak.max(server.rss_bytes());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let p99 = percentile(&mut latencies, 99.0);
    eprintln!(
        "{model}: {} live echoes beside {SLOW} slowloris connections, p99 {p99:?}",
        latencies.len()
    );
    assert!(
        p99 < LIVE_P99_BOUND,
        "{model}: live p99 {p99:?} beside slowloris"
    );
    drop(slow);
    drop(live);
    server.wait_fds(baseline_fds as usize, Duration::from_secs(30));
    let stopped = server.stop();
    let summary = &stopped.summary;
    if variant.model == "select" {
        assert!(
            reason_count(summary, "refused", "fd_setsize") > 0,
            "{model}: past FD_SETSIZE the summary names the refusal: {summary}"
        );
    }
    assert_eq!(
        count(summary, "accepted"),
        (SLOW + LIVE + 1) as u64 - total(summary, "refused"),
        "{model}: {summary}"
    );
    Measured {
        bytes_lost: Some(0),
        rss_peak: Some(rss_peak),
        fds_after: Some(0),
        recovery: None,
    }
}

/// 20 clients push without reading: the server holds at most --max-pending (256 KiB) plus
/// one read each, so its RSS grows by at most a few MiB, and a reader is still served.
/// Without the variant's --idle-timeout: a pusher the server has stopped reading makes no
/// progress and would be closed as idle before a loaded machine gets to look at it.
fn pushers(variant: &Variant) -> Measured {
    const PUSHERS: usize = 20;
    let model = variant.name;
    let _heavy = heavy();
    let server = Server::start(variant.model, &args_without_idle_timeout(variant));
    let mut warm = server.connect();
    let data = payload(MIB, 5);
    assert!(echo_chunked(&mut warm, &data) == data);
    let baseline = server.rss_bytes();
    let hogs = connect_many(server.addr, PUSHERS);
    let sent: Vec<usize> = std::thread::scope(|scope| {
        let pushes: Vec<_> = hogs
            .iter()
            .map(|hog| {
                hog.set_nonblocking(true).unwrap();
                scope.spawn(move || push_without_reading(hog, 64 * MIB, Duration::from_secs(3)))
            })
            .collect();
        pushes.into_iter().map(|p| p.join().unwrap()).collect()
    });
    let rss_peak = server.rss_bytes();
    assert!(
        echo_chunked(&mut warm, &data) == data,
        "{model}: a reader is still served"
    );
    let grown = rss_peak.saturating_sub(baseline);
    // Per pusher: --max-pending plus one 64 KiB read; plus allocator slack.
    let bound = (PUSHERS * (256 + 64) * KIB + 32 * MIB) as u64;
    eprintln!(
        "{model}: {PUSHERS} pushers sent {} MiB in all; RSS grew {} KiB (bound {} KiB)",
        sent.iter().sum::<usize>() / MIB,
        grown / 1024,
        bound / 1024
    );
    assert!(
        grown < bound,
        "{model}: RSS grew {grown} B with {PUSHERS} non-reading pushers"
    );
    for (hog, sent) in hogs.iter().zip(&sent) {
        let held = server_held_bytes(hog, *sent as u64);
        assert!(
            held <= ((256 + 64) * KIB) as u64,
            "{model}: server holds {held} B of one pusher"
        );
    }
    drop(hogs);
    drop(warm);
    let stopped = server.stop();
    assert!(stopped.status.success(), "{model}: {}", stopped.stderr);
    Measured {
        rss_peak: Some(rss_peak),
        ..Measured::default()
    }
}

/// Closes `stream` with a reset (SO_LINGER 0).
fn reset(stream: TcpStream) {
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(stream);
}

/// 10 000 connections, each sends a few bytes and is closed with a reset, in waves of 500:
/// the server's fds come back to their baseline and every accepted connection is closed.
fn reset_storm(variant: &Variant) -> Measured {
    const TOTAL: usize = 10_000;
    const WAVE: usize = 500;
    let model = variant.name;
    let _heavy = heavy();
    let server = start(variant, &[]);
    let baseline_fds = baseline_fds(&server);
    let mut rss_peak = 0;
    for _ in 0..TOTAL / WAVE {
        let wave = connect_many(server.addr, WAVE);
        for mut s in &wave {
            let _ = s.write(b"reset me");
        }
        wave.into_iter().for_each(reset);
        rss_peak = rss_peak.max(server.rss_bytes());
    }
    server.wait_fds(baseline_fds, Duration::from_secs(30));
    // Still serving after the storm.
    let mut after = server.connect();
    assert_eq!(echo_once(&mut after, b"still here"), b"still here");
    drop(after);
    server.wait_fds(baseline_fds, Duration::from_secs(10));
    let fds_after = fd_count(server.pid()) as i64 - baseline_fds as i64;
    let stopped = server.stop();
    let summary = &stopped.summary;
    let accepted = count(summary, "accepted");
    eprintln!("{model}: reset storm of {TOTAL}: {summary}");
    // The kernel may drop a connection reset while it waits in the accept queue, so
    // not every one is seen; each one seen is accepted or refused, and none twice.
    assert!(
        accepted + total(summary, "refused") <= TOTAL as u64 + 2,
        "{model}: more connections than were opened: {summary}"
    );
    assert_eq!(
        accepted,
        total(summary, "closed"),
        "{model}: accepted == closed: {summary}"
    );
    Measured {
        bytes_lost: None,
        rss_peak: Some(rss_peak),
        fds_after: Some(fds_after),
        recovery: None,
    }
}

/// Half-close in three shapes: at once with nothing sent (EOF back), after 1 MiB (all of
/// it back, then EOF), and after a write the client keeps reading slowly (exact bytes).
fn half_close_variants(variant: &Variant) -> Measured {
    let model = variant.name;
    let server = start(variant, &[]);
    let baseline_fds = baseline_fds(&server);
    let mut empty = server.connect();
    expect_eof_after_half_close(&mut empty);

    let data = payload(MIB, 7);
    let mut full = server.connect();
    let mut got = Vec::new();
    std::thread::scope(|scope| {
        let mut writer = full.try_clone().unwrap();
        let data = &data;
        scope.spawn(move || {
            writer.write_all(data).unwrap();
            writer.shutdown(Shutdown::Write).unwrap();
        });
        full.read_to_end(&mut got).unwrap();
    });
    assert!(
        got == data,
        "{model}: {} of {} B back before EOF",
        got.len(),
        data.len()
    );

    let mut slow = server.connect();
    let small = payload(64 * KIB, 8);
    slow.write_all(&small).unwrap();
    slow.shutdown(Shutdown::Write).unwrap();
    let mut back = Vec::new();
    let mut buf = [0u8; 1000];
    loop {
        match slow.read(&mut buf).unwrap() {
            0 => break,
            n => back.extend_from_slice(&buf[..n]),
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        back == small,
        "{model}: slow reader got {} of {} B",
        back.len(),
        small.len()
    );
    drop((empty, full, slow));
    server.wait_fds(baseline_fds, Duration::from_secs(10));
    let stopped = server.stop();
    // The baseline connection's 4 bytes, then the two payloads.
    assert_eq!(
        count(&stopped.summary, "bytes_out"),
        (4 + MIB + 64 * KIB) as u64
    );
    Measured {
        bytes_lost: Some(0),
        fds_after: Some(0),
        ..Measured::default()
    }
}

/// 200 connections that never send: held without cost, and when they go the fds come
/// back; with --idle-timeout the server closes each (EOF) on its own.
fn connect_and_never_send(variant: &Variant) -> Measured {
    const SILENT: usize = 200;
    let model = variant.name;
    let own = variant.args.contains(&"--idle-timeout");
    let server = start(
        variant,
        if own {
            &[]
        } else {
            &["--idle-timeout", "500ms"]
        },
    );
    let baseline_fds = baseline_fds(&server);
    let cpu_before = server.cpu_seconds();
    let silent = connect_many(server.addr, SILENT);
    for mut s in silent {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        expect_server_eof(&mut s);
    }
    let cpu = server.cpu_seconds() - cpu_before;
    server.wait_fds(baseline_fds, Duration::from_secs(10));
    let stopped = server.stop();
    assert_eq!(
        reason_count(&stopped.summary, "closed", "idle_timeout"),
        SILENT as u64,
        "{model}: {}",
        stopped.summary
    );
    assert!(
        cpu < 1.0,
        "{model}: {cpu} CPU s for {SILENT} silent connections"
    );
    Measured {
        fds_after: Some(0),
        ..Measured::default()
    }
}

/// Random bytes, NULs and every byte value, in odd-sized writes: back exactly.
fn random_bytes_and_nuls(variant: &Variant) -> Measured {
    let model = variant.name;
    let server = start(variant, &[]);
    let inputs = [
        vec![0u8; 256 * KIB],
        payload(256 * KIB + 13, 42),
        (0..=255u8).cycle().take(70_001).collect(),
        b"\r\n\0\xff\0\0GET / HTTP/1.1\r\n\r\n".to_vec(),
    ];
    let mut lost = 0;
    for data in &inputs {
        let mut stream = server.connect();
        let got = echo_chunked(&mut stream, data);
        lost += data.len() - got.iter().zip(data).filter(|(a, b)| a == b).count();
        assert!(got == *data, "{model}: wrong echo of {} B", data.len());
        expect_eof_after_half_close(&mut stream);
    }
    let stopped = server.stop();
    let sent: usize = inputs.iter().map(Vec::len).sum();
    assert_eq!(count(&stopped.summary, "bytes_in"), sent as u64);
    Measured {
        bytes_lost: Some(lost as u64),
        ..Measured::default()
    }
}

/// The server under RLIMIT_NOFILE 64: 10 clients served; 150 more each get their echo or a
/// close within 3 s (none left hanging); the server idles meanwhile; once the extra
/// connections go, a new one is served again.
fn fd_exhaustion(variant: &Variant) -> Measured {
    const LIMIT: u64 = 64;
    const HELD: usize = 10;
    const EXTRA: usize = 150;
    let model = variant.name;
    let _heavy = heavy();
    let server = start_with(variant, &["--workers", "2"], |c| {
        limit_in_child(c, libc::RLIMIT_NOFILE, LIMIT)
    });
    let baseline_fds = baseline_fds(&server);
    let message = payload(100, 3);
    let mut held = connect_many(server.addr, HELD);
    for s in held.iter_mut() {
        assert_eq!(echo_once(s, &message), message, "{model}: a held client");
    }
    let mut extra = connect_many(server.addr, EXTRA);
    let (mut echoed, mut closed, mut hanging) = (0, 0, 0);
    for s in extra.iter_mut() {
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        match try_probe(s, &message) {
            Some(Probe::Echoed) => echoed += 1,
            Some(Probe::Closed) => closed += 1,
            None => hanging += 1,
        }
    }
    eprintln!("{model}: at {LIMIT} fds: {echoed} echoed, {closed} closed, {hanging} hanging");
    assert_eq!(
        hanging, 0,
        "{model}: {hanging} connections got neither echo nor close"
    );
    assert!(
        closed > 0,
        "{model}: the fd limit turned no connection away"
    );
    for s in held.iter_mut() {
        assert_eq!(
            echo_once(s, &message),
            message,
            "{model}: held clients still served"
        );
    }
    let cpu_before = server.cpu_seconds();
    std::thread::sleep(Duration::from_secs(1));
    let idle_cpu = server.cpu_seconds() - cpu_before;
    assert!(
        idle_cpu < 0.3,
        "{model}: {idle_cpu} CPU s in 1 s at the fd limit"
    );
    drop(extra);
    let freed = Instant::now();
    let recovery = loop {
        let mut s = server.connect();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        if try_probe(&mut s, &message) == Some(Probe::Echoed) {
            break freed.elapsed();
        }
        assert!(
            freed.elapsed() < Duration::from_secs(10),
            "{model}: no recovery in 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(held);
    server.wait_fds(baseline_fds, Duration::from_secs(10));
    let stopped = server.stop();
    assert!(stopped.status.success(), "{model}: {}", stopped.stderr);
    assert!(reason_count(&stopped.summary, "refused", "fd_limit") > 0 || model == "select");
    Measured {
        recovery: Some(recovery),
        fds_after: Some(0),
        ..Measured::default()
    }
}

/// Like [`probe`], but a read timeout gives None: the connection was left hanging,
/// neither echoed nor closed.
fn try_probe(stream: &mut TcpStream, message: &[u8]) -> Option<Probe> {
    let closed = |e: &std::io::Error| {
        matches!(
            e.raw_os_error(),
            Some(libc::ECONNRESET | libc::EPIPE | libc::ECONNABORTED)
        )
    };
    match stream.write_all(message) {
        Err(e) if closed(&e) => return Some(Probe::Closed),
        other => other.expect("probe write"),
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < message.len() {
        match stream.read(&mut buf) {
            Ok(0) => return Some(Probe::Closed),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if closed(&e) => return Some(Probe::Closed),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None
            }
            Err(e) => panic!("probe read failed: {e}"),
        }
    }
    assert_eq!(got, message, "wrong echo");
    Some(Probe::Echoed)
}

/// A small seeded generator, so the random moments of a failing run can be replayed.
fn moments(seed: u64, n: usize, max: Duration) -> Vec<Duration> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            max.mul_f64((x % 1000) as f64 / 1000.0)
        })
        .collect()
}

/// A running `echolab load` against `addr`, writing into `out`.
fn start_load(addr: std::net::SocketAddr, out: &std::path::Path) -> std::process::Child {
    Command::new(BIN)
        .args(["load", "--target", &addr.to_string(), "--connections", "10"])
        .args(["--size", "256", "--duration", "30s", "--quiet", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The server, then the load, stopped by SIGTERM or SIGKILL at seeded random moments of a
/// running load: SIGTERM leaves a summary that agrees with the log; SIGKILL leaves no
/// process behind; the load's summary.json parses whatever happened to its server.
fn signals_at_random_moments(variant: &Variant) -> Measured {
    let model = variant.name;
    let seed = variant.name.bytes().map(u64::from).sum::<u64>();
    let at = moments(seed, 2, Duration::from_millis(1500));
    for (signal_number, delay) in [(libc::SIGTERM, at[0]), (libc::SIGKILL, at[1])] {
        let dir = tempfile::tempdir().unwrap();
        let server = start(variant, &[]);
        let load = start_load(server.addr, dir.path());
        std::thread::sleep(Duration::from_millis(300) + delay);
        let pid = server.pid();
        signal(pid, signal_number);
        if signal_number == libc::SIGTERM {
            let stopped = server.wait_stopped();
            assert!(
                stopped.status.success(),
                "{model}: SIGTERM after {delay:?}: {}",
                stopped.stderr
            );
            assert_eq!(
                count(&stopped.summary, "accepted"),
                stopped.log.len() as u64
            );
        } else {
            let mut server = server;
            wait_timeout(&mut server.child, Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{model}: SIGKILL did not end the server"));
            let orphans: Vec<_> = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                        s.rsplit(')')
                            .next()
                            .and_then(|r| r.split_whitespace().nth(1))
                            == Some(&pid.to_string())
                    })
                })
                .collect();
            assert!(
                orphans.is_empty(),
                "{model}: children of a killed server remain: {orphans:?}"
            );
        }
        signal(load.id() as i32, libc::SIGINT);
        let what = format!("{model}: load after SIGINT");
        let status = finish_within(load, &what, Duration::from_secs(15)).status;
        let summary = std::fs::read_to_string(dir.path().join("summary.json"))
            .unwrap_or_else(|e| panic!("{model}: load left no summary.json ({status}): {e}"));
        let summary: serde_json::Value = serde_json::from_str(&summary)
            .unwrap_or_else(|e| panic!("{model}: load summary.json does not parse: {e}"));
        assert!(summary.is_object(), "{model}: {summary}");
    }
    Measured::default()
}

/// Waits (at most `limit`) for `child` and returns its exit status and peak RSS in bytes,
/// from the kernel's own account (wait4's ru_maxrss), exact and without sampling.
fn wait_with_peak_rss(child: &mut std::process::Child, limit: Duration) -> (i32, u64) {
    let deadline = Instant::now() + limit;
    let pid = child.id() as i32;
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it and `status` for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -libc::WTERMSIG(status)
            };
            return (code, usage.ru_maxrss as u64 * 1024);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("load {pid} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Peak RSS an overloaded open loop may reach: what a load at capacity costs (buffers,
/// histograms), far below the gigabytes a queue of send times would grow to.
const OPEN_LOOP_RSS_BOUND: u64 = 256 * MIB as u64;

/// `load --rate 1e12` against a healthy server: memory stays bounded (the schedule is
/// arithmetic, the backlog a count), the run ends on time, says how far behind it fell
/// (planned against sent) and exits 1 as docs/outputs.md says for a run that sent under
/// 1 % of what its schedule planned.
fn open_loop_overload(variant: &Variant) -> Measured {
    let model = variant.name;
    let server = start(variant, &[]);
    let dir = tempfile::tempdir().unwrap();
    let mut load = Command::new(BIN)
        .args([
            "load",
            "--target",
            &server.addr.to_string(),
            "--connections",
            "4",
        ])
        .args([
            "--rate",
            "1e12",
            "--duration",
            "2s",
            "--size",
            "64",
            "--quiet",
            "--out",
        ])
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, peak) = wait_with_peak_rss(&mut load, LOAD_LIMIT);
    assert!(
        peak < OPEN_LOOP_RSS_BOUND,
        "{model}: the overloaded load peaked at {} MiB",
        peak / MIB as u64
    );
    let summary = parsed_json(&dir.path().join("summary.json"), "load summary");
    let planned = count(&summary, "requests_planned");
    let sent = count(&summary, "requests_sent");
    assert!(
        sent > 0 && sent * 100 < planned,
        "{model}: planned {planned}, sent {sent}"
    );
    assert!(sent >= count(&summary, "requests_completed"), "{summary}");
    let warnings = summary["warnings"].to_string();
    assert!(
        warnings.contains(&format!("sent {sent} of the {planned} requests")),
        "{model}: {warnings}"
    );
    assert_eq!(
        code, 1,
        "{model}: exit status of a run that sent under 1 % of its plan"
    );
    let fds = baseline_fds(&server);
    assert!(fds > 0);
    Measured::default()
}

/// A command server whose real server is a grandchild that calls setsid and keeps the
/// inherited stdout (a daemon escaping its process group): the step still ends on time,
/// the grandchild is killed with its step (its cgroup), and nothing listens after the run.
fn escaping_server(variant: &Variant) -> Measured {
    let model = variant.name;
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("grandchild.pid");
    let mut serve = format!("setsid {BIN} serve --model {}", variant.model);
    for arg in variant.args {
        serve += &format!(" {arg}");
    }
    let script = format!(
        "{serve} --addr 127.0.0.1:$1 & echo $! > {}; exec sleep 600",
        pid_file.display()
    );
    let scenario = format!(
        "models = [\"escaper\"]\nstep_timeout = \"15s\"\n\
         [model.escaper]\ncommand = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{port}}\"]\n\
         [load]\nconnections = 2\nsize = 64\nduration = \"1s\"\n"
    );
    let out = tmp.path().join("out");
    let mut command = Command::new(BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(write_scenario(tmp.path(), &scenario))
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(&out);
    let output = output_within(&mut command, COMMAND_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let grandchild: u32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|e| panic!("{model}: the command never started its server: {e}"))
        .trim()
        .parse()
        .unwrap();
    let gone = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    if alive(grandchild) {
        // SAFETY: kill has no memory preconditions; the pid is this test's grandchild.
        unsafe { libc::kill(grandchild as i32, libc::SIGKILL) };
        panic!("{model}: the setsid grandchild {grandchild} outlived the run: {stderr}");
    }
    assert!(
        output.status.success(),
        "{model}: {}: {stderr}",
        output.status
    );
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 1, "{model}: {stderr}");
    assert!(number(&rows[0], "requests") > 0.0, "{model}: {:?}", rows[0]);
    Measured::default()
}

/// `[model.v]`: the variant's model and server arguments, as the scenario's label `v`.
fn model_table(variant: &Variant) -> String {
    let args: Vec<String> = variant.args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[model.v]\nbase = {:?}\nargs = [{}]\n",
        variant.model,
        args.join(", ")
    )
}

/// `repetitions = 100000000` is refused at its line before anything runs (it made
/// millions of rows and an OOM kill); a run with many repetitions and a long pause
/// stops within seconds of SIGINT, its manifest saying interrupted.
fn huge_repetitions(variant: &Variant) -> Measured {
    let model = variant.name;
    let tmp = tempfile::tempdir().unwrap();
    let load = "[load]\nconnections = 2\nsize = 64\nduration = \"500ms\"\n";
    let huge = format!(
        "models = [\"v\"]\nrepetitions = 100000000\n{}{load}",
        model_table(variant)
    );
    let out = tmp.path().join("huge");
    let refused = run_scenario(&write_scenario(tmp.path(), &huge), &out, QUIET_NO_REPORT);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{model}: accepted: {stderr}");
    assert!(
        stderr.contains("line 2") && stderr.contains("repetitions = 100000000: at most 1000"),
        "{model}: {stderr}"
    );
    assert!(!out.join("results.csv").exists(), "{model}: it ran");

    let long = format!(
        "models = [\"v\"]\nrepetitions = 1000\npause = \"60s\"\n{}{load}",
        model_table(variant)
    );
    let out = tmp.path().join("long");
    let run = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(write_scenario(tmp.path(), &long))
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first row written: the run is in its pause.
    let started = Instant::now() + Duration::from_secs(30);
    while whole_rows_or_none(&out.join("results.csv")) < 1 && Instant::now() < started {
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(run.id() as i32, libc::SIGINT);
    let what = format!("{model}: run after SIGINT in its pause");
    let stopped = finish_within(run, &what, Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(130), "{what}: {stderr}");
    let manifest = parsed_json(&out.join("manifest.json"), &what);
    assert_eq!(manifest["status"], "interrupted", "{what}: {manifest}");
    assert_eq!(whole_rows(&out.join("results.csv"), &what), 1, "{what}");
    Measured::default()
}

/// A staircase killed by SIGKILL after two stairs were judged: results.csv holds their
/// rows (it held only its header, every stair lost).
fn staircase_killed(variant: &Variant) -> Measured {
    let model = variant.name;
    let _heavy = heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = format!(
        "models = [\"v\"]\n{}[load]\nsize = 16\ndelay = \"100ms\"\nconnect_timeout = \"5s\"\n\
         [staircase]\nbatch = 5\nevery = \"1s\"\nto = 30\n",
        model_table(variant)
    );
    let out = tmp.path().join("out");
    let mut run = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(write_scenario(tmp.path(), &scenario))
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Stair 3's folder is made once stairs 1 and 2 are judged.
    let third = out.join("v").join("c15-s16-d100ms");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !third.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(third.exists(), "{model}: stair 3 never started");
    let rows = results_rows(&out);
    let judged: Vec<(&str, &str)> = rows
        .iter()
        .take(2)
        .map(|r| (r["stair"].as_str(), r["status"].as_str()))
        .collect();
    assert_eq!(judged, [("1", "ok"), ("2", "ok")], "{model}: {rows:?}");
    Measured::default()
}

/// Rows of a CSV file so far (0 when it does not exist yet).
fn whole_rows_or_none(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count().saturating_sub(1))
}

/// Output paths that cannot be written (under a regular file; in /proc, read-only even
/// for root): serve, load and run exit with an error naming the path, never a panic.
#[test]
fn unwritable_outputs_are_named_not_panicked() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let scenario = tmp.path().join("s.toml");
    std::fs::write(&scenario, "models = [\"poll\"]\n[load]\nrequests = 1\n").unwrap();
    for bad in [file.join("out"), "/proc/echolab-out".into()] {
        let bad_str = bad.to_str().unwrap();
        let runs: [Vec<&str>; 3] = [
            vec![
                "load",
                "--target",
                "127.0.0.1:9",
                "--requests",
                "1",
                "--out",
                bad_str,
            ],
            vec!["run", scenario.to_str().unwrap(), "--out", bad_str],
            vec![
                "serve",
                "--model",
                "poll",
                "--addr",
                "127.0.0.1:0",
                "--log",
                bad_str,
            ],
        ];
        for args in runs {
            let out = output_within(Command::new(BIN).args(&args), COMMAND_LIMIT);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert!(
                matches!(out.status.code(), Some(1 | 2)),
                "{args:?}: exit {:?}: {stderr}",
                out.status
            );
            assert!(
                stderr.contains(bad_str),
                "{args:?} does not name {bad_str}: {stderr}"
            );
        }
    }
}

/// A table cell: the value, or blank where the case does not measure it.
fn cell<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or(String::new(), |v| v.to_string())
}

/// Runs every case on every variant and prints the table of docs/reliability.md.
#[test]
#[ignore = "prints the reliability table (about 3 minutes): cargo test --test adversarial -- --ignored table"]
fn table() {
    type Case = fn(&Variant) -> Measured;
    let cases: [(&str, Case); 8] = [
        ("slowloris", slowloris),
        ("pushers", pushers),
        ("reset storm", reset_storm),
        ("half-close", half_close_variants),
        ("never send", connect_and_never_send),
        ("random bytes", random_bytes_and_nuls),
        ("fd exhaustion", fd_exhaustion),
        ("signals", signals_at_random_moments),
    ];
    // On a line of its own: the harness prints "test table ... " just before.
    let mut out = String::from(
        "\n| case | model | result | bytes lost | RSS peak (MiB) | fds after | recovery (ms) |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: |\n",
    );
    for (case, run) in cases {
        for variant in VARIANTS {
            let result = std::panic::catch_unwind(|| run(variant));
            let line = match result {
                Ok(m) => format!(
                    "| {case} | {} | pass | {} | {} | {} | {} |\n",
                    variant.name,
                    cell(m.bytes_lost),
                    cell(m.rss_peak.map(|b| format!("{:.1}", b as f64 / MIB as f64))),
                    cell(m.fds_after),
                    cell(m.recovery.map(|r| r.as_millis()))
                ),
                Err(_) => format!("| {case} | {} | FAIL | | | | |\n", variant.name),
            };
            out += &line;
        }
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
}

/// Waits up to 5 s for every one of `pids` to be gone (or a zombie); kills and names
/// those that are not.
fn assert_all_gone(pids: &[u32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = pids.to_vec();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(|&pid| alive(pid));
    }
    for &pid in &left {
        signal(pid as i32, libc::SIGKILL);
    }
    assert!(left.is_empty(), "{what}: processes left behind: {left:?}");
}

/// A JSON file that must exist and parse.
fn parsed_json(path: &std::path::Path, what: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{what}: cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: {} does not parse: {e}\n{text}", path.display()))
}

/// The rows of a CSV file that must hold whole rows only: a header, every row with as many
/// fields as the header, the last one ended by a newline.
fn whole_rows(path: &std::path::Path, what: &str) -> usize {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{what}: cannot read {}: {e}", path.display()));
    assert!(
        text.ends_with('\n'),
        "{what}: {} ends mid-row",
        path.display()
    );
    let mut lines = text.lines();
    let fields = lines.next().map_or(0, |h| h.split(',').count());
    assert!(fields > 1, "{what}: {} has no header", path.display());
    let rows: Vec<&str> = lines.collect();
    for row in &rows {
        assert_eq!(
            row.split(',').count(),
            fields,
            "{what}: a cut row in {}: {row:?}",
            path.display()
        );
    }
    rows.len()
}

/// Seeds of the random moments the kill tests replay.
const KILL_SEEDS: [u64; 3] = [11, 2024, 977];

/// `echolab load --processes 2` for 30 s, writing into `out`.
fn start_load_processes(target: &str, out: &std::path::Path) -> std::process::Child {
    Command::new(BIN)
        .args(["load", "--target", target, "--processes", "2"])
        .args(["--connections", "4", "--size", "256", "--duration", "30s"])
        .args(["--quiet", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A SIGTERM at a random moment of `load --processes 2`: exit 0 when anything was
/// measured (else 1), summary.json complete and interrupted, every CSV whole rows, no
/// child left.
#[test]
fn load_sigterm_at_random_moments_leaves_whole_outputs() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(200) + moments(seed, 1, Duration::from_millis(1200))[0];
        let what = format!("load SIGTERM after {delay:?} (seed {seed})");
        let dir = tempfile::tempdir().unwrap();
        let load = start_load_processes(&target, dir.path());
        std::thread::sleep(delay);
        let children = descendants(load.id());
        signal(load.id() as i32, libc::SIGTERM);
        let out = finish_within(load, &what, Duration::from_secs(10));
        let (status, stderr) = (out.status, String::from_utf8_lossy(&out.stderr));
        assert_all_gone(&children, &what);
        let summary = parsed_json(&dir.path().join("summary.json"), &what);
        assert_eq!(summary["complete"], true, "{what}: {summary}");
        assert_eq!(summary["interrupted"], true, "{what}: {summary}");
        let completed = count(&summary, "requests_completed");
        let expected = if completed > 0 { 0 } else { 1 };
        assert_eq!(status.code(), Some(expected), "{what}: {status}: {stderr}");
        let connections = whole_rows(&dir.path().join("connections.csv"), &what);
        assert_eq!(
            connections, 4,
            "{what}: one row per connection of both children"
        );
        whole_rows(&dir.path().join("timeline.csv"), &what);
    }
    server.stop();
}

/// A SIGKILL at a random moment of `load --processes 2`: summary.json still parses (it
/// is replaced atomically) and both children go with their parent.
#[test]
fn load_sigkill_at_random_moments_leaves_a_summary_and_no_child() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(200) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("load SIGKILL after {delay:?} (seed {seed})");
        let dir = tempfile::tempdir().unwrap();
        let mut load = start_load_processes(&target, dir.path());
        std::thread::sleep(delay);
        let children = descendants(load.id());
        assert_eq!(children.len(), 2, "{what}: children {children:?}");
        signal(load.id() as i32, libc::SIGKILL);
        wait_timeout(&mut load, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: SIGKILL did not end the load"));
        assert_all_gone(&children, &what);
        let summary = parsed_json(&dir.path().join("summary.json"), &what);
        assert_eq!(summary["complete"], false, "{what}: {summary}");
    }
    server.stop();
}

/// A scenario of one 30 s step of poll, run into `out`.
fn start_run(tmp: &std::path::Path, out: &std::path::Path) -> std::process::Child {
    let scenario = tmp.join("long.toml");
    std::fs::write(
        &scenario,
        "models = [\"poll\"]\n[load]\nconnections = 4\nsize = 256\nduration = \"30s\"\n",
    )
    .unwrap();
    Command::new(BIN)
        .arg("run")
        .arg(&scenario)
        .args(["--no-report", "--quiet", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A SIGTERM at a random moment of `echolab run`: exit 130, manifest.json interrupted,
/// results.csv whole rows with the step interrupted (once it has started), the step's load
/// summary parsing, no server or load left.
#[test]
fn run_sigterm_at_random_moments_leaves_a_truthful_manifest() {
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(300) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("run SIGTERM after {delay:?} (seed {seed})");
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("results");
        let run = start_run(tmp.path(), &out);
        std::thread::sleep(delay);
        let children = descendants(run.id());
        signal(run.id() as i32, libc::SIGTERM);
        let stopped = finish_within(run, &what, Duration::from_secs(10));
        let (status, stderr) = (stopped.status, String::from_utf8_lossy(&stopped.stderr));
        assert_eq!(status.code(), Some(130), "{what}: {status}: {stderr}");
        assert_all_gone(&children, &what);
        let manifest = parsed_json(&out.join("manifest.json"), &what);
        assert_eq!(manifest["interrupted"], true, "{what}: {manifest}");
        assert_eq!(manifest["status"], "interrupted", "{what}: {manifest}");
        assert!(!out.join("manifest.json.tmp").exists(), "{what}");
        let rows = whole_rows(&out.join("results.csv"), &what);
        assert!(rows <= 1, "{what}: {rows} rows for one step");
        if rows == 1 {
            let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
            assert!(results.contains(",interrupted,"), "{what}: {results}");
        }
        for summary in glob_files(&out, "summary.json") {
            parsed_json(&summary, &what);
        }
    }
}

/// A SIGKILL at a random moment of `echolab run`: manifest.json parses and says the run
/// did not complete, and its server and load die with it.
#[test]
fn run_sigkill_at_random_moments_leaves_no_child() {
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(300) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("run SIGKILL after {delay:?} (seed {seed})");
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("results");
        let mut run = start_run(tmp.path(), &out);
        std::thread::sleep(delay);
        let children = descendants(run.id());
        assert!(!children.is_empty(), "{what}: no server or load running");
        signal(run.id() as i32, libc::SIGKILL);
        wait_timeout(&mut run, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: SIGKILL did not end the run"));
        assert_all_gone(&children, &what);
        let manifest = parsed_json(&out.join("manifest.json"), &what);
        assert_eq!(manifest["status"], "running", "{what}: {manifest}");
        assert_eq!(manifest["interrupted"], true, "{what}: {manifest}");
        for summary in glob_files(&out, "summary.json") {
            parsed_json(&summary, &what);
        }
    }
}

/// Every file named `name` under `dir`.
fn glob_files(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(glob_files(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}

/// A tmpfs mounted on a temporary directory, nearly filled by a filler file so that a few
/// KiB of output fill it; unmounted when dropped, also when the test panics.
struct FullDisk {
    dir: tempfile::TempDir,
}

impl FullDisk {
    /// Mounts 256 KiB with 8 KiB left (less than any run writes), or skips the test
    /// (`None`) when not root.
    fn mount(test: &str) -> Option<FullDisk> {
        FullDisk::mount_leaving(test, 256 * KIB, 8 * KIB)
    }

    /// Mounts `size` bytes with `free` of them left.
    fn mount_leaving(test: &str, size: usize, free: usize) -> Option<FullDisk> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip(test, "mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={}k", size / KIB),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "mount -t tmpfs failed: {status}");
        let disk = FullDisk { dir };
        std::fs::write(disk.path("filler"), vec![0u8; size - free]).unwrap();
        Some(disk)
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Asserts an exit 1 that names a file under `under` and ENOSPC, without a panic.
fn assert_enospc_named(out: &std::process::Output, under: &std::path::Path, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(
        stderr.contains("No space left on device"),
        "{what}: no ENOSPC on stderr: {stderr}"
    );
    let under = under.display().to_string();
    assert!(
        stderr
            .split_whitespace()
            .any(|word| word.trim_end_matches(':').starts_with(&under)),
        "{what}: no path under {under} named: {stderr}"
    );
}

/// `load --out` and `run --out` on a disk that fills during the run: exit 1 with the file
/// that hit ENOSPC named, no panic.
#[test]
fn a_full_disk_under_load_and_run_is_named_not_panicked() {
    let Some(disk) = FullDisk::mount("a_full_disk_under_load_and_run_is_named_not_panicked") else {
        return;
    };
    let server = Server::start("epoll", &["--workers", "1"]);
    let load_out = disk.path("load");
    let out = load_within(&[
        "--target",
        &server.addr.to_string(),
        "--connections",
        "200",
        "--requests",
        "400",
        "--quiet",
        "--out",
        load_out.to_str().unwrap(),
    ]);
    assert_enospc_named(&out, &load_out, "load");

    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("full.toml");
    std::fs::write(
        &scenario,
        "models = [\"poll\"]\n[load]\nconnections = 200\nrequests = 400\n",
    )
    .unwrap();
    std::fs::remove_dir_all(&load_out).unwrap();
    let run_out = disk.path("run");
    let out = run_scenario(&scenario, &run_out, QUIET_NO_REPORT);
    assert_enospc_named(&out, &run_out, "run");
    server.stop();
}

/// The disk filled during a run: the row said "failed: 0 of 3 connections established",
/// blaming the model, and the manifest stayed "running". The run stops at the step the
/// full disk failed, no row blames a model, the manifest (rewritten in place) says
/// `stopped` with the reason, and the run exits 1.
#[test]
fn a_disk_filling_during_a_run_stops_it_as_the_machines_fault() {
    let test = "a_disk_filling_during_a_run_stops_it_as_the_machines_fault";
    // Room for the manifest, results.csv and a step or two of files, not for ten.
    let Some(disk) = FullDisk::mount_leaving(test, 1024 * KIB, 160 * KIB) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let scenario = write_scenario(
        tmp.path(),
        "models = [\"epoll\"]\n[load]\nconnections = 3\nsize = 64\nduration = \"500ms\"\n\
         [sweep]\nconnections = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n",
    );
    let out = disk.path("run");
    let output = run_scenario(&scenario, &out, QUIET_NO_REPORT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["status"], "stopped", "{manifest}");
    let reason = manifest["stop_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("is full") || reason.contains("No space left on device"),
        "{manifest}"
    );
    // Rows as far as results.csv could hold them: none blames the model.
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap_or_default();
    for line in text.lines().skip(1) {
        assert!(
            !line.contains(",failed,"),
            "a model blamed for a full disk: {line}"
        );
    }
    assert!(text.lines().count() < 11, "the run went on: {text}");
}

/// `serve --log` on a disk that fills while connections close: at SIGTERM the server still
/// prints its summary and writes --summary-json, names the log and the error on stderr, and
/// exits 1 (docs/outputs.md).
#[test]
fn a_full_server_log_is_reported_at_exit() {
    let Some(disk) = FullDisk::mount("a_full_server_log_is_reported_at_exit") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = disk.path("log.csv");
    let summary_json = tmp.path().join("summary.json");
    let mut child = Command::new(BIN)
        .args(["serve", "--model", "epoll", "--workers", "1"])
        .args(["--addr", "127.0.0.1:0", "--log"])
        .arg(&log)
        .arg("--summary-json")
        .arg(&summary_json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr: std::net::SocketAddr = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    let baseline = fd_count(child.id() as i32);
    // About 60 bytes a row: 1000 rows are 60 KB, far over the 8 KiB left.
    const CONNECTIONS: u64 = 1000;
    for _ in 0..CONNECTIONS {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        assert_eq!(echo_once(&mut stream, b"ping"), b"ping");
    }
    // Every connection closed and logged (or failed to be) before the signal.
    let deadline = Instant::now() + Duration::from_secs(5);
    while fd_count(child.id() as i32) > baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(child.id() as i32, libc::SIGTERM);
    let out = finish_within(child, "serve after SIGTERM", Duration::from_secs(10));
    let (status, stderr) = (out.status, String::from_utf8_lossy(&out.stderr));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("echolab serve summary"), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&log.display().to_string()) && last.contains("No space left on device"),
        "the last line does not name the log and the error: {stderr}"
    );
    let summary = parsed_json(&summary_json, "serve");
    assert_eq!(count(&summary, "accepted"), CONNECTIONS, "{summary}");
}
