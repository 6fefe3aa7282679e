//! The sweep expanded into steps: each axis (a list or a range walked by `step`
//! or `factor`) into its values, and every combination into a named [`Step`].

use std::time::Duration;

use toml::Spanned;

use super::file::{Axis, Bytes, Count, Dur, LoadOptions, Rate, ScenarioFile};
use super::{ErrAt, Staircase, Step};
use crate::units::trim_float;

const DEFAULT_CONNECTIONS: u64 = 10;
const DEFAULT_SIZE: u64 = 64;
/// Above this many steps a sweep is surely a typo (a range with a tiny step).
const MAX_STEPS: usize = 10_000;

/// Every step of the sweep, and the axes it sweeps (in results.csv's order).
pub(super) fn steps(
    file: &ScenarioFile,
    load: &LoadOptions,
    staircase: Option<&Staircase>,
    err: ErrAt,
) -> anyhow::Result<(Vec<Step>, Vec<&'static str>)> {
    // Sweep axes, expanded outermost first: workers, size, delay, rate, connections.
    // A staircase's stairs are its steps' connections, innermost: consecutive steps
    // that differ only in connections are one staircase.
    let connections = match staircase {
        Some(s) => s.stairs(),
        None => expand_counts(&file.sweep.connections, "connections", err)?
            .unwrap_or_else(|| vec![load.connections.map_or(DEFAULT_CONNECTIONS, |c| c.0)]),
    };
    let sizes = sizes_axis(file, load, err)?;
    let delays = delays_axis(file, load, err)?;
    let rates = rates_axis(file, load, err)?;
    let workers: Vec<Option<u64>> = match expand_counts(&file.sweep.workers, "workers", err)? {
        Some(list) => list.into_iter().map(Some).collect(),
        None => vec![None],
    };
    let requests: Vec<Option<u64>> = match expand_counts(&file.sweep.requests, "requests", err)? {
        Some(list) => list.into_iter().map(Some).collect(),
        None => vec![None],
    };
    let hosts = client_hosts_axis(file, err)?;
    let axes = swept_axes(file, staircase);
    let total = connections.len()
        * sizes.len()
        * delays.len()
        * rates.len()
        * workers.len()
        * requests.len()
        * hosts.len();
    if total > MAX_STEPS {
        return Err(err(
            None,
            format!("the sweep has {total} steps; at most {MAX_STEPS}"),
        ));
    }
    let mut steps = Vec::new();
    for h in &hosts {
        for n in &requests {
            for w in &workers {
                for size in &sizes {
                    for delay in &delays {
                        for rate in &rates {
                            for c in &connections {
                                steps.push(step(*c, *size, *delay, *rate, *w, *n, *h));
                            }
                        }
                    }
                }
            }
        }
    }
    // Values apart but named alike (a rate or delay past the name's precision) would
    // write one step's folder twice.
    let mut names = std::collections::HashSet::new();
    if let Some(twice) = steps.iter().find(|s| !names.insert(s.name.as_str())) {
        return Err(err(
            None,
            format!(
                "the sweep makes two steps named '{}': make its values further apart",
                twice.name
            ),
        ));
    }
    Ok((steps, axes))
}

/// The message sizes: the `size` sweep, or the one size of `[load]` (or its message).
fn sizes_axis(file: &ScenarioFile, load: &LoadOptions, err: ErrAt) -> anyhow::Result<Vec<u64>> {
    let message_len = load.message.as_ref().map(|m| m.len() as u64);
    let sizes = match &file.sweep.size {
        Some(axis) => expand(
            axis,
            "size",
            err,
            |b: &Bytes| b.0 as f64,
            |v| Bytes(v.round() as u64),
        )?
        .into_iter()
        .map(|b| b.0)
        .collect(),
        None => vec![load
            .size
            .map(|b| b.0)
            .or(message_len)
            .unwrap_or(DEFAULT_SIZE)],
    };
    if let Some(zero) = sizes.iter().position(|s| *s == 0) {
        return Err(err(
            file.sweep.size.as_ref().map(|s| s.span()),
            format!("size {} is 0: messages need at least 1 byte", zero + 1),
        ));
    }
    Ok(sizes)
}

/// The think times: the `delay` sweep, or the one delay of `[load]`.
fn delays_axis(
    file: &ScenarioFile,
    load: &LoadOptions,
    err: ErrAt,
) -> anyhow::Result<Vec<Option<Duration>>> {
    let delays: Vec<Option<Duration>> = match &file.sweep.delay {
        Some(axis) => expand(
            axis,
            "delay",
            err,
            |d: &Dur| d.0.as_secs_f64(),
            |v| Dur(Duration::from_secs_f64(v.max(0.0))),
        )?
        .into_iter()
        .map(|d| Some(d.0))
        .collect(),
        None => vec![load.delay.map(|d| d.0)],
    };
    Ok(delays)
}

/// The open-loop rates: the `rate` sweep, or the one rate of `[load]` (a rate sweep has
/// no delay).
fn rates_axis(
    file: &ScenarioFile,
    load: &LoadOptions,
    err: ErrAt,
) -> anyhow::Result<Vec<Option<f64>>> {
    let rates: Vec<Option<f64>> = match &file.sweep.rate {
        Some(axis) => expand(axis, "rate", &err, |r: &Rate| r.0, Rate)?
            .into_iter()
            .map(|r| Some(r.0))
            .collect(),
        None => vec![load.rate.map(|r| r.0)],
    };
    if file.sweep.rate.is_some() && (load.delay.is_some() || file.sweep.delay.is_some()) {
        return Err(err(
            None,
            "a rate sweep (open loop) cannot have a delay".into(),
        ));
    }
    Ok(rates)
}

