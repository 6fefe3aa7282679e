//! The plan of a run: validated arguments, the payload, and the time schedule of connections
//! (the connect ramp) and requests (closed loop or open loop).
//!
//! Connections have global ids `0..connections` over all processes and agents; shard `i` of `N`
//! owns the ids `g` with `g % N == i`, so shards need only the totals to agree on a schedule.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use super::LoadArgs;

/// Largest message: 16 MiB.
pub const MAX_MESSAGE: u64 = 16 << 20;
/// Runs with neither --requests nor --duration last this long.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// The message every connection sends, plus a repeated copy so a run of back-to-back
/// messages (pipelining) is one contiguous slice for a single write.
#[derive(Debug)]
pub struct Payload {
    pub message: Vec<u8>,
    /// `message` repeated; any window `[o, o + len - message.len())` with `o < message.len()`
    /// is inside it.
    pub repeated: Vec<u8>,
}

impl Payload {
    pub fn new(message: Vec<u8>) -> Payload {
        let size = message.len();
        let copies = (128 * 1024 / size).max(2);
        let repeated = message.repeat(copies);
        Payload { message, repeated }
    }

    pub fn len(&self) -> u64 {
        self.message.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.message.is_empty()
    }

    /// Seeded random printable ASCII (space to '~'), splitmix64 so any seed gives the same bytes
    /// on every machine.
    pub fn random(size: usize, seed: u64) -> Payload {
        let mut state = seed;
        let mut bytes = Vec::with_capacity(size);
        while bytes.len() < size {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            for byte in z.to_le_bytes() {
                if bytes.len() < size {
                    bytes.push(b' ' + (byte % 95));
                }
            }
        }
        Payload::new(bytes)
    }
}

/// Closed loop (wait for each echo) or open loop (send on a schedule).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Closed,
    /// Requests per second in total over all connections of all shards.
    Open {
        rate: f64,
    },
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub target: SocketAddr,
    pub target_text: String,
    /// Connections over all shards.
    pub total_connections: u64,
    /// (index, count), 0-based.
    pub shard: (u64, u64),
    pub connect_rate: Option<f64>,
    pub connect_timeout: Duration,
    pub response_timeout: Duration,
    pub payload: Arc<Payload>,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    /// Sent and verified, not measured: the run lasts this + `duration`.
    pub warmup: Duration,
    pub delay: Duration,
    pub pipeline: usize,
    pub mode: Mode,
    pub hold: Option<Duration>,
    pub reconnect: bool,
    pub threads: usize,
    pub engine: super::Engine,
    pub processes: u32,
    pub source_addrs: Vec<IpAddr>,
    pub start_at: Option<f64>,
}

/// Event-loop threads when `--threads` is not given: one per CPU, but half of them when the
/// target is on this host, whose server needs the other half. Nearly all of a request's cost
/// is the kernel's TCP path, the same on both ends, so a client with as many threads as CPUs
/// only competes with the server for cores and sleeps and wakes more often per request.
pub fn default_threads(target: SocketAddr) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if target.ip().is_loopback() {
        (cpus / 2).max(1)
    } else {
        cpus
    }
}

impl Plan {
    /// Validates the arguments; an `Err` is a usage error (exit 2).
    pub fn from_args(args: &LoadArgs) -> Result<Plan, String> {
        let target = target_of(args)?;
        if args.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        let message = message_of(args)?;
        check_pacing(args)?;
        check_warmup(args)?;
        let mode = mode_of(args)?;
        let threads = match args.threads {
            Some(0) => return Err("--threads must be at least 1".into()),
            Some(n) => n,
            None => default_threads(target),
        };
        let shard = shard_of(args)?;
        let source_addrs = source_addrs_of(args, target)?;
        check_error_rate_and_start(args)?;
        let (requests, duration) = match (args.requests, args.duration, args.hold) {
            (None, None, Some(_)) => (Some(1), None),
            (None, None, None) => (None, Some(DEFAULT_DURATION)),
            other => (other.0, other.1),
        };
        Ok(Plan {
            target,
            target_text: args.target.clone(),
            total_connections: args.connections,
            shard,
            connect_rate: (args.connect_rate > 0.0).then_some(args.connect_rate),
            connect_timeout: args.connect_timeout,
            response_timeout: args.response_timeout,
            payload: Arc::new(Payload::new(message)),
            requests,
            duration,
            warmup: args.warmup,
            delay: args.delay,
            pipeline: args.pipeline as usize,
            mode,
            hold: args.hold,
            reconnect: args.reconnect,
            threads,
            engine: args.engine,
            processes: args.processes,
            source_addrs,
            start_at: args.start_at,
        })
    }

