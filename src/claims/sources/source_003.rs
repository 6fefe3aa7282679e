//! The claims of report 003 (003_b6672a133222eae0.txt), each as claim N of [`super::CLAIMS`].

use super::Kind::{Demonstration, Test};
use super::Source;

pub const CLAIM_7: Source = Source {
    quote: "1 MiB at 10,000 connections: threads \"was automatically terminated by the \
            system\"; select \"Could not complete tests\"; epoll \"was not able to \
            support this test. It starts to terminate connections near the 30 second \
            mark\"",
    file: "003_b6672a133222eae0.txt",
    section: "1 Megabyte Transfer (Multi-threaded, Select, Epoll)",
    setup: "threads, select and epoll servers (003 does not name their language; its \
            sketch of an echo server and its client are Node.js) on a 700 MHz \
            single-core, 256 MB server with a 100 Mbit port behind a gigabit switch; \
            10 000 connections transferring 1 MiB continuously for 30 s",
    test: "threads, select and epoll (one worker) at 10 000 connections of 1 MiB, each \
            sending its message, waiting for the echo and sending again for 30 s, \
            reconnecting with backoff, from one client host whose link runs at 1 Gbit \
            to a server host whose own link runs at 100 Mbit (tbf on both ends, \
            [network] server_rate); the server on the weak-2016 profile: one core \
            (cpus = [0]) capped by cgroup CPU quota to 700 MHz over this CPU's clock \
            (0.2863 core of 2 445 MHz here) and 256 MiB of memory (swap counted, so \
            the OOM killer acts); 3 repetitions. Confirmed when threads is stopped by \
            the system, select fails, and epoll fails.",
    differs: "Rust servers (003 does not name its servers' language); one machine, its \
            hosts network namespaces on a bridge; the CPU quota gives 29 % of a 2.4 \
            GHz core, not a 700 MHz core's caches and memory bandwidth; 1 B and 1 KiB \
            (the report's notes beside the claim) are left out to fit the classic \
            scenario's hour. Without root for cgroups and namespaces the claim is not \
            run.",
    judged_from: None,
    kind: Demonstration("the setup fixes the outcome: at 10 000 connections select must fail (FD_SETSIZE is 1 024, and 003 blames its own code), and 10 000 x 1 MiB (about 10 000 MiB) cannot cross a 100 Mbit/s link (about 360 MiB in 30 s), so epoll cannot pass either; the run shows how each server fails, it does not test the claim"),
};

pub const CLAIM_17: Source = Source {
    quote: "Even with an increased number of connections, the speed is noticeably \
            limited.",
    file: "003_b6672a133222eae0.txt",
    section: "Epoll, Continuous Transfer (1KB)",
    setup: "an epoll server (003 does not name its language; its sketch of an echo \
            server and its client are Node.js) on a 700 MHz single-core, 256 MB server \
            with a 100 Mbit port behind a gigabit switch; an increase of 1 000 \
            connections every 5 s, each transferring 1 KiB continuously, stopped at 80 \
            000; about 3.0 MB/s up and down at most",
    test: "epoll (one worker) on the weak-2016 profile: one core (cpus = [0]) capped \
            by cgroup CPU quota to 700 MHz over this CPU's clock (0.2863 core of 2 445 \
            MHz here) and 256 MiB of memory, its host's own link at 100 Mbit (tbf, \
            [network] server_rate) and the client host's at 1 Gbit; a staircase of +1 \
            000 connections every 5 s to 10 000, each connection sending 1 KiB and \
            sending again as soon as its echo is back, reconnecting after an error; 3 \
            repetitions. The echo throughput (MiB/s) of the stairs above half the top \
            is compared with that of the stairs up to half (Mann-Whitney U, p < 0.05): \
            confirmed when the upper stairs are not significantly faster, refuted when \
            they are (the speed kept growing with the connections). Full scale: `to = \
            80000` with `[server] conns_per_process = 19000`, `[load] \
            conns_per_process = 18000` and `[hosts] clients = 2` (one process may hold \
            20 000 fds here, one client host has 64 000 ports; about 7 minutes a \
            repetition).",
    differs: "a Rust server (003 does not name its server's language); one machine, \
            its hosts network namespaces on a bridge; 29 % of a 2.4 GHz core is not a \
            700 MHz core. Without root for cgroups and namespaces the claim is not \
            run.",
    judged_from: None,
    kind: Demonstration("the setup fixes the outcome: the server host's link runs at 100 Mbit/s (12.5 MB/s, 11.9 MiB/s, each way before the headers) and the first stair's 1 000 connections, each sending 1 KiB as soon as its echo is back, already fill it (about 10.6 MiB/s from the first stair on), so more connections cannot raise the speed whatever the server does; the report's ceiling, about 3.0 MB/s, lay below its own 100 Mbit port, where the connections could still have raised it"),
};

