//! Several hosts on one machine: a server host and N client hosts, each a network
//! namespace with its own address, joined by a bridge (`[hosts] clients = N`).
//!
//! The seeds loaded one server from up to four client machines, so the server saw
//! several peer addresses and each client machine had its own ephemeral ports,
//! socket tables and softirq work. Namespaces give the same picture on one machine.
//!
//! Layout for a run of runner pid P (every name starts with the per-run prefix `elabP-`):
//!
//! ```text
//!   elabP-srv  eth0 198.18.0.1/16  ──veth──  srv ┐
//!   elabP-c1   eth0 198.18.0.11/16 ──veth──  c1  ├─ br0 in elabP-br
//!   elabP-cN   eth0 198.18.0.0 + 10+N ─veth─ cN ┘   (c250 is 198.18.1.4)
//! ```
//!
//! At scale every client host is a namespace of its own with one address, rather
//! than a few namespaces with several addresses each: the load's split over hosts
//! (`--shard`, then `echolab merge`) is then the only mechanism, and each client host
//! has its own port range, socket tables and load process. The lab sets its
//! namespaces' somaxconn, tcp_max_syn_backlog, ip_local_port_range and
//! tcp_max_tw_buckets ([`LabSysctls`], `[hosts]` keys), never the host's.
//!
//! The bridge lives in a namespace of its own and every veth is created inside
//! `elabP-br` with its peer moved straight into its host, so the root namespace
//! gains no interface, route, address, NAT or forwarding rule: traffic cannot
//! leave these namespaces. 198.18.0.0/15 is RFC 2544's benchmarking range, meant
//! for exactly this and never routed on the Internet.
//!
//! `[network]` shapes the client links ([`Hosts::shape`]): a qdisc on each client's
//! `eth0` (what the client sends) and on its bridge port (what it receives), so both
//! directions of every client link are shaped. `server_rate` shapes the server's own
//! link the same way (tbf on `srv`'s `eth0` and its bridge port), so a slow server
//! port can sit behind fast client links; each step then keeps that link's `tc -s`
//! counters before and after its load ([`Hosts::server_link_counters`]).
//! Only devices inside these namespaces are ever touched.
//!
//! Dropping [`Hosts`] deletes every namespace it created (the runner handles
//! SIGINT/SIGTERM by unwinding normally, so drop runs then too); a runner killed
//! outright leaves them behind, and the next run deletes namespaces whose owner
//! pid is gone ([`remove_leftovers`]).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use crate::results::Shaping;
use crate::scenario::{LabSysctls, NetworkFile, MAX_CLIENTS};

mod sysctl;

/// The message for a machine where namespaces cannot be made.
pub const NEEDS: &str = "multi-host scenarios need root and iproute2 (`ip netns`)";
/// The beginning of every namespace name this module makes: `elab<pid>-`.
const NAME_STEM: &str = "elab";
const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const FIRST_CLIENT_OCTET: u8 = 11;
const PREFIX_LEN: u8 = 16;
const BRIDGE: &str = "br0";
/// The interface name inside every host namespace.
const HOST_IF: &str = "eth0";

/// One process makes one set at a time: the names carry only the pid.
static IN_USE: AtomicBool = AtomicBool::new(false);

/// One emulated host: its namespace and address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub namespace: String,
    pub addr: Ipv4Addr,
}

impl Host {
    /// Arguments for `ip` that run `program args` inside this host's namespace.
    /// `ip netns exec` execs in place (it does not fork), so the child's pid is the program's.
    pub fn exec_args(&self, program: &str, args: &[String]) -> Vec<String> {
        let mut a = vec![
            "netns".to_string(),
            "exec".to_string(),
            self.namespace.clone(),
            program.to_string(),
        ];
        a.extend(args.iter().cloned());
        a
    }
}

/// The namespaces of one run; deleted on drop.
#[derive(Debug)]
pub struct Hosts {
    prefix: String,
    server: Host,
    clients: Vec<Host>,
    /// Namespaces that exist now, in creation order (deleted in reverse).
    created: Vec<String>,
    /// Whether this set still holds the process's one slot ([`IN_USE`]).
    holds_slot: bool,
    /// The lab's sysctls as read back in its namespaces (the same in each).
    sysctls: BTreeMap<String, String>,
    /// Whether `[network] server_rate` put a qdisc on the server's own link.
    server_link_shaped: bool,
}

