//! Claims 33 to 53 (the reports' other statements) from hand-built rows: every outcome
//! each rule can give, and "not run" when no step ran.

use super::*;

/// Four repetitions spread 3 % apart: four against four can reach p < 0.05.
const FOUR: [f64; 4] = [0.97, 0.99, 1.01, 1.03];
/// Four repetitions within 1 % of each other: tight enough to show a level.
const FOUR_TIGHT: [f64; 4] = [0.99, 0.995, 1.005, 1.01];
/// Four repetitions scattered too widely to show either a change or a level.
const SCATTERED: [f64; 4] = [0.7, 0.9, 1.1, 1.4];

fn judged(number: usize, rows: &[Row]) -> Claim {
    let c = judge(number, rows, MachineLimits::default());
    assert!(!c.why.is_empty(), "claim {number} says why");
    c
}

/// `model` at `c` connections in repetition `rep`, passed or failed.
fn step(model: &str, c: f64, rep: u32, status: Status) -> Row {
    row(
        model,
        &format!("c{c}"),
        rep,
        status,
        &[(column::CONNECTIONS, c)],
    )
}

/// Claim-9's rows for `model`: each repetition's steps held in turn until `fails_at`
/// (a failed step, then the heavier ones not run), four repetitions.
fn climbs(model: &str, fails_at: &[Option<f64>]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, fail) in fails_at.iter().enumerate() {
        let rep = i as u32 + 1;
        for c in [1_000.0, 5_000.0, 19_000.0] {
            let status = match fail {
                Some(f) if c == *f => Status::Failed,
                Some(f) if c > *f => Status::NotRun,
                _ => Status::Ok,
            };
            rows.push(step(model, c, rep, status));
        }
    }
    rows
}

fn all_reps(fail: Option<f64>) -> Vec<Option<f64>> {
    vec![fail; 4]
}

fn not_run(number: usize) {
    let rows = [row("epoll", "c1000", 1, Status::NotRun, &[])];
    assert_eq!(judged(number, &rows).verdict, ClaimVerdict::NotRun);
    assert_eq!(judged(number, &[]).verdict, ClaimVerdict::NotRun);
}

#[test]
fn claim_33_threads_fails_by_the_12_000_connections_of_four_hosts() {
    let c = judged(33, &climbs("threads", &all_reps(Some(5_000.0))));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "threads: the most connections held in each repetition 1,000, 1,000, 1,000, 1,000; \
         failed at 5,000 connections"
    );
    let c = judged(33, &climbs("threads", &all_reps(None)));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    // Failed only at 19 000 after holding 5 000: 12 000 lies between.
    let c = judged(33, &climbs("threads", &all_reps(Some(19_000.0))));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    // One repetition held 19 000, another failed at 5 000: they disagree.
    let mixed = climbs("threads", &[None, Some(5_000.0), None, None]);
    assert_eq!(judged(33, &mixed).verdict, ClaimVerdict::Inconclusive);
    not_run(33);
}

#[test]
fn claim_34_select_sustains_at_least_1_000_connections() {
    let c = judged(34, &climbs("select", &all_reps(Some(5_000.0))));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    let c = judged(34, &climbs("select", &all_reps(Some(1_000.0))));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "select failed at 1,000 connections and held 1 000 in no repetition"
    );
    let mixed = climbs("select", &[Some(5_000.0), Some(1_000.0), None, None]);
    assert_eq!(judged(34, &mixed).verdict, ClaimVerdict::Inconclusive);
    not_run(34);
}

