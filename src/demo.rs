//! `demo-server`: a small MCP server on loopback for the README's quick start, so a first watch
//! needs nothing but this binary.
//!
//! It is a notes server built on the `rmcp` crate (Streamable HTTP, stateless, both protocol
//! eras), serving one of two releases:
//!
//! - release 1, `notes-server` 1.4.0: `search_notes(query)`;
//! - release 2, `notes-server` 1.5.0: `search_notes(query, folder)` (a new required parameter)
//!   and a new `delete_note(id)` tool without annotations.
//!
//! `demo-server --change URL` tells a running demo server to switch to the other release (a
//! `POST` to its control route, answered once the switch is done, so the next request sees the
//! new tools); `--stop URL` ends it; `--background URL` starts it detached and returns once it
//! accepts connections. The control routes answer only requests carrying the header
//! [`CONTROL_HEADER`], which a web page cannot send without a preflight this server never
//! answers. It listens on loopback addresses only.
//!
//! It lives in the main binary (rather than as a cargo example) so that the quick start's
//! commands need nothing but the installed binary, and its test runs them verbatim.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use url::Url;

use crate::run::{EXIT_BAD_INPUT, EXIT_RUNTIME};

/// The endpoint the demo server serves when none is given.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8000/mcp";
/// The header the control routes require (any value).
pub const CONTROL_HEADER: &str = "x-demo-control";
/// The control route that switches to the other release.
pub const CHANGE_PATH: &str = "/demo/change";
/// The control route that stops the server.
pub const STOP_PATH: &str = "/demo/stop";
/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "notes-server";
/// How long `--background` waits for the server to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// What `demo-server` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoAction {
    /// Serve in the foreground until Ctrl-C, SIGTERM or `--stop`.
    Serve,
    /// Start the server detached and return once it accepts connections.
    Background,
    /// Tell a running demo server to switch to its other release.
    Change,
    /// Tell a running demo server to stop.
    Stop,
}

/// Why `demo-server` failed, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The URL is not a loopback `http://` endpoint (exit code 2).
    #[error("{0}")]
    BadUrl(String),
    /// Listening, starting or reaching the server failed (exit code 3).
    #[error("{0}")]
    Runtime(String),
}

impl DemoError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            DemoError::BadUrl(_) => EXIT_BAD_INPUT,
            DemoError::Runtime(_) => EXIT_RUNTIME,
        }
    }
}

/// Where the demo server listens: a loopback address and the MCP endpoint's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The socket address to listen on or to reach.
    pub address: SocketAddr,
    /// The path of the MCP endpoint (e.g. `/mcp`).
    pub path: String,
    /// The URL as given (normalized).
    pub url: Url,
}

impl Endpoint {
    /// Reads an `http://` URL on a loopback address (`127.0.0.1`, `[::1]` or `localhost`,
    /// taken as `127.0.0.1`) with a port; the path is the MCP endpoint.
    pub fn parse(text: &str) -> Result<Endpoint, DemoError> {
        let bad = |why: &str| {
            DemoError::BadUrl(format!(
                "demo-server needs an http:// URL on this machine with a port, such as \
                 {DEFAULT_URL}: {text:?} {why}"
            ))
        };
        let url = Url::parse(text).map_err(|e| bad(&format!("is not a URL ({e})")))?;
        if url.scheme() != "http" {
            return Err(bad("is not an http:// URL"));
        }
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(name)) if name.eq_ignore_ascii_case("localhost") => {
                IpAddr::V4(Ipv4Addr::LOCALHOST)
            }
            _ => return Err(bad("does not name 127.0.0.1, [::1] or localhost")),
        };
        if !ip.is_loopback() {
            return Err(bad("is not a loopback address"));
        }
        let port = url.port().ok_or_else(|| bad("names no port"))?;
        let path = url.path().trim_end_matches('/').to_string();
        if path.is_empty() || path.starts_with("/demo/") || path == "/demo" {
            return Err(bad(
                "needs a path for the MCP endpoint other than / and /demo",
            ));
        }
        Ok(Endpoint {
            address: SocketAddr::new(ip, port),
            path,
            url,
        })
    }
}

/// Runs `demo-server`: serves, starts in the background, or controls a running server.
pub async fn run(url: &str, action: DemoAction) -> Result<(), DemoError> {
    let endpoint = Endpoint::parse(url)?;
    match action {
        DemoAction::Serve => serve(&endpoint).await,
        DemoAction::Background => background(&endpoint).await,
        DemoAction::Change => {
            let answer = control(&endpoint, CHANGE_PATH).await?;
            eprintln!("demo server at {}: now {answer}", endpoint.url);
            Ok(())
        }
        DemoAction::Stop => {
            control(&endpoint, STOP_PATH).await?;
            eprintln!("demo server at {} stopped", endpoint.url);
            Ok(())
        }
    }
}

