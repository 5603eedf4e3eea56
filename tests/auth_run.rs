//! The auth change rules end to end: whole runs (`run::run` on a local storage folder) against
//! a server that turns its protection on and off, a protected server whose metadata moves, and
//! a legacy HTTP+SSE server whose tools change.
//!
//! Python peers come from `tests/peers/install.sh`; without them those tests print a SKIP note
//! and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::run::RunOptions;
use serde_json::{Value, json};
use support::auth_faults;
use support::auth_peer::{self, PyTransport};
use support::surface::{SurfaceFile, surface, tool};
use url::Url;

/// One run against `url` in `dir`; returns the server row and the change rows.
async fn run_once(dir: &std::path::Path, url: &Url) -> (Value, Vec<Value>) {
    let storage = LocalStorage::open(dir).unwrap();
    let input = json!({"servers": [url.as_str()], "max_server_seconds": 60});
    let options = RunOptions {
        input_key: "INPUT".into(),
        input_override: Some(serde_json::to_vec(&input).unwrap()),
        allow_private_targets: true,
        force_era: None,
        ..RunOptions::default()
    };
    let charging = support::local_charging().await;
    mcp_surface_ledger::actor::watch(&storage, &charging, options)
        .await
        .expect("run succeeds");
    let mut files: Vec<_> = std::fs::read_dir(dir.join("datasets/default"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let items: Vec<Value> = files
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    let server = items
        .iter()
        .find(|i| i["record_type"] == "server")
        .cloned()
        .expect("a server row");
    let changes = items
        .into_iter()
        .filter(|i| i["record_type"] == "change")
        .collect();
    (server, changes)
}

fn with_protection(mut surface: Value, protected: bool) -> Value {
    surface["protected"] = Value::Bool(protected);
    surface
}

#[tokio::test]
async fn losing_the_listing_to_auth_is_one_event_and_the_diff_resumes_afterwards() {
    let before = surface("py-auth", "1.0.0", vec![tool("search", "Search things")]);
    let file = SurfaceFile::new(&with_protection(before.clone(), false));
    let Some(peer) = auth_peer::start_python(&file, PyTransport::StreamableHttp, true) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let dir = tempfile::tempdir().unwrap();

    let (first, changes) = run_once(dir.path(), &peer.url).await;
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(first["ledger_status"], "created");
    assert_eq!(first["auth_required"], false);
    assert_eq!(first["anonymous_listing_allowed"], true);
    assert!(changes.is_empty());
    let digest_before = first["tool_digest"].clone();

    // Protection on; meanwhile the tools change behind it.
    let mut behind = before.clone();
    behind["tools"] = json!([
        tool("search", "Search things"),
        tool("delete_all", "Delete")
    ]);
    file.write(&with_protection(behind.clone(), true));
    let (locked, changes) = run_once(dir.path(), &peer.url).await;
    assert_eq!(locked["ok"], false);
    assert_eq!(locked["reason_code"], "AUTH_REQUIRED");
    assert_eq!(locked["ledger_status"], "compared");
    assert_eq!(locked["auth_required"], true);
    assert_eq!(locked["anonymous_listing_allowed"], false);
    assert_eq!(locked["http_status"], 401);
    assert_eq!(
        locked["oauth_protected_resource_metadata_url"],
        format!(
            "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
            peer.process.port
        )
    );
    assert_eq!(
        locked["oauth_authorization_servers"],
        json!(["https://auth.example.test"])
    );
    assert_eq!(locked["oauth_scopes_supported"], json!(["mcp:tools"]));
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(locked["change_count"], 1);
    assert_eq!(changes[0]["change_class"], "auth_requirement_changed");
    assert_eq!(changes[0]["severity"], "high");
    assert_eq!(changes[0]["field"], "auth_required");
    assert!(changes[0]["tool_name"].is_null());

    // Still locked: nothing new.
    let (_, changes) = run_once(dir.path(), &peer.url).await;
    assert!(changes.is_empty(), "{changes:?}");

    // Protection off again: the tool diff compares with the surface stored before auth.
    file.write(&with_protection(behind, false));
    let (open, changes) = run_once(dir.path(), &peer.url).await;
    assert_eq!(open["ok"], true);
    assert_eq!(open["ledger_status"], "compared");
    assert_eq!(open["previous_tool_digest"], digest_before);
    assert_eq!(open["digest_changed"], true);
    let mut seen: Vec<(String, String)> = changes
        .iter()
        .map(|c| {
            (
                c["change_class"].as_str().unwrap().to_string(),
                c["tool_name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("auth_requirement_changed".to_string(), String::new()),
            ("tool_added".to_string(), "delete_all".to_string()),
        ]
    );
}

#[tokio::test]
async fn a_moved_authorization_server_on_a_protected_server_is_an_auth_change() {
    let url = auth_faults::url("/changing/mcp");
    let dir = tempfile::tempdir().unwrap();
    auth_faults::set_changing_metadata(json!({
        "resource": url.as_str(),
        "authorization_servers": ["https://as-one.example.test"],
        "scopes_supported": ["read"],
    }));
    let (first, changes) = run_once(dir.path(), &url).await;
    assert_eq!(first["reason_code"], "AUTH_REQUIRED");
    assert_eq!(first["ledger_status"], "created");
    assert_eq!(
        first["oauth_authorization_servers"],
        json!(["https://as-one.example.test"])
    );
    assert!(changes.is_empty());

    auth_faults::set_changing_metadata(json!({
        "resource": url.as_str(),
        "authorization_servers": ["https://as-two.example.test"],
        "scopes_supported": ["read", "write"],
    }));
    let (second, changes) = run_once(dir.path(), &url).await;
    assert_eq!(second["ledger_status"], "compared");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["change_class"], "auth_requirement_changed");
    assert_eq!(changes[0]["severity"], "high");
    assert_eq!(changes[0]["field"], "authorization_servers,scopes");
}

#[tokio::test]
async fn a_legacy_sse_server_is_diffed_like_any_other() {
    let file = SurfaceFile::new(&surface(
        "py-sse",
        "1.0.0",
        vec![tool("search", "Search things")],
    ));
    let Some(peer) = auth_peer::start_python(&file, PyTransport::Sse, false) else {
        return support::skip("python sse peer", "tests/peers/install.sh has not run");
    };
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = run_once(dir.path(), &peer.url).await;
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(first["transport"], "http+sse");
    assert_eq!(first["protocol_era"], "legacy_sse");
    assert_eq!(first["tools_total"], 1);

    file.write(&surface(
        "py-sse",
        "1.0.0",
        vec![
            tool("search", "Search things"),
            tool("write", "Write things"),
        ],
    ));
    let (second, changes) = run_once(dir.path(), &peer.url).await;
    assert_eq!(second["ledger_status"], "compared");
    assert_eq!(second["transport"], "http+sse");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["change_class"], "tool_added");
    assert_eq!(changes[0]["tool_name"], "write");
}
