//! The memory margin: before each stair, the memory the machine will have left after
//! it, predicted from MemAvailable and what each connection held so far has cost; a
//! stair predicted to leave less than the margin is not climbed, so the staircase ends
//! at the margin with its reason rather than the kernel's out-of-memory killer choosing
//! a process. docs/scale.md ("The memory margin") has the rule and its figures.
//!
//! MemAvailable counts the reclaimable slab as available, but the dentries and socket
//! inodes of open sockets sit in reclaimable caches and cannot be reclaimed while the
//! connection lives (about 2 KB a connection, both ends): the margin counts of the
//! reclaimable slab only what nothing holds, the unused dentries and the /proc inodes
//! that go with them, which anything listing every process's fds leaves behind.

use crate::scenario::{default_keep_available, Staircase};
use crate::sys::meminfo_bytes;

/// What a connection is assumed to cost before any has been measured: both ends'
/// kernel sockets, files and epoll items, and the server's and generators' user space.
/// c1m measured about 12 KB at 1 000 000 (docs/scale.md); 16 KiB keeps a third more.
pub const PRIOR_BYTES_PER_CONN: u64 = 16 << 10;

/// The margin of one staircase: the memory it keeps available, and the memory available when
/// its server had started (before any connection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    pub keep: u64,
    pub available_at_start: u64,
}

/// One stair's prediction, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub available: u64,
    /// Per connection: measured over the connections held, or the prior.
    pub per_conn: u64,
    pub measured: bool,
    /// The memory available once the stair's batch is held.
    pub after: u64,
}

impl Margin {
    /// The staircase's margin on this machine; `None` where /proc/meminfo cannot be read
    /// (the staircase then climbs without one).
    pub fn here(staircase: &Staircase) -> Option<Margin> {
        let total = meminfo_bytes("MemTotal:")?;
        Some(Margin {
            keep: staircase
                .keep_available
                .unwrap_or_else(|| default_keep_available(total)),
            available_at_start: available_now()?,
        })
    }

    /// The memory left once `batch` more connections are held over the `held` ones, with
    /// `available` bytes available now. Every byte lost since the start is
    /// charged to the connections held (anything else growing on the machine only makes
    /// the prediction more careful); with none held yet, or none lost, the prior.
    pub fn predict(&self, available: u64, held: u64, batch: u64) -> Prediction {
        let lost = self.available_at_start.saturating_sub(available);
        let measured = held > 0 && lost > 0;
        let per_conn = if measured {
            lost.div_ceil(held)
        } else {
            PRIOR_BYTES_PER_CONN
        };
        Prediction {
            available,
            per_conn,
            measured,
            after: available.saturating_sub(per_conn.saturating_mul(batch)),
        }
    }

    /// Why the stair adding `batch` to `held` is not climbed, or `None` when it fits.
    pub fn refuses(&self, available: u64, held: u64, batch: u64) -> Option<String> {
        let p = self.predict(available, held, batch);
        if p.after >= self.keep {
            return None;
        }
        let cost = if p.measured {
            format!(
                "{} bytes per connection measured over the {held} held",
                p.per_conn
            )
        } else {
            format!(
                "{} bytes per connection assumed before any was measured",
                p.per_conn
            )
        };
        Some(format!(
            "stopped at the memory margin: {} MiB available (MemAvailable less the reclaimable slab in use) at {cost}; \
             {batch} more connections would leave {} MiB, under the margin of {} MiB \
             (keep_available)",
            mib(p.available),
            mib(p.after),
            mib(self.keep)
        ))
    }
}

/// The memory available now as the margin counts it: MemAvailable less the reclaimable
/// slab in use (SReclaimable less what `unused_dcache` finds).
pub fn available_now() -> Option<u64> {
    let reclaimable = meminfo_bytes("SReclaimable:").unwrap_or(0);
    let unused = std::fs::read_to_string("/proc/sys/fs/dentry-state")
        .ok()
        .zip(std::fs::read_to_string("/proc/slabinfo").ok())
        .map_or(0, |(state, slabinfo)| unused_dcache(&state, &slabinfo));
    let in_use = reclaimable.saturating_sub(unused);
    Some(meminfo_bytes("MemAvailable:")?.saturating_sub(in_use))
}

