//! Sweeps: which column each chart's x axis is, and the per-point aggregates
//! (mean, min and max over repetitions) that the charts and tables share.

use std::collections::BTreeSet;

use crate::results::reader::{Results, Row, Status, AXES};

/// The other swept columns and their values: what one sweep holds constant.
type Fixed = Vec<(String, String)>;

pub struct Sweep {
    /// The column on the x axis.
    pub axis: String,
    /// The other swept columns and the value they have in this sweep.
    pub fixed: Fixed,
    /// Indices into Results::rows with a value on `axis`.
    pub rows: Vec<usize>,
    /// The distinct x values, ascending.
    pub xs: Vec<f64>,
}

impl Sweep {
    pub fn title(&self) -> String {
        let name = axis_name(&self.axis);
        let mut title = name[..1].to_uppercase() + &name[1..] + " sweep";
        if !self.fixed.is_empty() {
            let fixed: Vec<String> = self.fixed.iter().map(|(a, v)| format!("{a}={v}")).collect();
            title.push_str(&format!(" ({})", fixed.join(", ")));
        }
        title
    }

    /// A file-name-safe identifier, unique among the sweeps of one report.
    pub fn slug(&self) -> String {
        let mut slug = self.axis.clone();
        for (axis, value) in &self.fixed {
            slug.push('-');
            slug.push_str(axis);
            slug.extend(
                value
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '.'),
            );
        }
        slug
    }

    pub fn rows<'a>(&'a self, results: &'a Results) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows.iter().map(move |&i| &results.rows[i])
    }

    pub fn x_of(&self, row: &Row) -> Option<f64> {
        row.num(&self.axis)
    }

    /// One model's rows grouped by x, ascending, in one pass over the sweep (a sweep of
    /// thousands of steps is read once per model, not once per step).
    pub fn by_x<'a>(&'a self, results: &'a Results, model: &str) -> Points<'a> {
        let mut groups: Vec<(f64, Vec<&Row>)> = self.xs.iter().map(|&x| (x, Vec::new())).collect();
        for row in self.rows(results).filter(|r| r.model == model) {
            let Some(x) = self.x_of(row) else { continue };
            if let Ok(i) = self.xs.binary_search_by(|probe| probe.total_cmp(&x)) {
                groups[i].1.push(row);
            }
        }
        groups.retain(|(_, rows)| !rows.is_empty());
        groups
    }
}

/// One model's rows at each x of a sweep, ascending.
pub type Points<'a> = Vec<(f64, Vec<&'a Row>)>;

/// Plain name of a sweep axis, as used in headings and sentences.
pub fn axis_name(axis: &str) -> &str {
    match axis {
        "connections" => "connections",
        "size" => "message size",
        "delay_ms" => "delay",
        "rate" => "request rate",
        "workers" => "workers",
        "requests_per_conn" => "requests per connection",
        "client_hosts" => "client hosts",
        other => other,
    }
}

/// The x axis description, with its unit.
pub fn axis_desc(axis: &str) -> String {
    match axis {
        "connections" => "concurrent connections".into(),
        "size" => "message size (bytes)".into(),
        "delay_ms" => "delay between requests (ms)".into(),
        "rate" => "offered rate (requests/s, all connections)".into(),
        "workers" => "server worker threads".into(),
        "requests_per_conn" => "requests per connection".into(),
        "client_hosts" => "client hosts (network namespaces)".into(),
        other => other.into(),
    }
}

/// "connections=2000", "size=1024", as written in notes and findings.
pub fn at(axis: &str, x: f64) -> String {
    format!("{axis}={}", plain_number(x))
}

/// Integers without a fraction, others as written.
pub fn plain_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Models in the manifest's order, then any others in order of appearance.
pub fn models(results: &Results) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for m in results
        .manifest
        .models
        .iter()
        .chain(results.rows.iter().map(|r| &r.model))
    {
        if !models.contains(m) && results.rows.iter().any(|r| &r.model == m) {
            models.push(m.clone());
        }
    }
    models
}

