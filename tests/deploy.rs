//! The container image and the Kubernetes manifests (Dockerfile, deploy/kubernetes/),
//! checked offline: the manifests against the Kubernetes schemas (the Python
//! `kubernetes-validate` package), every `echolab VERB --flag` they run against the real
//! binary's `VERB --help`, the agents' shards against the Job and the merge, and the
//! Dockerfile's build against the README's. No container engine or cluster is needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{output_within, BIN, COMMAND_LIMIT};

/// kubernetes-validate loads a schema per resource kind: seconds, not minutes.
const VALIDATE_LIMIT: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every .yaml file of deploy/kubernetes, sorted.
fn manifest_files() -> Vec<PathBuf> {
    let dir = repo().join("deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "deploy/kubernetes has too few manifests: {files:?}"
    );
    files
}

fn has_kubernetes_validate() -> bool {
    Command::new("kubernetes-validate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn kubernetes_validate(files: &[PathBuf]) -> Output {
    output_within(
        Command::new("kubernetes-validate")
            .arg("--strict")
            .args(files),
        VALIDATE_LIMIT,
    )
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn the_manifests_validate_against_the_kubernetes_schemas() {
    if !has_kubernetes_validate() {
        common::skip(
            "deploy::the_manifests_validate_against_the_kubernetes_schemas",
            "kubernetes-validate is not on PATH (pip install kubernetes-validate)",
        );
        return;
    }
    let files = manifest_files();
    let out = kubernetes_validate(&files);
    let said = text(&out);
    assert!(
        out.status.success(),
        "the manifests do not validate:\n{said}"
    );
    // Every resource was checked against a schema, not skipped for want of one (only
    // the Kustomization, which is not a cluster resource, has none).
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        if name == "kustomization.yaml" {
            continue;
        }
        assert!(
            said.lines()
                .any(|l| l.contains(name) && l.contains(" passed for resource ")),
            "{name} was not validated against a schema:\n{said}"
        );
    }

    // The same check rejects a manifest the cluster would reject.
    let dir = tempfile::tempdir().unwrap();
    let job = read(&repo().join("deploy/kubernetes/load-job.yaml"));
    assert!(
        job.contains("\n  parallelism: "),
        "load-job.yaml has no spec.parallelism"
    );
    let broken = job.replace("\n  parallelism: ", "\n  parallelism: all-of-them # ");
    let broken_file = dir.path().join("load-job.yaml");
    std::fs::write(&broken_file, broken).unwrap();
    let out = kubernetes_validate(&[broken_file]);
    let said = text(&out);
    assert!(
        !out.status.success(),
        "a string parallelism was accepted:\n{said}"
    );
    assert!(
        said.contains("parallelism"),
        "the rejection does not name the field:\n{said}"
    );
}

// ---- the manifests as data ----

/// One YAML document of a manifest file, as JSON.
struct Doc {
    file: String,
    value: Value,
}

/// Every document of every manifest, read by Python's yaml module (installed with
/// kubernetes-validate), or None when it is missing.
fn manifest_docs() -> Option<Vec<Doc>> {
    const TO_JSON: &str = "import json, sys, yaml
print(json.dumps([[f, d] for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]))";
    let has_yaml = Command::new("python3")
        .args(["-c", "import yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_yaml {
        return None;
    }
    let out = output_within(
        Command::new("python3")
            .args(["-c", TO_JSON])
            .args(manifest_files()),
        COMMAND_LIMIT,
    );
    assert!(
        out.status.success(),
        "reading the manifests: {}",
        text(&out)
    );
    let pairs: Vec<(String, Value)> = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        pairs
            .into_iter()
            .map(|(file, value)| Doc {
                file: Path::new(&file)
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .into(),
                value,
            })
            .collect(),
    )
}

fn the_doc<'a>(docs: &'a [Doc], kind: &str, name: &str) -> &'a Value {
    let found: Vec<&Doc> = docs
        .iter()
        .filter(|d| d.value["kind"] == kind && d.value["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "expected one {kind} {name}");
    &found[0].value
}

/// The containers of a Pod, or of the pod template of a Deployment or Job.
fn containers(resource: &Value) -> Vec<&Value> {
    let pod = if resource["kind"] == "Pod" {
        &resource["spec"]
    } else {
        &resource["spec"]["template"]["spec"]
    };
    ["initContainers", "containers"]
        .iter()
        .filter_map(|key| pod[key].as_array())
        .flatten()
        .collect()
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|s| {
                    s.as_str()
                        .expect("command and args are strings")
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What a container runs: its command and args, or the image's ENTRYPOINT (echolab)
/// followed by its args.
fn argv(container: &Value) -> Vec<String> {
    let mut argv = strings(&container["command"]);
    if argv.is_empty() {
        argv.push("echolab".into());
    }
    argv.extend(strings(&container["args"]));
    argv
}

/// The value after `flag` in an argv (`--flag VALUE` or `--flag=VALUE`).
fn flag_value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter().enumerate().find_map(|(i, arg)| {
        if arg == flag {
            argv.get(i + 1).map(String::as_str)
        } else {
            arg.strip_prefix(flag)?.strip_prefix('=')
        }
    })
}

/// The argv of the one container of `kind`/`name`.
fn echolab_argv(docs: &[Doc], kind: &str, name: &str) -> Vec<String> {
    let resource = the_doc(docs, kind, name);
    let containers = containers(resource);
    assert_eq!(containers.len(), 1, "{kind} {name} has one container");
    argv(containers[0])
}

/// Whether `--help` text lists `flag` (as `--flag`, `-f, --flag` or `--flag <VALUE>`).
fn help_lists(help: &str, flag: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || c == ',')
        .any(|word| word == flag)
}

#[test]
fn every_echolab_flag_in_the_manifests_exists() {
    let Some(docs) = manifest_docs() else {
        common::skip(
            "deploy::every_echolab_flag_in_the_manifests_exists",
            "python3 with the `yaml` module is not installed (pip install kubernetes-validate)",
        );
        return;
    };
    let mut verbs = Vec::new();
    for doc in &docs {
        for container in containers(&doc.value) {
            let argv = argv(container);
            if argv[0] != "echolab" && !argv[0].ends_with("/echolab") {
                continue;
            }
            let verb = argv
                .get(1)
                .unwrap_or_else(|| panic!("{}: echolab with no verb", doc.file));
            let out = output_within(Command::new(BIN).args([verb, "--help"]), COMMAND_LIMIT);
            let help = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}: `echolab {verb}` is no verb",
                doc.file
            );
            assert!(
                !help_lists(&help, "--no-such-flag"),
                "the help matcher matches anything"
            );
            for arg in &argv[2..] {
                if let Some(flag) = arg.strip_prefix("--") {
                    let flag = format!("--{}", flag.split('=').next().unwrap());
                    assert!(
                        help_lists(&help, &flag),
                        "{}: `echolab {verb}` has no {flag}:\n{help}",
                        doc.file
                    );
                }
            }
            verbs.push(verb.clone());
        }
    }
    verbs.sort();
    assert_eq!(
        verbs,
        ["load", "merge", "serve"],
        "the manifests run these verbs"
    );
}

