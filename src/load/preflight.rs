//! Preflight: before opening anything, find what caps the connection count (file descriptors,
//! ephemeral ports, memory, source addresses) and say which limit and the way past it, instead
//! of failing halfway with a vague error.

use std::net::{IpAddr, SocketAddr};

use super::schedule::Plan;

/// File descriptors a load process uses besides its connections (epoll, output files, stdio).
pub const FD_RESERVE: u64 = 64;
/// Kernel and engine memory per client connection, a conservative estimate.
const BYTES_PER_CONNECTION: u64 = 8 * 1024;

#[derive(Debug, Default)]
pub struct Report {
    pub fd_soft: u64,
    pub fd_hard: u64,
    pub warnings: Vec<String>,
}

/// Checks that this process can hold `per_process` connections and the whole plan fits the port
/// range. `Err` explains the limit and the way out.
pub fn check(plan: &Plan, per_process: u64) -> Result<Report, String> {
    let limit = crate::sys::raise_fd_limit().map_err(|e| format!("reading RLIMIT_NOFILE: {e}"))?;
    let mut report = Report {
        fd_soft: limit.soft,
        fd_hard: limit.hard,
        warnings: Vec::new(),
    };
    check_fds(per_process, limit.soft, limit.hard)?;
    check_ports(plan)?;
    check_memory(plan, per_process)?;
    check_source_addrs(plan)?;
    if let Some(somaxconn) = read_number("/proc/sys/net/core/somaxconn") {
        if plan.connect_rate.is_none() && per_process > somaxconn && plan.target.ip().is_loopback()
        {
            report.warnings.push(format!(
                "{per_process} connections opened at once exceed net.core.somaxconn ({somaxconn}): \
                 a server on this host may drop SYNs and connects then take a 1 s retransmit; use \
                 --connect-rate or sysctl -w net.core.somaxconn=65535"
            ));
        }
    }
    Ok(report)
}

pub fn check_fds(per_process: u64, soft: u64, hard: u64) -> Result<(), String> {
    let need = per_process + FD_RESERVE;
    if need <= soft {
        return Ok(());
    }
    let per = soft.saturating_sub(FD_RESERVE).max(1);
    let processes = per_process.div_ceil(per);
    Err(format!(
        "{per_process} connections in one process need {need} file descriptors, but the limit is \
         {soft} (hard limit {hard}, RLIMIT_NOFILE). Way out: split the work with --processes {} \
         (up to {per} connections each){}.",
        processes.max(2),
        if hard < need {
            "; or raise the hard limit (ulimit -Hn, LimitNOFILE= in systemd, /etc/security/limits.conf)"
        } else {
            ""
        }
    ))
}

/// Ephemeral ports: each (source address, destination) pair has the whole range once.
fn check_ports(plan: &Plan) -> Result<(), String> {
    let Some((low, high)) = port_range() else {
        return Ok(());
    };
    let ports = high.saturating_sub(low) + 1;
    let sources = plan.source_addrs.len().max(1) as u64;
    let capacity = ports * sources;
    let wanted = plan.connections();
    if wanted <= capacity {
        return Ok(());
    }
    let addresses_needed = wanted.div_ceil(ports);
    let example = match plan.target.ip() {
        IpAddr::V4(a) if a.is_loopback() => format!(
            "--source-addrs 127.0.0.2-127.0.0.{} (every 127.x address works on loopback)",
            addresses_needed + 1
        ),
        _ => format!("--source-addrs with {addresses_needed} local addresses"),
    };
    Err(format!(
        "{wanted} connections to {} need more local ports than the {ports} of \
         net.ipv4.ip_local_port_range ({low}-{high}) times {sources} source address(es). \
         Way out: {example}, or widen the range: sysctl -w net.ipv4.ip_local_port_range='1024 65535'.",
        plan.target
    ))
}

fn check_memory(plan: &Plan, per_process: u64) -> Result<(), String> {
    let Some(available) = crate::sys::meminfo_bytes("MemAvailable:") else {
        return Ok(());
    };
    let need = plan.connections() * BYTES_PER_CONNECTION + plan.payload.repeated.len() as u64;
    if need > available {
        return Err(format!(
            "{} connections need about {} MiB of memory ({} KiB each, kernel socket and client \
             state) but only {} MiB is available (MemAvailable). Way out: fewer --connections \
             here, and the rest from other hosts with --shard I/N",
            plan.connections(),
            need >> 20,
            BYTES_PER_CONNECTION / 1024,
            available >> 20
        ));
    }
    let _ = per_process;
    Ok(())
}

/// Each source address must be bindable here, or every connection from it would fail.
fn check_source_addrs(plan: &Plan) -> Result<(), String> {
    for &addr in plan.source_addrs.iter().take(256) {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(plan.target),
            socket2::Type::STREAM,
            None,
        )
        .map_err(|e| format!("creating a socket: {e}"))?;
        if let Err(e) = socket.bind(&SocketAddr::new(addr, 0).into()) {
            return Err(format!(
                "source address {addr} cannot be bound ({e}): add it to an interface \
                 (ip addr add {addr}/32 dev lo) or fix --source-addrs"
            ));
        }
    }
    Ok(())
}

pub fn port_range() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??))
}

fn read_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_limit_explains_processes() {
        assert!(check_fds(19_000, 20_000, 20_000).is_ok());
        let e = check_fds(50_000, 20_000, 20_000).unwrap_err();
        assert!(e.contains("--processes 3"), "{e}");
        assert!(e.contains("hard limit"), "{e}");
    }
}
