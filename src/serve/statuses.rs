//! The last run's status of a watch's servers ([`crate::server_status`]), as the server reads
//! it: which status records stand for the watch, merged into one status per ledger key.
//!
//! A plain watch has one record, `status.<ledger_name>`. A sharded watch has one per shard
//! ledger, and its coordinator writes the watch's own with the rows no shard makes (registry
//! URL templates); only the shards of its current round count, and of each record only the
//! servers the round places in that shard (of the coordinator's, those it places nowhere), so
//! the record a retired shard or a moved server left behind is never shown as current. A record that cannot be read is a note, never an error:
//! the pages and the API still answer from the ledger.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::platform::Storage;
use crate::server_status::{MAX_STATUS_SERVERS, ServerStatus, StatusRecord};
use crate::shard::plan::{PLAIN, location_ledger_name};
use crate::shard::round::Round;

/// The merged statuses of one watch.
#[derive(Debug, Default)]
pub(super) struct Statuses {
    /// The status of each server, by ledger key.
    pub(super) by_key: HashMap<String, ServerStatus>,
    /// When the newest run that left a status started.
    pub(super) run_at: Option<DateTime<Utc>>,
    /// What could not be read, in words; `None` when every record read.
    pub(super) note: Option<String>,
}

/// The statuses of the watch `ledger_name`.
pub(super) async fn load(storage: &impl Storage, ledger_name: &str) -> Statuses {
    let round = Round::load(storage, ledger_name).await;
    let sharded = round.as_ref().filter(|round| round.of > 1);
    // A sharded watch: each shard's record, and the coordinator's own (the registry
    // templates, which no shard reads), which is the watch's.
    let locations: Vec<usize> = match sharded {
        Some(round) => std::iter::once(PLAIN).chain(1..=round.of).collect(),
        None => vec![PLAIN],
    };
    let mut statuses = Statuses::default();
    let mut problems = Vec::new();
    for location in locations {
        let name = location_ledger_name(ledger_name, location);
        let record = match StatusRecord::load(storage, &name).await {
            Ok(Some(record)) => record,
            Ok(None) => continue,
            Err(error) => {
                problems.push(format!("the status record of ledger {name:?}: {error}"));
                continue;
            }
        };
        if record.truncated {
            problems.push(format!(
                "the status record of ledger {name:?} names more than {MAX_STATUS_SERVERS} \
                 servers; the rest are not shown"
            ));
        }
        // Of the coordinator's record, only servers no shard holds (a record a plain run left
        // before the watch had shards is replaced by the coordinator's every round).
        let placed_here = |status: &ServerStatus| match sharded {
            Some(round) if !round.placement.shards.is_empty() => {
                let server = Value::String(status.server_url.clone());
                let shard = round.placement.shard_of(&server);
                shard == Some(location) || (location == PLAIN && shard.is_none())
            }
            _ => true,
        };
        statuses.run_at = statuses.run_at.max(Some(record.run_at));
        for status in record.servers.into_iter().filter(placed_here) {
            merge(&mut statuses.by_key, status);
        }
    }
    if !problems.is_empty() {
        statuses.note = Some(format!(
            "Not every server's last status could be read ({}); the servers are listed from \
             the ledger",
            problems.join("; ")
        ));
    }
    statuses
}

/// Keeps the newest status of a key.
fn merge(by_key: &mut HashMap<String, ServerStatus>, status: ServerStatus) {
    match by_key.get(&status.server_url) {
        Some(kept) if kept.checked_at >= status.checked_at => {}
        _ => {
            by_key.insert(status.server_url.clone(), status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(url: &str, code: &str, hour: u32) -> ServerStatus {
        let at: DateTime<Utc> = format!("2026-03-01T{hour:02}:00:00Z").parse().unwrap();
        ServerStatus {
            server_url: url.to_string(),
            ok: code == "OK",
            reason_code: code.to_string(),
            error: None,
            since: at,
            last_read: None,
            checked_at: at,
        }
    }

    #[test]
    fn the_newest_status_of_a_key_wins() {
        let mut by_key = HashMap::new();
        merge(&mut by_key, status("a", "CONNECT_FAIL", 2));
        merge(&mut by_key, status("a", "OK", 1));
        assert_eq!(by_key["a"].reason_code, "CONNECT_FAIL");
        merge(&mut by_key, status("a", "OK", 3));
        assert_eq!(by_key["a"].reason_code, "OK");
    }
}