#[test]
fn claim_35_threads_holds_more_connections_than_select() {
    let both = |threads: Option<f64>, select: Option<f64>| -> Vec<Row> {
        let mut rows = climbs("threads", &all_reps(threads));
        rows.extend(climbs("select", &all_reps(select)));
        rows
    };
    let c = judged(35, &both(None, Some(5_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0].starts_with("threads 19,000 against select 1,000 (connections held)"),
        "{}",
        c.numbers[0]
    );
    // threads failed at its first step in every repetition: select held more.
    let c = judged(35, &both(Some(1_000.0), Some(5_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let c = judged(35, &both(Some(5_000.0), Some(5_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::NoDifference, "{}", c.why);
    // Two repetitions a side cannot reach p < 0.05.
    let two: Vec<Row> = both(None, Some(5_000.0))
        .into_iter()
        .filter(|r| r.repetition <= 2)
        .collect();
    assert_eq!(judged(35, &two).verdict, ClaimVerdict::Inconclusive);
    not_run(35);
}

#[test]
fn claim_36_only_epoll_holds_the_most_connections() {
    let three = |epoll: &[Option<f64>], threads: Option<f64>| -> Vec<Row> {
        let mut rows = climbs("epoll", epoll);
        rows.extend(climbs("threads", &all_reps(threads)));
        rows.extend(climbs("select", &all_reps(Some(5_000.0))));
        rows
    };
    let c = judged(36, &three(&all_reps(None), Some(19_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.why,
        "epoll alone held 19,000 connections, in every repetition; threads and select in none"
    );
    // threads held them too.
    let c = judged(36, &three(&all_reps(None), None));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "threads held 19,000 connections too, in at least one repetition"
    );
    // Nobody held the most: epoll did not either.
    let c = judged(36, &three(&all_reps(Some(19_000.0)), Some(19_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let some = [None, Some(19_000.0), None, None];
    let c = judged(36, &three(&some, Some(19_000.0)));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    not_run(36);
}

/// `model`'s mean response time at each of `steps` (connections, µs), over `scales`.
fn means(scales: &[f64], model: &str, steps: &[(f64, f64)]) -> Vec<Row> {
    steps
        .iter()
        .flat_map(|&(c, mean)| {
            scaled_reps(
                scales,
                model,
                &format!("c{c}"),
                &[(column::CONNECTIONS, c), (column::MEAN_US, mean)],
            )
        })
        .collect()
}

#[test]
fn claim_37_threads_slows_with_the_connections() {
    let rise = means(&FOUR, "threads", &[(1_000.0, 400.0), (19_000.0, 1_200.0)]);
    let c = judged(37, &rise);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[2].starts_with("19,000 connections 1.20 ms against 1,000 connections 400 µs"),
        "{}",
        c.numbers[2]
    );
    let fall = means(&FOUR, "threads", &[(1_000.0, 1_200.0), (19_000.0, 400.0)]);
    assert_eq!(judged(37, &fall).verdict, ClaimVerdict::Refuted);
    let level = means(
        &FOUR_TIGHT,
        "threads",
        &[(1_000.0, 400.0), (19_000.0, 401.0)],
    );
    assert_eq!(judged(37, &level).verdict, ClaimVerdict::Refuted);
    let mut scattered = means(&FOUR, "threads", &[(1_000.0, 400.0)]);
    scattered.extend(means(&SCATTERED, "threads", &[(19_000.0, 420.0)]));
    assert_eq!(judged(37, &scattered).verdict, ClaimVerdict::NoDifference);
    let one = means(&FOUR, "threads", &[(1_000.0, 400.0)]);
    let c = judged(37, &one);
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::Inconclusive, "only 1,000 connections ran")
    );
    not_run(37);
}

#[test]
fn claim_38_threads_slows_more_than_epoll_with_the_connections() {
    let growth = |threads: f64, epoll: f64| -> Vec<Row> {
        let mut rows = means(
            &FOUR,
            "threads",
            &[(1_000.0, 400.0), (19_000.0, 400.0 * threads)],
        );
        rows.extend(means(
            &FOUR,
            "epoll",
            &[(1_000.0, 300.0), (19_000.0, 300.0 * epoll)],
        ));
        rows
    };
    // The same growth in every repetition, x10 against x2.
    let c = judged(38, &growth(10.0, 2.0));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0]
            .starts_with("from 1,000 to 19,000 connections: threads x10.00 against epoll x2.00"),
        "{}",
        c.numbers[0]
    );
    assert_eq!(
        judged(38, &growth(2.0, 10.0)).verdict,
        ClaimVerdict::Refuted
    );
    assert_eq!(
        judged(38, &growth(3.0, 3.0)).verdict,
        ClaimVerdict::NoDifference
    );
    // epoll held one step only: no growth of its own to compare.
    let mut one = means(&FOUR, "threads", &[(1_000.0, 400.0), (19_000.0, 4_000.0)]);
    one.extend(means(&FOUR, "epoll", &[(1_000.0, 300.0)]));
    assert_eq!(judged(38, &one).verdict, ClaimVerdict::Inconclusive);
    not_run(38);
}

/// Claim-17's stairs: epoll at 5 000 and 10 000 connections, the top stair's error rate
/// and connections established in each of three repetitions.
fn stairs(top: &[(f64, f64)]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, &(error_rate, established)) in top.iter().enumerate() {
        let rep = i as u32 + 1;
        rows.push(row(
            "epoll",
            "stair-5",
            rep,
            Status::Ok,
            &[
                (column::CONNECTIONS, 5_000.0),
                (column::CONNECTIONS_ESTABLISHED, 5_000.0),
                (column::ERROR_RATE, 0.0),
            ],
        ));
        rows.push(row(
            "epoll",
            "stair-10",
            rep,
            Status::Ok,
            &[
                (column::CONNECTIONS, 10_000.0),
                (column::CONNECTIONS_ESTABLISHED, established),
                (column::ERROR_RATE, error_rate),
            ],
        ));
    }
    rows
}

#[test]
fn claim_39_errors_and_rejected_connections_are_high_on_claim_17s_load() {
    let c = judged(
        39,
        &stairs(&[(0.05, 10_000.0), (0.0, 9_800.0), (0.02, 10_000.0)]),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll at 10,000 connections: share lost (errors or connections not established) \
         5.00 %, 2.00 %, 2.00 % over 3 repetition(s)"
    );
    let c = judged(
        39,
        &stairs(&[(0.001, 10_000.0), (0.0, 9_990.0), (0.0, 10_000.0)]),
    );
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let c = judged(
        39,
        &stairs(&[(0.05, 10_000.0), (0.0, 10_000.0), (0.0, 10_000.0)]),
    );
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    not_run(39);
}

/// `model` at `c` connections and `delay` ms, over `scales`, with `values`.
fn delayed(scales: &[f64], c: f64, delay: f64, values: &[(&str, f64)]) -> Vec<Row> {
    let mut all = vec![(column::CONNECTIONS, c), (column::DELAY_MS, delay)];
    all.extend_from_slice(values);
    scaled_reps(scales, "epoll", &format!("c{c}-d{delay}"), &all)
}

#[test]
fn claim_40_about_twice_the_io_at_5_000_clients_a_demonstration() {
    let io = |scales: &[f64], c: f64, segs: f64| {
        delayed(scales, c, 1000.0, &[(column::NET_SEGS_IN_PER_S, segs)])
    };
    let mut twice = io(&FOUR, 2_500.0, 10_000.0);
    twice.extend(io(&FOUR, 5_000.0, 20_000.0));
    assert_eq!(rule(40, &twice), ClaimVerdict::Confirmed);
    let c = judged(40, &twice);
    assert_eq!(c.verdict, ClaimVerdict::Demonstration);
    assert!(
        c.why.starts_with("the setup fixes the outcome"),
        "{}",
        c.why
    );
    let mut same = io(&FOUR, 2_500.0, 10_000.0);
    same.extend(io(&FOUR, 5_000.0, 10_500.0));
    assert_eq!(rule(40, &same), ClaimVerdict::Refuted);
    let mut scattered = io(&FOUR, 2_500.0, 10_000.0);
    scattered.extend(io(&SCATTERED, 5_000.0, 14_000.0));
    assert_eq!(rule(40, &scattered), ClaimVerdict::Inconclusive);
    let only = io(&FOUR, 2_500.0, 10_000.0);
    assert_eq!(rule(40, &only), ClaimVerdict::Inconclusive);
    not_run(40);
}

#[test]
fn claim_41_the_whole_transfer_takes_longer_at_10_000_clients() {
    let done =
        |scales: &[f64], c: f64, s: f64| delayed(scales, c, 1000.0, &[(column::COMPLETION_S, s)]);
    let mut longer = done(&FOUR, 5_000.0, 31.0);
    longer.extend(done(&FOUR, 10_000.0, 40.0));
    let c = judged(41, &longer);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[1],
        "10,000 clients: every request finished after median 40.0 s (38.8 s–41.2 s, 4 reps)"
    );
    let mut shorter = done(&FOUR, 5_000.0, 40.0);
    shorter.extend(done(&FOUR, 10_000.0, 31.0));
    assert_eq!(judged(41, &shorter).verdict, ClaimVerdict::Refuted);
    let mut level = done(&FOUR_TIGHT, 5_000.0, 31.0);
    level.extend(done(&FOUR_TIGHT, 10_000.0, 31.1));
    assert_eq!(judged(41, &level).verdict, ClaimVerdict::Refuted);
    let mut scattered = done(&FOUR, 5_000.0, 31.0);
    scattered.extend(done(&SCATTERED, 10_000.0, 32.0));
    assert_eq!(judged(41, &scattered).verdict, ClaimVerdict::NoDifference);
    let only = done(&FOUR, 5_000.0, 31.0);
    assert_eq!(judged(41, &only).verdict, ClaimVerdict::Inconclusive);
    not_run(41);
}

/// Claim-8's delay sweep: 2 500 clients at each (delay ms, requests/s), over `scales`.
fn sweep(scales: &[f64], steps: &[(f64, f64)]) -> Vec<Row> {
    steps
        .iter()
        .flat_map(|&(d, rate)| delayed(scales, 2_500.0, d, &[(column::THROUGHPUT_RPS, rate)]))
        .collect()
}

#[test]
fn claim_42_500_ms_takes_about_half_the_time_of_1000_ms_a_demonstration() {
    // 2 500 x 60 requests at 2 500/s is 60 s; at 5 000/s 30 s.
    let half = sweep(&FOUR, &[(1000.0, 2_500.0), (500.0, 5_000.0)]);
    let c = judged(42, &half);
    assert_eq!(c.verdict, ClaimVerdict::Demonstration);
    assert!(
        c.why.contains("about twice (x1.5–2.6, significant)"),
        "{}",
        c.why
    );
    assert_eq!(
        c.numbers[0],
        "delay 1000 ms: 60 requests a client in 60.0 s"
    );
    assert_eq!(rule(42, &half), ClaimVerdict::Confirmed);
    let same = sweep(&FOUR, &[(1000.0, 2_500.0), (500.0, 2_600.0)]);
    assert_eq!(rule(42, &same), ClaimVerdict::Refuted);
    let mut scattered = sweep(&FOUR, &[(1000.0, 2_500.0)]);
    scattered.extend(sweep(&SCATTERED, &[(500.0, 3_700.0)]));
    assert_eq!(rule(42, &scattered), ClaimVerdict::Inconclusive);
    not_run(42);
}

#[test]
fn claim_43_no_significant_difference_between_500_and_250_ms() {
    let mean =
        |scales: &[f64], d: f64, us: f64| delayed(scales, 2_500.0, d, &[(column::MEAN_US, us)]);
    let mut same = mean(&FOUR_TIGHT, 500.0, 1_000.0);
    same.extend(mean(&FOUR_TIGHT, 250.0, 1_001.0));
    let c = judged(43, &same);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    // Scattered repetitions show no difference, and no level either: not a confirmation.
    let mut scattered = mean(&FOUR, 500.0, 1_000.0);
    scattered.extend(mean(&SCATTERED, 250.0, 1_000.0));
    let c = judged(43, &scattered);
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(
        c.why.starts_with("neither a difference nor a level shown"),
        "{}",
        c.why
    );
    let mut apart = mean(&FOUR, 500.0, 1_440.0);
    apart.extend(mean(&FOUR, 250.0, 720.0));
    let c = judged(43, &apart);
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why
            .starts_with("a significant difference: 250 ms 720 µs against 500 ms 1.44 ms"),
        "{}",
        c.why
    );
    let two: Vec<Row> = apart.into_iter().filter(|r| r.repetition <= 2).collect();
    assert_eq!(judged(43, &two).verdict, ClaimVerdict::Inconclusive);
    not_run(43);
}

#[test]
fn claim_44_50_ms_is_a_faster_test_than_125_ms() {
    let faster = sweep(&FOUR, &[(125.0, 19_000.0), (50.0, 45_000.0)]);
    let c = judged(44, &faster);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    let slower = sweep(&FOUR, &[(125.0, 45_000.0), (50.0, 19_000.0)]);
    assert_eq!(judged(44, &slower).verdict, ClaimVerdict::Refuted);
    let level = sweep(&FOUR_TIGHT, &[(125.0, 45_000.0), (50.0, 45_100.0)]);
    assert_eq!(judged(44, &level).verdict, ClaimVerdict::Refuted);
    let mut scattered = sweep(&FOUR, &[(125.0, 40_000.0)]);
    scattered.extend(sweep(&SCATTERED, &[(50.0, 42_000.0)]));
    assert_eq!(judged(44, &scattered).verdict, ClaimVerdict::NoDifference);
    let only = sweep(&FOUR, &[(125.0, 19_000.0)]);
    assert_eq!(judged(44, &only).verdict, ClaimVerdict::Inconclusive);
    not_run(44);
}

#[test]
fn claim_45_only_1_ms_completes_within_30_s() {
    // 2 500 x 60 requests: at 2 500/s 60 s, at 4 000/s 37.5 s, at 50 000/s 3 s.
    let only = sweep(
        &FOUR,
        &[(1000.0, 2_500.0), (250.0, 4_000.0), (1.0, 50_000.0)],
    );
    let c = judged(45, &only);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(c.why, "only 1 ms finished within 30 s, in every repetition");
    let also = sweep(
        &FOUR,
        &[(1000.0, 2_500.0), (250.0, 10_000.0), (1.0, 50_000.0)],
    );
    let c = judged(45, &also);
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::Refuted, "250 ms also finished within 30 s")
    );
    let none = sweep(&FOUR, &[(1000.0, 2_500.0), (1.0, 4_000.0)]);
    assert_eq!(judged(45, &none).verdict, ClaimVerdict::Refuted);
    // At 5 100/s the four repetitions take 28.6 to 30.3 s: they straddle 30 s.
    let straddle = sweep(&FOUR, &[(1000.0, 2_500.0), (1.0, 5_100.0)]);
    assert_eq!(judged(45, &straddle).verdict, ClaimVerdict::Inconclusive);
    let one = sweep(&FOUR, &[(1.0, 50_000.0)]);
    assert_eq!(judged(45, &one).verdict, ClaimVerdict::Inconclusive);
    not_run(45);
}

