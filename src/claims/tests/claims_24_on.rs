//! Claims 24 to 31 from hand-built rows: every outcome of each rule, and a flagged
//! repetition that never decides alone.

use super::*;

/// Four repetitions spread 3 % apart: four against four can reach p < 0.05.
const FOUR: [f64; 4] = [0.97, 0.99, 1.01, 1.03];
/// Four repetitions within 1 % of each other: tight enough to show a level.
const FOUR_TIGHT: [f64; 4] = [0.99, 0.995, 1.005, 1.01];
/// Four repetitions scattered too widely to show either a change or a level.
const SCATTERED: [f64; 4] = [0.7, 0.9, 1.1, 1.4];

/// Repetitions of `model` at `step` scaled by `scales`, with `values`.
fn at(scales: &[f64], model: &str, step: &str, values: &[(&str, f64)]) -> Vec<Row> {
    scaled_reps(scales, model, step, values)
}

fn judged(number: usize, rows: &[Row]) -> Claim {
    let c = judge(number, rows, MachineLimits::default());
    assert!(!c.why.is_empty(), "claim {number} says why");
    c
}

/// Claim `number` judged by its rule alone (a demonstration's rule still decides what its
/// numbers say).
fn ruled(number: usize, rows: &[Row]) -> Claim {
    let c = by_rule(number, rows, MachineLimits::default());
    assert!(!c.why.is_empty(), "claim {number} says why");
    c
}

/// Claim 24's rows: each model's requests answered at its one step, four repetitions.
fn answered(epoll: f64, threads: f64, select: f64) -> Vec<Row> {
    [("epoll", epoll), ("threads", threads), ("select", select)]
        .iter()
        .flat_map(|&(m, v)| at(&FOUR, m, "c1000", &[(column::REQUESTS, v)]))
        .collect()
}

#[test]
fn claim_24_epoll_answers_the_most_requests_then_threads_then_select() {
    let report = answered(57_000.0, 30_000.0, 3_000.0);
    let c = judged(24, &report);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0].starts_with(
            "epoll 57,000 against threads 30,000 (requests answered at the most connections \
             held): x1.90"
        ),
        "{}",
        c.numbers[0]
    );
    // Threads above epoll: the reverse of the order, refuted.
    assert_eq!(
        judged(24, &answered(3_000.0, 57_000.0, 1_000.0)).verdict,
        ClaimVerdict::Refuted
    );
    // epoll and threads both held every step: no difference, never a confirmation.
    let c = judged(24, &answered(57_000.0, 57_000.0, 3_000.0));
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    // A repetition with no step passed counts 0 requests; a model with no row at all
    // is not measured.
    let no_select: Vec<Row> = report
        .iter()
        .filter(|r| r.model != "select")
        .cloned()
        .collect();
    assert_eq!(judged(24, &no_select).verdict, ClaimVerdict::Inconclusive);
}

/// Claim 25's rows: epoll at `hosts` client hosts and `connections`, mean `mean`.
fn hosts(scales: &[f64], hosts: f64, connections: f64, mean: f64) -> Vec<Row> {
    at(
        scales,
        "epoll",
        &format!("c{connections}-h{hosts}"),
        &[
            (column::CLIENT_HOSTS, hosts),
            (column::CONNECTIONS, connections),
            (column::MEAN_US, mean),
        ],
    )
}

