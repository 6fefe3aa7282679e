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

mod report_000;
mod report_001;
mod report_002;
mod report_003;
mod report_004;

/// The claims in the order the classic studies make them; claim N is tested by the
/// built-in scenario `claim-N`. Claims 1 to 5 are the studies' common conclusions;
/// 2, 6, 7 and 8 quote the report that made them; 9 to 23 are the reports' other
/// conclusions, observations and hypotheses, in the order of the reports, 24 to 31
/// the observations tested last, again in the order of the reports, and 32 the last
/// tested, retransmissions against clients on claim 18's shaped link.
pub const CLAIMS: [Source; 32] = [
    report_002::CLAIM_1,
    report_002::CLAIM_2,
    report_002::CLAIM_3,
    report_001::CLAIM_4,
    report_001::CLAIM_5,
    report_004::CLAIM_6,
    report_003::CLAIM_7,
    report_004::CLAIM_8,
    report_000::CLAIM_9,
    report_000::CLAIM_10,
    report_000::CLAIM_11,
    report_000::CLAIM_12,
    report_001::CLAIM_13,
    report_001::CLAIM_14,
    report_002::CLAIM_15,
    report_002::CLAIM_16,
    report_003::CLAIM_17,
    report_004::CLAIM_18,
    report_004::CLAIM_19,
    report_004::CLAIM_20,
    report_001::CLAIM_21,
    report_001::CLAIM_22,
    report_004::CLAIM_23,
    report_000::CLAIM_24,
    report_000::CLAIM_25,
    report_001::CLAIM_26,
    report_002::CLAIM_27,
    report_002::CLAIM_28,
    report_004::CLAIM_29,
    report_004::CLAIM_30,
    report_004::CLAIM_31,
    report_004::CLAIM_32,
];
