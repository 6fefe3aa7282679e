//! What counting costs one thread, without a load generator's noise: a 64-byte echo over
//! loopback TCP within one thread (write, read, write back, read: four system calls and
//! the TCP stack's work, about what a request costs a server), timed in the thread's own
//! CPU time with no counters, with what `echolab run` counts by default (context
//! switches; /proc/PID/io is read only at the ends) and with every system call counted
//! too (ECHOLAB_COUNT_SYSCALLS=1); the three interleaved, round after round. Run it
//! without ECHOLAB_COUNT_SYSCALLS set.
//!
//!     cargo run --release --example counting_overhead -- [ROUNDS] [ECHOES]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use echolab::experiment::request_cost::Counting;

fn thread_cpu_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn echoes(n: usize, client: &mut TcpStream, server: &mut TcpStream) -> f64 {
    let mut buf = [7u8; 64];
    let start = thread_cpu_ns();
    for _ in 0..n {
        client.write_all(&buf).unwrap();
        server.read_exact(&mut buf).unwrap();
        server.write_all(&buf).unwrap();
        client.read_exact(&mut buf).unwrap();
    }
    (thread_cpu_ns() - start) as f64 / n as f64
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = args.first().copied().unwrap_or(10);
    let n = args.get(1).copied().unwrap_or(200_000);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.set_nodelay(true).unwrap();
    server.set_nodelay(true).unwrap();
    echoes(n / 10, &mut client, &mut server);
    let modes = ["none", "switches", "every"];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); 2];
    for round in 0..rounds {
        let mut ns = [0.0; 3];
        // The order turns each round so slow drifts fall on every mode alike.
        for k in 0..3 {
            let mode = (round + k) % 3;
            let counting = match mode {
                0 => None,
                1 => Some(Counting::start(std::process::id()).unwrap()),
                _ => Some(Counting::start_every(std::process::id()).unwrap()),
            };
            ns[mode] = echoes(n, &mut client, &mut server);
            drop(counting);
        }
        println!(
            "round {}: {} {:.0} ns, {} {:.0} ns, {} {:.0} ns per echo",
            round + 1,
            modes[0],
            ns[0],
            modes[1],
            ns[1],
            modes[2],
            ns[2]
        );
        ratios[0].push(ns[1] / ns[0]);
        ratios[1].push(ns[2] / ns[0]);
    }
    for (name, mut r) in ["switches", "every"].into_iter().zip(ratios) {
        r.sort_by(f64::total_cmp);
        println!(
            "{name}/none CPU per echo: median {:.3} (lowest {:.3}, highest {:.3}, {} rounds)",
            r[r.len() / 2],
            r[0],
            r[r.len() - 1],
            r.len()
        );
    }
}
