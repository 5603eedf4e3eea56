//! One Actor run, start to finish.
//!
//! ```text
//! INPUT ─► Input ─► targets::plan ─► Ledger::load
//!       ─► probe every target (`concurrency` in flight, per-server and run deadlines)
//!       ─► per server, in input order: surface, diff against the ledger, rows, ledger update
//!       ─► dataset rows, summary row, OUTPUT ─► surface records ─► ledger index (last, once)
//! ```
//! This module only orchestrates: every decision of substance lives in the module that owns it.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde_json::Value;
use tokio::time::Instant as TokioInstant;

use crate::diff::{self, AuthState, Change};
use crate::input::{Input, InputError};
use crate::ledger::{Ledger, LedgerError, StoredSurface, Update};
use crate::mcp::{self, AuthFindings, Era, Observation, ProbeFailure, ProbeOptions};
use crate::net::{self, NetConfig, PolicyMode};
use crate::platform::{Record, Storage, StorageError, Store};
use crate::reason::ReasonCode;
use crate::report::{ChangeRow, LedgerStatus, ServerRow, SummaryRow, ToolSummary};
use crate::surface::{DIGEST_ALGORITHM, ServerIdentity, Surface};
use crate::targets::{self, BlockedEntry, Planned, Target, TargetRules};

/// Exit code of a run whose gate tripped.
pub const EXIT_GATE: i32 = 1;
/// Exit code of a run refused for bad input.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code of a run that failed at runtime (storage, ledger).
pub const EXIT_RUNTIME: i32 = 3;

/// How the operator started the run (never from INPUT).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Key of the INPUT record in the default store.
    pub input_key: String,
    /// INPUT bytes given on the command line, replacing the stored record.
    pub input_override: Option<Vec<u8>>,
    /// Operator override: loopback and private targets may be contacted.
    pub allow_private_targets: bool,
    /// Test and diagnosis aid: speak only this protocol era.
    pub force_era: Option<Era>,
}

/// What a finished run reports to `main`.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The summary row that was written.
    pub summary: SummaryRow,
    /// Whether the `fail_on` gate tripped.
    pub gate_tripped: bool,
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The input was refused; nothing was contacted and the ledger is untouched.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A store could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl RunError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) => EXIT_BAD_INPUT,
            _ => EXIT_RUNTIME,
        }
    }
}

/// How probing one target ended.
enum Probed {
    Read(Box<Observation>),
    Failed(Box<ProbeFailure>),
    TimedOut,
    RunDeadline,
}

/// The probe result of one target with the wall time it took.
struct Outcome {
    target: Target,
    probed: Probed,
    elapsed: Duration,
}

/// Everything one server contributed to the run's output.
struct ServerResult {
    row: ServerRow,
    /// The changes that become rows (already filtered by `alert_on`).
    changes: Vec<Change>,
    surface_write: Option<(String, Record)>,
}

/// Runs the Actor once against `storage`.
pub async fn run(storage: &impl Storage, options: RunOptions) -> Result<RunOutcome, RunError> {
    let input = match read_input(storage, &options).await {
        Ok(input) => input,
        Err(error) => {
            let message = format!("Input refused: fix {}", error.fields().join(", "));
            storage.set_status_message(&message, true).await?;
            return Err(error.into());
        }
    };
    let rules = TargetRules {
        mode: if options.allow_private_targets {
            PolicyMode::AllowPrivate
        } else {
            PolicyMode::Public
        },
        allowed_hosts: input.allowed_hosts.clone(),
    };
    let planned = targets::plan(&input.servers, &rules);
    let mut ledger = Ledger::load(storage, &input.ledger_name).await?;
    let client = net::Client::new(
        NetConfig::new(
            input.request_timeout,
            input.max_redirects,
            input.max_response_bytes,
        )
        .allow_private(options.allow_private_targets)
        .allowed_hosts(input.allowed_hosts.clone()),
    )
    .map_err(|e| RunError::Client(e.to_string()))?;

    let probe_targets: Vec<Target> = planned
        .iter()
        .filter_map(|p| match p {
            Planned::Probe(t) => Some(t.clone()),
            Planned::Blocked(_) => None,
        })
        .collect();
    storage
        .set_status_message(&format!("Checking {} servers", probe_targets.len()), false)
        .await?;
    let mut outcomes = probe_all(&client, &input, &ledger, &options, probe_targets).await;
    outcomes.sort_by_key(|o| o.target.index);

    let now = Utc::now();
    let mut results = Vec::with_capacity(planned.len());
    let mut outcomes = outcomes.into_iter().peekable();
    for plan in &planned {
        let result = match plan {
            Planned::Blocked(blocked) => blocked_result(blocked, now),
            Planned::Probe(target) => {
                let Some(outcome) = outcomes.next_if(|o| o.target.index == target.index) else {
                    continue;
                };
                record_outcome(storage, &mut ledger, &input, outcome, now).await?
            }
        };
        log_verdict(&result.row);
        results.push(result);
    }
    finish(storage, &mut ledger, &input, results).await
}

