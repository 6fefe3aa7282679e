//! Model-specific tests: select's accept pause, threads' spawn failure, the per-host table on SIGINT.

use super::*;

/// The accept pause, per variant. Not uring: lowering the fd limit under its running ring
/// (how this test takes the spare away) does not stop its accepts (the waiting connection
/// was served), so this way cannot reach its pause.
mod accept_pause {
    #[test]
    fn threads() {
        super::accept_pauses_without_a_spare_fd(&super::threads::VARIANT);
    }
    #[test]
    fn select() {
        super::accept_pauses_without_a_spare_fd(&super::select::VARIANT);
    }
    #[test]
    fn poll() {
        super::accept_pauses_without_a_spare_fd(&super::poll::VARIANT);
    }
    #[test]
    fn epoll() {
        super::accept_pauses_without_a_spare_fd(&super::epoll::VARIANT);
    }
    #[test]
    fn epoll_level() {
        super::accept_pauses_without_a_spare_fd(&super::epoll_level::VARIANT);
    }
    #[test]
    fn epoll_exclusive() {
        super::accept_pauses_without_a_spare_fd(&super::epoll_exclusive::VARIANT);
    }
    #[test]
    fn tokio() {
        super::accept_pauses_without_a_spare_fd(&super::tokio::VARIANT);
    }
}

/// threads: a thread that cannot be created (a 1 TiB stack) refuses the connection,
/// counted as thread_spawn with the error pthread_create returned (glibc reports the
/// stack's failed mmap as EAGAIN), and the server lives on.
#[test]
fn threads_spawn_failure_refuses() {
    let server = Server::start("threads", &["--thread-stack", "1024GiB"]);
    for _ in 0..3 {
        let mut stream = server.connect();
        assert_eq!(probe(&mut stream, b"anyone?"), Probe::Closed);
    }
    let stopped = server.stop();
    check_stopped("threads", &stopped);
    assert_eq!(count(&stopped.summary, "accepted"), 0);
    assert_eq!(reason_count(&stopped.summary, "refused", "thread_spawn"), 3);
    assert_eq!(
        stopped.summary["refusal_errors"]["thread_spawn"],
        "EAGAIN (Resource temporarily unavailable)"
    );
}

/// Connects to `server` from the loopback address `source`.
fn connect_from(server: &Server, source: &str) -> std::net::TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let from: std::net::SocketAddr = format!("{source}:0").parse().unwrap();
    socket.bind(&from.into()).expect("bind the source address");
    socket.connect(&server.addr.into()).expect("connect");
    let stream: std::net::TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// SIGINT (Ctrl-C) takes the same path as SIGTERM: exit 0 with the summary, whose
/// per-host table (stderr and JSON) has each client address's connections, refusals and
/// bytes: 127.0.0.1 one connection of 100 B; 127.0.0.2 one of 300 B and one refused by
/// `--max-conns 2`.
#[test]
fn sigint_prints_the_summary_with_the_per_host_table() {
    let server = Server::start("poll", &["--max-conns", "2"]);
    let mut first = connect_from(&server, "127.0.0.1");
    assert_eq!(echo_once(&mut first, &payload(100, 1)), payload(100, 1));
    let mut second = connect_from(&server, "127.0.0.2");
    assert_eq!(echo_once(&mut second, &payload(300, 2)), payload(300, 2));
    let mut third = connect_from(&server, "127.0.0.2");
    assert_eq!(probe(&mut third, b"full?"), Probe::Closed);
    signal(server.pid(), libc::SIGINT);
    for stream in [&mut first, &mut second] {
        expect_server_eof(stream);
    }
    let stopped = server.wait_stopped();
    check_stopped("poll", &stopped);
    let table: Vec<Vec<&str>> = stopped
        .stderr
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.first().is_some_and(|h| h.starts_with("127.0.0.")))
        .map(|w| w[..5].to_vec())
        .collect();
    assert_eq!(
        table,
        [
            ["127.0.0.1", "1", "0", "100", "100"],
            ["127.0.0.2", "1", "1", "300", "300"]
        ],
        "{}",
        stopped.stderr
    );
    let hosts: Vec<(String, u64, u64, u64, u64)> = stopped.summary["hosts"]
        .as_array()
        .expect("hosts in the summary")
        .iter()
        .map(|h| {
            let n = |k: &str| h[k].as_u64().unwrap_or_else(|| panic!("{k} in {h}"));
            (
                h["host"].as_str().unwrap().to_string(),
                n("connections"),
                n("refused"),
                n("bytes_in"),
                n("bytes_out"),
            )
        })
        .collect();
    assert_eq!(
        hosts,
        [
            ("127.0.0.1".to_string(), 1, 0, 100, 100),
            ("127.0.0.2".to_string(), 1, 1, 300, 300)
        ]
    );
    assert_eq!(reason_count(&stopped.summary, "closed", "shutdown"), 2);
    assert_eq!(reason_count(&stopped.summary, "refused", "max_conns"), 1);
}
