//! Shared test harness, by concern: [`server`] runs `echolab serve` as a child process on
//! an ephemeral loopback port, [`client`] talks to it over real sockets, [`kernel`] reads
//! what the kernel holds (/proc, rlimits), [`skip`] is the skip policy and [`run`] runs
//! echolab's commands to their end within bounded time.
#![allow(dead_code)]

pub mod client;
pub mod kernel;
pub mod run;
pub mod server;
pub mod skip;

#[allow(unused_imports)]
pub use client::*;
#[allow(unused_imports)]
pub use kernel::*;
#[allow(unused_imports)]
pub use run::*;
#[allow(unused_imports)]
pub use server::*;
#[allow(unused_imports)]
pub use skip::*;

pub const BIN: &str = env!("CARGO_BIN_EXE_echolab");
