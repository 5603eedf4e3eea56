//! The dataset rows, exactly as the specification names their fields.
//!
//! Three row types share one dataset and are told apart by `record_type`: one [`ServerRow`] per
//! input entry, one [`ChangeRow`] per recorded change, and one [`SummaryRow`] per run. This
//! module only shapes data; [`crate::run`] decides what goes in. [`html`] renders rows as the
//! `REPORT` page; [`sarif`] renders change rows as a SARIF 2.1.0 log.

mod chain;
pub mod highlight;
pub mod html;
mod notification;
pub mod sarif;
mod summary;

pub use chain::chain_status_not_intact;
pub use notification::NotificationOutcome;
use std::collections::BTreeMap;
pub use summary::{
    INSIGHT_REVISION, ToolSummaries, ToolSummary, assumed_server_risk, mark_repeated_keys,
    server_risks, summarize_tools, summarize_tools_with,
};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::{Change, ChangeClass, Compatibility, Severity};
use crate::reason::ReasonCode;
use crate::risk::{Capability, Finding, IdentitySignal, Risk};
use crate::surface::InvalidTool;
use crate::targets::Listing;

/// Whether a server's ledger entry was created, compared, or left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerStatus {
    /// First observation: the baseline was written, no change recorded.
    Created,
    /// Compared against the stored baseline.
    Compared,
    /// Not read (unreachable, blocked, deadline): the stored entry is unchanged.
    Unavailable,
    /// Read, but the budget could not pay for every change: the entry is unchanged so the next
    /// run reports the same changes.
    Deferred,
}

// Rows are read back (a sharded watch merges the rows of its shards); the constant fields are
// not read, they are what this build writes.
fn server_record_type() -> &'static str {
    "server"
}
fn change_record_type() -> &'static str {
    "change"
}
fn summary_record_type() -> &'static str {
    "summary"
}
fn digest_algorithm() -> &'static str {
    crate::surface::DIGEST_ALGORITHM
}
fn ledger_store() -> &'static str {
    crate::platform::LEDGER_STORE_NAME
}

