//! A fleet of fast MCP servers on loopback, for the whole-run benchmark (`bench/run.sh`).
//!
//! Server `i` answers `POST /s<i>/mcp` with the same tool list as every other server but its own
//! identity (`serverInfo.name` is `bench-fleet-<i>`), so each one is a separate ledger entry with
//! its own surface record and insight, as in a real fleet. It speaks both protocol eras, with
//! JSON responses only:
//! - 2026-07-28 stateless: `server/discover` (serverInfo in `_meta`) and `tools/list` with the
//!   `_meta` envelope (`resultType`, `ttlMs`, `cacheScope`, serverInfo);
//! - classic Streamable HTTP: `initialize` → `notifications/initialized` (202) → `tools/list`,
//!   stateless (no session id).
//!
//! `--prompts P --resources R` (default 0) also declare the `prompts` and `resources`
//! capabilities and list P prompts, R resources and one resource template (one page each).
//!
//! Every answer (errors and 202s included) waits `--delay-ms` first: a stand-in for the network
//! round-trip time, so a client's wall time shows how many round trips it spends.
//!
//! ```text
//! cargo run --release --example bench_fleet -- --servers 100 --delay-ms 50 --urls-out urls.txt
//! ```
//! By default every server has its own listener (its own origin, so the client opens its own
//! connections, as with real servers); `--listeners L` spreads the servers over L listeners
//! instead (server `i` on listener `i % L`), for fleets larger than the open-file limit allows.
//! `--shared-surfaces S` gives server `i` the identity of server `i % S` instead, so S surfaces
//! are served by the whole fleet (one product hosted per tenant or region, as real fleets look):
//! the ledger then has one surface record per identity that many servers, and shards, write.
//! The URLs (one a line) go to `--urls-out` (or stdout); `READY <n>` on stdout says the fleet
//! listens. It runs until interrupted or killed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The modern protocol version the fleet speaks.
const MODERN: &str = "2026-07-28";
/// Classic versions the fleet accepts in `initialize`, newest first.
const CLASSIC: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// What stands for the server's number in the pre-serialized answers.
const NUMBER_MARK: &str = "@@SERVER_NUMBER@@";
/// The real surface used by default, relative to the crate root.
const DEFAULT_SURFACE: &str = "../shared/fixtures/github-mcp-server/v1.6.0.json";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Command-line settings.
#[derive(Debug)]
struct Settings {
    servers: usize,
    /// TCP listeners; `None` is one per server.
    listeners: Option<usize>,
    delay: Duration,
    tools: usize,
    tools_file: Option<PathBuf>,
    urls_out: Option<PathBuf>,
    /// Distinct identities served; `None` is one per server.
    shared_surfaces: Option<usize>,
    /// Prompts each server lists (0: no `prompts` capability).
    prompts: usize,
    /// Resources each server lists, with one template (0: no `resources` capability).
    resources: usize,
}

impl Settings {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Settings, BoxError> {
        let mut settings = Settings {
            servers: 100,
            listeners: None,
            delay: Duration::from_millis(50),
            tools: 50,
            tools_file: None,
            urls_out: None,
            shared_surfaces: None,
            prompts: 0,
            resources: 0,
        };
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or(format!("{flag} needs a value"));
            match flag.as_str() {
                "--servers" => settings.servers = value()?.parse()?,
                "--listeners" => settings.listeners = Some(value()?.parse()?),
                "--delay-ms" => settings.delay = Duration::from_millis(value()?.parse()?),
                "--tools" => settings.tools = value()?.parse()?,
                "--tools-file" => settings.tools_file = Some(value()?.into()),
                "--urls-out" => settings.urls_out = Some(value()?.into()),
                "--shared-surfaces" => settings.shared_surfaces = Some(value()?.parse()?),
                "--prompts" => settings.prompts = value()?.parse()?,
                "--resources" => settings.resources = value()?.parse()?,
                other => return Err(format!("unknown argument {other:?}").into()),
            }
        }
        Ok(settings)
    }
}

/// A pre-serialized answer, cut where the server's number goes.
struct Template {
    parts: Vec<String>,
}

impl Template {
    fn new(value: &Value) -> Result<Template, BoxError> {
        let text = serde_json::to_string(value)?;
        Ok(Template {
            parts: text.split(NUMBER_MARK).map(str::to_string).collect(),
        })
    }

    /// The answer of server `number`.
    fn fill(&self, number: usize) -> String {
        self.parts.join(&number.to_string())
    }
}

