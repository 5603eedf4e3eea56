//! The HTTP client for MCP targets.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::HeaderMap;
use url::Url;

/// Settings of one run's target client. They come from the validated input.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Per-request timeout, including reading the body.
    pub request_timeout: Duration,
    /// Redirect hops followed for each request.
    pub max_redirects: u32,
    /// Per-response body cap in bytes.
    pub max_response_bytes: u64,
}

/// What went wrong while talking HTTP to a target.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The request did not complete within the per-request timeout.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The host name did not resolve.
    #[error("could not resolve host: {0}")]
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
    /// Any other transport failure.
    #[error("HTTP failure: {0}")]
    Other(String),
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
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// A header value as text, if present and printable.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A keep-alive HTTP client for MCP targets.
#[derive(Debug, Clone)]
pub struct Client {
    inner: reqwest::Client,
    config: NetConfig,
}

impl Client {
    /// Builds a client. Fails only if the TLS stack cannot be set up.
    pub fn new(config: NetConfig) -> Result<Self, NetError> {
        let inner = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.request_timeout)
            .user_agent(concat!("mcp-surface-ledger/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| NetError::Other(e.to_string()))?;
        Ok(Client { inner, config })
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Sends a POST with a JSON body and reads the whole response within the cap.
    pub async fn post(
        &self,
        url: &Url,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<HttpResponse, NetError> {
        let request = self.inner.post(url.clone()).headers(headers).body(body);
        self.execute(request).await
    }

    /// Sends a GET and reads the whole response within the cap.
    pub async fn get(&self, url: &Url, headers: HeaderMap) -> Result<HttpResponse, NetError> {
        let request = self.inner.get(url.clone()).headers(headers);
        self.execute(request).await
    }

    /// Sends a DELETE; the body is read and discarded.
    pub async fn delete(&self, url: &Url, headers: HeaderMap) -> Result<HttpResponse, NetError> {
        let request = self.inner.delete(url.clone()).headers(headers);
        self.execute(request).await
    }

    async fn execute(&self, request: reqwest::RequestBuilder) -> Result<HttpResponse, NetError> {
        let timeout = self.config.request_timeout;
        let work = async {
            let response = request.send().await.map_err(classify)?;
            read_capped(response, self.config.max_response_bytes).await
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| NetError::Timeout(timeout))?
    }
}

async fn read_capped(response: reqwest::Response, limit: u64) -> Result<HttpResponse, NetError> {
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(NetError::TooLarge { limit });
    }
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let final_url = response.url().clone();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(classify)?;
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(NetError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(HttpResponse {
        status,
        headers,
        body: Bytes::from(body),
        final_url,
    })
}

fn classify(error: reqwest::Error) -> NetError {
    let text = error_chain(&error);
    if error.is_timeout() {
        NetError::Other(text)
    } else if text.contains("dns error") || text.contains("failed to lookup") {
        NetError::Dns(text)
    } else if error.is_connect() {
        NetError::Connect(text)
    } else {
        NetError::Other(text)
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
