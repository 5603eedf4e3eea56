//! The README's quick start works as written: its `sh` block (marked `<!-- quick-start -->`)
//! is run verbatim, with the built binary first on PATH, in a fresh directory. The block starts
//! the binary's own demo MCP server (`demo-server --background`), changes its tools
//! (`--change`) and stops it; the test only picks a free port for `SERVER_URL`. The rows the
//! block's second run wrote are then compared with the ones "Reading the results" shows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The quick start's commands.
fn quick_start() -> String {
    let readme = readme();
    let (_, after_mark) = readme
        .split_once("<!-- quick-start -->")
        .expect("README marks its quick start with <!-- quick-start -->");
    let block = after_mark
        .trim_start()
        .strip_prefix("```sh\n")
        .expect("the quick start is an sh block right after its mark");
    let (block, _) = block.split_once("\n```").expect("the block is closed");
    block.to_string()
}

/// The first `json` block after `heading` in the README.
fn readme_json(heading: &str) -> Value {
    let readme = readme();
    let (_, after) = readme
        .split_once(heading)
        .unwrap_or_else(|| panic!("README has {heading:?}"));
    let (_, block) = after.split_once("```json\n").unwrap();
    let (block, _) = block.split_once("\n```").unwrap();
    serde_json::from_str(block).unwrap_or_else(|e| panic!("{heading}: {e}\n{block}"))
}

/// Stops the demo server when the test ends, however it ends (the block stops it too).
struct StopDemo(String);

impl Drop for StopDemo {
    fn drop(&mut self) {
        let _ = Command::new(BIN)
            .args(["demo-server", "--stop", &self.0])
            .env("RUST_LOG", "off")
            .output();
    }
}

/// Runs `script` with `sh -e` in `dir`, the binary first on PATH.
fn run_sh(script: &str, dir: &Path, server_url: &str) -> (String, String) {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env("SERVER_URL", server_url)
        .env("RUST_LOG", "warn");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name.starts_with("LEDGER_") {
            command.env_remove(name);
        }
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the quick start failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    (stdout, stderr)
}

/// The rows the last run wrote, in order.
fn rows(dir: &Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("storage/datasets/default"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap())
        .collect()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn the_readme_quick_start_runs_as_written_against_the_demo_server() {
    if Command::new("jq").arg("--version").output().is_err() {
        return support::skip("README quick start", "jq is not installed");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let _stop = StopDemo(url.clone());
    let dir = tempfile::tempdir().unwrap();

    let (stdout, stderr) = run_sh(&quick_start(), dir.path(), &url);

    // The jq line lists the change rows, and the diff table names the new tool and the
    // version change the run's default `alert_on` leaves out.
    assert!(
        stdout.contains("\"tool_added\",\"delete_note\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("\"input_schema_changed\",\"search_notes\""),
        "{stdout}"
    );
    assert!(stdout.contains("server_version_changed"), "{stdout}");
    assert!(stderr.contains("stopped"), "{stderr}");
    // The block stopped the server.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());

    // "Reading the results" shows rows of exactly this run: same fields, same verdicts.
    let rows = rows(dir.path());
    let server = rows
        .iter()
        .find(|row| row["record_type"] == "server")
        .unwrap();
    let shown = readme_json("The **`server` row**:");
    assert_eq!(keys(server), keys(&shown), "the server row's fields");
    for field in [
        "listing",
        "ok",
        "reason_code",
        "transport",
        "protocol_version",
        "protocol_era",
        "server_name",
        "server_version",
        "tools_total",
        "risk",
        "assumed_risk",
        "capabilities",
        "identity_signal",
        "ledger_status",
        "change_count",
        "digest_changed",
        "digest_algorithm",
    ] {
        assert_eq!(server[field], shown[field], "server row field {field}");
    }
    let tool = &server["tools"][0];
    let shown_tool = &shown["tools"][0];
    assert_eq!(keys(tool), keys(shown_tool));
    for field in [
        "name",
        "read_only_hint",
        "destructive_hint",
        "capabilities",
        "risk",
        "assumed_risk",
        "findings",
    ] {
        assert_eq!(tool[field], shown_tool[field], "tool field {field}");
    }
    // The summary row's chain fields: `ledger_chain_break` only when the chain is not intact.
    let summary = rows
        .iter()
        .find(|row| row["record_type"] == "summary")
        .unwrap();
    assert_eq!(summary["ledger_chain_status"], "intact", "{summary}");
    assert!(summary.get("ledger_chain_break").is_none(), "{summary}");
    // After the quick start, `verify` needs no --ledger: `quickstart` is the only ledger.
    let output = Command::new(BIN)
        .args(["verify", "--storage-dir"])
        .arg(dir.path().join("storage"))
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{verdict}");
    assert_eq!(verdict["ledger_name"], "quickstart");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("only ledger, \"quickstart\""),
        "verify says which ledger it took"
    );

    let change = rows
        .iter()
        .find(|row| row["change_class"] == "input_schema_changed")
        .unwrap();
    let shown = readme_json("A **`change` row** of the same run:");
    assert_eq!(keys(change), keys(&shown), "the change row's fields");
    for field in [
        "tool_name",
        "field",
        "old_value",
        "new_value",
        "severity",
        "compatibility",
        "details",
        "same_version",
    ] {
        assert_eq!(change[field], shown[field], "change row field {field}");
    }
}

#[test]
fn the_demo_server_refuses_urls_it_cannot_serve() {
    for url in ["127.0.0.1:8000/mcp", "http://10.1.2.3:8000/mcp"] {
        let output = Command::new(BIN)
            .args(["demo-server", "--background", url])
            .env("RUST_LOG", "error")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{url}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("http://127.0.0.1:8000/mcp"), "{stderr}");
    }
    // Controlling a server that is not there says how to start one.
    let port = support::process::closed_port();
    let output = Command::new(BIN)
        .args([
            "demo-server",
            "--change",
            &format!("http://127.0.0.1:{port}/mcp"),
        ])
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("demo-server --background"), "{stderr}");
}
