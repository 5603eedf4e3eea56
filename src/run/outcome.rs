//! What a probe yields and what one server contributes to the run: shared by the stages.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::diff::{AuthState, Change};
use crate::ledger::{Entry, StoredSurface, short_tool_digests};
use crate::mcp::{Era, Observation, ProbeFailure};
use crate::platform::Record;
use crate::reason::ReasonCode;
use crate::report::{
    LedgerStatus, ServerRow, ToolSummaries, mark_repeated_keys, server_risks, summarize_tools_with,
};
use crate::risk::{Capability, IdentitySignal, Risk};
use crate::surface::{DIGEST_ALGORITHM, InvalidTool, ServerIdentity, Surface};
use crate::targets::Target;

/// How probing one target ended.
pub(super) enum Probed {
    Read(Box<Prepared>),
    Failed(Box<ProbeFailure>),
    TimedOut,
    RunDeadline,
    /// The probe task panicked (a bug); reported, never fatal for the run.
    Crashed(String),
    /// The server answered, but its tool list cannot be used.
    Unusable(String),
    /// The server answered byte for byte as the ledger last recorded: no surface was built.
    Unchanged(Box<Unchanged>),
}

/// A read surface with everything that does not depend on the ledger already computed, in the
/// probe's own task (so both cores share the hashing and the risk assessment).
pub(super) struct Prepared {
    pub(super) observation: Observation,
    pub(super) surface: Surface,
    pub(super) tool_digest: String,
    /// Key of the stored surface record ([`StoredSurface::key_for`]).
    pub(super) surface_key: String,
    /// The surface's insight, as cached (no duplicate-key findings).
    pub(super) insight: Arc<ToolSummaries>,
    /// `(tool name, pointer)` of every object key the served JSON repeated.
    pub(super) repeated_keys: Vec<(String, String)>,
    /// The short digest of each tool, computed with the insight when it was not reused
    /// ([`crate::ledger::short_tool_digests`]).
    pub(super) tool_digests: Option<BTreeMap<String, String>>,
    /// The compressed surface record, built here when the ledger does not name this surface
    /// yet (a first read or a change), so compressing happens on both cores during probing
    /// instead of one after the other while outcomes are recorded.
    pub(super) record: Option<Record>,
}

/// What the ledger already holds for a server, handed to its probe task.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// The surface key the ledger entry names.
    pub(super) surface_key: Option<String>,
    /// Insight an earlier run computed for that surface key.
    pub(super) insight: Option<Arc<ToolSummaries>>,
    /// What an unchanged read may reuse, when the entry holds a raw-answer digest.
    pub(super) baseline: Option<Baseline>,
}

/// What the ledger holds for a server whose answers may come back unchanged, handed to its
/// probe task.
#[derive(Debug, Clone)]
pub(super) struct Baseline {
    pub(super) raw_digest: String,
    pub(super) tool_digest: String,
    pub(super) surface_key: String,
    pub(super) identity: ServerIdentity,
    pub(super) insight: Arc<ToolSummaries>,
}

/// A read whose answers matched its [`Baseline`].
pub(super) struct Unchanged {
    pub(super) observation: Observation,
    pub(super) baseline: Baseline,
    /// `(tool name, pointer)` of every object key the answer repeated.
    pub(super) repeated_keys: Vec<(String, String)>,
}

/// The row being built for one server, with the ledger key of the view it read.
pub(super) struct View<'a> {
    pub(super) key: &'a str,
    pub(super) row: ServerRow,
}

/// Insight an earlier run computed, with the surface key it belongs to.
pub(super) type CachedInsight = (String, Arc<ToolSummaries>);

