//! The Claims section: each claim of the classic studies judged from the rows of
//! the scenario that tests it (`claim-1` .. `claim-21`). One pure function per
//! claim turns rows into the claim, its numbers with their spread over the
//! repetitions, and a verdict with its reason; section() lays them out.

use super::data::{Record, Status};
use super::document::{Block, Section, Table};
use crate::results::column;

mod capacity;
mod claim_charts;
mod compared;
mod speed;
#[cfg(test)]
mod tests;

use capacity::{claim_1, claim_16, claim_19, claim_2, claim_3, claim_7};
use compared::{
    claim_10, claim_11, claim_12, claim_13, claim_14, claim_15, claim_17, claim_18, claim_20,
    claim_21, claim_9,
};
use speed::{claim_4, claim_5, claim_6, claim_8};

/// A claim as its report made it: its words (a short quote), where (file and
/// section in shared/seeds) and the setup it was made with.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    pub quote: &'static str,
    pub file: &'static str,
    pub section: &'static str,
    pub setup: &'static str,
}

/// The claims in the order the classic studies make them; claim N is tested by the
/// built-in scenario `claim-N`. Claims 1 to 5 are the studies' common conclusions;
/// 2, 6, 7 and 8 quote the report that made them; 9 to 21 are the reports' other
/// conclusions, observations and hypotheses, in the order of the reports.
pub const CLAIMS: [Source; 21] = [
    Source {
        quote: "With select, it seems that we hit a physical limitation of FD_SETSIZE",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion; Test Case 3",
        setup: "Python 2.7 select server; 1 000 clients passed (Test Case 2), 2 000 failed \
                (Test Case 3), 100 messages each",
    },
    Source {
        quote: "we see that the server has exhausted the number of threads it is able to \
                spawn to handle the incoming connections",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 7 (30 000 passed in Test Case 6)",
        setup: "Python 2.7 thread-per-client server on a Core i5 4670K with 8 GB; 30 000 \
                clients passed (two PCs, 15 000 each), 35 000 failed; 100 messages each",
    },
    Source {
        quote: "Using four client computers with 25000 connections each, the epoll server was \
                able to successfully process all connections without any errors.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 12",
        setup: "C epoll server with N worker threads; four client computers with 25 000 \
                connections each",
    },
    Source {
        quote: "Select is useful when implementing a server that handles moderate amounts, \
                long live connection with frequent request.",
        file: "001_847778bf516bd6a1.txt",
        section: "Conclusion",
        setup: "C select (level-triggered) and epoll (edge-triggered) servers; test-a: a \
                fixed set of clients held with frequent requests (cases 2 and 3)",
    },
    Source {
        quote: "Epoll is useful when implementing a server that deals with massive number of \
                short live connections in a short period of time.",
        file: "001_847778bf516bd6a1.txt",
        section: "Conclusion; Analysis, case 5",
        setup: "C select and epoll servers; test-b: clients spawned indefinitely, each \
                closing after one reply (case 5: select 0.673 ms, epoll 0.403 ms)",
    },
    Source {
        quote: "as we double the number of concurrent clients, we approximately double the \
                average response time for each client as well",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5",
        setup: "C epoll server; cases 1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, \
                60 requests each, 1000 ms request delay",
    },
    Source {
        quote: "1 MiB at 10,000 connections: threads \"was automatically terminated by the \
                system\"; select \"Could not complete tests\"; epoll \"was not able to support \
                this test. It starts to terminate connections near the 30 second mark\"",
        file: "003_b6672a133222eae0.txt",
        section: "1 Megabyte Transfer (Multi-threaded, Select, Epoll)",
        setup: "Node.js servers on a 700 MHz single-core, 256 MB server with a 100 Mbit port \
                behind a gigabit switch; 10 000 connections transferring 1 MiB continuously \
                for 30 s",
    },
    Source {
        quote: "The fastest response times (~30ms) are seen when we have a request delay \
                above 125 ms. As soon as we breach 125 ms and lower, the response times take \
                about 10x longer (~300-400ms).",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 6-11",
        setup: "C epoll server; cases 1 and 6-11: 2 500 clients, 60 requests each, request \
                delay 1000, 500, 250, 125, 50, 10 and 1 ms",
    },
    Source {
        quote: "our hypothesis is that multi threaded servers will be the least scalable, \
                with Epoll servers being the most and followed by Select servers being second.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Background (hypothesis); Observations, Max Clients",
        setup: "C servers on an Intel i5 quad core with 8 GB (Fedora 19); a multithreaded \
                client on up to four hosts; Max Clients before the server or client crashed: \
                threads 1 782, select 574, epoll 19 990+",
    },
    Source {
        quote: "In Figure 6, it is apparent that Epoll server takes a longer time to process \
                these requests.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 6; Observations, Avg. Time to Process",
        setup: "C servers, client strings of 5 to 50 characters, many requests per client \
                thread; Avg. Time to Process: threads 0.00036335 s, select 0.0004602 s, epoll \
                0.001196839 s",
    },
    Source {
        quote: "while the traditional server is quickly processing these requests, it is \
                taking up a large amount of processing power over four cores. Instead, it is \
                better to see that Epoll and Select servers are pacing themselves, only \
                consuming up to 30%.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 7; Observations, Avg. Processing Power",
        setup: "C servers on four cores, measured with htop; Avg. Processing Power: threads \
                93.25 %, select 29.5 %, epoll 12.33 %",
    },
    Source {
        quote: "In Figure 8, it is interesting to see that Select is consuming less memory \
                than its counterparts.",
        file: "000_14b4c3a438bf57e1.txt",
        section: "Conclusion, Figure 8; Observations, Memory Usage",
        setup: "C servers on 8 GB, each at its own most clients; Memory Usage: threads \
                1.825 GB, select 1.400 GB, epoll 2.651 GB",
    },
    Source {
        quote: "The response time for the select server is roughly 9 sec in total (average of \
                0.009 sec per request), the epoll is roughly 15 sec (average of 0.015 sec per \
                request).",
        file: "001_847778bf516bd6a1.txt",
        section: "Analysis, Case4 (Test cases & results, Case 4)",
        setup: "C select (level-triggered) and epoll (edge-triggered) servers; test-b: 300 \
                clients spawned 0.01 s apart, 1000 requests of 13 bytes each, 1 ms between \
                requests; average response time select 0.009119 s, epoll 0.015214 s",
    },
    Source {
        quote: "So if the epoll scale out the blocking operation, it is possible that the \
                epoll server will yield better performance than select server on all aspects.",
        file: "001_847778bf516bd6a1.txt",
        section: "Conclusion",
        setup: "a hypothesis from case 3 (test-a: 256 clients spawned 0.02 s apart, 0.1 ms \
                between requests, about 10 s): select 115 000 packets/s, epoll 109 000, \
                neither server scaling out its reads",
    },
    Source {
        quote: "we can very easily increase the number of worker threads if the machine has \
                more cores, thus giving the epoll server very much scalability.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Conclusion",
        setup: "C epoll server: a main thread accepting and N worker threads, each with its \
                own epoll queue; a Core i5 4670K (four cores)",
    },
    Source {
        quote: "Increasing the number of clients further to 40000, we find that the clients \
                and server still finish successfully without any error.",
        file: "002_87dc33d9ed75de88.txt",
        section: "Test Case 10 (and 11: 45000)",
        setup: "C epoll server with N worker threads; 40 000 clients from two PCs (20 000 \
                each), 45 000 in Test Case 11; each connection sends \"Gary’s spamming\" 100 \
                times",
    },
    Source {
        quote: "Even with an increased number of connections, the speed is noticeably limited.",
        file: "003_b6672a133222eae0.txt",
        section: "Epoll, Continuous Transfer (1KB)",
        setup: "Node.js server on a 700 MHz single-core, 256 MB server with a 100 Mbit port \
                behind a gigabit switch; an increase of 1 000 connections every 5 s, each \
                transferring 1 KiB continuously, stopped at 80 000; about 3.0 MB/s up and down \
                at most",
    },
    Source {
        quote: "Based on the IO graphs, we also note that there are greater amounts of TCP \
                error flags due to retransmissions",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 6-11 (and Case 11-14: a delay of at least 250 ms)",
        setup: "C epoll server; 2 500 clients, 60 requests each, request delay 1000, 500, \
                250, 125, 50, 10 and 1 ms; retransmissions read from Wireshark IO graphs",
    },
    Source {
        quote: "Our implementation of the epoll client-server achieved close to 20000 \
                concurrent active socket connections in one session.",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis, Case 1-5",
        setup: "C epoll server; cases 1-5: 2 500, 5 000, 7 500, 10 000 and 20 000 clients, \
                60 requests each, 1000 ms request delay; Wireshark's TCP endpoints matched \
                the clients, with \"few clients never establishing connection\" at 20 000",
    },
    Source {
        quote: "a line that is best described as a linear model for most of the clients but \
                exponentially increases as we get to the user specified client number",
        file: "004_4a07aa620c3379ed.txt",
        section: "Analysis",
        setup: "C epoll server; cases 1-5: 2 500 to 20 000 clients, 60 requests each, 1000 ms \
                request delay; the average response time of each client plotted against the \
                clients in one session",
    },
    Source {
        quote: "One thing to note is that the incoming requests for the select server are \
                comparably consistent than the epoll server.",
        file: "001_847778bf516bd6a1.txt",
        section: "Analysis, Case2",
        setup: "C select and epoll servers; test-a case 2: 1 024 clients (6 spawn cycles of \
                256, 0.02 s apart), a request every 10 ms, held about 3 minutes; Wireshark IO \
                graphs: select about 6 500 packets/s, epoll about 6 000",
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimVerdict {
    Confirmed,
    Refuted,
    /// "A beats B" compared with enough repetitions, and p >= ALPHA.
    NoDifference,
    Inconclusive,
    NotRun,
}

impl ClaimVerdict {
    pub fn name(self) -> &'static str {
        match self {
            ClaimVerdict::Confirmed => "confirmed",
            ClaimVerdict::Refuted => "refuted",
            ClaimVerdict::NoDifference => "no difference",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::NotRun => "not run",
        }
    }
}

/// One claim judged.
#[derive(Debug, Clone)]
pub struct Claim {
    /// 1 to 21.
    pub number: usize,
    pub numbers: Vec<String>,
    pub verdict: ClaimVerdict,
    pub why: String,
    /// The figures the claim rests on, charted per step (claims 18 and 20).
    pub charts: Vec<claim_charts::ClaimChart>,
}

impl Claim {
    /// The claim in its report's words, with the file and section.
    pub fn text(&self) -> String {
        let c = &CLAIMS[self.number - 1];
        format!("“{}” ({}, {})", c.quote, c.file, c.section)
    }

    /// The setup the report made the claim with.
    pub fn setup(&self) -> &'static str {
        CLAIMS[self.number - 1].setup
    }

    /// A claim whose scenario did not run (or left no row that ran).
    pub fn not_run(number: usize, reason: impl Into<String>) -> Claim {
        Claim {
            number,
            numbers: Vec::new(),
            charts: Vec::new(),
            verdict: ClaimVerdict::NotRun,
            why: reason.into(),
        }
    }
}

