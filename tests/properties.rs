//! Property tests (proptest): the scenario parser never panics and answers any value of
//! any key with a scenario or an error that names its line; the size and duration parsers
//! never panic and read back what they print; the echo state machine of the readiness
//! models gives every byte back exactly under random partial reads and writes.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use echolab::scenario::{self, LoadOptions, ServerOptions};
use echolab::server::counters::{CloseReason, ServerConnRecord};
use echolab::server::echo::{EchoConn, Ready, Scratch};
use echolab::units::{parse_duration, parse_size};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary text, TOML-ish or not: Ok or Err, never a panic.
    #[test]
    fn the_scenario_parser_never_panics(text in "(\\[?[a-z_.]{0,12}\\]?( = )?(\"[^\"]{0,8}\"|[0-9eE.+-]{0,8}|\\[[0-9, ]{0,8}\\]|\\{[a-z =0-9,]{0,12}\\})?\n){0,8}") {
        let _ = scenario::parse("p.toml", "p", &text);
    }

    /// Any value for any key: a scenario, or an error pointing at a line and column.
    #[test]
    fn any_value_of_any_key_is_accepted_or_located(
        (table, key) in prop::sample::select(keys()),
        value in value_text(),
    ) {
        let text = scenario_with(table, key, &value);
        if let Err(e) = scenario::parse("p.toml", "p", &text) {
            let message = format!("{e:#}");
            prop_assert!(located(&message), "{text}\n=> {message}");
        }
    }

    #[test]
    fn the_unit_parsers_never_panic(text in "\\PC{0,16}") {
        let _ = parse_size(&text);
        let _ = parse_duration(&text);
    }

    #[test]
    fn sizes_and_durations_read_back(n in 0u64..1 << 40, unit in 0usize..4) {
        let (suffix, factor) = [("", 1u64), ("KiB", 1 << 10), ("MiB", 1 << 20), ("B", 1)][unit];
        let n = n >> (10 * unit.min(2));
        prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(n * factor));
        let ms = n % 1_000_000_000;
        prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
    }
}

/// The values at the edges, for every key, every time (the random search above may miss
/// one): an empty string, zero, a negative, huge and fractional numbers, empty
/// collections. Each is a scenario or an error that names its line.
#[test]
fn edge_values_of_every_key_are_accepted_or_located() {
    const EDGES: [&str; 16] = [
        "\"\"",
        "0",
        "-1",
        "0.5",
        "-0.0",
        "1e30",
        "9223372036854775807",
        "\"0\"",
        "\"0s\"",
        "\"0B\"",
        "\"x\"",
        "true",
        "[]",
        "[0]",
        "{}",
        "{ from = 0, to = 0 }",
    ];
    let mut unlocated = Vec::new();
    for (table, key) in keys() {
        for value in EDGES {
            let text = scenario_with(table, key, value);
            if let Err(e) = scenario::parse("p.toml", "p", &text) {
                let message = format!("{e:#}");
                if !located(&message) {
                    unlocated.push(format!("[{table}] {key} = {value} => {message}"));
                }
            }
        }
    }
    assert!(
        unlocated.is_empty(),
        "errors without a line:\n{}",
        unlocated.join("\n")
    );
}

/// Whether `message` points at a line of the scenario.
fn located(message: &str) -> bool {
    message.starts_with("p.toml: line ")
}

/// The errors found after the file is parsed, in checks that take two keys together or a
/// key out of its place, named no line: each now points at the key it refuses.
#[test]
fn errors_found_after_parsing_name_the_keys_line() {
    let poll = "models = [\"poll\"]\n[load]\nrequests = 1\n";
    let cases = [
        (
            format!("{poll}[server]\ncommand = [\"x\", \"{{port}}\"]\n"),
            5,
            "[server] cannot have `command`; it belongs in a [model.NAME] table",
        ),
        (
            format!("{poll}[server]\nbase = \"epoll\"\n"),
            5,
            "[server] cannot have `base` (= epoll); it belongs in a [model.NAME] table",
        ),
        (
            format!("{poll}hold_together = \"1s\"\n"),
            4,
            "[load] hold_together needs connect_rate (the hold covers the connection ramp)",
        ),
        (
            format!("{poll}hold = \"1s\"\nhold_together = \"1s\"\n"),
            5,
            "[load] hold and hold_together are mutually exclusive",
        ),
        (
            format!("{poll}rate = 10\ndelay = \"1ms\"\n"),
            5,
            "[load] rate (open loop) and delay (closed loop) are mutually exclusive",
        ),
        (
            format!("{poll}message = \"hi\"\npayload_file = \"p.bin\"\n"),
            5,
            "[load] size (or a size sweep), message and payload_file are mutually exclusive",
        ),
        (
            "models = []\n[load]\nrequests = 1\n".to_string(),
            1,
            "`models` is empty: name at least one model",
        ),
    ];
    for (text, line, message) in cases {
        let key_line = text.lines().nth(line - 1).unwrap();
        let column = key_line.find(" = ").unwrap() + 4;
        let Err(error) = scenario::parse("p.toml", "p", &text) else {
            panic!("accepted: {text}");
        };
        assert_eq!(
            format!("{error:#}"),
            format!("p.toml: line {line}, column {column}: {message}\n  | {key_line}"),
            "{text}"
        );
    }
}

