//! A small hand-written modern MCP server (`server/discover`, `tools/list`) whose behaviour a
//! test switches between runs: serve its surface, demand authentication (401), answer after a
//! delay, hang, or go away entirely (connection refused).
//!
//! The real peers (rmcp, Python, server-everything) cover protocol fidelity; this one exists
//! for the states a real peer cannot be put in on demand.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use url::Url;

use crate::support::background;

/// What the server does with the next requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Serve the surface.
    Serve = 0,
    /// Answer every request with 401 and a bearer challenge.
    Unauthorized = 1,
    /// Never answer.
    Hang = 2,
}

struct Shared {
    surface: RwLock<Value>,
    mode: AtomicU8,
    delay_ms: AtomicU64,
}

/// A running switchable server.
pub struct Switchable {
    /// Its MCP endpoint.
    pub url: Url,
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Switchable {
    /// Starts serving `surface` (shape of [`super::surface::surface`]) on a fresh port.
    pub fn start(surface: Value) -> Switchable {
        let shared = Arc::new(Shared {
            surface: RwLock::new(surface),
            mode: AtomicU8::new(Mode::Serve as u8),
            delay_ms: AtomicU64::new(0),
        });
        let router = Router::new()
            .route("/mcp", post(answer))
            .with_state(shared.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("addr");
        let task = background::handle().spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let _ = axum::serve(listener, router).await;
        });
        Switchable {
            url: Url::parse(&format!("http://{addr}/mcp")).expect("url"),
            shared,
            task: Mutex::new(Some(task)),
        }
    }

    /// Replaces the served surface.
    pub fn set_surface(&self, surface: Value) {
        *self.shared.surface.write().unwrap() = surface;
    }

    /// Switches the behaviour.
    pub fn set_mode(&self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::SeqCst);
    }

    /// Delays every answer by `delay`.
    pub fn set_delay(&self, delay: Duration) {
        self.shared
            .delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }

    /// Stops listening: new connections are refused from now on.
    pub fn shut_down(&self) {
        if let Some(task) = self.task.lock().unwrap().take() {
            task.abort();
        }
        // The abort lands on the background runtime; wait until the port is really closed.
        let addr = format!(
            "{}:{}",
            self.url.host_str().unwrap(),
            self.url.port().unwrap()
        );
        for _ in 0..200 {
            if std::net::TcpStream::connect(&addr).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("{addr} still accepts connections after shut_down");
    }
}

async fn answer(State(shared): State<Arc<Shared>>, body: String) -> Response {
    let delay = shared.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    match shared.mode.load(Ordering::SeqCst) {
        1 => {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer realm=\"test\"")],
                "",
            )
                .into_response();
        }
        2 => std::future::pending::<()>().await,
        _ => {}
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let surface = shared.surface.read().unwrap().clone();
    let result = match request.get("method").and_then(Value::as_str) {
        Some("server/discover") => {
            let mut result = json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {
                    "name": surface["name"], "version": surface["version"],
                }},
            });
            if let Some(instructions) = surface.get("instructions") {
                result["instructions"] = instructions.clone();
            }
            result
        }
        Some("tools/list") => json!({"tools": surface["tools"], "resultType": "complete"}),
        Some(_) => {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}});
            return (
                [(header::CONTENT_TYPE, "application/json")],
                error.to_string(),
            )
                .into_response();
        }
        None => return StatusCode::ACCEPTED.into_response(),
    };
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}