/// MachineLimits of the machine the verdict of claim 2 compares with (from the manifest).
#[derive(Debug, Clone, Copy, Default)]
pub struct MachineLimits {
    /// The smaller of kernel.threads-max and kernel.pid_max.
    pub threads: Option<u64>,
    /// The per-process fd hard limit.
    pub fds: Option<u64>,
}

/// The number of the claim a scenario tests (`claim-4` -> 4).
pub fn claim_of(scenario: &str) -> Option<usize> {
    let n: usize = scenario.strip_prefix("claim-")?.parse().ok()?;
    (1..=CLAIMS.len()).contains(&n).then_some(n)
}

/// Claims that another claim's rows answer (the same load over the same steps, or a
/// superset of them): `classic` runs one part for them. 004's 20 000 clients are claim
/// 6's top step, 004's retransmissions are counted on claim 8's delay sweep (each step
/// in its own namespace), and 000's three figures come from one load.
const ALSO_JUDGED: [(usize, &[usize]); 3] = [(6, &[19, 20]), (8, &[18]), (10, &[11, 12])];

/// The claims a scenario's rows judge: its own, then those [`ALSO_JUDGED`] from it
/// (`claim-6` -> 6 and 19); none for a scenario that is not a claim's.
pub fn claims_of(scenario: &str) -> Vec<usize> {
    let Some(own) = claim_of(scenario) else {
        return Vec::new();
    };
    let also = ALSO_JUDGED.iter().find(|(n, _)| *n == own);
    std::iter::once(own)
        .chain(also.into_iter().flat_map(|(_, more)| more.iter().copied()))
        .collect()
}

