//! The answer on the first screen: a headline of two or three sentences over all the
//! verdicts, then for each verdict one sentence in plain words and a compact picture
//! placing every model, all read from the verdict's own decision and the same pairwise
//! rule, so a sentence never claims an order the verdict does not.

use crate::render::document::Answer;
use crate::render::format::fmt_ratio;
use crate::render::html::escape;
use crate::stats::Comparison;
use crate::verdict::{fmt_ratio_interval, oriented, pair_differs, Decision, Verdict};

/// Each verdict's sentence and picture.
pub fn answers(verdicts: &[Verdict]) -> Vec<Answer> {
    verdicts
        .iter()
        .map(|v| Answer {
            sentence: sentence(v),
            svg: picture(v),
        })
        .collect()
}

/// The headline above the figures: two or three plain sentences read from the verdicts
/// alone. The model or models named best on the most decided figures, with the margin
/// over the next model on each; other figures' leaders; and the figures this load did
/// not separate, with why (fixed by an open loop, or within the noise or the measurement
/// step). A figure no test decided is never said to have a best model. `running`: the
/// run goes on, so a model alone so far is not the run's only one.
pub fn headline(verdicts: &[Verdict], running: bool) -> String {
    let ranked = verdicts.iter().filter(|v| v.ranking.len() > 1);
    let (decided, undecided): (Vec<&Verdict>, Vec<&Verdict>) =
        ranked.partition(|v| !v.winners().is_empty());
    if decided.is_empty() && undecided.is_empty() {
        let models: Vec<&str> = verdicts
            .iter()
            .flat_map(|v| v.ranking.iter().map(|(m, _)| m.as_str()))
            .take(1)
            .collect();
        return match (models.as_slice(), running) {
            ([one], false) => format!("Only {one} was measured: there is nothing to compare."),
            ([one], true) => {
                format!("Only {one} has been measured so far: there is nothing to compare yet.")
            }
            (_, false) => "No figure was measured: there is nothing to compare.".into(),
            (_, true) => "No figure has been measured yet: there is nothing to compare.".into(),
        };
    }
    // The decided figures grouped by who leads them, the group leading most first.
    let mut groups: Vec<(Vec<&str>, Vec<&Verdict>)> = Vec::new();
    for v in &decided {
        let who = v.winners();
        match groups.iter_mut().find(|(w, _)| *w == who) {
            Some((_, figures)) => figures.push(v),
            None => groups.push((who, vec![v])),
        }
    }
    groups.sort_by_key(|(_, figures)| std::cmp::Reverse(figures.len()));
    let mut sentences = Vec::new();
    if let Some(((who, figures), others)) = groups.split_first() {
        let verb = if who.len() == 1 { "is" } else { "are" };
        let of = match (figures.len(), decided.len()) {
            (1, 1) => "the one figure this load decided".to_string(),
            (k, n) if k == n => format!("all {n} figures this load decided"),
            (k, n) => format!("{k} of the {n} figures this load decided"),
        };
        sentences.push(format!(
            "{} {verb} best on {of}: {}.",
            join_and(who),
            join_and(&figures.iter().map(|v| lead(v)).collect::<Vec<_>>())
        ));
        let rest: Vec<String> = others
            .iter()
            .map(|(who, figures)| {
                let verb = if who.len() == 1 { "leads" } else { "lead" };
                let what: Vec<String> = figures.iter().map(|v| lead(v)).collect();
                format!("{} {verb} {}", join_and(who), join_and(&what))
            })
            .collect();
        if !rest.is_empty() {
            sentences.push(format!("Elsewhere {}.", rest.join("; ")));
        }
    }
    if !undecided.is_empty() {
        let lead_in = if decided.is_empty() {
            "This load named no model best on any figure"
        } else {
            "Not separated by this load"
        };
        sentences.push(format!("{lead_in}: {}.", not_separated(&undecided)));
    }
    sentences.join(" ")
}

