//! The echo servers: one file per I/O model, each reading top to bottom as that model's loop.
//!
//! What the models share lives here and beside it: the configuration
//! ([`ServerConfig`]), listener set-up ([`bind_listener`]), accepting with
//! EMFILE handling and `--max-conns` ([`Acceptor`]), shutdown on SIGINT/SIGTERM
//! ([`shutdown_requested`], [`shutdown_fd`]), the per-connection echo state of
//! the readiness models ([`echo`]) and the counters, log and summary ([`stats`]).

pub mod echo;
pub mod stats;

mod epoll;
mod poll;
mod processes;
mod select;
mod threads;
mod tokio;
mod uring;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use socket2::{Domain, Protocol, Socket, Type};

use crate::syscall;
use stats::{RefuseReason, ServerConnRecord, ServerSummary, Stats};

/// The I/O model a server uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// One blocking OS thread per connection
    Threads,
    /// One thread, select(2), level-triggered; refuses fds >= FD_SETSIZE
    Select,
    /// One thread, poll(2)
    Poll,
    /// epoll(7): edge- or level-triggered, N workers each with its own epoll set
    Epoll,
    /// io_uring: multishot accept and recv with a provided buffer ring, N rings
    Uring,
    /// The tokio multi-thread runtime: the baseline most Rust users would pick
    Tokio,
}

impl Model {
    pub const ALL: [Model; 6] = [
        Model::Threads,
        Model::Select,
        Model::Poll,
        Model::Epoll,
        Model::Uring,
        Model::Tokio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Model::Threads => "threads",
            Model::Select => "select",
            Model::Poll => "poll",
            Model::Epoll => "epoll",
            Model::Uring => "uring",
            Model::Tokio => "tokio",
        }
    }

    /// Whether `--processes` may run several copies of this model on one port.
    pub fn supports_processes(self) -> bool {
        matches!(
            self,
            Model::Poll | Model::Epoll | Model::Uring | Model::Tokio
        )
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// When epoll reports readiness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// EPOLLET: reported once per change; each wakeup reads until EAGAIN (within a fairness budget)
    Edge,
    /// Reported as long as the fd is ready, like poll(2)
    Level,
}

/// How epoll workers get their connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcceptMode {
    /// One acceptor thread hands connections round-robin to the workers
    Dispatcher,
    /// One SO_REUSEPORT listener per worker; the kernel spreads connections
    Reuseport,
    /// One shared listener in every worker's epoll set with EPOLLEXCLUSIVE
    Exclusive,
}

/// `echolab serve`: everything a server model is configured with.
#[derive(clap::Args, Clone, Debug)]
#[command(about = "Run one echo server (RFC 862: every byte received is sent back, in order)")]
pub struct ServerConfig {
    /// The I/O model
    #[arg(long, value_enum)]
    pub model: Model,

    /// Address to listen on; port 0 picks a free port. The first stdout line is
    /// `listening on HOST:PORT ...` with the bound address
    #[arg(long, default_value = "127.0.0.1:7000")]
    pub addr: SocketAddr,

    /// Worker threads (epoll, uring, tokio); default: the number of CPUs
    #[arg(long)]
    pub workers: Option<usize>,

    /// epoll readiness: edge-triggered (EPOLLET) or level-triggered
    #[arg(long, value_enum, default_value = "edge")]
    pub trigger: Trigger,

    /// epoll: how connections reach the workers
    #[arg(long, value_enum, default_value = "dispatcher")]
    pub accept: AcceptMode,

    /// Copies of the server sharing the port with SO_REUSEPORT (poll, epoll, uring,
    /// tokio), so one server can hold more connections than one process's fd limit
    #[arg(long, default_value_t = 1)]
    pub processes: usize,

    /// Refuse (accept and close at once, counted) connections beyond this many open
    /// (with --processes: in each process)
    #[arg(long)]
    pub max_conns: Option<usize>,

    /// Close a connection that sent nothing for this long (e.g. 30s, 500ms); off by default
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub idle_timeout: Option<Duration>,

