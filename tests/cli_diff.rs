//! `diff` prints the change records an Actor run writes for the same two surfaces, in every
//! format, and its `--fail-on` gate sets the exit code.
//!
//! The Actor side serves two github-mcp-server releases through the in-process rmcp peer and
//! runs the real binary twice against one local storage. Needs `../shared/fixtures`; skips with
//! a note when it is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_surface_ledger::diff::ChangeClass;
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

fn fixtures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server");
    dir.is_dir().then_some(dir)
}

fn fixture(dir: &Path, release: &str) -> PathBuf {
    dir.join(format!("{release}.json"))
}

/// Runs the binary with a clean Apify environment (a local run, whatever the caller's shell).
fn ledger(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("RUST_LOG", "warn");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name == "CRAWLEE_STORAGE_DIR"
        {
            command.env_remove(name);
        }
    }
    command.env_remove("LEDGER_ALLOW_PRIVATE_TARGETS");
    command.output().expect("run mcp-surface-ledger")
}

fn diff_json(before: &Path, after: &Path) -> Value {
    let output = ledger(&[
        "diff",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("diff prints JSON")
}

/// The fields of a change row that describe the change (not where or when it was seen).
fn essence(row: &Value) -> Value {
    let mut row = row.clone();
    let object = row.as_object_mut().expect("change row object");
    object.remove("server_url");
    object.remove("observed_at");
    row
}

/// The fixture served as one release: the version is the file's release name, so a
/// change between two files is an ordinary release (no same-version signal).
fn served_surface(tools_list: &Path) -> Value {
    let result: Value = serde_json::from_slice(&std::fs::read(tools_list).unwrap()).unwrap();
    let release = tools_list.file_stem().unwrap().to_str().unwrap();
    json!({"name": "github-mcp-server", "version": release, "tools": result["tools"]})
}

/// Change rows of one Actor run against `url`, and the REPORT page it wrote.
fn actor_run(storage: &Path, input: &Path) -> (Vec<Value>, String) {
    let output = ledger(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--allow-private-targets",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dataset = storage.join("datasets/default");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dataset)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let rows = files
        .iter()
        .map(|p| serde_json::from_slice::<Value>(&std::fs::read(p).unwrap()).unwrap())
        .filter(|row| row["record_type"] == "change")
        .collect();
    let report = std::fs::read_to_string(storage.join("key_value_stores/default/REPORT.html"))
        .expect("the run writes REPORT");
    (rows, report)
}

#[test]
fn diff_prints_the_records_the_actor_run_writes() {
    let Some(dir) = fixtures() else {
        support::skip(
            "diff_prints_the_records_the_actor_run_writes",
            "../shared/fixtures absent",
        );
        return;
    };
    let storage = tempfile::tempdir().unwrap();
    // Raw tools/list files carry no server version, so the version row is left out.
    let all_classes: Vec<&str> = ChangeClass::ALL
        .iter()
        .filter(|c| **c != ChangeClass::ServerVersionChanged)
        .map(|c| c.as_str())
        .collect();
    for (old, new) in [
        ("v0.26.3", "v0.27.0"),
        ("v1.5.0", "v1.6.0"),
        ("v0.30.3", "v0.31.0"),
    ] {
        let (before, after) = (fixture(&dir, old), fixture(&dir, new));
        let peer = RmcpPeer::start(served_surface(&before), RmcpMode::default());
        let input = storage.path().join(format!("input-{old}.json"));
        let ledger_name = format!("pair-{}", old.replace('.', "-"));
        std::fs::write(
            &input,
            json!({"servers": [peer.url.as_str()], "alert_on": all_classes, "ledger_name": ledger_name})
                .to_string(),
        )
        .unwrap();
        let (baseline_rows, _) = actor_run(storage.path(), &input);
        assert!(baseline_rows.is_empty(), "a first run records no change");
        peer.set_surface(served_surface(&after));
        let (actor_rows, report) = actor_run(storage.path(), &input);

        let document = diff_json(&before, &after);
        let diff_rows = document["changes"].as_array().unwrap();
        assert!(!diff_rows.is_empty(), "{old} -> {new} has changes");
        let actor: Vec<Value> = actor_rows.iter().map(essence).collect();
        let offline: Vec<Value> = diff_rows.iter().map(essence).collect();
        assert_eq!(
            actor, offline,
            "{old} -> {new}: Actor rows and diff rows differ"
        );
        assert_eq!(document["changes_total"], json!(diff_rows.len()));
        assert!(
            actor_rows
                .iter()
                .all(|r| r["server_url"] == peer.url.as_str())
        );

        // The Actor's REPORT shows every change row.
        assert_eq!(
            report.matches("<details class=\"change sev-").count(),
            actor_rows.len()
        );
        let total = format!(
            "<li data-stat=\"changes_total\"><span class=\"num\">{}</span>",
            actor_rows.len()
        );
        assert!(report.contains(&total), "REPORT lacks {total}");
    }
}

#[test]
fn diff_of_two_snapshots_matches_diff_of_the_raw_lists() {
    let Some(dir) = fixtures() else {
        support::skip(
            "diff_of_two_snapshots_matches_diff_of_the_raw_lists",
            "../shared/fixtures absent",
        );
        return;
    };
    let (before, after) = (fixture(&dir, "v0.26.3"), fixture(&dir, "v0.27.0"));
    let work = tempfile::tempdir().unwrap();
    let mut snapshots = Vec::new();
    for (name, file) in [("before", &before), ("after", &after)] {
        let peer = RmcpPeer::start(served_surface(file), RmcpMode::default());
        let output = ledger(&["snapshot", "--allow-private-targets", peer.url.as_str()]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let snapshot: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(snapshot["snapshot_format"], "mcp-surface-ledger/snapshot@1");
        assert_eq!(snapshot["server"]["name"], "github-mcp-server");
        assert_eq!(snapshot["transport"], "streamable-http");
        assert!(snapshot["tools"][0]["input_schema_hash"].is_string());
        assert!(snapshot["risk"].is_string());
        let path = work.path().join(format!("{name}.json"));
        std::fs::write(&path, &output.stdout).unwrap();
        snapshots.push(path);
    }
    let from_snapshots = diff_json(&snapshots[0], &snapshots[1]);
    let from_lists = diff_json(&before, &after);
    // Snapshots carry the server version (raw lists do not): compare the tool rows.
    let essences = |doc: &Value| -> Vec<Value> {
        doc["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["change_class"] != "server_version_changed")
            .map(essence)
            .collect()
    };
    assert_eq!(essences(&from_snapshots), essences(&from_lists));
}

#[test]
fn every_format_prints_every_change() {
    let Some(dir) = fixtures() else {
        support::skip(
            "every_format_prints_every_change",
            "../shared/fixtures absent",
        );
        return;
    };
    let (before, after) = (fixture(&dir, "v1.3.0"), fixture(&dir, "v1.4.0"));
    let document = diff_json(&before, &after);
    let changes = document["changes"].as_array().unwrap();
    assert!(changes.len() > 2);
    for format in ["table", "markdown", "html"] {
        let output = ledger(&[
            "diff",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_eq!(output.status.code(), Some(0));
        let text = String::from_utf8(output.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for change in changes {
            let class = change["change_class"].as_str().unwrap();
            let tool = change["tool_name"].as_str().unwrap_or("-");
            // Markdown escapes `_`; compare against the escaped spelling there.
            let (class, tool) = if format == "markdown" {
                (class.replace('_', "\\_"), tool.replace('_', "\\_"))
            } else {
                (class.to_string(), tool.to_string())
            };
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains(&class) && l.contains(&tool)),
                "{format}: no line for {class} {tool}"
            );
        }
        let rows = match format {
            "table" => lines
                .iter()
                .filter(|l| {
                    ["low ", "medium ", "high "]
                        .iter()
                        .any(|s| l.starts_with(s))
                })
                .count(),
            "markdown" => lines
                .iter()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| Severity"))
                .count(),
            _ => text.matches("<details class=\"change sev-").count(),
        };
        assert_eq!(rows, changes.len(), "{format}: one row per change");
    }
}

#[test]
fn fail_on_breaking_trips_on_a_renamed_required_parameter_only() {
    let Some(dir) = fixtures() else {
        support::skip(
            "fail_on_breaking_trips_on_a_renamed_required_parameter_only",
            "../shared/fixtures absent",
        );
        return;
    };
    let run = |old: &str, new: &str, level: &str| {
        let output = ledger(&[
            "diff",
            fixture(&dir, old).to_str().unwrap(),
            fixture(&dir, new).to_str().unwrap(),
            "--fail-on",
            level,
        ]);
        let document: Value =
            serde_json::from_slice(&output.stdout).expect("output before the gate");
        (output.status.code(), document["gate_tripped"].clone())
    };
    assert_eq!(
        run("v0.26.3", "v0.27.0", "breaking"),
        (Some(1), json!(true))
    );
    assert_eq!(run("v1.5.0", "v1.6.0", "breaking"), (Some(0), json!(false)));
    assert_eq!(run("v0.26.3", "v0.27.0", "never"), (Some(0), json!(false)));
    assert_eq!(run("v0.26.3", "v0.27.0", "high"), (Some(0), json!(false)));
    assert_eq!(run("v0.26.3", "v0.27.0", "any"), (Some(1), json!(true)));
}

#[test]
fn stdin_and_bad_inputs() {
    let Some(dir) = fixtures() else {
        support::skip("stdin_and_bad_inputs", "../shared/fixtures absent");
        return;
    };
    let before = fixture(&dir, "v0.26.3");
    let after = std::fs::read(fixture(&dir, "v0.27.0")).unwrap();
    let mut child = Command::new(BIN)
        .args(["diff", before.to_str().unwrap(), "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &after).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["after"], "(stdin)");
    assert_eq!(document["changes_total"], 2);

    let missing = ledger(&["diff", "does-not-exist.json", before.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    let bad_format = ledger(&[
        "diff",
        before.to_str().unwrap(),
        before.to_str().unwrap(),
        "--format",
        "yaml",
    ]);
    assert_eq!(bad_format.status.code(), Some(2));
    let blocked = ledger(&["snapshot", "http://127.0.0.1:9/mcp"]);
    assert_eq!(
        blocked.status.code(),
        Some(2),
        "loopback needs --allow-private-targets"
    );
    let metadata = ledger(&[
        "snapshot",
        "--allow-private-targets",
        "http://169.254.169.254/",
    ]);
    assert_eq!(
        metadata.status.code(),
        Some(2),
        "cloud metadata stays blocked"
    );
}

#[test]
fn snapshot_of_an_unreachable_server_is_a_runtime_failure() {
    let port = support::process::closed_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let output = ledger(&["snapshot", "--allow-private-targets", &url]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty());
}

/// Issue 17: a tool that gains a root `anyOf` and, in the same release, `minLength: 1` on a
/// parameter is `breaking`, and `details` names both pointers (the undecidable-looking
/// combinator no longer hides the plain break). Needs no fixtures.
#[test]
fn diff_grades_an_added_any_of_and_a_tightened_parameter_as_breaking() {
    let work = tempfile::tempdir().unwrap();
    let tool = |schema: Value| json!({"tools": [{"name": "search_issues", "description": "Search issues.", "inputSchema": schema}]});
    let before = json!({"type": "object", "properties": {
        "query": {"type": "string"}, "label": {"type": "string"}}});
    let mut after = before.clone();
    after["properties"]["query"]["minLength"] = json!(1);
    after["anyOf"] = json!([{"required": ["query"]}, {"required": ["label"]}]);
    let (before_file, after_file) = (
        work.path().join("before.json"),
        work.path().join("after.json"),
    );
    std::fs::write(&before_file, tool(before).to_string()).unwrap();
    std::fs::write(&after_file, tool(after).to_string()).unwrap();

    let document = diff_json(&before_file, &after_file);
    let changes = document["changes"].as_array().unwrap();
    let schema: Vec<&Value> = changes
        .iter()
        .filter(|c| c["change_class"] == "input_schema_changed")
        .collect();
    assert_eq!(schema.len(), 1, "{changes:#?}");
    assert_eq!(schema[0]["compatibility"], "breaking", "{:#?}", schema[0]);
    let details: Vec<&str> = schema[0]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        details.iter().any(|d| d.contains(" at /anyOf")),
        "{details:?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("minLength added 1 at /properties/query")),
        "{details:?}"
    );

    let gated = ledger(&[
        "diff",
        before_file.to_str().unwrap(),
        after_file.to_str().unwrap(),
        "--fail-on",
        "breaking",
    ]);
    assert_eq!(gated.status.code(), Some(1), "--fail-on breaking trips");
}

/// A developer's own server on `http://localhost:PORT/mcp` (the real Python SDK): readable with
/// the operator override, refused with exit 2 and a message naming the flag without it.
#[test]
fn snapshot_reads_a_localhost_server_only_with_the_override() {
    let surface = support::surface::surface(
        "local-dev",
        "0.1.0",
        vec![support::surface::tool("ping_me", "Answers pong.")],
    );
    let file = support::surface::SurfaceFile::new(&surface);
    let Some(peer) = support::python::start(&file, support::python::PythonMode::default()) else {
        support::skip(
            "snapshot_reads_a_localhost_server_only_with_the_override",
            "Python peer not installed (tests/peers/install.sh)",
        );
        return;
    };
    let url = format!("http://localhost:{}/mcp", peer.port);

    let refused = ledger(&["snapshot", &url]);
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("--allow-private-targets"), "{message}");
    assert!(refused.stdout.is_empty());

    let output = ledger(&["snapshot", "--allow-private-targets", &url]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let snapshot: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(snapshot["server"]["name"], "local-dev");
    assert_eq!(snapshot["tools"][0]["name"], "ping_me");
}
