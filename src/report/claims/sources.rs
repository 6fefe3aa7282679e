//! Each claim of the classic studies declared once: its report's words, file and
//! section, the report's setup and numbers, echolab's test of it with the rule that
//! decides the verdict, how echolab's setup differs from the report's and why, and
//! whether the test can come out either way here. The report's Claims section, the
//! composite report and `run --list` all read this table.

/// Whether a claim's scenario can come out either way on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A test: confirmed or refuted depending on what the run measures.
    Test,
    /// The setup fixes the outcome: the run shows what happens, with the reason it is
    /// not a test.
    Demonstration(&'static str),
    /// This machine cannot test the claim: the reason. Its numbers are still listed.
    /// No claim is declared so at present; the verdict stays for one that is.
    #[allow(dead_code)]
    Untestable(&'static str),
}

use self::Kind::{Demonstration, Test};

/// A claim as its report made it and as echolab tests it.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// The report's own words (fragments in double quotes when the claim joins several).
    pub quote: &'static str,
    /// The report's file in shared/seeds.
    pub file: &'static str,
    pub section: &'static str,
    /// The report's setup and numbers.
    pub setup: &'static str,
    /// echolab's test: what runs and the rule that decides the verdict.
    pub test: &'static str,
    /// echolab's setup against the report's: every difference and why (this machine's
    /// limits, or a choice).
    pub differs: &'static str,
    /// In classic, the claim whose scenario's rows judge this one too (the same load over
    /// the same or more steps), so its own scenario is not run again there; None when
    /// its own scenario runs.
    pub judged_from: Option<usize>,
    pub kind: Kind,
}

