//! `[hosts]` sysctls: what the lab sets in its own namespaces (the listen queue, the
//! ephemeral ports and TIME_WAIT are per network namespace, so a lab sized for scale
//! never touches the host's values). Written there by [`hosts`](crate::experiment::placement::hosts).

use serde::{Deserialize, Serialize};

/// What the lab sets in every host namespace it makes: wide enough for 1 000 000
/// connections over a few dozen client hosts, and overridable in `[hosts]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabSysctls {
    /// net.core.somaxconn: the cap on every listen(2) backlog in the namespace.
    pub somaxconn: u64,
    /// net.ipv4.tcp_max_syn_backlog: half-open connections queued per listener.
    pub tcp_max_syn_backlog: u64,
    /// net.ipv4.ip_local_port_range: the ephemeral ports of each client host.
    pub ip_local_port_range: (u16, u16),
    /// net.ipv4.tcp_max_tw_buckets: TIME_WAIT sockets a namespace keeps. The lab's
    /// hosts serve one model after another, and the TIME_WAIT a model's closed
    /// connections leave (60 s, in the client hosts: the load closes first) slows the
    /// next model's connect(2): its ephemeral port search (`__inet_hash_connect`) took
    /// 91 % of the machine's CPU at c1m's 100 000 stair after epoll's 1 000 000 had
    /// closed, 41.6 s to connect a stair that takes 4-7 s in a fresh lab. No TIME_WAIT
    /// by default: each model meets the lab as the first one did.
    pub tcp_max_tw_buckets: u64,
}

impl Default for LabSysctls {
    fn default() -> Self {
        LabSysctls {
            somaxconn: 65535,
            tcp_max_syn_backlog: 65535,
            // 64 512 ports per (client host, server address:port), against 28 232 by default.
            ip_local_port_range: (1024, 65535),
            tcp_max_tw_buckets: 0,
        }
    }
}

impl LabSysctls {
    /// (name, value) as /proc/sys spells them.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let (low, high) = self.ip_local_port_range;
        vec![
            ("net.core.somaxconn", self.somaxconn.to_string()),
            (
                "net.ipv4.tcp_max_syn_backlog",
                self.tcp_max_syn_backlog.to_string(),
            ),
            ("net.ipv4.ip_local_port_range", format!("{low} {high}")),
            (
                "net.ipv4.tcp_max_tw_buckets",
                self.tcp_max_tw_buckets.to_string(),
            ),
        ]
    }

    /// Ephemeral ports one client host has towards one server address and port.
    pub fn ports_per_host(&self) -> u64 {
        let (low, high) = self.ip_local_port_range;
        u64::from(high.saturating_sub(low)) + 1
    }
}

/// Parses `1024-65535` (the scenario's spelling of a port range).
pub fn parse_port_range(text: &str) -> Result<(u16, u16), String> {
    let bad =
        || format!("a port range is LOW-HIGH between 1 and 65535, as 1024-65535, not {text:?}");
    let (low, high) = text.split_once('-').ok_or_else(bad)?;
    let low: u16 = low.trim().parse().map_err(|_| bad())?;
    let high: u16 = high.trim().parse().map_err(|_| bad())?;
    if low == 0 || low > high {
        return Err(bad());
    }
    Ok((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_ranges_parse() {
        assert_eq!(parse_port_range("1024-65535"), Ok((1024, 65535)));
        assert_eq!(parse_port_range(" 2000 - 3000 "), Ok((2000, 3000)));
        for bad in ["", "1024", "0-10", "10-5", "1-70000", "a-b"] {
            assert!(parse_port_range(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_are_sized_for_scale() {
        let s = LabSysctls::default();
        assert_eq!(s.ports_per_host(), 64512);
        assert_eq!(
            s.settings(),
            [
                ("net.core.somaxconn", "65535".to_string()),
                ("net.ipv4.tcp_max_syn_backlog", "65535".to_string()),
                ("net.ipv4.ip_local_port_range", "1024 65535".to_string()),
                ("net.ipv4.tcp_max_tw_buckets", "0".to_string()),
            ]
        );
    }
}
