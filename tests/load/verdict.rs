//! What a load passes or fails on: nothing echoed, every echo wrong, an echo still arriving at the end.

use super::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Output;
use std::time::Duration;

use super::common::*;
use serde_json::Value;

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
