//! Claims 22, 23 and 32 from hand-built rows, and each claim's own test in the Claims
//! section.

use super::claims_10_to_21::retransmissions;
use super::*;

/// 004's retransmissions rising with the clients, judged from claim-18's rows.
const RETRANSMISSIONS_WITH_CLIENTS: usize = 32;

#[test]
fn claim_32_more_clients_more_retransmissions_at_the_longest_pause() {
    let n = RETRANSMISSIONS_WITH_CLIENTS;
    assert_eq!(claim_of("claim-32"), Some(n));
    assert_eq!(claims_of("claim-18"), [18, n]);
    // claim-18's rows: at 250 ms 2 500 clients stay below the link's rate, 5 000 do not.
    let rows = retransmissions(&[
        (2500.0, 250.0, 1.0),
        (2500.0, 125.0, 30.0),
        (5000.0, 250.0, 40.0),
        (5000.0, 125.0, 50.0),
    ]);
    let c = by_rule(n, &rows, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[4],
        "at a 250 ms pause: 5,000 clients 40.00 against 2,500 clients 1.00 (retransmitted \
         segments per 1 000 requests): x40.00 (34.55–46.32), p = 0.012, n = 5"
    );
    let fewer = retransmissions(&[(2500.0, 250.0, 40.0), (5000.0, 250.0, 1.0)]);
    assert_eq!(rule(n, &fewer), ClaimVerdict::Refuted);
    // As many with twice the clients: no difference, never a confirmation.
    let same = retransmissions(&[(2500.0, 250.0, 5.0), (5000.0, 250.0, 5.0)]);
    assert_eq!(rule(n, &same), ClaimVerdict::NoDifference);
    // One client count at the longest pause: nothing to compare, and it says so.
    let one = retransmissions(&[(2500.0, 250.0, 1.0), (5000.0, 125.0, 40.0)]);
    let c = by_rule(n, &one, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
    assert_eq!(
        c.why,
        "only 2,500 clients ran at the 250 ms pause: nothing to compare"
    );
    // Its own test is shown, not claim-18's.
    let sections = section(&[c], |_| None);
    assert!(sections[1].blocks.iter().any(|b| matches!(
        b,
        crate::render::document::Block::Paragraph(p) if p.starts_with("Test: claim-18's link")
    )));
}

/// Five repetitions of select and epoll at `clients`, a pause of `delay` ms, epoll's
/// TCP segments per second `epoll_over_select` times select's in every repetition.
fn gap(clients: f64, delay: f64, epoll_over_select: f64) -> Vec<Row> {
    let step = format!("c{clients}-d{delay}");
    let at = |segments: f64| {
        [
            (column::CONNECTIONS, clients),
            (column::DELAY_MS, delay),
            (column::NET_SEGS_IN_PER_S, segments),
        ]
    };
    let mut rows = reps5("select", &step, &at(100_000.0));
    rows.extend(reps5("epoll", &step, &at(100_000.0 * epoll_over_select)));
    rows
}

#[test]
fn claim_22_the_gap_closes_as_requests_come_more_often() {
    // 001: epoll 8 % behind at 10 ms, 5 % at 0.1 ms; here 20 % and 1 %.
    let closes = [gap(250.0, 10.0, 1.2), gap(250.0, 0.1, 1.01)].concat();
    let c = judge(22, &closes, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers,
        [
            "250 clients: the gap between select and epoll (their TCP segments per second apart) \
          median 20.0 % (20.0 %–20.0 %, 5 reps) at a 10 ms pause, median 1.0 % (1.0 %–1.0 %, \
          5 reps) at 0.1 ms (closed, p = 0.0056, n = 5)"
        ]
    );
    // The response times alone do not decide: 001's figure is packets per second.
    let timed_only: Vec<Row> = closes
        .iter()
        .cloned()
        .map(|mut r| {
            let segments = r.num(column::NET_SEGS_IN_PER_S).unwrap();
            r = r.with(column::MEAN_US, 1e6 / segments);
            r.net_segs_in_per_s = None;
            r
        })
        .collect();
    assert_eq!(verdict(22, &timed_only), ClaimVerdict::Inconclusive);
    // The gap grows with the frequency, whichever server is ahead.
    let widens = [gap(250.0, 10.0, 0.99), gap(250.0, 0.1, 0.8)].concat();
    let c = judge(22, &widens, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    // The same gap at both pauses is no difference, never a confirmation.
    let same = [gap(250.0, 10.0, 1.1), gap(250.0, 0.1, 1.1)].concat();
    assert_eq!(verdict(22, &same), ClaimVerdict::NoDifference);
    // A change below five points of the ratio is not a closing.
    let slight = [gap(250.0, 10.0, 1.04), gap(250.0, 0.1, 1.01)].concat();
    assert_eq!(verdict(22, &slight), ClaimVerdict::NoDifference);
    // Closed at one client count, widened at another: undecided.
    let mixed = [
        closes.clone(),
        gap(1000.0, 10.0, 1.0),
        gap(1000.0, 0.1, 1.3),
    ]
    .concat();
    assert_eq!(verdict(22, &mixed), ClaimVerdict::Inconclusive);
    // Only one pause ran: nothing to compare.
    assert_eq!(
        verdict(22, &gap(250.0, 10.0, 1.2)),
        ClaimVerdict::Inconclusive
    );
}

/// Four repetitions of epoll at `clients` receiving `segments` per second.
fn rate(clients: f64, segments: f64) -> Vec<Row> {
    answering(clients, segments, clients.min(7500.0))
}

/// Four repetitions of `clients` at a 1000 ms pause receiving `segments` a second and
/// answering `requests` a second.
fn answering(clients: f64, segments: f64, requests: f64) -> Vec<Row> {
    scaled_reps(
        &[0.99, 1.0, 1.0, 1.01],
        "epoll",
        &format!("c{clients}"),
        &[
            (column::CONNECTIONS, clients),
            (column::DELAY_MS, 1000.0),
            (column::NET_SEGS_IN_PER_S, segments),
            (column::THROUGHPUT_RPS, requests),
        ],
    )
}

#[test]
fn claim_23_the_packet_rate_levels_off_from_5000_clients() {
    // 004: about 15 000 packets/s from 5 000 clients on.
    let level = [
        rate(2500.0, 9000.0),
        rate(5000.0, 15000.0),
        rate(10000.0, 15100.0),
        rate(20000.0, 15000.0),
    ]
    .concat();
    let c = judge(23, &level, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    // A server of 7 500 requests/s, asked for 10 000 and 20 000: a level from 10 000.
    assert!(
        c.why.starts_with(
            "as a mechanism: confirmed (a level predicted from 10,000 clients, past 7,500 \
             (capacity 7,500): "
        ),
        "{}",
        c.why
    );
    // The rate still growing past the capacity refutes the mechanism.
    let past = [
        rate(5000.0, 15000.0),
        rate(10000.0, 20000.0),
        rate(20000.0, 40000.0),
    ]
    .concat();
    assert_eq!(verdict(23, &past), ClaimVerdict::Refuted);
    assert_eq!(
        c.numbers[3],
        "20,000 clients: segments received median 15,000/s over 4 reps"
    );
    // A server that answers all its clients ask: the rate keeps growing, the report's
    // number refuted and the mechanism confirmed; levelling there refutes the mechanism.
    let grows = [
        answering(5000.0, 15000.0, 5000.0),
        answering(20000.0, 60000.0, 20000.0),
    ]
    .concat();
    let c = judge(23, &grows, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why
            .contains("; as a number: refuted: the packet rate grew with the clients"),
        "{}",
        c.why
    );
    let stalls = [
        answering(5000.0, 15000.0, 5000.0),
        answering(20000.0, 15000.0, 20000.0),
    ]
    .concat();
    assert_eq!(verdict(23, &stalls), ClaimVerdict::Refuted);
    // Scattered too widely to show either: no difference, never a confirmation.
    let mut scattered = rate(5000.0, 15000.0);
    scattered.extend(scaled_reps(
        &[0.7, 0.9, 1.1, 1.4],
        "epoll",
        "c20000",
        &[
            (column::CONNECTIONS, 20000.0),
            (column::DELAY_MS, 1000.0),
            (column::NET_SEGS_IN_PER_S, 15000.0),
        ],
    ));
    assert_eq!(verdict(23, &scattered), ClaimVerdict::NoDifference);
    // Nothing past 5 000 clients: nothing to compare.
    let below = [rate(2500.0, 9000.0), rate(5000.0, 15000.0)].concat();
    assert_eq!(verdict(23, &below), ClaimVerdict::Inconclusive);
}

/// The paragraphs of the Claims section's part for claim `number`.
fn paragraphs(number: usize) -> Vec<String> {
    let sections = section(&[Claim::not_run(number, "not root")], |_| None);
    sections[1]
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Paragraph(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

/// A claim judged from another claim's rows shows its own test, and says whose rows
/// judge it in classic, from its declaration.
#[test]
fn each_claim_shows_its_own_test_and_whose_rows_judge_it() {
    for (i, c) in CLAIMS.iter().enumerate() {
        let shown = paragraphs(i + 1);
        assert!(
            shown.contains(&format!("Test: {}", c.test)),
            "claim {} does not show its own test",
            i + 1
        );
        let from = shown
            .iter()
            .find(|p| p.starts_with("In classic, judged from"));
        assert_eq!(from.is_some(), c.judged_from.is_some(), "claim {}", i + 1);
    }
    assert!(paragraphs(11).contains(
        &"In classic, judged from claim-10's rows (the same load); claim-11 runs it alone."
            .to_string()
    ));
    assert_eq!(claims_of("claim-4"), [4, 22]);
    assert_eq!(claims_of("claim-10"), [10, 11, 12, 28]);
    assert_eq!(claims_of("claim-6"), [6, 19, 20, 23, 29, 40, 41]);
    assert_eq!(claims_of("claim-8"), [8, 30, 31, 42, 43, 44, 45, 46]);
    assert_eq!(claims_of("claim-9"), [9, 24, 33, 34, 35, 36, 37, 38]);
    assert_eq!(claims_of("claim-17"), [17, 39]);
}
