//! The claims of report 000 (000_14b4c3a438bf57e1.txt), each as claim N of [`super::CLAIMS`].

use super::Kind::{Demonstration, Test};
use super::Source;

pub const CLAIM_9: Source = Source {
    quote: "our hypothesis is that multi threaded servers will be the least scalable, \
            with Epoll servers being the most and followed by Select servers being \
            second.",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Background (hypothesis); Observations, Max Clients; Conclusion",
    setup: "C servers on an Intel i5 quad core with 8 GB (Fedora 19); a multithreaded \
            client on up to four hosts; Max Clients before the server or client \
            crashed: threads 1 782, select 574, epoll 19 990+",
    test: "threads (one pthread per connection, 64 KiB stack), select and epoll hold 1 \
            000, 19 000 and 35 000 connections open together (3 echoes of 50 bytes \
            each, then 3 s with all of them open), threads and epoll as processes of at \
            most 19 000 connections sharing the port, 4 repetitions. A repetition's scale \
            is the most connections it held; the models are compared pairwise over the \
            repetitions (Mann-Whitney U, p < 0.05): confirmed when epoll holds more \
            than select and select more than threads, refuted when any pair goes \
            significantly the other way, \"no difference\" otherwise. It judges the \
            hypothesis as 000's Background states it, which 000's own Conclusion \
            found \"true to an extent\": epoll the most scalable, and select above \
            threads \"proven to be a false case\". A refutation by threads holding \
            more than select is what 000 itself concluded, not a finding against it.",
    differs: "Rust servers on one two-core machine on loopback; one process may hold \
            20 000 fds here, so threads and epoll run as processes of at most 19 000 \
            connections sharing the port (select as one: it cannot watch an fd at or \
            above 1 024), and threads meet the machine's thread limit \
            (kernel.threads-max and pid_max, 32 768, the whole machine's) below 35 \
            000 rather than a crash; 4 repetitions are the fewest \
            that can reach p < 0.05. A step that fails once is not run again (the \
            runner skips its other repetitions and the heavier steps), so a model's \
            scale is the same in every repetition: the p-value says the order held in \
            every repetition run, and each model's first failure is listed with its \
            reason.",
    judged_from: None,
    kind: Demonstration("the setup fixes the outcome: confirming needs select to hold more connections than threads, but select here closes every fd at or above FD_SETSIZE (1 024) while the threads server (64 KiB stacks, processes of 19 000 connections) holds every step up to 19 000 and meets the machine's thread limit (32 768) at 35 000, so select cannot come second and the hypothesis can only be refuted, as 000 itself concluded (\"proven to be a false case\": its select held 574 clients, threads 1 782); the run shows where each model stops"),
};

pub const CLAIM_10: Source = Source {
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
};

pub const CLAIM_11: Source = Source {
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
};

pub const CLAIM_12: Source = Source {
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
};