/// "Server CPU per request (×1.42 over tokio)": a decided figure and its margin.
fn lead(v: &Verdict) -> String {
    match (v.margin(), v.runner_up()) {
        (Some(margin), Some((next, _))) => {
            format!("{} ({} over {next})", v.figure, fmt_ratio(margin.ratio))
        }
        _ => v.figure.clone(),
    }
}

/// The figures no model leads, in groups by why (a clause for each): an open loop fixed them, or the best
/// models were within the measurement step or the noise of each other.
fn not_separated(undecided: &[&Verdict]) -> String {
    let mut fixed: Vec<&str> = Vec::new();
    let mut offered = Vec::new();
    let mut by_step: Vec<&str> = Vec::new();
    let mut by_noise: Vec<&str> = Vec::new();
    for v in undecided {
        if let Some(rate) = v.fixed_by_load {
            fixed.push(&v.figure);
            let said = (v.format)(rate);
            if !offered.contains(&said) {
                offered.push(said);
            }
        } else if v.tied_by_step {
            by_step.push(&v.figure);
        } else {
            by_noise.push(&v.figure);
        }
    }
    let mut why = Vec::new();
    if !fixed.is_empty() {
        why.push(format!(
            "{}, fixed by the load, not tied (every model served the {} offered, so \
             capacity was not measured)",
            join_and(&fixed),
            offered.join(" and ")
        ));
    }
    if !by_noise.is_empty() {
        why.push(format!(
            "{}, where the best models are within the noise of each other",
            join_and(&by_noise)
        ));
    }
    if !by_step.is_empty() {
        why.push(format!(
            "{}, where they differ by less than the measurement step",
            join_and(&by_step)
        ));
    }
    why.join("; ")
}

/// "a", "a and b", "a, b and c".
fn join_and<S: AsRef<str>>(names: &[S]) -> String {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// "31.20–35.00 µs CPU/req": two values written once with their shared unit.
pub fn fmt_range(format: fn(f64) -> String, lo: f64, hi: f64) -> String {
    let (a, b) = (format(lo), format(hi));
    if a == b {
        return a;
    }
    match (a.split_once(' '), b.split_once(' ')) {
        (Some((na, ua)), Some((_, ub))) if ua == ub => format!("{na}–{b}"),
        _ => format!("{a}–{b}"),
    }
}

/// Whether the verdict's rule tells ranked models `i` and `j` apart.
fn differs(v: &Verdict, i: usize, j: usize) -> bool {
    pair_differs(
        [v.ranking[i].1, v.ranking[j].1],
        [&v.samples[i], &v.samples[j]],
        [&v.flagged[i], &v.flagged[j]],
        v.higher_is_better,
        v.step,
    )
}

/// The range of the values of these ranked models.
fn values(v: &Verdict, group: &[usize]) -> String {
    let vals = group.iter().map(|&i| v.ranking[i].1);
    let lo = vals.clone().fold(f64::INFINITY, f64::min);
    let hi = vals.fold(f64::NEG_INFINITY, f64::max);
    fmt_range(v.format, lo, hi)
}

fn names<'a>(v: &'a Verdict, group: &[usize]) -> Vec<&'a str> {
    group.iter().map(|&i| v.ranking[i].0.as_str()).collect()
}

/// "Server CPU per request at connections=1000: epoll and uring tie at 31–35 µs
/// CPU/req; threads ×1.15 (1.05–1.52) of epoll's; select and poll tie at ×2.90–3.02."
pub fn sentence(v: &Verdict) -> String {
    let head = format!("{} at {}: ", v.figure, v.compared_at);
    if let Some(rate) = v.fixed_by_load {
        return format!(
            "{head}fixed by the load, not tied: every model served the {} the open loop \
             offered, so this step did not measure capacity.",
            (v.format)(rate)
        );
    }
    let n = v.ranking.len();
    let (lead, behind): (String, Vec<usize>) = match v.decision {
        Decision::Alone if n == 1 => {
            return format!(
                "{head}{} alone, {}.",
                v.ranking[0].0,
                (v.format)(v.ranking[0].1)
            )
        }
        Decision::Alone => return format!("{head}nothing to compare."),
        Decision::Winner(_) => (
            format!("{} leads at {}", v.ranking[0].0, (v.format)(v.ranking[0].1)),
            (1..n).collect(),
        ),
        Decision::Leaders { count, .. } => {
            let group: Vec<usize> = (0..count).collect();
            (
                format!(
                    "{} lead together at {}, within the noise of each other",
                    join_and(&names(v, &group)),
                    values(v, &group)
                ),
                (count..n).collect(),
            )
        }
        Decision::NoDifference { comparison } => no_lead(v, &comparison),
    };
    let mut parts = vec![lead];
    parts.extend(behind_in_groups(v, &behind));
    format!("{head}{}.", parts.join("; "))
}

