//! The accept policy every model shares: [`Acceptor`] counts connections, enforces
//! `--max-conns`, and survives fd exhaustion (EMFILE/ENFILE) with a spare fd instead
//! of spinning; below it, the accept4(2) helpers and the process's spare fd.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::counters::{RefuseReason, ServerConnRecord, Stats};
use crate::syscall;

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
                    crate::errln!("echolab serve: accept failed: {e}; pausing accepts");
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

/// For accepts that bypass [`accept_raw`]'s lock (io_uring's, in the kernel): while one
/// worker sheds, another ring's accept can take the slot the spare freed, and the spare
/// is lost for good, leaving waiting connections with nothing to shed them. So every
/// such accepted fd goes through here: if the spare is missing, the new connection gives
/// its slot back to the spare (and the caller counts it as refused, `fd_limit`).
/// Returns the fd when the spare is in place.
pub fn keep_spare_fd(fd: OwnedFd) -> Option<OwnedFd> {
    let mut spare = lock_spare_fd();
    if spare.is_some() {
        return Some(fd);
    }
    drop(fd);
    *spare = open_spare_fd();
    None
}

fn open_spare_fd() -> Option<OwnedFd> {
    std::fs::File::open("/dev/null").ok().map(OwnedFd::from)
}

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC, returning the fd and the peer address.
/// Serialised with [`shed_connection`] so a shed never loses its slot to another thread.
fn accept_raw(listener: RawFd) -> io::Result<(OwnedFd, SocketAddr)> {
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
fn sockaddr_to_std(storage: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    // SAFETY: storage is a valid sockaddr_storage of `len` bytes filled in by the kernel.
    let addr = unsafe { socket2::SockAddr::new(*storage, len) };
    addr.as_socket()
}

/// The peer address of an accepted socket, for accepts that do not report it (io_uring's
/// multishot accept); `None` when the peer has left already (ENOTCONN).
pub fn peer_addr(fd: &OwnedFd) -> Option<SocketAddr> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    syscall!(getpeername(
        fd.as_raw_fd(),
        (&mut storage as *mut libc::sockaddr_storage).cast(),
        &mut len
    ))
    .ok()?;
    sockaddr_to_std(&storage, len)
}
