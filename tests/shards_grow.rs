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
use std::time::Duration;

use actor::{Rows, RunDir};
use mcp_surface_ledger::shard::moves::CRASH_AT_ENV;
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

/// `count` peers of which every one of 3 shards takes at least one, with their URLs (the ports,
/// and so the placement, differ from run to run; a shard left empty would not exercise moves).
fn peers_on_three_shards(count: usize) -> (Vec<RmcpPeer>, Vec<String>) {
    loop {
        let peers = peers(count);
        let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
        let used: BTreeSet<String> = urls.iter().map(|u| ledger_for(&urls, u, 3)).collect();
        if used.len() == 3 {
            return (peers, urls);
        }
    }
}

fn peers(count: usize) -> Vec<RmcpPeer> {
    (0..count)
        .map(|i| {
            RmcpPeer::start(
                surface(&format!("peer-{i}"), "1.0.0", tools(i, 0)),
                RmcpMode::default(),
            )
        })
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
        assert_ne!(
            index["chain"]["genesis"]["kind"], "rebased",
            "{when}: {name}: {}",
            index["chain"]["genesis"]
        );
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
    format!(
        "{LEDGER}-shard-{}",
        placement.shards[&server_id(&json!(url))]
    )
}

/// Notes the (ledger, head) pairs a summary row witnesses.
fn witness(witnessed: &mut BTreeSet<(String, String)>, summary: &Value) {
    let items = summary["shards"].as_array().cloned().unwrap_or_default();
    for item in items.iter().chain([summary]) {
        if let (Some(name), Some(head)) = (
            item["ledger_name"].as_str(),
            item["ledger_chain_head"].as_str(),
        ) {
            witnessed.insert((name.to_string(), head.to_string()));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_to_three_to_two_to_one_to_four_keeps_every_entry_and_its_history() {
    let (peers, urls) = peers_on_three_shards(8);
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
        let moving: Vec<usize> = (0..urls.len())
            .filter(|i| at[&urls[*i]] != next(&urls[*i]))
            .collect();
        assert!(!moving.is_empty(), "{when}: a server moves");
        let i = moving[step % moving.len()];
        let extra = changed.get(&urls[i]).copied().unwrap_or(0) + 1;
        peers[i].set_surface(surface(&format!("peer-{i}"), "1.0.0", tools(i, extra)));
        changed.insert(urls[i].clone(), extra);

        let outcome = dir.run_ok(&input(&urls, shards), None).await;
        assert_eq!(outcome.failed_shards, 0, "{when}");
        let rows = Rows::of(&dir);
        assert_eq!(rows.servers.len(), 8, "{when}");
        assert_eq!(
            rows.summary["baselines_created"], 0,
            "{when}: nobody is created again"
        );
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
            let added = history
                .iter()
                .filter(|h| h["change_class"] == "tool_added")
                .count();
            assert_eq!(added, *count, "{when}: {url} {history:?}");
        }
        assert_chains_intact(dir.root(), &when);
        // Every ledger's last write is witnessed by a summary row (its own run's, or a
        // coordinator's `shards[]` item, or a retired ledger's item).
        witness(&mut witnessed, &rows.summary);
        for (name, index) in watch_indexes(dir.root()) {
            let head = index["chain"]["head"].as_str().unwrap().to_string();
            assert!(
                witnessed.contains(&(name.clone(), head)),
                "{when}: the last write of {name} is not witnessed"
            );
        }
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

/// The move from one run to 3 shards writes: the intent, shards 1, 2 and 3, the watch's own
/// ledger, the round. Killed after each, the next run (with 3 shards, or back to 1) leaves
/// every server in exactly one entry, with its history, and creates no baseline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_from_one_run_to_three_shards_killed_at_any_write_is_finished_by_the_next_run() {
    let (peers, urls) = peers_on_three_shards(8);
    let before = RunDir::new();
    before.run_ok(&input(&urls, 1), None).await;
    peers[0].set_surface(surface("peer-0", "1.0.0", tools(0, 1)));
    before.run_ok(&input(&urls, 1), None).await;
    assert_eq!(history_of(before.root(), &urls[0]).len(), 1);
    let shards_used: BTreeSet<String> = urls.iter().map(|u| ledger_for(&urls, u, 3)).collect();
    assert_eq!(shards_used.len(), 3, "every shard takes servers");

    for crash_at in 1..=6 {
        let when = format!("killed after write {crash_at}");
        let dir = RunDir::new();
        copy_dir(before.root(), dir.root());
        let mut command = dir.command(&input(&urls, 3), &["--allow-private-targets"]);
        command.env(CRASH_AT_ENV, crash_at.to_string());
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(!output.status.success(), "{when}: not killed");
        // Nothing lost (an entry may be in two ledgers until the move is finished).
        let held = holders(dir.root());
        assert!(
            urls.iter().all(|u| held.contains_key(u)),
            "{when}: lost {held:?}"
        );

        // Finished by the next run: with 3 shards, or (every other time) back to one run.
        let shards = if crash_at % 2 == 0 { 1 } else { 3 };
        let outcome = dir.run_ok(&input(&urls, shards), None).await;
        assert_eq!(outcome.failed_shards, 0, "{when}");
        let rows = Rows::of(&dir);
        assert_eq!(rows.summary["baselines_created"], 0, "{when}");
        assert_eq!(rows.summary["servers_compared"], 8, "{when}");
        assert!(rows.changes.is_empty(), "{when}: {:?}", rows.changes);
        let at = assert_each_held_once(dir.root(), &urls, &when);
        for url in &urls {
            assert_eq!(at[url], ledger_for(&urls, url, shards), "{when}");
        }
        assert_eq!(history_of(dir.root(), &urls[0]).len(), 1, "{when}");
        assert_chains_intact(dir.root(), &when);
    }
}

/// A watch of an earlier build: shard ledgers `fleet-shard-<k>-of-3` and a round record without
/// a placement. The first run of this build moves their entries (history included) into
/// `fleet-shard-<k>`: nobody is created again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_builds_of_n_shard_ledgers_are_taken_over_once() {
    let peers = peers(6);
    let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
    let dir = RunDir::new();
    let old_shard = |url: &String| format!("{}-of-3", ledger_for(&urls, url, 3));
    let mut by_ledger: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for url in &urls {
        by_ledger
            .entry(old_shard(url))
            .or_default()
            .push(url.clone());
    }
    // The earlier build ran each shard as a run of its own ledger; one server changed once.
    for round in 0..2 {
        if round == 1 {
            peers[0].set_surface(surface("peer-0", "1.0.0", tools(0, 1)));
        }
        for (ledger, servers) in &by_ledger {
            dir.run_ok(&json!({"servers": servers, "ledger_name": ledger}), None)
                .await;
        }
    }
    let store = dir.root().join("key_value_stores/mcp-tool-surface-ledger");
    std::fs::write(
        store.join("shards.fleet.json"),
        json!({"format": 1, "of": 3, "started_at": "2026-06-01T00:00:00Z", "shards": []})
            .to_string(),
    )
    .unwrap();
    assert_eq!(history_of(dir.root(), &urls[0]).len(), 1);

    for run in 0..2 {
        let when = format!("run {run}");
        let outcome = dir.run_ok(&input(&urls, 3), None).await;
        assert_eq!(outcome.failed_shards, 0);
        let rows = Rows::of(&dir);
        assert_eq!(rows.summary["baselines_created"], 0, "{when}");
        assert_eq!(rows.summary["servers_compared"], 6, "{when}");
        assert!(rows.changes.is_empty(), "{when}");
        let at = assert_each_held_once(dir.root(), &urls, &when);
        for url in &urls {
            assert_eq!(at[url], ledger_for(&urls, url, 3), "{when}");
        }
        assert_eq!(history_of(dir.root(), &urls[0]).len(), 1, "{when}");
        assert_chains_intact(dir.root(), &when);
    }
    for ledger in by_ledger.keys() {
        let index = dir.ledger(ledger);
        assert!(
            index["servers"].as_object().unwrap().is_empty(),
            "{ledger} emptied"
        );
    }
}

fn segment(url: &str) -> String {
    url::form_urlencoded::byte_serialize(url.as_bytes()).collect()
}

/// `serve` finds a server whose entry sits in a shard other than the one its URL ranks first
/// (placed in its next choice), on every route that names a server and in the MCP tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_finds_a_server_placed_off_its_preferred_shard_on_every_route() {
    use mcp_surface_ledger::platform::LocalStorage;
    use mcp_surface_ledger::serve::{self, backend::Backend, hosts::HostPolicy};
    use mcp_surface_ledger::shard::{moves, plan::shard_of, round::Round};
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;

    let peers = peers(6);
    let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
    let dir = RunDir::new();
    dir.run_ok(&input(&urls, 3), None).await;
    peers[0].set_surface(surface("peer-0", "1.0.0", tools(0, 1)));
    dir.run_ok(&input(&urls, 3), None).await;
    let url = urls[0].clone();
    let preferred = shard_of(&json!(url), 3);
    let elsewhere = if preferred == 1 { 2 } else { 1 };
    // Where a full shard would have put it: its entry moves there like any move.
    let storage = LocalStorage::open(dir.root()).unwrap();
    let round = Round::load(&storage, LEDGER).await.unwrap();
    let mut target = round.placement.clone();
    target.shards.insert(server_id(&json!(url)), elsewhere);
    moves::settle(&storage, LEDGER, round, target, None)
        .await
        .unwrap();
    let held = holders(dir.root());
    assert_eq!(held[&url], [format!("{LEDGER}-shard-{elsewhere}")]);

    let app = serve::app(
        Backend::Local(LocalStorage::open_existing(dir.root())),
        HostPolicy::local(),
    );
    let addr = support::background::serve(app);
    let base = format!("http://{addr}");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = |path: String| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let response = client.get(format!("{base}{path}")).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let server = segment(&url);
    let (status, body) = get(format!("/ledgers/{LEDGER}/servers/{server}/changes")).await;
    assert_eq!(status, 200, "{body}");
    let changes: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(changes["changes_total"], 1);
    assert_eq!(
        changes["ledger_name"],
        format!("{LEDGER}-shard-{elsewhere}")
    );
    let (status, body) = get(format!("/ledgers/{LEDGER}/servers/{server}/surface")).await;
    assert_eq!(status, 200, "{body}");
    let stored: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(stored["tools_total"], 2);
    let (status, body) = get(format!("/ledgers/{LEDGER}/servers")).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(listed["servers_total"], 6);
    let (status, body) = get(format!("/server?ledger={LEDGER}&url={server}")).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("added_0_0"),
        "the server page shows its change"
    );
    for path in [
        format!("/changes?ledger={LEDGER}"),
        format!("/changes.atom?ledger={LEDGER}"),
    ] {
        let (status, body) = get(path.clone()).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(body.contains("added_0_0"), "{path}");
    }

    let transport = StreamableHttpClientTransport::from_uri(format!("{base}/mcp"));
    let mcp = ().serve(transport).await.expect("connect with rmcp");
    for name in ["get_changes", "get_surface"] {
        let arguments = json!({"ledger_name": LEDGER, "server_url": url});
        let params =
            CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone());
        let result = mcp.call_tool(params).await.expect("tools/call");
        assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
        let structured = result.structured_content.unwrap();
        assert_eq!(
            structured["ledger_name"],
            format!("{LEDGER}-shard-{elsewhere}"),
            "{name}"
        );
    }
    let _ = mcp.cancel().await;
}

