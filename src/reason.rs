//! Reason codes: the one vocabulary every server row uses to say why it ended as it did.
//!
//! Every error type of the crate maps to exactly one code here, so the mapping lives in one
//! place and the dataset never carries free-form failure strings where a code is expected.

use serde::{Deserialize, Serialize};

/// Why a server row ended the way it did. The names are interface: they appear verbatim in the
/// dataset (`reason_code`) and in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReasonCode {
    /// The surface was read.
    Ok,
    /// The server answered the anonymous request with 401 or 403.
    AuthRequired,
    /// The server speaks the 2024-11-05 HTTP+SSE transport and its surface could not be read through it.
    TransportLegacySse,
    /// The endpoint speaks neither Streamable HTTP nor HTTP+SSE.
    TransportUnsupported,
    /// An HTTP status the protocol does not explain (5xx, unexpected 4xx).
    HttpError,
    /// The server answered with a JSON-RPC error.
    RpcError,
    /// The body was not JSON (or not a JSON-RPC message) where one was required.
    NotJson,
    /// A response body exceeded `max_response_bytes`.
    ResponseTooLarge,
    /// The handshake worked but `tools/list` did not.
    ToolsListFailed,
    /// A request or the per-server budget ran out of time.
    Timeout,
    /// The host name could not be resolved.
    DnsFail,
    /// The TCP or TLS connection could not be made.
    ConnectFail,
    /// The entry is not a usable target (bad URL, refused address, not allowed).
    BlockedTarget,
    /// Redirects repeated a URL or exceeded `max_redirects`.
    RedirectLoop,
    /// The run deadline passed before this server was read.
    RunDeadline,
    /// The maximum total charge did not allow reading this server.
    BudgetExhausted,
    /// The server refused the credential given for its origin (401 or 403 with it).
    AuthRejected,
    /// A redirect took the read of an authenticated view to another origin, where its
    /// credential is never sent; nothing was stored for either view.
    CredentialDropped,
    /// The MCP Registry lists this remote as a URL template with `{placeholders}`; it was not
    /// guessed or contacted.
    TemplatedUrl,
    /// The server was read, but its stored baseline could not be read (damaged record or
    /// storage failure, after retries); its entry was kept for the next run to compare with.
    BaselineUnreadable,
    /// The server was read, but its stored baseline is not the surface the ledger's chained
    /// entry names (the record was replaced in the store): it was not used, the per-tool
    /// digests the chain holds were compared instead, and the run reports the chain broken.
    BaselineTampered,
}

impl ReasonCode {
    /// The code as it appears in rows and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Ok => "OK",
            ReasonCode::AuthRequired => "AUTH_REQUIRED",
            ReasonCode::TransportLegacySse => "TRANSPORT_LEGACY_SSE",
            ReasonCode::TransportUnsupported => "TRANSPORT_UNSUPPORTED",
            ReasonCode::HttpError => "HTTP_ERROR",
            ReasonCode::RpcError => "RPC_ERROR",
            ReasonCode::NotJson => "NOT_JSON",
            ReasonCode::ResponseTooLarge => "RESPONSE_TOO_LARGE",
            ReasonCode::ToolsListFailed => "TOOLS_LIST_FAILED",
            ReasonCode::Timeout => "TIMEOUT",
            ReasonCode::DnsFail => "DNS_FAIL",
            ReasonCode::ConnectFail => "CONNECT_FAIL",
            ReasonCode::BlockedTarget => "BLOCKED_TARGET",
            ReasonCode::RedirectLoop => "REDIRECT_LOOP",
            ReasonCode::RunDeadline => "RUN_DEADLINE",
            ReasonCode::BudgetExhausted => "BUDGET_EXHAUSTED",
            ReasonCode::AuthRejected => "AUTH_REJECTED",
            ReasonCode::CredentialDropped => "CREDENTIAL_DROPPED",
            ReasonCode::TemplatedUrl => "TEMPLATED_URL",
            ReasonCode::BaselineUnreadable => "BASELINE_UNREADABLE",
            ReasonCode::BaselineTampered => "BASELINE_TAMPERED",
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_name_matches_as_str() {
        for code in [
            ReasonCode::Ok,
            ReasonCode::AuthRequired,
            ReasonCode::TransportLegacySse,
            ReasonCode::BlockedTarget,
            ReasonCode::RunDeadline,
            ReasonCode::BudgetExhausted,
            ReasonCode::AuthRejected,
            ReasonCode::CredentialDropped,
            ReasonCode::TemplatedUrl,
            ReasonCode::BaselineUnreadable,
            ReasonCode::BaselineTampered,
        ] {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_string()));
        }
    }
}