async fn read_input(storage: &impl Storage, options: &RunOptions) -> Result<Input, InputError> {
    let bytes = match &options.input_override {
        Some(bytes) => Some(bytes.clone()),
        None => match storage.get_record(Store::Default, &options.input_key).await {
            Ok(record) => record.map(|r| r.bytes),
            Err(error) => {
                return Err(InputError {
                    problems: vec![crate::input::FieldProblem {
                        field: "(input)".to_string(),
                        problem: format!("could not be read: {error}"),
                    }],
                });
            }
        },
    };
    match bytes {
        Some(bytes) => Input::from_bytes(&bytes),
        None => Input::from_value(None),
    }
}

/// Probes every target with at most `concurrency` in flight, under both deadlines.
async fn probe_all(
    client: &net::Client,
    input: &Input,
    ledger: &Ledger,
    options: &RunOptions,
    targets: Vec<Target>,
) -> Vec<Outcome> {
    let run_deadline = TokioInstant::now() + input.max_run_time;
    let total = targets.len();
    let mut done = 0usize;
    let mut outcomes = Vec::with_capacity(total);
    let mut stream = futures::stream::iter(targets)
        .map(|target| {
            let probe_options = ProbeOptions {
                count_resources_and_prompts: input.count_resources_and_prompts,
                preferred_era: ledger.entry(target.key()).and_then(|e| e.era),
                force_era: options.force_era,
                probe_oauth_metadata: input.probe_oauth_metadata,
                ..ProbeOptions::default()
            };
            probe_one(
                client,
                target,
                probe_options,
                input.max_server_time,
                run_deadline,
            )
        })
        .buffer_unordered(input.concurrency);
    while let Some(outcome) = stream.next().await {
        done += 1;
        tracing::debug!(done, total, server = outcome.target.key(), "probed");
        outcomes.push(outcome);
    }
    outcomes
}

async fn probe_one(
    client: &net::Client,
    target: Target,
    options: ProbeOptions,
    server_budget: Duration,
    run_deadline: TokioInstant,
) -> Outcome {
    let started = Instant::now();
    let now = TokioInstant::now();
    if now >= run_deadline {
        return Outcome {
            target,
            probed: Probed::RunDeadline,
            elapsed: Duration::ZERO,
        };
    }
    let server_deadline = now + server_budget;
    let deadline = server_deadline.min(run_deadline);
    let probed = match tokio::time::timeout_at(deadline, mcp::probe(client, &target.url, &options))
        .await
    {
        Ok(Ok(observation)) => Probed::Read(Box::new(observation)),
        Ok(Err(failure)) => Probed::Failed(Box::new(failure)),
        Err(_) if deadline == run_deadline && run_deadline < server_deadline => Probed::RunDeadline,
        Err(_) => Probed::TimedOut,
    };
    Outcome {
        target,
        probed,
        elapsed: started.elapsed(),
    }
}

