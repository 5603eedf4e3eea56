//! The Apify REST API v2: a retrying client and the platform storage backend built on it.
//!
//! The API base URL is operator configuration (on the platform an internal address), so this
//! module uses its own plain HTTP client and never the target client of [`crate::net`], whose
//! address policy exists for MCP targets only.
//!
//! Calls are retried like the official clients do: on 429, on any 5xx and on transport errors,
//! with exponential backoff from a base delay (500 ms by default) and a random factor between
//! 1 and 2, at most [`MAX_TRIES`] times. A `Retry-After` on the failed answer (seconds or an
//! HTTP-date, at most [`MAX_RETRY_AFTER`]) replaces the backoff of that retry. Any other 4xx
//! fails at once with the API's error type and message.

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::OnceCell;
use url::Url;

use super::env::{DEFAULT_RETRY_BASE_DELAY, PlatformEnv};
use super::{Item, LEDGER_STORE_NAME, MAX_READ_BYTES, Record, Storage, StorageError, Store};

/// How many times one API call is attempted before giving up (the official clients' value).
pub const MAX_TRIES: u32 = 8;

/// The longest `Retry-After` honoured; a longer one is cut to this, so that one answer cannot
/// stall a run.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Time allowed for one attempt of one API call.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(60);

/// Error types the API uses for a record (or its store) that does not exist.
const NOT_FOUND_TYPES: &[&str] = &["record-not-found", "record-or-token-not-found"];

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
    fn is_record_not_found(&self) -> bool {
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
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Bytes>,
    max_body: Option<usize>,
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

/// One page of `GET /v2/key-value-stores/{id}/keys`.
#[derive(Debug, serde::Deserialize)]
struct KeysPage {
    #[serde(default)]
    items: Vec<KeyItem>,
    #[serde(default, rename = "isTruncated")]
    is_truncated: bool,
    #[serde(default, rename = "nextExclusiveStartKey")]
    next_exclusive_start_key: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct KeyItem {
    key: String,
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
    http: reqwest::Client,
    base: Url,
    token: Option<String>,
    retry: RetryPolicy,
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

    async fn attempt(&self, request: &ApiRequest) -> Result<ApiResponse, ApiError> {
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
fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
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
async fn read_capped(
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

fn is_retryable(error: &ApiError) -> bool {
    match error {
        ApiError::Status { status, .. } => *status == 429 || *status >= 500,
        ApiError::Transport { .. } => true,
        ApiError::TooLarge { .. } | ApiError::Response { .. } | ApiError::Client(_) => false,
    }
}

/// The error type and message of an API error body `{"error": {"type", "message"}}`.
fn parse_error_body(status: StatusCode, body: &[u8]) -> (String, String) {
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
fn error_chain(error: &dyn std::error::Error) -> String {
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
fn random_unit() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Splits serialized items into JSON array bodies of at most `limit` bytes each, in order.
///
/// Fails with the item's position when a single item does not fit into `limit` on its own.
pub fn chunk_items(items: &[Item], limit: usize) -> Result<Vec<Vec<u8>>, (usize, usize)> {
    let mut chunks = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let bytes = item.as_bytes();
        if bytes.len() + 2 > limit {
            return Err((position, bytes.len()));
        }
        // A chunk is `[` + items joined by `,` + `]`; adding this item costs a comma, the item
        // and (eventually) the closing bracket.
        if !current.is_empty() && current.len() + 1 + bytes.len() + 1 > limit {
            current.push(b']');
            chunks.push(std::mem::take(&mut current));
        }
        current.push(if current.is_empty() { b'[' } else { b',' });
        current.extend_from_slice(bytes);
    }
    if !current.is_empty() {
        current.push(b']');
        chunks.push(current);
    }
    Ok(chunks)
}

/// Storage on the Apify platform: the run's default store and dataset and the named ledger store.
#[derive(Debug)]
pub struct ApifyStorage {
    api: ApiClient,
    run_id: String,
    default_store_id: String,
    dataset_id: String,
    ledger_store_id: OnceCell<String>,
    max_push_bytes: usize,
}

impl ApifyStorage {
    /// Prepares the backend for the run described by `env` (no request is made yet).
    pub async fn connect(env: &PlatformEnv) -> Result<Self, StorageError> {
        let api = ApiClient::new(env)?;
        Self::with_client(env, api)
    }

    /// The same as [`ApifyStorage::connect`] with a given client (e.g. another retry schedule).
    pub fn with_client(env: &PlatformEnv, api: ApiClient) -> Result<Self, StorageError> {
        let required = |value: &Option<String>, name: &str| {
            value.clone().ok_or_else(|| StorageError::Api {
                method: String::new(),
                path: String::new(),
                message: format!("{name} is not set"),
            })
        };
        Ok(ApifyStorage {
            run_id: required(&env.actor_run_id, "ACTOR_RUN_ID")?,
            default_store_id: required(
                &env.default_kv_store_id,
                "ACTOR_DEFAULT_KEY_VALUE_STORE_ID",
            )?,
            dataset_id: required(&env.default_dataset_id, "ACTOR_DEFAULT_DATASET_ID")?,
            api,
            ledger_store_id: OnceCell::new(),
            max_push_bytes: env.max_push_bytes,
        })
    }

    /// The API client, to share with the charging manager.
    pub fn api(&self) -> &ApiClient {
        &self.api
    }

    /// Id of the store, creating the named ledger store on first use.
    async fn store_id(&self, store: Store) -> Result<&str, ApiError> {
        match store {
            Store::Default => Ok(&self.default_store_id),
            Store::Ledger => self
                .ledger_store_id
                .get_or_try_init(|| self.get_or_create_store(LEDGER_STORE_NAME))
                .await
                .map(String::as_str),
        }
    }

    async fn get_or_create_store(&self, name: &str) -> Result<String, ApiError> {
        let request = self
            .api
            .request(Method::POST, &["key-value-stores"])
            .query("name", name);
        let path = request.url.path().to_string();
        let response = self.api.send(request).await?;
        let id = response
            .data()
            .and_then(|data| data.get("id").and_then(Value::as_str).map(str::to_string));
        id.ok_or_else(|| ApiError::Response {
            method: Method::POST,
            path,
            message: "no data.id in the store object".to_string(),
        })
    }
}

impl Storage for ApifyStorage {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self
            .api
            .request(Method::GET, &["key-value-stores", store_id, "records", key])
            .query("attachment", "true")
            .max_body(MAX_READ_BYTES);
        match self.api.send(request).await {
            Ok(response) => Ok(Some(Record {
                bytes: response.body.to_vec(),
                content_type: response.content_type,
            })),
            Err(error) if error.is_record_not_found() => Ok(None),
            Err(ApiError::TooLarge { limit, .. }) => Err(StorageError::TooLarge {
                key: key.to_string(),
                limit,
            }),
            Err(error) => Err(error.into()),
        }
    }

    async fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> Result<(), StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self
            .api
            .request(Method::PUT, &["key-value-stores", store_id, "records", key])
            .body(record.bytes, &record.content_type)?;
        self.api.send(request).await?;
        Ok(())
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        let store_id = self.store_id(store).await?.to_string();
        let mut keys = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let mut request = self
                .api
                .request(Method::GET, &["key-value-stores", &store_id, "keys"])
                .query("limit", "1000");
            if let Some(start) = &start {
                request = request.query("exclusiveStartKey", start);
            }
            let response = self.api.send(request).await?;
            let page: KeysPage = response
                .data()
                .and_then(|data| serde_json::from_value(data).ok())
                .ok_or_else(|| StorageError::Api {
                    method: "GET".to_string(),
                    path: format!("key-value-stores/{store_id}/keys"),
                    message: "the answer is not a list of keys".to_string(),
                })?;
            let last = page.items.last().map(|item| item.key.clone());
            keys.extend(page.items.into_iter().map(|item| item.key));
            match (page.is_truncated, page.next_exclusive_start_key.or(last)) {
                (true, Some(next)) if start.as_deref() != Some(next.as_str()) => start = Some(next),
                _ => break,
            }
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete_record(&self, store: Store, key: &str) -> Result<(), StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self.api.request(
            Method::DELETE,
            &["key-value-stores", store_id, "records", key],
        );
        match self.api.send(request).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_record_not_found() => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    async fn push_items(&self, items: &[Item]) -> Result<(), StorageError> {
        let segments = ["datasets", self.dataset_id.as_str(), "items"];
        let limit = self.max_push_bytes;
        let chunks = chunk_items(items, limit).map_err(|(position, size)| StorageError::Api {
            method: "POST".to_string(),
            path: segments.join("/"),
            message: format!(
                "dataset item {position} is {size} bytes, more than the {limit} a request may carry"
            ),
        })?;
        for chunk in chunks {
            let request = self
                .api
                .request(Method::POST, &segments)
                .body(chunk, "application/json; charset=utf-8")?;
            self.api.send(request).await?;
        }
        Ok(())
    }

    async fn set_status_message(&self, message: &str, terminal: bool) -> Result<(), StorageError> {
        tracing::info!(status = message, terminal, "status message");
        let body = serde_json::json!({
            "statusMessage": message,
            "isStatusMessageTerminal": terminal,
        });
        let request = self
            .api
            .request(Method::PUT, &["actor-runs", &self.run_id])
            .json(&body)?;
        self.api.send(request).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunk: &[u8]) -> Vec<Value> {
        serde_json::from_slice(chunk).unwrap()
    }

    fn items(values: &[Value]) -> Vec<Item> {
        values.iter().map(|v| Item::of(v).unwrap()).collect()
    }

    #[test]
    fn chunks_keep_order_and_stay_under_the_limit() {
        let values: Vec<Value> = (0..50)
            .map(|n| serde_json::json!({"n": n, "pad": "x".repeat(n * 3)}))
            .collect();
        let items = items(&values);
        for limit in [200, 500, 1_000, 100_000] {
            let chunks = chunk_items(&items, limit).unwrap();
            assert!(chunks.iter().all(|c| c.len() <= limit), "limit {limit}");
            let joined: Vec<Value> = chunks.iter().flat_map(|c| parse(c)).collect();
            assert_eq!(joined, values, "limit {limit}");
        }
        assert_eq!(chunk_items(&items, 100_000).unwrap().len(), 1);
        assert!(chunk_items(&items, 1_000).unwrap().len() > 1);
    }

    #[test]
    fn chunk_exactly_at_the_limit() {
        let items = items(&[serde_json::json!(1), serde_json::json!(2)]);
        // "[1,2]" is 5 bytes.
        assert_eq!(chunk_items(&items, 5).unwrap(), vec![b"[1,2]".to_vec()]);
        assert_eq!(
            chunk_items(&items, 4).unwrap(),
            vec![b"[1]".to_vec(), b"[2]".to_vec()]
        );
        assert!(chunk_items(&[], 5).unwrap().is_empty());
    }

    #[test]
    fn an_item_larger_than_the_limit_is_refused() {
        let items = items(&[
            serde_json::json!("small"),
            serde_json::json!("x".repeat(100)),
        ]);
        assert_eq!(chunk_items(&items, 50), Err((1, 102)));
    }

    #[test]
    fn retry_delays_double() {
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (1..=4)
            .map(|n| policy.delay_before(n).as_millis() as u64)
            .collect();
        assert_eq!(delays, vec![500, 1_000, 2_000, 4_000]);
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date_and_is_capped() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let cases = [
            ("2", Some(2)),
            (" 0 ", Some(0)),
            ("3600", Some(MAX_RETRY_AFTER.as_secs())),
            ("Tue, 01 Dec 2026 12:00:05 GMT", Some(5)),
            ("Tue, 01 Dec 2026 11:59:00 GMT", Some(0)),
            (
                "Wed, 02 Dec 2026 12:00:00 GMT",
                Some(MAX_RETRY_AFTER.as_secs()),
            ),
            ("-1", None),
            ("soon", None),
        ];
        for (value, seconds) in cases {
            assert_eq!(
                parse_retry_after(value, now),
                seconds.map(Duration::from_secs),
                "{value}"
            );
        }
    }

    #[test]
    fn error_bodies() {
        let body = br#"{"error":{"type":"record-not-found","message":"Record was not found"}}"#;
        assert_eq!(
            parse_error_body(StatusCode::NOT_FOUND, body),
            (
                "record-not-found".to_string(),
                "Record was not found".to_string()
            )
        );
        assert_eq!(
            parse_error_body(StatusCode::BAD_GATEWAY, b"upstream down"),
            ("bad gateway".to_string(), "upstream down".to_string())
        );
    }

    #[test]
    fn randomness_varies() {
        let values: std::collections::HashSet<u64> = (0..100).map(|_| random_u64()).collect();
        assert!(values.len() > 95);
        assert!(
            (0..100)
                .map(|_| random_unit())
                .all(|x| (0.0..1.0).contains(&x))
        );
    }
}