/// The address of client host `index` (0-based): 198.18.0.11 onwards, across the /16.
fn client_addr(index: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(SERVER_ADDR) - 1 + u32::from(FIRST_CLIENT_OCTET) + index)
}

/// The name prefix of the namespaces made by process `pid`.
pub fn prefix_of(pid: u32) -> String {
    format!("{NAME_STEM}{pid}-")
}

/// The pid in a namespace name made by this module (`elab1234-c1` -> 1234).
fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NAME_STEM)?;
    let (digits, _) = rest.split_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Runs `ip ARGS`, returning its stdout; the error carries ip's own message.
fn ip(args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        // Its own process group: a terminal's Ctrl-C must not cut a teardown short.
        .process_group(0)
        .output()
        .with_context(|| format!("cannot run `ip` ({NEEDS})"))?;
    if !output.status.success() {
        anyhow::bail!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Checks that this process is root and `ip netns` works.
pub fn check_available() -> anyhow::Result<()> {
    if !crate::sys::is_root() {
        anyhow::bail!("{NEEDS}: this process is not root");
    }
    ip(&["netns", "list"]).map_err(|e| anyhow::anyhow!("{NEEDS}: {e:#}"))?;
    Ok(())
}

/// The names of all named network namespaces (`ip netns list` prints `NAME [(id: N)]`).
pub fn list_namespaces() -> anyhow::Result<Vec<String>> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Whether a process `pid` is alive: then its set may still be in use, whatever the
/// program is called (a copy of echolab under another name, a test binary). A dead run's
/// pid taken by another process keeps its set until that process is gone: a leak, never
/// a live run's namespaces deleted under it.
fn owner_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Deletes namespaces left by runs whose process is gone (killed outright);
/// returns the names deleted.
pub fn remove_leftovers() -> anyhow::Result<Vec<String>> {
    let me = std::process::id();
    let mut removed = Vec::new();
    for name in list_namespaces()? {
        match owner_of(&name) {
            Some(pid) if pid != me && !owner_alive(pid) => {
                match ip(&["netns", "delete", &name]) {
                    Ok(_) => removed.push(name),
                    // Another run cleaning at the same time deleted it first.
                    Err(_) if !list_namespaces()?.contains(&name) => {}
                    Err(e) => return Err(e),
                }
            }
            _ => {}
        }
    }
    Ok(removed)
}

// `Shaping` is manifest.json's, declared in crate::results; here is how it is asked for
// and applied.
impl Shaping {
    /// What a scenario's `[network]` asks for.
    pub fn requested(network: &NetworkFile) -> Shaping {
        Shaping {
            rate_bit_s: network.rate.map(|r| r.0),
            delay_ms: network.delay.map(|d| d.0.as_secs_f64() * 1e3),
            jitter_ms: network.jitter.map(|d| d.0.as_secs_f64() * 1e3),
            loss_pct: network.loss.map(|l| l.0 * 100.0),
            qdisc: None,
            note: None,
            server_rate_bit_s: network.server_rate.map(|r| r.0),
        }
    }

    fn needs_netem(&self) -> bool {
        self.delay_ms.is_some() || self.loss_pct.is_some()
    }

    /// The `tc qdisc replace dev DEV root ...` arguments after `root`.
    pub fn qdisc_args(&self) -> Vec<String> {
        if self.needs_netem() {
            let mut a = vec!["netem".to_string(), "limit".into(), "100000".into()];
            if let Some(d) = self.delay_ms {
                a.extend(["delay".into(), format!("{d}ms")]);
                if let Some(j) = self.jitter_ms {
                    a.push(format!("{j}ms"));
                }
            }
            if let Some(l) = self.loss_pct {
                a.extend(["loss".into(), format!("{l}%")]);
            }
            if let Some(r) = self.rate_bit_s {
                a.extend(["rate".into(), format!("{r}bit")]);
            }
            a
        } else {
            tbf_args(self.rate_bit_s.unwrap_or(u64::MAX / 16))
        }
    }
}

/// `tbf` at `rate` bit/s, the arguments after `root`.
fn tbf_args(rate: u64) -> Vec<String> {
    // Ten full frames at least, or 5 ms at the rate: small enough that the
    // long-run rate is the rate, large enough for line-rate frames.
    let burst = (rate / 8 / 200).max(15_140);
    vec![
        "tbf".into(),
        "rate".into(),
        format!("{rate}bit"),
        "burst".into(),
        burst.to_string(),
        "latency".into(),
        "50ms".into(),
    ]
}

/// Runs `tc -n NS ARGS`; the error carries tc's own message.
fn tc(namespace: &str, args: &[&str]) -> anyhow::Result<()> {
    tc_output(namespace, args).map(drop)
}

/// Runs `tc -n NS ARGS`, returning its stdout; the error carries tc's own message.
fn tc_output(namespace: &str, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("tc")
        .args(["-n", namespace])
        .args(args)
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .context("cannot run `tc` (network shaping needs iproute2's tc)")?;
    if !output.status.success() {
        anyhow::bail!(
            "`tc -n {namespace} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

impl Hosts {
    /// Shapes every client link in both directions as `network` asks, and the server's
    /// own link with `server_rate` (tbf only). Delay, jitter and loss need netem: it is
    /// probed first on an echolab-made device, and its absence fails here (or, with
    /// `netem_optional`, drops them and says so in the result).
    pub fn shape(&mut self, network: &NetworkFile) -> anyhow::Result<Shaping> {
        let mut shaping = Shaping::requested(network);
        let first = self.clients.first().expect("at least one client host");
        if shaping.needs_netem() {
            let probe = tc(
                &first.namespace,
                &[
                    "qdisc", "add", "dev", HOST_IF, "root", "netem", "delay", "1ms",
                ],
            );
            match probe {
                Ok(()) => tc(&first.namespace, &["qdisc", "del", "dev", HOST_IF, "root"])?,
                Err(e) if network.netem_optional => {
                    shaping.note = Some(format!(
                        "delay, jitter and loss not applied: this kernel has no netem qdisc ({e:#})"
                    ));
                    shaping.delay_ms = None;
                    shaping.jitter_ms = None;
                    shaping.loss_pct = None;
                }
                Err(e) => anyhow::bail!(
                    "[network] delay, jitter and loss need the `netem` qdisc, which this kernel \
                     does not have (sch_netem; probing it on {}: {e:#}); rate alone works (tbf), \
                     or set netem_optional = true to run without them",
                    first.namespace
                ),
            }
        }
        if let Some(rate) = shaping.server_rate_bit_s {
            self.replace_qdisc(&self.server, &tbf_args(rate))?;
            self.server_link_shaped = true;
            shaping.qdisc = Some("tbf".into());
        }
        if shaping.rate_bit_s.is_none() && !shaping.needs_netem() {
            return Ok(shaping);
        }
        let args = shaping.qdisc_args();
        shaping.qdisc = Some(args[0].clone());
        for client in &self.clients {
            self.replace_qdisc(client, &args)?;
        }
        Ok(shaping)
    }

    /// The two ends of `host`'s link: its own `eth0` (what it sends) and its bridge
    /// port (what it receives), as (namespace, device, direction).
    fn link_ends(&self, host: &Host) -> [(String, String, &'static str); 2] {
        let port = host.namespace[self.prefix.len()..].to_string();
        [
            (host.namespace.clone(), HOST_IF.to_string(), "sends"),
            (format!("{}br", self.prefix), port, "receives"),
        ]
    }

    /// Puts the qdisc `args` at the root of both ends of `host`'s link.
    fn replace_qdisc(&self, host: &Host, args: &[String]) -> anyhow::Result<()> {
        for (ns, dev, _) in self.link_ends(host) {
            let mut a = vec!["qdisc", "replace", "dev", dev.as_str(), "root"];
            a.extend(args.iter().map(String::as_str));
            tc(&ns, &a)?;
        }
        Ok(())
    }

    /// `tc -s qdisc show` on both ends of the server's link, each headed by the way it
    /// carries (`server sends (eth0 in elabP-srv)`); None when that link is not shaped.
    /// The `Sent N bytes` counters are cumulative since the link was shaped.
    pub fn server_link_counters(&self) -> Option<String> {
        if !self.server_link_shaped {
            return None;
        }
        let mut text = String::new();
        for (ns, dev, way) in self.link_ends(&self.server) {
            let shown = tc_output(&ns, &["-s", "qdisc", "show", "dev", &dev])
                .unwrap_or_else(|e| format!("{e:#}\n"));
            text += &format!("server {way} ({dev} in {ns}):\n{shown}");
        }
        Some(text)
    }

    /// Creates the server host, `clients` client hosts and the bridge between them, with
    /// `sysctls` set in each host. On any error, whatever was made is deleted before returning.
    pub fn create(clients: u32, sysctls: &LabSysctls) -> anyhow::Result<Hosts> {
        anyhow::ensure!(
            (1..=MAX_CLIENTS).contains(&clients),
            "[hosts] clients must be between 1 and {MAX_CLIENTS}, not {clients}"
        );
        check_available()?;
        anyhow::ensure!(
            !IN_USE.swap(true, Ordering::SeqCst),
            "this process already has a set of host namespaces"
        );
        let prefix = prefix_of(std::process::id());
        let host = |suffix: &str, addr| Host {
            namespace: format!("{prefix}{suffix}"),
            addr,
        };
        // Built before anything is made, so Drop cleans up after a failure halfway.
        let mut hosts = Hosts {
            server: host("srv", SERVER_ADDR),
            clients: (0..clients)
                .map(|i| host(&format!("c{}", i + 1), client_addr(i)))
                .collect(),
            prefix,
            created: Vec::new(),
            holds_slot: true,
            sysctls: BTreeMap::new(),
            server_link_shaped: false,
        };
        // A dead run with our pid (pid reuse after a crash) may have left this very set.
        for name in list_namespaces()? {
            if name.starts_with(&hosts.prefix) {
                ip(&["netns", "delete", &name])?;
            }
        }
        hosts.build()?;
        hosts.set_sysctls(sysctls)?;
        Ok(hosts)
    }

    /// Sets the lab's sysctls in every host namespace and keeps them as read back.
    fn set_sysctls(&mut self, sysctls: &LabSysctls) -> anyhow::Result<()> {
        let settings = sysctls.settings();
        for host in std::iter::once(&self.server).chain(&self.clients) {
            let read_back = sysctl::apply(&host.namespace, &settings)?;
            // Every host gets the same settings: the server's read-back stands for all.
            if host == &self.server {
                self.sysctls = read_back;
            }
        }
        Ok(())
    }

    /// The lab's sysctls as read back in its namespaces, for the manifest.
    pub fn sysctls(&self) -> &BTreeMap<String, String> {
        &self.sysctls
    }

    fn build(&mut self) -> anyhow::Result<()> {
        let bridge_ns = format!("{}br", self.prefix);
        self.add_namespace(&bridge_ns)?;
        let br = bridge_ns.as_str();
        // No STP and no forward delay: the ports forward as soon as they are up.
        ip(&[
            "-n",
            br,
            "link",
            "add",
            BRIDGE,
            "type",
            "bridge",
            "stp_state",
            "0",
            "forward_delay",
            "0",
        ])?;
        ip(&["-n", br, "link", "set", BRIDGE, "up"])?;
        let hosts: Vec<Host> = std::iter::once(self.server.clone())
            .chain(self.clients.iter().cloned())
            .collect();
        for host in &hosts {
            self.add_namespace(&host.namespace)?;
            let ns = host.namespace.as_str();
            // The bridge-side port is named after the host (srv, c1, ...).
            let port = &ns[self.prefix.len()..];
            ip(&[
                "-n", br, "link", "add", port, "type", "veth", "peer", "name", HOST_IF, "netns", ns,
            ])?;
            ip(&["-n", br, "link", "set", port, "master", BRIDGE, "up"])?;
            let cidr = format!("{}/{PREFIX_LEN}", host.addr);
            ip(&["-n", ns, "addr", "add", &cidr, "dev", HOST_IF])?;
            ip(&["-n", ns, "link", "set", HOST_IF, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    fn add_namespace(&mut self, name: &str) -> anyhow::Result<()> {
        ip(&["netns", "add", name])?;
        self.created.push(name.to_string());
        Ok(())
    }

    /// The name prefix shared by every namespace of this set (`elab<pid>-`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn server(&self) -> &Host {
        &self.server
    }

    pub fn clients(&self) -> &[Host] {
        &self.clients
    }

    /// Deletes every namespace of the set; the veths and the bridge go with them.
    /// Returns the problems met (a namespace that could not be deleted).
    pub fn teardown(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        while let Some(name) = self.created.pop() {
            if let Err(e) = ip(&["netns", "delete", &name]) {
                problems.push(format!("{e:#}"));
            }
        }
        if std::mem::take(&mut self.holds_slot) {
            IN_USE.store(false, Ordering::SeqCst);
        }
        problems
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for problem in self.teardown() {
            crate::errln!("warning: host namespaces not removed: {problem}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_come_from_names() {
        assert_eq!(prefix_of(1234), "elab1234-");
        assert_eq!(owner_of("elab1234-c1"), Some(1234));
        assert_eq!(owner_of("elab1234-br"), Some(1234));
        assert_eq!(owner_of("elab-c1"), None);
        assert_eq!(owner_of("elabx1-c1"), None);
        assert_eq!(owner_of("elab12"), None);
        assert_eq!(owner_of("other1234-c1"), None);
    }

    #[test]
    fn client_addresses_run_across_the_16() {
        assert_eq!(client_addr(0), Ipv4Addr::new(198, 18, 0, 11));
        assert_eq!(client_addr(244), Ipv4Addr::new(198, 18, 0, 255));
        assert_eq!(client_addr(245), Ipv4Addr::new(198, 18, 1, 0));
        assert_eq!(client_addr(MAX_CLIENTS - 1), Ipv4Addr::new(198, 18, 1, 4));
    }

    #[test]
    fn shaping_arguments() {
        let mut shaping = Shaping {
            rate_bit_s: Some(100_000_000),
            delay_ms: None,
            jitter_ms: None,
            loss_pct: None,
            qdisc: None,
            note: None,
            server_rate_bit_s: None,
        };
        assert_eq!(
            shaping.qdisc_args().join(" "),
            "tbf rate 100000000bit burst 62500 latency 50ms"
        );
        shaping.rate_bit_s = Some(10_000_000);
        assert_eq!(shaping.qdisc_args()[4], "15140", "ten full frames at least");
        shaping.delay_ms = Some(0.2);
        shaping.loss_pct = Some(1.0);
        assert_eq!(
            shaping.qdisc_args().join(" "),
            "netem limit 100000 delay 0.2ms loss 1% rate 10000000bit"
        );
        shaping.qdisc = Some("netem".into());
        assert_eq!(
            shaping.describe(),
            "10 Mbit/s, delay 0.2 ms, loss 1% (netem)"
        );
    }

    #[test]
    fn exec_args_wrap_the_program() {
        let host = Host {
            namespace: "elab7-c2".into(),
            addr: Ipv4Addr::new(198, 18, 0, 12),
        };
        assert_eq!(
            host.exec_args("/bin/echolab", &["load".into(), "--quiet".into()])
                .join(" "),
            "netns exec elab7-c2 /bin/echolab load --quiet"
        );
    }

    /// The lab's sysctls hold in its namespaces, as set and as read back.
    fn assert_lab_sysctls_hold(hosts: &Hosts) {
        let expected: BTreeMap<String, String> = LabSysctls::default()
            .settings()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(hosts.sysctls(), &expected);
        let in_ns = Command::new("ip")
            .args(
                hosts.clients()[1]
                    .exec_args("cat", &["/proc/sys/net/ipv4/ip_local_port_range".into()]),
            )
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&in_ns.stdout)
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["1024", "65535"]
        );
    }

    #[test]
    fn namespaces_connect_and_are_removed() {
        if std::env::var_os("ECHOLAB_SKIP_NETNS").is_some() {
            crate::sys::skip_test(
                "placement::hosts::namespaces_connect_and_are_removed",
                "ECHOLAB_SKIP_NETNS is set",
            );
            return;
        }
        let mut hosts = Hosts::create(2, &LabSysctls::default())
            .unwrap_or_else(|e| panic!("{e:#}; set ECHOLAB_SKIP_NETNS=1 to skip this test"));
        let prefix = hosts.prefix().to_string();
        let mine = || -> Vec<String> {
            let mut v: Vec<String> = list_namespaces()
                .unwrap()
                .into_iter()
                .filter(|n| n.starts_with(&prefix))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            mine(),
            [
                format!("{prefix}br"),
                format!("{prefix}c1"),
                format!("{prefix}c2"),
                format!("{prefix}srv")
            ]
        );
        let addrs: Vec<String> = hosts.clients().iter().map(|h| h.addr.to_string()).collect();
        assert_eq!(addrs, ["198.18.0.11", "198.18.0.12"]);
        assert_eq!(hosts.server().addr.to_string(), "198.18.0.1");
        // `ip netns exec` must not fork: the runner probes the child's pid as the server's.
        let child = Command::new("ip")
            .args(hosts.clients()[0].exec_args("sh", &["-c".into(), "echo $$".into()]))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), pid.to_string());
        // Each host sees its own address and the server's is one hop away on the bridge.
        let shown = ip(&[
            "-n",
            &hosts.clients()[1].namespace,
            "-4",
            "-o",
            "addr",
            "show",
        ])
        .unwrap();
        assert!(shown.contains("inet 198.18.0.12/16"), "{shown}");
        assert_lab_sysctls_hold(&hosts);
        let route = ip(&[
            "-n",
            &hosts.clients()[1].namespace,
            "route",
            "get",
            "198.18.0.1",
        ])
        .unwrap();
        assert!(
            route.starts_with("198.18.0.1 dev eth0 src 198.18.0.12"),
            "{route}"
        );
        // A second set in the same process would reuse the names.
        assert!(Hosts::create(1, &LabSysctls::default()).is_err());
        assert_eq!(hosts.teardown(), Vec::<String>::new());
        assert_eq!(mine(), Vec::<String>::new());
    }

    #[test]
    fn leftovers_of_dead_runs_are_removed() {
        if std::env::var_os("ECHOLAB_SKIP_NETNS").is_some() {
            crate::sys::skip_test(
                "placement::hosts::leftovers_of_dead_runs_are_removed",
                "ECHOLAB_SKIP_NETNS is set",
            );
            return;
        }
        // A pid above the kernel's maximum (4194304) is never alive.
        let dead = "elab4999999-c1";
        ip(&["netns", "add", dead]).unwrap();
        // Another test's cleaning, running at the same time, may be the one that
        // deletes it: either way it is gone, and neither call fails.
        remove_leftovers().unwrap();
        assert!(!list_namespaces().unwrap().contains(&dead.to_string()));
    }

    #[test]
    fn a_live_owner_keeps_its_namespaces_whatever_its_name() {
        if std::env::var_os("ECHOLAB_SKIP_NETNS").is_some() {
            crate::sys::skip_test(
                "placement::hosts::a_live_owner_keeps_its_namespaces_whatever_its_name",
                "ECHOLAB_SKIP_NETNS is set",
            );
            return;
        }
        // A run from a renamed copy of the binary: its pid is alive, its name is not
        // echolab's.
        let mut owner = Command::new("sleep").arg("60").spawn().unwrap();
        let live = format!("elab{}-c1", owner.id());
        ip(&["netns", "add", &live]).unwrap();
        let removed = remove_leftovers();
        let kept = list_namespaces().unwrap().contains(&live);
        ip(&["netns", "delete", &live]).unwrap();
        owner.kill().unwrap();
        owner.wait().unwrap();
        assert!(!removed.unwrap().contains(&live));
        assert!(kept, "{live} was deleted while its owner was alive");
    }
}