fn blocked_result(blocked: &BlockedEntry, now: DateTime<Utc>) -> ServerResult {
    ServerResult {
        row: ServerRow {
            server_url: blocked.entry.clone(),
            reason_code: Some(ReasonCode::BlockedTarget),
            error: Some(blocked.reason.clone()),
            ledger_status: Some(LedgerStatus::Unavailable),
            ..base_row(now)
        },
        changes: Vec::new(),
        surface_write: None,
    }
}

fn base_row(now: DateTime<Utc>) -> ServerRow {
    ServerRow {
        record_type: "server",
        digest_algorithm: DIGEST_ALGORITHM,
        observed_at: Some(now),
        ..ServerRow::default()
    }
}

/// Turns one probe outcome into rows and a ledger update.
async fn record_outcome(
    storage: &impl Storage,
    ledger: &mut Ledger,
    input: &Input,
    outcome: Outcome,
    now: DateTime<Utc>,
) -> Result<ServerResult, RunError> {
    let url = outcome.target.key().to_string();
    let mut row = ServerRow {
        server_url: url.clone(),
        response_time_ms: outcome.elapsed.as_millis() as u64,
        ..base_row(now)
    };
    if let Some(entry) = ledger.entry(&url) {
        row.previous_tool_digest = entry.tool_digest.clone();
        row.first_seen = Some(entry.first_seen);
        row.last_changed = entry.last_changed;
    }
    let result = match outcome.probed {
        Probed::Read(observation) => {
            return record_readable(storage, ledger, input, row, *observation, now).await;
        }
        Probed::Failed(failure) if failure.error.reason_code() == ReasonCode::AuthRequired => {
            return Ok(record_auth_required(ledger, input, row, *failure, now));
        }
        Probed::Failed(failure) => {
            row.reason_code = Some(failure.error.reason_code());
            row.error = Some(failure.error.to_string());
            row.http_status = failure.http_status;
            row.bytes_read = failure.bytes_read;
            row.final_url = failure.final_url.map(|u| u.to_string());
            row
        }
        Probed::TimedOut => ServerRow {
            reason_code: Some(ReasonCode::Timeout),
            error: Some(format!(
                "the server was not read within max_server_seconds ({}s)",
                input.max_server_time.as_secs()
            )),
            ..row
        },
        Probed::RunDeadline => ServerRow {
            reason_code: Some(ReasonCode::RunDeadline),
            error: Some(format!(
                "max_run_seconds ({}s) passed before this server was read",
                input.max_run_time.as_secs()
            )),
            ..row
        },
    };
    Ok(ServerResult {
        row: ServerRow {
            ledger_status: Some(LedgerStatus::Unavailable),
            ..result
        },
        changes: Vec::new(),
        surface_write: None,
    })
}

