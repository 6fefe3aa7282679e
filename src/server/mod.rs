//! The echo servers: one file per I/O model, each reading top to bottom as that model's loop.
//!
//! This file is the core they share, as Redis's ae.c is for its event loop: a model
//! is chosen and handed a [`Setup`] (the bound listener, the counters), announces
//! itself with the [`Listening`] line, wakes up on its own only when [`wake_up`]
//! says so (an accept pause ending, an [`IdleScan`] falling due), and at shutdown
//! [`main`] writes the summary. Beside it:
//!
//! - [`config`]: the `serve` flags ([`ServerConfig`]) and their way back to flags;
//! - [`listening`]: the `listening on ADDR ... pid=N` line, printed and parsed;
//! - [`accept`]: the accept policy (`--max-conns`, EMFILE shedding with a spare fd);
//! - [`stop`]: the flag and eventfd that SIGINT/SIGTERM set;
//! - [`echo`]: the per-connection echo state of the readiness models (select, poll, epoll);
//! - [`counters`]: the counters, the connection log and the summary;
//! - [`work`]: `--work-us`, the CPU time every model spends on each read.

pub mod counters;
pub mod echo;

mod accept;
mod config;
mod listening;
mod stop;
mod work;

mod epoll;
mod poll;
mod processes;
mod select;
mod threads;
mod tokio;
mod uring;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use socket2::{Domain, Protocol, Socket, Type};

pub use accept::{Accepted, Acceptor};
pub use config::{AcceptMode, Model, ServerConfig, Trigger};
use counters::{ServerSummary, Stats};
pub use listening::Listening;
pub use stop::{install_stop_handler, request_stop, stop_fd, stop_requested};
pub use work::MAX_WORK_US;

/// What a model's `serve` function is given: the bound listener and the shared counters.
pub struct Setup {
    pub config: ServerConfig,
    pub listener: TcpListener,
    /// The bound address (port 0 resolved).
    pub local_addr: SocketAddr,
    pub stats: Arc<Stats>,
    /// Threads that serve connections (1 for threads, select and poll).
    pub workers: usize,
    /// The soft fd limit in force.
    pub fd_limit: u64,
}

impl Setup {
    /// Prints the `listening on ADDR ...` line that scripts and tests wait for. A model
    /// calls it once everything it needs is set up (rings, epoll sets, extra listeners),
    /// so a client that connects after the line reaches a server that is ready for it.
    pub fn announce(&self) -> io::Result<()> {
        let listening = Listening {
            model: Some(self.config.model),
            workers: Some(self.workers),
            fd_limit: Some(self.fd_limit),
            pid: Some(std::process::id()),
            ..Listening::at(self.local_addr)
        };
        crate::outln!("{listening}");
        Ok(())
    }

    /// Another SO_REUSEPORT listener on the same address, for models with one listener per worker.
    pub fn bind_another_listener(&self) -> io::Result<TcpListener> {
        bind_listener(self.local_addr, self.config.backlog)
    }
}

/// When a loop next closes the connections idle for `--idle-timeout`: a scan of its
/// table now and then, often enough to close them near their limit (every quarter of
/// it), never busier than every 10 ms nor lazier than every second.
pub struct IdleScan {
    limit: Duration,
    every: Duration,
    next: Instant,
}

impl IdleScan {
    /// The schedule for `--idle-timeout`, if one is set.
    pub fn new(limit: Option<Duration>) -> Option<IdleScan> {
        let limit = limit?;
        let every = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        Some(IdleScan {
            limit,
            every,
            next: Instant::now() + every,
        })
    }

    /// Time left until the next scan.
    pub fn due_in(&self) -> Duration {
        self.next.saturating_duration_since(Instant::now())
    }

    /// When a scan is due: schedules the next one and returns the idle limit, so the
    /// caller closes every connection that sent nothing for that long.
    pub fn due(&mut self) -> Option<Duration> {
        let now = Instant::now();
        if now < self.next {
            return None;
        }
        self.next = now + self.every;
        Some(self.limit)
    }
}

/// How long an event loop may sleep before it has work of its own: until accepting
/// resumes after a pause (`pause_left`) or the next idle scan, whichever is first, and
/// at least a millisecond; `None`: until an event. Every model computes its wait here.
pub fn wake_up(pause_left: Option<Duration>, idle: Option<&IdleScan>) -> Option<Duration> {
    let idle_left = idle.map(IdleScan::due_in);
    let wait = pause_left.into_iter().chain(idle_left).min()?;
    Some(wait.max(Duration::from_millis(1)))
}

/// A [`wake_up`] as the millisecond timeout of poll(2) and epoll_wait(2) (-1: no timeout).
pub fn timeout_ms(wake_up: Option<Duration>) -> libc::c_int {
    wake_up.map_or(-1, |wait| {
        wait.as_millis().min(libc::c_int::MAX as u128) as libc::c_int
    })
}