impl Prepared {
    /// Builds the surface, its insight and, for a surface the ledger does not hold yet, its
    /// record; the cached insight is reused when the surface key is the one the ledger names.
    pub(super) fn of(mut observation: Observation, known: Known) -> Result<Self, String> {
        let tools = std::mem::take(&mut observation.tools);
        let repeated_keys = observation.repeated_keys_by_tool(&tools);
        let surface = Surface::from_tools(observation.identity(), tools)
            .map_err(|error| format!("the tool list is not usable: {error}"))?
            .with_declared(observation.take_declared());
        for invalid in &surface.invalid_tools {
            tracing::warn!(
                url = %observation.final_url,
                index = invalid.index,
                name = invalid.name.as_deref().unwrap_or(""),
                "tool definition left out of the surface: {}",
                invalid.detail
            );
        }
        // One canonical pass over the tools gives the surface's digest and, when the insight
        // must be computed, every tool's digests.
        let canonical = surface.canonical_tools();
        let tool_digest = canonical.tool_digest();
        let surface_key = StoredSurface::key_for(&surface.identity, &tool_digest);
        let stored = known.surface_key.as_deref() == Some(surface_key.as_str());
        let (insight, tool_digests) = match known.insight {
            Some(insight) if stored => (insight, None),
            _ => {
                let digests = canonical.tool_digests();
                let raw_hashes: Vec<_> = digests.iter().map(|d| d.raw_hash).collect();
                let short = short_tool_digests(&surface, &raw_hashes);
                (
                    Arc::new(summarize_tools_with(&surface, digests)),
                    Some(short),
                )
            }
        };
        drop(canonical);
        let record = (!stored).then(|| StoredSurface::record_of(&surface));
        Ok(Prepared {
            tool_digest,
            surface_key,
            insight,
            repeated_keys,
            tool_digests,
            record,
            observation,
            surface,
        })
    }

    /// The server's declared and assumed risk with this answer's duplicate-key findings.
    pub(super) fn server_risks(&self) -> (Risk, Risk) {
        server_risks(&self.insight, &self.repeated_keys)
    }
}

/// The insight plus the duplicate-key findings of one answer.
pub(super) fn row_summaries(
    insight: &ToolSummaries,
    repeated_keys: &[(String, String)],
) -> ToolSummaries {
    let mut summaries = insight.clone();
    mark_repeated_keys(&mut summaries, repeated_keys);
    summaries
}

/// Where a server row's per-tool summaries and declared findings come from. The row's `tools`
/// and `declared_findings` stay empty until the row is serialized: a fleet's rows wait for the
/// end of the run, and holding a copy of every surface's summaries there would double what
/// the insight cache already holds.
pub(super) struct RowTools {
    pub(super) insight: Arc<ToolSummaries>,
    pub(super) repeated_keys: Vec<(String, String)>,
}

impl RowTools {
    /// The row's `tools`.
    pub(super) fn summaries(&self) -> Vec<crate::report::ToolSummary> {
        row_summaries(&self.insight, &self.repeated_keys).tools
    }

    /// The row's `capabilities` (duplicate keys change no capability).
    pub(super) fn capabilities(&self) -> BTreeMap<Capability, Vec<String>> {
        self.insight.capabilities()
    }

    /// The row's `declared_findings`.
    pub(super) fn declared_findings(&self) -> Vec<crate::risk::Finding> {
        self.insight.declared_findings.clone()
    }
}

/// The probe result of one target with the wall time it took.
pub(super) struct Outcome {
    pub(super) target: Target,
    pub(super) probed: Probed,
    pub(super) elapsed: Duration,
    pub(super) index: usize,
}

/// Everything one server contributed to the run's output.
pub(super) struct ServerResult {
    pub(super) row: ServerRow,
    /// The changes that become rows (already filtered by `alert_on`).
    pub(super) changes: Vec<Change>,
    /// The new surface record to store, `(key, record)`; taken and written while outcomes
    /// are recorded.
    pub(super) surface_write: Option<(String, Record)>,
    /// The insight of the surface the ledger entry now names, for the cache.
    pub(super) insight: Option<CachedInsight>,
    /// The row's per-tool summaries, filled in when the row is serialized.
    pub(super) tools: Option<RowTools>,
    /// The server's answers were byte-identical to the ledger's, so its surface work was
    /// skipped (`run::unchanged`).
    pub(super) bytes_unchanged: bool,
}