pub const CLAIM_24: Source = Source {
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
            and epoll hold 1 000, 19 000 and 35 000 connections open together (3 echoes \
            of 50 bytes each, then 3 s with all of them open), threads and epoll as \
            processes of at most 19 000 connections sharing the port (one process may \
            hold 20 000 fds here), so the most each holds is its own limit, not one \
            process's fds: threads meet the machine's thread limit (32 768) before 35 \
            000, epoll none, select FD_SETSIZE (1 024); 4 repetitions. A \
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
            on one two-core machine on loopback, threads and epoll split over processes \
            of 19 000 connections (20 000 fds a process); with a thread limit above 35 \
            000 threads would hold every step, as epoll does, and the two would tie. \
            In classic this claim is judged from \
            claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_25: Source = Source {
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
};

pub const CLAIM_33: Source = Source {
    quote: "Clients 3 and 4 were omitted in this test because their inclusion would result \
            in a quick crash of the server.",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Observations, Multi Threaded Server",
    setup: "a C thread-per-client server on an Intel i5 quad core with 8 GB; client hosts \
            1 and 2 with 3 000 clients each (Max Clients 3 000, Max Req's 6 870 each); \
            hosts 3 and 4 left out, their 3 000 clients each expected to crash it",
    test: "claim-9's load: threads (one pthread per connection, 64 KiB stack) holds 1 \
            000, 5 000 and 19 000 connections open together (3 echoes of 50 bytes each, \
            then 5 s with all of them open), 4 repetitions. Four client hosts of 3 000 \
            are 12 000 connections: confirmed when threads failed at a step of at most \
            12 000 and held none of 12 000 or more, refuted when every repetition held a \
            step of 12 000 or more, inconclusive otherwise (a failure only above 12 000 \
            after holding less, or repetitions that disagree).",
    differs: "one load generator on loopback, not four client hosts; 19 000 (the most \
            one process may be asked to hold here, 20 000 fds a process) stands above \
            the 12 000 of four hosts, 5 000 below it, so 12 000 itself is not a step; a \
            step that fails once is not run again. In classic this claim is judged from \
            claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_34: Source = Source {
    quote: "Our Select server is able to sustain at least 1000+ connections.",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Limitations (Observations, Select Server: 1 000 clients at each of four hosts)",
    setup: "a C select server on an Intel i5 quad core with 8 GB, its file descriptors \
            mishandled by its own code (000 says so); Max Clients 574 in the summary \
            table, 1 000 at each client host in the select table",
    test: "claim-9's load: select holds 1 000, 5 000 and 19 000 connections open \
            together (3 echoes of 50 bytes each, then 5 s with all of them open), 4 \
            repetitions. Confirmed when every repetition held a step of 1 000 \
            connections or more, refuted when select failed at a step of at most 1 000 \
            and held none of 1 000 or more, inconclusive otherwise.",
    differs: "a Rust select server that refuses descriptors at or above FD_SETSIZE (1 \
            024), so 1 000 is near the most it can hold; one machine on loopback. In \
            classic this claim is judged from claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_35: Source = Source {
    quote: "the case where we assumed that Select was more functional than the \
            traditional multi threaded server is proven to be a false case",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Conclusion (Observations, Max Clients)",
    setup: "C servers on an Intel i5 quad core with 8 GB; Max Clients before the server \
            or client crashed: threads 1 782, select 574 (000 blames its select code, \
            Limitations)",
    test: "claim-9's load: threads and select hold 1 000, 5 000 and 19 000 connections \
            open together (3 echoes of 50 bytes each, then 5 s with all of them open), 4 \
            repetitions. A repetition's figure is the most connections it held; threads \
            against select over the repetitions (Mann-Whitney U, p < 0.05, by x1.05 or \
            more): confirmed when threads held significantly more, refuted when select \
            did, \"no difference\" otherwise.",
    differs: "the most connections held stands for \"more functional\" (000's Max \
            Clients, the figure it read); Rust servers, one machine on loopback, 19 000 \
            the most one process may be asked to hold. In classic this claim is judged \
            from claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_36: Source = Source {
    quote: "\"only Epoll was able to service all four clients without either crashing or \
            being compromised\"; \"only the Epoll server was able to satisfy the maximum \
            amount of requests and clients at run time versus the other two, which \
            ended up crashing\"",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Conclusion, Figures 1, 4 and 5",
    setup: "C servers on an Intel i5 quad core with 8 GB; four client hosts, 5 000 \
            clients each for epoll (19 990+ in all); threads crashed past two hosts of 3 \
            000, select failed",
    test: "claim-9's load: threads, select and epoll hold 1 000, 5 000 and 19 000 \
            connections open together (3 echoes of 50 bytes each, then 5 s with all of \
            them open), 4 repetitions; the most connections of the run (19 000) stand \
            for four hosts' clients. Confirmed when epoll held them in every repetition \
            and threads and select held them in none, refuted when threads or select \
            held them in a repetition or epoll in none, inconclusive otherwise.",
    differs: "19 000 connections from one load generator on loopback, not 4 x 5 000 \
            from four hosts (one process may hold 20 000 fds here); Rust servers. In \
            classic this claim is judged from claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_47: Source = Source {
    quote: "Since these requests are small in size, it is consistent that multi threaded \
            servers are servicing faster, but albeit less.",
    file: "000_14b4c3a438bf57e1.txt",
    section: "Conclusion, Figure 6",
    setup: "C servers, client strings of 5 to 50 characters, many requests per client \
            thread; Avg. Time to Process: threads 0.00036335 s, epoll 0.001196839 s; no \
            larger request was tried",
    test: "threads (one pthread per connection) and epoll (one worker) with 1 000 \
            connections each sending a message, waiting for the echo and pausing 100 \
            ms, for 5 s, at 000's 50 bytes and at 64 KiB (a size sweep), 4 repetitions \
            (the fewest that can reach p < 0.05). At each size the mean response time \
            of the repetitions is compared (Mann-Whitney U, p < 0.05, by x1.05 or \
            more): confirmed when threads is faster at 50 bytes and not at 64 KiB (the \
            order depends on the size, as \"since these requests are small\" says), \
            refuted when threads is slower at 50 bytes or faster at both sizes (the \
            size does not decide it), \"no difference\" when neither is faster at 50 \
            bytes.",
    differs: "Rust servers on one two-core machine, the load on loopback from the same \
            machine, the server pinned to one core and the load to the other (claim \
            10's setup); 64 KiB is a choice (000 tried no large request): big enough \
            that copying the message, not waking a thread, dominates a request.",
    judged_from: None,
    kind: Test,
};