/// The swept columns: the manifest's sweep_axes, or else every axis column that
/// takes more than one value within some model (a column that differs only
/// between models, like workers, is a model setting, not a sweep).
pub fn swept_axes(results: &Results) -> Vec<String> {
    let declared: Vec<String> = results
        .manifest
        .sweep_axes
        .iter()
        // Older manifests name axes as [sweep] does (`delay`), newer ones by column.
        .map(|a| crate::results::axis_column(a).to_string())
        .filter(|a| AXES.contains(&a.as_str()))
        .collect();
    if !declared.is_empty() {
        return declared;
    }
    let mut varying = Vec::new();
    for axis in AXES {
        let varies = models(results).iter().any(|m| {
            let values: BTreeSet<String> = results
                .rows
                .iter()
                .filter(|r| &r.model == m)
                .map(|r| r.raw(axis))
                .collect();
            values.len() > 1
        });
        if varies {
            varying.push(axis.to_string());
        }
    }
    if varying.is_empty() {
        // Nothing varies: still chart against connections, a sweep of one point.
        varying.push("connections".into());
    }
    varying
}

pub fn sweeps(results: &Results) -> Vec<Sweep> {
    let axes = swept_axes(results);
    let mut sweeps = Vec::new();
    for axis in &axes {
        let others: Vec<&String> = axes.iter().filter(|a| *a != axis).collect();
        let mut groups: Vec<(Fixed, Vec<usize>)> = Vec::new();
        let mut index: std::collections::BTreeMap<Fixed, usize> = Default::default();
        for (i, row) in results.rows.iter().enumerate() {
            if row.num(axis).is_none() {
                continue;
            }
            let key: Fixed = others
                .iter()
                .map(|a| (a.to_string(), row.raw(a).to_string()))
                .collect();
            match index.get(&key) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push((key, vec![i]));
                }
            }
        }
        for (fixed, rows) in groups {
            let mut xs: Vec<f64> = rows
                .iter()
                .filter_map(|&i| results.rows[i].num(axis))
                .collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            sweeps.push(Sweep {
                axis: axis.clone(),
                fixed,
                rows,
                xs,
            });
        }
    }
    sweeps
}

/// One x value of one model: the successful repetitions' mean, min and max.
#[derive(Debug, Clone, Copy)]
pub struct Agg {
    pub x: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// Aggregates `value` over the repetitions with status ok, per x.
pub fn aggregate(
    results: &Results,
    sweep: &Sweep,
    model: &str,
    value: &dyn Fn(&Row) -> Option<f64>,
) -> Vec<Agg> {
    sweep
        .by_x(results, model)
        .into_iter()
        .filter_map(|(x, rows)| {
            let values: Vec<f64> = rows
                .into_iter()
                .filter(|r| r.status == Status::Ok)
                .filter_map(value)
                .filter(|v| v.is_finite())
                .collect();
            if values.is_empty() {
                return None;
            }
            let sum: f64 = values.iter().sum();
            Some(Agg {
                x,
                mean: sum / values.len() as f64,
                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                n: values.len(),
            })
        })
        .collect()
}

/// A point of a sweep where some repetition did not finish as ok.
pub struct Problem<'a> {
    pub x: f64,
    pub status: Status,
    pub rows: Vec<&'a Row>,
    /// Repetitions at this point, whatever their status.
    pub total: usize,
}

impl Problem<'_> {
    /// The distinct failure reasons, joined.
    pub fn reasons(&self) -> String {
        let mut reasons: Vec<&str> = Vec::new();
        for row in &self.rows {
            let reason = row.failure_reason.trim();
            if !reason.is_empty() && !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
        if reasons.is_empty() {
            "no reason recorded".into()
        } else {
            reasons.join("; ")
        }
    }
}

/// Failed, interrupted or skipped points of one model (`statuses` selects which).
pub fn problems<'a>(
    results: &'a Results,
    sweep: &'a Sweep,
    model: &str,
    statuses: &[Status],
) -> Vec<Problem<'a>> {
    let mut out = Vec::new();
    for (x, at_x) in sweep.by_x(results, model) {
        for &status in statuses {
            let rows: Vec<&Row> = at_x
                .iter()
                .copied()
                .filter(|r| r.status == status)
                .collect();
            if !rows.is_empty() {
                out.push(Problem {
                    x,
                    status,
                    rows,
                    total: at_x.len(),
                });
            }
        }
    }
    out
}
