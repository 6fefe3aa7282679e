//! A claim's run that goes on while its claim is undecided: one more round of every
//! model at a time (interleaved, as the first rounds), up to the scenario's
//! `[claims] max_repetitions`, the claims judged again after each round at the level of
//! the sequential rule ([`crate::stats::Looks`]: Bonferroni over the looks), so that
//! looking again does not raise the chance of calling a difference where there is none.

use std::path::Path;

use crate::claims::{self, ClaimVerdict};
use crate::experiment::{self, orchestration::runner::RunOutcome};
use crate::scenario::Scenario;

/// Adds rounds to the run of `scenario` in `out` (whose first rounds ended with `outcome`)
/// while a claim its rows judge is undecided: the outcome of them all.
pub(super) fn add_rounds(
    scenario: &Scenario,
    out: &Path,
    quiet: bool,
    mut outcome: RunOutcome,
    written: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<RunOutcome> {
    let most = scenario.max_repetitions;
    if most <= scenario.repetitions {
        return Ok(outcome);
    }
    let numbers = claims::claims_of(&scenario.name);
    if numbers.is_empty() || scenario.profiled.is_some() {
        crate::errln!(
            "warning: [claims] max_repetitions = {most} adds no repetitions here: {}",
            if numbers.is_empty() {
                "no claim is judged from this scenario's rows"
            } else {
                "its profiled repetitions take the repetition numbers after the last"
            }
        );
        return Ok(outcome);
    }
    for repetition in scenario.repetitions + 1..=most {
        if outcome.interrupted || outcome.fault.is_some() {
            break;
        }
        let undecided = undecided(&numbers, out)?;
        if undecided.is_empty() {
            break;
        }
        crate::outln!(
            "claim {} undecided after {} repetitions: round {repetition} of at most {most}",
            undecided.join(", "),
            repetition - 1
        );
        let round = experiment::add_round(scenario, out, repetition, quiet, written)?;
        outcome.rows.extend(round.rows);
        outcome.interrupted = round.interrupted;
        outcome.fault = round.fault;
    }
    Ok(outcome)
}

/// The claims among `numbers` that the rows in `out` leave undecided, as the report
/// judges them: neither confirmed nor refuted, where more repetitions may decide.
fn undecided(numbers: &[usize], out: &Path) -> anyhow::Result<Vec<String>> {
    let results = crate::results::reader::load(out)?;
    Ok(numbers
        .iter()
        .filter(|&&n| {
            let claim = crate::report::judge_claim(n, &results.rows, &results.manifest);
            matches!(
                claim.verdict,
                ClaimVerdict::Inconclusive | ClaimVerdict::NoDifference
            )
        })
        .map(usize::to_string)
        .collect())
}
