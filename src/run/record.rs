//! Stage 3, recording: what each probe outcome does to the rows and the ledger entry (read,
//! auth required, credential rejected or dropped, unstorable, failed), one log line per server.

use std::collections::BTreeMap;

use url::Url;

use super::RunContext;
use super::RunError;
use super::charge::{Payer, deferred_note};
use super::outcome::{
    Outcome, Prepared, Probed, ReadFacts, RowTools, ServerResult, View, base_row, readable_auth,
    readable_row, unavailable_result,
};
use crate::changes::Digests;
use crate::diff::{self, AuthState, Change, ChangeClass};
use crate::input::Input;
use crate::ledger::{Entry, Ledger, LedgerError, MAX_IDENTITY_BYTES, StoredSurface, Update};
use crate::mcp::{AuthFindings, Observation, ProbeFailure};
use crate::platform::{MAX_RECORD_BYTES, Storage};
use crate::reason::ReasonCode;
use crate::report::{LedgerStatus, ServerRow};
use crate::surface::{ItemDigests, Surface};
use crate::targets::Listing;

/// Turns one probe outcome into rows and a ledger update.
pub(super) async fn record_outcome<S: Storage>(
    ctx: &mut RunContext<'_, S>,
    payer: &Payer<'_>,
    outcome: Outcome,
) -> Result<ServerResult, RunError> {
    let (input, now) = (&ctx.input, ctx.now);
    let key = outcome.target.ledger_key();
    let mut row = ServerRow {
        server_url: outcome.target.key().to_string(),
        listing: Some(outcome.target.listing()),
        response_time_ms: outcome.elapsed.as_millis() as u64,
        ..base_row(now)
    };
    if let Some(entry) = ctx.ledger.entry(&key) {
        row.previous_tool_digest = entry.tool_digest.clone();
        row.first_seen = Some(entry.first_seen);
        row.last_changed = entry.last_changed;
    }
    if let Some(landed) = landed_without_credential(&outcome) {
        return Ok(unavailable_result(credential_dropped_row(row, &landed)));
    }
    let result = match outcome.probed {
        Probed::Read(observation) => {
            let view = View { key: &key, row };
            return record_readable(ctx, payer, view, *observation).await;
        }
        Probed::Unchanged(read) => {
            let view = View { key: &key, row };
            return match super::unchanged::record(ctx, payer, view, *read).await? {
                Ok(result) => Ok(result),
                // Something to report after all: build the surface, take the full path.
                Err((view, read)) => {
                    let (observation, known) = read.into_full();
                    match Prepared::of(observation, known) {
                        Ok(prepared) => record_readable(ctx, payer, view, prepared).await,
                        Err(problem) => Ok(unavailable_result(ServerRow {
                            reason_code: Some(ReasonCode::ToolsListFailed),
                            error: Some(problem),
                            ..view.row
                        })),
                    }
                }
            };
        }
        Probed::Failed(failure)
            if outcome.target.credential.is_some() && failure.error.auth_refusal().is_some() =>
        {
            rejected_row(row, *failure)
        }
        Probed::Failed(failure) if failure.error.reason_code() == ReasonCode::AuthRequired => {
            let view = View { key: &key, row };
            return Ok(record_auth_required(ctx, payer, view, *failure).await);
        }
        Probed::Failed(failure) => {
            let code = failure.error.reason_code();
            row.reason_code = Some(code);
            row.error = Some(if code == ReasonCode::Timeout {
                format!(
                    "{}: the server sent no answer within request_timeout_seconds ({} s); if \
                     it is slow rather than hung, raise request_timeout_seconds in the input \
                     (at most 120)",
                    failure.error,
                    input.request_timeout.as_secs()
                )
            } else {
                failure.error.to_string()
            });
            row.http_status = failure.http_status;
            row.bytes_read = failure.bytes_read;
            row.final_url = failure.final_url.map(|u| u.to_string());
            row
        }
        Probed::TimedOut => ServerRow {
            reason_code: Some(ReasonCode::Timeout),
            error: Some(format!(
                "the server was not read within max_server_seconds ({}s); if it is slow \
                 rather than hung, raise max_server_seconds in the input (at most 600)",
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
        Probed::Unusable(problem) => ServerRow {
            reason_code: Some(ReasonCode::ToolsListFailed),
            error: Some(problem),
            ..row
        },
        Probed::Crashed(message) => ServerRow {
            reason_code: Some(ReasonCode::ToolsListFailed),
            error: Some(format!(
                "internal error while probing (please report): {message}"
            )),
            ..row
        },
    };
    Ok(unavailable_result(result))
}

/// Where a credentialed read ended when that is outside the credential's origin: a redirect
/// took it to another origin, where the credential is (rightly) never sent. What was read or
/// refused there says nothing about the authenticated view, so it must not be stored as one.
pub(super) fn landed_without_credential(outcome: &Outcome) -> Option<Url> {
    let credential = outcome.target.credential.as_ref()?;
    let landed = match &outcome.probed {
        Probed::Read(prepared) => &prepared.observation.final_url,
        Probed::Unchanged(read) => &read.observation.final_url,
        Probed::Failed(failure) if failure.error.auth_refusal().is_some() => {
            failure.final_url.as_ref()?
        }
        _ => return None,
    };
    (!credential.applies_to(landed)).then(|| landed.clone())
}

/// The row of an authenticated view whose read a redirect took to another origin:
/// `CREDENTIAL_DROPPED`, not charged, and the ledger entries of both views stay as they were.
pub(super) fn credential_dropped_row(row: ServerRow, landed: &Url) -> ServerRow {
    ServerRow {
        reason_code: Some(ReasonCode::CredentialDropped),
        error: Some(format!(
            "the server redirected the credentialed read to {}, another origin, where the \
             credential is not sent; nothing read there is stored as the authenticated view. \
             Watch the final URL, with a credential for its origin if it needs one",
            landed.origin().ascii_serialization()
        )),
        final_url: Some(landed.to_string()),
        ..row
    }
}

pub(super) async fn record_readable<S: Storage>(
    ctx: &mut RunContext<'_, S>,
    payer: &Payer<'_>,
    view: View<'_>,
    prepared: Prepared,
) -> Result<ServerResult, RunError> {
    let (storage, input, now) = (ctx.storage, &ctx.input, ctx.now);
    let ledger = &mut ctx.ledger;
    let View { key, mut row } = view;
    let anonymous = row.listing != Some(Listing::Authenticated);
    let (risk, assumed_risk) = prepared.server_risks();
    let Prepared {
        observation,
        surface,
        tool_digest: digest,
        surface_key,
        insight,
        repeated_keys,
        tool_digests,
        record,
    } = prepared;
    let identity_size = serde_json::to_vec(&surface.identity).map_or(0, |bytes| bytes.len());
    if identity_size > MAX_IDENTITY_BYTES {
        let why = format!(
            "its identity (name, title, version, instructions) is {identity_size} bytes, more \
             than the {MAX_IDENTITY_BYTES} a ledger entry keeps"
        );
        return Ok(unstorable_result(
            row,
            &observation,
            ReasonCode::ResponseTooLarge,
            &why,
        ));
    }
    let auth = readable_auth();
    let mut identity_signal = None;
    let mut lost_baseline = None;
    let mut tampered: Option<String> = None;
    // The surface replaced, kept so the ledger can undo this run's change later.
    let mut replaced: Option<Surface> = None;
    let (status, changes) = match ledger.entry(key) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => {
            let mut changes = diff::compare_auth(&entry.auth, &auth);
            let same_tools = entry.tool_digest.as_deref() == Some(digest.as_str());
            let previous = if !same_tools {
                match Ledger::load_surface(storage, entry).await {
                    Ok(previous) => previous,
                    // A record that is gone (swept, deleted by hand) starts a new baseline;
                    // one that is not the surface its chained entry names was planted, and the
                    // ledger is damaged (the chain says so). Either way the per-tool digests the
                    // entry holds name what changed, in one `baseline_lost` change.
                    Err(
                        error @ (LedgerError::SurfaceGone { .. }
                        | LedgerError::SurfaceMismatch { .. }),
                    ) => {
                        match error {
                            LedgerError::SurfaceMismatch { key, problem } => {
                                tampered = Some(format!(
                                    "the stored baseline {key} is not the surface the ledger's \
                                     chained entry names ({problem}): it was replaced in the \
                                     store, so it was not used; the chained per-tool digests \
                                     were compared instead"
                                ))
                            }
                            _ => {
                                lost_baseline = Some(format!(
                                    "{error}; a new baseline was recorded instead of a comparison"
                                ))
                            }
                        }
                        changes.push(lost_baseline_change(
                            entry,
                            &digest,
                            tool_digests.as_ref(),
                            &surface,
                        ));
                        None
                    }
                    // One that cannot be read keeps its entry, to be compared next run.
                    Err(LedgerError::SurfaceUnreadable { key, problem }) => {
                        let why = format!("its stored baseline {key} cannot be read ({problem})");
                        return Ok(unstorable_result(
                            row,
                            &observation,
                            ReasonCode::BaselineUnreadable,
                            &why,
                        ));
                    }
                    Err(error) => return Err(error.into()),
                }
            } else if entry.identity != surface.identity {
                Some(Surface {
                    identity: entry.identity.clone(),
                    ..surface.clone()
                })
            } else {
                None // nothing moved: no comparison needed
            };
            if let Some(previous) = previous {
                let set = crate::changes::between(&previous, &surface);
                identity_signal = set.identity_signal;
                changes.extend(set.changes);
                replaced = Some(previous);
            }
            let repeats = crate::changes::repeated_keys_gained(
                entry.repeated_keys.as_deref(),
                &repeated_keys,
                &entry.identity,
                &surface.identity,
            );
            identity_signal = identity_signal.or(repeats.identity_signal);
            changes.extend(repeats.changes);
            (LedgerStatus::Compared, changes)
        }
    };
    if let Some(why) = &tampered {
        crate::chain::mark_broken(ledger, &format!("server {key}: {why}"));
        row.error = Some(why.clone());
    }
    let status = match lost_baseline {
        Some(note) => {
            row.error = Some(note);
            LedgerStatus::Created
        }
        None => status,
    };
    let already_stored =
        ledger.entry(key).and_then(|e| e.surface_key.as_deref()) == Some(surface_key.as_str());
    let surface_record = if already_stored {
        None
    } else {
        let record = record.unwrap_or_else(|| StoredSurface::record_of(&surface));
        if record.bytes.len() > MAX_RECORD_BYTES {
            let why = format!(
                "as a ledger record it is {} bytes, more than the {MAX_RECORD_BYTES} a record \
                 may hold",
                record.bytes.len()
            );
            return Ok(unstorable_result(
                row,
                &observation,
                ReasonCode::ResponseTooLarge,
                &why,
            ));
        }
        Some(record)
    };
    let mut change_rows = alerted(input, &changes);
    let deferred = !payer.settle(change_rows.len()).await;
    let status = if deferred {
        row.error = Some(deferred_note(change_rows.len()));
        change_rows.clear();
        LedgerStatus::Deferred
    } else {
        status
    };
    let surface_write = surface_record
        .filter(|_| !deferred)
        .map(|record| (surface_key.clone(), record));
    let row_tools = RowTools {
        insight: insight.clone(),
        repeated_keys: repeated_keys.clone(),
    };
    let insight = (!deferred).then(|| (surface_key.clone(), insight));
    if !deferred {
        ledger.apply(
            key,
            now,
            Update::Readable {
                surface: &surface,
                previous: replaced.as_ref(),
                tool_digest: digest.clone(),
                surface_key,
                era: observation.era,
                transport: observation.transport.clone(),
                auth: auth.clone(),
                repeated_keys,
                tool_digests,
            },
            &changes,
        );
        if let Some(entry) = ledger.servers.get_mut(key) {
            // The next run may skip the surface work when the answers come back byte for
            // byte; not for a surface with invalid tools, which its row lists and the entry
            // does not keep.
            entry.raw_digest = observation
                .raw_digest
                .clone()
                .filter(|_| surface.invalid_tools.is_empty());
        }
    }
    let facts = ReadFacts {
        identity: &surface.identity,
        tools_total: surface.tools.len(),
        invalid_tools: surface.invalid_tools.clone(),
        digest,
        risk,
        assumed_risk,
        identity_signal,
        status,
        change_count: change_rows.len(),
        reason_code: match tampered {
            Some(_) => ReasonCode::BaselineTampered,
            None => ReasonCode::Ok,
        },
        anonymous,
    };
    let row = readable_row(row, &observation, facts, ledger.entry(key));
    Ok(ServerResult {
        row,
        changes: change_rows,
        surface_write,
        insight,
        tools: Some(row_tools),
        bytes_unchanged: false,
    })
}

/// The row of a surface that was read but cannot be recorded (too large to keep, or its stored
/// baseline unreadable): nothing is charged and the entry stays as it was, so one such server
/// cannot stop the run from saving the others.
pub(super) fn unstorable_result(
    row: ServerRow,
    observation: &Observation,
    code: ReasonCode,
    why: &str,
) -> ServerResult {
    unavailable_result(ServerRow {
        final_url: Some(observation.final_url.to_string()),
        http_status: Some(observation.http_status),
        bytes_read: observation.bytes_read,
        reason_code: Some(code),
        error: Some(format!(
            "the surface was read, but {why}; its ledger entry was kept and it was not charged"
        )),
        ..row
    })
}

pub(super) async fn record_auth_required<S: Storage>(
    ctx: &mut RunContext<'_, S>,
    payer: &Payer<'_>,
    view: View<'_>,
    failure: ProbeFailure,
) -> ServerResult {
    let (input, now) = (&ctx.input, ctx.now);
    let ledger = &mut ctx.ledger;
    let View { key, row } = view;
    let findings = failure.auth.clone().unwrap_or_default();
    let known = ledger.entry(key).map(|e| &e.auth);
    let auth = protected_state(&findings, known);
    let (status, changes) = match ledger.entry(key) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => (
            LedgerStatus::Compared,
            diff::compare_auth(&entry.auth, &auth),
        ),
    };
    let mut change_rows = alerted(input, &changes);
    let mut error = match findings.metadata.as_ref().and_then(|m| m.failure_note()) {
        Some(note) => format!("{}; {note}", failure.error),
        None => failure.error.to_string(),
    };
    let status = if payer.settle(change_rows.len()).await {
        let update = Update::AuthOnly { auth: auth.clone() };
        ledger.apply(key, now, update, &changes);
        status
    } else {
        error = format!("{error}; {}", deferred_note(change_rows.len()));
        change_rows.clear();
        LedgerStatus::Deferred
    };
    let entry = ledger.entry(key);
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
        insight: None,
        tools: None,
        bytes_unchanged: false,
    }
}

