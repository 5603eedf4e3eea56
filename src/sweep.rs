//! Sweeping surface records and value packs that no ledger names any more.
//!
//! Value packs ([`crate::ledger::values`]) follow the same rule as surface records: a pack
//! goes only when no index names any value it holds (every item and step within the retention
//! period of every ledger), after the same grace period.
//!
//! Surface records are content-addressed and shared: every ledger index of the store
//! (`ledger_name`s of one user, or shards of one fleet) may name the same record. A record no
//! index names is garbage, but a run cannot know whether another run is about to name it
//! again. So a record is deleted only once it has been seen unreferenced for
//! [`GRACE_PERIOD`] by sweeps at least that far apart; the journal record
//! [`JOURNAL_KEY`] remembers when each record was first seen unreferenced.
//!
//! The sweep runs after the ledger index was written and never fails a run: a store it cannot
//! fully read (an index it cannot parse, a listing error) is left as it is.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::ledger::{Ledger, SURFACE_KEY_PREFIX, is_value_pack};
use crate::platform::{Record, Storage, StorageError, Store};

/// How long a surface record must stay unreferenced before it is deleted.
pub const GRACE_PERIOD: Duration = Duration::days(7);

/// Key of the journal record. It starts with the surface prefix (so no `ledger_name` can take
/// it) but is not a content address.
pub const JOURNAL_KEY: &str = "surface-sweep-journal";

/// When each unreferenced surface record was first seen unreferenced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// Record key → first sweep that found no index naming it.
    pub unreferenced_since: BTreeMap<String, DateTime<Utc>>,
}

/// What one sweep decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Records unreferenced for at least the grace period: delete them.
    pub delete: Vec<String>,
    /// The journal to store after the deletions.
    pub journal: Journal,
}

/// Why a sweep stopped without touching the store.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The store could not be listed or read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A record that looks like a ledger index cannot be read, so what it names is unknown.
    #[error("record {0:?} of the ledger store is not a ledger this build reads; nothing swept")]
    UnknownIndex(String),
}

