//! Which `Host` and `Origin` a request may carry, on every route.
//!
//! A server on a developer's laptop is reachable from any web page the developer opens: the
//! page's own host name can be made to resolve to 127.0.0.1 (DNS rebinding), and the browser
//! then sends the page's name in `Host`. So a host *name* is only accepted when it is a
//! loopback name, a platform Standby name, or one the operator added; an IP literal is always
//! accepted (a rebinding attack needs a name). A request that carries `Origin` (a browser's
//! cross-site fetch or form) must come from an accepted host as well.
//!
//! The platform's readiness probe is let through whatever its `Host`: its answer says nothing.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::READINESS_HEADER;
use super::error::ServeError;

/// The domain of the Apify platform's Standby URLs (`https://<user>--<actor>.apify.actor`, or
/// an Actor-level or task name under it; `docs/platform.md`, "Standby mode").
pub const STANDBY_DOMAIN: &str = "apify.actor";

/// The environment variable with more accepted host names, separated by commas.
pub const ALLOWED_HOSTS_ENV: &str = "LEDGER_ALLOWED_HOSTS";

/// The host names a request may name, besides loopback names and IP literals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    /// Exact names (lowercase, no port) the operator or the platform added.
    names: Vec<String>,
    /// Whether any name under [`STANDBY_DOMAIN`] is accepted (on the platform).
    standby_domain: bool,
}

impl HostPolicy {
    /// Loopback names and IP literals only: a server started on a workstation.
    pub fn local() -> Self {
        HostPolicy::default()
    }

    /// Also the platform's Standby names: every name under [`STANDBY_DOMAIN`].
    pub fn platform() -> Self {
        HostPolicy {
            standby_domain: true,
            ..HostPolicy::default()
        }
    }

    /// Also accepts `names` (host names, or URLs whose host is taken; blanks are ignored).
    pub fn with_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for name in names {
            let name = name.as_ref().trim();
            let host = url::Url::parse(name)
                .ok()
                .and_then(|url| url.host_str().map(str::to_string))
                .unwrap_or_else(|| strip_port(name).to_string());
            if !host.is_empty() {
                self.names.push(host.to_ascii_lowercase());
            }
        }
        self
    }

    /// Whether a `Host` header value (`name[:port]`) is accepted.
    pub fn allows_host(&self, host: &str) -> bool {
        let name = strip_port(host.trim()).to_ascii_lowercase();
        let name = name.trim_end_matches('.');
        if name.is_empty() {
            return false;
        }
        is_ip_literal(name)
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.names.iter().any(|allowed| allowed == name)
            || (self.standby_domain && name.ends_with(&format!(".{STANDBY_DOMAIN}")))
    }

    /// Whether an `Origin` header value (`scheme://host[:port]`) is accepted.
    pub fn allows_origin(&self, origin: &str) -> bool {
        url::Url::parse(origin.trim())
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .and_then(|url| url.host_str().map(|host| self.allows_host(host)))
            .unwrap_or(false)
    }

    /// The refusal for a request's headers, if any.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ServeError> {
        if headers.contains_key(READINESS_HEADER) {
            return Ok(());
        }
        let host = headers
            .get(header::HOST)
            .map(|value| value.to_str().unwrap_or_default())
            .unwrap_or_default();
        if !self.allows_host(host) {
            return Err(ServeError::HostNotAllowed(host.to_string()));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !self.allows_origin(origin) {
                return Err(ServeError::OriginNotAllowed(origin.to_string()));
            }
        }
        Ok(())
    }
}

/// Middleware for every route: refuses a foreign `Host` (421) or `Origin` (403).
pub async fn check_host(
    State(policy): State<std::sync::Arc<HostPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    match policy.check(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// `name` without a trailing `:port` (IPv6 literals keep their brackets off).
fn strip_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

fn is_ip_literal(name: &str) -> bool {
    name.parse::<std::net::IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_judged_by_policy() {
        let local = HostPolicy::local().with_names([
            "Ledger.Example.com",
            "https://ops.example:8443/x",
            " ",
        ]);
        let platform = HostPolicy::platform();
        // The Standby host forms the Apify documentation shows: `<user>--<actor>.apify.actor`
        // (`ACTOR_STANDBY_URL`) and an Actor-level name such as `rag-web-browser.apify.actor`.
        let table: [(&HostPolicy, &str, bool); 19] = [
            (&local, "localhost", true),
            (&local, "localhost:4321", true),
            (&local, "LOCALHOST.", true),
            (&local, "app.localhost:80", true),
            (&local, "127.0.0.1:4321", true),
            (&local, "[::1]:4321", true),
            (&local, "10.0.0.7", true),
            (&local, "ledger.example.com:443", true),
            (&local, "ops.example", true),
            (&local, "evil.example", false),
            (&local, "localhost.evil.example", false),
            (&local, "user--actor.apify.actor", false),
            (&local, "", false),
            (&platform, "user--actor.apify.actor", true),
            (&platform, "rag-web-browser.apify.actor", true),
            (&platform, "User--Actor.Apify.Actor.:443", true),
            (&platform, "apify.actor.evil.example", false),
            (&platform, "evilapify.actor", false),
            (&platform, "127.0.0.1", true),
        ];
        for (policy, host, allowed) in table {
            assert_eq!(policy.allows_host(host), allowed, "{host:?}");
        }
    }

    #[test]
    fn origins_need_an_accepted_http_host() {
        let policy = HostPolicy::local();
        let table = [
            ("http://localhost:4321", true),
            ("http://127.0.0.1:4321", true),
            ("https://evil.example", false),
            ("null", false),
            ("file://", false),
            ("chrome-extension://abc", false),
        ];
        for (origin, allowed) in table {
            assert_eq!(policy.allows_origin(origin), allowed, "{origin:?}");
        }
    }

    #[test]
    fn the_readiness_probe_passes_whatever_its_host() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "10.1.2.3:4321".parse().unwrap());
        assert!(HostPolicy::local().check(&headers).is_ok());
        headers.insert(header::HOST, "internal.example".parse().unwrap());
        assert_eq!(
            HostPolicy::local().check(&headers).unwrap_err().code(),
            "host_not_allowed"
        );
        headers.insert(READINESS_HEADER, "1".parse().unwrap());
        assert!(HostPolicy::local().check(&headers).is_ok());
        headers.remove(READINESS_HEADER);
        headers.insert(header::HOST, "localhost".parse().unwrap());
        headers.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert_eq!(
            HostPolicy::local().check(&headers).unwrap_err().code(),
            "origin_not_allowed"
        );
    }
}
