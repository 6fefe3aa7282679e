//! SIGTERM and SIGKILL at random moments of `load` and `run`: whole outputs, a truthful manifest, no child left.

use super::*;

/// Seeds of the random moments the kill tests replay.
const KILL_SEEDS: [u64; 3] = [11, 2024, 977];

/// `echolab load --processes 2` for 30 s, writing into `out`.
fn start_load_processes(target: &str, out: &std::path::Path) -> std::process::Child {
    Command::new(BIN)
        .args(["load", "--target", target, "--processes", "2"])
        .args(["--connections", "4", "--size", "256", "--duration", "30s"])
        .args(["--quiet", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A SIGTERM at a random moment of `load --processes 2`: exit 0 when anything was
/// measured (else 1), summary.json complete and interrupted, every CSV whole rows, no
/// child left.
#[test]
fn load_sigterm_at_random_moments_leaves_whole_outputs() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(200) + moments(seed, 1, Duration::from_millis(1200))[0];
        let what = format!("load SIGTERM after {delay:?} (seed {seed})");
        let dir = tempfile::tempdir().unwrap();
        let load = start_load_processes(&target, dir.path());
        std::thread::sleep(delay);
        let children = descendants(load.id());
        signal(load.id() as i32, libc::SIGTERM);
        let out = finish_within(load, &what, Duration::from_secs(10));
        let (status, stderr) = (out.status, String::from_utf8_lossy(&out.stderr));
        assert_all_gone(&children, &what);
        let summary = parsed_json(&dir.path().join("summary.json"), &what);
        assert_eq!(summary["complete"], true, "{what}: {summary}");
        assert_eq!(summary["interrupted"], true, "{what}: {summary}");
        let completed = count(&summary, "requests_completed");
        let expected = if completed > 0 { 0 } else { 1 };
        assert_eq!(status.code(), Some(expected), "{what}: {status}: {stderr}");
        let connections = whole_rows(&dir.path().join("connections.csv"), &what);
        assert_eq!(
            connections, 4,
            "{what}: one row per connection of both children"
        );
        whole_rows(&dir.path().join("timeline.csv"), &what);
    }
    server.stop();
}

/// A SIGKILL at a random moment of `load --processes 2`: summary.json still parses (it
/// is replaced atomically) and both children go with their parent.
#[test]
fn load_sigkill_at_random_moments_leaves_a_summary_and_no_child() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let target = server.addr.to_string();
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(200) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("load SIGKILL after {delay:?} (seed {seed})");
        let dir = tempfile::tempdir().unwrap();
        let mut load = start_load_processes(&target, dir.path());
        std::thread::sleep(delay);
        let children = descendants(load.id());
        assert_eq!(children.len(), 2, "{what}: children {children:?}");
        signal(load.id() as i32, libc::SIGKILL);
        wait_timeout(&mut load, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: SIGKILL did not end the load"));
        assert_all_gone(&children, &what);
        let summary = parsed_json(&dir.path().join("summary.json"), &what);
        assert_eq!(summary["complete"], false, "{what}: {summary}");
    }
    server.stop();
}

/// A scenario of one 30 s step of poll, run into `out`.
fn start_long_run(tmp: &std::path::Path, out: &std::path::Path) -> std::process::Child {
    let scenario = write_scenario(
        tmp,
        "models = [\"poll\"]\n[load]\nconnections = 4\nsize = 256\nduration = \"30s\"\n",
    );
    start_run(&scenario, out)
}

/// A SIGTERM at a random moment of `echolab run`: exit 130, manifest.json interrupted,
/// results.csv whole rows with the step interrupted (once it has started), the step's load
/// summary parsing, no server or load left.
#[test]
fn run_sigterm_at_random_moments_leaves_a_truthful_manifest() {
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(300) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("run SIGTERM after {delay:?} (seed {seed})");
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("results");
        let run = start_long_run(tmp.path(), &out);
        std::thread::sleep(delay);
        let children = descendants(run.id());
        signal(run.id() as i32, libc::SIGTERM);
        let stopped = finish_within(run, &what, Duration::from_secs(10));
        let (status, stderr) = (stopped.status, String::from_utf8_lossy(&stopped.stderr));
        assert_eq!(status.code(), Some(130), "{what}: {status}: {stderr}");
        assert_all_gone(&children, &what);
        let manifest = parsed_json(&out.join("manifest.json"), &what);
        assert_eq!(manifest["interrupted"], true, "{what}: {manifest}");
        assert_eq!(manifest["status"], "interrupted", "{what}: {manifest}");
        assert!(!out.join(".manifest.json.tmp").exists(), "{what}");
        let rows = whole_rows(&out.join("results.csv"), &what);
        assert!(rows <= 1, "{what}: {rows} rows for one step");
        if rows == 1 {
            let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
            assert!(results.contains(",interrupted,"), "{what}: {results}");
        }
        for summary in glob_files(&out, "summary.json") {
            parsed_json(&summary, &what);
        }
    }
}

/// A SIGKILL at a random moment of `echolab run`: manifest.json parses and says the run
/// did not complete, and its server and load die with it.
#[test]
fn run_sigkill_at_random_moments_leaves_no_child() {
    for seed in KILL_SEEDS {
        let delay = Duration::from_millis(300) + moments(seed, 1, Duration::from_millis(1500))[0];
        let what = format!("run SIGKILL after {delay:?} (seed {seed})");
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("results");
        let mut run = start_long_run(tmp.path(), &out);
        std::thread::sleep(delay);
        let children = descendants(run.id());
        assert!(!children.is_empty(), "{what}: no server or load running");
        signal(run.id() as i32, libc::SIGKILL);
        wait_timeout(&mut run, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: SIGKILL did not end the run"));
        assert_all_gone(&children, &what);
        let manifest = parsed_json(&out.join("manifest.json"), &what);
        assert_eq!(manifest["status"], "running", "{what}: {manifest}");
        assert_eq!(manifest["interrupted"], true, "{what}: {manifest}");
        for summary in glob_files(&out, "summary.json") {
            parsed_json(&summary, &what);
        }
    }
}

/// Every file named `name` under `dir`.
fn glob_files(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(glob_files(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}
