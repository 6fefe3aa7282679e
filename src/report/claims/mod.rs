//! The Claims section: each claim of the classic studies judged from the rows of
//! the scenario that tests it (`claim-1` .. `claim-8`). One pure function per
//! claim turns rows into the claim, its numbers with their spread over the
//! repetitions, and a verdict with its reason; section() lays them out.

use super::data::{Row, Status};
use super::document::{Block, Section, Table};
use crate::experiment::results::column;

mod capacity;
mod speed;
#[cfg(test)]
mod tests;

use capacity::{claim_1, claim_2, claim_3, claim_7};
use speed::{claim_4, claim_5, claim_6, claim_8};

/// The claims in the order the classic studies make them; claim N is tested by the
/// built-in scenario `claim-N`.
pub const CLAIMS: [&str; 8] = [
    "select cannot serve more than about 1 000 clients (FD_SETSIZE 1024).",
    "A thread per client fails near the system's thread limit (tens of thousands).",
    "epoll serves 100 000 clients.",
    "For a moderate number of long-lived, busy clients (about 250–1 000 clients, delay \
     0.1–10 ms), select answers as fast as or faster than epoll.",
    "For many short-lived connections (one request each), epoll answers faster than select.",
    "With a fixed delay per request, doubling the clients roughly doubles the mean response \
     time until the server saturates.",
    "Messages of 1 B, 1 KiB and 1 MiB at 10 000 connections: thread per client runs out of \
     memory at 1 MiB, select cannot serve them, epoll completes.",
    "Response time stays low at delays of 125 ms and above and climbs steeply below.",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Confirmed,
    Refuted,
    Inconclusive,
    NotRun,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotRun => "not run",
        }
    }
}

/// One claim judged.
#[derive(Debug, Clone)]
pub struct Claim {
    /// 1 to 8.
    pub number: usize,
    pub numbers: Vec<String>,
    pub verdict: Verdict,
    pub why: String,
}

impl Claim {
    pub fn text(&self) -> &'static str {
        CLAIMS[self.number - 1]
    }

    /// A claim whose scenario did not run (or left no row that ran).
    pub fn not_run(number: usize, reason: impl Into<String>) -> Claim {
        Claim {
            number,
            numbers: Vec::new(),
            verdict: Verdict::NotRun,
            why: reason.into(),
        }
    }
}

/// Limits of the machine the verdict of claim 2 compares with (from the manifest).
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
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

/// Judges claim `number` from its scenario's rows.
pub fn judge(number: usize, rows: &[Row], limits: Limits) -> Claim {
    // A repetition stopped by this machine's own limits says nothing of the claim.
    let (stopped, rows): (Vec<Row>, Vec<Row>) = rows
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
        _ => claim_8(rows),
    };
    Claim {
        number,
        numbers,
        verdict,
        why,
    }
}

/// Whether a failure reason is this machine's limit on the load generator (its fd
/// limit, its local ports) rather than something the server did.
fn machine_limit(reason: &str) -> bool {
    ["RLIMIT_NOFILE", "local ports", "ephemeral ports"]
        .iter()
        .any(|w| reason.contains(w))
}

type Judged = (Verdict, String, Vec<String>);

/// Why no row of a claim ran (no rows, or every one not run or interrupted).
fn nothing_ran(rows: &[Row]) -> Option<String> {
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

fn ran(r: &Row) -> bool {
    matches!(r.status, Status::Ok | Status::Failed)
}

fn num(r: &Row, c: &str) -> f64 {
    r.num(c).unwrap_or(0.0)
}

/// The distinct values of `c` among `rows`, ascending.
fn values_of<'a>(rows: impl Iterator<Item = &'a Row>, c: &str) -> Vec<f64> {
    let mut v: Vec<f64> = rows.map(|r| num(r, c)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// `column` over the ok repetitions of `model` where `at` holds.
fn ok_spread(rows: &[Row], model: &str, at: impl Fn(&Row) -> bool, c: &str) -> Option<Spread> {
    spread(
        rows.iter()
            .filter(|r| r.model == model && r.status == Status::Ok && at(r))
            .filter_map(|r| r.num(c))
            .collect(),
    )
}

/// How `model` did at the steps where `at` holds: (ok reps, failed reps, a failure reason).
fn outcome(rows: &[Row], model: &str, at: impl Fn(&Row) -> bool) -> (usize, usize, String) {
    let mine: Vec<&Row> = rows
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
fn models(rows: &[Row]) -> Vec<&str> {
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
                c.text().to_string(),
                c.verdict.name().to_string(),
                c.why.clone(),
            ]
        })
        .collect();
    let flagged = claims
        .iter()
        .map(|c| c.verdict == Verdict::NotRun)
        .collect();
    let mut sections = vec![Section {
        heading: "Claims".into(),
        level: 2,
        id: "claims".into(),
        blocks: vec![
            Block::Paragraph(
                "Each claim of the classic studies, judged from this run's rows: confirmed, \
                 refuted, or inconclusive with the reason; a claim whose scenario did not run \
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
        let mut blocks = vec![Block::Paragraph(format!("Claim: {}", c.text()))];
        if let Some(test) = test(c.number) {
            blocks.push(Block::Paragraph(format!("Test: {test}")));
        }
        if !c.numbers.is_empty() {
            blocks.push(Block::List(c.numbers.clone()));
        }
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
