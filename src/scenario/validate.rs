//! The validation phases of a scenario: which models run and with what options
//! (plain models and `[model.LABEL]` variants), the load shape's mutually
//! exclusive keys, and the emulated hosts against the expanded steps.

use std::ops::Range;

use toml::Spanned;

use super::file::{ClientHosts, HostsFile, LoadOptions, NetworkFile, ScenarioFile};
use super::lab_sysctls::{parse_port_range, LabSysctls};
use super::ssh_hosts::{SshHosts, SshUrl};
use super::{ErrAt, ModelEntry, ModelKind, Step};
use crate::server::Model;

/// The model entries: plain model names, or variant labels defined by a
/// `[model.LABEL]` table with `base`; every model when `models` is absent.
pub(super) fn models(
    file: &ScenarioFile,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<Vec<ModelEntry>> {
    let listed = listed_models(file, source, err)?;
    if let Some(base) = file.server.base {
        return Err(err(
            value_span(source, &["server", "base"]),
            format!("[server] cannot have `base` (= {base}); it belongs in a [model.NAME] table"),
        ));
    }
    let mut models = Vec::new();
    for entry in &listed {
        let label = entry.get_ref().as_str();
        let span = (entry.span() != (0..0)).then(|| entry.span());
        if models.iter().any(|m: &ModelEntry| m.label == label) {
            return Err(err(span, format!("model '{label}' is listed twice")));
        }
        if let Some(why) = not_a_label(label) {
            return Err(err(
                span,
                format!(
                    "`models`: label {label:?} {why}: it becomes one folder name inside the \
                     results directory (letters, digits, `-`, `_`, `.` inside)"
                ),
            ));
        }
        let own = file.model.get(label);
        if let Some(command) = own.and_then(|o| o.get_ref().command.clone()) {
            let table = own.expect("a command comes from its table");
            models.push(command_entry(file, label, table, command, err)?);
            continue;
        }
        models.push(builtin_entry(file, label, span, own, source, err)?);
    }
    for (label, table) in &file.model {
        if !models.iter().any(|m| &m.label == label) {
            return Err(err(
                Some(table.span()),
                format!("[model.{label}] is not in `models`; add it there or remove the table"),
            ));
        }
    }
    Ok(models)
}

/// The labels `models` lists, or every built-in model when it is absent; never none.
fn listed_models(
    file: &ScenarioFile,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<Vec<Spanned<String>>> {
    let listed: Vec<Spanned<String>> = match &file.models {
        Some(models) => models.clone(),
        None => Model::ALL
            .iter()
            .map(|m| Spanned::new(0..0, m.name().to_string()))
            .collect(),
    };
    if listed.is_empty() {
        return Err(err(
            value_span(source, &["models"]),
            "`models` is empty: name at least one model".into(),
        ));
    }
    Ok(listed)
}

/// An entry run by one of echolab's own models: a plain model name, or a variant with
/// `base`, its options `[server]` overlaid with its own table.
fn builtin_entry(
    file: &ScenarioFile,
    label: &str,
    span: Option<Range<usize>>,
    own: Option<&Spanned<super::ServerOptions>>,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<ModelEntry> {
    if file.server.command.is_some() {
        return Err(err(
            value_span(source, &["server", "command"]),
            "[server] cannot have `command`; it belongs in a [model.NAME] table".into(),
        ));
    }
    let model = builtin_model(label, span, own, err)?;
    let mut options = match own {
        Some(o) => file.server.overlaid(o.get_ref()),
        None => file.server.clone(),
    };
    if let Some(profile) = options.profile {
        profile.fill(&mut options, super::machine_clock_mhz);
    }
    if let Some(p) = options.processes {
        if p.0 > 1 && !model.supports_processes() {
            return Err(err(
                own.map(|o| o.span()),
                format!(
                    "model '{label}' ({model}) cannot run with processes = {}",
                    p.0
                ),
            ));
        }
    }
    if let Some(work) = options.work_us.filter(|w| w.0 > crate::server::MAX_WORK_US) {
        // `serve --work-us` would refuse it at every step: refused here, where it is written.
        return Err(err(
            value_span(source, &["server", "work_us"]).or(own.map(|o| o.span())),
            format!(
                "model '{label}': work_us = {} is more than {} (1 s of CPU per read)",
                work.0,
                crate::server::MAX_WORK_US
            ),
        ));
    }
    Ok(ModelEntry {
        label: label.to_string(),
        kind: ModelKind::Builtin(model),
        options,
    })
}

/// The model a label runs: its table's `base`, or the label itself when it names a model
/// (a variant may not rename a model into another).
fn builtin_model(
    label: &str,
    span: Option<Range<usize>>,
    own: Option<&Spanned<super::ServerOptions>>,
    err: ErrAt,
) -> anyhow::Result<Model> {
    let all_names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
    let plain = Model::ALL.iter().copied().find(|m| m.name() == label);
    let model = match (own.and_then(|o| o.get_ref().base), plain) {
        (Some(base), Some(plain)) if base != plain => {
            return Err(err(
                own.map(|o| o.span()),
                format!("[model.{label}] has base = \"{base}\", but '{label}' is itself a model"),
            ))
        }
        (Some(base), _) => base,
        (None, Some(plain)) => plain,
        (None, None) => {
            return Err(err(
                span,
                format!(
                    "unknown model '{label}' (models: {}; or define a variant with [model.{label}] base = \"epoll\")",
                    all_names.join(", ")
                ),
            ))
        }
    };
    Ok(model)
}

/// A `[model.LABEL]` entry with `command`: the command must name `{port}`, and the
/// table may set only what applies to any process (cpus, conditions, start_timeout).
/// `[server]`'s built-in options are for echolab's own models and do not reach it.
fn command_entry(
    file: &ScenarioFile,
    label: &str,
    table: &Spanned<super::ServerOptions>,
    command: Vec<String>,
    err: ErrAt,
) -> anyhow::Result<ModelEntry> {
    let own = table.get_ref();
    if let Some(key) = own.builtin_only().first() {
        return Err(err(
            Some(table.span()),
            format!(
                "[model.{label}] runs a command, so it cannot take `{key}` (an option of echolab's own servers); \
                 a command takes cpus, start_timeout, profile, cpu_quota, memory_max and tasks_max"
            ),
        ));
    }
    if command.is_empty() || command[0].is_empty() {
        return Err(err(
            Some(table.span()),
            format!("[model.{label}] command is empty: name a program"),
        ));
    }
    if !command.iter().any(|a| a.contains("{port}")) {
        return Err(err(
            Some(table.span()),
            format!(
                "[model.{label}] command never names `{{port}}`: the runner picks the port and must tell the server"
            ),
        ));
    }
    let general = &file.server;
    let mut options = super::ServerOptions {
        cpus: own.cpus.clone().or_else(|| general.cpus.clone()),
        start_timeout: own.start_timeout.or(general.start_timeout),
        profile: own.profile.or(general.profile),
        cpu_quota: own.cpu_quota.or(general.cpu_quota),
        memory_max: own.memory_max.or(general.memory_max),
        tasks_max: own.tasks_max.or(general.tasks_max),
        command: Some(command.clone()),
        ..Default::default()
    };
    if let Some(profile) = options.profile {
        profile.fill(&mut options, super::machine_clock_mhz);
    }
    Ok(ModelEntry {
        label: label.to_string(),
        kind: ModelKind::Command(command),
        options,
    })
}

/// `[network]` shaping: only in the namespace lab, and with something to shape. None
/// when nothing is shaped (`own_namespace` alone shapes nothing).
pub(super) fn network(file: &ScenarioFile, err: ErrAt) -> anyhow::Result<Option<NetworkFile>> {
    let Some(network) = &file.network else {
        return Ok(None);
    };
    let n = network.get_ref();
    let shaping = n.rate.is_some()
        || n.server_rate.is_some()
        || n.delay.is_some()
        || n.jitter.is_some()
        || n.loss.is_some();
    if !shaping && (n.own_namespace.is_some() || n.netem_optional) {
        if n.netem_optional {
            return Err(err(
                Some(network.span()),
                "[network] netem_optional needs something netem shapes: delay, jitter or loss"
                    .into(),
            ));
        }
        return Ok(None);
    }
    if file.hosts.is_none() {
        return Err(err(
            Some(network.span()),
            "[network] shapes the client hosts' links, so it needs [hosts] clients = N".into(),
        ));
    }
    if n.rate.is_none() && n.server_rate.is_none() && n.delay.is_none() && n.loss.is_none() {
        return Err(err(
            Some(network.span()),
            "[network] needs at least one of rate, server_rate, delay or loss".into(),
        ));
    }
    if n.jitter.is_some() && n.delay.is_none() {
        return Err(err(
            Some(network.span()),
            "[network] jitter varies the delay, so it needs delay".into(),
        ));
    }
    Ok(Some(n.clone()))
}

/// The load shape of every step, once its exclusive keys are checked.
/// With a staircase, the staircase itself says how long the load lasts.
pub(super) fn load(
    file: &ScenarioFile,
    staircase: bool,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<LoadOptions> {
    let at = |key: &str| value_span(source, &["load", key]);
    let load = file.load.clone();
    let payloads = [
        load.size.is_some() || file.sweep.size.is_some(),
        load.message.is_some(),
        load.payload_file.is_some(),
    ];
    if payloads.iter().filter(|p| **p).count() > 1 {
        return Err(err(
            at("payload_file").or_else(|| at("message")),
            "[load] size (or a size sweep), message and payload_file are mutually exclusive".into(),
        ));
    }
    if load.rate.is_some() && load.delay.is_some() {
        return Err(err(
            at("delay"),
            "[load] rate (open loop) and delay (closed loop) are mutually exclusive".into(),
        ));
    }
    if load.hold.is_some() && load.hold_together.is_some() {
        return Err(err(
            at("hold_together"),
            "[load] hold and hold_together are mutually exclusive".into(),
        ));
    }
    if load.hold_together.is_some() && load.connect_rate.is_none() {
        return Err(err(
            at("hold_together"),
            "[load] hold_together needs connect_rate (the hold covers the connection ramp)".into(),
        ));
    }
    if !staircase
        && load.requests.is_none()
        && file.sweep.requests.is_none()
        && load.duration.is_none()
        && load.hold.is_none()
    {
        return Err(err(
            None,
            "[load] needs `requests` or `duration` (or `hold`) so every step ends".into(),
        ));
    }
    Ok(load)
}

/// `[load] warmup` only where a warm-up can be left out of the measurement: a timed
/// sweep step, not a fixed workload (`requests`), a hold or a staircase.
pub(super) fn warmup(file: &ScenarioFile, source: &str, err: ErrAt) -> anyhow::Result<()> {
    if file.load.warmup.is_none_or(|w| w.0.is_zero()) {
        return Ok(());
    }
    let load = &file.load;
    let beside = if load.requests.is_some() || file.sweep.requests.is_some() {
        "requests: a fixed workload is measured by the time it takes, warm-up included"
    } else if load.hold.is_some() || load.hold_together.is_some() {
        "hold: a held step measures the connections it keeps open"
    } else if file.staircase.is_some() {
        "[staircase]: each stair measures its own window from the moment its batch is open"
    } else {
        return Ok(());
    };
    Err(err(
        value_span(source, &["load", "warmup"]),
        format!("[load] warmup does not go with {beside}"),
    ))
}

/// `[hosts] clients`, checked against the load and the steps it splits.
pub(super) fn client_hosts(
    file: &ScenarioFile,
    load: &LoadOptions,
    steps: &[Step],
    err: ErrAt,
) -> anyhow::Result<Option<u32>> {
    let client_hosts = match &file.hosts {
        None => None,
        Some(hosts) => {
            let clients = &hosts.get_ref().clients;
            let max = MAX_CLIENTS;
            let n = clients.get_ref().count();
            if matches!(clients.get_ref(), ClientHosts::Ssh(_)) && n == 0 {
                return Err(err(
                    Some(clients.span()),
                    "[hosts] clients lists no ssh host".into(),
                ));
            }
            if !(1..=i64::from(max)).contains(&n) {
                return Err(err(
                    Some(clients.span()),
                    format!("[hosts] clients must be between 1 and {max}, not {n}"),
                ));
            }
            if load.source_addrs.is_some() {
                return Err(err(
                    Some(hosts.span()),
                    "[load] source_addrs cannot be used with [hosts]: each client host has its own address".into(),
                ));
            }
            if let Some(step) = steps.iter().find(|s| s.connections < n as u64) {
                return Err(err(
                    Some(clients.span()),
                    format!(
                        "step {} has {} connections, fewer than the {n} client hosts that share them",
                        step.name, step.connections
                    ),
                ));
            }
            // ssh hosts exist already: no namespaces to create.
            matches!(clients.get_ref(), ClientHosts::Count(_)).then_some(n as u32)
        }
    };
    Ok(client_hosts)
}

/// `[hosts]` with ssh URLs: the server's and every client's URL, and the server's
/// address on the data network. None for the namespace lab (or no `[hosts]`).
pub(super) fn ssh_hosts(file: &ScenarioFile, err: ErrAt) -> anyhow::Result<Option<SshHosts>> {
    let Some(hosts) = &file.hosts else {
        return Ok(None);
    };
    let h = hosts.get_ref();
    let ClientHosts::Ssh(urls) = h.clients.get_ref() else {
        if let Some(key) = h.server.as_ref().or(h.server_addr.as_ref()) {
            return Err(err(
                Some(key.span()),
                "[hosts] server and server_addr name real machines: clients must then be \
                 ssh URLs ([\"ssh://host\", ...]), not a number of namespaces"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let clients = urls
        .iter()
        .map(|u| SshUrl::parse(u))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(Some(h.clients.span()), format!("[hosts] clients: {e}")))?;
    let Some(server) = &h.server else {
        return Err(err(
            Some(hosts.span()),
            "[hosts] with ssh clients needs `server = \"ssh://[user@]host[:port]\"`, the server's machine".into(),
        ));
    };
    let server_url = SshUrl::parse(server.get_ref())
        .map_err(|e| err(Some(server.span()), format!("[hosts] server: {e}")))?;
    let Some(addr) = &h.server_addr else {
        return Err(err(
            Some(hosts.span()),
            "[hosts] with ssh hosts needs `server_addr = \"IP\"`, the server host's address on the \
             network the load uses"
                .into(),
        ));
    };
    let server_addr = addr.get_ref().parse().map_err(|_| {
        err(
            Some(addr.span()),
            format!(
                "[hosts] server_addr {:?} is not an IP address",
                addr.get_ref()
            ),
        )
    })?;
    lab_only_keys_refused(file, hosts, err)?;
    Ok(Some(SshHosts {
        server: server_url,
        clients,
        server_addr,
        install: false,
    }))
}

/// What ssh hosts cannot have: the namespace lab's sysctls, a staircase (it reads its
/// agents' counts from this machine's disk) and `[network]` shaping.
fn lab_only_keys_refused(
    file: &ScenarioFile,
    hosts: &Spanned<HostsFile>,
    err: ErrAt,
) -> anyhow::Result<()> {
    let h = hosts.get_ref();
    let lab_only = [
        ("somaxconn", h.somaxconn.is_some()),
        ("tcp_max_syn_backlog", h.tcp_max_syn_backlog.is_some()),
        ("ip_local_port_range", h.ip_local_port_range.is_some()),
        ("tcp_max_tw_buckets", h.tcp_max_tw_buckets.is_some()),
    ];
    if let Some((key, _)) = lab_only.iter().find(|(_, set)| *set) {
        return Err(err(
            Some(hosts.span()),
            format!(
                "[hosts] {key} sets the namespace lab's sysctls; echolab never changes a real \
                 machine's: set it on the hosts themselves"
            ),
        ));
    }
    if let Some(staircase) = &file.staircase {
        return Err(err(
            Some(staircase.span()),
            "[staircase] reads its agents' live counts from this machine's disk: it cannot \
             run on ssh hosts (use a sweep of fresh-server steps)"
                .into(),
        ));
    }
    if let Some(network) = &file.network {
        let n = network.get_ref();
        if n.rate.is_some() || n.delay.is_some() || n.jitter.is_some() || n.loss.is_some() {
            return Err(err(
                Some(network.span()),
                "[network] shaping applies to the namespace lab's links, not to ssh hosts".into(),
            ));
        }
    }
    Ok(())
}

/// The sysctls the lab sets in its namespaces: `[hosts]`'s overrides of the defaults.
pub(super) fn lab_sysctls(file: &ScenarioFile, err: ErrAt) -> anyhow::Result<LabSysctls> {
    let mut sysctls = LabSysctls::default();
    let Some(hosts) = &file.hosts else {
        return Ok(sysctls);
    };
    let h = hosts.get_ref();
    if let Some(n) = h.somaxconn {
        sysctls.somaxconn = n.0;
    }
    if let Some(n) = h.tcp_max_syn_backlog {
        sysctls.tcp_max_syn_backlog = n.0;
    }
    if let Some(n) = h.tcp_max_tw_buckets {
        sysctls.tcp_max_tw_buckets = n;
    }
    if let Some(range) = &h.ip_local_port_range {
        sysctls.ip_local_port_range = parse_port_range(range.get_ref()).map_err(|e| {
            err(
                Some(range.span()),
                format!("[hosts] ip_local_port_range: {e}"),
            )
        })?;
    }
    Ok(sysctls)
}

/// The free-form `args` of the server and the load, parsed now as `serve` and `load`
/// will parse them, so a bogus flag is refused before any step runs.
pub(super) fn free_form_args(
    models: &[ModelEntry],
    load: &LoadOptions,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<()> {
    for entry in models.iter().filter(|m| m.model().is_some()) {
        if let Err(message) = entry.base_config() {
            let span = value_span(source, &["model", &entry.label, "args"])
                .or_else(|| value_span(source, &["server", "args"]));
            return Err(err(
                span,
                format!("server `args` of model '{}': {message}", entry.label),
            ));
        }
    }
    let any_target = std::net::SocketAddr::from(([127, 0, 0, 1], 7));
    if let Err(message) = load.base_args(any_target) {
        return Err(err(
            value_span(source, &["load", "args"]),
            format!("[load] args: {message}"),
        ));
    }
    Ok(())
}

/// Where a key's value is written (`["load", "size"]`), for errors found after
/// the file was read into its types; None when the key is not written.
pub(super) fn value_span(source: &str, path: &[&str]) -> Option<Range<usize>> {
    let doc = toml_edit::ImDocument::parse(source).ok()?;
    let (last, tables) = path.split_last()?;
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    for key in tables {
        table = table.get(key)?.as_table_like()?;
    }
    table.get(last)?.span()
}

/// At most this many client hosts (198.18.0.11 to 198.18.1.4 of the /16; a Linux
/// bridge takes up to 1024 ports).
pub const MAX_CLIENTS: u32 = 250;

/// Repetitions a scenario may ask for: far beyond any study, far below a typo's millions.
pub const MAX_REPETITIONS: u64 = 1000;
/// Rows (models x steps x repetitions) a scenario may ask for, so a run's time and its
/// results stay bounded whatever the file says.
pub const MAX_ROWS: u64 = 100_000;

/// Repetitions and the rows they make, bounded, the error at `repetitions`' line.
pub(super) fn rows(
    file: &ScenarioFile,
    models: usize,
    steps: usize,
    source: &str,
    err: ErrAt,
) -> anyhow::Result<()> {
    let reps = file.repetitions.map_or(1, |r| r.0);
    let span = || value_span(source, &["repetitions"]);
    if reps > MAX_REPETITIONS {
        return Err(err(
            span(),
            format!("repetitions = {reps}: at most {MAX_REPETITIONS}"),
        ));
    }
    let rows = reps.saturating_mul((models as u64).saturating_mul(steps as u64));
    if rows > MAX_ROWS {
        return Err(err(
            span(),
            format!(
                "{models} models x {steps} steps x {reps} repetitions make {rows} rows; at most \
                 {MAX_ROWS}"
            ),
        ));
    }
    Ok(())
}

/// `[claims] max_repetitions`: at least `repetitions` and at most [`MAX_REPETITIONS`];
/// `repetitions` without it. A staircase's repetitions climb one live server each, so
/// it adds none.
pub(super) fn max_repetitions(
    file: &ScenarioFile,
    staircase: bool,
    err: ErrAt,
) -> anyhow::Result<u32> {
    let reps = file.repetitions.map_or(1, |r| r.0);
    let Some(claims) = &file.claims else {
        return Ok(reps as u32);
    };
    let span = Some(claims.span());
    let Some(max) = claims.get_ref().max_repetitions.map(|m| m.0) else {
        return Ok(reps as u32);
    };
    if staircase && max > reps {
        return Err(err(
            span,
            "[claims] max_repetitions: a [staircase] adds no repetitions (each climbs one \
             live server); leave it out"
                .into(),
        ));
    }
    if !(reps..=MAX_REPETITIONS).contains(&max) {
        return Err(err(
            span,
            format!(
                "[claims] max_repetitions = {max}: from repetitions ({reps}) to \
                 {MAX_REPETITIONS}"
            ),
        ));
    }
    Ok(max as u32)
}

/// A scenario `name` names the default results directory (`results/NAME-…`): one plain
/// path component (see [`not_one_folder`]).
pub(super) fn name(file: &ScenarioFile, source: &str, err: ErrAt) -> anyhow::Result<()> {
    let Some(name) = &file.name else {
        return Ok(());
    };
    let plain = name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let why = not_one_folder(name).or((!plain).then_some("has other characters"));
    match why {
        Some(why) => Err(err(
            value_span(source, &["name"]),
            format!(
                "name {name:?} {why}: it becomes one directory name under results/ \
                 (letters, digits, `-`, `_`, `.` inside)"
            ),
        )),
        None => Ok(()),
    }
}

/// Why a name that becomes a folder (a scenario's name, a model's label, a part's name)
/// would not be one plain folder inside its parent: a path separator, a leading dot
/// (`.`, `..`, hidden files), a control character, empty or over 100 bytes. None
/// when it is one.
/// Why `label` cannot name a model, if it cannot: not one plain folder
/// ([`not_one_folder`]), or a comma, which `--models` splits on (no list could select it).
pub fn not_a_label(label: &str) -> Option<&'static str> {
    not_one_folder(label).or(label
        .contains(',')
        .then_some("contains a comma, which --models splits a list on"))
}

pub fn not_one_folder(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.contains('/') || name.contains('\\') {
        Some("contains a path separator")
    } else if name.starts_with('.') {
        Some("starts with a dot")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.len() > 100 {
        Some("is longer than 100 bytes")
    } else {
        None
    }
}