    /// Connections this process (shard) opens.
    pub fn connections(&self) -> u64 {
        connections_of_shard(self.total_connections, self.shard)
    }

    /// Global id of this shard's `local`-th connection.
    pub fn global_id(&self, local: u64) -> u64 {
        self.shard.0 + local * self.shard.1
    }

    /// When connection `global` is due to be opened, from the start of the run.
    pub fn open_at_ns(&self, global: u64) -> u64 {
        match self.connect_rate {
            None => 0,
            Some(rate) => (global as f64 * 1e9 / rate) as u64,
        }
    }

    /// Open loop: (offset of the first request after connecting, period between requests) of
    /// connection `global`; the connections' phases spread the total rate evenly.
    pub fn open_loop_ns(&self, global: u64) -> Option<(u64, u64)> {
        match self.mode {
            Mode::Closed => None,
            Mode::Open { rate } => {
                let period = self.total_connections as f64 * 1e9 / rate;
                Some(((global as f64 * 1e9 / rate) as u64, period.max(1.0) as u64))
            }
        }
    }

    /// This shard's share of the total open-loop rate.
    pub fn shard_rate(&self) -> Option<f64> {
        match self.mode {
            Mode::Closed => None,
            Mode::Open { rate } => {
                Some(rate * self.connections() as f64 / self.total_connections as f64)
            }
        }
    }

    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Closed => "closed",
            Mode::Open { .. } => "open",
        }
    }
}

/// The --target address.
fn target_of(args: &LoadArgs) -> Result<SocketAddr, String> {
    let target = args
        .target
        .to_socket_addrs()
        .map_err(|e| format!("--target '{}' is not HOST:PORT: {e}", args.target))?
        .next()
        .ok_or_else(|| format!("--target '{}' resolves to no address", args.target))?;
    if target.port() == 0 {
        return Err("--target needs a port other than 0".into());
    }
    Ok(target)
}

/// The message from --message, --payload-file or --size (only one of them).
fn message_of(args: &LoadArgs) -> Result<Vec<u8>, String> {
    let payload_flags = [
        args.message.is_some(),
        args.size.is_some(),
        args.payload_file.is_some(),
    ];
    if payload_flags.iter().filter(|&&given| given).count() > 1 {
        return Err("give only one of --message, --size and --payload-file".into());
    }
    let message = if let Some(text) = &args.message {
        text.as_bytes().to_vec()
    } else if let Some(path) = &args.payload_file {
        read_payload_file(path)?
    } else {
        let size = args.size.unwrap_or(64);
        if size == 0 || size > MAX_MESSAGE {
            return Err(format!("--size must be 1 B to 16 MiB, not {size}"));
        }
        Payload::random(size as usize, args.seed).message
    };
    if message.is_empty() || message.len() as u64 > MAX_MESSAGE {
        return Err(format!(
            "the message must be 1 B to 16 MiB, not {} B",
            message.len()
        ));
    }
    Ok(message)
}

/// The connect rate, timeouts, pipeline depth, duration and request count make sense.
fn check_pacing(args: &LoadArgs) -> Result<(), String> {
    if !(args.connect_rate >= 0.0 && args.connect_rate.is_finite()) {
        return Err("--connect-rate must be a number >= 0".into());
    }
    if args.connect_timeout.is_zero() || args.response_timeout.is_zero() {
        return Err("--connect-timeout and --response-timeout must be above 0".into());
    }
    if args.pipeline == 0 {
        return Err("--pipeline must be at least 1".into());
    }
    if args.duration.is_some_and(|d| d.is_zero()) {
        return Err("--duration must be above 0".into());
    }
    if args.requests == Some(0) && args.hold.is_none() {
        return Err("--requests 0 only makes sense with --hold".into());
    }
    // The last connection opens at (connections - 1) / rate: past the duration it would
    // never be tried, and the run would still look complete.
    if let (Some(duration), true) = (args.duration, args.connect_rate > 0.0) {
        let last_opens_s = (args.connections.saturating_sub(1)) as f64 / args.connect_rate;
        if last_opens_s >= duration.as_secs_f64() {
            return Err(format!(
                "--connect-rate {} opens the last of {} connections after {last_opens_s:.3e} s, \
                 not within --duration {duration:?}: raise the rate or the duration",
                args.connect_rate, args.connections
            ));
        }
    }
    Ok(())
}

