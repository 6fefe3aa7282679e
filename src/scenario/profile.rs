//! `profile`: a named server machine, one key for the CPU, its quota and the memory
//! cap together (`[server]` or `[model.NAME]`). Its keys fill only what the table does
//! not set itself, so `profile = "weak-2016"` with `memory_max = "512MiB"` keeps 512.

use serde::{de, Deserialize, Deserializer};

use super::file::{Bytes, Cores};
use super::ServerOptions;

/// A named server machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// 003's server (2016): a 700 MHz single-core processor and 256 MB of memory.
    /// One core (cpus = [0]), its CFS quota the share of this machine's clock that
    /// 700 MHz is ([`quota_for`]), and memory_max = 256 MiB with swap counted.
    Weak2016,
}

impl Profile {
    pub const NAMES: [&'static str; 1] = ["weak-2016"];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Weak2016 => "weak-2016",
        }
    }

    /// The clock this profile emulates, in MHz.
    pub fn clock_mhz(self) -> f64 {
        match self {
            Profile::Weak2016 => 700.0,
        }
    }

    pub fn memory_max(self) -> Bytes {
        match self {
            Profile::Weak2016 => Bytes(256 << 20),
        }
    }

    /// The CPU the server is held to.
    pub fn cpu(self) -> usize {
        0
    }

    /// `options` with this profile's CPU, quota and memory cap where they set none;
    /// the quota from `clock` (this machine's, see [`machine_clock_mhz`]).
    pub fn fill(self, options: &mut ServerOptions, clock: Clock) {
        let cpu = options.cpus.as_ref().and_then(|c| c.first().copied());
        options.cpus.get_or_insert_with(|| vec![self.cpu()]);
        let clock_mhz = clock(cpu.unwrap_or(self.cpu()));
        options
            .cpu_quota
            .get_or_insert(Cores(quota_for(self.clock_mhz(), clock_mhz)));
        options.memory_max.get_or_insert(self.memory_max());
    }
}

/// How a CPU's clock is read: its index to MHz.
pub type Clock = fn(usize) -> f64;

/// The share of one core a `target` MHz processor is on a `machine` MHz one, to four
/// decimals (the CFS quota in µs per 100 ms period is then exact): 700 MHz on this
/// machine's 2 445.406 MHz is 0.2863 core, 28 630 µs per 100 000.
pub fn quota_for(target_mhz: f64, machine_mhz: f64) -> f64 {
    ((target_mhz / machine_mhz).min(1.0) * 1e4).round() / 1e4
}

/// The clock of `cpu` in MHz: its highest frequency where cpufreq says
/// (`cpuinfo_max_freq`, kHz), else its `cpu MHz` in /proc/cpuinfo (what a VM shows);
/// 0 when neither can be read, and then the quota is one core.
pub fn machine_clock_mhz(cpu: usize) -> f64 {
    let max_khz = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq");
    if let Some(khz) = std::fs::read_to_string(max_khz)
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok())
    {
        return khz / 1e3;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo_mhz(&cpuinfo, cpu).unwrap_or(0.0)
}

/// `cpu MHz` of processor `cpu` in /proc/cpuinfo's text.
fn cpuinfo_mhz(cpuinfo: &str, cpu: usize) -> Option<f64> {
    cpuinfo
        .split("\n\n")
        .find(|block| {
            block.lines().any(|l| {
                l.split_once(':')
                    .is_some_and(|(k, v)| k.trim() == "processor" && v.trim().parse() == Ok(cpu))
            })
        })?
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "cpu MHz").then(|| v.trim().parse().ok())?
        })
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        match name.as_str() {
            "weak-2016" => Ok(Profile::Weak2016),
            other => Err(de::Error::custom(format!(
                "unknown profile '{other}' (profiles: {})",
                Profile::NAMES.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_is_700_mhz_over_the_machines_clock() {
        assert_eq!(quota_for(700.0, 2445.406), 0.2863);
        assert_eq!(quota_for(700.0, 350.0), 1.0, "never above one core");
        let info =
            "processor\t: 0\ncpu MHz\t\t: 2445.406\n\nprocessor\t: 1\ncpu MHz\t\t: 3000.000\n";
        assert_eq!(cpuinfo_mhz(info, 0), Some(2445.406));
        assert_eq!(cpuinfo_mhz(info, 1), Some(3000.0));
        assert_eq!(cpuinfo_mhz(info, 2), None);
    }

    #[test]
    fn the_profile_fills_only_what_the_table_leaves_unset() {
        let mut options = ServerOptions {
            memory_max: Some(Bytes(512 << 20)),
            ..Default::default()
        };
        Profile::Weak2016.fill(&mut options, |_| 2800.0);
        assert_eq!(options.cpus, Some(vec![0]));
        assert_eq!(options.cpu_quota, Some(Cores(0.25)));
        assert_eq!(options.memory_max, Some(Bytes(512 << 20)));
        let mut pinned = ServerOptions {
            cpus: Some(vec![1]),
            ..Default::default()
        };
        Profile::Weak2016.fill(&mut pinned, |cpu| if cpu == 1 { 1400.0 } else { 0.0 });
        assert_eq!(
            pinned.cpu_quota,
            Some(Cores(0.5)),
            "the clock of the pinned CPU"
        );
        assert_eq!(pinned.memory_max, Some(Bytes(256 << 20)));
    }
}
