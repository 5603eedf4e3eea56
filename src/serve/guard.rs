//! The last line of defence: every answer is JSON, even when the request never reached a
//! handler, and a panic in a handler becomes a JSON 500 instead of a dropped connection.
//!
//! The MCP transport (`rmcp`) refuses some malformed requests itself (wrong content type,
//! unparseable body, missing `Accept`, foreign `Host`) with a plain-text body; this layer turns
//! those bodies into JSON-RPC error objects, keeping the status. Answers that already are JSON
//! or a stream pass untouched. A body that is not JSON at all is a JSON-RPC parse error and
//! is answered 400 (not the 415 of a wrong content type).
//!
//! A request that declares a body larger than [`super::MAX_BODY_BYTES`] in `Content-Length`
//! is answered 413 before any of its body is read, so a client cannot hold a connection open
//! by announcing a body it never sends. The body a client does send is then read and thrown
//! away in the background (at most [`DRAIN_BYTES`], for at most [`DRAIN_DEADLINE`]) before
//! the connection closes: closing a socket with unread bytes resets it, and a client still
//! writing would see that reset (a broken pipe) instead of the 413 it was sent.

use std::any::Any;
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::json;

use super::error::ServeError;

/// How much of a plain-text error body is kept as the message.
const MAX_MESSAGE_BYTES: usize = 4096;

/// The most of a refused oversize body that is read and thrown away after the 413 is sent.
/// A larger declared body is not read at all (its sender sees the connection close).
pub const DRAIN_BYTES: u64 = 8 * super::MAX_BODY_BYTES as u64;

/// How long a refused oversize body is read at most after the 413 is sent.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// JSON-RPC "Parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
const INVALID_REQUEST: i64 = -32600;

/// Middleware for every route: refuses a declared oversize body (413) before reading it, then
/// drains what the client sends of it (see the module documentation).
pub async fn declared_size(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<u64>().ok());
    match declared {
        Some(length) if length > super::MAX_BODY_BYTES as u64 => {
            let refusal = ServeError::TooLarge(super::MAX_BODY_BYTES);
            let mut response = if request.uri().path().starts_with(super::MCP_PATH) {
                let body = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": INVALID_REQUEST, "message": refusal.to_string()}});
                (refusal.status(), axum::Json(body)).into_response()
            } else {
                refusal.into_response()
            };
            // The unread body makes the connection unusable for a next request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            if length <= DRAIN_BYTES {
                tokio::spawn(drain(request.into_body()));
            }
            response
        }
        _ => next.run(request).await,
    }
}

/// Reads `body` to its end and throws it away, stopping after [`DRAIN_BYTES`] or
/// [`DRAIN_DEADLINE`]; the connection closes once the body is dropped.
async fn drain(body: Body) {
    let mut chunks = body.into_data_stream();
    let mut read: u64 = 0;
    let _ = tokio::time::timeout(DRAIN_DEADLINE, async {
        while let Some(Ok(chunk)) = chunks.next().await {
            read = read.saturating_add(chunk.len() as u64);
            if read > DRAIN_BYTES {
                break;
            }
        }
    })
    .await;
}

/// Middleware for `/mcp`: rewrites a non-JSON error answer as a JSON-RPC error object.
pub async fn json_rpc_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = to_bytes(body, MAX_MESSAGE_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let (code, status) = if message.contains("deserialize") {
        (PARSE_ERROR, StatusCode::BAD_REQUEST)
    } else {
        (INVALID_REQUEST, status)
    };
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    let mut rewritten = Response::from_parts(parts, Body::from(body.to_string()));
    *rewritten.status_mut() = status;
    let headers = rewritten.headers_mut();
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    rewritten
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value.starts_with("application/json") || value.starts_with("text/event-stream")
        })
}

/// The answer to a request whose handler panicked (used by the catch-panic layer).
pub fn panic_answer(_panic: Box<dyn Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked; answered 500");
    let body =
        json!({"error": "internal_error", "message": "the server failed to answer this request"});
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[tokio::test]
    async fn a_panic_is_answered_with_a_json_500() {
        let response = panic_answer(Box::new("boom"));
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let bytes = to_bytes(response.into_body(), 1024).await.unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"], "internal_error");
    }
}
