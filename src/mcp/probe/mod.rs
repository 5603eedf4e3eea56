//! The probe: find the era a server speaks, do its handshake, and read its declared surface.
//!
//! Round trips, best case: modern = `server/discover` + list calls; classic = `initialize` +
//! `notifications/initialized` + list calls + `DELETE` of the session. The list calls
//! (`tools/list`, and `prompts/list`, `resources/list`, `resources/templates/list` when the server
//! declares those capabilities and reading them is on) run concurrently once the
//! handshake is done; each walks its `nextCursor` chain page by page. When the era is known to be
//! modern (from the ledger), `tools/list` is sent together with `server/discover`, so a
//! tools-only server costs one round trip.

mod classic;
mod envelope;
mod handshake;
mod session;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use url::Url;

use super::auth::{self, AuthChallenge, AuthFindings};
use super::era::{self, Era};
use super::error::{ProbeError, ProbeFailure};
use super::exchange::Wire;
use super::legacy_sse::Tally;
use super::raw::Facts;
use crate::net::Client;
use crate::surface::{Declared, ListRead, ServerIdentity};
use handshake::handshake;
use session::{Listing, Session, SessionSlot};

/// The name this client gives in `clientInfo`.
const CLIENT_NAME: &str = "mcp-surface-ledger";

/// The `_meta` key prefix of the modern per-request fields.
const META_PREFIX: &str = "io.modelcontextprotocol/";

/// What to read and how to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeOptions {
    /// Also read prompts, resources and resource templates when the server declares those
    /// capabilities (their declarations only: never `prompts/get` nor `resources/read`).
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
    /// Beside `resources_total`: `Some(false)` when the page limit cut the resource list (the
    /// count is a lower bound); `None` when the resources were not counted.
    pub resources_complete: Option<bool>,
    /// Prompts counted like resources.
    pub prompts_total: Option<u64>,
    /// Beside `prompts_total`, like `resources_complete`.
    pub prompts_complete: Option<bool>,
    /// The raw prompt objects of every page read: empty when the server declares no prompts,
    /// `None` when it does but they were not read (reading is off, or the listing failed).
    pub prompts: Option<ListRead>,
    /// The raw resource objects, like `prompts`.
    pub resources: Option<ListRead>,
    /// The raw resource template objects, like `prompts` (a server that declares resources but
    /// answers "method not found" to `resources/templates/list` has none).
    pub resource_templates: Option<ListRead>,
    /// The HTTP status of the handshake response.
    pub http_status: u16,
    /// Response body bytes read from this server in total.
    pub bytes_read: u64,
    /// HTTP requests sent to this server in total (including failed era attempts).
    pub requests_sent: u32,
    /// The raw-answer digest of everything the surface is built from ([`crate::mcp::raw`]);
    /// `None` when an answer's exact bytes could not be taken or a declared list failed.
    pub raw_digest: Option<String>,
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

    /// The prompts, resources and templates read, taken out of the observation (the counts
    /// stay), as the surface model keeps them.
    pub fn take_declared(&mut self) -> Declared {
        let (declared, left_out) = Declared::from_reads(
            self.prompts.take(),
            self.resources.take(),
            self.resource_templates.take(),
        );
        if left_out > 0 {
            tracing::warn!(
                url = %self.final_url,
                left_out,
                "prompts, resources or templates without a usable name or uri left out"
            );
        }
        declared
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
            raw: Default::default(),
        };
        let early_tools = async { Ok(early.list("tools/list", "tools", options).await) };
        let (handshake, tools) =
            futures::try_join!(handshake(client, wire, tally, url, options), early_tools)?;
        let usable = handshake.era == Era::Modern
            && handshake.version == early.version
            && handshake.url == early.url;
        (handshake, usable.then_some((tools, early.raw)))
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
        raw: Default::default(),
    };
    let (early_tools, early_raw) = early_tools.unzip();
    if let Some(early_raw) = early_raw {
        session.raw.absorb(early_raw);
    }
    let capabilities = handshake
        .result
        .get("capabilities")
        .filter(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let declares = |name: &str| capabilities.get(name).is_some_and(|c| !c.is_null());
    let read = |name: &str| options.count_resources_and_prompts && declares(name);
    // A kind not declared is known to be empty; one declared but not read is unknown.
    let unless_declared = |name: &str| (!declares(name)).then(ListRead::default);

    let tools = async {
        match early_tools {
            _ if !declares("tools") => Ok(Listing::default()),
            Some(tools) => tools,
            None => session.list("tools/list", "tools", options).await,
        }
    };
    // Every item of these lists is counted (within the page limit); a long list is
    // summarized in the surface (`surface::declared`, the data rule).
    let resources = async {
        if read("resources") {
            session
                .declared("resources/list", "resources", options)
                .await
        } else {
            unless_declared("resources")
        }
    };
    let templates = async {
        if read("resources") {
            session
                .declared("resources/templates/list", "resourceTemplates", options)
                .await
        } else {
            unless_declared("resources")
        }
    };
    let prompts = async {
        if read("prompts") {
            session.declared("prompts/list", "prompts", options).await
        } else {
            unless_declared("prompts")
        }
    };
    let (tools, resources, resource_templates, prompts) =
        futures::join!(tools, resources, templates, prompts);
    session.close().await;
    let total = |name: &str, list: &Option<ListRead>| {
        if read(name) {
            list.as_ref().map(|l| l.items.len() as u64)
        } else {
            None
        }
    };
    let complete = |name: &str, list: &Option<ListRead>| {
        if read(name) {
            list.as_ref().map(|l| !l.truncated)
        } else {
            None
        }
    };
    let resources_total = total("resources", &resources);
    let resources_complete = complete("resources", &resources);
    let prompts_total = total("prompts", &prompts);
    let prompts_complete = complete("prompts", &prompts);

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
    let facts = Facts {
        era: handshake.era,
        version: &handshake.version,
        url: final_url.as_str(),
        max_tools: options.max_tools,
        max_pages: options.max_pages as usize,
        declared_lists: options.count_resources_and_prompts,
    };
    let raw_digest = session.raw.digest(&facts, &handshake.result);
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
        resources_complete,
        prompts_total,
        prompts_complete,
        prompts,
        resources,
        resource_templates,
        http_status: handshake.status,
        bytes_read: 0,
        requests_sent: 0,
        raw_digest,
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

#[cfg(test)]
mod tests {
    use super::envelope::modern_params;
    use super::session::item_pointer;
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
