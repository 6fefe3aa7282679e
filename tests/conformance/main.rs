//! The conformance suite: every server model must pass every test here.
//!
//! `conformance!` instantiates the whole suite once per model (or model variant with
//! its own server arguments), as a module named after it, so one model's tests run
//! with `cargo test --test conformance select::` and one test across models with
//! `cargo test --test conformance idle_10k`.
//! Model-specific tests (select's FD_SETSIZE, threads' spawn failure) sit at the end.

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use common::*;

mod echo;
mod limits;
mod models;
mod serve;
use echo::*;
use limits::*;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

macro_rules! conformance {
    ($($name:ident: $model:literal [$($arg:literal),* $(,)?]),* $(,)?) => {
        $(mod $name {
            pub(super) const VARIANT: super::Variant = super::Variant {
                name: stringify!($name),
                model: $model,
                args: &[$($arg),*],
            };

            #[test]
            fn echo_1b_1conn() {
                super::echo_concurrent(&VARIANT, 1, 1);
            }
            #[test]
            fn echo_1b_100conns() {
                super::echo_concurrent(&VARIANT, 100, 1);
            }
            #[test]
            fn echo_1b_1000conns() {
                super::echo_concurrent(&VARIANT, 1000, 1);
            }
            #[test]
            fn echo_1kib_1conn() {
                super::echo_concurrent(&VARIANT, 1, super::KIB);
            }
            #[test]
            fn echo_1kib_100conns() {
                super::echo_concurrent(&VARIANT, 100, super::KIB);
            }
            #[test]
            fn echo_1kib_1000conns() {
                super::echo_concurrent(&VARIANT, 1000, super::KIB);
            }
            #[test]
            fn echo_1mib_1conn() {
                super::echo_concurrent(&VARIANT, 1, super::MIB);
            }
            #[test]
            fn echo_1mib_100conns() {
                super::echo_concurrent(&VARIANT, 100, super::MIB);
            }
            #[test]
            fn stream_64mib() {
                super::stream_64mib(&VARIANT);
            }
            #[test]
            fn garbage_bytes() {
                super::garbage_bytes(&VARIANT);
            }
            #[test]
            fn log_counts_per_connection() {
                super::log_counts_per_connection(&VARIANT);
            }
            #[test]
            fn half_close() {
                super::half_close(&VARIANT);
            }
            #[test]
            fn reset_mid_transfer() {
                super::reset_mid_transfer(&VARIANT);
            }
            #[test]
            fn client_never_reads() {
                super::client_never_reads(&VARIANT);
            }
            #[test]
            fn idle_10k() {
                super::idle_10k(&VARIANT);
            }
            #[test]
            fn fd_exhaustion() {
                super::fd_exhaustion(&VARIANT);
            }
            #[test]
            fn max_conns() {
                super::max_conns(&VARIANT);
            }
            #[test]
            fn idle_timeout() {
                super::idle_timeout(&VARIANT);
            }
            #[test]
            fn sigterm_summary() {
                super::sigterm_summary(&VARIANT);
            }
        })*

        /// Every variant the suite runs on.
        const VARIANTS: &[&Variant] = &[$(&$name::VARIANT),*];
    };
}

// One module per model (or model variant: `epoll_level: "epoll" ["--trigger", "level"]`).
every_variant!(conformance);

/// A model the crate adds is in every suite that runs once per variant: the shared list
/// holds each of the crate's models.
#[test]
fn every_model_has_a_variant() {
    let covered: BTreeSet<&str> = VARIANTS.iter().map(|v| v.model).collect();
    let models: BTreeSet<&str> = model_names().into_iter().collect();
    assert_eq!(covered, models);
}

/// Checks what every stopped server must show: exit status 0, the summary on stderr,
/// and a log that agrees with the summary.
fn check_stopped(model: &str, stopped: &Stopped) {
    assert!(
        stopped.status.success(),
        "{model}: exit status {:?}; stderr: {}",
        stopped.status,
        stopped.stderr
    );
    assert!(
        stopped.stderr.contains("echolab serve summary"),
        "{model}: no summary on stderr: {}",
        stopped.stderr
    );
    let summary = &stopped.summary;
    assert_eq!(
        count(summary, "accepted"),
        stopped.log.len() as u64,
        "{model}: one log row per accepted connection"
    );
    let logged_in: u64 = stopped.log.iter().map(|r| r.bytes_in).sum();
    let logged_out: u64 = stopped.log.iter().map(|r| r.bytes_out).sum();
    assert_eq!(count(summary, "bytes_in"), logged_in, "{model}: bytes_in");
    assert_eq!(
        count(summary, "bytes_out"),
        logged_out,
        "{model}: bytes_out"
    );
}
