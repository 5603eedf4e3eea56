//! The probe: find the era a server speaks, do its handshake, and read its declared surface.
//!
//! Round trips, best case: modern = `server/discover` + list calls; classic = `initialize` +
//! `notifications/initialized` + list calls + `DELETE` of the session. The list calls
//! (`tools/list`, and `resources/list` / `prompts/list` when counted) run concurrently once the
//! handshake is done; each walks its `nextCursor` chain page by page. When the era is known to be
//! modern (from the ledger), `tools/list` is sent together with `server/discover`, so a
//! tools-only server costs one round trip.

use std::collections::HashSet;
use std::sync::Arc;

use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use url::Url;

use super::auth::{self, AuthChallenge, AuthFindings};
use super::era::{self, DiscoverVerdict, Era};
use super::error::{ProbeError, ProbeFailure};
use super::exchange::{self, Body, Reply, Wire};
use super::legacy_sse::{self, LegacySession, Opened, Tally};
use crate::net::Client;
use crate::surface::ServerIdentity;

/// The name this client gives in `clientInfo`.
const CLIENT_NAME: &str = "mcp-surface-ledger";
/// The `_meta` key prefix of the modern per-request fields.
const META_PREFIX: &str = "io.modelcontextprotocol/";

/// What to read and how to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeOptions {
    /// Also count resources and prompts when the server declares those capabilities.
    pub count_resources_and_prompts: bool,
    /// The era that worked last time (from the ledger): tried first, which saves a round trip
    /// when it still holds. The other era is still tried when it fails.
    pub preferred_era: Option<Era>,
    /// Speak only this era (tests and diagnostics); no fallback.
    pub force_era: Option<Era>,
    /// Pages read per list method (`nextCursor` hops + 1).
    pub max_pages: u32,
    /// Tools kept; more make the observation `tools_truncated`.
    pub max_tools: usize,
    /// When the server refuses the anonymous request, look for its RFC 9728 metadata (at most
    /// two GET requests).
    pub probe_oauth_metadata: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            count_resources_and_prompts: true,
            preferred_era: None,
            force_era: None,
            max_pages: 5,
            max_tools: 500,
            probe_oauth_metadata: true,
        }
    }
}

/// The declared surface of one server as read by a successful probe, plus what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The URL that answered the handshake (after redirects); list calls went there too.
    pub final_url: Url,
    /// The era that worked.
    pub era: Era,
    /// The transport name as it appears in rows (`streamable-http` or `http+sse`).
    pub transport: String,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The server's `Implementation` object as served (`name`, `version`, `title`, …); `null`
    /// when the server sent none.
    pub server_info: Value,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
    /// The declared capabilities object (`{}` when absent).
    pub capabilities: Value,
    /// The raw tool objects of every page read, in served order, at most `max_tools`.
    pub tools: Vec<Value>,
    /// True when tools were left out: more than `max_tools`, or more pages than `max_pages`.
    pub tools_truncated: bool,
    /// `(index in tools, pointer inside that tool)` of every object key the server's answer
    /// repeated; such a definition can show different text to different clients.
    pub repeated_tool_keys: Vec<(usize, String)>,
    /// Resources counted over at most `max_pages` pages; `None` when not asked, not declared or
    /// the listing failed.
    pub resources_total: Option<u64>,
    /// Prompts counted like resources.
    pub prompts_total: Option<u64>,
    /// The HTTP status of the handshake response.
    pub http_status: u16,
    /// Response body bytes read from this server in total.
    pub bytes_read: u64,
    /// HTTP requests sent to this server in total (including failed era attempts).
    pub requests_sent: u32,
}

impl Observation {
    /// `repeated_tool_keys` with each index turned into the tool's name (`tools` is the
    /// observation's tool list, possibly already taken out of it).
    pub fn repeated_keys_by_tool(&self, tools: &[Value]) -> Vec<(String, String)> {
        self.repeated_tool_keys
            .iter()
            .filter_map(|(index, pointer)| {
                let name = tools.get(*index)?.get("name")?.as_str()?;
                Some((name.to_string(), pointer.clone()))
            })
            .collect()
    }

