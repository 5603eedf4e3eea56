//! Hand-written misbehaving servers (axum) and unreachable targets, one per failure the probe
//! must turn into a reason code.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use url::Url;

use super::background;

/// How long the slow route waits before answering.
pub const SLOW_DELAY: Duration = Duration::from_secs(30);
/// Size of the oversized body.
pub const BIG_BODY_BYTES: usize = 3_000_000;

/// The fault server, shared by all tests of a binary: one route per fault.
pub fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let router = Router::new()
            .route("/big", post(big_body))
            .route("/slow", post(slow))
            .route("/rpc-error", post(rpc_error))
            .route("/html", post(html))
            .route("/status-500", post(status_500))
            .route("/auth", post(auth))
            .route("/tools-fail", post(tools_fail))
            .route("/tools-auth", post(tools_auth));
        background::serve(router)
    })
}

/// The URL of one fault route (`/big`, `/slow`, `/rpc-error`, `/html`, `/status-500`, `/auth`,
/// `/tools-fail`, `/tools-auth`).
pub fn url(path: &str) -> Url {
    Url::parse(&format!("http://{}{path}", server())).expect("fault url")
}

/// A loopback URL where nothing listens: a port this process holds and never listens on, so
/// no other process can start listening there.
pub fn refused_url() -> Url {
    let port = super::process::closed_port();
    Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("refused url")
}

/// A URL whose host can never resolve (RFC 6761 `.invalid`).
pub fn unresolvable_url() -> Url {
    Url::parse("http://nonexistent.invalid/mcp").expect("unresolvable url")
}

/// A JSON body bigger than any test cap, with no `Content-Length` shortcut.
async fn big_body() -> impl IntoResponse {
    let filler = "x".repeat(BIG_BODY_BYTES);
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"filler":"{filler}"}}}}"#);
    let stream = futures::stream::iter(
        body.into_bytes()
            .chunks(64 * 1024)
            .map(|chunk| Ok::<_, std::io::Error>(chunk.to_vec()))
            .collect::<Vec<_>>(),
    );
    (
        [(header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from_stream(stream),
    )
}

async fn slow() -> impl IntoResponse {
    tokio::time::sleep(SLOW_DELAY).await;
    StatusCode::ACCEPTED
}

/// Every request gets an in-band JSON-RPC error (HTTP 200): neither era's handshake works.
async fn rpc_error(body: String) -> impl IntoResponse {
    let id = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(serde_json::Value::Null);
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": "internal failure"},
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
}

async fn html() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        "<!doctype html><html><body>Welcome</body></html>",
    )
}

async fn status_500() -> impl IntoResponse {
    (StatusCode::INTERNAL_SERVER_ERROR, "oops")
}

async fn auth() -> impl IntoResponse {
    (
        StatusCode::UNAUTHORIZED,
        [(
            header::WWW_AUTHENTICATE,
            r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp""#,
        )],
        "",
    )
}

/// A scripted modern server whose `server/discover` works; `tools/list` then gets `failure`.
fn scripted_modern(body: &str, failure: axum::response::Response) -> axum::response::Response {
    let request: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let id = request
        .get("id")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    match request.get("method").and_then(|m| m.as_str()) {
        Some("server/discover") => {
            let answer = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
                },
            });
            (
                [(header::CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
                .into_response()
        }
        _ => failure,
    }
}

/// Discover works, `tools/list` answers with a JSON-RPC error.
async fn tools_fail(body: String) -> axum::response::Response {
    let failure = rpc_error(body.clone()).await.into_response();
    scripted_modern(&body, failure)
}

/// Discover works, `tools/list` answers 401.
async fn tools_auth(body: String) -> axum::response::Response {
    let failure = auth().await.into_response();
    scripted_modern(&body, failure)
}