pub(super) fn base_row(now: DateTime<Utc>) -> ServerRow {
    ServerRow {
        record_type: "server",
        digest_algorithm: DIGEST_ALGORITHM,
        observed_at: Some(now),
        ..ServerRow::default()
    }
}

pub(super) fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        Era::Classic => "classic",
        Era::LegacySse => "legacy_sse",
    }
}

/// The result of a server whose ledger entry stays as it was (not read, or not usable).
pub(super) fn unavailable_result(row: ServerRow) -> ServerResult {
    ServerResult {
        row: ServerRow {
            ledger_status: Some(LedgerStatus::Unavailable),
            ..row
        },
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
        bytes_unchanged: false,
    }
}

/// The auth state of a server that was read: listing needed no authentication.
pub(super) fn readable_auth() -> AuthState {
    AuthState {
        auth_required: false,
        anonymous_listing_allowed: true,
        ..AuthState::default()
    }
}

/// What the row of a read server says beyond its probe's observation.
pub(super) struct ReadFacts<'a> {
    pub(super) identity: &'a ServerIdentity,
    /// Usable tools in the surface.
    pub(super) tools_total: usize,
    pub(super) invalid_tools: Vec<InvalidTool>,
    /// The surface's tool digest.
    pub(super) digest: String,
    /// The server's declared risk, with this answer's duplicate-key findings.
    pub(super) risk: Risk,
    /// The server's assumed risk, likewise.
    pub(super) assumed_risk: Risk,
    pub(super) identity_signal: Option<IdentitySignal>,
    pub(super) status: LedgerStatus,
    /// Change rows written for this server.
    pub(super) change_count: usize,
    pub(super) reason_code: ReasonCode,
    /// The anonymous view (an authenticated read says nothing about anonymous callers).
    pub(super) anonymous: bool,
}

/// The row of a read server, the same whether its surface was built or its answers were
/// byte-identical to the ledger's (`run::unchanged`); `entry` is its ledger entry after the
/// update.
pub(super) fn readable_row(
    row: ServerRow,
    observation: &Observation,
    facts: ReadFacts<'_>,
    entry: Option<&Entry>,
) -> ServerRow {
    let anonymous = facts.anonymous;
    ServerRow {
        final_url: Some(observation.final_url.to_string()),
        ok: true,
        reason_code: Some(facts.reason_code),
        http_status: Some(observation.http_status),
        transport: Some(observation.transport.clone()),
        protocol_version: Some(observation.protocol_version.clone()),
        protocol_era: Some(era_name(observation.era).to_string()),
        server_name: facts.identity.name.clone(),
        server_version: facts.identity.version.clone(),
        // An authenticated read says nothing about what an anonymous caller may do.
        anonymous_listing_allowed: anonymous.then_some(true),
        auth_required: anonymous.then_some(false),
        tools_total: Some(facts.tools_total),
        invalid_tools_total: Some(facts.invalid_tools.len()),
        invalid_tools: facts.invalid_tools,
        resources_total: observation.resources_total,
        resources_complete: observation.resources_complete,
        prompts_total: observation.prompts_total,
        prompts_complete: observation.prompts_complete,
        digest_changed: row
            .previous_tool_digest
            .as_deref()
            .is_some_and(|p| p != facts.digest),
        tool_digest: Some(facts.digest),
        risk: Some(facts.risk),
        assumed_risk: Some(facts.assumed_risk),
        // Like `tools`, filled in from the insight when the row is serialized.
        capabilities: BTreeMap::new(),
        identity_signal: facts.identity_signal,
        tools_truncated: observation.tools_truncated,
        ledger_status: Some(facts.status),
        change_count: facts.change_count,
        first_seen: entry.map(|e| e.first_seen),
        last_changed: entry.and_then(|e| e.last_changed),
        bytes_read: observation.bytes_read,
        ..row
    }
}
