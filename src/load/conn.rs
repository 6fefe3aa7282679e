//! One connection slot of the engine: its state, the socket it owns while open, where its
//! echo stream stands and its record; and the socket calls that open and inspect it.

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use socket2::{Domain, Protocol, SockAddr, SockRef, Socket, Type};

use super::check::EchoCursor;
use super::measurements::LoadConnRecord;
use crate::syscall;

/// `to_release` of a run bounded by time rather than by a request count.
pub const UNLIMITED: u64 = u64::MAX;
/// `timer_at` of a connection without a timer.
pub const NO_TIMER: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum State {
    /// Not opened yet (waiting for its turn in the ramp).
    Pending,
    Connecting,
    Active,
    /// Requests done; kept open idle until its hold ends.
    Holding,
    /// Waiting to reconnect.
    Backoff,
    Done,
}

pub struct Conn {
    pub global: u64,
    pub state: State,
    /// The TCP connection while one is open; dropping it closes it (and leaves the epoll set).
    pub socket: Option<OwnedFd>,
    /// TCP connections opened so far for this slot; tags epoll events against stale ones.
    pub attempt: u32,
    /// Consecutive failures, for the backoff.
    pub failures: u32,
    pub timer_at: u64,
    pub established: bool,
    pub echo: EchoCursor,
    pub writable: bool,
    /// EPOLLOUT is in the registration. Left out while sends never block, so a small-message
    /// run is not woken once more per request when the peer's ACK frees send buffer space.
    pub out_armed: bool,
    /// (intended send time or 0 in closed loop, actual send time) of messages started, not echoed.
    pub inflight: VecDeque<(u64, u64)>,
    /// Messages allowed to start but not started: a count, not a queue of send times. The
    /// open loop's schedule is arithmetic (the oldest is `next_intended - released * period`),
    /// so a rate far above what the server takes costs no memory (wrk2 keeps none either).
    pub released: u64,
    /// Open loop: ns between this connection's intended sends; 0 in the closed loop.
    pub period: u64,
    /// Requests not released yet (UNLIMITED when the run is bounded by time).
    pub to_release: u64,
    /// Closed loop with --delay: releases waiting for the think time.
    pub delayed: u64,
    pub next_intended: u64,
    pub connect_started: u64,
    pub rec: LoadConnRecord,
}

impl Conn {
    pub fn new(global: u64, to_release: u64) -> Conn {
        Conn {
            global,
            state: State::Pending,
            socket: None,
            attempt: 0,
            failures: 0,
            timer_at: NO_TIMER,
            established: false,
            echo: EchoCursor::default(),
            writable: false,
            out_armed: false,
            inflight: VecDeque::new(),
            released: 0,
            period: 0,
            to_release,
            delayed: 0,
            next_intended: 0,
            connect_started: 0,
            rec: LoadConnRecord::default(),
        }
    }

    /// The open socket's fd, if one is open.
    pub fn fd(&self) -> Option<RawFd> {
        self.socket.as_ref().map(AsRawFd::as_raw_fd)
    }

    pub fn is_open(&self) -> bool {
        self.socket.is_some()
    }

    /// The epoll token of this slot's current connection: slot index and attempt.
    pub fn token(&self, idx: usize) -> u64 {
        ((idx as u64) << 32) | u64::from(self.attempt)
    }

    /// Starts the oldest released message: its intended send time (0 in the closed loop).
    pub fn start_released(&mut self) -> u64 {
        if self.released == 0 {
            return 0;
        }
        let intended = self.next_intended - self.released * self.period;
        self.released -= 1;
        if self.period == 0 {
            0
        } else {
            intended
        }
    }

    /// Allows `n` more messages to start now (closed loop).
    pub fn release_now(&mut self, n: u64) {
        self.released += n;
        if self.to_release != UNLIMITED {
            self.to_release -= n;
        }
    }
}

/// A nonblocking socket with a connect in progress to `target`, from `source` if given.
pub fn connect_socket(target: SocketAddr, source: Option<IpAddr>) -> io::Result<OwnedFd> {
    let socket = Socket::new(
        Domain::for_address(target),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )?;
    socket.set_nodelay(true)?;
    if let Some(source) = source {
        if source.is_ipv4() {
            // Leave the port unchosen until connect, so each source address can use the whole
            // port range once per destination instead of once in total.
            let one: libc::c_int = 1;
            syscall!(setsockopt(
                socket.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t
            ))?;
        }
        socket.bind(&SockAddr::from(SocketAddr::new(source, 0)))?;
    }
    match socket.connect(&SockAddr::from(target)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(socket.into())
}

/// The pending error of a socket (SO_ERROR) as an errno, 0 if none.
pub fn socket_error(socket: &OwnedFd) -> i32 {
    match SockRef::from(socket).take_error() {
        Ok(None) => 0,
        Ok(Some(e)) => e.raw_os_error().unwrap_or(libc::EIO),
        Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
    }
}

pub fn local_addr(socket: &OwnedFd) -> Option<SocketAddr> {
    SockRef::from(socket).local_addr().ok()?.as_socket()
}

/// The drain after a run stops sending: in-flight echoes may still arrive. It ends once no
/// echo byte came for twice the slowest echo seen so far (at least 1 s: a loaded server
/// answers late, not never), or `--response-timeout` after it began; a server silent that
/// long has timed out.
#[derive(Debug, Default)]
pub struct Drain {
    /// When it ends unless more bytes come; None until the run stops sending.
    pub until: Option<u64>,
    cap: u64,
    slowest_echo_ns: u64,
}

impl Drain {
    const MIN_IDLE_NS: u64 = 1_000_000_000;

    fn idle_ns(&self) -> u64 {
        Self::MIN_IDLE_NS.max(self.slowest_echo_ns.saturating_mul(2))
    }

    pub fn begin(&mut self, now: u64, response_timeout_ns: u64) {
        self.cap = now.saturating_add(response_timeout_ns.max(Self::MIN_IDLE_NS));
        self.until = Some((now + self.idle_ns()).min(self.cap));
    }

    /// An echo arrived `took_ns` after its message was sent.
    pub fn echoed(&mut self, took_ns: u64) {
        self.slowest_echo_ns = self.slowest_echo_ns.max(took_ns);
    }

    /// Echo bytes arrived: while draining, wait for more.
    pub fn progress(&mut self, now: u64) {
        let idle = self.idle_ns();
        if let Some(until) = &mut self.until {
            *until = (now + idle).min(self.cap);
        }
    }

    pub fn active(&self) -> bool {
        self.until.is_some()
    }

    pub fn over(&self, now: u64) -> bool {
        self.until.is_some_and(|until| now >= until)
    }
}

#[cfg(test)]
mod drain_tests {
    use super::Drain;

    const S: u64 = 1_000_000_000;

    #[test]
    fn the_drain_waits_twice_the_slowest_echo_and_never_past_the_response_timeout() {
        let mut drain = Drain::default();
        assert!(!drain.active());
        // Echoes so far took at most 0.2 s: a second of silence ends the drain.
        drain.echoed(S / 5);
        drain.begin(10 * S, 30 * S);
        assert!(!drain.over(10 * S + S - 1) && drain.over(11 * S));
        // An echo that took 3 s: silence ends it only after 6 s.
        drain.echoed(3 * S);
        drain.progress(10 * S);
        assert!(!drain.over(15 * S) && drain.over(16 * S));
        // Bytes that keep coming never hold it past the response timeout.
        drain.progress(39 * S);
        assert_eq!(drain.until, Some(40 * S));
    }
}
