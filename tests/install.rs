//! What an installed `echolab` brings beside itself: shell completions and man pages
//! generated from the same definitions as `--help`, naming every verb and every flag.

use std::path::Path;
use std::process::Command;

fn echolab(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_echolab"))
        .args(args)
        .output()
        .expect("cannot run echolab");
    assert!(
        out.status.success(),
        "echolab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The verbs `echolab PATH --help` lists under "Commands:" (not `help`).
fn verbs_under(path: &[&str]) -> Vec<String> {
    let help = echolab(&[path, &["--help"]].concat());
    let Some((_, commands)) = help.split_once("\nCommands:\n") else {
        return Vec::new();
    };
    commands
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|verb| *verb != "help")
        .map(String::from)
        .collect()
}

/// Every verb as its path of words (`["remote", "probe"]`), depth first.
fn all_verbs() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for verb in verbs_under(&words) {
            let mut deeper = path.clone();
            deeper.push(verb);
            out.push(deeper.clone());
            todo.push(deeper);
        }
    }
    out
}

/// The long flags of one verb, from the option lines of its `--help`.
fn flags_of(verb: &[String]) -> Vec<String> {
    let words: Vec<&str> = verb.iter().map(String::as_str).collect();
    let help = echolab(&[&words[..], &["--help"]].concat());
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix('-').and_then(|r| {
                // "-q, --quiet" or "--out <DIR>"
                r.split_once(", -").map_or(Some(r), |(_, long)| Some(long))
            })?;
            let name = l.strip_prefix('-')?;
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty()).then(|| format!("--{name}"))
        })
        .collect()
}

#[test]
fn completions_name_every_verb_and_flag() {
    let verbs = all_verbs();
    let names: Vec<&str> = verbs
        .iter()
        .filter_map(|v| v.last())
        .map(|s| s.as_str())
        .collect();
    // The top-level verbs as the README lists them, and the nested ones.
    for expected in [
        "serve",
        "load",
        "run",
        "report",
        "compare",
        "merge",
        "remote",
        "completions",
        "man",
        "probe",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let flags: Vec<(String, String)> = verbs
        .iter()
        .flat_map(|v| flags_of(v).into_iter().map(move |f| (v.join(" "), f)))
        .collect();
    assert!(
        flags.iter().any(|(v, f)| v == "run" && f == "--out"),
        "{flags:?}"
    );
    assert!(flags.len() > 60, "{} flags: {flags:?}", flags.len());
    for shell in ["bash", "zsh", "fish"] {
        let script = echolab(&["completions", shell]);
        for verb in &names {
            assert!(script.contains(verb), "{shell}: no verb {verb}");
        }
        for (verb, flag) in &flags {
            // fish writes a flag as `-l name`, the others as `--name`.
            let fish = format!("-l {}", &flag[2..]);
            assert!(
                script.contains(flag.as_str()) || (shell == "fish" && script.contains(&fish)),
                "{shell}: no {flag} of {verb}"
            );
        }
    }
    // Bash completes each verb in its own case arm.
    let bash = echolab(&["completions", "bash"]);
    for verb in &verbs {
        let arm = format!("echolab__subcmd__{}", verb.join("__subcmd__"));
        assert!(bash.contains(&arm), "bash: no {arm}");
    }
}

#[test]
fn the_man_page_names_every_verb_and_each_verb_page_its_flags() {
    // roff writes a hyphen as `\-`.
    let roff = |text: &str| text.replace('-', "\\-");
    let verbs = all_verbs();
    let names_every_verb = |page: &str| {
        assert!(page.contains(".TH echolab 1"), "{page:.300}");
        for verb in verbs.iter().filter(|v| v.len() == 1) {
            assert!(
                page.contains(&format!("echolab\\-{}(1)", verb[0])),
                "the man page does not name {}",
                verb[0]
            );
        }
    };
    names_every_verb(&echolab(&["man"]));
    let dir = tempfile::tempdir().unwrap();
    echolab(&["man", "--dir", &dir.path().display().to_string()]);
    names_every_verb(&read(&dir.path().join("echolab.1")));
    for verb in &verbs {
        let file = dir.path().join(format!("echolab-{}.1", verb.join("-")));
        let text = read(&file);
        for flag in flags_of(verb) {
            assert!(text.contains(&roff(&flag)), "{}: no {flag}", file.display());
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
