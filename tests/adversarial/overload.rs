//! Signals at random moments, open-loop overload, a server that escapes its stop, huge repetitions, a killed staircase.

use super::*;

/// A small seeded generator, so the random moments of a failing run can be replayed.
pub(crate) fn moments(seed: u64, n: usize, max: Duration) -> Vec<Duration> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            max.mul_f64((x % 1000) as f64 / 1000.0)
        })
        .collect()
}

/// A running `echolab load` against `addr`, writing into `out`.
fn start_load(addr: std::net::SocketAddr, out: &std::path::Path) -> std::process::Child {
    Command::new(BIN)
        .args(["load", "--target", &addr.to_string(), "--connections", "10"])
        .args(["--size", "256", "--duration", "30s", "--quiet", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The server, then the load, stopped by SIGTERM or SIGKILL at seeded random moments of a
/// running load: SIGTERM leaves a summary that agrees with the log; SIGKILL leaves no
/// process behind; the load's summary.json parses whatever happened to its server.
pub(crate) fn signals_at_random_moments(variant: &Variant) -> Measured {
    let model = variant.name;
    let seed = variant.name.bytes().map(u64::from).sum::<u64>();
    let at = moments(seed, 2, Duration::from_millis(1500));
    for (signal_number, delay) in [(libc::SIGTERM, at[0]), (libc::SIGKILL, at[1])] {
        let dir = tempfile::tempdir().unwrap();
        let server = start(variant, &[]);
        let load = start_load(server.addr, dir.path());
        std::thread::sleep(Duration::from_millis(300) + delay);
        let pid = server.pid();
        signal(pid, signal_number);
        if signal_number == libc::SIGTERM {
            let stopped = server.wait_stopped();
            assert!(
                stopped.status.success(),
                "{model}: SIGTERM after {delay:?}: {}",
                stopped.stderr
            );
            assert_eq!(
                count(&stopped.summary, "accepted"),
                stopped.log.len() as u64
            );
        } else {
            let mut server = server;
            wait_timeout(&mut server.child, Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{model}: SIGKILL did not end the server"));
            let orphans: Vec<_> = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                        s.rsplit(')')
                            .next()
                            .and_then(|r| r.split_whitespace().nth(1))
                            == Some(&pid.to_string())
                    })
                })
                .collect();
            assert!(
                orphans.is_empty(),
                "{model}: children of a killed server remain: {orphans:?}"
            );
        }
        signal(load.id() as i32, libc::SIGINT);
        let what = format!("{model}: load after SIGINT");
        let status = finish_within(load, &what, Duration::from_secs(15)).status;
        let summary = std::fs::read_to_string(dir.path().join("summary.json"))
            .unwrap_or_else(|e| panic!("{model}: load left no summary.json ({status}): {e}"));
        let summary: serde_json::Value = serde_json::from_str(&summary)
            .unwrap_or_else(|e| panic!("{model}: load summary.json does not parse: {e}"));
        assert!(summary.is_object(), "{model}: {summary}");
    }
    Measured::default()
}

/// Waits (at most `limit`) for `child` and returns its exit status and peak RSS in bytes,
/// from the kernel's own account (wait4's ru_maxrss), exact and without sampling.
fn wait_with_peak_rss(child: &mut std::process::Child, limit: Duration) -> (i32, u64) {
    let deadline = Instant::now() + limit;
    let pid = child.id() as i32;
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it and `status` for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -libc::WTERMSIG(status)
            };
            return (code, usage.ru_maxrss as u64 * 1024);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("load {pid} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Peak RSS an overloaded open loop may reach: what a load at capacity costs (buffers,
/// histograms), far below the gigabytes a queue of send times would grow to.
const OPEN_LOOP_RSS_BOUND: u64 = 256 * MIB as u64;

/// `load --rate 1e12` against a healthy server: memory stays bounded (the schedule is
/// arithmetic, the backlog a count), the run ends on time, says how far behind it fell
/// (planned against sent) and exits 1 as docs/outputs.md says for a run that sent under
/// 1 % of what its schedule planned.
pub(crate) fn open_loop_overload(variant: &Variant) -> Measured {
    let model = variant.name;
    let server = start(variant, &[]);
    let dir = tempfile::tempdir().unwrap();
    let mut load = Command::new(BIN)
        .args([
            "load",
            "--target",
            &server.addr.to_string(),
            "--connections",
            "4",
        ])
        .args([
            "--rate",
            "1e12",
            "--duration",
            "2s",
            "--size",
            "64",
            "--quiet",
            "--out",
        ])
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, peak) = wait_with_peak_rss(&mut load, LOAD_LIMIT);
    assert!(
        peak < OPEN_LOOP_RSS_BOUND,
        "{model}: the overloaded load peaked at {} MiB",
        peak / MIB as u64
    );
    let summary = parsed_json(&dir.path().join("summary.json"), "load summary");
    let planned = count(&summary, "requests_planned");
    let sent = count(&summary, "requests_sent");
    assert!(
        sent > 0 && sent * 100 < planned,
        "{model}: planned {planned}, sent {sent}"
    );
    assert!(sent >= count(&summary, "requests_completed"), "{summary}");
    let warnings = summary["warnings"].to_string();
    assert!(
        warnings.contains(&format!("sent {sent} of the {planned} requests")),
        "{model}: {warnings}"
    );
    assert_eq!(
        code, 1,
        "{model}: exit status of a run that sent under 1 % of its plan"
    );
    let fds = baseline_fds(&server);
    assert!(fds > 0);
    Measured::default()
}

