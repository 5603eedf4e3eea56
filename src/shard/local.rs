//! Shards run as concurrent tasks of this process (a sharded watch outside the platform).
//!
//! Each shard is an ordinary run over its own ledger in the shared ledger store. Its server and
//! change rows go straight to the coordinator's dataset as the shard writes them (so a large
//! fleet's rows are not all held until every shard is done); [`ShardStore`] keeps light copies
//! and the shard's summary row for the coordinator, and drops the shard's own OUTPUT, REPORT
//! and status messages (the coordinator writes the merged ones).

use std::collections::HashMap;
use std::sync::Mutex;

use super::{ShardEnd, ShardRun, ShardRunner, plan::ShardJob, rows::ShardRows};
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
    /// The registry name of each registry server, by URL, put back into its row.
    pub registry_names: &'a HashMap<String, String>,
}

impl<S: Storage> ShardRunner for InProcess<'_, S> {
    async fn run_shard(&self, job: &ShardJob, budget: Option<Usd>) -> ShardRun {
        let store = ShardStore {
            inner: self.storage,
            shard: job.ledger_name.as_str(),
            registry_names: self.registry_names,
            rows: Mutex::new(ShardRows::default()),
        };
        let charging = self.charging.for_shard(budget);
        let input = Input {
            servers: job.entries.clone(),
            ledger_name: job.ledger_name.clone(),
            registry: None,
            shards: 1,
            notify: Vec::new(),
            ..self.input.clone()
        };
        let end = match run::run_with_input(&store, &charging, self.options, input).await {
            Ok(outcome) => ShardEnd::Succeeded {
                gate_tripped: outcome.gate_tripped,
            },
            Err(error) => ShardEnd::Failed(error.to_string()),
        };
        let rows = store
            .rows
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ShardRun {
            end,
            run_id: None,
            dataset_id: None,
            rows,
        }
    }
}

/// The storage one in-process shard sees: the ledger store and the dataset are the
/// coordinator's; the default store is the shard's own and is not kept.
struct ShardStore<'a, S> {
    inner: &'a S,
    shard: &'a str,
    registry_names: &'a HashMap<String, String>,
    rows: Mutex<ShardRows>,
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
        let written = {
            let mut rows = self
                .rows
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut written = Vec::with_capacity(items.len());
            for item in items {
                let item = rows
                    .take(item.clone(), self.registry_names)
                    .map_err(StorageError::Serialize)?;
                written.extend(item);
            }
            written
        };
        self.inner.push_items(&written).await
    }

    async fn set_status_message(&self, message: &str, _terminal: bool) -> Result<(), StorageError> {
        tracing::info!(shard = self.shard, "{message}");
        Ok(())
    }
}