    /// Write one CSV row per closed connection to this file, created anew (peer, bytes, reads,
    /// times, reason); connections still open at shutdown are logged with reason `shutdown`
    #[arg(long)]
    pub log: Option<PathBuf>,

    /// Also write the shutdown summary as JSON to this file
    #[arg(long)]
    pub summary_json: Option<PathBuf>,

    /// Cap on unsent echo per connection; reading a client stops while it is over
    /// the cap (backpressure), so memory stays bounded
    #[arg(long, default_value = "256KiB", value_parser = parse_bytes)]
    pub max_pending: usize,

    /// Stack size of each connection thread (threads model)
    #[arg(long, default_value = "128KiB", value_parser = parse_bytes)]
    pub thread_stack: usize,

    /// listen(2) backlog
    #[arg(long, default_value_t = 4096)]
    pub backlog: i32,

    /// io_uring: let a kernel thread poll the submission queue (IORING_SETUP_SQPOLL)
    #[arg(long)]
    pub sqpoll: bool,
}

fn parse_bytes(text: &str) -> Result<usize, String> {
    let bytes = crate::units::parse_size(text)?;
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    usize::try_from(bytes).map_err(|_| format!("'{text}' is too large"))
}

impl ServerConfig {
    /// Worker threads to run: `--workers` or the number of CPUs.
    pub fn worker_count(&self) -> usize {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    fn validate(&self) -> anyhow::Result<()> {
        if self.workers == Some(0) {
            anyhow::bail!("--workers must be at least 1");
        }
        if self.processes == 0 {
            anyhow::bail!("--processes must be at least 1");
        }
        if self.processes > 1 && !self.model.supports_processes() {
            anyhow::bail!(
                "--processes is for poll, epoll, uring and tokio; {} runs in one process",
                self.model
            );
        }
        if self.backlog < 1 {
            anyhow::bail!("--backlog must be at least 1");
        }
        Ok(())
    }
}

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
        println!(
            "listening on {} model={} workers={} fd_limit={} pid={}",
            self.local_addr,
            self.config.model,
            self.workers,
            self.fd_limit,
            std::process::id()
        );
        io::stdout().flush()
    }

    /// Another SO_REUSEPORT listener on the same address, for models with one listener per worker.
    pub fn bind_another_listener(&self) -> io::Result<TcpListener> {
        bind_listener(self.local_addr, self.config.backlog)
    }
}

