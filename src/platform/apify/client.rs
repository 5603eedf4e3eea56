//! The retrying client of the Apify REST API v2: requests, answers, errors, backoff and
//! `Retry-After`, and the capped read of every answer body.

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use url::Url;

use crate::platform::StorageError;
use crate::platform::env::{DEFAULT_RETRY_BASE_DELAY, PlatformEnv};

/// How many times one API call is attempted before giving up (the official clients' value).
pub const MAX_TRIES: u32 = 8;

/// The longest `Retry-After` honoured; a longer one is cut to this, so that one answer cannot
/// stall a run.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Time allowed for one attempt of one API call.
pub(super) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(60);

/// Error types the API uses for a record (or its store) that does not exist.
pub(super) const NOT_FOUND_TYPES: &[&str] = &["record-not-found", "record-or-token-not-found"];

/// A failed API call. The message never contains the token.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The API answered with an error status that is not retried (or retries ran out).
    #[error("{method} {path}: HTTP {status} {error_type}: {message}")]
    Status {
        /// HTTP method of the call.
        method: Method,
        /// URL path of the call.
        path: String,
        /// The HTTP status code.
        status: u16,
        /// The API's error type, e.g. `record-not-found`.
        error_type: String,
        /// The API's error message.
        message: String,
        /// How long the API asked to wait before trying again (`Retry-After`), capped.
        retry_after: Option<Duration>,
    },
    /// The request could not be sent or the response not read (after all retries).
    #[error("{method} {path}: {message}")]
    Transport {
        /// HTTP method of the call.
        method: Method,
        /// URL path of the call.
        path: String,
        /// The transport error.
        message: String,
    },
    /// The response body is larger than the request allowed; the rest was not read.
    #[error("{method} {path}: the answer is larger than {limit} bytes")]
    TooLarge {
        /// HTTP method of the call.
        method: Method,
        /// URL path of the call.
        path: String,
        /// The limit of the request.
        limit: usize,
    },
    /// A successful response did not have the documented shape.
    #[error("{method} {path}: unexpected response: {message}")]
    Response {
        /// HTTP method of the call.
        method: Method,
        /// URL path of the call.
        path: String,
        /// What was wrong with it.
        message: String,
    },
    /// The HTTP client could not be created.
    #[error("cannot create the API client: {0}")]
    Client(String),
}

impl ApiError {
    /// The HTTP status the API answered with, if it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True when the API said the addressed record does not exist.
    pub(super) fn is_record_not_found(&self) -> bool {
        matches!(self, ApiError::Status { status: 404, error_type, .. }
            if NOT_FOUND_TYPES.contains(&error_type.as_str()))
    }
}

impl From<ApiError> for StorageError {
    fn from(error: ApiError) -> Self {
        match error {
            ApiError::Status {
                method,
                path,
                status,
                error_type,
                message,
                ..
            } => StorageError::Api {
                method: method.to_string(),
                path,
                message: format!("HTTP {status} {error_type}: {message}"),
            },
            ApiError::Transport {
                method,
                path,
                message,
            }
            | ApiError::Response {
                method,
                path,
                message,
            } => StorageError::Api {
                method: method.to_string(),
                path,
                message,
            },
            ApiError::TooLarge { path, limit, .. } => StorageError::TooLarge { key: path, limit },
            ApiError::Client(message) => StorageError::Api {
                method: String::new(),
                path: String::new(),
                message,
            },
        }
    }
}

/// One API request, kept whole so that it can be sent again on a retry.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    pub(super) method: Method,
    pub(super) url: Url,
    pub(super) headers: HeaderMap,
    pub(super) body: Option<Bytes>,
    pub(super) max_body: Option<usize>,
}

impl ApiRequest {
    /// Refuses an answer body over `limit` bytes ([`ApiError::TooLarge`]), reading no more of
    /// it than that.
    pub fn max_body(mut self, limit: usize) -> Self {
        self.max_body = Some(limit);
        self
    }

    /// Adds a header (e.g. `idempotency-key`); the same value is sent on every retry.
    pub fn header(mut self, name: &'static str, value: &str) -> Result<Self, ApiError> {
        let value = HeaderValue::from_str(value)
            .map_err(|e| ApiError::Client(format!("invalid {name} header: {e}")))?;
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Sets a raw body with its content type.
    pub fn body(mut self, bytes: impl Into<Bytes>, content_type: &str) -> Result<Self, ApiError> {
        self.body = Some(bytes.into());
        self.header("content-type", content_type)
    }

    /// Sets a JSON body.
    pub fn json(self, value: &Value) -> Result<Self, ApiError> {
        let bytes = serde_json::to_vec(value).map_err(|e| ApiError::Client(e.to_string()))?;
        self.body(bytes, "application/json")
    }

    /// Adds a query parameter.
    pub fn query(mut self, name: &str, value: &str) -> Self {
        self.url.query_pairs_mut().append_pair(name, value);
        self
    }
}

/// A successful API response, body read completely.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The response's `Content-Type`, or `""`.
    pub content_type: String,
    /// The body bytes.
    pub body: Bytes,
}

impl ApiResponse {
    /// The `data` member of the JSON envelope `{"data": …}`.
    pub(crate) fn data(&self) -> Option<Value> {
        serde_json::from_slice::<Value>(&self.body)
            .ok()?
            .get_mut("data")
            .map(Value::take)
    }
}

/// Retry schedule of API calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, including the first.
    pub max_tries: u32,
    /// Delay before the first retry; it doubles for each further retry, times a jitter in [1, 2).
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: MAX_TRIES,
            base_delay: DEFAULT_RETRY_BASE_DELAY,
        }
    }
}

