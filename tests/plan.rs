//! `echolab plan` on a small real run: two models on loopback at two connection counts,
//! at a trickle and saturated, then the plan as text and JSON (every model's ceilings
//! positive, its binding limit one the model knows, its rate from the saturated steps'
//! CPU), and its usage errors (exit 2, naming what is missing).

mod common;

use common::{echolab, out_dir, run_scenario_ok, stderr, write_scenario};

/// The limits the cost model names (src/plan/model.rs, `Limit::name`).
const LIMITS: [&str; 6] = ["memory", "fds", "fd_setsize", "threads", "stacks", "cpu"];

/// select and epoll at 20 and 200 connections in a closed loop for 1 s, at a trickle
/// (100 ms between a connection's requests) and saturated (none), as plan.toml: the
/// columns plan reads (memory per held connection, fds, threads, CPU per request at two
/// counts).
const SCENARIO: &str = r#"
name = "plan-small"
models = ["select", "epoll"]
[server]
workers = 1
[load]
size = 64
duration = "1s"
connect_timeout = "5s"
[sweep]
delay = ["100ms", "0s"]
connections = [20, 200]
"#;

/// The machine and workload both plans of the small run are asked for, as JSON.
const AS_JSON_ON_ONE_CORE: [&str; 14] = [
    "--format",
    "json",
    "--cores",
    "1",
    "--memory",
    "1GiB",
    "--fd-limit",
    "20000",
    "--pid-max",
    "32768",
    "--connections",
    "500",
    "--rate",
    "1000",
];

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn plan_predicts_every_model_of_a_small_run() {
    let dir = out_dir("small");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = write_scenario(&dir, SCENARIO);
    let results = dir.join("results");
    let rows = run_scenario_ok(&scenario, &results, &["--no-report", "--quiet"]);
    assert_eq!(rows.len(), 8, "{rows:?}");
    let results = results.to_str().unwrap();

    let text = echolab(&["plan", results, "--connections", "500", "--rate", "1000"]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let text = stdout(&text);
    assert!(text.starts_with("What this machine would hold\n"), "{text}");
    for model in ["select", "epoll"] {
        assert!(text.contains(&format!("\n{model} ")), "{text}");
    }

    let json = echolab(&[&["plan", results][..], &AS_JSON_ON_ONE_CORE].concat());
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let plan: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(plan["machine"]["cores"], 1.0);
    assert_eq!(plan["machine"]["memory_bytes"], 1u64 << 30);
    assert_eq!(plan["machine"]["fd_limit"], 20000);
    assert_eq!(plan["workload"]["connections"], 500);
    assert_eq!(plan["workload"]["rate"], 1000.0);
    let models = plan["models"].as_array().unwrap();
    // plan lists the models as the run first met them, and a round's order is shuffled.
    let mut names: Vec<&str> = models
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["epoll", "select"]);
    let named = |name: &str| models.iter().find(|m| m["model"] == name).unwrap();
    for m in models {
        let binding = m["binding"].as_str().unwrap();
        assert!(LIMITS.contains(&binding), "{m}");
        let most = m["max_connections"]["median"].as_f64().unwrap();
        assert!(most > 0.0, "{m}");
        let ceilings = m["ceilings"].as_array().unwrap();
        let least = ceilings
            .iter()
            .map(|c| c["connections"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        assert_eq!(most, least, "{m}");
        for c in ceilings {
            assert!(LIMITS.contains(&c["limit"].as_str().unwrap()), "{c}");
            assert!(c["connections"].as_f64().unwrap() > 0.0, "{c}");
        }
        let costs = &m["unit_costs"];
        assert_eq!(
            costs["cpu_connections"],
            serde_json::json!([20, 200]),
            "{m}"
        );
        // The rate's CPU line is the saturated steps' (no think time), one repetition a
        // count: through both their costs when it rises, and one core's rate at 500 from it.
        assert_eq!(
            costs["saturated_connections"],
            serde_json::json!([20, 200]),
            "{m}"
        );
        let line = &costs["saturated_us"][0];
        let (a, b) = (line["a"].as_f64().unwrap(), line["b"].as_f64().unwrap());
        let model = m["model"].as_str().unwrap();
        let saturated: Vec<f64> = rows
            .iter()
            .filter(|r| r["model"] == model && r["delay_ms"].parse::<f64>() == Ok(0.0))
            .map(|r| r["server_cpu_us_per_request"].parse().unwrap())
            .collect();
        assert_eq!(saturated.len(), 2, "{rows:?}");
        if b > 0.0 {
            for (n, us) in [20.0, 200.0].iter().zip(&saturated) {
                assert!(((a + b * n) - us).abs() < 1e-6 * us, "{m}: {us} at {n}");
            }
        } else {
            let mean = (saturated[0] + saturated[1]) / 2.0;
            assert!((a - mean).abs() < 1e-6 * mean, "{m}: {saturated:?}");
        }
        let rate = m["max_rate"]["median"].as_f64().unwrap();
        assert!((rate - 1e6 / (a + b * 500.0)).abs() < 1e-6 * rate, "{m}");
        assert!(
            costs["kernel_bytes"]["median"].as_f64().unwrap() > 0.0,
            "{m}"
        );
        assert!(m["workload"]["fits"].is_boolean(), "{m}");
    }
    // select alone is held to FD_SETSIZE, in one process: below 1024 whatever the fds.
    let select = named("select");
    let fd_set = select["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["limit"] == "fd_setsize")
        .expect("select's FD_SETSIZE ceiling");
    let fd_set = fd_set["connections"].as_f64().unwrap();
    assert!(fd_set > 900.0 && fd_set < 1024.0, "{fd_set}");
    assert!(!named("epoll")["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["limit"] == "fd_setsize"));

    let markdown = echolab(&["plan", results, "--format", "markdown"]);
    assert_eq!(markdown.status.code(), Some(0), "{}", stderr(&markdown));
    assert!(
        stdout(&markdown).contains("## What this machine would hold\n"),
        "{}",
        stdout(&markdown)
    );

    // As `echolab run plan` leaves it: a composite whose parts each hold rows. plan reads
    // every part's rows (the same plan as from the run itself), and names a part it
    // cannot read.
    let composite = dir.join("composite");
    let part = composite.join("plan-trickle");
    std::fs::create_dir_all(&composite).unwrap();
    std::fs::rename(results, &part).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(part.join("manifest.json")).unwrap()).unwrap();
    manifest["parts"] = serde_json::json!(["plan-trickle", "plan-saturated"]);
    std::fs::write(
        composite.join("manifest.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    let csv = std::fs::read_to_string(part.join("results.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    std::fs::write(composite.join("results.csv"), format!("{header}\n")).unwrap();
    let from_parts = echolab(
        &[
            &["plan", composite.to_str().unwrap()][..],
            &AS_JSON_ON_ONE_CORE,
        ]
        .concat(),
    );
    assert_eq!(from_parts.status.code(), Some(0), "{}", stderr(&from_parts));
    assert!(
        stderr(&from_parts).contains("part plan-saturated:"),
        "{}",
        stderr(&from_parts)
    );
    let again: serde_json::Value = serde_json::from_slice(&from_parts.stdout).unwrap();
    assert_eq!(again["models"], plan["models"]);
}

#[test]
fn plan_refuses_what_it_cannot_plan_from_with_exit_2() {
    let missing = out_dir("missing");
    let out = echolab(&["plan", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));

    // A run without the cost columns: one row of a results directory, the rest empty.
    let bare = out_dir("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("manifest.json"), "{}").unwrap();
    std::fs::write(
        bare.join("results.csv"),
        "model,step,repetition,connections,size,status\nepoll,c10-s64,1,10,64,ok\n",
    )
    .unwrap();
    let out = echolab(&["plan", bare.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("epoll: no server_rss_hold_per_conn_bytes, no kernel_slab_per_conn_bytes")
            && err.contains("echolab run plan"),
        "{err}"
    );

    let out = echolab(&["plan", bare.to_str().unwrap(), "--rate=-5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--rate"), "{}", stderr(&out));
    let out = echolab(&["plan", bare.to_str().unwrap(), "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