/// How often a model scans for idle connections under `--idle-timeout`: often enough
/// to close them near their limit, never busier than every 10 ms.
pub fn idle_check_interval(limit: Duration) -> Duration {
    (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// `echolab serve`: runs the configured model until SIGINT or SIGTERM, then prints the summary.
pub fn main(config: ServerConfig) -> anyhow::Result<ExitCode> {
    config.validate()?;
    crate::sys::ignore_sigpipe();
    let fd_limit = crate::sys::raise_fd_limit().context("reading the fd limit")?;
    install_shutdown_handler().context("installing the SIGINT/SIGTERM handler")?;
    if config.processes > 1 {
        return processes::main(config, fd_limit.soft);
    }

    let listener = bind_listener(config.addr, config.backlog)
        .with_context(|| format!("cannot listen on {}", config.addr))?;
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

/// Flushes the log, prints the summary on stderr and writes `--summary-json`.
fn finish(config: &ServerConfig, stats: &Stats, summary: &ServerSummary) -> anyhow::Result<()> {
    stats.flush_log().context("flushing the connection log")?;
    eprint!("{}", summary.render());
    if let Some(path) = &config.summary_json {
        let json = serde_json::to_string_pretty(summary)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
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

/// What one accept attempt gave.
pub enum Accepted {
    /// A new connection, counted as open; its socket is non-blocking.
    Conn(OwnedFd, ServerConnRecord),
    /// A connection was accepted and closed at once (counted as refused); try again.
    Refused,
    /// No connection is waiting.
    WouldBlock,
    /// Out of file descriptors and no spare to shed with: stop accepting until `resume_at`.
    Paused,
}

/// Accepts connections from one listener: counts them, enforces `--max-conns`
/// and survives EMFILE/ENFILE without spinning.
///
/// On EMFILE the pending connection would stay in the backlog and a level-triggered
/// loop would wake for it forever. So the process keeps one spare fd (on /dev/null):
/// [`shed_connection`] closes the spare, accepts and closes the connection (counted as
/// refused, `fd_limit`), and reopens the spare, as libuv and nginx do. If nothing can
/// be shed, accepting pauses for [`Acceptor::PAUSE`] and the loop leaves the listener
/// out of its interest set until [`Acceptor::paused`] turns false.
pub struct Acceptor {
    listener: RawFd,
    stats: Arc<Stats>,
    resume_at: Option<Instant>,
    fd_ceiling: Option<RawFd>,
}

impl Acceptor {
    pub const PAUSE: Duration = Duration::from_millis(100);

    pub fn new(listener: &impl AsRawFd, stats: Arc<Stats>) -> Acceptor {
        reserve_spare_fd();
        Acceptor {
            listener: listener.as_raw_fd(),
            stats,
            resume_at: None,
            fd_ceiling: None,
        }
    }

    /// Refuses (closes at once, counted as `fd_setsize`) every connection whose fd is
    /// `ceiling` or more, before it is admitted: for select(2), whose `fd_set` cannot
    /// hold such fds.
    pub fn refuse_fds_from(mut self, ceiling: RawFd) -> Acceptor {
        self.fd_ceiling = Some(ceiling);
        self
    }

    /// Whether accepting is paused after fd exhaustion.
    pub fn paused(&mut self) -> bool {
        match self.resume_at {
            Some(at) if Instant::now() < at => true,
            Some(_) => {
                self.resume_at = None;
                false
            }
            None => false,
        }
    }

    /// Time left in a pause, for the event loop's timeout.
    pub fn pause_left(&self) -> Option<Duration> {
        self.resume_at
            .map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// Accepts one connection (non-blocking, close-on-exec).
    pub fn accept(&mut self) -> Accepted {
        loop {
            match accept_raw(self.listener) {
                Ok((fd, peer)) => {
                    if self
                        .fd_ceiling
                        .is_some_and(|ceiling| fd.as_raw_fd() >= ceiling)
                    {
                        drop(fd);
                        self.stats.refuse(RefuseReason::FdSetsize, Some(peer));
                        return Accepted::Refused;
                    }
                    return match self.stats.admit(peer) {
                        Some(record) => Accepted::Conn(fd, record),
                        None => Accepted::Refused,
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Accepted::WouldBlock,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // The peer gave up before we accepted: nothing to count.
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => continue,
                Err(e) if is_fd_exhaustion(&e) => match shed_connection(self.listener) {
                    Some(peer) => {
                        self.stats.refuse(RefuseReason::FdLimit, Some(peer));
                        return Accepted::Refused;
                    }
                    None => {
                        self.resume_at = Some(Instant::now() + Self::PAUSE);
                        return Accepted::Paused;
                    }
                },
                Err(e) => {
                    // ENOBUFS, ENOMEM and the like: back off rather than spin.
                    eprintln!("echolab serve: accept failed: {e}; pausing accepts");
                    self.resume_at = Some(Instant::now() + Self::PAUSE);
                    return Accepted::Paused;
                }
            }
        }
    }
}

/// Whether an accept failed because the process or the system is out of fds.
pub fn is_fd_exhaustion(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE)
    )
}

/// The process's spare fd, and the lock every [`accept_raw`] takes: while one thread
/// sheds a connection through the slot the spare frees, no other acceptor can take it.
static SPARE_FD: Mutex<Option<OwnedFd>> = Mutex::new(None);

fn lock_spare_fd() -> std::sync::MutexGuard<'static, Option<OwnedFd>> {
    SPARE_FD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens the spare fd if it is not open yet (done when an acceptor starts).
pub fn reserve_spare_fd() {
    let mut spare = lock_spare_fd();
    if spare.is_none() {
        *spare = open_spare_fd();
    }
}

/// Out of fds: closes the spare to accept and close one waiting connection from
/// `listener`, then reopens the spare. Returns the shed connection's peer (the caller
/// counts it as refused, `fd_limit`), or `None` when nothing could be shed (no spare
/// and no fd free for one, or no connection waiting): then the caller pauses accepting.
pub fn shed_connection(listener: RawFd) -> Option<SocketAddr> {
    let mut spare = lock_spare_fd();
    // A connection may have closed since the spare was lost: try to take it back first.
    let freed = spare.take().or_else(open_spare_fd)?;
    drop(freed);
    let peer = accept4_nonblocking(listener).ok().map(|(fd, peer)| {
        drop(fd);
        peer
    });
    *spare = open_spare_fd();
    peer
}

fn open_spare_fd() -> Option<OwnedFd> {
    std::fs::File::open("/dev/null").ok().map(OwnedFd::from)
}

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC, returning the fd and the peer address.
/// Serialised with [`shed_connection`] so a shed never loses its slot to another thread.
pub fn accept_raw(listener: RawFd) -> io::Result<(OwnedFd, SocketAddr)> {
    let _spare = lock_spare_fd();
    accept4_nonblocking(listener)
}

fn accept4_nonblocking(listener: RawFd) -> io::Result<(OwnedFd, SocketAddr)> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let fd = syscall!(accept4(
        listener,
        (&mut storage as *mut libc::sockaddr_storage).cast(),
        &mut len,
        libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
    ))?;
    // SAFETY: accept4 returned a new fd that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let peer = sockaddr_to_std(&storage, len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unknown peer address family"))?;
    Ok((fd, peer))
}

/// Converts a kernel socket address (IPv4 or IPv6) to a [`SocketAddr`].
pub fn sockaddr_to_std(
    storage: &libc::sockaddr_storage,
    len: libc::socklen_t,
) -> Option<SocketAddr> {
    // SAFETY: storage is a valid sockaddr_storage of `len` bytes filled in by the kernel.
    let addr = unsafe { socket2::SockAddr::new(*storage, len) };
    addr.as_socket()
}

static SHUTDOWN: AtomicBool = AtomicBool::new(false);
static SHUTDOWN_FD: AtomicI32 = AtomicI32::new(-1);

/// Installs SIGINT and SIGTERM handlers that request shutdown. The request sets a flag
/// and makes [`shutdown_fd`] readable, so event loops can watch it with their other fds.
pub fn install_shutdown_handler() -> io::Result<()> {
    if SHUTDOWN_FD.load(Ordering::Acquire) < 0 {
        let fd = syscall!(eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC))?;
        SHUTDOWN_FD.store(fd, Ordering::Release);
    }
    extern "C" fn on_signal(_signal: libc::c_int) {
        request_shutdown();
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls write(2), both async-signal-safe.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action` is fully initialised; the old action is not wanted.
        syscall!(sigaction(signal, &action, std::ptr::null_mut()))?;
    }
    Ok(())
}

/// Asks every model loop to stop: they close their connections (reason `shutdown`) and return.
pub fn request_shutdown() {
    SHUTDOWN.store(true, Ordering::Release);
    let fd = SHUTDOWN_FD.load(Ordering::Acquire);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to the eventfd; async-signal-safe.
        unsafe {
            libc::write(fd, (&one as *const u64).cast(), 8);
        }
    }
}

/// Whether SIGINT or SIGTERM has arrived.
pub fn shutdown_requested() -> bool {
    SHUTDOWN.load(Ordering::Acquire)
}

/// An eventfd that becomes readable (and stays readable: nobody drains it) on shutdown.
pub fn shutdown_fd() -> RawFd {
    SHUTDOWN_FD.load(Ordering::Acquire)
}
