//! Shards run as concurrent tasks of this process (a sharded watch outside the platform).
//!
//! Each shard is an ordinary run over its own ledger in the shared ledger store. What a run
//! writes to the default store and dataset (rows, OUTPUT, REPORT, status messages) is caught
//! by [`ShardStore`] and handed to the coordinator, which writes the merged result once.

use std::sync::Mutex;

use super::{ShardEnd, ShardRun, ShardRunner, plan::ShardJob};
use crate::input::Input;
use crate::platform::{Charging, Item, Record, Storage, StorageError, Store, Usd};
use crate::run::{self, RunOptions};

/// Runs shards in this process against the coordinator's storage.
pub struct InProcess<'a, S> {
    /// The coordinator's storage: the shards' ledgers live in its ledger store.
    pub storage: &'a S,
    /// The coordinator's charging, whose prices the shards use.
    pub charging: &'a Charging,
    /// The operator's options.
    pub options: &'a RunOptions,
    /// The coordinator's validated input.
    pub input: &'a Input,
}

impl<S: Storage> ShardRunner for InProcess<'_, S> {
    async fn run_shard(&self, job: &ShardJob, budget: Option<Usd>) -> ShardRun {
        let store = ShardStore {
            inner: self.storage,
            shard: job.ledger_name.as_str(),
            items: Mutex::new(Vec::new()),
        };
        let charging = self.charging.for_shard(budget);
        let input = Input {
            servers: job.entries.clone(),
            ledger_name: job.ledger_name.clone(),
            registry: None,
            shards: 1,
            ..self.input.clone()
        };
        let end = match run::run_with_input(&store, &charging, self.options, input).await {
            Ok(outcome) => ShardEnd::Succeeded {
                gate_tripped: outcome.gate_tripped,
            },
            Err(error) => ShardEnd::Failed(error.to_string()),
        };
        let items = store
            .items
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ShardRun {
            end,
            run_id: None,
            dataset_id: None,
            items,
        }
    }
}

/// The storage one in-process shard sees: the ledger store is shared; the default store and the
/// dataset are the shard's own, kept in memory for the coordinator.
struct ShardStore<'a, S> {
    inner: &'a S,
    shard: &'a str,
    items: Mutex<Vec<Item>>,
}

impl<S: Storage> Storage for ShardStore<'_, S> {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        match store {
            Store::Ledger => self.inner.get_record(store, key).await,
            Store::Default => Ok(None),
        }
    }

    async fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> Result<(), StorageError> {
        match store {
            Store::Ledger => self.inner.put_record(store, key, record).await,
            // OUTPUT and REPORT of a shard: the coordinator writes the merged ones.
            Store::Default => Ok(()),
        }
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        match store {
            Store::Ledger => self.inner.list_keys(store).await,
            Store::Default => Ok(Vec::new()),
        }
    }

    async fn delete_record(&self, store: Store, key: &str) -> Result<(), StorageError> {
        match store {
            Store::Ledger => self.inner.delete_record(store, key).await,
            Store::Default => Ok(()),
        }
    }

    async fn push_items(&self, items: &[Item]) -> Result<(), StorageError> {
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(items);
        Ok(())
    }

    async fn set_status_message(&self, message: &str, _terminal: bool) -> Result<(), StorageError> {
        tracing::info!(shard = self.shard, "{message}");
        Ok(())
    }
}