/// The tools of `release` (1 or 2).
pub fn release_tools(release: u8) -> Vec<Value> {
    let query = json!({"type": "string", "description": "Words to look for"});
    if release == 1 {
        return vec![json!({
            "name": "search_notes",
            "description": "Searches your notes for words and returns the matching notes.",
            "inputSchema": {
                "type": "object",
                "properties": {"query": query},
                "required": ["query"],
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        })];
    }
    vec![
        json!({
            "name": "delete_note",
            "description": "Deletes a note for good.",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The note to delete"}},
                "required": ["id"],
            },
        }),
        json!({
            "name": "search_notes",
            "description": "Searches your notes for words and returns the matching notes.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": query,
                    "folder": {"type": "string", "description": "Folder to search in"},
                },
                "required": ["query", "folder"],
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        }),
    ]
}

/// The `serverInfo.version` of `release`.
pub fn release_version(release: u8) -> &'static str {
    if release == 1 { "1.4.0" } else { "1.5.0" }
}

/// The state shared by the MCP handler and the control routes.
struct Demo {
    release: AtomicU8,
    stop: Notify,
}

impl Demo {
    fn release(&self) -> u8 {
        self.release.load(Ordering::SeqCst)
    }

    fn describe(&self) -> String {
        let release = self.release();
        let names: Vec<String> = release_tools(release)
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_string))
            .collect();
        format!(
            "{SERVER_NAME} {} with {}",
            release_version(release),
            names.join(", ")
        )
    }
}

/// The MCP side: serves the current release's identity and tools.
#[derive(Clone)]
struct NotesHandler {
    demo: Arc<Demo>,
}

