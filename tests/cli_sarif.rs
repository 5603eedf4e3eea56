//! SARIF output: `diff --format sarif` and the Actor's `REPORT.sarif` are valid SARIF 2.1.0
//! (checked against the official schema shipped by a package of the test tooling), read back
//! by a real SARIF consumer (`sarif-tools`), and say the same as the JSON rows.
//!
//! Both also pass the SARIF Multitool's rules with GitHub's (`validate --rule-kind "Sarif;Ghas"`,
//! the npm package `@microsoft/sarif-multitool`) except the notes README's SARIF section waives.
//!
//! The validation skips with a note when `tests/peers/install.sh` has not installed the SARIF
//! tooling (CI always installs it); what the log must contain is checked either way.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

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

fn tools_before() -> Value {
    json!([
        {"name": "keep", "description": "Reads a page.",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
         "annotations": {"readOnlyHint": true}},
        {"name": "gone", "description": "Old.", "inputSchema": {"type": "object"}},
    ])
}

/// Every severity: a removed tool, a breaking schema change, a tool added, a new description,
/// a read-only tool that may now write.
fn tools_after() -> Value {
    json!([
        {"name": "keep", "description": "Reads a page, faster.",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
         "annotations": {"readOnlyHint": false}},
        {"name": "wipe", "description": "Deletes every file under the path.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
         "annotations": {"destructiveHint": true}},
    ])
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

/// Validates `log` with the SARIF tooling and checks what the reader saw against `rows`.
fn validate(test: &str, log: &Path, rows: &[Value], gate_tripped: bool) {
    let Some(found) = support::sarif::check(log) else {
        support::skip(test, "SARIF tooling absent: run tests/peers/install.sh");
        return;
    };
    assert_eq!(found["schema_errors"], json!([]), "{found}");
    assert_eq!(
        found["schema_title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    assert_eq!(found["tools"], json!(["mcp-surface-ledger"]));
    assert_eq!(found["result_count"], json!(rows.len()));
    let classes: Vec<&Value> = rows.iter().map(|r| &r["change_class"]).collect();
    assert_eq!(found["rule_ids"], json!(classes));
    let levels: Vec<&str> = rows
        .iter()
        .map(|r| match r["severity"].as_str().unwrap() {
            _ if r["compatibility"] == "breaking" => "error",
            "high" => "error",
            "medium" => "warning",
            _ => "note",
        })
        .collect();
    assert_eq!(found["levels"], json!(levels));
    assert_eq!(found["record_severities"], json!(levels));
    assert_eq!(found["run_properties"]["gate_tripped"], gate_tripped);
    passes_github_rules(test, log);
}

/// The Multitool rules README's SARIF section waives, with the reason given there; each is a
/// note (a suggestion), never an error or a warning.
const WAIVED: [&str; 5] = [
    // message `text` rather than `id` + `arguments`: GitHub shows `text` (GH1007 wants it whole)
    "SARIF2002",
    // no versionControlProvenance: the log describes servers, not a checkout
    "SARIF2003",
    // rule ids are the change class names (`alert_on`, rows), not `ABC1234`
    "SARIF2009",
    // no snippet and no context region: the artifact path names no file the run can read
    "SARIF2010",
    "SARIF2011",
];

/// The log passes the Multitool's SARIF and GitHub (GHAS) rules: no error, no warning, and
/// only the waived notes.
fn passes_github_rules(test: &str, log: &Path) {
    let Some(findings) = support::sarif::multitool(log) else {
        support::skip(test, "SARIF Multitool absent: run tests/peers/install.sh");
        return;
    };
    let unwaived: Vec<String> = findings
        .iter()
        .filter(|f| f.level != "note" || !WAIVED.contains(&f.rule.as_str()))
        .map(|f| format!("{} {} {:?}", f.level, f.rule, f.arguments))
        .collect();
    assert!(
        unwaived.is_empty(),
        "{test}: the SARIF Multitool (Sarif;Ghas) found:\n{}",
        unwaived.join("\n")
    );
}

#[test]
fn the_github_rule_check_is_live() {
    let dir = tempfile::tempdir().unwrap();
    // What code scanning refuses or cannot file: a result without locations, a relative helpUri.
    let rejected = write(
        dir.path(),
        "rejected.sarif",
        &json!({"version": "2.1.0", "runs": [{
            "tool": {"driver": {"name": "x", "rules": [{"id": "r", "helpUri": "README.md#a b"}]}},
            "results": [{"ruleId": "r", "message": {"text": "m."}, "level": "error"}]}]}),
    );
    let Some(findings) = support::sarif::multitool(&rejected) else {
        return support::skip("the_github_rule_check_is_live", "SARIF Multitool absent");
    };
    let errors: Vec<&str> = findings
        .iter()
        .filter(|f| f.level == "error")
        .map(|f| f.rule.as_str())
        .collect();
    assert!(
        errors.iter().any(|r| r.starts_with("GH")),
        "a GitHub rule flags the result without locations: {findings:?}"
    );
    assert!(errors.contains(&"SARIF1002"), "{findings:?}");
}

#[test]
fn diff_prints_a_valid_sarif_log_with_one_result_per_change() {
    let dir = tempfile::tempdir().unwrap();
    let before = write(dir.path(), "before.json", &json!({"tools": tools_before()}));
    let after = write(dir.path(), "after.json", &json!({"tools": tools_after()}));
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let json_out = ledger(&["diff", b, a, "--format", "json"]);
    let document: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let rows = document["changes"].as_array().unwrap();
    let severities: Vec<&str> = rows
        .iter()
        .map(|r| r["severity"].as_str().unwrap())
        .collect();
    assert!(
        ["high", "medium", "low"]
            .iter()
            .all(|s| severities.contains(s)),
        "the sample covers every severity: {severities:?}"
    );

    let sarif_out = ledger(&["diff", b, a, "--format", "sarif", "--fail-on", "breaking"]);
    assert_eq!(
        sarif_out.status.code(),
        Some(1),
        "the gate trips after printing"
    );
    let log: Value = serde_json::from_slice(&sarif_out.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["properties"]["fail_on"], "breaking");
    assert_eq!(run["invocations"][0]["exitCode"], 1);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    let schema = results
        .iter()
        .find(|r| r["ruleId"] == "input_schema_changed")
        .unwrap();
    let names: Vec<&str> = schema["locations"][0]["logicalLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [a, "keep", "/tools/keep/inputSchema"]);
    assert_eq!(schema["properties"]["compatibility"], "breaking");
    assert_eq!(schema["level"], "error", "a breaking change is an error");
    assert_eq!(
        schema["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "mcp-surface-ledger/local/after.json"
    );
    assert_eq!(run["automationDetails"]["id"], "mcp-surface-ledger/");
    assert!(run["tool"]["driver"]["informationUri"].is_string());

    let path = write(dir.path(), "diff.sarif", &log);
    validate("diff_prints_a_valid_sarif_log", &path, rows, true);
}

#[test]
fn the_schema_check_is_live() {
    let dir = tempfile::tempdir().unwrap();
    let broken = write(
        dir.path(),
        "broken.sarif",
        &json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                "results": [{"ruleId": "r", "message": {"text": "m"}, "level": "high"}]}]}),
    );
    let Some(found) = support::sarif::check(&broken) else {
        return support::skip("the_schema_check_is_live", "SARIF tooling absent");
    };
    let errors = found["schema_errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e.as_str().unwrap().contains("level")),
        "{found}"
    );
}

fn actor_run(storage: &Path, input: &Path) -> Output {
    ledger(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--allow-private-targets",
    ])
}

