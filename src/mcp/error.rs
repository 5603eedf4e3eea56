//! What can go wrong while probing one server, and how each failure maps to a reason code.

use url::Url;

use super::auth::AuthFindings;
use crate::net::NetError;
use crate::reason::ReasonCode;

/// Why a probe could not read a server's surface.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The server answered the anonymous request with 401 or 403.
    #[error(
        "the server requires authorization (HTTP {status}): to read what a signed-in agent sees, give a credential for its origin with --header (snapshot, diff) or server_credentials (INPUT)"
    )]
    AuthRequired {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` challenge, when the server sent one.
        www_authenticate: Option<String>,
    },
    /// The HTTP exchange itself failed (DNS, connect, timeout, body cap, …).
    #[error(transparent)]
    Net(#[from] NetError),
    /// An HTTP status the protocol does not explain (5xx, or a 4xx without a JSON-RPC error).
    #[error("unexpected HTTP status {status}{hint}", hint = endpoint_hint(*status))]
    Http {
        /// The status code.
        status: u16,
    },
    /// The server answered with a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The error message as sent.
        message: String,
    },
    /// The body was not the JSON-RPC message the protocol requires.
    #[error("not a JSON-RPC answer: {0}{hint}", hint = page_hint(.0))]
    NotJson(String),
    /// The handshake worked but `tools/list` failed; carries the cause.
    #[error("tools/list failed: {0}")]
    ToolsList(Box<ProbeError>),
    /// The server speaks no protocol version or transport this client can read.
    #[error("unsupported transport: {0}")]
    TransportUnsupported(String),
    /// The server speaks the 2024-11-05 HTTP+SSE transport (its GET stream opened with an
    /// `endpoint` event), but the surface could not be read through it; carries the cause.
    #[error("legacy HTTP+SSE transport: {0}")]
    LegacySse(Box<ProbeError>),
}

/// What a status that a page or a site root gives (not found, method not allowed, not
/// implemented) most often means for a URL given as an MCP server.
fn endpoint_hint(status: u16) -> &'static str {
    match status {
        404 | 405 | 501 => {
            ": is this the MCP endpoint? (it is usually the path /mcp, e.g. https://example.com/mcp, not the site root or a docs page)"
        }
        _ => "",
    }
}

/// What an HTML answer (a web page where the MCP endpoint was expected) most often means.
fn page_hint(why: &str) -> &'static str {
    if why.contains("text/html") {
        endpoint_hint(404)
    } else {
        ""
    }
}

impl ProbeError {
    /// The reason code a server row carries for this failure. This is the only place where
    /// probe and network errors become codes.
    pub fn reason_code(&self) -> ReasonCode {
        match self {
            ProbeError::AuthRequired { .. } => ReasonCode::AuthRequired,
            ProbeError::Net(error) => net_reason_code(error),
            ProbeError::Http { .. } => ReasonCode::HttpError,
            ProbeError::Rpc { .. } => ReasonCode::RpcError,
            ProbeError::NotJson(_) => ReasonCode::NotJson,
            ProbeError::TransportUnsupported(_) => ReasonCode::TransportUnsupported,
            // Limits keep their own code on every transport: the operator needs to know which
            // limit to raise, not which transport carried the answer.
            ProbeError::ToolsList(inner) | ProbeError::LegacySse(inner) => {
                match (inner.limit_code(), inner.auth_refusal()) {
                    (Some(limit), _) => limit,
                    (None, Some(_)) => ReasonCode::AuthRequired,
                    (None, None) if matches!(self, ProbeError::LegacySse(_)) => {
                        ReasonCode::TransportLegacySse
                    }
                    (None, None) => ReasonCode::ToolsListFailed,
                }
            }
        }
    }

    /// The code of a size or time limit behind this error, wherever it sits.
    fn limit_code(&self) -> Option<ReasonCode> {
        match self {
            ProbeError::Net(NetError::Timeout(_)) => Some(ReasonCode::Timeout),
            ProbeError::Net(NetError::TooLarge { .. }) => Some(ReasonCode::ResponseTooLarge),
            ProbeError::ToolsList(inner) | ProbeError::LegacySse(inner) => inner.limit_code(),
            _ => None,
        }
    }

    /// The status and `WWW-Authenticate` value of the 401/403 behind this error, wherever it
    /// sits (handshake, `tools/list`, legacy transport).
    pub fn auth_refusal(&self) -> Option<(u16, Option<&str>)> {
        match self {
            ProbeError::AuthRequired {
                status,
                www_authenticate,
            } => Some((*status, www_authenticate.as_deref())),
            ProbeError::ToolsList(inner) | ProbeError::LegacySse(inner) => inner.auth_refusal(),
            _ => None,
        }
    }
}

/// Maps a network failure to its reason code (the net module owns that mapping).
fn net_reason_code(error: &NetError) -> ReasonCode {
    error.reason_code()
}

/// A failed probe: the error plus what was learnt about the exchange before it failed.
#[derive(Debug)]
pub struct ProbeFailure {
    /// What went wrong.
    pub error: ProbeError,
    /// The status of the last HTTP response received, if any.
    pub http_status: Option<u16>,
    /// Body bytes read from the server in total.
    pub bytes_read: u64,
    /// The URL of the last HTTP response received (after redirects), if any.
    pub final_url: Option<Url>,
    /// For an auth refusal: the parsed challenge and the RFC 9728 metadata probe.
    pub auth: Option<AuthFindings>,
}

impl std::fmt::Display for ProbeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for ProbeFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn maps_every_error_to_its_code() {
        let table: Vec<(ProbeError, ReasonCode)> = vec![
            (
                ProbeError::AuthRequired {
                    status: 401,
                    www_authenticate: None,
                },
                ReasonCode::AuthRequired,
            ),
            (
                ProbeError::Net(NetError::Timeout(Duration::from_secs(1))),
                ReasonCode::Timeout,
            ),
            (
                ProbeError::Net(NetError::Dns("x".into())),
                ReasonCode::DnsFail,
            ),
            (
                ProbeError::Net(NetError::Connect("x".into())),
                ReasonCode::ConnectFail,
            ),
            (
                ProbeError::Net(NetError::TooLarge { limit: 10 }),
                ReasonCode::ResponseTooLarge,
            ),
            (
                ProbeError::Net(NetError::Other("x".into())),
                ReasonCode::ConnectFail,
            ),
            (ProbeError::Http { status: 500 }, ReasonCode::HttpError),
            (
                ProbeError::Rpc {
                    code: -32603,
                    message: "boom".into(),
                },
                ReasonCode::RpcError,
            ),
            (ProbeError::NotJson("html".into()), ReasonCode::NotJson),
            (
                ProbeError::TransportUnsupported("x".into()),
                ReasonCode::TransportUnsupported,
            ),
            (
                ProbeError::ToolsList(Box::new(ProbeError::Rpc {
                    code: -32601,
                    message: "nope".into(),
                })),
                ReasonCode::ToolsListFailed,
            ),
            (
                ProbeError::ToolsList(Box::new(ProbeError::Net(NetError::TooLarge { limit: 1 }))),
                ReasonCode::ResponseTooLarge,
            ),
            (
                ProbeError::ToolsList(Box::new(ProbeError::Net(NetError::Timeout(
                    Duration::from_secs(1),
                )))),
                ReasonCode::Timeout,
            ),
            (
                ProbeError::LegacySse(Box::new(ProbeError::Net(NetError::Timeout(
                    Duration::from_secs(1),
                )))),
                ReasonCode::Timeout,
            ),
            (
                ProbeError::LegacySse(Box::new(ProbeError::ToolsList(Box::new(ProbeError::Net(
                    NetError::TooLarge { limit: 10 },
                ))))),
                ReasonCode::ResponseTooLarge,
            ),
            (
                ProbeError::LegacySse(Box::new(ProbeError::NotJson("x".into()))),
                ReasonCode::TransportLegacySse,
            ),
            (
                ProbeError::LegacySse(Box::new(ProbeError::ToolsList(Box::new(
                    ProbeError::AuthRequired {
                        status: 403,
                        www_authenticate: None,
                    },
                )))),
                ReasonCode::AuthRequired,
            ),
        ];
        for (error, code) in table {
            assert_eq!(error.reason_code(), code, "{error:?}");
        }
    }

    #[test]
    fn finds_the_auth_refusal_behind_wrappers() {
        let refusal = ProbeError::AuthRequired {
            status: 401,
            www_authenticate: Some("Bearer".into()),
        };
        let wrapped = ProbeError::LegacySse(Box::new(ProbeError::ToolsList(Box::new(refusal))));
        assert_eq!(wrapped.auth_refusal(), Some((401, Some("Bearer"))));
        assert_eq!(ProbeError::Http { status: 404 }.auth_refusal(), None);
    }
}
