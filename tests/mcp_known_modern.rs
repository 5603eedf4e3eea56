//! The known-modern fast path of the probe: when the ledger remembers the modern era,
//! `tools/list` goes out together with `server/discover` (one round trip), and its early answer
//! is used only when the handshake confirms the modern era.
//!
//! The server here is a small axum app on 127.0.0.1 that records what it saw. Its discover
//! handler waits briefly for a `tools/list` to arrive, so the test can tell "sent together" from
//! "sent after" without measuring time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_surface_ledger::mcp::{Era, Observation, ProbeOptions, probe};
use mcp_surface_ledger::net::{Client, NetConfig};
use serde_json::{Value, json};
use url::Url;

/// How the test server behaves, and what it saw.
#[derive(Default)]
struct Server {
    /// Speaks 2026-07-28 (otherwise classic only: discover is refused like a 2025 server).
    modern: bool,
    /// Declares the `tools` capability (it serves `tools/list` either way).
    declares_tools: bool,
    /// A `tools/list` request has arrived.
    tools_list_arrived: AtomicBool,
    /// `server/discover` was answered after a `tools/list` had already arrived.
    tools_list_came_with_discover: AtomicBool,
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn tools() -> Value {
    json!([
        {"name": "alpha", "inputSchema": {"type": "object"}},
        {"name": "beta", "inputSchema": {"type": "object"}},
    ])
}

async fn handle(State(server): State<Arc<Server>>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap();
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let modern_request = headers
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes().starts_with(b"2026"));
    let not_initialized = || {
        json_reply(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
        )
    };
    let capabilities = if server.declares_tools {
        json!({"tools": {}})
    } else {
        json!({})
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "server/discover" if server.modern => {
            // Give a concurrent tools/list up to 300 ms to show up.
            for _ in 0..30 {
                if server.tools_list_arrived.load(Ordering::SeqCst) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let early = server.tools_list_arrived.load(Ordering::SeqCst);
            server
                .tools_list_came_with_discover
                .store(early, Ordering::SeqCst);
            json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": capabilities,
                "instructions": "be nice",
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "known-modern", "version": "1"}},
            })
        }
        "initialize" if !server.modern => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": "now-classic", "version": "2"},
        }),
        "tools/list" if modern_request == server.modern => {
            server.tools_list_arrived.store(true, Ordering::SeqCst);
            json!({"tools": tools(), "resultType": "complete"})
        }
        "tools/list" => {
            server.tools_list_arrived.store(true, Ordering::SeqCst);
            return not_initialized();
        }
        _ => return not_initialized(),
    };
    json_reply(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

async fn start(server: Server) -> (Url, Arc<Server>) {
    let server = Arc::new(server);
    let app = Router::new()
        .route("/mcp", post(handle))
        .with_state(server.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://{}/mcp", listener.local_addr().unwrap())).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, server)
}

async fn read(url: &Url, preferred_era: Option<Era>) -> Observation {
    let client =
        Client::new(NetConfig::new(Duration::from_secs(10), 3, 1_000_000).allow_private(true))
            .unwrap();
    let options = ProbeOptions {
        preferred_era,
        ..ProbeOptions::default()
    };
    probe(&client, url, &options)
        .await
        .unwrap_or_else(|failure| panic!("probe failed: {failure:?}"))
}

fn names(observation: &Observation) -> Vec<&str> {
    observation
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_known_modern_server_gets_tools_list_together_with_discover() {
    let (url, server) = start(Server {
        modern: true,
        declares_tools: true,
        ..Server::default()
    })
    .await;
    let observation = read(&url, Some(Era::Modern)).await;

    assert!(server.tools_list_came_with_discover.load(Ordering::SeqCst));
    assert_eq!(observation.era, Era::Modern);
    assert_eq!(names(&observation), ["alpha", "beta"]);
    assert_eq!(observation.server_info["name"], "known-modern");
    assert_eq!(observation.instructions.as_deref(), Some("be nice"));
    assert_eq!(
        observation.requests_sent, 2,
        "discover + tools/list, nothing more"
    );
}

#[tokio::test]
async fn without_a_remembered_era_tools_list_waits_for_discover() {
    let (url, server) = start(Server {
        modern: true,
        declares_tools: true,
        ..Server::default()
    })
    .await;
    let observation = read(&url, None).await;

    assert!(!server.tools_list_came_with_discover.load(Ordering::SeqCst));
    assert_eq!(names(&observation), ["alpha", "beta"]);
    assert_eq!(observation.requests_sent, 2);
}

#[tokio::test]
async fn a_known_modern_server_that_went_classic_is_read_through_initialize() {
    let (url, _server) = start(Server {
        modern: false,
        declares_tools: true,
        ..Server::default()
    })
    .await;
    let observation = read(&url, Some(Era::Modern)).await;

    assert_eq!(observation.era, Era::Classic);
    assert_eq!(observation.server_info["name"], "now-classic");
    assert_eq!(names(&observation), ["alpha", "beta"]);
    // discover + the early tools/list (refused, dropped) + initialize + initialized + tools/list
    assert_eq!(observation.requests_sent, 5);
}

#[tokio::test]
async fn early_tools_are_dropped_when_the_server_does_not_declare_tools() {
    let (url, server) = start(Server {
        modern: true,
        declares_tools: false,
        ..Server::default()
    })
    .await;
    let observation = read(&url, Some(Era::Modern)).await;

    assert!(server.tools_list_came_with_discover.load(Ordering::SeqCst));
    assert_eq!(observation.era, Era::Modern);
    assert!(observation.tools.is_empty());
    assert_eq!(observation.requests_sent, 2);
}
