//! A sharded watch on the platform, end to end against the recording fake of the Apify API:
//! the coordinator (the binary with `APIFY_IS_AT_HOME=1`) starts one run of the Actor per shard
//! through `POST /v2/acts/{id}/runs`; the fake runs each as a real child process of the same
//! binary against itself; the coordinator waits for them, reads their datasets and writes the
//! merged rows. The MCP servers sit on a public address inside a network namespace the test
//! creates (see `support/netns.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/netns.rs"]
mod netns;
mod platform_fake;
#[path = "support/pricing.rs"]
mod pricing;
#[path = "support/sample_rows.rs"]
mod sample_rows;

use std::collections::BTreeSet;
use std::process::Output;

use axum::http::Method;
use counting_mcp::{CountingMcp, surface, tool};
use mcp_surface_ledger::shard::plan::shard_of;
use netns::{PUBLIC_IP, in_namespace};
use platform_fake::{DATASET, DEFAULT_STORE, FakeApify, RUN_ID, run_at_home};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const ACTOR: &str = "tester~mcp-surface-ledger";
const SHARDS: usize = 3;
const SERVERS: usize = 7;

fn pricing_env() -> Vec<(String, String)> {
    vec![
        (
            "APIFY_ACTOR_PRICING_INFO".into(),
            pricing::SEED_PRICING_INFO.clone(),
        ),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS".into(), "{}".into()),
    ]
}

/// Runs the coordinator to the end, in an empty working directory, with only `vars`.
async fn run_coordinator(fake: &FakeApify) -> Output {
    run_coordinator_with(fake, Vec::new()).await
}

/// Runs the coordinator with `extra` variables added.
async fn run_coordinator_with(fake: &FakeApify, extra: Vec<(String, String)>) -> Output {
    let mut vars = fake.env_vars();
    vars.extend(extra);
    vars.extend(pricing_env());
    vars.push(("ACTOR_ID".into(), ACTOR.into()));
    vars.push(("ACTOR_BUILD_NUMBER".into(), "0.1.7".into()));
    vars.push(("ACTOR_MAX_TOTAL_CHARGE_USD".into(), "1".into()));
    run_at_home(BINARY, vars).await
}

#[track_caller]
fn assert_exit(fake: &FakeApify, output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr:\n{}\nshard runs:\n{:#?}",
        String::from_utf8_lossy(&output.stderr),
        fake.state().child_stderr
    );
}

/// The coordinator's rows of its last run (its dataset is emptied before each run).
fn coordinator_rows(fake: &FakeApify) -> (Vec<Value>, Value) {
    let rows = fake
        .state()
        .datasets
        .get(DATASET)
        .cloned()
        .unwrap_or_default();
    let (summary, servers) = rows.split_last().expect("a summary row");
    assert_eq!(summary["record_type"], "summary");
    let servers = servers
        .iter()
        .filter(|r| r["record_type"] == "server")
        .cloned()
        .collect();
    (servers, summary.clone())
}

fn start_requests(fake: &FakeApify) -> Vec<platform_fake::Recorded> {
    fake.requests_to(Method::POST, &format!("/v2/acts/{ACTOR}/runs"))
}

