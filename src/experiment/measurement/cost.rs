//! What each connection costs, from snapshots taken before the load and while the
//! connections are held: the server's and the load generators' user-space memory
//! (their /proc samples), the kernel's memory (`/proc/net/sockstat` of the server's
//! namespace, `Slab` and `SUnreclaim` of /proc/meminfo), the server's CPU while it
//! holds them, and how long they took to establish.
//!
//! The hold is where a process tree has the most open fds; a connection is one fd
//! there, so the connections a figure divides by are the fds gained since before the
//! load. The arithmetic is pure and tested here; [`read_kernel`] is the only reader.

use std::fs;

use super::probe::Sample;
use crate::results::Row;

/// Fds a process tree may gain before its connections rise (start-up files) and still
/// count as before the load.
const QUIET_FDS: u64 = 32;

/// A process tree before its connections and while holding them, from its samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Held {
    /// The last sample before the fds began to rise.
    pub before: Sample,
    /// The first and last samples at the most fds: the hold begins and ends.
    pub first_at_peak: Sample,
    pub last_at_peak: Sample,
}

impl Held {
    /// Finds the hold in a tree's samples (in time order). None when its fds never rose.
    pub fn find(samples: &[Sample]) -> Option<Held> {
        let peak = samples.iter().map(|s| s.fds).max()?;
        let first = samples.iter().position(|s| s.fds == peak)?;
        let last = samples.iter().rposition(|s| s.fds == peak)?;
        let lowest = samples[..=first].iter().map(|s| s.fds).min()?;
        if peak <= lowest {
            return None;
        }
        // A process starting up opens a few fds of its own (a program exec'd in place by
        // `ip netns exec`, log files): those are not the rise of the connections. Kept
        // small, since a sample early in a fast ramp that passes for quiet is counted out.
        let quiet = lowest + ((peak - lowest) / 100).min(QUIET_FDS);
        let before = samples[..=first].iter().rposition(|s| s.fds <= quiet)?;
        Some(Held {
            before: samples[before],
            first_at_peak: samples[first],
            last_at_peak: samples[last],
        })
    }

    /// The connections held: fds gained since before the load.
    pub fn connections(&self) -> u64 {
        self.last_at_peak.fds - self.before.fds
    }

    /// RSS gained by the end of the hold, per connection held (negative if it shrank).
    pub fn rss_per_connection(&self) -> f64 {
        (self.last_at_peak.rss_bytes as f64 - self.before.rss_bytes as f64)
            / self.connections() as f64
    }

    /// CPU over the hold, in % of one core; None when the hold spans a single sample.
    pub fn cpu_pct(&self) -> Option<f64> {
        let wall = self.last_at_peak.t_s - self.first_at_peak.t_s;
        (wall > 0.0)
            .then(|| (self.last_at_peak.cpu_s() - self.first_at_peak.cpu_s()) / wall * 100.0)
    }

    /// Seconds from the last quiet sample to the first at the peak: the time to
    /// establish every connection, to within one sampling interval.
    pub fn establish_s(&self) -> f64 {
        self.first_at_peak.t_s - self.before.t_s
    }
}

/// The load generators' RSS gained per connection they held, all of them together.
pub fn generators_rss_per_connection(generators: &[Vec<Sample>]) -> Option<f64> {
    let held: Vec<Held> = generators.iter().filter_map(|s| Held::find(s)).collect();
    let connections: u64 = held.iter().map(Held::connections).sum();
    let rss: f64 = held
        .iter()
        .map(|h| h.rss_per_connection() * h.connections() as f64)
        .sum();
    (connections > 0).then(|| rss / connections as f64)
}

/// The kernel's socket and slab memory at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelSnapshot {
    /// `/proc/net/sockstat` `TCP:` of the server's namespace.
    pub tcp_inuse: u64,
    pub tcp_orphan: u64,
    pub tcp_tw: u64,
    pub tcp_alloc: u64,
    /// Pages of socket buffers (sockstat's `mem`).
    pub tcp_mem_pages: u64,
    /// /proc/meminfo `Slab` and `SUnreclaim`, machine-wide, in bytes.
    pub slab_bytes: u64,
    pub unreclaimable_bytes: u64,
}

