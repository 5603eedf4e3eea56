//! What an anonymous client can learn about a protected server: the `WWW-Authenticate`
//! challenge (RFC 9110 §11.6.1, RFC 6750 §3) and the RFC 9728 protected-resource metadata.
//!
//! The parsing is pure. [`probe_metadata`] is the only I/O: at most two unauthenticated GET
//! requests, each through [`Client`], so the address policy, redirects, timeout and body cap
//! apply to them exactly as to the MCP requests. No request carries a credential.

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use url::Url;

use crate::net::{Client, NetError};

/// The well-known path prefix of RFC 9728 §3.
pub const WELL_KNOWN_PREFIX: &str = "/.well-known/oauth-protected-resource";

/// One challenge of a `WWW-Authenticate` header: a scheme and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as sent (`Bearer`, `Basic`, …); compare it case-insensitively.
    pub scheme: String,
    /// The `name=value` parameters, names lower-cased, quoted strings unescaped. A `token68`
    /// credential (as in `Negotiate abc==`) is not kept.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of parameter `name` (case-insensitive), if present.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// What the challenge of a protected MCP server says, read from its Bearer challenge (or its
/// first challenge when none is Bearer).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuthChallenge {
    /// The scheme of the challenge read (`Bearer` normally); `None` for a bare 401/403.
    pub scheme: Option<String>,
    /// RFC 9728 §5.1 `resource_metadata`: where the protected-resource metadata lives.
    pub resource_metadata: Option<String>,
    /// RFC 6750 `scope`, split on spaces.
    pub scopes: Vec<String>,
    /// RFC 6750 `error` (`invalid_token`, `insufficient_scope`, …).
    pub error: Option<String>,
    /// RFC 6750 `error_description`.
    pub error_description: Option<String>,
}

impl AuthChallenge {
    /// Reads a `WWW-Authenticate` header value; `None` (no header) gives the empty challenge.
    pub fn from_header(header: Option<&str>) -> Self {
        let challenges = header.map(parse_challenges).unwrap_or_default();
        let Some(chosen) = challenges
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
            .or_else(|| challenges.first())
        else {
            return AuthChallenge::default();
        };
        let text = |name: &str| chosen.param(name).map(str::to_string);
        AuthChallenge {
            scheme: Some(chosen.scheme.clone()),
            resource_metadata: text("resource_metadata").filter(|v| !v.is_empty()),
            scopes: chosen
                .param("scope")
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            error: text("error"),
            error_description: text("error_description"),
        }
    }
}

/// Splits a `WWW-Authenticate` value into its challenges. Tolerant: a malformed tail ends the
/// parse and keeps what was read before it.
pub fn parse_challenges(header: &str) -> Vec<Challenge> {
    let mut parser = Parser {
        text: header.as_bytes(),
        pos: 0,
    };
    let mut challenges: Vec<Challenge> = Vec::new();
    loop {
        parser.skip_separators();
        let Some(scheme) = parser.token() else { break };
        let mut challenge = Challenge {
            scheme,
            params: Vec::new(),
        };
        loop {
            parser.skip_separators();
            let start = parser.pos;
            let Some(name) = parser.token() else { break };
            parser.skip_spaces();
            if !parser.eat(b'=') {
                // The next challenge's scheme: step back and let the outer loop read it.
                parser.pos = start;
                break;
            }
            parser.skip_spaces();
            if parser.peek().is_none_or(|b| b == b',' || b == b'=') {
                // `token68` padding such as `abc==`: nothing worth keeping.
                while parser.eat(b'=') {}
                continue;
            }
            let value = if parser.peek() == Some(b'"') {
                parser.quoted()
            } else {
                parser.token().unwrap_or_default()
            };
            challenge.params.push((name.to_ascii_lowercase(), value));
        }
        challenges.push(challenge);
    }
    challenges
}