/// Judges claim `number` from its scenario's rows.
pub fn judge(number: usize, rows: &[Record], limits: MachineLimits) -> Claim {
    // A repetition stopped by this machine's own limits says nothing of the claim.
    let (stopped, rows): (Vec<Record>, Vec<Record>) = rows
        .iter()
        .cloned()
        .partition(|r| r.status == Status::Failed && machine_limit(&r.failure_reason));
    let rows = rows.as_slice();
    if let Some(reason) = nothing_ran(rows) {
        let reason = stopped.first().map_or(reason, |r| {
            format!("this machine's limits stopped it: {}", r.failure_reason)
        });
        return Claim::not_run(number, reason);
    }
    let (verdict, why, numbers) = match number {
        1 => claim_1(rows),
        2 => claim_2(rows, limits),
        3 => claim_3(rows),
        4 => claim_4(rows),
        5 => claim_5(rows),
        6 => claim_6(rows),
        7 => claim_7(rows),
        8 => claim_8(rows),
        9 => claim_9(rows),
        10 => claim_10(rows),
        11 => claim_11(rows),
        12 => claim_12(rows),
        13 => claim_13(rows),
        14 => claim_14(rows),
        15 => claim_15(rows),
        16 => claim_16(rows),
        17 => claim_17(rows),
        18 => claim_18(rows),
        19 => claim_19(rows),
        20 => claim_20(rows),
        _ => claim_21(rows),
    };
    Claim {
        number,
        numbers,
        verdict,
        why,
        charts: claim_charts::blocks(number, rows),
    }
}

