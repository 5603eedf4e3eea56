//! Why a question to the server could not be answered, and how each reason is reported: an
//! HTTP status and a stable `error` code in a JSON body (HTTP API), or a tool error (MCP).
//!
//! These codes describe requests, not servers, so they are not [`crate::reason::ReasonCode`]s
//! (those name why a server row ended as it did).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A request the server cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServeError {
    /// The ledger name is not a valid ledger record key.
    #[error(
        "ledger name {0:?} is not valid: 1 to 100 characters from a-z A-Z 0-9 and ! - _ . ' ( ), not starting with \"surface-\" or \"insight.\""
    )]
    BadLedgerName(String),
    /// No ledger record has this name.
    #[error("no ledger named {0:?} in store mcp-tool-surface-ledger")]
    NoLedger(String),
    /// No ledger has this name, and it is not the default standing for the store's only
    /// ledger: the ledgers there are, to choose from.
    #[error(
        "no ledger named {ledger_name:?} in store mcp-tool-surface-ledger; {}",
        choices(ledgers)
    )]
    UnknownLedger {
        /// The name asked for.
        ledger_name: String,
        /// The ledgers the store holds (a sharded watch once, by its name).
        ledgers: Vec<String>,
    },
    /// The ledger does not watch this server.
    #[error("ledger {ledger_name:?} has no server {server_url:?}")]
    NoServer {
        /// The ledger asked.
        ledger_name: String,
        /// The server asked for.
        server_url: String,
    },
    /// The server has no readable stored surface (it was never read, or demanded auth).
    #[error("server {0:?} has no stored surface yet")]
    NoSurface(String),
    /// The surface asked for at a past time is not kept (before the server was first read,
    /// or beyond the retention period).
    #[error("{0}")]
    NotKept(String),
    /// The ledger or one of its surface records is not readable by this build.
    #[error("{0}")]
    LedgerUnreadable(String),
    /// The store could not be read.
    #[error("cannot read the ledger store: {0}")]
    Storage(String),
    /// The request itself is malformed (bad JSON, bad parameter, unusable document).
    #[error("{0}")]
    BadRequest(String),
    /// The request body is larger than [`super::MAX_BODY_BYTES`].
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    /// The method is not served at this path.
    #[error("method {0} is not served at this path; see GET / for the routes")]
    BadMethod(String),
    /// Nothing is served at this path.
    #[error("nothing is served at {0}; see GET / for the routes")]
    NoRoute(String),
    /// The `Host` header names a host this server does not answer for (DNS rebinding guard).
    #[error(
        "host {0:?} is not served here: use a loopback name or IP address, or add the name with --allow-host or LEDGER_ALLOWED_HOSTS"
    )]
    HostNotAllowed(String),
    /// The `Origin` header names a site this server does not answer (cross-site request).
    #[error(
        "origin {0:?} may not use this server: open the pages from a loopback name or IP address, or add the origin's host name with --allow-host or LEDGER_ALLOWED_HOSTS"
    )]
    OriginNotAllowed(String),
}

impl ServeError {
    /// The stable code of this error, as the `error` member of a JSON error body.
    pub fn code(&self) -> &'static str {
        match self {
            ServeError::BadLedgerName(_) => "bad_ledger_name",
            ServeError::NoLedger(_) | ServeError::UnknownLedger { .. } => "ledger_not_found",
            ServeError::NoServer { .. } => "server_not_found",
            ServeError::NoSurface(_) => "surface_not_found",
            ServeError::NotKept(_) => "surface_not_kept",
            ServeError::LedgerUnreadable(_) => "ledger_unreadable",
            ServeError::Storage(_) => "storage_error",
            ServeError::BadRequest(_) => "bad_request",
            ServeError::TooLarge(_) => "request_too_large",
            ServeError::BadMethod(_) => "method_not_allowed",
            ServeError::NoRoute(_) => "not_found",
            ServeError::HostNotAllowed(_) => "host_not_allowed",
            ServeError::OriginNotAllowed(_) => "origin_not_allowed",
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ServeError::BadLedgerName(_) | ServeError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ServeError::NoLedger(_)
            | ServeError::UnknownLedger { .. }
            | ServeError::NoServer { .. }
            | ServeError::NoSurface(_)
            | ServeError::NotKept(_)
            | ServeError::NoRoute(_) => StatusCode::NOT_FOUND,
            ServeError::LedgerUnreadable(_) => StatusCode::CONFLICT,
            ServeError::Storage(_) => StatusCode::BAD_GATEWAY,
            ServeError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ServeError::BadMethod(_) => StatusCode::METHOD_NOT_ALLOWED,
            ServeError::HostNotAllowed(_) => StatusCode::MISDIRECTED_REQUEST,
            ServeError::OriginNotAllowed(_) => StatusCode::FORBIDDEN,
        }
    }
}

/// The ledgers to choose from, in words.
fn choices(ledgers: &[String]) -> String {
    if ledgers.is_empty() {
        return "the store holds no ledger yet (a run writes one)".to_string();
    }
    let names: Vec<String> = ledgers.iter().map(|name| format!("{name:?}")).collect();
    format!("the store holds: {}", names.join(", "))
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let mut body = json!({"error": self.code(), "message": self.to_string()});
        if let ServeError::UnknownLedger { ledgers, .. } = &self {
            body["ledgers"] = json!(ledgers);
        }
        (self.status(), axum::Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_mistakes_are_4xx_and_store_failures_are_not() {
        let table = [
            (ServeError::BadRequest("x".into()), 400),
            (ServeError::NoLedger("x".into()), 404),
            (
                ServeError::UnknownLedger {
                    ledger_name: "x".into(),
                    ledgers: vec!["a".into()],
                },
                404,
            ),
            (ServeError::NoRoute("/x".into()), 404),
            (ServeError::NotKept("x".into()), 404),
            (ServeError::LedgerUnreadable("x".into()), 409),
            (ServeError::Storage("x".into()), 502),
            (ServeError::HostNotAllowed("x".into()), 421),
            (ServeError::OriginNotAllowed("x".into()), 403),
        ];
        for (error, status) in table {
            assert_eq!(error.status().as_u16(), status, "{error:?}");
            assert!(!error.code().is_empty());
        }
    }
}
