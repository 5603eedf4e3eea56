//! The MCP Registry as a fleet source, end to end: a local fake of the registry API serving two
//! pages in the shape of its published OpenAPI (`ServerList` with `metadata.nextCursor`), whose
//! remotes point at real rmcp servers on 127.0.0.1, a stdio-only package, a templated URL, a
//! cloud metadata address and a duplicate of an explicit entry. And registries that fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use actor::{Rows, RunDir};
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::HashMap;
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

/// One registry entry as `GET /v0.1/servers` lists it.
fn entry(name: &str, version: &str, remotes: Value, packages: Value, latest: bool) -> Value {
    json!({
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": name,
            "description": "A test server",
            "version": version,
            "remotes": remotes,
            "packages": packages,
        },
        "_meta": {
            "io.modelcontextprotocol.registry/official": {
                "status": "active",
                "publishedAt": "2026-10-01T10:00:00Z",
                "updatedAt": "2026-10-01T10:00:00Z",
                "isLatest": latest,
            }
        }
    })
}

fn http_remote(url: &str) -> Value {
    json!([{"type": "streamable-http", "url": url}])
}

/// The fake registry: the pages it serves and the queries it received.
#[derive(Default)]
struct Fake {
    pages: HashMap<String, Value>,
    status: Option<u16>,
    /// Every cursor not in `pages` gets a page of one stdio-only server and a new cursor.
    endless: bool,
    queries: Mutex<Vec<HashMap<String, String>>>,
}

/// A page of the endless registry: one new server, and a cursor that never runs out.
fn endless_page(cursor: &str) -> Value {
    let n = cursor
        .strip_prefix("c")
        .unwrap_or("0")
        .parse::<u64>()
        .unwrap_or(0);
    json!({
        "servers": [entry(&format!("io.test/endless-{n}"), "1.0.0", json!([]), json!([]), true)],
        "metadata": {"nextCursor": format!("c{}", n + 1), "count": 1}
    })
}

async fn list_servers(
    State(fake): State<Arc<Fake>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    fake.queries.lock().unwrap().push(query.clone());
    if let Some(status) = fake.status {
        return (StatusCode::from_u16(status).unwrap(), "registry down").into_response();
    }
    let cursor = query.get("cursor").cloned().unwrap_or_default();
    match fake.pages.get(&cursor) {
        Some(Value::String(raw)) => raw.clone().into_response(),
        Some(page) => axum::Json(page.clone()).into_response(),
        None if fake.endless => axum::Json(endless_page(&cursor)).into_response(),
        None => (StatusCode::BAD_REQUEST, "unknown cursor").into_response(),
    }
}

fn serve(fake: Fake) -> (SocketAddr, Arc<Fake>) {
    let fake = Arc::new(fake);
    let router = Router::new()
        .route("/v0.1/servers", get(list_servers))
        .with_state(fake.clone());
    (support::background::serve(router), fake)
}

