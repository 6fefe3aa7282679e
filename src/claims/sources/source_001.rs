//! The claims of report 001 (001_847778bf516bd6a1.txt), each as claim N of [`super::CLAIMS`].

use super::Kind::Test;
use super::Source;

pub const CLAIM_4: Source = Source {
    quote: "Select is useful when implementing a server that handles moderate amounts, \
            long live connection with frequent request.",
    file: "001_847778bf516bd6a1.txt",
    section: "Conclusion",
    setup: "C select (level-triggered, one thread) and epoll (edge-triggered: one \
            event loop whose accepts run in parallel over OpenMP threads, `-m \
            (--max-core)`, \"number of worker thread to scale accept\") servers; test-a \
            case 2: 1 024 clients, a request every 10 ms, about 3 \
            minutes, Wireshark IO graphs: select about 6 500 packets/s, epoll about 6 \
            000; case 3: 256 clients, 0.1 ms between requests, about 10 s: select 115 \
            000 packets/s, epoll 109 000",
    test: "select and epoll, one thread each pinned to CPU 0 (the load generator on \
            CPU 1), 250 and 1 000 clients each sending 13 bytes, waiting for the echo \
            and pausing 0.1, 1 or 10 ms, for 3 s per step, 5 repetitions; the mean \
            response time is compared per step over the repetitions (Mann-Whitney U, p \
            < 0.05, and the 95 % bootstrap interval of epoll's median over select's). \
            At a step select is faster when significantly so, as fast when that \
            interval stays above 1 / 1.1 (select at most 10 % slower), and epoll \
            faster when significantly so. Confirmed when select is as fast or faster \
            at every step, refuted when epoll is faster at most steps.",
    differs: "001's figure is packets per second from Wireshark; here the mean \
            response time is compared (a choice: in a closed loop with a fixed pause \
            the request rate follows from the response time, and the load measures it \
            per request, where a packet count needs a capture); 3 s a step, not 3 \
            minutes (case 2) or 10 s (case 3), so 6 steps x 2 models x 5 repetitions \
            fit about 4 minutes; 1 000 clients, not 1 024 (select here refuses fds at \
            or above FD_SETSIZE, and the listener and standard streams take four); \
            13-byte messages as 001's; one machine on loopback, the server pinned to \
            one core and the load to the other (001's clients ran on other machines). \
            001's epoll server is not one thread: its event loop accepts new \
            connections \"Run in parallel {\" (its pseudo code, line 143) over the \
            threads of \"Set number of threads to use for openmp\" (line 181); here \
            epoll is one thread that accepts and serves alike (workers = 1, as \
            select), a choice: the server has one core, where parallel accepts would \
            take turns, and a step's 250 or 1 000 accepts come at its start, while \
            what is compared is its requests' response time over 3 s.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_5: Source = Source {
    quote: "Epoll is useful when implementing a server that deals with massive number \
            of short live connections in a short period of time.",
    file: "001_847778bf516bd6a1.txt",
    section: "Conclusion; Analysis, case 5",
    setup: "C select and epoll servers; test-b case 5: clients spawned until 300, 0.01 \
            s apart (100 a second), each sending 13 bytes and closing after one reply; \
            average response time select 0.000673 s, epoll 0.000403 s; 001 explains \
            the gap by epoll's server accepting every pending connection at each \
            wakeup, in parallel over OpenMP threads",
    test: "select and epoll, one thread each pinned to CPU 0 (the load generator on \
            CPU 1), 1 000 and 5 000 connections in all, opened at 2 000 per second, \
            each sending one 13-byte request, reading the echo and closing (so few are \
            open at once and select can take them all); 5 repetitions. The mean \
            response time, 001's figure (case 5: select 0.673 ms, epoll 0.403 ms), is \
            compared over the repetitions (Mann-Whitney U, p < 0.05): confirmed when \
            epoll is significantly faster at a step and select at none. The time to \
            complete the workload is listed beside it (the connections open at a fixed \
            rate, so it differs only if a server falls behind).",
    differs: "1 000 and 5 000 connections opened at 2 000 a second, not 300 at 100 a \
            second (a choice: at 100 a second each connection finds the server idle, \
            so nothing waits to be accepted and the accept loop 001 credits is never \
            exercised); both Rust servers here accept every pending connection at each \
            wakeup (select's and epoll's accept loops alike), so 001's explanation \
            does not separate them here; 001's epoll server runs that accept loop \
            \"Run in parallel {\" (its pseudo code, line 143) over the threads of \"Set \
            number of threads to use for openmp\" (line 181), where echolab's epoll \
            accepts on its one thread, pinned to the server's one core (parallel \
            accepts there would take turns), so the part of 001's gap owed to \
            accepting in parallel is not tested here; 13-byte messages as 001's; one machine on \
            loopback, the server pinned to one core and the load to the other.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_13: Source = Source {
    quote: "The response time for the select server is roughly 9 sec in total (average \
            of 0.009 sec per request), the epoll is roughly 15 sec (average of 0.015 \
            sec per request).",
    file: "001_847778bf516bd6a1.txt",
    section: "Analysis, Case4 (Test cases & results, Case 4)",
    setup: "C select (level-triggered) and epoll (edge-triggered) servers; test-b: 300 \
            clients spawned 0.01 s apart, 1000 requests of 13 bytes each, 1 ms between \
            requests; average response time select 0.009119 s, epoll 0.015214 s",
    test: "select and epoll (one worker: 001's conclusion says neither server scaled \
            out its reads) with 300 connections opened at 100 per second, each sending \
            1000 requests of 13 bytes with 1 ms between an echo and the next request, \
            5 repetitions. The mean response time is compared over the repetitions \
            (Mann-Whitney U, p < 0.05): confirmed when select's is lower than epoll's, \
            refuted when epoll's is significantly lower, \"no difference\" otherwise. \
            A repetition fails above 10 % errors (a busy machine times a few requests \
            out).",
    differs: "Rust servers, the load generator on the same two-core machine over \
            loopback (001 used two client machines): the server is pinned to one core \
            and the load to the other.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_14: Source = Source {
    quote: "So if the epoll scale out the blocking operation, it is possible that the \
            epoll server will yield better performance than select server on all \
            aspects.",
    file: "001_847778bf516bd6a1.txt",
    section: "Conclusion",
    setup: "a hypothesis from case 3 (test-a: 256 clients spawned 0.02 s apart, 0.1 ms \
            between requests, about 10 s): select 115 000 packets/s, epoll 109 000, \
            neither server scaling out its reads",
    test: "select, epoll with one worker and epoll-2w (two worker threads, each with \
            its own epoll queue: this machine has 2 cores) with 256 connections opened \
            at 50 per second, each sending 13 bytes and pausing 0.1 ms after each \
            echo, for 10 s, 5 repetitions; each read costs the server 200 µs of CPU \
            (work_us), so the server, not the load, needs the cores: the claim's \
            condition, epoll's reads scaled out over workers that each have a core. \
            Throughput and the mean response time are \
            compared over the repetitions (Mann-Whitney U, p < 0.05): confirmed when \
            epoll-2w has both the higher throughput and the lower mean than select, \
            refuted when select is significantly better on either, \"no difference\" \
            otherwise; the second worker's gain (epoll-2w against epoll) is listed \
            beside it. A repetition fails above 10 % errors (a busy machine times a \
            few requests out).",
    differs: "Rust servers spending 200 µs of CPU on each read, which 001's echo \
            servers did not (a choice, for the condition: on two cores shared with the \
            load generator an echo costs the server about what it costs the load, so a \
            second worker would compete with the load for its core; with the work the \
            load needs a few per cent of a core, and the second worker has most of \
            the second), so the rates are a CPU-bound server's, not 001's case 3 \
            packets; the load generator on the same machine (001 used other \
            machines).",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_21: Source = Source {
    quote: "One thing to note is that the incoming requests for the select server are \
            comparably consistent than the epoll server.",
    file: "001_847778bf516bd6a1.txt",
    section: "Analysis, Case2",
    setup: "C select and epoll servers; test-a case 2: 1 024 clients (6 spawn cycles \
            of 256, 0.02 s apart), a request every 10 ms, held about 3 minutes; \
            Wireshark IO graphs: select about 6 500 packets/s, epoll about 6 000",
    test: "select and epoll (one worker each) with 1 000 clients, each sending 64 \
            bytes, waiting for the echo and pausing 10 ms, for 15 s, 5 repetitions. \
            The spread of the request rate (requests_per_s_cv: the standard deviation \
            of the requests completed in each second over their mean, the first two \
            seconds and the last left out) is compared over the repetitions \
            (Mann-Whitney U, p < 0.05): confirmed when select's is significantly \
            lower, refuted when epoll's is.",
    differs: "1 000 clients, not 1 024 (select refuses fds at or above FD_SETSIZE, 1 \
            024, and the listening socket and standard streams take four); the clients \
            connect within a second, not 20; 15 s, not 3 minutes; the load's requests \
            per second, not the server's packets per second; one machine on loopback, \
            the server pinned to one core and the load to the other (001's clients ran \
            on their own machines).",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_22: Source = Source {
    quote: "As we can see, the performance gap between select and epoll close in as \
            the frequency of request increases.",
    file: "001_847778bf516bd6a1.txt",
    section: "Analysis, Case3 (against Case2)",
    setup: "C select (level-triggered) and epoll (edge-triggered) servers, one thread \
            each; test-a case 2: 1 024 clients, a request every 10 ms, about 3 \
            minutes: select about 6 500 packets/s, epoll about 6 000 (epoll 8 % \
            behind); case 3: 256 clients, 0.1 ms between requests, about 10 s: select \
            115 000 packets/s, epoll 109 000 (5 % behind)",
    test: "claim-4's load: select and epoll, one thread each pinned to CPU 0 (the \
            load generator on CPU 1), 250 and 1 000 clients each sending 13 bytes, \
            waiting for the echo and pausing 0.1, 1 or 10 ms, for 3 s per step, 5 \
            repetitions. 001's figure is packets per second (\"The IO graph on select \
            server shows an average of 115000 packets/s. As for the epoll server, the \
            IO graph shows an average of roughly 109000 packets/s.\"), so a \
            repetition's gap is how far apart the two servers' TCP segments per second \
            are (|ln| of epoll's over select's, the kernel's counters over the load, \
            the two run interleaved). At each client count the gaps at the 0.1 ms \
            pause are compared with those at 10 ms (Mann-Whitney U, p < 0.05): the gap \
            closed when it shrank significantly by five points of the ratio or more, \
            widened when it grew so. Confirmed when it closed at a client count and \
            widened at none, refuted when it widened at one and closed at none, \"no \
            difference\" when it did neither.",
    differs: "001 compares two cases that differ in clients too (1 024 at 10 ms, 256 at \
            0.1 ms); here the pause changes at a fixed client count, 250 and 1 000, so \
            the gap follows the frequency alone; the kernel's TCP segment counters \
            rather than a Wireshark capture (on loopback every segment is sent and \
            received here, so the count takes both directions, as a capture at the \
            server does; the counters are the whole machine's, so other traffic counts \
            too, and the report says so); 3 s a step, not 3 minutes or 10 s; 13-byte \
            messages as 001's; one machine on loopback, the server on one core and the \
            load on the other. In classic this claim is judged from claim-4's rows (the \
            same load).",
    judged_from: Some(4),
    kind: Test,
};

pub const CLAIM_26: Source = Source {
    quote: "\"the wireshark IO graph on the epoll server shows that the number of \
            incoming packets dropped when the active socket count hits\" 20000 \"mark. \
            The drop happened because the server was not able to reply back to the \
            client as quickly as before, i.e the response time increased.\"",
    file: "001_847778bf516bd6a1.txt",
    section: "Analysis, Case1 (Test cases & results, Case 1)",
    setup: "a C epoll server (edge-triggered, accepting every pending connection); \
            test-b: clients added every 0.002 s from two client machines (10 000 each, \
            20 000 echo requests), each sending its next request 10 000 ns after an \
            echo; Wireshark: about 20 000 active connections, the incoming packets \
            dropping at the 20 000 mark",
    test: "epoll (one worker, pinned to CPU 0; the load on CPU 1) with 10 000 and then \
            20 000 connections, each sending 13 bytes and sending again 0.01 ms after \
            its echo, for 3 s after a 5 s warm-up that opens them, 5 repetitions; at \
            20 000 the server runs as two \
            processes sharing the port and the load as two (one process may hold 20 \
            000 fds here), over 8 source addresses. The requests answered per second \
            (each a packet in and a packet out) at 20 000 are compared with those at \
            10 000 (Mann-Whitney U, p < 0.05, by x1.05 or more, each generator-bound or \
            disturbed repetition left out in turn): confirmed when lower at 20 000, \
            refuted when higher or when the ratio's whole 95 % interval lies within \
            x1.05 (no drop), \"no difference\" otherwise. The mean response time, \
            001's explanation, is listed beside it.",
    differs: "two steps, 10 000 and 20 000 connections held for 3 s each, not clients \
            added every 2 ms until the rate drops (a choice: the claim compares the \
            rate near 20 000 with the rate before it); the requests answered per \
            second, not Wireshark's incoming packets (each request is one segment in \
            and one out on loopback); 13-byte messages as 001's other cases (case 1 \
            gives no size); one machine on loopback, the server on one core and the \
            load on the other.",
    judged_from: None,
    kind: Test,
};
