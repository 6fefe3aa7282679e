//! The cost model, pure: a model's unit costs and a machine in, the most connections
//! each limit lets it hold, the one that binds first, the requests per second its
//! cores serve at a connection count, and whether a workload fits. No I/O here: the
//! costs come from [`super::costs`], the machine from [`super::machine`].

use serde::Serialize;

/// select(2)'s fd_set: select refuses every fd at or above it, whatever the fd limit.
pub const FD_SETSIZE: f64 = 1024.0;

/// Memory maps each thread takes: its stack and guard page, and the signal stack and
/// guard page Rust's runtime gives every thread (max-clients: no thread could start at
/// 16 118 threads against `vm.max_map_count` 65 530, 4.07 maps a thread).
pub const MAPS_PER_THREAD: f64 = 4.0;

/// What binds a model's connections or its requests per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The connections' memory: the kernel's socket objects and the server's own.
    Memory,
    /// Open fds: the fd limit per process times the server's processes.
    Fds,
    /// select's FD_SETSIZE (1024 fds per process).
    FdSetsize,
    /// Threads the machine may start (pid_max, threads-max).
    Threads,
    /// Threads' stacks as memory maps (`vm.max_map_count` per process).
    Stacks,
    /// The server's cores, at its CPU per request as it grows with the connections.
    Cpu,
}

impl Limit {
    pub const ALL: [Limit; 6] = [
        Limit::Memory,
        Limit::Fds,
        Limit::FdSetsize,
        Limit::Threads,
        Limit::Stacks,
        Limit::Cpu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::Fds => "fds",
            Limit::FdSetsize => "fd_setsize",
            Limit::Threads => "threads",
            Limit::Stacks => "stacks",
            Limit::Cpu => "cpu",
        }
    }
}

/// One model's unit costs as plain numbers (one side of their intervals).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Costs {
    /// The server's user-space memory per held connection.
    pub user_bytes: f64,
    /// The kernel's memory per connection, both ends together.
    pub kernel_bytes: f64,
    /// The load generators' user-space memory per connection.
    pub load_bytes: f64,
    /// The server's fds: a fixed few per process and so many per connection.
    pub base_fds: f64,
    pub fds_per_conn: f64,
    /// The server's threads: a fixed few per process and so many per connection.
    pub base_threads: f64,
    pub threads_per_conn: f64,
    /// The server's CPU per request arriving alone (a trickle: each wait returns one and
    /// pays its scan), `cpu_us + cpu_us_per_conn × connections` µs: what a workload's
    /// connections at a trickle cost the cores.
    pub cpu_us: f64,
    pub cpu_us_per_conn: f64,
    /// The same saturated (each wait returns many and they share its scan): what sets the
    /// most requests per second the cores serve.
    pub saturated_us: f64,
    pub saturated_us_per_conn: f64,
    /// select: at most FD_SETSIZE fds a process.
    pub fd_set: bool,
    /// Whether the server can run as several processes on one port.
    pub multi_process: bool,
}

impl Costs {
    /// The server's CPU per request with `connections` in each of its processes, in µs
    /// (a process's scan covers its own fds).
    pub fn cpu_us_at(&self, connections: f64) -> f64 {
        (self.cpu_us + self.cpu_us_per_conn * connections).max(0.0)
    }

    /// The server's CPU per request saturated, with `connections` in each process, in µs.
    pub fn saturated_us_at(&self, connections: f64) -> f64 {
        (self.saturated_us + self.saturated_us_per_conn * connections).max(0.0)
    }

    /// The server processes a machine runs of this model: select runs as one.
    pub fn processes(&self, machine: &Machine) -> f64 {
        if self.multi_process {
            machine.processes.max(1) as f64
        } else {
            1.0
        }
    }

    /// The memory one connection takes on the machine: the server's end, and with
    /// `with_load` the client's end and the generators' share too. The kernel's share
    /// is measured for both ends together; the two ends' socket objects are alike
    /// (docs/scale.md itemises them), so one end is half.
    pub fn bytes_per_conn(&self, with_load: bool) -> f64 {
        if with_load {
            self.user_bytes + self.kernel_bytes + self.load_bytes
        } else {
            self.user_bytes + self.kernel_bytes / 2.0
        }
    }
}

/// The machine a plan is made for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Machine {
    /// Cores the server may use.
    pub cores: f64,
    /// Memory the connections may take.
    pub memory_bytes: u64,
    /// Fds per process (RLIMIT_NOFILE).
    pub fd_limit: u64,
    /// Server processes (one port shared); select runs as one.
    pub processes: u64,
    /// Threads the machine may still start: min(pid_max, threads-max) less those running.
    pub threads: u64,
    /// `vm.max_map_count`: memory maps per process.
    pub max_map_count: u64,
    /// The load generators run on this machine too: both ends' memory counts.
    pub with_load: bool,
}

