//! The views the HTTP API, the pages and the MCP tools answer with: what a reader of the ledger
//! sees of a server, its history and its stored surface. Plain data with their JSON Schema
//! (the OpenAPI components and the tools' output schemas are generated from them), and the
//! functions that build them from ledger entries.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::{self, ChangeValues, Entry, HistoryItem, Ledger};
use crate::report::{ToolSummaries, assumed_server_risk};
use crate::risk::{self, Finding, Risk};
use crate::server_status::ServerStatus;
use crate::surface::{DeclaredItem, ListSummary, Surface};

/// One watched server, as listed: its ledger entry, and its status after the last run.
/// A server the last run could not read is listed with that status even when it was never
/// read (then it has no identity, tools or `first_seen`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerView {
    /// The server's URL (its key in the ledger).
    pub server_url: String,
    /// `serverInfo.name` of the last readable surface.
    pub server_name: Option<String>,
    /// `serverInfo.title` of the last readable surface.
    pub server_title: Option<String>,
    /// `serverInfo.version` of the last readable surface.
    pub server_version: Option<String>,
    /// The negotiated protocol revision.
    pub protocol_version: Option<String>,
    /// The transport that worked last time.
    pub transport: Option<String>,
    /// Digest of the last readable tool surface.
    pub tool_digest: Option<String>,
    /// Number of tools in the last readable surface.
    pub tools_total: usize,
    /// The highest declared risk of any stored tool: `low`, `medium` or `high` (absent without
    /// a readable stored surface). `high` is evidence, never only the protocol's defaults.
    pub risk: Option<String>,
    /// The highest risk with the protocol's defaults assumed for hints the tools leave out
    /// (an unannotated tool counts as destructive); above `risk` only because of such tools.
    pub assumed_risk: Option<String>,
    /// When the server was first read (absent for a server never read).
    pub first_seen: Option<DateTime<Utc>>,
    /// When the ledger entry was last updated by a read (absent for a server never read).
    pub last_seen: Option<DateTime<Utc>>,
    /// When a change was last recorded.
    pub last_changed: Option<DateTime<Utc>>,
    /// The most recent recorded change.
    pub last_change: Option<ChangeView>,
    /// The server's status after the last run that watched it; absent when no run of this
    /// build looked at it since (a ledger written before status records, or a server no
    /// longer in the watch's input).
    pub status: Option<StatusView>,
}

/// A server's status after the last run that watched it (the record `status.<ledger_name>`
/// beside the ledger).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusView {
    /// What the status says: `healthy`, `degraded` (read, but its stored baseline could not
    /// be used), `unreachable`, `auth_required`, `blocked`, `over_budget` or `not_read` (on
    /// purpose, e.g. a registry URL template).
    pub state: String,
    /// The last run's reason code (`OK` when it was read without a problem).
    pub reason_code: String,
    /// Whether the last run read the surface. When not, the tools and risk listed are those of
    /// the last read, not of the server as it is now.
    pub ok: bool,
    /// The last run's error, in words (shortened).
    pub error: Option<String>,
    /// Since when the server has had this reason code.
    pub since: DateTime<Utc>,
    /// When its surface was last read (absent: never).
    pub last_read: Option<DateTime<Utc>>,
    /// When the last run looked at it.
    pub checked_at: DateTime<Utc>,
}

/// One remembered change of a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeView {
    /// When the change was observed.
    pub observed_at: DateTime<Utc>,
    /// Its change class (e.g. `tool_added`).
    pub change_class: String,
    /// The tool concerned, if any.
    pub tool_name: Option<String>,
    /// The field that changed.
    pub field: String,
    /// Its severity (`low`, `medium`, `high`, `breaking`).
    pub severity: String,
    /// Its before and after, as far as the ledger keeps them: each side's canonical JSON
    /// (`{"json": …}`) when small, else its size and SHA-256 (`{"bytes": …, "sha256": …}`).
    /// Absent for changes recorded before values were kept, or whose values the ledger
    /// dropped to stay within its record size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<ChangeValues>,
}