impl ServerHandler for NotesHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                SERVER_NAME,
                release_version(self.demo.release()),
            ))
            .with_instructions("A demo notes server for mcp-surface-ledger's quick start.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = release_tools(self.demo.release());
        serde_json::from_value(json!({ "tools": tools }))
            .map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let known = release_tools(self.demo.release())
            .iter()
            .any(|tool| tool["name"] == request.name.as_ref());
        let text: Cow<'static, str> = match request.name.as_ref() {
            _ if !known => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "no tool {:?} in this release",
                    request.name
                ))])
                .into());
            }
            "search_notes" => "No note matches: this demo server keeps no notes.".into(),
            _ => "Nothing was deleted: this demo server keeps no notes.".into(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// The demo server's routes: MCP at the endpoint's path, the control routes beside it.
fn app(endpoint: &Endpoint, demo: Arc<Demo>) -> Router {
    let handler = NotesHandler { demo: demo.clone() };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route(CHANGE_PATH, post(change_route))
        .route(STOP_PATH, post(stop_route))
        .nest_service(&endpoint.path, mcp)
        .with_state(demo)
}

fn refuse_without_header(headers: &HeaderMap) -> Option<Response> {
    (!headers.contains_key(CONTROL_HEADER)).then(|| {
        (
            StatusCode::FORBIDDEN,
            format!("control requests carry the header {CONTROL_HEADER}\n"),
        )
            .into_response()
    })
}

async fn change_route(State(demo): State<Arc<Demo>>, headers: HeaderMap) -> Response {
    if let Some(refused) = refuse_without_header(&headers) {
        return refused;
    }
    let next = if demo.release() == 1 { 2 } else { 1 };
    demo.release.store(next, Ordering::SeqCst);
    let now = demo.describe();
    eprintln!("demo server: now {now}");
    (StatusCode::OK, now).into_response()
}

async fn stop_route(State(demo): State<Arc<Demo>>, headers: HeaderMap) -> Response {
    if let Some(refused) = refuse_without_header(&headers) {
        return refused;
    }
    demo.stop.notify_one();
    (StatusCode::OK, "stopping").into_response()
}

/// Serves in the foreground until Ctrl-C, SIGTERM or the stop route.
async fn serve(endpoint: &Endpoint) -> Result<(), DemoError> {
    let listener = tokio::net::TcpListener::bind(endpoint.address)
        .await
        .map_err(|e| cannot_listen(endpoint, &e))?;
    let demo = Arc::new(Demo {
        release: AtomicU8::new(1),
        stop: Notify::new(),
    });
    eprintln!(
        "demo server: {} at {}; change its tools with `mcp-surface-ledger demo-server --change {}`, \
         stop it with Ctrl-C or `--stop`",
        demo.describe(),
        endpoint.url,
        endpoint.url
    );
    let stopper = demo.clone();
    axum::serve(listener, app(endpoint, demo))
        .with_graceful_shutdown(async move {
            tokio::select! {
                () = stopper.stop.notified() => {}
                () = crate::serve::shutdown_signal() => {}
            }
        })
        .await
        .map_err(|e| DemoError::Runtime(format!("the demo server failed: {e}")))
}

fn cannot_listen(endpoint: &Endpoint, error: &std::io::Error) -> DemoError {
    DemoError::Runtime(format!(
        "cannot listen on {} ({error}): is another server on that port? Pick another port in the URL",
        endpoint.address
    ))
}

/// Serves release 1 on a free loopback port in this process, for the crate's own tests of a
/// real MCP exchange (the server lives until the test's runtime ends); its URL.
#[cfg(test)]
pub(crate) async fn serve_in_process() -> Url {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind a loopback port");
    let address = listener.local_addr().expect("the bound address");
    let endpoint = Endpoint::parse(&format!("http://{address}/mcp")).expect("a demo URL");
    let demo = Arc::new(Demo {
        release: AtomicU8::new(1),
        stop: Notify::new(),
    });
    let app = app(&endpoint, demo);
    tokio::spawn(async move { axum::serve(listener, app).await });
    endpoint.url
}

/// Starts `demo-server URL` as a detached process and waits until it accepts connections.
async fn background(endpoint: &Endpoint) -> Result<(), DemoError> {
    // Bind once here so that a port in use is reported with its reason, not as a child that
    // exited.
    drop(std::net::TcpListener::bind(endpoint.address).map_err(|e| cannot_listen(endpoint, &e))?);
    let exe = std::env::current_exe()
        .map_err(|e| DemoError::Runtime(format!("cannot find this program's path: {e}")))?;
    let mut child = std::process::Command::new(exe)
        .arg("demo-server")
        .arg(endpoint.url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| DemoError::Runtime(format!("cannot start the demo server: {e}")))?;
    let started = Instant::now();
    loop {
        if tokio::net::TcpStream::connect(endpoint.address)
            .await
            .is_ok()
        {
            eprintln!(
                "demo server: {SERVER_NAME} 1.4.0 at {} in the background (pid {}); \
                 `mcp-surface-ledger demo-server --change {}` changes its tools, `--stop` ends it",
                endpoint.url,
                child.id(),
                endpoint.url
            );
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(DemoError::Runtime(format!(
                "the demo server exited at once ({status}); run it without --background to see why"
            )));
        }
        if started.elapsed() > START_TIMEOUT {
            let _ = child.kill();
            return Err(DemoError::Runtime(format!(
                "the demo server did not listen on {} within {} s",
                endpoint.address,
                START_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Sends `POST path` with the control header to the demo server; returns the answer's body.
async fn control(endpoint: &Endpoint, path: &str) -> Result<String, DemoError> {
    let unreachable = |e: std::io::Error| {
        DemoError::Runtime(format!(
            "no demo server answers at {} ({e}); start one with `mcp-surface-ledger demo-server \
             --background {}`",
            endpoint.address, endpoint.url
        ))
    };
    let mut stream = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(endpoint.address),
    )
    .await
    .map_err(|_| unreachable(std::io::ErrorKind::TimedOut.into()))?
    .map_err(unreachable)?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\n{CONTROL_HEADER}: 1\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n",
        endpoint.address
    );
    let mut answer = Vec::new();
    let exchange = async {
        stream.write_all(request.as_bytes()).await?;
        stream.read_to_end(&mut answer).await
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .map_err(|_| unreachable(std::io::ErrorKind::TimedOut.into()))?
        .map_err(unreachable)?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    if !head.starts_with("HTTP/1.1 200") {
        return Err(DemoError::Runtime(format!(
            "the server at {} is not a demo server of this program (it answered {:?})",
            endpoint.address,
            head.lines().next().unwrap_or_default()
        )));
    }
    Ok(body.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_urls_with_a_port_and_path_are_served() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8000/mcp").unwrap();
        assert_eq!(endpoint.address, "127.0.0.1:8000".parse().unwrap());
        assert_eq!(endpoint.path, "/mcp");
        let local = Endpoint::parse("http://localhost:9/x/mcp/").unwrap();
        assert_eq!(local.address, "127.0.0.1:9".parse().unwrap());
        assert_eq!(local.path, "/x/mcp");
        assert!(Endpoint::parse("http://[::1]:8000/mcp").is_ok());
        for bad in [
            "",
            "127.0.0.1:8000/mcp",
            "https://127.0.0.1:8000/mcp",
            "http://10.0.0.1:8000/mcp",
            "http://example.com:8000/mcp",
            "http://127.0.0.1/mcp",
            "http://127.0.0.1:8000/",
            "http://127.0.0.1:8000/demo/change",
        ] {
            let error = Endpoint::parse(bad).unwrap_err();
            assert_eq!(error.exit_code(), EXIT_BAD_INPUT, "{bad}");
            assert!(error.to_string().contains(DEFAULT_URL), "{error}");
        }
    }

    #[test]
    fn the_second_release_adds_a_tool_and_a_required_parameter() {
        let names = |release| -> Vec<String> {
            release_tools(release)
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(names(1), ["search_notes"]);
        assert_eq!(names(2), ["delete_note", "search_notes"]);
        assert_eq!(
            release_tools(2)[1]["inputSchema"]["required"],
            json!(["query", "folder"])
        );
        assert_ne!(release_version(1), release_version(2));
    }
}
