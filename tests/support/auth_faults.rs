//! Hand-written servers for the auth and transport verdicts: a bare 401, a 403
//! `insufficient_scope`, an oversized metadata document, a challenge that points at a cloud
//! metadata address, a protected server whose metadata a test can change, an HTML site and a
//! WebSocket-only endpoint. Every request is counted per path so tests can prove what was (not)
//! fetched.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};
use url::Url;

use super::background;

/// Size of the oversized metadata document.
pub const BIG_METADATA_BYTES: usize = 3_000_000;

/// The changeable metadata of `/changing/mcp`.
#[derive(Default)]
struct Shared {
    hits: Mutex<HashMap<String, usize>>,
    changing: Mutex<Value>,
}

fn shared() -> &'static Arc<Shared> {
    static SHARED: OnceLock<Arc<Shared>> = OnceLock::new();
    SHARED.get_or_init(|| {
        Arc::new(Shared {
            hits: Mutex::new(HashMap::new()),
            changing: Mutex::new(json!({
                "resource": "changing",
                "authorization_servers": ["https://as-one.example.test"],
                "scopes_supported": ["read"],
            })),
        })
    })
}

/// The server, shared by all tests of a binary.
pub fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let router = Router::new()
            .route("/bare/mcp", post(bare_401))
            .route("/scope/mcp", post(insufficient_scope))
            .route(
                "/.well-known/oauth-protected-resource/scope/mcp",
                get(scope_metadata),
            )
            .route("/big/mcp", post(big_challenge))
            .route("/foreign/mcp", post(foreign_challenge))
            .route("/foreign-prm", get(foreign_metadata))
            .route("/big-prm", get(big_metadata))
            .route("/private/mcp", post(private_challenge))
            .route("/changing/mcp", post(changing_challenge))
            .route(
                "/.well-known/oauth-protected-resource/changing/mcp",
                get(changing_metadata),
            )
            .route("/site", get(html_page))
            .route("/ws", any(websocket_only))
            .fallback(not_found)
            .layer(axum::middleware::from_fn(count))
            .with_state(shared().clone());
        background::serve(router)
    })
}

/// The URL of `path` on the server.
pub fn url(path: &str) -> Url {
    Url::parse(&format!("http://{}{path}", server())).expect("auth fault url")
}

/// How many requests reached `path` so far.
pub fn hits(path: &str) -> usize {
    shared()
        .hits
        .lock()
        .unwrap()
        .get(path)
        .copied()
        .unwrap_or(0)
}

/// Replaces the metadata document of `/changing/mcp`.
pub fn set_changing_metadata(document: Value) {
    *shared().changing.lock().unwrap() = document;
}

async fn count(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let path = request.uri().path().to_string();
    *shared().hits.lock().unwrap().entry(path).or_default() += 1;
    next.run(request).await
}

async fn not_found(uri: Uri) -> impl IntoResponse {
    (StatusCode::NOT_FOUND, format!("nothing at {uri}"))
}

fn challenge(status: StatusCode, value: String) -> Response {
    (status, [(header::WWW_AUTHENTICATE, value)], "").into_response()
}

async fn bare_401() -> impl IntoResponse {
    StatusCode::UNAUTHORIZED
}

async fn insufficient_scope() -> Response {
    challenge(
        StatusCode::FORBIDDEN,
        format!(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="http://{}/.well-known/oauth-protected-resource/scope/mcp""#,
            server()
        ),
    )
}

async fn scope_metadata() -> impl IntoResponse {
    axum::Json(json!({
        "resource": format!("http://{}/scope/mcp", server()),
        "authorization_servers": ["https://as.example.test"],
        "scopes_supported": ["files:read", "files:write"],
    }))
}

/// A challenge whose metadata document claims another resource (RFC 9728 §3.3).
async fn foreign_challenge() -> Response {
    challenge(
        StatusCode::UNAUTHORIZED,
        format!(
            r#"Bearer scope="mail:send", resource_metadata="http://{}/foreign-prm""#,
            server()
        ),
    )
}

async fn foreign_metadata() -> impl IntoResponse {
    axum::Json(json!({
        "resource": "https://elsewhere.example.test/mcp",
        "authorization_servers": ["https://as.elsewhere.example.test"],
        "scopes_supported": ["everything"],
    }))
}

async fn big_challenge() -> Response {
    challenge(
        StatusCode::UNAUTHORIZED,
        format!(r#"Bearer resource_metadata="http://{}/big-prm""#, server()),
    )
}

async fn big_metadata() -> impl IntoResponse {
    let filler = "x".repeat(BIG_METADATA_BYTES);
    let body = format!(
        r#"{{"resource":"r","authorization_servers":["https://as.example.test"],"filler":"{filler}"}}"#
    );
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body
        .into_bytes()
        .chunks(64 * 1024)
        .map(|c| Ok(c.to_vec()))
        .collect();
    (
        [(header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from_stream(futures::stream::iter(chunks)),
    )
}

async fn private_challenge() -> Response {
    challenge(
        StatusCode::UNAUTHORIZED,
        r#"Bearer resource_metadata="http://169.254.169.254/latest/meta-data/oauth""#.into(),
    )
}

async fn changing_challenge() -> Response {
    challenge(
        StatusCode::UNAUTHORIZED,
        r#"Bearer error="invalid_token""#.into(),
    )
}

async fn changing_metadata(State(state): State<Arc<Shared>>) -> impl IntoResponse {
    axum::Json(state.changing.lock().unwrap().clone())
}

async fn html_page() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        "<!doctype html><html><body>Our product</body></html>",
    )
}

async fn websocket_only() -> impl IntoResponse {
    (
        StatusCode::UPGRADE_REQUIRED,
        [(header::UPGRADE, "websocket")],
        "WebSocket only",
    )
}
