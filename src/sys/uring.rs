//! io_uring pieces shared by the uring server and the uring load engine: the provided
//! buffer ring ([`BufRing`]) and advice for a ring that cannot be set up ([`setup_error`]).
//!
//! A provided buffer ring is the ring of buffer descriptors the kernel takes a buffer from
//! when data arrives for a multishot recv, and the buffers.
//!
//! The kernel shares the descriptor ring with us through registration: it reads
//! `struct io_uring_buf` entries up to the tail we publish, and the tail itself
//! overlays the first entry's reserved field. Both layouts are checked below at
//! compile time, since the ring is written through raw pointers.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use anyhow::Context as _;
use io_uring::{types, IoUring};

use crate::syscall;

/// Size of each whole provided buffer (kernels without incremental consumption): the most
/// one recv completion carries.
pub const BUFFER_SIZE: usize = 8 * 1024;
/// `IOU_PBUF_RING_INC` (Linux 6.12+): the kernel consumes a buffer incrementally, each
/// completion taking only the bytes it received, so one large buffer serves many small
/// receives and a large one whole.
const IOU_PBUF_RING_INC: u16 = 2;
/// The buffer group id every ring's recvs select from (each ring has its own groups).
pub const BUFFER_GROUP: u16 = 0;

// The ring is indexed with `entries.add(i)`: the stride must be the kernel's
// `struct io_uring_buf` (addr: u64, len: u32, bid: u16, resv: u16), 16 bytes.
const _: () = assert!(std::mem::size_of::<types::BufRingEntry>() == 16);
// The tail (a u16 overlaying the first entry's `resv`) is stored through an AtomicU16.
const _: () = assert!(std::mem::size_of::<AtomicU16>() == std::mem::size_of::<u16>());
const _: () = assert!(std::mem::align_of::<AtomicU16>() == std::mem::align_of::<u16>());

/// A provided buffer ring: the descriptors and the buffers themselves, in one anonymous
/// mapping each so pages are only touched (and resident) once the kernel writes into them.
pub struct BufRing {
    entries: *mut types::BufRingEntry,
    entries_len: usize,
    memory: *mut u8,
    memory_len: usize,
    count: u16,
    size: usize,
    /// Our copy of the tail: the next entry to fill; published to the kernel after each give-back.
    tail: u16,
    /// Per buffer, for [`BufRing::take`]: bytes the kernel has filled so far, the pieces
    /// still held, and whether the kernel is done with it (no IORING_CQE_F_BUF_MORE).
    filled: Vec<u32>,
    holders: Vec<u32>,
    kernel_done: Vec<bool>,
    /// Buffers the kernel is done with but pieces still hold.
    held: u16,
}

/// `len` bytes at `offset` in provided buffer `bid`, held until [`BufRing::release`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub bid: u16,
    pub offset: u32,
    pub len: u32,
}

// SAFETY: the mappings belong to this BufRing alone; the loop owning it uses it from one thread.
unsafe impl Send for BufRing {}

impl BufRing {
    /// `count` buffers of `size` bytes each; `count` a power of two, as the kernel indexes
    /// the ring modulo its size.
    pub fn with_size(count: u16, size: usize) -> io::Result<BufRing> {
        assert!(
            count.is_power_of_two(),
            "a buffer ring's size is a power of two"
        );
        assert!(size <= u32::MAX as usize, "an entry's len is a u32");
        let entries_len = count as usize * std::mem::size_of::<types::BufRingEntry>();
        let memory_len = count as usize * size;
        let entries = map_anonymous(entries_len)?.cast::<types::BufRingEntry>();
        let memory = match map_anonymous(memory_len) {
            Ok(memory) => memory,
            Err(e) => {
                // SAFETY: unmapping the mapping made just above, used by nothing.
                unsafe { libc::munmap(entries.cast(), entries_len) };
                return Err(e);
            }
        };
        Ok(BufRing {
            entries,
            entries_len,
            memory,
            memory_len,
            count,
            size,
            tail: 0,
            filled: vec![0; count as usize],
            holders: vec![0; count as usize],
            kernel_done: vec![false; count as usize],
            held: 0,
        })
    }

    /// Registers the ring with the kernel and hands it every buffer.
    pub fn register(&mut self, ring: &IoUring) -> io::Result<()> {
        self.register_with_flags(ring, 0)
    }

    /// Registers the ring for incremental consumption (Linux 6.12+); an older kernel
    /// rejects the flag (EINVAL), and the ring can then be registered with [`BufRing::register`].
    pub fn register_incremental(&mut self, ring: &IoUring) -> io::Result<()> {
        self.register_with_flags(ring, IOU_PBUF_RING_INC)
    }

