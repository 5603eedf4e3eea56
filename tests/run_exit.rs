//! A scheduler can tell a bad run from a good one: `exit_nonzero_on` (INPUT) and
//! `--exit-nonzero-on` turn a finished run that read nothing, could not read some entries, had
//! a credential refused or could not read the registry into exit code 4, and a ledger chain
//! that is not intact into exit code 5; the status line says why. Unasked, or not met, the run
//! exits as before.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use actor::{Rows, RunDir};
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

const EVERY_CONDITION: [&str; 5] = [
    "nothing_read",
    "some_unreadable",
    "auth_rejected",
    "registry_failed",
    "chain_not_intact",
];

/// Nothing listens there: connecting is refused (`CONNECT_FAIL`).
const CLOSED: &str = "http://127.0.0.1:9/mcp";

/// Refused by the address policy even with `--allow-private-targets` (`BLOCKED_TARGET`).
const BLOCKED: &str = "http://169.254.169.254/mcp";

/// One run of the binary in `dir`, loopback allowed: exit code and standard error.
fn run(dir: &RunDir, input: &Value, extra: &[&str]) -> (i32, String) {
    let output = dir.run_binary(input, extra);
    let log = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().unwrap_or(-1), log)
}

/// The last terminal status message the run logged (locally, `final status`).
fn final_status(log: &str) -> String {
    log.lines()
        .rfind(|line| line.contains("final status"))
        .unwrap_or_else(|| panic!("no final status in:\n{log}"))
        .to_string()
}

fn readable() -> RmcpPeer {
    RmcpPeer::start(
        surface("readable", "1.0.0", vec![tool("search", "Search things")]),
        RmcpMode::default(),
    )
}

fn origin(peer: &RmcpPeer) -> String {
    peer.url.origin().ascii_serialization()
}

#[test]
fn a_server_behind_a_login_wall_is_a_normal_state_and_a_clean_run_exits_0() {
    let good = readable();
    let locked = RmcpPeer::start_requiring(
        surface("locked", "1.0.0", vec![tool("secret", "Hidden")]),
        RmcpMode::default(),
        "the-only-token",
    );
    let dir = RunDir::new();
    let input = json!({
        "servers": [good.url.as_str(), locked.url.as_str()],
        "ledger_name": "fleet",
        "exit_nonzero_on": EVERY_CONDITION,
    });
    // The first run starts the chain (`new`), the second finds it `intact`: neither trips.
    for expected_chain in ["new", "intact"] {
        let (code, log) = run(&dir, &input, &[]);
        assert_eq!(code, 0, "{log}");
        let summary = dir.output();
        assert_eq!(summary["ledger_chain_status"], expected_chain, "{summary}");
        assert_eq!(summary["servers_requiring_auth"], 1, "{summary}");
        assert_eq!(summary["servers_auth_rejected"], 0, "{summary}");
        let status = final_status(&log);
        assert!(status.contains("1 require auth"), "{status}");
        assert!(!status.contains("exit code"), "{status}");
    }
}

#[test]
fn each_condition_exits_4_only_when_asked_and_met() {
    let good = readable();
    let guarded = RmcpPeer::start_requiring(
        surface("guarded", "1.0.0", vec![tool("secret", "Hidden")]),
        RmcpMode::default(),
        "the-only-token",
    );
    let rejected = json!([{
        "origin": origin(&guarded),
        "header": "Authorization",
        "value": "Bearer not-the-token",
    }]);
    let registry = json!({"base_url": "http://127.0.0.1:9/", "search": "x"});
    // (what, input fields, the condition it meets, its evidence in the status line)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "an unreachable server",
            json!({"servers": [good.url.as_str(), CLOSED]}),
            "some_unreadable",
            "some_unreadable (1 unreachable)",
        ),
        (
            "a blocked entry",
            json!({"servers": [good.url.as_str(), BLOCKED]}),
            "some_unreadable",
            "some_unreadable (1 blocked)",
        ),
        (
            "no server readable",
            json!({"servers": [CLOSED]}),
            "nothing_read",
            "nothing_read (none of 1 server read)",
        ),
        (
            "a refused credential",
            json!({"servers": [good.url.as_str(), guarded.url.as_str()],
                   "server_credentials": rejected}),
            "auth_rejected",
            "auth_rejected (1 credential rejected)",
        ),
        (
            "a registry that cannot be read",
            json!({"servers": [good.url.as_str()], "registry": registry}),
            "registry_failed",
            "registry_failed (MCP Registry not read)",
        ),
    ];
    for (what, fields, condition, evidence) in cases {
        let with = |asked: &[&str]| {
            let mut input = fields.clone();
            input["ledger_name"] = json!("fleet");
            input["exit_nonzero_on"] = json!(asked);
            input
        };
        let dir = RunDir::new();
        // Not asked: the run is a business result, as before.
        let (code, log) = run(&dir, &with(&[]), &[]);
        assert_eq!(code, 0, "{what}, nothing asked: {log}");
        // Every other condition asked: none of them is met.
        let others: Vec<&str> = EVERY_CONDITION
            .into_iter()
            .filter(|c| *c != condition && !(*c == "nothing_read" && what == "no server readable"))
            .filter(|c| !(*c == "some_unreadable" && what == "no server readable"))
            .collect();
        let (code, log) = run(&dir, &with(&others), &[]);
        assert_eq!(code, 0, "{what}, {others:?}: {log}");
        // Asked: exit 4, the rows and OUTPUT written first, the status line says why.
        let (code, log) = run(&dir, &with(&[condition]), &[]);
        assert_eq!(code, 4, "{what}, {condition}: {log}");
        let rows = Rows::of(&dir);
        assert_eq!(rows.summary, dir.output(), "{what}");
        let status = final_status(&log);
        assert!(
            status.contains(&format!("; exit code 4 for exit_nonzero_on: {evidence}")),
            "{what}: {status}"
        );
    }
}