/// A shard run left over from a killed coordinator (here: a run of `fleet-shard-3` as the
/// platform starts it) whose ledger a newer coordinator moves entries out of while it reads its
/// servers cannot write its ledger: the move stands, every server is in one entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_shard_run_cannot_undo_a_newer_coordinators_move() {
    use counting_mcp::CountingMcp;

    let mcp = CountingMcp::start("127.0.0.1").await;
    let placed = |path: &String| ledger_for(&[mcp.url(path)], &mcp.url(path), 3);
    let third: Vec<String> = (0..)
        .map(|i| format!("/s{i}"))
        .filter(|p| placed(p) == format!("{LEDGER}-shard-3"))
        .take(2)
        .collect();
    let others: Vec<String> = (0..)
        .map(|i| format!("/o{i}"))
        .filter(|p| placed(p) != format!("{LEDGER}-shard-3"))
        .take(2)
        .collect();
    for (i, path) in third.iter().chain(&others).enumerate() {
        let tools = vec![counting_mcp::tool(&format!("tool_{i}"), "Reads a thing")];
        mcp.serve(path, counting_mcp::surface(&format!("s{i}"), "1", tools));
    }
    let urls: Vec<String> = third.iter().chain(&others).map(|p| mcp.url(p)).collect();
    let dir = RunDir::new();
    dir.run_ok(&input(&urls, 3), None).await;
    let stale_servers: Vec<String> = third.iter().map(|p| mcp.url(p)).collect();
    assert_eq!(
        holders(dir.root())[&stale_servers[0]],
        [format!("{LEDGER}-shard-3")]
    );

    // The stale run reads its ledger, then waits on a slow server; meanwhile the newer
    // coordinator (2 shards) moves shard 3's entries out.
    let slow = vec![counting_mcp::tool("tool_0", "Reads a thing")];
    mcp.serve_after(
        &third[0],
        counting_mcp::surface("s0", "1", slow),
        Duration::from_secs(3),
    );
    let stale_dir = RunDir::new();
    let stores = stale_dir.root().join("key_value_stores");
    std::fs::create_dir_all(&stores).unwrap();
    std::os::unix::fs::symlink(
        dir.root().join("key_value_stores/mcp-tool-surface-ledger"),
        stores.join("mcp-tool-surface-ledger"),
    )
    .unwrap();
    let stale_input = json!({"servers": stale_servers, "ledger_name": format!("{LEDGER}-shard-3")});
    let (stale, newer) = tokio::join!(stale_dir.run(&stale_input, None), async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        dir.run(&input(&urls, 2), None).await
    });
    let newer = newer.expect("the newer coordinator finishes");
    assert_eq!(newer.failed_shards, 0);
    let error = stale.expect_err("the stale run is fenced").to_string();
    assert!(error.contains("not written"), "{error}");
    let at = assert_each_held_once(dir.root(), &urls, "after the stale run");
    for url in &urls {
        assert_eq!(at[url], ledger_for(&urls, url, 2), "{url}");
    }
    assert_chains_intact(dir.root(), "after the stale run");
}

