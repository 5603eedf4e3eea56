//! The storage the server reads: the local Apify layout or the Apify API, behind one concrete
//! type, and read-only whatever the backend.
//!
//! Writes are refused here rather than merely never called, so a mistake in a handler cannot
//! change a ledger: the server only ever reads records.

use crate::platform::{ApifyStorage, Item, LocalStorage, Record, Storage, StorageError, Store};

/// A read-only view of one storage backend.
pub enum Backend {
    /// The Apify local storage layout on disk.
    Local(LocalStorage),
    /// The Apify REST API (on the platform).
    Apify(Box<ApifyStorage>),
}

fn refused(what: &str) -> StorageError {
    StorageError::Api {
        method: what.to_string(),
        path: String::new(),
        message: "the ledger server is read-only".to_string(),
    }
}

impl Storage for Backend {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        match self {
            Backend::Local(storage) => storage.get_record(store, key).await,
            Backend::Apify(storage) => storage.get_record(store, key).await,
        }
    }

    async fn put_record(&self, _: Store, _: &str, _: Record) -> Result<(), StorageError> {
        Err(refused("put_record"))
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        match self {
            Backend::Local(storage) => storage.list_keys(store).await,
            Backend::Apify(storage) => storage.list_keys(store).await,
        }
    }

    async fn delete_record(&self, _: Store, _: &str) -> Result<(), StorageError> {
        Err(refused("delete_record"))
    }

    async fn push_items(&self, _: &[Item]) -> Result<(), StorageError> {
        Err(refused("push_items"))
    }

    async fn set_status_message(&self, _: &str, _: bool) -> Result<(), StorageError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_are_refused_and_reads_pass_through() {
        let dir = tempfile::tempdir().unwrap();
        let local = LocalStorage::open(dir.path()).unwrap();
        local
            .put_record(Store::Ledger, "L", Record::json(b"{}".to_vec()))
            .await
            .unwrap();
        let backend = Backend::Local(local);
        let read = backend.get_record(Store::Ledger, "L").await.unwrap();
        assert_eq!(read.unwrap().bytes, b"{}");
        let write = backend
            .put_record(Store::Ledger, "L", Record::json(b"[]".to_vec()))
            .await;
        assert!(write.is_err());
        assert!(backend.push_items(&[]).await.is_err());
        assert!(backend.delete_record(Store::Ledger, "L").await.is_err());
        assert_eq!(backend.list_keys(Store::Ledger).await.unwrap(), vec!["L"]);
        let still = backend.get_record(Store::Ledger, "L").await.unwrap();
        assert_eq!(still.unwrap().bytes, b"{}");
    }
}
