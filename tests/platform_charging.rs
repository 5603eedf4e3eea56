//! Pay-per-event charging: budget rule, charge calls against the recording fake, dry runs.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod platform_fake;
#[path = "support/pricing.rs"]
mod pricing;

use std::collections::HashMap;

use axum::http::Method;
use mcp_surface_ledger::platform::{ApiClient, Charging, PlatformEnv, Usd};
use platform_fake::{FakeApify, RUN_ID};
use pricing::{SEED_PRICES, pricing_info};
use proptest::prelude::*;
use serde_json::json;

const EVENTS: [&str; 3] = ["run_start", "server_checked", "surface_change_recorded"];

fn env_for(vars: Vec<(String, String)>) -> PlatformEnv {
    let map: HashMap<String, String> = vars.into_iter().collect();
    PlatformEnv::from_vars(|name| map.get(name).cloned()).unwrap()
}

fn with(mut vars: Vec<(String, String)>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    for (name, value) in extra {
        vars.retain(|(k, _)| k != name);
        vars.push((name.to_string(), value.to_string()));
    }
    vars
}

async fn platform_charging(fake: &FakeApify, max: &str) -> Charging {
    let pricing = pricing_info(SEED_PRICES);
    let env = env_for(with(
        fake.env_vars(),
        &[
            ("APIFY_ACTOR_PRICING_INFO", &pricing),
            ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
            ("ACTOR_MAX_TOTAL_CHARGE_USD", max),
        ],
    ));
    let api = ApiClient::new(&env).unwrap();
    Charging::init(&env, &api).await.unwrap()
}

#[tokio::test]
async fn charges_are_sent_with_names_counts_and_idempotency_keys() {
    let fake = FakeApify::start().await;
    let charging = platform_charging(&fake, "1").await;
    assert!(!charging.is_dry_run());

    assert_eq!(charging.charge("run_start", 1).await.unwrap(), 1);
    assert_eq!(charging.charge("server_checked", 3).await.unwrap(), 3);
    assert_eq!(
        charging.charge("surface_change_recorded", 0).await.unwrap(),
        0
    );

    let charges = fake.state().charges.clone();
    let sent: Vec<(&str, u64)> = charges
        .iter()
        .map(|c| (c.event.as_str(), c.count))
        .collect();
    assert_eq!(sent, vec![("run_start", 1), ("server_checked", 3)]);
    for charge in &charges {
        let prefix = format!("{RUN_ID}-{}-", charge.event);
        let rest = charge.idempotency_key.strip_prefix(&prefix).unwrap();
        let (millis, random) = rest.split_once('-').unwrap();
        assert!(millis.parse::<u64>().is_ok(), "{}", charge.idempotency_key);
        assert_eq!(random.len(), 6, "{}", charge.idempotency_key);
    }
    assert_ne!(charges[0].idempotency_key, charges[1].idempotency_key);

    let requests = fake.requests_to(Method::POST, &format!("/v2/actor-runs/{RUN_ID}/charge"));
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].json(),
        json!({"eventName": "server_checked", "count": 3})
    );
    assert!(fake.requests_to(Method::GET, "/v2/actor-runs").is_empty());
}

#[tokio::test]
async fn a_charge_retried_after_429_and_500_is_charged_once_with_one_key() {
    let fake = FakeApify::start().await;
    let charging = platform_charging(&fake, "1").await;
    let path = format!("/v2/actor-runs/{RUN_ID}/charge");
    fake.fail_next(Method::POST, &path, 429, "rate-limit-exceeded", "slow down");
    fake.fail_next(Method::POST, &path, 500, "internal-server-error", "oops");

    assert_eq!(charging.charge("server_checked", 2).await.unwrap(), 2);

    let requests = fake.requests_to(Method::POST, &path);
    assert_eq!(requests.len(), 3);
    let keys: Vec<&str> = requests
        .iter()
        .map(|r| r.header("idempotency-key").unwrap())
        .collect();
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    let charges = fake.state().charges.clone();
    assert_eq!(charges.len(), 1);
    assert_eq!(
        (charges[0].event.as_str(), charges[0].count),
        ("server_checked", 2)
    );
    assert_eq!(charges[0].idempotency_key, keys[0]);
}

