//! Machine profiles: the server's own link rate and the weak 2016 profile; claim 20's connection order.

use super::*;

/// 003's topology scaled down: the server's own port at 10 Mbit behind gigabit client
/// links (its setup is 100 Mbit; 10 keeps the test's byte counts small).
const SERVER_PORT_10MBIT: &str = r#"
models = ["epoll"]
step_timeout = "30s"
[load]
connections = 4
size = 16384
duration = "2s"
connect_timeout = "5s"
[hosts]
clients = 1
[network]
rate = "1gbit"
server_rate = "10mbit"
"#;

/// The `Sent N bytes` counter of the part of server-link.txt headed `heading`, in its
/// `before the load:` or `after the load:` half, with that part's text.
fn qdisc_sent(link: &str, half: &str, heading: &str) -> (u64, String) {
    let half_text = &link[link
        .find(half)
        .unwrap_or_else(|| panic!("no {half}: {link}"))..];
    let part = &half_text[half_text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading} in {half_text}"))..];
    let part = part
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("server "))
        .collect::<Vec<_>>()
        .join("\n");
    let sent = part
        .split_whitespace()
        .skip_while(|w| *w != "Sent")
        .nth(1)
        .unwrap_or_else(|| panic!("no Sent counter in {part}"));
    (sent.parse().unwrap(), part)
}

#[test]
fn the_servers_own_link_rate_bounds_the_echo_throughput() {
    if !common::netns_available("claims::the_servers_own_link_rate_bounds_the_echo_throughput") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("server-port.toml");
    fs::write(&scenario, SERVER_PORT_10MBIT).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["status"], "ok", "{row:?}");
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["conditions"]["network"]["server_rate_bit_s"], 10_000_000,
        "{manifest}"
    );
    let rep = out.join("epoll/c4-s16384/rep-1");
    let link = fs::read_to_string(rep.join("server-link.txt"))
        .unwrap_or_else(|e| panic!("{}: {e}", rep.display()));
    let bytes_out = common::number(row, "server_bytes_out") as u64;
    let bytes_in = common::number(row, "server_bytes_in") as u64;
    assert!(bytes_out > 0 && bytes_out == bytes_in, "{row:?}");
    // Both ends of the server's link carry tbf at 10 Mbit, and each one's counter grew by
    // the payload it carried at least, and by at most a quarter more (headers and acks).
    for (heading, payload) in [("server sends", bytes_out), ("server receives", bytes_in)] {
        let (before, _) = qdisc_sent(&link, "before the load:", heading);
        let (after, part) = qdisc_sent(&link, "after the load:", heading);
        assert!(
            part.contains("qdisc tbf") && part.contains("rate 10Mbit"),
            "{part}"
        );
        let grew = after - before;
        assert!(
            grew >= payload && grew <= payload + payload / 4 + 100_000,
            "{heading}: the qdisc sent {grew} bytes for {payload} bytes of payload\n{link}"
        );
    }
    // The echo cannot outrun the server's port: 1.25 MB/s plus one burst (unshaped, a
    // veth carries hundreds of MB/s). Only an upper bound: a busy machine goes slower.
    let received = common::number(row, "client_bytes_received");
    let seconds = common::number(row, "duration_s");
    assert!(
        received <= 1.25e6 * seconds * 1.1 + 62_500.0,
        "{received} echo bytes in {seconds} s through a 10 Mbit port"
    );
}

/// Writes the v1 (or v2) cgroup limits the server process sits under, and the CPUs it may
/// run on, to the file `$2`, then becomes echolab's epoll server on port `$1`.
const SHOW_OWN_CGROUP: &str = r#"
v1() { awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup; }
cpu=$(v1 cpu); mem=$(v1 memory)
if [ -n "$cpu" ]; then
  echo "quota $(cat /sys/fs/cgroup/cpu$cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu$cpu/cpu.cfs_period_us)" > "$2"
  echo "memory $(cat /sys/fs/cgroup/memory$mem/memory.limit_in_bytes)" >> "$2"
else
  g=$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)
  echo "quota $(cat /sys/fs/cgroup$g/cpu.max)" > "$2"
  echo "memory $(cat /sys/fs/cgroup$g/memory.max)" >> "$2"
fi
grep Cpus_allowed_list /proc/self/status >> "$2"
exec "$3" serve --model epoll --workers 1 --addr "127.0.0.1:$1"
"#;