/// The row of an authenticated view whose credential the server refused (401 or 403 with
/// it): `AUTH_REJECTED`, not charged, and the ledger entries of both views stay as they were.
pub(super) fn rejected_row(row: ServerRow, failure: ProbeFailure) -> ServerRow {
    let findings = failure.auth.unwrap_or_default();
    let status = failure
        .http_status
        .map_or(String::new(), |s| format!(" (HTTP {s})"));
    ServerRow {
        reason_code: Some(ReasonCode::AuthRejected),
        error: Some(format!(
            "the server refused the credential given for its origin{status}; check or renew \
             it in `server_credentials`: {}",
            failure.error
        )),
        oauth_protected_resource_metadata_url: findings.metadata_url(),
        oauth_authorization_servers: findings.authorization_servers(),
        oauth_scopes_supported: findings.scopes(),
        http_status: failure.http_status,
        final_url: failure.final_url.map(|u| u.to_string()),
        bytes_read: failure.bytes_read,
        auth_required: Some(true),
        ..row
    }
}

/// The auth state of a server that refused the anonymous listing. When no metadata document
/// was read this time (switched off, unreachable), the lists stored for a server that was
/// already protected are kept: an unanswered metadata request is not an auth change. A first
/// observation without metadata records the challenge's `scope`.
pub(super) fn protected_state(findings: &AuthFindings, known: Option<&AuthState>) -> AuthState {
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

/// The changes the user asked to see as rows.
pub(super) fn alerted(input: &Input, changes: &[Change]) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| {
            // A lost baseline stands for changes of any class: always reported.
            c.change_class == ChangeClass::BaselineLost || input.alert_on.contains(&c.change_class)
        })
        .cloned()
        .collect()
}