#[tokio::test]
async fn registry_remotes_join_the_fleet_under_the_same_rules() {
    let alpha = RmcpPeer::start(
        surface("alpha", "1.0.0", vec![tool("search", "Search things")]),
        RmcpMode::default(),
    );
    let beta = RmcpPeer::start(
        surface("beta", "2.0.0", vec![tool("fetch", "Fetch a page")]),
        RmcpMode::default(),
    );
    let explicit = RmcpPeer::start(
        surface("explicit", "1.0.0", vec![tool("echo", "Echo")]),
        RmcpMode::default(),
    );
    let templated = "https://{tenant}.mcp.example.test/mcp";
    let page_one = json!({
        "servers": [
            entry("io.test/alpha", "1.0.0", http_remote(alpha.url.as_str()), json!([]), true),
            entry("io.test/stdio-only", "0.3.0", json!([]), json!([{
                "registryType": "npm", "identifier": "@test/stdio-only", "version": "0.3.0",
                "transport": {"type": "stdio"}
            }]), true),
            entry("io.test/tenant", "1.1.0", http_remote(templated), json!([]), true),
        ],
        "metadata": {"nextCursor": "page-2", "count": 3}
    });
    let page_two = json!({
        "servers": [
            entry("io.test/beta", "1.9.0", http_remote("https://beta-old.example.test/mcp"), json!([]), false),
            entry("io.test/beta", "2.0.0", json!([{"type": "sse", "url": beta.url.as_str()}]), json!([]), true),
            entry("io.test/metadata", "1.0.0", http_remote("http://169.254.169.254/mcp"), json!([]), true),
            entry("io.test/explicit", "1.0.0", http_remote(explicit.url.as_str()), json!([]), true),
        ],
        "metadata": {"count": 4}
    });
    let (addr, fake) = serve(Fake {
        pages: HashMap::from([(String::new(), page_one), ("page-2".to_string(), page_two)]),
        ..Fake::default()
    });
    let dir = RunDir::new();
    let input = json!({
        "servers": [explicit.url.as_str()],
        "ledger_name": "fleet",
        "registry": {"search": "io.test", "limit": 50, "base_url": format!("http://{addr}/v0.1")},
    });
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);

    // The two pages were read, with the search, the latest filter and the cursor.
    let queries = fake.queries.lock().unwrap().clone();
    assert_eq!(queries.len(), 2, "{queries:?}");
    assert_eq!(
        queries[0].get("search").map(String::as_str),
        Some("io.test")
    );
    assert_eq!(
        queries[0].get("version").map(String::as_str),
        Some("latest")
    );
    assert_eq!(queries[0].get("limit").map(String::as_str), Some("50"));
    assert_eq!(queries[1].get("cursor").map(String::as_str), Some("page-2"));

    // explicit first, then alpha, beta (latest only), the metadata address, then the template.
    let urls: Vec<&str> = rows
        .servers
        .iter()
        .map(|r| r["server_url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            explicit.url.as_str(),
            alpha.url.as_str(),
            beta.url.as_str(),
            "http://169.254.169.254/mcp",
            templated,
        ]
    );
    let explicit_row = rows.server(explicit.url.as_str());
    assert!(explicit_row["registry_name"].is_null(), "{explicit_row}");
    let alpha_row = rows.server(alpha.url.as_str());
    assert_eq!(alpha_row["ok"], true, "{alpha_row}");
    assert_eq!(alpha_row["registry_name"], "io.test/alpha");
    assert_eq!(alpha_row["tools_total"], 1);
    let beta_row = rows.server(beta.url.as_str());
    assert_eq!(beta_row["ok"], true, "{beta_row}");
    assert_eq!(beta_row["server_version"], "2.0.0");
    let blocked = rows.server("http://169.254.169.254/mcp");
    assert_eq!(blocked["reason_code"], "BLOCKED_TARGET", "{blocked}");
    let template_row = rows.server(templated);
    assert_eq!(
        template_row["reason_code"], "TEMPLATED_URL",
        "{template_row}"
    );
    assert_eq!(template_row["registry_name"], "io.test/tenant");
    assert_eq!(template_row["ledger_status"], "unavailable");

    let summary = &rows.summary;
    assert_eq!(summary["servers_from_registry"], 4, "{summary}");
    assert_eq!(summary["registry_skipped_stdio"], 1);
    assert_eq!(summary["servers_requested"], 5);
    assert_eq!(summary["servers_checked"], 3);
    assert_eq!(summary["servers_blocked"], 1);
    assert_eq!(summary["servers_unreachable"], 0);
    assert!(summary["registry_error"].is_null());
}

#[tokio::test]
async fn a_failing_registry_is_reported_and_the_explicit_servers_are_still_checked() {
    let explicit = RmcpPeer::start(
        surface("explicit", "1.0.0", vec![tool("echo", "Echo")]),
        RmcpMode::default(),
    );
    let (down, _) = serve(Fake {
        status: Some(503),
        ..Fake::default()
    });
    let (garbled, _) = serve(Fake {
        pages: HashMap::from([(String::new(), Value::String("<html>not json".into()))]),
        ..Fake::default()
    });
    // A port this process holds without listening: refused, and no one else can take it.
    let closed = SocketAddr::from(([127, 0, 0, 1], support::process::closed_port()));
    let cases = [
        (down, "HTTP 503"),
        (garbled, "not a server list"),
        (closed, "could not be read"),
    ];
    for (addr, expected) in cases {
        let dir = RunDir::new();
        let input = json!({
            "servers": [explicit.url.as_str()],
            "registry": {"base_url": format!("http://{addr}/v0.1")},
        });
        dir.run_ok(&input, None).await;
        let rows = Rows::of(&dir);
        assert_eq!(rows.servers.len(), 1, "{:?}", rows.servers);
        assert_eq!(rows.server(explicit.url.as_str())["ok"], true);
        let error = rows.summary["registry_error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{addr}: {error}");
        assert_eq!(rows.summary["servers_from_registry"], 0);
    }
}