/// A warm-up leaves requests out of the measurement, which only a timed run can spare.
fn check_warmup(args: &LoadArgs) -> Result<(), String> {
    if !args.warmup.is_zero() {
        if args.requests.is_some() {
            return Err(
                "--warmup does not go with --requests: a fixed workload is measured by \
                        the time it takes to complete, warm-up included"
                    .into(),
            );
        }
        if args.hold.is_some() {
            return Err(
                "--warmup does not go with --hold: a held run measures the connections \
                        it keeps open, not the latency of a warmed-up load"
                    .into(),
            );
        }
    }
    Ok(())
}

/// The lowest rate the open loop (and a scenario's `rate` or `connect_rate`) takes: one
/// request in 1 000 s. A lower one schedules nothing within any sensible run.
pub const MIN_RATE: f64 = 1e-3;

/// Closed loop, or open at --rate.
fn mode_of(args: &LoadArgs) -> Result<Mode, String> {
    match args.rate {
        None => Ok(Mode::Closed),
        Some(rate) if rate >= MIN_RATE && rate.is_finite() => {
            if !args.delay.is_zero() {
                return Err("--delay is for the closed loop; --rate sets the pace".into());
            }
            Ok(Mode::Open { rate })
        }
        Some(rate) => Err(format!("--rate must be at least {MIN_RATE}, not {rate}")),
    }
}

/// This process's shard, which must have a connection for each of --processes.
fn shard_of(args: &LoadArgs) -> Result<(u64, u64), String> {
    if args.processes == 0 {
        return Err("--processes must be at least 1".into());
    }
    let shard = match &args.shard {
        None => (0, 1),
        Some(text) => parse_shard(text)?,
    };
    let shard_connections = connections_of_shard(args.connections, shard);
    if shard_connections < u64::from(args.processes) {
        return Err(format!(
            "--processes {} is more than the {shard_connections} connections to split",
            args.processes
        ));
    }
    Ok(shard)
}

/// The --source-addrs, of the target's family.
fn source_addrs_of(args: &LoadArgs, target: SocketAddr) -> Result<Vec<IpAddr>, String> {
    let source_addrs = match &args.source_addrs {
        None => Vec::new(),
        Some(text) => parse_source_addrs(text)?,
    };
    if source_addrs
        .iter()
        .any(|a| a.is_ipv4() != target.ip().is_ipv4())
    {
        return Err("--source-addrs must be of the same family as --target".into());
    }
    Ok(source_addrs)
}

/// --max-error-rate is a fraction and --start-at a Unix time at most a day ahead.
fn check_error_rate_and_start(args: &LoadArgs) -> Result<(), String> {
    if let Some(bound) = args.max_error_rate {
        if !(0.0..=1.0).contains(&bound) {
            return Err("--max-error-rate must be between 0 and 1".into());
        }
    }
    if let Some(at) = args.start_at {
        if !(at.is_finite() && at >= 0.0) {
            return Err("--start-at must be a Unix time in seconds".into());
        }
        let ahead = at - crate::sys::unix_now();
        if ahead > MAX_START_AHEAD.as_secs_f64() {
            return Err(format!(
                "--start-at {at} is {:.0} s from now: at most one day ahead",
                ahead
            ));
        }
    }
    Ok(())
}

/// How far ahead `--start-at` may be: agents start together within minutes, and a
/// mistyped time (milliseconds, a far future) should be an error, not a silent wait.
pub const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// Reads at most [`MAX_MESSAGE`] + 1 bytes, so a huge file is refused without being read
/// whole. Only a regular file: a FIFO, a device (`/dev/zero`) or a socket may never end
/// or never answer; opened without blocking, so a FIFO with no writer is refused at once
/// rather than waited on.
fn read_payload_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let name = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("--payload-file {name}: {e}"))?;
    let kind = file
        .metadata()
        .map_err(|e| format!("--payload-file {name}: {e}"))?
        .file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "a socket"
        };
        return Err(format!(
            "--payload-file {name} is not a regular file ({what})"
        ));
    }
    let mut message = Vec::new();
    file.take(MAX_MESSAGE + 1)
        .read_to_end(&mut message)
        .map_err(|e| format!("--payload-file {name}: {e}"))?;
    if message.len() as u64 > MAX_MESSAGE {
        return Err(format!("--payload-file {name} is larger than 16 MiB"));
    }
    Ok(message)
}