/// The row of one input entry (`record_type: "server"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ServerRow {
    /// Always `"server"`.
    #[serde(skip_deserializing, default = "server_record_type")]
    pub record_type: &'static str,
    /// The entry as given (normalized URL for usable targets).
    pub server_url: String,
    /// Which view was read: `anonymous`, or `authenticated` when `server_credentials` names
    /// the server's origin. Absent for entries that were never contacted.
    pub listing: Option<Listing>,
    /// The server's name in the MCP Registry, for targets that came from `registry`.
    pub registry_name: Option<String>,
    /// The URL that answered, after redirects.
    pub final_url: Option<String>,
    /// Whether the surface was read.
    pub ok: bool,
    /// Why the row ended as it did.
    pub reason_code: Option<ReasonCode>,
    /// Details for a failure, in words.
    pub error: Option<String>,
    /// HTTP status of the last relevant response.
    pub http_status: Option<u16>,
    /// `streamable-http` or `http+sse`.
    pub transport: Option<String>,
    /// Negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Protocol era that worked: `modern`, `classic` or `legacy_sse`.
    pub protocol_era: Option<String>,
    /// Self-reported server name.
    pub server_name: Option<String>,
    /// Self-reported server version.
    pub server_version: Option<String>,
    /// Whether the tool list could be read without credentials.
    pub anonymous_listing_allowed: Option<bool>,
    /// Whether the server demanded authentication.
    pub auth_required: Option<bool>,
    /// RFC 9728 protected-resource metadata URL.
    pub oauth_protected_resource_metadata_url: Option<String>,
    /// Authorization servers named by that metadata.
    pub oauth_authorization_servers: Vec<String>,
    /// Scopes the server advertises: the metadata's `scopes_supported`, else the challenge's
    /// `scope`.
    pub oauth_scopes_supported: Vec<String>,
    /// Number of tools read.
    pub tools_total: Option<usize>,
    /// Number of `tools` entries left out of the surface because they are not usable tool
    /// definitions (see `invalid_tools`); `None` when the list was not read.
    pub invalid_tools_total: Option<usize>,
    /// Each entry left out: its position, its name when it has one, the reason code and a
    /// short explanation. Such an entry is not a tool of the surface, so one that becomes
    /// valid later is a `tool_added`.
    pub invalid_tools: Vec<InvalidTool>,
    /// Number of resources, when counted.
    pub resources_total: Option<u64>,
    /// Beside `resources_total`: `false` when the page limit cut the resource list, so the
    /// count is a lower bound; absent when the resources were not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_complete: Option<bool>,
    /// Number of prompts, when counted.
    pub prompts_total: Option<u64>,
    /// Beside `prompts_total`: `false` when the page limit cut the prompt list, so the count
    /// is a lower bound; absent when the prompts were not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_complete: Option<bool>,
    /// Digest of the tool surface read now.
    pub tool_digest: Option<String>,
    /// Digest stored in the ledger before this run.
    pub previous_tool_digest: Option<String>,
    /// Whether the two digests differ.
    pub digest_changed: bool,
    /// Per-tool hashes, effective hints, capabilities, risk and findings.
    pub tools: Vec<ToolSummary>,
    /// Poisoning markers and advisories in the texts of the server's prompts, resources and
    /// resource templates, as `tools[].findings` are for tools; each pointer names the item
    /// and the text (`prompts["greet"]/description`).
    #[serde(default)]
    pub declared_findings: Vec<Finding>,
    /// The server's declared risk: the highest declared risk of its tools (`high` only on
    /// evidence: a destructive verb or hint, execution, payment, a poisoning marker in a tool,
    /// the instructions, a prompt, a resource or a template).
    pub risk: Option<Risk>,
    /// The risk if the protocol's defaults hold for every hint the tools leave out; above
    /// `risk` only when an unannotated tool is what makes the difference.
    pub assumed_risk: Option<Risk>,
    /// Capability → names of the tools that have it.
    pub capabilities: BTreeMap<Capability, Vec<String>>,
    /// `surface_changed_same_version` or `server_replaced` when the identity comparison says so.
    pub identity_signal: Option<IdentitySignal>,
    /// Whether the tool list was cut at the page or tool limit.
    pub tools_truncated: bool,
    /// What happened to the ledger entry.
    pub ledger_status: Option<LedgerStatus>,
    /// Number of change rows written for this server.
    pub change_count: usize,
    /// When the server was first seen.
    pub first_seen: Option<DateTime<Utc>>,
    /// When a change was last recorded.
    pub last_changed: Option<DateTime<Utc>>,
    /// How digests are computed.
    #[serde(skip_deserializing, default = "digest_algorithm")]
    pub digest_algorithm: &'static str,
    /// Response bytes read from this server.
    pub bytes_read: u64,
    /// Wall time spent on this server.
    pub response_time_ms: u64,
    /// When the row was made.
    pub observed_at: Option<DateTime<Utc>>,
}

/// The row of one recorded change (`record_type: "change"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRow {
    /// Always `"change"`.
    #[serde(skip_deserializing, default = "change_record_type")]
    pub record_type: &'static str,
    /// The server concerned.
    pub server_url: String,
    /// The change class.
    pub change_class: ChangeClass,
    /// The tool concerned, if any.
    pub tool_name: Option<String>,
    /// The field that changed.
    pub field: String,
    /// Hash of the old value.
    pub old_value_hash: Option<String>,
    /// Hash of the new value.
    pub new_value_hash: Option<String>,
    /// The old value.
    pub old_value: Option<Value>,
    /// The new value.
    pub new_value: Option<Value>,
    /// How serious the change is for a connected agent.
    pub severity: Severity,
    /// For schema changes: what the change does to callers.
    pub compatibility: Option<Compatibility>,
    /// For schema changes: each finding with its JSON pointer.
    pub details: Vec<String>,
    /// The surface changed while the server kept its version (severity raised one step).
    pub same_version: bool,
    /// For a removed tool: the added tool it most likely became.
    pub renamed_to: Option<String>,
    /// For an added tool: the removed tool it most likely replaces.
    pub renamed_from: Option<String>,
    /// When the change was observed.
    pub observed_at: DateTime<Utc>,
}