#[test]
fn claim_46_more_retransmissions_at_1_ms_than_at_1000_ms() {
    // The same requests in every repetition, so the retransmissions alone spread.
    let retrans = |scales: &[f64], d: f64, segs: f64| -> Vec<Row> {
        delayed(scales, 2_500.0, d, &[(column::NET_RETRANS_SEGS, segs)])
            .into_iter()
            .map(|r| r.with(column::REQUESTS, 100_000.0))
            .collect()
    };
    let mut more = retrans(&FOUR, 1000.0, 100.0);
    more.extend(retrans(&FOUR, 1.0, 1_000.0));
    let c = judged(46, &more);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    let mut fewer = retrans(&FOUR, 1000.0, 1_000.0);
    fewer.extend(retrans(&FOUR, 1.0, 100.0));
    assert_eq!(judged(46, &fewer).verdict, ClaimVerdict::Refuted);
    let mut none = retrans(&FOUR, 1000.0, 0.0);
    none.extend(retrans(&FOUR, 1.0, 0.0));
    let c = judged(46, &none);
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (
            ClaimVerdict::Refuted,
            "no retransmission counted at 1 ms or at 1000 ms"
        )
    );
    let mut scattered = retrans(&FOUR, 1000.0, 1_000.0);
    scattered.extend(retrans(&SCATTERED, 1.0, 1_100.0));
    assert_eq!(judged(46, &scattered).verdict, ClaimVerdict::NoDifference);
    let only = retrans(&FOUR, 1.0, 100.0);
    assert_eq!(judged(46, &only).verdict, ClaimVerdict::Inconclusive);
    not_run(46);
}

