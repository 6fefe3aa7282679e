//! The adversarial suite: every model (and variant) against hostile clients, each case
//! asserting numbers: bytes echoed exactly, server RSS and fds bounded and back to their
//! baseline, every excess connection answered or closed, the summary agreeing with what
//! the clients did. `cargo test --test adversarial -- --ignored table` runs every case
//! on every variant and prints the Markdown table of docs/reliability.md.

#[path = "../common/mod.rs"]
mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

mod attacks;
mod consoles;
mod kills;
mod outputs;
mod overload;
use attacks::*;
use overload::*;

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

/// A variant's server arguments in this suite: select holds at most FD_SETSIZE
/// connections, so against thousands of hostile clients it runs with an idle timeout.
macro_rules! adversarial_args {
    (select []) => {
        &["--idle-timeout", "1s"]
    };
    ($name:ident [$($arg:literal),*]) => {
        &[$($arg),*]
    };
}

macro_rules! adversarial {
    ($($name:ident: $model:literal [$($arg:literal),* $(,)?]),* $(,)?) => {
        $(mod $name {
            pub const VARIANT: super::Variant = super::Variant {
                name: stringify!($name),
                model: $model,
                args: adversarial_args!($name [$($arg),*]),
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
        })*

        /// Every variant the suite runs on, in the table's order.
        const VARIANTS: &[&Variant] = &[$(&$name::VARIANT),*];
    };
}

// One module per model or variant, as in tests/conformance.
every_variant!(adversarial);

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
        if !common::is_root() {
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