/// The servers of one ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServersView {
    /// The ledger read.
    pub ledger_name: String,
    /// When the ledger was last written.
    pub updated_at: DateTime<Utc>,
    /// Number of servers.
    pub servers_total: usize,
    /// The watched servers, by URL.
    pub servers: Vec<ServerView>,
    /// One loud sentence per ledger whose chain is not intact (broken, started again by a
    /// run, or adopted), naming the ledger; empty when every chain checks.
    pub chain_alerts: Vec<String>,
    /// When the last run that left the servers' statuses started (absent without one).
    pub last_run_at: Option<DateTime<Utc>>,
    /// Set when a status record could not be read (the servers are then listed from the
    /// ledger, without that status): says which and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_note: Option<String>,
    /// Set when the ledger asked for (the default, `DEFAULT`) does not exist and the store's
    /// only ledger was answered instead: says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The remembered history of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangesView {
    /// The ledger read.
    pub ledger_name: String,
    /// The server.
    pub server_url: String,
    /// Only changes observed at or after this instant, when asked.
    pub since: Option<DateTime<Utc>>,
    /// The fewest changes per server an index keeps when it must shorten itself to stay
    /// within the record limit; otherwise every change within the ledger's retention period
    /// (`history_retention_days`) is kept.
    pub history_limit: usize,
    /// Number of changes returned.
    pub changes_total: usize,
    /// The changes, oldest first.
    pub changes: Vec<ChangeView>,
    /// Set when the ledger asked for (the default, `DEFAULT`) does not exist and the store's
    /// only ledger was answered instead: says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The stored surface of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SurfaceView {
    /// The ledger read.
    pub ledger_name: String,
    /// The server.
    pub server_url: String,
    /// The time asked for (`?at=`): the surface is the one served then, rebuilt from the
    /// stored surface and the kept values. Absent for the stored surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    /// Digest of the stored tool surface.
    pub tool_digest: Option<String>,
    /// The record holding the surface.
    pub surface_key: Option<String>,
    /// Server identity at the time (`name`, `title`, `version`, `protocol_version`,
    /// `instructions`).
    pub identity: Value,
    /// The highest declared risk of any tool.
    pub risk: String,
    /// The highest risk with the protocol's defaults assumed for omitted hints.
    pub assumed_risk: String,
    /// Number of tools.
    pub tools_total: usize,
    /// The tool objects exactly as served.
    pub tools: Vec<Value>,
    /// The prompt objects exactly as served (`prompts/list`; never their text, which only
    /// `prompts/get` returns and which is never called).
    #[serde(default)]
    pub prompts: Vec<Value>,
    /// The resource objects as served, when the list was itemized (at most 100, read whole).
    #[serde(default)]
    pub resources: Vec<Value>,
    /// The resource template objects exactly as served.
    #[serde(default)]
    pub resource_templates: Vec<Value>,
    /// A resource list too large or incomplete to itemize: `total`, `complete` and a `sample`
    /// of URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_list: Option<Value>,
    /// A prompt list too long (over 500) or incomplete to itemize: `total`, `complete` and a
    /// `sample` of names (`prompts` is then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_list: Option<Value>,
    /// A resource template list too long (over 500) or incomplete to itemize, like
    /// `prompt_list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_template_list: Option<Value>,
    /// Kinds the server declares that were not read (`prompt`, `resource`,
    /// `resourceTemplate`): nothing is known of them.
    #[serde(default)]
    pub unread: Vec<String>,
    /// Poisoning markers and advisories in the texts of the prompts, resources and resource
    /// templates (a marker makes `risk` high), each pointer naming the item and the text
    /// (`prompts["greet"]/description`).
    #[serde(default)]
    pub declared_findings: Vec<FindingView>,
    /// Set when the ledger asked for (the default, `DEFAULT`) does not exist and the store's
    /// only ledger was answered instead: says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One finding of the risk scanner in a text of the surface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingView {
    /// The finding kind: `poisoning` (a marker), `advisory`, … (see `docs/risk.md`).
    pub kind: String,
    /// The rule that fired.
    pub pattern: String,
    /// Where: the item and the JSON pointer of the text inside it.
    pub pointer: String,
    /// The matched text, invisible characters shown as `\u{…}`.
    pub excerpt: String,
    /// How bad the finding is on its own: `low`, `medium` or `high`.
    pub severity: String,
}

impl FindingView {
    /// A finding as the API shows it.
    fn of(finding: &Finding) -> Self {
        FindingView {
            kind: finding.kind.clone(),
            pattern: finding.pattern.clone(),
            pointer: finding.pointer.clone(),
            excerpt: finding.excerpt.clone(),
            severity: wire_name(&finding.severity),
        }
    }
}

/// The ledgers of a store, for the `list_ledgers` tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LedgersView {
    /// Number of ledgers.
    pub ledgers_total: usize,
    /// The ledger names, sorted (a sharded watch once, by its name).
    pub ledgers: Vec<String>,
    /// The ledger a question that names none is answered from: `DEFAULT` when the store has
    /// it, else the store's only ledger; absent when there are several and none is `DEFAULT`.
    pub default_ledger: Option<String>,
}

/// One change of a fleet, with the server it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetChange {
    /// The server's URL (its ledger key).
    pub server_url: String,
    /// The change.
    pub change: ChangeView,
}

/// Everything the server page shows about one server.
#[derive(Debug, Clone)]
pub struct ServerDetail {
    /// The server as listed.
    pub server: ServerView,
    /// Its remembered changes, oldest first.
    pub history: Vec<ChangeView>,
    /// The per-tool summaries and the declared findings of its stored surface (none without
    /// a readable one).
    pub tools: Option<ToolSummaries>,
    /// The server's instructions of its stored surface.
    pub instructions: Option<String>,
    /// The tool objects of its stored surface exactly as served, in the order of `tools`.
    pub raw_tools: Vec<Value>,
}

/// A server's declared and assumed risk (see `docs/risk.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Risks {
    /// From what the tools declare.
    pub(super) declared: Risk,
    /// With the protocol's defaults for omitted hints.
    pub(super) assumed: Risk,
}

