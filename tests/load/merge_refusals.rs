//! Merges refused: what would double-count or mix, an unsharded part, missing shards, cut-off or damaged latency logs.

use super::*;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::*;
use serde_json::Value;

/// A load result directory for shard `shard` with `size`-byte messages.
fn shard_dir(server: SocketAddr, name: &str, shard: &str, size: &str) -> PathBuf {
    let dir = out_dir(name);
    let target = server.to_string();
    let out = echolab(&[
        "load",
        "--target",
        &target,
        "--connections",
        "4",
        "--requests",
        "3",
        "--size",
        size,
        "--shard",
        shard,
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

#[test]
fn merge_refuses_what_would_double_count_or_mix() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "merge-a", "0/2", "64");
    let b = shard_dir(server.addr, "merge-b", "1/2", "64");
    let overlapping = shard_dir(server.addr, "merge-overlap", "1/3", "64");
    let other_size = shard_dir(server.addr, "merge-size", "1/2", "128");
    let open_loop = out_dir("merge-open");
    let out = echolab(&[
        "load",
        "--target",
        &server.addr.to_string(),
        "--connections",
        "4",
        "--duration",
        "1s",
        "--rate",
        "20",
        "--size",
        "64",
        "--shard",
        "1/2",
        "--quiet",
        "--out",
        open_loop.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = out_dir("merge-out");
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let refused: [(&str, Vec<String>, &PathBuf); 5] = [
        ("twice", vec![path(&a), path(&a)], &merged),
        ("overlapping", vec![path(&a), path(&overlapping)], &merged),
        ("sizes", vec![path(&a), path(&other_size)], &merged),
        ("modes", vec![path(&a), path(&open_loop)], &merged),
        ("out is an input", vec![path(&a), path(&b)], &a),
    ];
    let summary_a = std::fs::read(a.join("summary.json")).unwrap();
    for (case, dirs, out_dir) in refused {
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(dirs.iter().map(String::as_str));
        let out_dir = path(out_dir);
        args.extend(["--out", &out_dir]);
        let out = echolab(&args);
        assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
        assert!(stderr(&out).contains("error: "), "{case}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(a.join("summary.json")).unwrap(), summary_a);
    assert!(!merged.exists(), "a refused merge writes nothing");
    let out = echolab(&["merge", &path(&a), &path(&b), "--out", &path(&merged)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read_json(&merged.join("summary.json"))["requests_completed"],
        12
    );
    for dir in [a, b, overlapping, other_size, open_loop, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// merge took an unsharded directory (every connection id) beside shard 0/2, doubling
/// connection ids, and summed counters past 2^64 - 1 by wrapping: both refused, saying why.
#[test]
fn merge_refuses_an_unsharded_part_among_shards_and_counts_past_u64() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "merge-mix-a", "0/2", "64");
    let b = shard_dir(server.addr, "merge-mix-b", "1/2", "64");
    let whole = out_dir("merge-mix-whole");
    let out = echolab(&[
        "load",
        "--target",
        &server.addr.to_string(),
        "--connections",
        "4",
        "--requests",
        "3",
        "--size",
        "64",
        "--quiet",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = out_dir("merge-mix-out");
    let merge = |dirs: &[&PathBuf]| {
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
        args.extend(["--out", merged.to_str().unwrap()]);
        echolab(&args)
    };
    let out = merge(&[&a, &whole]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a shard"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(whole.to_str().unwrap()),
        "{}",
        stderr(&out)
    );

    let path = b.join("summary.json");
    let mut summary = read_json(&path);
    summary["requests_completed"] = Value::from(u64::MAX);
    std::fs::write(&path, summary.to_string()).unwrap();
    let out = merge(&[&a, &b]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("requests_completed"),
        "{}",
        stderr(&out)
    );
    assert!(!merged.exists(), "a refused merge writes nothing");
    for dir in [a, b, whole] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A truncated latency.hlog line was reported as a Rust debug dump (`ParseError { .. }`)
/// without its line: the error names the file and the line.
#[test]
fn a_truncated_hlog_line_is_named_with_its_file_and_line() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "hlog-a", "0/2", "64");
    let b = shard_dir(server.addr, "hlog-b", "1/2", "64");
    let hlog = b.join("latency.hlog");
    let text = std::fs::read_to_string(&hlog).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines.len() - 1;
    assert!(lines[last].contains(','), "{text}");
    // Cut mid-histogram, the line end kept: a whole line, but a damaged one.
    let cut = lines[last].len() - 9;
    lines[last].truncate(cut);
    std::fs::write(&hlog, lines.join("\n") + "\n").unwrap();
    let merged = out_dir("hlog-out");
    let out = echolab(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(&format!("{} line {}", hlog.display(), last + 1)),
        "{text}"
    );
    assert!(!text.contains("{ "), "a debug dump: {text}");
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `echolab merge A B --out OUT EXTRA...`.
fn merge_two(a: &Path, b: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    echolab(&args)
}

/// `merge` of shards 0/3 and 1/3 exited 0 without a word: a merge missing shards names
/// them and exits 2, and with `--allow-partial` merges with the warning on stderr and in
/// the merged summary.json.
#[test]
fn a_merge_missing_shards_names_them_unless_allowed() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "partial-a", "0/3", "64");
    let b = shard_dir(server.addr, "partial-b", "1/3", "64");
    let merged = out_dir("partial-out");
    let merge = |extra: &[&str]| merge_two(&a, &b, &merged, extra);
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 2/3 is missing") && stderr(&out).contains("--allow-partial"),
        "{}",
        stderr(&out)
    );
    assert!(!merged.exists(), "a refused merge writes nothing");
    let out = merge(&["--allow-partial"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: partial merge: shard 2/3 is missing"),
        "{}",
        stderr(&out)
    );
    let summary = read_json(&merged.join("summary.json"));
    // Of 4 connections, shard 0/3 holds ids 0 and 3, shard 1/3 id 1: three, 3 requests each.
    assert_eq!(summary["requests_completed"], 9, "{summary}");
    assert!(
        summary["warnings"]
            .to_string()
            .contains("partial merge: shard 2/3 is missing"),
        "{summary}"
    );
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A latency.hlog cut off at a line end left only a warning inside summary.json, exit 0:
/// the warning is printed and the merge exits 1, unless `--allow-partial`.
#[test]
fn a_cut_off_latency_log_fails_the_merge_unless_allowed() {
    let server = Server::start("epoll", &["--workers", "1"]);
    let a = shard_dir(server.addr, "cut-a", "0/2", "64");
    let b = shard_dir(server.addr, "cut-b", "1/2", "64");
    let hlog = b.join("latency.hlog");
    let text = std::fs::read_to_string(&hlog).unwrap();
    // Every interval line of b's histogram gone, its header kept: b's requests unlogged.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('#') || l.starts_with('"'))
        .collect();
    assert!(kept.len() < text.lines().count(), "{text}");
    std::fs::write(&hlog, kept.join("\n") + "\n").unwrap();
    let merged = out_dir("cut-out");
    let merge = |extra: &[&str]| merge_two(&a, &b, &merged, extra);
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("warning: the latency logs hold 6 requests but the summaries count 12"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--allow-partial"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&merged);
    let out = merge(&["--allow-partial"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: the latency logs hold 6"),
        "{}",
        stderr(&out)
    );
    for dir in [a, b, merged] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