/// A workload: so many connections, requests per second in all and per connection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    pub connections: u64,
    /// Requests per second over all the connections.
    pub rate: f64,
    /// Requests per second each connection adds (a trickle: c1m's one a minute).
    pub per_conn_rate: f64,
}

impl Workload {
    /// The requests per second at `connections`.
    pub fn rate_at(&self, connections: f64) -> f64 {
        self.rate + self.per_conn_rate * connections
    }
}

/// The most connections one limit lets a model hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ceiling {
    pub limit: Limit,
    pub connections: f64,
}

/// Every limit that applies to a model with `costs` on `machine` under `workload`'s
/// rates, each with the connections it allows (a limit that does not apply is left out).
pub fn ceilings(costs: &Costs, machine: &Machine, workload: &Workload) -> Vec<Ceiling> {
    let processes = costs.processes(machine);
    let mut out = Vec::new();
    let per_conn = costs.bytes_per_conn(machine.with_load);
    if per_conn > 0.0 {
        out.push(Ceiling {
            limit: Limit::Memory,
            connections: machine.memory_bytes as f64 / per_conn,
        });
    }
    let fds_per_conn = costs.fds_per_conn.max(f64::MIN_POSITIVE);
    let fds = |per_process: f64| processes * ((per_process - costs.base_fds) / fds_per_conn);
    out.push(Ceiling {
        limit: Limit::Fds,
        connections: fds(machine.fd_limit as f64),
    });
    if costs.fd_set {
        out.push(Ceiling {
            limit: Limit::FdSetsize,
            connections: fds(FD_SETSIZE),
        });
    }
    if costs.threads_per_conn > 0.0 {
        let free = machine.threads as f64 - processes * costs.base_threads;
        out.push(Ceiling {
            limit: Limit::Threads,
            connections: free / costs.threads_per_conn,
        });
        out.push(Ceiling {
            limit: Limit::Stacks,
            connections: processes * machine.max_map_count as f64
                / (MAPS_PER_THREAD * costs.threads_per_conn),
        });
    }
    if let Some(n) = cpu_ceiling(costs, machine, workload) {
        out.push(Ceiling {
            limit: Limit::Cpu,
            connections: n,
        });
    }
    for c in &mut out {
        c.connections = c.connections.max(0.0).floor();
    }
    out
}

/// The most connections whose requests the cores serve: the largest n with
/// `(a + b·n/p) × (R + r·n) ≤ cores × 10⁶` µs/s over p processes. None when the
/// connections ask no requests (then n is not bounded by CPU).
fn cpu_ceiling(costs: &Costs, machine: &Machine, workload: &Workload) -> Option<f64> {
    let a = costs.cpu_us.max(0.0);
    let b = costs.cpu_us_per_conn.max(0.0) / costs.processes(machine);
    let (rate, per_conn) = (workload.rate.max(0.0), workload.per_conn_rate.max(0.0));
    let budget = machine.cores * 1e6;
    // b·r·n² + (a·r + b·R)·n + (a·R − budget) = 0, the positive root.
    let (qa, qb, qc) = (b * per_conn, a * per_conn + b * rate, a * rate - budget);
    if qc > 0.0 {
        return Some(0.0);
    }
    if qa > 0.0 {
        Some((-qb + (qb * qb - 4.0 * qa * qc).sqrt()) / (2.0 * qa))
    } else if qb > 0.0 {
        Some(-qc / qb)
    } else {
        None
    }
}

/// The ceiling that binds first: the fewest connections.
pub fn binding(ceilings: &[Ceiling]) -> Option<Ceiling> {
    ceilings
        .iter()
        .copied()
        .min_by(|a, b| a.connections.total_cmp(&b.connections))
}

/// The most requests per second the cores serve at `connections` (spread over the
/// machine's server processes): at the saturated cost, the waits returning many.
pub fn max_rate(costs: &Costs, machine: &Machine, connections: f64) -> f64 {
    let us = costs.saturated_us_at(connections / costs.processes(machine));
    if us > 0.0 {
        machine.cores * 1e6 / us
    } else {
        f64::INFINITY
    }
}

/// Whether a workload fits, and with how much to spare.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    pub fits: bool,
    /// How far the workload could grow before a limit binds: the smaller of the
    /// connections' and the rate's room, in % of the workload (negative: over by so much).
    pub headroom_pct: f64,
    /// What it would meet first.
    pub limit: Limit,
}