/// A cursor over a header value.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    /// An RFC 9110 `token` (plus `/` so that a `token68` credential reads as one word).
    fn token(&mut self) -> Option<String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&b))
        {
            self.pos += 1;
        }
        (self.pos > start).then(|| String::from_utf8_lossy(&self.text[start..self.pos]).into())
    }

    /// A quoted string starting at `"`, with `\x` escapes resolved. An unterminated string
    /// runs to the end.
    fn quoted(&mut self) -> String {
        let mut out = Vec::new();
        self.pos += 1;
        while let Some(byte) = self.peek() {
            self.pos += 1;
            match byte {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.pos += 1;
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The URLs to try for the protected-resource metadata of `endpoint`, in order (at most two):
/// the challenge's `resource_metadata` (resolved against the endpoint; only http and https);
/// otherwise the path-inserted well-known URL (when the endpoint has a path), then the root one.
pub fn metadata_candidates(endpoint: &Url, challenge: &AuthChallenge) -> Vec<Url> {
    if let Some(advertised) = &challenge.resource_metadata {
        return endpoint
            .join(advertised)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .into_iter()
            .collect();
    }
    let mut root = endpoint.clone();
    root.set_query(None);
    root.set_fragment(None);
    root.set_path(WELL_KNOWN_PREFIX);
    let path = endpoint.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    if !path.is_empty() {
        let mut inserted = root.clone();
        inserted.set_path(&format!("{WELL_KNOWN_PREFIX}{path}"));
        inserted.set_query(endpoint.query());
        candidates.push(inserted);
    }
    candidates.push(root);
    candidates
}

/// The fields of an RFC 9728 protected-resource metadata document that a row reports.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ResourceMetadata {
    /// `resource`: the identifier of the protected resource.
    pub resource: Option<String>,
    /// `authorization_servers`: issuers of tokens for it.
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`.
    pub scopes_supported: Vec<String>,
}

/// Why a metadata document could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MetadataError {
    /// The body is not a JSON object.
    #[error("the metadata document is not a JSON object")]
    NotAnObject,
    /// The document names no authorization server (MCP requires at least one).
    #[error("the metadata document names no authorization server")]
    NoAuthorizationServer,
}

/// Reads a protected-resource metadata document. Non-string list entries are skipped.
pub fn parse_metadata(body: &[u8]) -> Result<ResourceMetadata, MetadataError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| MetadataError::NotAnObject)?;
    let object = value.as_object().ok_or(MetadataError::NotAnObject)?;
    let strings = |key: &str| -> Vec<String> {
        object
            .get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let metadata = ResourceMetadata {
        resource: object
            .get("resource")
            .and_then(Value::as_str)
            .map(str::to_string),
        authorization_servers: strings("authorization_servers"),
        scopes_supported: strings("scopes_supported"),
    };
    if metadata.authorization_servers.is_empty() {
        return Err(MetadataError::NoAuthorizationServer);
    }
    Ok(metadata)
}

/// One metadata request and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataAttempt {
    /// The URL requested.
    pub url: String,
    /// The HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// Why the document was not used; `None` for the attempt that succeeded.
    pub problem: Option<String>,
}

/// The outcome of the RFC 9728 probe.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MetadataProbe {
    /// The URL whose document was read, when one was.
    pub url: Option<String>,
    /// The document read, when one was.
    pub metadata: Option<ResourceMetadata>,
    /// Every request sent (or refused before sending), in order.
    pub attempts: Vec<MetadataAttempt>,
    /// Response body bytes read.
    pub bytes_read: u64,
}

impl MetadataProbe {
    /// A one-line account of why no document was found, for the row's `error` text.
    pub fn failure_note(&self) -> Option<String> {
        if self.metadata.is_some() {
            return None;
        }
        if self.attempts.is_empty() {
            return Some("no usable RFC 9728 metadata URL".into());
        }
        let parts: Vec<String> = self
            .attempts
            .iter()
            .map(|a| format!("{}: {}", a.url, a.problem.as_deref().unwrap_or("unused")))
            .collect();
        Some(format!(
            "RFC 9728 metadata not found ({})",
            parts.join("; ")
        ))
    }
}

/// Everything learnt about a server's authorization when it refused the anonymous request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuthFindings {
    /// The parsed challenge (empty for a bare 401/403).
    pub challenge: AuthChallenge,
    /// The metadata probe, when `probe_oauth_metadata` was on.
    pub metadata: Option<MetadataProbe>,
}

impl AuthFindings {
    /// The authorization servers the metadata names (empty when unknown).
    pub fn authorization_servers(&self) -> Vec<String> {
        self.document()
            .map(|m| m.authorization_servers.clone())
            .unwrap_or_default()
    }

    /// The advertised scopes: the metadata's `scopes_supported`, else the challenge's `scope`.
    pub fn scopes(&self) -> Vec<String> {
        match self.document() {
            Some(document) if !document.scopes_supported.is_empty() => {
                document.scopes_supported.clone()
            }
            _ => self.challenge.scopes.clone(),
        }
    }

    /// The URL of the metadata document read, if any.
    pub fn metadata_url(&self) -> Option<String> {
        self.metadata.as_ref().and_then(|m| m.url.clone())
    }

    /// True when a metadata document was read (its lists are then authoritative).
    pub fn has_metadata(&self) -> bool {
        self.document().is_some()
    }

    fn document(&self) -> Option<&ResourceMetadata> {
        self.metadata.as_ref().and_then(|m| m.metadata.as_ref())
    }
}

/// Looks for the protected-resource metadata of `endpoint`: at most two GET requests, in the
/// order of [`metadata_candidates`], stopping at the first usable document. Failures are
/// recorded, never raised: a protected server stays a verdict whatever the metadata does.
pub async fn probe_metadata(
    client: &Client,
    endpoint: &Url,
    challenge: &AuthChallenge,
) -> MetadataProbe {
    let mut probe = MetadataProbe::default();
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    for url in metadata_candidates(endpoint, challenge).into_iter().take(2) {
        let mut attempt = MetadataAttempt {
            url: url.to_string(),
            status: None,
            problem: None,
        };
        match client.get(&url, headers.clone()).await {
            Err(error) => attempt.problem = Some(describe(&error)),
            Ok(response) => {
                probe.bytes_read += response.body.len() as u64;
                attempt.status = Some(response.status);
                if !(200..300).contains(&response.status) {
                    attempt.problem = Some(format!("HTTP {}", response.status));
                } else {
                    match parse_metadata(&response.body) {
                        Ok(metadata) if names_this_resource(&metadata, endpoint) => {
                            probe.url = Some(response.final_url.to_string());
                            probe.metadata = Some(metadata);
                        }
                        Ok(metadata) => {
                            attempt.problem = Some(format!(
                                "its resource {:?} is not {endpoint} (RFC 9728 §3.3: not used)",
                                metadata.resource.as_deref().unwrap_or("(missing)")
                            ))
                        }
                        Err(error) => attempt.problem = Some(error.to_string()),
                    }
                }
            }
        }
        probe.attempts.push(attempt);
        if probe.metadata.is_some() {
            break;
        }
    }
    probe
}

/// RFC 9728 §3.3: a metadata document may be used only when its `resource` identifies the
/// resource that was asked about, or anyone able to serve a document could claim the server.
/// Accepted: the endpoint itself or its origin (the resource of the root well-known URL);
/// a trailing `/` and a fragment do not matter.
pub fn names_this_resource(metadata: &ResourceMetadata, endpoint: &Url) -> bool {
    let Some(resource) = metadata
        .resource
        .as_deref()
        .and_then(|r| Url::parse(r).ok())
    else {
        return false;
    };
    let comparable = |url: &Url| {
        let mut url = url.clone();
        url.set_fragment(None);
        url.as_str().trim_end_matches('/').to_string()
    };
    let resource = comparable(&resource);
    resource == comparable(endpoint) || resource == endpoint.origin().ascii_serialization()
}

fn describe(error: &NetError) -> String {
    match error {
        NetError::Blocked(blocked) => format!("refused by the address policy: {blocked}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(challenge: &Challenge) -> Vec<(&str, &str)> {
        challenge
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// A scheme and its parameters, as the table below writes them.
    type Expected<'a> = Vec<(&'a str, Vec<(&'a str, &'a str)>)>;

    #[test]
    fn parses_challenge_headers() {
        let table: Vec<(&str, Expected)> = vec![
            ("Bearer", vec![("Bearer", vec![])]),
            (
                r#"Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp", scope="files:read""#,
                vec![(
                    "Bearer",
                    vec![
                        (
                            "resource_metadata",
                            "https://a.example/.well-known/oauth-protected-resource/mcp",
                        ),
                        ("scope", "files:read"),
                    ],
                )],
            ),
            (
                r#"Bearer error="insufficient_scope", scope="a b", error_description="needs \"b\", too""#,
                vec![(
                    "Bearer",
                    vec![
                        ("error", "insufficient_scope"),
                        ("scope", "a b"),
                        ("error_description", r#"needs "b", too"#),
                    ],
                )],
            ),
            (
                r#"Basic realm="x, y", Bearer realm=api,error=invalid_token"#,
                vec![
                    ("Basic", vec![("realm", "x, y")]),
                    ("Bearer", vec![("realm", "api"), ("error", "invalid_token")]),
                ],
            ),
            (
                "Negotiate abc==, Bearer Scope = \"x\"",
                vec![("Negotiate", vec![]), ("Bearer", vec![("scope", "x")])],
            ),
            (
                r#"Bearer realm="unterminated"#,
                vec![("Bearer", vec![("realm", "unterminated")])],
            ),
            ("", vec![]),
            ("  ,  ", vec![]),
        ];
        for (header, expected) in table {
            let parsed = parse_challenges(header);
            let got: Expected = parsed
                .iter()
                .map(|c| (c.scheme.as_str(), pairs(c)))
                .collect();
            assert_eq!(got, expected, "{header}");
        }
    }

    #[test]
    fn reads_the_bearer_challenge_of_a_header() {
        let header = r#"Basic realm="r", bearer resource_metadata="https://m.example/prm", scope="read  write", error="invalid_token""#;
        let challenge = AuthChallenge::from_header(Some(header));
        assert_eq!(challenge.scheme.as_deref(), Some("bearer"));
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://m.example/prm")
        );
        assert_eq!(challenge.scopes, ["read", "write"]);
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(AuthChallenge::from_header(None), AuthChallenge::default());
        let basic = AuthChallenge::from_header(Some("Basic realm=x"));
        assert_eq!(basic.scheme.as_deref(), Some("Basic"));
        assert_eq!(basic.resource_metadata, None);
    }

    #[test]
    fn builds_metadata_candidates() {
        let with = |rm: Option<&str>| AuthChallenge {
            resource_metadata: rm.map(str::to_string),
            ..AuthChallenge::default()
        };
        let table: Vec<(&str, Option<&str>, Vec<&str>)> = vec![
            (
                "https://example.com/public/mcp",
                None,
                vec![
                    "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                    "https://example.com/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "https://example.com/mcp/?tenant=a",
                None,
                vec![
                    "https://example.com/.well-known/oauth-protected-resource/mcp?tenant=a",
                    "https://example.com/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "https://example.com/",
                None,
                vec!["https://example.com/.well-known/oauth-protected-resource"],
            ),
            (
                "https://example.com:8443/mcp",
                Some("https://auth.example/prm"),
                vec!["https://auth.example/prm"],
            ),
            (
                "https://example.com/mcp",
                Some("/prm"),
                vec!["https://example.com/prm"],
            ),
            (
                "https://example.com/mcp",
                Some("ftp://x.example/prm"),
                vec![],
            ),
        ];
        for (endpoint, advertised, expected) in table {
            let endpoint = Url::parse(endpoint).unwrap();
            let got: Vec<String> = metadata_candidates(&endpoint, &with(advertised))
                .iter()
                .map(Url::to_string)
                .collect();
            assert_eq!(got, expected, "{endpoint} {advertised:?}");
        }
    }

    #[test]
    fn parses_metadata_documents() {
        let good = br#"{"resource":"https://a.example/mcp","authorization_servers":["https://as.example",7],"scopes_supported":["read"]}"#;
        assert_eq!(
            parse_metadata(good),
            Ok(ResourceMetadata {
                resource: Some("https://a.example/mcp".into()),
                authorization_servers: vec!["https://as.example".into()],
                scopes_supported: vec!["read".into()],
            })
        );
        assert_eq!(
            parse_metadata(br#"{"resource":"x"}"#),
            Err(MetadataError::NoAuthorizationServer)
        );
        assert_eq!(
            parse_metadata(b"<html></html>"),
            Err(MetadataError::NotAnObject)
        );
        assert_eq!(parse_metadata(b"[1]"), Err(MetadataError::NotAnObject));
    }

    #[test]
    fn findings_prefer_metadata_scopes_over_the_challenge() {
        let challenge = AuthChallenge {
            scopes: vec!["from-challenge".into()],
            ..AuthChallenge::default()
        };
        let bare = AuthFindings {
            challenge: challenge.clone(),
            metadata: None,
        };
        assert_eq!(bare.scopes(), ["from-challenge"]);
        assert!(bare.authorization_servers().is_empty());
        assert!(!bare.has_metadata());
        let found = AuthFindings {
            challenge,
            metadata: Some(MetadataProbe {
                url: Some("https://a.example/prm".into()),
                metadata: Some(ResourceMetadata {
                    resource: None,
                    authorization_servers: vec!["https://as.example".into()],
                    scopes_supported: vec!["read".into()],
                }),
                attempts: vec![],
                bytes_read: 10,
            }),
        };
        assert_eq!(found.scopes(), ["read"]);
        assert_eq!(found.authorization_servers(), ["https://as.example"]);
        assert_eq!(
            found.metadata_url().as_deref(),
            Some("https://a.example/prm")
        );
    }

    #[test]
    fn metadata_counts_only_for_the_resource_it_names() {
        let endpoint = Url::parse("https://a.example/mcp?tenant=1").unwrap();
        let cases = [
            (Some("https://a.example/mcp?tenant=1"), true),
            (Some("https://a.example/mcp?tenant=1#x"), true),
            (Some("https://a.example"), true),
            (Some("https://a.example/"), true),
            (Some("https://a.example/mcp"), false),
            (Some("https://a.example:8443/mcp?tenant=1"), false),
            (Some("http://a.example/mcp?tenant=1"), false),
            (Some("https://evil.example/mcp?tenant=1"), false),
            (Some("changing"), false),
            (None, false),
        ];
        for (resource, expected) in cases {
            let metadata = ResourceMetadata {
                resource: resource.map(str::to_string),
                authorization_servers: vec!["https://as.example".into()],
                scopes_supported: Vec::new(),
            };
            assert_eq!(
                names_this_resource(&metadata, &endpoint),
                expected,
                "{resource:?}"
            );
        }
    }
}
