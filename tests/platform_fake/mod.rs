//! A fake of the part of the Apify API v2 this Actor uses, served on 127.0.0.1.
//!
//! It keeps key-value records, named stores, dataset items, charges and status messages in
//! memory, answers with the documented envelopes (`{"data": …}`, `{"error": {type, message}}`,
//! 201 on push and charge), records every request, and can be told to fail chosen calls.
//! Charges are de-duplicated by idempotency key, as the platform does.
//!
//! Given the Actor's binary ([`FakeApify::with_actor`]), it also starts runs of the Actor
//! (`POST /v2/acts/{id}/runs`) as real child processes against itself, each with its own
//! default store and dataset, and serves their run objects and dataset items, as a sharded
//! watch needs. It lists an Actor's runs, newest first (`GET /v2/acts/{id}/runs`), the runs it
//! started and those a test adds ([`FakeApify::add_finished_run`]), as `verify` reads them.

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
    /// When the fake received it (for protocol facts such as a `Retry-After` wait).
    pub at: std::time::Instant,
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
    /// A `Retry-After` header to send with the failure.
    pub retry_after: Option<String>,
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
    /// Failures answered to every matching request, for good (an outage).
    pub outages: Vec<Failure>,
    /// The fake's own base URL (for the runs it starts).
    pub base_url: String,
    /// The binary the fake runs for `POST /v2/acts/{id}/runs`; `None` answers 404.
    pub actor_binary: Option<String>,
    /// Extra environment of the runs it starts.
    pub child_env: Vec<(String, String)>,
    /// The run objects of the runs it started, by id.
    pub runs: BTreeMap<String, Value>,
    /// Each started run's standard error, once it ended.
    pub child_stderr: BTreeMap<String, String>,
    /// Charges the started runs made: (run id, charge).
    pub child_charges: Vec<(String, Charge)>,
    /// Run ids in the order the runs started (the list of runs sorts by it).
    pub run_order: Vec<String>,
    /// Datasets the platform has deleted: reading them is a 404.
    pub gone_datasets: Vec<String>,
}