/// Connections of shard `(i, n)`: the ids `g < total` with `g % n == i`.
pub fn connections_of_shard(total: u64, (index, count): (u64, u64)) -> u64 {
    if index >= total {
        0
    } else {
        (total - index).div_ceil(count)
    }
}

/// `I/N` with `0 <= I < N`.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--shard '{text}' must be I/N with 0 <= I < N (0-based), e.g. 0/4");
    let (index, count) = text.split_once('/').ok_or_else(bad)?;
    let index: u64 = index.trim().parse().map_err(|_| bad())?;
    let count: u64 = count.trim().parse().map_err(|_| bad())?;
    if count == 0 || index >= count {
        return Err(bad());
    }
    Ok((index, count))
}

/// `A`, `A,B,C` or a range `A-B` (last octet or group may vary; at most 65536 addresses).
pub fn parse_source_addrs(text: &str) -> Result<Vec<IpAddr>, String> {
    let bad = |why: &str| format!("--source-addrs '{text}': {why}");
    let mut addrs = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((first, last)) = part.split_once('-') {
            let first: IpAddr = first.trim().parse().map_err(|_| bad("not an address"))?;
            let last: IpAddr = last.trim().parse().map_err(|_| bad("not an address"))?;
            let (a, b) = match (first, last) {
                (IpAddr::V4(a), IpAddr::V4(b)) => {
                    (u128::from(u32::from(a)), u128::from(u32::from(b)))
                }
                (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b)),
                _ => return Err(bad("a range cannot mix IPv4 and IPv6")),
            };
            if b < a {
                return Err(bad("the range ends before it starts"));
            }
            if b - a >= 65536 {
                return Err(bad("more than 65536 addresses"));
            }
            for value in a..=b {
                addrs.push(match first {
                    IpAddr::V4(_) => IpAddr::from(std::net::Ipv4Addr::from(value as u32)),
                    IpAddr::V6(_) => IpAddr::from(std::net::Ipv6Addr::from(value)),
                });
            }
        } else {
            addrs.push(part.parse().map_err(|_| bad("not an address"))?);
        }
    }
    if addrs.is_empty() {
        return Err(bad("no address"));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_connection_once() {
        for total in [1u64, 7, 10, 25_000] {
            for count in 1..5 {
                let sum: u64 = (0..count)
                    .map(|i| connections_of_shard(total, (i, count)))
                    .sum();
                assert_eq!(sum, total);
            }
        }
        assert_eq!(parse_shard("1/2"), Ok((1, 2)));
        assert!(parse_shard("3/2").is_err());
        assert!(parse_shard("0/0").is_err());
    }

    #[test]
    fn source_ranges() {
        let addrs = parse_source_addrs("127.0.0.2-127.0.0.4").unwrap();
        assert_eq!(addrs.len(), 3);
        assert_eq!(addrs[2], "127.0.0.4".parse::<IpAddr>().unwrap());
        assert!(parse_source_addrs("127.0.0.9-127.0.0.2").is_err());
        assert!(parse_source_addrs("127.0.0.1-::1").is_err());
    }

    #[test]
    fn random_payload_is_printable_and_seeded() {
        let a = Payload::random(1000, 7);
        assert_eq!(a.message.len(), 1000);
        assert!(a.message.iter().all(|b| (b' '..=b'~').contains(b)));
        assert_eq!(a.message, Payload::random(1000, 7).message);
        assert_ne!(a.message, Payload::random(1000, 8).message);
        assert!(a.repeated.len() >= 2 * a.message.len());
    }

    #[test]
    fn loopback_targets_leave_half_the_cpus_to_the_server() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let local: SocketAddr = "127.0.0.5:7".parse().unwrap();
        let remote: SocketAddr = "192.0.2.1:7".parse().unwrap();
        assert_eq!(default_threads(local), (cpus / 2).max(1));
        assert_eq!(default_threads(remote), cpus);
        assert_eq!(
            default_threads("[::1]:7".parse().unwrap()),
            (cpus / 2).max(1)
        );
    }
}