/// The identity block of a read surface.
fn identity_of(observation: &Observation) -> ServerIdentity {
    let text = |key: &str| {
        observation
            .server_info
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    ServerIdentity {
        name: text("name"),
        title: text("title"),
        version: text("version"),
        protocol_version: Some(observation.protocol_version.clone()),
        instructions: observation.instructions.clone(),
    }
}

async fn record_readable(
    storage: &impl Storage,
    ledger: &mut Ledger,
    input: &Input,
    mut row: ServerRow,
    observation: Observation,
    now: DateTime<Utc>,
) -> Result<ServerResult, RunError> {
    let identity = identity_of(&observation);
    let surface = match Surface::from_tools(identity, observation.tools.clone()) {
        Ok(surface) => surface,
        Err(error) => {
            row.reason_code = Some(ReasonCode::ToolsListFailed);
            row.error = Some(format!("the tool list is not usable: {error}"));
            row.ledger_status = Some(LedgerStatus::Unavailable);
            return Ok(ServerResult {
                row,
                changes: Vec::new(),
                surface_write: None,
            });
        }
    };
    let auth = AuthState {
        auth_required: false,
        anonymous_listing_allowed: true,
        ..AuthState::default()
    };
    let digest = surface.tool_digest();
    let (status, changes) = match ledger.entry(&row.server_url) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => {
            let mut changes = diff::compare_auth(&entry.auth, &auth);
            let previous = if entry.tool_digest.as_deref() == Some(digest.as_str()) {
                Some(Surface {
                    identity: entry.identity.clone(),
                    ..surface.clone()
                })
            } else {
                Ledger::load_surface(storage, entry).await?
            };
            if let Some(previous) = previous {
                changes.extend(diff::compare(&previous, &surface));
            }
            (LedgerStatus::Compared, changes)
        }
    };
    let stored = StoredSurface::capture(&surface);
    let surface_key = stored.key();
    let needs_write = ledger
        .entry(&row.server_url)
        .and_then(|e| e.surface_key.as_deref())
        != Some(surface_key.as_str());
    let surface_write = needs_write.then(|| {
        (
            surface_key.clone(),
            Record::json(serde_json::to_vec(&stored).unwrap_or_default()),
        )
    });
    ledger.apply(
        &row.server_url,
        now,
        Update::Readable {
            surface: &surface,
            surface_key,
            era: observation.era,
            transport: observation.transport.clone(),
            auth: auth.clone(),
        },
        &changes,
    );
    let change_rows = alerted(input, &changes);
    let entry = ledger.entry(&row.server_url);
    Ok(ServerResult {
        row: ServerRow {
            final_url: Some(observation.final_url.to_string()),
            ok: true,
            reason_code: Some(ReasonCode::Ok),
            http_status: Some(observation.http_status),
            transport: Some(observation.transport.clone()),
            protocol_version: Some(observation.protocol_version.clone()),
            protocol_era: Some(era_name(observation.era).to_string()),
            server_name: surface.identity.name.clone(),
            server_version: surface.identity.version.clone(),
            anonymous_listing_allowed: Some(true),
            auth_required: Some(false),
            tools_total: Some(surface.tools.len()),
            resources_total: observation.resources_total,
            prompts_total: observation.prompts_total,
            digest_changed: row
                .previous_tool_digest
                .as_deref()
                .is_some_and(|p| p != digest),
            tool_digest: Some(digest),
            tools: surface.tools.iter().map(ToolSummary::of).collect(),
            tools_truncated: observation.tools_truncated,
            ledger_status: Some(status),
            change_count: change_rows.len(),
            first_seen: entry.map(|e| e.first_seen),
            last_changed: entry.and_then(|e| e.last_changed),
            bytes_read: observation.bytes_read,
            ..row
        },
        changes: change_rows,
        surface_write,
    })
}

fn record_auth_required(
    ledger: &mut Ledger,
    input: &Input,
    row: ServerRow,
    failure: ProbeFailure,
    now: DateTime<Utc>,
) -> ServerResult {
    let findings = failure.auth.clone().unwrap_or_default();
    let known = ledger.entry(&row.server_url).map(|e| &e.auth);
    let auth = protected_state(&findings, known);
    let (status, changes) = match ledger.entry(&row.server_url) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => (
            LedgerStatus::Compared,
            diff::compare_auth(&entry.auth, &auth),
        ),
    };
    ledger.apply(
        &row.server_url,
        now,
        Update::AuthOnly { auth: auth.clone() },
        &changes,
    );
    let change_rows = alerted(input, &changes);
    let entry = ledger.entry(&row.server_url);
    let error = match findings.metadata.as_ref().and_then(|m| m.failure_note()) {
        Some(note) => format!("{}; {note}", failure.error),
        None => failure.error.to_string(),
    };
    ServerResult {
        row: ServerRow {
            reason_code: Some(ReasonCode::AuthRequired),
            error: Some(error),
            oauth_protected_resource_metadata_url: findings.metadata_url(),
            oauth_authorization_servers: auth.authorization_servers.clone(),
            oauth_scopes_supported: auth.scopes.clone(),
            http_status: failure.http_status,
            final_url: failure.final_url.map(|u| u.to_string()),
            bytes_read: failure.bytes_read,
            anonymous_listing_allowed: Some(false),
            auth_required: Some(true),
            ledger_status: Some(status),
            change_count: change_rows.len(),
            first_seen: entry.map(|e| e.first_seen),
            last_changed: entry.and_then(|e| e.last_changed),
            ..row
        },
        changes: change_rows,
        surface_write: None,
    }
}

