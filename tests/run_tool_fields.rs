//! Whole Actor runs against the official Python SDK whose tool changes only in the fields
//! beside description, schemas and hints: `title`, `icons`, `execution.taskSupport` and
//! `_meta`. Before these were compared such a run recorded zero changes; now each field is a
//! row (graded for `taskSupport`) in both protocol eras (the SDK sends `execution` on the
//! 2025-11-25 wire only), the default `alert_on` keeps only the execution change, and
//! REPORT.html and REPORT.sarif carry the new classes.
//!
//! The peer comes from `tests/peers/install.sh`; without it the test prints SKIP and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use actor::{ALL_CLASSES, Rows, RunDir};
use mcp_surface_ledger::mcp::Era;
use serde_json::{Value, json};
use support::python::PythonMode;
use support::surface::SurfaceFile;

fn notes_tool(title: &str, task_support: &str, build: u32, icon: &str) -> Value {
    json!({
        "name": "search_notes",
        "title": title,
        "description": "Search the notes.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "icons": [{"src": icon, "mimeType": "image/png"}],
        "execution": {"taskSupport": task_support},
        "_meta": {"vendor/build": build},
    })
}

fn served(version: &str, tool: Value) -> Value {
    json!({"name": "fields-peer", "version": version, "tools": [tool]})
}

/// `(change_class, field, severity, compatibility, old_value, new_value)` of every change row.
fn summary(changes: &[Value]) -> Vec<Value> {
    let mut rows: Vec<Value> = changes
        .iter()
        .map(|c| {
            json!([
                c["change_class"],
                c["field"],
                c["severity"],
                c["compatibility"],
                c["old_value"],
                c["new_value"]
            ])
        })
        .collect();
    rows.sort_by_key(|r| r.to_string());
    rows
}

#[tokio::test]
async fn title_icons_execution_and_meta_changes_are_rows_in_both_eras() {
    let before = notes_tool("Search notes", "forbidden", 1, "https://example.com/a.png");
    let after = notes_tool(
        "Search every note",
        "required",
        2,
        "https://example.com/b.png",
    );
    let file = SurfaceFile::new(&served("1.0.0", before));
    let mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    let Some(peer) = support::python::start(&file, mode) else {
        return support::skip("tool fields", "Python peer not installed");
    };
    let url = peer.url().to_string();
    let everything = json!({"servers": [url], "alert_on": ALL_CLASSES, "report_sarif": true});
    let defaults = json!({"servers": [url]});
    let cases = [
        (Era::Modern, &everything, RunDir::new()),
        (Era::Classic, &everything, RunDir::new()),
        (Era::Classic, &defaults, RunDir::new()),
    ];
    for (era, input, dir) in &cases {
        let force = (*era == Era::Classic).then_some(Era::Classic);
        dir.run_ok(input, force).await;
        assert!(Rows::of(dir).changes.is_empty(), "run 1 {era:?}");
    }

    file.write(&served("1.1.0", after));

    let all_rows = [
        json!([
            "server_version_changed",
            "serverInfo.version",
            "low",
            null,
            "1.0.0",
            "1.1.0"
        ]),
        json!([
            "tool_execution_changed",
            "execution.taskSupport",
            "medium",
            "breaking",
            "forbidden",
            "required"
        ]),
        json!(["tool_icons_changed", "icons", "low", null,
            [{"src": "https://example.com/a.png", "mimeType": "image/png"}],
            [{"src": "https://example.com/b.png", "mimeType": "image/png"}]]),
        json!(["tool_meta_changed", "_meta", "low", null, {"vendor/build": 1}, {"vendor/build": 2}]),
        json!([
            "tool_title_changed",
            "title",
            "low",
            null,
            "Search notes",
            "Search every note"
        ]),
    ];
    for (era, input, dir) in &cases[..2] {
        let force = (*era == Era::Classic).then_some(Era::Classic);
        dir.run_ok(input, force).await;
        let rows = Rows::of(dir);
        // The SDK sends `execution` on the 2025-11-25 wire only (tasks left the core protocol
        // in 2026-07-28), so the modern era sees no execution at all, before or after.
        let mut expected: Vec<Value> = all_rows
            .iter()
            .filter(|r| *era == Era::Classic || r[0] != "tool_execution_changed")
            .cloned()
            .collect();
        expected.sort_by_key(|r| r.to_string());
        assert_eq!(summary(&rows.changes), expected, "run 2 {era:?}");
        let report = dir.root().join("key_value_stores/default");
        let html = std::fs::read_to_string(report.join("REPORT.html")).unwrap();
        for class in [
            "tool_title_changed",
            "tool_icons_changed",
            "tool_meta_changed",
        ] {
            assert!(html.contains(class), "REPORT.html lacks {class}");
        }
        if *era == Era::Modern {
            continue;
        }
        let execution = rows
            .changes
            .iter()
            .find(|c| c["change_class"] == "tool_execution_changed")
            .unwrap();
        assert_eq!(execution["tool_name"], "search_notes");
        assert!(
            execution["details"][1]
                .as_str()
                .unwrap()
                .contains("does not speak tasks"),
            "{execution}"
        );
        assert!(html.contains("tool_execution_changed"));
        let sarif: Value =
            serde_json::from_slice(&std::fs::read(report.join("REPORT.sarif.json")).unwrap())
                .unwrap();
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        let breaking = results
            .iter()
            .find(|r| r["ruleId"] == "tool_execution_changed")
            .expect("a SARIF result for the execution change");
        assert_eq!(breaking["level"], "error", "{breaking}");
    }

    // The default alert_on: the execution change is the one row.
    let (era, input, dir) = &cases[2];
    dir.run_ok(input, Some(*era)).await;
    let rows = Rows::of(dir);
    assert_eq!(
        summary(&rows.changes),
        vec![all_rows[1].clone()],
        "default alert_on"
    );
}

