//! Where the Actor keeps its data: the key-value stores and the dataset.
//!
//! Two backends sit behind the [`Storage`] trait: the Apify local storage layout on disk (the
//! embedded default, [`LocalStorage`]) and the Apify REST API (when `APIFY_IS_AT_HOME` is set).
//! The rest of the crate only sees the trait.

mod apify;
mod charging;
mod env;
mod local;
mod runs;
pub mod secrets;
mod usd;

use std::future::Future;

pub use apify::{ApiClient, ApiError, ApifyStorage, RetryPolicy};
pub use charging::{BREAKER_THRESHOLD, CHARGE_TRIES, Charging, ChargingError, Rounding, Usd};
pub use env::{EnvError, PlatformEnv};
pub use local::LocalStorage;
pub use runs::{RunInfo, RunPage, Runs};

/// The largest record body the Apify API accepts in one request (9 MiB). The run keeps every
/// record it writes within this on both backends, so a run that works locally works at home.
pub const MAX_RECORD_BYTES: usize = 9_437_184;

/// Largest request body of a dataset push: 9 MiB less 0.01 %, as the SDKs use.
pub const MAX_PUSH_BYTES: usize = 9_437_184 - 9_437_184 / 10_000;

/// The largest record a read accepts: 16 MiB, well above the 9 MiB of any record this Actor
/// writes, so a larger one is foreign or damaged. Both backends refuse it before holding it in
/// memory (the API body is streamed and cut off), which keeps a run within its memory.
pub const MAX_READ_BYTES: usize = 16 * 1024 * 1024;

/// The largest INPUT a run accepts: 4 MiB, far above any valid input (1000 server URLs with
/// their credentials), and small enough that parsing it, even into a generic JSON tree of tiny
/// values, stays well within the run's memory.
pub const MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;

/// The named key-value store that holds the ledger records.
pub const LEDGER_STORE_NAME: &str = "mcp-tool-surface-ledger";

/// Which key-value store a record lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// The run's default store (INPUT, OUTPUT, REPORT).
    Default,
    /// The named store [`LEDGER_STORE_NAME`] that outlives runs.
    Ledger,
}

/// A key-value record: its bytes and the content type they were stored with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The record's raw bytes.
    pub bytes: Vec<u8>,
    /// MIME type, e.g. `application/json` or `text/html`.
    pub content_type: String,
}

impl Record {
    /// A JSON record.
    pub fn json(bytes: Vec<u8>) -> Self {
        Record {
            bytes,
            content_type: "application/json; charset=utf-8".to_string(),
        }
    }
}

/// One dataset item, serialized once as a compact JSON object. Rows are serialized straight
/// from their types (no intermediate `serde_json::Value` tree), and both backends write these
/// bytes as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    json: Vec<u8>,
}

impl Item {
    /// Serializes `row` as one item.
    pub fn of(row: &impl serde::Serialize) -> Result<Self, StorageError> {
        serde_json::to_vec(row)
            .map(|json| Item { json })
            .map_err(StorageError::Serialize)
    }

    /// The item's JSON bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.json
    }
}

/// Failures of a storage backend. The message says what to check.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A local file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, e.g. "cannot write".
        action: &'static str,
        /// The file concerned.
        path: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The platform API refused or failed a call.
    #[error("Apify API {method} {path} failed: {message}")]
    Api {
        /// HTTP method of the failed call.
        method: String,
        /// API path of the failed call.
        path: String,
        /// The API's error type and message, or the transport error.
        message: String,
    },
    /// A record is larger than [`MAX_READ_BYTES`]; it was not read.
    #[error(
        "record {key:?} is larger than the {limit} bytes a read accepts (this Actor never \
         writes a record over 9 MiB, so it is foreign or damaged); it was not read"
    )]
    TooLarge {
        /// The record key.
        key: String,
        /// The limit.
        limit: usize,
    },
    /// A ledger write was refused because another writer changed the record since this run
    /// read it (a shard run fenced off after a newer coordinator moved entries,
    /// [`crate::shard::fence`]).
    #[error("ledger {key:?} not written: {why}")]
    Fenced {
        /// The ledger's record key.
        key: String,
        /// What changed.
        why: String,
    },
    /// A dataset item could not be serialized as JSON (a bug: rows always serialize).
    #[error("cannot serialize a dataset item: {0}")]
    Serialize(serde_json::Error),
}

/// The storage operations a run needs; implemented by the local and the platform backend.
pub trait Storage: Send + Sync {
    /// Reads a record, `None` if it does not exist.
    fn get_record(
        &self,
        store: Store,
        key: &str,
    ) -> impl Future<Output = Result<Option<Record>, StorageError>> + Send;

    /// Writes a record atomically (a reader sees the old or the new bytes, never a mix).
    fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;

    /// The keys of every record in `store`, sorted. Used to sweep records no ledger names.
    fn list_keys(
        &self,
        store: Store,
    ) -> impl Future<Output = Result<Vec<String>, StorageError>> + Send;

    /// Deletes a record; a record that does not exist is not an error.
    fn delete_record(
        &self,
        store: Store,
        key: &str,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;

    /// Appends items to the run's default dataset, in order.
    fn push_items(&self, items: &[Item]) -> impl Future<Output = Result<(), StorageError>> + Send;

    /// Sets the run's status message (a no-op locally, where it is only logged).
    fn set_status_message(
        &self,
        message: &str,
        terminal: bool,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;
}
