//! The `listening on ADDR model=M workers=W fd_limit=F pid=P` line: the first line a
//! server prints on stdout, once it is ready for clients, and the one thing the
//! processes that start servers (`serve --processes`, the experiment runner, the
//! tests) read from it.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use super::Model;

/// A server's announcement that it is ready on `addr`.
///
/// echolab prints every field but `processes` (only the parent of `--processes`
/// prints that one); the fields after the address are `key=value` words, so another
/// server may print only the address, and keys this version does not know are skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listening {
    pub addr: SocketAddr,
    pub model: Option<Model>,
    pub workers: Option<usize>,
    pub fd_limit: Option<u64>,
    pub pid: Option<u32>,
    /// Copies serving the port (`--processes`), when more than one.
    pub processes: Option<usize>,
}

const PREFIX: &str = "listening on ";

impl Listening {
    /// A line with the address alone; the other fields are filled in by the caller.
    pub fn at(addr: SocketAddr) -> Listening {
        Listening {
            addr,
            model: None,
            workers: None,
            fd_limit: None,
            pid: None,
            processes: None,
        }
    }
}

impl fmt::Display for Listening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.addr)?;
        if let Some(model) = self.model {
            write!(f, " model={model}")?;
        }
        if let Some(workers) = self.workers {
            write!(f, " workers={workers}")?;
        }
        if let Some(fd_limit) = self.fd_limit {
            write!(f, " fd_limit={fd_limit}")?;
        }
        if let Some(pid) = self.pid {
            write!(f, " pid={pid}")?;
        }
        if let Some(processes) = self.processes {
            write!(f, " processes={processes}")?;
        }
        Ok(())
    }
}

impl FromStr for Listening {
    type Err = String;

    fn from_str(line: &str) -> Result<Listening, String> {
        let rest = line
            .trim_end()
            .strip_prefix(PREFIX)
            .ok_or_else(|| format!("not a `{}ADDR` line: {line:?}", PREFIX.trim_end()))?;
        let mut words = rest.split_whitespace();
        let addr = words.next().ok_or("no address after `listening on`")?;
        let addr = addr
            .parse()
            .map_err(|_| format!("'{addr}' is not an address"))?;
        let mut listening = Listening::at(addr);
        for word in words {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| format!("'{word}' is not key=value"))?;
            match key {
                "model" => listening.model = Some(field(key, value)?),
                "workers" => listening.workers = Some(field(key, value)?),
                "fd_limit" => listening.fd_limit = Some(field(key, value)?),
                "pid" => listening.pid = Some(field(key, value)?),
                "processes" => listening.processes = Some(field(key, value)?),
                _ => {}
            }
        }
        Ok(listening)
    }
}

fn field<T: FromStr>(key: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("'{value}' is not a valid {key}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Listening {
        Listening {
            addr: "127.0.0.1:7000".parse().unwrap(),
            model: Some(Model::Epoll),
            workers: Some(4),
            fd_limit: Some(1_048_576),
            pid: Some(4242),
            processes: None,
        }
    }

    #[test]
    fn prints_the_documented_line() {
        assert_eq!(
            full().to_string(),
            "listening on 127.0.0.1:7000 model=epoll workers=4 fd_limit=1048576 pid=4242"
        );
    }

    #[test]
    fn round_trips() {
        let with_processes = Listening {
            addr: "[::1]:9".parse().unwrap(),
            processes: Some(3),
            ..full()
        };
        for listening in [full(), with_processes, Listening::at(full().addr)] {
            assert_eq!(listening.to_string().parse(), Ok(listening.clone()));
            assert_eq!(format!("{listening}\n").parse(), Ok(listening));
        }
    }

    #[test]
    fn reads_a_line_with_only_some_fields_and_skips_unknown_keys() {
        let line = "listening on 127.0.0.1:2 model=poll pid=77 color=blue";
        let listening: Listening = line.parse().unwrap();
        assert_eq!(listening.addr, "127.0.0.1:2".parse().unwrap());
        assert_eq!(listening.model, Some(Model::Poll));
        assert_eq!(listening.pid, Some(77));
        assert_eq!(listening.workers, None);
    }

    #[test]
    fn rejects_malformed_lines() {
        for line in [
            "",
            "listening",
            "listening on",
            "listening on ",
            "Listening on 127.0.0.1:1",
            "serving on 127.0.0.1:1 pid=1",
            "listening on localhost pid=1",
            "listening on 127.0.0.1 pid=1",
            "listening on 127.0.0.1:1 pid=one",
            "listening on 127.0.0.1:1 workers=-2",
            "listening on 127.0.0.1:1 model=carrier-pigeon",
            "listening on 127.0.0.1:1 pid",
        ] {
            assert!(line.parse::<Listening>().is_err(), "accepted {line:?}");
        }
    }
}
