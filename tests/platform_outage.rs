//! The Apify API misbehaving (issue 25, item 3): `Retry-After` is honoured on every route, and
//! a charge endpoint that keeps failing is given up on after a few calls, so the run finishes
//! with its rows and ledger, unpaid. The binary in platform mode against the recording fake,
//! MCP servers inside a network namespace (see `platform_run.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/netns.rs"]
mod netns;
mod platform_fake;
#[path = "support/pricing.rs"]
mod pricing;

use std::time::Duration;

use axum::http::Method;
use counting_mcp::{CountingMcp, surface, tool};
use mcp_surface_ledger::platform::{BREAKER_THRESHOLD, CHARGE_TRIES};
use netns::{PUBLIC_IP, in_namespace};
use platform_fake::{DATASET, DEFAULT_STORE, FakeApify, RUN_ID, run_at_home};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

fn put_input(fake: &FakeApify, servers: &[String]) {
    let input = json!({"servers": servers, "ledger_name": "fleet", "concurrency": 20});
    fake.put_input(&input);
}

/// A platform run with seed-000 pay-per-event pricing from the environment.
async fn run_paid(fake: &FakeApify) -> std::process::Output {
    let mut vars = fake.env_vars();
    vars.push((
        "APIFY_ACTOR_PRICING_INFO".into(),
        pricing::SEED_PRICING_INFO.clone(),
    ));
    vars.push(("APIFY_CHARGED_ACTOR_EVENT_COUNTS".into(), "{}".into()));
    vars.push(("ACTOR_MAX_TOTAL_CHARGE_USD".into(), "100".into()));
    run_at_home(BINARY, vars).await
}

#[test]
fn a_permanent_charge_outage_is_given_up_on_and_the_run_finishes_unpaid() {
    in_namespace(
        "a_permanent_charge_outage_is_given_up_on_and_the_run_finishes_unpaid",
        async {
            const SERVERS: usize = 200;
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            let urls: Vec<String> = (0..SERVERS)
                .map(|i| {
                    let path = format!("/s{i}");
                    mcp.serve(&path, surface("S", "1", vec![tool("search", "Searches")]));
                    mcp.url(&path)
                })
                .collect();
            put_input(&fake, &urls);
            let charge_path = format!("/v2/actor-runs/{RUN_ID}/charge");
            fake.fail_always(Method::POST, &charge_path, 503);

            let output = run_paid(&fake).await;
            assert_eq!(
                output.status.code(),
                Some(0),
                "stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            // Each of the first few charges is tried CHARGE_TRIES times; then none is sent.
            let calls = fake.requests_to(Method::POST, &charge_path).len();
            assert_eq!(calls, (BREAKER_THRESHOLD * CHARGE_TRIES) as usize);
            // The rows and the ledger are there; the summary says what was not sent.
            let rows: Vec<Value> = fake.state().datasets[DATASET].clone();
            let summary = rows.iter().find(|r| r["record_type"] == "summary").unwrap();
            assert_eq!(summary["servers_checked"], SERVERS, "{summary}");
            assert_eq!(summary["charges"]["not_sent"]["run_start"], 1, "{summary}");
            assert_eq!(
                summary["charges"]["not_sent"]["server_checked"], SERVERS,
                "{summary}"
            );
            let store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
            assert!(fake.state().records.contains_key(&(store, "fleet".into())));
        },
    );
}

#[test]
fn retry_after_is_waited_for_before_the_retry() {
    in_namespace("retry_after_is_waited_for_before_the_retry", async {
        let fake = FakeApify::start().await;
        let mcp = CountingMcp::start(PUBLIC_IP).await;
        mcp.serve("/a", surface("A", "1", vec![tool("search", "Searches")]));
        put_input(&fake, &[mcp.url("/a")]);
        let input_path = format!("/v2/key-value-stores/{DEFAULT_STORE}/records/INPUT");
        fake.rate_limit_next(Method::GET, &input_path, "2");
        let charge_path = format!("/v2/actor-runs/{RUN_ID}/charge");
        fake.rate_limit_next(Method::POST, &charge_path, "1");

        let output = run_paid(&fake).await;
        assert_eq!(output.status.code(), Some(0));
        // The fake measures the gap between the refused request and its retry (the retry base
        // delay of these runs is 1 ms, so only Retry-After explains a wait).
        for (method, path, wait) in [
            (Method::GET, &input_path, Duration::from_secs(2)),
            (Method::POST, &charge_path, Duration::from_secs(1)),
        ] {
            let requests = fake.requests_to(method, path);
            assert!(requests.len() >= 2, "{path} was not retried");
            let gap = requests[1].at - requests[0].at;
            assert!(
                gap >= wait - Duration::from_millis(50),
                "{path}: retried after {gap:?}, asked to wait {wait:?}"
            );
        }
    });
}