/// Whether a failure reason is this machine's limit on the load generator (its fd
/// limit, its local ports) rather than something the server did.
fn machine_limit(reason: &str) -> bool {
    ["RLIMIT_NOFILE", "local ports", "ephemeral ports"]
        .iter()
        .any(|w| reason.contains(w))
}

type Judged = (ClaimVerdict, String, Vec<String>);

/// Why no row of a claim ran (no rows, or every one not run or interrupted).
fn nothing_ran(rows: &[Record]) -> Option<String> {
    if rows
        .iter()
        .any(|r| matches!(r.status, Status::Ok | Status::Failed))
    {
        return None;
    }
    Some(
        rows.iter()
            .map(|r| r.failure_reason.as_str())
            .find(|reason| !reason.is_empty())
            .map_or("no step of its scenario ran".to_string(), |r| r.to_string()),
    )
}

/// Median, minimum and maximum of some values.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
    n: usize,
}

fn spread(mut values: Vec<f64>) -> Option<Spread> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: values[0],
        max: values[n - 1],
        n,
    })
}

impl Spread {
    fn show(&self, fmt: fn(f64) -> String) -> String {
        format!(
            "median {} ({}–{}, {} rep{})",
            fmt(self.median),
            fmt(self.min),
            fmt(self.max),
            self.n,
            if self.n == 1 { "" } else { "s" }
        )
    }
}

fn ran(r: &Record) -> bool {
    matches!(r.status, Status::Ok | Status::Failed)
}

fn num(r: &Record, c: &str) -> f64 {
    r.num(c).unwrap_or(0.0)
}