#[test]
fn claim_25_the_time_rises_as_client_hosts_are_added() {
    let with = |scales: &[f64], four_hosts: f64| {
        [
            hosts(&FOUR, 1.0, 500.0, 100.0),
            hosts(&FOUR, 1.0, 2000.0, 150.0),
            hosts(&FOUR, 4.0, 500.0, 100.0),
            hosts(scales, 4.0, 2000.0, four_hosts),
        ]
        .concat()
    };
    let rises = with(&FOUR, 200.0);
    let c = judged(25, &rises);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "1 client host (500 connections): mean response time median 100 µs (97 µs–103 µs, 4 \
         reps)"
    );
    assert_eq!(c.numbers.len(), 6);
    assert!(
        c.numbers[4].starts_with(
            "4 client hosts (2,000 connections) 200 µs against 1 client host (500 connections) \
             100 µs"
        ),
        "{}",
        c.numbers[4]
    );
    assert_eq!(
        judged(25, &with(&FOUR, 50.0)).verdict,
        ClaimVerdict::Refuted
    );
    // The same time with four hosts, tightly: no rise shown, refuted.
    let level = [
        hosts(&FOUR_TIGHT, 1.0, 500.0, 100.0),
        hosts(&FOUR_TIGHT, 4.0, 2000.0, 100.0),
    ]
    .concat();
    let c = judged(25, &level);
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why
            .starts_with("no change: the ratio's whole 95 % interval"),
        "{}",
        c.why
    );
    // Scattered: neither a rise nor a level, no difference.
    assert_eq!(
        judged(25, &with(&SCATTERED, 100.0)).verdict,
        ClaimVerdict::NoDifference
    );
    // One host count: nothing to add.
    assert_eq!(
        judged(25, &hosts(&FOUR, 1.0, 500.0, 100.0)).verdict,
        ClaimVerdict::Inconclusive
    );
    // A generator-bound repetition never decides alone: without it 3 against 4 cannot
    // reach p < 0.05, so the rise stays undecided.
    let c = judged(25, &bound(rises.clone(), "epoll", 4));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(
        c.why
            .contains("generator-bound or disturbed repetition(s), each left out in turn"),
        "{}",
        c.why
    );
}

/// Claim 26's rows: epoll at `connections` answering `rps` requests per second.
fn rate(scales: &[f64], connections: f64, rps: f64) -> Vec<Row> {
    at(
        scales,
        "epoll",
        &format!("c{connections}"),
        &[
            (column::CONNECTIONS, connections),
            (column::THROUGHPUT_RPS, rps),
            (column::MEAN_US, connections / rps * 1e6),
        ],
    )
}

#[test]
fn claim_26_the_rate_drops_at_20000_connections() {
    let drops = [
        rate(&FOUR, 10_000.0, 100_000.0),
        rate(&FOUR, 20_000.0, 60_000.0),
    ]
    .concat();
    let c = judged(26, &drops);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[1],
        "20,000 connections: median 60,000 (58,200–61,800, 4 reps) requests/s, mean \
         response time median 333.33 ms (323.33 ms–343.33 ms, 4 reps)"
    );
    let grows = [
        rate(&FOUR, 10_000.0, 100_000.0),
        rate(&FOUR, 20_000.0, 150_000.0),
    ]
    .concat();
    assert_eq!(judged(26, &grows).verdict, ClaimVerdict::Refuted);
    let level = [
        rate(&FOUR_TIGHT, 10_000.0, 100_000.0),
        rate(&FOUR_TIGHT, 20_000.0, 100_000.0),
    ]
    .concat();
    assert_eq!(judged(26, &level).verdict, ClaimVerdict::Refuted);
    let scattered = [
        rate(&FOUR, 10_000.0, 100_000.0),
        rate(&SCATTERED, 20_000.0, 100_000.0),
    ]
    .concat();
    assert_eq!(judged(26, &scattered).verdict, ClaimVerdict::NoDifference);
    // 20 000 failed in every repetition: nothing to compare, and the reason is listed.
    let mut failed_top = rate(&FOUR, 10_000.0, 100_000.0);
    failed_top.push(row(
        "epoll",
        "c20000",
        1,
        Status::Failed,
        &[(column::CONNECTIONS, 20_000.0)],
    ));
    let c = judged(26, &failed_top);
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(
        c.numbers[1].ends_with("failed in 1 of 1 repetitions: server refused 86 connections"),
        "{}",
        c.numbers[1]
    );
}

/// Claim 27's rows: five repetitions of threads at `threads` % of a core, epoll at
/// `epoll` %.
fn cpu_both(scales: &[f64], threads: f64, epoll: f64) -> Vec<Row> {
    let mut rows = scaled_reps(
        scales,
        "threads",
        "c1000",
        &[(column::SERVER_CPU_PCT, threads)],
    );
    rows.extend(reps5("epoll", "c1000", &[(column::SERVER_CPU_PCT, epoll)]));
    rows
}

/// Claim 27's rows with epoll at 15 % of its core.
fn cpu(scales: &[f64], threads: f64) -> Vec<Row> {
    cpu_both(scales, threads, 15.0)
}

