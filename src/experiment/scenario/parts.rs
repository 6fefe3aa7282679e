//! Composite scenarios (`parts = [...]`, as `classic` is): a list of built-in
//! scenarios run one after the other, each into a folder of one results directory.

use std::time::Duration;

use super::{parse, ErrAt, Scenario, ScenarioFile, BUILTIN};

/// A scenario made of parts: each part a built-in scenario that is not itself made of
/// parts, and nothing of its own to run.
pub(super) fn composite(
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
    if parts.get_ref().is_empty() {
        return Err(err(Some(parts.span()), "`parts` is empty".into()));
    }
    for part in parts.get_ref() {
        let text = BUILTIN
            .iter()
            .find(|(name, _)| name == part)
            .map(|(_, text)| *text)
            .ok_or_else(|| {
                err(
                    Some(parts.span()),
                    format!("part '{part}' is not a built-in scenario"),
                )
            })?;
        let scenario = parse(&format!("built-in scenario '{part}'"), part, text)?;
        if !scenario.parts.is_empty() {
            return Err(err(
                Some(parts.span()),
                format!("part '{part}' is itself made of parts"),
            ));
        }
    }
    Ok(Scenario {
        name: file
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string()),
        description: file.description.trim().to_string(),
        expected_duration: file.expected_duration.clone(),
        requirements: file.requirements.clone(),
        toml: source.to_string(),
        models: Vec::new(),
        repetitions: 1,
        step_timeout: None,
        pause: Duration::ZERO,
        load: file.load.clone(),
        steps: Vec::new(),
        sweep_axes: Vec::new(),
        failure: file.failure.clone(),
        client_hosts: None,
        network: None,
        own_namespace: false,
        parts: parts.get_ref().clone(),
    })
}
