//! The last validation phase: what would make every step fail once started, checked
//! with the load generator's own rules before anything runs.

use std::ops::Range;
use std::path::Path;

use super::configs::load_config;
use super::file::{LoadOptions, ScenarioFile};
use super::validate::value_span;
use super::{ErrAt, Step};
use crate::load::schedule::Plan;
use crate::units::trim_float;

/// The largest payload file `load` accepts.
const MAX_PAYLOAD: u64 = crate::load::schedule::MAX_MESSAGE;

/// The longest `pause` between steps.
const MAX_PAUSE: std::time::Duration = std::time::Duration::from_secs(3600);

/// What would make every step fail once started, checked now with the load
/// generator's own rules: a zero step timeout, a payload file that is missing or
/// out of bounds, and each step's load as `load` validates it (sizes, counts,
/// timeouts), including more connections than the local port range can open.
pub(super) fn steps_can_run(
    file: &ScenarioFile,
    load: &LoadOptions,
    steps: &[Step],
    source: &str,
    err: ErrAt,
) -> anyhow::Result<()> {
    let span = |path: &[&str]| value_span(source, path);
    if file.step_timeout.is_some_and(|t| t.0.is_zero()) {
        return Err(err(
            span(&["step_timeout"]),
            "step_timeout must be above 0: every step would time out at once".into(),
        ));
    }
    if let Some(pause) = file.pause.filter(|p| p.0 > MAX_PAUSE) {
        return Err(err(
            span(&["pause"]),
            format!(
                "pause = {} s is over an hour: it waits between every two steps (TIME_WAIT \
                 lasts 60 s), and a longer one only stalls the run",
                trim_float(pause.0.as_secs_f64())
            ),
        ));
    }
    if let Some(path) = &load.payload_file {
        check_payload_file(Path::new(path))
            .map_err(|m| err(span(&["load", "payload_file"]), format!("payload_file {m}")))?;
    }
    let hosts = file
        .hosts
        .as_ref()
        .map(|h| h.get_ref().clients.get_ref().count());
    let any_target = std::net::SocketAddr::from(([127, 0, 0, 1], 7));
    for step in steps {
        let mut args = load_config(load, step, any_target, Path::new("load"));
        if args.payload_file.is_some() {
            // Checked above; not read again for every step.
            args.payload_file = None;
            args.size = Some(1);
        }
        if let Some(n) = hosts {
            args.shard = Some(format!("0/{n}"));
        }
        let plan = Plan::from_args(&args).map_err(|m| {
            err(
                flag_span(&m, &span),
                format!(
                    "step {}: the load generator would refuse it: {m}",
                    step.name
                ),
            )
        })?;
        if let Some((low, high)) = crate::load::preflight::port_range() {
            let ports = high.saturating_sub(low) + 1;
            let sources = plan.source_addrs.len().max(1) as u64;
            if plan.connections() > ports * sources {
                return Err(err(
                    span(&["sweep", "connections"]).or_else(|| span(&["load", "connections"])),
                    format!(
                        "step {} opens {} connections from each client, more than the {ports} local \
                         ports ({low}-{high}) times {sources} source address(es): add source_addrs \
                         (or [hosts] clients), or widen net.ipv4.ip_local_port_range",
                        step.name,
                        plan.connections()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A payload file must be a readable regular file of 1 B to 16 MiB.
fn check_payload_file(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() == 0 || meta.len() > MAX_PAYLOAD {
        return Err(format!(
            "{} has {} bytes; a message is 1 B to 16 MiB",
            path.display(),
            meta.len()
        ));
    }
    std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The scenario key a load generator's message is about: its `--flag` as a sweep
/// axis or a `[load]` key, or the `[load]` table.
fn flag_span(
    message: &str,
    span: &dyn Fn(&[&str]) -> Option<Range<usize>>,
) -> Option<Range<usize>> {
    let key = message
        .strip_prefix("--")
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .next()
        })
        .map(|flag| flag.replace('-', "_"));
    let keys: Vec<String> = match key {
        Some(key) => vec![key],
        None => vec!["message".into(), "payload_file".into(), "size".into()],
    };
    keys.iter()
        .find_map(|k| span(&["sweep", k]).or_else(|| span(&["load", k])))
        .or_else(|| span(&["load"]))
}