#[test]
fn the_agents_shards_meet_the_job_the_service_and_the_merge() {
    let Some(docs) = manifest_docs() else {
        common::skip(
            "deploy::the_agents_shards_meet_the_job_the_service_and_the_merge",
            "python3 with the `yaml` module is not installed (pip install kubernetes-validate)",
        );
        return;
    };
    let job = the_doc(&docs, "Job", "echolab-load");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    let shards = job["spec"]["completions"].as_u64().expect("completions");
    assert_eq!(
        job["spec"]["parallelism"].as_u64(),
        Some(shards),
        "every agent runs at once, to start together"
    );
    let load = echolab_argv(&docs, "Job", "echolab-load");
    assert_eq!(
        flag_value(&load, "--shard"),
        Some(format!("$(JOB_COMPLETION_INDEX)/{shards}").as_str())
    );
    assert_eq!(
        flag_value(&load, "--out"),
        Some("/results/agent-$(JOB_COMPLETION_INDEX)")
    );
    // --start-at is one value for every agent, from the environment.
    assert_eq!(flag_value(&load, "--start-at"), Some("$(START_AT)"));
    let agent = containers(job)[0];
    let env = agent["env"].as_array().expect("the agent's env");
    assert!(
        env.iter().any(|e| e["name"] == "START_AT"),
        "START_AT is not in the agent's env"
    );

    // The merge reads exactly the agents' directories.
    let merge = echolab_argv(&docs, "Job", "echolab-merge");
    let out = flag_value(&merge, "--out").expect("merge --out");
    let inputs: Vec<&str> = merge[2..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--") && *a != out)
        .collect();
    let expected: Vec<String> = (0..shards).map(|i| format!("/results/agent-{i}")).collect();
    assert_eq!(
        inputs, expected,
        "merge-job.yaml must list one directory per agent"
    );

    // The agents load the Service, which reaches the port the server listens on.
    let service = the_doc(&docs, "Service", "echolab-server");
    let port = &service["spec"]["ports"][0];
    assert_eq!(
        flag_value(&load, "--target"),
        Some(format!("echolab-server:{}", port["port"]).as_str())
    );
    let serve = echolab_argv(&docs, "Deployment", "echolab-server");
    let addr = flag_value(&serve, "--addr").expect("serve --addr");
    let server = containers(the_doc(&docs, "Deployment", "echolab-server"))[0];
    let named = server["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == port["targetPort"])
        .expect("the Service's targetPort names a container port");
    assert_eq!(addr, format!("0.0.0.0:{}", named["containerPort"]));

    // One image, one results volume, everywhere.
    let mut images: Vec<&Value> = docs
        .iter()
        .flat_map(|d| containers(&d.value))
        .map(|c| &c["image"])
        .collect();
    images.dedup();
    assert_eq!(
        images.len(),
        1,
        "the manifests name different images: {images:?}"
    );
    let claim = the_doc(&docs, "PersistentVolumeClaim", "echolab-results");
    for name in ["echolab-load", "echolab-merge"] {
        let volumes = &the_doc(&docs, "Job", name)["spec"]["template"]["spec"]["volumes"];
        assert_eq!(
            volumes[0]["persistentVolumeClaim"]["claimName"], claim["metadata"]["name"],
            "{name} mounts another volume"
        );
    }
    let kustomization = &docs
        .iter()
        .find(|d| d.value["kind"] == "Kustomization")
        .expect("kustomization.yaml")
        .value;
    for resource in strings(&kustomization["resources"]) {
        assert!(
            repo().join("deploy/kubernetes").join(&resource).is_file(),
            "kustomization.yaml lists {resource}, which does not exist"
        );
    }
}

// ---- the Dockerfile against the README ----

/// The Dockerfile's instructions as (KEYWORD, rest), continuation lines joined and
/// comments dropped.
fn instructions(dockerfile: &str) -> Vec<(String, String)> {
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in dockerfile.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    joined
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (keyword, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (keyword.to_uppercase(), rest.trim().to_string())
        })
        .collect()
}

/// The Dockerfile's stages, each a list of its instructions from its FROM on.
fn stages(dockerfile: &str) -> Vec<Vec<(String, String)>> {
    let mut stages: Vec<Vec<(String, String)>> = Vec::new();
    for instruction in instructions(dockerfile) {
        if instruction.0 == "FROM" {
            stages.push(Vec::new());
        }
        if let Some(stage) = stages.last_mut() {
            stage.push(instruction);
        }
    }
    stages
}

/// The options of a `cargo SUBCOMMAND ...` command line that decide how the binary is
/// built: everything after the subcommand, up to `--` (the program's own arguments), a
/// comment or the next shell command.
fn cargo_options(command: &str, subcommand: &str) -> Option<Vec<String>> {
    let start = command.find(&format!("cargo {subcommand}"))?;
    let words = command[start..].split_whitespace().skip(2);
    Some(
        words
            .take_while(|w| !matches!(*w, "--" | "&&" | "||" | ";" | "|") && !w.starts_with('#'))
            .map(str::to_string)
            .collect(),
    )
}

/// The Dockerfile's `cargo build` options, and the path its runtime stage copies the
/// binary from.
fn docker_build(dockerfile: &str) -> (Vec<String>, String) {
    let stages = stages(dockerfile);
    assert!(stages.len() >= 2, "the Dockerfile is not multi-stage");
    let options: Vec<Vec<String>> = stages
        .iter()
        .flatten()
        .filter(|(keyword, _)| keyword == "RUN")
        .filter_map(|(_, run)| cargo_options(run, "build"))
        .collect();
    assert_eq!(options.len(), 1, "the Dockerfile runs `cargo build` once");
    let runtime = stages.last().unwrap();
    let copied = runtime
        .iter()
        .filter(|(keyword, rest)| keyword == "COPY" && rest.starts_with("--from="))
        .map(|(_, rest)| rest.split_whitespace().nth(1).unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(
        copied.len(),
        1,
        "the runtime stage copies one file from the build"
    );
    (options[0].clone(), copied[0].clone())
}

/// The runtime stage's (base image, USER, ENTRYPOINT as an argv).
fn docker_runtime(dockerfile: &str) -> (String, String, Vec<String>) {
    let stages = stages(dockerfile);
    let runtime = stages.last().unwrap();
    let last = |keyword: &str| {
        runtime
            .iter()
            .rev()
            .find(|(k, _)| k == keyword)
            .map(|(_, rest)| rest.clone())
            .unwrap_or_else(|| panic!("the runtime stage has no {keyword}"))
    };
    let entrypoint: Vec<String> =
        serde_json::from_str(&last("ENTRYPOINT")).expect("ENTRYPOINT in exec form, a JSON array");
    (last("FROM"), last("USER"), entrypoint)
}

fn is_root(user: &str) -> bool {
    matches!(user.split(':').next().unwrap().trim(), "root" | "0" | "")
}

/// The README's `cargo build` and `cargo run` options (the quick start builds with
/// `cargo run --release`).
fn readme_build_options(readme: &str) -> Vec<Vec<String>> {
    readme
        .lines()
        .map(str::trim)
        .filter_map(|line| {
            ["build", "run"]
                .iter()
                .filter(|sub| line.starts_with(&format!("cargo {sub} ")))
                .find_map(|sub| cargo_options(line, sub))
        })
        .collect()
}

#[test]
fn the_dockerfile_builds_the_binary_as_the_readme_does() {
    let dockerfile = read(&repo().join("Dockerfile"));
    let readme = read(&repo().join("README.md"));

    let readme_options = readme_build_options(&readme);
    assert!(
        !readme_options.is_empty(),
        "the README builds nothing with cargo"
    );
    for options in &readme_options {
        assert_eq!(options, &readme_options[0], "the README builds two ways");
    }
    let (options, copied) = docker_build(&dockerfile);
    assert_eq!(
        options, readme_options[0],
        "the Dockerfile's `cargo build` differs from the README's"
    );
    let profile = if options.iter().any(|o| o == "--release") {
        "release"
    } else {
        "debug"
    };
    assert!(
        copied.ends_with(&format!("target/{profile}/echolab")),
        "the runtime stage copies {copied}, not the {profile} binary"
    );
    // The parser sees a difference when there is one.
    let debug = dockerfile.replace("cargo build --release", "cargo build");
    assert_ne!(docker_build(&debug).0, readme_options[0]);

    let (base, user, entrypoint) = docker_runtime(&dockerfile);
    assert!(
        base.contains("slim"),
        "the runtime stage is on {base}, not a slim base"
    );
    assert!(!is_root(&user), "the runtime stage runs as {user}");
    assert!(is_root("0:0") && is_root("root") && !is_root("10001:10001"));
    assert!(
        entrypoint
            .first()
            .is_some_and(|p| p == "echolab" || p.ends_with("/echolab")),
        "ENTRYPOINT {entrypoint:?} does not run echolab"
    );

    let dockerignore = read(&repo().join(".dockerignore"));
    let ignored: Vec<&str> = dockerignore
        .lines()
        .map(|l| l.trim().trim_end_matches('/'))
        .collect();
    for dir in ["target", "results"] {
        assert!(
            ignored.contains(&dir),
            ".dockerignore does not exclude {dir}/"
        );
    }
}
