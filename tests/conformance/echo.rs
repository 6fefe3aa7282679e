//! Every model's echo: sizes and connection counts, a 64 MiB stream, garbage, half-close, resets, a client that never reads.

use super::*;

/// `conns` connections open at once, each echoing `size` bytes (different bytes per
/// connection) and half-closing; the log has each connection's exact counts.
pub(crate) fn echo_concurrent(variant: &Variant, conns: usize, size: usize) {
    let model = variant.model;
    let _heavy = (conns >= 1000 || conns * size >= 100 * MIB).then(heavy);
    let server = start(variant, &[]);
    let mut streams = connect_many(server.addr, conns);
    let ports: Vec<u16> = streams
        .iter()
        .map(|s| s.local_addr().unwrap().port())
        .collect();
    // Large transfers get a thread each; small ones are served by a few threads in turn.
    let workers = if size >= MIB { conns } else { conns.min(8) };
    let per_worker = conns.div_ceil(workers);
    std::thread::scope(|scope| {
        for group in streams.chunks_mut(per_worker) {
            scope.spawn(move || {
                for stream in group.iter_mut() {
                    let port = stream.local_addr().unwrap().port();
                    let data = payload(size, port as u64);
                    let got = echo_chunked(stream, &data);
                    assert!(
                        got == data,
                        "{model}: wrong echo of {size} B on port {port}"
                    );
                }
            });
        }
    });
    // Every connection was open during all of the above; now each half-closes.
    std::thread::scope(|scope| {
        for group in streams.chunks_mut(per_worker) {
            scope.spawn(move || group.iter_mut().for_each(expect_eof_after_half_close));
        }
    });
    drop(streams);
    let stopped = server.stop();
    check_stopped(model, &stopped);
    let summary = &stopped.summary;
    assert_eq!(count(summary, "accepted"), conns as u64);
    assert_eq!(count(summary, "bytes_in"), (conns * size) as u64);
    assert_eq!(count(summary, "bytes_out"), (conns * size) as u64);
    assert_eq!(
        reason_count(summary, "closed", "client_closed"),
        conns as u64
    );
    for port in ports {
        let row = row_for(&stopped.log, port);
        assert_eq!((row.bytes_in, row.bytes_out), (size as u64, size as u64));
        assert_eq!(row.close_reason, "client_closed");
        assert_eq!(row.peer_ip, "127.0.0.1");
    }
}

/// 64 MiB written on one thread while the echo is read on another, over one connection.
pub(crate) fn stream_64mib(variant: &Variant) {
    let model = variant.model;
    let _heavy = heavy();
    let server = start(variant, &[]);
    let data = payload(64 * MIB, 64);
    let got = echo_stream(server.connect(), &data);
    assert_eq!(got.len(), data.len(), "{model}: echo length");
    assert!(got == data, "{model}: 64 MiB echo differs");
    let stopped = server.stop();
    check_stopped(model, &stopped);
    assert_eq!(count(&stopped.summary, "bytes_out"), (64 * MIB) as u64);
}

/// Bytes a line-oriented or C-string server would mangle.
pub(crate) fn garbage_bytes(variant: &Variant) {
    let model = variant.model;
    let server = start(variant, &[]);
    let garbage: &[u8] = b"\0\xff\r\n\x00GET / HTTP/1.1\r\n\r\n\x1b[2J\xc3\x28\xfe\xfe\xff\xff\0\0";
    let mut stream = server.connect();
    assert_eq!(echo_once(&mut stream, garbage), garbage);
    assert_eq!(echo_stream(stream, garbage), garbage);
    let stopped = server.stop();
    check_stopped(model, &stopped);
    assert_eq!(
        count(&stopped.summary, "bytes_in"),
        2 * garbage.len() as u64
    );
}

/// Twenty connections sending different amounts in several writes; each log row
/// (joined by client port) has exactly what that client sent and got back.
pub(crate) fn log_counts_per_connection(variant: &Variant) {
    let model = variant.model;
    let server = start(variant, &[]);
    let mut expected = Vec::new();
    for i in 0..20usize {
        let mut stream = server.connect();
        let port = stream.local_addr().unwrap().port();
        let mut sent = 0;
        for write in 0..=(i % 4) {
            let data = payload(1 + i * 997 + write * 13, (i * 10 + write) as u64);
            assert_eq!(echo_once(&mut stream, &data), data);
            sent += data.len() as u64;
        }
        expect_eof_after_half_close(&mut stream);
        expected.push((port, sent));
    }
    let stopped = server.stop();
    check_stopped(model, &stopped);
    for (port, sent) in expected {
        let row = row_for(&stopped.log, port);
        assert_eq!((row.bytes_in, row.bytes_out), (sent, sent), "port {port}");
        assert!(
            row.reads >= 1 && row.reads <= sent,
            "port {port}: {} reads",
            row.reads
        );
        assert!(row.closed_unix >= row.opened_unix);
    }
}

