//! The attacks each model meets: slow senders, pushers, resets, half-closes, silent and garbage clients, fd exhaustion.

use super::*;

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
pub(crate) fn slowloris(variant: &Variant) -> Measured {
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
pub(crate) fn pushers(variant: &Variant) -> Measured {
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
pub(crate) fn reset(stream: TcpStream) {
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(stream);
}

/// 10 000 connections, each sends a few bytes and is closed with a reset, in waves of 500:
/// the server's fds come back to their baseline and every accepted connection is closed.
pub(crate) fn reset_storm(variant: &Variant) -> Measured {
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
pub(crate) fn half_close_variants(variant: &Variant) -> Measured {
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
pub(crate) fn connect_and_never_send(variant: &Variant) -> Measured {
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
pub(crate) fn random_bytes_and_nuls(variant: &Variant) -> Measured {
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
pub(crate) fn fd_exhaustion(variant: &Variant) -> Measured {
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