#[tokio::test]
async fn a_refused_charge_fails_at_once_with_the_api_message() {
    let fake = FakeApify::start().await;
    let charging = platform_charging(&fake, "1").await;
    let path = format!("/v2/actor-runs/{RUN_ID}/charge");
    fake.fail_next(
        Method::POST,
        &path,
        400,
        "invalid-charge-event",
        "Event run_start is not configured",
    );
    let err = charging
        .charge("run_start", 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid-charge-event"), "{err}");
    assert!(err.contains("Event run_start is not configured"), "{err}");
    assert_eq!(fake.requests_to(Method::POST, &path).len(), 1);
}

#[tokio::test]
async fn platform_events_and_unpriced_events_are_never_sent() {
    let fake = FakeApify::start().await;
    let charging = platform_charging(&fake, "1").await;
    assert_eq!(
        charging
            .charge("apify-default-dataset-item", 5)
            .await
            .unwrap(),
        5
    );
    assert_eq!(charging.charge("not_configured", 2).await.unwrap(), 2);
    assert_eq!(charging.count("apify-default-dataset-item"), 5);
    assert!(fake.state().requests.is_empty());
}

#[tokio::test]
async fn budget_covering_run_start_and_three_servers_affords_three() {
    let fake = FakeApify::start().await;
    // run_start 0.01 + 3 × server_checked 0.005 = 0.025 (and not quite a fourth server).
    // What is left after the three servers pays for this many changes of 0.002.
    for (max, changes_left) in [("0.025", 0), ("0.0299", 2)] {
        let charging = platform_charging(&fake, max).await;
        assert_eq!(charging.charge("run_start", 1).await.unwrap(), 1);
        assert_eq!(charging.affordable("server_checked"), 3, "max {max}");
        assert_eq!(charging.charge("server_checked", 5).await.unwrap(), 3);
        assert_eq!(charging.affordable("surface_change_recorded"), changes_left);
        assert_eq!(
            charging.charge("surface_change_recorded", 3).await.unwrap(),
            changes_left
        );
        assert_eq!(charging.affordable("surface_change_recorded"), 0);
    }
    let unlimited = platform_charging(&fake, "").await;
    assert_eq!(unlimited.affordable("server_checked"), u64::MAX);
    let zero = platform_charging(&fake, "0").await;
    assert_eq!(zero.affordable("run_start"), 0);
    assert_eq!(zero.charge("run_start", 1).await.unwrap(), 0);
}

#[tokio::test]
async fn pricing_comes_from_the_run_object_when_the_env_has_none() {
    let fake = FakeApify::start().await;
    fake.state().run = json!({
        "id": RUN_ID,
        "pricingInfo": serde_json::from_str::<serde_json::Value>(&pricing_info(SEED_PRICES)).unwrap(),
        "chargedEventCounts": {"run_start": 1},
        "options": {"maxTotalChargeUsd": 0.02}
    });
    let env = env_for(fake.env_vars());
    let api = ApiClient::new(&env).unwrap();
    let charging = Charging::init(&env, &api).await.unwrap();

    assert_eq!(
        fake.requests_to(Method::GET, &format!("/v2/actor-runs/{RUN_ID}"))
            .len(),
        1
    );
    assert!(charging.is_pay_per_event());
    assert_eq!(charging.count("run_start"), 1);
    // 0.02 − 0.01 already charged leaves two servers.
    assert_eq!(charging.affordable("server_checked"), 2);
    assert_eq!(
        charging.price("surface_change_recorded").to_string(),
        "0.002"
    );
}

#[tokio::test]
async fn a_free_actor_on_the_platform_charges_nothing_and_limits_nothing() {
    let fake = FakeApify::start().await;
    let env = env_for(with(
        fake.env_vars(),
        &[("ACTOR_MAX_TOTAL_CHARGE_USD", "0")],
    ));
    let api = ApiClient::new(&env).unwrap();
    let charging = Charging::init(&env, &api).await.unwrap();
    assert!(!charging.is_pay_per_event());
    assert_eq!(charging.affordable("server_checked"), u64::MAX);
    assert_eq!(charging.charge("server_checked", 4).await.unwrap(), 4);
    assert!(fake.requests_to(Method::POST, "/v2/actor-runs").is_empty());
}

#[tokio::test]
async fn local_runs_are_dry_runs_that_record_what_would_be_charged() {
    let pricing = pricing_info(SEED_PRICES);
    let env = env_for(
        [
            ("ACTOR_TEST_PAY_PER_EVENT", "1"),
            ("APIFY_ACTOR_PRICING_INFO", pricing.as_str()),
            ("ACTOR_MAX_TOTAL_CHARGE_USD", "0.02"),
            // Any API call would fail: nothing listens on port 9 of loopback.
            ("APIFY_API_BASE_URL", "http://127.0.0.1:9"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    );
    let api = ApiClient::new(&env).unwrap();
    let charging = Charging::init(&env, &api).await.unwrap();
    assert!(charging.is_dry_run());
    assert_eq!(charging.charge("run_start", 1).await.unwrap(), 1);
    assert_eq!(charging.charge("server_checked", 5).await.unwrap(), 2);

    let summary = charging.summary();
    assert_eq!(summary["dry_run"], json!(true));
    assert_eq!(summary["events"]["server_checked"]["count"], json!(2));
    assert_eq!(
        summary["events"]["server_checked"]["price_usd"],
        json!(0.005)
    );
    assert_eq!(
        summary["events"]["server_checked"]["total_usd"],
        json!(0.01)
    );
    assert_eq!(summary["total_usd"], json!(0.02));
    assert_eq!(summary["max_total_charge_usd"], json!(0.02));

    let plain = env_for(vec![]);
    let charging = Charging::init(&plain, &ApiClient::new(&plain).unwrap())
        .await
        .unwrap();
    assert!(!charging.is_pay_per_event());
    assert_eq!(charging.charge("server_checked", 3).await.unwrap(), 3);
    assert_eq!(
        charging.summary()["events"]["server_checked"]["count"],
        json!(3)
    );
}

/// One charge call of the property test: which event and how many.
fn charge_calls() -> impl Strategy<Value = Vec<(usize, u64)>> {
    prop::collection::vec((0..EVENTS.len(), 0u64..50), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the prices, the budget and the charges asked for, the booked events times
    /// their prices never exceed the maximum, and each charge books as many as still fit.
    #[test]
    fn charged_total_never_exceeds_the_maximum(
        prices in prop::array::uniform3(1u64..20_000_000),
        max in 0u64..200_000_000,
        calls in charge_calls(),
    ) {
        let price_text: Vec<String> = prices.iter().map(|n| Usd::from_nanos(*n).to_string()).collect();
        let named: Vec<(&str, &str)> = EVENTS.iter().copied().zip(price_text.iter().map(String::as_str)).collect();
        let pricing = pricing_info(&named);
        let max_text = Usd::from_nanos(max).to_string();
        let env = env_for(
            [
                ("ACTOR_TEST_PAY_PER_EVENT", "1"),
                ("APIFY_ACTOR_PRICING_INFO", pricing.as_str()),
                ("ACTOR_MAX_TOTAL_CHARGE_USD", max_text.as_str()),
                ("APIFY_API_BASE_URL", "http://127.0.0.1:9"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let charging = Charging::init(&env, &ApiClient::new(&env).unwrap()).await.unwrap();
            let mut spent: u128 = 0;
            for (event, count) in calls {
                let price = u128::from(prices[event]);
                let fits = (u128::from(max) - spent) / price;
                let expected = u128::from(count).min(fits) as u64;
                let charged = charging.charge(EVENTS[event], count).await.unwrap();
                prop_assert_eq!(charged, expected);
                spent += u128::from(charged) * price;
                prop_assert!(spent <= u128::from(max));
            }
            let booked: u128 = EVENTS
                .iter()
                .zip(prices)
                .map(|(event, price)| u128::from(charging.count(event)) * u128::from(price))
                .sum();
            prop_assert_eq!(booked, spent);
            prop_assert!(booked <= u128::from(max));
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn charging_is_shared_across_tasks_without_exceeding_the_budget() {
    let fake = FakeApify::start().await;
    let charging = std::sync::Arc::new(platform_charging(&fake, "0.05").await);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let charging = charging.clone();
            tokio::spawn(async move { charging.charge("server_checked", 1).await.unwrap() })
        })
        .collect();
    let mut charged = 0;
    for task in tasks {
        charged += task.await.unwrap();
    }
    // 0.05 / 0.005 = 10 servers, however the tasks interleave.
    assert_eq!(charged, 10);
    let sent: u64 = fake.state().charges.iter().map(|c| c.count).sum();
    assert_eq!(sent, 10);
}
