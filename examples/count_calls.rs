//! Counts a running process tree's system calls and context switches the way
//! `echolab run` does (src/experiment/measurement/request_cost.rs), for a while, then prints them.
//! With `--check`, every system call is counted over the whole time too, and both are
//! printed: the sampled windows' estimate against the exact count of the same calls.
//!
//!     cargo run --release --example count_calls -- PID SECONDS [--check [PERIOD_MS WINDOW_MS]]

use std::time::Duration;

use echolab::experiment::measurement::request_cost::{Calls, Counting, Scaling};

fn print(label: &str, c: &Calls) {
    println!(
        "{label}syscalls={} wait={} read={} write={} voluntary={} involuntary={}",
        c.syscalls,
        c.wait,
        c.read,
        c.write,
        c.voluntary(),
        c.involuntary
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(pid), Some(seconds)) = (
        args.first().and_then(|p| p.parse::<u32>().ok()),
        args.get(1).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        eprintln!("usage: count_calls PID SECONDS [--check [PERIOD_MS WINDOW_MS]]");
        std::process::exit(2);
    };
    let check = args.get(2).is_some_and(|a| a == "--check");
    // After --check, other windows than the runner's: PERIOD_MS WINDOW_MS.
    let ms = |i: usize| {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .map(Duration::from_millis)
    };
    let sampled = |pid| match (ms(3), ms(4)) {
        (Some(period), Some(window)) => {
            Counting::start_windows(pid, period, window, Scaling::Segments)
        }
        _ => Counting::start_sampled(pid),
    };
    let started = if check {
        Counting::start_every(pid).and_then(|every| Ok((Some(every), sampled(pid)?)))
    } else {
        Counting::start(pid).map(|c| (None, c))
    };
    let (every, counting) = match started {
        Ok(c) => c,
        Err(e) => {
            eprintln!("count_calls: cannot count process {pid}: {e}");
            std::process::exit(1);
        }
    };
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let read = counting
        .read()
        .and_then(|c| Ok((c, every.as_ref().map(Counting::read).transpose()?)));
    match read {
        Ok((c, every)) => {
            print("", &c);
            if let Some(every) = every {
                print("exact ", &every);
            }
        }
        Err(e) => {
            eprintln!("count_calls: cannot read the counters: {e}");
            std::process::exit(1);
        }
    }
}