/// `model`'s mean response time (µs) at `size` bytes, 1 000 connections, over `scales`.
fn sized(scales: &[f64], model: &str, size: f64, mean: f64) -> Vec<Row> {
    scaled_reps(
        scales,
        model,
        &format!("c1000-s{size}"),
        &[
            (column::CONNECTIONS, 1_000.0),
            (column::SIZE, size),
            (column::MEAN_US, mean),
        ],
    )
}

/// Claim-47's rows: threads' and epoll's means at 50 bytes and at 64 KiB.
fn sizes(small: [(&[f64], f64); 2], large: [(&[f64], f64); 2]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (size, [(t_scales, threads), (e_scales, epoll)]) in [(50.0, small), (65_536.0, large)] {
        rows.extend(sized(t_scales, "threads", size, threads));
        rows.extend(sized(e_scales, "epoll", size, epoll));
    }
    rows
}

#[test]
fn claim_47_threads_faster_only_while_the_requests_are_small() {
    let c = judged(
        47,
        &sizes(
            [(&FOUR, 400.0), (&FOUR, 600.0)],
            [(&FOUR, 900.0), (&FOUR, 600.0)],
        ),
    );
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert!(
        c.numbers[0].starts_with("50 B: epoll 600 µs against threads 400 µs"),
        "{}",
        c.numbers[0]
    );
    // Faster at both sizes: the size does not decide it.
    let both = sizes(
        [(&FOUR, 400.0), (&FOUR, 600.0)],
        [(&FOUR, 400.0), (&FOUR, 600.0)],
    );
    let c = judged(47, &both);
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert!(
        c.why.starts_with("threads faster than epoll at both sizes"),
        "{}",
        c.why
    );
    // Slower at the small size.
    let slower = sizes(
        [(&FOUR, 600.0), (&FOUR, 400.0)],
        [(&FOUR, 900.0), (&FOUR, 600.0)],
    );
    assert_eq!(judged(47, &slower).verdict, ClaimVerdict::Refuted);
    let scattered = sizes(
        [(&SCATTERED, 500.0), (&FOUR, 500.0)],
        [(&FOUR, 900.0), (&FOUR, 600.0)],
    );
    assert_eq!(judged(47, &scattered).verdict, ClaimVerdict::NoDifference);
    let one_size = sized(&FOUR, "threads", 50.0, 400.0);
    let c = judged(47, &one_size);
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::Inconclusive, "only 50 B ran")
    );
    not_run(47);
}

