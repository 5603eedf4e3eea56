//! The MCP tools: the HTTP API's questions for agents, served by `rmcp` at `/mcp`.
//!
//! Every tool is read-only (`readOnlyHint: true`, not destructive, idempotent, closed world),
//! declares an `outputSchema` and answers with structured content; the text content carries
//! the same JSON for clients that read only text. A question that cannot be answered (unknown
//! ledger or server, bad document) is a tool result with `isError: true` and the message.
//!
//! Every input and output schema is standard JSON Schema 2020-12: the `format` values
//! `schemars` gives Rust numbers (`uint`, `uint64`, …) are rewritten by
//! [`super::schema::standardize`] before the tools are listed, so a client's validator has
//! nothing to warn about.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::compare::{self, DiffRequest, DiffView};
use super::query::parse_since;
use super::schema::standardize_object;
use super::store::Reader;
use super::store::{ChangesView, LedgersView, ServersView, SurfaceView};

pub use super::store::DEFAULT_LEDGER;

/// Arguments naming a ledger.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LedgerArgs {
    /// The ledger (the Actor input's `ledger_name`); default `DEFAULT`, or the store's only
    /// ledger when it has no `DEFAULT` (see `list_ledgers`).
    #[serde(default)]
    pub ledger_name: Option<String>,
}

/// Arguments of `get_surface`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SurfaceArgs {
    /// The ledger (the Actor input's `ledger_name`); default `DEFAULT`, or the store's only
    /// ledger when it has no `DEFAULT` (see `list_ledgers`).
    #[serde(default)]
    pub ledger_name: Option<String>,
    /// The server's URL, as listed by `list_watched_servers`.
    pub server_url: String,
    /// An RFC 3339 time: the surface the server served then, rebuilt from the stored surface
    /// and the kept values. Omitted: the stored (latest) surface.
    #[serde(default)]
    pub at: Option<String>,
}

/// Arguments of `get_changes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChangesArgs {
    /// The ledger (the Actor input's `ledger_name`); default `DEFAULT`, or the store's only
    /// ledger when it has no `DEFAULT` (see `list_ledgers`).
    #[serde(default)]
    pub ledger_name: Option<String>,
    /// The server's URL, as listed by `list_watched_servers`.
    pub server_url: String,
    /// Only changes observed at or after this RFC 3339 time.
    #[serde(default)]
    pub since: Option<String>,
}

/// The MCP server over one ledger store.
#[derive(Clone)]
pub struct LedgerTools {
    reader: Reader,
    tool_router: ToolRouter<LedgerTools>,
}

/// A copy of `schema` in standard JSON Schema.
fn standard(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    let mut object = schema.as_ref().clone();
    standardize_object(&mut object);
    Arc::new(object)
}

fn ledger(name: &Option<String>) -> &str {
    name.as_deref().unwrap_or(DEFAULT_LEDGER)
}

#[tool_router]
impl LedgerTools {
    /// A tool server reading through `reader`.
    pub fn new(reader: Reader) -> Self {
        LedgerTools {
            reader,
            tool_router: Self::standard_router(),
        }
    }

    /// The tool router with standard JSON Schema for every input and output schema.
    fn standard_router() -> ToolRouter<Self> {
        let mut router = Self::tool_router();
        for route in router.map.values_mut() {
            route.attr.input_schema = standard(&route.attr.input_schema);
            route.attr.output_schema = route.attr.output_schema.as_ref().map(standard);
        }
        router
    }

    /// Lists the ledgers of the store (a sharded watch once, by its name) and the one a call
    /// that names no ledger is answered from.
    #[tool(annotations(
        title = "List ledgers",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_ledgers(&self) -> Result<Json<LedgersView>, String> {
        self.reader
            .ledgers_view()
            .await
            .map(Json)
            .map_err(|e| e.to_string())
    }

