//! The protocol eras a server may speak, the versions we speak in each, and the rules that
//! decide from a server's answer to `server/discover` which era it is in.
//!
//! Only two answers prove a modern (2026-07-28 stateless) server: a valid discover result, or
//! the error `-32022` (unsupported protocol version) naming the versions it supports. Auth
//! challenges, 5xx and network failures are errors, never a reason to try another era. Every
//! other answer (another 4xx, another JSON-RPC error, an answer that is not a discover result)
//! means the server predates the stateless revision.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ProbeError;
use super::exchange::{Body, Reply};
use super::jsonrpc::RpcErrorObject;

/// How a server is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// The 2026-07-28 stateless revision: `server/discover`, a `_meta` envelope on every request,
    /// no session.
    Modern,
    /// Streamable HTTP of 2025-03-26 … 2025-11-25: `initialize`, `notifications/initialized`,
    /// optional `Mcp-Session-Id`.
    Classic,
    /// The 2024-11-05 HTTP+SSE transport: a long-lived GET event stream whose first event
    /// names the endpoint that takes the POSTs; answers arrive on the stream.
    LegacySse,
}

impl Era {
    /// The transport name rows carry for this era.
    pub fn transport(self) -> &'static str {
        match self {
            Era::Modern | Era::Classic => "streamable-http",
            Era::LegacySse => "http+sse",
        }
    }
}

/// The modern protocol versions this client speaks, newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// The classic protocol versions this client accepts from `initialize`, newest first. The
/// first one is what we offer.
pub const CLASSIC_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The JSON-RPC code of the modern "unsupported protocol version" error.
pub const UNSUPPORTED_VERSION_CODE: i64 = -32022;

/// What a `server/discover` answer tells about the server.
#[derive(Debug)]
pub enum DiscoverVerdict {
    /// A modern server that accepted the version we sent; carries the discover result.
    Modern(Value),
    /// A modern server that refused our version but supports this one: retry once with it.
    RetryWith(String),
    /// Not a modern server we can speak to: use the classic handshake.
    Classic,
    /// An error that must be reported as is (auth, 5xx).
    Fail(ProbeError),
}

/// Reads the answer to a `server/discover` request sent with version `sent`.
pub fn classify_discover(reply: &Reply, sent: &str) -> DiscoverVerdict {
    if let Some(error) = reply.auth_error() {
        return DiscoverVerdict::Fail(error);
    }
    if reply.status >= 500 {
        return DiscoverVerdict::Fail(ProbeError::Http {
            status: reply.status,
        });
    }
    match &reply.body {
        Body::Message(Ok(result)) if reply.is_success() => match discover_versions(result) {
            Some(versions) if versions.iter().any(|v| v == sent) => {
                DiscoverVerdict::Modern(result.clone())
            }
            Some(versions) => match common_modern_version(&versions) {
                Some(version) => DiscoverVerdict::RetryWith(version),
                None => DiscoverVerdict::Classic,
            },
            None => DiscoverVerdict::Classic,
        },
        Body::Message(Err(error)) => match supported_modern_version(error) {
            // Even a list naming the version we sent earns its one corrective retry (the
            // probe retries at most once): the refusal may have been transient.
            Some(version) => DiscoverVerdict::RetryWith(version),
            None => DiscoverVerdict::Classic,
        },
        _ => DiscoverVerdict::Classic,
    }
}

/// The modern version to use when `error` is a `-32022` that names one we speak. `None` when
/// the error is anything else or names only versions we do not speak as modern.
pub fn supported_modern_version(error: &RpcErrorObject) -> Option<String> {
    if error.code != UNSUPPORTED_VERSION_CODE {
        return None;
    }
    let supported = string_list(error.data.as_ref()?.get("supported")?)?;
    common_modern_version(&supported)
}

/// True when `error` proves a modern server (a `-32022` naming a modern version we speak).
pub fn is_modern_evidence(error: &RpcErrorObject) -> bool {
    supported_modern_version(error).is_some()
}

/// The `supportedVersions` of a valid discover result, or `None` when `result` is not one.
fn discover_versions(result: &Value) -> Option<Vec<String>> {
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return None;
    }
    string_list(result.get("supportedVersions")?)
}

fn common_modern_version(versions: &[String]) -> Option<String> {
    MODERN_VERSIONS
        .iter()
        .find(|ours| versions.iter().any(|theirs| theirs == *ours))
        .map(|v| v.to_string())
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    let items = value.as_array()?;
    let list: Vec<String> = items
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!list.is_empty()).then_some(list)
}

