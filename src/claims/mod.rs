//! The Claims section: each claim of the classic studies judged from the rows of
//! the scenario that tests it (`claim-1` .. `claim-53`). One pure function per
//! claim turns rows into the claim, its numbers with their spread over the
//! repetitions, and a verdict with its reason; section() lays them out.

use crate::render::document::{Block, Section, Table};
use crate::results::column;
use crate::results::reader::{Row, Status};

mod capacity;
mod claim_charts;
mod compared;
mod contest;
mod knee;
mod observations;
mod sources;
mod speed;
mod statements;
#[cfg(test)]
mod tests;

use capacity::{claim_1, claim_16, claim_19, claim_2, claim_3, claim_7};
use compared::{
    claim_10, claim_11, claim_12, claim_13, claim_14, claim_15, claim_17, claim_18, claim_20,
    claim_21, claim_23, claim_32, claim_9,
};
use observations::{
    claim_24, claim_25, claim_26, claim_27, claim_28, claim_29, claim_30, claim_31,
};
pub use sources::{Kind, Source, CLAIMS};
use speed::{claim_22, claim_4, claim_5, claim_6, claim_8};
use statements::{
    claim_33, claim_34, claim_35, claim_36, claim_37, claim_38, claim_39, claim_40, claim_41,
    claim_42, claim_43, claim_44, claim_45, claim_46, claim_47, claim_48, claim_49, claim_50,
    claim_51, claim_52, claim_53,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimVerdict {
    Confirmed,
    Refuted,
    /// "A beats B" compared with enough repetitions, and p >= ALPHA.
    NoDifference,
    Inconclusive,
    NotRun,
    /// A run whose outcome its setup fixes ([`Kind::Demonstration`]).
    Demonstration,
    /// A claim this machine cannot test ([`Kind::Untestable`]).
    Untestable,
}

impl ClaimVerdict {
    pub fn name(self) -> &'static str {
        match self {
            ClaimVerdict::Confirmed => "confirmed",
            ClaimVerdict::Refuted => "refuted",
            ClaimVerdict::NoDifference => "no difference",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::NotRun => "not run",
            ClaimVerdict::Demonstration => "demonstration, not a test",
            ClaimVerdict::Untestable => "cannot be tested here",
        }
    }
}

/// One claim judged.
#[derive(Debug, Clone)]
pub struct Claim {
    /// 1 to `CLAIMS.len()`.
    pub number: usize,
    pub numbers: Vec<String>,
    pub verdict: ClaimVerdict,
    pub why: String,
    /// The figures the claim rests on, charted per step (claims 18, 20 and 32).
    pub charts: Vec<claim_charts::ClaimChart>,
}

impl Claim {
    /// The claim in its report's words, with the file and section.
    pub fn text(&self) -> String {
        let c = &CLAIMS[self.number - 1];
        format!("“{}” ({}, {})", c.quote, c.file, c.section)
    }

