//! The verdict's rule on made-up repetitions.

use super::*;
use crate::results::reader::Results;
use crate::results::Manifest;

/// One ok repetition of `model` at 100 connections with this throughput.
fn row(model: &str, rep: u32, rps: f64, disturbed: bool) -> Row {
    Row {
        model: model.into(),
        step: "c100".into(),
        repetition: rep,
        status: Status::Ok,
        bytes_match: Some(true),
        connections: 100,
        throughput_rps: Some(rps),
        disturbed: Some(disturbed),
        ..Row::default()
    }
}

fn throughput(a: &[f64], b: &[f64], disturbed_b: &[u32]) -> Verdict {
    let mut rows = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let rep = i as u32 + 1;
        rows.push(row("epoll", rep, *x, false));
        rows.push(row("tokio", rep, *y, disturbed_b.contains(&rep)));
    }
    first_verdict(rows)
}

/// The first verdict (throughput) of these rows.
fn first_verdict(rows: Vec<Row>) -> Verdict {
    let results = Results {
        dir: std::env::temp_dir().join("echolab-no-such-dir"),
        manifest: Manifest::default(),
        rows,
        profiled: Vec::new(),
        columns: Vec::new(),
        warnings: Vec::new(),
    };
    let sweeps = sweep::sweeps(&results);
    verdicts(&results, &sweeps[0]).remove(0)
}

#[test]
fn overlapping_repetitions_are_no_difference() {
    let v = throughput(
        &[10.0, 12.0, 11.0, 13.0, 9.0],
        &[11.5, 10.5, 12.5, 9.5, 13.5],
        &[],
    );
    assert_eq!(v.figure, "Throughput");
    assert!(v.winner().is_none());
    assert!(v.winners().is_empty());
    let Decision::NoDifference { comparison } = v.decision else {
        panic!("{:?}", v.decision)
    };
    assert_eq!(
        v.significance(),
        format!("no difference: p = {}, n = 5", stats::fmt_p(comparison.p))
    );
    assert!(comparison.p > 0.5, "{comparison:?}");
}

#[test]
fn a_significant_gap_under_five_percent_names_no_winner() {
    // Every tokio repetition 3 % above every epoll one: p = 0.012, but x1.03.
    let v = throughput(
        &[10.0, 10.02, 9.99, 10.01, 10.005],
        &[10.3, 10.32, 10.29, 10.31, 10.305],
        &[],
    );
    assert!(v.winners().is_empty(), "{:?}", v.decision);
    assert_eq!(
        v.significance(),
        "no difference of x1.05 or more: x1.03, p = 0.012, n = 5"
    );
    // The same at 6 %: a winner.
    let v = throughput(
        &[10.0, 10.02, 9.99, 10.01, 10.005],
        &[10.6, 10.62, 10.59, 10.61, 10.605],
        &[],
    );
    assert_eq!(v.winners(), ["tokio"]);
}

#[test]
fn separated_repetitions_name_a_winner_with_its_interval() {
    let v = throughput(
        &[10.0, 10.2, 9.9, 10.1, 10.05],
        &[20.0, 20.4, 19.8, 20.2, 20.1],
        &[],
    );
    assert_eq!(v.winners(), ["tokio"]);
    assert_eq!(v.runner_up().map(|r| r.0.as_str()), Some("epoll"));
    let Decision::Winner(c) = v.decision else {
        panic!("{:?}", v.decision)
    };
    // median 20.1 / median 10.05, the interval from the bootstrap around it.
    assert!((c.ratio - 2.0).abs() < 1e-9, "{c:?}");
    assert!(c.interval.0 > 1.9 && c.interval.1 < 2.1, "{c:?}");
    assert!(fmt_ratio_interval(&c).starts_with("×2.00 (1.9"), "{c:?}");
    assert_eq!(v.significance(), "p = 0.012, n = 5");
}

#[test]
fn a_disturbed_repetition_never_decides_alone() {
    // Apart, 5 against 5, two of tokio's disturbed: without either, 4 against 5
    // still differ (p = 0.016).
    let (a5, b5) = (
        [10.0, 10.2, 9.9, 10.1, 10.05],
        [20.0, 20.4, 19.8, 20.2, 20.1],
    );
    let v = throughput(&a5, &b5, &[1, 2]);
    assert_eq!(v.left_out, (0, 2));
    assert_eq!(v.winners(), ["tokio"]);
    assert_eq!(
        v.left_out_note().unwrap(),
        "2 disturbed repetition(s), each left out in turn"
    );
    // 4 against 4 apart differ (p = 0.029), but not without the disturbed one
    // (3 against 4: p = 0.057): that repetition would decide alone.
    assert_eq!(throughput(&a5[..4], &b5[..4], &[]).winners(), ["tokio"]);
    let v = throughput(&a5[..4], &b5[..4], &[3]);
    assert!(v.winner().is_none(), "{:?}", v.decision);
    assert!(
        v.significance().starts_with("no difference: p = 0.0"),
        "{}",
        v.significance()
    );
}

