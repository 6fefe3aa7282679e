//! The skip policy: a skipped test is visible in plain `cargo test`, and never allowed
//! under CI.

use std::process::Command;

/// Skips the calling test (the caller returns right after) with `reason`, as
/// [`echolab::sys::skip_test`] does: a visible SKIPPED line, a failure under CI.
pub use echolab::sys::skip_test as skip;

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
pub use echolab::sys::is_root;