fn change_rows(storage: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(storage.join("datasets/default"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_json::from_slice::<Value>(&std::fs::read(p).unwrap()).unwrap())
        .filter(|row| row["record_type"] == "change")
        .collect()
}

#[test]
fn the_actor_writes_report_sarif_when_asked() {
    let storage = tempfile::tempdir().unwrap();
    let surface = |tools: Value| json!({"name": "sarif-peer", "version": "1", "tools": tools});
    let peer = RmcpPeer::start(surface(tools_before()), RmcpMode::default());
    let sarif_file = storage
        .path()
        .join("key_value_stores/default/REPORT.sarif.json");
    let plain = write(
        storage.path(),
        "plain.json",
        &json!({"servers": [peer.url.as_str()], "ledger_name": "plain"}),
    );
    assert_eq!(actor_run(storage.path(), &plain).status.code(), Some(0));
    assert!(!sarif_file.exists(), "no REPORT.sarif unless asked");

    let asked = write(
        storage.path(),
        "asked.json",
        &json!({"servers": [peer.url.as_str()], "ledger_name": "asked",
                "report_sarif": true, "fail_on": "any"}),
    );
    assert_eq!(actor_run(storage.path(), &asked).status.code(), Some(0));
    let baseline: Value = serde_json::from_slice(&std::fs::read(&sarif_file).unwrap()).unwrap();
    assert_eq!(baseline["runs"][0]["results"], json!([]));

    peer.set_surface(surface(tools_after()));
    // Clear the dataset so only the second run's rows are read back.
    std::fs::remove_dir_all(storage.path().join("datasets/default")).unwrap();
    let output = actor_run(storage.path(), &asked);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = change_rows(storage.path());
    assert!(!rows.is_empty());
    let log: Value = serde_json::from_slice(&std::fs::read(&sarif_file).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["properties"]["fail_on"], "any");
    assert!(
        log["runs"][0]["automationDetails"]["id"]
            .as_str()
            .unwrap()
            .starts_with("mcp-surface-ledger/")
    );
    let port = peer.url.port().unwrap();
    for result in log["runs"][0]["results"].as_array().unwrap() {
        let physical = &result["locations"][0]["physicalLocation"];
        assert_eq!(
            physical["artifactLocation"]["uri"],
            format!("mcp-surface-ledger/127.0.0.1_{port}/mcp.json"),
            "{result}"
        );
        assert_eq!(physical["region"]["startLine"], 1);
    }
    assert_eq!(
        log["runs"][0]["results"].as_array().unwrap().len(),
        rows.len()
    );
    validate(
        "the_actor_writes_report_sarif_when_asked",
        &sarif_file,
        &rows,
        true,
    );
}

#[test]
fn a_broken_chain_is_an_error_result_in_report_sarif() {
    let storage = tempfile::tempdir().unwrap();
    let surface = |tools: Value| json!({"name": "sarif-peer", "version": "1", "tools": tools});
    let peer = RmcpPeer::start(surface(tools_before()), RmcpMode::default());
    let input = write(
        storage.path(),
        "input.json",
        &json!({"servers": [peer.url.as_str()], "ledger_name": "chained", "report_sarif": true}),
    );
    let sarif_file = storage
        .path()
        .join("key_value_stores/default/REPORT.sarif.json");
    let read_log =
        || serde_json::from_slice::<Value>(&std::fs::read(&sarif_file).unwrap()).unwrap();
    assert_eq!(actor_run(storage.path(), &input).status.code(), Some(0));
    peer.set_surface(surface(tools_after()));
    assert_eq!(actor_run(storage.path(), &input).status.code(), Some(0));
    let log = read_log();
    assert_eq!(
        log["runs"][0]["automationDetails"]["id"],
        "mcp-surface-ledger/chained/"
    );
    let rules: Vec<&Value> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["ruleId"])
        .collect();
    assert!(
        !rules.contains(&&json!("ledger_chain_not_intact")),
        "{rules:?}"
    );

    // Someone who can write the store edits a recorded change: the next run finds the chain
    // broken, and REPORT.sarif says so first, as an error filed under the ledger's path.
    let ledger_file = storage
        .path()
        .join("key_value_stores/mcp-tool-surface-ledger/chained.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&ledger_file).unwrap()).unwrap();
    let entry = index["servers"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap();
    entry["history"][0]["tool_name"] = json!("other");
    std::fs::write(&ledger_file, index.to_string()).unwrap();
    let output = actor_run(storage.path(), &input);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = read_log();
    let first = &log["runs"][0]["results"][0];
    assert_eq!(first["ruleId"], "ledger_chain_not_intact", "{log}");
    assert_eq!(first["level"], "error");
    assert_eq!(first["properties"]["ledger_chain_status"], "broken");
    let text = first["message"]["text"].as_str().unwrap();
    assert!(text.contains("\"chained\" is broken: "), "{text}");
    assert_eq!(
        first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "mcp-surface-ledger/chained.ledger.json"
    );
    passes_github_rules(
        "a_broken_chain_is_an_error_result_in_report_sarif",
        &sarif_file,
    );
}
