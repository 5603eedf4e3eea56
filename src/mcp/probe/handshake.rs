//! Finding the era a server speaks and doing its handshake: `server/discover` (2026-07-28),
//! `initialize` (classic), or the legacy HTTP+SSE stream, in the order the options ask for.

use std::sync::Arc;

use serde_json::{Value, json};
use url::Url;

use super::ProbeOptions;
use super::classic::{Handshake, try_classic};
use super::envelope::{client_info, modern_headers, modern_params};
use crate::mcp::era::{self, DiscoverVerdict, Era};
use crate::mcp::error::ProbeError;
use crate::mcp::exchange::{Reply, Wire};
use crate::mcp::legacy_sse::{self, LegacySession, Opened, Tally};
use crate::net::Client;

pub(super) async fn handshake(
    client: &Client,
    wire: &Wire<'_>,
    tally: &Arc<Tally>,
    url: &Url,
    options: &ProbeOptions,
) -> Result<Handshake, ProbeError> {
    match (options.force_era, options.preferred_era) {
        (Some(Era::Modern), _) => try_modern(wire, url).await?.ok_or_else(|| {
            ProbeError::TransportUnsupported(
                "the server did not answer server/discover as a 2026-07-28 server".into(),
            )
        }),
        (Some(Era::Classic), _) => try_classic(wire, url).await.map_err(|f| f.error),
        (Some(Era::LegacySse), _) => try_legacy(client, tally, url)
            .await?
            .map_err(ProbeError::TransportUnsupported),
        (None, Some(Era::LegacySse)) => match try_legacy(client, tally, url).await {
            Ok(Ok(handshake)) => Ok(handshake),
            Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
            Ok(Err(_)) | Err(_) => detect(client, wire, tally, url, false).await,
        },
        (None, Some(Era::Classic)) => match try_classic(wire, url).await {
            Ok(handshake) => Ok(handshake),
            Err(failure) if failure.may_be_modern => match try_modern(wire, url).await {
                Ok(Some(handshake)) => Ok(handshake),
                Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
                Ok(None) | Err(_) if failure.may_be_legacy => {
                    legacy_fallback(client, tally, url, failure.error).await
                }
                Ok(None) | Err(_) => Err(failure.error),
            },
            Err(failure) => Err(failure.error),
        },
        (None, _) => detect(client, wire, tally, url, true).await,
    }
}

/// The default order: `server/discover`, then `initialize`, then the legacy GET stream.
pub(super) async fn detect(
    client: &Client,
    wire: &Wire<'_>,
    tally: &Arc<Tally>,
    url: &Url,
    legacy_allowed: bool,
) -> Result<Handshake, ProbeError> {
    if let Some(handshake) = try_modern(wire, url).await? {
        return Ok(handshake);
    }
    match try_classic(wire, url).await {
        Ok(handshake) => Ok(handshake),
        Err(failure) if failure.may_be_legacy && legacy_allowed => {
            legacy_fallback(client, tally, url, failure.error).await
        }
        Err(failure) => Err(failure.error),
    }
}

/// Both POST handshakes failed in a way a legacy server would make them fail: GET the URL as
/// an event stream. A URL that serves something else entirely is `TransportUnsupported`;
/// otherwise the `initialize` error stands.
pub(super) async fn legacy_fallback(
    client: &Client,
    tally: &Arc<Tally>,
    url: &Url,
    classic_error: ProbeError,
) -> Result<Handshake, ProbeError> {
    match legacy_sse::open(client, url, tally.clone()).await {
        Ok(Opened::Legacy(session)) => legacy_handshake(*session).await,
        Ok(Opened::NotLegacy {
            why,
            unsupported: true,
        }) => Err(ProbeError::TransportUnsupported(format!(
            "neither MCP transport: initialize failed ({classic_error}) and {why}"
        ))),
        Ok(Opened::NotLegacy { .. }) => Err(classic_error),
        Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
        Err(legacy @ ProbeError::LegacySse(_)) => Err(legacy),
        Err(_) => Err(classic_error),
    }
}

/// The legacy transport alone: `Ok(Err(why))` when the URL is not a legacy stream.
pub(super) async fn try_legacy(
    client: &Client,
    tally: &Arc<Tally>,
    url: &Url,
) -> Result<Result<Handshake, String>, ProbeError> {
    match legacy_sse::open(client, url, tally.clone()).await? {
        Opened::Legacy(session) => legacy_handshake(*session).await.map(Ok),
        Opened::NotLegacy { why, .. } => Ok(Err(why)),
    }
}

/// `initialize` and `notifications/initialized` over an open legacy stream. Any failure but
/// an auth refusal is wrapped in `LegacySse`: the transport was recognised.
pub(super) async fn legacy_handshake(session: LegacySession) -> Result<Handshake, ProbeError> {
    let wrap = |error: ProbeError| match error {
        auth @ ProbeError::AuthRequired { .. } => auth,
        other => ProbeError::LegacySse(Box::new(other)),
    };
    let params = json!({
        "protocolVersion": era::CLASSIC_VERSIONS[0],
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let result = session
        .call("initialize", Some(params))
        .await
        .map_err(wrap)?;
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !era::is_known_classic_version(&version) {
        return Err(wrap(ProbeError::TransportUnsupported(format!(
            "the server negotiated protocol version {version:?}"
        ))));
    }
    session
        .notify("notifications/initialized")
        .await
        .map_err(wrap)?;
    Ok(Handshake {
        era: Era::LegacySse,
        url: session.endpoint().clone(),
        version,
        session_id: None,
        status: session.status(),
        result,
        legacy: Some(session),
    })
}

/// `server/discover`; `Ok(None)` when the answer says the server is not modern.
pub(super) async fn try_modern(
    wire: &Wire<'_>,
    url: &Url,
) -> Result<Option<Handshake>, ProbeError> {
    let mut version = era::MODERN_VERSIONS[0].to_string();
    for attempt in 0..2 {
        let method = "server/discover";
        let reply = wire
            .request(
                url,
                modern_headers(&version, method),
                method,
                Some(modern_params(&version, None)),
            )
            .await?;
        match era::classify_discover(&reply, &version) {
            DiscoverVerdict::Modern(result) => {
                return Ok(Some(Handshake {
                    era: Era::Modern,
                    url: reply.final_url.unwrap_or_else(|| url.clone()),
                    version,
                    session_id: None,
                    status: reply.status,
                    result,
                    legacy: None,
                }));
            }
            DiscoverVerdict::RetryWith(other) if attempt == 0 => version = other,
            DiscoverVerdict::RetryWith(_) => return Err(error_of(reply)),
            DiscoverVerdict::Classic => return Ok(None),
            DiscoverVerdict::Fail(error) => return Err(error),
        }
    }
    Ok(None)
}

pub(super) fn error_of(reply: Reply) -> ProbeError {
    match reply.into_result() {
        Err(error) => error,
        Ok(_) => ProbeError::NotJson("unexpected result".into()),
    }
}