    /// Who the server says it is, as the surface model records it.
    pub fn identity(&self) -> ServerIdentity {
        let text = |key: &str| {
            self.server_info
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        ServerIdentity {
            name: text("name"),
            title: text("title"),
            version: text("version"),
            protocol_version: Some(self.protocol_version.clone()),
            instructions: self.instructions.clone(),
        }
    }
}

/// Reads the declared surface of the MCP server at `url`.
///
/// Never calls a tool. Network limits (timeouts, body cap, redirects, address policy) are the
/// client's; the per-server deadline is the caller's (wrap this future in a timeout).
pub async fn probe(
    client: &Client,
    url: &Url,
    options: &ProbeOptions,
) -> Result<Observation, ProbeFailure> {
    let wire = Wire::new(client);
    let tally = Arc::new(Tally::default());
    let outcome = read_surface(client, &wire, &tally, url, options).await;
    let stats = wire.stats();
    let bytes_read = stats.bytes_read() + tally.bytes_read();
    match outcome {
        Ok(mut observation) => {
            observation.bytes_read = bytes_read;
            observation.requests_sent = stats.requests_sent() + tally.requests_sent();
            Ok(observation)
        }
        Err(error) => {
            let last = stats.last_response();
            let final_url = last.as_ref().map(|(_, url)| url.clone());
            let auth = match error.auth_refusal() {
                Some((_, header)) => {
                    let endpoint = final_url.as_ref().unwrap_or(url);
                    Some(auth_findings(client, endpoint, header, options).await)
                }
                None => None,
            };
            let metadata_bytes = auth
                .as_ref()
                .and_then(|a| a.metadata.as_ref())
                .map_or(0, |m| m.bytes_read);
            let http_status = match error.auth_refusal() {
                Some((status, _)) => Some(status),
                None => last.as_ref().map(|(status, _)| *status),
            };
            Err(ProbeFailure {
                error,
                http_status,
                bytes_read: bytes_read + metadata_bytes,
                final_url,
                auth,
            })
        }
    }
}

/// Parses the challenge of a refusal and, when asked, probes the RFC 9728 metadata.
async fn auth_findings(
    client: &Client,
    endpoint: &Url,
    header: Option<&str>,
    options: &ProbeOptions,
) -> AuthFindings {
    let challenge = AuthChallenge::from_header(header);
    let metadata = if options.probe_oauth_metadata {
        // The credential never travels to metadata or authorization-server URLs, even on the
        // server's own origin.
        Some(auth::probe_metadata(&client.anonymous(), endpoint, &challenge).await)
    } else {
        None
    };
    AuthFindings {
        challenge,
        metadata,
    }
}

async fn read_surface(
    client: &Client,
    wire: &Wire<'_>,
    tally: &Arc<Tally>,
    url: &Url,
    options: &ProbeOptions,
) -> Result<Observation, ProbeError> {
    // A server known to be modern gets its `tools/list` together with `server/discover`: one
    // round trip instead of two. The early answer is used only when the handshake confirms the
    // modern era at the same version and URL; otherwise it is dropped.
    let (handshake, early_tools) = if expects_modern(options) {
        let early = Session {
            wire,
            url: url.clone(),
            era: Era::Modern,
            version: era::MODERN_VERSIONS[0].to_string(),
            session_id: SessionSlot::new(None),
            legacy: None,
        };
        let early_tools = async { Ok(early.list("tools/list", "tools", options).await) };
        let (handshake, tools) =
            futures::try_join!(handshake(client, wire, tally, url, options), early_tools)?;
        let usable = handshake.era == Era::Modern
            && handshake.version == early.version
            && handshake.url == early.url;
        (handshake, usable.then_some(tools))
    } else {
        (handshake(client, wire, tally, url, options).await?, None)
    };
    let session = Session {
        wire,
        url: handshake.url.clone(),
        era: handshake.era,
        version: handshake.version.clone(),
        session_id: SessionSlot::new(handshake.session_id.clone()),
        legacy: handshake.legacy.as_ref(),
    };
    let capabilities = handshake
        .result
        .get("capabilities")
        .filter(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let declares = |name: &str| capabilities.get(name).is_some_and(|c| !c.is_null());
    let count = |name: &str| options.count_resources_and_prompts && declares(name);

    let tools = async {
        match early_tools {
            _ if !declares("tools") => Ok(Listing::default()),
            Some(tools) => tools,
            None => session.list("tools/list", "tools", options).await,
        }
    };
    let resources = async {
        if count("resources") {
            session.count("resources/list", "resources", options).await
        } else {
            None
        }
    };
    let prompts = async {
        if count("prompts") {
            session.count("prompts/list", "prompts", options).await
        } else {
            None
        }
    };
    let (tools, resources_total, prompts_total) = futures::join!(tools, resources, prompts);
    session.close().await;

    let tools = tools.map_err(|error| match error {
        auth @ ProbeError::AuthRequired { .. } => auth,
        other if handshake.era == Era::LegacySse => {
            ProbeError::LegacySse(Box::new(ProbeError::ToolsList(Box::new(other))))
        }
        other => ProbeError::ToolsList(Box::new(other)),
    })?;
    let final_url = match &handshake.legacy {
        Some(legacy) => legacy.stream_url().clone(),
        None => handshake.url.clone(),
    };
    Ok(Observation {
        final_url,
        era: handshake.era,
        transport: handshake.era.transport().to_string(),
        protocol_version: handshake.version,
        server_info: server_info(&handshake.result, handshake.era),
        instructions: handshake
            .result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string),
        capabilities,
        tools: tools.items,
        repeated_tool_keys: tools.repeated_keys,
        tools_truncated: tools.truncated,
        resources_total,
        prompts_total,
        http_status: handshake.status,
        bytes_read: 0,
        requests_sent: 0,
    })
}

/// True when the first handshake tried is the modern one because the era is known (forced, or
/// remembered by the ledger), so list calls may be sent before `server/discover` answers.
fn expects_modern(options: &ProbeOptions) -> bool {
    match options.force_era {
        Some(era) => era == Era::Modern,
        None => options.preferred_era == Some(Era::Modern),
    }
}

/// The `Implementation` object: modern servers put it in `_meta`, drafts and classic servers
/// at the top level.
fn server_info(result: &Value, era: Era) -> Value {
    let in_meta = result
        .get("_meta")
        .and_then(|meta| meta.get(format!("{META_PREFIX}serverInfo")));
    let top_level = result.get("serverInfo");
    let found = match era {
        Era::Modern => in_meta.or(top_level),
        Era::Classic | Era::LegacySse => top_level.or(in_meta),
    };
    found.cloned().unwrap_or(Value::Null)
}

/// A completed handshake in either era.
#[derive(Debug)]
struct Handshake {
    era: Era,
    url: Url,
    version: String,
    session_id: Option<String>,
    status: u16,
    /// The discover or initialize result.
    result: Value,
    /// The open event stream of a legacy HTTP+SSE server.
    legacy: Option<LegacySession>,
}

/// A failed `initialize`, with whether trying another era or transport could still help.
struct ClassicFailure {
    error: ProbeError,
    may_be_modern: bool,
    /// 400/404/405 without modern evidence: the URL may be a 2024-11-05 SSE stream.
    may_be_legacy: bool,
}

async fn handshake(
    client: &Client,
    wire: &Wire<'_>,
    tally: &Arc<Tally>,
    url: &Url,
    options: &ProbeOptions,
) -> Result<Handshake, ProbeError> {
    match (options.force_era, options.preferred_era) {
        (Some(Era::Modern), _) => try_modern(wire, url).await?.ok_or_else(|| {
            ProbeError::TransportUnsupported(
                "the server did not answer server/discover as a 2026-07-28 server".into(),
            )
        }),
        (Some(Era::Classic), _) => try_classic(wire, url).await.map_err(|f| f.error),
        (Some(Era::LegacySse), _) => try_legacy(client, tally, url)
            .await?
            .map_err(ProbeError::TransportUnsupported),
        (None, Some(Era::LegacySse)) => match try_legacy(client, tally, url).await {
            Ok(Ok(handshake)) => Ok(handshake),
            Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
            Ok(Err(_)) | Err(_) => detect(client, wire, tally, url, false).await,
        },
        (None, Some(Era::Classic)) => match try_classic(wire, url).await {
            Ok(handshake) => Ok(handshake),
            Err(failure) if failure.may_be_modern => match try_modern(wire, url).await {
                Ok(Some(handshake)) => Ok(handshake),
                Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
                Ok(None) | Err(_) if failure.may_be_legacy => {
                    legacy_fallback(client, tally, url, failure.error).await
                }
                Ok(None) | Err(_) => Err(failure.error),
            },
            Err(failure) => Err(failure.error),
        },
        (None, _) => detect(client, wire, tally, url, true).await,
    }
}

/// The default order: `server/discover`, then `initialize`, then the legacy GET stream.
async fn detect(
    client: &Client,
    wire: &Wire<'_>,
    tally: &Arc<Tally>,
    url: &Url,
    legacy_allowed: bool,
) -> Result<Handshake, ProbeError> {
    if let Some(handshake) = try_modern(wire, url).await? {
        return Ok(handshake);
    }
    match try_classic(wire, url).await {
        Ok(handshake) => Ok(handshake),
        Err(failure) if failure.may_be_legacy && legacy_allowed => {
            legacy_fallback(client, tally, url, failure.error).await
        }
        Err(failure) => Err(failure.error),
    }
}

/// Both POST handshakes failed in a way a legacy server would make them fail: GET the URL as
/// an event stream. A URL that serves something else entirely is `TransportUnsupported`;
/// otherwise the `initialize` error stands.
async fn legacy_fallback(
    client: &Client,
    tally: &Arc<Tally>,
    url: &Url,
    classic_error: ProbeError,
) -> Result<Handshake, ProbeError> {
    match legacy_sse::open(client, url, tally.clone()).await {
        Ok(Opened::Legacy(session)) => legacy_handshake(*session).await,
        Ok(Opened::NotLegacy {
            why,
            unsupported: true,
        }) => Err(ProbeError::TransportUnsupported(format!(
            "neither MCP transport: initialize failed ({classic_error}) and {why}"
        ))),
        Ok(Opened::NotLegacy { .. }) => Err(classic_error),
        Err(auth @ ProbeError::AuthRequired { .. }) => Err(auth),
        Err(legacy @ ProbeError::LegacySse(_)) => Err(legacy),
        Err(_) => Err(classic_error),
    }
}

/// The legacy transport alone: `Ok(Err(why))` when the URL is not a legacy stream.
async fn try_legacy(
    client: &Client,
    tally: &Arc<Tally>,
    url: &Url,
) -> Result<Result<Handshake, String>, ProbeError> {
    match legacy_sse::open(client, url, tally.clone()).await? {
        Opened::Legacy(session) => legacy_handshake(*session).await.map(Ok),
        Opened::NotLegacy { why, .. } => Ok(Err(why)),
    }
}

/// `initialize` and `notifications/initialized` over an open legacy stream. Any failure but
/// an auth refusal is wrapped in `LegacySse`: the transport was recognised.
async fn legacy_handshake(session: LegacySession) -> Result<Handshake, ProbeError> {
    let wrap = |error: ProbeError| match error {
        auth @ ProbeError::AuthRequired { .. } => auth,
        other => ProbeError::LegacySse(Box::new(other)),
    };
    let params = json!({
        "protocolVersion": era::CLASSIC_VERSIONS[0],
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let result = session
        .call("initialize", Some(params))
        .await
        .map_err(wrap)?;
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !era::is_known_classic_version(&version) {
        return Err(wrap(ProbeError::TransportUnsupported(format!(
            "the server negotiated protocol version {version:?}"
        ))));
    }
    session
        .notify("notifications/initialized")
        .await
        .map_err(wrap)?;
    Ok(Handshake {
        era: Era::LegacySse,
        url: session.endpoint().clone(),
        version,
        session_id: None,
        status: session.status(),
        result,
        legacy: Some(session),
    })
}

/// `server/discover`; `Ok(None)` when the answer says the server is not modern.
async fn try_modern(wire: &Wire<'_>, url: &Url) -> Result<Option<Handshake>, ProbeError> {
    let mut version = era::MODERN_VERSIONS[0].to_string();
    for attempt in 0..2 {
        let method = "server/discover";
        let reply = wire
            .request(
                url,
                modern_headers(&version, method),
                method,
                Some(modern_params(&version, None)),
            )
            .await?;
        match era::classify_discover(&reply, &version) {
            DiscoverVerdict::Modern(result) => {
                return Ok(Some(Handshake {
                    era: Era::Modern,
                    url: reply.final_url.unwrap_or_else(|| url.clone()),
                    version,
                    session_id: None,
                    status: reply.status,
                    result,
                    legacy: None,
                }));
            }
            DiscoverVerdict::RetryWith(other) if attempt == 0 => version = other,
            DiscoverVerdict::RetryWith(_) => return Err(error_of(reply)),
            DiscoverVerdict::Classic => return Ok(None),
            DiscoverVerdict::Fail(error) => return Err(error),
        }
    }
    Ok(None)
}

/// `initialize` then `notifications/initialized`.
async fn try_classic(wire: &Wire<'_>, url: &Url) -> Result<Handshake, ClassicFailure> {
    let offered = era::CLASSIC_VERSIONS[0];
    let params = json!({
        "protocolVersion": offered,
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let reply = wire
        .request(url, HeaderMap::new(), "initialize", Some(params))
        .await
        .map_err(|error| ClassicFailure {
            error: error.into(),
            may_be_modern: false,
            may_be_legacy: false,
        })?;
    let modern_evidence =
        matches!(&reply.body, Body::Message(Err(e)) if era::is_modern_evidence(e));
    let may_be_modern =
        modern_evidence || ((400..500).contains(&reply.status) && reply.auth_error().is_none());
    // 426: a WebSocket-only endpoint, which the GET then confirms.
    let may_be_legacy = !modern_evidence && matches!(reply.status, 400 | 404 | 405 | 426);
    let status = reply.status;
    let session_id = reply.session_id.clone();
    let final_url = reply.final_url.clone().unwrap_or_else(|| url.clone());
    let result = reply.into_result().map_err(|error| ClassicFailure {
        error,
        may_be_modern,
        may_be_legacy,
    })?;
    let fail = |error: ProbeError| ClassicFailure {
        error,
        may_be_modern: false,
        may_be_legacy: false,
    };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let session = Session {
        wire,
        url: final_url.clone(),
        era: Era::Classic,
        version: version.clone(),
        session_id: SessionSlot::new(session_id.clone()),
        legacy: None,
    };
    if !era::is_known_classic_version(&version) {
        session.close().await;
        return Err(fail(ProbeError::TransportUnsupported(format!(
            "the server negotiated protocol version {version:?}"
        ))));
    }
    let ack = wire
        .notify(
            &final_url,
            session.headers("notifications/initialized"),
            "notifications/initialized",
        )
        .await
        .map_err(|error| fail(error.into()))?;
    if let Some(error) = ack.auth_error() {
        return Err(fail(error));
    }
    Ok(Handshake {
        era: Era::Classic,
        url: final_url,
        version,
        session_id,
        status,
        result,
        legacy: None,
    })
}

fn error_of(reply: Reply) -> ProbeError {
    match reply.into_result() {
        Err(error) => error,
        Ok(_) => ProbeError::NotJson("unexpected result".into()),
    }
}

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// The modern `params`: the `_meta` envelope plus an optional cursor.
fn modern_params(version: &str, cursor: Option<&str>) -> Value {
    let mut meta = Map::new();
    meta.insert(format!("{META_PREFIX}protocolVersion"), json!(version));
    meta.insert(format!("{META_PREFIX}clientCapabilities"), json!({}));
    meta.insert(format!("{META_PREFIX}clientInfo"), client_info());
    let mut params = Map::new();
    params.insert("_meta".into(), Value::Object(meta));
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), json!(cursor));
    }
    Value::Object(params)
}

fn modern_headers(version: &str, method: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    exchange::set_header(&mut headers, exchange::VERSION_HEADER, version);
    exchange::set_header(&mut headers, exchange::METHOD_HEADER, method);
    headers
}

/// Items read from one list method.
#[derive(Debug, Default)]
struct Listing {
    items: Vec<Value>,
    truncated: bool,
    /// `(item index, pointer inside the item)` of every key an answer repeated.
    repeated_keys: Vec<(usize, String)>,
}

/// Splits a pointer into a JSON-RPC answer, such as `/result/tools/3/description`, into the
/// item index and the pointer inside that item (`3`, `/description`).
fn item_pointer(pointer: &str, key: &str) -> Option<(usize, String)> {
    let marker = format!("/result/{key}/");
    let rest = &pointer[pointer.find(&marker)? + marker.len()..];
    let (index, inner) = rest.split_once('/').unwrap_or((rest, ""));
    Some((index.parse().ok()?, format!("/{inner}")))
}

/// The classic session id, which a re-initialization may replace while list calls run.
struct SessionSlot {
    id: std::sync::Mutex<Option<String>>,
    /// Held while renewing, so concurrent list calls renew once; true once renewed.
    renewed: tokio::sync::Mutex<bool>,
}

impl SessionSlot {
    fn new(id: Option<String>) -> Self {
        SessionSlot {
            id: std::sync::Mutex::new(id),
            renewed: tokio::sync::Mutex::new(false),
        }
    }

    fn current(&self) -> Option<String> {
        self.id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn replace(&self, id: Option<String>) {
        *self
            .id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = id;
    }
}

/// A server after its handshake: how every later request is addressed.
struct Session<'w, 'c> {
    wire: &'w Wire<'c>,
    url: Url,
    era: Era,
    version: String,
    session_id: SessionSlot,
    /// Set for the legacy transport: requests go through its stream instead of the wire.
    legacy: Option<&'w LegacySession>,
}

impl Session<'_, '_> {
    fn headers(&self, method: &str) -> HeaderMap {
        match self.era {
            Era::Modern => modern_headers(&self.version, method),
            Era::Classic | Era::LegacySse => {
                let mut headers = HeaderMap::new();
                exchange::set_header(&mut headers, exchange::VERSION_HEADER, &self.version);
                if let Some(id) = self.session_id.current() {
                    exchange::set_header(&mut headers, exchange::SESSION_HEADER, &id);
                }
                headers
            }
        }
    }

    fn params(&self, cursor: Option<&str>) -> Option<Value> {
        match self.era {
            Era::Modern => Some(modern_params(&self.version, cursor)),
            Era::Classic | Era::LegacySse => cursor.map(|cursor| json!({"cursor": cursor})),
        }
    }

    /// Sends one request and returns its result.
    /// Sends one request; returns its result and the pointers of keys its answer repeated
    /// (looked for in `tools/list` answers over Streamable HTTP).
    async fn call(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<(Value, Vec<String>), ProbeError> {
        let params = self.params(cursor);
        match self.legacy {
            Some(legacy) => Ok((legacy.call(method, params).await?, Vec::new())),
            None => {
                let sent_with = self.session_id.current();
                let mut reply = self
                    .wire
                    .request(&self.url, self.headers(method), method, params.clone())
                    .await?;
                if self.session_expired(&reply, sent_with.as_deref()) && self.renew(sent_with).await
                {
                    reply = self
                        .wire
                        .request(&self.url, self.headers(method), method, params)
                        .await?;
                }
                let repeated = reply.repeated_keys.clone();
                Ok((reply.into_result()?, repeated))
            }
        }
    }

    /// A classic server answers 404 to a request carrying a session id it no longer knows
    /// (the session expired or the server restarted).
    fn session_expired(&self, reply: &Reply, sent_with: Option<&str>) -> bool {
        self.era == Era::Classic && sent_with.is_some() && reply.status == 404
    }

    /// Starts a new session once per probe (`initialize` + `initialized` again). Concurrent
    /// list calls that saw the same expiry wait for one renewal and then use its id. False
    /// when the session was already renewed once, or the new handshake failed.
    async fn renew(&self, expired: Option<String>) -> bool {
        let mut renewed = self.session_id.renewed.lock().await;
        if self.session_id.current() != expired {
            return true;
        }
        if *renewed {
            return false;
        }
        *renewed = true;
        match try_classic(self.wire, &self.url).await {
            Ok(handshake) if handshake.version == self.version => {
                tracing::info!(url = %self.url, "classic session expired; re-initialized once");
                self.session_id.replace(handshake.session_id);
                true
            }
            Ok(_) | Err(_) => false,
        }
    }

    /// Walks `method` through `nextCursor`: at most `max_pages` pages and `max_tools` items,
    /// stopping early on a repeated cursor.
    async fn list(
        &self,
        method: &str,
        key: &str,
        options: &ProbeOptions,
    ) -> Result<Listing, ProbeError> {
        let mut listing = Listing::default();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..options.max_pages.max(1) {
            let (mut result, repeated) = self.call(method, cursor.as_deref()).await?;
            let Some(Value::Array(items)) = result.get_mut(key).map(Value::take) else {
                return Err(ProbeError::NotJson(format!(
                    "the {method} result has no {key} array"
                )));
            };
            let offset = listing.items.len();
            listing.repeated_keys.extend(
                repeated
                    .iter()
                    .filter_map(|pointer| item_pointer(pointer, key))
                    .map(|(index, inner)| (offset + index, inner))
                    .filter(|(index, _)| *index < offset + items.len()),
            );
            for item in items {
                if listing.items.len() == options.max_tools {
                    listing.truncated = true;
                    return Ok(listing);
                }
                listing.items.push(item);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if seen.insert(next.to_string()) => cursor = Some(next.to_string()),
                _ => return Ok(listing),
            }
        }
        listing.truncated = true;
        Ok(listing)
    }

    /// Counts the items of `method`; `None` when the listing fails (a count is optional).
    async fn count(&self, method: &str, key: &str, options: &ProbeOptions) -> Option<u64> {
        let options = ProbeOptions {
            max_tools: usize::MAX,
            ..options.clone()
        };
        let listing = self.list(method, key, &options).await.ok()?;
        Some(listing.items.len() as u64)
    }

    /// Ends a classic session politely; the answer does not matter.
    async fn close(&self) {
        if self.era == Era::Classic && self.session_id.current().is_some() {
            let mut headers = self.headers("");
            headers.remove(exchange::METHOD_HEADER);
            let _ = self.wire.delete(&self.url, headers).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetConfig;
    use std::time::Duration;

    #[test]
    fn repeated_key_pointers_map_to_the_item_and_its_inside() {
        let cases = [
            ("/result/tools/3/description", Some((3, "/description"))),
            (
                "/0/result/tools/12/inputSchema/properties/a",
                Some((12, "/inputSchema/properties/a")),
            ),
            ("/result/tools/0", Some((0, "/"))),
            ("/result/nextCursor", None),
            ("/result/tools/x/name", None),
        ];
        for (pointer, expected) in cases {
            let got = item_pointer(pointer, "tools");
            assert_eq!(got, expected.map(|(i, p)| (i, p.to_string())), "{pointer}");
        }
    }

    #[test]
    fn the_probe_future_can_be_spawned() {
        fn assert_send<T: Send>(_: &T) {}
        let client = Client::new(NetConfig::new(Duration::from_secs(1), 0, 1)).unwrap();
        let url = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let options = ProbeOptions::default();
        let future = probe(&client, &url, &options);
        assert_send(&future);
    }

    #[test]
    fn modern_params_carry_the_envelope_and_cursor() {
        let params = modern_params("2026-07-28", Some(""));
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
            CLIENT_NAME
        );
        assert_eq!(params["cursor"], "", "an empty cursor is a valid cursor");
        assert!(modern_params("2026-07-28", None).get("cursor").is_none());
    }

    #[test]
    fn only_a_known_modern_era_sends_list_calls_early() {
        let table = [
            (None, None, false),
            (None, Some(Era::Modern), true),
            (None, Some(Era::Classic), false),
            (Some(Era::Modern), None, true),
            (Some(Era::Modern), Some(Era::Classic), true),
            (Some(Era::Classic), Some(Era::Modern), false),
        ];
        for (force_era, preferred_era, expected) in table {
            let options = ProbeOptions {
                force_era,
                preferred_era,
                ..ProbeOptions::default()
            };
            assert_eq!(
                expects_modern(&options),
                expected,
                "force {force_era:?}, preferred {preferred_era:?}"
            );
        }
    }

    #[test]
    fn server_info_is_found_where_each_era_puts_it() {
        let namespaced = json!({"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "a"}}});
        let top = json!({"serverInfo": {"name": "b"}});
        assert_eq!(server_info(&namespaced, Era::Modern), json!({"name": "a"}));
        assert_eq!(server_info(&top, Era::Modern), json!({"name": "b"}));
        assert_eq!(server_info(&top, Era::Classic), json!({"name": "b"}));
        assert_eq!(server_info(&json!({}), Era::Classic), Value::Null);
    }
}
