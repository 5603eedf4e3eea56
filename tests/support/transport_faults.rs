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
/// same size. With [`Limit::Huge`], the `tools/list` answer alone is ten times that; with
/// [`Limit::Stall`], it never comes.
pub fn legacy(fault: Option<Limit>) -> FaultServer {
    let handler =
        move |state: State<Arc<Mutex<Seen>>>, body: String| legacy_post(state, body, fault);
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

async fn legacy_post(
    State(seen): State<Arc<Mutex<Seen>>>,
    body: String,
    fault: Option<Limit>,
) -> Response {
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
            if fault == Some(Limit::Stall) {
                return StatusCode::ACCEPTED.into_response();
            }
            let mut result = tools_result();
            let size = if fault == Some(Limit::Huge) {
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

// ------------------------------------------------------------------ limits on every transport

/// The limit a `tools/list` answer runs into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// One message of [`HUGE_MESSAGE_BYTES`].
    Huge,
    /// The answer never comes (the stream or request stays open).
    Stall,
}

/// The size of a [`Limit::Huge`] message: over any cap the limit tests set.
pub const HUGE_MESSAGE_BYTES: usize = 300_000;

/// How a [`limits`] server carries its `tools/list` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// 2026-07-28: `server/discover` works, `tools/list` answers with JSON.
    Stateless,
    /// 2025-11-25 handshake, `tools/list` answers with JSON.
    ClassicJson,
    /// 2025-11-25 handshake, `tools/list` answers with an SSE stream.
    ClassicSse,
    /// 2025-11-25 handshake, the `tools/list` stream closes after a priming event and the answer
    /// comes on the GET reconnect with `Last-Event-ID` (SEP-1699 resumption).
    Resumed,
}

/// A server whose handshake works and whose `tools/list` answer, carried as `carrier` says,
/// runs into `limit`.
pub fn limits(carrier: Carrier, limit: Limit) -> FaultServer {
    let post_handler = move |state: State<Arc<Mutex<Seen>>>, body: String| {
        limits_post(state, body, carrier, limit)
    };
    let get_handler = move |state: State<Arc<Mutex<Seen>>>| limits_get(state, limit);
    start(
        Router::new().route(
            "/mcp",
            post(post_handler)
                .get(get_handler)
                .delete(|| async { StatusCode::OK }),
        ),
        "/mcp",
    )
}

async fn limits_post(
    State(seen): State<Arc<Mutex<Seen>>>,
    body: String,
    carrier: Carrier,
    limit: Limit,
) -> Response {
    let (id, method) = parse(&body);
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    match (method.as_str(), carrier) {
        ("server/discover", Carrier::Stateless) => json_reply(
            answer(
                &id,
                json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "limits", "version": "1"}},
                }),
            ),
            None,
        ),
        ("server/discover", _) => (
            StatusCode::BAD_REQUEST,
            json_reply(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}).to_string(),
                None,
            ),
        )
            .into_response(),
        ("initialize", _) => {
            seen.lock().unwrap().initializes += 1;
            json_reply(answer(&id, initialize_result("limits")), Some("limits-1"))
        }
        ("tools/list", Carrier::Stateless | Carrier::ClassicJson) => {
            seen.lock().unwrap().tools_lists += 1;
            faulty_body(&id, limit, "application/json", |message| message)
        }
        ("tools/list", Carrier::ClassicSse) => {
            seen.lock().unwrap().tools_lists += 1;
            faulty_body(&id, limit, "text/event-stream", sse_event)
        }
        ("tools/list", Carrier::Resumed) => {
            let mut seen = seen.lock().unwrap();
            seen.tools_lists += 1;
            seen.pending = Some(id);
            (
                [(header::CONTENT_TYPE, "text/event-stream")],
                "id: ev-1\nretry: 100\ndata: \n\n",
            )
                .into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The GET reconnect of a [`Carrier::Resumed`] server: the pending answer, run into `limit`.
async fn limits_get(State(seen): State<Arc<Mutex<Seen>>>, limit: Limit) -> Response {
    let pending = {
        let mut seen = seen.lock().unwrap();
        seen.last_event_ids.push(String::from("reconnect"));
        seen.pending.take()
    };
    match pending {
        Some(id) => faulty_body(&id, limit, "text/event-stream", sse_event),
        None => StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
}

/// One SSE `message` event carrying `message`.
fn sse_event(message: String) -> String {
    format!("event: message\nid: ev-2\ndata: {message}\n\n")
}

/// A streamed body of `content_type` whose `tools/list` answer (framed by `frame`) is one huge
/// message, or never comes after a first harmless chunk.
fn faulty_body(
    id: &Value,
    limit: Limit,
    content_type: &'static str,
    frame: fn(String) -> String,
) -> Response {
    let first = match content_type {
        "text/event-stream" => String::from(": waiting\n\n"),
        _ => String::from(" "),
    };
    let stream: futures::stream::BoxStream<'static, Result<String, std::io::Error>> = match limit {
        Limit::Huge => {
            let mut result = tools_result();
            result["tools"][0]["description"] = json!("z".repeat(HUGE_MESSAGE_BYTES));
            let message = frame(answer(id, result));
            let chunks: Vec<Result<String, std::io::Error>> = message
                .as_bytes()
                .chunks(16 * 1024)
                .map(|c| Ok(String::from_utf8_lossy(c).into_owned()))
                .collect();
            futures::stream::iter(chunks).boxed()
        }
        Limit::Stall => futures::stream::once(async move { Ok(first) })
            .chain(futures::stream::pending())
            .boxed(),
    };
    (
        [(header::CONTENT_TYPE, content_type)],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}
