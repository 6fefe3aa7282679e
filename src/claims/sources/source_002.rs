//! The claims of report 002 (002_87dc33d9ed75de88.txt), each as claim N of [`super::CLAIMS`].

use super::Kind::{Demonstration, Test};
use super::Source;

pub const CLAIM_1: Source = Source {
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
    kind: Demonstration("the setup fixes the outcome: echolab's select server closes every connection whose fd is FD_SETSIZE (1 024) or more, since an fd_set has 1 024 bits, so it holds 900 and 1 000 connections and fails at 1 100 and 2 000 by construction whatever the machine; the run shows the limit the report hit (and epoll holding the same steps), it does not test it"),
};

pub const CLAIM_2: Source = Source {
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
};

pub const CLAIM_3: Source = Source {
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
};

pub const CLAIM_15: Source = Source {
    quote: "we can very easily increase the number of worker threads if the machine \
            has more cores, thus giving the epoll server very much scalability.",
    file: "002_87dc33d9ed75de88.txt",
    section: "Conclusion",
    setup: "an epoll server run as `./server` (002 does not name its language): a main \
            thread accepting and N worker threads, each with its own epoll queue; a \
            Core i5 4670K (four cores)",
    test: "epoll with one worker against epoll-2w with two (this machine has 2 cores), \
            1 000 connections each sending 64 bytes as fast as the echoes come back, \
            for 5 s, 5 repetitions; each read costs the server 200 µs of CPU \
            (work_us), so the server, not the load, needs the cores and the second \
            worker has most of a core of its own: the claim's condition, a machine \
            with a core for each worker. Throughput is compared over the repetitions \
            (Mann-Whitney U, p < 0.05): confirmed when two workers carry more than \
            one, refuted when they carry significantly less, \"no difference\" \
            otherwise. A repetition fails above 10 % errors (a busy machine times a \
            few requests out).",
    differs: "two cores, not four, and the load generator runs on the same two cores; \
            200 µs of CPU on each read, which 002's echo server did not spend (a \
            choice, for the condition: without it an echo costs the server about what \
            it costs the load, and the second worker would compete with the load for \
            its core; with it the load needs a few per cent of a core), so the gain is \
            that of a CPU-bound server given a second core, the most two workers can \
            show here.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_16: Source = Source {
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
};

pub const CLAIM_27: Source = Source {
    quote: "When assigning a thread for every client, the performance can rapidly \
            deteriorate the more clients connect as you can find yourself in the \
            situation that you have 1000’s of threads all doing I/O simultaneously \
            completely pinning all the cores on your machine.",
    file: "002_87dc33d9ed75de88.txt",
    section: "Conclusion",
    setup: "a Python 2.7 thread-per-client server on a Core i5 4670K (four cores) with \
            8 GB; 10 000 and 30 000 clients passed, 35 000 failed; each connection \
            sends \"Gary’s spamming\" 100 times; 002 measured no CPU",
    test: "threads (one pthread per connection) and epoll (one worker), the server \
            pinned to CPU 0 and the load to CPU 1, 1 000 connections each sending 50 \
            bytes, waiting for the echo and pausing 30 ms (up to about 33 000 requests/s \
            offered: the rate at which threads would pin their core, costing about 37 µs \
            of CPU a request here, while epoll, about 20 µs, would not), for 3 s, 5 \
            repetitions. The threads server pins its core when it takes 90 % of it or \
            more: confirmed when it does in every repetition and epoll, at the same \
            rate, in none (the threads pin it, not the rate), refuted when threads stays \
            below 90 % in every repetition, inconclusive when the repetitions straddle \
            90 % or the rate pins epoll too (generator-bound or disturbed repetitions \
            left out when others remain). Each model's throughput is listed beside it.",
    differs: "1 000 connections each asking every 30 ms, not thousands sending as fast \
            as their echoes return: on a core of its own a closed loop without a pause \
            keeps any server busy, so pinning would say nothing of threads; here 1 000 \
            threads doing I/O meet an offered rate an event loop serves with a third of \
            its core to spare, and \"all the cores\" is the one core the server is \
            pinned to (the load needs the other); Rust, not Python 2.7.",
    judged_from: None,
    kind: Test,
};

pub const CLAIM_28: Source = Source {
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
};

pub const CLAIM_37: Source = Source {
    quote: "When assigning a thread for every client, the performance can rapidly \
            deteriorate the more clients connect",
    file: "002_87dc33d9ed75de88.txt",
    section: "Conclusion",
    setup: "a Python 2.7 thread-per-client server on a Core i5 4670K with 8 GB; 1, 10 \
            000 and 30 000 clients passed, 35 000 failed; each connection sends \
            \"Gary’s spamming\" 100 times; average response times per test case in a \
            figure",
    test: "claim-9's load: threads (one pthread per connection, 64 KiB stack) holds 1 \
            000, 5 000 and 19 000 connections open together (3 echoes of 50 bytes each, \
            then 5 s with all of them open), 4 repetitions. The mean response time at \
            the most connections threads held is compared with that at the fewest \
            (Mann-Whitney U, p < 0.05, by x1.05 or more, each generator-bound or \
            disturbed repetition left out in turn): confirmed when higher, refuted when \
            lower or when the ratio's whole 95 % interval lies within x1.05, \"no \
            difference\" otherwise.",
    differs: "the mean response time of 3 echoes a connection stands for \
            \"performance\" (002's figure); Rust, not Python 2.7; one machine on \
            loopback, 19 000 the most one process may be asked to hold. In classic \
            this claim is judged from claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};

pub const CLAIM_38: Source = Source {
    quote: "\"Nginx performance drops much slower as there are more concurrent \
            connections\"; \"These findings are in line with what we have noticed \
            through our tests\"",
    file: "002_87dc33d9ed75de88.txt",
    section: "Conclusion",
    setup: "Python 2.7 thread-per-client and an epoll server run as `./server` on a \
            Core i5 4670K with 8 GB, 1 to 100 000 clients; 002 reads Nginx \
            (event-driven) against Apache (a thread per client) as its own threads \
            against epoll",
    test: "claim-9's load: threads and epoll (one worker) hold 1 000, 5 000 and 19 000 \
            connections open together (3 echoes of 50 bytes each, then 5 s with all of \
            them open), 4 repetitions. A repetition's growth is its mean response time \
            at the most connections both models held over that at the fewest; threads' \
            growth against epoll's over the repetitions (Mann-Whitney U, p < 0.05, by \
            x1.05 or more): confirmed when threads' grew significantly more, refuted \
            when epoll's did, \"no difference\" otherwise.",
    differs: "the growth of the mean response time stands for the performance \
            \"drops\"; one epoll worker, not a main thread and N workers; Rust servers \
            on one machine over loopback. In classic this claim is judged from \
            claim-9's rows (the same load).",
    judged_from: Some(9),
    kind: Test,
};
