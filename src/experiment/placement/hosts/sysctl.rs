//! The sysctls the lab sets in its own namespaces: the listen queue (somaxconn,
//! tcp_max_syn_backlog) and the ephemeral ports (ip_local_port_range) are per network
//! namespace, so a lab sized for scale never touches the host's values.
//!
//! They are written from a short-lived thread that has entered the namespace
//! (`setns(2)` changes only the calling thread's network namespace, and /proc/sys/net
//! shows the namespace of the thread that opens it), then read back the same way.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::fd::AsRawFd;

use anyhow::Context as _;

fn proc_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Writes `settings` inside network namespace `namespace` (a name from `ip netns`) and
/// returns each one as read back there, whitespace normalised.
pub fn apply(
    namespace: &str,
    settings: &[(&'static str, String)],
) -> anyhow::Result<BTreeMap<String, String>> {
    let ns = File::open(format!("/run/netns/{namespace}"))
        .with_context(|| format!("cannot open network namespace {namespace}"))?;
    let settings = settings.to_vec();
    let namespace = namespace.to_string();
    std::thread::scope(|scope| {
        scope
            .spawn(move || -> anyhow::Result<BTreeMap<String, String>> {
                // SAFETY: `ns` is an open namespace fd for the whole call; setns changes
                // only this thread's network namespace, and the thread ends right after.
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(std::io::Error::last_os_error())
                        .with_context(|| format!("cannot enter network namespace {namespace}"));
                }
                let mut read_back = BTreeMap::new();
                for (name, value) in &settings {
                    let path = proc_path(name);
                    fs::write(&path, value)
                        .with_context(|| format!("cannot set {name} = {value} in {namespace}"))?;
                    let now = fs::read_to_string(&path)
                        .with_context(|| format!("cannot read {name} in {namespace}"))?;
                    read_back.insert(
                        name.to_string(),
                        now.split_whitespace().collect::<Vec<_>>().join(" "),
                    );
                }
                Ok(read_back)
            })
            .join()
            .map_err(|_| anyhow::anyhow!("the sysctl thread panicked"))?
    })
}
