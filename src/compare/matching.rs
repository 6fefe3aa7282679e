//! Which step of OLD is which step of NEW: a model's steps matched by their parameters
//! (connections, size, delay, rate, ... : the report's axes), never by position; and
//! whether the two runs are comparable at all (their manifests side by side).

use std::collections::{BTreeMap, HashMap, VecDeque};

use anyhow::bail;

use crate::results::reader::{Results, Row, AXES};
use crate::results::{column, Manifest};
use crate::units::fmt_bytes;

/// One step of one model: its repetitions, and the parameters that identify it.
pub struct ModelStep<'a> {
    pub model: String,
    pub name: String,
    /// (results.csv column, value as written) for every axis the step has a value for.
    pub params: Vec<(&'static str, String)>,
    pub rows: Vec<&'a Row>,
}

impl ModelStep<'_> {
    /// "epoll c100-s64 (connections 100, size 64)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({})",
            self.model,
            self.name,
            describe_params(&self.params)
        )
    }
}

/// "connections 100, size 64".
pub fn describe_params(params: &[(&'static str, String)]) -> String {
    let parts: Vec<String> = params.iter().map(|(c, v)| format!("{c} {v}")).collect();
    parts.join(", ")
}

/// The steps of both sides that match, and what is on one side only.
pub struct Pairs<'a> {
    pub matched: Vec<(ModelStep<'a>, ModelStep<'a>)>,
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
    /// Matched steps whose servers chose differently (their worker count).
    pub warnings: Vec<String>,
}

/// The parameters a step is matched by: what the scenario set. The worker count is the
/// server's own choice (epoll takes 2 by default, select 1, a command server says none)
/// unless the scenario sweeps it, so it counts only when both sides' model varies it.
fn key(step: &ModelStep, workers_swept: bool) -> Vec<(&'static str, String)> {
    step.params
        .iter()
        .filter(|(c, _)| workers_swept || *c != column::WORKERS)
        .cloned()
        .collect()
}

/// Whether a model's steps vary their worker count: a sweep axis of the scenario's.
fn sweeps_workers(steps: &[ModelStep]) -> bool {
    let workers = |s: &ModelStep| {
        s.params
            .iter()
            .find(|(c, _)| *c == column::WORKERS)
            .cloned()
    };
    steps.iter().any(|s| workers(s) != workers(&steps[0]))
}

/// What a matched pair's servers chose differently, as a warning.
fn chose_differently(a: &ModelStep, b: &ModelStep) -> Option<String> {
    let workers = |s: &ModelStep| {
        s.params
            .iter()
            .find(|(c, _)| *c == column::WORKERS)
            .map_or("none said".to_string(), |(_, v)| v.clone())
    };
    let (x, y) = (workers(a), workers(b));
    (x != y).then(|| {
        format!(
            "{} {} → {} {}: workers differ (OLD {x}, NEW {y}): the servers chose them, not \
             the scenario; the figures may show it",
            a.model, a.name, b.model, b.name
        )
    })
}

/// Why nothing of `old` matches `new` (two models' steps): the parameters that differ
/// between the closest pair, each with both values.
fn closest_difference(old: &[ModelStep], new: &[ModelStep], workers_swept: bool) -> Option<String> {
    let differing = |a: &ModelStep, b: &ModelStep| -> Vec<String> {
        let (ka, kb) = (key(a, workers_swept), key(b, workers_swept));
        let value = |k: &[(&str, String)], c: &str| {
            k.iter()
                .find(|(x, _)| *x == c)
                .map_or("none".to_string(), |(_, v)| v.clone())
        };
        AXES.iter()
            .filter(|c| value(&ka, c) != value(&kb, c))
            .map(|c| format!("{c} (OLD {}, NEW {})", value(&ka, c), value(&kb, c)))
            .collect()
    };
    let (a, b, diff) = old
        .iter()
        .flat_map(|a| new.iter().map(move |b| (a, b)))
        .map(|(a, b)| (a, b, differing(a, b)))
        .min_by_key(|(_, _, d)| d.len())?;
    Some(format!(
        "OLD {} {} and NEW {} {} differ in {}",
        a.model,
        a.name,
        b.model,
        b.name,
        diff.join(", ")
    ))
}

/// The models in `results` in the order their first row comes.
fn models(results: &Results) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for row in &results.rows {
        if !models.contains(&row.model) {
            models.push(row.model.clone());
        }
    }
    models
}

