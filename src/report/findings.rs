//! The plain-language findings under each sweep's verdict: failures, memory,
//! throughput, tail growth, byte accounting and the runs' own health, each statement
//! derived from the rows of results.csv.

use crate::results::column;
use crate::results::reader::{Results, Row, Status};
use crate::verdict::sweep::{self, aggregate, at, problems, Sweep};
use crate::verdict::{
    fmt_count, fmt_latency, fmt_rate, fmt_ratio, fmt_ratio_interval, Decision, Verdict, BASELINE,
    LEFT_OUT_IN_TURN,
};

/// Plain-language statements, each one derived from the rows of this sweep.
pub fn findings(results: &Results, sweep: &Sweep, verdicts: &[Verdict]) -> Vec<String> {
    let models = sweep::models(results);
    let axis = sweep.axis.as_str();
    let mut out = Vec::new();
    out.extend(failures_findings(results, sweep, &models, axis));
    out.extend(memory_findings(results, sweep, &models, axis));
    out.extend(throughput_findings(verdicts));
    out.extend(p99_growth_findings(results, sweep, &models, axis));
    out.extend(byte_accounting_findings(results, sweep));
    out.extend(generator_bound_findings(results, sweep));
    out.extend(disturbed_findings(results, sweep));
    out.extend(spread_findings(results, sweep, &models, axis));
    out
}

/// Where each model failed or was skipped (only the first failure says where it broke).
fn failures_findings(
    results: &Results,
    sweep: &Sweep,
    models: &[String],
    axis: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for model in models {
        // Only the first failure says where the model broke.
        if let Some(p) = problems(
            results,
            sweep,
            model,
            &[Status::Failed, Status::Interrupted],
        )
        .into_iter()
        .next()
        {
            let held = p
                .rows
                .iter()
                .filter_map(|r| r.num(column::MAX_CONCURRENT_SERVER))
                .reduce(f64::max);
            let verb = if p.status == Status::Failed {
                "failed"
            } else {
                "was interrupted"
            };
            let mut text = format!(
                "{model} {verb} at {} ({} of {} repetitions)",
                at(axis, p.x),
                p.rows.len(),
                p.total
            );
            if let Some(held) = held {
                text.push_str(&format!(
                    "; its server held at most {} connections there",
                    fmt_count(held)
                ));
            }
            text.push_str(&format!(": {}.", p.reasons()));
            out.push(text);
        }
        let skipped = problems(results, sweep, model, &[Status::Skipped]);
        if let Some(first) = skipped.first() {
            let xs: Vec<String> = skipped.iter().map(|p| sweep::plain_number(p.x)).collect();
            out.push(format!(
                "{model} was skipped at {axis}={}: {}.",
                xs.join(", "),
                first.reasons()
            ));
        }
    }
    out
}

/// Memory per 1000 connections at the heaviest point each model passed.
fn memory_findings(results: &Results, sweep: &Sweep, models: &[String], axis: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut memory: Vec<(String, f64, f64)> = models
        .iter()
        .filter_map(|m| {
            aggregate(results, sweep, m, &|r: &Row| {
                r.num(column::SERVER_RSS_PER_CONN_BYTES)
            })
            .last()
            .map(|a| (m.clone(), a.mean, a.x))
        })
        .collect();
    memory.sort_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((least_model, least, _)) = memory.first().cloned() {
        for (model, per_conn, x) in &memory {
            let mut text = format!(
                "{model} used {:.2} MiB per 1000 connections (server RSS at {})",
                per_conn * 1000.0 / 1048576.0,
                at(axis, *x)
            );
            if *model != least_model && least > 0.0 {
                text.push_str(&format!(
                    ", {} {least_model}'s",
                    fmt_ratio(per_conn / least)
                ));
            }
            text.push('.');
            out.push(text);
        }
    }
    out
}