/// Throughput verdict of models each given its repetitions.
fn throughputs(models: &[(&str, &[f64])]) -> Verdict {
    let rows = models
        .iter()
        .flat_map(|(m, reps)| {
            reps.iter()
                .enumerate()
                .map(|(i, rps)| row(m, i as u32 + 1, *rps, false))
        })
        .collect();
    first_verdict(rows)
}

#[test]
fn two_best_that_overlap_lead_together_when_both_beat_the_rest() {
    let v = throughputs(&[
        ("epoll", &[20.0, 20.4, 19.8, 20.2, 20.1]),
        ("uring", &[20.3, 19.9, 20.5, 19.7, 20.0]),
        ("tokio", &[10.0, 10.2, 9.9, 10.1, 10.05]),
        ("select", &[5.0, 5.2, 4.9, 5.1, 5.05]),
    ]);
    assert!(v.winner().is_none(), "{:?}", v.decision);
    assert_eq!(v.winners(), ["epoll", "uring"]);
    assert_eq!(v.runner_up().map(|r| r.0.as_str()), Some("tokio"));
    let Decision::Leaders { count, ahead, tie } = v.decision else {
        panic!("{:?}", v.decision)
    };
    assert_eq!(count, 2);
    assert!(tie.p > 0.5, "{tie:?}");
    // The narrowest margin: uring (median 20.0) over tokio (10.05), p of 5 apart.
    assert!((ahead.ratio - 20.0 / 10.05).abs() < 1e-9, "{ahead:?}");
    assert_eq!(
        v.significance(),
        format!(
            "leaders tie ({}); each ahead of every other model, p = 0.012, n = 5",
            stats::p_equals(tie.p)
        )
    );
    // The tally counts outright wins only.
    let results = Results {
        dir: std::env::temp_dir(),
        manifest: Manifest::default(),
        rows: vec![row("epoll", 1, 1.0, false), row("uring", 1, 1.0, false)],
        profiled: Vec::new(),
        columns: Vec::new(),
        warnings: Vec::new(),
    };
    assert!(tally(&results, &[v]).iter().all(|(_, wins)| *wins == 0));
}

#[test]
fn leaders_are_at_most_half_of_the_models_and_must_beat_each_one_behind() {
    let (a, b, far) = (
        vec![1.0, 1.1, 1.2, 1.3, 1.4],
        vec![1.05, 1.15, 1.25, 1.35, 1.45],
        vec![5.0, 5.1, 5.2, 5.3, 5.4],
    );
    // Two of three would be more than half: no difference.
    assert!(matches!(
        decide(&[a.clone(), b.clone(), far.clone()], false, 0.0),
        Decision::NoDifference { .. }
    ));
    // Two of four lead.
    assert!(matches!(
        decide(
            &[a.clone(), b.clone(), far.clone(), far.clone()],
            false,
            0.0
        ),
        Decision::Leaders { count: 2, .. }
    ));
    // The third overlaps the second: no group of two is ahead of the rest.
    assert!(matches!(
        decide(&[a.clone(), b.clone(), b.clone(), far.clone()], false, 0.0),
        Decision::NoDifference { .. }
    ));
    // Leaders that only a disturbed repetition puts ahead do not lead: 4 against 4
    // apart differ (p = 0.029), 3 against 4 cannot (0.057).
    let four = |v: &[f64]| v[..4].to_vec();
    let samples = [four(&a), four(&b), four(&far), four(&far)];
    let mut flagged = vec![vec![false; 4]; 4];
    assert!(matches!(
        decide_robustly(&samples, &flagged, false, 0.0),
        Decision::Leaders { count: 2, .. }
    ));
    flagged[1][2] = true;
    assert!(matches!(
        decide_robustly(&samples, &flagged, false, 0.0),
        Decision::NoDifference { .. }
    ));
}

#[test]
fn a_winner_must_beat_every_other_model() {
    let best = vec![1.0, 1.1, 1.2, 1.3, 1.4];
    let far = vec![5.0, 5.1, 5.2, 5.3, 5.4];
    let close = vec![1.05, 1.15, 1.25, 1.35, 1.45];
    // Lower is better: best beats far, but not close.
    assert!(matches!(
        decide(&[best.clone(), far.clone()], false, 0.0),
        Decision::Winner(_)
    ));
    assert!(matches!(
        decide(&[best, close, far], false, 0.0),
        Decision::NoDifference { .. }
    ));
    assert!(matches!(decide(&[vec![1.0]], false, 0.0), Decision::Alone));
}