impl ChangeRow {
    /// The row of one change of one server.
    pub fn of(server_url: &str, change: &Change, observed_at: DateTime<Utc>) -> Self {
        ChangeRow {
            record_type: "change",
            server_url: server_url.to_string(),
            change_class: change.change_class,
            tool_name: change.tool_name.clone(),
            field: change.field.clone(),
            old_value_hash: change.old_value_hash.clone(),
            new_value_hash: change.new_value_hash.clone(),
            old_value: change.old_value.clone(),
            new_value: change.new_value.clone(),
            severity: change.severity,
            compatibility: change.compatibility,
            details: change.details.clone(),
            same_version: change.same_version,
            renamed_to: change.renamed_to.clone(),
            renamed_from: change.renamed_from.clone(),
            observed_at,
        }
    }
}

/// The run's summary row (`record_type: "summary"`), also stored as `OUTPUT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// Always `"summary"`.
    #[serde(skip_deserializing, default = "summary_record_type")]
    pub record_type: &'static str,
    /// Entries in the input.
    pub servers_requested: usize,
    /// Servers whose ledger status is created or compared.
    pub servers_checked: usize,
    /// Servers with at least one change row.
    pub servers_changed: usize,
    /// Servers that could not be read (excluding auth verdicts, blocked entries and servers
    /// whose stored baseline was unreadable).
    pub servers_unreachable: usize,
    /// Servers read whose stored baseline (the surface record their entry names) could not be
    /// read (`BASELINE_UNREADABLE`): the entry is kept as it was; not counted as unreachable.
    #[serde(default)]
    pub servers_baseline_unreadable: usize,
    /// Servers that demanded authentication and were given no credential (a refused
    /// credential is counted in `servers_auth_rejected` instead).
    pub servers_requiring_auth: usize,
    /// Servers that refused the credential given for them (`AUTH_REJECTED`).
    #[serde(default)]
    pub servers_auth_rejected: usize,
    /// Servers that listed tools anonymously.
    pub servers_allowing_anonymous_listing: usize,
    /// Share of checked servers that list anonymously (0 to 1).
    pub anonymous_listing_share: f64,
    /// Servers seen for the first time.
    pub baselines_created: usize,
    /// Servers compared against a baseline.
    pub servers_compared: usize,
    /// Servers whose stored surface was gone while their surface changed: a new baseline
    /// with one `baseline_lost` change row each.
    #[serde(default)]
    pub baselines_lost: usize,
    /// Change rows written.
    pub changes_total: usize,
    /// Change rows per class.
    pub changes_by_class: BTreeMap<String, usize>,
    /// Change rows per severity.
    pub changes_by_severity: BTreeMap<String, usize>,
    /// The change classes that became rows.
    #[serde(skip_deserializing)]
    pub alert_on: Vec<&'static str>,
    /// The named store that holds the ledger.
    #[serde(skip_deserializing, default = "ledger_store")]
    pub ledger_store: &'static str,
    /// The ledger record key.
    pub ledger_name: String,
    /// How digests are computed.
    #[serde(skip_deserializing, default = "digest_algorithm")]
    pub digest_algorithm: &'static str,
    /// Entries refused before any network work.
    pub servers_blocked: usize,
    /// Servers whose changes the budget could not pay: read, but their entry kept for the
    /// next run (not counted in `servers_checked`).
    pub servers_deferred: usize,
    /// Targets the run's maximum total charge did not allow reading (`BUDGET_EXHAUSTED`):
    /// never contacted, entry kept.
    #[serde(default)]
    pub servers_budget_exhausted: usize,
    /// Targets the `registry` search added to the fleet (after duplicates of `servers`).
    pub servers_from_registry: usize,
    /// Latest registry entries without a remote endpoint (stdio packages), skipped.
    pub registry_skipped_stdio: usize,
    /// Why the registry search failed, when it did (the explicit `servers` were still read).
    pub registry_error: Option<String>,
    /// Why the registry walk stopped before the registry's end, when it did: a code
    /// (`limit`, `repeating_cursor`, `page_cap`), a colon and an explanation. The servers
    /// found up to there were still read. Absent when the walk reached the registry's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_truncated: Option<String>,
    /// The risk rules changed since the last run (`crate version/revision` of the code that
    /// computed the stored insight): findings were recomputed for every surface, and those new
    /// only because of the rules are not change rows. Absent when the rules are the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_rules_revised_from: Option<String>,
    /// What was (or, locally, would have been) charged.
    pub charges: Value,
    /// A sharded watch only: how each shard's run ended ([`crate::shard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Vec<ShardOutcome>>,
    /// A sharded watch only: shards whose run failed (their servers have no rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards_failed: Option<usize>,
    /// A sharded watch with `shards` = 0 only: the number of shards the coordinator chose for
    /// the fleet it found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards_chosen: Option<usize>,
    /// The ledger's hash chain as this run found and left it: the anchor an auditor compares
    /// the ledger with later (`mcp-surface-ledger verify --heads`).
    #[serde(flatten)]
    pub chain: ChainAnchor,
    /// How each `notify` destination fared, in input order; absent when none is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<Vec<NotificationOutcome>>,
    /// When the run ended.
    pub observed_at: DateTime<Utc>,
}

