//! The REST storage backend against a recording fake of the Apify API on 127.0.0.1.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod platform_fake;

use std::collections::HashMap;

use axum::http::Method;
use mcp_surface_ledger::platform::{
    ApifyStorage, Item, LEDGER_STORE_NAME, PlatformEnv, Record, Storage, Store,
};
use platform_fake::{DATASET, DEFAULT_STORE, FakeApify, RUN_ID, TOKEN};
use serde_json::{Value, json};

fn env_for(vars: Vec<(String, String)>) -> PlatformEnv {
    let map: HashMap<String, String> = vars.into_iter().collect();
    PlatformEnv::from_vars(|name| map.get(name).cloned()).unwrap()
}

async fn storage(fake: &FakeApify) -> ApifyStorage {
    ApifyStorage::connect(&env_for(fake.env_vars()))
        .await
        .unwrap()
}

#[tokio::test]
async fn reads_input_and_treats_404_as_no_record() {
    let fake = FakeApify::start().await;
    fake.state().records.insert(
        (DEFAULT_STORE.to_string(), "INPUT".to_string()),
        (
            br#"{"servers":[]}"#.to_vec(),
            "application/json".to_string(),
        ),
    );
    let storage = storage(&fake).await;

    let input = storage
        .get_record(Store::Default, "INPUT")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(input.bytes, br#"{"servers":[]}"#);
    assert_eq!(input.content_type, "application/json");
    assert_eq!(
        storage.get_record(Store::Default, "MISSING").await.unwrap(),
        None
    );

    let gets = fake.requests_to(Method::GET, "/v2/key-value-stores/");
    assert_eq!(gets.len(), 2);
    assert_eq!(
        gets[0].path,
        format!("/v2/key-value-stores/{DEFAULT_STORE}/records/INPUT")
    );
    assert_eq!(
        gets[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
}

#[tokio::test]
async fn ledger_store_is_got_or_created_once_and_records_keep_their_content_type() {
    let fake = FakeApify::start().await;
    let storage = storage(&fake).await;

    assert_eq!(storage.get_record(Store::Ledger, "a").await.unwrap(), None);
    storage
        .put_record(Store::Ledger, "a", Record::json(br#"{"v":1}"#.to_vec()))
        .await
        .unwrap();
    let html = Record {
        bytes: b"<p>report</p>".to_vec(),
        content_type: "text/html; charset=utf-8".to_string(),
    };
    storage
        .put_record(Store::Default, "REPORT", html.clone())
        .await
        .unwrap();
    let back = storage
        .get_record(Store::Ledger, "a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(back.bytes, br#"{"v":1}"#);
    assert_eq!(back.content_type, "application/json; charset=utf-8");

    let creates = fake.requests_to(Method::POST, "/v2/key-value-stores");
    assert_eq!(creates.len(), 1, "the named store is resolved once");
    assert_eq!(
        creates[0].query.as_deref(),
        Some(format!("name={LEDGER_STORE_NAME}").as_str())
    );
    let ledger_id = fake.state().named_stores[LEDGER_STORE_NAME].clone();
    let puts = fake.requests_to(Method::PUT, "/v2/key-value-stores/");
    assert_eq!(puts.len(), 2);
    assert_eq!(
        puts[0].path,
        format!("/v2/key-value-stores/{ledger_id}/records/a")
    );
    assert_eq!(
        puts[0].header("content-type"),
        Some("application/json; charset=utf-8")
    );
    assert_eq!(
        puts[1].path,
        format!("/v2/key-value-stores/{DEFAULT_STORE}/records/REPORT")
    );
    assert_eq!(
        puts[1].header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let state = fake.state();
    let stored = &state.records[&(DEFAULT_STORE.to_string(), "REPORT".to_string())];
    assert_eq!(
        (stored.0.as_slice(), stored.1.as_str()),
        (html.bytes.as_slice(), "text/html; charset=utf-8")
    );
}

#[tokio::test]
async fn an_existing_ledger_store_is_reused() {
    let fake = FakeApify::start().await;
    fake.state()
        .named_stores
        .insert(LEDGER_STORE_NAME.to_string(), "kv-existing".to_string());
    fake.state().records.insert(
        ("kv-existing".to_string(), "srv".to_string()),
        (b"{}".to_vec(), "application/json".to_string()),
    );
    let storage = storage(&fake).await;
    let record = storage.get_record(Store::Ledger, "srv").await.unwrap();
    assert_eq!(record.map(|r| r.bytes), Some(b"{}".to_vec()));
    assert_eq!(fake.state().named_stores.len(), 1);
}

#[tokio::test]
async fn pushes_keep_order_and_are_chunked_under_9_mib() {
    let fake = FakeApify::start().await;
    let storage = storage(&fake).await;
    // About 12 MiB in total: needs at least two requests.
    let pad = "x".repeat(10 * 1024);
    let items: Vec<Value> = (0..1_200).map(|n| json!({"n": n, "pad": pad})).collect();
    let encoded: Vec<Item> = items.iter().map(|v| Item::of(v).unwrap()).collect();
    storage.push_items(&encoded).await.unwrap();
    let last = Item::of(&json!({"n": "last"})).unwrap();
    storage.push_items(&[last]).await.unwrap();

    let pushes = fake.requests_to(Method::POST, &format!("/v2/datasets/{DATASET}/items"));
    assert!(pushes.len() >= 3, "{} requests", pushes.len());
    for push in &pushes {
        assert!(
            push.body.len() <= 9 * 1024 * 1024,
            "{} bytes",
            push.body.len()
        );
        assert!(
            push.header("content-type")
                .unwrap()
                .starts_with("application/json")
        );
    }
    let stored = fake.state().datasets[DATASET].clone();
    let mut expected = items;
    expected.push(json!({"n": "last"}));
    assert_eq!(stored, expected);
}

#[tokio::test]
async fn status_messages_are_sent_to_the_run() {
    let fake = FakeApify::start().await;
    let storage = storage(&fake).await;
    storage
        .set_status_message("Checked 1/2 servers, 0 changes", false)
        .await
        .unwrap();
    storage
        .set_status_message("2 servers, 0 changed, 0 unreachable", true)
        .await
        .unwrap();

    let puts = fake.requests_to(Method::PUT, &format!("/v2/actor-runs/{RUN_ID}"));
    assert_eq!(puts.len(), 2);
    assert_eq!(
        puts[1].json(),
        json!({"statusMessage": "2 servers, 0 changed, 0 unreachable", "isStatusMessageTerminal": true})
    );
    assert_eq!(
        fake.state().status_messages,
        vec![
            ("Checked 1/2 servers, 0 changes".to_string(), false),
            ("2 servers, 0 changed, 0 unreachable".to_string(), true),
        ]
    );
}

#[tokio::test]
async fn server_errors_are_retried_and_client_errors_fail_at_once() {
    let fake = FakeApify::start().await;
    let storage = storage(&fake).await;
    let items_path = format!("/v2/datasets/{DATASET}/items");
    fake.fail_next(Method::POST, &items_path, 503, "server-error", "try later");
    fake.fail_next(
        Method::POST,
        &items_path,
        429,
        "rate-limit-exceeded",
        "slow down",
    );
    let item = Item::of(&json!({"n": 1})).unwrap();
    storage.push_items(&[item]).await.unwrap();
    assert_eq!(fake.requests_to(Method::POST, &items_path).len(), 3);
    assert_eq!(fake.state().datasets[DATASET], vec![json!({"n": 1})]);

    let record_path = format!("/v2/key-value-stores/{DEFAULT_STORE}/records/OUTPUT");
    fake.fail_next(
        Method::PUT,
        &record_path,
        403,
        "insufficient-permissions",
        "You do not have permission",
    );
    let err = storage
        .put_record(Store::Default, "OUTPUT", Record::json(b"{}".to_vec()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("insufficient-permissions"), "{err}");
    assert!(err.contains("You do not have permission"), "{err}");
    assert!(err.contains("403"), "{err}");
    assert!(!err.contains(TOKEN), "{err}");
    assert_eq!(fake.requests_to(Method::PUT, &record_path).len(), 1);
}

#[tokio::test]
async fn network_errors_are_retried_then_reported() {
    // A port this test holds without listening: connections are refused, and no other
    // process can take the port while the test runs.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind(([127, 0, 0, 1], 0).into()).unwrap();
    let port = held.local_addr().unwrap().port();
    let fake = FakeApify::start().await;
    let mut vars = fake.env_vars();
    vars.retain(|(k, _)| k != "APIFY_API_BASE_URL");
    vars.push((
        "APIFY_API_BASE_URL".to_string(),
        format!("http://127.0.0.1:{port}"),
    ));
    let storage = ApifyStorage::connect(&env_for(vars)).await.unwrap();
    let err = storage
        .get_record(Store::Default, "INPUT")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("GET"), "{err}");
    assert!(err.contains("/records/INPUT"), "{err}");
}

#[tokio::test]
async fn keys_are_listed_page_by_page_and_records_deleted() {
    let fake = FakeApify::start().await;
    let storage = storage(&fake).await;
    for key in ["b", "a", "surface-1", "c", "insight.x"] {
        storage
            .put_record(Store::Ledger, key, Record::json(b"{}".to_vec()))
            .await
            .unwrap();
    }
    let keys = storage.list_keys(Store::Ledger).await.unwrap();
    assert_eq!(keys, ["a", "b", "c", "insight.x", "surface-1"]);
    let store_id = fake.state().named_stores[LEDGER_STORE_NAME].clone();
    let pages = fake.requests_to(
        Method::GET,
        &format!("/v2/key-value-stores/{store_id}/keys"),
    );
    assert_eq!(pages.len(), 3, "the fake pages by two");
    assert_eq!(
        pages[1].query.as_deref(),
        Some("limit=1000&exclusiveStartKey=b")
    );

    storage
        .delete_record(Store::Ledger, "surface-1")
        .await
        .unwrap();
    // Deleting what is not there is not an error.
    storage
        .delete_record(Store::Ledger, "surface-1")
        .await
        .unwrap();
    let keys = storage.list_keys(Store::Ledger).await.unwrap();
    assert_eq!(keys, ["a", "b", "c", "insight.x"]);
    assert!(
        storage
            .get_record(Store::Ledger, "surface-1")
            .await
            .unwrap()
            .is_none()
    );
}
