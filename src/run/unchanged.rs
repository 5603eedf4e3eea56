//! The unchanged-bytes fast path (issue 39): a server whose answers hash to the raw-answer
//! digest its ledger entry holds (`mcp::raw`) answered byte for byte as when that entry was
//! written, so its surface, digests and insight are the stored ones. Such a read skips
//! building the surface, its canonical form and digests, and the risk scan; it is recorded
//! like any unchanged read (same row, same ledger update), which `tests/replay_rows.rs` and
//! `tests/fast_path.rs` check against the full path.
//!
//! Anything that would make the read report something (an auth change, repeated keys gained,
//! an entry that moved since the probe started) hands the read back to the full path.

use std::sync::Arc;

use super::RunContext;
use super::RunError;
use super::charge::Payer;
use super::outcome::{
    Baseline, Known, ReadFacts, RowTools, ServerResult, Unchanged, View, readable_auth,
    readable_row,
};
use crate::ledger::{Entry, Update};
use crate::mcp::Observation;
use crate::platform::Storage;
use crate::reason::ReasonCode;
use crate::report::server_risks;
use crate::report::{LedgerStatus, ToolSummaries};

impl Baseline {
    /// The baseline of `entry` when the fast path can serve it: the entry holds a raw-answer
    /// digest, its surface's digests and per-tool digests, and the cache holds its insight.
    pub(super) fn of(entry: &Entry, insight: Option<&Arc<ToolSummaries>>) -> Option<Baseline> {
        entry.tool_digests.as_ref()?;
        Some(Baseline {
            raw_digest: entry.raw_digest.clone()?,
            tool_digest: entry.tool_digest.clone()?,
            surface_key: entry.surface_key.clone()?,
            identity: entry.identity.clone(),
            insight: insight?.clone(),
        })
    }

    /// Whether `observation` answered byte for byte as when this baseline was recorded.
    pub(super) fn matches(&self, observation: &Observation) -> bool {
        observation.raw_digest.as_deref() == Some(self.raw_digest.as_str())
            && observation.identity() == self.identity
    }
}

impl Unchanged {
    /// The read of `observation`, which matched `baseline`.
    pub(super) fn new(observation: Observation, baseline: Baseline) -> Unchanged {
        let repeated_keys = observation.repeated_keys_by_tool(&observation.tools);
        Unchanged {
            observation,
            baseline,
            repeated_keys,
        }
    }

    /// The observation and what the ledger knows, for the full path (the cached insight is
    /// still reused when the surface turns out to be the stored one).
    pub(super) fn into_full(self) -> (Observation, Known) {
        let known = Known {
            surface_key: Some(self.baseline.surface_key),
            insight: Some(self.baseline.insight),
            baseline: None,
        };
        (self.observation, known)
    }
}

/// Whether `entry` is still the one the baseline was taken from, and recording this read
/// against it reports nothing: no auth change, no repeated key gained.
fn reports_nothing(entry: &Entry, read: &Unchanged, auth: &crate::diff::AuthState) -> bool {
    let baseline = &read.baseline;
    entry.raw_digest.as_deref() == read.observation.raw_digest.as_deref()
        && entry.tool_digest.as_deref() == Some(baseline.tool_digest.as_str())
        && entry.surface_key.as_deref() == Some(baseline.surface_key.as_str())
        && entry.identity == baseline.identity
        && entry.tool_digests.is_some()
        && crate::diff::compare_auth(&entry.auth, auth).is_empty()
        && crate::changes::repeated_keys_gained(
            entry.repeated_keys.as_deref(),
            &read.repeated_keys,
            &entry.identity,
            &baseline.identity,
        )
        .changes
        .is_empty()
}

/// Records an unchanged read: the server is paid for as checked, its entry notes when and how
/// it was read, and its row is the one the full path writes for an unchanged surface. Gives
/// the read back (`Err`) when recording it would report something, for the full path.
pub(super) async fn record<'v, S: Storage>(
    ctx: &mut RunContext<'_, S>,
    payer: &Payer<'_>,
    view: View<'v>,
    read: Unchanged,
) -> Result<Result<ServerResult, (View<'v>, Unchanged)>, RunError> {
    let anonymous = view.row.listing != Some(crate::targets::Listing::Authenticated);
    let auth = readable_auth();
    let Some(entry) = ctx.ledger.entry(view.key) else {
        return Ok(Err((view, read)));
    };
    if !reports_nothing(entry, &read, &auth) {
        return Ok(Err((view, read)));
    }
    let tools_total = entry.tools_total;
    // Nothing to pay beyond the server itself, so settling cannot defer it.
    payer.settle(0).await;
    let Unchanged {
        observation,
        baseline,
        repeated_keys,
    } = read;
    ctx.ledger.apply(
        view.key,
        ctx.now,
        Update::Unchanged {
            era: observation.era,
            transport: observation.transport.clone(),
            auth,
            repeated_keys: repeated_keys.clone(),
        },
        &[],
    );
    let (risk, assumed_risk) = server_risks(&baseline.insight, &repeated_keys);
    let facts = ReadFacts {
        identity: &baseline.identity,
        tools_total,
        invalid_tools: Vec::new(),
        digest: baseline.tool_digest,
        risk,
        assumed_risk,
        identity_signal: None,
        status: LedgerStatus::Compared,
        change_count: 0,
        reason_code: ReasonCode::Ok,
        anonymous,
    };
    let entry = ctx.ledger.entry(view.key);
    let row = readable_row(view.row, &observation, facts, entry);
    Ok(Ok(ServerResult {
        row,
        changes: Vec::new(),
        surface_write: None,
        insight: Some((baseline.surface_key, baseline.insight.clone())),
        tools: Some(RowTools {
            insight: baseline.insight,
            repeated_keys,
        }),
        bytes_unchanged: true,
    }))
}
