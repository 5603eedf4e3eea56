//! A sharded watch run locally: the shards are tasks of one process, each with its own ledger
//! in the shared store, against real rmcp servers on 127.0.0.1. The coordinator's dataset holds
//! every shard's rows and one merged summary row; a failed shard is reported by name while the
//! others' results stand, and running again re-runs only the failed shard.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/pricing.rs"]
mod pricing;
mod support;

use std::collections::BTreeSet;

use actor::{Rows, RunDir};
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve::store::LedgerReader;
use mcp_surface_ledger::shard::plan::shard_of;
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

const SHARDS: usize = 3;

fn peers(count: usize) -> Vec<RmcpPeer> {
    (0..count)
        .map(|i| {
            let tools = vec![tool(&format!("tool_{i}"), "Reads a thing.")];
            RmcpPeer::start(
                surface(&format!("peer-{i}"), "1.0.0", tools),
                RmcpMode::default(),
            )
        })
        .collect()
}

fn urls(peers: &[RmcpPeer]) -> Vec<String> {
    peers.iter().map(|p| p.url.to_string()).collect()
}

fn input(urls: &[String]) -> Value {
    json!({"servers": urls, "ledger_name": "fleet", "shards": SHARDS, "concurrency": 2})
}

/// The server URLs a shard's ledger names (none when the shard held no server and never ran).
fn ledger_servers(dir: &RunDir, shard: usize) -> BTreeSet<String> {
    let name = format!("fleet-shard-{shard}");
    if dir.ledger_bytes(&name).is_none() {
        return BTreeSet::new();
    }
    let ledger = dir.ledger(&name);
    ledger["servers"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The shards that hold at least one of `urls`.
fn shards_of(urls: &[String]) -> BTreeSet<usize> {
    urls.iter().map(|u| shard_of(&json!(u), SHARDS)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_keep_their_own_ledgers_and_the_coordinator_merges_their_rows() {
    let peers = peers(7);
    let all = urls(&peers);
    let dir = RunDir::new();

    let first = dir.run_ok(&input(&all), None).await;
    assert_eq!(first.failed_shards, 0);
    let rows = Rows::of(&dir);
    assert_eq!(
        rows.servers.len(),
        7,
        "one row per server, from every shard"
    );
    assert!(rows.servers.iter().all(|r| r["ledger_status"] == "created"));
    // Each merged server row still carries its per-tool summaries.
    for row in &rows.servers {
        let tools = row["tools"].as_array().expect("a tools array");
        assert_eq!(tools.len(), 1, "{row}");
        assert!(tools[0]["name"].as_str().unwrap().starts_with("tool_"));
    }
    let summary = &rows.summary;
    assert_eq!(summary["servers_requested"], 7);
    assert_eq!(summary["baselines_created"], 7);
    assert_eq!(summary["ledger_name"], "fleet");
    assert_eq!(summary["shards_failed"], 0);
    let outcomes = summary["shards"].as_array().unwrap();
    assert_eq!(outcomes.len(), SHARDS);
    assert_eq!(
        outcomes
            .iter()
            .map(|o| o["servers"].as_u64().unwrap())
            .sum::<u64>(),
        7
    );
    for outcome in outcomes {
        let expected = if outcome["servers"] == 0 {
            "empty"
        } else {
            "succeeded"
        };
        assert_eq!(outcome["status"], expected, "{outcome}");
    }
    assert_eq!(dir.output(), *summary, "OUTPUT is the merged summary");
    assert!(
        dir.root()
            .join("key_value_stores/default/REPORT.html")
            .is_file()
    );
    // One run_start for the coordinator and one per shard that holds servers (a dry run
    // locally).
    let busy = shards_of(&all).len() as u64;
    assert_eq!(summary["charges"]["events"]["run_start"]["count"], 1 + busy);

    // Every server is in the ledger of the shard its URL hashes to, and only there.
    for shard in 1..=SHARDS {
        let expected: BTreeSet<String> = all
            .iter()
            .filter(|u| shard_of(&json!(u), SHARDS) == shard)
            .cloned()
            .collect();
        assert_eq!(ledger_servers(&dir, shard), expected, "shard {shard}");
    }

    // A change is found by the shard that holds the server; a new server joins its shard
    // without moving the others (no new baselines but its own).
    peers[4].set_surface(surface(
        "peer-4",
        "1.0.0",
        vec![
            tool("tool_4", "Reads a thing."),
            tool("delete_all", "Deletes everything."),
        ],
    ));
    let newcomer = RmcpPeer::start(
        surface("peer-7", "1.0.0", vec![tool("tool_7", "Reads a thing.")]),
        RmcpMode::default(),
    );
    let mut grown = all.clone();
    grown.push(newcomer.url.to_string());
    dir.run_ok(&input(&grown), None).await;
    let rows = Rows::of(&dir);
    assert_eq!(rows.summary["servers_compared"], 7);
    assert_eq!(rows.summary["baselines_created"], 1);
    assert_eq!(rows.server(&grown[7])["ledger_status"], "created");
    let added: Vec<&Value> = rows
        .changes
        .iter()
        .filter(|c| c["change_class"] == "tool_added")
        .collect();
    assert_eq!(added.len(), 1, "{:?}", rows.changes);
    assert_eq!(added[0]["server_url"], all[4].as_str());
    assert_eq!(added[0]["tool_name"], "delete_all");

    // `serve` answers for the watch as a whole: every shard's servers, and each server's
    // history and surface from the shard its URL belongs to.
    let reader = LedgerReader::new(LocalStorage::open_existing(dir.root()));
    let view = reader.servers("fleet").await.unwrap();
    assert_eq!(view.ledger_name, "fleet");
    let listed: BTreeSet<String> = view.servers.iter().map(|s| s.server_url.clone()).collect();
    let expected: BTreeSet<String> = grown.iter().cloned().collect();
    assert_eq!(listed, expected);
    let changes = reader.changes("fleet", &all[4], None).await.unwrap();
    assert_eq!(changes.changes_total, 1);
    let shard = shard_of(&json!(all[4]), SHARDS);
    assert_eq!(changes.ledger_name, format!("fleet-shard-{shard}"));
    let surface = reader.surface("fleet", &all[4], None).await.unwrap();
    assert_eq!(surface.tools_total, 2);
    assert!(reader.servers("no-such-watch").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_shard_is_named_and_a_second_run_re_runs_only_that_shard() {
    let peers = peers(9);
    let all = urls(&peers);
    let dir = RunDir::new();
    dir.run_ok(&input(&all), None).await;
    assert!(shards_of(&all).len() >= 2, "the fleet spreads over shards");

    // Damage the ledger of one shard that holds servers: that shard's run fails.
    let broken = *shards_of(&all).iter().next().unwrap();
    let broken_name = format!("fleet-shard-{broken}");
    let intact = dir.ledger_bytes(&broken_name).unwrap();
    std::fs::write(dir.ledger_path(&broken_name), b"{ not a ledger").unwrap();

    let outcome = dir.run_ok(&input(&all), None).await;
    assert_eq!(outcome.failed_shards, 1);
    let rows = Rows::of(&dir);
    let broken_servers: Vec<&String> = all
        .iter()
        .filter(|u| shard_of(&json!(u), SHARDS) == broken)
        .collect();
    assert_eq!(
        rows.servers.len(),
        all.len() - broken_servers.len(),
        "the others' rows stand"
    );
    assert_eq!(rows.summary["shards_failed"], 1);
    assert_eq!(rows.summary["servers_requested"], all.len());
    let failed = &rows.summary["shards"][broken - 1];
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["ledger_name"], broken_name.as_str());
    assert!(
        failed["error"].as_str().unwrap().contains("cannot be used"),
        "{failed}"
    );

    // Repair it and run again: only the failed shard runs; the others are reused untouched.
    std::fs::write(dir.ledger_path(&broken_name), &intact).unwrap();
    // The other shards that hold servers (a shard without any never ran and has no ledger).
    let others: Vec<(usize, Vec<u8>)> = shards_of(&all)
        .into_iter()
        .filter(|s| *s != broken)
        .map(|s| (s, dir.ledger_bytes(&format!("fleet-shard-{s}")).unwrap()))
        .collect();
    let outcome = dir.run_ok(&input(&all), None).await;
    assert_eq!(outcome.failed_shards, 0);
    for (shard, before) in &others {
        let name = format!("fleet-shard-{shard}");
        assert_eq!(
            &dir.ledger_bytes(&name).unwrap(),
            before,
            "{name} was not run again"
        );
    }
    let rows = Rows::of(&dir);
    assert_eq!(
        rows.servers.len(),
        broken_servers.len(),
        "rows of the re-run shard only"
    );
    assert_eq!(
        rows.summary["servers_requested"],
        all.len(),
        "counts of the whole watch"
    );
    assert_eq!(rows.summary["servers_compared"], all.len());
    for (position, outcome) in rows.summary["shards"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let expected = if outcome["servers"] == 0 {
            "empty"
        } else if position + 1 == broken {
            "succeeded"
        } else {
            "reused"
        };
        assert_eq!(outcome["status"], expected, "{outcome}");
    }

    // The round is complete now: the next run reads every shard again.
    dir.run_ok(&input(&all), None).await;
    let rows = Rows::of(&dir);
    assert_eq!(rows.servers.len(), all.len());
    assert!(
        rows.summary["shards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["status"] == "succeeded" || o["servers"] == 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shards_budgets_never_exceed_the_coordinators_maximum() {
    let peers = peers(8);
    let all = urls(&peers);
    let dir = RunDir::new();
    let pricing = pricing::pricing_info(&[
        ("run_start", "0.5"),
        ("server_checked", "0.25"),
        ("surface_change_recorded", "0.1"),
    ]);
    let vars = [
        ("ACTOR_TEST_PAY_PER_EVENT", "1"),
        ("APIFY_ACTOR_PRICING_INFO", pricing.as_str()),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
        ("ACTOR_MAX_TOTAL_CHARGE_USD", "3.5"),
    ];
    let outcome = dir.run_with_env(&input(&all), None, &vars).await.unwrap();
    let charges = &outcome.summary.charges;
    let total = charges["total_usd"].as_f64().unwrap();
    assert!(total <= 3.5 + 1e-9, "charged {total} of 3.5: {charges}");
    // The coordinator's 0.5 leaves 3.0, shared by the shards that hold servers; each share
    // pays its run start and as many servers as it can; the rest are BUDGET_EXHAUSTED.
    let busy = shards_of(&all).len() as u64;
    assert_eq!(
        charges["events"]["run_start"]["count"],
        1 + busy,
        "empty shards do not run"
    );
    let rows = Rows::of(&dir);
    let checked = rows.summary["servers_checked"].as_u64().unwrap();
    let exhausted = rows
        .servers
        .iter()
        .filter(|r| r["reason_code"] == "BUDGET_EXHAUSTED")
        .count() as u64;
    assert_eq!(checked + exhausted, 8);
    assert_eq!(charges["events"]["server_checked"]["count"], checked);
    let mut per_shard = [0u64; SHARDS];
    for url in &all {
        per_shard[shard_of(&json!(url), SHARDS) - 1] += 1;
    }
    // Each shard that runs gets 3.0 / busy: its start (0.5), then whole servers at 0.25.
    let share_nanos = 3_000_000_000 / busy;
    let affordable = (share_nanos - 500_000_000) / 250_000_000;
    let expected_checked: u64 = per_shard.iter().map(|n| (*n).min(affordable)).sum();
    assert_eq!(
        checked, expected_checked,
        "{affordable} servers per shard at most: {per_shard:?}"
    );
}