/// The chain fields of a summary row ([`crate::chain`]); absent when no ledger was written
/// (a sharded watch's coordinator: each shard's ledger has its own chain).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainAnchor {
    /// `new`, `intact`, `adopted` (a ledger written before chains, taken as the genesis) or
    /// `broken` (the stored chain did not check; a new chain was started, see
    /// `ledger_chain_break`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_status: Option<String>,
    /// The break the run found in its ledger, with where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_break: Option<String>,
    /// The sequence number of the index write this run made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_seq: Option<u64>,
    /// The head this run wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_head: Option<String>,
    /// The head this run started from (64 zeros for a new ledger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_prev_head: Option<String>,
    /// Ed25519 signature of `ledger_chain_head` (hex), when `ledger_signing_key` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_chain_signature: Option<String>,
    /// The Ed25519 public key (hex) that verifies the signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_public_key: Option<String>,
}

/// How one shard of a sharded watch ended, as its coordinator's summary row lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardOutcome {
    /// The shard's number, 1 to `shards` (in a `retired` item: the number of the shard ledger,
    /// 0 for the watch's own ledger).
    pub shard: usize,
    /// The ledger the shard keeps (`<ledger_name>-shard-<k>`).
    pub ledger_name: String,
    /// Server entries assigned to it.
    pub servers: usize,
    /// `succeeded`, `gate_tripped` (succeeded, and its `fail_on` gate tripped), `empty` (no
    /// server hashed to it, so it did not run), `reused` (it
    /// succeeded in the earlier, interrupted round this run completed), `failed`, or `retired`
    /// (a ledger the watch no longer runs whose last write was a move of entries out of it).
    pub status: String,
    /// The platform run that read it (sharded watches on the Apify platform).
    pub run_id: Option<String>,
    /// That run's dataset, where a reused shard's rows are.
    pub dataset_id: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The chain fields of the shard's ledger, as its run's summary row has them (the head it
    /// started from and the one it wrote); for a shard that did not run, those of the write
    /// that moved entries into or out of its ledger, if any.
    #[serde(flatten)]
    pub chain: ChainAnchor,
}