#[tokio::test]
async fn a_registry_on_a_blocked_address_is_never_contacted() {
    let dir = RunDir::new();
    let input = json!({
        "servers": [],
        "registry": {"base_url": "http://169.254.169.254/v0.1"},
    });
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    assert!(rows.servers.is_empty(), "{:?}", rows.servers);
    let error = rows.summary["registry_error"].as_str().unwrap_or_default();
    assert!(error.contains("169.254.169.254"), "{error}");
}

/// A walk cut short: the summary's `registry_truncated` and the status message say why, and the
/// servers found before are still read.
#[tokio::test]
async fn a_registry_walk_cut_short_says_why_and_still_watches_what_it_found() {
    let alpha = RmcpPeer::start(
        surface("alpha", "1.0.0", vec![tool("search", "Search things")]),
        RmcpMode::default(),
    );
    let beta = RmcpPeer::start(
        surface("beta", "1.0.0", vec![tool("fetch", "Fetch a page")]),
        RmcpMode::default(),
    );
    let alpha_entry = entry(
        "io.test/alpha",
        "1.0.0",
        http_remote(alpha.url.as_str()),
        json!([]),
        true,
    );
    let beta_entry = entry(
        "io.test/beta",
        "1.0.0",
        http_remote(beta.url.as_str()),
        json!([]),
        true,
    );
    let page = |entries: Vec<Value>, next: &str| json!({"servers": entries, "metadata": {"nextCursor": next}});
    // The second page names itself as the next one again.
    let repeating = Fake {
        pages: HashMap::from([
            (String::new(), page(vec![alpha_entry.clone()], "again")),
            ("again".to_string(), page(vec![beta_entry.clone()], "again")),
        ]),
        ..Fake::default()
    };
    // Every page has a next cursor, forever.
    let endless = Fake {
        pages: HashMap::from([(
            String::new(),
            page(vec![alpha_entry.clone(), beta_entry.clone()], "c1"),
        )]),
        endless: true,
        ..Fake::default()
    };
    // A page with more names than `limit`.
    let over_limit = Fake {
        pages: HashMap::from([(
            String::new(),
            json!({"servers": [alpha_entry, beta_entry, entry("io.test/gamma", "1.0.0", json!([]), json!([]), true)]}),
        )]),
        ..Fake::default()
    };
    // (registry, limit, pages read, the start of `registry_truncated`)
    let cases = [
        (repeating, 100, 2, "repeating_cursor: "),
        (endless, 100, 50, "page_cap: 50 pages"),
        (over_limit, 2, 1, "limit: "),
    ];
    for (fake, limit, pages, reason) in cases {
        let (addr, fake) = serve(fake);
        let dir = RunDir::new();
        let input = json!({
            "servers": [],
            "registry": {"limit": limit, "base_url": format!("http://{addr}/v0.1")},
        });
        let outcome = dir.run_ok(&input, None).await;
        assert_eq!(fake.queries.lock().unwrap().len(), pages, "{reason}");
        let rows = Rows::of(&dir);
        let truncated = rows.summary["registry_truncated"]
            .as_str()
            .unwrap_or_default();
        assert!(truncated.starts_with(reason), "{reason}: {}", rows.summary);
        assert!(rows.summary["registry_error"].is_null());
        for url in [alpha.url.as_str(), beta.url.as_str()] {
            assert_eq!(rows.server(url)["ok"], true, "{reason}: {url}");
        }
        let status = mcp_surface_ledger::run::final_status(&outcome.summary);
        assert!(
            status.contains(&format!("registry walk cut short ({truncated})")),
            "{status}"
        );
    }
}

/// A registry read to its end has no `registry_truncated`.
#[tokio::test]
async fn a_registry_read_to_its_end_is_not_truncated() {
    let (addr, _) = serve(Fake {
        pages: HashMap::from([(
            String::new(),
            json!({"servers": [], "metadata": {"count": 0}}),
        )]),
        ..Fake::default()
    });
    let dir = RunDir::new();
    let input = json!({"servers": [], "registry": {"base_url": format!("http://{addr}/v0.1")}});
    let outcome = dir.run_ok(&input, None).await;
    assert!(Rows::of(&dir).summary.get("registry_truncated").is_none());
    assert!(!mcp_surface_ledger::run::final_status(&outcome.summary).contains("cut short"));
}
