//! Tests of the scenario format: every built-in scenario parses, sweeps expand in order,
//! and each refusal names the line it comes from.

use super::*;
use crate::server::Trigger;

fn parse_str(text: &str) -> anyhow::Result<Scenario> {
    parse("test.toml", "test", text)
}

#[test]
fn every_builtin_scenario_parses() {
    for (name, text) in BUILTIN {
        let s = parse(name, name, text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(s.name, name);
        assert!(!s.steps.is_empty() || !s.parts.is_empty(), "{name}");
        assert!(s.expected_duration.is_some(), "{name} states its duration");
    }
    let quick = parse("quick", "quick", BUILTIN[0].1).unwrap();
    let labels: Vec<&str> = quick.models.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(
        labels,
        ["threads", "select", "poll", "epoll", "uring", "tokio"]
    );
}

/// The minutes a built-in scenario's `expected_duration` declares: "about N minutes",
/// then ", up to M if undecided claims add repetitions" for one that may (M = N without).
fn declared_minutes(s: &Scenario) -> (u32, u32) {
    let text = s.expected_duration.as_deref().unwrap();
    let number = |t: &str| -> u32 {
        let n = t.split_whitespace().next().unwrap_or_default();
        n.parse()
            .unwrap_or_else(|_| panic!("{}: {text:?} is not \"about N minutes\"", s.name))
    };
    let about = number(text.strip_prefix("about ").unwrap_or_default());
    let most = text
        .split_once(", up to ")
        .map_or(about, |(_, rest)| number(rest));
    (about, most)
}

#[test]
fn classic_stays_under_90_minutes_when_every_budget_is_spent() {
    let builtin = |name: &str| {
        let text = BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
        parse(name, name, text).unwrap()
    };
    let classic = builtin("classic");
    let (mut about, mut most) = (0, 0);
    for part in &classic.parts {
        let s = builtin(&part.name);
        let (n, m) = declared_minutes(&s);
        if s.max_repetitions > s.repetitions {
            // An added round costs what the first ones did on average: the part's
            // minutes over its repetitions, for every repetition up to the budget.
            let rounds = f64::from(n) * f64::from(s.max_repetitions) / f64::from(s.repetitions);
            assert_eq!(m, rounds.ceil() as u32, "{}", s.name);
            assert!(
                s.expected_duration
                    .as_deref()
                    .unwrap()
                    .ends_with(&format!(", up to {m} if undecided claims add repetitions")),
                "{}",
                s.name
            );
        } else {
            assert_eq!(m, n, "{} adds no repetitions", s.name);
        }
        about += n;
        most += m;
    }
    assert_eq!(declared_minutes(&classic), (about, most));
    assert!(
        most < 90,
        "classic may take {most} minutes when every budget is spent"
    );
}

#[test]
fn rerun_disturbed_is_bounded() {
    let with = |n: &str| {
        parse(
            "t.toml",
            "t",
            &format!(
                "models = [\"epoll\"]\n[load]\nrequests = 1\n[failure]\nrerun_disturbed = {n}\n"
            ),
        )
    };
    assert_eq!(with("2").unwrap().failure.rerun_disturbed, 2);
    assert_eq!(with("0").unwrap().failure.rerun_disturbed, 0);
    for bad in ["6", "-1"] {
        let e = format!("{:#}", with(bad).unwrap_err());
        assert!(e.contains("must be 0 to 5"), "{e}");
    }
}

#[test]
fn sweep_expands_in_order_with_names() {
    let s = parse_str(
        r#"
models = ["poll", "epoll"]
repetitions = 2
[load]
requests = 5
delay = "10ms"
[sweep]
connections = [10, 100]
size = ["1KiB", 2048]
"#,
    )
    .unwrap();
    let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "c10-s1024-d10ms",
            "c100-s1024-d10ms",
            "c10-s2048-d10ms",
            "c100-s2048-d10ms"
        ]
    );
    assert_eq!(s.sweep_axes, ["connections", "size"]);
    assert_eq!(s.repetitions, 2);
    assert_eq!(s.steps[3].connections, 100);
    assert_eq!(s.steps[3].size, 2048);
    assert_eq!(s.steps[3].delay, Some(Duration::from_millis(10)));
}

