//! The verdict (which model wins each figure, by what ratio) and the plain-language
//! findings, all computed from results.csv.

use super::data::{Results, Row, Status};
use super::sweep::{self, aggregate, at, problems, Sweep};
use crate::experiment::results::column;

pub const BASELINE: &str = "tokio";

/// One figure of the report, as a number per step that can be ranked.
pub struct Figure {
    pub name: &'static str,
    pub column: &'static str,
    pub higher_is_better: bool,
    pub format: fn(f64) -> String,
}

pub const FIGURES: [Figure; 8] = [
    Figure {
        name: "Throughput",
        column: column::THROUGHPUT_RPS,
        higher_is_better: true,
        format: fmt_rate,
    },
    Figure {
        name: "Response time p50",
        column: column::P50_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Response time p99",
        column: column::P99_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Response time mean",
        column: column::MEAN_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Tail latency p99.9",
        column: column::P999_US,
        higher_is_better: false,
        format: fmt_latency,
    },
    Figure {
        name: "Completion time",
        column: column::COMPLETION_S,
        higher_is_better: false,
        format: fmt_seconds,
    },
    Figure {
        name: "Server CPU",
        column: column::SERVER_CPU_PCT,
        higher_is_better: false,
        format: fmt_cpu,
    },
    Figure {
        name: "Server memory per connection",
        column: column::SERVER_RSS_PER_CONN_BYTES,
        higher_is_better: false,
        format: fmt_bytes,
    },
];

/// Thousands separated by commas, at most 3 significant decimals below 100.
pub fn fmt_count(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        let n = v.round() as i64;
        let digits = n.abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            out.insert(0, '-');
        }
        out
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn fmt_seconds(v: f64) -> String {
    format!("{} s", fmt_count(v))
}

pub fn fmt_rate(v: f64) -> String {
    format!("{} req/s", fmt_count(v))
}

