//! An owning epoll set, shaped like mio's selector: [`Epoll`] owns the epoll fd (created
//! close-on-exec, closed on drop), registers fds with a `u64` token and an [`Interest`], and
//! waits into [`Events`]. The translation between these types and the kernel's `EPOLL*` bits
//! happens here and nowhere else: [`Interest::bits`] one way, [`Event`]'s accessors the other.

use std::io;
use std::ops::BitOr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::syscall;

/// What to be told about a registered fd, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interest(u32);

impl Interest {
    /// Nothing: the fd stays registered but reports only errors and hang-ups.
    pub const NONE: Interest = Interest(0);
    /// Data to read, a pending connection, or an eventfd's non-zero counter.
    pub const READABLE: Interest = Interest(libc::EPOLLIN as u32);
    /// Room to write (and, for a connecting socket, the connect completing).
    pub const WRITABLE: Interest = Interest(libc::EPOLLOUT as u32);
    /// The peer shut down its write side (EPOLLRDHUP).
    pub const READ_CLOSED: Interest = Interest(libc::EPOLLRDHUP as u32);
    /// Edge-triggered: reported once per change instead of while the condition holds.
    pub const EDGE: Interest = Interest(libc::EPOLLET as u32);
    /// Of the epoll sets sharing this fd, wake only one (EPOLLEXCLUSIVE; ADD only).
    pub const EXCLUSIVE: Interest = Interest(libc::EPOLLEXCLUSIVE as u32);

    /// Both sets of interests (as `|`, usable in constants).
    pub const fn union(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    pub const fn contains(self, other: Interest) -> bool {
        self.0 & other.0 == other.0
    }

    /// The kernel's event mask: the one conversion from interests to `EPOLL*` bits.
    const fn bits(self) -> u32 {
        self.0
    }
}

impl BitOr for Interest {
    type Output = Interest;

    fn bitor(self, other: Interest) -> Interest {
        self.union(other)
    }
}

/// One readiness report: the token the fd was registered with and what it is ready for.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    token: u64,
    flags: u32,
}

impl Event {
    pub fn token(&self) -> u64 {
        self.token
    }

    pub fn is_readable(&self) -> bool {
        self.flags & libc::EPOLLIN as u32 != 0
    }

    pub fn is_writable(&self) -> bool {
        self.flags & libc::EPOLLOUT as u32 != 0
    }

    /// EPOLLERR or EPOLLHUP: an error is pending or both directions are shut.
    pub fn is_error(&self) -> bool {
        self.flags & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0
    }

    /// The peer will send nothing more (EPOLLRDHUP or EPOLLHUP).
    pub fn is_read_closed(&self) -> bool {
        self.flags & (libc::EPOLLRDHUP | libc::EPOLLHUP) as u32 != 0
    }
}

/// The buffer one wait fills.
pub struct Events {
    buffer: Vec<libc::epoll_event>,
    len: usize,
}

impl Events {
    /// Room for up to `capacity` events per wait.
    pub fn with_capacity(capacity: usize) -> Events {
        Events {
            buffer: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)],
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many events one wait may write, as the kernel takes it.
    fn room(&self) -> libc::c_int {
        self.buffer.len().min(libc::c_int::MAX as usize) as libc::c_int
    }

    /// Takes a wait's result: its count of events, or none when a signal ended it.
    fn filled(&mut self, waited: io::Result<libc::c_int>) -> io::Result<usize> {
        self.len = match waited {
            Ok(n) => n as usize,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e),
        };
        Ok(self.len)
    }

    /// The events of the last wait.
    pub fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        self.buffer[..self.len].iter().map(|e| Event {
            token: e.u64,
            flags: e.events,
        })
    }
}

/// An epoll set; closing it (on drop) removes every registration.
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        let fd = syscall!(epoll_create1(libc::EPOLL_CLOEXEC))?;
        // SAFETY: epoll_create1 returned a new fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd })
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, Interest::NONE)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest.bits(),
            u64: token,
        };
        syscall!(epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event))?;
        Ok(())
    }

    /// Waits up to `timeout_ms` milliseconds (-1: until an event) and returns how many
    /// events `events` now holds. A signal arriving during the wait ends it with none.
    pub fn wait(&self, events: &mut Events, timeout_ms: libc::c_int) -> io::Result<usize> {
        let waited = syscall!(epoll_wait(
            self.fd.as_raw_fd(),
            events.buffer.as_mut_ptr(),
            events.room(),
            timeout_ms
        ));
        events.filled(waited)
    }

    /// As [`Epoll::wait`], with the timeout to the nanosecond (`epoll_pwait2`, Linux 5.11):
    /// `epoll_wait` rounds a wait up to whole milliseconds, which would make an open-loop
    /// generator send each request up to 1 ms late. On an older kernel (ENOSYS) it falls
    /// back to milliseconds, rounded up.
    pub fn wait_ns(&self, events: &mut Events, timeout_ns: u64) -> io::Result<usize> {
        static NO_PWAIT2: AtomicBool = AtomicBool::new(false);
        if !NO_PWAIT2.load(Ordering::Relaxed) {
            let timeout = libc::timespec {
                tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
            };
            let waited = syscall!(epoll_pwait2(
                self.fd.as_raw_fd(),
                events.buffer.as_mut_ptr(),
                events.room(),
                &timeout,
                std::ptr::null()
            ));
            match waited {
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                    NO_PWAIT2.store(true, Ordering::Relaxed)
                }
                waited => return events.filled(waited),
            }
        }
        let timeout_ms = timeout_ns.div_ceil(1_000_000).min(libc::c_int::MAX as u64);
        self.wait(events, timeout_ms as libc::c_int)
    }
}

