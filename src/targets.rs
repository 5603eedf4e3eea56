//! Turns the input's server entries into targets to probe, or into `BLOCKED_TARGET` verdicts.
//!
//! An entry is usable when it is a string holding an absolute `http`/`https` URL without
//! credentials, whose host passes the address policy (see [`crate::net::check_url`]) and the
//! optional `allowed_hosts` list, and which does not repeat an earlier entry. Everything else
//! becomes one blocked row: it is never contacted, never charged, and its ledger entry is kept.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::net::{Blocked, Credential, PolicyMode, check_url};

/// One input entry after planning, in input order.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// The entry will be probed.
    Probe(Target),
    /// The entry is not a usable target.
    Blocked(BlockedEntry),
}

/// Which view of a server a target reads: what anyone sees, or what the holder of a
/// credential sees. The ledger keeps the two apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listing {
    /// Requests carry no credential.
    Anonymous,
    /// Requests to the server's origin carry the credential of `server_credentials`.
    Authenticated,
}

/// Suffix of the ledger key of an authenticated view. Target URLs never hold a fragment, so
/// the key can never be the URL of another target.
const AUTHENTICATED_KEY_SUFFIX: &str = "#authenticated";

/// A usable target.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Position in the input list.
    pub index: usize,
    /// The parsed URL (fragment removed).
    pub url: Url,
    /// The credential for the URL's origin, when the input gives one.
    pub credential: Option<Arc<Credential>>,
}

impl Target {
    /// The `server_url` of this target's rows.
    pub fn key(&self) -> &str {
        self.url.as_str()
    }

    /// The key of this target's entry in the ledger: the URL for the anonymous view, the URL
    /// with `#authenticated` for the authenticated one, so that adding a credential starts a
    /// new baseline instead of reporting every hidden tool as added.
    pub fn ledger_key(&self) -> String {
        match self.listing() {
            Listing::Anonymous => self.url.to_string(),
            Listing::Authenticated => format!("{}{AUTHENTICATED_KEY_SUFFIX}", self.url),
        }
    }

    /// Which view this target reads.
    pub fn listing(&self) -> Listing {
        if self.credential.is_some() {
            Listing::Authenticated
        } else {
            Listing::Anonymous
        }
    }
}

/// An entry refused before any network work.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedEntry {
    /// Position in the input list.
    pub index: usize,
    /// The entry as given (a non-string entry is shown as JSON text).
    pub entry: String,
    /// Why it was refused, in words the user can act on.
    pub reason: String,
}

/// The rules every entry is checked against.
#[derive(Debug, Clone, Default)]
pub struct TargetRules {
    /// Which address ranges may be contacted.
    pub mode: PolicyMode,
    /// When non-empty, only these hosts and their subdomains.
    pub allowed_hosts: Vec<String>,
    /// Secret headers by origin; a target on one of these origins reads the authenticated view.
    pub credentials: Vec<Arc<Credential>>,
}

/// Plans every entry, keeping input order.
pub fn plan(entries: &[Value], rules: &TargetRules) -> Vec<Planned> {
    let mut seen: Vec<Url> = Vec::new();
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| match usable_url(entry, rules, &seen) {
            Ok(url) => {
                seen.push(url.clone());
                let credential = rules
                    .credentials
                    .iter()
                    .find(|c| c.applies_to(&url))
                    .cloned();
                Planned::Probe(Target {
                    index,
                    url,
                    credential,
                })
            }
            Err(reason) => Planned::Blocked(BlockedEntry {
                index,
                // A repeat is a usable URL: its row names it normalized, as the first one's.
                entry: repeated_url(entry, &seen).unwrap_or_else(|| entry_text(entry)),
                reason,
            }),
        })
        .collect()
}

/// A URL entry as targets are compared: parsed, without fragment; `None` if it is no URL.
pub fn normalized_url(text: &str) -> Option<String> {
    let mut url = Url::parse(text.trim()).ok()?;
    url.set_fragment(None);
    Some(url.to_string())
}

/// The normalized URL of `entry` when it repeats one of `seen` (the usable URLs so far).
fn repeated_url(entry: &Value, seen: &[Url]) -> Option<String> {
    let mut url = Url::parse(entry.as_str()?.trim()).ok()?;
    url.set_fragment(None);
    seen.contains(&url).then(|| url.to_string())
}

/// The entry as shown in its row and log line. A credential in a URL is replaced by `***`, so
/// a refused secret never reaches the dataset or the log.
fn entry_text(entry: &Value) -> String {
    match entry {
        Value::String(s) => redact_credentials(s),
        other => other.to_string(),
    }
}

