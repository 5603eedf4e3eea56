//! The Apify local storage layout on disk (what `apify run` and the SDKs use).
//!
//! ```text
//! <root>/key_value_stores/default/INPUT.json
//! <root>/key_value_stores/mcp-tool-surface-ledger/<ledger_name>.json
//! <root>/datasets/default/000000001.json, 000000002.json, ...
//! ```
//! Record files are named like the JS SDK does: key + extension of the content type. Every write
//! goes to a temporary file of a unique name in the same folder first and is then renamed over
//! the target, so a crash leaves either the old or the new record, never a torn one, and
//! concurrent writers of one key (shards of one process, or several processes) all succeed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Item, LEDGER_STORE_NAME, MAX_READ_BYTES, Record, Storage, StorageError, Store};

/// Number of digits in a dataset item file name (`000000001.json`).
const ITEM_NAME_DIGITS: usize = 9;

/// Storage in the Apify local layout under one root folder.
#[derive(Debug)]
pub struct LocalStorage {
    root: PathBuf,
    next_item: AtomicU64,
}

impl LocalStorage {
    /// Opens the layout under `root` and empties the default dataset, as `apify run` does.
    /// Named stores (the ledger) and the default store's records are left alone.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StorageError> {
        let root = root.into();
        let dataset = root.join("datasets").join("default");
        if dataset.exists() {
            std::fs::remove_dir_all(&dataset).map_err(io("cannot empty the dataset", &dataset))?;
        }
        std::fs::create_dir_all(&dataset).map_err(io("cannot create", &dataset))?;
        Ok(LocalStorage {
            root,
            next_item: AtomicU64::new(1),
        })
    }

    /// Opens the layout under `root` for reading, touching nothing: the dataset is kept and no
    /// folder is created (the read-only ledger server uses this; a missing folder simply has
    /// no records).
    pub fn open_existing(root: impl Into<PathBuf>) -> Self {
        LocalStorage {
            root: root.into(),
            next_item: AtomicU64::new(1),
        }
    }

    /// The storage root, e.g. `./storage`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn store_dir(&self, store: Store) -> PathBuf {
        let name = match store {
            Store::Default => "default",
            Store::Ledger => LEDGER_STORE_NAME,
        };
        self.root.join("key_value_stores").join(name)
    }

    fn find_record(&self, store: Store, key: &str) -> Option<(PathBuf, String)> {
        let dir = self.store_dir(store);
        let candidates = [
            (format!("{key}.json"), "application/json; charset=utf-8"),
            (format!("{key}.html"), "text/html; charset=utf-8"),
            (format!("{key}.txt"), "text/plain; charset=utf-8"),
            (format!("{key}.bin"), "application/octet-stream"),
            (key.to_string(), "application/json; charset=utf-8"),
        ];
        candidates
            .into_iter()
            .map(|(name, content_type)| (dir.join(name), content_type.to_string()))
            .find(|(path, _)| path.is_file())
    }
}

fn dir_display(root: &Path) -> String {
    root.join("datasets").join("default").display().to_string()
}

/// The record key a file of a store folder holds, or `None` for temporary and foreign files.
fn key_of_file(name: &str) -> Option<&str> {
    if name.starts_with('.') {
        return None;
    }
    let key = [".json", ".html", ".txt", ".bin"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name);
    crate::input::is_valid_record_key(key).then_some(key)
}

/// The file extension the JS SDK gives a record of this content type.
fn extension_for(content_type: &str) -> &'static str {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    match essence {
        "application/json" => "json",
        "text/html" => "html",
        "text/plain" => "txt",
        _ => "bin",
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StorageError + use<> {
    let path = path.display().to_string();
    move |source| StorageError::Io {
        action,
        path,
        source,
    }
}

/// How much durability a write needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Flushed to disk before the rename: records (the ledger above all) survive a power loss.
    Synced,
    /// Renamed into place without a flush: dataset rows, which a crashed run rewrites anyway.
    Renamed,
}

/// Writes `bytes` to `path` through a temporary sibling of a unique name and a rename (atomic on
/// POSIX): a reader sees the old or the new record, never a torn one, and any number of writers
/// of one key, in this process or others, all succeed (the last rename wins; content-addressed
/// records hold the same bytes whichever it is).
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<(), StorageError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, file) = create_temp(dir, &file_name)?;
    let written = fill(file, &tmp, bytes, durability)
        .and_then(|()| std::fs::rename(&tmp, path).map_err(io("cannot replace", path)));
    if written.is_err() {
        // Best effort: a temporary file left behind is skipped by `list_keys` anyway.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Temporary files made by this process so far: with the process id, it makes every temporary
/// name unique, so writers of the same record in one process (shards run as tasks share the
/// pid) never write to or rename each other's file.
static TEMP_FILES: AtomicU64 = AtomicU64::new(0);

/// Creates a fresh hidden temporary sibling of `file_name` in `dir` (`list_keys` skips it).
/// `create_new` guarantees no two writers share one; a name left by a dead process of the same
/// pid is skipped.
fn create_temp(dir: &Path, file_name: &str) -> Result<(PathBuf, std::fs::File), StorageError> {
    loop {
        let serial = TEMP_FILES.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{file_name}.{}-{serial}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(io("cannot write", &tmp)(error)),
        }
    }
}

