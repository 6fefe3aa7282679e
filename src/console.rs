//! Console output that never panics.
//!
//! `println!` and `eprintln!` panic when the stream cannot be written (stdout on a full disk,
//! a closed pipe, `2>/dev/full`). Every verb writes through [`outln!`](crate::outln) and
//! [`errln!`](crate::errln) instead: a failed write is reported once (on stderr, if that
//! works) and otherwise ignored, so a broken console never turns a good run into a failure.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout and flushes it (scripts wait for lines such as `listening on ...`).
pub fn write_out(args: fmt::Arguments) {
    let mut stdout = io::stdout().lock();
    let result = stdout.write_fmt(args).and_then(|()| stdout.flush());
    if let Err(error) = result {
        if !STDOUT_FAILED.swap(true, Ordering::Relaxed) {
            write_err(format_args!("echolab: cannot write to stdout: {error}\n"));
        }
    }
}

/// Writes to stderr; if stderr itself fails there is nowhere left to say so.
pub fn write_err(args: fmt::Arguments) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `print!` that never panics.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::console::write_out(format_args!($($arg)*)) };
}

/// `println!` that never panics.
#[macro_export]
macro_rules! outln {
    () => { $crate::console::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => { $crate::console::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    () => { $crate::console::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}