/// The claims in the order the classic studies make them; claim N is tested by the
/// built-in scenario `claim-N`. Claims 1 to 5 are the studies' common conclusions;
/// 2, 6, 7 and 8 quote the report that made them; 9 to 23 are the reports' other
/// conclusions, observations and hypotheses, in the order of the reports, 24 to 31
/// the observations tested last, again in the order of the reports, and 32 the last
/// tested, retransmissions against clients on claim 18's shaped link.
pub const CLAIMS: [Source; 32] = [
    Source {
        quote: "With select, it seems that we hit a physical limitation of FD_SETSIZE",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion; Test Case 3",
        setup: "Python 2.7 select server on a Core i5 4670K with 8 GB, its client on two \
                other PCs; 1 000 clients passed (Test Case 2), 2 000 failed (Test Case 3); \
                each connection sends \"Gary’s spamming\" 100 times",
        test: "select holds 900, 1000, 1100 and 2000 connections open together (3 echoes \
                of 64 bytes each, then 2 s with all of them open), 3 repetitions, with \
                epoll beside it as the control that shows the machine can hold them. \
                Confirmed when select holds every step up to 1024 and fails every step \
                above it while epoll holds them.",
        differs: "Rust select server, not Python 2.7; 3 echoes of 64 bytes a connection, \
                not 100 messages (a choice: the claim is how many connections select can \
                hold at once, which the count of echoes does not change, and 3 keep a step \
                within seconds); steps at 900, 1 000, 1 100 and 2 000 around FD_SETSIZE \
                instead of 1 000 and 2 000 only; every connection held open together for 2 \
                s so the count is of connections open at once; one machine on loopback \
                (002 used a server and two client PCs).",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "we see that the server has exhausted the number of threads it is able to \
                spawn to handle the incoming connections",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 7 (30 000 passed in Test Case 6)",
        setup: "Python 2.7 thread-per-client server on a Core i5 4670K with 8 GB; 30 000 \
                clients passed (two PCs, 15 000 each), 35 000 failed; 100 messages each",
        test: "the threads model (one pthread per connection, a 64 KiB stack and its guard \
                page, no cap of its own) holds 10 000, 19 000, 30 000 and 35 000 \
                connections open together (one 64-byte echo each, then 5 s with all of \
                them open), 3 repetitions. One process may hold 20 000 fds here, so from \
                30 000 on the server runs as two processes sharing the port (19 000 \
                connections each at most), as 002's server went past 30 000; the load is \
                split over processes and loopback source addresses. The verdict reads the \
                error the kernel returned when a thread could not start (EAGAIN at \
                threads-max, pid_max or memory) and compares the threads reached with \
                kernel.threads-max and kernel.pid_max (32 768 here, for the whole machine: \
                the machine's other processes count too).",
        differs: "Rust, not Python 2.7; one machine on loopback; the step holds the \
                connections (one echo), not 100 messages each.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "Using four client computers with 25000 connections each, the epoll server \
                was able to successfully process all connections without any errors.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 12",
        setup: "an epoll server run as `./server` (002 does not name its language): a main \
                thread accepting and N worker threads, each with its own epoll queue; four \
                client computers with 25 000 connections each; each connection sends \
                \"Gary’s spamming\" 100 times",
        test: "epoll holds 100 000 connections open together (one 64-byte echo each, then \
                3 s with all of them open), 3 repetitions. The server runs 6 processes \
                sharing the port and the load generator 6 processes (at most 18 000 \
                connections each, below the 20 000 fd limit per process), the load spread \
                over 8 source addresses to pass the ~28 000 ephemeral ports of one.",
        differs: "Rust epoll server, 6 processes of one worker sharing the port instead of \
                one process with N workers (one process may hold 20 000 fds here); one \
                64-byte echo a connection, not 100 messages (a choice: the claim is that \
                every connection is served without error, which every connection \
                established, echoed once, checked and held open together shows; 100 echoes \
                of 100 000 connections would take minutes a repetition); one machine on \
                loopback, 8 source addresses standing for the four client computers (one \
                address has about 28 000 ephemeral ports).",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "Select is useful when implementing a server that handles moderate amounts, \
                long live connection with frequent request.",
        file: "001_847778bf516bd6a1.txt",
        section: "Conclusion",
        setup: "C select (level-triggered) and epoll (edge-triggered) servers, one thread \
                each; test-a case 2: 1 024 clients, a request every 10 ms, about 3 \
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
                one core and the load to the other (001's clients ran on other machines).",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "Epoll is useful when implementing a server that deals with massive number \
                of short live connections in a short period of time.",
        file: "001_847778bf516bd6a1.txt",
        section: "Conclusion; Analysis, case 5",
        setup: "C select and epoll servers; test-b case 5: clients spawned until 300, 0.01 \
                s apart (100 a second), each sending 13 bytes and closing after one reply; \
                average response time select 0.000673 s, epoll 0.000403 s; 001 explains \
                the gap by epoll's server accepting every pending connection at each \
                wakeup",
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
                does not separate them here; 13-byte messages as 001's; one machine on \
                loopback, the server pinned to one core and the load to the other.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "as we double the number of concurrent clients, we approximately double the \
                average response time for each client as well",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, 60 requests each, \
                1000 ms request delay",
        test: "epoll (one worker, on one core; the load on the other core, as 004's \
                clients ran on another host) with 2 500, 5 000, 10 000 and 20 000 clients, \
                30 requests of 64 bytes each, 1000 ms between an echo and the next request \
                (about 30 s a run), 4 repetitions; the same rows judge claim 19 (004's 20 \
                000 clients). Each doubling compares the mean response time's repetitions \
                (Mann-Whitney U and a bootstrap interval of the ratio of medians): doubled \
                when the ratio is x1.5-2.6 with p < 0.05, not doubled when its interval \
                lies outside x1.5-2.6.",
        differs: "7 500 (not a doubling) is left out, 30 requests rather than 60 (the same \
                1000 ms delay, so the same request rate; half the session) and 4 \
                repetitions (the fewest that can reach p < 0.05) keep the 16 runs of half \
                a minute within the classic scenario's hour; one machine on loopback, the \
                two cores standing for 004's two hosts; the 20 000 clients are split over \
                two server processes and two load processes, since one process here may \
                hold 20 000 fds.",
        judged_from: None,
        kind: Test,
    },
    Source {
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
    },
    Source {
        quote: "The fastest response times (~30ms) are seen when we have a request delay \
                above 125 ms. As soon as we breach 125 ms and lower, the response times \
                take about 10x longer (~300-400ms).",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 6-11",
        setup: "an edge-triggered epoll server (004 does not name its language); cases 1 \
                and 6-11: 2 500 clients, 60 requests each, request delay 1000, 500, 250, \
                125, 50, 10 and 1 ms",
        test: "epoll (one worker, on one core; the load on the other core, as 004's \
                clients ran on another host) with 2 500 clients each sending 64 bytes, \
                waiting for the echo and pausing 1000, 500, 250, 125, 50, 10 or 1 ms, 5 \
                repetitions. Going from long delays to short, the knee is the first step \
                where the mean response time at least doubles with p < 0.05 (Mann-Whitney \
                U over the repetitions): confirmed when it is 250 -> 125 ms, refuted when \
                it is elsewhere or when the whole sweep does not double.",
        differs: "each step runs 6 s rather than 60 requests (60 s at 1000 ms), so 35 runs \
                fit in about five minutes; one machine on loopback, not a LAN, its two \
                cores standing for 004's two hosts. Each step runs in a network namespace \
                of its own, so its TCP counters are its alone.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "our hypothesis is that multi threaded servers will be the least scalable, \
                with Epoll servers being the most and followed by Select servers being \
                second.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Background (hypothesis); Observations, Max Clients",
        setup: "C servers on an Intel i5 quad core with 8 GB (Fedora 19); a multithreaded \
                client on up to four hosts; Max Clients before the server or client \
                crashed: threads 1 782, select 574, epoll 19 990+",
        test: "threads (one pthread per connection, 64 KiB stack), select and epoll hold 1 \
                000, 5 000 and 19 000 connections open together (3 echoes of 50 bytes \
                each, then 5 s with all of them open), 4 repetitions. A repetition's scale \
                is the most connections it held; the models are compared pairwise over the \
                repetitions (Mann-Whitney U, p < 0.05): confirmed when epoll holds more \
                than select and select more than threads, refuted when any pair goes \
                significantly the other way, \"no difference\" otherwise.",
        differs: "Rust servers on one two-core machine on loopback; one process may hold \
                20 000 fds here, so 19 000 is the most a one-process server (threads, \
                select, one epoll process) can be asked to hold, and epoll and threads \
                both meet that ceiling rather than a crash; 4 repetitions are the fewest \
                that can reach p < 0.05. A step that fails once is not run again (the \
                runner skips its other repetitions and the heavier steps), so a model's \
                scale is the same in every repetition: the p-value says the order held in \
                every repetition run, and each model's first failure is listed with its \
                reason.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "In Figure 6, it is apparent that Epoll server takes a longer time to \
                process these requests.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 6; Observations, Avg. Time to Process",
        setup: "C servers, client strings of 5 to 50 characters, many requests per client \
                thread; Avg. Time to Process: threads 0.00036335 s, select 0.0004602 s, \
                epoll 0.001196839 s",
        test: "threads (one pthread per connection), select and epoll (one worker: 000 \
                does not say, a loop in one thread) with 1 000 connections each sending 50 \
                bytes, waiting for the echo and pausing 100 ms (about 10 000 requests/s \
                offered), for 5 s, 5 repetitions. The mean response time of the \
                repetitions is compared (Mann-Whitney U, p < 0.05): confirmed when epoll's \
                is higher than both threads' and select's, refuted when either is \
                significantly higher than epoll's, \"no difference\" otherwise. A \
                repetition fails above 10 % errors (a busy machine times a few requests \
                out).",
        differs: "Rust servers on one two-core machine, the load generator on the same \
                machine over loopback (000 loaded the server from up to four other hosts): \
                the server is pinned to one core and the load to the other, so neither \
                waits for the other's CPU as it would not across hosts.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "while the traditional server is quickly processing these requests, it is \
                taking up a large amount of processing power over four cores. Instead, it \
                is better to see that Epoll and Select servers are pacing themselves, only \
                consuming up to 30%.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 7; Observations, Avg. Processing Power",
        setup: "C servers on four cores, measured with htop; Avg. Processing Power: \
                threads 93.25 %, select 29.5 %, epoll 12.33 %",
        test: "threads (one pthread per connection), select and epoll (one worker: 000 \
                does not say, a loop in one thread) with 1 000 connections each sending 50 \
                bytes, waiting for the echo and pausing 100 ms (about 10 000 requests/s \
                offered), for 5 s, 5 repetitions. The server's CPU (% of one core over the \
                step, from /proc) is compared over the repetitions (Mann-Whitney U, p < \
                0.05): confirmed when epoll and select each take less than threads, \
                refuted when either takes significantly more, \"no difference\" otherwise. \
                The offered load is the same for every model (a closed loop with a 100 ms \
                pause), so the CPU compares the cost of the same work. A repetition fails \
                above 10 % errors (a busy machine times a few requests out).",
        differs: "Rust servers on one two-core machine, the load generator on the same \
                machine over loopback (000 loaded the server from up to four other hosts): \
                the server is pinned to one core and the load to the other, so neither \
                waits for the other's CPU as it would not across hosts.",
        judged_from: Some(10),
        kind: Test,
    },
    Source {
        quote: "In Figure 8, it is interesting to see that Select is consuming less memory \
                than its counterparts.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 8; Observations, Memory Usage",
        setup: "C servers on 8 GB, each at its own most clients; Memory Usage: threads \
                1.825 GB, select 1.400 GB, epoll 2.651 GB",
        test: "threads (one pthread per connection), select and epoll (one worker: 000 \
                does not say, a loop in one thread) with 1 000 connections each sending 50 \
                bytes, waiting for the echo and pausing 100 ms (about 10 000 requests/s \
                offered), for 5 s, 5 repetitions. The server's peak resident memory is \
                compared over the repetitions (Mann-Whitney U, p < 0.05): confirmed when \
                select's is lower than both threads' and epoll's, refuted when either is \
                significantly lower than select's, \"no difference\" otherwise. The report \
                measured each server at its own most clients; here all three serve the \
                same 1 000 connections, within select's 1 024 descriptors. A repetition \
                fails above 10 % errors (a busy machine times a few requests out).",
        differs: "Rust servers on one two-core machine, the load generator on the same \
                machine over loopback (000 loaded the server from up to four other hosts): \
                the server is pinned to one core and the load to the other, so neither \
                waits for the other's CPU as it would not across hosts.",
        judged_from: Some(10),
        kind: Test,
    },
    Source {
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
    },
    Source {
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
                echo, for 10 s, 5 repetitions. Throughput and the mean response time are \
                compared over the repetitions (Mann-Whitney U, p < 0.05): confirmed when \
                epoll-2w has both the higher throughput and the lower mean than select, \
                refuted when select is significantly better on either, \"no difference\" \
                otherwise; the second worker's gain (epoll-2w against epoll) is listed \
                beside it. A repetition fails above 10 % errors (a busy machine times a \
                few requests out).",
        differs: "Rust servers; the load generator shares the two cores with the server \
                (001 used other machines), so two workers compete with it.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "we can very easily increase the number of worker threads if the machine \
                has more cores, thus giving the epoll server very much scalability.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion",
        setup: "an epoll server run as `./server` (002 does not name its language): a main \
                thread accepting and N worker threads, each with its own epoll queue; a \
                Core i5 4670K (four cores)",
        test: "epoll with one worker against epoll-2w with two (this machine has 2 cores), \
                1 000 connections each sending 64 bytes as fast as the echoes come back, \
                for 5 s, 5 repetitions. Throughput is compared over the repetitions \
                (Mann-Whitney U, p < 0.05): confirmed when two workers carry more than \
                one, refuted when they carry significantly less, \"no difference\" \
                otherwise. A repetition fails above 10 % errors (a busy machine times a \
                few requests out).",
        differs: "two cores, not four, and the load generator runs on the same two cores, \
                so the second worker competes with it: the gain here is a floor of the \
                gain on a machine with cores to spare.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "Increasing the number of clients further to 40000, we find that the \
                clients and server still finish successfully without any error.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 10 (and 11: 45000)",
        setup: "an epoll server run as `./server` (002 does not name its language) with a \
                main thread accepting and N worker threads; 40 000 clients from two PCs \
                (20 000 each), 45 000 in Test Case 11; each connection sends \"Gary’s \
                spamming\" 100 times",
        test: "epoll (two workers) with 40 000 and then 45 000 connections, each sending \
                \"Gary’s spamming\" 20 times and checking every echo, 3 repetitions. \
                Confirmed when every repetition of both steps finished with every \
                connection established and no error, refuted when a step failed in every \
                repetition.",
        differs: "20 messages a connection, not 100 (every connection still open at once \
                and every echo checked; 100 take about three minutes a run here, and 3 \
                repetitions of them would not fit the classic scenario's hour); one \
                machine on loopback; one process may hold 20 000 fds here, so the server \
                runs as 3 processes sharing the port (19 000 connections each at most) and \
                the load as 3 processes (18 000 each), spread over 8 source addresses as \
                002 spread it over two PCs.",
        judged_from: None,
        kind: Test,
    },
    Source {
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
        kind: Test,
    },
    Source {
        quote: "Based on the IO graphs, we also note that there are greater amounts of TCP \
                error flags due to retransmissions",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 6-11 (and Case 11-14: a delay of at least 250 ms)",
        setup: "an edge-triggered epoll server (004 does not name its language); 2 500 \
                clients, 60 requests each, request delay 1000, 500, 250, 125, 50, 10 and 1 \
                ms; retransmissions read from Wireshark IO graphs",
        test: "epoll (one worker, on one core; the load on the other core) loaded from \
                one client host, a network namespace whose link to the server's runs \
                through tbf at 9 Mbit/s each way with tbf's queue of 50 ms (about 71 KB, \
                some 360 requests with their ACKs): 1 250 clients each sending 64 bytes, \
                waiting for the echo and pausing 250 or 125 ms, and 2 500 clients at the \
                same pauses (for claim 32), measured for 2 s after a 1 s warm-up, 4 \
                repetitions. A 64-byte request is a 130-byte frame and its ACK 66 bytes, \
                so the link carries about 5 700 requests a second: 1 250 clients ask for \
                about 5 000 at 250 ms and 10 000 at 125 ms, so at 125 ms they overflow \
                its queue and at 250 ms they do not. The retransmitted segments per 1 000 \
                requests (the server host's TCP counters over the measured 2 s) of 1 250 \
                clients at 125 ms are compared with those at 250 ms (Mann-Whitney U, p < \
                0.05, and x1.05 apart at least): confirmed when there are significantly \
                more at 125 ms, refuted when there are significantly fewer, \"no \
                difference\" otherwise. A repetition fails above 10 % errors or below 95 % \
                of its connections established (behind a full queue a connection request \
                may be lost and retried past the step).",
        differs: "a link shaped to 9 Mbit/s between two network namespaces, not 004's LAN \
                (004 gives neither its link's speed nor its message size): the rate is a \
                choice, so that the link, not this machine's two shared cores (about 8 000 \
                requests a second here), is the ceiling, and 1 250 clients (half of 004's \
                2 500, which at 250 ms would ask for more than the cores give) overflow its \
                queue between 250 and 125 ms, where 004 saw its response times jump; what \
                the run measures is whether an overflowing queue brings more \
                retransmissions per request, as 004's IO graphs showed. The counters are \
                the server host's: they count the server's retransmissions (an echo lost, \
                or resent when the ACK for it was lost in the full queue), not the \
                clients' segments dropped by their own full queue, which their kernel \
                sends again later without counting a retransmission (Wireshark would not \
                see those either: they never reach the wire); 250 and 125 ms, the two \
                delays either side of 004's threshold, not 004's seven; 2 s after a 1 s \
                warm-up, not 60 requests a client; 64-byte messages.",
        judged_from: None,
        kind: Test,
    },
    Source {
        quote: "Our implementation of the epoll client-server achieved close to 20000 \
                concurrent active socket connections in one session.",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, 60 requests each, \
                1000 ms request delay; Wireshark's TCP endpoints matched the clients, with \
                \"few clients never establishing connection\" at 20 000",
        test: "epoll (one worker, on one core; the load on the other core, as 004's \
                clients ran on another host) with 2 500, 5 000, 7 500, 10 000 and 20 000 \
                clients, 60 requests of 64 bytes each, 1000 ms between an echo and the \
                next request (about 60 s a step), 1 repetition (full scale: `--repetitions \
                3`). Confirmed when every repetition of every step established every \
                connection and finished with at most 1 % errors, refuted when a step \
                failed in every repetition.",
        differs: "one machine on loopback; one process may hold 20 000 fds here, so from \
                10 000 on the server and the load are split over processes (10 000 \
                connections each) and 8 source addresses.",
        judged_from: Some(6),
        kind: Test,
    },
    Source {
        quote: "a line that is best described as a linear model for most of the clients \
                but exponentially increases as we get to the user specified client number",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-5: 2 500 to 20 000 clients, 60 requests each, 1000 ms request delay; the \
                average response time of each client plotted against the clients in one \
                session",
        test: "epoll (one worker, on one core; the load on the other core, as 004's \
                clients ran on another host) with 2 500 and 20 000 clients, 30 requests of \
                64 bytes each, 1000 ms between an echo and the next request, 4 \
                repetitions; each connection's mean response time (load's \
                connections.csv), the connections in the order they opened. At the most \
                clients that ran, the mean of the last tenth to join is compared with that \
                of the tenth before it over the repetitions (Mann-Whitney U, p < 0.05): \
                confirmed when the last tenth is significantly slower by x1.5 or more \
                (growth linear in the order gives at most about x1.12), refuted when it is \
                not slower or by less.",
        differs: "a tenth of the connections stands for \"the final clients\"; 30 \
                requests, not 60; one machine on loopback, its two cores standing for \
                004's two hosts; the 20 000 clients are split over two server and two load \
                processes (20 000 fds a process here). In classic this claim is judged \
                from claim-6's rows (the same load).",
        judged_from: Some(6),
        kind: Test,
    },
    Source {
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
    },
    Source {
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
                repetitions. A repetition's gap is how far apart the two mean response \
                times are (|ln| of epoll's over select's, the two run interleaved). At \
                each client count the gaps at the 0.1 ms pause are compared with those at \
                10 ms (Mann-Whitney U, p < 0.05): the gap closed when it shrank \
                significantly by five points of the ratio or more, widened when it grew \
                so. Confirmed when it closed at a client count and widened at none, \
                refuted when it widened at one and closed at none, \"no difference\" when \
                it did neither.",
        differs: "001 compares two cases that differ in clients too (1 024 at 10 ms, 256 at \
                0.1 ms); here the pause changes at a fixed client count, 250 and 1 000, so \
                the gap follows the frequency alone; the mean response time rather than \
                Wireshark's packets per second (as claim 4: in a closed loop with a fixed \
                pause the rate follows from the response time); 3 s a step, not 3 minutes \
                or 10 s; 13-byte messages as 001's; one machine on loopback, the server on \
                one core and the load on the other. In classic this claim is judged from \
                claim-4's rows (the same load).",
        judged_from: Some(4),
        kind: Test,
    },
    Source {
        quote: "In terms of IO over the wireshark capture, there is a 15000 packets/s \
                average limit for our server once the number of clients is at 5000.",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, 60 requests each, \
                1000 ms request delay; the packets per second of Wireshark IO graphs at \
                the server, about 15 000 from 5 000 clients on",
        test: "claim-6's load: epoll (one worker, on one core; the load on the other) \
                with 2 500, 5 000, 10 000 and 20 000 clients, 30 requests of 64 bytes \
                each, 1000 ms between an echo and the next request, 4 repetitions. The \
                TCP segments received per second over the load (the kernel's counters; \
                on loopback each segment is sent and received here, so both directions \
                count, as in a capture at the server) at the most clients that ran are \
                compared with those at 5 000 (Mann-Whitney U, p < 0.05): refuted when \
                significantly higher by x1.05 or more (the rate kept growing), confirmed \
                when lower or when the whole 95 % interval of the ratio lies within \
                x1.05 (a level shown), \"no difference\" otherwise.",
        differs: "the kernel's segment counters, not a Wireshark capture; 30 requests, not \
                60; 7 500 left out (claim-6's steps); one machine on loopback, its two \
                cores standing for 004's two hosts, the 20 000 clients split over two \
                server and two load processes (20 000 fds a process here); the counters \
                are the whole machine's, so other traffic counts too (the report says so \
                when it does). In classic this claim is judged from claim-6's rows (the \
                same load).",
        judged_from: Some(6),
        kind: Test,
    },
    Source {
        quote: "Max Requests: \"In Figure 2, the maximum requests are proportionate to the \
                number of Clients and their client spawns.\" ... \"our multi threaded \
                server outperforms. Still, it is important to see that Epoll is designed to \
                handle more requests per customer.\"",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 2; Observations, Max Requests",
        setup: "C servers on an Intel i5 quad core with 8 GB (Fedora 19); a multithreaded \
                client on up to four hosts; Max Requests, the most requests served before \
                the server or the client crashed: threads 13 547, select 2 775 (2 870 000 \
                in theory), epoll 321 410 (199 900 000 in theory); per client host, threads \
                6 870 from 3 000 clients on two hosts, select 5 000 from 1 000 and epoll 10 \
                000 from 5 000, on four",
        test: "claim-9's load: threads (one pthread per connection, 64 KiB stack), select \
                and epoll hold 1 000, 5 000 and 19 000 connections open together (3 echoes \
                of 50 bytes each, then 5 s with all of them open), 4 repetitions. A \
                repetition's figure is the requests answered at the most connections it \
                held (the requests of its heaviest step that passed); the models are \
                compared pairwise over the repetitions (Mann-Whitney U, p < 0.05, by x1.05 \
                or more): confirmed when epoll answers more than threads and threads more \
                than select, refuted when any pair goes significantly the other way, \"no \
                difference\" otherwise.",
        differs: "every connection sends 3 requests, so here the requests follow the \
                connections held by construction: the proportion the report notes is fixed \
                by the setup, and the test is of the order (which model answers the most \
                before it fails); 000 counted until a crash, here a step that fails is not \
                run again, so the figure is that of the heaviest step passed; Rust servers \
                on one two-core machine on loopback, 19 000 the most one process may be \
                asked to hold (20 000 fds a process). In classic this claim is judged from \
                claim-9's rows (the same load).",
        judged_from: Some(9),
        kind: Test,
    },
    Source {
        quote: "Epoll Server, Time at Clients 1 to 4: \"*0.000535055 s\", \"*0.000566556 \
                s\", \"*0.001023102 s\", \"*0.002662644 s\" (\"these stress tests were cut \
                short to grab data earlier; values are actually greater than specified\")",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Observations, Epoll Server",
        setup: "a C epoll server on an Intel i5 quad core with 8 GB; four client hosts, \
                each with 5 000 clients and 10 000 requests; the average time per request \
                at client hosts 1 to 4: 0.000535, 0.000567, 0.001023 and 0.002663 s, \
                rising with each host (000 does not say whether the hosts ran one after \
                another or at once; read here as the time rising as client hosts, each \
                with its clients, are added)",
        test: "epoll (one worker, pinned to CPU 0; the load on CPU 1) in the namespace lab \
                (each client host a network namespace on a bridge to the server's), 200 \
                connections from one client host and 800 from four (200 each), each \
                connection sending 50 bytes, waiting for the echo and pausing 100 ms, for \
                3 s, 5 repetitions; 800 from one host and 200 over four run beside them, \
                to tell the hosts from the load. The mean response time with four hosts \
                is compared with that with one (Mann-Whitney U, p < 0.05, by x1.05 or \
                more, each generator-bound or disturbed repetition left out in turn): \
                confirmed when higher with four, refuted when lower or when the ratio's \
                whole 95 % interval lies within x1.05 (no rise shown), \"no difference\" \
                otherwise. A repetition fails above 10 % errors (a busy machine times a \
                few requests out).",
        differs: "200 connections a host, not 5 000, and 50-byte requests every 100 ms \
                (000's load of claim 10) for 3 s, so the four steps of 5 repetitions fit \
                about two minutes of the classic hour; a Rust server pinned to one core of \
                a two-core machine, the client hosts network namespaces sharing the other \
                core, not four machines on a LAN.",
        judged_from: None,
        kind: Test,
    },
    Source {
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
    },
    Source {
        quote: "When assigning a thread for every client, the performance can rapidly \
                deteriorate the more clients connect as you can find yourself in the \
                situation that you have 1000’s of threads all doing I/O simultaneously \
                completely pinning all the cores on your machine.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion",
        setup: "a Python 2.7 thread-per-client server on a Core i5 4670K (four cores) with \
                8 GB; 10 000 and 30 000 clients passed, 35 000 failed; each connection \
                sends \"Gary’s spamming\" 100 times; 002 measured no CPU",
        test: "claim-10's load: threads (one pthread per connection), select and epoll, \
                the server pinned to CPU 0 and the load to CPU 1, 1 000 connections each \
                sending 50 bytes, waiting for the echo and pausing 100 ms (about 10 000 \
                requests/s offered), for 5 s, 5 repetitions. The threads server pins its \
                core when it takes 90 % of it or more: confirmed when it does in every \
                repetition, refuted when it stays below in every one, inconclusive when \
                the repetitions straddle 90 % (generator-bound or disturbed repetitions \
                left out when others remain). select's and epoll's CPU are listed beside \
                it.",
        differs: "1 000 connections each asking every 100 ms, not thousands sending as \
                fast as their echoes return: on a core of its own a closed loop without a \
                pause keeps any server busy, so pinning would say nothing of threads; here \
                1 000 threads doing I/O meet a fixed offered load, and \"all the cores\" is \
                the one core the server is pinned to (the load needs the other); Rust, not \
                Python 2.7. In classic this claim is judged from claim-10's rows (the same \
                load).",
        judged_from: Some(10),
        kind: Test,
    },
    Source {
        quote: "with epoll, a single thread can handle 100’s and even 1000’s of clients \
                with very little to no delay. This means that we can save a lot of CPU \
                time since we do not have to switch between threads/processes as much.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion",
        setup: "Python 2.7 thread-per-client and an epoll server run as `./server` (002 \
                does not name its language; a main thread accepting and N workers) on a \
                Core i5 4670K with 8 GB; 002 measured response times, no CPU time",
        test: "claim-10's load: threads (one pthread per connection) and epoll (one \
                worker), the server pinned to CPU 0 and the load to CPU 1, 1 000 \
                connections each sending 50 bytes, waiting for the echo and pausing 100 ms, \
                for 5 s, 5 repetitions. The server's CPU time per request answered (user \
                and system, from /proc) is compared over the repetitions (Mann-Whitney U, \
                p < 0.05, by x1.05 or more, each generator-bound or disturbed repetition \
                left out in turn): confirmed when epoll's is lower than threads', refuted \
                when it is significantly higher, \"no difference\" otherwise. The context \
                switches per request of each (perf's counters, as root) are listed beside \
                it, the reason 002 gives.",
        differs: "one epoll worker, not a main thread and N workers; 1 000 connections at a \
                fixed offered load; Rust servers on one pinned core of a two-core machine \
                over loopback. In classic this claim is judged from claim-10's rows (the \
                same load).",
        judged_from: Some(10),
        kind: Test,
    },
    Source {
        quote: "\"the variability in IO begins to increase as well along with the response \
                time\"; at 20 000 clients (Case 5), \"the variation in IO rate is \
                significant, changing as much as 50% throughout the wireshark capture\"",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5 (and Case 1-5 Results, Case 5)",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, 60 requests each, \
                1000 ms request delay; Wireshark IO graphs: \"relatively constant\" at 2 \
                500, more variation from 5 000 on, as much as 50 % at 20 000",
        test: "claim-6's load: epoll (one worker, on one core; the load on the other) with \
                2 500, 5 000, 10 000 and 20 000 clients, 30 requests of 64 bytes each, 1000 \
                ms between an echo and the next request, 4 repetitions. The variability of \
                the IO is the spread of the requests answered in each second \
                (requests_per_s_cv: their standard deviation over their mean, the first \
                two seconds and the last left out); that at the most clients measured is \
                compared with that at 2 500 (Mann-Whitney U, p < 0.05, by x1.05 or more, \
                each generator-bound or disturbed repetition left out in turn): confirmed \
                when higher, refuted when lower or when the ratio's whole 95 % interval \
                lies within x1.05 (no rise shown), \"no difference\" otherwise.",
        differs: "the load's requests per second, not Wireshark's packets per second; a \
                coefficient of variation, not the swing between the IO graph's highest \
                and lowest points (the report's 50 %); 30 requests, not 60; 7 500 left \
                out (claim-6's steps); one machine on loopback, its two cores standing for \
                004's two hosts, the 20 000 clients split over two server and two load \
                processes (20 000 fds a process here). In classic this claim is judged from \
                claim-6's rows (the same load).",
        judged_from: Some(6),
        kind: Test,
    },
    Source {
        quote: "\"we are completing the entire test in 25 seconds rather than 68 seconds\" \
                (2 500 clients, 1 ms against 1000 ms); \"our test with 1 ms delay finishes \
                the entire test just under 175 seconds rather than 220 seconds at 1000 ms \
                delay\" (10 000 clients)",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 11-14",
        setup: "an edge-triggered epoll server (004 does not name its language); 60 \
                requests a client; 2 500 clients: 68 s at a 1000 ms request delay (case \
                1), 25 s at 1 ms (case 11); 10 000 clients: 220 s at 1000 ms (case 4), \
                under 175 s at 1 ms (case 14)",
        test: "claim-8's load: epoll (one worker, on one core; the load on the other) with \
                2 500 clients each sending 64 bytes, waiting for the echo and pausing 1000, \
                500, 250, 125, 50, 10 or 1 ms, 6 s a step, 5 repetitions. A step's total \
                test time is the time 60 requests a client take at the rate it measured \
                (2 500 x 60 / requests per second); that at 1 ms is compared with that at \
                1000 ms (Mann-Whitney U, p < 0.05, by x1.05 or more): the shorter delay \
                finishing sooner is what 004 saw.",
        differs: "claim-8's steps run 6 s each, so the total time of 60 requests a client \
                is derived from the rate measured, not timed; 2 500 clients only \
                (claim-8's), so 004's 10 000-client pair (cases 4 and 14) is not run; one \
                machine on loopback, its two cores standing for 004's two hosts. In \
                classic this claim is judged from claim-8's rows (the same load).",
        judged_from: Some(8),
        kind: Demonstration("the setup fixes the outcome: 60 requests 1000 ms apart take at least 59 s whatever the server, while at 1 ms the total is set by the server's rate alone, so 1 ms finishes sooner unless the server answers fewer than about 2 540 requests/s (150 000 in 59 s), far below what a server answers on one core here (the rates are listed)"),
    },
    Source {
        quote: "\"Case 11-14 mirrors case 1-4, but this time we set the requests delay to 1 \
                ms.\" ... \"higher average request response time\"; \"Just note that the \
                average time for request/response will be longer\"",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 11-14 (Case 12-14 Results)",
        setup: "an edge-triggered epoll server (004 does not name its language); cases 11 \
                to 14: 2 500, 5 000, 7 500 and 10 000 clients, 60 requests each, 1 ms \
                request delay, against cases 1-4 at 1000 ms; 004 gives no figure for the \
                response time of cases 12-14, only a plot, and compares 2 500 clients \
                (case 11 against case 1)",
        test: "claim-8's load: epoll (one worker, on one core; the load on the other) with \
                2 500 clients each sending 64 bytes, waiting for the echo and pausing 1000, \
                500, 250, 125, 50, 10 or 1 ms, 6 s a step, 5 repetitions. The mean \
                response time at the shortest delay (1 ms) is compared with that at the \
                longest (1000 ms) over the repetitions (Mann-Whitney U, p < 0.05, by x1.05 \
                or more, each generator-bound or disturbed repetition left out in turn): \
                confirmed when higher at 1 ms, refuted when lower or when the ratio's \
                whole 95 % interval lies within x1.05 (no rise shown), \"no difference\" \
                otherwise.",
        differs: "2 500 clients only (claim-8's steps; cases 12-14's 5 000 to 10 000 \
                clients at 1 ms are not run, to keep classic within its hour); each step \
                runs 6 s, not 60 requests; one machine on loopback, its two cores standing \
                for 004's two hosts. In classic this claim is judged from claim-8's rows \
                (the same load).",
        judged_from: Some(8),
        kind: Test,
    },
    Source {
        quote: "\"relatively constant with little TCP error flags\" (2 500 clients); \
                \"noticeably more variation in IO rate with more TCP error flags\" (5 000, \
                7 500 and 10 000 clients); \"the numerous amounts of TCP retransmissions\" \
                (7 500)",
        file: "004_4a07aa620c3379ed.txt",
        section: "Case 1-5 Results, Test Cases 1-4",
        setup: "an edge-triggered epoll server (004 does not name its language); cases \
                1-4: 2 500, 5 000, 7 500 and 10 000 clients, 60 requests each, 1000 ms \
                request delay; TCP error flags and retransmissions read from Wireshark IO \
                graphs, the IO rate at about 15 000 packets/s from 5 000 clients on",
        test: "claim-18's link and load: epoll (one worker, on one core; the load on the \
                other) loaded from one client host whose link runs through tbf at 9 Mbit/s \
                each way (about 5 700 requests a second, a queue of 50 ms), 1 250 and 2 500 \
                clients each sending 64 bytes, waiting for the echo and pausing 250 ms, \
                measured for 2 s after a 1 s warm-up, 4 repetitions. The retransmitted \
                segments per 1 000 requests (the server host's TCP counters) at the most \
                clients are compared with those at the fewest, at the longest pause that \
                ran (Mann-Whitney U, p < 0.05, and x1.05 apart at least): confirmed when \
                there are significantly more with more clients, refuted when there are \
                significantly fewer, \"no difference\" otherwise.",
        differs: "1 250 and 2 500 clients at a 250 ms pause, not 2 500 to 10 000 at 1000 \
                ms (a choice: one scenario judges claims 18 and 32, and on its link 1 250 \
                clients at 250 ms stay below the link's rate while 2 500 ask for nearly \
                twice it, as 004's 5 000 clients met its ceiling of about 15 000 packets/s \
                and 2 500 did not); the link's rate is echolab's choice (004 gives none); \
                TCP retransmissions only, not all of Wireshark's error flags, and the \
                server's alone (claim 18 says why); 2 s after a 1 s warm-up, not 60 \
                requests; 64-byte messages. In classic this claim is judged from \
                claim-18's rows (the same load).",
        judged_from: Some(18),
        kind: Test,
    },
];
