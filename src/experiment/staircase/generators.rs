//! The load generators of a staircase: their process trees and the memory their
//! connections cost them (RSS now over RSS just before their batch connected).

use std::time::{Duration, Instant};

use crate::experiment::probe;
use crate::experiment::step::Agent;

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

    /// RSS gained since [`Generators::add`], over every live generator.
    pub(super) fn rss_gained(&self) -> Option<u64> {
        let now: u64 = self.pids.iter().map(|&pid| tree_rss(pid)).sum();
        (!self.pids.is_empty()).then(|| now.saturating_sub(self.rss_before))
    }
}

/// The RSS of a process and its descendants now (0 when it is gone).
fn tree_rss(pid: u32) -> u64 {
    probe::sample(pid, 0.0).map_or(0, |s| s.rss_bytes)
}