    /// The claim's own declaration: its report's setup, echolab's test and how they differ.
    pub fn source(&self) -> &'static Source {
        &CLAIMS[self.number - 1]
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

/// The claims a scenario's rows judge: its own, then those declared judged from it
/// ([`Source::judged_from`]: `claim-6` -> 6, 19 and 20); none for a scenario that is
/// not a claim's.
pub fn claims_of(scenario: &str) -> Vec<usize> {
    let Some(own) = claim_of(scenario) else {
        return Vec::new();
    };
    let also = (1..=CLAIMS.len()).filter(|&n| CLAIMS[n - 1].judged_from == Some(own));
    std::iter::once(own).chain(also).collect()
}

/// Judges claim `number` from its scenario's rows: its rule's verdict, unless the claim
/// is a demonstration or cannot be tested here (its numbers listed all the same).
pub fn judge(number: usize, rows: &[Row], limits: MachineLimits) -> Claim {
    let mut claim = by_rule(number, rows, limits);
    if claim.verdict == ClaimVerdict::NotRun {
        return claim;
    }
    match CLAIMS[number - 1].kind {
        Kind::Test => {}
        Kind::Demonstration(reason) => {
            claim.verdict = ClaimVerdict::Demonstration;
            claim.why = format!("{reason}; what the run showed: {}", claim.why);
        }
        Kind::Untestable(reason) => {
            claim.verdict = ClaimVerdict::Untestable;
            claim.why = reason.to_string();
        }
    }
    claim
}

/// Claim `number` judged by its rule alone.
fn by_rule(number: usize, rows: &[Row], limits: MachineLimits) -> Claim {
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
        21 => claim_21(rows),
        22 => claim_22(rows),
        23 => claim_23(rows),
        24 => claim_24(rows),
        25 => claim_25(rows),
        26 => claim_26(rows),
        27 => claim_27(rows),
        28 => claim_28(rows),
        29 => claim_29(rows),
        30 => claim_30(rows),
        31 => claim_31(rows),
        32 => claim_32(rows),
        33 => claim_33(rows),
        34 => claim_34(rows),
        35 => claim_35(rows),
        36 => claim_36(rows),
        37 => claim_37(rows),
        38 => claim_38(rows),
        39 => claim_39(rows),
        40 => claim_40(rows),
        41 => claim_41(rows),
        42 => claim_42(rows),
        43 => claim_43(rows),
        44 => claim_44(rows),
        45 => claim_45(rows),
        46 => claim_46(rows),
        47 => claim_47(rows),
        48 => claim_48(rows),
        49 => claim_49(rows),
        50 => claim_50(rows),
        51 => claim_51(rows),
        52 => claim_52(rows),
        _ => claim_53(rows),
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

/// The median, minimum and maximum of a figure over its repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Repetitions {
    median: f64,
    min: f64,
    max: f64,
    n: usize,
}

fn over_repetitions(mut values: Vec<f64>) -> Option<Repetitions> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(Repetitions {
        median: crate::stats::median(&values)?,
        min: values[0],
        max: values[n - 1],
        n,
    })
}

impl Repetitions {
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

/// `c` of `r`, 0 when it has no value (the claims sweep axes that every row has);
/// [`Row::num`] says None instead.
fn num_or_zero(r: &Row, c: &str) -> f64 {
    r.num(c).unwrap_or(0.0)
}

/// The distinct values of `c` among `rows`, ascending.
fn values_of<'a>(rows: impl Iterator<Item = &'a Row>, c: &str) -> Vec<f64> {
    let mut v: Vec<f64> = rows.map(|r| num_or_zero(r, c)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The ok values of `c` for `model` where `at` holds, one per repetition.
fn samples(rows: &[Row], model: &str, at: impl Fn(&Row) -> bool, c: &str) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.model == model && r.status == Status::Ok && at(r))
        .filter_map(|r| r.num(c))
        .collect()
}

/// `column` over the ok repetitions of `model` where `at` holds.
fn ok_repetitions(
    rows: &[Row],
    model: &str,
    at: impl Fn(&Row) -> bool,
    c: &str,
) -> Option<Repetitions> {
    over_repetitions(samples(rows, model, at, c))
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

/// The Claims section: a summary table (each claim with the report's setup and
/// echolab's beside it), then each claim with its own test, numbers and verdict. `link`
/// gives the report of a claim's own run, when it has one.
pub fn section(claims: &[Claim], link: impl Fn(usize) -> Option<String>) -> Vec<Section> {
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|c| {
            vec![
                c.number.to_string(),
                format!(
                    "{}\nThe report: {}.\necholab: {}",
                    c.text(),
                    c.source().setup,
                    c.source().differs
                ),
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
                 says why. A demonstration is a run whose setup fixes its outcome, and a claim \
                 that cannot be tested here says why. Spreads are the median and the range \
                 over the repetitions. Beside each claim, the report's setup and numbers, \
                 and echolab's setup with every difference and why."
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
        let source = c.source();
        let mut blocks = vec![
            Block::Paragraph(format!("Claim: {}", c.text())),
            Block::Paragraph(format!("The report's setup: {}.", source.setup)),
            Block::Paragraph(format!("Test: {}", source.test)),
        ];
        if let Some(from) = source.judged_from {
            blocks.push(Block::Paragraph(format!(
                "In classic, judged from claim-{from}'s rows (the same load); claim-{} runs \
                 it alone.",
                c.number
            )));
        }
        blocks.push(Block::Paragraph(format!(
            "How echolab's setup differs: {}",
            source.differs
        )));
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