impl RetryPolicy {
    /// Delay before retry number `retry` (1 for the first retry), without the jitter.
    pub fn delay_before(&self, retry: u32) -> Duration {
        let factor = 1u32 << retry.saturating_sub(1).min(16);
        self.base_delay.saturating_mul(factor)
    }
}

/// A client of the Apify API v2 with authentication and retries. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ApiClient {
    pub(super) http: reqwest::Client,
    pub(super) base: Url,
    pub(super) token: Option<String>,
    pub(super) retry: RetryPolicy,
}

impl ApiClient {
    /// A client for the API named in `env`, with the retry base delay from `env`.
    pub fn new(env: &PlatformEnv) -> Result<Self, ApiError> {
        let roots = webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .filter_map(|der| reqwest::Certificate::from_der(der).ok());
        let http = reqwest::Client::builder()
            .user_agent(concat!("mcp-surface-ledger/", env!("CARGO_PKG_VERSION")))
            .tls_certs_only(roots)
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| ApiError::Client(e.to_string()))?;
        Ok(ApiClient {
            http,
            base: env.api_base_url.clone(),
            token: env.token.clone(),
            retry: RetryPolicy {
                base_delay: env.api_retry_base_delay,
                ..RetryPolicy::default()
            },
        })
    }

    /// The same client with at most `max_tries` attempts per call (same delays).
    pub fn with_max_tries(mut self, max_tries: u32) -> Self {
        self.retry.max_tries = max_tries;
        self
    }

    /// The same client with another retry schedule.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// A request to the API path made of `segments` below `/v2` (each segment is escaped).
    pub fn request(&self, method: Method, segments: &[&str]) -> ApiRequest {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        ApiRequest {
            method,
            url,
            headers: HeaderMap::new(),
            body: None,
            max_body: None,
        }
    }

    /// Sends `request`, retrying 429, 5xx and transport errors; any other non-2xx is an error.
    pub async fn send(&self, request: ApiRequest) -> Result<ApiResponse, ApiError> {
        let mut retry = 0;
        loop {
            let outcome = self.attempt(&request).await;
            retry += 1;
            match outcome {
                Ok(response) => return Ok(response),
                Err(error) if is_retryable(&error) && retry < self.retry.max_tries => {
                    let delay = match &error {
                        ApiError::Status {
                            retry_after: Some(wait),
                            ..
                        } => *wait,
                        _ => self.retry.delay_before(retry).mul_f64(1.0 + random_unit()),
                    };
                    tracing::warn!(%error, attempt = retry, ?delay, "Apify API call failed, retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(error) if error.is_record_not_found() => {
                    // An absent record is an answer, not a failure (e.g. no INPUT).
                    tracing::debug!(%error, "Apify API: no such record");
                    return Err(error);
                }
                Err(error) => {
                    tracing::error!(%error, "Apify API call failed");
                    return Err(error);
                }
            }
        }
    }

    pub(super) async fn attempt(&self, request: &ApiRequest) -> Result<ApiResponse, ApiError> {
        let path = request.url.path().to_string();
        let transport = |e: reqwest::Error| ApiError::Transport {
            method: request.method.clone(),
            path: path.clone(),
            message: error_chain(&e),
        };
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .timeout(ATTEMPT_TIMEOUT);
        if let Some(token) = &self.token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let response = builder.send().await.map_err(transport)?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, Utc::now()));
        let body = match request.max_body {
            Some(limit) => read_capped(response, limit)
                .await
                .map_err(transport)?
                .ok_or_else(|| ApiError::TooLarge {
                    method: request.method.clone(),
                    path: path.clone(),
                    limit,
                })?,
            None => response.bytes().await.map_err(transport)?,
        };
        if status.is_success() {
            return Ok(ApiResponse {
                status: status.as_u16(),
                content_type,
                body,
            });
        }
        let (error_type, message) = parse_error_body(status, &body);
        Err(ApiError::Status {
            method: request.method.clone(),
            path,
            status: status.as_u16(),
            error_type,
            message,
            retry_after,
        })
    }
}

/// The wait a `Retry-After` value asks for at `now`: delay-seconds or an HTTP-date (a date in
/// the past is no wait), at most [`MAX_RETRY_AFTER`]; `None` when it is neither.
pub(super) fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => {
            let at = DateTime::parse_from_rfc2822(value).ok()?;
            (at.with_timezone(&Utc) - now)
                .to_std()
                .unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// The body of `response` if it has at most `limit` bytes, `None` (after reading no more than
/// that) if it is larger.
pub(super) async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Option<Bytes>, reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body.into()))
}

pub(super) fn is_retryable(error: &ApiError) -> bool {
    match error {
        ApiError::Status { status, .. } => *status == 429 || *status >= 500,
        ApiError::Transport { .. } => true,
        ApiError::TooLarge { .. } | ApiError::Response { .. } | ApiError::Client(_) => false,
    }
}

/// The error type and message of an API error body `{"error": {"type", "message"}}`.
pub(super) fn parse_error_body(status: StatusCode, body: &[u8]) -> (String, String) {
    let parsed = serde_json::from_slice::<Value>(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let error_type = field("type").unwrap_or_else(|| {
        status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase()
    });
    let message = field("message").unwrap_or_else(|| {
        let text = String::from_utf8_lossy(body);
        text.chars().take(300).collect()
    });
    (error_type, message)
}

/// The error and its sources on one line (reqwest's own message hides the cause).
pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A random `u64` from the standard library's randomly seeded hasher (no extra crate needed).
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish()
}

/// A random number in [0, 1).
pub(super) fn random_unit() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}
