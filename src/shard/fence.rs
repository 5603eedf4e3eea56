//! What a single run's storage adds for a sharded watch: the fence of a shard run, and the
//! witnesses of the ledger writes a move made before the run.
//!
//! **The fence.** A shard run on the platform is a run of its own, started by a coordinator.
//! When that coordinator is killed, its shard runs go on; a new coordinator may then move
//! entries into or out of their ledgers before they end. A shard run's index write replaces
//! the whole record, so such a write would undo the move (entries moved out come back, entries
//! moved in are lost). So a run whose ledger is a shard ledger (`<watch>-shard-<k>`) keeps the
//! SHA-256 of the index record as it first read it, and before each write of that record reads
//! it again: when it changed (any other writer: a move, another run of the shard), the write is
//! refused ([`StorageError::Fenced`]) and the run fails with the reason, leaving the newer
//! state in place. The check and the write are two calls (the key-value store has no
//! conditional write), so a writer that lands between them within the same moment is not seen;
//! a coordinator's moves come before its shard runs, minutes after a killed one's runs read
//! their ledgers.
//!
//! **The witnesses.** A run with `shards: 1` that first moved the entries of a sharded watch
//! back into its own ledger ([`super::plain`]) made the last write of each shard ledger it
//! emptied; its summary row (and OUTPUT) names those writes in `shards[]` items with status
//! `retired`, as a coordinator's row does, so `verify --heads` finds them. The move's writes of
//! the watch's own ledger are this process's too: when the run reads the previous run's
//! `OUTPUT` for the heads it checks its ledger against, it also finds them (a `shards[]` item
//! added to what it reads), so they are not taken for writes nobody witnessed, just as a shard
//! run never takes its coordinator's moves for such writes.

use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::plain::{Gathered, retired_item};
use super::plan::{LEGACY_BASE, location_of_ledger};
use crate::platform::{Item, Record, Storage, StorageError, Store};
use crate::report::ShardOutcome;

/// The storage of one run (not a coordinator): the fence of its shard ledger, if it keeps
/// one, and the shard items its summary row gets.
pub struct RunStorage<'a, S> {
    inner: &'a S,
    /// The shard ledger fenced, with the digest of the record as first read (`Some(None)`: it
    /// did not exist); `None` until read.
    fence: Option<(String, Mutex<Option<Option<String>>>)>,
    /// `shards[]` items added to the run's summary row.
    witnesses: Vec<ShardOutcome>,
    /// The item of the move's last write of the run's own ledger, added to the previous
    /// `OUTPUT` the run reads for its witnessed heads.
    own_move: Option<ShardOutcome>,
}

/// Whether `ledger_name` is a shard ledger of some watch, `<watch>-shard-<k>`.
pub fn is_shard_ledger(ledger_name: &str) -> bool {
    ledger_name
        .rsplit_once("-shard-")
        .is_some_and(|(watch, _)| {
            location_of_ledger(watch, ledger_name).is_some_and(|l| (1..LEGACY_BASE).contains(&l))
        })
}

fn digest(record: Option<&Record>) -> Option<String> {
    record.map(|r| hex::encode(Sha256::digest(&r.bytes)))
}

impl<'a, S: Storage> RunStorage<'a, S> {
    /// The storage of a run of `ledger_name`: fenced when it is a shard ledger; its summary row
    /// gets the `retired` items of `gathered` as `shards[]` items (none: unchanged), and the
    /// previous `OUTPUT` it reads names the move's write of its own ledger.
    pub fn new(inner: &'a S, ledger_name: &str, gathered: Gathered) -> Self {
        let fence =
            is_shard_ledger(ledger_name).then(|| (ledger_name.to_string(), Mutex::new(None)));
        let own_move = gathered
            .own
            .map(|anchor| retired_item(ledger_name, ledger_name, &anchor));
        RunStorage {
            inner,
            fence,
            witnesses: gathered.retired,
            own_move,
        }
    }

    /// The previous run's `OUTPUT` as this run reads it: with the move's write of its own
    /// ledger added as a `shards[]` item (a summary row of the ledger when there is none).
    fn output_with_move(&self, record: Option<Record>, item: &ShardOutcome) -> Option<Record> {
        let mut row = record
            .as_ref()
            .and_then(|r| serde_json::from_slice::<Value>(&r.bytes).ok())
            .filter(Value::is_object)
            .unwrap_or_else(
                || serde_json::json!({"record_type": "summary", "ledger_name": item.ledger_name}),
            );
        let item = serde_json::to_value(item).ok()?;
        match row.get_mut("shards").and_then(Value::as_array_mut) {
            Some(shards) => shards.push(item),
            None => {
                row.as_object_mut()?
                    .insert("shards".to_string(), Value::Array(vec![item]));
            }
        }
        Some(Record::json(serde_json::to_vec(&row).ok()?))
    }