pub const CLAIM_39: Source = Source {
    quote: "Based on the graphed results of the transfer rate, errors and rejected \
            connections are alarmingly high",
    file: "003_b6672a133222eae0.txt",
    section: "Conclusion",
    setup: "threads, select and epoll servers (Node.js sketches) on a 700 MHz \
            single-core, 256 MB server with a 100 Mbit port; 10 000 connections of 1 B, \
            1 KiB and 1 MiB, and 1 KiB connections added 1 000 every 5 s; its client \
            reconnects with an exponential backoff; no error counts given",
    test: "claim-17's load: epoll (one worker) on the weak-2016 profile behind a 100 \
            Mbit port, a staircase of +1 000 connections of 1 KiB every 5 s to 10 000, \
            each sending again as soon as its echo is back and reconnecting after an \
            error, 3 repetitions. At the top stair, a repetition's share lost is the \
            larger of its error rate and the share of its connections not established; \
            \"alarmingly high\" is read as 1 % or more: confirmed when every repetition \
            lost 1 % or more, refuted when every one lost less, inconclusive when they \
            straddle 1 %.",
    differs: "epoll alone (claim 17's staircase; 003's threads and select tests at 10 \
            000 connections are claim 7's and claim 1's); the 1 % threshold is a \
            choice, 003 gives no figure; a Rust server, 29 % of a 2.4 GHz core for a \
            700 MHz one. In classic this claim is judged from claim-17's rows (the same \
            load).",
    judged_from: Some(17),
    kind: Test,
};

/// 003's 1 B and 1 KiB transfers at 10 000 connections: the report's setup for claims
/// 48 to 51.
const SMALL_TRANSFERS_SETUP: &str = "threads and epoll servers (003 does not name their \
     language; its sketch of an echo server and its client are Node.js) on a 700 MHz \
     single-core, 256 MB server with a 100 Mbit port behind a gigabit switch; 10 000 \
     connections transferring 1 B and 1 KiB continuously for 30 s, the client \
     reconnecting with an exponential backoff";

/// 003's note under threads' 1 B and its 1 KiB transfer alike (claims 48 and 49).
const TERMINATED_AT_HALF: &str =
    "Note: The server was manually terminated after half of the connections were closed.";

/// How claim-48's load differs from 003's.
const SMALL_TRANSFERS_DIFFERS: &str = "Rust servers (003 does not name its servers' \
     language); one machine, its hosts network namespaces on a bridge; 29 % of a 2.4 GHz \
     core is not a 700 MHz core; 10 messages a connection, then closing (a fixed \
     workload, so the time until every connection was answered and closed is measured \
     and a step ends within its 90 s timeout), not 30 s of continuous transfer. Without \
     root for cgroups and namespaces the claim is not run.";

pub const CLAIM_48: Source = Source {
    quote: TERMINATED_AT_HALF,
    file: "003_b6672a133222eae0.txt",
    section: "Multi-threaded (Traditional), 1 Byte Transfer",
    setup: SMALL_TRANSFERS_SETUP,
    test: "threads (one pthread per connection) and epoll (one worker) at 10 000 \
            connections, each sending 10 messages of 1 KiB, and in a step of its own of \
            1 B, each as soon as the echo of the last is back, then closing, \
            reconnecting after an error (connect timeout 10 s, response timeout 20 s), \
            from one client host whose link runs at 1 Gbit to a server host whose own \
            link runs at 100 Mbit (tbf); the server on the weak-2016 profile: one core \
            capped by cgroup CPU quota to 700 MHz over this CPU's clock and 256 MiB of \
            memory (swap counted, so the OOM killer acts); 3 repetitions, a failed step \
            run again in each. A step fails when fewer than all 10 000 connections are \
            established or 1 % or more of the requests fail. This claim reads threads \
            at 1 B: confirmed when threads failed the step in every repetition (it did \
            not serve all 10 000 connections to the end: connections refused or timed \
            out, the server killed, requests failing), refuted when it passed in every \
            repetition, inconclusive when the repetitions disagree.",
    differs: SMALL_TRANSFERS_DIFFERS,
    judged_from: None,
    kind: Test,
};

pub const CLAIM_49: Source = Source {
    quote: TERMINATED_AT_HALF,
    file: "003_b6672a133222eae0.txt",
    section: "Multi-threaded (Traditional), 1 Kilobyte Transfer",
    setup: SMALL_TRANSFERS_SETUP,
    test: "threads at 1 KiB on claim-48's load. Confirmed when threads failed the step \
            in every repetition (it did not serve all 10 000 connections to the end), \
            refuted when it passed in every repetition, inconclusive when the \
            repetitions disagree.",
    differs: SMALL_TRANSFERS_DIFFERS,
    judged_from: Some(48),
    kind: Test,
};

pub const CLAIM_50: Source = Source {
    quote: "It took over a minute before all 10,000 connections were responded to and \
            closed.",
    file: "003_b6672a133222eae0.txt",
    section: "Epoll, 1 Byte Transfer",
    setup: SMALL_TRANSFERS_SETUP,
    test: "epoll at 1 B on claim-48's load. A repetition's time is its completion_s, \
            from the start of the load until the last connection finished its messages \
            and closed. Confirmed when every repetition took 60 s or more, refuted when \
            every repetition passed (all 10 000 connections answered) in under 60 s, \
            inconclusive otherwise (the repetitions disagree, or one failed before \
            every connection was answered).",
    differs: SMALL_TRANSFERS_DIFFERS,
    judged_from: Some(48),
    kind: Test,
};

