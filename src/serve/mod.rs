//! Ask the ledger: a long-lived, read-only HTTP server over the ledger store, for dashboards
//! (a JSON API) and agents (an MCP endpoint at `/mcp`).
//!
//! `mcp-surface-ledger serve` runs it locally; on the Apify platform the Actor runs it in
//! Standby mode on `ACTOR_WEB_SERVER_PORT` (or the older `ACTOR_STANDBY_PORT`), and the
//! platform's readiness probe gets its answer on
//! `GET /`.
//!
//! - [`backend`]: the storage read (local layout or Apify API), with every write refused.
//! - [`store`]: reading ledgers through [`crate::ledger`]: servers, history, stored surface.
//! - `statuses`: the last run's status of each server ([`crate::server_status`]) of a watch.
//! - [`compare`]: the `diff` rows between two documents sent by the caller.
//! - [`api`]: the HTTP routes and their JSON errors.
//! - [`tools`]: the MCP tools (`rmcp`, Streamable HTTP, stateless).
//! - [`error`]: why a request could not be answered, as a status and a stable code.
//! - [`guard`]: JSON answers for requests the MCP transport refuses, for declared oversize
//!   bodies, and for handler panics.
//! - [`hosts`]: the `Host` / `Origin` check every route passes first (DNS rebinding guard).
//! - [`pages`]: the HTML pages for people (fleet, server, changes) and the Atom feed.
//! - [`schema`]: standard JSON Schema for the tools and for the OpenAPI description of the
//!   routes (`.actor/web_server_schema.json`, the Actor's `webServerSchema`).
//!
//! Invariants: it only reads the store (no record is ever written) and it never contacts a
//! target or any URL named in a request; request bodies are capped at [`MAX_BODY_BYTES`].

pub mod api;
pub mod backend;
pub mod compare;
pub mod error;
pub mod guard;
pub mod hosts;
mod kept;
pub mod pages;
mod query;
pub mod schema;
mod statuses;
pub mod store;
pub mod tools;
pub mod views;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpSocket};
use tower_http::catch_panic::CatchPanicLayer;

use crate::platform::PlatformEnv;
use crate::run::EXIT_RUNTIME;
use backend::Backend;
use hosts::HostPolicy;
use store::LedgerReader;
use tools::LedgerTools;

/// The largest request body accepted (1 MiB), on every route including `/mcp`.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The header the Apify platform's readiness probe sends on `GET /` in Standby mode.
pub const READINESS_HEADER: &str = "x-apify-container-server-readiness-probe";

/// Where the MCP endpoint is mounted (also `webServerMcpPath` in `.actor/actor.json`).
pub const MCP_PATH: &str = "/mcp";

/// Every route the server answers: the HTTP API and pages ([`api::ROUTES`]) and the MCP
/// endpoint (`POST` [`MCP_PATH`]). `.actor/web_server_schema.json` describes exactly these.
pub fn routes() -> Vec<api::Route> {
    let mut routes = api::ROUTES.to_vec();
    routes.push(api::Route::post(MCP_PATH));
    routes
}

/// The port used when neither `--port` nor the platform's port variables are given.
pub const DEFAULT_PORT: u16 = 4321;

/// The listen backlog: a burst of page loads (a dashboard opening dozens of links) must not
/// overflow the kernel's accept queue, whose dropped SYNs a client retries only after 1 s.
pub const LISTEN_BACKLOG: u32 = 1024;

/// How the server is started.
#[derive(Debug, Clone, Default)]
pub struct ServeArgs {
    /// The port; `None` = [`platform_port`], then [`DEFAULT_PORT`]. `0` picks a free one.
    pub port: Option<u16>,
    /// The address to listen on; `None` = all interfaces on the platform, loopback elsewhere.
    pub host: Option<IpAddr>,
    /// Local storage root, overriding the environment (ignored on the platform).
    pub storage_dir: Option<PathBuf>,
    /// More host names the server answers for (`--allow-host`, `LEDGER_ALLOWED_HOSTS`).
    pub allowed_hosts: Vec<String>,
}

/// The whole application: the HTML pages, the JSON API and the MCP endpoint over one
/// backend, every route behind the `Host`/`Origin` check of `hosts`.
pub fn app(backend: Backend, hosts: HostPolicy) -> Router {
    let reader = Arc::new(LedgerReader::new(backend));
    // The host check is ours, on every route, before the transport sees the request.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .disable_allowed_hosts();
    let tools = LedgerTools::new(reader.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let mcp = Router::new()
        .fallback_service(mcp)
        .layer(axum::middleware::from_fn(guard::json_rpc_errors));
    api::routes(reader)
        .nest(MCP_PATH, mcp)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(guard::declared_size))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(hosts),
            hosts::check_host,
        ))
        .layer(CatchPanicLayer::custom(guard::panic_answer))
}

