//! Talking to a worker's ring: queuing a request (submitting and retrying when the
//! submission queue is full), submitting without waiting, reaping completions, and the
//! byte limit of a multishot recv.

use std::io;

use io_uring::squeue;

use super::Worker;

impl Worker {
    /// Submits what is queued without waiting.
    pub(super) fn submit(&mut self) -> io::Result<()> {
        match self.ring.submit() {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(()),
            // Completions overflow: the caller reaps next.
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Moves every available completion into the batch, freeing the kernel's queue.
    pub(super) fn reap(&mut self) {
        self.completions.extend(self.ring.completion());
    }

    /// Queues a request; when the submission queue is full, submits it and retries.
    pub(super) fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every pointer an entry carries stays valid until its completion: the
            // provided buffers and the timespec live in this worker, and a send's bytes in
            // its connection's `sending`, untouched while the send is in flight, or in a
            // provided buffer kept out of the ring until that send completes (`lent`).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.counters.sq_full += 1;
            self.submit()?;
            self.reap();
            if self.sqpoll {
                // The SQ thread consumes entries on its own: wait until it made room.
                self.ring.submitter().squeue_wait()?;
            }
        }
    }
}

/// Sets a multishot recv's total byte limit: after that many bytes its completion comes
/// without IORING_CQE_F_MORE and the recv must be re-armed (Linux 6.17+). The limit is
/// the SQE's `optlen` field, which io-uring 0.7 has no setter for.
pub(super) fn with_recv_limit(entry: squeue::Entry, limit: u32) -> squeue::Entry {
    /// Offset of `optlen` in the 64-byte `struct io_uring_sqe` (kernel ABI).
    const OPTLEN_OFFSET: usize = 44;
    // SAFETY: squeue::Entry is a repr(C) wrapper of io_uring_sqe, 64 bytes of plain data.
    let mut sqe: [u8; 64] = unsafe { std::mem::transmute::<squeue::Entry, [u8; 64]>(entry) };
    sqe[OPTLEN_OFFSET..OPTLEN_OFFSET + 4].copy_from_slice(&limit.to_ne_bytes());
    // SAFETY: the same bytes with one plain-data field changed are still a valid SQE.
    unsafe { std::mem::transmute::<[u8; 64], squeue::Entry>(sqe) }
}