/// True when `version` is a classic version we can read.
pub fn is_known_classic_version(version: &str) -> bool {
    CLASSIC_VERSIONS.contains(&version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::exchange::Body;
    use serde_json::json;

    fn reply(status: u16, body: Body) -> Reply {
        Reply::for_test(status, body)
    }

    fn error(code: i64, data: Option<Value>) -> Body {
        Body::Message(Err(RpcErrorObject {
            code,
            message: "m".into(),
            data,
        }))
    }

    fn discover_result(versions: Value) -> Body {
        Body::Message(Ok(
            json!({"supportedVersions": versions, "capabilities": {"tools": {}}}),
        ))
    }

    #[test]
    fn classifies_discover_answers() {
        let sent = "2026-07-28";
        let table: Vec<(&str, Reply, DiscoverVerdict)> = vec![
            (
                "valid discover",
                reply(200, discover_result(json!(["2026-07-28"]))),
                DiscoverVerdict::Modern(
                    json!({"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}),
                ),
            ),
            (
                "discover listing only classic versions",
                reply(200, discover_result(json!(["2025-11-25"]))),
                DiscoverVerdict::Classic,
            ),
            (
                "result that is not a discover result",
                reply(200, Body::Message(Ok(json!({"tools": []})))),
                DiscoverVerdict::Classic,
            ),
            (
                "-32022 naming a version we sent",
                reply(
                    400,
                    error(-32022, Some(json!({"supported":["2026-07-28"]}))),
                ),
                DiscoverVerdict::RetryWith("2026-07-28".into()),
            ),
            (
                "-32022 naming only classic versions",
                reply(
                    400,
                    error(-32022, Some(json!({"supported":["2025-06-18"]}))),
                ),
                DiscoverVerdict::Classic,
            ),
            (
                "-32022 without data",
                reply(400, error(-32022, None)),
                DiscoverVerdict::Classic,
            ),
            (
                "session error of a classic server",
                reply(400, error(-32000, None)),
                DiscoverVerdict::Classic,
            ),
            (
                "in-band -32602",
                reply(200, error(-32602, None)),
                DiscoverVerdict::Classic,
            ),
            (
                "404 html",
                reply(404, Body::Undecodable("html".into())),
                DiscoverVerdict::Classic,
            ),
            (
                "405 empty",
                reply(405, Body::Empty),
                DiscoverVerdict::Classic,
            ),
            (
                "401",
                reply(401, Body::Empty),
                DiscoverVerdict::Fail(ProbeError::AuthRequired {
                    status: 401,
                    www_authenticate: None,
                }),
            ),
            (
                "403 with a modern error body is still auth",
                reply(
                    403,
                    error(-32022, Some(json!({"supported":["2026-07-28"]}))),
                ),
                DiscoverVerdict::Fail(ProbeError::AuthRequired {
                    status: 403,
                    www_authenticate: None,
                }),
            ),
            (
                "500",
                reply(500, error(-32603, None)),
                DiscoverVerdict::Fail(ProbeError::Http { status: 500 }),
            ),
            (
                "503 empty",
                reply(503, Body::Empty),
                DiscoverVerdict::Fail(ProbeError::Http { status: 503 }),
            ),
        ];
        for (name, reply, expected) in table {
            assert_eq!(
                format!("{:?}", classify_discover(&reply, sent)),
                format!("{expected:?}"),
                "{name}"
            );
        }
    }

    #[test]
    fn retries_with_a_common_version_after_a_version_error() {
        let reply = reply(
            400,
            error(-32022, Some(json!({"supported":["2026-07-28"]}))),
        );
        assert!(matches!(
            classify_discover(&reply, "2099-01-01"),
            DiscoverVerdict::RetryWith(v) if v == "2026-07-28"
        ));
    }

    #[test]
    fn modern_evidence_needs_the_version_error_with_a_modern_version() {
        let modern = RpcErrorObject {
            code: -32022,
            message: String::new(),
            data: Some(json!({"supported":["2026-07-28"],"requested":"2025-11-25"})),
        };
        assert!(is_modern_evidence(&modern));
        let other = RpcErrorObject {
            code: -32020,
            ..modern.clone()
        };
        assert!(!is_modern_evidence(&other));
    }

    #[test]
    fn era_serializes_in_snake_case() {
        assert_eq!(serde_json::to_value(Era::Modern).unwrap(), json!("modern"));
        assert_eq!(
            serde_json::to_value(Era::Classic).unwrap(),
            json!("classic")
        );
        assert_eq!(
            serde_json::to_value(Era::LegacySse).unwrap(),
            json!("legacy_sse")
        );
        assert_eq!(Era::LegacySse.transport(), "http+sse");
        assert_eq!(Era::Modern.transport(), "streamable-http");
    }
}