/// Whether `key` is a content-addressed surface record key (`surface-` + 40 hex digits).
pub fn is_surface_record(key: &str) -> bool {
    key.strip_prefix(SURFACE_KEY_PREFIX)
        .is_some_and(|rest| rest.len() == 40 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `key` is a ledger index (not a surface record, the journal or an insight cache).
fn is_index(key: &str) -> bool {
    !crate::ledger::is_reserved_name(key)
}

/// Decides which surface records to delete. Pure: the store's surface keys, the keys any index
/// names, the previous journal and the time of this sweep.
pub fn plan(
    surfaces: &[String],
    referenced: &HashSet<String>,
    previous: &Journal,
    now: DateTime<Utc>,
) -> Plan {
    let mut plan = Plan::default();
    for key in surfaces.iter().filter(|k| !referenced.contains(*k)) {
        let since = previous
            .unreferenced_since
            .get(key)
            .copied()
            .filter(|since| *since <= now)
            .unwrap_or(now);
        if now - since >= GRACE_PERIOD {
            plan.delete.push(key.clone());
        } else {
            plan.journal.unreferenced_since.insert(key.clone(), since);
        }
    }
    plan
}

/// Sweeps the ledger store; returns the number of records deleted.
pub async fn sweep(storage: &impl Storage, now: DateTime<Utc>) -> Result<usize, SweepError> {
    let keys = storage.list_keys(Store::Ledger).await?;
    let mut referenced = HashSet::new();
    for key in keys.iter().filter(|k| is_index(k)) {
        let Some(record) = storage.get_record(Store::Ledger, key).await? else {
            continue; // deleted meanwhile: it names nothing any more
        };
        let ledger = Ledger::from_bytes(key, &record.bytes)
            .map_err(|_| SweepError::UnknownIndex(key.clone()))?;
        referenced.extend(ledger.value_packs());
        referenced.extend(ledger.servers.into_values().filter_map(|e| e.surface_key));
    }
    let surfaces: Vec<String> = keys
        .into_iter()
        .filter(|k| is_surface_record(k) || is_value_pack(k))
        .collect();
    let previous = read_journal(storage).await;
    let plan = plan(&surfaces, &referenced, &previous, now);
    let mut deleted = 0;
    for key in &plan.delete {
        match storage.delete_record(Store::Ledger, key).await {
            Ok(()) => deleted += 1,
            Err(error) => {
                tracing::warn!(key, %error, "cannot delete an unreferenced surface record")
            }
        }
    }
    if plan.journal != previous {
        let bytes = serde_json::to_vec(&plan.journal).unwrap_or_default();
        storage
            .put_record(Store::Ledger, JOURNAL_KEY, Record::json(bytes))
            .await?;
    }
    Ok(deleted)
}

/// The stored journal; an absent or unreadable one is empty (the grace period starts again).
async fn read_journal(storage: &impl Storage) -> Journal {
    match storage.get_record(Store::Ledger, JOURNAL_KEY).await {
        Ok(Some(record)) => serde_json::from_slice(&record.bytes).unwrap_or_default(),
        _ => Journal::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(days: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap() + Duration::days(days)
    }

    fn key(n: u8) -> String {
        format!("{SURFACE_KEY_PREFIX}{}", format!("{n:02x}").repeat(20))
    }

    #[test]
    fn a_record_is_deleted_only_after_the_whole_grace_period_unreferenced() {
        let (a, b, c) = (key(1), key(2), key(3));
        let surfaces = vec![a.clone(), b.clone(), c.clone()];
        let referenced: HashSet<String> = [a.clone()].into();
        // First sweep: b and c join the journal, nothing is deleted.
        let first = plan(&surfaces, &referenced, &Journal::default(), at(0));
        assert!(first.delete.is_empty());
        assert_eq!(first.journal.unreferenced_since.get(&b), Some(&at(0)));
        // Six days later: still nothing.
        let second = plan(&surfaces, &referenced, &first.journal, at(6));
        assert!(second.delete.is_empty());
        assert_eq!(second.journal, first.journal);
        // c is named again meanwhile: it leaves the journal.
        let referenced_c: HashSet<String> = [a.clone(), c.clone()].into();
        let third = plan(&surfaces, &referenced_c, &second.journal, at(6));
        assert!(!third.journal.unreferenced_since.contains_key(&c));
        // Seven days after b was first seen unreferenced, b goes; c starts over if dropped again.
        let fourth = plan(&surfaces, &referenced, &third.journal, at(7));
        assert_eq!(fourth.delete, vec![b.clone()]);
        assert_eq!(fourth.journal.unreferenced_since.get(&c), Some(&at(7)));
        assert!(!fourth.journal.unreferenced_since.contains_key(&b));
    }

    #[test]
    fn a_journal_from_the_future_does_not_shorten_the_grace() {
        let b = key(2);
        let mut journal = Journal::default();
        journal.unreferenced_since.insert(b.clone(), at(30));
        let planned = plan(std::slice::from_ref(&b), &HashSet::new(), &journal, at(0));
        assert!(planned.delete.is_empty());
        assert_eq!(planned.journal.unreferenced_since.get(&b), Some(&at(0)));
    }

    #[test]
    fn only_content_addresses_are_surface_records() {
        assert!(is_surface_record(&key(7)));
        for other in [
            JOURNAL_KEY,
            "surface-abc",
            "insight.DEFAULT",
            "DEFAULT",
            "surface-",
        ] {
            assert!(!is_surface_record(other), "{other}");
        }
        assert!(is_index("DEFAULT"));
        assert!(is_index("fleet-shard-1-of-2"));
        assert!(!is_index(JOURNAL_KEY));
        assert!(!is_index("insight.DEFAULT"));
    }
}