impl SummaryRow {
    /// Counts the server and change rows of a run.
    pub fn tally(servers: &[ServerRow], changes: &[ChangeRow]) -> Self {
        let count = |f: &dyn Fn(&ServerRow) -> bool| servers.iter().filter(|r| f(r)).count();
        let checked = count(&|r| {
            matches!(
                r.ledger_status,
                Some(LedgerStatus::Created | LedgerStatus::Compared)
            )
        });
        let anonymous = count(&|r| r.anonymous_listing_allowed == Some(true));
        let mut by_class = BTreeMap::new();
        let mut by_severity = BTreeMap::new();
        for change in changes {
            *by_class
                .entry(change.change_class.as_str().to_string())
                .or_insert(0) += 1;
            let severity = serde_json::to_value(change.severity)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            *by_severity.entry(severity).or_insert(0) += 1;
        }
        SummaryRow {
            record_type: "summary",
            servers_requested: servers.len(),
            servers_checked: checked,
            servers_changed: count(&|r| r.change_count > 0),
            servers_unreachable: count(&|r| {
                !r.ok
                    && !matches!(
                        r.reason_code,
                        Some(
                            ReasonCode::AuthRequired
                                | ReasonCode::AuthRejected
                                | ReasonCode::CredentialDropped
                                | ReasonCode::BlockedTarget
                                | ReasonCode::TemplatedUrl
                                | ReasonCode::BudgetExhausted
                                | ReasonCode::BaselineUnreadable
                        )
                    )
            }),
            servers_baseline_unreadable: count(&|r| {
                r.reason_code == Some(ReasonCode::BaselineUnreadable)
            }),
            servers_requiring_auth: count(&|r| {
                r.auth_required == Some(true) && r.reason_code != Some(ReasonCode::AuthRejected)
            }),
            servers_auth_rejected: count(&|r| r.reason_code == Some(ReasonCode::AuthRejected)),
            servers_allowing_anonymous_listing: anonymous,
            anonymous_listing_share: if checked == 0 {
                0.0
            } else {
                anonymous as f64 / checked as f64
            },
            baselines_created: count(&|r| r.ledger_status == Some(LedgerStatus::Created)),
            servers_compared: count(&|r| r.ledger_status == Some(LedgerStatus::Compared)),
            baselines_lost: changes
                .iter()
                .filter(|c| c.change_class == ChangeClass::BaselineLost)
                .count(),
            changes_total: changes.len(),
            changes_by_class: by_class,
            changes_by_severity: by_severity,
            alert_on: Vec::new(),
            ledger_store: crate::platform::LEDGER_STORE_NAME,
            ledger_name: String::new(),
            digest_algorithm: crate::surface::DIGEST_ALGORITHM,
            servers_blocked: count(&|r| r.reason_code == Some(ReasonCode::BlockedTarget)),
            servers_deferred: count(&|r| r.ledger_status == Some(LedgerStatus::Deferred)),
            servers_budget_exhausted: count(&|r| {
                r.reason_code == Some(ReasonCode::BudgetExhausted)
            }),
            servers_from_registry: count(&|r| r.registry_name.is_some()),
            registry_skipped_stdio: 0,
            registry_error: None,
            registry_truncated: None,
            risk_rules_revised_from: None,
            charges: Value::Null,
            shards: None,
            shards_failed: None,
            shards_chosen: None,
            chain: ChainAnchor::default(),
            notifications: None,
            observed_at: Utc::now(),
        }
    }

    /// Adds the counts of another run's summary (one shard of a sharded watch) to this one.
    /// Charges, the registry fields and the shard list are the coordinator's to set.
    pub fn absorb(&mut self, other: &SummaryRow) {
        self.servers_requested += other.servers_requested;
        self.servers_checked += other.servers_checked;
        self.servers_changed += other.servers_changed;
        self.servers_unreachable += other.servers_unreachable;
        self.servers_baseline_unreadable += other.servers_baseline_unreadable;
        self.servers_requiring_auth += other.servers_requiring_auth;
        self.servers_auth_rejected += other.servers_auth_rejected;
        self.servers_allowing_anonymous_listing += other.servers_allowing_anonymous_listing;
        self.baselines_created += other.baselines_created;
        self.servers_compared += other.servers_compared;
        self.baselines_lost += other.baselines_lost;
        self.changes_total += other.changes_total;
        self.servers_blocked += other.servers_blocked;
        self.servers_deferred += other.servers_deferred;
        self.servers_budget_exhausted += other.servers_budget_exhausted;
        self.servers_from_registry += other.servers_from_registry;
        for (class, count) in &other.changes_by_class {
            *self.changes_by_class.entry(class.clone()).or_insert(0) += count;
        }
        for (severity, count) in &other.changes_by_severity {
            *self
                .changes_by_severity
                .entry(severity.clone())
                .or_insert(0) += count;
        }
        self.anonymous_listing_share = if self.servers_checked == 0 {
            0.0
        } else {
            self.servers_allowing_anonymous_listing as f64 / self.servers_checked as f64
        };
    }
}

/// `n` and the noun, plural unless `n` is 1: "1 server", "2 servers". Every count a person
/// reads (status messages, the report, the CLI summary) goes through it.
pub fn count_of(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