/// Claim-48's load: `model` at `size` bytes and 10 000 connections, one row a repetition
/// with its status and (completion s, listen drops) where given.
fn transfers(model: &str, size: f64, reps: &[(Status, Option<f64>, Option<f64>)]) -> Vec<Row> {
    reps.iter()
        .enumerate()
        .map(|(i, &(status, completion, drops))| {
            let mut values = vec![
                (column::CONNECTIONS, 10_000.0),
                (column::SIZE, size),
                (column::CONNECTIONS_ESTABLISHED, 10_000.0),
            ];
            values.extend(completion.map(|s| (column::COMPLETION_S, s)));
            values.extend(drops.map(|d| (column::NET_LISTEN_DROPS, d)));
            row(
                model,
                &format!("c10000-s{size}"),
                i as u32 + 1,
                status,
                &values,
            )
        })
        .collect()
}

const FAILED: (Status, Option<f64>, Option<f64>) = (Status::Failed, None, None);
const PASSED: (Status, Option<f64>, Option<f64>) = (Status::Ok, Some(12.0), Some(0.0));

#[test]
fn claim_48_threads_stops_before_10_000_connections_of_1_b() {
    let mut rows = transfers("threads", 1.0, &[FAILED, FAILED, FAILED]);
    rows.extend(transfers("threads", 1024.0, &[PASSED, PASSED, PASSED]));
    let c = judged(48, &rows);
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "threads at 1 B, repetition 1: 10,000 connections established; failed: server \
         refused 86 connections"
    );
    let passed = transfers("threads", 1.0, &[PASSED, PASSED, PASSED]);
    let c = judged(48, &passed);
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    assert_eq!(
        c.why,
        "every repetition of threads served all 10 000 connections"
    );
    let mixed = transfers("threads", 1.0, &[FAILED, PASSED, FAILED]);
    let c = judged(48, &mixed);
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert_eq!(
        c.why,
        "the repetitions disagree: 2 of threads failed before serving all 10 000 \
         connections, 1 of threads served all 10 000 connections, 0 neither"
    );
    not_run(48);
}