/// Writes `bytes` into the temporary file, flushed to disk when `durability` asks.
fn fill(
    mut file: std::fs::File,
    tmp: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<(), StorageError> {
    use std::io::Write;
    file.write_all(bytes).map_err(io("cannot write", tmp))?;
    if durability == Durability::Synced {
        file.sync_all().map_err(io("cannot flush", tmp))?;
    }
    Ok(())
}

impl Storage for LocalStorage {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        let Some((path, content_type)) = self.find_record(store, key) else {
            return Ok(None);
        };
        let size = tokio::fs::metadata(&path)
            .await
            .map_err(io("cannot read", &path))?
            .len();
        if size > MAX_READ_BYTES as u64 {
            return Err(StorageError::TooLarge {
                key: key.to_string(),
                limit: MAX_READ_BYTES,
            });
        }
        let bytes = tokio::fs::read(&path)
            .await
            .map_err(io("cannot read", &path))?;
        Ok(Some(Record {
            bytes,
            content_type,
        }))
    }

    async fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> Result<(), StorageError> {
        let ext = extension_for(&record.content_type);
        let path = self.store_dir(store).join(format!("{key}.{ext}"));
        tokio::task::spawn_blocking(move || {
            write_atomically(&path, &record.bytes, Durability::Synced)
        })
        .await
        .map_err(|e| StorageError::Io {
            action: "cannot write",
            path: key.to_string(),
            source: std::io::Error::other(e),
        })?
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        let dir = self.store_dir(store);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(io("cannot list", &dir)(error)),
        };
        let mut keys = std::collections::BTreeSet::new();
        for entry in entries {
            let entry = entry.map_err(io("cannot list", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(key) = key_of_file(&name) {
                keys.insert(key.to_string());
            }
        }
        Ok(keys.into_iter().collect())
    }

    async fn delete_record(&self, store: Store, key: &str) -> Result<(), StorageError> {
        while let Some((path, _)) = self.find_record(store, key) {
            std::fs::remove_file(&path).map_err(io("cannot delete", &path))?;
        }
        Ok(())
    }

    async fn push_items(&self, items: &[Item]) -> Result<(), StorageError> {
        let dir = self.root.join("datasets").join("default");
        let mut files = Vec::with_capacity(items.len());
        for item in items {
            let index = self.next_item.fetch_add(1, Ordering::SeqCst);
            let path = dir.join(format!("{index:0width$}.json", width = ITEM_NAME_DIGITS));
            files.push((path, item.as_bytes().to_vec()));
        }
        tokio::task::spawn_blocking(move || {
            files
                .iter()
                .try_for_each(|(path, bytes)| write_atomically(path, bytes, Durability::Renamed))
        })
        .await
        .map_err(|e| StorageError::Io {
            action: "cannot write",
            path: dir_display(&self.root),
            source: std::io::Error::other(e),
        })?
    }

    async fn set_status_message(&self, message: &str, terminal: bool) -> Result<(), StorageError> {
        if terminal {
            tracing::info!(status = message, "final status");
        } else {
            tracing::debug!(status = message, "status");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn records_round_trip_and_dataset_is_emptied_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        storage
            .put_record(
                Store::Ledger,
                "DEFAULT",
                Record::json(b"{\"a\":1}".to_vec()),
            )
            .await
            .unwrap();
        storage
            .push_items(&[
                Item::of(&serde_json::json!({"n": 1})).unwrap(),
                Item::of(&serde_json::json!({"n": 2})).unwrap(),
            ])
            .await
            .unwrap();
        let ledger_file = dir
            .path()
            .join("key_value_stores/mcp-tool-surface-ledger/DEFAULT.json");
        assert!(ledger_file.is_file());
        assert!(dir.path().join("datasets/default/000000002.json").is_file());

        let reopened = LocalStorage::open(dir.path()).unwrap();
        let record = reopened.get_record(Store::Ledger, "DEFAULT").await.unwrap();
        assert_eq!(record.unwrap().bytes, b"{\"a\":1}");
        assert!(!dir.path().join("datasets/default/000000001.json").exists());
    }

    #[tokio::test]
    async fn input_is_found_with_or_without_extension() {
        let dir = tempfile::tempdir().unwrap();
        let kv = dir.path().join("key_value_stores/default");
        std::fs::create_dir_all(&kv).unwrap();
        std::fs::write(kv.join("MY_INPUT"), b"{}").unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        assert!(
            storage
                .get_record(Store::Default, "MY_INPUT")
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            storage
                .get_record(Store::Default, "INPUT")
                .await
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn extensions_follow_the_js_sdk() {
        assert_eq!(extension_for("application/json; charset=utf-8"), "json");
        assert_eq!(extension_for("text/html"), "html");
        assert_eq!(extension_for("image/png"), "bin");
    }
}