fn query_value(request: &platform_fake::Recorded, name: &str) -> Option<String> {
    url::form_urlencoded::parse(request.query.as_deref().unwrap_or("").as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

fn reset_dataset(fake: &FakeApify) {
    fake.state().datasets.remove(DATASET);
}

#[test]
fn platform_coordinator_starts_one_run_per_shard_and_merges_their_rows() {
    in_namespace(
        "platform_coordinator_starts_one_run_per_shard_and_merges_their_rows",
        async {
            let fake = FakeApify::start().await;
            fake.with_actor(BINARY, pricing_env());
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            let paths: Vec<String> = (0..SERVERS).map(|i| format!("/s{i}")).collect();
            for (i, path) in paths.iter().enumerate() {
                let tools = vec![tool(&format!("tool_{i}"), "Reads a thing")];
                mcp.serve(path, surface(&format!("server-{i}"), "1", tools));
            }
            let urls: Vec<String> = paths.iter().map(|p| mcp.url(p)).collect();
            let shard_of_url = |url: &String| shard_of(&json!(url), SHARDS);
            let busy: BTreeSet<usize> = urls.iter().map(shard_of_url).collect();
            // The coordinator applies `exit_nonzero_on` to its merged summary; its shard runs
            // must not get it (their own exit 4 or 5 would make them failed shards).
            let input = json!({"servers": urls, "ledger_name": "fleet", "shards": SHARDS,
                               "exit_nonzero_on": ["chain_not_intact"]});
            fake.state().records.insert(
                (DEFAULT_STORE.to_string(), "INPUT".to_string()),
                (
                    serde_json::to_vec(&input).unwrap(),
                    "application/json".to_string(),
                ),
            );

            // --- first run: one platform run per shard that holds servers.
            let output = run_coordinator(&fake).await;
            assert_exit(&fake, &output, 0);
            let starts = start_requests(&fake);
            assert_eq!(starts.len(), busy.len(), "one run per shard with servers");
            let mut shares = 0.0;
            let mut started_servers = BTreeSet::new();
            for start in &starts {
                assert_eq!(query_value(start, "build").as_deref(), Some("0.1.7"));
                let share: f64 = query_value(start, "maxTotalChargeUsd")
                    .unwrap()
                    .parse()
                    .unwrap();
                shares += share;
                let shard_input = start.json();
                let ledger = shard_input["ledger_name"].as_str().unwrap().to_string();
                let servers = shard_input["servers"].as_array().unwrap();
                for server in servers {
                    let url = server.as_str().unwrap().to_string();
                    let shard = shard_of_url(&url);
                    assert_eq!(ledger, format!("fleet-shard-{shard}"));
                    started_servers.insert(url);
                }
                assert!(
                    shard_input.get("shards").is_none() && shard_input.get("registry").is_none()
                );
                assert!(
                    shard_input.get("exit_nonzero_on").is_none(),
                    "{shard_input}"
                );
            }
            assert_eq!(
                started_servers.len(),
                SERVERS,
                "every server in exactly one shard"
            );
            // The coordinator paid its own start (0.01) out of 1 USD; the shares split the rest.
            assert!(shares <= 0.99 + 1e-9, "shares add up to {shares}");
            assert!(shares > 0.98, "shares waste the budget: {shares}");
            for run in fake.started_runs() {
                assert_eq!(run["status"], "SUCCEEDED", "{run}");
            }
            let (servers, summary) = coordinator_rows(&fake);
            assert_eq!(servers.len(), SERVERS);
            assert!(servers.iter().all(|r| r["ledger_status"] == "created"));
            assert_eq!(summary["servers_requested"], SERVERS);
            assert_eq!(summary["baselines_created"], SERVERS);
            assert_eq!(summary["shards_failed"], 0);
            assert_eq!(
                summary["charges"]["events"]["server_checked"]["count"],
                SERVERS
            );
            assert_eq!(
                summary["charges"]["events"]["run_start"]["count"],
                1 + busy.len()
            );
            // Charges went to the runs that incurred them: the coordinator paid its start only.
            let own: Vec<String> = fake
                .state()
                .charges
                .iter()
                .map(|c| c.event.clone())
                .collect();
            assert_eq!(own, ["run_start"]);
            let shard_checked: u64 = fake
                .state()
                .child_charges
                .iter()
                .filter(|(_, c)| c.event == "server_checked")
                .map(|(_, c)| c.count)
                .sum();
            assert_eq!(shard_checked, SERVERS as u64);
            for outcome in summary["shards"].as_array().unwrap() {
                if outcome["servers"] != 0 {
                    assert!(outcome["run_id"].as_str().unwrap().starts_with("run-"));
                    assert!(
                        outcome["dataset_id"]
                            .as_str()
                            .unwrap()
                            .starts_with("ds-run-")
                    );
                }
            }
            let terminal = fake.state().status_messages.last().cloned().unwrap();
            assert!(
                terminal.1,
                "the coordinator's last status message is terminal"
            );

            // --- a shard whose run fails is named; the others' rows stand.
            let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
            let broken = *busy.iter().next().unwrap();
            let broken_key = (ledger_store.clone(), format!("fleet-shard-{broken}"));
            let intact = fake.state().records[&broken_key].clone();
            fake.state().records.insert(
                broken_key.clone(),
                (b"{ not a ledger".to_vec(), "application/json".into()),
            );
            reset_dataset(&fake);
            let output = run_coordinator(&fake).await;
            assert_exit(&fake, &output, 3);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(&broken_key.1),
                "the failed shard is named:\n{stderr}"
            );
            let (servers, summary) = coordinator_rows(&fake);
            let broken_count = urls.iter().filter(|u| shard_of_url(u) == broken).count();
            assert_eq!(servers.len(), SERVERS - broken_count);
            assert_eq!(summary["shards_failed"], 1);
            sample_rows::keep(
                "sharded-watch-with-a-failed-shard",
                &fake.state().datasets[DATASET],
            );
            let failed = &summary["shards"][broken - 1];
            assert_eq!(failed["status"], "failed");
            let error = failed["error"].as_str().unwrap();
            assert!(error.contains("exit code 3"), "{failed}");
            assert!(
                error.contains("Run failed: the ledger record"),
                "the shard's own reason: {failed}"
            );
            let message = &fake.state().status_messages.last().unwrap().0.clone();
            assert!(message.contains(&broken_key.1), "{message}");

            // --- running again re-runs only the failed shard.
            fake.state().records.insert(broken_key.clone(), intact);
            reset_dataset(&fake);
            mcp.reset_counts();
            let before = start_requests(&fake).len();
            let output = run_coordinator(&fake).await;
            assert_exit(&fake, &output, 0);
            let starts = start_requests(&fake);
            assert_eq!(starts.len(), before + 1, "one run: the failed shard's");
            let last = starts.last().unwrap().json();
            assert_eq!(last["ledger_name"], broken_key.1.as_str());
            for (url, path) in urls.iter().zip(&paths) {
                let expected_contacted = shard_of_url(url) == broken;
                assert_eq!(mcp.requests(path) > 0, expected_contacted, "{url}");
            }
            let (servers, summary) = coordinator_rows(&fake);
            assert_eq!(servers.len(), broken_count);
            assert_eq!(summary["servers_requested"], SERVERS);
            assert_eq!(summary["shards_failed"], 0);
            let reused = summary["shards"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| o["status"] == "reused")
                .count();
            assert_eq!(reused, busy.len() - 1);
            assert_eq!(fake.state().run["id"], RUN_ID);
        },
    );
}

#[test]
fn platform_coordinator_stops_waiting_before_its_own_timeout() {
    in_namespace(
        "platform_coordinator_stops_waiting_before_its_own_timeout",
        async {
            let fake = FakeApify::start().await;
            fake.with_actor(BINARY, pricing_env());
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            // The server answers after 4 s, so its shard's run is still going when the
            // coordinator, whose platform timeout is 62 s away, stops waiting after 2 s.
            let slow = surface("slow", "1", vec![tool("wait", "Waits")]);
            mcp.serve_after("/slow", slow, std::time::Duration::from_secs(4));
            let input = json!({"servers": [mcp.url("/slow")], "ledger_name": "late", "shards": 2});
            fake.state().records.insert(
                (DEFAULT_STORE.to_string(), "INPUT".to_string()),
                (
                    serde_json::to_vec(&input).unwrap(),
                    "application/json".to_string(),
                ),
            );
            let timeout_at = chrono::Utc::now() + chrono::Duration::seconds(62);
            let extra = vec![("ACTOR_TIMEOUT_AT".to_string(), timeout_at.to_rfc3339())];
            let started = std::time::Instant::now();
            let output = run_coordinator_with(&fake, extra).await;
            assert!(
                started.elapsed() < std::time::Duration::from_secs(4),
                "it did not wait"
            );
            assert_exit(&fake, &output, 3);
            let (servers, summary) = coordinator_rows(&fake);
            assert!(servers.is_empty());
            assert_eq!(summary["shards_failed"], 1);
            let shard = shard_of(&json!(mcp.url("/slow")), 2);
            let late = &summary["shards"][shard - 1];
            assert_eq!(late["status"], "failed");
            let error = late["error"].as_str().unwrap();
            assert!(error.contains("still RUNNING"), "{error}");
            assert!(
                late["run_id"].as_str().unwrap().starts_with("run-"),
                "{late}"
            );
        },
    );
}

/// The most skewed hash split on the platform: 2000 servers whose URLs all rank shard 1 first,
/// with `shards: 0` (the coordinator chooses 2 shards). Each shard run (a real child process) accepts its 1000 servers; every server
/// is read once and the watch exits 0. The servers share a few surfaces, as real fleets do.
#[test]
fn platform_the_most_skewed_split_of_2000_servers_finishes() {
    in_namespace(
        "platform_the_most_skewed_split_of_2000_servers_finishes",
        async {
            let fake = FakeApify::start().await;
            fake.with_actor(BINARY, pricing_env());
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            let placed = |url: &String| {
                mcp_surface_ledger::shard::placement::preferred_shard(
                    &mcp_surface_ledger::shard::placement::server_id(&json!(url)),
                    2,
                )
            };
            let paths: Vec<String> = (0..)
                .map(|i| format!("/s{i}"))
                .filter(|path| placed(&mcp.url(path)) == 1)
                .take(2000)
                .collect();
            for (i, path) in paths.iter().enumerate() {
                let kind = i % 5;
                let tools = vec![tool(&format!("tool_{kind}"), "Reads a thing")];
                mcp.serve(path, surface(&format!("product-{kind}"), "1", tools));
            }
            let urls: Vec<String> = paths.iter().map(|p| mcp.url(p)).collect();
            let input =
                json!({"servers": urls, "ledger_name": "skewed", "shards": 0, "concurrency": 20});
            fake.state().records.insert(
                (DEFAULT_STORE.to_string(), "INPUT".to_string()),
                (
                    serde_json::to_vec(&input).unwrap(),
                    "application/json".to_string(),
                ),
            );
            let mut vars = fake.env_vars();
            vars.extend(pricing_env());
            vars.push(("ACTOR_ID".into(), ACTOR.into()));
            vars.push(("ACTOR_BUILD_NUMBER".into(), "0.1.7".into()));
            vars.push(("ACTOR_MAX_TOTAL_CHARGE_USD".into(), "1000".into()));
            let output = run_at_home(BINARY, vars).await;
            assert_exit(&fake, &output, 0);
            let starts = start_requests(&fake);
            assert_eq!(starts.len(), 2);
            for start in &starts {
                assert_eq!(start.json()["servers"].as_array().unwrap().len(), 1000);
            }
            let (servers, summary) = coordinator_rows(&fake);
            assert_eq!(servers.len(), 2000);
            let read: BTreeSet<&str> = servers
                .iter()
                .filter(|r| r["ok"] == true)
                .map(|r| r["server_url"].as_str().unwrap())
                .collect();
            assert_eq!(read.len(), 2000, "every server read");
            assert_eq!(summary["servers_checked"], 2000);
            assert_eq!(summary["shards_failed"], 0);
            assert_eq!(summary["shards_chosen"], 2);
            let (terminal, _) = fake.state().status_messages.last().cloned().unwrap();
            assert!(
                terminal.contains("2 shards chosen for 2000 servers"),
                "{terminal}"
            );
            for path in &paths {
                assert!(mcp.requests(path) > 0, "{path} not contacted");
            }
        },
    );
}

/// The entries of every ledger of the watch `ledger` in the fake's ledger store: each entry key
/// with the ledgers that hold it.
fn platform_holders(
    fake: &FakeApify,
    ledger: &str,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let state = fake.state();
    let store = state.named_stores["mcp-tool-surface-ledger"].clone();
    let mut held: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for ((store_id, key), (bytes, _)) in &state.records {
        let ours = key == ledger || key.starts_with(&format!("{ledger}-shard-"));
        if store_id != &store || !ours {
            continue;
        }
        let index: Value = serde_json::from_slice(bytes).unwrap();
        for entry in index["servers"].as_object().unwrap().keys() {
            held.entry(entry.clone()).or_default().push(key.clone());
        }
    }
    held
}

/// 1 → 3 → 2 → 1 → 4 shards on the platform: the shard runs are runs of the Actor, the plain
/// runs the Actor itself; before each step a server that moves changes. Every server stays in
/// exactly one ledger entry with its history, nobody is created again, the one change is
/// found and a move makes none.
#[test]
fn platform_one_to_three_to_two_to_one_to_four_keeps_every_entry_and_its_history() {
    in_namespace(
        "platform_one_to_three_to_two_to_one_to_four_keeps_every_entry_and_its_history",
        async {
            use mcp_surface_ledger::shard::placement::{place, server_id};
            let fake = FakeApify::start().await;
            fake.with_actor(BINARY, pricing_env());
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            // Paths under which some server sits on shard 3 of 3, so that going from 3 shards
            // to 2 moves one (the port, and so the placement, differs from run to run).
            let paths_with = |salt: usize| -> Vec<String> {
                (0..SERVERS).map(|i| format!("/g{salt}x{i}")).collect()
            };
            let on_shard_three = |paths: &[String]| {
                let entries: Vec<Value> = paths.iter().map(|p| json!(mcp.url(p))).collect();
                let placed = place(&entries, 3);
                entries
                    .iter()
                    .any(|entry| placed.shards[&server_id(entry)] == 3)
            };
            let paths = (0..)
                .map(paths_with)
                .find(|paths| on_shard_three(paths))
                .unwrap();
            let tools_of = |i: usize, extra: usize| {
                let mut tools = vec![tool(&format!("tool_{i}"), "Reads a thing")];
                tools.extend((0..extra).map(|n| tool(&format!("added_{i}_{n}"), "Writes")));
                tools
            };
            for (i, path) in paths.iter().enumerate() {
                mcp.serve(path, surface(&format!("server-{i}"), "1", tools_of(i, 0)));
            }
            let urls: Vec<String> = paths.iter().map(|p| mcp.url(p)).collect();
            let entries: Vec<Value> = urls.iter().map(|u| json!(u)).collect();
            let ledger_for = |url: &String, shards: usize| match shards {
                1 => "grow".to_string(),
                n => format!(
                    "grow-shard-{}",
                    place(&entries, n).shards[&server_id(&json!(url))]
                ),
            };
            let run = |shards: usize| {
                let input = json!({"servers": urls, "ledger_name": "grow", "shards": shards});
                fake.put_input(&input);
                reset_dataset(&fake);
                run_coordinator(&fake)
            };
            let output = run(1).await;
            assert_exit(&fake, &output, 0);
            let mut at: std::collections::BTreeMap<String, String> = urls
                .iter()
                .map(|u| (u.clone(), "grow".to_string()))
                .collect();
            let mut changed = [0usize; SERVERS];
            for (step, shards) in [3usize, 2, 1, 4].into_iter().enumerate() {
                let when = format!("step {step}: shards {shards}");
                let moving: Vec<usize> = (0..SERVERS)
                    .filter(|i| at[&urls[*i]] != ledger_for(&urls[*i], shards))
                    .collect();
                assert!(!moving.is_empty(), "{when}");
                let i = moving[step % moving.len()];
                changed[i] += 1;
                mcp.serve(
                    &paths[i],
                    surface(&format!("server-{i}"), "1", tools_of(i, changed[i])),
                );
                let output = run(shards).await;
                assert_exit(&fake, &output, 0);
                let rows = fake.state().datasets[DATASET].clone();
                let summary = rows.last().unwrap();
                assert_eq!(summary["baselines_created"], 0, "{when}");
                assert_eq!(summary["servers_compared"], SERVERS, "{when}");
                let changes: Vec<&Value> = rows
                    .iter()
                    .filter(|r| r["record_type"] == "change")
                    .collect();
                assert_eq!(changes.len(), 1, "{when}: {changes:?}");
                assert_eq!(changes[0]["server_url"], urls[i].as_str(), "{when}");
                let held = platform_holders(&fake, "grow");
                assert_eq!(held.len(), SERVERS, "{when}: {held:?}");
                for url in &urls {
                    assert_eq!(held[url], [ledger_for(url, shards)], "{when}: {url}");
                    at.insert(url.clone(), ledger_for(url, shards));
                }
                // Every change recorded so far is still in its server's history.
                let state = fake.state();
                let store = state.named_stores["mcp-tool-surface-ledger"].clone();
                for (n, count) in changed.iter().enumerate().filter(|(_, c)| **c > 0) {
                    let key = (store.clone(), at[&urls[n]].clone());
                    let index: Value = serde_json::from_slice(&state.records[&key].0).unwrap();
                    let history = index["servers"][&urls[n]]["history"].as_array().unwrap();
                    assert_eq!(history.len(), *count, "{when}: server {n}");
                }
            }
        },
    );
}
