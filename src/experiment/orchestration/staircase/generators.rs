//! The load generators of a staircase: their process trees, the CPU they use and the
//! memory their connections cost them (RSS now over RSS just before their batch
//! connected).

use std::time::{Duration, Instant};

use crate::experiment::measurement::probe;
use crate::experiment::orchestration::session::Agent;

/// The load generators of the stairs so far: their process trees and the RSS they had
/// before their batches connected.
#[derive(Default)]
pub(super) struct Generators {
    pids: Vec<u32>,
    rss_before: u64,
}

impl Generators {
    /// Takes the new batch's generators, sampled just before they start loading (they
    /// wait for their common start), so their own start-up memory is not counted.
    pub(super) fn add(&mut self, agents: &[Agent], load_start: Instant) {
        let settle = load_start.saturating_duration_since(Instant::now());
        std::thread::sleep(settle.saturating_sub(Duration::from_millis(100)));
        for pid in agents
            .iter()
            .filter_map(|a| a.guard.as_ref().map(|g| g.pid()))
        {
            self.rss_before += tree_rss(pid);
            self.pids.push(pid);
        }
    }

    /// What every live generator has used so far; None before the first batch.
    pub(super) fn usage(&self) -> Option<Usage> {
        let samples: Vec<probe::Sample> = self
            .pids
            .iter()
            .filter_map(|&pid| probe::sample(pid, 0.0))
            .collect();
        let rss: u64 = samples.iter().map(|s| s.rss_bytes).sum();
        (!self.pids.is_empty()).then(|| Usage {
            cpu_s: samples.iter().map(probe::Sample::cpu_s).sum(),
            rss_gained: rss.saturating_sub(self.rss_before),
        })
    }
}

/// The live generators' use of the machine at one moment.
pub(super) struct Usage {
    /// CPU seconds (user and system, their children's included) since they started.
    pub cpu_s: f64,
    /// RSS gained since [`Generators::add`] sampled them.
    pub rss_gained: u64,
}

/// The CPU of the generators between two readings, in % of one core over `wall_s`.
pub(super) fn cpu_pct(from: Option<&Usage>, to: Option<&Usage>, wall_s: f64) -> Option<f64> {
    let (from, to) = (from?, to?);
    // A generator that ended in between takes its CPU with it: no figure rather than a low one.
    (wall_s > 0.0 && to.cpu_s >= from.cpu_s).then(|| (to.cpu_s - from.cpu_s) / wall_s * 100.0)
}

/// The RSS of a process and its descendants now (0 when it is gone).
fn tree_rss(pid: u32) -> u64 {
    probe::sample(pid, 0.0).map_or(0, |s| s.rss_bytes)
}
