//! Whole Actor runs against the real third-party peers: the official Python SDK (modern and
//! classic era, JSON and SSE answers) and `@modelcontextprotocol/server-everything` (classic,
//! sessions, SSE with a priming event). Two runs each, the surface changed in between.
//!
//! The peers come from `tests/peers/install.sh`; without them the tests print SKIP and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use actor::{
    ALL_CLASSES, Rows, RunDir, assert_row_eq, assert_rows_eq, change, readable_row, stable,
};
use mcp_surface_ledger::mcp::Era;
use serde_json::{Value, json};
use support::python::PythonMode;
use support::surface::{SurfaceFile, numbered_tools};

fn python_surface(version: &str, tools: Vec<Value>, sse: bool) -> Value {
    json!({
        "name": "py-ledger",
        "version": version,
        "instructions": "Python peer",
        "page_size": 2,
        "tools": tools,
        "resources": [{"uri": "file:///r", "name": "r"}],
        "prompts": [{"name": "p1"}, {"name": "p2"}],
        "notify_before_lists": sse,
    })
}

fn tools_v1() -> Vec<Value> {
    numbered_tools(3)
}

fn tools_v2() -> Vec<Value> {
    let mut tools = numbered_tools(4);
    tools[1]["description"] = json!("Tool number 1, reworded");
    tools
}

/// The readable row of the Python peer with its resources and prompts counted.
fn python_row(
    url: &str,
    era: Era,
    version: &str,
    tools: &[Value],
    previous: Option<&[Value]>,
    changes: usize,
) -> Value {
    let (era_name, protocol) = match era {
        Era::Modern => ("modern", "2026-07-28"),
        Era::Classic => ("classic", "2025-11-25"),
        Era::LegacySse => ("legacy_sse", "2024-11-05"),
    };
    let status = if previous.is_some() {
        "compared"
    } else {
        "created"
    };
    let mut row = readable_row(
        url,
        era_name,
        protocol,
        "py-ledger",
        version,
        tools,
        previous,
        status,
        changes,
    );
    row["resources_total"] = json!(1);
    row["resources_complete"] = json!(true);
    row["prompts_total"] = json!(2);
    row["prompts_complete"] = json!(true);
    // Its prompts and resources are part of the surface, so of the digest.
    row["tool_digest"] = json!(declared_digest(tools));
    if let Some(previous) = previous {
        row["previous_tool_digest"] = json!(declared_digest(previous));
        row["digest_changed"] = json!(declared_digest(previous) != declared_digest(tools));
    }
    row
}

/// The digest of the Python peer's surface: `tools` with its resource and two prompts.
fn declared_digest(tools: &[Value]) -> String {
    use mcp_surface_ledger::surface::{Declared, ListRead, ServerIdentity, Surface};
    let served = python_surface("", tools.to_vec(), false);
    let read = |key: &str| {
        Some(ListRead {
            items: served[key].as_array().cloned().unwrap_or_default(),
            truncated: false,
        })
    };
    let (declared, _) = Declared::from_reads(read("prompts"), read("resources"), read("none"));
    Surface::from_tools(ServerIdentity::default(), tools.to_vec())
        .unwrap()
        .with_declared(declared)
        .tool_digest()
}

fn expected_changes(url: &str) -> Vec<Value> {
    let (v1, v2) = (tools_v1(), tools_v2());
    vec![
        change(
            url,
            "server_version_changed",
            None,
            "serverInfo.version",
            Some(json!("1.0.0")),
            Some(json!("1.1.0")),
            "low",
        ),
        change(
            url,
            "tool_description_changed",
            Some("tool-01"),
            "description",
            Some(v1[1]["description"].clone()),
            Some(v2[1]["description"].clone()),
            "low",
        ),
        change(
            url,
            "tool_added",
            Some("tool-03"),
            "tool",
            None,
            Some(v2[3].clone()),
            "medium",
        ),
    ]
}

