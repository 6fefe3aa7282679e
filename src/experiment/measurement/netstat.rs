//! The kernel's TCP counters of a step, as `nstat` reads them: /proc/net/snmp
//! (segments, retransmissions, resets) and /proc/net/netstat (listen-queue
//! overflows and drops, SYN retransmits).
//!
//! They are read through `/proc/PID/net/`, which shows the network namespace of
//! process PID: the server's. When the step owns its namespace the counters are
//! the step's alone; otherwise they are the whole machine's ([`Scope`]).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The counters a step records, cumulative since the namespace was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetCounters {
    pub segs_in: u64,
    pub segs_out: u64,
    pub retrans_segs: u64,
    pub resets_sent: u64,
    pub listen_overflows: u64,
    pub listen_drops: u64,
    pub syn_retrans: u64,
}

impl NetCounters {
    /// What happened between `earlier` and this reading.
    pub fn since(&self, earlier: &NetCounters) -> NetCounters {
        NetCounters {
            segs_in: self.segs_in.saturating_sub(earlier.segs_in),
            segs_out: self.segs_out.saturating_sub(earlier.segs_out),
            retrans_segs: self.retrans_segs.saturating_sub(earlier.retrans_segs),
            resets_sent: self.resets_sent.saturating_sub(earlier.resets_sent),
            listen_overflows: self
                .listen_overflows
                .saturating_sub(earlier.listen_overflows),
            listen_drops: self.listen_drops.saturating_sub(earlier.listen_drops),
            syn_retrans: self.syn_retrans.saturating_sub(earlier.syn_retrans),
        }
    }
}

/// Whose traffic the counters include, written to results.csv's `net_scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A namespace made for the step: its server and load only.
    Step,
    /// The server host of the namespace lab: the step's traffic only.
    ServerHost,
    /// The machine's own namespace: other traffic is included.
    Host,
}

impl Scope {
    /// The ends of each connection whose sockets this namespace holds: the lab's server
    /// namespace holds only the server's; elsewhere both ends are local.
    pub fn connection_ends(self) -> u64 {
        match self {
            Scope::ServerHost => 1,
            Scope::Step | Scope::Host => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Step => "step",
            Scope::ServerHost => "server-host",
            Scope::Host => "host",
        }
    }
}

/// The value of `name` in the "Prefix: names" / "Prefix: values" line pairs of
/// /proc/net/snmp and /proc/net/netstat.
fn field(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let index = names.split_whitespace().position(|n| n == name);
        if let Some(i) = index {
            return values.split_whitespace().nth(i)?.parse().ok();
        }
    }
    None
}

/// The counters in the text of /proc/net/snmp and /proc/net/netstat.
pub fn parse(snmp: &str, netstat: &str) -> Option<NetCounters> {
    Some(NetCounters {
        segs_in: field(snmp, "Tcp:", "InSegs")?,
        segs_out: field(snmp, "Tcp:", "OutSegs")?,
        retrans_segs: field(snmp, "Tcp:", "RetransSegs")?,
        resets_sent: field(snmp, "Tcp:", "OutRsts")?,
        listen_overflows: field(netstat, "TcpExt:", "ListenOverflows")?,
        listen_drops: field(netstat, "TcpExt:", "ListenDrops")?,
        syn_retrans: field(netstat, "TcpExt:", "TCPSynRetrans").unwrap_or(0),
    })
}

/// The counters of the network namespace process `pid` is in.
pub fn read(pid: u32) -> Option<NetCounters> {
    let snmp = fs::read_to_string(format!("/proc/{pid}/net/snmp")).ok()?;
    let netstat = fs::read_to_string(format!("/proc/{pid}/net/netstat")).ok()?;
    parse(&snmp, &netstat)
}

/// The TCP segments in and out of the network namespace process `pid` is in, since it
/// was made: /proc/PID/net/snmp alone.
pub fn segments(pid: u32) -> Option<u64> {
    let snmp = fs::read_to_string(format!("/proc/{pid}/net/snmp")).ok()?;
    Some(field(&snmp, "Tcp:", "InSegs")? + field(&snmp, "Tcp:", "OutSegs")?)
}

/// The header of net-timeline.csv: one row per second, each a change over that second.
pub const CSV_HEADER: &str = "t_s,segs_in_per_s,segs_out_per_s,retrans_segs,resets_sent,\
                              listen_overflows,listen_drops,syn_retrans";

/// Writes net-timeline.csv once a second until [`Timeline::finish`].
pub struct Timeline {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Timeline {
    pub fn start(pid: u32, path: &Path) -> std::io::Result<Timeline> {
        let mut file = std::io::BufWriter::new(fs::File::create(path)?);
        writeln!(file, "{CSV_HEADER}")?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = std::thread::spawn(move || {
            let start = Instant::now();
            let mut last = read(pid);
            let mut second = 1u64;
            while !stopped.load(Ordering::Relaxed) {
                // Short sleeps so finish() returns promptly.
                if start.elapsed() < Duration::from_secs(second) {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                let now = read(pid);
                if let (Some(a), Some(b)) = (last, now) {
                    let d = b.since(&a);
                    let _ = writeln!(
                        file,
                        "{second},{},{},{},{},{},{},{}",
                        d.segs_in,
                        d.segs_out,
                        d.retrans_segs,
                        d.resets_sent,
                        d.listen_overflows,
                        d.listen_drops,
                        d.syn_retrans
                    );
                    let _ = file.flush();
                }
                last = now;
                second += 1;
            }
        });
        Ok(Timeline { stop, handle })
    }

    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP: &str = "Ip: Forwarding DefaultTTL\nIp: 2 64\n\
        Tcp: RtoAlgorithm ActiveOpens InSegs OutSegs RetransSegs InErrs OutRsts\n\
        Tcp: 1 7 1000 990 3 0 12\n\
        Udp: InDatagrams\nUdp: 5\n";
    const NETSTAT: &str = "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPSynRetrans\n\
        TcpExt: 0 4 6 2\n\
        IpExt: InNoRoutes\nIpExt: 0\n";

    #[test]
    fn counters_are_read_by_name() {
        let c = parse(SNMP, NETSTAT).unwrap();
        assert_eq!(
            c,
            NetCounters {
                segs_in: 1000,
                segs_out: 990,
                retrans_segs: 3,
                resets_sent: 12,
                listen_overflows: 4,
                listen_drops: 6,
                syn_retrans: 2,
            }
        );
        let later = NetCounters { segs_in: 1500, ..c };
        assert_eq!(later.since(&c).segs_in, 500);
        assert_eq!(later.since(&c).resets_sent, 0);
        assert_eq!(parse("Tcp: InSegs\nTcp: 1\n", NETSTAT), None);
    }
}
