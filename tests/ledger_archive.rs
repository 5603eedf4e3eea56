//! A ledger keeps every change of its retention period, however many (issue 36): real runs
//! against a loopback MCP server that rewords 25 tools each release, twelve releases, so a
//! server's history outgrows what its index keeps and older changes move to archived pages.
//! Then, with the run datasets gone:
//!
//! - the JSON API, the server page, the changes feed and the `history` command give every
//!   change, oldest first, each with its before and after whole and equal to what was served;
//! - `verify` reads every page and passes;
//! - the sweep keeps every pack a page lives in or names;
//! - a page altered in the store is refused everywhere (API 409, `history` exit 3, `verify`
//!   exit 1), never shown as if whole.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;
#[path = "support/switchable.rs"]
mod switchable;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use actor::RunDir;
use chrono::{DateTime, Utc};
use mcp_surface_ledger::ledger::{self, KeptValue, Ledger, PackReader, is_value_pack};
use mcp_surface_ledger::platform::{LocalStorage, Record, Storage, Store};
use mcp_surface_ledger::serve;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use mcp_surface_ledger::serve::store::LedgerReader;
use mcp_surface_ledger::surface::canon;
use mcp_surface_ledger::sweep;
use serde_json::{Value, json};
use support::surface::surface;
use switchable::Switchable;

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const LEDGER: &str = "archive";
const RELEASES: usize = 12;
const REWORDED: usize = 25;

/// The description tool `i` has in `release`: long (kept by digest) for even tools.
fn description(release: usize, i: usize) -> String {
    let reworded = if i < REWORDED { release } else { 0 };
    let filler = if i.is_multiple_of(2) {
        " Reads the record it is given and nothing else.".repeat(14)
    } else {
        String::new()
    };
    format!("Tool {i} as of release {reworded}.{filler}")
}

/// The tools of `release`; from the second release on, one more tool.
fn tools(release: usize) -> Vec<Value> {
    let mut tools: Vec<Value> = (0..30)
        .map(|i| {
            json!({
                "name": format!("tool_{i:02}"),
                "description": description(release, i),
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            })
        })
        .collect();
    if release > 0 {
        tools.push(json!({
            "name": "added_in_release_1",
            "description": format!("Added later. {}", "It lists the records.".repeat(40)),
            "inputSchema": {"type": "object"},
        }));
    }
    tools
}

fn canonical(value: &Value) -> String {
    canon::canonical_string(value).unwrap()
}

