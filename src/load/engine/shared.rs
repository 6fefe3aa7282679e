//! What the event-loop threads and the recorder share: the stop asked for, the active
//! connection counts, and each thread's measurements since the recorder last took them.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use crate::load::measurements::Interval;

/// How the run is asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Stop sending and let in-flight echoes arrive (the first signal).
    Drain = 1,
    /// Stop at once (a second signal).
    Now = 2,
}

/// State shared by the event-loop threads and the recorder.
pub struct Shared {
    /// 0 running, else a [`Stop`].
    stop: AtomicU8,
    pub active: AtomicU64,
    pub max_active: AtomicU64,
    /// What each thread measured since the recorder last took it.
    intervals: Vec<Mutex<Interval>>,
}

impl Shared {
    pub fn new(threads: usize) -> Shared {
        Shared {
            stop: AtomicU8::new(0),
            active: AtomicU64::new(0),
            max_active: AtomicU64::new(0),
            intervals: (0..threads)
                .map(|_| Mutex::new(Interval::default()))
                .collect(),
        }
    }

    /// Asks every thread to stop (a stop already requested is never softened), in the words of
    /// [`crate::sys::signal::request_stop`].
    pub fn request_stop(&self, how: Stop) {
        self.stop.fetch_max(how as u8, Ordering::SeqCst);
    }

    pub fn threads(&self) -> usize {
        self.intervals.len()
    }

    /// The stop requested, if any (read by the threads on every turn).
    pub fn stop_requested(&self) -> Option<Stop> {
        match self.stop.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Stop::Drain),
            _ => Some(Stop::Now),
        }
    }

    /// Thread `index` hands over what it measured, leaving `measured` empty.
    pub fn hand_over(&self, index: usize, measured: &mut Interval) {
        let mut slot = self.intervals[index].lock().expect("interval lock");
        slot.add(measured);
        measured.reset();
    }

    /// Takes what every thread handed over since the last call.
    pub fn take_interval(&self) -> Interval {
        let mut interval = Interval::default();
        for slot in &self.intervals {
            let mut taken = std::mem::take(&mut *slot.lock().expect("interval lock"));
            interval.add(&mut taken);
        }
        interval
    }
}