#[test]
fn claim_49_threads_stops_before_10_000_connections_of_1_kib() {
    let mut rows = transfers("threads", 1024.0, &[FAILED, FAILED, FAILED]);
    rows.extend(transfers("threads", 1.0, &[PASSED, PASSED, PASSED]));
    assert_eq!(judged(49, &rows).verdict, ClaimVerdict::Confirmed);
    let passed = transfers("threads", 1024.0, &[PASSED, PASSED, PASSED]);
    assert_eq!(judged(49, &passed).verdict, ClaimVerdict::Refuted);
    // Only the 1 B step ran: nothing of 1 KiB to judge.
    let other = transfers("threads", 1.0, &[FAILED, FAILED, FAILED]);
    let c = judged(49, &other);
    assert_eq!(
        (c.verdict, c.why.as_str()),
        (ClaimVerdict::Inconclusive, "no repetition ran")
    );
    not_run(49);
}

#[test]
fn claim_50_over_a_minute_before_epoll_answered_every_connection_of_1_b() {
    let slow = (Status::Ok, Some(75.0), None);
    let c = judged(50, &transfers("epoll", 1.0, &[slow, slow, slow]));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll at 1 B, repetition 1: 10,000 connections established, every connection \
         done after 75.0 s; passed"
    );
    // A failed repetition that still took over a minute counts as over a minute.
    let late = (Status::Failed, Some(80.0), None);
    let c = judged(50, &transfers("epoll", 1.0, &[slow, late, slow]));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    let c = judged(50, &transfers("epoll", 1.0, &[PASSED, PASSED, PASSED]));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    // A repetition that failed before every connection was answered says neither.
    let c = judged(50, &transfers("epoll", 1.0, &[PASSED, FAILED, PASSED]));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    not_run(50);
}

