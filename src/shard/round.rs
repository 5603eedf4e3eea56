//! The round record of a sharded watch: how each shard ended last time, so that a coordinator
//! run started again after a failure re-runs only the shards that failed.
//!
//! A round is complete when every shard succeeded; the next run starts a new round and runs
//! every shard. A round with failed shards is resumed by the next run: a shard that succeeded
//! in it, and still holds exactly the same servers, is reused (its counts come from this
//! record, its rows stay in the dataset of the run that read it).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::placement::Placement;
use super::plan::ShardJob;
use crate::ledger::SHARDS_KEY_PREFIX;
use crate::platform::{Record, Storage, StorageError, Store};
use crate::report::{ChangeRow, ShardOutcome, SummaryRow};

/// Version of the round record format.
const ROUND_FORMAT: u32 = 1;

/// A shard's outcome status: it succeeded.
pub const SUCCEEDED: &str = "succeeded";
/// A shard's outcome status: it succeeded and its `fail_on` gate tripped.
pub const GATE_TRIPPED: &str = "gate_tripped";
/// A shard's outcome status: taken over from the interrupted round this run completed.
pub const REUSED: &str = "reused";
/// A shard's outcome status: no server is assigned to it, so it did not run.
pub const EMPTY: &str = "empty";
/// A `shards[]` item's status (never in the round record): a ledger the watch does not run now
/// (a shard removed, the watch's own ledger `<ledger_name>` of a sharded watch, an earlier
/// build's shard ledger, or every shard ledger after `shards` went back to 1) whose last write
/// was a move of entries out of it; the item carries that write's chain fields, so a
/// coordinator row witnesses it.
pub const RETIRED: &str = "retired";
/// A shard's outcome status: its run failed.
pub const FAILED: &str = "failed";

/// The record key of the round of the watch `ledger_name`.
pub fn record_key(ledger_name: &str) -> String {
    format!("{SHARDS_KEY_PREFIX}{ledger_name}")
}

/// How the last round of a sharded watch ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Record format ([`ROUND_FORMAT`]).
    pub format: u32,
    /// The number of shards.
    pub of: usize,
    /// When the round's first run started.
    pub started_at: DateTime<Utc>,
    /// Every shard, in order.
    pub shards: Vec<ShardRecord>,
    /// Where each server's ledger entries are: the placement the shard ledgers agree with.
    #[serde(default)]
    pub placement: Placement,
    /// A move of ledger entries to this placement that was started and not finished (see
    /// [`super::moves`]): the next run finishes it before anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moving_to: Option<Placement>,
}

/// One shard's result in a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// [`ShardJob::entries_digest`] of the servers it read.
    pub entries_digest: String,
    /// How it ended.
    pub outcome: ShardOutcome,
    /// Its summary row, when it succeeded.
    pub summary: Option<SummaryRow>,
    /// Its change rows, kept while the round is incomplete so that the run that resumes it can
    /// put a reused shard's changes into the merged REPORT and `REPORT.sarif` (none when they
    /// would take more than [`KEPT_CHANGES_BYTES`] divided among the shards; dropped once the
    /// round is complete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeRow>,
}

/// At most this many bytes of change rows are kept in a round record, shared equally by its
/// shards (the record stays far below the 9 MiB a record may take).
pub const KEPT_CHANGES_BYTES: usize = 4 * 1024 * 1024;

impl ShardRecord {
    /// Whether the shard's run succeeded (its gate may have tripped).
    pub fn succeeded(&self) -> bool {
        self.outcome.status != FAILED && self.summary.is_some()
    }
}

impl Round {
    /// Whether every shard succeeded.
    pub fn is_complete(&self) -> bool {
        self.shards.iter().all(ShardRecord::succeeded)
    }

    /// The earlier result that stands in for running `job` again: only in an incomplete round
    /// of the same shard count, for a shard that succeeded with exactly the same servers.
    pub fn reusable(&self, job: &ShardJob) -> Option<&ShardRecord> {
        if self.is_complete() || self.of != job.of {
            return None;
        }
        self.shards
            .get(job.shard.checked_sub(1)?)
            .filter(|record| record.succeeded() && record.entries_digest == job.entries_digest())
    }