#[test]
fn claim_27_threads_pin_their_core() {
    let c = judged(27, &cpu(&TIGHT, 95.0));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "threads took 90 % of its core or more in every repetition (94.0%–96.0% over 5 \
         repetitions), where epoll took at most 16.5% at the same rate"
    );
    // A rate that pins epoll too would pin any server: not the threads' doing.
    let c = judged(27, &cpu_both(&TIGHT, 95.0, 95.0));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(
        c.why.ends_with("the rate pins any server here"),
        "{}",
        c.why
    );
    let threads_only = scaled_reps(
        &TIGHT,
        "threads",
        "c1000",
        &[(column::SERVER_CPU_PCT, 95.0)],
    );
    assert_eq!(
        judged(27, &threads_only).verdict,
        ClaimVerdict::Inconclusive
    );
    let c = judged(27, &cpu(&TIGHT, 25.0));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "threads stayed below 90 % of its core in every repetition (24.8%–25.2% over 5 \
         repetitions): its 1 000 threads doing I/O did not pin it"
    );
    assert_eq!(
        c.numbers[1],
        "epoll: server CPU median 15.0% (13.5%–16.5%, 5 reps) of its one core; throughput \
         no repetition passed"
    );
    // 81 % to 99 %: the repetitions straddle the line.
    assert_eq!(
        judged(27, &cpu(&[0.9, 0.95, 1.0, 1.05, 1.1], 90.0)).verdict,
        ClaimVerdict::Inconclusive
    );
    // A generator-bound repetition is left out when others remain.
    let mut rows = cpu(&TIGHT, 25.0);
    rows.push(row(
        "threads",
        "c1000",
        6,
        Status::Ok,
        &[(column::SERVER_CPU_PCT, 99.0)],
    ));
    let rows = bound(rows, "threads", 6);
    let c = judged(27, &rows);
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(c
        .numbers
        .contains(&"1 generator-bound or disturbed repetition(s) left out".to_string()));
    // No threads row passed.
    let epoll_only = reps5("epoll", "c1000", &[(column::SERVER_CPU_PCT, 15.0)]);
    assert_eq!(judged(27, &epoll_only).verdict, ClaimVerdict::Inconclusive);
}

/// Claim 28's rows: five repetitions each of threads and epoll at their CPU per request.
fn per_request(threads: f64, epoll: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    for (m, v, switches) in [("threads", threads, 2.0), ("epoll", epoll, 0.1)] {
        rows.extend(reps5(
            m,
            "c1000",
            &[
                (column::SERVER_CPU_US_PER_REQUEST, v),
                (column::SERVER_VOLUNTARY_SWITCHES_PER_REQ, switches),
            ],
        ));
    }
    rows
}

#[test]
fn claim_28_epoll_saves_cpu_time_per_request() {
    // The profile on a quiet machine: threads 18.1 µs a request, epoll 2.6.
    let c = judged(28, &per_request(18.1, 2.6));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[1].starts_with("threads: context switches per request, voluntary median 2.000"),
        "{}",
        c.numbers[1]
    );
    assert!(
        c.numbers[2].ends_with("involuntary no repetition passed"),
        "{}",
        c.numbers[2]
    );
    assert_eq!(
        judged(28, &per_request(2.6, 18.1)).verdict,
        ClaimVerdict::Refuted
    );
    assert_eq!(
        judged(28, &per_request(5.0, 5.0)).verdict,
        ClaimVerdict::NoDifference
    );
    let threads_only: Vec<Row> = per_request(18.1, 2.6)
        .into_iter()
        .filter(|r| r.model == "threads")
        .collect();
    assert_eq!(
        judged(28, &threads_only).verdict,
        ClaimVerdict::Inconclusive
    );
}

/// Claim 29's rows: epoll at `clients` with the spread `cv` of its requests per second.
fn spread_at(scales: &[f64], clients: f64, cv: f64) -> Vec<Row> {
    at(
        scales,
        "epoll",
        &format!("c{clients}"),
        &[
            (column::CONNECTIONS, clients),
            (column::REQUESTS_PER_S_CV, cv),
        ],
    )
}

