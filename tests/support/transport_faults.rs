//! Hand-written 2025-11-25 and 2024-11-05 servers for the transport corner cases: a response
//! stream closed before the response (SEP-1699 polling), a session that expires mid-probe, and
//! a legacy HTTP+SSE stream whose messages together exceed the body cap.
//!
//! Each constructor starts its own server (own port, own state) in the background runtime and
//! returns a handle to its URL and what it saw.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use url::Url;

use super::background;

/// What a fault server saw, for the test to check.
#[derive(Debug, Default)]
pub struct Seen {
    /// `initialize` requests received.
    pub initializes: u32,
    /// `Last-Event-ID` values of the GET reconnects, in order.
    pub last_event_ids: Vec<String>,
    /// `tools/list` requests received.
    pub tools_lists: u32,
    /// The id of a `tools/list` whose answer waits for a GET reconnect.
    pending: Option<Value>,
    /// The channel that feeds the open legacy event stream.
    legacy_stream: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

/// A running fault server.
#[derive(Clone)]
pub struct FaultServer {
    /// The URL to probe.
    pub url: Url,
    /// What it saw.
    pub seen: Arc<Mutex<Seen>>,
}

impl FaultServer {
    /// A copy of the counters.
    pub fn initializes(&self) -> u32 {
        self.seen.lock().unwrap().initializes
    }

    /// The `Last-Event-ID` values the GET reconnects carried.
    pub fn last_event_ids(&self) -> Vec<String> {
        self.seen.lock().unwrap().last_event_ids.clone()
    }
}

fn start(router: Router<Arc<Mutex<Seen>>>, path: &str) -> FaultServer {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let addr = background::serve(router.with_state(seen.clone()));
    FaultServer {
        url: Url::parse(&format!("http://{addr}{path}")).unwrap(),
        seen,
    }
}

/// Tools every fault server lists.
pub fn tool_names() -> Vec<&'static str> {
    vec!["alpha", "beta"]
}

fn tools_result() -> Value {
    let tools: Vec<Value> = tool_names()
        .into_iter()
        .map(|name| json!({"name": name, "description": format!("The {name} tool."), "inputSchema": {"type": "object"}}))
        .collect();
    json!({ "tools": tools })
}

fn answer(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn initialize_result(name: &str) -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1.0.0"},
    })
}

fn json_reply(body: String, session: Option<&str>) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(session) = session {
        response
            .headers_mut()
            .insert("mcp-session-id", session.parse().unwrap());
    }
    response
}

/// `(id, method)` of a JSON-RPC message; the id is `None` for a notification.
fn parse(body: &str) -> (Option<Value>, String) {
    let message: Value = serde_json::from_str(body).unwrap_or_default();
    let method = message["method"].as_str().unwrap_or_default().to_string();
    (message.get("id").cloned(), method)
}

// ------------------------------------------------------------------ SEP-1699 polling

/// A 2025-11-25 server that answers `tools/list` with a priming event (`id`, `retry: 200`) and
/// closes the stream; the response comes on a GET reconnect with `Last-Event-ID`, on a stream
/// that then stays open.
pub fn polling() -> FaultServer {
    start(
        Router::new().route(
            "/mcp",
            post(polling_post)
                .get(polling_get)
                .delete(|| async { StatusCode::OK }),
        ),
        "/mcp",
    )
}

