//! Sharded watches of registry size, run locally (shards are tasks of one process): the most
//! skewed hash split still finishes, `shards: 0` chooses the shards, and growing the watch
//! moves ledger entries (crash-safely) instead of starting new baselines.
//!
//! The fleets are cheap: one loopback server answers every URL (one path per server), and
//! many paths serve the same surface, as real fleets do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/counting_mcp.rs"]
mod counting_mcp;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use actor::{Rows, RunDir};
use counting_mcp::{CountingMcp, surface, tool};
use mcp_surface_ledger::shard::moves::CRASH_AT_ENV;
use mcp_surface_ledger::shard::placement::{place, preferred_shard, server_id};
use serde_json::{Value, json};

/// Surfaces the fleet's servers share: server `i` serves surface `i % SURFACES`.
const SURFACES: usize = 7;

fn shared_surface(i: usize) -> Value {
    let kind = i % SURFACES;
    surface(
        &format!("product-{kind}"),
        "1.0.0",
        vec![tool(&format!("tool_{kind}"), "Reads a thing")],
    )
}

/// Serves `count` servers at `/s<i>` (from `first` on) with shared surfaces; their URLs.
fn serve_fleet(mcp: &CountingMcp, first: usize, count: usize) -> Vec<String> {
    (first..first + count)
        .map(|i| {
            let path = format!("/s{i}");
            mcp.serve(&path, shared_surface(i));
            mcp.url(&path)
        })
        .collect()
}

/// Every server row once, read, and as many as the fleet has.
fn assert_every_server_read_once(rows: &Rows, urls: &[String]) {
    let read: BTreeMap<&str, usize> = rows.servers.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r["server_url"].as_str().unwrap()).or_default() += 1;
        m
    });
    assert_eq!(read.len(), urls.len(), "one row per server");
    assert!(read.values().all(|n| *n == 1), "a server read twice");
    let failed: Vec<&Value> = rows.servers.iter().filter(|r| r["ok"] != true).collect();
    assert!(
        failed.is_empty(),
        "{} servers not read: {:?}",
        failed.len(),
        failed.first()
    );
    assert_eq!(rows.summary["servers_checked"], urls.len());
    assert_eq!(
        rows.summary["shards_failed"], 0,
        "{}",
        rows.summary["shards"]
    );
}

/// Every shard ledger index of `fleet`, by name.
fn shard_indexes(root: &Path) -> BTreeMap<String, Value> {
    let store = root.join("key_value_stores/mcp-tool-surface-ledger");
    let mut indexes = BTreeMap::new();
    for file in std::fs::read_dir(&store).unwrap() {
        let name = file.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(ledger) = name
            .strip_prefix("fleet-shard-")
            .and_then(|n| n.strip_suffix(".json"))
        {
            let bytes = std::fs::read(store.join(&name)).unwrap();
            indexes.insert(ledger.to_string(), serde_json::from_slice(&bytes).unwrap());
        }
    }
    indexes
}

/// Every shard ledger's chain checks, none was started again, entries moved, and each moved
/// entry's `moved_out` item is the one its source ledger keeps.
fn assert_chains_intact(root: &Path, when: &str) {
    let indexes = shard_indexes(root);
    let mut departed = BTreeMap::new();
    for (name, index) in &indexes {
        assert_eq!(
            mcp_surface_ledger::chain::check_index(index),
            Ok(()),
            "{when}: shard {name}"
        );
        assert_ne!(index["chain"]["genesis"]["kind"], "rebased", "{when}");
        for (key, out) in index["chain"]["moved_out"]
            .as_object()
            .into_iter()
            .flatten()
        {
            departed.insert(key.clone(), out.clone());
        }
    }
    assert!(!departed.is_empty(), "{when}: entries moved");
    for index in indexes.values() {
        for (key, entry) in index["servers"].as_object().unwrap() {
            if let Some(moves) = entry["moves"].as_array() {
                assert_eq!(moves[moves.len() - 2], departed[key], "{when}: {key}");
                assert_eq!(moves[moves.len() - 1]["event"], "moved_in");
            }
        }
    }
}