/// Throughput at the comparison point: a winner only when the test names one.
fn throughput_findings(verdicts: &[Verdict]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = verdicts.iter().find(|v| v.figure == "Throughput") {
        let note = v
            .left_out_note()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        if let Some(rate) = v.fixed_by_load {
            out.push(format!(
                "At {}, the open loop fixed throughput at the {} it offered, which every model \
                 served: this step did not measure capacity, and no model served more{note}.",
                v.compared_at,
                fmt_rate(rate)
            ));
        } else if let Some((winner, value)) = v.winner() {
            let mut text = format!(
                "At {}, {winner} served the most: {} ({}{note})",
                v.compared_at,
                fmt_rate(*value),
                v.significance()
            );
            if let (Some(base), Some(c)) = (v.baseline(), v.against_baseline()) {
                text.push_str(&format!(
                    ", {} the baseline {BASELINE} ({})",
                    fmt_ratio_interval(&c),
                    fmt_rate(base)
                ));
            }
            text.push('.');
            out.push(text);
        } else if let (Decision::Leaders { .. }, Some(margin), Some((runner, _))) =
            (v.decision, v.margin(), v.runner_up())
        {
            out.push(format!(
                "At {}, {} served the most, tied ({}{note}): {} over {runner}.",
                v.compared_at,
                v.winners().join(" and "),
                v.significance(),
                fmt_ratio_interval(&margin)
            ));
        } else if matches!(v.decision, Decision::NoDifference { .. }) {
            out.push(format!(
                "At {}, no model served significantly more than every other ({}{note}): \
                 no winner is declared.",
                v.compared_at,
                v.significance()
            ));
        }
    }
    out
}

/// How p99 grew across the sweep, for the models with the most and least growth.
fn p99_growth_findings(
    results: &Results,
    sweep: &Sweep,
    models: &[String],
    axis: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut growth: Vec<(String, sweep::Agg, sweep::Agg)> = models
        .iter()
        .filter_map(|m| {
            let aggs = aggregate(results, sweep, m, &|r: &Row| r.num(column::P99_US));
            let (first, last) = (*aggs.first()?, *aggs.last()?);
            (aggs.len() >= 2 && first.mean > 0.0).then(|| (m.clone(), first, last))
        })
        .collect();
    growth.sort_by(|a, b| (b.2.mean / b.1.mean).total_cmp(&(a.2.mean / a.1.mean)));
    let picks: Vec<_> = match growth.len() {
        0 => vec![],
        1 => vec![&growth[0]],
        n => vec![&growth[0], &growth[n - 1]],
    };
    for (model, first, last) in picks {
        out.push(format!(
            "{model}'s p99 response time went from {} at {} to {} at {} ({}).",
            fmt_latency(first.mean),
            at(axis, first.x),
            fmt_latency(last.mean),
            at(axis, last.x),
            fmt_ratio(last.mean / first.mean)
        ));
    }
    out
}

/// Byte accounting and errors in the steps that counted.
fn byte_accounting_findings(results: &Results, sweep: &Sweep) -> Vec<String> {
    let mut out = Vec::new();
    let completed: Vec<&Row> = sweep
        .rows(results)
        .filter(|r| r.status == Status::Ok)
        .collect();
    let bad_bytes: Vec<String> = completed
        .iter()
        .filter(|r| r.bytes_match == Some(false) || r.num(column::MISMATCHES).unwrap_or(0.0) > 0.0)
        .map(|r| format!("{} {} rep {}", r.model, r.step, r.repetition))
        .collect();
    // Servers given as commands keep no byte counts: only the client's echo check applies.
    let counted = completed.iter().filter(|r| r.bytes_match.is_some()).count();
    let uncounted = completed.len() - counted;
    if !completed.is_empty() {
        if bad_bytes.is_empty() && uncounted > 0 {
            out.push(format!(
                "No echo mismatches in all {} completed repetitions; client and server byte counts agreed in the {counted} whose server counts bytes (the other {uncounted} ran servers given as commands, which report none).",
                completed.len()
            ));
        } else if bad_bytes.is_empty() {
            out.push(format!(
                "Every byte was accounted for: no echo mismatches, and client and server byte counts agreed, in all {} completed repetitions.",
                completed.len()
            ));
        } else {
            out.push(format!(
                "Byte counts disagreed or echoes mismatched in {} completed repetitions: {}.",
                bad_bytes.len(),
                super::first_named(&bad_bytes, ", ")
            ));
        }
    }
    let errors: Vec<String> = completed
        .iter()
        .filter_map(|r| {
            let e = r.num(column::ERRORS)?;
            (e > 0.0).then(|| {
                format!(
                    "{} {} rep {} ({})",
                    r.model,
                    r.step,
                    r.repetition,
                    fmt_count(e)
                )
            })
        })
        .collect();
    if !errors.is_empty() {
        out.push(format!(
            "Completed repetitions with connection errors: {}.",
            super::first_named(&errors, ", ")
        ));
    }
    out
}

