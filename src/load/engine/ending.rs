//! How a connection ends: done (held or closed), failed (retried after a backoff or given
//! up), stopped by the drain at the end of the run, or timed out waiting for an echo.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use super::{ns, Io, Worker};
use crate::load::conn::{State, NO_TIMER, UNLIMITED};
use crate::load::measurements::{round3, ErrorKind};

impl<I: Io> Worker<'_, I> {
    pub(super) fn on_eof(&mut self, idx: usize, now: u64) {
        // An EOF is expected by nobody: the client closes first. A server that closes while
        // the client holds the connection is reported the same way.
        self.fail(idx, ErrorKind::Closed, now);
    }

    /// The connection did all its requests: hold it or close it.
    pub(super) fn finish(&mut self, idx: usize, now: u64) {
        let last = &mut self.local.counters.last_finished_ns;
        *last = (*last).max(now);
        match self.plan.hold {
            Some(hold) if !self.drain.active() => {
                let c = &mut self.conns[idx];
                c.state = State::Holding;
                // No request follows: the in-flight queue's allocation goes back.
                c.inflight = VecDeque::new();
                self.set_timer(idx, now + ns(hold));
            }
            _ => self.close_conn(idx, now, "done"),
        }
    }

    pub(super) fn end_record(&mut self, idx: usize, now: u64, end: &str) {
        let started_unix = self.started_unix;
        let c = &mut self.conns[idx];
        if c.socket.is_some() {
            // Before the socket closes: a request still holding it is cancelled.
            self.io.forget(c.token(idx));
        }
        c.socket = None;
        if c.established {
            c.established = false;
            self.shared.active.fetch_sub(1, Ordering::Relaxed);
        }
        c.timer_at = NO_TIMER;
        let mut rec = std::mem::take(&mut c.rec);
        rec.closed_unix = round3(started_unix + now as f64 / 1e9);
        rec.mean_response_us = if rec.requests == 0 {
            0.0
        } else {
            round3(rec.total_response_us as f64 / rec.requests as f64)
        };
        rec.end = end.to_string();
        self.local.records.push(rec);
    }

    pub(super) fn close_conn(&mut self, idx: usize, now: u64, end: &str) {
        self.end_record(idx, now, end);
        let c = &mut self.conns[idx];
        c.state = State::Done;
        c.inflight.clear();
        c.released = 0;
        self.remaining -= 1;
    }

    /// The connection failed: count the error, then reconnect later or give up.
    pub(super) fn fail(&mut self, idx: usize, kind: ErrorKind, now: u64) {
        let counters = &mut self.local.counters;
        let c = &mut self.conns[idx];
        if kind == ErrorKind::Closed {
            counters.unexpected_closes += 1;
        } else {
            counters.errors.count(kind);
        }
        if c.state == State::Connecting {
            counters.failed += 1;
        }
        let short = c.echo.unanswered(self.size);
        debug_assert_eq!(short, c.inflight.len() as u64);
        counters.short_echoes += short;
        c.rec.short_echoes += short;
        c.rec.errors += 1;
        c.rec.error_kind = kind.name().to_string();
        if c.to_release != UNLIMITED {
            c.to_release += short + c.released;
        }
        c.inflight.clear();
        c.released = 0;
        c.delayed = 0;
        self.end_record(idx, now, "error");
        let c = &mut self.conns[idx];
        if self.plan.reconnect && !self.drain.active() {
            c.state = State::Backoff;
            c.failures += 1;
            let exponent = (c.failures - 1).min(7);
            let jitter = (c.global * 7919) % 50_000_000;
            let backoff = (50_000_000u64 << exponent).min(5_000_000_000) + jitter;
            self.set_timer(idx, now + backoff);
        } else {
            c.state = State::Done;
            self.local.counters.ended_early += 1;
            self.remaining -= 1;
        }
    }

    /// Stop releasing requests; let in-flight echoes arrive until the drain deadline.
    pub(super) fn begin_drain(&mut self, now: u64) {
        self.drain.begin(now, ns(self.plan.response_timeout));
        for idx in 0..self.conns.len() {
            let c = &mut self.conns[idx];
            c.released = 0;
            c.delayed = 0;
            match c.state {
                State::Pending | State::Backoff => {
                    c.state = State::Done;
                    self.remaining -= 1;
                }
                State::Connecting => self.close_conn(idx, now, "stopped"),
                State::Holding => self.close_conn(idx, now, "done"),
                State::Active if c.inflight.is_empty() => self.close_conn(idx, now, "stopped"),
                State::Active | State::Done => {}
            }
        }
        self.next_open = self.conns.len();
    }

    /// Closes every connection. After the drain, an echo still awaited has timed out: the
    /// server had the whole drain to send it, so a silent server is an error, not a pause.
    pub(super) fn close_all(&mut self, now: u64, drain_over: bool) {
        for idx in 0..self.conns.len() {
            let c = &mut self.conns[idx];
            match c.state {
                State::Done => {}
                State::Pending | State::Backoff => {
                    c.state = State::Done;
                    self.remaining -= 1;
                }
                State::Active if drain_over && !c.inflight.is_empty() => {
                    self.local.counters.errors.count(ErrorKind::Timeout);
                    c.rec.errors += 1;
                    c.rec.error_kind = ErrorKind::Timeout.name().to_string();
                    self.close_conn(idx, now, "timeout");
                }
                _ => self.close_conn(idx, now, "stopped"),
            }
        }
    }

    pub(super) fn sweep_response_timeouts(&mut self, now: u64) {
        let limit = ns(self.plan.response_timeout);
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            if c.state == State::Active
                && c.inflight
                    .front()
                    .is_some_and(|&(_, sent)| now.saturating_sub(sent) > limit)
            {
                self.fail(idx, ErrorKind::Timeout, now);
            }
        }
    }
}