/// The keys of every entry in the shard ledgers of `fleet`, with how many ledgers hold each.
fn entries_of_shards(root: &Path) -> BTreeMap<String, usize> {
    let store = root.join("key_value_stores/mcp-tool-surface-ledger");
    let mut held = BTreeMap::new();
    for file in std::fs::read_dir(store).unwrap() {
        let name = file.unwrap().file_name().to_string_lossy().into_owned();
        if !name.starts_with("fleet-shard-") || !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(
            root.join("key_value_stores/mcp-tool-surface-ledger")
                .join(&name),
        )
        .unwrap();
        let ledger: Value = serde_json::from_slice(&bytes).unwrap();
        for key in ledger["servers"].as_object().unwrap().keys() {
            *held.entry(key.clone()).or_default() += 1;
        }
    }
    held
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_most_skewed_split_of_2000_servers_in_2_shards_finishes() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    // Paths whose URL ranks shard 1 first: a plain hash split would put all 2000 in shard 1.
    let urls: Vec<String> = (0..)
        .map(|i| (i, mcp.url(&format!("/s{i}"))))
        .filter(|(_, url)| preferred_shard(&server_id(&json!(url)), 2) == 1)
        .take(2000)
        .map(|(i, url)| {
            mcp.serve(&format!("/s{i}"), shared_surface(i));
            url
        })
        .collect();
    let dir = RunDir::new();
    let input = json!({"servers": urls, "ledger_name": "fleet", "shards": 2, "concurrency": 20});
    let outcome = dir.run_ok(&input, None).await;
    assert_eq!(outcome.failed_shards, 0);
    let rows = Rows::of(&dir);
    assert_every_server_read_once(&rows, &urls);
    let sizes: Vec<u64> = rows.summary["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["servers"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, vec![1000, 1000]);
    let held = entries_of_shards(dir.root());
    assert_eq!(held.len(), 2000);
    assert!(held.values().all(|n| *n == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_shards_hold_20000_servers() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let urls = serve_fleet(&mcp, 0, 20_000);
    let dir = RunDir::new();
    let input = json!({"servers": urls, "ledger_name": "fleet", "shards": 0, "concurrency": 20});
    let outcome = dir.run_ok(&input, None).await;
    assert_eq!(outcome.summary.shards_chosen, Some(20));
    let rows = Rows::of(&dir);
    assert_eq!(rows.summary["shards_chosen"], 20);
    assert_every_server_read_once(&rows, &urls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn growing_from_1000_to_3000_servers_keeps_every_entry_and_its_history() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let first = serve_fleet(&mcp, 0, 1000);
    let dir = RunDir::new();
    let input = |urls: &[String]| json!({"servers": urls, "ledger_name": "fleet", "shards": 0, "concurrency": 20});
    let outcome = dir.run_ok(&input(&first), None).await;
    assert_eq!(outcome.summary.shards_chosen, Some(1));

    // A server that will move when the watch grows to 3 shards changes its surface.
    let grown: Vec<String> = first
        .iter()
        .cloned()
        .chain(serve_fleet(&mcp, 1000, 2000))
        .collect();
    let entries: Vec<Value> = grown.iter().map(|u| json!(u)).collect();
    let after = place(&entries, 3);
    let (moved_index, moved) = first
        .iter()
        .enumerate()
        .find(|(_, u)| after.shard_of(&json!(u)) != Some(1))
        .unwrap();
    mcp.serve(
        &format!("/s{moved_index}"),
        surface(
            "changed",
            "2.0.0",
            vec![tool("delete_all", "Deletes everything")],
        ),
    );
    dir.run_ok(&input(&first), None).await;
    assert!(!Rows::of(&dir).changes_of(moved).is_empty());

    let outcome = dir.run_ok(&input(&grown), None).await;
    assert_eq!(outcome.summary.shards_chosen, Some(3));
    let rows = Rows::of(&dir);
    assert_every_server_read_once(&rows, &grown);
    assert_eq!(
        rows.summary["baselines_created"], 2000,
        "only the new servers"
    );
    for url in &first {
        assert_eq!(rows.server(url)["ledger_status"], "compared", "{url}");
    }
    let shard = after.shard_of(&json!(moved)).unwrap();
    let ledger = dir.ledger(&format!("fleet-shard-{shard}"));
    let history = ledger["servers"][moved.as_str()]["history"]
        .as_array()
        .unwrap();
    assert!(!history.is_empty(), "the change before the growth is kept");
    let held = entries_of_shards(dir.root());
    assert_eq!(held.len(), 3000);
    assert!(held.values().all(|n| *n == 1), "an entry held twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_killed_at_any_write_is_finished_by_the_next_run() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let first = serve_fleet(&mcp, 0, 300);
    let grown: Vec<String> = first
        .iter()
        .cloned()
        .chain(serve_fleet(&mcp, 300, 300))
        .collect();
    let input = |urls: &[String], shards: usize| json!({"servers": urls, "ledger_name": "fleet", "shards": shards, "concurrency": 20});
    let before = RunDir::new();
    before.run_ok(&input(&first, 2), None).await;
    let original: BTreeSet<String> = entries_of_shards(before.root()).into_keys().collect();
    assert_eq!(original.len(), 300);

    // The move from 2 to 3 shards writes: the intent, shard 3, shards 1 and 2, the round.
    for crash_at in 1..=5 {
        let dir = RunDir::new();
        copy_dir(before.root(), dir.root());
        let mut command = dir.command(&input(&grown, 3), &["--allow-private-targets"]);
        command.env(CRASH_AT_ENV, crash_at.to_string());
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(!output.status.success(), "write {crash_at}: not killed");
        // Killed mid-move: nothing is lost (an entry may be in two ledgers until finished).
        let held = entries_of_shards(dir.root());
        assert!(
            original.iter().all(|k| held.contains_key(k)),
            "write {crash_at}: lost"
        );

        let outcome = dir.run_ok(&input(&grown, 3), None).await;
        assert_eq!(outcome.failed_shards, 0);
        let rows = Rows::of(&dir);
        assert_every_server_read_once(&rows, &grown);
        assert_eq!(rows.summary["baselines_created"], 300, "write {crash_at}");
        let held = entries_of_shards(dir.root());
        assert_eq!(held.len(), 600, "write {crash_at}");
        assert!(
            held.values().all(|n| *n == 1),
            "write {crash_at}: held twice"
        );
        assert_chains_intact(dir.root(), &format!("write {crash_at}"));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Ten in-process shards whose servers share surfaces write the same surface records at once:
/// three runs in a row all succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_shards_sharing_surfaces_succeed_run_after_run() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let urls = serve_fleet(&mcp, 0, 100);
    let dir = RunDir::new();
    let input = json!({"servers": urls, "ledger_name": "fleet", "shards": 10, "concurrency": 10});
    for run in 0..3 {
        let outcome = dir.run_ok(&input, None).await;
        assert_eq!(outcome.failed_shards, 0, "run {run}");
        assert_every_server_read_once(&Rows::of(&dir), &urls);
    }
}
