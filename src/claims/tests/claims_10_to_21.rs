//! Claims 10 to 21: each verdict from hand-built rows.

use super::*;

/// Five repetitions of each (model, value) on column `c`.
fn five(c: &'static str, values: &[(&str, f64)]) -> Vec<Row> {
    values
        .iter()
        .flat_map(|&(m, v)| reps5(m, "c1000", &[(column::CONNECTIONS, 1000.0), (c, v)]))
        .collect()
}

#[test]
fn claim_10_epoll_slower_per_request() {
    let m = column::MEAN_US;
    let report = five(
        m,
        &[("threads", 363.0), ("select", 460.0), ("epoll", 1197.0)],
    );
    let c = judge(10, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll 1.20 ms against threads 363 µs (mean response time): x3.30 (2.85–3.82), \
         p = 0.012, n = 5"
    );
    let faster = five(
        m,
        &[("threads", 400.0), ("select", 460.0), ("epoll", 200.0)],
    );
    assert_eq!(verdict(10, &faster), ClaimVerdict::Refuted);
    let same = five(
        m,
        &[("threads", 400.0), ("select", 300.0), ("epoll", 400.0)],
    );
    let c = judge(10, &same, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(c.why.contains("p = 1.00, n = 5"), "{}", c.why);
    assert!(c.why.contains("; held: epoll higher"), "{}", c.why);
    // A model that never finished: nothing to compare.
    let missing = five(m, &[("threads", 400.0), ("epoll", 900.0)]);
    assert_eq!(verdict(10, &missing), ClaimVerdict::Inconclusive);
}

#[test]
fn claim_11_threads_takes_the_most_cpu() {
    let cpu = column::SERVER_CPU_PCT;
    let report = five(
        cpu,
        &[("threads", 93.25), ("select", 29.5), ("epoll", 12.33)],
    );
    assert_eq!(verdict(11, &report), ClaimVerdict::Confirmed);
    let cheap = five(
        cpu,
        &[("threads", 20.0), ("select", 29.5), ("epoll", 12.33)],
    );
    assert_eq!(verdict(11, &cheap), ClaimVerdict::Refuted);
    let same = five(cpu, &[("threads", 30.0), ("select", 30.0), ("epoll", 30.0)]);
    assert_eq!(verdict(11, &same), ClaimVerdict::NoDifference);
}

#[test]
fn claim_12_select_takes_the_least_memory() {
    let rss = column::SERVER_RSS_MAX_BYTES;
    let report = five(
        rss,
        &[("threads", 1.825e9), ("select", 1.4e9), ("epoll", 2.651e9)],
    );
    assert_eq!(verdict(12, &report), ClaimVerdict::Confirmed);
    let epoll_less = five(rss, &[("threads", 30e6), ("select", 4e6), ("epoll", 3e6)]);
    let c = judge(12, &epoll_less, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why
            .contains("the reverse of “select lower server memory (peak RSS) than epoll”, significantly: select 3.81 MiB"),
        "{}",
        c.why
    );
    // Select 3 % below epoll in every repetition is significant but within x1.05: no
    // difference, not a confirmation.
    let close: Vec<Row> = [("threads", 30e6), ("select", 3.88e6), ("epoll", 4e6)]
        .iter()
        .flat_map(|&(m, v)| {
            scaled_reps(
                &TIGHT,
                m,
                "c1000",
                &[(column::CONNECTIONS, 1000.0), (rss, v)],
            )
        })
        .collect();
    let c = judge(12, &close, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(
        c.why.contains("x0.97") && c.why.contains("p = 0.012"),
        "{}",
        c.why
    );
    let same = five(rss, &[("threads", 4e6), ("select", 4e6), ("epoll", 4e6)]);
    assert_eq!(verdict(12, &same), ClaimVerdict::NoDifference);
}

#[test]
fn claim_13_select_faster_for_300_busy_clients() {
    let m = column::MEAN_US;
    assert_eq!(
        verdict(13, &five(m, &[("select", 9119.0), ("epoll", 15214.0)])),
        ClaimVerdict::Confirmed
    );
    assert_eq!(
        verdict(13, &five(m, &[("select", 900.0), ("epoll", 600.0)])),
        ClaimVerdict::Refuted
    );
    assert_eq!(
        verdict(13, &five(m, &[("select", 900.0), ("epoll", 900.0)])),
        ClaimVerdict::NoDifference
    );
}

#[test]
fn claim_14_epoll_scaled_out_beats_select_on_all_aspects() {
    let both = |select: (f64, f64), one: (f64, f64), two: (f64, f64)| -> Vec<Row> {
        [("select", select), ("epoll", one), ("epoll-2w", two)]
            .iter()
            .flat_map(|&(m, (tput, mean))| {
                reps5(
                    m,
                    "c256-d0.1ms",
                    &[(column::THROUGHPUT_RPS, tput), (column::MEAN_US, mean)],
                )
            })
            .collect()
    };
    let c = judge(
        14,
        &both((50e3, 500.0), (48e3, 520.0), (80e3, 300.0)),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[2].starts_with("the second worker: epoll-2w 80,000 req/s against epoll 48,000"),
        "{:?}",
        c.numbers
    );
    // Faster but not quicker to answer: not "on all aspects".
    let c = judge(
        14,
        &both((50e3, 500.0), (48e3, 520.0), (80e3, 500.0)),
        MachineLimits::default(),
    );
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert_eq!(
        verdict(14, &both((50e3, 500.0), (48e3, 520.0), (40e3, 600.0))),
        ClaimVerdict::Refuted
    );
}

#[test]
fn claim_15_a_second_worker_thread() {
    let t = column::THROUGHPUT_RPS;
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 90e3)])),
        ClaimVerdict::Confirmed
    );
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 30e3)])),
        ClaimVerdict::Refuted
    );
    assert_eq!(
        verdict(15, &five(t, &[("epoll", 50e3), ("epoll-2w", 50e3)])),
        ClaimVerdict::NoDifference
    );
}

