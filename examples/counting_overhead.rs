//! What each way of counting a server's system calls costs one thread, without a load
//! generator's noise: a 64-byte echo over loopback TCP within one thread (write, read,
//! write back, read: four system calls and the TCP stack's work, about what a request
//! costs a server), timed in the thread's own CPU time, the modes interleaved round
//! after round (the order turns each round):
//!
//! - none: no counter;
//! - switches: the two `sched/sched_switch` counters alone (ECHOLAB_COUNT_SYSCALLS=0);
//! - sampled: switches, and the system calls in windows (what `echolab run` does: 10 ms
//!   every 200 ms); s1000/50 and s1000/10: 50 or 10 ms every second;
//! - every: switches and every system call over the whole time (ECHOLAB_COUNT_SYSCALLS=1:
//!   four `raw_syscalls/sys_enter` counters, three of them filtered);
//! - total: one unfiltered `raw_syscalls/sys_enter` counter;
//! - idle: the same counter opened but disabled: the kernel's slow path for every system
//!   call (TIF_SYSCALL_TRACEPOINT) without the counting;
//! - named: the per-call tracepoints `syscalls/sys_enter_{read,write,sendto,recvfrom}`.
//!
//!     cargo run --release --example counting_overhead -- [ROUNDS] [ECHOES]
//!
//! The echo thread pins itself to CPU 0 while it runs.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use echolab::experiment::measurement::request_cost::{Counting, Scaling};
use echolab::sys::perf::{tracepoint_ids, Counter};
use echolab::sys::thread_cpu_ns;

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

const MODES: [&str; 9] = [
    "none", "switches", "sampled", "s1000/50", "s1000/10", "every", "total", "idle", "named",
];

/// What mode `mode` holds open while the echoes run.
type Held = Box<dyn std::any::Any>;

fn hold(mode: usize, ids: &[u64]) -> Option<Held> {
    let (pid, tid) = (std::process::id(), {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as u32 }
    });
    let open = |id: u64| Counter::tracepoint(tid, id, None).unwrap();
    Some(match MODES[mode] {
        "none" => return None,
        "switches" => {
            std::env::set_var("ECHOLAB_COUNT_SYSCALLS", "0");
            let c = Counting::start(pid).unwrap();
            std::env::remove_var("ECHOLAB_COUNT_SYSCALLS");
            Box::new(c)
        }
        "sampled" => Box::new(Counting::start_sampled(pid).unwrap()),
        "s1000/50" => {
            Box::new(Counting::start_windows(pid, ms(1000), ms(50), Scaling::Time).unwrap())
        }
        "s1000/10" => {
            Box::new(Counting::start_windows(pid, ms(1000), ms(10), Scaling::Time).unwrap())
        }
        "every" => Box::new(Counting::start_every(pid).unwrap()),
        "total" => Box::new(open(ids[0])),
        "idle" => {
            let c = open(ids[0]);
            c.disable().unwrap();
            Box::new(c)
        }
        _ => Box::new(ids[1..].iter().map(|&id| open(id)).collect::<Vec<_>>()),
    })
}

/// Pins this thread to `cpu`, or lets it run on any CPU.
fn pin(cpu: Option<usize>) {
    // SAFETY: an all-zero cpu_set_t is an empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for c in cpu.map_or(0..cpus, |c| c..c + 1) {
        // SAFETY: c is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: set is a valid cpu_set_t of the size given.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
}

fn ms(n: u64) -> std::time::Duration {
    std::time::Duration::from_millis(n)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = args.first().copied().unwrap_or(10);
    let n = args.get(1).copied().unwrap_or(100_000);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.set_nodelay(true).unwrap();
    server.set_nodelay(true).unwrap();
    echoes(n / 10, &mut client, &mut server);
    let ids = tracepoint_ids(&[
        "raw_syscalls/sys_enter",
        "syscalls/sys_enter_read",
        "syscalls/sys_enter_write",
        "syscalls/sys_enter_sendto",
        "syscalls/sys_enter_recvfrom",
    ])
    .expect("tracefs (root)");
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
    for round in 0..rounds {
        let mut ns = [0.0; MODES.len()];
        for k in 0..MODES.len() {
            let mode = (round + k) % MODES.len();
            // The counting threads start on any CPU; only the echo runs on CPU 0, as a
            // server pinned apart from the runner does.
            pin(None);
            let held = hold(mode, &ids);
            pin(Some(0));
            ns[mode] = echoes(n, &mut client, &mut server);
            drop(held);
        }
        let line: Vec<String> = MODES
            .iter()
            .zip(ns)
            .map(|(m, v)| format!("{m} {v:.0}"))
            .collect();
        println!("round {}: {} ns per echo", round + 1, line.join(", "));
        for (r, v) in ratios.iter_mut().zip(ns) {
            r.push(v / ns[0]);
        }
    }
    for (name, mut r) in MODES.into_iter().zip(ratios).skip(1) {
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
