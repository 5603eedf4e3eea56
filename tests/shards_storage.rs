//! The local store under concurrent writers, as a sharded watch run in one process (shards are
//! tasks sharing one pid) or several processes over one storage folder produce them: every
//! writer of one key succeeds, and a reader only ever sees a whole record.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use mcp_surface_ledger::platform::{LocalStorage, Record, Storage, Store};

/// Keys every writer writes.
const KEYS: usize = 4;
/// Writes per writer per key.
const ROUNDS: usize = 25;
/// Size of one record: large enough that a torn write would show.
const RECORD_BYTES: usize = 64 * 1024;
/// The environment variable that turns [`child_writer`] on, naming the storage folder.
const CHILD_DIR: &str = "SHARDS_STORAGE_CHILD_DIR";

/// A record of `writer`: one byte repeated, so a reader can tell a whole record from a torn one.
fn record_of(writer: usize) -> Record {
    let mut bytes = vec![b'a' + (writer % 26) as u8; RECORD_BYTES];
    bytes[0] = b'"';
    bytes[RECORD_BYTES - 1] = b'"';
    Record::json(bytes)
}

fn is_whole(record: &Record) -> bool {
    let bytes = &record.bytes;
    bytes.len() == RECORD_BYTES
        && bytes[0] == b'"'
        && bytes[RECORD_BYTES - 1] == b'"'
        && bytes[1..RECORD_BYTES - 1].iter().all(|b| *b == bytes[1])
}

fn key(k: usize) -> String {
    format!("surface-{k}")
}

/// `writers` tasks write every key [`ROUNDS`] times at once; every write must succeed.
async fn write_all_at_once(storage: Arc<LocalStorage>, writers: usize) {
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let storage = storage.clone();
            tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    for k in 0..KEYS {
                        storage
                            .put_record(Store::Ledger, &key(k), record_of(writer))
                            .await
                            .unwrap_or_else(|e| panic!("writer {writer}, {}: {e}", key(k)));
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// Reads every key until `stop`, and fails on any record that is not whole.
async fn read_until(storage: Arc<LocalStorage>, stop: Arc<tokio::sync::Notify>) -> usize {
    let mut reads = 0;
    loop {
        for k in 0..KEYS {
            if let Some(record) = storage.get_record(Store::Ledger, &key(k)).await.unwrap() {
                assert!(is_whole(&record), "{} read torn", key(k));
                reads += 1;
            }
        }
        tokio::select! {
            () = stop.notified() => return reads,
            () = tokio::task::yield_now() => {}
        }
    }
}

async fn assert_store_is_clean(dir: &Path) {
    let storage = LocalStorage::open_existing(dir);
    let keys = storage.list_keys(Store::Ledger).await.unwrap();
    assert_eq!(keys, (0..KEYS).map(key).collect::<Vec<_>>());
    for k in 0..KEYS {
        let record = storage.get_record(Store::Ledger, &key(k)).await.unwrap();
        assert!(is_whole(&record.unwrap()));
    }
    let folder = dir.join("key_value_stores/mcp-tool-surface-ledger");
    let left: Vec<_> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_of_one_process_write_the_same_keys_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(LocalStorage::open(dir.path()).unwrap());
    let stop = Arc::new(tokio::sync::Notify::new());
    let reader = tokio::spawn(read_until(storage.clone(), stop.clone()));
    write_all_at_once(storage, 16).await;
    stop.notify_one();
    reader.await.unwrap();
    assert_store_is_clean(dir.path()).await;
}

/// The writer half of [`two_processes_write_the_same_keys_at_once`]: runs only when started
/// by it (as a child process of this test binary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by two_processes_write_the_same_keys_at_once as a child process"]
async fn child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let storage = Arc::new(LocalStorage::open_existing(dir));
    write_all_at_once(storage, 8).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_write_the_same_keys_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(LocalStorage::open(dir.path()).unwrap());
    let child = |_| {
        Command::new(std::env::current_exe().unwrap())
            .args(["child_writer", "--exact", "--ignored", "--quiet"])
            .env(CHILD_DIR, dir.path())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..2).map(child).collect();
    let stop = Arc::new(tokio::sync::Notify::new());
    let reader = tokio::spawn(read_until(storage.clone(), stop.clone()));
    write_all_at_once(storage, 4).await;
    for mut child in children {
        let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
            .await
            .unwrap();
        assert!(status.success(), "a writer process failed: {status}");
    }
    stop.notify_one();
    reader.await.unwrap();
    assert_store_is_clean(dir.path()).await;
}
