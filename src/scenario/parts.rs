//! Composite scenarios (`parts = [...]`, as `classic` is): a list of scenarios
//! (built-in names, or files beside the composite one) run one after the other,
//! each into a folder of one results directory named after the part.

use std::path::Path;

use super::{locate, parse, ErrAt, Scenario, ScenarioFile, BUILTIN};

/// One part of a composite scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The part scenario's name: the folder its results go to.
    pub name: String,
    /// What [`locate`] finds it by: a built-in name or a path.
    pub locator: String,
}

/// A scenario made of parts: each part a scenario that is not itself made of parts,
/// and nothing of its own to run.
pub(super) fn composite(
    origin: &str,
    file: &ScenarioFile,
    parts: &toml::Spanned<Vec<String>>,
    default_name: &str,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<Scenario> {
    if file.models.is_some() || file.hosts.is_some() || file.network.is_some() {
        return Err(err(
            Some(parts.span()),
            "a scenario with `parts` runs its parts' models and load, so it cannot have \
             `models`, [hosts] or [network] of its own"
                .into(),
        ));
    }
    if !file.thresholds.is_empty() {
        // Never judged otherwise: each part's run judges its own scenario's.
        return Err(err(
            Some(parts.span()),
            "a scenario with `parts` cannot have [thresholds] of its own: each part is \
             judged by its own scenario's [thresholds]; put them there"
                .into(),
        ));
    }
    if parts.get_ref().is_empty() {
        return Err(err(Some(parts.span()), "`parts` is empty".into()));
    }
    let mut found: Vec<Part> = Vec::new();
    for part in parts.get_ref() {
        let at = |message: String| err(Some(parts.span()), format!("part '{part}': {message}"));
        let locator = if BUILTIN.iter().any(|(name, _)| name == part) {
            part.clone()
        } else {
            // A file part is found beside the composite scenario's file.
            let beside = Path::new(origin).parent().unwrap_or(Path::new("."));
            let path = beside.join(part);
            if !path.is_file() {
                return Err(at(format!(
                    "neither a built-in scenario nor a file ({} does not exist)",
                    path.display()
                )));
            }
            path.to_string_lossy().into_owned()
        };
        let (part_origin, name, text) = locate(&locator)?;
        // Refused before it is parsed: a part made of parts could name this very file
        // (`parts = ["self.toml"]`, or a -> b -> a), and parsing it would never end.
        if let Ok(ScenarioFile {
            parts: Some(inner), ..
        }) = toml::from_str(&text)
        {
            return Err(at(format!(
                "it is itself made of parts{}",
                cycle(origin, &locator, inner.get_ref())
            )));
        }
        let scenario = parse(&part_origin, &name, &text)?;
        if let Some(why) = super::not_one_folder(&scenario.name) {
            return Err(at(format!(
                "its name {:?} {why}: it becomes one folder name inside the results directory",
                scenario.name
            )));
        }
        if found.iter().any(|p| p.name == scenario.name) {
            return Err(at(format!(
                "another part is also named '{}' (each part's results go to the folder of its name)",
                scenario.name
            )));
        }
        found.push(Part {
            name: scenario.name,
            locator,
        });
    }
    Ok(Scenario {
        parts: found,
        ..Scenario::of_file(file, default_name, source)
    })
}

/// ` (a cycle: a.toml -> b.toml -> a.toml)` when the part at `part` (itself made of
/// `inner` parts) is the composite file `origin` or lists it; empty otherwise.
fn cycle(origin: &str, part: &str, inner: &[String]) -> String {
    let canonical = |p: &Path| p.canonicalize().ok();
    let Some(own) = canonical(Path::new(origin)) else {
        return String::new();
    };
    if canonical(Path::new(part)).as_ref() == Some(&own) {
        return format!(" (a cycle: {origin} -> {origin})");
    }
    let beside = Path::new(part).parent().unwrap_or(Path::new("."));
    if inner
        .iter()
        .any(|p| canonical(&beside.join(p)).as_ref() == Some(&own))
    {
        return format!(" (a cycle: {origin} -> {part} -> {origin})");
    }
    String::new()
}
