//! The shape of src/: no module reaches, through any chain of imports, back into
//! itself, and no room imports a room above it in the declared order
//! (scripts/module-graph.sh; data flows one way through the rooms).

use std::process::Command;

/// The rooms of src/, bottom first: a room may import only rooms before it.
const ROOMS: &[&str] = &[
    "units",
    "stats",
    "console",
    "sys",
    "render",
    "server",
    "load",
    "results",
    "scenario",
    "experiment",
    "verdict",
    "claims",
    "compare",
    "plan",
    "report",
    "run",
];

/// `scripts/module-graph.sh src MODE`'s standard output; panics when it cannot run.
fn module_graph(mode: &str) -> (bool, String) {
    let out = Command::new("scripts/module-graph.sh")
        .args(["src", mode])
        .output()
        .expect("scripts/module-graph.sh runs (python3)");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Every edge `from -> to` of the graph's listing that crosses rooms against `order`:
/// into a room above its own, or from or into a room the order does not declare.
fn against_the_order(edges: &str, order: &[&str]) -> Vec<String> {
    let room = |module: &str| module.split("::").next().unwrap_or("").to_string();
    let rank = |room: &str| order.iter().position(|r| *r == room);
    edges
        .lines()
        .filter_map(|line| line.split_once(" -> "))
        .filter_map(|(from, to)| {
            let (from_room, to_room) = (room(from.trim()), room(to.trim()));
            if from_room == to_room {
                return None;
            }
            match (rank(&from_room), rank(&to_room)) {
                (Some(f), Some(t)) if t < f => None,
                (Some(_), Some(_)) => Some(format!("{from} -> {to}: up the order")),
                _ => Some(format!("{from} -> {to}: a room not in the order")),
            }
        })
        .collect()
}

#[test]
fn the_module_graph_has_no_cycle() {
    let (ok, stdout) = module_graph("--cycles");
    assert!(ok && stdout.contains(", 0 cycle(s)"), "{stdout}");
}

#[test]
fn no_room_imports_a_room_above_it() {
    let (ok, edges) = module_graph("--edges");
    assert!(ok, "{edges}");
    // The listing is the one the order is checked on: it names the rooms it crosses.
    assert!(edges.contains("report::build -> verdict"), "{edges}");
    assert_eq!(against_the_order(&edges, ROOMS), Vec::<String>::new());
}

#[test]
fn the_order_check_finds_an_import_up_the_order_and_an_undeclared_room() {
    let edges = "report::build -> verdict\n\
                 verdict::sweep -> results::reader\n\
                 results::reader -> report::build\n\
                 verdict -> verdict::sweep\n\
                 gadgets::x -> units\n";
    assert_eq!(
        against_the_order(edges, ROOMS),
        vec![
            "results::reader -> report::build: up the order".to_string(),
            "gadgets::x -> units: a room not in the order".to_string(),
        ]
    );
}