/// The names of the axes the scenario sweeps, in the order of the steps' names.
fn swept_axes(file: &ScenarioFile, staircase: Option<&Staircase>) -> Vec<&'static str> {
    let mut axes = Vec::new();
    for (name, present) in [
        (
            "connections",
            file.sweep.connections.is_some() || staircase.is_some(),
        ),
        ("size", file.sweep.size.is_some()),
        ("delay", file.sweep.delay.is_some()),
        ("rate", file.sweep.rate.is_some()),
        ("workers", file.sweep.workers.is_some()),
        ("requests", file.sweep.requests.is_some()),
        ("hosts", file.sweep.hosts.is_some()),
    ] {
        if present {
            axes.push(name);
        }
    }
    axes
}

/// One step, named after its values: `c100-s64`, then `-d10ms`, `-r5000`, `-w4`,
/// `-n50` (requests) and `-h2` (client hosts) for those that are set.
fn step(
    connections: u64,
    size: u64,
    delay: Option<Duration>,
    rate: Option<f64>,
    workers: Option<u64>,
    requests: Option<u64>,
    hosts: Option<u32>,
) -> Step {
    let mut name = format!("c{connections}-s{size}");
    if let Some(d) = delay {
        name += &format!("-d{}ms", trim_float(d.as_secs_f64() * 1e3));
    }
    if let Some(r) = rate {
        // Compact whatever the value (1e15, not sixteen digits): a name is a folder.
        let plain = trim_float(r);
        name += &if plain.len() > 8 {
            format!("-r{r:e}")
        } else {
            format!("-r{plain}")
        };
    }
    if let Some(w) = workers {
        name += &format!("-w{w}");
    }
    if let Some(n) = requests {
        name += &format!("-n{n}");
    }
    if let Some(h) = hosts {
        name += &format!("-h{h}");
    }
    Step {
        name,
        connections,
        size,
        delay,
        rate,
        workers,
        requests,
        hosts,
    }
}

/// The `hosts` axis: each value between 1 and `[hosts] clients` (the namespaces the
/// run creates; a step uses the first N of them).
fn client_hosts_axis(file: &ScenarioFile, err: ErrAt) -> anyhow::Result<Vec<Option<u32>>> {
    let Some(values) = expand_counts(&file.sweep.hosts, "hosts", err)? else {
        return Ok(vec![None]);
    };
    let span = file.sweep.hosts.as_ref().map(|a| a.span());
    let Some(created) = file
        .hosts
        .as_ref()
        .map(|h| h.get_ref().clients.get_ref().count())
    else {
        return Err(err(
            span,
            "a `hosts` sweep needs [hosts] clients (the most client hosts a step uses)".into(),
        ));
    };
    if let Some(v) = values.iter().find(|v| !(1..=created as u64).contains(v)) {
        return Err(err(
            span,
            format!("sweep `hosts`: {v} is not between 1 and [hosts] clients = {created}"),
        ));
    }
    Ok(values.into_iter().map(|v| Some(v as u32)).collect())
}

fn expand_counts(
    axis: &Option<Spanned<Axis<Count>>>,
    name: &str,
    err: ErrAt,
) -> anyhow::Result<Option<Vec<u64>>> {
    match axis {
        Some(axis) => Ok(Some(
            expand(
                axis,
                name,
                err,
                |c: &Count| c.0 as f64,
                |v| Count(v.round() as u64),
            )?
            .into_iter()
            .map(|c| c.0)
            .collect(),
        )),
        None => Ok(None),
    }
}

/// The values of an axis: the list itself, or the range walked by `step` or `factor`.
fn expand<T: Clone>(
    axis: &Spanned<Axis<T>>,
    name: &str,
    err: ErrAt,
    to_f64: impl Fn(&T) -> f64,
    from_f64: impl Fn(f64) -> T,
) -> anyhow::Result<Vec<T>> {
    let span = Some(axis.span());
    match axis.get_ref() {
        Axis::List(list) if list.is_empty() => {
            Err(err(span, format!("sweep `{name}` has no values")))
        }
        Axis::List(list) => {
            // Equal once parsed (`1024` and `"1KiB"`) would be two steps of one name.
            for (j, later) in list.iter().enumerate() {
                if let Some(i) = list[..j].iter().position(|v| to_f64(v) == to_f64(later)) {
                    return Err(err(
                        span,
                        format!(
                            "sweep `{name}`: values {} and {} are equal once parsed ({}); \
                             each value is one step, so list it once",
                            i + 1,
                            j + 1,
                            trim_float(to_f64(later))
                        ),
                    ));
                }
            }
            Ok(list.clone())
        }
        Axis::Range(range) => {
            let (from, to) = (to_f64(&range.from), to_f64(&range.to));
            if from > to {
                return Err(err(span, format!("sweep `{name}`: from is larger than to")));
            }
            let mut values = Vec::new();
            let mut v = from;
            match (&range.step, range.factor) {
                (Some(step), None) if to_f64(step) > 0.0 => {
                    let step = to_f64(step);
                    while v <= to + 1e-9 && values.len() <= MAX_STEPS {
                        values.push(from_f64(v));
                        v += step;
                    }
                }
                (None, Some(factor)) if factor > 1.0 && from > 0.0 => {
                    while v <= to + 1e-9 && values.len() <= MAX_STEPS {
                        values.push(from_f64(v));
                        v *= factor;
                    }
                }
                _ => {
                    return Err(err(
                        span,
                        format!(
                            "sweep `{name}`: a range needs exactly one of `step` (> 0) or `factor` (> 1, with from > 0)"
                        ),
                    ))
                }
            }
            // A factor's values rounded to whole units can meet: one step each.
            values.dedup_by(|a, b| to_f64(a) == to_f64(b));
            Ok(values)
        }
    }
}