impl FakeState {
    /// The run object of `id` (the main run or one the fake started).
    fn run_object(&mut self, id: &str) -> Option<&mut Value> {
        if id == RUN_ID {
            Some(&mut self.run)
        } else {
            self.runs.get_mut(id)
        }
    }
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
        let handler_state = state.clone();
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(32 * 1024 * 1024))
            .with_state(handler_state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        state.lock().unwrap().base_url = format!("http://{addr}");
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

    /// Lets the fake start runs of `binary` for `POST /v2/acts/{id}/runs`, with `env` added to
    /// the platform environment each run gets.
    pub fn with_actor(&self, binary: &str, env: Vec<(String, String)>) {
        let mut state = self.state();
        state.actor_binary = Some(binary.to_string());
        state.child_env = env;
    }

    /// The run objects of the runs the fake started, once every one of them has ended.
    pub fn started_runs(&self) -> Vec<Value> {
        self.state().runs.values().cloned().collect()
    }

    /// Adds a finished run of `actor` whose default dataset `dataset` holds `items`, started
    /// after every run before it.
    pub fn add_finished_run(&self, actor: &str, id: &str, dataset: &str, items: Vec<Value>) {
        let mut state = self.state();
        let mut run = state.run.clone();
        run["id"] = json!(id);
        run["actId"] = json!(actor);
        run["status"] = json!("SUCCEEDED");
        run["exitCode"] = json!(0);
        run["defaultDatasetId"] = json!(dataset);
        state.runs.insert(id.to_string(), run);
        state.run_order.push(id.to_string());
        state.datasets.insert(dataset.to_string(), items);
    }

    /// Stores `bytes` as record `key` of the named store `name` (created when missing).
    pub fn put_named_record(&self, name: &str, key: &str, bytes: Vec<u8>) {
        let mut state = self.state();
        let count = state.named_stores.len();
        let id = state
            .named_stores
            .entry(name.to_string())
            .or_insert_with(|| format!("kv-named-{}", count + 1))
            .clone();
        state.records.insert(
            (id, key.to_string()),
            (bytes, "application/json".to_string()),
        );
    }

    /// Stores `input` as the run's INPUT record in the default store.
    pub fn put_input(&self, input: &Value) {
        self.state().records.insert(
            (DEFAULT_STORE.to_string(), "INPUT".to_string()),
            (
                serde_json::to_vec(input).unwrap(),
                "application/json".to_string(),
            ),
        );
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
            retry_after: None,
        });
    }

    /// Makes the next request with this method and path fail with 429 and `Retry-After`.
    pub fn rate_limit_next(&self, method: Method, path: &str, retry_after: &str) {
        self.state().failures.push_back(Failure {
            method,
            path: path.to_string(),
            status: 429,
            error_type: "rate-limit-exceeded".to_string(),
            message: "slow down".to_string(),
            retry_after: Some(retry_after.to_string()),
        });
    }

    /// Makes every request with this method and path fail with `status` from now on.
    pub fn fail_always(&self, method: Method, path: &str, status: u16) {
        self.state().outages.push(Failure {
            method,
            path: path.to_string(),
            status,
            error_type: "internal-server-error".to_string(),
            message: "outage".to_string(),
            retry_after: None,
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

/// The query parameters of `uri`.
fn query_map(uri: &Uri) -> HashMap<String, String> {
    url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
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

/// A number query parameter, or `default`.
fn number(query: &HashMap<String, String>, name: &str, default: usize) -> usize {
    query
        .get(name)
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(default)
}

/// Whether a boolean query parameter is set (`true` or `1`).
fn flag(query: &HashMap<String, String>, name: &str) -> bool {
    query.get(name).is_some_and(|v| v == "true" || v == "1")
}

/// `GET /v2/acts/{id}/runs`: the Actor's runs by start, newest first with `desc`, a page of at
/// most `limit` (at most 1000) after `offset`.
fn list_runs(state: &FakeState, actor: &str, query: &HashMap<String, String>) -> Response {
    let mut runs: Vec<Value> = state
        .run_order
        .iter()
        .filter_map(|id| state.runs.get(id))
        .filter(|run| run["actId"] == actor)
        .cloned()
        .collect();
    if flag(query, "desc") {
        runs.reverse();
    }
    let (offset, limit) = (
        number(query, "offset", 0),
        number(query, "limit", 1000).min(1000),
    );
    let total = runs.len();
    let items: Vec<Value> = runs.into_iter().skip(offset).take(limit).collect();
    data(
        StatusCode::OK,
        json!({"total": total, "offset": offset, "limit": limit, "desc": flag(query, "desc"),
               "count": items.len(), "items": items}),
    )
}

/// A page of dataset items: reversed with `desc`, after `offset`, at most `limit`, each with
/// only the `fields` named (comma-separated), as the API serves them (a bare JSON array).
fn dataset_page(mut items: Vec<Value>, query: &HashMap<String, String>) -> Response {
    if flag(query, "desc") {
        items.reverse();
    }
    let fields: Option<Vec<&str>> = query.get("fields").map(|f| f.split(',').collect());
    let page: Vec<Value> = items
        .into_iter()
        .skip(number(query, "offset", 0))
        .take(number(query, "limit", usize::MAX))
        .map(|item| match (&fields, item) {
            (Some(fields), Value::Object(map)) => Value::Object(
                map.into_iter()
                    .filter(|(k, _)| fields.contains(&k.as_str()))
                    .collect(),
            ),
            (_, item) => item,
        })
        .collect();
    (StatusCode::OK, axum::Json(Value::Array(page))).into_response()
}

/// Starts a run of the Actor's binary as the platform would: its INPUT in its own default
/// store, its own dataset, the platform environment pointing at this fake.
fn start_run(
    shared: &Arc<Mutex<FakeState>>,
    state: &mut FakeState,
    actor: &str,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Response {
    let Some(binary) = state.actor_binary.clone() else {
        return error(404, "record-not-found", "Actor was not found");
    };
    let number = state.runs.len() + 2;
    let id = format!("run-{number}");
    let store = format!("kv-run-{number}");
    let dataset = format!("ds-run-{number}");
    state.records.insert(
        (store.clone(), "INPUT".to_string()),
        (body.to_vec(), "application/json".to_string()),
    );
    let max_total = query.get("maxTotalChargeUsd").cloned();
    let mut run = state.run.clone();
    run["id"] = json!(id);
    run["actId"] = json!(actor);
    run["status"] = json!("RUNNING");
    run["exitCode"] = Value::Null;
    run["statusMessage"] = Value::Null;
    run["defaultKeyValueStoreId"] = json!(store);
    run["defaultDatasetId"] = json!(dataset);
    run["buildNumber"] = json!(query.get("build"));
    run["options"]["maxTotalChargeUsd"] = max_total
        .as_deref()
        .and_then(|m| m.parse::<f64>().ok())
        .map_or(Value::Null, |m| json!(m));
    state.runs.insert(id.clone(), run.clone());
    state.run_order.push(id.clone());

    let mut command = std::process::Command::new(binary);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "info")
        .env("APIFY_IS_AT_HOME", "1")
        .env("APIFY_TOKEN", TOKEN)
        .env("APIFY_API_BASE_URL", &state.base_url)
        .env("ACTOR_ID", actor)
        .env("ACTOR_RUN_ID", &id)
        .env("ACTOR_DEFAULT_KEY_VALUE_STORE_ID", &store)
        .env("ACTOR_DEFAULT_DATASET_ID", &dataset)
        .env("LEDGER_API_RETRY_BASE_MS", "1")
        .envs(state.child_env.clone())
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::null());
    if let Some(max_total) = &max_total {
        command.env("ACTOR_MAX_TOTAL_CHARGE_USD", max_total);
    }
    let shared = shared.clone();
    let run_id = id.clone();
    tokio::task::spawn_blocking(move || {
        let output = command.output();
        let mut state = shared.lock().unwrap();
        let (code, stderr) = match output {
            Ok(output) => (
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            ),
            Err(error) => (-1, format!("could not start the Actor: {error}")),
        };
        state.child_stderr.insert(run_id.clone(), stderr);
        if let Some(run) = state.runs.get_mut(&run_id) {
            run["status"] = json!(if code == 0 { "SUCCEEDED" } else { "FAILED" });
            run["exitCode"] = json!(code);
        }
    });
    data(StatusCode::CREATED, run)
}

async fn handle(
    State(shared): State<Arc<Mutex<FakeState>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = shared.lock().unwrap();
    let path = uri.path().to_string();
    state.requests.push(Recorded {
        method: method.clone(),
        path: path.clone(),
        query: uri.query().map(str::to_string),
        headers: headers.clone(),
        body: body.clone(),
        at: std::time::Instant::now(),
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
        let mut response = error(failure.status, &failure.error_type, &failure.message);
        if let Some(wait) = &failure.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, wait.parse().unwrap());
        }
        return response;
    }
    if let Some(outage) = state
        .outages
        .iter()
        .find(|f| f.method == method && f.path == path)
    {
        return error(outage.status, &outage.error_type, &outage.message);
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
            let query = query_map(&uri);
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
        (Method::GET, ["v2", "acts", actor, "runs"]) => list_runs(&state, actor, &query_map(&uri)),
        (Method::POST, ["v2", "acts", actor, "runs"]) => {
            let query = query_map(&uri);
            start_run(&shared, &mut state, actor, &query, &body)
        }
        (Method::GET, ["v2", "datasets", dataset, "items"]) => {
            if state.gone_datasets.iter().any(|d| d == dataset) {
                return error(404, "record-not-found", "Dataset was not found");
            }
            let items = state.datasets.get(*dataset).cloned().unwrap_or_default();
            dataset_page(items, &query_map(&uri))
        }
        (Method::GET, ["v2", "actor-runs", run]) => match state.run_object(run) {
            Some(object) => data(StatusCode::OK, object.clone()),
            None => error(404, "record-not-found", "Actor run was not found"),
        },
        (Method::PUT, ["v2", "actor-runs", run]) => {
            let Ok(update) = serde_json::from_slice::<Value>(&body) else {
                return error(400, "invalid-input", "body must be JSON");
            };
            let message = update["statusMessage"].as_str().unwrap_or("").to_string();
            let terminal = update["isStatusMessageTerminal"].as_bool().unwrap_or(false);
            let run = run.to_string();
            let Some(object) = state.run_object(&run) else {
                return error(404, "record-not-found", "Actor run was not found");
            };
            object["statusMessage"] = json!(message);
            if run == RUN_ID {
                state.status_messages.push((message.clone(), terminal));
            }
            data(
                StatusCode::OK,
                json!({"id": run, "statusMessage": message, "isStatusMessageTerminal": terminal}),
            )
        }
        (Method::POST, ["v2", "actor-runs", run, "charge"]) => {
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
            let charge = Charge {
                event: event.to_string(),
                count,
                idempotency_key: key,
            };
            if *run != RUN_ID {
                if !state.runs.contains_key(*run) {
                    return error(404, "record-not-found", "Actor run was not found");
                }
                state.child_charges.push((run.to_string(), charge));
                return empty_created();
            }
            let seen = !charge.idempotency_key.is_empty()
                && state
                    .charges
                    .iter()
                    .any(|c| c.idempotency_key == charge.idempotency_key);
            if !seen {
                state.charges.push(charge);
            }
            empty_created()
        }
        _ => error(404, "page-not-found", "This page was not found"),
    }
}

/// Runs the Actor's `binary` to the end as a platform run would start: in an empty working
/// directory, with only `vars` (and `PATH`) in its environment. Panics if the run left any
/// local file behind, since a run at home keeps everything on the platform.
pub async fn run_at_home(binary: &str, vars: Vec<(String, String)>) -> std::process::Output {
    let cwd = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(binary);
    command
        .current_dir(cwd.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "info")
        .envs(vars)
        .stdin(std::process::Stdio::null());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "a platform run wrote local files: {left:?}"
    );
    output
}

/// Like [`run_at_home`], and also the child's peak resident memory in KiB (`VmHWM` of
/// `/proc/<pid>/status`, polled until it exits; 0 where `/proc` is not there).
pub async fn run_at_home_measured(
    binary: &str,
    vars: Vec<(String, String)>,
) -> (std::process::ExitStatus, String, u64) {
    let cwd = tempfile::tempdir().unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut command = std::process::Command::new(binary);
    command
        .current_dir(cwd.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "info")
        .envs(vars)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log.reopen().unwrap());
    let (status, peak) = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let status_file = format!("/proc/{}/status", child.id());
        let mut peak = 0;
        loop {
            let hwm = std::fs::read_to_string(&status_file)
                .ok()
                .and_then(|status| {
                    let line = status
                        .lines()
                        .find(|l| l.starts_with("VmHWM:"))?
                        .to_string();
                    line.split_whitespace().nth(1)?.parse::<u64>().ok()
                });
            peak = peak.max(hwm.unwrap_or(0));
            if let Some(status) = child.try_wait().unwrap() {
                return (status, peak);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    })
    .await
    .unwrap();
    let stderr = std::fs::read_to_string(log.path()).unwrap_or_default();
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "a platform run wrote local files: {left:?}"
    );
    (status, stderr, peak)
}