#[test]
fn a_refused_credential_has_its_own_count_and_is_not_a_login_wall() {
    let good = readable();
    let guarded = RmcpPeer::start_requiring(
        surface("guarded", "1.0.0", vec![tool("secret", "Hidden")]),
        RmcpMode::default(),
        "the-only-token",
    );
    let dir = RunDir::new();
    let input = json!({
        "servers": [good.url.as_str(), guarded.url.as_str()],
        "ledger_name": "fleet",
        "server_credentials": [{
            "origin": origin(&guarded),
            "header": "Authorization",
            "value": "Bearer not-the-token",
        }],
    });
    let (code, log) = run(&dir, &input, &[]);
    assert_eq!(code, 0, "{log}");
    let rows = Rows::of(&dir);
    assert_eq!(
        rows.server(guarded.url.as_str())["reason_code"],
        "AUTH_REJECTED"
    );
    assert_eq!(rows.summary["servers_auth_rejected"], 1, "{}", rows.summary);
    assert_eq!(
        rows.summary["servers_requiring_auth"], 0,
        "{}",
        rows.summary
    );
    assert_eq!(rows.summary["servers_unreachable"], 0, "{}", rows.summary);
    let status = final_status(&log);
    assert!(status.contains(", 1 credential rejected"), "{status}");
    assert!(!status.contains("require auth"), "{status}");
    // The REPORT page counts it too.
    let report = std::fs::read_to_string(dir.root().join("key_value_stores/default/REPORT.html"))
        .or_else(|_| std::fs::read_to_string(dir.root().join("key_value_stores/default/REPORT")))
        .unwrap();
    assert!(
        report.contains(
            "<li data-stat=\"servers_auth_rejected\"><span class=\"num\">1</span>credentials rejected"
        ),
        "{report}"
    );
}

#[test]
fn a_registry_failure_with_nothing_checked_stays_a_runtime_failure() {
    let dir = RunDir::new();
    let input = json!({
        "registry": {"base_url": "http://127.0.0.1:9/", "search": "x"},
        "exit_nonzero_on": ["registry_failed", "nothing_read"],
    });
    let (code, log) = run(&dir, &input, &[]);
    assert_eq!(code, 3, "3 outranks 4: {log}");
    let status = final_status(&log);
    assert!(
        status.contains(
            "exit code 3 for the run failure, which outranks exit_nonzero_on: nothing_read (none \
             of 0 servers read), registry_failed (MCP Registry not read)"
        ),
        "{status}"
    );
}

#[test]
fn the_command_line_flag_adds_conditions_and_unknown_values_are_refused() {
    let good = readable();
    let dir = RunDir::new();
    let input = json!({"servers": [good.url.as_str(), CLOSED], "ledger_name": "fleet"});
    let (code, log) = run(&dir, &input, &[]);
    assert_eq!(code, 0, "{log}");
    let (code, log) = run(
        &dir,
        &input,
        &["--exit-nonzero-on", "nothing_read,some_unreadable"],
    );
    assert_eq!(code, 4, "{log}");
    assert!(
        final_status(&log).contains("exit code 4 for exit_nonzero_on: some_unreadable"),
        "{log}"
    );
    // The flag adds to the INPUT's conditions.
    let mut asking = input.clone();
    asking["exit_nonzero_on"] = json!(["nothing_read"]);
    let (code, log) = run(&dir, &asking, &["--exit-nonzero-on", "some_unreadable"]);
    assert_eq!(code, 4, "{log}");

    let allowed = "nothing_read, some_unreadable, auth_rejected, registry_failed, chain_not_intact";
    let (code, log) = run(
        &dir,
        &input,
        &["--exit-nonzero-on", "nothing_read,unreachable"],
    );
    assert_eq!(code, 2, "{log}");
    assert!(
        log.contains("unknown exit_nonzero_on value \"unreachable\"") && log.contains(allowed),
        "{log}"
    );
    let mut bad = input.clone();
    bad["exit_nonzero_on"] = json!(["unreachable"]);
    let (code, log) = run(&dir, &bad, &[]);
    assert_eq!(code, 2, "{log}");
    assert!(
        log.contains("`exit_nonzero_on` has unknown condition \"unreachable\"")
            && log.contains(allowed),
        "{log}"
    );
    // Actor mode only.
    let output = std::process::Command::new(actor::BINARY)
        .args(["--exit-nonzero-on", "nothing_read", "snapshot", CLOSED])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{log}");
    assert!(
        log.contains("--exit-nonzero-on belongs to Actor mode") && !log.contains("--notify"),
        "{log}"
    );
}

