//! Out-of-bounds inputs to `load`: usage errors, a payload that is not a file, a connect rate too slow.

use super::*;

use std::process::Command;
use std::time::Duration;

use super::common::*;

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
