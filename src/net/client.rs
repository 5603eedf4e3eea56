//! The HTTP client for MCP targets.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{self, HeaderMap};
use reqwest::{Method, StatusCode};
use url::Url;

use super::body::{CappedBody, StreamingResponse, content_type};
use super::credential::Credential;
use super::error::NetError;
use super::policy::{self, PolicyMode};
use super::resolver::{Lookup, PinnedResolver, ResolveError, SystemLookup};

/// Settings of one run's target client. They come from the validated input, except
/// [`NetConfig::policy`], which only the operator sets.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Time allowed for one request: every redirect hop and, for buffered calls, the body.
    pub request_timeout: Duration,
    /// Redirect hops followed for each request.
    pub max_redirects: u32,
    /// Per-response body cap in bytes.
    pub max_response_bytes: u64,
    /// Which addresses may be contacted. Never taken from input.
    pub policy: PolicyMode,
    /// When not empty, only these hosts (and names under them) may be contacted, redirects
    /// included. It narrows the policy and never widens it.
    pub allowed_hosts: Vec<String>,
}

impl NetConfig {
    /// Settings with the public-only policy and no allow-list.
    pub fn new(request_timeout: Duration, max_redirects: u32, max_response_bytes: u64) -> Self {
        NetConfig {
            request_timeout,
            max_redirects,
            max_response_bytes,
            policy: PolicyMode::Public,
            allowed_hosts: Vec::new(),
        }
    }

    /// Applies the operator override: `true` lets loopback and private ranges through.
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.policy = if allow {
            PolicyMode::AllowPrivate
        } else {
            PolicyMode::Public
        };
        self
    }

    /// Restricts every request to these hosts and their subdomains.
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.allowed_hosts = hosts;
        self
    }
}

impl Default for NetConfig {
    /// The input schema defaults: 20 s, 3 redirects, 2,000,000 bytes, public targets only.
    fn default() -> Self {
        NetConfig::new(Duration::from_secs(20), 3, 2_000_000)
    }
}

/// A response whose body has been read completely (within the cap).
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// The body bytes, at most `max_response_bytes` long.
    pub body: Bytes,
    /// The URL that produced this response (after redirects).
    pub final_url: Url,
}

impl HttpResponse {
    /// The `Content-Type` without parameters, lower-cased, or `""`.
    pub fn content_type(&self) -> String {
        content_type(&self.headers)
    }

    /// A header value as text, if present and printable.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Headers that must never travel to another origin on a redirect.
const ORIGIN_BOUND_HEADERS: [header::HeaderName; 3] = [
    header::AUTHORIZATION,
    header::COOKIE,
    header::PROXY_AUTHORIZATION,
];

/// How long an idle keep-alive connection is kept. A probe sends its requests back to back
/// (a connection waiting for an answer is busy, not idle: only our own work between two
/// requests counts), and the next server is usually another origin, so a connection idle for
/// a quarter of a second is rarely used again; each one holds a socket and the read buffer
/// its largest answer grew (tens of kilobytes). The pool reaps them on the same period, so a
/// fleet read at hundreds of servers a second keeps about a second's worth of them: 17 MB of
/// a 1,000-origin later run's heap with one second, against the default 90 s's 40 MB more.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_millis(250);

/// A keep-alive HTTP client for MCP targets. Every request it sends has passed the address
/// policy: literal addresses before sending, names inside the pinned resolver, each redirect
/// hop again, and the connected peer after the response.
#[derive(Debug, Clone)]
pub struct Client {
    inner: reqwest::Client,
    config: NetConfig,
    /// The secret header sent to its one origin, if this client reads an authenticated view.
    credential: Option<Arc<Credential>>,
}

impl Client {
    /// Builds a client that resolves through the operating system. Fails only if the TLS
    /// stack cannot be set up.
    pub fn new(config: NetConfig) -> Result<Self, NetError> {
        Self::with_lookup(config, Arc::new(SystemLookup))
    }

    /// Builds a client that resolves names through `lookup` (tests inject a table here).
    pub fn with_lookup(config: NetConfig, lookup: Arc<dyn Lookup>) -> Result<Self, NetError> {
        Self::build(config, lookup, Vec::new())
    }

    /// Test-only: like [`Client::with_lookup`], and also trusts the DER-encoded CA
    /// certificate `root_der` next to the bundled roots. Input and environment can never
    /// reach this.
    #[doc(hidden)]
    pub fn with_extra_root_for_tests(
        config: NetConfig,
        lookup: Arc<dyn Lookup>,
        root_der: &[u8],
    ) -> Result<Self, NetError> {
        let root =
            reqwest::Certificate::from_der(root_der).map_err(|e| NetError::Other(e.to_string()))?;
        Self::build(config, lookup, vec![root])
    }