#[test]
fn claim_51_epoll_rejects_connections_of_1_kib_again_and_again() {
    let dropped = |d: f64| (Status::Ok, Some(12.0), Some(d));
    let c = judged(51, &transfers("epoll", 1024.0, &[dropped(300.0); 3]));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll at 1 KiB, repetition 1: 300 connection attempts dropped at the listen queue \
         of 10,000 connections"
    );
    // 99 of 10 000 is under 1 %.
    let c = judged(51, &transfers("epoll", 1024.0, &[dropped(99.0); 3]));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let c = judged(
        51,
        &transfers(
            "epoll",
            1024.0,
            &[dropped(300.0), dropped(0.0), dropped(300.0)],
        ),
    );
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    // Without the server's counters the rejections are not counted.
    let c = judged(51, &transfers("epoll", 1024.0, &[FAILED, FAILED, FAILED]));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    assert!(c.numbers[0].contains("not counted"), "{}", c.numbers[0]);
    not_run(51);
}

/// Claim-52's staircase: threads' stairs of 1 000 to 3 000 connections, each
/// repetition's echo throughput (MiB/s) at each.
fn staircase(reps: &[[f64; 3]]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, mib_s) in reps.iter().enumerate() {
        for (stair, &m) in mib_s.iter().enumerate() {
            let c = 1_000.0 * (stair + 1) as f64;
            rows.push(row(
                "threads",
                &format!("stair-{}", stair + 1),
                i as u32 + 1,
                Status::Ok,
                &[(column::CONNECTIONS, c), (column::THROUGHPUT_MIB_S, m)],
            ));
        }
    }
    rows
}

#[test]
fn claim_52_threads_throughput_collapses_on_the_staircase() {
    let collapsed = [10.0, 10.5, 3.0];
    let kept = [10.0, 10.5, 9.0];
    let c = judged(52, &staircase(&[collapsed; 3]));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "threads, repetition 1: best stair 10.50 MiB/s, the last (3,000 connections) 3.00 MiB/s"
    );
    let c = judged(52, &staircase(&[kept; 3]));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let c = judged(52, &staircase(&[kept, collapsed, kept]));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    // A failed last stair without a throughput counts as none.
    let mut failed_last = staircase(&[kept; 3]);
    for r in failed_last.iter_mut().filter(|r| r.step == "stair-3") {
        r.status = Status::Failed;
        r.throughput_mib_s = None;
    }
    assert_eq!(judged(52, &failed_last).verdict, ClaimVerdict::Confirmed);
    not_run(52);
}

#[test]
fn claim_53_epoll_accepts_80_000_connections_from_claim_3s_rows() {
    let at = |statuses: &[Status]| -> Vec<Row> {
        statuses
            .iter()
            .enumerate()
            .map(|(i, &s)| step("epoll", 100_000.0, i as u32 + 1, s))
            .collect()
    };
    let c = judged(53, &at(&[Status::Ok; 3]));
    assert_eq!(c.verdict, ClaimVerdict::Confirmed, "{}", c.why);
    assert_eq!(
        c.numbers[0],
        "epoll: the most connections held in each repetition 100,000, 100,000, 100,000"
    );
    let c = judged(53, &at(&[Status::Failed; 3]));
    assert_eq!(c.verdict, ClaimVerdict::Refuted, "{}", c.why);
    let c = judged(53, &at(&[Status::Ok, Status::Failed, Status::Ok]));
    assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{}", c.why);
    not_run(53);
}
