//! What can go wrong while talking HTTP to a target, and the reason code of each failure.
//!
//! Its own module so that the client and the capped body both use it without reaching into
//! each other.

use std::time::Duration;

use super::policy::Blocked;
use crate::reason::ReasonCode;

/// What went wrong while talking HTTP to a target.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The request did not complete within the per-request timeout.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The host name did not resolve.
    #[error(
        "could not resolve the host name: {0}; check its spelling in the URL (and that this \
         machine can resolve names)"
    )]
    Dns(String),
    /// The connection (TCP or TLS) could not be made.
    #[error("could not connect: {0}")]
    Connect(String),
    /// The body exceeded the configured cap.
    #[error("response body exceeded {limit} bytes")]
    TooLarge {
        /// The cap that was hit.
        limit: u64,
    },
    /// The URL, a redirect hop or a resolved address is refused by the address policy.
    /// Nothing was sent to the refused address.
    #[error("{0}")]
    Blocked(#[from] Blocked),
    /// A redirect chain repeated a URL or was longer than `max_redirects`.
    #[error("redirect loop after {hops} {}: {detail}", if *hops == 1 { "hop" } else { "hops" })]
    RedirectLoop {
        /// Redirect responses seen, including the one that was not followed.
        hops: u32,
        /// What stopped the chain.
        detail: String,
    },
    /// A 301/302/303 answered a request that is not a GET: following it would silently turn
    /// the call into a GET, so it is reported instead.
    #[error("refused to follow a {status} redirect of a {method} request to {location}")]
    RedirectRefused {
        /// The redirect status.
        status: u16,
        /// The method of the redirected request.
        method: String,
        /// Where the server wanted to send it.
        location: String,
    },
    /// A redirect response had a `Location` that is not a usable URL.
    #[error("invalid redirect location: {0}")]
    BadRedirect(String),
    /// Any other transport failure (reset connection, protocol error).
    #[error("HTTP failure: {0}")]
    Other(String),
}

impl NetError {
    /// The reason code a server row gets when its request ends with this error.
    pub fn reason_code(&self) -> ReasonCode {
        match self {
            NetError::Timeout(_) => ReasonCode::Timeout,
            NetError::Dns(_) => ReasonCode::DnsFail,
            NetError::Connect(_) | NetError::Other(_) => ReasonCode::ConnectFail,
            NetError::TooLarge { .. } => ReasonCode::ResponseTooLarge,
            NetError::Blocked(_) => ReasonCode::BlockedTarget,
            NetError::RedirectLoop { .. } => ReasonCode::RedirectLoop,
            NetError::RedirectRefused { .. } | NetError::BadRedirect(_) => ReasonCode::HttpError,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_its_reason_code() {
        let blocked = Blocked::Credentials;
        let cases = [
            (
                NetError::Timeout(Duration::from_secs(1)),
                ReasonCode::Timeout,
            ),
            (NetError::Dns("x".into()), ReasonCode::DnsFail),
            (NetError::Connect("x".into()), ReasonCode::ConnectFail),
            (
                NetError::TooLarge { limit: 1 },
                ReasonCode::ResponseTooLarge,
            ),
            (NetError::Blocked(blocked), ReasonCode::BlockedTarget),
            (
                NetError::RedirectLoop {
                    hops: 4,
                    detail: "x".into(),
                },
                ReasonCode::RedirectLoop,
            ),
            (
                NetError::RedirectRefused {
                    status: 302,
                    method: "POST".into(),
                    location: "x".into(),
                },
                ReasonCode::HttpError,
            ),
            (NetError::BadRedirect("x".into()), ReasonCode::HttpError),
            (NetError::Other("x".into()), ReasonCode::ConnectFail),
        ];
        for (error, code) in cases {
            assert_eq!(error.reason_code(), code, "{error}");
        }
    }

    #[test]
    fn redirect_loop_message_counts_its_hops() {
        for (hops, expected) in [(1, "after 1 hop:"), (4, "after 4 hops:")] {
            let error = NetError::RedirectLoop {
                hops,
                detail: "more than max_redirects".into(),
            };
            assert!(error.to_string().contains(expected), "{error}");
        }
    }
}
