//! Runs one test again inside a network namespace of its own, where a public unicast address
//! sits on the namespace's own loopback interface.
//!
//! On the platform the Actor refuses the private-target override, so the MCP servers a platform
//! test talks to must have a public address. The test re-executes itself under `unshare -n`,
//! brings `lo` up and adds [`PUBLIC_IP`] to it; every server binds inside that namespace and no
//! packet can leave it. Without `unshare` (not root, no util-linux) the test prints a skip note.
//!
//! Include with `#[path = "support/netns.rs"] mod netns;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::process::{Command, Stdio};

/// The public unicast address the namespace's `lo` carries.
pub const PUBLIC_IP: &str = "11.0.0.1";

/// Set in the re-executed child to the name of the test it must run.
const CHILD_VAR: &str = "MCP_LEDGER_NETNS_TEST";

/// Where the calling test body should run.
pub enum Place {
    /// This process is the child inside the namespace: run the body here.
    Inside,
    /// The parent: the child already ran the body (and passed) or the test was skipped.
    Done,
}

/// Re-executes the test `name` (its full libtest name) inside a fresh network namespace, or,
/// in that child, prepares the namespace. Panics with the child's output when the child fails.
pub fn run_inside(name: &str) -> Place {
    if std::env::var(CHILD_VAR).as_deref() == Ok(name) {
        prepare_namespace();
        return Place::Inside;
    }
    if !can_unshare() {
        eprintln!("SKIP {name}: unshare -n is not available (needs root and util-linux)");
        return Place::Done;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    // A watchdog: a hung child fails the test instead of blocking the suite.
    let output = Command::new("timeout")
        .args(["300", "unshare", "-n"])
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, name)
        .stdin(Stdio::null())
        .output()
        .expect("run the test inside unshare -n");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} failed inside its network namespace:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the child did not run {name}:\n{stdout}"
    );
    Place::Done
}

/// Runs the async test `body` inside a network namespace of its own (see [`run_inside`]) on a
/// two-thread runtime; `name` is the test's full libtest name.
pub fn in_namespace(name: &str, body: impl Future<Output = ()>) {
    if let Place::Inside = run_inside(name) {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
            .block_on(body);
    }
}

fn can_unshare() -> bool {
    Command::new("unshare")
        .args(["-n", "ip", "link", "set", "lo", "up"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn ip(args: &[&str]) -> String {
    let output = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        output.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `lo` up with [`PUBLIC_IP`]; checks that `lo` is the only interface, so nothing can leave.
fn prepare_namespace() {
    ip(&["link", "set", "lo", "up"]);
    ip(&["addr", "add", &format!("{PUBLIC_IP}/32"), "dev", "lo"]);
    let links = ip(&["-o", "link", "show"]);
    let names: Vec<&str> = links
        .lines()
        .filter_map(|line| line.split(':').nth(1))
        .map(str::trim)
        .collect();
    assert_eq!(names, ["lo"], "the namespace has other interfaces: {links}");
}