#[test]
fn ranges_step_and_factor() {
    let s = parse_str(
            "models=[\"epoll\"]\n[load]\nduration=\"5s\"\n[sweep]\nconnections = { from = 1000, to = 4000, step = 1000 }\n",
        )
        .unwrap();
    let c: Vec<u64> = s.steps.iter().map(|s| s.connections).collect();
    assert_eq!(c, [1000, 2000, 3000, 4000]);
    let s = parse_str(
            "models=[\"epoll\"]\n[load]\nduration=\"5s\"\n[sweep]\ndelay = { from = \"1ms\", to = \"8ms\", factor = 2 }\n",
        )
        .unwrap();
    let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "c10-s64-d1ms",
            "c10-s64-d2ms",
            "c10-s64-d4ms",
            "c10-s64-d8ms"
        ]
    );
}

#[test]
fn variants_and_overrides() {
    let s = parse_str(
        r#"
models = ["epoll", "epoll-lt", "select"]
[server]
workers = 2
cpus = [0]
[model.epoll]
workers = 1
[model.epoll-lt]
base = "epoll"
trigger = "level"
[load]
requests = 1
"#,
    )
    .unwrap();
    assert_eq!(s.models[0].kind, ModelKind::Builtin(Model::Epoll));
    assert_eq!(s.models[0].options.workers, Some(Count(1)));
    assert_eq!(s.models[1].label, "epoll-lt");
    assert_eq!(s.models[1].kind, ModelKind::Builtin(Model::Epoll));
    assert_eq!(s.models[1].options.trigger, Some(Trigger::Level));
    assert_eq!(s.models[1].options.workers, Some(Count(2)));
    assert_eq!(s.models[2].options.cpus, Some(vec![0]));
}

fn error_of(text: &str) -> String {
    format!("{:#}", parse_str(text).unwrap_err())
}

