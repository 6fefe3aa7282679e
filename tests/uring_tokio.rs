//! Tests specific to the uring and tokio models (the conformance suite covers what every
//! model must do): buffer-ring exhaustion and short sends, memory per idle connection,
//! the message when io_uring cannot be used, and tokio's totals at SIGTERM.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// `clients` clients at once, each echoing `size` bytes of its own payload (seeded from
/// `seed` and its index); every echo must come back exact.
fn echo_in_parallel(server: &Server, clients: usize, size: usize, seed: u64) {
    let handles: Vec<_> = (0..clients)
        .map(|i| {
            let stream = server.connect();
            std::thread::spawn(move || {
                let data = payload(size, seed + i as u64);
                let echo = echo_stream(stream, &data);
                assert!(
                    echo == data,
                    "client {i}: echo differs ({} bytes back)",
                    echo.len()
                );
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("client thread");
    }
}

/// The uring worker's event counts from its stderr line, summed over workers.
fn uring_counter(stderr: &str, after: &str) -> u64 {
    stderr
        .lines()
        .filter(|line| line.contains("uring worker"))
        .map(|line| {
            let (before, _) = line
                .split_once(after)
                .unwrap_or_else(|| panic!("no '{after}' in {line:?}"));
            before
                .split_whitespace()
                .last()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no count before '{after}' in {line:?}"))
        })
        .sum()
}

/// 32 clients echo 1 MiB each at once through a ring of only 4 provided buffers, so
/// the ring runs dry (ENOBUFS ends the multishot recvs, which must be re-armed; with 16,
/// half of them free while pieces are copied, it sometimes did not), and a
/// client that stops reading for a while forces short sends. Every byte comes back.
#[test]
fn uring_buffer_ring_exhaustion_and_short_sends() {
    const CLIENTS: usize = 32;
    const SIZE: usize = 1 << 20;
    let _heavy = heavy();
    let server = Server::start_with("uring", &["--workers", "1"], |command| {
        command.env("ECHOLAB_URING_BUFFERS", "4");
    });
    echo_in_parallel(&server, CLIENTS, SIZE, 0);

    // A client that writes 8 MiB but reads nothing for a while: the server's sends
    // block on a full socket and then complete in parts.
    let slow_size = 8 << 20;
    let data = payload(slow_size, 99);
    let mut stream = server.connect();
    let mut writer = stream.try_clone().unwrap();
    let to_send = data.clone();
    let write_thread = std::thread::spawn(move || {
        writer.write_all(&to_send).expect("write 8 MiB");
        writer.shutdown(Shutdown::Write).unwrap();
    });
    std::thread::sleep(Duration::from_millis(500));
    let mut echo = Vec::with_capacity(slow_size);
    let mut chunk = vec![0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).expect("read echo");
        if n == 0 {
            break;
        }
        echo.extend_from_slice(&chunk[..n]);
    }
    write_thread.join().unwrap();
    assert!(
        echo == data,
        "slow client: echo differs ({} bytes back)",
        echo.len()
    );

    let stopped = server.stop();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    let total = (CLIENTS * SIZE + slow_size) as u64;
    assert_eq!(count(&stopped.summary, "accepted"), CLIENTS as u64 + 1);
    assert_eq!(count(&stopped.summary, "bytes_in"), total);
    assert_eq!(count(&stopped.summary, "bytes_out"), total);
    assert_eq!(
        reason_count(&stopped.summary, "closed", "client_closed"),
        CLIENTS as u64 + 1
    );
    assert_eq!(stopped.log.len(), CLIENTS + 1);
    let empty_ring = uring_counter(&stopped.stderr, "recv re-arms after an empty buffer ring");
    let short_sends = uring_counter(&stopped.stderr, "short sends");
    assert!(
        empty_ring > 0,
        "the buffer ring never ran dry: {}",
        stopped.stderr
    );
    assert!(
        short_sends > 0,
        "no short send happened: {}",
        stopped.stderr
    );
}

/// 10 000 idle connections cost the uring server almost no user-space memory: no
/// buffer is held per connection, only a slab entry. The buffer pool is warmed up
/// first, so its (fixed) pages are already in the baseline.
#[test]
fn uring_idle_connections_keep_memory_flat() {
    const CONNS: usize = 10_000;
    let _heavy = heavy();
    let server = Server::start("uring", &["--workers", "1"]);
    let mut warm = server.connect();
    for round in 0..4096u64 {
        let message = payload(1024, round);
        assert_eq!(echo_once(&mut warm, &message), message);
    }
    let before = server.rss_bytes();

    let mut streams = connect_many(server.addr, CONNS);
    for (i, stream) in streams.iter_mut().enumerate() {
        let message = format!("hello {i}\n");
        assert_eq!(echo_once(stream, message.as_bytes()), message.as_bytes());
    }
    let after = server.rss_bytes();
    let per_conn = after.saturating_sub(before) / CONNS as u64;
    assert!(
        per_conn < 2048,
        "uring: {per_conn} B of RSS per idle connection ({before} -> {after})"
    );

    let stopped = server.stop();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    assert_eq!(count(&stopped.summary, "accepted"), CONNS as u64 + 1);
    assert_eq!(
        reason_count(&stopped.summary, "closed", "shutdown"),
        CONNS as u64 + 1
    );
    assert_eq!(stopped.log.len(), CONNS + 1);
    drop(streams);
}

/// Runs `echolab serve --model uring` with io_uring_setup(2) failing with `errno`, as a
/// seccomp policy (e.g. a container's) makes it; returns (exit success, stderr).
fn uring_with_setup_errno(errno: u32) -> (bool, String) {
    echolab_with_setup_errno(
        &["serve", "--model", "uring", "--addr", "127.0.0.1:0"],
        errno,
    )
}

/// Runs echolab with `args` and io_uring_setup(2) failing with `errno`.
fn echolab_with_setup_errno(args: &[&str], errno: u32) -> (bool, String) {
    let mut command = Command::new(BIN);
    command.args(args);
    // SAFETY: between fork and exec the closure only calls prctl(2) on the child itself.
    unsafe {
        command.pre_exec(move || deny_io_uring_setup(errno));
    }
    // A server that started anyway would serve until killed: the limit fails it.
    let output = output_within(&mut command, COMMAND_LIMIT);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Installs a seccomp filter: io_uring_setup(2) fails with `errno`, everything else runs.
fn deny_io_uring_setup(errno: u32) -> std::io::Result<()> {
    let filter = [
        // A = seccomp_data.nr
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_io_uring_setup as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | errno,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    let program = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl calls on this (child) process; `program` outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &program as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[test]
fn uring_unavailable_gives_a_clear_message() {
    let (ok, stderr) = uring_with_setup_errno(libc::ENOSYS as u32);
    assert!(!ok, "uring ran without io_uring_setup: {stderr}");
    assert!(
        stderr.contains("io_uring is not available"),
        "ENOSYS message: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (ok, stderr) = uring_with_setup_errno(libc::EPERM as u32);
    assert!(!ok, "uring ran without io_uring_setup: {stderr}");
    assert!(
        stderr.contains("io_uring is not permitted") && stderr.contains("io_uring_disabled"),
        "EPERM message: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (ok, stderr) = uring_with_setup_errno(libc::ENOMEM as u32);
    assert!(!ok, "uring ran without io_uring_setup: {stderr}");
    assert!(
        stderr.contains("raise ulimit -l") && stderr.contains("memlock limit is"),
        "ENOMEM message: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // The load's io_uring engine says the same, and what to use instead, before it connects.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = listener.local_addr().unwrap().to_string();
    let load = [
        "load",
        "--engine",
        "uring",
        "--target",
        &target,
        "--requests",
        "1",
    ];
    let (ok, stderr) = echolab_with_setup_errno(&load, libc::ENOSYS as u32);
    assert!(!ok, "the uring engine ran without io_uring_setup: {stderr}");
    assert!(
        stderr.contains("io_uring is not available") && stderr.contains("use --engine epoll"),
        "load ENOSYS message: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A memlock limit of 0 either still works (ring memory is not locked memory on
/// recent kernels, and root may lock anyway) or fails with the advice; never a crash.
#[test]
fn uring_with_no_memlock_serves_or_explains() {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--model", "uring", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    limit_in_child(&mut command, libc::RLIMIT_MEMLOCK, 0);
    let mut child = command.spawn().expect("spawn");
    let mut stdout = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8_lossy(&line).into_owned();
    let addr: std::net::SocketAddr = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    // Either it echoes, or its worker failed (whenever after the listening line) and the
    // server exits with the advice.
    let echoed = TcpStream::connect(addr).and_then(|mut stream| {
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.write_all(b"memlock")?;
        let mut got = [0u8; 7];
        stream.read_exact(&mut got)?;
        Ok(got)
    });
    if let Ok(got) = &echoed {
        assert_eq!(got, b"memlock");
        signal(child.id() as i32, libc::SIGTERM);
    }
    let output = finish_within(
        child,
        "uring serve with no memlock",
        Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    if echoed.is_err() || !output.status.success() {
        assert!(
            !output.status.success() && stderr.contains("raise ulimit -l"),
            "{echoed:?}: {stderr}"
        );
    }
}

/// tokio: echoes, then at SIGTERM closes every open connection (reason shutdown) with
/// exact totals; connections that half-closed earlier count as client_closed.
#[test]
fn tokio_echo_and_sigterm_totals() {
    let server = Server::start("tokio", &["--workers", "2"]);
    let mut expected_bytes = 0u64;
    for i in 0..10 {
        let data = payload(1000 + i * 777, i as u64);
        assert_eq!(echo_stream(server.connect(), &data), data);
        expected_bytes += data.len() as u64;
    }
    let mut open: Vec<TcpStream> = (0..5).map(|_| server.connect()).collect();
    for (i, stream) in open.iter_mut().enumerate() {
        let data = payload(100 * (i + 1), 50 + i as u64);
        assert_eq!(echo_once(stream, &data), data);
        expected_bytes += data.len() as u64;
    }
    server.wait_accepted(Duration::from_secs(30));

    // The server closes the held connections as it shuts down: a clean EOF on each.
    server.sigterm();
    for stream in &mut open {
        expect_server_eof(stream);
    }
    let stopped = server.wait_stopped();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    let summary = &stopped.summary;
    assert_eq!(count(summary, "accepted"), 15);
    assert_eq!(reason_count(summary, "closed", "client_closed"), 10);
    assert_eq!(reason_count(summary, "closed", "shutdown"), 5);
    assert_eq!(count(summary, "bytes_in"), expected_bytes);
    assert_eq!(count(summary, "bytes_out"), expected_bytes);
    assert_eq!(count(summary, "workers"), 2);
    assert_eq!(stopped.log.len(), 15);
}

/// The most unsent echo the uring worker held, from its stderr line (the largest over workers).
fn uring_most_unsent(stderr: &str) -> u64 {
    stderr
        .lines()
        .filter(|line| line.contains("uring worker"))
        .map(|line| {
            let (_, after) = line
                .split_once("most unsent echo ")
                .unwrap_or_else(|| panic!("no 'most unsent echo' in {line:?}"));
            after
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no count after 'most unsent echo' in {line:?}"))
        })
        .max()
        .expect("a uring worker line")
}

/// 1 MiB echoes come back exact from 16 clients at once, with incremental buffers
/// (pieces sent from where they arrived, several per sendmsg) and with the whole
/// buffers older kernels use (`ECHOLAB_URING_WHOLE_BUFFERS`).
#[test]
fn uring_one_mib_echoes_exact_with_incremental_and_whole_buffers() {
    const CLIENTS: usize = 16;
    const SIZE: usize = 1 << 20;
    let _heavy = heavy();
    for whole in [false, true] {
        let server = Server::start_with("uring", &["--workers", "1"], |command| {
            if whole {
                command.env("ECHOLAB_URING_WHOLE_BUFFERS", "1");
            }
        });
        echo_in_parallel(&server, CLIENTS, SIZE, 1000);
        let stopped = server.stop();
        assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
        let total = (CLIENTS * SIZE) as u64;
        assert_eq!(count(&stopped.summary, "bytes_in"), total, "whole={whole}");
        assert_eq!(count(&stopped.summary, "bytes_out"), total, "whole={whole}");
        assert_eq!(
            reason_count(&stopped.summary, "closed", "client_closed"),
            CLIENTS as u64,
            "whole={whole}"
        );
    }
}

/// A client writes 3 MiB, half-closes, and only then starts reading: the echo held in
/// provided buffers and in the copy queue when the end of stream arrives is all sent
/// before the server closes, in order.
#[test]
fn uring_half_close_with_echo_pending_in_buffers() {
    let _heavy = heavy();
    let server = Server::start("uring", &["--workers", "1"]);
    let data = payload(3 << 20, 7);
    let mut stream = server.connect();
    let mut writer = stream.try_clone().unwrap();
    let to_send = data.clone();
    let write_thread = std::thread::spawn(move || {
        writer.write_all(&to_send).expect("write 3 MiB");
        writer.shutdown(Shutdown::Write).unwrap();
    });
    std::thread::sleep(Duration::from_millis(500));
    let mut echo = Vec::with_capacity(data.len());
    stream.read_to_end(&mut echo).expect("read echo");
    write_thread.join().unwrap();
    assert!(echo == data, "echo differs ({} bytes back)", echo.len());
    let stopped = server.stop();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    assert_eq!(count(&stopped.summary, "bytes_out"), data.len() as u64);
    assert_eq!(reason_count(&stopped.summary, "closed", "client_closed"), 1);
}

/// With `--max-pending 64KiB`, a client that writes without reading makes the server
/// stop reading near the cap (the recv's byte limit, or its cancel on older kernels,
/// overshoots by less than one 64 KiB buffer), and every byte still comes back.
#[test]
fn uring_backpressure_holds_near_max_pending() {
    const CAP: u64 = 64 * 1024;
    let _heavy = heavy();
    let server = Server::start("uring", &["--workers", "1", "--max-pending", "64KiB"]);
    let stream = server.connect();
    stream.set_nonblocking(true).unwrap();
    let sent = push_without_reading(&stream, 16 << 20, Duration::from_secs(10));
    let held = server_held_bytes(&stream, sent as u64);
    assert!(
        held <= 2 * CAP,
        "server holds {held} bytes with a {CAP}-byte cap"
    );
    stream.set_nonblocking(false).unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    let mut echo = Vec::with_capacity(sent);
    (&stream).read_to_end(&mut echo).expect("read echo");
    let chunk = payload(1 << 20, 99);
    let expected: Vec<u8> = chunk.iter().copied().cycle().take(sent).collect();
    assert!(
        echo == expected,
        "echo differs ({} of {sent} bytes back)",
        echo.len()
    );
    let stopped = server.stop();
    assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
    let most = uring_most_unsent(&stopped.stderr);
    assert!(
        most <= 2 * CAP,
        "most unsent echo {most} bytes with a {CAP}-byte cap"
    );
    assert!(
        most >= CAP / 2,
        "the cap was never approached: {most} bytes"
    );
}

/// 200 clients echo 1 MiB each at once through a ring of 16 provided buffers, with
/// incremental and with whole buffers: the ring runs dry every turn, so the turn submits
/// its sends early to get their buffers back and re-arms the starved recvs a few at a
/// time, oldest first. Every byte comes back, in order, to every client.
#[test]
fn uring_one_mib_across_two_hundred_connections_through_a_small_ring() {
    const CLIENTS: usize = 200;
    const SIZE: usize = 1 << 20;
    let _heavy = heavy();
    for whole in [false, true] {
        let server = Server::start_with("uring", &["--workers", "1"], |command| {
            command.env("ECHOLAB_URING_BUFFERS", "16");
            if whole {
                command.env("ECHOLAB_URING_WHOLE_BUFFERS", "1");
            }
        });
        echo_in_parallel(&server, CLIENTS, SIZE, 2000);
        let stopped = server.stop();
        assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
        let total = (CLIENTS * SIZE) as u64;
        assert_eq!(count(&stopped.summary, "bytes_in"), total, "whole={whole}");
        assert_eq!(count(&stopped.summary, "bytes_out"), total, "whole={whole}");
        assert_eq!(
            reason_count(&stopped.summary, "closed", "client_closed"),
            CLIENTS as u64,
            "whole={whole}"
        );
        let early = uring_counter(&stopped.stderr, "early submits");
        assert!(
            early > 0,
            "the ring never ran dry (whole={whole}): {}",
            stopped.stderr
        );
    }
}

/// `load --engine uring` verifies 1 MiB echoes where the kernel put them, in incremental
/// 64 KiB buffers and in the whole 8 KiB buffers of older kernels: every request
/// completes, every byte is verified, no mismatch.
#[test]
fn load_uring_engine_one_mib_exact_with_incremental_and_whole_buffers() {
    const CONNECTIONS: u64 = 20;
    const REQUESTS: u64 = 3;
    const SIZE: u64 = 1 << 20;
    let _heavy = heavy();
    let server = Server::start("epoll", &["--workers", "1"]);
    for whole in [false, true] {
        let dir = out_dir(&format!("uring-engine-1mib-whole-{whole}"));
        let mut command = Command::new(BIN);
        if whole {
            command.env("ECHOLAB_URING_WHOLE_BUFFERS", "1");
        }
        command.args([
            "load",
            "--engine",
            "uring",
            "--target",
            &server.addr.to_string(),
            "--connections",
            &CONNECTIONS.to_string(),
            "--requests",
            &REQUESTS.to_string(),
            "--size",
            "1MiB",
            "--out",
            dir.to_str().unwrap(),
        ]);
        let out = output_within(&mut command, LOAD_LIMIT);
        assert!(
            out.status.success(),
            "whole={whole}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary = read_json(&dir.join("summary.json"));
        let total = CONNECTIONS * REQUESTS;
        assert_eq!(summary["requests_completed"], total, "whole={whole}");
        assert_eq!(summary["mismatches"], 0, "whole={whole}");
        assert_eq!(summary["bytes_received"], total * SIZE, "whole={whole}");
    }
    server.stop();
}

/// The server's threads that are io_uring submission-queue pollers (`iou-sqp-PID`).
fn sq_pollers(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the server's threads")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.starts_with("iou-sqp-"))
        .count()
}

/// `--sqpoll`: each worker's ring is drained by a kernel thread of its own (one poller
/// per worker, none without the flag), and 64 KiB echoes from 16 clients at once come
/// back exact through it, every byte counted and every connection closed by its client.
#[test]
fn uring_sqpoll_gives_each_ring_a_poller_and_echoes_exact() {
    const CLIENTS: usize = 16;
    const SIZE: usize = 64 << 10;
    let _heavy = heavy();
    for (flags, pollers) in [
        (&["--workers", "2"][..], 0),
        (&["--workers", "2", "--sqpoll"][..], 2),
    ] {
        let server = Server::start("uring", flags);
        echo_in_parallel(&server, CLIENTS, SIZE, 2000);
        assert_eq!(sq_pollers(server.pid()), pollers, "{flags:?}");
        let stopped = server.stop();
        assert!(stopped.status.success(), "stderr: {}", stopped.stderr);
        let total = (CLIENTS * SIZE) as u64;
        assert_eq!(count(&stopped.summary, "bytes_in"), total, "{flags:?}");
        assert_eq!(count(&stopped.summary, "bytes_out"), total, "{flags:?}");
        assert_eq!(
            reason_count(&stopped.summary, "closed", "client_closed"),
            CLIENTS as u64,
            "{flags:?}"
        );
    }
}