#[test]
fn claim_16_epoll_at_40_000_and_45_000_clients() {
    let ok = [held("epoll", 40_000.0), held("epoll", 45_000.0)].concat();
    let c = judge(16, &ok, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll finished every client without an error up to 45,000 (3 repetitions at the top)"
    );
    let mut broke = held("epoll", 40_000.0);
    broke.push(failed("epoll", 45_000.0));
    let c = judge(16, &broke, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll failed at 45,000 clients in every repetition: server refused 86 connections"
    );
    let mut mixed = held("epoll", 40_000.0);
    mixed.push(failed("epoll", 40_000.0));
    assert_eq!(verdict(16, &mixed), ClaimVerdict::Inconclusive);
}

/// A staircase of `stairs` stairs of 1 000, three repetitions, with the MiB/s of each.
fn staircase(mib_s: impl Fn(f64) -> f64) -> Vec<Row> {
    (1..=3)
        .flat_map(|rep| {
            let mib_s = &mib_s;
            (1..=10).map(move |stair| {
                let c = stair as f64 * 1000.0;
                row(
                    "epoll",
                    &format!("c{c}"),
                    rep,
                    Status::Ok,
                    &[
                        (column::CONNECTIONS, c),
                        (column::STAIR, stair as f64),
                        (column::THROUGHPUT_MIB_S, mib_s(c) + rep as f64 * 0.01),
                    ],
                )
            })
        })
        .collect()
}

