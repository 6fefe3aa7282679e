//! Counting kernel tracepoints for one task with perf_event_open(2): an owning
//! [`Counter`] (a count, no samples, no ring buffer), and the tracepoint ids it needs
//! from tracefs.
//!
//! A counter opened with `inherit` on a thread also counts every thread and process that
//! thread creates afterwards, and keeps their counts when they exit: reading it gives
//! the total of the whole family since it was opened.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;

use crate::syscall;

/// `perf_event_attr` as of its first version (PERF_ATTR_SIZE_VER0, 64 bytes): all a
/// counting tracepoint needs; the kernel takes the fields after `size` as zero.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
/// `attr.flags` bit 0: opened stopped, started once its filter is set.
const FLAG_DISABLED: u64 = 1;
/// `attr.flags` bit 1: count the threads and processes created after the open too.
const FLAG_INHERIT: u64 = 1 << 1;
/// `PERF_EVENT_IOC_SET_FILTER`: `_IOW('$', 6, char *)`.
const IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
/// `PERF_EVENT_IOC_ENABLE`: `_IO('$', 0)`.
const IOC_ENABLE: libc::c_ulong = 0x2400;
/// `PERF_EVENT_IOC_DISABLE`: `_IO('$', 1)`.
const IOC_DISABLE: libc::c_ulong = 0x2401;
/// perf_event_open's flag for a close-on-exec fd.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// One tracepoint counted for a task and what it creates afterwards.
#[derive(Debug)]
pub struct Counter {
    file: File,
}

impl Counter {
    /// Counts tracepoint `id` fired by thread `tid` (and its later children), only the
    /// events passing `filter` (ftrace's filter syntax over the tracepoint's fields) when
    /// given. Needs CAP_PERFMON or root when perf_event_paranoid is above -1.
    pub fn tracepoint(tid: u32, id: u64, filter: Option<&str>) -> io::Result<Counter> {
        let attr = Attr {
            kind: PERF_TYPE_TRACEPOINT,
            size: std::mem::size_of::<Attr>() as u32,
            config: id,
            flags: FLAG_DISABLED | FLAG_INHERIT,
            ..Attr::default()
        };
        let fd = syscall!(syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            tid as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        ))?;
        // SAFETY: perf_event_open returned a new fd that nothing else owns.
        let file = unsafe { File::from_raw_fd(fd as libc::c_int) };
        if let Some(filter) = filter {
            let text = std::ffi::CString::new(filter)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "filter has a NUL"))?;
            syscall!(ioctl(file.as_raw_fd(), IOC_SET_FILTER, text.as_ptr()))?;
        }
        syscall!(ioctl(file.as_raw_fd(), IOC_ENABLE, 0))?;
        Ok(Counter { file })
    }

    /// Stops counting; the count so far is kept.
    pub fn disable(&self) -> io::Result<()> {
        syscall!(ioctl(self.file.as_raw_fd(), IOC_DISABLE, 0))?;
        Ok(())
    }

    /// The count so far, the exited children's included.
    pub fn read(&self) -> io::Result<u64> {
        let mut bytes = [0u8; 8];
        (&self.file).read_exact(&mut bytes)?;
        Ok(u64::from_ne_bytes(bytes))
    }
}

/// Where tracefs is usually mounted.
const TRACEFS: &str = "/sys/kernel/tracing";

/// The ids of tracepoints named `group/name` (as in tracefs's `events/`), in order.
/// Read from tracefs where it is mounted; else from a tracefs mounted for a moment on
/// one thread of its own, in a mount namespace of its own that nothing else sees.
pub fn tracepoint_ids(names: &[&str]) -> io::Result<Vec<u64>> {
    let read = |names: Vec<String>| -> io::Result<Vec<u64>> {
        names
            .iter()
            .map(|n| {
                let path = Path::new(TRACEFS).join("events").join(n).join("id");
                let text = fs::read_to_string(&path)?;
                text.trim().parse().map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, format!("{}", path.display()))
                })
            })
            .collect()
    };
    let owned: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    if Path::new(TRACEFS).join("events").is_dir() {
        return read(owned);
    }
    std::thread::spawn(move || {
        let none = std::ptr::null::<libc::c_char>();
        // A mount namespace for this thread alone (unshare gives the thread its own
        // filesystem information too); every mount private so nothing propagates out.
        syscall!(unshare(libc::CLONE_NEWNS))?;
        syscall!(mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null()
        ))?;
        syscall!(mount(
            c"tracefs".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null()
        ))?;
        read(owned)
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("the tracefs reader panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_is_the_first_version() {
        assert_eq!(std::mem::size_of::<Attr>(), 64);
    }

    #[test]
    fn a_counter_counts_this_threads_syscalls() {
        // Root only (perf_event_paranoid 2 here); elsewhere there is nothing to check.
        let Ok(ids) = tracepoint_ids(&["raw_syscalls/sys_enter"]) else {
            return;
        };
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        let Ok(all) = Counter::tracepoint(tid, ids[0], None) else {
            return;
        };
        let getppid =
            Counter::tracepoint(tid, ids[0], Some(&format!("id == {}", libc::SYS_getppid)))
                .expect("a filter on the syscall number is accepted");
        for _ in 0..100 {
            // SAFETY: getppid has no preconditions.
            unsafe { libc::getppid() };
        }
        let n = getppid.read().unwrap();
        let total = all.read().unwrap();
        assert_eq!(n, 100);
        // The 100 getppid, the read of the filtered counter, and little else.
        assert!((101..150).contains(&total), "{total}");
    }
}
