use super::*;
use crate::experiment::placement::hosts::Host;

fn step(c: u64) -> Step {
    Step {
        name: format!("c{c}"),
        connections: c,
        size: 64,
        delay: None,
        rate: None,
        workers: None,
        requests: None,
        hosts: None,
    }
}

#[test]
fn batches_add_up_to_the_stairs() {
    let stairs = [step(1000), step(2000), step(2500)];
    let batches: Vec<u64> = (0..3).map(|i| batch_of(&stairs, i)).collect();
    assert_eq!(batches, [1000, 1000, 500]);
}

#[test]
fn a_stair_may_connect_at_half_the_rate_of_the_one_before() {
    let s = Duration::from_secs;
    // The first stair, no connect rate: the connect timeout and 2 s.
    let first = Deadline::rule(s(30), None, 50_000, None);
    assert_eq!(first.total(), s(32));
    assert_eq!(
        first.describe(50_000),
        "its deadline of 32.0 s: connect timeout 30 s + 2 s"
    );
    // After a stair that connected 2 000/s: 25 s of ramp, twice.
    let next = Deadline::rule(s(30), None, 50_000, Some(2_000.0));
    assert_eq!(next.total(), s(82));
    assert_eq!(
        next.describe(50_000),
        "its deadline of 82.0 s: connect timeout 30 s + 2 x 50000 connections at the \
         previous stair's 2000/s (25.0 s) + 2 s"
    );
    // The scenario's connect rate when it is the slower.
    let planned = Deadline::rule(s(30), Some(1_000.0), 50_000, Some(2_000.0));
    assert_eq!((planned.total(), planned.measured_rate), (s(132), None));
    // The measured ramp at most four connect timeouts.
    let slow = Deadline::rule(s(30), None, 50_000, Some(10.0));
    assert_eq!(slow.total(), s(30 + 240 + 2));
}

#[test]
fn a_stair_not_connected_by_its_deadline_fails_whatever_its_window_shows() {
    let s = Duration::from_secs;
    let stairs = [step(100_000)];
    // The measured previous rate of 1 316/s gives 30 + 2 x 3.8 + 2 = 39.6 s.
    let deadline = Deadline::rule(s(30), None, 50_000, Some(50_000.0 / 3.8));
    let by_deadline = window::Connections {
        established: 49_744,
        failed: 0,
        open: 49_744,
    };
    // A window measured later found every connection: the stair still fails.
    let mut late = stair_of(&stairs, 0, Status::Ok, String::new());
    assert!(missed_deadline(
        &mut late,
        &by_deadline,
        50_000,
        &deadline,
        None
    ));
    assert_eq!(late.status, Status::Failed);
    assert_eq!(
        late.reason,
        "49744 of 50000 connections established within its deadline of 39.6 s: connect \
         timeout 30 s + 2 x 50000 connections at the previous stair's 13158/s (3.8 s) + 2 s"
    );
    // What the server's TCP counted while the batch connected is named.
    let mut counted = stair_of(&stairs, 0, Status::Ok, String::new());
    let net = crate::experiment::measurement::netstat::NetCounters {
        listen_overflows: 256,
        listen_drops: 256,
        syn_retrans: 3,
        ..Default::default()
    };
    assert!(missed_deadline(
        &mut counted,
        &by_deadline,
        50_000,
        &deadline,
        Some(&net)
    ));
    assert!(
        counted.reason.ends_with(
            "+ 2 s; while it connected the server's TCP counted 256 listen-queue \
             overflow(s), 256 listen drop(s) and 3 SYN or SYN-ACK retransmission(s)"
        ),
        "{}",
        counted.reason
    );
    // Failed attempts are named.
    let mut refused = stair_of(&stairs, 0, Status::Ok, String::new());
    let some_failed = window::Connections {
        failed: 12,
        ..by_deadline
    };
    assert!(missed_deadline(
        &mut refused,
        &some_failed,
        50_000,
        &deadline,
        None
    ));
    assert!(
        refused.reason.ends_with("+ 2 s (12 failed)"),
        "{}",
        refused.reason
    );
    // A stair the window failed keeps its reason, with the deadline it missed.
    let mut failed = stair_of(&stairs, 0, Status::Failed, "too slow".into());
    assert!(!missed_deadline(
        &mut failed,
        &by_deadline,
        50_000,
        &deadline,
        None
    ));
    assert!(failed
        .reason
        .starts_with("too slow within its deadline of 39.6 s"));
    // A stair cut short stays so.
    let mut cut = stair_of(&stairs, 0, Status::Interrupted, "signal 2".into());
    assert!(!missed_deadline(
        &mut cut,
        &by_deadline,
        50_000,
        &deadline,
        None
    ));
    assert_eq!(
        (cut.status, cut.reason.as_str()),
        (Status::Interrupted, "signal 2")
    );
}

#[test]
fn each_stair_loads_the_client_hosts_whose_share_it_fills() {
    let clients: Vec<Host> = (0..4)
        .map(|i| Host {
            namespace: format!("c{i}"),
            addr: std::net::Ipv4Addr::new(198, 18, 0, 11 + i),
        })
        .collect();
    let names =
        |hosts: &[Host]| -> Vec<String> { hosts.iter().map(|h| h.namespace.clone()).collect() };
    // 4 hosts of 1000 each; stairs of 2000 take two hosts each.
    let stairs = [step(2000), step(4000)];
    assert_eq!(names(stair_hosts(&clients, &stairs, 0)), ["c0", "c1"]);
    assert_eq!(names(stair_hosts(&clients, &stairs, 1)), ["c2", "c3"]);
    // Stairs smaller than a share stay on one host until it is full.
    let stairs = [step(500), step(1000), step(1500), step(4000)];
    assert_eq!(names(stair_hosts(&clients, &stairs, 0)), ["c0"]);
    assert_eq!(names(stair_hosts(&clients, &stairs, 1)), ["c0"]);
    assert_eq!(names(stair_hosts(&clients, &stairs, 2)), ["c1"]);
    assert_eq!(names(stair_hosts(&clients, &stairs, 3)), ["c1", "c2", "c3"]);
    // No client hosts: the machine's loopback, as before.
    assert!(stair_hosts::<Host>(&[], &stairs, 0).is_empty());
}
