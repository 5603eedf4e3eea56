//! A fake of the part of the Apify API v2 this Actor uses, served on 127.0.0.1.
//!
//! It keeps key-value records, named stores, dataset items, charges and status messages in
//! memory, answers with the documented envelopes (`{"data": …}`, `{"error": {type, message}}`,
//! 201 on push and charge), records every request, and can be told to fail chosen calls.
//! Charges are de-duplicated by idempotency key, as the platform does.

// Test support code: panicking on a broken fake is the right failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The token the fake accepts.
pub const TOKEN: &str = "test-token-123";
/// The run id the fake serves.
pub const RUN_ID: &str = "run-1";
/// The run's default key-value store.
pub const DEFAULT_STORE: &str = "kv-default";
/// The run's default dataset.
pub const DATASET: &str = "ds-default";

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// A charge the platform accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub event: String,
    pub count: u64,
    pub idempotency_key: String,
}

/// A scripted failure: the next request matching `method` and `path` gets this answer instead.
#[derive(Debug, Clone)]
pub struct Failure {
    pub method: Method,
    pub path: String,
    pub status: u16,
    pub error_type: String,
    pub message: String,
}

/// Everything the fake knows.
#[derive(Debug, Default)]
pub struct FakeState {
    pub requests: Vec<Recorded>,
    /// (store id, key) → (bytes, content type).
    pub records: HashMap<(String, String), (Vec<u8>, String)>,
    /// Named store → id.
    pub named_stores: BTreeMap<String, String>,
    pub datasets: HashMap<String, Vec<Value>>,
    pub charges: Vec<Charge>,
    pub status_messages: Vec<(String, bool)>,
    /// The run object served by `GET /v2/actor-runs/{RUN_ID}`.
    pub run: Value,
    pub failures: VecDeque<Failure>,
}

