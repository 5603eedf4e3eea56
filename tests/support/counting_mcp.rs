//! A small modern MCP server (`server/discover`, `tools/list`) that serves one surface per URL
//! path on an address the test chooses and counts the requests each path received.
//!
//! Budget tests need to know which servers were really contacted, and platform tests need the
//! server bound to a public address inside a network namespace; the other test peers bind only
//! 127.0.0.1 and count nothing. It runs on the calling test's tokio runtime.
//!
//! Include with `#[path = "support/counting_mcp.rs"] mod counting_mcp;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What one path serves.
#[derive(Debug, Clone)]
struct Served {
    surface: Value,
    delay: Duration,
}

#[derive(Debug, Default)]
struct Shared {
    served: HashMap<String, Served>,
    requests: HashMap<String, usize>,
}

/// A running counting server.
pub struct CountingMcp {
    /// The address it listens on.
    pub addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CountingMcp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CountingMcp {
    /// Starts listening on `ip` (any free port) in the current tokio runtime.
    pub async fn start(ip: &str) -> CountingMcp {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let router = Router::new().fallback(answer).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .unwrap_or_else(|e| panic!("bind {ip}:0: {e}"));
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        CountingMcp { addr, shared, task }
    }

    /// The URL of `path` (e.g. `/a`) on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Serves `surface` (`{"name", "version", "tools"}`) at `path` from now on.
    pub fn serve(&self, path: &str, surface: Value) {
        self.serve_after(path, surface, Duration::ZERO);
    }

    /// Serves `surface` at `path`, answering each request only after `delay`.
    pub fn serve_after(&self, path: &str, surface: Value, delay: Duration) {
        self.shared
            .lock()
            .unwrap()
            .served
            .insert(path.to_string(), Served { surface, delay });
    }

    /// How many requests `path` has received so far.
    pub fn requests(&self, path: &str) -> usize {
        self.shared
            .lock()
            .unwrap()
            .requests
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// Forgets the request counts.
    pub fn reset_counts(&self) {
        self.shared.lock().unwrap().requests.clear();
    }
}

fn rpc(id: Value, result: Value) -> Response {
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

async fn answer(State(shared): State<Arc<Mutex<Shared>>>, uri: Uri, body: String) -> Response {
    let path = uri.path().to_string();
    let served = {
        let mut shared = shared.lock().unwrap();
        *shared.requests.entry(path.clone()).or_default() += 1;
        shared.served.get(&path).cloned()
    };
    let Some(served) = served else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if !served.delay.is_zero() {
        tokio::time::sleep(served.delay).await;
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let surface = served.surface;
    match request.get("method").and_then(Value::as_str) {
        Some("server/discover") => rpc(
            id,
            json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {
                    "name": surface["name"], "version": surface["version"],
                }},
            }),
        ),
        Some("tools/list") => rpc(
            id,
            json!({"tools": surface["tools"], "resultType": "complete"}),
        ),
        Some(_) => {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}});
            (
                [(header::CONTENT_TYPE, "application/json")],
                error.to_string(),
            )
                .into_response()
        }
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// A tool with an object input schema.
pub fn tool(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    })
}

/// A surface named `name` at `version` with `tools`.
pub fn surface(name: &str, version: &str, tools: Vec<Value>) -> Value {
    json!({"name": name, "version": version, "tools": tools})
}