impl Risks {
    /// Both risks of a surface's summaries.
    pub(super) fn of(summaries: &ToolSummaries) -> Risks {
        Risks {
            declared: summaries.risk,
            assumed: assumed_server_risk(summaries),
        }
    }
}

/// The listing of one entry, with its risks when known (and no status yet).
pub(super) fn server_view(entry: &Entry, risks: Option<Risks>) -> ServerView {
    ServerView {
        server_url: entry.server_url.clone(),
        server_name: entry.identity.name.clone(),
        server_title: entry.identity.title.clone(),
        server_version: entry.identity.version.clone(),
        protocol_version: entry.identity.protocol_version.clone(),
        transport: entry.transport.clone(),
        tool_digest: entry.tool_digest.clone(),
        tools_total: entry.tools_total,
        risk: risks.map(|r| wire_name(&r.declared)),
        assumed_risk: risks.map(|r| wire_name(&r.assumed)),
        first_seen: Some(entry.first_seen),
        last_seen: Some(entry.last_seen),
        last_changed: entry.last_changed,
        last_change: entry.history.last().map(change_view),
        status: None,
    }
}

/// The listing of a server the last run watched that has no ledger entry (never read).
pub(super) fn unread_server_view(status: &ServerStatus) -> ServerView {
    ServerView {
        server_url: status.server_url.clone(),
        server_name: None,
        server_title: None,
        server_version: None,
        protocol_version: None,
        transport: None,
        tool_digest: None,
        tools_total: 0,
        risk: None,
        assumed_risk: None,
        first_seen: None,
        last_seen: None,
        last_changed: None,
        last_change: None,
        status: Some(status_view(status)),
    }
}

/// A server's last status as the API shows it.
pub(super) fn status_view(status: &ServerStatus) -> StatusView {
    StatusView {
        state: status.class().as_str().to_string(),
        reason_code: status.reason_code.clone(),
        ok: status.ok,
        error: status.error.clone(),
        since: status.since,
        last_read: status.last_read,
        checked_at: status.checked_at,
    }
}

/// One remembered change as the API shows it.
pub(super) fn change_view(item: &HistoryItem) -> ChangeView {
    ChangeView {
        observed_at: item.observed_at,
        change_class: wire_name(&item.change_class),
        tool_name: item.tool_name.clone(),
        field: item.field.clone(),
        severity: wire_name(&item.severity),
        values: item.values.clone(),
    }
}

/// The name a value serializes to (`"high"`, `"tool_added"`): the dataset's spelling.
pub(super) fn wire_name(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

/// The answer of the surface route: `entry`'s surface `surface` (the stored one, or the one
/// served at `at`).
pub(super) fn surface_view(
    ledger: &Ledger,
    entry: &Entry,
    surface: &Surface,
    risks: Risks,
    at: Option<DateTime<Utc>>,
) -> SurfaceView {
    let (tool_digest, surface_key) = match at {
        None => (entry.tool_digest.clone(), entry.surface_key.clone()),
        Some(_) => {
            let digest = surface.tool_digest();
            let key = ledger::StoredSurface::key_for(&surface.identity, &digest);
            (Some(digest), Some(key))
        }
    };
    SurfaceView {
        ledger_name: ledger.ledger_name.clone(),
        server_url: entry.server_url.clone(),
        at,
        tool_digest,
        surface_key,
        identity: serde_json::to_value(&surface.identity).unwrap_or(Value::Null),
        risk: wire_name(&risks.declared),
        assumed_risk: wire_name(&risks.assumed),
        tools_total: surface.tools.len(),
        tools: surface.tools.iter().map(|tool| tool.raw.clone()).collect(),
        prompts: raw_items(&surface.declared.prompts),
        resources: raw_items(&surface.declared.resources),
        resource_templates: raw_items(&surface.declared.resource_templates),
        resource_list: summary_value(surface.declared.resource_list.as_ref()),
        prompt_list: summary_value(surface.declared.prompt_list.as_ref()),
        resource_template_list: summary_value(surface.declared.resource_template_list.as_ref()),
        unread: surface.declared.unread.iter().map(wire_name).collect(),
        declared_findings: risk::declared::scan_all_with(
            &mut risk::declared::cache_for(surface.tools.iter().map(|t| &t.raw), &surface.declared),
            &surface.declared,
        )
        .iter()
        .map(FindingView::of)
        .collect(),
        note: None,
    }
}

/// A list summary as JSON, without its item digests.
fn summary_value(summary: Option<&ListSummary>) -> Option<Value> {
    let mut value = serde_json::to_value(summary?).ok()?;
    // The item digests are comparison material (up to 2,000 of them), not something to show.
    if let Some(object) = value.as_object_mut() {
        object.remove("digests");
    }
    Some(value)
}

/// The items of a declared list exactly as served.
fn raw_items(items: &[DeclaredItem]) -> Vec<Value> {
    items.iter().map(|item| item.raw.clone()).collect()
}
