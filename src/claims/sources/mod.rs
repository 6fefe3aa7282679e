//! Each claim of the classic studies declared once: its source's words, file and
//! section, the source's setup and numbers, echolab's test of it with the rule that
//! decides the verdict, how echolab's setup differs from the source's and why, and
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

/// A claim as its source made it and as echolab tests it.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// The source's own words (fragments in double quotes when the claim joins several).
    pub quote: &'static str,
    /// The source's file in shared/seeds.
    pub file: &'static str,
    pub section: &'static str,
    /// The source's setup and numbers.
    pub setup: &'static str,
    /// echolab's test: what runs and the rule that decides the verdict.
    pub test: &'static str,
    /// echolab's setup against the source's: every difference and why (this machine's
    /// limits, or a choice).
    pub differs: &'static str,
    /// In classic, the claim whose scenario's rows judge this one too (the same load over
    /// the same or more steps), so its own scenario is not run again there; None when
    /// its own scenario runs.
    pub judged_from: Option<usize>,
    pub kind: Kind,
}

mod source_000;
mod source_001;
mod source_002;
mod source_003;
mod source_004;

/// The claims in the order the classic studies make them; claim N is tested by the
/// built-in scenario `claim-N`. Claims 1 to 5 are the studies' common conclusions;
/// 2, 6, 7 and 8 quote the source that made them; 9 to 23 are the sources' other
/// conclusions, observations and hypotheses, in the order of the sources, 24 to 31
/// the observations tested last, again in the order of the sources, and 32 the last
/// tested, retransmissions against clients on claim 18's shaped link. 33 to 46 are the
/// reports' other testable statements (docs/statements.md), in the order of the sources,
/// each judged from the rows of a scenario classic already runs; 47 to 53 the last ones,
/// in the order of the sources, on parts of their own (claim-47, claim-48, claim-52) or
/// claim-3's rows.
pub const CLAIMS: [Source; 53] = [
    source_002::CLAIM_1,
    source_002::CLAIM_2,
    source_002::CLAIM_3,
    source_001::CLAIM_4,
    source_001::CLAIM_5,
    source_004::CLAIM_6,
    source_003::CLAIM_7,
    source_004::CLAIM_8,
    source_000::CLAIM_9,
    source_000::CLAIM_10,
    source_000::CLAIM_11,
    source_000::CLAIM_12,
    source_001::CLAIM_13,
    source_001::CLAIM_14,
    source_002::CLAIM_15,
    source_002::CLAIM_16,
    source_003::CLAIM_17,
    source_004::CLAIM_18,
    source_004::CLAIM_19,
    source_004::CLAIM_20,
    source_001::CLAIM_21,
    source_001::CLAIM_22,
    source_004::CLAIM_23,
    source_000::CLAIM_24,
    source_000::CLAIM_25,
    source_001::CLAIM_26,
    source_002::CLAIM_27,
    source_002::CLAIM_28,
    source_004::CLAIM_29,
    source_004::CLAIM_30,
    source_004::CLAIM_31,
    source_004::CLAIM_32,
    source_000::CLAIM_33,
    source_000::CLAIM_34,
    source_000::CLAIM_35,
    source_000::CLAIM_36,
    source_002::CLAIM_37,
    source_002::CLAIM_38,
    source_003::CLAIM_39,
    source_004::CLAIM_40,
    source_004::CLAIM_41,
    source_004::CLAIM_42,
    source_004::CLAIM_43,
    source_004::CLAIM_44,
    source_004::CLAIM_45,
    source_004::CLAIM_46,
    source_000::CLAIM_47,
    source_003::CLAIM_48,
    source_003::CLAIM_49,
    source_003::CLAIM_50,
    source_003::CLAIM_51,
    source_003::CLAIM_52,
    source_003::CLAIM_53,
];