/// Steps whose load generator was saturated: their differences may be the generator's.
fn generator_bound_findings(results: &Results, sweep: &Sweep) -> Vec<String> {
    let bound = flagged(results, sweep, column::GENERATOR_BOUND, |_| String::new());
    if bound.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Generator-bound: in {} repetition(s) the load generator used more than 90% of the \
         cores it was given or did not offer the rate asked ({}); there the generator may \
         have set the pace, not the server.",
        bound.len(),
        super::first_named(&bound, ", ")
    )]
}

/// Steps the machine did other work during: shown, never deciding alone.
fn disturbed_findings(results: &Results, sweep: &Sweep) -> Vec<String> {
    let disturbed = flagged(results, sweep, column::DISTURBED, |r| {
        format!(" ({}%)", r.raw(column::INTERFERENCE_PCT))
    });
    if disturbed.is_empty() {
        return Vec::new();
    }
    let without = if disturbed.len() > LEFT_OUT_IN_TURN {
        format!(
            "each model's highest and lowest of them (with more than {LEFT_OUT_IN_TURN} \
             flagged at a point, not every one)"
        )
    } else {
        "each of them".to_string()
    };
    vec![format!(
        "Disturbed: in {} repetition(s) more than {}% of a core went to other work on the \
         machine ({}); a winner must stay one without {without}.",
        disturbed.len(),
        crate::results::DISTURBED_PCT,
        super::first_named(&disturbed, ", ")
    )]
}

/// The repetitions whose `flag` column is true, named "model step rep N" and `detail`.
fn flagged(
    results: &Results,
    sweep: &Sweep,
    flag: &str,
    detail: impl Fn(&Row) -> String,
) -> Vec<String> {
    sweep
        .rows(results)
        .filter(|r| r.raw(flag) == "true")
        .map(|r| format!("{} {} rep {}{}", r.model, r.step, r.repetition, detail(r)))
        .collect()
}

/// How far apart repetitions were: the largest throughput spread.
fn spread_findings(results: &Results, sweep: &Sweep, models: &[String], axis: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut widest: Option<(String, f64, f64)> = None;
    for model in models {
        for a in aggregate(results, sweep, model, &|r: &Row| {
            r.num(column::THROUGHPUT_RPS)
        }) {
            if a.n >= 2 && a.mean > 0.0 {
                let spread = (a.max - a.min) / a.mean * 100.0;
                if widest.as_ref().is_none_or(|w| spread > w.1) {
                    widest = Some((model.clone(), spread, a.x));
                }
            }
        }
    }
    if let Some((model, spread, x)) = widest {
        out.push(format!(
            "Repetitions agreed on throughput within {spread:.1}% of their mean (widest: {model} at {}).",
            at(axis, x)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::verdict::decide_robustly;

    #[test]
    fn throughput_an_open_loop_fixed_is_said_to_measure_no_capacity() {
        let samples = vec![vec![9_990.0, 9_995.0, 10_000.0]; 2];
        let flagged = vec![vec![false; 3]; 2];
        let v = Verdict {
            figure: "Throughput".into(),
            compared_at: "connections=1000".into(),
            ranking: vec![("epoll".into(), 9_995.0), ("tokio".into(), 9_995.0)],
            decision: decide_robustly(&samples, &flagged, true, 0.0),
            samples,
            flagged,
            format: fmt_rate,
            higher_is_better: true,
            left_out: (0, 0),
            step: 0.0,
            tied_by_step: false,
            fixed_by_load: Some(10_000.0),
        };
        assert_eq!(
            throughput_findings(&[v]),
            [
                "At connections=1000, the open loop fixed throughput at the 10,000 req/s it \
              offered, which every model served: this step did not measure capacity, and no \
              model served more."
            ]
        );
    }
}
