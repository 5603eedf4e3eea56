//! The classic (2025) `initialize` exchange: the handshake tries it, and a session that the
//! server forgot renews itself with it (so it sits below both).

use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use url::Url;

use super::envelope::{self, client_info};
use crate::mcp::era::{self, Era};
use crate::mcp::error::ProbeError;
use crate::mcp::exchange::{Body, Wire};
use crate::mcp::legacy_sse::LegacySession;

/// A completed handshake in either era (defined here, the lowest module that makes one).
#[derive(Debug)]
pub(super) struct Handshake {
    pub(super) era: Era,
    pub(super) url: Url,
    pub(super) version: String,
    pub(super) session_id: Option<String>,
    pub(super) status: u16,
    /// The discover or initialize result.
    pub(super) result: Value,
    /// The open event stream of a legacy HTTP+SSE server.
    pub(super) legacy: Option<LegacySession>,
}

/// A failed `initialize`, with whether trying another era or transport could still help.
pub(super) struct ClassicFailure {
    pub(super) error: ProbeError,
    pub(super) may_be_modern: bool,
    /// 400/404/405 without modern evidence: the URL may be a 2024-11-05 SSE stream.
    pub(super) may_be_legacy: bool,
}

/// `initialize` then `notifications/initialized`.
pub(super) async fn try_classic(wire: &Wire<'_>, url: &Url) -> Result<Handshake, ClassicFailure> {
    let offered = era::CLASSIC_VERSIONS[0];
    let params = json!({
        "protocolVersion": offered,
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let reply = wire
        .request(url, HeaderMap::new(), "initialize", Some(params))
        .await
        .map_err(|error| ClassicFailure {
            error: error.into(),
            may_be_modern: false,
            may_be_legacy: false,
        })?;
    let modern_evidence =
        matches!(&reply.body, Body::Message(Err(e)) if era::is_modern_evidence(e));
    let may_be_modern =
        modern_evidence || ((400..500).contains(&reply.status) && reply.auth_error().is_none());
    // 426: a WebSocket-only endpoint, which the GET then confirms.
    let may_be_legacy = !modern_evidence && matches!(reply.status, 400 | 404 | 405 | 426);
    let status = reply.status;
    let session_id = reply.session_id.clone();
    let final_url = reply.final_url.clone().unwrap_or_else(|| url.clone());
    let result = reply.into_result().map_err(|error| ClassicFailure {
        error,
        may_be_modern,
        may_be_legacy,
    })?;
    let fail = |error: ProbeError| ClassicFailure {
        error,
        may_be_modern: false,
        may_be_legacy: false,
    };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !era::is_known_classic_version(&version) {
        envelope::close_classic(wire, &final_url, &version, session_id.as_deref()).await;
        return Err(fail(ProbeError::TransportUnsupported(format!(
            "the server negotiated protocol version {version:?}"
        ))));
    }
    let ack = wire
        .notify(
            &final_url,
            envelope::classic_headers(&version, session_id.as_deref()),
            "notifications/initialized",
        )
        .await
        .map_err(|error| fail(error.into()))?;
    if let Some(error) = ack.auth_error() {
        return Err(fail(error));
    }
    Ok(Handshake {
        era: Era::Classic,
        url: final_url,
        version,
        session_id,
        status,
        result,
        legacy: None,
    })
}