/// What the servers of the fleet answer with; the JSON results are serialized once, with a
/// mark where each server puts its number.
struct Fleet {
    servers: usize,
    /// Distinct identities: server `i` answers as server `i % identities`.
    identities: usize,
    delay: Duration,
    discover: Template,
    initialize: Template,
    tools_modern: Template,
    tools_classic: String,
    /// `(method, modern answer, classic answer)` of the other lists the servers declare.
    lists: Vec<(&'static str, Template, String)>,
}

impl Fleet {
    fn new(
        tools: Vec<Value>,
        servers: usize,
        identities: usize,
        delay: Duration,
        (prompts, resources): (usize, usize),
    ) -> Result<Fleet, BoxError> {
        let name = format!("bench-fleet-{NUMBER_MARK}");
        let server_info = json!({"name": name, "version": "1.0.0"});
        let meta = json!({"io.modelcontextprotocol/serverInfo": server_info});
        let mut capabilities = json!({"tools": {"listChanged": false}});
        let mut other_lists: Vec<(&'static str, &'static str, Value)> = Vec::new();
        if prompts > 0 {
            capabilities["prompts"] = json!({});
            let items: Vec<Value> = (0..prompts)
                .map(|i| {
                    json!({"name": format!("prompt_{i:03}"),
                           "description": format!("Drafts a reply to issue {i} of a repository"),
                           "arguments": [{"name": "owner", "required": true},
                                         {"name": "repo", "required": true},
                                         {"name": "tone", "description": "How the reply sounds"}]})
                })
                .collect();
            other_lists.push(("prompts/list", "prompts", Value::Array(items)));
        }
        if resources > 0 {
            capabilities["resources"] = json!({});
            let items: Vec<Value> = (0..resources)
                .map(|i| {
                    json!({"uri": format!("file:///repo/docs/page-{i:03}.md"),
                           "name": format!("page-{i:03}.md"), "mimeType": "text/markdown",
                           "description": format!("Documentation page {i}")})
                })
                .collect();
            other_lists.push(("resources/list", "resources", Value::Array(items)));
            let template = json!([{"name": "issue", "uriTemplate": "repo://issues/{number}",
                                   "description": "One issue of the repository"}]);
            other_lists.push(("resources/templates/list", "resourceTemplates", template));
        }
        let mut lists = Vec::new();
        for (method, key, items) in other_lists {
            let modern = json!({
                key: items, "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "_meta": meta,
            });
            let classic = json!({ key: items });
            lists.push((
                method,
                Template::new(&modern)?,
                serde_json::to_string(&classic)?,
            ));
        }
        let discover = json!({
            "supportedVersions": [MODERN],
            "capabilities": capabilities,
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": meta,
        });
        let initialize = json!({
            "protocolVersion": CLASSIC[0],
            "capabilities": capabilities,
            "serverInfo": server_info,
        });
        let tools_modern = json!({
            "tools": tools,
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": meta,
        });
        let tools_classic = json!({ "tools": tools });
        Ok(Fleet {
            servers,
            identities: identities.max(1),
            delay,
            discover: Template::new(&discover)?,
            initialize: Template::new(&initialize)?,
            tools_modern: Template::new(&tools_modern)?,
            tools_classic: serde_json::to_string(&tools_classic)?,
            lists,
        })
    }

    /// The answer of server `number` to one POSTed JSON-RPC message.
    fn answer(&self, number: usize, headers: &HeaderMap, body: &[u8]) -> Response {
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            return error(StatusCode::BAD_REQUEST, &Value::Null, -32700, "Parse error");
        };
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let identity = number % self.identities;
        let Some(id) = message.get("id") else {
            // A notification (`notifications/initialized`) or a response: accepted.
            return StatusCode::ACCEPTED.into_response();
        };
        let version = headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok());
        let modern = version.is_some_and(|v| v.starts_with("2026"));
        if modern && version != Some(MODERN) {
            let data = json!({"supported": [MODERN], "requested": version});
            return error_with(
                StatusCode::BAD_REQUEST,
                id,
                -32022,
                "Unsupported protocol version",
                data,
            );
        }
        if let Some((_, template, classic)) = self.lists.iter().find(|(m, _, _)| *m == method) {
            return if modern {
                result(id, &template.fill(identity))
            } else {
                result(id, classic)
            };
        }
        match (method, modern) {
            ("server/discover", true) => result(id, &self.discover.fill(identity)),
            ("tools/list", true) => result(id, &self.tools_modern.fill(identity)),
            ("initialize", false) => {
                let asked = message
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let answer = self.initialize.fill(identity);
                if CLASSIC.contains(&asked) && asked != CLASSIC[0] {
                    result(id, &answer.replacen(CLASSIC[0], asked, 1))
                } else {
                    result(id, &answer)
                }
            }
            ("tools/list", false) => result(id, &self.tools_classic),
            ("server/discover", false) => error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32000,
                "Bad Request: Server not initialized",
            ),
            (_, true) => error(StatusCode::NOT_FOUND, id, -32601, "Method not found"),
            (_, false) => error(StatusCode::OK, id, -32601, "Method not found"),
        }
    }
}