#[test]
fn claim_29_the_variability_of_the_io_rises_with_the_clients() {
    let rises = [
        spread_at(&FOUR, 2500.0, 0.05),
        spread_at(&FOUR, 5000.0, 0.08),
        spread_at(&FOUR, 20_000.0, 0.2),
    ]
    .concat();
    let c = ruled(29, &rises);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[2],
        "20,000 clients: spread of the requests per second median 0.200 (0.194–0.206, 4 reps)"
    );
    let falls = [
        spread_at(&FOUR, 2500.0, 0.05),
        spread_at(&FOUR, 20_000.0, 0.02),
    ]
    .concat();
    assert_eq!(ruled(29, &falls).verdict, ClaimVerdict::Refuted);
    let level = [
        spread_at(&FOUR_TIGHT, 2500.0, 0.05),
        spread_at(&FOUR_TIGHT, 20_000.0, 0.05),
    ]
    .concat();
    assert_eq!(ruled(29, &level).verdict, ClaimVerdict::Refuted);
    let scattered = [
        spread_at(&FOUR, 2500.0, 0.05),
        spread_at(&SCATTERED, 20_000.0, 0.05),
    ]
    .concat();
    assert_eq!(ruled(29, &scattered).verdict, ClaimVerdict::NoDifference);
    // 20 000 ran without a spread (too short a timeline): the most clients measured
    // is 2 500 alone.
    let mut unmeasured = spread_at(&FOUR, 2500.0, 0.05);
    unmeasured.extend(at(
        &FOUR,
        "epoll",
        "c20000",
        &[(column::CONNECTIONS, 20_000.0)],
    ));
    let c = ruled(29, &unmeasured);
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert_eq!(c.why, "only 2,500 clients measured the spread");
}

/// Claims 30's and 31's rows: five repetitions of epoll with 2 500 clients at `delay`
/// ms, answering `rps` requests per second at a mean of `mean` µs.
fn delay(delay: f64, rps: f64, mean: f64) -> Vec<Row> {
    reps5(
        "epoll",
        &format!("d{delay}"),
        &[
            (column::CONNECTIONS, 2500.0),
            (column::DELAY_MS, delay),
            (column::THROUGHPUT_RPS, rps),
            (column::MEAN_US, mean),
        ],
    )
}

#[test]
fn claim_30_the_test_finishes_sooner_at_1_ms_a_demonstration() {
    let sooner = [
        delay(1000.0, 2480.0, 300.0),
        delay(125.0, 19_000.0, 300.0),
        delay(1.0, 40_000.0, 900.0),
    ]
    .concat();
    assert_eq!(rule(30, &sooner), ClaimVerdict::Confirmed);
    let c = judged(30, &sooner);
    assert_eq!(c.verdict, ClaimVerdict::Demonstration, "{}", c.why);
    assert!(
        c.why.starts_with("the setup fixes the outcome"),
        "{}",
        c.why
    );
    assert_eq!(
        c.numbers[0],
        "delay 1000 ms: median 2,480 (2,232–2,728, 5 reps) requests/s, so 60 requests a \
         client in 60.5 s"
    );
    // A server slower than 2 500 requests/s at 1 ms would lose: the rule can say so.
    let slower = [delay(1000.0, 2480.0, 300.0), delay(1.0, 1000.0, 900.0)].concat();
    assert_eq!(rule(30, &slower), ClaimVerdict::Refuted);
    assert_eq!(judged(30, &slower).verdict, ClaimVerdict::Demonstration);
    assert_eq!(
        rule(30, &delay(1.0, 40_000.0, 900.0)),
        ClaimVerdict::Inconclusive
    );
}

#[test]
fn claim_31_the_response_time_is_higher_at_1_ms_than_at_1000_ms() {
    let sweep = |at_1ms: f64| [delay(1000.0, 2480.0, 300.0), delay(1.0, 40_000.0, at_1ms)].concat();
    let c = ruled(31, &sweep(900.0));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "delay 1000 ms: mean response time median 300 µs (270 µs–330 µs, 5 reps)"
    );
    assert_eq!(ruled(31, &sweep(100.0)).verdict, ClaimVerdict::Refuted);
    let level = [
        scaled_reps(
            &TIGHT,
            "epoll",
            "d1000",
            &[(column::DELAY_MS, 1000.0), (column::MEAN_US, 300.0)],
        ),
        scaled_reps(
            &TIGHT,
            "epoll",
            "d1",
            &[(column::DELAY_MS, 1.0), (column::MEAN_US, 300.0)],
        ),
    ]
    .concat();
    assert_eq!(ruled(31, &level).verdict, ClaimVerdict::Refuted);
    // 0.9 to 1.1 at both delays, the same median: the interval reaches past x1.05.
    assert_eq!(ruled(31, &sweep(300.0)).verdict, ClaimVerdict::NoDifference);
    let c = ruled(31, &delay(1.0, 40_000.0, 900.0));
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::Inconclusive, "only the delay 1 ms ran")
    );
}
