//! Console output that never panics.
//!
//! `println!` and `eprintln!` panic when the stream cannot be written (stdout on a full disk,
//! a closed pipe, `2>/dev/full`). Every verb writes through [`outln!`](crate::outln) and
//! [`errln!`](crate::errln) instead: a failed write is reported once (on stderr, if that
//! works) and otherwise ignored, so a broken console never turns a good run into a failure.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
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

/// Exit code of a usage error (as clap's own parse errors).
pub const EXIT_USAGE: u8 = 2;

/// Prints a usage error the way clap does and returns exit code 2. `usage` is the verb
/// and its arguments as each verb's module declares them (`run [OPTIONS] [SCENARIO]`).
pub fn usage_error(usage: &str, message: &str) -> ExitCode {
    write_err(format_args!("{}\n", usage_text(usage, message)));
    ExitCode::from(EXIT_USAGE)
}

fn usage_text(usage: &str, message: &str) -> String {
    format!("error: {message}\n\nUsage: echolab {usage}\n\nFor more information, try '--help'.")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_usage_error_reads_as_clap_writes_one() {
        assert_eq!(
            super::usage_text("run [OPTIONS] [SCENARIO]", "--repetitions must be at least 1"),
            "error: --repetitions must be at least 1\n\nUsage: echolab run [OPTIONS] [SCENARIO]\n\n\
             For more information, try '--help'."
        );
    }
}