fn redact_credentials(text: &str) -> String {
    match Url::parse(text.trim()) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let redacted = url.set_username("***").is_ok() && url.set_password(None).is_ok();
            if redacted {
                url.to_string()
            } else {
                "(a URL with credentials)".to_string()
            }
        }
        _ => text.to_string(),
    }
}

fn usable_url(entry: &Value, rules: &TargetRules, seen: &[Url]) -> Result<Url, String> {
    let Value::String(text) = entry else {
        return Err(format!("entry must be a URL string, got {entry}"));
    };
    let trimmed = text.trim();
    let with_hint = |problem: String| match scheme_suggestion(trimmed) {
        Some(suggested) => format!("{problem}; write the URL with its scheme: {suggested:?}"),
        None => problem,
    };
    let mut url = Url::parse(trimmed)
        .map_err(|e| with_hint(format!("not a valid absolute URL ({e}): {trimmed:?}")))?;
    url.set_fragment(None);
    check_url(&url, rules.mode, &rules.allowed_hosts).map_err(|blocked| match blocked {
        Blocked::Scheme(_) => with_hint(blocked.to_string()),
        other => other.to_string(),
    })?;
    if seen.contains(&url) {
        return Err(format!("repeats an earlier entry: {url}"));
    }
    Ok(url)
}