/// The clock the weak-2016 profile divides 700 MHz by: cpu0's cpufreq maximum, else
/// its `cpu MHz` in /proc/cpuinfo.
fn cpu0_mhz() -> f64 {
    if let Ok(khz) = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") {
        return khz.trim().parse::<f64>().unwrap() / 1e3;
    }
    let info = fs::read_to_string("/proc/cpuinfo").unwrap();
    let first = info.split("\n\n").next().unwrap();
    let line = first.lines().find(|l| l.starts_with("cpu MHz")).unwrap();
    line.split(':').nth(1).unwrap().trim().parse().unwrap()
}

#[test]
fn the_weak_2016_profile_puts_the_server_on_one_core_at_700_mhz_and_256_mib() {
    let test = "claims::the_weak_2016_profile_puts_the_server_on_one_core_at_700_mhz_and_256_mib";
    if !common::is_root() {
        common::skip(test, "cgroups need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("cgroup.txt");
    let scenario = format!(
        "models = [\"weak\"]\nstep_timeout = \"30s\"\n[model.weak]\nprofile = \"weak-2016\"\n\
         command = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{port}}\", {seen:?}, {bin:?}]\n\
         [load]\nconnections = 2\nrequests = 3\nsize = 64\nconnect_timeout = \"5s\"\n",
        script = SHOW_OWN_CGROUP,
        seen = seen.display().to_string(),
        bin = common::BIN,
    );
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&common::write_scenario(dir.path(), &scenario), &out, QUIET);
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    assert_eq!(rows[0]["requests"], "6", "{rows:?}");
    // 700 MHz over this machine's clock, to four decimals, as µs of a 100 ms period.
    let quota_us = ((700.0 / cpu0_mhz()).min(1.0) * 1e4).round() as u64 * 10;
    let expected = format!(
        "quota {quota_us} 100000\nmemory {}\nCpus_allowed_list:\t0\n",
        256u64 << 20
    );
    assert_eq!(fs::read_to_string(&seen).unwrap(), expected);
    let manifest = common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["conditions"]["server_limits"]["weak"],
        serde_json::json!({
            "cpu_quota": quota_us as f64 / 1e5,
            "memory_max_bytes": 256u64 << 20,
            "tasks_max": null
        }),
        "{manifest}"
    );
}

/// Claim 20 scaled down: 200 clients of 3 requests, 4 repetitions.
const TINY_CLAIM_20: &str = r#"
name = "claim-20"
description = "Claim: the last clients to join are slower. Test: epoll, 200 clients."
models = ["epoll"]
repetitions = 4
step_timeout = "30s"
[load]
connections = 200
size = 64
requests = 3
delay = "10ms"
connect_rate = 2000
connect_timeout = "5s"
"#;

/// Each connection's (opened_unix, conn_id, mean_response_us) in a connections.csv, first
/// attempts with a request only, in the order they opened.
fn join_order(path: &std::path::Path) -> Vec<f64> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let mut joined: Vec<(f64, u64, f64)> = reader
        .deserialize::<std::collections::HashMap<String, String>>()
        .map(|r| r.unwrap())
        .filter(|r| r["attempt"] == "1" && r["requests"] != "0")
        .map(|r| {
            (
                r["opened_unix"].parse().unwrap(),
                r["conn_id"].parse().unwrap(),
                r["mean_response_us"].parse().unwrap(),
            )
        })
        .collect();
    joined.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    joined.into_iter().map(|j| j.2).collect()
}

#[test]
fn a_scaled_down_claim_20_orders_every_connection_by_when_it_joined() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("claim-20.toml");
    fs::write(&scenario, TINY_CLAIM_20).unwrap();
    let out = dir.path().join("out");
    let rows = common::run_scenario_ok(&scenario, &out, QUIET);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let rep = out.join(format!("epoll/c200-s64-d10ms/rep-{}/load", r["repetition"]));
        let means = join_order(&rep.join("connections.csv"));
        assert_eq!(means.len(), 200, "every connection once");
        // The last 20 to open, and the 20 before them, each connection's mean once.
        let mean = |s: &[f64]| (s.iter().sum::<f64>() / 20.0 * 10.0).round() / 10.0;
        assert_eq!(
            (
                common::number(r, "joined_last_tenth_mean_us"),
                common::number(r, "joined_ninth_tenth_mean_us")
            ),
            (mean(&means[180..]), mean(&means[160..180])),
            "{r:?}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let row = claims_row(&report, 20);
    assert!(
        row.starts_with(
            "| 20 | “a line that is best described as a linear model for most of the clients \
             but exponentially increases as we get to the user specified client number” \
             (004_4a07aa620c3379ed.txt, Analysis)<br>The report: "
        ),
        "{row}"
    );
    // Measured on both tenths in all four repetitions: a verdict with p, never "no step".
    assert!(row.contains("n = 4"), "{row}");
}
