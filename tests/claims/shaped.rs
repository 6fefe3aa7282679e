//! Claims 18 and 32 behind a shaped link: one client host of the namespace lab on a tbf
//! link, its rows judging both claims in one report.

use super::*;

/// claim-18 scaled down: one client host on a 2 Mbit/s link, 40 and 80 clients at 250
/// and 125 ms, 2 repetitions (too few for p < 0.05, so the verdicts do not hang on this
/// machine's timing).
const TINY_CLAIM_18: &str = r#"
name = "claim-18"
description = "Claim: retransmissions at 125 ms and below. Test: behind a shaped link."
models = ["epoll"]
repetitions = 2
step_timeout = "30s"
[hosts]
clients = 1
[network]
rate = "2mbit"
[load]
size = 64
duration = "1s"
connect_timeout = "5s"
[sweep]
delay = ["250ms", "125ms"]
connections = [40, 80]
"#;

#[test]
fn a_scaled_down_claim_18_behind_a_tbf_link_judges_claims_18_and_24() {
    if !common::netns_available(
        "claims::a_scaled_down_claim_18_behind_a_tbf_link_judges_claims_18_and_24",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-18.toml");
    fs::write(&scenario, TINY_CLAIM_18).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 8);
    for r in &rows {
        // The server host's own counters: the step's traffic alone, retransmissions
        // counted (a number, whatever it is) over requests that completed.
        assert_eq!(
            (r["status"].as_str(), r["net_scope"].as_str()),
            ("ok", "server-host"),
            "{r:?}"
        );
        assert!(r["net_retrans_segs"].parse::<u64>().is_ok(), "{r:?}");
        assert!(r["requests"].parse::<u64>().unwrap() > 0, "{r:?}");
    }
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(manifest["conditions"]["network"]["qdisc"], "tbf");
    assert_eq!(manifest["conditions"]["network"]["rate_bit_s"], 2_000_000);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    // Both claims judged from the one set of rows, each by its own rule (two
    // repetitions a side cannot reach p < 0.05) and labelled demonstrations.
    for n in [18, 32] {
        let row = claims_row(&report, n);
        assert!(
            row.contains("| demonstration, not a test | the setup fixes the outcome: ")
                && row.contains("; what the run showed: too few repetitions for p < 0.05: "),
            "{row}"
        );
    }
    assert!(
        claims_row(&report, 18).contains("40 clients at 125 ms and below"),
        "{report}"
    );
    assert!(
        claims_row(&report, 32).contains("80 clients")
            && claims_row(&report, 32).contains("against 40 clients"),
        "{report}"
    );
    for line in [
        "- 40 clients, delay 250 ms: retransmitted segments per 1 000 requests median ",
        "- 80 clients, delay 125 ms: retransmitted segments per 1 000 requests median ",
        "Test: claim-18's link and load",
    ] {
        assert!(report.contains(line), "{line:?} not in {report}");
    }
}