fn json_response(status: StatusCode, text: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// A success response around a pre-serialized result.
fn result(id: &Value, result: &str) -> Response {
    json_response(
        StatusCode::OK,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
    )
}

fn error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    json_response(status, body.to_string())
}

fn error_with(status: StatusCode, id: &Value, code: i64, message: &str, data: Value) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": data},
    });
    json_response(status, body.to_string())
}

/// The server number of a path segment `s<i>`, when the fleet has that server.
fn server_number(fleet: &Fleet, segment: &str) -> Option<usize> {
    let number = segment.strip_prefix('s')?.parse().ok()?;
    (number < fleet.servers).then_some(number)
}

async fn post_mcp(
    State(fleet): State<Arc<Fleet>>,
    UrlPath(segment): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    tokio::time::sleep(fleet.delay).await;
    match server_number(&fleet, &segment) {
        Some(number) => fleet.answer(number, &headers, &body),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn not_allowed(State(fleet): State<Arc<Fleet>>) -> Response {
    tokio::time::sleep(fleet.delay).await;
    StatusCode::METHOD_NOT_ALLOWED.into_response()
}

/// The tool list: the first `count` tools of `file` (or of the default real surface), padded
/// with generated tools when the file has fewer or is absent.
fn load_tools(file: Option<&Path>, count: usize) -> Result<Vec<Value>, BoxError> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SURFACE);
    let path = file.unwrap_or(&default);
    let mut tools = match std::fs::read(path) {
        Ok(bytes) => {
            let value: Value = serde_json::from_slice(&bytes)?;
            let list = value.get("tools").unwrap_or(&value);
            list.as_array()
                .ok_or(format!("{} holds no tools array", path.display()))?
                .clone()
        }
        Err(error) if file.is_some() => return Err(error.into()),
        Err(_) => {
            eprintln!(
                "bench_fleet: {} not found, generating tools",
                path.display()
            );
            Vec::new()
        }
    };
    tools.truncate(count);
    while tools.len() < count {
        tools.push(generated_tool(tools.len()));
    }
    Ok(tools)
}

fn generated_tool(i: usize) -> Value {
    json!({
        "name": format!("generated_tool_{i:03}"),
        "description": format!("Generated tool number {i} for the benchmark fleet."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
                "page": {"type": "number", "minimum": 1},
            },
            "required": ["owner", "repo"],
        },
        "annotations": {"readOnlyHint": i.is_multiple_of(2)},
    })
}

async fn serve(settings: Settings) -> Result<(), BoxError> {
    let tools = load_tools(settings.tools_file.as_deref(), settings.tools)?;
    let identities = settings.shared_surfaces.unwrap_or(settings.servers);
    let fleet = Arc::new(Fleet::new(
        tools,
        settings.servers,
        identities,
        settings.delay,
        (settings.prompts, settings.resources),
    )?);
    let app = Router::new()
        .route(
            "/{server}/mcp",
            post(post_mcp).get(not_allowed).delete(not_allowed),
        )
        .with_state(fleet);
    let listeners = settings
        .listeners
        .unwrap_or(settings.servers)
        .clamp(1, settings.servers.max(1));
    let mut addresses = Vec::with_capacity(listeners);
    for _ in 0..listeners {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|error| {
            format!(
                "cannot open listener {} of {listeners} ({error}); raise the open-file limit \
                 (ulimit -n) or pass a smaller --listeners",
                addresses.len() + 1
            )
        })?;
        addresses.push(listener.local_addr()?);
        let app = app.clone();
        tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("bench_fleet: a server stopped: {error}");
            }
        });
    }
    let mut urls = String::new();
    for number in 0..settings.servers {
        let address = addresses[number % listeners];
        urls.push_str(&format!("http://{address}/s{number}/mcp\n"));
    }
    match &settings.urls_out {
        Some(path) => std::fs::write(path, &urls)?,
        None => print!("{urls}"),
    }
    println!("READY {}", settings.servers);
    // Serve until interrupted (the script that started us sends SIGINT or SIGTERM).
    tokio::signal::ctrl_c().await?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let settings = match Settings::parse(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("bench_fleet: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build();
    let outcome = match runtime {
        Ok(runtime) => runtime.block_on(serve(settings)),
        Err(error) => Err(error.into()),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench_fleet: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
