//! Counts a running process tree's system calls and context switches the way
//! `echolab run` does (src/experiment/request_cost.rs), for a while, then prints them:
//! what scripts/request-cost-overhead.sh attaches to a server to measure what counting costs.
//!
//!     cargo run --release --example count_calls -- PID SECONDS

use std::time::Duration;

use echolab::experiment::request_cost::Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(pid), Some(seconds)) = (
        args.first().and_then(|p| p.parse::<u32>().ok()),
        args.get(1).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        eprintln!("usage: count_calls PID SECONDS");
        std::process::exit(2);
    };
    let counting = match Counting::start(pid) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("count_calls: cannot count process {pid}: {e}");
            std::process::exit(1);
        }
    };
    std::thread::sleep(Duration::from_secs_f64(seconds));
    match counting.read() {
        Ok(c) => println!(
            "syscalls={} wait={} read={} write={} voluntary={} involuntary={}",
            c.syscalls,
            c.wait,
            c.read,
            c.write,
            c.voluntary(),
            c.involuntary
        ),
        Err(e) => {
            eprintln!("count_calls: cannot read the counters: {e}");
            std::process::exit(1);
        }
    }
}
