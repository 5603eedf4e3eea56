//! Lists kept as counts still name what changed (issue 46), in whole Actor runs against a
//! hand-written loopback server (`support/paged_mcp.rs`): a fixed catalogue of 127 documents
//! (Sentry's shape) that swaps one document for another at the same count is one
//! `resource_count_changed` row naming both, and a list the page limit cut says so in the server
//! row (`resources_complete: false`) and in its count row.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/paged_mcp.rs"]
mod paged_mcp;
mod support;

use actor::{Rows, RunDir};
use paged_mcp::{PagedMcp, Release};
use serde_json::{Value, json};

/// Every class, so that the resource rows (not in the default `alert_on`) are written.
fn input(url: &str) -> Value {
    let classes: Vec<&str> = mcp_surface_ledger::diff::ChangeClass::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    json!({"servers": [url], "alert_on": classes})
}

/// A documentation catalogue of 127 resources: 126 documents and `last`.
fn catalogue(last: Value, page_size: usize) -> Release {
    let mut resources: Vec<Value> = (0..126)
        .map(|i| {
            json!({"uri": format!("https://docs.example/guide-{i:03}.md"),
                   "name": format!("guide-{i:03}"), "mimeType": "text/markdown"})
        })
        .collect();
    resources.push(last);
    Release {
        server_info: json!({"name": "docs-catalogue", "version": "0.13.0"}),
        instructions: None,
        tools: vec![json!({"name": "search_docs", "inputSchema": {"type": "object"}})],
        prompts: None,
        resources: Some(resources),
        templates: Vec::new(),
        page_size,
    }
}

fn query_syntax() -> Value {
    json!({"uri": "sentry-query-syntax", "name": "query-syntax", "mimeType": "text/markdown"})
}

fn about() -> Value {
    json!({"uri": "sentry://about", "name": "about", "mimeType": "text/markdown"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_count_swap_in_a_127_document_catalogue_is_named_in_a_row() {
    let server = PagedMcp::start(catalogue(query_syntax(), 50).answers());
    let url = server.url.clone();
    let dir = RunDir::new();
    let input = input(&url);
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    let row = rows.server(&url);
    assert_eq!(row["resources_total"], 127, "{row}");
    assert_eq!(row["resources_complete"], true, "{row}");
    assert!(rows.changes.is_empty());

    // The same catalogue: nothing.
    dir.run_ok(&input, None).await;
    assert!(Rows::of(&dir).changes.is_empty());

    // One document dropped, another added, same count: one row naming both.
    let mut release = catalogue(about(), 50);
    release.server_info["version"] = json!("0.18.0");
    server.set(release.answers());
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    assert_eq!(rows.server(&url)["resources_total"], 127);
    let changes: Vec<Value> = rows
        .changes_of(&url)
        .into_iter()
        .filter(|c| c["change_class"] != "server_version_changed")
        .collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(change["change_class"], "resource_count_changed");
    assert_eq!(change["field"], "resources");
    assert_eq!(change["severity"], "low");
    assert_eq!(
        change["details"][0],
        "2 resources changed at the same count 127: removed sentry-query-syntax; added \
         sentry://about"
    );
    assert_eq!(change["old_value"]["total"], 127);
    assert!(change["old_value"]["items"]["sentry-query-syntax"].is_string());
    assert!(change["new_value"]["items"]["sentry://about"].is_string());
    assert_ne!(change["old_value_hash"], change["new_value_hash"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_list_is_reported_as_cut() {
    let server = PagedMcp::start(catalogue(query_syntax(), 50).answers());
    let url = server.url.clone();
    let dir = RunDir::new();
    let input = input(&url);
    dir.run_ok(&input, None).await;

    // On pages of 20 the probe reads 5 pages: 100 of the 127 documents.
    server.set(catalogue(query_syntax(), 20).answers());
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    let row = rows.server(&url);
    assert_eq!(row["resources_total"], 100, "{row}");
    assert_eq!(row["resources_complete"], false, "{row}");
    let changes = rows.changes_of(&url);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["change_class"], "resource_count_changed");
    assert_eq!(
        changes[0]["new_value"],
        json!({"total": 100, "complete": false})
    );
    assert_eq!(
        changes[0]["details"][0],
        "127 → 100 resources (list cut by the page limit: the count 100 is a lower bound)"
    );

    // Read whole again: complete, and the count row says so without the note.
    server.set(catalogue(query_syntax(), 50).answers());
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    assert_eq!(rows.server(&url)["resources_complete"], true);
    let changes = rows.changes_of(&url);
    assert_eq!(changes[0]["details"][0], "100 → 127 resources");
}