/// The Python SDK in JSON and in SSE mode, each read through the modern and the classic era,
/// each in its own storage folder: run 1 creates the baseline, the surface file changes
/// (across the page boundary), run 2 records exactly the three changes.
#[tokio::test]
async fn python_sdk_two_runs_through_both_eras_with_json_and_sse() {
    let json_file = SurfaceFile::new(&python_surface("1.0.0", tools_v1(), false));
    let sse_file = SurfaceFile::new(&python_surface("1.0.0", tools_v1(), true));
    let json_mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    let Some(json_peer) = support::python::start(&json_file, json_mode) else {
        return support::skip("python two runs", "Python peer not installed");
    };
    let sse_peer = support::python::start(&sse_file, PythonMode::default()).expect("python peer");
    let cases = [
        (json_peer.url(), Era::Modern, RunDir::new()),
        (json_peer.url(), Era::Classic, RunDir::new()),
        (sse_peer.url(), Era::Modern, RunDir::new()),
        (sse_peer.url(), Era::Classic, RunDir::new()),
    ];
    let input = |url: &url::Url| json!({"servers": [url.as_str()], "alert_on": ALL_CLASSES});

    for (url, era, dir) in &cases {
        // The modern era is detected, the classic one forced (the SDK speaks both).
        let force = (*era == Era::Classic).then_some(Era::Classic);
        dir.run_ok(&input(url), force).await;
        let rows = Rows::of(dir);
        let what = format!("run 1 {url} {era:?}");
        assert_row_eq(
            &stable(rows.server(url.as_str())),
            &python_row(url.as_str(), *era, "1.0.0", &tools_v1(), None, 0),
            &what,
        );
        assert!(rows.changes.is_empty(), "{what}: {:?}", rows.changes);
        let entry = &dir.ledger("DEFAULT")["servers"][url.as_str()];
        assert_eq!(
            entry["era"],
            json!(format!("{era:?}").to_lowercase()),
            "{what}"
        );
    }

    json_file.write(&python_surface("1.1.0", tools_v2(), false));
    sse_file.write(&python_surface("1.1.0", tools_v2(), true));

    for (url, era, dir) in &cases {
        let force = (*era == Era::Classic).then_some(Era::Classic);
        dir.run_ok(&input(url), force).await;
        let rows = Rows::of(dir);
        let what = format!("run 2 {url} {era:?}");
        let expected = expected_changes(url.as_str());
        assert_row_eq(
            &stable(rows.server(url.as_str())),
            &python_row(
                url.as_str(),
                *era,
                "1.1.0",
                &tools_v2(),
                Some(&tools_v1()),
                expected.len(),
            ),
            &what,
        );
        let changes: Vec<Value> = rows.changes.iter().map(stable).collect();
        assert_rows_eq(&changes, &expected);
        assert_eq!(rows.summary["servers_compared"], 1, "{what}");
        assert_eq!(rows.summary["changes_total"], 3, "{what}");
    }
}

/// server-everything cannot be changed between runs; two runs must agree (created, then
/// compared with no change) and the era that worked (classic) must be remembered.
#[tokio::test]
async fn server_everything_two_runs_classic_created_then_compared() {
    let Some(peer) = support::everything::shared() else {
        return support::skip("server-everything two runs", "npm peer not installed");
    };
    let url = peer.url().to_string();
    let dir = RunDir::new();
    let input = json!({"servers": [url], "alert_on": ALL_CLASSES});

    dir.run_ok(&input, None).await;
    let first = Rows::of(&dir);
    let row1 = first.server(&url).clone();
    assert_eq!(row1["ok"], true, "{row1}");
    assert_eq!(row1["reason_code"], "OK");
    assert_eq!(row1["protocol_era"], "classic");
    assert_eq!(row1["protocol_version"], "2025-11-25");
    assert_eq!(row1["transport"], "streamable-http");
    assert_eq!(row1["server_name"], "mcp-servers/everything");
    assert_eq!(row1["ledger_status"], "created");
    assert_eq!(row1["previous_tool_digest"], Value::Null);
    let names: Vec<&str> = row1["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert_eq!(row1["tools_total"], names.len());
    assert!(row1["resources_total"].as_u64().is_some_and(|n| n > 0));
    assert!(row1["prompts_total"].as_u64().is_some_and(|n| n > 0));
    assert!(first.changes.is_empty());
    assert_eq!(dir.ledger("DEFAULT")["servers"][&url]["era"], "classic");

    dir.run_ok(&input, None).await;
    let second = Rows::of(&dir);
    let row2 = second.server(&url);
    let mut expected = stable(&row1);
    expected["ledger_status"] = json!("compared");
    expected["previous_tool_digest"] = row1["tool_digest"].clone();
    // resources are counted, not compared: server-everything may list a varying number
    expected["resources_total"] = row2["resources_total"].clone();
    assert_row_eq(&stable(row2), &expected, "run 2 of server-everything");
    assert!(second.changes.is_empty(), "{:?}", second.changes);
    assert_eq!(row2["first_seen"], row1["first_seen"]);
}

/// A tool list on more pages than the probe walks is cut and flagged, and the cut list is what
/// the ledger keeps.
#[tokio::test]
async fn python_sdk_tool_list_beyond_five_pages_is_truncated() {
    let mut served = python_surface("1.0.0", numbered_tools(12), false);
    served["page_size"] = json!(2);
    let file = SurfaceFile::new(&served);
    let mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    let Some(peer) = support::python::start(&file, mode) else {
        return support::skip("python truncation", "Python peer not installed");
    };
    let dir = RunDir::new();
    dir.run_ok(&json!({"servers": [peer.url().as_str()]}), None)
        .await;
    let rows = Rows::of(&dir);
    let row = rows.server(peer.url().as_str());
    assert_eq!(row["tools_truncated"], true);
    assert_eq!(row["tools_total"], 10, "5 pages of 2");
    let names: Vec<&str> = row["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..10).map(|i| format!("tool-{i:02}")).collect();
    assert_eq!(names, expected);
}
