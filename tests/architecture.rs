//! The shape of src/: no module reaches, through any chain of imports, back into
//! itself (scripts/module-graph.sh; data flows one way through the rooms).

use std::process::Command;

#[test]
fn the_module_graph_has_no_cycle() {
    let out = Command::new("scripts/module-graph.sh")
        .args(["src", "--cycles"])
        .output()
        .expect("scripts/module-graph.sh runs (python3)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(", 0 cycle(s)"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
