//! What a server is configured with: the `serve` flags ([`ServerConfig`]), the models,
//! triggers and accept modes they name, and [`ServerConfig::to_args`], the way back
//! from a configuration to the flags that give it (for the processes that start servers).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The I/O model a server uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// One blocking OS thread per connection
    Threads,
    /// One thread, select(2), level-triggered; refuses fds >= FD_SETSIZE
    Select,
    /// One thread, poll(2)
    Poll,
    /// epoll(7): edge- or level-triggered, N workers each with its own epoll set
    Epoll,
    /// io_uring: multishot accept and recv with a provided buffer ring, N rings
    Uring,
    /// The tokio multi-thread runtime: the baseline most Rust users would pick
    Tokio,
}

impl Model {
    pub const ALL: [Model; 6] = [
        Model::Threads,
        Model::Select,
        Model::Poll,
        Model::Epoll,
        Model::Uring,
        Model::Tokio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Model::Threads => "threads",
            Model::Select => "select",
            Model::Poll => "poll",
            Model::Epoll => "epoll",
            Model::Uring => "uring",
            Model::Tokio => "tokio",
        }
    }

    /// Whether `--processes` may run several copies of this model on one port.
    pub fn supports_processes(self) -> bool {
        matches!(
            self,
            Model::Threads | Model::Poll | Model::Epoll | Model::Uring | Model::Tokio
        )
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Model {
    type Err = String;

    fn from_str(text: &str) -> Result<Model, String> {
        Model::ALL
            .into_iter()
            .find(|model| model.name() == text)
            .ok_or_else(|| format!("'{text}' is not a model"))
    }
}

/// When epoll reports readiness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// EPOLLET: reported once per change; each wakeup reads until EAGAIN (within a fairness budget)
    Edge,
    /// Reported as long as the fd is ready, like poll(2)
    Level,
}

/// How epoll workers get their connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcceptMode {
    /// One acceptor thread hands connections round-robin to the workers
    Dispatcher,
    /// One SO_REUSEPORT listener per worker; the kernel spreads connections
    Reuseport,
    /// One shared listener in every worker's epoll set with EPOLLEXCLUSIVE
    Exclusive,
}

/// `echolab serve`: everything a server model is configured with.
#[derive(clap::Parser, Clone, Debug, PartialEq)]
#[command(
    name = "serve",
    about = "Run one echo server (RFC 862: every byte received is sent back, in order)"
)]
pub struct ServerConfig {
    /// The I/O model
    #[arg(long, value_enum)]
    pub model: Model,

    /// Address to listen on; port 0 picks a free port. The first stdout line is
    /// `listening on HOST:PORT ...` with the bound address
    #[arg(long, default_value = "127.0.0.1:7000")]
    pub addr: SocketAddr,

    /// Worker threads (epoll, uring, tokio); default: the number of CPUs
    #[arg(long)]
    pub workers: Option<usize>,

    /// epoll readiness: edge-triggered (EPOLLET) or level-triggered
    #[arg(long, value_enum, default_value = "edge")]
    pub trigger: Trigger,

    /// epoll: how connections reach the workers
    #[arg(long, value_enum, default_value = "dispatcher")]
    pub accept: AcceptMode,

    /// Copies of the server sharing the port with SO_REUSEPORT (threads, poll, epoll,
    /// uring, tokio), so one server can hold more connections than one process's fd limit
    #[arg(long, default_value_t = 1)]
    pub processes: usize,

    /// Refuse (accept and close at once, counted) connections beyond this many open
    /// (with --processes: in each process)
    #[arg(long)]
    pub max_conns: Option<usize>,

    /// Close a connection that sent nothing for this long (e.g. 30s, 500ms); off by default
    #[arg(long, value_parser = parse_idle_timeout)]
    pub idle_timeout: Option<Duration>,

    /// Write one CSV row per closed connection to this file, created anew (peer, bytes, reads,
    /// times, reason); connections still open at shutdown are logged with reason `shutdown`
    #[arg(long)]
    pub log: Option<PathBuf>,

    /// Also write the shutdown summary as JSON to this file
    #[arg(long)]
    pub summary_json: Option<PathBuf>,

    /// Cap on unsent echo per connection; reading a client stops while it is over
    /// the cap (backpressure), so memory stays bounded
    #[arg(long, default_value = "256KiB", value_parser = parse_bytes)]
    pub max_pending: usize,

    /// Stack size of each connection thread (threads model)
    #[arg(long, default_value = "128KiB", value_parser = parse_bytes)]
    pub thread_stack: usize,

    /// listen(2) backlog; the kernel caps it at net.core.somaxconn, so the default
    /// takes whatever the network namespace allows (65535 in the namespace lab)
    #[arg(long, default_value_t = 65535)]
    pub backlog: i32,

    /// io_uring: let a kernel thread poll the submission queue (IORING_SETUP_SQPOLL)
    #[arg(long)]
    pub sqpoll: bool,

    /// CPU time to spend on every read that returned data, in µs (a request's own work;
    /// 0: none, at most 1 s): every model, the same code
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=crate::server::work::MAX_WORK_US))]
    pub work_us: u64,

    /// Internal: this is a `--processes` child, sharing a port its parent already holds.
    /// Any other server refuses a port in use instead of sharing it through SO_REUSEPORT.
    #[arg(long, hide = true)]
    pub share_port: bool,
}

fn parse_bytes(text: &str) -> Result<usize, String> {
    let bytes = crate::units::parse_size(text)?;
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    usize::try_from(bytes).map_err(|_| format!("'{text}' is too large"))
}