impl AsRawFd for Epoll {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    fn eventfd() -> OwnedFd {
        let fd = syscall!(eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC)).unwrap();
        // SAFETY: eventfd returned a new fd that nothing else owns.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    fn bump(fd: &OwnedFd) {
        let one: u64 = 1;
        syscall!(write(fd.as_raw_fd(), (&one as *const u64).cast(), 8)).unwrap();
    }

    #[test]
    fn an_eventfd_is_reported_readable_with_its_token() {
        let epoll = Epoll::new().unwrap();
        let wake = eventfd();
        epoll.add(wake.as_raw_fd(), 7, Interest::READABLE).unwrap();
        let mut events = Events::with_capacity(4);
        assert_eq!(epoll.wait(&mut events, 0).unwrap(), 0);
        bump(&wake);
        assert_eq!(epoll.wait(&mut events, 1000).unwrap(), 1);
        let event = events.iter().next().unwrap();
        assert_eq!(event.token(), 7);
        assert!(event.is_readable() && !event.is_writable() && !event.is_error());
        // Deleted, it is no longer reported though still readable.
        epoll.delete(wake.as_raw_fd()).unwrap();
        assert_eq!(epoll.wait(&mut events, 0).unwrap(), 0);
        assert!(events.is_empty());
    }

    #[test]
    fn a_nanosecond_wait_reports_events_and_times_out_empty() {
        let epoll = Epoll::new().unwrap();
        let wake = eventfd();
        epoll.add(wake.as_raw_fd(), 9, Interest::READABLE).unwrap();
        let mut events = Events::with_capacity(4);
        // 200 µs: a wait epoll_wait could not express (it would round up to 1 ms).
        assert_eq!(epoll.wait_ns(&mut events, 200_000).unwrap(), 0);
        bump(&wake);
        assert_eq!(epoll.wait_ns(&mut events, 1_000_000_000).unwrap(), 1);
        assert_eq!(events.iter().next().unwrap().token(), 9);
        // Seconds and nanoseconds both carried: a wait of 1.5 s returns at once when ready.
        assert_eq!(epoll.wait_ns(&mut events, 1_500_000_000).unwrap(), 1);
    }

    #[test]
    fn edge_triggering_reports_a_change_once_and_modify_changes_interest() {
        let epoll = Epoll::new().unwrap();
        let (mut ours, mut theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let fd = ours.as_raw_fd();
        epoll
            .add(fd, 1, Interest::READABLE | Interest::EDGE)
            .unwrap();
        let mut events = Events::with_capacity(4);
        theirs.write_all(b"ping").unwrap();
        assert_eq!(epoll.wait(&mut events, 1000).unwrap(), 1);
        // Not read yet, but edge-triggered: no second report.
        assert_eq!(epoll.wait(&mut events, 0).unwrap(), 0);
        let mut buf = [0u8; 4];
        ours.read_exact(&mut buf).unwrap();
        // Level-triggered writability is reported on every wait.
        epoll.modify(fd, 2, Interest::WRITABLE).unwrap();
        for _ in 0..2 {
            assert_eq!(epoll.wait(&mut events, 1000).unwrap(), 1);
            let event = events.iter().next().unwrap();
            assert_eq!(event.token(), 2);
            assert!(event.is_writable() && !event.is_readable());
        }
        // The peer closing shows as read-closed.
        epoll
            .modify(fd, 3, Interest::READABLE | Interest::READ_CLOSED)
            .unwrap();
        drop(theirs);
        assert_eq!(epoll.wait(&mut events, 1000).unwrap(), 1);
        assert!(events.iter().next().unwrap().is_read_closed());
    }

    #[test]
    fn errors_come_back_as_io_errors() {
        let epoll = Epoll::new().unwrap();
        let wake = eventfd();
        epoll.add(wake.as_raw_fd(), 1, Interest::READABLE).unwrap();
        let again = epoll.add(wake.as_raw_fd(), 1, Interest::READABLE);
        assert_eq!(again.unwrap_err().raw_os_error(), Some(libc::EEXIST));
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let missing = epoll.modify(ours.as_raw_fd(), 1, Interest::READABLE);
        assert_eq!(missing.unwrap_err().raw_os_error(), Some(libc::ENOENT));
        assert!(Interest::READABLE
            .bitor(Interest::EDGE)
            .contains(Interest::EDGE));
    }

    #[test]
    fn the_epoll_fd_is_close_on_exec() {
        let epoll = Epoll::new().unwrap();
        let flags = syscall!(fcntl(epoll.as_raw_fd(), libc::F_GETFD)).unwrap();
        assert_ne!(flags & libc::FD_CLOEXEC, 0);
    }
}