#[test]
fn incomplete_evidence_outranks_the_gate_and_a_chain_not_intact_outranks_both() {
    let peer = readable();
    let dir = RunDir::new();
    let input = |asked: &[&str]| {
        json!({
            "servers": [peer.url.as_str(), CLOSED],
            "ledger_name": "fleet",
            "fail_on": "any",
            "alert_on": ["tool_added"],
            "exit_nonzero_on": asked,
        })
    };
    let (code, log) = run(&dir, &input(&[]), &[]);
    assert_eq!(code, 0, "{log}");

    // A new tool trips the gate; an unreachable server makes the evidence incomplete.
    let two = vec![
        tool("search", "Search things"),
        tool("fetch", "Fetch a page"),
    ];
    peer.set_surface(surface("readable", "1.0.0", two));
    let (code, log) = run(&dir, &input(&["some_unreadable"]), &[]);
    assert_eq!(code, 4, "4 outranks the gate's 1: {log}");
    let status = final_status(&log);
    assert!(
        status.contains(
            "exit code 4 for exit_nonzero_on: some_unreadable (1 unreachable); the fail_on gate \
             tripped too\""
        ),
        "{status}"
    );
    assert_eq!(dir.output()["changes_total"], 1);

    // A ledger whose stored chain head was edited: the run finds it broken.
    let three = vec![
        tool("search", "Search things"),
        tool("fetch", "Fetch a page"),
        tool("list", "List pages"),
    ];
    peer.set_surface(surface("readable", "1.0.0", three));
    let mut index = dir.ledger("fleet");
    index["chain"]["head"] = json!("ab".repeat(32));
    std::fs::write(dir.ledger_path("fleet"), index.to_string()).unwrap();
    let (code, log) = run(&dir, &input(&["some_unreadable", "chain_not_intact"]), &[]);
    assert_eq!(code, 5, "5 outranks 4 and 1: {log}");
    assert_eq!(dir.output()["ledger_chain_status"], "broken");
    let status = final_status(&log);
    assert!(
        status.contains(
            "exit code 5 for exit_nonzero_on: some_unreadable (1 unreachable), chain_not_intact (ledger chain broken)"
        ),
        "{status}"
    );

    // The next run continues the new chain: intact, so only the gate speaks.
    let (code, log) = run(&dir, &input(&["chain_not_intact"]), &[]);
    assert_eq!(code, 0, "no change, chain intact again: {log}");
    assert_eq!(dir.output()["ledger_chain_status"], "intact");

    // A ledger whose chain was stripped: whatever the run calls it, it is not intact.
    let mut index = dir.ledger("fleet");
    index.as_object_mut().unwrap().remove("chain");
    std::fs::write(dir.ledger_path("fleet"), index.to_string()).unwrap();
    let (code, log) = run(&dir, &input(&["chain_not_intact"]), &[]);
    assert_eq!(code, 5, "{log}");
    let status = dir.output()["ledger_chain_status"].clone();
    let status = status.as_str().unwrap();
    assert!(!["new", "intact"].contains(&status), "{status}");
    assert!(
        final_status(&log).contains(&format!("chain_not_intact (ledger chain {status})")),
        "{log}"
    );
}

#[test]
fn a_sharded_watch_applies_the_conditions_to_its_merged_summary() {
    let good = readable();
    let dir = RunDir::new();
    let input = json!({
        "servers": [good.url.as_str(), CLOSED, BLOCKED],
        "ledger_name": "fleet",
        "shards": 2,
        "exit_nonzero_on": ["some_unreadable", "chain_not_intact"],
    });
    let (code, log) = run(&dir, &input, &[]);
    assert_eq!(code, 4, "{log}");
    let summary = dir.output();
    assert_eq!(summary["servers_unreachable"], 1, "{summary}");
    assert_eq!(summary["servers_blocked"], 1, "{summary}");
    assert!(
        final_status(&log).contains(
            "exit code 4 for exit_nonzero_on: some_unreadable (1 unreachable, 1 blocked)"
        ),
        "{log}"
    );
}

#[test]
fn the_input_schema_offers_exactly_the_conditions_the_run_accepts() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("input_schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let field = &schema["properties"]["exit_nonzero_on"];
    assert_eq!(field["type"], "array");
    assert_eq!(field["default"], json!([]));
    assert_eq!(field["items"]["enum"], json!(EVERY_CONDITION));
    let names: Vec<&str> = mcp_surface_ledger::gate::ExitCondition::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(names, EVERY_CONDITION);
    let description = field["description"].as_str().unwrap();
    for name in EVERY_CONDITION {
        assert!(description.contains(name), "{name} is not described");
    }
}