#[test]
fn claim_17_more_connections_no_more_speed() {
    let limited = staircase(|_| 2.86);
    let c = by_rule(17, &limited, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.why.starts_with(
            "more connections did not raise the speed: the ratio's whole interval lies \
             within x1.05: above 5,000 2.88 MiB/s against up to 5,000 2.88 MiB/s (echo \
             throughput): x1.00"
        ),
        "{}",
        c.why
    );
    assert_eq!(
        c.numbers[0],
        "1,000 connections: median 2.88 MiB/s over 3 reps"
    );
    assert!(c.why.ends_with("; within the x1.05 threshold"), "{}", c.why);
    // Stairs too scattered to show either growth or a level: no difference, not confirmed.
    let scattered = staircase(|c| [1.0, 2.86, 5.0][(c / 1000.0) as usize % 3]);
    let c = by_rule(17, &scattered, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(
        c.why.starts_with("no growth shown and no limit shown"),
        "{}",
        c.why
    );
    // Slower at the top: a limit shown.
    let falling = staircase(|c| 20.0 - c / 1000.0);
    assert_eq!(rule(17, &falling), ClaimVerdict::Confirmed);
    let growing = staircase(|c| c / 1000.0);
    let c = by_rule(17, &growing, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("p < 0.001, n = 15"), "{}", c.why);
}

/// Five repetitions at each (clients, delay ms, retransmitted segments per 1 000
/// requests), the retransmissions spread 0.9 to 1.1 over the repetitions.
pub(super) fn retransmissions(points: &[(f64, f64, f64)]) -> Vec<Row> {
    points
        .iter()
        .flat_map(|&(clients, delay, per_1000)| {
            [0.9, 0.95, 1.0, 1.05, 1.1]
                .iter()
                .enumerate()
                .map(move |(i, k)| {
                    row(
                        "epoll",
                        &format!("c{clients}-d{delay}ms"),
                        i as u32 + 1,
                        Status::Ok,
                        &[
                            (column::CONNECTIONS, clients),
                            (column::DELAY_MS, delay),
                            (column::REQUESTS, 20_000.0),
                            (column::NET_RETRANS_SEGS, per_1000 * k * 20.0),
                            (column::NET_SEGS_IN_PER_S, 15_000.0),
                        ],
                    )
                })
        })
        .collect()
}

#[test]
fn claim_18_retransmissions_at_short_delays() {
    // A queue that overflows at 125 ms for 2 500 clients and at both delays for 5 000:
    // the claim is judged at 2 500 (004's clients), where only the delay differs.
    let report = retransmissions(&[
        (2500.0, 250.0, 1.0),
        (2500.0, 125.0, 30.0),
        (5000.0, 250.0, 40.0),
        (5000.0, 125.0, 50.0),
    ]);
    let c = by_rule(18, &report, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[..2],
        [
            "2,500 clients, delay 250 ms: retransmitted segments per 1 000 requests median \
             1.00 (0.90–1.10, 5 reps), segments in 15,000/s",
            "2,500 clients, delay 125 ms: retransmitted segments per 1 000 requests median \
             30.00 (27.00–33.00, 5 reps), segments in 15,000/s"
        ]
    );
    assert_eq!(
        c.numbers[4],
        "2,500 clients at 125 ms and below 30.00 against above 125 ms 1.00 (retransmitted \
         segments per 1 000 requests): x30.00 (25.91–34.74), p = 0.012, n = 5"
    );
    // No retransmission at any delay (loopback, or a queue that never fills): no
    // difference, never a confirmation.
    let none = retransmissions(&[(2500.0, 250.0, 0.0), (2500.0, 125.0, 0.0)]);
    let c = by_rule(18, &none, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    assert!(c.why.contains("p = 1.00, n = 5"), "{}", c.why);
    assert!(!c.numbers.iter().any(|n| n.contains("whole machine")));
    // As many at both delays, within the x1.05 threshold: no difference.
    let level = retransmissions(&[(2500.0, 250.0, 20.0), (2500.0, 125.0, 20.5)]);
    assert_eq!(rule(18, &level), ClaimVerdict::NoDifference);
    // Without a namespace of its own the counters are the machine's, and it says so.
    let mut host = none.clone();
    for r in &mut host {
        r.net_scope = Some("host".into());
    }
    let c = by_rule(18, &host, MachineLimits::default());
    assert_eq!(
        c.numbers.last().map(String::as_str),
        Some("the counters are the whole machine's (net_scope host): other traffic counts too")
    );
    let fewer = retransmissions(&[(2500.0, 250.0, 30.0), (2500.0, 125.0, 1.0)]);
    assert_eq!(rule(18, &fewer), ClaimVerdict::Refuted);
    // Per request: twice the requests at 125 ms with twice the retransmissions is no
    // more retransmissions.
    let mut doubled = retransmissions(&[(2500.0, 250.0, 10.0), (2500.0, 125.0, 10.0)]);
    for r in doubled
        .iter_mut()
        .filter(|r| r.num(column::DELAY_MS) == Some(125.0))
    {
        for c in [column::REQUESTS, column::NET_RETRANS_SEGS] {
            let v = r.num(c).unwrap() * 2.0;
            *r = r.clone().with(c, v);
        }
    }
    assert_eq!(rule(18, &doubled), ClaimVerdict::NoDifference);
    // Only the long delay ran: nothing to compare.
    let long = retransmissions(&[(2500.0, 250.0, 1.0)]);
    assert_eq!(rule(18, &long), ClaimVerdict::Inconclusive);
}

#[test]
fn claim_19_epoll_keeps_20_000_clients_connected() {
    let counts = [2500.0, 5000.0, 7500.0, 10_000.0, 20_000.0];
    let all: Vec<Row> = counts.iter().flat_map(|&c| held("epoll", c)).collect();
    let c = judge(19, &all, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll finished every client without an error up to 20,000 (3 repetitions at the top)"
    );
    assert_eq!(c.numbers.len(), 5);
    let mut short: Vec<Row> = counts[..4].iter().flat_map(|&c| held("epoll", c)).collect();
    short.push(failed("epoll", 20_000.0));
    assert_eq!(verdict(19, &short), ClaimVerdict::Refuted);
}
/// Five repetitions of epoll at `clients` whose last tenth to join took `last` µs on
/// average and the tenth before `ninth`.
fn by_join_order(clients: f64, last: f64, ninth: f64) -> Vec<Row> {
    reps5(
        "epoll",
        &format!("c{clients}"),
        &[
            (column::CONNECTIONS, clients),
            (column::JOINED_LAST_TENTH_MEAN_US, last),
            (column::JOINED_NINTH_TENTH_MEAN_US, ninth),
        ],
    )
}

#[test]
fn claim_20_the_last_clients_to_join() {
    // A jump at the end of the order, judged at the most clients.
    let mut rows = by_join_order(2500.0, 1_000.0, 1_000.0);
    rows.extend(by_join_order(20000.0, 30_000.0, 10_000.0));
    let c = judge(20, &rows, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[1].starts_with("20,000 clients: last tenth to join 30"),
        "{:?}",
        c.numbers
    );
    assert!(c.numbers[2].contains("x3.00"), "{:?}", c.numbers);
    // Slower, significantly, but only as growth along the order would be.
    let linear = by_join_order(20000.0, 13_000.0, 10_000.0);
    let c = judge(20, &linear, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c.why.contains("by x1.30"), "{}", c.why);
    // The last tenth no slower: no difference, with p.
    let flat = [by_join_order(20000.0, 10_000.0, 10_000.0)].concat();
    assert_eq!(verdict(20, &flat), ClaimVerdict::NoDifference);
    // Rows without the join order (a run before these columns): inconclusive, said so.
    let old = reps5("epoll", "c20000", &[(column::CONNECTIONS, 20000.0)]);
    let c = judge(20, &old, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive);
    assert!(c.why.starts_with("no step finished with"), "{}", c.why);
}

#[test]
fn claim_21_select_steadier_than_epoll() {
    let spread = |model: &str, cv: f64| reps5(model, "c1000", &[(column::REQUESTS_PER_S_CV, cv)]);
    let steadier = [spread("select", 0.05), spread("epoll", 0.20)].concat();
    let c = judge(21, &steadier, MachineLimits::default());
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0].starts_with("select 0.050 against epoll 0.200"),
        "{:?}",
        c.numbers
    );
    let rougher = [spread("select", 0.20), spread("epoll", 0.05)].concat();
    assert_eq!(verdict(21, &rougher), ClaimVerdict::Refuted);
    let level = [spread("select", 0.10), spread("epoll", 0.10)].concat();
    assert_eq!(verdict(21, &level), ClaimVerdict::NoDifference);
}