/// The client writes, shuts down its write side, reads the whole echo, then sees EOF.
pub(crate) fn half_close(variant: &Variant) {
    let model = variant.model;
    let server = start(variant, &[]);
    let data = payload(300 * KIB, 7);
    let mut stream = server.connect();
    let port = stream.local_addr().unwrap().port();
    stream.write_all(&data).expect("write");
    stream.shutdown(Shutdown::Write).expect("half-close");
    let mut got = vec![0u8; data.len()];
    stream
        .read_exact(&mut got)
        .expect("the whole echo after half-close");
    assert!(got == data, "{model}: echo after half-close differs");
    assert_eq!(stream.read(&mut [0u8; 16]).expect("read EOF"), 0, "EOF");
    let stopped = server.stop();
    check_stopped(model, &stopped);
    let row = row_for(&stopped.log, port);
    assert_eq!(row.close_reason, "client_closed");
    assert_eq!(
        (row.bytes_in, row.bytes_out),
        (data.len() as u64, data.len() as u64)
    );
}

/// A client resets (SO_LINGER 0) while the server still has echo for it; the server
/// counts it and keeps serving.
pub(crate) fn reset_mid_transfer(variant: &Variant) {
    let model = variant.model;
    let server = start(variant, &[]);
    let mut warm = server.connect();
    assert_eq!(echo_once(&mut warm, b"warm"), b"warm");
    let baseline_fds = fd_count(server.pid());

    let victim = server.connect();
    let port = victim.local_addr().unwrap().port();
    let mut reader = victim.try_clone().unwrap();
    let mut first = [0u8; 1000];
    victim.set_nonblocking(true).unwrap();
    let sent = push_without_reading(&victim, 16 * MIB, Duration::from_secs(3));
    assert!(sent > MIB, "{model}: only {sent} bytes went out");
    // Read a little so the echo is known to be flowing, then reset.
    reader.set_nonblocking(false).unwrap();
    reader.read_exact(&mut first).expect("some echo");
    socket2::SockRef::from(&victim)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(reader);
    drop(victim);
    // The server notices the reset and closes the connection.
    server.wait_fds(baseline_fds, Duration::from_secs(10));

    let mut other = server.connect();
    let data = payload(100 * KIB, 3);
    assert!(
        echo_chunked(&mut other, &data) == data,
        "{model}: echo after a reset"
    );
    assert_eq!(echo_once(&mut warm, b"still"), b"still");
    let stopped = server.stop();
    check_stopped(model, &stopped);
    let row = row_for(&stopped.log, port);
    assert_eq!(
        row.close_reason, "reset",
        "{model}: a connection the client reset (SO_LINGER 0) closed as {}",
        row.close_reason
    );
    assert!(row.bytes_out <= row.bytes_in && row.bytes_in <= sent as u64);
    assert_eq!(reason_count(&stopped.summary, "closed", "reset"), 1);
}

/// A client pushes up to 256 MiB and never reads: the server must stop reading it
/// (bounded memory) and keep serving everyone else.
pub(crate) fn client_never_reads(variant: &Variant) {
    let model = variant.model;
    let _heavy = heavy();
    let server = start(variant, &[]);
    // Warm up so buffers that are allocated once are in the baseline.
    let mut warm = server.connect();
    let data = payload(MIB, 5);
    assert!(echo_chunked(&mut warm, &data) == data);
    let baseline = server.rss_bytes();

    let hog = server.connect();
    hog.set_nonblocking(true).unwrap();
    let sent = push_without_reading(&hog, 256 * MIB, Duration::from_secs(5));
    // What the server read and has not handed back to the kernel, from the kernel's own
    // queues: at most --max-pending (default 256 KiB) plus the one read that crossed it.
    let held = server_held_bytes(&hog, sent as u64);

    let mut other = server.connect();
    assert!(
        echo_chunked(&mut other, &data) == data,
        "{model}: others still served"
    );
    let grown = server.rss_bytes().saturating_sub(baseline);
    eprintln!(
        "{model}: a client that never reads pushed {} MiB; the server holds {held} B of it; \
         server RSS grew {} KiB",
        sent / MIB,
        grown / 1024
    );
    assert!(
        held <= HELD_BOUND,
        "{model}: the server read {held} B beyond what the kernel holds as echo (bound {HELD_BOUND} B)"
    );
    assert!(
        grown < 32 * MIB as u64,
        "{model}: RSS grew {grown} bytes while a client did not read"
    );
    assert!(sent < 256 * MIB, "{model}: the server kept reading 256 MiB");
    drop(hog);
    let stopped = server.stop();
    check_stopped(model, &stopped);
}
