//! Growing a watch from one run to shards and back (`shards` 1 → 3 → 2 → 1 → 4, and 0),
//! locally (the shards are tasks of one process) against real rmcp servers on 127.0.0.1: every
//! server keeps its one ledger entry and its history wherever it moves, nobody known is
//! `created` again, a move makes no change row, a move killed at any write is finished by the
//! next run, an earlier build's `-of-<n>` ledgers are taken over, and a stale shard run cannot
//! undo a move.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/counting_mcp.rs"]
mod counting_mcp;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use actor::{Rows, RunDir};
use mcp_surface_ledger::shard::placement::{place, server_id};
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

const LEDGER: &str = "fleet";

fn tools(i: usize, extra: usize) -> Vec<Value> {
    let mut tools = vec![tool(&format!("tool_{i}"), "Reads a thing.")];
    for n in 0..extra {
        tools.push(tool(&format!("added_{i}_{n}"), "Writes a thing."));
    }
    tools
}

fn peers(count: usize) -> Vec<RmcpPeer> {
    (0..count)
        .map(|i| RmcpPeer::start(surface(&format!("peer-{i}"), "1.0.0", tools(i, 0)), RmcpMode::default()))
        .collect()
}

fn input(urls: &[String], shards: usize) -> Value {
    json!({"servers": urls, "ledger_name": LEDGER, "shards": shards, "concurrency": 4})
}

/// Every index of the watch (its own ledger and every shard ledger, of any build), by name.
pub fn watch_indexes(root: &Path) -> BTreeMap<String, Value> {
    let store = root.join("key_value_stores/mcp-tool-surface-ledger");
    let mut indexes = BTreeMap::new();
    for file in std::fs::read_dir(&store).unwrap() {
        let file = file.unwrap().file_name().to_string_lossy().into_owned();
        let Some(name) = file.strip_suffix(".json") else {
            continue;
        };
        if name == LEDGER || name.starts_with(&format!("{LEDGER}-shard-")) {
            let bytes = std::fs::read(store.join(&file)).unwrap();
            indexes.insert(name.to_string(), serde_json::from_slice(&bytes).unwrap());
        }
    }
    indexes
}

/// Each entry key of the watch with the ledgers that hold it.
fn holders(root: &Path) -> BTreeMap<String, Vec<String>> {
    let mut held: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, index) in watch_indexes(root) {
        for key in index["servers"].as_object().unwrap().keys() {
            held.entry(key.clone()).or_default().push(name.clone());
        }
    }
    held
}

/// Every server of `urls` in exactly one ledger entry of the watch; returns where each is.
#[track_caller]
fn assert_each_held_once(root: &Path, urls: &[String], when: &str) -> BTreeMap<String, String> {
    let held = holders(root);
    let mut at = BTreeMap::new();
    for url in urls {
        let ledgers = held.get(url).cloned().unwrap_or_default();
        assert_eq!(ledgers.len(), 1, "{when}: {url} is held by {ledgers:?}");
        at.insert(url.clone(), ledgers[0].clone());
    }
    assert_eq!(held.len(), urls.len(), "{when}: entries of unknown servers");
    at
}

/// Every ledger of the watch checks on its own, and each moved entry's `moved_out` item is the
/// one its source ledger keeps (unless the entry moved back there since).
#[track_caller]
fn assert_chains_intact(root: &Path, when: &str) {
    let indexes = watch_indexes(root);
    for (name, index) in &indexes {
        assert_eq!(
            mcp_surface_ledger::chain::check_index(index),
            Ok(()),
            "{when}: {name}"
        );
        assert_ne!(index["chain"]["genesis"]["kind"], "rebased", "{when}: {name}");
        assert_eq!(
            mcp_surface_ledger::cli::verify::moves::check_moves(name, index, |source| indexes
                .get(source)
                .cloned()),
            Ok(()),
            "{when}: {name}"
        );
    }
}

/// The history of `url` wherever its entry is now.
fn history_of(root: &Path, url: &str) -> Vec<Value> {
    for index in watch_indexes(root).values() {
        if let Some(entry) = index["servers"].get(url) {
            return entry["history"].as_array().cloned().unwrap_or_default();
        }
    }
    panic!("{url} is in no ledger");
}