/// Checks a workload against a model's ceilings: its connections against every
/// limit, its request rate at those connections against the cores.
pub fn fit(costs: &Costs, machine: &Machine, workload: &Workload) -> Fit {
    let n = workload.connections as f64;
    // The connections' own limits, at the workload's connections and not beyond.
    let idle = Workload {
        rate: 0.0,
        per_conn_rate: 0.0,
        ..*workload
    };
    let held = binding(&ceilings(costs, machine, &idle));
    let mut room = held.map(|c| (c.connections / n.max(1.0), c.limit));
    let rate = workload.rate_at(n);
    if rate > 0.0 {
        let cpu = max_rate(costs, machine, n) / rate;
        if room.is_none_or(|(r, _)| cpu < r) {
            room = Some((cpu, Limit::Cpu));
        }
    }
    let (ratio, limit) = room.unwrap_or((f64::INFINITY, Limit::Cpu));
    Fit {
        fits: ratio >= 1.0,
        headroom_pct: (ratio - 1.0) * 100.0,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// epoll-like costs: 10 KB both ends, 200 B server, 1 fd per connection, no threads.
    fn costs() -> Costs {
        Costs {
            user_bytes: 200.0,
            kernel_bytes: 10_000.0,
            load_bytes: 800.0,
            base_fds: 10.0,
            fds_per_conn: 1.0,
            base_threads: 1.0,
            threads_per_conn: 0.0,
            cpu_us: 20.0,
            cpu_us_per_conn: 0.0,
            saturated_us: 20.0,
            saturated_us_per_conn: 0.0,
            fd_set: false,
            multi_process: true,
        }
    }

    fn machine() -> Machine {
        Machine {
            cores: 2.0,
            memory_bytes: 16 << 30,
            fd_limit: 20_000,
            processes: 1,
            threads: 32_000,
            max_map_count: 65_530,
            with_load: false,
        }
    }

    const IDLE: Workload = Workload {
        connections: 1000,
        rate: 0.0,
        per_conn_rate: 0.0,
    };

    fn bound(costs: &Costs, machine: &Machine, workload: &Workload) -> Ceiling {
        binding(&ceilings(costs, machine, workload)).expect("a ceiling")
    }

    #[test]
    fn memory_binds_with_enough_processes() {
        let m = Machine {
            processes: 1000,
            ..machine()
        };
        let c = bound(&costs(), &m, &IDLE);
        assert_eq!(c.limit, Limit::Memory);
        // 16 GiB / (200 + 5 000) B.
        assert_eq!(c.connections, (17_179_869_184.0f64 / 5_200.0).floor());
        let both = Machine {
            with_load: true,
            ..m
        };
        let c = bound(&costs(), &both, &IDLE);
        assert_eq!(c.connections, (17_179_869_184.0f64 / 11_000.0).floor());
    }

    #[test]
    fn fds_bind_one_process_and_scale_with_processes() {
        let c = bound(&costs(), &machine(), &IDLE);
        assert_eq!((c.limit, c.connections), (Limit::Fds, 19_990.0));
        let three = Machine {
            processes: 3,
            ..machine()
        };
        assert_eq!(bound(&costs(), &three, &IDLE).connections, 59_970.0);
    }

    #[test]
    fn select_stops_at_fd_setsize_in_one_process() {
        let select = Costs {
            fd_set: true,
            multi_process: false,
            base_fds: 9.0,
            ..costs()
        };
        let m = Machine {
            processes: 8,
            ..machine()
        };
        let c = bound(&select, &m, &IDLE);
        assert_eq!((c.limit, c.connections), (Limit::FdSetsize, 1015.0));
    }

    #[test]
    fn threads_stop_at_the_thread_limit() {
        let threads = Costs {
            threads_per_conn: 1.0,
            base_threads: 2.0,
            ..costs()
        };
        let m = Machine {
            processes: 4,
            threads: 32_445,
            ..machine()
        };
        let c = bound(&threads, &m, &IDLE);
        assert_eq!((c.limit, c.connections), (Limit::Threads, 32_437.0));
    }

    #[test]
    fn threads_in_one_process_stop_at_their_stacks_maps() {
        let threads = Costs {
            threads_per_conn: 1.0,
            ..costs()
        };
        let m = Machine {
            fd_limit: 1 << 20,
            ..machine()
        };
        let c = bound(&threads, &m, &IDLE);
        // 65 530 maps / 4 a thread.
        assert_eq!((c.limit, c.connections), (Limit::Stacks, 16_382.0));
    }

    #[test]
    fn a_scan_that_grows_with_the_connections_binds_the_cpu() {
        // poll at one request a minute per connection: (20 + 0.01·n) µs × n/60 = 2 × 10⁶.
        let poll = Costs {
            cpu_us_per_conn: 0.01,
            ..costs()
        };
        let m = Machine {
            fd_limit: 1 << 30,
            ..machine()
        };
        let trickle = Workload {
            per_conn_rate: 1.0 / 60.0,
            ..IDLE
        };
        let c = bound(&poll, &m, &trickle);
        assert_eq!(c.limit, Limit::Cpu);
        let n = c.connections;
        let used = |n: f64| poll.cpu_us_at(n) * n / 60.0;
        assert!(used(n) <= 2e6 && used(n + 1.0) > 2e6, "{n}");
        assert_eq!(n, 108_549.0);
        // In ten processes each scans a tenth of the connections.
        let ten = Machine { processes: 10, ..m };
        let c = bound(&poll, &ten, &trickle);
        let used = |n: f64| poll.cpu_us_at(n / 10.0) * n / 60.0;
        assert!(used(c.connections) <= 2e6 && used(c.connections + 1.0) > 2e6);
    }

    #[test]
    fn the_rate_at_a_count_is_the_cores_over_the_cost() {
        let select = Costs {
            saturated_us_per_conn: 0.08,
            ..costs()
        };
        let one = Machine {
            cores: 1.0,
            ..machine()
        };
        // 20 + 80 = 100 µs a request at 1 000: one core serves 10 000 a second.
        assert_eq!(max_rate(&select, &one, 1000.0), 10_000.0);
        assert_eq!(max_rate(&costs(), &machine(), 1000.0), 100_000.0);
        // Over four processes each scans a quarter: 20 + 20 µs.
        let four = Machine {
            processes: 4,
            ..one
        };
        let poll = Costs {
            multi_process: true,
            ..select
        };
        assert_eq!(max_rate(&poll, &four, 1000.0), 25_000.0);
    }

    #[test]
    fn saturated_costs_give_the_cores_rate_and_bind_the_cpu() {
        // Saturated epoll: 12.5 µs a request whatever the connections (20 alone); poll:
        // 5 µs and a scan shared by the requests a call returns, 0.005 µs an fd, 10 µs at
        // 1 000 (alone it pays a whole scan of 0.1 µs an fd, 120 µs).
        let epoll = Costs {
            saturated_us: 12.5,
            ..costs()
        };
        let poll = Costs {
            saturated_us: 5.0,
            saturated_us_per_conn: 0.005,
            cpu_us_per_conn: 0.1,
            ..costs()
        };
        let one = Machine {
            cores: 1.0,
            ..machine()
        };
        assert_eq!(max_rate(&epoll, &one, 1000.0), 80_000.0);
        assert_eq!(max_rate(&poll, &one, 1000.0), 100_000.0);
        // 90 000 requests/s at 1 000 connections: over epoll's core by 1/9, under poll's.
        let w = Workload {
            connections: 1000,
            rate: 90_000.0,
            per_conn_rate: 0.0,
        };
        let f = fit(&epoll, &one, &w);
        assert_eq!((f.fits, f.limit), (false, Limit::Cpu));
        assert!((f.headroom_pct + 100.0 / 9.0).abs() < 1e-9, "{f:?}");
        let f = fit(&poll, &one, &w);
        assert_eq!((f.fits, f.limit), (true, Limit::Cpu));
        assert!((f.headroom_pct - 100.0 / 9.0).abs() < 1e-9, "{f:?}");
        // A trickle's requests arrive alone and cost the cores 20 µs each: at 50 requests/s
        // a connection, 1 000 µs/s, so one core holds 1 000 before fds and memory bind.
        let trickle = Workload {
            rate: 0.0,
            per_conn_rate: 50.0,
            ..w
        };
        let c = bound(&epoll, &one, &trickle);
        assert_eq!((c.limit, c.connections), (Limit::Cpu, 1000.0));
    }

    #[test]
    fn a_workload_fits_with_the_smaller_of_its_rooms() {
        let m = machine();
        let w = Workload {
            connections: 1000,
            rate: 50_000.0,
            per_conn_rate: 0.0,
        };
        // The cores serve 100 000/s, twice the rate; fds allow 19 990, 20 times.
        let f = fit(&costs(), &m, &w);
        assert_eq!((f.fits, f.limit, f.headroom_pct), (true, Limit::Cpu, 100.0));
        let many = Workload {
            connections: 39_980,
            rate: 1000.0,
            ..w
        };
        let f = fit(&costs(), &m, &many);
        assert_eq!(
            (f.fits, f.limit, f.headroom_pct),
            (false, Limit::Fds, -50.0)
        );
    }

    #[test]
    fn a_rate_beyond_the_cores_leaves_no_connection() {
        let w = Workload { rate: 1e6, ..IDLE };
        let c = bound(&costs(), &machine(), &w);
        assert_eq!((c.limit, c.connections), (Limit::Cpu, 0.0));
    }
}
