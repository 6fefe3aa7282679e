//! Clients of the server under test: echo exchanges over real sockets, deterministic
//! payloads, many connections at once, and what a closing server looks like.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::*;

/// Writes `data` on one thread while reading the echo on another; returns what came back
/// once the server closes after our half-close.
pub fn echo_stream(mut stream: TcpStream, data: &[u8]) -> Vec<u8> {
    let mut reader = stream.try_clone().expect("clone stream");
    let expected = data.len();
    let receiver = std::thread::spawn(move || {
        let mut got = Vec::with_capacity(expected);
        reader.read_to_end(&mut got).expect("read echo");
        got
    });
    stream.write_all(data).expect("write payload");
    stream.shutdown(Shutdown::Write).expect("half-close");
    receiver.join().expect("reader thread")
}

/// Sends `data` and reads exactly `data.len()` bytes back, keeping the connection open.
pub fn echo_once(stream: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    stream.write_all(data).expect("write");
    let mut got = vec![0u8; data.len()];
    stream.read_exact(&mut got).expect("read echo");
    got
}

/// Deterministic test payload: `len` bytes covering every byte value, NUL included.
pub fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

/// Serialises the tests that hold thousands of sockets, so two of them never share
/// the test process's fd limit, the ephemeral ports or the 2 CPUs. Hold the guard
/// for the whole test.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens `n` connections to `addr` (each with the 30 s read timeout of [`Server::connect`]).
/// Raises the soft fd limit first: the shell's `ulimit -n` (often 1024) must not decide.
pub fn connect_many(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    raise_fd_limit();
    (0..n)
        .map(|i| {
            let stream = TcpStream::connect(addr)
                .unwrap_or_else(|e| panic!("connection {i} of {n} to {addr} failed: {e}"));
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            stream
        })
        .collect()
}

/// Echoes `data` on an open connection in chunks, reading each chunk's echo before
/// writing the next, so blocking sockets never deadlock on full buffers. Returns the echo.
pub fn echo_chunked(stream: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    const CHUNK: usize = 64 * 1024;
    let mut got = vec![0u8; data.len()];
    for (sent, back) in data.chunks(CHUNK).zip(got.chunks_mut(CHUNK)) {
        stream.write_all(sent).expect("write chunk");
        stream.read_exact(back).expect("read the chunk's echo");
    }
    got
}

/// Expects the server to close `stream` cleanly (FIN, not a reset) without sending
/// anything more; the read timeout (30 s) bounds the wait.
pub fn expect_server_eof(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    stream
        .read_to_end(&mut rest)
        .expect("a clean close (EOF) from the server, not an error");
    assert!(
        rest.is_empty(),
        "{} unexpected bytes before EOF",
        rest.len()
    );
}

/// Half-closes and expects the server to close without sending anything more.
pub fn expect_eof_after_half_close(stream: &mut TcpStream) {
    stream.shutdown(Shutdown::Write).expect("half-close");
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("read until EOF");
    assert!(
        rest.is_empty(),
        "{} unexpected bytes after the echo",
        rest.len()
    );
}

/// What happened to a probe message sent on a connection the server may have refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The message came back byte for byte: the server serves this connection.
    Echoed,
    /// EOF or a reset: the server closed the connection (refused it or closed it).
    Closed,
}

/// Sends `message` and classifies the answer; panics on a wrong echo or a timeout.
pub fn probe(stream: &mut TcpStream, message: &[u8]) -> Probe {
    if let Err(e) = stream.write_all(message) {
        assert!(is_closed_error(&e), "probe write failed: {e}");
        return Probe::Closed;
    }
    let mut got = Vec::with_capacity(message.len());
    let mut buf = [0u8; 4096];
    while got.len() < message.len() {
        match stream.read(&mut buf) {
            Ok(0) => return Probe::Closed,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if is_closed_error(&e) => return Probe::Closed,
            Err(e) => panic!("probe read failed: {e}"),
        }
    }
    assert_eq!(got, message, "wrong echo");
    Probe::Echoed
}

fn is_closed_error(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED)
    )
}

/// Writes up to `limit` bytes of `payload(1 MiB, 99)` repeated on a non-blocking socket
/// without reading, for at most `time`, stopping once the socket has stayed full for
/// 300 ms. Returns the bytes written.
pub fn push_without_reading(stream: &TcpStream, limit: usize, time: Duration) -> usize {
    let chunk = payload(1 << 20, 99);
    let deadline = Instant::now() + time;
    let mut sent = 0;
    let mut full_since: Option<Instant> = None;
    let mut writer = stream;
    while sent < limit && Instant::now() < deadline {
        let at = sent % chunk.len();
        let want = (chunk.len() - at).min(limit - sent);
        match writer.write(&chunk[at..at + want]) {
            Ok(n) => {
                sent += n;
                full_since = None;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let since = *full_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= Duration::from_millis(300) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("push failed after {sent} bytes: {e}"),
        }
    }
    sent
}

/// A server that accepts and hands each connection to `serve` on its own thread.
pub fn fake_server(serve: fn(std::net::TcpStream)) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// Reads and never replies, holding the connection until the client closes it.
pub fn silent(mut stream: std::net::TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(std::io::Read::read(&mut stream, &mut buf), Ok(n) if n > 0) {}
}
