//! Repetitions interleaved across models: round r of a step runs every model's
//! repetition r, in an order that changes per round and is written to order.csv; and
//! every step records how much of the machine went to other work (interference_pct).

use std::fs;

use echolab::experiment::orchestration::runner::{round_order, ORDER_FILE};
use echolab::results::{column, DISTURBED_PCT};

mod common;

#[test]
fn each_round_runs_every_model_once_in_an_order_that_changes() {
    let orders: Vec<Vec<usize>> = (1..=8)
        .map(|rep| round_order("quick", "c100", rep, 6))
        .collect();
    for order in &orders {
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..6).collect::<Vec<_>>(), "{order:?}");
    }
    let first = &orders[0];
    assert!(orders.iter().any(|o| o != first), "{orders:?}");
    // Each model comes first in some round: no model always runs at the same moment.
    let firsts: std::collections::BTreeSet<usize> = orders.iter().map(|o| o[0]).collect();
    assert!(firsts.len() >= 3, "{orders:?}");
    // Seeded: the same scenario, step and round give the same order.
    assert_eq!(round_order("quick", "c100", 3, 6), orders[2]);
    assert_ne!(
        (1..=8)
            .map(|r| round_order("other", "c100", r, 6))
            .collect::<Vec<_>>(),
        orders
    );
}

#[test]
fn a_run_alternates_models_and_records_the_machine_s_other_work() {
    let _heavy = common::heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        tmp.path(),
        r#"
name = "interleaved"
models = ["poll", "epoll"]
repetitions = 4
[server]
workers = 1
[load]
size = 32
duration = "400ms"
rate = 2000
threads = 1
connect_timeout = "5s"
[sweep]
connections = [4]
"#,
    );
    let out = tmp.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, common::QUIET_NO_REPORT);
    assert_eq!(rows.len(), 8);
    // Rows come in rounds: each pair holds both models, at the same repetition.
    for (round, pair) in rows.chunks(2).enumerate() {
        let mut models: Vec<&str> = pair.iter().map(|r| r["model"].as_str()).collect();
        models.sort();
        assert_eq!(models, ["epoll", "poll"], "{pair:?}");
        for r in pair {
            assert_eq!(r["repetition"], (round + 1).to_string(), "{r:?}");
            assert_eq!(r["status"], "ok", "{r:?}");
        }
    }
    // order.csv says the order each round ran in, and the rows agree with it.
    let order = fs::read_to_string(out.join(ORDER_FILE)).unwrap();
    let lines: Vec<&str> = order.lines().collect();
    assert_eq!(lines[0], "step,repetition,order");
    assert_eq!(lines.len(), 5, "{order}");
    for (line, pair) in lines[1..].iter().zip(rows.chunks(2)) {
        let ran: Vec<&str> = pair.iter().map(|r| r["model"].as_str()).collect();
        assert!(line.ends_with(&ran.join(" ")), "{line} vs {ran:?}");
    }
    for (rep, line) in lines[1..].iter().enumerate() {
        let expected: Vec<&str> = round_order("interleaved", "c4-s32-r2000", rep as u32 + 1, 2)
            .into_iter()
            .map(|i| ["poll", "epoll"][i])
            .collect();
        assert_eq!(
            *line,
            format!("c4-s32-r2000,{},{}", rep + 1, expected.join(" "))
        );
    }
    // The quiet-machine check: filled in every row, a share of the machine's cores.
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    for r in &rows {
        let pct = common::number(r, column::INTERFERENCE_PCT);
        assert!((0.0..=100.0 * cores).contains(&pct), "{r:?}");
        assert_eq!(
            r[column::DISTURBED],
            (pct > DISTURBED_PCT).to_string(),
            "{r:?}"
        );
        let per_request = common::number(r, column::SERVER_CPU_US_PER_REQUEST);
        assert!((0.0..10_000.0).contains(&per_request), "{r:?}");
    }
}