/// Bytes of reclaimable slab that nothing holds, which the kernel frees on demand: the
/// dentries no one uses (the kernel's own count, the second field of
/// /proc/sys/fs/dentry-state) and as many /proc inodes, each freed with its dentry. Walking
/// /proc (`find /`, `lsof`, a monitor) leaves one of each per fd of every process: at a
/// million connections, gigabytes (docs/scale.md). An open socket's dentry is in use and
/// never counted. 0 when either file cannot be read (/proc/slabinfo is root's).
fn unused_dcache(dentry_state: &str, slabinfo: &str) -> u64 {
    let Some(unused) = dentry_state
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return 0;
    };
    // slabinfo: name, active objects, objects, object size, ...
    let cache = |name: &str| {
        slabinfo.lines().find_map(|line| {
            let mut f = line.split_whitespace();
            (f.next()? == name).then_some(())?;
            let active: u64 = f.next()?.parse().ok()?;
            let size: u64 = f.nth(1)?.parse().ok()?;
            Some((active, size))
        })
    };
    let Some((_, dentry_size)) = cache("dentry") else {
        return 0;
    };
    let proc_inodes =
        cache("proc_inode_cache").map_or(0, |(active, size)| active.min(unused) * size);
    unused * dentry_size + proc_inodes
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_first_stair_is_predicted_from_the_prior() {
        let m = Margin {
            keep: 2 * GIB,
            available_at_start: 20 * GIB,
        };
        let p = m.predict(20 * GIB, 0, 50_000);
        assert_eq!(p.per_conn, 16_384);
        assert!(!p.measured);
        assert_eq!(p.after, 20 * GIB - 16_384 * 50_000);
        assert_eq!(m.refuses(20 * GIB, 0, 50_000), None);
        // 2 GiB + 1 MiB available: 100 connections at 16 KiB take 1.6 MiB, past the margin.
        let e = m.refuses(2 * GIB + (1 << 20), 0, 100).unwrap();
        assert_eq!(
            e,
            "stopped at the memory margin: 2049 MiB available (MemAvailable less the reclaimable slab in use) at 16384 bytes \
             per connection assumed before any was measured; 100 more connections would \
             leave 2047 MiB, under the margin of 2048 MiB (keep_available)"
        );
    }

    #[test]
    fn later_stairs_charge_every_byte_lost_to_the_connections_held() {
        let m = Margin {
            keep: 2 * GIB,
            available_at_start: 20 * GIB,
        };
        // 1 000 000 held have taken 12 GB: 12 000 bytes each.
        let now = 20 * GIB - 12_000_000_000;
        let p = m.predict(now, 1_000_000, 50_000);
        assert_eq!((p.per_conn, p.measured), (12_000, true));
        assert_eq!(p.after, now - 600_000_000);
        assert_eq!(m.refuses(now, 1_000_000, 50_000), None);
        // At 1 600 000 held (19.2 GB), 2169 MiB is left; the next 50 000 would leave 1597.
        let now = 20 * GIB - 19_200_000_000;
        let e = m.refuses(now, 1_600_000, 50_000).unwrap();
        assert!(
            e.contains("2169 MiB available (MemAvailable less the reclaimable slab in use) at 12000 bytes per connection measured over the 1600000 held"),
            "{e}"
        );
        assert!(
            e.contains("would leave 1597 MiB, under the margin of 2048 MiB"),
            "{e}"
        );
        // Memory that came back (another process ended) is no cost: the prior again.
        assert_eq!(m.predict(21 * GIB, 10, 10).per_conn, PRIOR_BYTES_PER_CONN);
    }

    #[test]
    fn the_default_margin_is_2_gib_or_a_tenth_of_the_machine() {
        assert_eq!(default_keep_available(8 * GIB), 2 * GIB);
        assert_eq!(default_keep_available(64 * GIB), 64 * GIB / 10);
    }

    /// Read at 1 000 000 connections while a `find /` walked every process's fds: 6.75
    /// million dentries unused of 8.77 million, 6.59 million /proc inodes.
    const DENTRY_STATE: &str = "8764804\t6754514\t45\t0\t30788\t0\n";
    const SLABINFO: &str = "slabinfo - version: 2.1\n\
        # name <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables\n\
        TCP               1998737 1998744   2368   13    8 : tunables    0    0    0\n\
        sock_inode_cache  2000111 2000130    832   39    8 : tunables    0    0    0\n\
        proc_inode_cache  6585429 6585440    696   47    8 : tunables    0    0    0\n\
        dentry            8765274 8765274    192   21    1 : tunables    0    0    0\n";

    #[test]
    fn unused_dentries_and_their_proc_inodes_count_as_available_and_nothing_in_use_does() {
        // 6 754 514 unused dentries of 192 bytes, and all 6 585 429 /proc inodes of 696 (fewer):
        // the sockets' own dentries and inodes (in use) are not counted.
        assert_eq!(
            unused_dcache(DENTRY_STATE, SLABINFO),
            6_754_514 * 192 + 6_585_429 * 696
        );
        // Fewer unused dentries than /proc inodes: only as many inodes as dentries go.
        assert_eq!(
            unused_dcache("100\t40\t45\t0\t0\t0\n", SLABINFO),
            40 * 192 + 40 * 696
        );
        // Without slabinfo (not root) or a dentry cache line, nothing is counted.
        assert_eq!(unused_dcache(DENTRY_STATE, ""), 0);
        assert_eq!(unused_dcache("garbage", SLABINFO), 0);
    }
}
