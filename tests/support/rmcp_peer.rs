//! An in-process MCP server built with the Rust SDK (`rmcp`, Streamable HTTP server), serving a
//! surface held in shared state that a test can replace between two probes.
//!
//! rmcp serves the 2026-07-28 revision statelessly and the classic versions with or without
//! sessions, so one server covers both eras.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    ErrorCode, InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use url::Url;

use super::background;

/// How the rmcp server answers classic clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmcpMode {
    /// Classic clients get a session (`Mcp-Session-Id`); otherwise every request stands alone.
    pub sessions: bool,
    /// Prefer `application/json` answers (only without sessions).
    pub json_response: bool,
    /// Support only the 2026-07-28 revision: `initialize` gets `-32022`.
    pub modern_only: bool,
}

impl Default for RmcpMode {
    fn default() -> Self {
        RmcpMode {
            sessions: true,
            json_response: false,
            modern_only: false,
        }
    }
}

/// A running rmcp server.
pub struct RmcpPeer {
    /// Its MCP endpoint.
    pub url: Url,
    state: Arc<RwLock<Value>>,
}

impl RmcpPeer {
    /// Starts a server on a fresh port in the background runtime.
    pub fn start(surface: Value, mode: RmcpMode) -> RmcpPeer {
        Self::start_with(surface, mode, None)
    }

    /// Starts a server that answers only requests carrying `Authorization: Bearer <token>`;
    /// any other request gets 401 with a Bearer challenge (`invalid_token` when a token was
    /// sent), as an OAuth-protected resource server does.
    pub fn start_requiring(surface: Value, mode: RmcpMode, token: &str) -> RmcpPeer {
        Self::start_with(surface, mode, Some(format!("Bearer {token}")))
    }

    fn start_with(surface: Value, mode: RmcpMode, authorization: Option<String>) -> RmcpPeer {
        let state = Arc::new(RwLock::new(surface));
        let handler_state = state.clone();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(mode.sessions)
            .with_json_response(mode.json_response);
        let service = StreamableHttpService::new(
            move || {
                Ok(SurfaceHandler {
                    state: handler_state.clone(),
                    modern_only: mode.modern_only,
                })
            },
            LocalSessionManager::default().into(),
            config,
        );
        let mut router = axum::Router::new().nest_service("/mcp", service);
        if let Some(expected) = authorization {
            router = router.layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let expected = expected.clone();
                    async move { bearer_gate(&expected, request, next).await }
                },
            ));
        }
        let addr = background::serve(router);
        RmcpPeer {
            url: Url::parse(&format!("http://{addr}/mcp")).expect("rmcp url"),
            state,
        }
    }

    /// Replaces the served surface.
    pub fn set_surface(&self, surface: Value) {
        *self.state.write().expect("surface lock") = surface;
    }
}

/// Serves the surface in `state`, paginated by its `page_size`.
#[derive(Clone)]
struct SurfaceHandler {
    state: Arc<RwLock<Value>>,
    modern_only: bool,
}

impl SurfaceHandler {
    fn surface(&self) -> Value {
        self.state.read().expect("surface lock").clone()
    }

    /// One page of `key` as a list result of type `T`.
    fn page<T: DeserializeOwned>(
        &self,
        key: &str,
        request: Option<PaginatedRequestParams>,
    ) -> Result<T, McpError> {
        let surface = self.surface();
        let items = surface[key].as_array().cloned().unwrap_or_default();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("offset-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| McpError::invalid_params(format!("bad cursor {cursor}"), None))?,
        };
        let size = surface["page_size"].as_u64().unwrap_or(0) as usize;
        let end = if size == 0 {
            items.len()
        } else {
            (start + size).min(items.len())
        };
        let mut result = json!({ key: items.get(start..end).unwrap_or_default() });
        if end < items.len() {
            result["nextCursor"] = json!(format!("offset-{end}"));
        }
        serde_json::from_value(result).map_err(|e| McpError::internal_error(e.to_string(), None))
    }
}

impl ServerHandler for SurfaceHandler {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        if self.modern_only {
            Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
        } else {
            Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.modern_only {
            return Err(McpError::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version: {}", request.protocol_version),
                Some(json!({"supported": ["2026-07-28"], "requested": request.protocol_version})),
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    fn get_info(&self) -> ServerConfig {
        let surface = self.surface();
        let mut capabilities = json!({"tools": {}});
        for optional in ["resources", "prompts"] {
            if surface.get(optional).is_some() {
                capabilities[optional] = json!({});
            }
        }
        let mut info = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": surface["name"], "version": surface["version"]},
        });
        if let Some(instructions) = surface.get("instructions") {
            info["instructions"] = instructions.clone();
        }
        serde_json::from_value(info).expect("valid server config")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.page("tools", request)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.page("resources", request)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.page("prompts", request)
    }
}

/// Lets a request through only with the expected `Authorization` value; otherwise 401 with a
/// `WWW-Authenticate: Bearer` challenge (RFC 6750), `error="invalid_token"` for a wrong token.
async fn bearer_gate(
    expected: &str,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let sent = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match sent {
        Some(value) if value == expected => next.run(request).await,
        Some(_) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, r#"Bearer error="invalid_token""#)],
        )
            .into_response(),
        None => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response(),
    }
}
