//! Sweeping surface records no ledger names (`sweep`), with two ledger names sharing the store:
//! real runs against rmcp servers write the records, then sweeps at chosen times show that a
//! record another ledger still names is never touched, and an orphan goes only after the
//! grace period.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::collections::BTreeSet;

use actor::RunDir;
use chrono::{Duration, Utc};
use mcp_surface_ledger::platform::{LocalStorage, Storage, Store};
use mcp_surface_ledger::sweep::{self, GRACE_PERIOD, JOURNAL_KEY};
use serde_json::json;
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

async fn surface_records(storage: &LocalStorage) -> BTreeSet<String> {
    storage
        .list_keys(Store::Ledger)
        .await
        .unwrap()
        .into_iter()
        .filter(|k| sweep::is_surface_record(k))
        .collect()
}

fn named(dir: &RunDir, ledger: &str, url: &str) -> String {
    dir.ledger(ledger)["servers"][url]["surface_key"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn records_another_ledger_names_stay_and_orphans_go_after_the_grace_period() {
    let shared = RmcpPeer::start(
        surface("shared", "1", vec![tool("search", "Search")]),
        RmcpMode::default(),
    );
    let moving = RmcpPeer::start(
        surface("moving", "1", vec![tool("read", "Read")]),
        RmcpMode::default(),
    );
    let dir = RunDir::new();
    let (shared_url, moving_url) = (shared.url.to_string(), moving.url.to_string());
    // Ledger "one" watches both servers; ledger "two" only the shared one.
    let one = json!({"servers": [shared_url, moving_url], "ledger_name": "one"});
    let two = json!({"servers": [shared_url], "ledger_name": "two"});
    dir.run_ok(&one, None).await;
    dir.run_ok(&two, None).await;
    let shared_key = named(&dir, "one", &shared_url);
    assert_eq!(shared_key, named(&dir, "two", &shared_url));
    let old_moving_key = named(&dir, "one", &moving_url);

    // The moving server changes: ledger one names a new record, the old one is an orphan.
    moving.set_surface(surface(
        "moving",
        "2",
        vec![tool("read", "Read"), tool("write", "Write")],
    ));
    dir.run_ok(&one, None).await;
    let new_moving_key = named(&dir, "one", &moving_url);
    assert_ne!(new_moving_key, old_moving_key);

    let storage = LocalStorage::open_existing(dir.root());
    let all = surface_records(&storage).await;
    assert_eq!(
        all,
        BTreeSet::from([
            shared_key.clone(),
            old_moving_key.clone(),
            new_moving_key.clone()
        ])
    );
    // The run itself swept: the orphan is journaled, nothing deleted yet.
    let journal: serde_json::Value = serde_json::from_slice(
        &storage
            .get_record(Store::Ledger, JOURNAL_KEY)
            .await
            .unwrap()
            .unwrap()
            .bytes,
    )
    .unwrap();
    assert!(
        journal["unreferenced_since"].get(&old_moving_key).is_some(),
        "{journal}"
    );

    let now = Utc::now();
    assert_eq!(
        sweep::sweep(&storage, now + Duration::days(6))
            .await
            .unwrap(),
        0
    );
    assert_eq!(surface_records(&storage).await, all);

    // Ledger one drops the shared server; ledger two still names its record.
    dir.run_ok(
        &json!({"servers": [moving_url], "ledger_name": "one"}),
        None,
    )
    .await;
    let later = now + GRACE_PERIOD + Duration::minutes(1);
    assert_eq!(sweep::sweep(&storage, later).await.unwrap(), 1);
    assert_eq!(
        surface_records(&storage).await,
        BTreeSet::from([shared_key.clone(), new_moving_key.clone()])
    );
    // Much later still: everything left is named by some ledger, so nothing goes.
    assert_eq!(
        sweep::sweep(&storage, later + Duration::days(30))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        surface_records(&storage).await,
        BTreeSet::from([shared_key, new_moving_key])
    );
}

#[tokio::test]
async fn an_index_this_build_cannot_read_stops_the_sweep() {
    let dir = RunDir::new();
    let storage = LocalStorage::open(dir.root()).unwrap();
    let orphan = format!("surface-{}", "ab".repeat(20));
    storage
        .put_record(
            Store::Ledger,
            &orphan,
            mcp_surface_ledger::platform::Record::json(b"{}".to_vec()),
        )
        .await
        .unwrap();
    storage
        .put_record(
            Store::Ledger,
            "future",
            mcp_surface_ledger::platform::Record::json(br#"{"format": 99}"#.to_vec()),
        )
        .await
        .unwrap();
    let error = sweep::sweep(&storage, Utc::now() + Duration::days(365))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("\"future\""), "{error}");
    assert!(surface_records(&storage).await.contains(&orphan));
}

#[tokio::test]
async fn a_lost_surface_record_starts_a_new_baseline_and_reports_the_change() {
    let peer = RmcpPeer::start(
        surface("lost", "1", vec![tool("search", "Search")]),
        RmcpMode::default(),
    );
    let other = RmcpPeer::start(
        surface("other", "1", vec![tool("read", "Read")]),
        RmcpMode::default(),
    );
    let (url, other_url) = (peer.url.to_string(), other.url.to_string());
    let dir = RunDir::new();
    let input = json!({"servers": [url, other_url], "ledger_name": "one"});
    dir.run_ok(&input, None).await;
    let lost_key = named(&dir, "one", &url);
    let storage = LocalStorage::open_existing(dir.root());
    storage
        .delete_record(Store::Ledger, &lost_key)
        .await
        .unwrap();

    peer.set_surface(surface(
        "lost",
        "2",
        vec![tool("search", "Search"), tool("write", "Write")],
    ));
    dir.run_ok(&input, None).await;
    let rows = actor::Rows::of(&dir);
    let row = rows.server(&url);
    assert_eq!(row["reason_code"], "OK", "{row}");
    assert_eq!(row["ledger_status"], "created", "{row}");
    assert!(row["error"].as_str().unwrap().contains(&lost_key), "{row}");
    // The surface moved while its record was gone: one `baseline_lost` row says so.
    let changes = rows.changes_of(&url);
    assert_eq!(changes.len(), 1, "{:?}", rows.changes);
    assert_eq!(changes[0]["change_class"], "baseline_lost");
    assert_eq!(changes[0]["details"], json!(["tools added: write"]));
    assert_eq!(rows.server(&other_url)["ledger_status"], "compared");
    let new_key = named(&dir, "one", &url);
    assert_ne!(new_key, lost_key);
    assert!(surface_records(&storage).await.contains(&new_key));
}