async fn polling_post(State(seen): State<Arc<Mutex<Seen>>>, body: String) -> Response {
    let (id, method) = parse(&body);
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    match method.as_str() {
        "initialize" => {
            seen.lock().unwrap().initializes += 1;
            json_reply(answer(&id, initialize_result("polling")), Some("poll-1"))
        }
        "tools/list" => {
            let mut seen = seen.lock().unwrap();
            seen.tools_lists += 1;
            seen.pending = Some(id);
            (
                [(header::CONTENT_TYPE, "text/event-stream")],
                "id: ev-1\nretry: 200\ndata: \n\n",
            )
                .into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn polling_get(State(seen): State<Arc<Mutex<Seen>>>, headers: HeaderMap) -> Response {
    let mut seen = seen.lock().unwrap();
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    seen.last_event_ids.push(last.clone());
    let Some(id) = seen.pending.take().filter(|_| last == "ev-1") else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    let event = format!(
        "event: message\nid: ev-2\ndata: {}\n\n",
        answer(&id, tools_result())
    );
    // The stream stays open after the response, as a polling server's GET stream does.
    let stream = futures::stream::once(async move { Ok::<_, std::io::Error>(event) })
        .chain(futures::stream::pending());
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

// ------------------------------------------------------------------ expiring sessions

/// A 2025-11-25 server whose first session expires (404) at the first `tools/list`. With
/// `always`, every session expires that way.
pub fn expiring(always: bool) -> FaultServer {
    let handler = move |state: State<Arc<Mutex<Seen>>>, headers: HeaderMap, body: String| {
        expiring_post(state, headers, body, always)
    };
    start(
        Router::new().route("/mcp", post(handler).delete(|| async { StatusCode::OK })),
        "/mcp",
    )
}

async fn expiring_post(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: HeaderMap,
    body: String,
    always: bool,
) -> Response {
    let (id, method) = parse(&body);
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut seen = seen.lock().unwrap();
    match method.as_str() {
        "initialize" => {
            seen.initializes += 1;
            let session = format!("session-{}", seen.initializes);
            json_reply(answer(&id, initialize_result("expiring")), Some(&session))
        }
        "tools/list" => {
            seen.tools_lists += 1;
            let session = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if always || session == "session-1" {
                return (StatusCode::NOT_FOUND, "session not found").into_response();
            }
            json_reply(answer(&id, tools_result()), None)
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

// ------------------------------------------------------------------ legacy HTTP+SSE

/// Size of the padding each legacy message carries.
pub const LEGACY_PADDING: usize = 3_000;

/// A 2024-11-05 HTTP+SSE server: `GET /sse` announces `/messages`, and every answer arrives on
/// the stream padded to about [`LEGACY_PADDING`] bytes, after two filler notifications of the
/// same size. With `huge_tools`, the `tools/list` answer alone is ten times that.
pub fn legacy(huge_tools: bool) -> FaultServer {
    let handler =
        move |state: State<Arc<Mutex<Seen>>>, body: String| legacy_post(state, body, huge_tools);
    start(
        Router::new()
            .route("/sse", get(legacy_get))
            .route("/messages", post(handler)),
        "/sse",
    )
}

async fn legacy_get(State(seen): State<Arc<Mutex<Seen>>>) -> Response {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
    sender
        .send("event: endpoint\ndata: /messages\n\n".to_string())
        .unwrap();
    seen.lock().unwrap().legacy_stream = Some(sender);
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        let event = receiver.recv().await?;
        // Space the events out so each arrives as its own chunk.
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((Ok::<_, std::io::Error>(event), receiver))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

async fn legacy_post(State(seen): State<Arc<Mutex<Seen>>>, body: String, huge: bool) -> Response {
    let (id, method) = parse(&body);
    let mut seen = seen.lock().unwrap();
    let Some(stream) = seen.legacy_stream.clone() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    let padding = "x".repeat(LEGACY_PADDING);
    let result = match method.as_str() {
        "initialize" => {
            seen.initializes += 1;
            let mut result = initialize_result("legacy");
            result["protocolVersion"] = json!("2024-11-05");
            result["instructions"] = json!(padding);
            result
        }
        "tools/list" => {
            seen.tools_lists += 1;
            let mut result = tools_result();
            let size = if huge {
                10 * LEGACY_PADDING
            } else {
                LEGACY_PADDING
            };
            result["tools"][0]["description"] = json!("y".repeat(size));
            result
        }
        _ => json!({}),
    };
    for _ in 0..2 {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": padding}});
        let _ = stream.send(format!("event: message\ndata: {note}\n\n"));
    }
    let _ = stream.send(format!("event: message\ndata: {}\n\n", answer(&id, result)));
    StatusCode::ACCEPTED.into_response()
}