    /// Lists the MCP servers a ledger watches, every server of the last run included (read or
    /// not): identity, tool digest, risk, first seen, last change, and the last status (reason
    /// code, since when, last read); a server whose last read failed says so in `status`.
    #[tool(annotations(
        title = "List watched MCP servers",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_watched_servers(
        &self,
        Parameters(args): Parameters<LedgerArgs>,
    ) -> Result<Json<ServersView>, String> {
        let name = ledger(&args.ledger_name);
        self.reader
            .servers(name)
            .await
            .map(Json)
            .map_err(|e| e.to_string())
    }

    /// The recorded changes of one watched server (class, tool, field, severity, time, and the
    /// before/after values the ledger kept), oldest first, optionally only those since an RFC
    /// 3339 time.
    #[tool(annotations(
        title = "Get a server's changes",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_changes(
        &self,
        Parameters(args): Parameters<ChangesArgs>,
    ) -> Result<Json<ChangesView>, String> {
        let since = args
            .since
            .as_deref()
            .map(parse_since)
            .transpose()
            .map_err(|e| e.to_string())?;
        let name = ledger(&args.ledger_name);
        self.reader
            .changes(name, &args.server_url, since)
            .await
            .map(Json)
            .map_err(|e| e.to_string())
    }

    /// The stored surface of one watched server: identity, risk and every tool definition as
    /// last served, or (with `at`) as served at that time.
    #[tool(annotations(
        title = "Get a server's stored surface",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_surface(
        &self,
        Parameters(args): Parameters<SurfaceArgs>,
    ) -> Result<Json<SurfaceView>, String> {
        let name = ledger(&args.ledger_name);
        let at = args
            .at
            .as_deref()
            .map(parse_since)
            .transpose()
            .map_err(|e| e.to_string())?;
        self.reader
            .surface(name, &args.server_url, at)
            .await
            .map(Json)
            .map_err(|e| e.to_string())
    }

    /// Compares two tools/list documents (or snapshots) and returns the classified changes,
    /// the same rows as the `diff` command. Nothing is fetched: the documents are the input.
    #[tool(annotations(
        title = "Diff two tool surfaces",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn diff_surfaces(
        &self,
        Parameters(request): Parameters<DiffRequest>,
    ) -> Result<Json<DiffView>, String> {
        compare::diff(request).map(Json).map_err(|e| e.to_string())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for LedgerTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Read-only answers from an MCP surface ledger: which MCP servers are watched, \
                 what changed in their declared tools and when, their stored tool definitions, \
                 and the classified diff of two tools/list documents. Nothing is probed on request.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::schema::nonstandard_formats;
    use serde_json::Value;

    #[test]
    fn every_tool_schema_is_standard_json_schema() {
        let tools = LedgerTools::standard_router().list_all();
        assert!(tools.len() >= 4, "{tools:?}");
        for tool in &tools {
            let output = tool.output_schema.as_ref().expect("an output schema");
            for (kind, schema) in [("input", &tool.input_schema), ("output", output)] {
                let schema = Value::Object(schema.as_ref().clone());
                assert_eq!(
                    nonstandard_formats(&schema),
                    Vec::<(String, String)>::new(),
                    "{} {kind} schema: {schema}",
                    tool.name
                );
            }
        }
        // The unsigned counts keep their meaning.
        let servers = tools
            .iter()
            .find(|tool| tool.name == "list_watched_servers")
            .and_then(|tool| tool.output_schema.clone())
            .expect("list_watched_servers");
        assert_eq!(
            servers["properties"]["servers_total"],
            serde_json::json!({"type": "integer", "minimum": 0, "description": "Number of servers."})
        );
    }

    #[test]
    fn the_generated_schemas_do_need_rewriting() {
        // Guards the test above: without the rewrite, schemars' own formats are there.
        let tools = LedgerTools::tool_router().list_all();
        let formats: Vec<String> = tools
            .iter()
            .filter_map(|tool| tool.output_schema.as_ref())
            .flat_map(|schema| nonstandard_formats(&Value::Object(schema.as_ref().clone())))
            .map(|(_, format)| format)
            .collect();
        assert!(formats.iter().any(|f| f.starts_with("uint")), "{formats:?}");
    }
}