/// When no model leads: the models within the noise (or the measurement step) of the
/// best, said with the test's p, and the others, behind it.
fn no_lead(v: &Verdict, comparison: &Comparison) -> (String, Vec<usize>) {
    let noise = if v.tied_by_step {
        format!("the measurement step ({})", (v.format)(v.step))
    } else {
        "the noise".into()
    };
    let (tied, behind): (Vec<usize>, Vec<usize>) =
        (0..v.ranking.len()).partition(|&j| j == 0 || !differs(v, 0, j));
    let lead = match tied.split_first() {
        Some((_, others)) if !others.is_empty() => format!(
            "no model leads: {} within {noise} of {} at {} ({})",
            join_and(&names(v, others)),
            v.ranking[0].0,
            values(v, &tied),
            comparison.describe_p()
        ),
        _ => format!("no model leads ({})", comparison.describe_p()),
    };
    (lead, behind)
}

/// The models `behind` the best, in groups the rule cannot tell apart, each as a ratio
/// to the best.
fn behind_in_groups(v: &Verdict, behind: &[usize]) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = behind;
    while let Some((&first, _)) = rest.split_first() {
        let size = rest
            .iter()
            .take_while(|&&j| j == first || !differs(v, first, j))
            .count();
        let (group, after) = rest.split_at(size);
        let ratios: Vec<_> = group
            .iter()
            .filter_map(|&i| oriented(&v.samples[0], &v.samples[i], v.higher_is_better))
            .collect();
        let who = join_and(&names(v, group));
        parts.push(match ratios.as_slice() {
            [one] if group.len() == 1 => {
                format!(
                    "{who} {} of {}",
                    fmt_ratio_interval(one),
                    possessive(&v.ranking[0].0)
                )
            }
            _ => {
                let lo = ratios.iter().map(|c| c.ratio).fold(f64::INFINITY, f64::min);
                let hi = ratios.iter().map(|c| c.ratio).fold(0.0, f64::max);
                format!(
                    "{who} tie at ×{lo:.2}–{hi:.2} of {}",
                    possessive(&v.ranking[0].0)
                )
            }
        });
        rest = after;
    }
    parts
}