/// A server read in one era and then in the other, with nothing changed, gives no change row:
/// the SDK leaves `execution` out on the 2026-07-28 wire (tasks left the core protocol), which
/// must not read as `taskSupport` going from `required` to `forbidden` (and back). Prompts,
/// resources and templates move eras unchanged too.
#[tokio::test]
async fn a_server_moving_eras_with_no_real_change_gives_no_change() {
    let mut surface = served(
        "1.0.0",
        notes_tool("Search notes", "required", 1, "https://example.com/a.png"),
    );
    surface["tools"].as_array_mut().unwrap().push(
        json!({"name": "list_notes", "description": "Lists the notes.",
                     "inputSchema": {"type": "object"},
                     "execution": {"taskSupport": "optional"}}),
    );
    surface["prompts"] = json!([{"name": "summarize", "description": "Summarizes the notes",
                                 "arguments": [{"name": "topic", "required": true}]}]);
    surface["resources"] = json!([{"uri": "file:///notes/a.md", "name": "a.md"}]);
    surface["resource_templates"] =
        json!([{"name": "note", "uriTemplate": "file:///notes/{name}"}]);
    let file = SurfaceFile::new(&surface);
    let mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    let Some(peer) = support::python::start(&file, mode) else {
        return support::skip("era move", "Python peer not installed");
    };
    let url = peer.url().to_string();
    let every_class: Vec<&str> = mcp_surface_ledger::diff::ChangeClass::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let input = json!({"servers": [url], "alert_on": every_class});
    let dir = RunDir::new();
    let eras = [Era::Classic, Era::Modern, Era::Classic];
    for (run, era) in eras.into_iter().enumerate() {
        dir.run_ok(&input, Some(era)).await;
        let rows = Rows::of(&dir);
        let row = rows.server(&url);
        assert_eq!(row["ok"], true, "run {run} {era:?}: {row}");
        let want = if run == 0 { "created" } else { "compared" };
        assert_eq!(row["ledger_status"], want, "run {run} {era:?}");
        assert!(
            rows.changes.is_empty(),
            "run {run} {era:?}: {:?}",
            rows.changes
        );
        // The reads differ (the classic wire carries `execution`, the modern one does not):
        // each run compares two different surfaces, not one surface twice.
        assert_eq!(row["digest_changed"], run > 0, "run {run} {era:?}: {row}");
    }
}
