//! The storage the server reads: the local Apify layout or the Apify API, behind one concrete
//! type, and read-only whatever the backend.
//!
//! Writes are refused here rather than merely never called, so a mistake in a handler cannot
//! change a ledger: the server only ever reads records.

use std::path::PathBuf;

use crate::platform::{
    ApiClient, ApifyStorage, Item, LocalStorage, PlatformEnv, Record, Storage, StorageError, Store,
};

/// A read-only view of one storage backend.
pub enum Backend {
    /// The Apify local storage layout on disk.
    Local(LocalStorage),
    /// The Apify REST API (on the platform).
    Apify(Box<ApifyStorage>),
}

impl Backend {
    /// The storage `env` names: the Apify API on the platform, else the local layout under
    /// `storage_dir` (default: the environment's). Used by `serve` and `verify`; a local root
    /// that does not exist yet reads as empty.
    pub fn open(env: &PlatformEnv, storage_dir: Option<PathBuf>) -> Result<Backend, String> {
        if env.is_at_home {
            let api = ApiClient::new(env)
                .map_err(|e| format!("cannot set up the Apify API client: {e}"))?;
            return ApifyStorage::with_client(env, api)
                .map(|storage| Backend::Apify(Box::new(storage)))
                .map_err(|e| format!("cannot use the Apify storage: {e}"));
        }
        let root = storage_dir.unwrap_or_else(|| env.local_storage_dir.clone());
        if !root.is_dir() {
            tracing::warn!(
                "no local storage under {} yet: every ledger is missing until a run writes one",
                root.display()
            );
        }
        Ok(Backend::Local(LocalStorage::open_existing(root)))
    }
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