/// `model`'s steps in `results`, in the order their first row comes.
fn steps<'a>(results: &'a Results, model: &str) -> Vec<ModelStep<'a>> {
    let mut steps: Vec<ModelStep<'a>> = Vec::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for row in results.rows.iter().filter(|r| r.model == model) {
        match by_name.get(row.step.as_str()) {
            Some(&i) => steps[i].rows.push(row),
            None => {
                by_name.insert(&row.step, steps.len());
                steps.push(ModelStep {
                    model: model.to_string(),
                    name: row.step.clone(),
                    params: AXES
                        .iter()
                        .filter(|&&c| !row.raw(c).is_empty())
                        .map(|&c| (c, row.raw(c).to_string()))
                        .collect(),
                    rows: vec![row],
                })
            }
        }
    }
    steps
}

/// Pairs the steps of OLD and NEW: each model of both (or the two `models` given, OLD's
/// and NEW's), each step by its parameters; steps with the same parameters (a
/// staircase's stair and its hold) in the order they come. An error when nothing matches.
pub fn pair<'a>(
    old: &'a Results,
    new: &'a Results,
    models_given: Option<(&str, &str)>,
) -> anyhow::Result<Pairs<'a>> {
    let (old_models, new_models) = (models(old), models(new));
    let mut pairs = Pairs {
        matched: Vec::new(),
        only_old: Vec::new(),
        only_new: Vec::new(),
        warnings: Vec::new(),
    };
    let model_pairs: Vec<(String, String)> = match models_given {
        Some((a, b)) => {
            for (model, side, present) in [(a, "OLD", &old_models), (b, "NEW", &new_models)] {
                if !present.iter().any(|m| m == model) {
                    bail!(
                        "{side} has no model '{model}' (its models: {})",
                        present.join(", ")
                    );
                }
            }
            vec![(a.to_string(), b.to_string())]
        }
        None => {
            for m in old_models.iter().filter(|m| !new_models.contains(m)) {
                pairs.only_old.push(format!("model {m} (every step)"));
            }
            for m in new_models.iter().filter(|m| !old_models.contains(m)) {
                pairs.only_new.push(format!("model {m} (every step)"));
            }
            old_models
                .iter()
                .filter(|m| new_models.contains(m))
                .map(|m| (m.clone(), m.clone()))
                .collect()
        }
    };
    let mut why_none = Vec::new();
    for (a, b) in &model_pairs {
        let (old_steps, new_steps) = (steps(old, a), steps(new, b));
        let swept = sweeps_workers(&old_steps) && sweeps_workers(&new_steps);
        // NEW's steps by their key, each key's in the order they come.
        let mut by_key: HashMap<Vec<(&'static str, String)>, VecDeque<usize>> = HashMap::new();
        for (i, s) in new_steps.iter().enumerate() {
            by_key.entry(key(s, swept)).or_default().push_back(i);
        }
        let mut new_steps: Vec<Option<ModelStep>> = new_steps.into_iter().map(Some).collect();
        let mut unmatched_old = Vec::new();
        for old_step in old_steps {
            let found = by_key
                .get_mut(&key(&old_step, swept))
                .and_then(VecDeque::pop_front)
                .and_then(|i| new_steps[i].take());
            match found {
                Some(new_step) => {
                    pairs
                        .warnings
                        .extend(chose_differently(&old_step, &new_step));
                    pairs.matched.push((old_step, new_step));
                }
                None => {
                    pairs.only_old.push(old_step.describe());
                    unmatched_old.push(old_step);
                }
            }
        }
        let unmatched_new: Vec<ModelStep> = new_steps.into_iter().flatten().collect();
        pairs
            .only_new
            .extend(unmatched_new.iter().map(ModelStep::describe));
        // Said only when nothing matches; a few steps of each side are enough to say it.
        let few = |steps: &[ModelStep<'a>]| steps.len().min(CLOSEST);
        why_none.extend(closest_difference(
            &unmatched_old[..few(&unmatched_old)],
            &unmatched_new[..few(&unmatched_new)],
            swept,
        ));
    }
    if pairs.matched.is_empty() {
        let why = match why_none.first() {
            Some(why) => format!("{why}; steps are matched by what the scenario set"),
            None => format!(
                "they have no model in common (OLD: {}; NEW: {}); name one of each with \
                 --models OLD_MODEL,NEW_MODEL",
                list(&old_models),
                list(&new_models)
            ),
        };
        bail!("no step of OLD matches a step of NEW: {why}; these runs cannot be compared");
    }
    Ok(pairs)
}

/// The steps of each side searched for the closest pair when nothing matches.
const CLOSEST: usize = 32;

/// "a, b", or "none".
fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// What differs between the two runs' manifests in what they ran on and how: each a
/// sentence naming both values. Nothing for one run compared with itself.
pub fn warnings(old: &Manifest, new: &Manifest) -> Vec<String> {
    let mut pairs = machine_pairs(old, new);
    pairs.extend(scenario_definition(old, new));
    let limits = |m: &Manifest| -> BTreeMap<String, String> {
        m.conditions
            .server_limits
            .iter()
            .map(|(model, l)| (model.clone(), l.describe()))
            .collect()
    };
    for (model, a, b) in keyed(limits(old), limits(new), "none") {
        pairs.push((format!("{model}'s cgroup limit"), a, b));
    }
    let shaping = |m: &Manifest| {
        m.conditions
            .network
            .as_ref()
            .map_or("none".into(), |s| s.describe())
    };
    pairs.push(("network shaping".into(), shaping(old), shaping(new)));
    let sysctls = |m: &Manifest| -> BTreeMap<String, String> {
        m.sysctls
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), String::from)))
            .collect()
    };
    pairs.extend(keyed(sysctls(old), sysctls(new), "unset"));
    let mut out: Vec<String> = pairs
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("{what} differs: OLD {a}, NEW {b}"))
        .collect();
    for (side, m) in [("OLD", old), ("NEW", new)] {
        if m.interrupted || (!m.status.is_empty() && m.status != "complete") {
            out.push(format!(
                "{side} is not a complete run (status {})",
                if m.status.is_empty() {
                    "unknown"
                } else {
                    &m.status
                }
            ));
        }
    }
    out
}