/// A compact dot plot: one row per model, its repetitions' range as a line, its value
/// as a dot, filled for the winner or the leaders. Drawn at its size on the page (one
/// unit a CSS pixel), its labels at the size of the sentence beside it.
fn picture(v: &Verdict) -> String {
    const W: f64 = 228.0;
    const FONT: f64 = 13.0;
    const ROW: f64 = 15.0;
    // An average sans-serif glyph is about 0.6 em wide.
    let longest = v.ranking.iter().map(|(m, _)| m.chars().count()).max();
    let label = (longest.unwrap_or(0) as f64 * FONT * 0.6).clamp(40.0, 110.0);
    let leaders = v.winners().len();
    let range = |i: usize| {
        let s = &v.samples[i];
        let lo = s.iter().copied().fold(v.ranking[i].1, f64::min);
        let hi = s.iter().copied().fold(v.ranking[i].1, f64::max);
        (lo, hi)
    };
    let top = (0..v.ranking.len())
        .map(|i| range(i).1)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let x = |value: f64| label + 8.0 + (value / top).clamp(0.0, 1.0) * (W - label - 16.0);
    let height = ROW * v.ranking.len() as f64 + FONT + 6.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {height}\" \
         width=\"{W}\" height=\"{height}\" role=\"img\" aria-label=\"{}\" \
         font-family=\"sans-serif\" font-size=\"{FONT}\">",
        escape(&v.figure)
    );
    for (i, (model, value)) in v.ranking.iter().enumerate() {
        let y = ROW * i as f64 + ROW / 2.0;
        let (lo, hi) = range(i);
        let lead = i < leaders;
        let (color, weight) = if lead {
            ("#1b6ac9", "bold")
        } else {
            ("#555", "normal")
        };
        svg.push_str(&format!(
            "<text x=\"{label}\" y=\"{:.1}\" text-anchor=\"end\" font-weight=\"{weight}\">{}</text>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" \
             stroke-width=\"2\"/>\
             <circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\" stroke=\"{color}\" stroke-width=\"1.5\" \
             fill=\"{}\"/>",
            y + FONT * 0.35,
            escape(model),
            x(lo),
            x(hi).max(x(lo) + 0.5),
            x(*value),
            if lead { color } else { "#fff" }
        ));
    }
    let axis = height - 4.0;
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{axis}\" fill=\"#444\">0</text>\
         <text x=\"{}\" y=\"{axis}\" text-anchor=\"end\" fill=\"#444\">{}</text></svg>",
        label + 8.0,
        W - 2.0,
        escape(&(v.format)(top))
    ));
    svg
}

