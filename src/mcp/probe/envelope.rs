//! How a request is addressed in each era: the modern `_meta` envelope and headers, the
//! classic version and session headers, and the end of a classic session.

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use url::Url;

use super::{CLIENT_NAME, META_PREFIX};
use crate::mcp::exchange::{self, Wire};

pub(super) fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// The modern `params`: the `_meta` envelope plus an optional cursor.
pub(super) fn modern_params(version: &str, cursor: Option<&str>) -> Value {
    let mut meta = Map::new();
    meta.insert(format!("{META_PREFIX}protocolVersion"), json!(version));
    meta.insert(format!("{META_PREFIX}clientCapabilities"), json!({}));
    meta.insert(format!("{META_PREFIX}clientInfo"), client_info());
    let mut params = Map::new();
    params.insert("_meta".into(), Value::Object(meta));
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), json!(cursor));
    }
    Value::Object(params)
}

pub(super) fn modern_headers(version: &str, method: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    exchange::set_header(&mut headers, exchange::VERSION_HEADER, version);
    exchange::set_header(&mut headers, exchange::METHOD_HEADER, method);
    headers
}

/// The headers of a classic request: the negotiated version and the session id, if any.
pub(super) fn classic_headers(version: &str, session_id: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    exchange::set_header(&mut headers, exchange::VERSION_HEADER, version);
    if let Some(id) = session_id {
        exchange::set_header(&mut headers, exchange::SESSION_HEADER, id);
    }
    headers
}

/// Ends a classic session the server issued (`DELETE` with its id); nothing without one.
/// Best effort: a server that refuses only keeps the session until it expires.
pub(super) async fn close_classic(
    wire: &Wire<'_>,
    url: &Url,
    version: &str,
    session_id: Option<&str>,
) {
    if session_id.is_some() {
        let _ = wire.delete(url, classic_headers(version, session_id)).await;
    }
}