/// The distinct values of `c` among `rows`, ascending.
fn values_of<'a>(rows: impl Iterator<Item = &'a Record>, c: &str) -> Vec<f64> {
    let mut v: Vec<f64> = rows.map(|r| num(r, c)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The ok values of `c` for `model` where `at` holds, one per repetition.
fn samples(rows: &[Record], model: &str, at: impl Fn(&Record) -> bool, c: &str) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.model == model && r.status == Status::Ok && at(r))
        .filter_map(|r| r.num(c))
        .collect()
}

/// `column` over the ok repetitions of `model` where `at` holds.
fn ok_spread(
    rows: &[Record],
    model: &str,
    at: impl Fn(&Record) -> bool,
    c: &str,
) -> Option<Spread> {
    spread(samples(rows, model, at, c))
}

/// How `model` did at the steps where `at` holds: (ok reps, failed reps, a failure reason).
fn outcome(rows: &[Record], model: &str, at: impl Fn(&Record) -> bool) -> (usize, usize, String) {
    let mine: Vec<&Record> = rows
        .iter()
        .filter(|r| r.model == model && ran(r) && at(r))
        .collect();
    let ok = mine.iter().filter(|r| r.status == Status::Ok).count();
    let reason = mine
        .iter()
        .find(|r| r.status == Status::Failed)
        .map_or(String::new(), |r| r.failure_reason.clone());
    (ok, mine.len() - ok, reason)
}

/// The models of `rows` in order of appearance.
fn models(rows: &[Record]) -> Vec<&str> {
    let mut models: Vec<&str> = Vec::new();
    for r in rows {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    models
}

/// The Claims section: a summary table, then each claim with its numbers. `link` gives
/// the report of a claim's own run, when it has one.
pub fn section(
    claims: &[Claim],
    test: impl Fn(usize) -> Option<String>,
    link: impl Fn(usize) -> Option<String>,
) -> Vec<Section> {
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|c| {
            vec![
                c.number.to_string(),
                c.text(),
                c.verdict.name().to_string(),
                c.why.clone(),
            ]
        })
        .collect();
    let flagged = claims
        .iter()
        .map(|c| c.verdict == ClaimVerdict::NotRun)
        .collect();
    let mut sections = vec![Section {
        heading: "Claims".into(),
        level: 2,
        id: "claims".into(),
        blocks: vec![
            Block::Paragraph(
                "Each claim of the classic studies, judged from this run's rows: confirmed, \
                 refuted, no difference (a comparison with p >= 0.05, or medians within \
                 x1.05), or inconclusive with the reason; a claim whose scenario did not run \
                 says why. Spreads are the median and the range over the repetitions."
                    .into(),
            ),
            Block::Table(Table {
                headers: vec!["#".into(), "Claim".into(), "Verdict".into(), "Why".into()],
                rows,
                numeric: vec![true, false, false, false],
                flagged,
            }),
        ],
    }];
    for c in claims {
        let mut blocks = vec![
            Block::Paragraph(format!("Claim: {}", c.text())),
            Block::Paragraph(format!("The report's setup: {}.", c.setup())),
        ];
        if let Some(test) = test(c.number) {
            blocks.push(Block::Paragraph(format!("Test: {test}")));
        }
        if !c.numbers.is_empty() {
            blocks.push(Block::List(c.numbers.clone()));
        }
        blocks.extend(c.charts.iter().map(claim_charts::ClaimChart::block));
        blocks.push(Block::Paragraph(format!(
            "Verdict: {}: {}.",
            c.verdict.name(),
            c.why
        )));
        if let Some(link) = link(c.number) {
            blocks.push(Block::Paragraph(format!("Tables and charts: {link}")));
        }
        sections.push(Section {
            heading: format!("Claim {}: {}", c.number, c.verdict.name()),
            level: 3,
            id: format!("claim-{}", c.number),
            blocks,
        });
    }
    sections
}

/// The test a scenario's description states (the text after `Test: `).
pub fn test_of(description: &str) -> Option<String> {
    let start = description.find("Test: ")? + "Test: ".len();
    Some(
        description[start..]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}