/// Parses sockstat's `TCP: inuse N orphan N tw N alloc N mem N` line into a snapshot
/// (slab fields zero).
pub fn parse_sockstat(text: &str) -> Option<KernelSnapshot> {
    let line = text.lines().find_map(|l| l.strip_prefix("TCP:"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let field = |name: &str| -> Option<u64> {
        let i = words.iter().position(|w| *w == name)?;
        words.get(i + 1)?.parse().ok()
    };
    Some(KernelSnapshot {
        tcp_inuse: field("inuse")?,
        tcp_orphan: field("orphan")?,
        tcp_tw: field("tw")?,
        tcp_alloc: field("alloc")?,
        tcp_mem_pages: field("mem")?,
        ..KernelSnapshot::default()
    })
}

/// /proc/meminfo's `Slab` and `SUnreclaim`, in bytes.
pub fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    let kib = |name: &str| -> Option<u64> {
        let line = text.lines().find_map(|l| l.strip_prefix(name))?;
        line.trim_start_matches(':')
            .split_whitespace()
            .next()?
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    };
    Some((kib("Slab:")?, kib("SUnreclaim:")?))
}

/// The kernel's figures now: sockstat of the namespace process `pid` is in, slab of the machine.
pub fn read_kernel(pid: u32) -> Option<KernelSnapshot> {
    let sockstat = fs::read_to_string(format!("/proc/{pid}/net/sockstat")).ok()?;
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let (slab_bytes, unreclaimable_bytes) = parse_meminfo(&meminfo)?;
    Some(KernelSnapshot {
        slab_bytes,
        unreclaimable_bytes,
        ..parse_sockstat(&sockstat)?
    })
}

/// The kernel's snapshot before the load and the one with the most TCP sockets in use.
#[derive(Debug, Default, Clone, Copy)]
pub struct KernelWatch {
    pub before: Option<KernelSnapshot>,
    pub at_peak: Option<KernelSnapshot>,
}

impl KernelWatch {
    /// Keeps `now` when it has more sockets in use than the peak so far.
    pub fn observe(&mut self, now: Option<KernelSnapshot>) {
        let Some(now) = now else { return };
        if self.at_peak.is_none_or(|p| now.tcp_inuse > p.tcp_inuse) {
            self.at_peak = Some(now);
        }
    }
}

/// Kernel memory per connection between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelCost {
    /// Connections held: TCP sockets gained, over the ends of a connection the
    /// namespace holds (1 for a server alone in its namespace, 2 when both ends are).
    pub connections: u64,
    pub slab_bytes: f64,
    pub unreclaimable_bytes: f64,
    pub tcp_mem_bytes: f64,
}

/// The growth from `before` to `during`, per connection. None without growth.
pub fn kernel_cost(
    before: &KernelSnapshot,
    during: &KernelSnapshot,
    ends: u64,
    page_bytes: u64,
) -> Option<KernelCost> {
    let connections = during.tcp_inuse.checked_sub(before.tcp_inuse)? / ends.max(1);
    if connections == 0 {
        return None;
    }
    let per = |a: u64, b: u64| (b as f64 - a as f64) / connections as f64;
    Some(KernelCost {
        connections,
        slab_bytes: per(before.slab_bytes, during.slab_bytes),
        unreclaimable_bytes: per(before.unreclaimable_bytes, during.unreclaimable_bytes),
        tcp_mem_bytes: per(
            before.tcp_mem_pages * page_bytes,
            during.tcp_mem_pages * page_bytes,
        ),
    })
}

fn page_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

