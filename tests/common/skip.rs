//! The skip policy: a skipped test is visible in plain `cargo test`, and never allowed
//! under CI.

use std::io::Write;
use std::process::Command;

/// Whether this is a CI run, where every test must run: a skip is a failure there.
pub use echolab::sys::in_ci;

/// Skips the calling test (the caller returns right after) with `reason`. Under CI
/// this panics instead. Otherwise the line `SKIPPED test: reason` is written straight
/// to the process's stderr: the harness captures `eprintln!` of a passing test, but not
/// a direct write, so plain `cargo test` shows the line among the results.
pub fn skip(test: &str, reason: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run: {reason}; under CI=true no test may be skipped"
    );
    let line = format!("SKIPPED {test}: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// What the namespace lab needs, in the runner's own words.
pub const NETNS_NEEDS: &str = "multi-host scenarios need root and iproute2 (`ip netns`)";

/// Whether a namespace-lab test can run: false when ECHOLAB_SKIP_NETNS skips it (a visible
/// skip, a failure under CI); panics when namespaces are unusable.
pub fn netns_available(test: &str) -> bool {
    if std::env::var_os("ECHOLAB_SKIP_NETNS").is_some() {
        skip(test, "ECHOLAB_SKIP_NETNS is set");
        return false;
    }
    let root = is_root();
    let ip = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        root && ip,
        "{NETNS_NEEDS} (root: {root}, `ip netns list` works: {ip}); set ECHOLAB_SKIP_NETNS=1 to skip"
    );
    true
}

/// Whether this test process runs as root (mounts, cgroups, perf events and namespaces
/// need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