impl ServerConfig {
    /// Worker threads to run: `--workers` or the number of CPUs.
    pub fn worker_count(&self) -> usize {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    pub(super) fn validate(&self) -> anyhow::Result<()> {
        if self.workers == Some(0) {
            anyhow::bail!("--workers must be at least 1");
        }
        if self.processes == 0 {
            anyhow::bail!("--processes must be at least 1");
        }
        if self.processes > 1 && !self.model.supports_processes() {
            anyhow::bail!(
                "--processes is for threads, poll, epoll, uring and tokio; {} runs in one process",
                self.model
            );
        }
        if self.backlog < 1 {
            anyhow::bail!("--backlog must be at least 1");
        }
        if self.max_conns == Some(0) {
            // As the scenario key `max_conns = 0` is refused: a server that takes no one.
            anyhow::bail!("--max-conns must be at least 1");
        }
        Ok(())
    }

    /// The command line that gives this configuration: `serve` and its flags, every
    /// option that is set (idle timeouts to the microsecond). Parsing it back
    /// (`ServerConfig::try_parse_from`) gives this configuration again.
    pub fn to_args(&self) -> Vec<OsString> {
        // Destructured whole, so a new field does not compile until it has its flag.
        let ServerConfig {
            model,
            addr,
            workers,
            trigger,
            accept,
            processes,
            max_conns,
            idle_timeout,
            log,
            summary_json,
            max_pending,
            thread_stack,
            backlog,
            sqpoll,
            work_us,
            share_port,
        } = self;
        let mut args: Vec<OsString> = vec!["serve".into()];
        let mut flag = |name: &str, value: OsString| {
            args.push(format!("--{name}").into());
            args.push(value);
        };
        flag("model", model.name().into());
        flag("addr", addr.to_string().into());
        if let Some(workers) = workers {
            flag("workers", workers.to_string().into());
        }
        flag("trigger", value_name(*trigger).into());
        flag("accept", value_name(*accept).into());
        flag("processes", processes.to_string().into());
        if let Some(max_conns) = max_conns {
            flag("max-conns", max_conns.to_string().into());
        }
        if let Some(idle) = idle_timeout {
            flag("idle-timeout", format!("{}us", idle.as_micros()).into());
        }
        if let Some(path) = log {
            flag("log", path.into());
        }
        if let Some(path) = summary_json {
            flag("summary-json", path.into());
        }
        flag("max-pending", max_pending.to_string().into());
        flag("thread-stack", thread_stack.to_string().into());
        flag("backlog", backlog.to_string().into());
        if *work_us > 0 {
            flag("work-us", work_us.to_string().into());
        }
        if *sqpoll {
            args.push("--sqpoll".into());
        }
        if *share_port {
            args.push("--share-port".into());
        }
        args
    }
}

/// The command-line spelling of a value-enum option.
fn value_name(value: impl clap::ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .expect("every value of the server's option enums has a name")
}

/// `--idle-timeout`: above 0, as 0 would close every connection before its first byte
/// (leaving the flag out turns the timeout off).
fn parse_idle_timeout(text: &str) -> Result<Duration, String> {
    let idle = crate::units::parse_duration(text)?;
    if idle.is_zero() {
        return Err("must be above 0 (leave --idle-timeout out for no timeout)".into());
    }
    Ok(idle)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn parse(args: &[&str]) -> ServerConfig {
        ServerConfig::try_parse_from(["serve"].iter().chain(args)).expect("valid flags")
    }

    #[test]
    fn default_config_round_trips() {
        let config = parse(&["--model", "poll"]);
        assert_eq!(
            ServerConfig::try_parse_from(config.to_args()).unwrap(),
            config
        );
    }

    #[test]
    fn config_with_every_option_set_round_trips() {
        let config = ServerConfig {
            model: Model::Uring,
            addr: "[::1]:0".parse().unwrap(),
            workers: Some(3),
            trigger: Trigger::Level,
            accept: AcceptMode::Exclusive,
            processes: 4,
            max_conns: Some(1000),
            idle_timeout: Some(Duration::from_millis(1500)),
            log: Some(PathBuf::from("/tmp/a dir/log.csv")),
            summary_json: Some(PathBuf::from("summary.json")),
            max_pending: 12345,
            thread_stack: 1 << 20,
            backlog: 17,
            sqpoll: true,
            work_us: 25,
            share_port: true,
        };
        let defaults = parse(&["--model", "threads"]);
        assert_ne!(config.addr, defaults.addr);
        assert_ne!(config.trigger, defaults.trigger);
        assert_ne!(config.accept, defaults.accept);
        assert_ne!(config.processes, defaults.processes);
        assert_ne!(config.max_pending, defaults.max_pending);
        assert_ne!(config.thread_stack, defaults.thread_stack);
        assert_ne!(config.backlog, defaults.backlog);
        assert_eq!(
            ServerConfig::try_parse_from(config.to_args()).unwrap(),
            config
        );
    }

    #[test]
    fn every_model_and_mode_round_trips() {
        for model in Model::ALL {
            assert_eq!(model.name().parse::<Model>(), Ok(model));
            for accept in [
                AcceptMode::Dispatcher,
                AcceptMode::Reuseport,
                AcceptMode::Exclusive,
            ] {
                let config = ServerConfig {
                    accept,
                    ..parse(&["--model", model.name(), "--idle-timeout", "250ms"])
                };
                assert_eq!(
                    ServerConfig::try_parse_from(config.to_args()).unwrap(),
                    config
                );
            }
        }
    }
}