#[test]
fn a_gap_smaller_than_the_measurement_step_is_a_tie() {
    // Memory per connection at 31 connections: a page is 132 B a connection. Every
    // select repetition one page above every poll one: significant (p = 0.012) and
    // x1.05 or more, yet within the step.
    let poll = vec![2000.0, 2001.0, 2002.0, 2003.0, 2004.0];
    let select = vec![2130.0, 2131.0, 2132.0, 2133.0, 2134.0];
    let step = PAGE_BYTES / 31.0;
    assert!(matches!(
        decide(&[poll.clone(), select.clone()], false, 0.0),
        Decision::Winner(_)
    ));
    assert!(matches!(
        decide(&[poll.clone(), select.clone()], false, step),
        Decision::NoDifference { .. }
    ));
    // Two pages apart: the step no longer hides it.
    let far: Vec<f64> = select.iter().map(|v| v + step).collect();
    assert!(matches!(
        decide(&[poll, far], false, step),
        Decision::Winner(_)
    ));
    // The step of one repetition: a page over its connections; exact figures have none.
    let mut r = row("epoll", 1, 1.0, false);
    r.connections = 1000;
    assert_eq!(Resolution::PagePerConnection.step(&r), 4.096);
    assert_eq!(Resolution::Exact.step(&r), 0.0);
}

/// These rows, each an open loop offering `rate`.
fn offered(mut rows: Vec<Row>, rate: f64) -> Vec<Row> {
    for r in &mut rows {
        r.rate = Some(rate);
    }
    rows
}

#[test]
fn an_open_loop_every_model_kept_up_with_fixes_throughput() {
    // tokio 4 % below the offered rate, consistently: within the least difference named.
    let rows = (1..=5)
        .flat_map(|rep| {
            [
                row("epoll", rep, 10_000.0 - f64::from(rep), false),
                row("tokio", rep, 9_600.0 - f64::from(rep), false),
            ]
        })
        .collect();
    let v = first_verdict(offered(rows, 10_000.0));
    assert_eq!(v.fixed_by_load, Some(10_000.0));
    assert!(v.winners().is_empty());
    assert_eq!(
        v.significance(),
        "fixed by the load: every model served the offered 10,000 req/s"
    );
}

#[test]
fn a_model_behind_the_offered_rate_measured_capacity() {
    // tokio 6 % below: it did not keep up, so the step measured it.
    let rows: Vec<Row> = (1..=5)
        .flat_map(|rep| {
            [
                row("epoll", rep, 10_000.0 - f64::from(rep), false),
                row("tokio", rep, 9_400.0 - f64::from(rep), false),
            ]
        })
        .collect();
    let v = first_verdict(offered(rows.clone(), 10_000.0));
    assert_eq!(v.fixed_by_load, None);
    assert_eq!(v.winners(), ["epoll"]);
    // A closed loop offers no rate: nothing is fixed.
    assert_eq!(first_verdict(rows).fixed_by_load, None);
}

#[test]
fn beyond_the_bound_each_models_highest_and_lowest_flagged_repetition_is_left_out_in_turn() {
    // Side 0: repetitions 3, 7 and 12 flagged (values 21, 19, 24); side 1: every one of 25.
    let side0: Vec<f64> = (0..30).map(|i| ((i * 7) % 30) as f64).collect();
    let side1: Vec<f64> = (0..25).map(|i| 100.0 + ((i * 11) % 25) as f64).collect();
    let mut flagged = vec![vec![false; 30], vec![true; 25]];
    for j in [3, 7, 12] {
        flagged[0][j] = true;
    }
    let samples = [side0.clone(), side1.clone()];
    let lowest1 = side1.iter().position(|v| *v == 100.0).unwrap();
    let highest1 = side1.iter().position(|v| *v == 124.0).unwrap();
    assert_eq!(
        left_out_in_turn(&samples, &flagged),
        [(0, 7), (0, 12), (1, lowest1), (1, highest1)]
    );
    // Up to the bound, every flagged repetition in turn.
    let mut few = vec![vec![false; 30], vec![false; 25]];
    few[1][..LEFT_OUT_IN_TURN].fill(true);
    let every: Vec<(usize, usize)> = (0..LEFT_OUT_IN_TURN).map(|j| (1, j)).collect();
    assert_eq!(left_out_in_turn(&samples, &few), every);
}

#[test]
fn a_verdict_over_hundreds_of_flagged_repetitions_says_which_it_left_out() {
    let epoll: Vec<f64> = (0..300).map(|i| 10.0 + f64::from(i % 7) * 0.01).collect();
    let tokio: Vec<f64> = epoll.iter().map(|v| v * 2.0).collect();
    let disturbed: Vec<u32> = (1..=300).collect();
    let v = throughput(&epoll, &tokio, &disturbed);
    assert_eq!(v.left_out, (0, 300));
    assert_eq!(v.winners(), ["tokio"]);
    assert_eq!(
        v.left_out_note().unwrap(),
        "300 disturbed repetition(s), more than 20: each model's highest and lowest of \
         them left out in turn, not every one"
    );
}
