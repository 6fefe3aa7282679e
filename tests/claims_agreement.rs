//! scripts/claims-agreement.py on hand-written results directories: a claim confirmed
//! in one run and refuted in another is a flip (exit 1); decided against undecided is
//! listed apart (exit 0); a directory without Claims is a usage error (exit 2).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// A results directory holding a report.md with these "### Claim N: verdict" headings,
/// directly or (as a composite's parts) in `part`/report.md.
fn results(dir: &Path, part: Option<&str>, verdicts: &[(u32, &str)]) {
    let folder = part.map_or(dir.to_path_buf(), |p| dir.join(p));
    fs::create_dir_all(&folder).unwrap();
    let mut md = String::from("# classic\n\n## Claims\n\n| # | Claim | Verdict | Why |\n");
    for (n, v) in verdicts {
        md.push_str(&format!("\n### Claim {n}: {v}\n\nClaim: ...\n"));
    }
    fs::write(folder.join("report.md"), md).unwrap();
}

fn agreement(dirs: &[&Path]) -> Output {
    Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/claims-agreement.py"
        ))
        .args(dirs)
        .output()
        .expect("python3 runs")
}

#[test]
fn a_claim_confirmed_once_and_refuted_once_is_a_flip() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    results(
        &a,
        None,
        &[(1, "confirmed"), (2, "refuted"), (3, "no difference")],
    );
    // The second run is a composite whose Claims are in its parts' reports.
    results(&b, Some("claim-1"), &[(1, "refuted")]);
    results(&b, Some("claim-2"), &[(2, "refuted"), (3, "confirmed")]);
    let out = agreement(&[&a, &b]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout,
        "claim  1 | confirmed | refuted\n\
         claim  2 | refuted | refuted\n\
         claim  3 | no difference | confirmed\n\
         \x20 flip: claim 1 confirmed in run 1, refuted in run 2\n\
         \x20 decided in one run, not in another: claim 3\n\
         claims: 3; flips: 1; decided and undecided: 1\n"
    );
}

#[test]
fn decided_against_undecided_is_no_flip() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    results(&a, None, &[(4, "confirmed"), (18, "cannot be tested here")]);
    results(
        &b,
        None,
        &[(4, "inconclusive"), (18, "cannot be tested here")],
    );
    let out = agreement(&[&a, &b]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout,
        "claim  4 | confirmed | inconclusive\n\
         claim 18 | cannot be tested here | cannot be tested here\n\
         \x20 decided in one run, not in another: claim 4\n\
         claims: 2; flips: 0; decided and undecided: 1\n"
    );
}

#[test]
fn a_directory_without_claims_or_a_single_directory_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, empty) = (tmp.path().join("a"), tmp.path().join("empty"));
    results(&a, None, &[(1, "confirmed")]);
    fs::create_dir_all(&empty).unwrap();
    let out = agreement(&[&a, &empty]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no Claims in"), "{stderr}");
    assert_eq!(agreement(&[&a]).status.code(), Some(2));
}