/// Fills a row's cost-per-connection columns from what the step left behind: the
/// server's samples, the kernel's memory (whose sockets hold `kernel_ends` ends of each
/// connection) and the generators' samples.
pub fn measure(
    row: &mut Row,
    server_samples: &[Sample],
    kernel: &KernelWatch,
    kernel_ends: u64,
    load_samples: &[Vec<Sample>],
) {
    let round = |v: f64| v.round();
    if let Some(held) = Held::find(server_samples) {
        row.held_connections = Some(held.connections());
        row.server_rss_hold_per_conn_bytes = Some(round(held.rss_per_connection()));
        row.server_cpu_hold_pct = held.cpu_pct().map(|p| (p * 10.0).round() / 10.0);
        let establish = held.establish_s();
        row.establish_s = Some((establish * 1000.0).round() / 1000.0);
        if establish > 0.0 {
            row.establish_per_s = Some(round(held.connections() as f64 / establish));
        }
    }
    row.load_rss_per_conn_bytes = generators_rss_per_connection(load_samples).map(round);
    if let (Some(before), Some(during)) = (kernel.before, kernel.at_peak) {
        if let Some(cost) = kernel_cost(&before, &during, kernel_ends, page_bytes()) {
            row.kernel_slab_per_conn_bytes = Some(round(cost.slab_bytes));
            row.kernel_unreclaimable_per_conn_bytes = Some(round(cost.unreclaimable_bytes));
            row.kernel_tcp_mem_per_conn_bytes = Some(round(cost.tcp_mem_bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t_s: f64, cpu_s: f64, rss_bytes: u64, fds: u64) -> Sample {
        Sample {
            t_s,
            cpu_user_s: cpu_s,
            rss_bytes,
            fds,
            ..Sample::default()
        }
    }

    #[test]
    fn the_hold_is_where_the_fds_peak() {
        let samples = [
            s(0.0, 0.0, 500_000, 3),       // `ip netns exec`, before its exec
            s(0.1, 0.1, 2_000_000, 8),     // idle server: the baseline
            s(0.2, 0.2, 2_100_000, 5_008), // ramp
            s(0.5, 0.5, 3_000_000, 10_008),
            s(1.5, 0.6, 3_100_000, 10_008),
            s(2.5, 0.7, 3_200_000, 10_008),
            s(2.6, 0.7, 2_000_000, 8), // closed
        ];
        let held = Held::find(&samples).unwrap();
        assert_eq!(held.before, samples[1]);
        assert_eq!(held.first_at_peak, samples[3]);
        assert_eq!(held.last_at_peak, samples[5]);
        assert_eq!(held.connections(), 10_000);
        assert_eq!(held.rss_per_connection(), 120.0);
        let cpu = held.cpu_pct().unwrap();
        assert!((cpu - 10.0).abs() < 1e-9, "{cpu}");
        assert!((held.establish_s() - 0.4).abs() < 1e-9);
        assert_eq!(Held::find(&samples[..2]).map(|h| h.connections()), Some(5));
        assert_eq!(Held::find(&[s(0.0, 0.0, 1, 8), s(1.0, 0.0, 1, 8)]), None);
        assert_eq!(Held::find(&[]), None);
    }

    #[test]
    fn generators_are_summed_by_connection() {
        let one = vec![s(0.0, 0.0, 1_000, 10), s(1.0, 0.0, 201_000, 1_010)];
        let two = vec![s(0.0, 0.0, 1_000, 10), s(1.0, 0.0, 401_000, 3_010)];
        // (200 000 + 400 000) bytes over 4 000 connections.
        assert_eq!(generators_rss_per_connection(&[one, two]), Some(150.0));
        assert_eq!(generators_rss_per_connection(&[]), None);
    }

    #[test]
    fn sockstat_and_meminfo_parse() {
        let sockstat = "sockets: used 2013\nTCP: inuse 2002 orphan 1 tw 11414 alloc 2003 mem 7\n\
                        UDP: inuse 0 mem 256\n";
        assert_eq!(
            parse_sockstat(sockstat),
            Some(KernelSnapshot {
                tcp_inuse: 2002,
                tcp_orphan: 1,
                tcp_tw: 11414,
                tcp_alloc: 2003,
                tcp_mem_pages: 7,
                ..KernelSnapshot::default()
            })
        );
        assert_eq!(parse_sockstat("UDP: inuse 0 mem 256\n"), None);
        let meminfo = "MemTotal:       24000000 kB\nSlab:             681260 kB\n\
                       SReclaimable:     581240 kB\nSUnreclaim:       100020 kB\n";
        assert_eq!(
            parse_meminfo(meminfo),
            Some((681_260 * 1024, 100_020 * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
        // This machine's own files parse.
        assert!(read_kernel(std::process::id()).is_some());
    }

    #[test]
    fn kernel_cost_divides_growth_by_connections() {
        let before = KernelSnapshot {
            tcp_inuse: 2,
            tcp_mem_pages: 1,
            slab_bytes: 100_000_000,
            unreclaimable_bytes: 10_000_000,
            ..KernelSnapshot::default()
        };
        let during = KernelSnapshot {
            tcp_inuse: 20_002,
            tcp_mem_pages: 11,
            slab_bytes: 300_000_000,
            unreclaimable_bytes: 60_000_000,
            ..KernelSnapshot::default()
        };
        // Both ends in one namespace: 20 000 sockets are 10 000 connections.
        let cost = kernel_cost(&before, &during, 2, 4096).unwrap();
        assert_eq!(cost.connections, 10_000);
        assert_eq!(cost.slab_bytes, 20_000.0);
        assert_eq!(cost.unreclaimable_bytes, 5_000.0);
        assert_eq!(cost.tcp_mem_bytes, 4.096);
        assert_eq!(kernel_cost(&during, &before, 1, 4096), None);
        assert_eq!(kernel_cost(&before, &before, 1, 4096), None);
    }

    #[test]
    fn the_watch_keeps_the_most_sockets() {
        let at = |inuse| KernelSnapshot {
            tcp_inuse: inuse,
            ..KernelSnapshot::default()
        };
        let mut watch = KernelWatch::default();
        for inuse in [5, 900, 1_000, 400] {
            watch.observe(Some(at(inuse)));
        }
        watch.observe(None);
        assert_eq!(watch.at_peak, Some(at(1_000)));
    }
}