/// A run that resumes an interrupted round reuses the shards that succeeded: their changes are
/// still in its REPORT and REPORT.sarif.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_round_reports_the_changes_of_the_shards_it_reuses() {
    let peers = peers(6);
    let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
    let with_sarif = |shards: usize| {
        let mut input = input(&urls, shards);
        input["report_sarif"] = json!(true);
        input
    };
    let dir = RunDir::new();
    dir.run_ok(&with_sarif(3), None).await;
    let changed = ledger_for(&urls, &urls[0], 3);
    let broken = urls
        .iter()
        .map(|u| ledger_for(&urls, u, 3))
        .find(|l| *l != changed)
        .expect("another shard with servers");
    peers[0].set_surface(surface("peer-0", "1.0.0", tools(0, 1)));
    let intact = dir.ledger_bytes(&broken).unwrap();
    std::fs::write(dir.ledger_path(&broken), b"{ not a ledger").unwrap();
    let outcome = dir.run_ok(&with_sarif(3), None).await;
    assert_eq!(outcome.failed_shards, 1);
    assert_eq!(Rows::of(&dir).changes.len(), 1, "the change is found");

    std::fs::write(dir.ledger_path(&broken), &intact).unwrap();
    let outcome = dir.run_ok(&with_sarif(3), None).await;
    assert_eq!(outcome.failed_shards, 0);
    let rows = Rows::of(&dir);
    let reused = rows.summary["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["ledger_name"] == changed.as_str())
        .unwrap()
        .clone();
    assert_eq!(reused["status"], "reused", "{reused}");
    assert!(rows.changes.is_empty(), "its rows are not written again");
    let defaults = dir.root().join("key_value_stores/default");
    let sarif = std::fs::read_to_string(defaults.join("REPORT.sarif.json")).unwrap();
    assert!(
        sarif.contains("added_0_0"),
        "REPORT.sarif has the reused shard's change"
    );
    let report = std::fs::read_to_string(defaults.join("REPORT.html")).unwrap();
    assert!(
        report.contains("added_0_0"),
        "REPORT has the reused shard's change"
    );

    // The round is complete now: the record no longer keeps change rows.
    let record = dir.ledger(&format!("shards.{LEDGER}"));
    assert!(
        record["shards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("changes").is_none()),
        "{record}"
    );
}

/// Runs `verify` on ledger `ledger` of `dir`, with the summary rows `heads` as witnesses when
/// given; returns the exit code and the verdict.
fn verify(dir: &RunDir, ledger: &str, heads: Option<&[Value]>) -> (Option<i32>, Value) {
    let mut command = std::process::Command::new(actor::BINARY);
    command
        .args(["verify", "--storage-dir"])
        .arg(dir.root())
        .args(["--ledger", ledger])
        .env_remove("APIFY_IS_AT_HOME")
        .env_remove("APIFY_TOKEN");
    let file = dir.root().join(format!("heads-{ledger}.json"));
    if let Some(rows) = heads {
        std::fs::write(&file, serde_json::to_vec(rows).unwrap()).unwrap();
        command.arg("--heads").arg(&file);
    }
    let output = command.output().unwrap();
    let verdict = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (output.status.code(), verdict)
}

/// 3 → 2 shards removes shard 3: its last write (every entry moved out) is witnessed by the
/// coordinator's row, and the ledgers its entries moved into are checked against it. Putting
/// back shard 3's older ledger (which still holds those entries) is found both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_older_ledger_of_a_removed_shard_is_a_break() {
    let peers = peers(8);
    let urls: Vec<String> = peers.iter().map(|p| p.url.to_string()).collect();
    let dir = RunDir::new();
    dir.run_ok(&input(&urls, 3), None).await;
    let mut summaries = vec![Rows::of(&dir).summary];
    let removed = format!("{LEDGER}-shard-3");
    let older = dir.ledger_bytes(&removed).expect("shard 3 holds servers");
    let moved: Vec<&String> = urls
        .iter()
        .filter(|u| ledger_for(&urls, u, 3) == removed)
        .collect();
    dir.run_ok(&input(&urls, 2), None).await;
    summaries.push(Rows::of(&dir).summary);
    let retired = summaries[1]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["ledger_name"] == removed.as_str())
        .expect("an item for the removed shard")
        .clone();
    assert_eq!(retired["status"], "retired", "{retired}");
    assert_eq!(
        retired["ledger_chain_head"],
        dir.ledger(&removed)["chain"]["head"]
    );
    let destination = ledger_for(&urls, moved[0], 2);

    // As the move left them, every ledger verifies, against the coordinator rows too.
    for ledger in [removed.as_str(), destination.as_str()] {
        let (code, verdict) = verify(&dir, ledger, Some(&summaries));
        assert_eq!(code, Some(0), "{ledger}: {verdict}");
    }

    std::fs::write(dir.ledger_path(&removed), &older).unwrap();
    // The restored ledger verifies on its own, but not against the witnessed heads...
    let (code, verdict) = verify(&dir, &removed, None);
    assert_eq!(code, Some(0), "{verdict}");
    let (code, verdict) = verify(&dir, &removed, Some(&summaries));
    assert_eq!(code, Some(1), "{verdict}");
    assert!(
        verdict["break"]["problem"]
            .as_str()
            .unwrap()
            .contains("rolled back"),
        "{verdict}"
    );
    // ...and the ledger its entries moved into finds that the source does not record the move.
    let (code, verdict) = verify(&dir, &destination, None);
    assert_eq!(code, Some(1), "{verdict}");
    let found = &verdict["break"];
    assert!(
        found["location"].as_str().unwrap().contains("moved_in"),
        "{verdict}"
    );
    assert!(
        found["problem"]
            .as_str()
            .unwrap()
            .contains("still holds this entry"),
        "{verdict}"
    );
}
