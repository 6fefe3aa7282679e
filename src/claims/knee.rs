//! The mechanism behind the claims whose reports give a hardware's threshold (6, 8 and
//! 23): a closed loop of clients, each pausing after its echo, asks for clients / pause
//! requests a second until that meets the server's capacity, and past it the response
//! time grows as clients / capacity - pause. Where that knee falls on this machine is
//! predicted from the capacity its rows measured, and tested against where they show it.

use super::{column, num_or_zero, ok_repetitions, ran, values_of, Row};
use crate::verdict::fmt_count;

/// Where a closed loop of clients, each pausing `delay_ms` after its echo, meets the
/// server's capacity: the most requests a second any step answered, and the clients at
/// which clients / pause reaches it, known only when a step was held back by it
/// (answered under 90 % of what its clients ask).
pub(super) struct Saturation {
    pub capacity: f64,
    pub knee_clients: Option<f64>,
    pub line: String,
}

/// [`Saturation`] of `model`'s ok rows at `delay_ms` over their client counts; None
/// without a pause or a throughput recorded.
pub(super) fn saturation(rows: &[Row], model: &str, delay_ms: f64) -> Option<Saturation> {
    const HELD_BACK: f64 = 0.9;
    if delay_ms <= 0.0 {
        return None;
    }
    let at = |c: f64| {
        move |r: &Row| {
            num_or_zero(r, column::CONNECTIONS) == c && num_or_zero(r, column::DELAY_MS) == delay_ms
        }
    };
    let answered: Vec<(f64, f64)> = values_of(
        rows.iter().filter(|r| r.model == model && ran(r)),
        column::CONNECTIONS,
    )
    .into_iter()
    .filter_map(|c| {
        Some((
            c,
            ok_repetitions(rows, model, at(c), column::THROUGHPUT_RPS)?.median,
        ))
    })
    .collect();
    let &(at_clients, capacity) = answered.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let asks = |c: f64| c * 1000.0 / delay_ms;
    let held_back = answered.iter().any(|&(c, rps)| rps < HELD_BACK * asks(c));
    let knee_clients = held_back.then(|| capacity * delay_ms / 1000.0);
    let line = format!(
        "the mechanism: capacity {} requests/s (the most answered, at {} clients); {}",
        fmt_count(capacity),
        fmt_count(at_clients),
        match knee_clients {
            Some(k) => format!(
                "clients / pause ({delay_ms} ms) meets it at {} clients",
                fmt_count(k)
            ),
            None => format!(
                "every step answered 90 % or more of what its clients ask at {delay_ms} ms, \
                 so none met it"
            ),
        }
    );
    Some(Saturation {
        capacity,
        knee_clients,
        line,
    })
}

/// Where a delay sweep's response time climbs: the first pair of delays (long, short)
/// where it at least doubles significantly, none over the whole sweep, or neither shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Knee {
    At(f64, f64),
    None,
    Unlocated,
}

/// The closed loop's own knee: `clients`, each pausing `delay` after its echo, ask for
/// clients / (delay + response time) requests a second; past the server's capacity X
/// the response time is clients / X - delay. It reaches twice the unloaded time `base`
/// at the delay clients / X - 2 base, so going from long delays to short the knee is
/// predicted at the pair whose shorter delay is the first at or below that; none when
/// that delay lies beyond the sweep's ends (saturated throughout, or never).
pub(super) fn predicted_knee(
    delays_long_first: &[f64],
    clients: f64,
    capacity: f64,
    base_ms: f64,
) -> Knee {
    let at_ms = clients / capacity * 1000.0 - 2.0 * base_ms;
    match delays_long_first.iter().position(|&d| d <= at_ms) {
        Some(i) if i > 0 => Knee::At(delays_long_first[i - 1], delays_long_first[i]),
        _ => Knee::None,
    }
}