    /// Drops the kept change rows when the round is complete: no later run reuses its shards.
    pub fn forget_changes_when_complete(&mut self) {
        if self.is_complete() {
            for record in &mut self.shards {
                record.changes.clear();
            }
        }
    }

    /// The round record of `ledger_name`, if there is a usable one (an unreadable record only
    /// means every shard runs again).
    pub async fn load(storage: &impl Storage, ledger_name: &str) -> Option<Round> {
        let key = record_key(ledger_name);
        let record = match storage.get_record(Store::Ledger, &key).await {
            Ok(record) => record?,
            Err(error) => {
                tracing::warn!(%error, key, "shard round record not read: every shard runs");
                return None;
            }
        };
        match serde_json::from_slice::<Round>(&record.bytes) {
            Ok(round) if round.format == ROUND_FORMAT => Some(round),
            Ok(_) | Err(_) => {
                tracing::warn!(key, "shard round record not usable: every shard runs");
                None
            }
        }
    }

    /// A new round record, of servers placed as `placement` says.
    pub fn new(
        of: usize,
        started_at: DateTime<Utc>,
        shards: Vec<ShardRecord>,
        placement: Placement,
    ) -> Round {
        Round {
            format: ROUND_FORMAT,
            of,
            started_at,
            shards,
            placement,
            moving_to: None,
        }
    }

    /// Writes the record.
    pub async fn save(
        &self,
        storage: &impl Storage,
        ledger_name: &str,
    ) -> Result<(), StorageError> {
        let bytes = serde_json::to_vec(self).map_err(StorageError::Serialize)?;
        storage
            .put_record(Store::Ledger, &record_key(ledger_name), Record::json(bytes))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(shard: usize, of: usize, url: &str) -> ShardJob {
        ShardJob {
            shard,
            of,
            ledger_name: format!("w-shard-{shard}"),
            entries: vec![json!(url)],
        }
    }

    fn record(job: &ShardJob, status: &str) -> ShardRecord {
        ShardRecord {
            entries_digest: job.entries_digest(),
            outcome: ShardOutcome {
                shard: job.shard,
                ledger_name: job.ledger_name.clone(),
                servers: job.entries.len(),
                status: status.to_string(),
                run_id: None,
                dataset_id: None,
                error: None,
                chain: Default::default(),
            },
            summary: (status != FAILED).then(|| SummaryRow::tally(&[], &[])),
            changes: Vec::new(),
        }
    }

    #[test]
    fn only_succeeded_shards_of_an_interrupted_round_with_the_same_servers_are_reused() {
        let one = job(1, 2, "https://a.example/mcp");
        let two = job(2, 2, "https://b.example/mcp");
        let interrupted = Round::new(
            2,
            Utc::now(),
            vec![record(&one, SUCCEEDED), record(&two, FAILED)],
            Placement::default(),
        );
        assert!(!interrupted.is_complete());
        assert!(interrupted.reusable(&one).is_some());
        assert!(
            interrupted.reusable(&two).is_none(),
            "a failed shard runs again"
        );
        let moved = job(1, 2, "https://c.example/mcp");
        assert!(
            interrupted.reusable(&moved).is_none(),
            "other servers: runs again"
        );
        assert!(
            interrupted
                .reusable(&job(1, 3, "https://a.example/mcp"))
                .is_none()
        );

        let complete = Round::new(
            2,
            Utc::now(),
            vec![record(&one, REUSED), record(&two, GATE_TRIPPED)],
            Placement::default(),
        );
        assert!(complete.is_complete());
        assert!(
            complete.reusable(&one).is_none(),
            "a complete round starts anew"
        );
    }

    #[test]
    fn the_record_key_is_reserved() {
        assert!(crate::ledger::is_reserved_name(&record_key("w")));
        assert!(crate::input::is_valid_record_key(&record_key(
            &"w".repeat(85)
        )));
    }
}