/// Binds `address` with a listen backlog of [`LISTEN_BACKLOG`].
pub fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves `app` on `listener` until Ctrl-C or SIGTERM.
pub async fn serve_on(listener: TcpListener, app: Router) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
}

pub(crate) async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Whether the Actor was started in Standby mode (the platform says so in `APIFY_META_ORIGIN`).
pub fn is_standby_start(lookup: impl Fn(&str) -> Option<String>) -> bool {
    lookup("APIFY_META_ORIGIN").is_some_and(|origin| origin.eq_ignore_ascii_case("STANDBY"))
}

/// Runs the server until it is stopped and returns the process exit code.
pub async fn run(args: ServeArgs) -> i32 {
    let env = match PlatformEnv::from_env() {
        Ok(env) => env,
        Err(error) => {
            tracing::error!("{error}");
            return EXIT_RUNTIME;
        }
    };
    let backend = match Backend::open(&env, args.storage_dir) {
        Ok(backend) => backend,
        Err(message) => {
            tracing::error!("{message}");
            return EXIT_RUNTIME;
        }
    };
    let port = args
        .port
        .or_else(|| platform_port(|name| std::env::var(name).ok()))
        .unwrap_or(DEFAULT_PORT);
    let default_host = if env.is_at_home {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    let host = args.host.unwrap_or(default_host);
    let policy = host_policy(&env, &args.allowed_hosts);
    let listener = match listen(SocketAddr::new(host, port)) {
        Ok(listener) => listener,
        Err(error) => {
            let hint = if error.kind() == std::io::ErrorKind::AddrInUse {
                format!(
                    ": another program already listens on port {port} (a `serve` started \
                     earlier?); stop it, or choose another port with --port N (--port 0 picks \
                     a free one)"
                )
            } else {
                String::new()
            };
            tracing::error!("cannot listen on {host}:{port}: {error}{hint}");
            return EXIT_RUNTIME;
        }
    };
    if let Ok(address) = listener.local_addr() {
        tracing::info!("serving the ledger read-only on http://{address} (MCP at {MCP_PATH})");
    }
    match serve_on(listener, app(backend, policy)).await {
        Ok(()) => 0,
        Err(error) => {
            tracing::error!("the server stopped: {error}");
            EXIT_RUNTIME
        }
    }
}

/// Loopback names and IP literals, the operator's names, and on the platform the Standby
/// names (its domain and the hosts of `ACTOR_STANDBY_URL` / `ACTOR_WEB_SERVER_URL`).
fn host_policy(env: &PlatformEnv, operator: &[String]) -> HostPolicy {
    let base = if env.is_at_home {
        let urls = ["ACTOR_STANDBY_URL", "ACTOR_WEB_SERVER_URL"]
            .into_iter()
            .filter_map(|name| std::env::var(name).ok());
        HostPolicy::platform().with_names(urls)
    } else {
        HostPolicy::local()
    };
    base.with_names(operator)
}

/// The port the platform asks a Standby server to listen on: `ACTOR_WEB_SERVER_PORT` (what
/// the Standby documentation names), else the older `ACTOR_STANDBY_PORT`.
pub fn platform_port(lookup: impl Fn(&str) -> Option<String>) -> Option<u16> {
    ["ACTOR_WEB_SERVER_PORT", "ACTOR_STANDBY_PORT"]
        .into_iter()
        .find_map(|name| lookup(name)?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standby_is_read_from_the_meta_origin() {
        let with = |value: &'static str| {
            move |name: &str| (name == "APIFY_META_ORIGIN").then(|| value.to_string())
        };
        assert!(is_standby_start(with("STANDBY")));
        assert!(!is_standby_start(with("API")));
        assert!(!is_standby_start(|_| None));
    }

    #[test]
    fn the_port_is_the_web_server_port_then_the_standby_port() {
        fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        }
        let both = [
            ("ACTOR_WEB_SERVER_PORT", "8080"),
            ("ACTOR_STANDBY_PORT", "4322"),
        ];
        assert_eq!(platform_port(env(&both)), Some(8080));
        assert_eq!(
            platform_port(env(&[("ACTOR_STANDBY_PORT", " 4322 ")])),
            Some(4322)
        );
        let bad = [
            ("ACTOR_WEB_SERVER_PORT", "x"),
            ("ACTOR_STANDBY_PORT", "4322"),
        ];
        assert_eq!(platform_port(env(&bad)), Some(4322));
        assert_eq!(platform_port(env(&[])), None);
    }
}