    fn fenced_key(&self, store: Store, key: &str) -> Option<&Mutex<Option<Option<String>>>> {
        match (&self.fence, store) {
            (Some((name, seen)), Store::Ledger) if name == key => Some(seen),
            _ => None,
        }
    }

    /// Refuses a write of the fenced ledger when the stored record is no longer the one read.
    async fn check_fence(
        &self,
        key: &str,
        seen: &Mutex<Option<Option<String>>>,
    ) -> Result<(), StorageError> {
        let expected = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(expected) = expected else {
            // Written before it was read: nothing to compare with.
            return Ok(());
        };
        let now = digest(self.inner.get_record(Store::Ledger, key).await?.as_ref());
        if now == expected {
            return Ok(());
        }
        tracing::error!(
            ledger = key,
            "the ledger was written by another writer since this run read it (a newer \
             coordinator moved entries, or another run of this shard): this run does not write it"
        );
        Err(StorageError::Fenced {
            key: key.to_string(),
            why: "it was written by another writer since this run read it (a newer coordinator \
                  of the sharded watch moved entries, or another run of this shard); this run's \
                  write would undo that"
                .to_string(),
        })
    }

    fn note(&self, seen: &Mutex<Option<Option<String>>>, record: Option<&Record>) {
        *seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(digest(record));
    }

    /// The summary row (or OUTPUT) with the witnesses added to its `shards[]`.
    fn witnessed(&self, bytes: &[u8], pretty: bool) -> Option<Vec<u8>> {
        if self.witnesses.is_empty() {
            return None;
        }
        let mut row: Value = serde_json::from_slice(bytes).ok()?;
        if row.get("record_type")? != "summary" {
            return None;
        }
        let items = serde_json::to_value(&self.witnesses).ok()?;
        let items = items.as_array()?.clone();
        match row.get_mut("shards").and_then(Value::as_array_mut) {
            Some(shards) => shards.extend(items),
            None => {
                row.as_object_mut()?
                    .insert("shards".to_string(), Value::Array(items));
            }
        }
        match pretty {
            true => serde_json::to_vec_pretty(&row).ok(),
            false => serde_json::to_vec(&row).ok(),
        }
    }
}

impl<S: Storage> Storage for RunStorage<'_, S> {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        let record = self.inner.get_record(store, key).await?;
        if let Some(item) = &self.own_move
            && store == Store::Default
            && key == "OUTPUT"
        {
            return Ok(self.output_with_move(record, item));
        }
        if let Some(seen) = self.fenced_key(store, key) {
            let mut first = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if first.is_none() {
                *first = Some(digest(record.as_ref()));
            }
        }
        Ok(record)
    }

    async fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> Result<(), StorageError> {
        if let Some(seen) = self.fenced_key(store, key) {
            self.check_fence(key, seen).await?;
            let written = Record {
                bytes: record.bytes.clone(),
                content_type: record.content_type.clone(),
            };
            self.inner.put_record(store, key, record).await?;
            self.note(seen, Some(&written));
            return Ok(());
        }
        if store == Store::Default
            && key == "OUTPUT"
            && let Some(bytes) = self.witnessed(&record.bytes, true)
        {
            let record = Record {
                bytes,
                content_type: record.content_type,
            };
            return self.inner.put_record(store, key, record).await;
        }
        self.inner.put_record(store, key, record).await
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        self.inner.list_keys(store).await
    }

    async fn delete_record(&self, store: Store, key: &str) -> Result<(), StorageError> {
        if let Some(seen) = self.fenced_key(store, key) {
            self.check_fence(key, seen).await?;
            self.inner.delete_record(store, key).await?;
            self.note(seen, None);
            return Ok(());
        }
        self.inner.delete_record(store, key).await
    }

    async fn push_items(&self, items: &[Item]) -> Result<(), StorageError> {
        if self.witnesses.is_empty() {
            return self.inner.push_items(items).await;
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match self.witnessed(item.as_bytes(), false) {
                Some(bytes) => {
                    let row: Value =
                        serde_json::from_slice(&bytes).map_err(StorageError::Serialize)?;
                    out.push(Item::of(&row)?);
                }
                None => out.push(item.clone()),
            }
        }
        self.inner.push_items(&out).await
    }

    async fn set_status_message(&self, message: &str, terminal: bool) -> Result<(), StorageError> {
        self.inner.set_status_message(message, terminal).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shard_ledgers_are_fenced() {
        for (name, fenced) in [
            ("fleet-shard-1", true),
            ("fleet-shard-20", true),
            ("a-shard-b-shard-3", true),
            ("fleet", false),
            ("fleet-shard-", false),
            ("fleet-shard-x", false),
            ("fleet-shard-2-of-3", false),
        ] {
            assert_eq!(is_shard_ledger(name), fenced, "{name}");
        }
    }
}
