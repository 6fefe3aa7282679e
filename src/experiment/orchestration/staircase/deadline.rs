//! A stair's connect deadline: how long its batch may take to connect, and the failure
//! of a stair that missed it.

use std::time::Duration;

use super::{window, Stair};
use crate::experiment::measurement::netstat::NetCounters;
use crate::results::Status;
use crate::scenario::Scenario;

/// How long a stair's batch may take to connect, from its load's start: the connect
/// timeout (a connection attempted last may take that long), plus twice the batch's
/// ramp at the slower of the scenario's `connect_rate` and the previous stair's measured
/// connect rate (a stair may connect at half the rate of the one before it, which falls
/// as the connections held grow), the measured ramp at most four connect timeouts; plus
/// 2 s to see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Deadline {
    pub(super) connect_timeout: Duration,
    pub(super) ramp: Duration,
    /// The previous stair's connect rate, when it set the ramp.
    pub(super) measured_rate: Option<f64>,
}

impl Deadline {
    pub(super) fn of(scenario: &Scenario, batch: u64, previous_rate: Option<f64>) -> Deadline {
        let load = &scenario.load;
        let connect_timeout = load
            .connect_timeout
            .map_or(Duration::from_secs(10), |d| d.0);
        let rate = load.connect_rate.map(|r| r.0);
        Deadline::rule(connect_timeout, rate, batch, previous_rate)
    }

    pub(super) fn rule(
        connect_timeout: Duration,
        connect_rate: Option<f64>,
        batch: u64,
        previous_rate: Option<f64>,
    ) -> Deadline {
        // A rate near 0 takes longer than a Duration holds: the longest, capped below.
        let at =
            |rate: f64| Duration::try_from_secs_f64(batch as f64 / rate).unwrap_or(Duration::MAX);
        let planned = connect_rate.map_or(Duration::ZERO, at);
        let measured = previous_rate
            .filter(|r| *r > 0.0)
            .map(|r| (r, at(r).min(connect_timeout * 4)));
        match measured {
            Some((rate, ramp)) if ramp > planned => Deadline {
                connect_timeout,
                ramp,
                measured_rate: Some(rate),
            },
            _ => Deadline {
                connect_timeout,
                ramp: planned,
                measured_rate: None,
            },
        }
    }

    pub(super) fn total(&self) -> Duration {
        (self
            .connect_timeout
            .saturating_add(self.ramp.saturating_mul(2)))
        .saturating_add(Duration::from_secs(2))
    }

    /// The rule with its numbers, as a failure reason states it.
    pub(super) fn describe(&self, batch: u64) -> String {
        let ramp = match self.measured_rate {
            Some(rate) => format!(
                " + 2 x {batch} connections at the previous stair's {rate:.0}/s ({:.1} s)",
                self.ramp.as_secs_f64()
            ),
            None if self.ramp > Duration::ZERO => format!(
                " + 2 x {batch} connections at the connect rate ({:.1} s)",
                self.ramp.as_secs_f64()
            ),
            None => String::new(),
        };
        format!(
            "its deadline of {:.1} s: connect timeout {:.0} s{ramp} + 2 s",
            self.total().as_secs_f64(),
            self.connect_timeout.as_secs_f64()
        )
    }
}

/// A stair whose batch had not established (or failed) every connection by its
/// deadline fails, whatever its window shows later (a batch that connects late would
/// otherwise pass on a window measured after the deadline); true when it fails here.
/// A stair that failed or was cut short for another reason keeps that reason, with the
/// deadline it missed. `counted`: the server's TCP counters from the batch's start to its
/// deadline, which name what a late connection went through (docs/scale.md).
pub(super) fn missed_deadline(
    stair: &mut Stair,
    by_deadline: &window::Connections,
    batch: u64,
    deadline: &Deadline,
    counted: Option<&NetCounters>,
) -> bool {
    let missed = match stair.status {
        Status::Ok => {
            stair.status = Status::Failed;
            stair.reason = format!(
                "{} of {batch} connections established within {}",
                by_deadline.established.min(batch),
                deadline.describe(batch)
            );
            if by_deadline.failed > 0 {
                stair.reason += &format!(" ({} failed)", by_deadline.failed);
            }
            true
        }
        Status::Failed => {
            stair.reason += &format!(" within {}", deadline.describe(batch));
            false
        }
        _ => return false,
    };
    if let Some(c) = counted {
        stair.reason += &while_it_connected(c);
    }
    missed
}

/// What the server's TCP counted while a batch connected: a SYN the listen queue had no
/// room for is dropped (an overflow, or a drop) and resent after 1 s, 3 s, 7 s ..., so
/// these say whether a late connection waited on the server's queue or elsewhere (the
/// load generator, the network).
fn while_it_connected(c: &NetCounters) -> String {
    format!(
        "; while it connected the server's TCP counted {} listen-queue overflow(s), {} \
         listen drop(s) and {} SYN or SYN-ACK retransmission(s)",
        c.listen_overflows, c.listen_drops, c.syn_retrans
    )
}