/// The ledger a server's entry is in after a run with `shards` (plain: the watch's own).
fn ledger_for(urls: &[String], url: &str, shards: usize) -> String {
    if shards == 1 {
        return LEDGER.to_string();
    }
    let entries: Vec<Value> = urls.iter().map(|u| json!(u)).collect();
    let placement = place(&entries, shards);
    format!("{LEDGER}-shard-{}", placement.shards[&server_id(&json!(url))])
}

/// Notes the (ledger, head) pairs a summary row witnesses.
fn witness(witnessed: &mut BTreeSet<(String, String)>, summary: &Value) {
    let items = summary["shards"].as_array().cloned().unwrap_or_default();
    for item in items.iter().chain([summary]) {
        if let (Some(name), Some(head)) = (item["ledger_name"].as_str(), item["ledger_chain_head"].as_str()) {
            witnessed.insert((name.to_string(), head.to_string()));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_to_three_to_two_to_one_to_four_keeps_every_entry_and_its_history() {
    let peers = peers(8);
    let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
    let dir = RunDir::new();
    dir.run_ok(&input(&urls, 1), None).await;
    let rows = Rows::of(&dir);
    assert_eq!(rows.summary["baselines_created"], 8);
    let mut at = assert_each_held_once(dir.root(), &urls, "first run");
    let mut witnessed = BTreeSet::new();
    witness(&mut witnessed, &rows.summary);
    assert!(at.values().all(|l| l == LEDGER));

    // At each step, a server that moves changes (a tool added) just before the run.
    let mut changed: BTreeMap<String, usize> = BTreeMap::new();
    for (step, shards) in [3usize, 2, 1, 4, 0, 1].into_iter().enumerate() {
        let when = format!("step {step}: shards {shards}");
        let next = |url: &String| match shards {
            0 => format!("{LEDGER}-shard-1"),
            n => ledger_for(&urls, url, n),
        };
        let moving: Vec<usize> = (0..urls.len()).filter(|i| at[&urls[*i]] != next(&urls[*i])).collect();
        assert!(!moving.is_empty(), "{when}: a server moves");
        let i = moving[step % moving.len()];
        let extra = changed.get(&urls[i]).copied().unwrap_or(0) + 1;
        peers[i].set_surface(surface(&format!("peer-{i}"), "1.0.0", tools(i, extra)));
        changed.insert(urls[i].clone(), extra);

        let outcome = dir.run_ok(&input(&urls, shards), None).await;
        assert_eq!(outcome.failed_shards, 0, "{when}");
        let rows = Rows::of(&dir);
        assert_eq!(rows.servers.len(), 8, "{when}");
        assert_eq!(rows.summary["baselines_created"], 0, "{when}: nobody is created again");
        assert!(
            rows.servers.iter().all(|r| r["ledger_status"] != "created"),
            "{when}"
        );
        assert_eq!(rows.summary["servers_compared"], 8, "{when}");
        // The one change made, and nothing for the moves.
        assert_eq!(rows.changes.len(), 1, "{when}: {:?}", rows.changes);
        assert_eq!(rows.changes[0]["server_url"], urls[i].as_str(), "{when}");
        assert_eq!(rows.changes[0]["change_class"], "tool_added", "{when}");

        at = assert_each_held_once(dir.root(), &urls, &when);
        for url in &urls {
            assert_eq!(at[url], next(url), "{when}: {url}");
        }
        // Every change recorded so far is still in its server's history, wherever it is.
        for (url, count) in &changed {
            let history = history_of(dir.root(), url);
            let added = history.iter().filter(|h| h["change_class"] == "tool_added").count();
            assert_eq!(added, *count, "{when}: {url} {history:?}");
        }
        assert_chains_intact(dir.root(), &when);
        // Every ledger's last write is witnessed by a summary row (its own run's, or a
        // coordinator's `shards[]` item, or a retired ledger's item).
        witness(&mut witnessed, &rows.summary);
        for (name, index) in watch_indexes(dir.root()) {
            let head = index["chain"]["head"].as_str().unwrap().to_string();
            assert!(witnessed.contains(&(name.clone(), head)), "{when}: the last write of {name} is not witnessed");
        }
    }
}