pub const CLAIM_51: Source = Source {
    quote: "Gaps are noticeable from the increase backoff timeout due to connections \
            repeatedly being rejected.",
    file: "003_b6672a133222eae0.txt",
    section: "Epoll, 1 Kilobyte Transfer",
    setup: SMALL_TRANSFERS_SETUP,
    test: "epoll at 1 KiB on claim-48's load. A repetition's rejections are the \
            connection attempts the server host's TCP dropped at the listen queue \
            (net_listen_drops, counted in the server's own namespace), each one a \
            client waiting out a SYN timeout. \"Repeatedly\" is read as 1 % or more of \
            the 10 000 connections (100): confirmed when every repetition counted that \
            many, refuted when every one counted fewer, inconclusive when they \
            straddle 1 % or a count is missing.",
    differs: concat!(
        "the 1 % threshold is a choice (003 gives no count, only gaps in its plot); ",
        "Rust servers (003 does not name its servers' language); one machine, its hosts \
         network namespaces on a bridge; 29 % of a 2.4 GHz core is not a 700 MHz core; \
         10 messages a connection, then closing, not 30 s of continuous transfer. \
         Without root for cgroups and namespaces the claim is not run."
    ),
    judged_from: Some(48),
    kind: Test,
};

pub const CLAIM_52: Source = Source {
    quote: "Note: The server was manually terminated after throughput collapsed (see \
            below).",
    file: "003_b6672a133222eae0.txt",
    section: "Multi-threaded (Traditional), Continuous Transfer (1KB)",
    setup: "a threads server (003 does not name its language; its sketch of an echo \
            server and its client are Node.js) on a 700 MHz single-core, 256 MB server \
            with a 100 Mbit port behind a gigabit switch; an increase of 1 000 \
            connections every 5 s, each transferring 1 KiB continuously",
    test: "threads (one pthread per connection) on claim-17's staircase: the weak-2016 \
            profile (one core capped to 700 MHz over this CPU's clock, 256 MiB), its \
            host's own link at 100 Mbit and the client host's at 1 Gbit, +1 000 \
            connections every 5 s to 10 000, each sending 1 KiB again as soon as its \
            echo is back, reconnecting after an error; 3 repetitions. In each \
            repetition the echo throughput (MiB/s) of the last stair that ran is set \
            against the best stair's: collapsed when under half of it (a stair that \
            failed without a throughput counts 0). Confirmed when every repetition \
            collapsed, refuted when none did, inconclusive when they disagree.",
    differs: "a Rust server (003 does not name its server's language); one machine, \
            its hosts network namespaces on a bridge; 29 % of a 2.4 GHz core is not a \
            700 MHz core; \"collapsed\" read as under half the best stair's throughput \
            (003 gives its plot, no figure); 10 000 connections at most, claim-17's \
            staircase (003 does not say where threads stopped). Its own part: claim-17 \
            runs epoll alone, and claims 17 and 39 read its rows. Without root for \
            cgroups and namespaces the claim is not run.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_53: Source = Source {
    quote: "While the server is able to accept a large number of connections",
    file: "003_b6672a133222eae0.txt",
    section: "Epoll, Continuous Transfer (1KB)",
    setup: "an epoll server (Node.js sketches) on a 700 MHz single-core, 256 MB server \
            with a 100 Mbit port; 1 000 connections added every 5 s, each transferring \
            1 KiB continuously; \"The transfer was manually stopped at 80,000 \
            connections.\"",
    test: "claim-3's rows: epoll holding 100 000 connections open together (one 64-byte \
            echo each, then 3 s with all of them open), 6 processes sharing the port, 3 \
            repetitions. \"A large number\" is read as 003's own 80 000: confirmed when \
            epoll held 80 000 connections or more in every repetition, refuted when it \
            held fewer in every one, inconclusive when they disagree.",
    differs: "judged from claim-3's rows, not from a staircase on the weak-2016 profile: \
            claim-17's staircase stops at 10 000 to fit classic's hour, and its full \
            scale (80 000, about 7 minutes a repetition, 3 at least) would take more than \
            the 12 minutes classic may grow by for these statements, while claim-3 \
            already holds 100 000 epoll connections in every classic run. So the server \
            here has this machine's two cores and its memory unlimited, not 29 % of a \
            core and 256 MiB (the kernel's socket memory for 80 000 connections, charged \
            to the server's cgroup, might not fit in 256 MiB), its connections are held \
            rather than transferring 1 KiB continuously, on loopback rather than behind \
            a 100 Mbit port, and it runs as 6 processes of one worker (one process may \
            hold 20 000 fds here). What it judges is that an epoll server accepts and \
            holds 80 000 connections and more; not that a 700 MHz, 256 MB server \
            would.",
    judged_from: Some(3),
    kind: Test,
};