/// A scenario of one poll step with `key = value` in `table` ("" is the top level).
fn scenario_with(table: &str, key: &str, value: &str) -> String {
    match table {
        "" => format!("{key} = {value}\nmodels = [\"poll\"]\n[load]\nrequests = 1\n"),
        "load" => format!("models = [\"poll\"]\n[load]\nrequests = 1\n{key} = {value}\n"),
        _ => format!("models = [\"poll\"]\n[load]\nrequests = 1\n[{table}]\n{key} = {value}\n"),
    }
}

/// Every key a scenario may hold, by table ("" is the top level): [load]'s and [server]'s
/// from their declarations, the top level's and the sweep's axes here.
fn keys() -> Vec<(&'static str, &'static str)> {
    let top = ["repetitions", "step_timeout"].map(|k| ("", k));
    let sweep = ["connections", "size", "delay", "workers"].map(|k| ("sweep", k));
    let load = LoadOptions::KEYS.iter().map(|&k| ("load", k));
    let server = ServerOptions::KEYS.iter().map(|&k| ("server", k));
    top.into_iter()
        .chain(load)
        .chain(server)
        .chain(sweep)
        .collect()
}

/// A TOML value as text: numbers of every size and sign, strings with units and without,
/// booleans, arrays and tables.
fn value_text() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..100_000).prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("TOML has no NaN literal here", |f| f.is_finite())
            .prop_map(|f| format!("{f:?}")),
        Just("1e30".to_string()),
        Just("-0.0".to_string()),
    ];
    let string = prop_oneof![
        (
            "[0-9]{1,22}",
            prop::sample::select(vec![
                "", "ms", "s", "us", "m", "h", "KiB", "MiB", "GiB", "B", "x"
            ])
        )
            .prop_map(|(n, u)| format!("\"{n}{u}\"")),
        "\"[ -~&&[^\"\\\\]]{0,12}\"".prop_map(|s| s),
    ];
    let scalar = prop_oneof![number, string, Just("true".to_string())];
    prop_oneof![
        3 => scalar.clone(),
        1 => prop::collection::vec(scalar.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        1 => (scalar.clone(), scalar).prop_map(|(a, b)| format!("{{ from = {a}, to = {b} }}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One connection's echo state machine (`EchoConn::serve_ready`, as select, poll and
    /// epoll drive it) over a socketpair with tiny kernel buffers: random write and read
    /// sizes on the client side, random readiness reports and cap on the server side.
    /// Every byte comes back in order, the connection closes as `ClientClosed` once the
    /// client half-closed and all is echoed, and its counts equal the bytes sent.
    #[test]
    fn the_echo_state_machine_returns_every_byte(
        data in prop::collection::vec(any::<u8>(), 1..200_000),
        buffer in 1024usize..16_384,
        cap in 1usize..65_536,
        steps in prop::collection::vec((1usize..20_000, 1usize..20_000, any::<bool>(), any::<bool>()), 1..64),
    ) {
        let (mut client, server) = UnixStream::pair().unwrap();
        for s in [&client, &server] {
            let sock = socket2::SockRef::from(s);
            sock.set_send_buffer_size(buffer).unwrap();
            sock.set_recv_buffer_size(buffer).unwrap();
            s.set_nonblocking(true).unwrap();
        }
        let peer = "127.0.0.1:1".parse().unwrap();
        let mut conn = EchoConn::new(OwnedFd::from(server), ServerConnRecord::new(peer));
        let mut scratch = Scratch::new();
        let (mut written, mut echoed, mut half_closed) = (0usize, Vec::new(), false);
        let mut closed = false;
        let mut buf = vec![0u8; 20_000];
        for round in 0.. {
            prop_assert!(round < 1_000_000, "no progress: {} of {} B echoed", echoed.len(), data.len());
            let (write_len, read_len, readable, writable) = steps[round % steps.len()];
            if written < data.len() {
                let end = (written + write_len).min(data.len());
                match client.write(&data[written..end]) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("client write: {e}"),
                }
            } else if !half_closed {
                client.shutdown(Shutdown::Write).unwrap();
                half_closed = true;
            }
            // Every few rounds both are reported, as a level-triggered loop would; every other
            // round a short read ends the turn, as under level triggering.
            let both = round % 3 == 0;
            if !closed {
                match conn.serve_ready(Ready { readable: readable || both, writable: writable || both, short_read_drains: round % 2 == 1 }, &mut scratch, cap) {
                    Ok(_) => {}
                    Err(CloseReason::ClientClosed) => closed = true,
                    Err(other) => panic!("closed as {other:?}"),
                }
            }
            match client.read(&mut buf[..read_len]) {
                Ok(0) => break,
                Ok(n) => echoed.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("client read: {e}"),
            }
            if closed && echoed.len() == data.len() {
                break;
            }
        }
        prop_assert!(closed, "the connection never finished");
        prop_assert_eq!(echoed.len(), data.len());
        prop_assert!(echoed == data, "the echo differs from what was sent");
        prop_assert_eq!(conn.record.bytes_in, data.len() as u64);
        prop_assert_eq!(conn.record.bytes_out, data.len() as u64);
    }
}