/// "epoll's", "threads'": a model's name as the owner of a value.
fn possessive(name: &str) -> String {
    if name.ends_with('s') {
        format!("{name}'")
    } else {
        format!("{name}'s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{decide_robustly, fmt_count, fmt_cpu_per_request, fmt_rate};

    /// A verdict on lower-is-better figures of these models, ranked as given.
    fn verdict(models: &[(&str, Vec<f64>)], step: f64, format: fn(f64) -> String) -> Verdict {
        let samples: Vec<Vec<f64>> = models.iter().map(|(_, s)| s.clone()).collect();
        let flagged: Vec<Vec<bool>> = samples.iter().map(|s| vec![false; s.len()]).collect();
        let decision = decide_robustly(&samples, &flagged, false, step);
        let exact = decide_robustly(&samples, &flagged, false, 0.0);
        Verdict {
            figure: "Figure".into(),
            compared_at: "connections=1000".into(),
            ranking: models
                .iter()
                .map(|(m, s)| (m.to_string(), crate::stats::median(s).unwrap()))
                .collect(),
            samples,
            flagged,
            format,
            higher_is_better: false,
            left_out: (0, 0),
            tied_by_step: step > 0.0
                && std::mem::discriminant(&decision) != std::mem::discriminant(&exact),
            decision,
            step,
            fixed_by_load: None,
        }
    }

    fn around(v: f64) -> Vec<f64> {
        vec![v, v * 1.01, v * 0.99, v * 1.02, v * 0.98]
    }

    #[test]
    fn leaders_tie_and_the_others_stand_as_ratios() {
        let v = verdict(
            &[
                ("epoll", around(31.0)),
                ("uring", around(31.5)),
                ("tokio", around(32.0)),
                ("threads", around(36.0)),
                ("select", around(93.0)),
                ("poll", around(94.0)),
                ("a", around(200.0)),
            ],
            0.0,
            fmt_cpu_per_request,
        );
        let s = sentence(&v);
        assert!(
            s.starts_with(
                "Figure at connections=1000: epoll, uring and tokio lead together at \
                 31.00–32.00 µs CPU/req, within the noise of each other; threads ×1.16 ("
            ),
            "{s}"
        );
        assert!(
            s.contains("; select and poll tie at ×3.00–3.03 of epoll's; a ×6.45 ("),
            "{s}"
        );
    }

    /// `v` named `figure`.
    fn named(mut v: Verdict, figure: &str) -> Verdict {
        v.figure = figure.into();
        v
    }

    #[test]
    fn the_headline_names_the_best_on_decided_figures_and_why_others_are_not() {
        let cpu = named(
            verdict(
                &[("epoll", around(10.0)), ("select", around(30.0))],
                0.0,
                fmt_count,
            ),
            "Server CPU",
        );
        let p50 = named(
            verdict(
                &[("epoll", around(10.0)), ("select", around(10.1))],
                0.0,
                fmt_count,
            ),
            "Response time p50",
        );
        let mut throughput = named(
            verdict(
                &[("select", around(10_000.0)), ("epoll", around(10_000.0))],
                0.0,
                fmt_rate,
            ),
            "Throughput",
        );
        throughput.fixed_by_load = Some(10_000.0);
        assert_eq!(
            headline(&[throughput, cpu, p50], false),
            "epoll is best on the one figure this load decided: Server CPU (×3.00 over \
             select). Not separated by this load: Throughput, fixed by the load, not tied \
             (every model served the 10,000 req/s offered, so capacity was not measured); \
             Response time p50, where the best models are within the noise of each other."
        );
    }

    #[test]
    fn a_model_alone_so_far_is_not_called_the_only_one_while_the_run_goes_on() {
        let alone = [named(
            verdict(&[("epoll", around(10.0))], 0.0, fmt_count),
            "A",
        )];
        assert_eq!(
            headline(&alone, false),
            "Only epoll was measured: there is nothing to compare."
        );
        assert_eq!(
            headline(&alone, true),
            "Only epoll has been measured so far: there is nothing to compare yet."
        );
        assert_eq!(
            headline(&[], true),
            "No figure has been measured yet: there is nothing to compare."
        );
    }

    #[test]
    fn the_headline_groups_figures_by_who_leads_them() {
        let v = |figure: &str, models: &[(&str, Vec<f64>)]| {
            named(verdict(models, 0.0, fmt_count), figure)
        };
        let verdicts = [
            v("A", &[("epoll", around(10.0)), ("select", around(20.0))]),
            v("B", &[("epoll", around(10.0)), ("select", around(15.0))]),
            v("C", &[("select", around(10.0)), ("epoll", around(12.0))]),
        ];
        assert_eq!(
            headline(&verdicts, false),
            "epoll is best on 2 of the 3 figures this load decided: A (×2.00 over select) \
             and B (×1.50 over select). Elsewhere select leads C (×1.20 over epoll)."
        );
    }

    #[test]
    fn a_figure_the_open_loop_fixed_is_said_so_not_tied() {
        let mut v = verdict(
            &[("epoll", around(10_000.0)), ("tokio", around(9_990.0))],
            0.0,
            fmt_rate,
        );
        v.fixed_by_load = Some(10_000.0);
        assert_eq!(
            sentence(&v),
            "Figure at connections=1000: fixed by the load, not tied: every model served the \
             10,000 req/s the open loop offered, so this step did not measure capacity."
        );
    }

    #[test]
    fn a_name_ending_in_s_owns_with_an_apostrophe() {
        assert_eq!(possessive("threads"), "threads'");
        assert_eq!(possessive("epoll"), "epoll's");
    }

    #[test]
    fn a_winner_leads_alone() {
        let v = verdict(
            &[("epoll", around(10.0)), ("select", around(30.0))],
            0.0,
            fmt_count,
        );
        let s = sentence(&v);
        assert!(
            s.starts_with("Figure at connections=1000: epoll leads at 10; select ×3.00 ("),
            "{s}"
        );
    }

    #[test]
    fn a_gap_within_the_measurement_step_is_said_so() {
        // One page at 31 connections: 132 B a connection.
        let poll = vec![2000.0, 2001.0, 2002.0, 2003.0, 2004.0];
        let select: Vec<f64> = poll.iter().map(|v| v + 130.0).collect();
        let v = verdict(
            &[("poll", poll), ("select", select)],
            4096.0 / 31.0,
            fmt_count,
        );
        assert_eq!(
            sentence(&v),
            "Figure at connections=1000: no model leads: select within the measurement step \
             (132) of poll at 2,002–2,132 (p = 0.012, n = 5)."
        );
        assert!(v
            .significance()
            .starts_with("no difference beyond the measurement step of 132"));
    }
}
