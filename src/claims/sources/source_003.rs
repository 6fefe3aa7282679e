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
