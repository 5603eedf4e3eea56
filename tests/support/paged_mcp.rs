//! A hand-written modern MCP server (`server/discover` and the four list methods) that answers
//! with result bytes the test wrote, page by page, and counts the requests it received.
//!
//! The replay and fast-path tests need to control every byte of every answer (a one-byte edit
//! in a later cursor page, in the server info, in a resource template) and to serve the
//! prompts, resources and templates of a release; the real peers cannot be made to do either.
//! Each served result is kept as text and spliced into the JSON-RPC envelope unchanged.
//!
//! Include with `#[path = "support/paged_mcp.rs"] mod paged_mcp;` next to `mod support;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::support::background;

/// Every answer of one release, as the exact result text of each method and page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers {
    /// The `server/discover` result.
    pub discover: String,
    /// The result pages of each list method (`tools/list`, …), first page first.
    pub pages: BTreeMap<String, Vec<String>>,
}

/// What a release declares, before it is written out as answers.
#[derive(Debug, Clone, Default)]
pub struct Release {
    /// `serverInfo` (`name`, `version`, …).
    pub server_info: Value,
    /// The `instructions` text, if any.
    pub instructions: Option<String>,
    /// Tools; always declared.
    pub tools: Vec<Value>,
    /// Prompts; declared when `Some`.
    pub prompts: Option<Vec<Value>>,
    /// Resources and templates; declared when `resources` is `Some`.
    pub resources: Option<Vec<Value>>,
    /// Resource templates (only served when resources are declared).
    pub templates: Vec<Value>,
    /// Items per page of every list.
    pub page_size: usize,
}

impl Release {
    /// A release written as JSON: `server_info`, `instructions`, `page_size`, `tools`, and
    /// (each declared when present) `prompts`, `resources`, `resource_templates`.
    pub fn from_file(path: &std::path::Path) -> Release {
        let value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let list = |key: &str| value.get(key).and_then(Value::as_array).cloned();
        Release {
            server_info: value["server_info"].clone(),
            instructions: value["instructions"].as_str().map(str::to_string),
            tools: list("tools").unwrap_or_default(),
            prompts: list("prompts"),
            resources: list("resources"),
            templates: list("resource_templates").unwrap_or_default(),
            page_size: value["page_size"].as_u64().unwrap_or(2) as usize,
        }
    }

    /// The answers this release serves, deterministic for the same release.
    pub fn answers(&self) -> Answers {
        let mut capabilities = json!({"tools": {}});
        let mut pages = BTreeMap::new();
        pages.insert(
            "tools/list".to_string(),
            paged("tools", &self.tools, self.page_size),
        );
        if let Some(prompts) = &self.prompts {
            capabilities["prompts"] = json!({});
            pages.insert(
                "prompts/list".to_string(),
                paged("prompts", prompts, self.page_size),
            );
        }
        if let Some(resources) = &self.resources {
            capabilities["resources"] = json!({});
            pages.insert(
                "resources/list".to_string(),
                paged("resources", resources, self.page_size),
            );
            pages.insert(
                "resources/templates/list".to_string(),
                paged("resourceTemplates", &self.templates, self.page_size),
            );
        }
        let mut discover = json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": capabilities,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": self.server_info},
        });
        if let Some(text) = &self.instructions {
            discover["instructions"] = json!(text);
        }
        Answers {
            discover: discover.to_string(),
            pages,
        }
    }
}

/// The result pages of one list: `page_size` items each, chained by `nextCursor` `p<k>`.
fn paged(key: &str, items: &[Value], page_size: usize) -> Vec<String> {
    let size = page_size.max(1);
    let chunks: Vec<&[Value]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(size).collect()
    };
    let last = chunks.len() - 1;
    chunks
        .iter()
        .enumerate()
        .map(|(k, chunk)| {
            let mut page = json!({key: chunk, "resultType": "complete"});
            if k < last {
                page["nextCursor"] = json!(format!("p{}", k + 1));
            }
            page.to_string()
        })
        .collect()
}

struct Shared {
    answers: RwLock<Answers>,
    requests: AtomicUsize,
    unauthorized: AtomicBool,
}

/// A running paged server.
pub struct PagedMcp {
    /// Its MCP endpoint.
    pub url: String,
    shared: Arc<Shared>,
}

impl PagedMcp {
    /// Starts serving `answers` on a fresh 127.0.0.1 port.
    pub fn start(answers: Answers) -> PagedMcp {
        let shared = Arc::new(Shared {
            answers: RwLock::new(answers),
            requests: AtomicUsize::new(0),
            unauthorized: AtomicBool::new(false),
        });
        let router = Router::new()
            .route("/mcp", post(answer))
            .with_state(shared.clone());
        let addr = background::serve(router);
        PagedMcp {
            url: format!("http://{addr}/mcp"),
            shared,
        }
    }

    /// Serves `answers` from now on.
    pub fn set(&self, answers: Answers) {
        *self.shared.answers.write().unwrap() = answers;
    }

    /// The answers served now.
    pub fn answers(&self) -> Answers {
        self.shared.answers.read().unwrap().clone()
    }

    /// Answers every request with 401 and a bearer challenge while `on`.
    pub fn set_unauthorized(&self, on: bool) {
        self.shared.unauthorized.store(on, Ordering::SeqCst);
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }
}

fn envelope(id: &Value, member: &str, text: &str) -> Response {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"{member}":{text}}}"#);
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn answer(State(shared): State<Arc<Shared>>, body: String) -> Response {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    if shared.unauthorized.load(Ordering::SeqCst) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response();
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return StatusCode::ACCEPTED.into_response();
    };
    let answers = shared.answers.read().unwrap().clone();
    if method == "server/discover" {
        return envelope(&id, "result", &answers.discover);
    }
    let page = request
        .pointer("/params/cursor")
        .and_then(Value::as_str)
        .and_then(|cursor| cursor.strip_prefix('p'))
        .and_then(|k| k.parse::<usize>().ok())
        .unwrap_or(0);
    match answers.pages.get(method).and_then(|pages| pages.get(page)) {
        Some(text) => envelope(&id, "result", text),
        None => envelope(
            &id,
            "error",
            r#"{"code":-32601,"message":"method not found"}"#,
        ),
    }
}