/// A command server whose real server is a grandchild that calls setsid and keeps the
/// inherited stdout (a daemon escaping its process group): the step still ends on time,
/// the grandchild is killed with its step (its cgroup), and nothing listens after the run.
pub(crate) fn escaping_server(variant: &Variant) -> Measured {
    let model = variant.name;
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("grandchild.pid");
    let mut serve = format!("setsid {BIN} serve --model {}", variant.model);
    for arg in variant.args {
        serve += &format!(" {arg}");
    }
    let script = format!(
        "{serve} --addr 127.0.0.1:$1 & echo $! > {}; exec sleep 600",
        pid_file.display()
    );
    let scenario = format!(
        "models = [\"escaper\"]\nstep_timeout = \"15s\"\n\
         [model.escaper]\ncommand = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{port}}\"]\n\
         [load]\nconnections = 2\nsize = 64\nduration = \"1s\"\n"
    );
    let out = tmp.path().join("out");
    let mut command = Command::new(BIN);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(write_scenario(tmp.path(), &scenario))
        .args(QUIET_NO_REPORT)
        .arg("--out")
        .arg(&out);
    let output = output_within(&mut command, COMMAND_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let grandchild: u32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|e| panic!("{model}: the command never started its server: {e}"))
        .trim()
        .parse()
        .unwrap();
    let gone = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    if alive(grandchild) {
        // SAFETY: kill has no memory preconditions; the pid is this test's grandchild.
        unsafe { libc::kill(grandchild as i32, libc::SIGKILL) };
        panic!("{model}: the setsid grandchild {grandchild} outlived the run: {stderr}");
    }
    assert!(
        output.status.success(),
        "{model}: {}: {stderr}",
        output.status
    );
    let rows = results_rows(&out);
    assert_eq!(rows.len(), 1, "{model}: {stderr}");
    assert!(number(&rows[0], "requests") > 0.0, "{model}: {:?}", rows[0]);
    Measured::default()
}

/// `[model.v]`: the variant's model and server arguments, as the scenario's label `v`.
fn model_table(variant: &Variant) -> String {
    let args: Vec<String> = variant.args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[model.v]\nbase = {:?}\nargs = [{}]\n",
        variant.model,
        args.join(", ")
    )
}

/// `repetitions = 100000000` is refused at its line before anything runs (it made
/// millions of rows and an OOM kill); a run with many repetitions and a long pause
/// stops within seconds of SIGINT, its manifest saying interrupted.
pub(crate) fn huge_repetitions(variant: &Variant) -> Measured {
    let model = variant.name;
    let tmp = tempfile::tempdir().unwrap();
    let load = "[load]\nconnections = 2\nsize = 64\nduration = \"500ms\"\n";
    let huge = format!(
        "models = [\"v\"]\nrepetitions = 100000000\n{}{load}",
        model_table(variant)
    );
    let out = tmp.path().join("huge");
    let refused = run_scenario(&write_scenario(tmp.path(), &huge), &out, QUIET_NO_REPORT);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{model}: accepted: {stderr}");
    assert!(
        stderr.contains("line 2") && stderr.contains("repetitions = 100000000: at most 1000"),
        "{model}: {stderr}"
    );
    assert!(!out.join("results.csv").exists(), "{model}: it ran");

    let long = format!(
        "models = [\"v\"]\nrepetitions = 1000\npause = \"60s\"\n{}{load}",
        model_table(variant)
    );
    let out = tmp.path().join("long");
    let run = start_run(&write_scenario(tmp.path(), &long), &out);
    // The first row written: the run is in its pause.
    let started = Instant::now() + Duration::from_secs(30);
    while whole_rows_or_none(&out.join("results.csv")) < 1 && Instant::now() < started {
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(run.id() as i32, libc::SIGINT);
    let what = format!("{model}: run after SIGINT in its pause");
    let stopped = finish_within(run, &what, Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(130), "{what}: {stderr}");
    let manifest = parsed_json(&out.join("manifest.json"), &what);
    assert_eq!(manifest["status"], "interrupted", "{what}: {manifest}");
    assert_eq!(whole_rows(&out.join("results.csv"), &what), 1, "{what}");
    Measured::default()
}

/// A staircase killed by SIGKILL after two stairs were judged: results.csv holds their
/// rows (it held only its header, every stair lost).
pub(crate) fn staircase_killed(variant: &Variant) -> Measured {
    let model = variant.name;
    let _heavy = heavy();
    let tmp = tempfile::tempdir().unwrap();
    let scenario = format!(
        "models = [\"v\"]\n{}[load]\nsize = 16\ndelay = \"100ms\"\nconnect_timeout = \"5s\"\n\
         [staircase]\nbatch = 5\nevery = \"1s\"\nto = 30\n",
        model_table(variant)
    );
    let out = tmp.path().join("out");
    let mut run = start_run(&write_scenario(tmp.path(), &scenario), &out);
    // Stair 3's folder is made once stairs 1 and 2 are judged.
    let third = out.join("v").join("c15-s16-d100ms");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !third.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(third.exists(), "{model}: stair 3 never started");
    let rows = results_rows(&out);
    let judged = common::cells(&rows[..rows.len().min(2)], ["stair", "status"]);
    assert_eq!(judged, [["1", "ok"], ["2", "ok"]], "{model}: {rows:?}");
    Measured::default()
}

/// Rows of a CSV file so far (0 when it does not exist yet).
fn whole_rows_or_none(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count().saturating_sub(1))
}