/// `echolab serve`: runs the configured model until SIGINT or SIGTERM, then prints the summary.
pub fn main(config: ServerConfig) -> anyhow::Result<ExitCode> {
    if let Err(e) = config.validate() {
        // A usage error, exit 2, as for every verb; one line, the last of its stderr,
        // which the runner quotes when a step's server cannot start.
        crate::errln!("echolab serve: error: {e:#}");
        return Ok(ExitCode::from(2));
    }
    if let Some(path) = &config.summary_json {
        check_writable(path)?;
    }
    work::set(config.work_us);
    crate::sys::ignore_sigpipe();
    let fd_limit = crate::sys::raise_fd_limit().context("reading the fd limit")?;
    install_stop_handler().context("installing the SIGINT/SIGTERM handler")?;
    if config.processes > 1 {
        return processes::main(config, fd_limit.soft);
    }

    let listener = bind_first_listener(&config)?;
    let local_addr = listener.local_addr()?;
    let stats = Arc::new(Stats::new(config.log.as_deref(), config.max_conns)?);
    let workers = match config.model {
        Model::Epoll | Model::Uring | Model::Tokio => config.worker_count(),
        Model::Threads | Model::Select | Model::Poll => 1,
    };
    let model = config.model;
    let setup = Setup {
        config: config.clone(),
        listener,
        local_addr,
        stats: Arc::clone(&stats),
        workers,
        fd_limit: fd_limit.soft,
    };
    match model {
        Model::Threads => threads::serve(setup),
        Model::Select => select::serve(setup),
        Model::Poll => poll::serve(setup),
        Model::Epoll => epoll::serve(setup),
        Model::Uring => uring::serve(setup),
        Model::Tokio => tokio::serve(setup),
    }
    .with_context(|| format!("the {model} server failed"))?;

    let summary = ServerSummary {
        model: model.name().to_string(),
        addr: local_addr.to_string(),
        workers,
        fd_limit: fd_limit.soft,
        ..stats.summary()
    };
    finish(&config, &stats, &summary)?;
    Ok(ExitCode::SUCCESS)
}

/// Flushes the log, prints the summary on stderr and writes `--summary-json`. A log that
/// could not be written fails the exit, after the summary, so its loss is the last word.
fn finish(config: &ServerConfig, stats: &Stats, summary: &ServerSummary) -> anyhow::Result<()> {
    let logged = stats.flush_log();
    crate::err!("{}", summary.render());
    if let Some(path) = &config.summary_json {
        let json = serde_json::to_string_pretty(summary)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    logged?;
    Ok(())
}

/// Fails now, not at shutdown, when `--summary-json` cannot be written (a directory, a
/// missing or read-only directory). An existing file is left as it is; a new one is
/// removed again, so the file appears only with the summary in it.
fn check_writable(path: &Path) -> anyhow::Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot write --summary-json {}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// The server's first listener. Unless this is a `--processes` child (`--share-port`),
/// the port must be free: SO_REUSEPORT would otherwise let this server silently share it
/// with any other server of the same user, each taking part of the connections. A plain
/// bind (no SO_REUSEPORT) fails with EADDRINUSE on a port someone listens on.
pub fn bind_first_listener(config: &ServerConfig) -> anyhow::Result<TcpListener> {
    let addr = config.addr;
    if !config.share_port && addr.port() != 0 {
        let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        probe.set_reuse_address(true)?;
        if let Err(error) = probe.bind(&addr.into()) {
            if error.kind() == io::ErrorKind::AddrInUse {
                anyhow::bail!("cannot listen on {addr}: address already in use");
            }
            return Err(error).with_context(|| format!("cannot listen on {addr}"));
        }
    }
    bind_listener(addr, config.backlog).with_context(|| format!("cannot listen on {addr}"))
}

/// Binds a non-blocking listener with SO_REUSEADDR and SO_REUSEPORT (so workers and
/// processes can bind the same port) and listens with `backlog`.
pub fn bind_listener(addr: SocketAddr, backlog: i32) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(backlog)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_with_nothing_of_its_own_sleeps_until_an_event() {
        assert_eq!(wake_up(None, None), None);
        assert_eq!(timeout_ms(None), -1);
    }

    #[test]
    fn a_loop_wakes_for_the_first_of_a_pause_and_an_idle_scan() {
        let idle = IdleScan::new(Some(Duration::from_secs(2)));
        let pause = Duration::from_millis(100);
        assert_eq!(wake_up(Some(pause), idle.as_ref()), Some(pause));
        let scan_in = wake_up(None, idle.as_ref()).expect("an idle scan is scheduled");
        assert!(scan_in <= Duration::from_millis(500) && scan_in > pause);
        // Never a busy loop: a due wake-up still waits a millisecond.
        assert_eq!(
            wake_up(Some(Duration::ZERO), None),
            Some(Duration::from_millis(1))
        );
        assert_eq!(timeout_ms(Some(Duration::from_millis(1))), 1);
    }

    #[test]
    fn idle_scans_come_every_quarter_of_the_limit_within_bounds() {
        let mut scan = IdleScan::new(Some(Duration::from_secs(2))).unwrap();
        assert!(scan.due_in() <= Duration::from_millis(500));
        assert_eq!(scan.due(), None);
        std::thread::sleep(scan.due_in());
        assert_eq!(scan.due(), Some(Duration::from_secs(2)));
        assert_eq!(scan.due(), None);
        assert!(IdleScan::new(None).is_none());
        let hourly = IdleScan::new(Some(Duration::from_secs(3600))).unwrap();
        assert!(hourly.due_in() <= Duration::from_secs(1));
    }
}