/// The auth state of a server that refused the anonymous listing. When no metadata document
/// was read this time (switched off, unreachable), the lists stored for a server that was
/// already protected are kept: an unanswered metadata request is not an auth change. A first
/// observation without metadata records the challenge's `scope`.
fn protected_state(findings: &AuthFindings, known: Option<&AuthState>) -> AuthState {
    let (authorization_servers, scopes) = match known.filter(|k| k.auth_required) {
        Some(stored) if !findings.has_metadata() => {
            (stored.authorization_servers.clone(), stored.scopes.clone())
        }
        _ => (findings.authorization_servers(), findings.scopes()),
    };
    AuthState {
        auth_required: true,
        anonymous_listing_allowed: false,
        authorization_servers,
        scopes,
    }
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        Era::Classic => "classic",
        Era::LegacySse => "legacy_sse",
    }
}

/// The changes the user asked to see as rows.
fn alerted(input: &Input, changes: &[Change]) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| input.alert_on.contains(&c.change_class))
        .cloned()
        .collect()
}

fn log_verdict(row: &ServerRow) {
    let code = row.reason_code.map(|c| c.as_str()).unwrap_or("-");
    match &row.error {
        None => tracing::info!(
            server = %row.server_url,
            verdict = code,
            tools = row.tools_total.unwrap_or(0),
            changes = row.change_count,
            "server read"
        ),
        Some(error) => {
            tracing::warn!(server = %row.server_url, verdict = code, %error, "server not read")
        }
    }
}

/// Writes rows, OUTPUT, surfaces and, last, the ledger index.
async fn finish(
    storage: &impl Storage,
    ledger: &mut Ledger,
    input: &Input,
    results: Vec<ServerResult>,
) -> Result<RunOutcome, RunError> {
    let mut items = Vec::new();
    let mut server_rows = Vec::new();
    let mut change_rows = Vec::new();
    let mut surface_writes = Vec::new();
    let mut gate_tripped = false;
    for result in results {
        gate_tripped |= input.fail_on.is_tripped_by_any(&result.changes);
        let observed_at = result.row.observed_at.unwrap_or_else(Utc::now);
        let rows: Vec<ChangeRow> = result
            .changes
            .iter()
            .map(|c| ChangeRow::of(&result.row.server_url, c, observed_at))
            .collect();
        items.push(serde_json::to_value(&result.row).unwrap_or(Value::Null));
        items.extend(
            rows.iter()
                .map(|c| serde_json::to_value(c).unwrap_or(Value::Null)),
        );
        server_rows.push(result.row);
        change_rows.extend(rows);
        surface_writes.extend(result.surface_write);
    }
    let mut summary = SummaryRow::tally(&server_rows, &change_rows);
    summary.alert_on = input.alert_on_names();
    summary.ledger_name = input.ledger_name.clone();
    items.push(serde_json::to_value(&summary).unwrap_or(Value::Null));
    storage.push_items(&items).await?;
    let summary_bytes = serde_json::to_vec_pretty(&summary).unwrap_or_default();
    storage
        .put_record(Store::Default, "OUTPUT", Record::json(summary_bytes))
        .await?;
    for (key, record) in surface_writes {
        storage.put_record(Store::Ledger, &key, record).await?;
    }
    ledger.save(storage).await?;
    storage
        .set_status_message(&final_status(&summary), true)
        .await?;
    Ok(RunOutcome {
        summary,
        gate_tripped,
    })
}

/// The terminal status message: the run's verdict in one line.
pub fn final_status(summary: &SummaryRow) -> String {
    let high = summary
        .changes_by_severity
        .get("high")
        .copied()
        .unwrap_or(0);
    let mut text = format!(
        "{} servers, {} changed ({} high), {} unreachable",
        summary.servers_requested, summary.servers_changed, high, summary.servers_unreachable
    );
    if summary.servers_requiring_auth > 0 {
        text.push_str(&format!(
            ", {} require auth",
            summary.servers_requiring_auth
        ));
    }
    if summary.servers_blocked > 0 {
        text.push_str(&format!(", {} blocked", summary.servers_blocked));
    }
    text
}