    fn build(
        config: NetConfig,
        lookup: Arc<dyn Lookup>,
        extra_roots: Vec<reqwest::Certificate>,
    ) -> Result<Self, NetError> {
        let mut roots = bundled_roots()?;
        roots.extend(extra_roots);
        let inner = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(PinnedResolver::new(lookup, config.policy))
            .tls_certs_only(roots)
            .connect_timeout(config.request_timeout)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .user_agent(concat!("mcp-surface-ledger/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| NetError::Other(error_chain(&e)))?;
        Ok(Client {
            inner,
            config,
            credential: None,
        })
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The same client (shared connections) that attaches `credential` to every request whose
    /// URL has the credential's origin, each redirect hop judged on its own. `None` gives an
    /// anonymous client.
    pub fn with_credential(&self, credential: Option<Arc<Credential>>) -> Client {
        Client {
            credential,
            ..self.clone()
        }
    }

    /// The same client without any credential: for requests that must stay anonymous even
    /// during an authenticated probe (RFC 9728 metadata, authorization servers).
    pub fn anonymous(&self) -> Client {
        self.with_credential(None)
    }

    /// Whether requests to the credential's origin carry a credential.
    pub fn has_credential(&self) -> bool {
        self.credential.is_some()
    }

    /// Sends a POST with a JSON body and reads the whole response within the cap.
    pub async fn post(
        &self,
        url: &Url,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<HttpResponse, NetError> {
        self.buffered(Method::POST, url, headers, Some(Bytes::from(body)))
            .await
    }

    /// Sends a GET and reads the whole response within the cap.
    pub async fn get(&self, url: &Url, headers: HeaderMap) -> Result<HttpResponse, NetError> {
        self.buffered(Method::GET, url, headers, None).await
    }

    /// Sends a DELETE; the body is read within the cap.
    pub async fn delete(&self, url: &Url, headers: HeaderMap) -> Result<HttpResponse, NetError> {
        self.buffered(Method::DELETE, url, headers, None).await
    }

    /// Sends a GET and returns as soon as the headers arrive; the body is a capped stream
    /// (for long-lived event streams). The timeout covers reaching the headers only; the
    /// caller bounds how long it reads.
    pub async fn get_stream(
        &self,
        url: &Url,
        headers: HeaderMap,
    ) -> Result<StreamingResponse, NetError> {
        let timeout = self.config.request_timeout;
        let response = tokio::time::timeout(timeout, self.send(Method::GET, url, headers, None))
            .await
            .map_err(|_| NetError::Timeout(timeout))??;
        self.check_declared_length(&response)?;
        Ok(StreamingResponse {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            final_url: response.url().clone(),
            body: CappedBody::new(response.bytes_stream(), self.config.max_response_bytes),
        })
    }

    async fn buffered(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<HttpResponse, NetError> {
        let timeout = self.config.request_timeout;
        let work = async {
            let response = self.send(method, url, headers, body).await?;
            self.check_declared_length(&response)?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let final_url = response.url().clone();
            let mut stream =
                CappedBody::new(response.bytes_stream(), self.config.max_response_bytes);
            let mut body = Vec::new();
            while let Some(chunk) = stream.next().await {
                body.extend_from_slice(&chunk?);
            }
            Ok(HttpResponse {
                status,
                headers,
                body: Bytes::from(body),
                final_url,
            })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| NetError::Timeout(timeout))?
    }

    fn check_declared_length(&self, response: &reqwest::Response) -> Result<(), NetError> {
        let limit = self.config.max_response_bytes;
        match response.content_length() {
            Some(len) if len > limit => Err(NetError::TooLarge { limit }),
            _ => Ok(()),
        }
    }

    /// Sends one request and follows redirects by hand, checking every hop.
    async fn send(
        &self,
        method: Method,
        url: &Url,
        mut headers: HeaderMap,
        mut body: Option<Bytes>,
    ) -> Result<reqwest::Response, NetError> {
        let max = self.config.max_redirects;
        let mut current = url.clone();
        let mut visited = vec![current.clone()];
        let mut hops: u32 = 0;
        loop {
            policy::check_url(&current, self.config.policy, &self.config.allowed_hosts)?;
            let mut request = self
                .inner
                .request(method.clone(), current.clone())
                .headers(headers.clone());
            if let Some(credential) = self
                .credential
                .as_deref()
                .filter(|c| c.applies_to(&current))
            {
                request = request.header(
                    credential.header_name().clone(),
                    credential.header_value().clone(),
                );
            }
            if let Some(bytes) = &body {
                request = request.body(bytes.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|e| classify(e, self.config.request_timeout))?;
            self.check_peer(&response)?;

            let Some(next) = redirect_target(&response, &current)? else {
                return Ok(response);
            };
            let status = response.status();
            hops += 1;
            if visited.contains(&next) {
                return Err(NetError::RedirectLoop {
                    hops,
                    detail: format!("{next} was already visited"),
                });
            }
            if hops > max {
                return Err(NetError::RedirectLoop {
                    hops,
                    detail: format!("more than max_redirects ({max}); next hop would be {next}"),
                });
            }
            if !keeps_method(status) {
                if method != Method::GET && method != Method::HEAD {
                    return Err(NetError::RedirectRefused {
                        status: status.as_u16(),
                        method: method.to_string(),
                        location: next.to_string(),
                    });
                }
                // A GET or HEAD stays what it is; it never had a body to resend.
                body = None;
            }
            if current.origin() != next.origin() {
                for name in &ORIGIN_BOUND_HEADERS {
                    headers.remove(name);
                }
            }
            visited.push(next.clone());
            current = next;
        }
    }

    /// Defence in depth: the address actually connected to must pass the policy too.
    fn check_peer(&self, response: &reqwest::Response) -> Result<(), NetError> {
        match response.remote_addr() {
            Some(peer) => Ok(policy::is_allowed(peer.ip(), self.config.policy)?),
            None => Ok(()),
        }
    }
}

/// The bundled Mozilla roots: the image needs no CA store and results do not depend on the host.
fn bundled_roots() -> Result<Vec<reqwest::Certificate>, NetError> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|der| reqwest::Certificate::from_der(der.as_ref()))
        .collect::<Result<_, _>>()
        .map_err(|e| NetError::Other(format!("bundled root certificate rejected: {e}")))
}

/// 307 and 308 keep method and body; 301, 302 and 303 do not.
fn keeps_method(status: StatusCode) -> bool {
    status == StatusCode::TEMPORARY_REDIRECT || status == StatusCode::PERMANENT_REDIRECT
}

/// Where a redirect response points, or `None` when the response is not a redirect to follow.
fn redirect_target(response: &reqwest::Response, current: &Url) -> Result<Option<Url>, NetError> {
    let status = response.status();
    let followed = [
        StatusCode::MOVED_PERMANENTLY,
        StatusCode::FOUND,
        StatusCode::SEE_OTHER,
        StatusCode::TEMPORARY_REDIRECT,
        StatusCode::PERMANENT_REDIRECT,
    ];
    if !followed.contains(&status) {
        return Ok(None);
    }
    let Some(location) = response.headers().get(header::LOCATION) else {
        return Ok(None);
    };
    let location = location
        .to_str()
        .map_err(|_| NetError::BadRedirect("Location is not printable text".to_string()))?;
    let next = current
        .join(location)
        .map_err(|e| NetError::BadRedirect(format!("{location:?}: {e}")))?;
    Ok(Some(next))
}

/// Maps a reqwest error to a [`NetError`], recognising the pinned resolver's refusals.
pub(crate) fn classify(error: reqwest::Error, timeout: Duration) -> NetError {
    if let Some(resolve) = find_source::<ResolveError>(&error) {
        return match resolve {
            ResolveError::Blocked(blocked) => NetError::Blocked(blocked.clone()),
            other => NetError::Dns(other.to_string()),
        };
    }
    let text = error_chain(&error);
    if error.is_timeout() {
        NetError::Timeout(timeout)
    } else if error.is_connect() {
        let refused = find_source::<std::io::Error>(&error)
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        match error.url().filter(|_| refused) {
            Some(url) => NetError::Connect(refused_connection(url)),
            None => NetError::Connect(text),
        }
    } else {
        NetError::Other(text)
    }
}

/// What to say when the server's machine refused the connection: nothing listens there.
fn refused_connection(url: &Url) -> String {
    let host = url.host_str().unwrap_or("the server");
    let port = url
        .port_or_known_default()
        .map_or(String::new(), |p| format!(":{p}"));
    format!(
        "{host}{port} refused the connection (nothing listens there): check the URL's host and \
         port, and that the server is running"
    )
}

/// The first error of type `T` in the `source()` chain of `error`.
fn find_source<'a, T: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut current = Some(error);
    while let Some(inner) = current {
        if let Some(found) = inner.downcast_ref::<T>() {
            return Some(found);
        }
        current = inner.source();
    }
    None
}

fn error_chain(error: &dyn StdError) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_builders_set_policy_and_allow_list() {
        let config = NetConfig::new(Duration::from_secs(5), 2, 1000)
            .allow_private(true)
            .allowed_hosts(vec!["example.com".into()]);
        assert_eq!(config.policy, PolicyMode::AllowPrivate);
        assert_eq!(config.allowed_hosts, vec!["example.com".to_string()]);
        assert_eq!(
            config.clone().allow_private(false).policy,
            PolicyMode::Public
        );
        assert_eq!(NetConfig::default().policy, PolicyMode::Public);
    }

    #[test]
    fn client_builds_with_bundled_roots() {
        assert!(bundled_roots().unwrap().len() > 50);
        let client = Client::new(NetConfig::default()).unwrap();
        assert_eq!(client.config().max_redirects, 3);
    }
}
