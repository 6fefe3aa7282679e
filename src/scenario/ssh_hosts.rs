//! `[hosts]` on real machines: the server and client hosts named by ssh URLs,
//! `ssh://[user@]host[:port]` (as container engines name remote hosts), and the
//! address the load targets (`server_addr`), since the data network may not be the
//! one ssh uses.

use std::fmt;
use std::net::IpAddr;

/// A host reached with the system `ssh`: `ssh://[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshUrl {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl SshUrl {
    /// Parses `ssh://[user@]host[:port]`; a password, a path or a query is refused, so
    /// no credential can ever be written into a scenario (and from there into results).
    pub fn parse(text: &str) -> Result<SshUrl, String> {
        let bad = |why: &str| format!("{text:?} is not an ssh URL ssh://[user@]host[:port]: {why}");
        let rest = text
            .strip_prefix("ssh://")
            .ok_or_else(|| bad("it must begin with ssh://"))?;
        if rest.contains(['/', '?', '#']) {
            return Err(bad("a path, query or fragment is not allowed"));
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((user, _)) if user.contains(':') => {
                return Err(bad(
                    "a password is not allowed (use keys or an agent, as ssh itself does)",
                ))
            }
            Some((user, hostport)) => (Some(user.to_string()), hostport),
            None => (None, rest),
        };
        let (host, port) = match hostport.strip_prefix('[') {
            // [IPv6]:port
            Some(v6) => {
                let (host, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
                (host, after.strip_prefix(':'))
            }
            None => match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            },
        };
        let port = port
            .map(|p| match p.parse::<u16>() {
                Ok(p) if p > 0 => Ok(p),
                _ => Err(bad(&format!("port {p:?} is not 1 to 65535"))),
            })
            .transpose()?;
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._:%".contains(c))
                && !s.starts_with('-')
        };
        if !plain(host) {
            return Err(bad(
                "the host is empty or has characters a host name cannot",
            ));
        }
        if let Some(u) = &user {
            if !plain(u) {
                return Err(bad(
                    "the user is empty or has characters a user name cannot",
                ));
            }
        }
        Ok(SshUrl {
            user,
            host: host.to_string(),
            port,
        })
    }

    /// The destination and options for `ssh`: `-p PORT`, `-l USER`, then the host.
    pub fn ssh_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(port) = self.port {
            args.extend(["-p".to_string(), port.to_string()]);
        }
        if let Some(user) = &self.user {
            args.extend(["-l".to_string(), user.clone()]);
        }
        args.push(self.host.clone());
        args
    }
}

impl fmt::Display for SshUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ssh://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            write!(f, "{}", self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// `[hosts]` with ssh URLs: where the server and each load agent run.
#[derive(Debug, Clone, PartialEq)]
pub struct SshHosts {
    pub server: SshUrl,
    pub clients: Vec<SshUrl>,
    /// The server host's address on the data network: the server binds it, the load targets it.
    pub server_addr: IpAddr,
    /// `echolab run --install`: copy this binary to hosts whose echolab differs.
    pub install: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_urls_parse_and_print_back() {
        for (text, user, host, port) in [
            ("ssh://pc1", None, "pc1", None),
            ("ssh://lab@pc1", Some("lab"), "pc1", None),
            (
                "ssh://lab@10.0.0.2:2222",
                Some("lab"),
                "10.0.0.2",
                Some(2222),
            ),
            ("ssh://[fe80::1]:22", None, "fe80::1", Some(22)),
        ] {
            let url = SshUrl::parse(text).unwrap();
            assert_eq!(url.user.as_deref(), user, "{text}");
            assert_eq!(url.host, host, "{text}");
            assert_eq!(url.port, port, "{text}");
            assert_eq!(url.to_string(), text);
        }
        assert_eq!(
            SshUrl::parse("ssh://lab@pc1:2222").unwrap().ssh_args(),
            ["-p", "2222", "-l", "lab", "pc1"]
        );
    }

    #[test]
    fn bad_ssh_urls_are_refused_with_the_reason() {
        for (text, why) in [
            ("pc1", "must begin with ssh://"),
            ("http://pc1", "must begin with ssh://"),
            ("ssh://", "host is empty"),
            ("ssh://lab:secret@pc1", "password is not allowed"),
            ("ssh://pc1:0", "port \"0\""),
            ("ssh://pc1:99999", "port \"99999\""),
            ("ssh://pc1/path", "path"),
            ("ssh://-oProxyCommand=x", "host is empty or has characters"),
            ("ssh://pc 1", "host is empty or has characters"),
        ] {
            let e = SshUrl::parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}

#[cfg(test)]
mod scenario_tests {
    use super::super::parse;

    const HOSTS: &str = r#"
models = ["epoll"]
[load]
size = 32
requests = 5
[sweep]
connections = [6]
"#;

    fn with_hosts(hosts: &str) -> anyhow::Result<crate::scenario::Scenario> {
        parse("t.toml", "t", &format!("{HOSTS}[hosts]\n{hosts}"))
    }

    #[test]
    fn the_worked_example_names_a_server_and_three_clients() {
        let s = parse(
            "ssh-lab.toml",
            "ssh-lab",
            include_str!("../../scenarios/ssh-lab.toml"),
        )
        .unwrap();
        let ssh = s.ssh.expect("ssh hosts");
        assert_eq!(ssh.server.to_string(), "ssh://lab@server.lab.example");
        assert_eq!(ssh.clients.len(), 3);
        assert_eq!(ssh.server_addr.to_string(), "192.0.2.10");
        assert_eq!(s.client_hosts, None, "no namespaces for real machines");
    }

    #[test]
    fn ssh_hosts_are_checked_at_their_line() {
        let ok = with_hosts(
            "server = \"ssh://pc1\"\nclients = [\"ssh://pc2\", \"ssh://u@pc3:2222\"]\nserver_addr = \"10.0.0.1\"\n",
        )
        .unwrap();
        assert_eq!(ok.ssh.unwrap().clients[1].port, Some(2222));
        for (hosts, line, why) in [
            (
                "server = \"ssh://pc1\"\nclients = [\"ssh://u:pw@pc2\"]\nserver_addr = \"10.0.0.1\"\n",
                "line 10,",
                "password is not allowed",
            ),
            (
                "server = \"pc1\"\nclients = [\"ssh://pc2\"]\nserver_addr = \"10.0.0.1\"\n",
                "line 9,",
                "must begin with ssh://",
            ),
            (
                "server = \"ssh://pc1\"\nclients = [\"ssh://pc2\"]\nserver_addr = \"pc1\"\n",
                "line 11,",
                "not an IP address",
            ),
            ("clients = [\"ssh://pc2\"]\nserver_addr = \"10.0.0.1\"\n", "t.toml", "needs `server"),
            ("server = \"ssh://pc1\"\nclients = [\"ssh://pc2\"]\n", "t.toml", "needs `server_addr"),
            ("server = \"ssh://pc1\"\nclients = 2\n", "line 9,", "must then be ssh URLs"),
            ("server = \"ssh://pc1\"\nclients = []\nserver_addr = \"10.0.0.1\"\n", "line 10,", "lists no ssh host"),
            (
                "server = \"ssh://pc1\"\nclients = [\"ssh://pc2\"]\nserver_addr = \"10.0.0.1\"\nsomaxconn = 10\n",
                "t.toml",
                "never changes a real machine's",
            ),
        ] {
            let e = format!("{:#}", with_hosts(hosts).unwrap_err());
            assert!(e.contains(line) && e.contains(why), "{hosts}: {e}");
        }
    }
}