/// (what, OLD's, NEW's) for the machine, the build, the fd limit and the scenario's name.
fn machine_pairs(old: &Manifest, new: &Manifest) -> Vec<(String, String, String)> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let num = |v: Option<u64>| v.map_or("unknown".into(), |v| v.to_string());
    let memory = |m: &Manifest| {
        m.memory_bytes
            .map_or("unknown".into(), |b| fmt_bytes(b as f64))
    };
    let version = |m: &Manifest| match (&m.echolab_version, &m.git_revision) {
        (Some(v), Some(g)) => format!("{v} ({g})"),
        (v, _) => opt(v),
    };
    let fd_limit = |m: &Manifest| format!("{}/{}", num(m.fd_limit_soft), num(m.fd_limit_hard));
    [
        ("kernel", opt(&old.kernel), opt(&new.kernel)),
        ("CPU", opt(&old.cpu_model), opt(&new.cpu_model)),
        ("core count", num(old.cores), num(new.cores)),
        ("memory", memory(old), memory(new)),
        ("echolab version", version(old), version(new)),
        ("fd limit", fd_limit(old), fd_limit(new)),
        ("scenario", opt(&old.scenario_name), opt(&new.scenario_name)),
    ]
    .into_iter()
    .map(|(what, a, b)| (what.to_string(), a, b))
    .collect()
}

/// The first line (neither blank nor a comment) where one scenario's definition differs
/// from the other's, when both runs ran the scenario of one name.
fn scenario_definition(old: &Manifest, new: &Manifest) -> Option<(String, String, String)> {
    if old.scenario_toml == new.scenario_toml || old.scenario_name != new.scenario_name {
        return None;
    }
    let lines = |m: &Manifest| -> Vec<String> {
        m.scenario_toml
            .as_deref()
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    let (a, b) = (lines(old), lines(new));
    let (x, y) = a
        .iter()
        .zip(b.iter().chain(std::iter::repeat(&String::new())))
        .find(|(x, y)| x != y)
        .map(|(x, y)| (x.clone(), y.clone()))
        .or_else(|| b.get(a.len()).map(|y| (String::new(), y.clone())))?;
    let shown = |l: String| if l.is_empty() { "(nothing)".into() } else { l };
    Some((
        "scenario definition".into(),
        format!("`{}`", shown(x)),
        format!("`{}`", shown(y)),
    ))
}

/// (key, OLD's, NEW's) for every key of either map, OLD's keys first, `missing` where a
/// side has none.
fn keyed(
    a: BTreeMap<String, String>,
    b: BTreeMap<String, String>,
    missing: &str,
) -> Vec<(String, String, String)> {
    let get =
        |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_else(|| missing.into());
    a.keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .map(|k| (k.clone(), get(&a, k), get(&b, k)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_that_differ_name_both_values() {
        let old = Manifest {
            kernel: Some("6.1.0".into()),
            cores: Some(2),
            scenario_name: Some("tiny".into()),
            scenario_toml: Some("name = \"tiny\"\n[load]\nsize = 32\n".into()),
            status: "complete".into(),
            ..Manifest::default()
        };
        assert!(warnings(&old, &old).is_empty());
        let new = Manifest {
            kernel: Some("6.8.0".into()),
            cores: Some(4),
            scenario_toml: Some("name = \"tiny\"\n[load]\nsize = 64\n".into()),
            ..old.clone()
        };
        assert_eq!(
            warnings(&old, &new),
            [
                "kernel differs: OLD 6.1.0, NEW 6.8.0",
                "core count differs: OLD 2, NEW 4",
                "scenario definition differs: OLD `size = 32`, NEW `size = 64`",
            ]
        );
    }
}