#[test]
fn errors_name_the_line() {
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nconections = 5\n");
    assert!(
        e.starts_with("test.toml: line 4, column 1: unknown field `conections`"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nsize = \"12 parsecs\"\n");
    assert!(e.starts_with("test.toml: line 4, column 8: "), "{e}");
    assert!(e.contains("parsecs"), "{e}");
    let e = error_of("models = [\"poll\",\n  \"epol\"]\n[load]\nrequests = 3\n");
    assert!(
        e.starts_with("test.toml: line 2, column 3: unknown model 'epol'"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 0\n");
    assert!(
        e.starts_with("test.toml: line 3, column 12: must be at least 1, not 0"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nengine = \"kqueue\"\n");
    assert!(
        e.starts_with("test.toml: line 3, column 10: unknown variant `kqueue`"),
        "{e}"
    );
    let e =
        error_of("models = [\"epoll\"]\n[server]\ntrigger = \"sideways\"\n[load]\nrequests = 1\n");
    assert!(e.starts_with("test.toml: line 3, column 11: "), "{e}");
    let e =
        error_of("models = [\"select\"]\n[model.select]\nprocesses = 2\n[load]\nrequests = 1\n");
    assert!(e.contains("cannot run with processes = 2"), "{e}");
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nconnections = { from = 5, to = 1 , step = 1}\n");
    assert!(
        e.starts_with("test.toml: line 5, column 15: sweep `connections`: from is larger than to"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\nmessage = \"\"\n");
    assert!(
        e.starts_with("test.toml: line 4, column 11: a message needs at least 1 byte"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\nsize = \"0B\"\n");
    assert!(
        e.starts_with("test.toml: line 4, column 8: a message needs at least 1 byte"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nsize = 3\n");
    assert!(e.contains("needs `requests` or `duration`"), "{e}");
    let e = error_of("models = [\"poll\"]\n[model.epoll]\nworkers = 1\n[load]\nrequests = 1\n");
    assert!(e.starts_with("test.toml: line 2"), "{e}");
    assert!(e.contains("[model.epoll] is not in `models`"), "{e}");
}

#[test]
fn a_warmup_is_refused_at_its_line_where_nothing_could_be_left_out() {
    let head = "models = [\"poll\"]\n[load]\nwarmup = \"0.2s\"\n";
    for (rest, beside) in [
        ("requests = 3\n", "with requests"),
        (
            "duration = \"1s\"\n[sweep]\nrequests = [1, 2]\n",
            "with requests",
        ),
        ("hold = \"1s\"\n", "with hold"),
        (
            "duration = \"1s\"\nhold_together = \"1s\"\nconnect_rate = 100\n",
            "with hold",
        ),
        (
            "delay = \"100ms\"\n[staircase]\nbatch = 10\nevery = \"1s\"\nto = 20\n",
            "with [staircase]",
        ),
    ] {
        let e = error_of(&format!("{head}{rest}"));
        assert!(
            e.starts_with("test.toml: line 3, column 10: [load] warmup does not go"),
            "{e}"
        );
        assert!(e.contains(beside), "{e}");
    }
    let s = parse_str(&format!("{head}duration = \"1s\"\nrate = 100\n")).unwrap();
    let step = &s.steps[0];
    let target = "127.0.0.1:7".parse().unwrap();
    let args = load_config(&s.load, step, target, std::path::Path::new("out"));
    assert_eq!(args.warmup, Duration::from_millis(200));
    assert!(args.to_args().windows(2).any(|w| w == ["--warmup", "0.2s"]));
    let zero = parse_str("models = [\"poll\"]\n[load]\nwarmup = 0\nrequests = 3\n");
    assert!(zero.is_ok(), "no warm-up goes with anything");
}

#[test]
fn what_a_step_would_fail_on_is_refused_where_it_is_written() {
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nsize = \"17MiB\"\n");
    assert!(
        e.starts_with("test.toml: line 4, column 8: step c10-s17825792"),
        "{e}"
    );
    assert!(e.contains("--size must be 1 B to 16 MiB"), "{e}");
    let e =
        error_of("models = [\"poll\"]\n[load]\nrequests = 3\n[sweep]\nsize = [64, \"17MiB\"]\n");
    assert!(e.starts_with("test.toml: line 5, column 8: "), "{e}");
    let e = error_of(
        "models = [\"poll\"]\n[load]\nrequests = 3\npayload_file = \"/nonexistent/p.bin\"\n",
    );
    assert!(
        e.starts_with(
            "test.toml: line 4, column 16: payload_file /nonexistent/p.bin: No such file"
        ),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\npayload_file = \"/tmp\"\n");
    assert!(e.contains("/tmp is not a regular file"), "{e}");
    // Values the run could not use, refused at their line rather than failing the step.
    for (text, at, message) in [
        (
            "[load]\nduration = \"99999999999999999s\"\n",
            "line 3, column 12",
            "is longer than 100 years",
        ),
        (
            "[load]\nduration = \"1s\"\nwarmup = \"1000000h\"\n",
            "line 4, column 10",
            "is longer than 100 years",
        ),
        (
            "[load]\nrequests = 3\nsize = \"99999999999GiB\"\n",
            "line 4, column 8",
            "too large (16 EiB at most)",
        ),
        (
            "[network]\nrate = \"99999999999999999999gbit\"\n[load]\nrequests = 3\n",
            "line 3, column 8",
            "is too large",
        ),
        (
            "pause = \"99999h\"\n[load]\nrequests = 3\n",
            "line 2, column 9",
            "pause = 359996400 s is over an hour",
        ),
    ] {
        let e = error_of(&format!("models = [\"poll\"]\n{text}"));
        assert!(e.starts_with(&format!("test.toml: {at}: ")), "{text}: {e}");
        assert!(e.contains(message), "{text}: {e}");
    }
    let e = error_of("models = [\"poll\"]\n[load]\nduration = \"1s\"\nrate = 1e-300\n");
    assert!(
        e.starts_with(
            "test.toml: line 4, column 8: must be a rate of at least 0.001 per second, not 1e-300"
        ),
        "{e}"
    );
    // A rate's step name stays short whatever its digits.
    let s = parse("test.toml", "test", "models = [\"poll\"]\n[load]\nduration = \"1s\"\nconnections = 3\n[sweep]\nrate = [1e15, 0.001, 2500]\n").unwrap();
    let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["c3-s64-r1e15", "c3-s64-r0.001", "c3-s64-r2500"]);
    let e = error_of("models = [\"poll\"]\nstep_timeout = \"0s\"\n[load]\nrequests = 3\n");
    assert!(
        e.starts_with("test.toml: line 2, column 16: step_timeout must be above 0"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nconnections = 10000000\n");
    assert!(
        e.starts_with(
            "test.toml: line 4, column 15: step c10000000-s64 opens 10000000 connections"
        ),
        "{e}"
    );
    assert!(e.contains("local ports"), "{e}");
    let e = error_of("models = [\"poll\"]\n[load]\nduration = \"1s\"\nprocesses = 20\n");
    assert!(e.starts_with("test.toml: line 4, column 13: "), "{e}");
    assert!(
        e.contains("--processes 20 is more than the 10 connections"),
        "{e}"
    );
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 3\nargs = [\"--bogus\"]\n");
    assert!(
        e.starts_with("test.toml: line 4, column 8: [load] args: "),
        "{e}"
    );
    let e = error_of(
        "models = [\"poll\"]\n[model.poll]\nargs = [\"--workers\", \"x\"]\n[load]\nrequests = 1\n",
    );
    assert!(
        e.starts_with("test.toml: line 3, column 8: server `args` of model 'poll'"),
        "{e}"
    );
}

#[test]
fn a_bad_sweep_value_says_what_is_wrong() {
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nconnections = [0]\n");
    assert!(e.starts_with("test.toml: line 5, column "), "{e}");
    assert!(e.contains("must be at least 1, not 0"), "{e}");
    assert!(!e.contains("untagged"), "{e}");
    let e = error_of(
        "models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nsize = [64, \"12 parsecs\"]\n",
    );
    assert!(e.contains("parsecs"), "{e}");
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nconnections = 5\n");
    assert!(e.contains("a list of values or a range"), "{e}");
    let e = error_of("models = [\"poll\"]\n[load]\nrequests = 1\n[sweep]\nconnections = { from = 1, upto = 5 }\n");
    assert!(e.contains("unknown field `upto`"), "{e}");
}

#[test]
fn hosts_table() {
    let base = "models = [\"epoll\"]\n[load]\nrequests = 1\nconnections = 4\n";
    let s = parse_str(&format!("{base}[hosts]\nclients = 4\n")).unwrap();
    assert_eq!(s.client_hosts, Some(4));
    assert_eq!(parse_str(base).unwrap().client_hosts, None);
    assert_eq!(s.lab_sysctls, LabSysctls::default());
    let e = error_of(&format!("{base}[hosts]\nclients = 251\n"));
    assert!(
        e.starts_with(
            "test.toml: line 6, column 11: [hosts] clients must be between 1 and 250, not 251"
        ),
        "{e}"
    );
    let e = error_of(&format!("{base}[hosts]\nclients = 0\n"));
    assert!(e.contains("between 1 and 250, not 0"), "{e}");
    let s = parse_str(&format!(
        "{base}[hosts]\nclients = 2\nsomaxconn = 8192\nip_local_port_range = \"2000-3000\"\n\
             tcp_max_tw_buckets = 262144\n"
    ))
    .unwrap();
    assert_eq!(s.lab_sysctls.somaxconn, 8192);
    assert_eq!(s.lab_sysctls.tcp_max_tw_buckets, 262144);
    let e = error_of(&format!(
        "{base}[hosts]\nclients = 2\ntcp_max_tw_buckets = -1\n"
    ));
    assert!(
        e.contains("line 7, column 22: must be between 0 and 2147483647, not -1"),
        "{e}"
    );
    assert_eq!(s.lab_sysctls.tcp_max_syn_backlog, 65535);
    assert_eq!(s.lab_sysctls.ip_local_port_range, (2000, 3000));
    let e = error_of(&format!(
        "{base}[hosts]\nclients = 2\nip_local_port_range = \"9-1\"\n"
    ));
    assert!(
        e.contains("line 7, column 23: [hosts] ip_local_port_range"),
        "{e}"
    );
    let e = error_of(&format!("{base}[hosts]\nclients = 2\nbridge = \"br9\"\n"));
    assert!(
        e.starts_with("test.toml: line 7, column 1: unknown field `bridge`"),
        "{e}"
    );
    let e = error_of(&format!("{base}[hosts]\n"));
    assert!(e.contains("missing field `clients`"), "{e}");
    let e = error_of(&format!("{base}[hosts]\nclients = 5\n"));
    assert!(
            e.starts_with("test.toml: line 6, column 11: step c4-s64 has 4 connections, fewer than the 5 client hosts"),
            "{e}"
        );
    let e = error_of(&format!(
        "{base}source_addrs = \"127.0.0.2-127.0.0.3\"\n[hosts]\nclients = 2\n"
    ));
    assert!(
        e.contains("source_addrs cannot be used with [hosts]"),
        "{e}"
    );
}

#[test]
fn command_entries_and_network() {
    let base = "models = [\"epoll\", \"node\"]\n[server]\nworkers = 2\ncpus = [0]\n\
                    [model.node]\ncommand = [\"node\", \"s.js\", \"{port}\"]\n";
    let s = parse_str(&format!(
        "{base}memory_max = \"64MiB\"\n[load]\nrequests = 1\n"
    ))
    .unwrap();
    assert_eq!(
        s.models[1].kind,
        ModelKind::Command(vec!["node".into(), "s.js".into(), "{port}".into()])
    );
    // [server]'s cpus reach a command; its echolab-server options do not.
    assert_eq!(s.models[1].options.cpus, Some(vec![0]));
    assert_eq!(s.models[1].options.workers, None);
    assert_eq!(s.models[1].options.memory_max, Some(Bytes(64 << 20)));
    assert!(s.models[1].base_config().is_err());
    let e = error_of(&format!("{base}workers = 4\n[load]\nrequests = 1\n"));
    assert!(
        e.starts_with(
            "test.toml: line 5, column 1: [model.node] runs a command, so it cannot take `workers`"
        ),
        "{e}"
    );
    let e = error_of(
        "models = [\"n\"]\n[model.n]\ncommand = [\"node\", \"s.js\"]\n[load]\nrequests = 1\n",
    );
    assert!(e.contains("command never names `{port}`"), "{e}");
    let hosts = "models = [\"epoll\"]\n[load]\nrequests = 1\nconnections = 2\n";
    let s = parse_str(&format!(
        "{hosts}[hosts]\nclients = 2\n[network]\nrate = \"100mbit\"\n"
    ))
    .unwrap();
    assert_eq!(s.network.unwrap().rate, Some(BitRate(100_000_000)));
    let e = error_of(&format!("{hosts}[network]\nrate = \"100mbit\"\n"));
    assert!(e.starts_with("test.toml: line 5, column 1: [network] shapes the client hosts' links, so it needs [hosts]"), "{e}");
    let e = error_of(&format!(
        "{hosts}[hosts]\nclients = 2\n[network]\nrate = \"fast\"\n"
    ));
    assert!(
        e.starts_with("test.toml: line 8, column 8: rate \"fast\" needs a unit"),
        "{e}"
    );
    assert_eq!(BitRate::parse("1.5gbit"), Ok(BitRate(1_500_000_000)));
    assert_eq!(BitRate::parse("64kbit"), Ok(BitRate(64_000)));
    assert!(BitRate::parse("0bit").is_err());
}

#[test]
fn requests_and_hosts_axes() {
    let s = parse_str(
            "models=[\"epoll\"]\n[load]\nconnections = 4\n[hosts]\nclients = 2\n[sweep]\nrequests = [10, 100]\nhosts = [1, 2]\n",
        )
        .unwrap();
    let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "c4-s64-n10-h1",
            "c4-s64-n100-h1",
            "c4-s64-n10-h2",
            "c4-s64-n100-h2"
        ]
    );
    assert_eq!(s.sweep_axes, ["requests", "hosts"]);
    assert_eq!(s.steps[1].requests, Some(100));
    assert_eq!(s.steps[2].hosts, Some(2));
    assert!(s.steps[1].at_least_as_heavy_as(&s.steps[0]));
    assert!(!s.steps[2].at_least_as_heavy_as(&s.steps[0]));
    let e = error_of("models=[\"epoll\"]\n[load]\nrequests = 1\n[sweep]\nhosts = [1, 2]\n");
    assert!(
        e.starts_with("test.toml: line 5, column 9: a `hosts` sweep needs [hosts] clients"),
        "{e}"
    );
    let e = error_of(
            "models=[\"epoll\"]\n[load]\nrequests = 1\nconnections = 4\n[hosts]\nclients = 2\n[sweep]\nhosts = [1, 3]\n",
        );
    assert!(
        e.contains("sweep `hosts`: 3 is not between 1 and [hosts] clients = 2"),
        "{e}"
    );
}

#[test]
fn heaviness() {
    let step = |c, d: Option<u64>| Step {
        name: String::new(),
        connections: c,
        size: 64,
        delay: d.map(Duration::from_millis),
        rate: None,
        workers: None,
        requests: None,
        hosts: None,
    };
    assert!(step(1500, None).at_least_as_heavy_as(&step(1100, None)));
    assert!(step(1100, None).at_least_as_heavy_as(&step(1100, None)));
    assert!(!step(500, None).at_least_as_heavy_as(&step(1100, None)));
    assert!(step(100, Some(1)).at_least_as_heavy_as(&step(100, Some(10))));
    assert!(!step(100, Some(100)).at_least_as_heavy_as(&step(100, Some(10))));
    assert!(step(100, None).at_least_as_heavy_as(&step(100, Some(10))));
}

/// `[thresholds]` by one rule: the scenario keeps them parsed, and a results directory's
/// scenario text (here with a key today's format refuses, as an older echolab's may
/// have) yields the same, in figure order.
#[test]
fn thresholds_are_parsed_once_by_one_rule() {
    let table = "[thresholds]\np99 = \"< 1ms\"\nerror_rate = \"< 0.001\"\n";
    let scenario = parse_str(&format!(
        "models = [\"epoll\"]\n[load]\nrequests = 1\n{table}"
    ))
    .unwrap();
    let texts: Vec<&str> = scenario
        .thresholds
        .iter()
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(texts, ["error_rate < 0.001", "p99 < 1ms"]);
    let older = format!("models = [\"epoll\"]\nretired_key = 3\n{table}");
    assert!(parse_str(&older).is_err());
    assert_eq!(thresholds_of(&older).unwrap(), scenario.thresholds);
    assert_eq!(thresholds_of("models = [\"epoll\"]\n").unwrap(), []);
    let e = format!(
        "{:#}",
        thresholds_of("[thresholds]\nheld = \"> +5%\"\n").unwrap_err()
    );
    assert!(e.starts_with("[thresholds] held: "), "{e}");
}
