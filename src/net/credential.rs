//! A secret HTTP header that belongs to exactly one origin.
//!
//! Users who want the authenticated view of a server hand us one header per origin (usually
//! `Authorization: Bearer …`). The value is the most sensitive thing the Actor ever holds, so
//! this type is built to keep it in one place:
//!
//! - it is attached by [`crate::net::Client`] only to requests whose URL has exactly this
//!   origin (scheme, host and port), judged again on every redirect hop;
//! - its `Debug` output shows the origin and header name, never the value, and the type has no
//!   `Display` and no `Serialize`, so it cannot end up in a row, a record or a log by accident;
//! - the value is marked sensitive for the HTTP stack (HPACK never indexes it, and the header
//!   map's own `Debug` prints `Sensitive`).

use std::fmt;
use std::net::IpAddr;

use reqwest::header::{HeaderName, HeaderValue};
use url::{Host, Origin, Url};

use super::policy::is_private_or_loopback;

/// Header names a credential may not use: they belong to HTTP itself, to the MCP transport, or
/// would let the value travel where the origin rule cannot follow it (cookies).
const REFUSED_NAMES: [&str; 20] = [
    "host",
    "cookie",
    "set-cookie",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "content-type",
    "content-encoding",
    "accept",
    "accept-encoding",
    "origin",
    "last-event-id",
    "user-agent",
];

/// Why a credential entry cannot be used. Messages never contain the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// The origin is not an `http(s)://host[:port]` origin.
    #[error(
        "origin must look like \"https://host\" or \"https://host:port\" (no path, query, user or password): {0}"
    )]
    BadOrigin(String),
    /// The header name is not a valid HTTP token.
    /// A plain `http://` origin on a public host: the value would cross the internet unencrypted.
    #[error(
        "credential for {0}: a credential for a plain http:// origin on a public host would travel in cleartext; use the server's https:// origin (plain http:// is accepted only for loopback and private addresses such as http://127.0.0.1:8000 or http://10.0.0.5, which the operator enables with --allow-private-targets)"
    )]
    Cleartext(String),
    #[error("credential for {origin}: header {header:?} is not a valid HTTP header name")]
    BadHeaderName {
        /// The credential's origin, as `scheme://host[:port]`.
        origin: String,
        /// The header name as given.
        header: String,
    },
    /// The header name is reserved for HTTP or the MCP transport.
    #[error(
        "credential for {origin}: header {header:?} cannot carry a credential (Host, Cookie, Mcp-*, hop-by-hop and content headers are refused); use Authorization or a custom header such as X-Api-Key"
    )]
    RefusedHeader {
        /// The credential's origin, as `scheme://host[:port]`.
        origin: String,
        /// The header name as given.
        header: String,
    },
    /// The value is empty or contains characters a header cannot carry.
    #[error(
        "credential for {origin}: the value of header {header:?} must be non-empty printable text without line breaks"
    )]
    BadValue {
        /// The credential's origin, as `scheme://host[:port]`.
        origin: String,
        /// The header name (lower case).
        header: String,
    },
}

/// One secret header bound to one origin.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    origin: Origin,
    origin_text: String,
    name: HeaderName,
    value: HeaderValue,
}

