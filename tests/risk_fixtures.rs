//! The risk module on real tool surfaces: the GitHub MCP server's `tools/list` at ten releases
//! (`../shared/fixtures/github-mcp-server/`). Skips with a note when the fixtures are absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use mcp_surface_ledger::risk::{self, Capability, Finding};
use serde_json::Value;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server")
}

/// The tools of one release, or `None` (with a printed note) when the fixtures are absent.
fn tools(version: &str) -> Option<Vec<Value>> {
    let path = fixture_dir().join(format!("{version}.json"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("SKIP: fixture {} not found", path.display());
        return None;
    };
    let value: Value = serde_json::from_str(&text).expect("fixture is JSON");
    Some(value["tools"].as_array().expect("tools array").clone())
}

const VERSIONS: &[&str] = &[
    "v0.23.0", "v0.24.0", "v0.26.3", "v0.27.0", "v0.30.3", "v0.31.0", "v1.3.0", "v1.4.0", "v1.5.0",
    "v1.6.0",
];

fn name(tool: &Value) -> &str {
    tool["name"].as_str().expect("tool name")
}

#[test]
fn every_release_every_tool_has_a_capability_deleters_delete_and_no_marker() {
    for version in VERSIONS {
        let Some(tools) = tools(version) else { return };
        for tool in &tools {
            let assessment = risk::assess_tool(tool);
            assert!(
                !assessment.capabilities.is_empty(),
                "{version} {} has no capability",
                name(tool)
            );
            if name(tool).starts_with("delete_") {
                assert!(
                    assessment.capabilities.contains(&Capability::Delete),
                    "{version} {}",
                    name(tool)
                );
                assert_eq!(
                    assessment.risk,
                    risk::Risk::High,
                    "{version} {}",
                    name(tool)
                );
            }
            let markers: Vec<&Finding> = assessment
                .findings
                .iter()
                .filter(|f| f.is_marker())
                .collect();
            assert!(markers.is_empty(), "{version} {}: {markers:#?}", name(tool));
        }
        let text = std::fs::read_to_string(fixture_dir().join(format!("{version}.json")))
            .expect("fixture");
        assert!(
            risk::duplicate_keys(&text).is_empty(),
            "{version} repeats a key"
        );
    }
}

#[test]
fn no_marker_and_no_advisory_on_the_112_tools_of_v1_6_0() {
    let Some(tools) = tools("v1.6.0") else { return };
    assert_eq!(tools.len(), 112);
    let flagged: Vec<(String, Finding)> = tools
        .iter()
        .flat_map(|t| {
            risk::assess_tool(t)
                .findings
                .into_iter()
                .filter(|f| f.is_marker() || f.kind == risk::kind::ADVISORY)
                .map(|f| (name(t).to_string(), f))
        })
        .collect();
    assert!(flagged.is_empty(), "false positives: {flagged:#?}");
}

#[test]
fn known_tools_get_the_expected_capabilities_and_risk() {
    use Capability::*;
    use risk::Risk::*;
    let Some(tools) = tools("v1.6.0") else { return };
    let find = |n: &str| risk::assess_tool(tools.iter().find(|t| name(t) == n).expect(n));
    // (tool, capabilities it must have, declared risk, assumed risk)
    let cases: &[(&str, &[Capability], risk::Risk, risk::Risk)] = &[
        ("get_me", &[Read], Low, Low),
        ("search_code", &[Read], Low, Low),
        ("delete_file", &[Delete, Filesystem], High, High),
        // No destructiveHint: writing is evidence of medium; only the protocol's default
        // (destructive unless declared otherwise) makes it high.
        ("create_or_update_file", &[Write, Filesystem], Medium, High),
        ("create_issue", &[Write], Medium, Medium),
        ("label_write", &[Write, Delete], High, High),
        ("actions_run_trigger", &[Execute], High, High),
        (
            "get_secret_scanning_alert",
            &[Read, Secrets],
            Medium,
            Medium,
        ),
        ("list_notifications", &[Read, Messaging], Medium, Medium),
        ("get_teams", &[Read], Low, Low),
        ("get_job_logs", &[Read], Low, Low),
    ];
    for (tool, expected, risk, assumed) in cases {
        let assessment = find(tool);
        for capability in *expected {
            assert!(
                assessment.capabilities.contains(capability),
                "{tool}: {capability:?} missing in {:?}",
                assessment.capabilities
            );
        }
        assert_eq!(assessment.risk, *risk, "{tool}: {:?}", assessment.evidence);
        assert_eq!(assessment.assumed_risk, *assumed, "{tool}: assumed");
    }
}

#[test]
fn annotations_of_the_real_surface_are_consistent() {
    let Some(tools) = tools("v1.6.0") else { return };
    for tool in &tools {
        let inconsistent: Vec<Finding> = risk::assess_tool(tool)
            .findings
            .into_iter()
            .filter(|f| f.kind == risk::kind::ANNOTATION_INCONSISTENCY)
            .collect();
        assert!(inconsistent.is_empty(), "{}: {inconsistent:#?}", name(tool));
    }
}

#[test]
fn consolidation_release_yields_no_false_rename() {
    // v0.30.3 → v0.31.0 removes 22 project and workflow tools (consolidated into tools this
    // fixture leaves out) and adds one unrelated tool, add_reply_to_pull_request_comment. None
    // of the removed tools became it, so there is no rename to hint at.
    let (Some(old), Some(new)) = (tools("v0.30.3"), tools("v0.31.0")) else {
        return;
    };
    let old_names: Vec<&str> = old.iter().map(name).collect();
    let new_names: Vec<&str> = new.iter().map(name).collect();
    let removed: Vec<Value> = old
        .iter()
        .filter(|t| !new_names.contains(&name(t)))
        .cloned()
        .collect();
    let added: Vec<Value> = new
        .iter()
        .filter(|t| !old_names.contains(&name(t)))
        .cloned()
        .collect();
    assert_eq!((removed.len(), added.len()), (22, 1));
    assert_eq!(name(&added[0]), "add_reply_to_pull_request_comment");
    assert!(risk::rename_hints(&removed, &added).is_empty());
}

#[test]
fn renames_planted_in_the_consolidation_release_are_paired_exactly() {
    // Rename two of the removed tools the way vendors do (a new prefix, a new spelling) and put
    // them among the added ones: exactly those two pairs come back, the other 20 removed tools
    // and the unrelated added tool stay unpaired.
    let (Some(old), Some(new)) = (tools("v0.30.3"), tools("v0.31.0")) else {
        return;
    };
    let new_names: Vec<&str> = new.iter().map(name).collect();
    let removed: Vec<Value> = old
        .iter()
        .filter(|t| !new_names.contains(&name(t)))
        .cloned()
        .collect();
    let renamed = |from: &str, to: &str| {
        let mut tool = removed
            .iter()
            .find(|t| name(t) == from)
            .expect(from)
            .clone();
        tool["name"] = Value::from(to);
        tool
    };
    let mut added: Vec<Value> = new
        .iter()
        .filter(|t| name(t) == "add_reply_to_pull_request_comment")
        .cloned()
        .collect();
    added.push(renamed("list_workflows", "actions_list_workflows"));
    added.push(renamed("get_project_item", "getProjectItem"));
    let hints = risk::rename_hints(&removed, &added);
    let mut pairs: Vec<(&str, &str)> = hints
        .iter()
        .map(|h| (h.removed.as_str(), h.added.as_str()))
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("get_project_item", "getProjectItem"),
            ("list_workflows", "actions_list_workflows")
        ]
    );
}

#[test]
fn consolidated_projects_list_is_hinted_as_the_old_list_projects() {
    // Across v0.27.0 → v1.6.0 the project tools were folded into projects_list / projects_get /
    // projects_write (a `method` parameter picks the old operation). list_projects and
    // projects_list are the same operation under a reordered name; that is the one pair we
    // accept. The many-to-one rest (list_project_items, get_project_item, …) must stay unpaired.
    let (Some(old), Some(new)) = (tools("v0.27.0"), tools("v1.6.0")) else {
        return;
    };
    let old_names: Vec<&str> = old.iter().map(name).collect();
    let new_names: Vec<&str> = new.iter().map(name).collect();
    let removed: Vec<Value> = old
        .iter()
        .filter(|t| !new_names.contains(&name(t)))
        .cloned()
        .collect();
    let added: Vec<Value> = new
        .iter()
        .filter(|t| !old_names.contains(&name(t)))
        .cloned()
        .collect();
    let hints = risk::rename_hints(&removed, &added);
    let pairs: Vec<(&str, &str)> = hints
        .iter()
        .map(|h| (h.removed.as_str(), h.added.as_str()))
        .collect();
    assert_eq!(pairs, [("list_projects", "projects_list")]);
}