fn command(run_dir: &RunDir, subcommand: &str, args: &[&str]) -> Output {
    Command::new(BINARY)
        .args([subcommand, "--storage-dir"])
        .arg(run_dir.root())
        .args(["--ledger", LEDGER])
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_stays_readable_when_the_history_outgrows_the_index() {
    let server = Switchable::start(surface("reworder", "1", tools(0)));
    let url = server.url.to_string();
    let run_dir = RunDir::new();
    let input = json!({
        "servers": [url],
        "ledger_name": LEDGER,
        "alert_on": ["tool_description_changed", "tool_added"],
    });
    let storage = LocalStorage::open_existing(run_dir.root());
    let mut run_times: Vec<DateTime<Utc>> = Vec::new();
    for release in 0..RELEASES {
        server.set_surface(surface("reworder", "1", tools(release)));
        run_dir.run_ok(&input, None).await;
        let index = Ledger::load(&storage, LEDGER).await.unwrap();
        run_times.push(index.entry(&url).unwrap().last_seen);
    }
    std::fs::remove_dir_all(run_dir.root().join("datasets")).unwrap();

    let index = Ledger::load(&storage, LEDGER).await.unwrap();
    let entry = index.entry(&url).unwrap().clone();
    let total = (RELEASES - 1) * REWORDED + 1;
    assert!(
        entry.archived.len() >= 2,
        "pages: {}, items in the index: {}",
        entry.archived.len(),
        entry.history.len()
    );
    assert!(entry.history.len() <= ledger::ARCHIVE_AT);
    let archived: usize = entry.archived.iter().map(|a| a.count).sum();
    assert_eq!(archived + entry.history.len(), total);

    // The API: every change, numbered without a gap, each value whole and as served.
    let reader = LedgerReader::new(LocalStorage::open_existing(run_dir.root()));
    let api = reader.changes(LEDGER, &url, None).await.unwrap();
    assert_eq!(api.changes_total, total);
    let mut packs = PackReader::default();
    let history = ledger::full_history(&storage, &entry, &mut packs)
        .await
        .unwrap();
    let seqs: Vec<u64> = history.iter().map(|item| item.seq.unwrap()).collect();
    assert_eq!(seqs, (1..=total as u64).collect::<Vec<_>>());
    for change in &api.changes {
        let release = run_times
            .iter()
            .position(|at| *at == change.observed_at)
            .unwrap();
        let values = change.values.as_ref().unwrap();
        let whole = |side: &Option<KeptValue>| match side {
            Some(KeptValue::Whole { json }) => serde_json::from_str::<Value>(json).unwrap(),
            other => panic!("not whole: {other:?}"),
        };
        let tool = change.tool_name.as_deref().unwrap();
        if change.change_class == "tool_added" {
            let added = tools(release).pop().unwrap();
            assert_eq!(canonical(&whole(&values.new)), canonical(&added));
            continue;
        }
        let i: usize = tool["tool_".len()..].parse().unwrap();
        assert_eq!(whole(&values.old), json!(description(release - 1, i)));
        assert_eq!(whole(&values.new), json!(description(release, i)));
    }
    let since = reader
        .changes(LEDGER, &url, Some(run_times[2]))
        .await
        .unwrap();
    assert_eq!(since.changes_total, (RELEASES - 2) * REWORDED);

    // The pages and the feed read the archived changes too.
    let addr = support::background::serve(serve::app(
        Backend::Local(LocalStorage::open_existing(run_dir.root())),
        HostPolicy::local(),
    ));
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = |path: String| {
        let http = http.clone();
        async move {
            let response = http
                .get(format!("http://{addr}{path}"))
                .header("accept", "text/html")
                .send()
                .await
                .unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("ledger", LEDGER)
        .append_pair("url", &url)
        .finish();
    let (status, page) = get(format!("/server?{query}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains(&format!("History ({total} changes)")),
        "{page}"
    );
    // The tool added by the second release: only an archived page holds that change.
    assert!(
        entry.archived[0].from <= run_times[1] && run_times[1] <= entry.archived[0].to,
        "the second release's changes are archived"
    );
    assert!(
        page.contains("Added later. It lists the records."),
        "shown whole"
    );
    let (_, feed) = get(format!("/changes.atom?ledger={LEDGER}&class=tool_added")).await;
    assert!(feed.contains("added_in_release_1"), "{feed}");
    assert!(
        feed.contains("It lists the records."),
        "the added tool whole"
    );

    // The command line lists every change; `verify` reads every page.
    let listed = command(&run_dir, "history", &["--server", &url]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["changes_total"], json!(total));
    let verified = command(&run_dir, "verify", &[]);
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );

    // The sweep keeps every pack the pages live in or name.
    let named = index.value_packs();
    for page in &entry.archived {
        assert!(named.contains(page.page.pack.as_ref().unwrap()));
    }
    let later = Utc::now() + sweep::GRACE_PERIOD;
    sweep::sweep(&storage, Utc::now()).await.unwrap();
    sweep::sweep(&storage, later).await.unwrap();
    let left: BTreeSet<String> = storage
        .list_keys(Store::Ledger)
        .await
        .unwrap()
        .into_iter()
        .filter(|key| is_value_pack(key))
        .collect();
    assert!(named.is_subset(&left), "named {named:?}, left {left:?}");
    let again = LedgerReader::new(LocalStorage::open_existing(run_dir.root()));
    assert_eq!(
        again
            .changes(LEDGER, &url, None)
            .await
            .unwrap()
            .changes_total,
        total
    );

    // A page altered in its pack is refused everywhere.
    let oldest = &entry.archived[0];
    let key = oldest.page.pack.clone().unwrap();
    let record = storage
        .get_record(Store::Ledger, &key)
        .await
        .unwrap()
        .unwrap();
    let mut pack = ledger::values::Pack::from_bytes(&key, &record.bytes).unwrap();
    let text = pack.values[&oldest.page.sha256].replacen(
        "\"field\":\"description\"",
        "\"field\":\"title\"",
        1,
    );
    assert_ne!(text, pack.values[&oldest.page.sha256]);
    pack.values.insert(oldest.page.sha256.clone(), text);
    storage
        .put_record(
            Store::Ledger,
            &key,
            Record::json(serde_json::to_vec(&pack).unwrap()),
        )
        .await
        .unwrap();
    let fresh = LedgerReader::new(LocalStorage::open_existing(run_dir.root()));
    let error = fresh.changes(LEDGER, &url, None).await.unwrap_err();
    assert_eq!(error.code(), "ledger_unreadable", "{error}");
    assert!(error.to_string().contains("altered or planted"), "{error}");
    let (status, _) = get(format!("/server?{query}")).await;
    assert_eq!(status, 409, "the server page is not shown with a hole");
    let listed = command(&run_dir, "history", &["--server", &url]);
    assert_eq!(
        listed.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let verified = command(&run_dir, "verify", &[]);
    let verdict: Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(verified.status.code(), Some(1), "{verdict}");
    assert!(
        verdict.to_string().contains("altered or planted"),
        "{verdict}"
    );
}