/// The running fake.
pub struct FakeApify {
    pub addr: SocketAddr,
    state: Arc<Mutex<FakeState>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApify {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeApify {
    /// Starts the fake on a free port of 127.0.0.1.
    pub async fn start() -> FakeApify {
        let state = Arc::new(Mutex::new(FakeState {
            run: json!({"id": RUN_ID, "pricingInfo": {}, "chargedEventCounts": {}, "options": {}}),
            ..FakeState::default()
        }));
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(32 * 1024 * 1024))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        FakeApify {
            addr,
            state,
            server,
        }
    }

    /// The base URL to put into `APIFY_API_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Environment of a platform run against this fake (retries 1 ms apart).
    pub fn env_vars(&self) -> Vec<(String, String)> {
        [
            ("APIFY_IS_AT_HOME", "1"),
            ("APIFY_TOKEN", TOKEN),
            ("ACTOR_RUN_ID", RUN_ID),
            ("ACTOR_DEFAULT_KEY_VALUE_STORE_ID", DEFAULT_STORE),
            ("ACTOR_DEFAULT_DATASET_ID", DATASET),
            ("LEDGER_API_RETRY_BASE_MS", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([("APIFY_API_BASE_URL".to_string(), self.base_url())])
        .collect()
    }

    pub fn state(&self) -> MutexGuard<'_, FakeState> {
        self.state.lock().unwrap()
    }

    /// Makes the next request with this method and path fail with `status`.
    pub fn fail_next(
        &self,
        method: Method,
        path: &str,
        status: u16,
        error_type: &str,
        message: &str,
    ) {
        self.state().failures.push_back(Failure {
            method,
            path: path.to_string(),
            status,
            error_type: error_type.to_string(),
            message: message.to_string(),
        });
    }

    /// The recorded requests with this method whose path starts with `prefix`.
    pub fn requests_to(&self, method: Method, prefix: &str) -> Vec<Recorded> {
        self.state()
            .requests
            .iter()
            .filter(|r| r.method == method && r.path.starts_with(prefix))
            .cloned()
            .collect()
    }
}

fn error(status: u16, error_type: &str, message: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap();
    let body = json!({"error": {"type": error_type, "message": message}});
    (status, axum::Json(body)).into_response()
}

fn data(status: StatusCode, value: Value) -> Response {
    (status, axum::Json(json!({ "data": value }))).into_response()
}

fn empty_created() -> Response {
    (StatusCode::CREATED, axum::Json(json!({}))).into_response()
}

async fn handle(
    State(state): State<Arc<Mutex<FakeState>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = state.lock().unwrap();
    let path = uri.path().to_string();
    state.requests.push(Recorded {
        method: method.clone(),
        path: path.clone(),
        query: uri.query().map(str::to_string),
        headers: headers.clone(),
        body: body.clone(),
    });

    let authorized = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    if !authorized {
        return error(
            401,
            "token-not-provided",
            "Authentication token was not provided",
        );
    }
    if let Some(position) = state
        .failures
        .iter()
        .position(|f| f.method == method && f.path == path)
    {
        let failure = state.failures.remove(position).unwrap();
        return error(failure.status, &failure.error_type, &failure.message);
    }

    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method.clone(), segments.as_slice()) {
        (Method::GET, ["v2", "key-value-stores", store, "records", key]) => {
            match state.records.get(&(store.to_string(), key.to_string())) {
                Some((bytes, content_type)) => (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, content_type.clone())],
                    bytes.clone(),
                )
                    .into_response(),
                None => error(404, "record-not-found", "Record was not found"),
            }
        }
        (Method::PUT, ["v2", "key-value-stores", store, "records", key]) => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/octet-stream")
                .to_string();
            state.records.insert(
                (store.to_string(), key.to_string()),
                (body.to_vec(), content_type),
            );
            empty_created()
        }
        (Method::GET, ["v2", "key-value-stores", store, "keys"]) => {
            // Pages of at most `limit` (here never more than 2, to exercise paging), after
            // `exclusiveStartKey`, in key order, as the API lists them.
            let query: HashMap<String, String> =
                url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                    .into_owned()
                    .collect();
            let limit = query
                .get("limit")
                .and_then(|l| l.parse::<usize>().ok())
                .unwrap_or(1000)
                .min(2);
            let start = query.get("exclusiveStartKey").cloned().unwrap_or_default();
            let mut keys: Vec<&String> = state
                .records
                .keys()
                .filter(|(s, k)| s == store && *k > start)
                .map(|(_, k)| k)
                .collect();
            keys.sort();
            let truncated = keys.len() > limit;
            let page: Vec<Value> = keys
                .iter()
                .take(limit)
                .map(|k| json!({"key": k, "size": 1}))
                .collect();
            let next = page
                .last()
                .and_then(|item| item["key"].as_str())
                .map(str::to_string);
            data(
                StatusCode::OK,
                json!({
                    "items": page,
                    "count": page.len(),
                    "limit": limit,
                    "isTruncated": truncated,
                    "nextExclusiveStartKey": if truncated { next } else { None },
                }),
            )
        }
        (Method::DELETE, ["v2", "key-value-stores", store, "records", key]) => {
            match state.records.remove(&(store.to_string(), key.to_string())) {
                Some(_) => StatusCode::NO_CONTENT.into_response(),
                None => error(404, "record-not-found", "Record was not found"),
            }
        }
        (Method::POST, ["v2", "key-value-stores"]) => {
            let name = url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                .find(|(k, _)| k == "name")
                .map(|(_, v)| v.into_owned());
            let Some(name) = name else {
                return error(400, "invalid-input", "this fake only creates named stores");
            };
            if let Some(id) = state.named_stores.get(&name) {
                return data(StatusCode::OK, json!({"id": id, "name": name}));
            }
            let id = format!("kv-named-{}", state.named_stores.len() + 1);
            state.named_stores.insert(name.clone(), id.clone());
            data(StatusCode::CREATED, json!({"id": id, "name": name}))
        }
        (Method::POST, ["v2", "datasets", dataset, "items"]) => {
            let items = match serde_json::from_slice::<Value>(&body) {
                Ok(Value::Array(items)) => items,
                Ok(item @ Value::Object(_)) => vec![item],
                _ => return error(400, "invalid-input", "body must be an object or an array"),
            };
            state
                .datasets
                .entry(dataset.to_string())
                .or_default()
                .extend(items);
            empty_created()
        }
        (Method::GET, ["v2", "actor-runs", run]) if *run == RUN_ID => {
            data(StatusCode::OK, state.run.clone())
        }
        (Method::PUT, ["v2", "actor-runs", run]) if *run == RUN_ID => {
            let Ok(update) = serde_json::from_slice::<Value>(&body) else {
                return error(400, "invalid-input", "body must be JSON");
            };
            let message = update["statusMessage"].as_str().unwrap_or("").to_string();
            let terminal = update["isStatusMessageTerminal"].as_bool().unwrap_or(false);
            state.status_messages.push((message.clone(), terminal));
            data(
                StatusCode::OK,
                json!({"id": RUN_ID, "statusMessage": message, "isStatusMessageTerminal": terminal}),
            )
        }
        (Method::POST, ["v2", "actor-runs", run, "charge"]) if *run == RUN_ID => {
            let Ok(charge) = serde_json::from_slice::<Value>(&body) else {
                return error(400, "invalid-input", "body must be JSON");
            };
            let (Some(event), Some(count)) =
                (charge["eventName"].as_str(), charge["count"].as_u64())
            else {
                return error(400, "invalid-input", "eventName and count are required");
            };
            let key = headers
                .get("idempotency-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let seen = !key.is_empty() && state.charges.iter().any(|c| c.idempotency_key == key);
            if !seen {
                state.charges.push(Charge {
                    event: event.to_string(),
                    count,
                    idempotency_key: key,
                });
            }
            empty_created()
        }
        _ => error(404, "page-not-found", "This page was not found"),
    }
}
