//! The scenario's options as the configurations of `echolab serve` and `echolab load`
//! for one step: the entry's (or the load's) `args`, then its options, then the step's
//! values.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{LoadOptions, ModelEntry, Step};
use crate::load::LoadArgs;
use crate::results::files::{SERVER_LOG, SERVER_SUMMARY};
use crate::server::ServerConfig;

/// Processes needed so no process holds more than `per` connections.
pub fn processes_for(connections: u64, per: Option<u64>) -> Option<u64> {
    per.filter(|per| connections > *per)
        .map(|per| connections.div_ceil(per))
}

/// The server configuration of one step: `serve --model M` with the scenario's `args`
/// (checked when the scenario was parsed), then the scenario's options and the step's values.
pub fn server_config(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> ServerConfig {
    let o = &entry.options;
    let mut config = entry
        .base_config()
        .expect("a scenario's server args are checked when it is parsed");
    config.addr = SocketAddr::new(bind, 0);
    config.log = Some(dir.join(SERVER_LOG));
    config.summary_json = Some(dir.join(SERVER_SUMMARY));
    if let Some(w) = step.workers.or(o.workers.map(|w| w.0)) {
        config.workers = Some(w as usize);
    }
    o.apply_to(&mut config);
    let processes = o.processes.map(|p| p.0).or_else(|| {
        config
            .model
            .supports_processes()
            .then(|| processes_for(step.connections, o.conns_per_process.map(|c| c.0)))
            .flatten()
    });
    if let Some(p) = processes {
        config.processes = p as usize;
    }
    config
}

/// `echolab serve` arguments for one step.
pub fn server_args(entry: &ModelEntry, step: &Step, dir: &Path, bind: IpAddr) -> Vec<String> {
    server_config(entry, step, dir, bind)
        .to_args()
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// How long opening `connections` at `rate` per second takes.
pub fn ramp_time(connections: u64, rate: f64) -> Duration {
    Duration::from_secs_f64(connections as f64 / rate)
}

/// The load of one step, writing its results into `out`: `load --target ADDR` with the
/// scenario's `args` (checked when the scenario was parsed), then the scenario's load
/// options and the step's values.
pub fn load_config(load: &LoadOptions, step: &Step, target: SocketAddr, out: &Path) -> LoadArgs {
    let mut a = load
        .base_args(target)
        .expect("a scenario's load args are checked when it is parsed");
    a.connections = step.connections;
    if let Some(m) = &load.message {
        a.message = Some(m.clone());
    } else if let Some(p) = &load.payload_file {
        a.payload_file = Some(PathBuf::from(p));
    } else {
        a.size = Some(step.size);
    }
    if let Some(r) = step.requests.or(load.requests.map(|r| r.0)) {
        a.requests = Some(r);
    }
    load.apply_to(&mut a);
    if let Some(d) = step.delay {
        a.delay = d;
    }
    if let Some(r) = step.rate {
        a.rate = Some(r);
    }
    if let (Some(d), Some(r)) = (load.hold_together, load.connect_rate) {
        // Twice the nominal ramp: a busy machine opens connections slower than asked.
        a.hold = Some(d.0 + ramp_time(step.connections, r.0) * 2);
    }
    let processes = load
        .processes
        .map(|p| p.0)
        .or_else(|| processes_for(step.connections, load.conns_per_process.map(|c| c.0)));
    if let Some(p) = processes {
        a.processes = p.min(u32::MAX as u64) as u32;
    }
    a.out = Some(out.to_path_buf());
    a.quiet = true;
    a
}

/// `echolab load` arguments for one step, writing its results into `out`.
pub fn load_args(load: &LoadOptions, step: &Step, target: SocketAddr, out: &Path) -> Vec<String> {
    load_config(load, step, target, out).to_args()
}