/// The URL a user most likely meant by `text` when they left out the scheme
/// (`127.0.0.1:8000/mcp`, `localhost:8000/mcp`, `mcp.example.com/mcp`): `http://` for a
/// loopback or local name, `https://` otherwise; `None` when `text` has a scheme or does not
/// look like a host with a port or a path.
pub fn scheme_suggestion(text: &str) -> Option<String> {
    if text.contains("://") || text.is_empty() || text.contains(char::is_whitespace) {
        return None;
    }
    let host_port = text.split(['/', '?']).next().unwrap_or_default();
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (host_port, None),
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    let looks_like_a_server = port.is_some() || text.contains('/');
    if !(port_ok && host_ok && looks_like_a_server && (host.contains('.') || host == "localhost")) {
        return None;
    }
    let local = host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| match ip {
            std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
            std::net::IpAddr::V6(v6) => v6.is_loopback(),
        });
    let scheme = if local { "http" } else { "https" };
    Some(format!("{scheme}://{text}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_url_without_its_scheme_gets_the_form_it_most_likely_meant() {
        let cases = [
            ("127.0.0.1:8000/mcp", Some("http://127.0.0.1:8000/mcp")),
            ("localhost:8000/mcp", Some("http://localhost:8000/mcp")),
            ("mcp.example.com/mcp", Some("https://mcp.example.com/mcp")),
            ("mcp.example.com:443", Some("https://mcp.example.com:443")),
            ("https://mcp.example.com/mcp", None),
            ("before.json", None),
            ("surfaces/before.json", None),
            ("a b/c", None),
        ];
        for (text, expected) in cases {
            assert_eq!(scheme_suggestion(text).as_deref(), expected, "{text}");
        }
        let rules = TargetRules {
            mode: PolicyMode::AllowPrivate,
            allowed_hosts: Vec::new(),
            credentials: Vec::new(),
        };
        let refused = verdicts(json!(["127.0.0.1:8000/mcp", "localhost:8000/mcp"]), &rules);
        let first = refused[0].clone().unwrap_err();
        assert!(first.contains("relative URL without a base"), "{first}");
        assert!(first.contains("\"http://127.0.0.1:8000/mcp\""), "{first}");
        let second = refused[1].clone().unwrap_err();
        assert!(
            second.contains("refused URL scheme \"localhost\""),
            "{second}"
        );
        assert!(second.contains("\"http://localhost:8000/mcp\""), "{second}");
    }

    fn verdicts(entries: Value, rules: &TargetRules) -> Vec<Result<String, String>> {
        plan(entries.as_array().unwrap(), rules)
            .into_iter()
            .map(|p| match p {
                Planned::Probe(t) => Ok(t.key().to_string()),
                Planned::Blocked(b) => Err(b.reason),
            })
            .collect()
    }

    #[test]
    fn unusable_entries_become_blocked_verdicts_in_order() {
        let result = verdicts(
            json!([
                "https://mcp.example.com/mcp",
                "not a url",
                "ftp://files.example.com/",
                "https://user:pw@mcp.example.com/mcp",
                "http://localhost:8080/mcp",
                "http://127.0.0.1/mcp",
                "https://mcp.example.com/mcp#frag",
                42,
                "https://other.example.com/mcp/",
            ]),
            &TargetRules::default(),
        );
        assert_eq!(result[0], Ok("https://mcp.example.com/mcp".to_string()));
        assert!(
            result[1]
                .as_ref()
                .unwrap_err()
                .contains("not a valid absolute URL")
        );
        for (i, verdict) in result.iter().enumerate().take(6).skip(2) {
            assert!(verdict.is_err(), "entry {i} should be blocked: {verdict:?}");
        }
        assert!(
            result[6]
                .as_ref()
                .unwrap_err()
                .contains("repeats an earlier entry")
        );
        assert!(
            result[7]
                .as_ref()
                .unwrap_err()
                .contains("must be a URL string")
        );
        assert_eq!(result[8], Ok("https://other.example.com/mcp/".to_string()));
    }

    #[test]
    fn a_repeat_is_named_by_its_normalized_url_whatever_its_spelling() {
        let planned = plan(
            &[
                json!("https://mcp.example.com/mcp"),
                json!(" HTTPS://MCP.Example.COM:443/mcp#top"),
            ],
            &TargetRules::default(),
        );
        match &planned[1] {
            Planned::Blocked(blocked) => {
                assert_eq!(blocked.entry, "https://mcp.example.com/mcp");
                assert!(blocked.reason.contains("repeats an earlier entry"));
            }
            other => panic!("a repeat is blocked: {other:?}"),
        }
    }

    #[test]
    fn credentials_never_appear_in_a_blocked_entry() {
        let planned = plan(
            &[
                json!("https://user:hunter2@mcp.example.com/mcp"),
                json!("https://:hunter2@mcp.example.com/"),
            ],
            &TargetRules::default(),
        );
        for p in planned {
            let Planned::Blocked(blocked) = p else {
                panic!("a URL with credentials must be blocked");
            };
            assert!(!blocked.entry.contains("hunter2"), "{}", blocked.entry);
            assert!(!blocked.reason.contains("hunter2"), "{}", blocked.reason);
            assert!(
                blocked.entry.contains("***@mcp.example.com"),
                "{}",
                blocked.entry
            );
        }
    }

    #[test]
    fn loopback_is_allowed_only_with_the_operator_override() {
        let rules = TargetRules {
            mode: PolicyMode::AllowPrivate,
            ..TargetRules::default()
        };
        let result = verdicts(json!(["http://127.0.0.1:9/mcp"]), &rules);
        assert_eq!(result[0], Ok("http://127.0.0.1:9/mcp".to_string()));
        let result = verdicts(json!(["http://127.0.0.1:9/mcp"]), &TargetRules::default());
        assert!(result[0].is_err());
    }

    #[test]
    fn allowed_hosts_narrow_the_set() {
        let rules = TargetRules {
            mode: PolicyMode::Public,
            allowed_hosts: vec!["example.com".to_string()],
            ..TargetRules::default()
        };
        let result = verdicts(
            json!(["https://mcp.example.com/mcp", "https://example.org/mcp"]),
            &rules,
        );
        assert!(result[0].is_ok());
        assert!(result[1].is_err());
    }

    #[test]
    fn a_credential_selects_the_authenticated_view_of_its_origin_only() {
        let credential = Arc::new(
            Credential::new("https://mcp.example.com", "Authorization", "Bearer t").unwrap(),
        );
        let rules = TargetRules {
            credentials: vec![credential.clone()],
            ..TargetRules::default()
        };
        let planned = plan(
            &[
                json!("https://mcp.example.com/mcp"),
                json!("https://mcp.example.com:8443/mcp"),
                json!("https://other.example.com/mcp"),
            ],
            &rules,
        );
        let views: Vec<(Listing, String)> = planned
            .iter()
            .map(|p| match p {
                Planned::Probe(t) => (t.listing(), t.ledger_key()),
                Planned::Blocked(b) => panic!("blocked: {}", b.reason),
            })
            .collect();
        assert_eq!(
            views,
            vec![
                (
                    Listing::Authenticated,
                    "https://mcp.example.com/mcp#authenticated".to_string()
                ),
                (
                    Listing::Anonymous,
                    "https://mcp.example.com:8443/mcp".to_string()
                ),
                (
                    Listing::Anonymous,
                    "https://other.example.com/mcp".to_string()
                ),
            ]
        );
        let Planned::Probe(first) = &planned[0] else {
            unreachable!()
        };
        assert_eq!(first.key(), "https://mcp.example.com/mcp");
        assert_eq!(first.credential.as_deref(), Some(credential.as_ref()));
    }
}