pub fn fmt_latency(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

pub fn fmt_cpu(pct: f64) -> String {
    format!("{pct:.1}% of a core")
}

pub fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1048576.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// "×1.10"; the ratio is always ≥ 1 and reads "this many times better".
pub fn fmt_ratio(r: f64) -> String {
    format!("×{r:.2}")
}

pub struct Verdict {
    pub figure: String,
    /// Where the models were compared ("connections=4000").
    pub compared_at: String,
    /// (model, value) best first.
    pub ranking: Vec<(String, f64)>,
    pub format: fn(f64) -> String,
    pub higher_is_better: bool,
    /// A step compared here had a saturated load generator (`generator_bound`).
    pub generator_bound: bool,
    /// How many of the best-ranked models cannot be told apart: with a generator-bound
    /// step, every model within that step's spread of the best (see [`undecided`]).
    pub undecided: usize,
}

impl Verdict {
    fn ratio(&self, other: f64) -> Option<f64> {
        let best = self.ranking.first()?.1;
        let r = if self.higher_is_better {
            best / other
        } else {
            other / best
        };
        r.is_finite().then_some(r)
    }

    pub fn winner(&self) -> Option<&(String, f64)> {
        self.ranking.first()
    }

    /// The models sharing the best value (more than one on a tie).
    pub fn winners(&self) -> Vec<&str> {
        let Some(best) = self.ranking.first().map(|w| w.1) else {
            return Vec::new();
        };
        self.ranking
            .iter()
            .enumerate()
            .take_while(|(i, (_, v))| *v == best || *i < self.undecided)
            .map(|(_, (m, _))| m.as_str())
            .collect()
    }

    /// The best model after those tied for first place.
    pub fn runner_up(&self) -> Option<&(String, f64)> {
        self.ranking.get(self.winners().len())
    }

    pub fn ratio_to_runner_up(&self) -> Option<f64> {
        self.ratio(self.runner_up()?.1)
    }

    pub fn baseline(&self) -> Option<f64> {
        self.ranking
            .iter()
            .find(|(m, _)| m == BASELINE)
            .map(|(_, v)| *v)
    }

    pub fn ratio_to_baseline(&self) -> Option<f64> {
        self.ratio(self.baseline()?)
    }
}

fn rank(values: &mut [(String, f64)], higher_is_better: bool) {
    values.sort_by(|a, b| {
        let order = a.1.total_cmp(&b.1);
        if higher_is_better {
            order.reverse()
        } else {
            order
        }
    });
}

/// Whether any ok repetition at `x` of the compared models had a saturated generator.
fn generator_bound_at(results: &Results, sweep: &Sweep, x: f64, models: &[&String]) -> bool {
    sweep.rows(results).any(|r| {
        r.status == Status::Ok
            && sweep.x_of(r) == Some(x)
            && models.contains(&&r.model)
            && r.raw(column::GENERATOR_BOUND) == "true"
    })
}

/// How many leading models of `ranking` (best first) a generator-bound step cannot tell
/// apart: those whose mean is within the step's spread of the best one's, the spread
/// being the widest range (max - min over repetitions) among the compared models.
pub fn undecided(ranking: &[(String, f64)], spreads: &[(String, f64)]) -> usize {
    let Some((_, best)) = ranking.first() else {
        return 0;
    };
    let spread = spreads.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    ranking
        .iter()
        .take_while(|(_, v)| (v - best).abs() <= spread)
        .count()
}

/// Each figure compared at the heaviest x where at least two models succeeded
/// (the point the sweep exists to reach), or the heaviest with any success.
pub fn verdicts(results: &Results, sweep: &Sweep) -> Vec<Verdict> {
    let models = sweep::models(results);
    let mut out = Vec::new();
    for figure in &FIGURES {
        let per_model: Vec<(String, Vec<sweep::Agg>)> = models
            .iter()
            .map(|m| {
                let column = figure.column;
                (
                    m.clone(),
                    aggregate(results, sweep, m, &|r: &Row| r.num(column)),
                )
            })
            .collect();
        let count_at = |x: f64| {
            per_model
                .iter()
                .filter(|(_, aggs)| aggs.iter().any(|a| a.x == x))
                .count()
        };
        let x = sweep
            .xs
            .iter()
            .rev()
            .find(|&&x| count_at(x) >= 2)
            .or_else(|| sweep.xs.iter().rev().find(|&&x| count_at(x) >= 1));
        let Some(&x) = x else { continue };
        let mut ranking: Vec<(String, f64)> = per_model
            .iter()
            .filter_map(|(m, aggs)| aggs.iter().find(|a| a.x == x).map(|a| (m.clone(), a.mean)))
            .collect();
        rank(&mut ranking, figure.higher_is_better);
        let compared: Vec<&String> = ranking.iter().map(|(m, _)| m).collect();
        let generator_bound = generator_bound_at(results, sweep, x, &compared);
        let undecided = if generator_bound {
            let spreads: Vec<(String, f64)> = per_model
                .iter()
                .filter_map(|(m, aggs)| {
                    let a = aggs.iter().find(|a| a.x == x)?;
                    Some((m.clone(), a.max - a.min))
                })
                .collect();
            undecided(&ranking, &spreads)
        } else {
            0
        };
        out.push(Verdict {
            figure: figure.name.to_string(),
            compared_at: at(&sweep.axis, x),
            ranking,
            format: figure.format,
            higher_is_better: figure.higher_is_better,
            generator_bound,
            undecided,
        });
    }
    // Capacity: the most connections a model's server held at once in any step
    // that ran, failed ones included (a failing step still shows the ceiling).
    let mut held: Vec<(String, f64)> = models
        .iter()
        .filter_map(|m| {
            sweep
                .rows(results)
                .filter(|r| &r.model == m && r.status != Status::Skipped)
                .filter_map(|r| r.num(column::MAX_CONCURRENT_SERVER))
                .reduce(f64::max)
                .map(|v| (m.clone(), v))
        })
        .collect();
    if !held.is_empty() {
        rank(&mut held, true);
        out.push(Verdict {
            figure: "Max connections held".into(),
            compared_at: "whole sweep".into(),
            ranking: held,
            format: fmt_count,
            higher_is_better: true,
            generator_bound: false,
            undecided: 0,
        });
    }
    out
}

/// Wins per model over every figure of every sweep (each model tied for first gets
/// a win), most wins first, then by name; models that won nothing are listed with 0.
pub fn tally(results: &Results, sweeps: &[Sweep]) -> Vec<(String, usize)> {
    let mut wins: Vec<(String, usize)> =
        sweep::models(results).into_iter().map(|m| (m, 0)).collect();
    for s in sweeps {
        for v in verdicts(results, s) {
            for winner in v.winners() {
                if let Some(entry) = wins.iter_mut().find(|(m, _)| m == winner) {
                    entry.1 += 1;
                }
            }
        }
    }
    wins.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    wins
}

/// Plain-language statements, each one derived from the rows of this sweep.
pub fn findings(results: &Results, sweep: &Sweep) -> Vec<String> {
    let models = sweep::models(results);
    let mut out = Vec::new();
    let axis = sweep.axis.as_str();

    for model in &models {
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

    // Memory per 1000 connections at the heaviest point each model passed.
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

    // Throughput at the comparison point, against the baseline.
    let verdicts = verdicts(results, sweep);
    if let Some(v) = verdicts.iter().find(|v| v.figure == "Throughput") {
        let winners = v.winners();
        if v.generator_bound && winners.len() > 1 {
            out.push(format!(
                "At {}, the load generator was saturated (generator-bound) and {} are within \
                 the step's spread of each other: no winner is declared.",
                v.compared_at,
                winners.join(", ")
            ));
        } else if let Some((winner, value)) = v.winner() {
            let mut text = format!(
                "At {}, {winner} served the most: {}",
                v.compared_at,
                fmt_rate(*value)
            );
            match (v.baseline(), v.ratio_to_baseline()) {
                (Some(base), Some(r)) if winner != BASELINE => text.push_str(&format!(
                    ", {} the baseline {BASELINE} ({})",
                    fmt_ratio(r),
                    fmt_rate(base)
                )),
                _ => {}
            }
            text.push('.');
            out.push(text);
        }
    }

    // How p99 grew across the sweep, for the models with the most and least growth.
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

    // Byte accounting and errors in the steps that counted.
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
                bad_bytes.join(", ")
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
            errors.join(", ")
        ));
    }

    // Steps whose load generator was saturated: their differences may be the generator's.
    let bound: Vec<String> = sweep
        .rows(results)
        .filter(|r| r.raw(column::GENERATOR_BOUND) == "true")
        .map(|r| format!("{} {} rep {}", r.model, r.step, r.repetition))
        .collect();
    if !bound.is_empty() {
        out.push(format!(
            "Generator-bound: in {} repetition(s) the load generator used more than 90% of the \
             cores it was given ({}); there the generator may have set the pace, not the server.",
            bound.len(),
            bound.join(", ")
        ));
    }

    // How far apart repetitions were: the largest throughput spread.
    let mut widest: Option<(String, f64, f64)> = None;
    for model in &models {
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