impl Credential {
    /// Checks an entry of `server_credentials` and builds the credential.
    pub fn new(origin: &str, header: &str, value: &str) -> Result<Self, CredentialError> {
        let (origin, origin_text) = parse_origin(origin)?;
        let name = header_name(&origin_text, header)?;
        let mut value = HeaderValue::from_str(value)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| CredentialError::BadValue {
                origin: origin_text.clone(),
                header: name.to_string(),
            })?;
        value.set_sensitive(true);
        Ok(Credential {
            origin,
            origin_text,
            name,
            value,
        })
    }

    /// Whether a request to `url` may carry this credential: same scheme, host and port.
    pub fn applies_to(&self, url: &Url) -> bool {
        url.origin() == self.origin
    }

    /// The origin as `scheme://host[:port]`, for messages and logs.
    pub fn origin(&self) -> &str {
        &self.origin_text
    }

    /// The header name (lower case), for messages and logs.
    pub fn header_name(&self) -> &HeaderName {
        &self.name
    }

    /// The header value, marked sensitive. Only [`crate::net::Client`] reads it.
    pub(crate) fn header_value(&self) -> &HeaderValue {
        &self.value
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("origin", &self.origin_text)
            .field("header", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

fn parse_origin(text: &str) -> Result<(Origin, String), CredentialError> {
    let bad = || CredentialError::BadOrigin(format!("{text:?}"));
    let url = Url::parse(text.trim()).map_err(|_| bad())?;
    let plain = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some()
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none();
    if !plain {
        return Err(bad());
    }
    let origin = url.origin();
    let origin_text = origin.ascii_serialization();
    if url.scheme() == "http" && !is_local_host(&url) {
        return Err(CredentialError::Cleartext(origin_text));
    }
    Ok((origin, origin_text))
}

/// Whether `url` names a host that is never on the public internet: `localhost` or a
/// loopback or private address literal. A name is judged by its spelling only (no lookup), so
/// a self-hosted server behind a name is given by its address or served over https.
fn is_local_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(Host::Ipv4(v4)) => is_private_or_loopback(IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => is_private_or_loopback(IpAddr::V6(v6)),
        None => false,
    }
}

/// Checks a header name for a credential of `origin` (named in the error).
fn header_name(origin: &str, text: &str) -> Result<HeaderName, CredentialError> {
    let name = HeaderName::from_bytes(text.trim().as_bytes()).map_err(|_| {
        CredentialError::BadHeaderName {
            origin: origin.to_string(),
            header: text.to_string(),
        }
    })?;
    let lower = name.as_str();
    if REFUSED_NAMES.contains(&lower) || lower.starts_with("mcp-") || lower.starts_with("sec-") {
        return Err(CredentialError::RefusedHeader {
            origin: origin.to_string(),
            header: text.to_string(),
        });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "Bearer s3cr3t-canary";

    #[test]
    fn origins_are_exact() {
        let credential =
            Credential::new("https://api.example.com", "Authorization", SECRET).unwrap();
        let cases = [
            ("https://api.example.com/mcp", true),
            ("https://api.example.com:443/other?q=1", true),
            ("https://API.example.com/mcp", true),
            ("http://api.example.com/mcp", false),
            ("https://api.example.com:8443/mcp", false),
            ("https://example.com/mcp", false),
            ("https://evil.api.example.com/mcp", false),
            ("https://api.example.com.evil.net/mcp", false),
        ];
        for (url, expected) in cases {
            let url = Url::parse(url).unwrap();
            assert_eq!(credential.applies_to(&url), expected, "{url}");
        }
        assert_eq!(credential.origin(), "https://api.example.com");
        let with_port = Credential::new("http://127.0.0.1:8080/", "X-Api-Key", "k").unwrap();
        assert!(with_port.applies_to(&Url::parse("http://127.0.0.1:8080/mcp").unwrap()));
        assert!(!with_port.applies_to(&Url::parse("http://127.0.0.1:8081/mcp").unwrap()));
    }

    #[test]
    fn plain_http_is_refused_for_public_hosts_only() {
        // (origin, accepted)
        let cases = [
            ("http://api.example.com", false),
            ("http://11.0.0.1:8080", false),
            ("http://8.8.8.8", false),
            ("http://[2001:4860::8888]", false),
            ("http://localhost.evil.com", false),
            ("http://169.254.169.254", false),
            ("http://127.0.0.1:8000", true),
            ("http://localhost:3000", true),
            ("http://LOCALHOST.", true),
            ("http://10.0.0.5", true),
            ("http://192.168.1.20:8080", true),
            ("http://[::1]:9000", true),
            ("http://[fd00::5]", true),
            ("https://api.example.com", true),
            ("https://11.0.0.1:8443", true),
        ];
        for (origin, accepted) in cases {
            let result = Credential::new(origin, "Authorization", SECRET);
            assert_eq!(result.is_ok(), accepted, "{origin}: {result:?}");
            if let Err(error) = result {
                let message = error.to_string();
                assert!(
                    message.contains("cleartext") && message.contains("https://"),
                    "{message}"
                );
                assert!(!message.contains(SECRET));
            }
        }
    }

    #[test]
    fn bad_entries_are_refused_without_the_value() {
        let cases: [(&str, &str, &str, &str); 12] = [
            (
                "https://a.example/mcp",
                "Authorization",
                SECRET,
                "origin must",
            ),
            (
                "https://user:pw@a.example",
                "Authorization",
                SECRET,
                "origin must",
            ),
            ("ftp://a.example", "Authorization", SECRET, "origin must"),
            (
                "https://a.example?x=1",
                "Authorization",
                SECRET,
                "origin must",
            ),
            ("not a url", "Authorization", SECRET, "origin must"),
            ("https://a.example", "Host", SECRET, "cannot carry"),
            ("https://a.example", "Cookie", SECRET, "cannot carry"),
            (
                "https://a.example",
                "Mcp-Session-Id",
                SECRET,
                "cannot carry",
            ),
            (
                "https://a.example",
                "Transfer-Encoding",
                SECRET,
                "cannot carry",
            ),
            ("https://a.example", "Bad Header", SECRET, "not a valid"),
            ("https://a.example", "Authorization", "", "non-empty"),
            (
                "https://a.example",
                "Authorization",
                "s3cr3t-canary\r\nX: y",
                "non-empty",
            ),
        ];
        for (origin, header, value, expected) in cases {
            let error = Credential::new(origin, header, value).unwrap_err();
            let text = error.to_string();
            assert!(text.contains(expected), "{origin} {header}: {text}");
            assert!(!text.contains("s3cr3t"), "the value leaked: {text}");
            if !matches!(error, CredentialError::BadOrigin(_)) {
                assert!(
                    text.contains("https://a.example")
                        && text
                            .to_lowercase()
                            .contains(&format!("{:?}", header.to_lowercase())),
                    "the error must name the origin and the header: {text}"
                );
            }
        }
        for header in ["Authorization", "X-Api-Key", "Api-Token", "PRIVATE-TOKEN"] {
            assert!(
                Credential::new("https://a.example", header, SECRET).is_ok(),
                "{header}"
            );
        }
    }

    #[test]
    fn debug_never_shows_the_value() {
        let credential = Credential::new("https://a.example", "Authorization", SECRET).unwrap();
        let debug = format!("{credential:?} {:?}", credential.header_value());
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(debug.contains("https://a.example"), "{debug}");
        assert!(credential.header_value().is_sensitive());
    }
}