/// One log line per server row: read, read with its changes deferred, or not read and why.
pub(super) fn log_verdict(row: &ServerRow) {
    let code = row.reason_code.map(|c| c.as_str()).unwrap_or("-");
    let server = &row.server_url;
    match (&row.ledger_status, &row.error) {
        (Some(LedgerStatus::Deferred), note) => tracing::warn!(
            %server,
            verdict = "DEFERRED",
            changes = row.change_count,
            note = note.as_deref().unwrap_or_default(),
            "server read, changes deferred to the next run"
        ),
        (_, None) => tracing::info!(
            %server,
            verdict = code,
            tools = row.tools_total.unwrap_or(0),
            changes = row.change_count,
            "server read"
        ),
        (_, Some(note)) if row.ok => tracing::info!(
            %server,
            verdict = code,
            tools = row.tools_total.unwrap_or(0),
            changes = row.change_count,
            %note,
            "server read"
        ),
        (_, Some(error)) => {
            tracing::warn!(%server, verdict = code, %error, "server not read")
        }
    }
}

/// The one `baseline_lost` change of a server whose stored surface is gone: what the short
/// digests of its entry and of the surface read now tell.
fn lost_baseline_change(
    entry: &Entry,
    digest: &str,
    tool_digests: Option<&BTreeMap<String, String>>,
    surface: &Surface,
) -> Change {
    let new_tools = tool_digests
        .cloned()
        .unwrap_or_else(|| crate::ledger::tool_digests(surface));
    let new_declared = ItemDigests::of(&surface.declared);
    crate::changes::baseline_lost(
        Digests {
            surface: entry.tool_digest.as_deref().unwrap_or_default(),
            tools: entry.tool_digests.as_ref(),
            declared: entry.declared_digests.as_ref(),
        },
        Digests {
            surface: digest,
            tools: Some(&new_tools),
            declared: Some(&new_declared),
        },
    )
}