    fn register_with_flags(&mut self, ring: &IoUring, flags: u16) -> io::Result<()> {
        // SAFETY: the entries mapping is page-aligned, `count` entries long, and lives
        // until after the ring is dropped (its owner drops the ring first).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                self.entries as u64,
                self.count,
                BUFFER_GROUP,
                flags,
            )?;
        }
        for bid in 0..self.count {
            self.give_back(bid);
        }
        Ok(())
    }

    /// The bytes of `piece`.
    pub fn slice(&self, piece: Piece) -> &[u8] {
        let (start, len) = (piece.offset as usize, piece.len as usize);
        assert!(piece.bid < self.count && start + len <= self.size);
        // SAFETY: the piece lies inside buffer `bid`, inside the mapping; the kernel wrote
        // these bytes and, with incremental consumption, writes only after them until the
        // buffer is given back.
        unsafe {
            std::slice::from_raw_parts(self.memory.add(piece.bid as usize * self.size + start), len)
        }
    }

    /// The piece a recv completion of `len` bytes in buffer `bid` carries, held until
    /// [`BufRing::release`]. `more` is IORING_CQE_F_BUF_MORE: the kernel goes on filling
    /// this buffer after these bytes (incremental consumption); without it the kernel is
    /// done with the buffer, which goes back to the ring once no piece holds it.
    pub fn take(&mut self, bid: u16, len: usize, more: bool) -> Piece {
        let b = bid as usize;
        let piece = Piece {
            bid,
            offset: self.filled[b],
            len: len as u32,
        };
        self.filled[b] += len as u32;
        self.holders[b] += 1;
        if !more {
            self.kernel_done[b] = true;
            self.held += 1;
        }
        piece
    }

    /// Lets go of a piece from [`BufRing::take`]; its buffer goes back to the kernel once
    /// the kernel is done with it and no piece holds it.
    pub fn release(&mut self, piece: Piece) {
        let b = piece.bid as usize;
        self.holders[b] -= 1;
        if self.holders[b] == 0 && self.kernel_done[b] {
            self.filled[b] = 0;
            self.kernel_done[b] = false;
            self.held -= 1;
            self.give_back(piece.bid);
        }
    }

    /// Buffers the kernel can fill now or later: every buffer but those it is done with
    /// and pieces still hold (a partly filled one counts as the kernel's).
    pub fn in_kernel(&self) -> u16 {
        self.count - self.held
    }

    /// Bytes in each buffer.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Returns buffer `bid` to the kernel.
    pub fn give_back(&mut self, bid: u16) {
        let index = (self.tail & (self.count - 1)) as usize;
        // SAFETY: `index` is inside the entries mapping; the kernel reads entries only up to
        // the published tail, which does not cover this one yet.
        unsafe {
            let entry = &mut *self.entries.add(index);
            entry.set_addr(self.memory.add(bid as usize * self.size) as u64);
            entry.set_len(self.size as u32);
            entry.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field overlays the first entry's reserved field, a u16 the kernel
        // reads concurrently, hence the atomic release store after the entry is written.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: both mappings were made by `new` and are not used after this.
        unsafe {
            libc::munmap(self.entries.cast(), self.entries_len);
            libc::munmap(self.memory.cast(), self.memory_len);
        }
    }
}

fn map_anonymous(len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let address = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if address == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(address.cast())
}

/// The ring `built` with provided buffers registered with it: `incremental` (count, size)
/// consumed incrementally (Linux 6.12+), or `whole` (count, size) when the kernel rejects
/// that (EINVAL) or `whole_only` asks for them. A failure becomes advice ([`setup_error`])
/// naming `instead`.
pub fn ring_with_buffers(
    built: io::Result<IoUring>,
    incremental: (u16, usize),
    whole: (u16, usize),
    whole_only: bool,
    instead: &str,
) -> anyhow::Result<(IoUring, BufRing)> {
    let ring = built.map_err(|e| setup_error(e, "creating the ring", instead))?;
    let what = "registering the provided buffer ring";
    if !whole_only {
        let (count, size) = incremental;
        let mut buffers =
            BufRing::with_size(count, size).context("allocating the provided buffers")?;
        match buffers.register_incremental(&ring) {
            Ok(()) => return Ok((ring, buffers)),
            // A kernel before 6.12 does not know the flag.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => return Err(setup_error(e, what, instead)),
        }
    }
    let (count, size) = whole;
    let mut buffers = BufRing::with_size(count, size).context("allocating the provided buffers")?;
    buffers
        .register(&ring)
        .map_err(|e| setup_error(e, what, instead))?;
    Ok((ring, buffers))
}

/// Turns a ring set-up failure into advice: io_uring missing or disabled, or memlock too low.
/// `instead` names what to use without io_uring (`--model epoll`, `--engine epoll`).
pub fn setup_error(error: io::Error, what: &str, instead: &str) -> anyhow::Error {
    let advice = match error.raw_os_error() {
        Some(libc::ENOSYS) => {
            format!("io_uring is not available: this kernel was built without it; use {instead}")
        }
        Some(libc::EPERM) | Some(libc::EACCES) => {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map(|v| v.trim().to_string())
                .unwrap_or_else(|_| "unknown".into());
            format!(
                "io_uring is not permitted for this process (kernel.io_uring_disabled = {disabled}; \
                 1 allows only members of kernel.io_uring_group, 2 disables it; a container's \
                 seccomp policy can also forbid it); set it to 0 or use {instead}"
            )
        }
        Some(libc::ENOMEM) => format!(
            "not enough locked memory for io_uring (the memlock limit is {}); raise ulimit -l \
             (e.g. `ulimit -l unlimited`, or LimitMEMLOCK= in a systemd unit), run fewer rings \
             (--workers, --threads) or use {instead}",
            memlock_limit()
        ),
        _ => "io_uring set-up failed".to_string(),
    };
    anyhow::Error::new(error).context(format!("{advice} ({what})"))
}

fn memlock_limit() -> String {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    match syscall!(getrlimit(libc::RLIMIT_MEMLOCK, &mut limit)) {
        Ok(_) if limit.rlim_cur == libc::RLIM_INFINITY => "unlimited".into(),
        Ok(_) => format!("{} KiB", limit.rlim_cur / 1024),
        Err(_) => "unknown".into(),
    }
}
