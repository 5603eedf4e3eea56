//! The binary in platform mode (`APIFY_IS_AT_HOME=1`) against the recording fake of the Apify
//! API, with its MCP servers on a public address inside a network namespace the test creates.
//!
//! Each test re-executes itself under `unshare -n` (see `support/netns.rs`); the fake API
//! listens on the namespace's 127.0.0.1, the MCP servers on its 11.0.0.1.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/apify_secrets.rs"]
mod apify_secrets;
#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/netns.rs"]
mod netns;
mod platform_fake;
#[path = "support/pricing.rs"]
mod pricing;
#[path = "support/sample_rows.rs"]
mod sample_rows;

use std::process::Output;
use std::time::Duration;

use axum::http::Method;
use counting_mcp::{CountingMcp, surface, tool};
use netns::{PUBLIC_IP, in_namespace};
use platform_fake::{DATASET, DEFAULT_STORE, FakeApify, RUN_ID, run_at_home};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

/// Prices of seed 000 in the SDK's `APIFY_ACTOR_PRICING_INFO` shape, as a run object holds them.
fn pricing() -> Value {
    serde_json::from_str(&pricing::SEED_PRICING_INFO).unwrap()
}

/// The environment of a platform run; pricing comes from the env when `env_pricing` is set,
/// otherwise from the run object the fake serves.
fn platform_env(fake: &FakeApify, env_pricing: bool) -> Vec<(String, String)> {
    let mut vars = fake.env_vars();
    vars.push(("ACTOR_MAX_TOTAL_CHARGE_USD".into(), "5".into()));
    if env_pricing {
        vars.push((
            "APIFY_ACTOR_PRICING_INFO".into(),
            pricing::SEED_PRICING_INFO.clone(),
        ));
        vars.push(("APIFY_CHARGED_ACTOR_EVENT_COUNTS".into(), "{}".into()));
    }
    vars
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A closed port on the public address: connecting is refused.
fn closed_url() -> String {
    let listener = std::net::TcpListener::bind((PUBLIC_IP, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://{PUBLIC_IP}:{port}/mcp")
}

/// The position of the single request matching `f`, panicking if there is not exactly one.
fn only_position(
    requests: &[platform_fake::Recorded],
    what: &str,
    f: impl Fn(&platform_fake::Recorded) -> bool,
) -> usize {
    let found: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| f(r))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(found.len(), 1, "{what}: {found:?}");
    found[0]
}

/// `<runId>-<event>-<millis>-<6 alphanumerics>`.
fn assert_key_shape(key: &str, event: &str) {
    let rest = key
        .strip_prefix(&format!("{RUN_ID}-{event}-"))
        .unwrap_or_else(|| panic!("{key} does not start with the run id and {event}"));
    let (millis, random) = rest.split_once('-').unwrap();
    assert!(millis.parse::<u64>().unwrap() > 1_600_000_000_000, "{key}");
    assert_eq!(random.len(), 6, "{key}");
    assert!(random.chars().all(|c| c.is_ascii_alphanumeric()), "{key}");
}

/// Checks the requests of one run (`requests` are only that run's): INPUT first, one
/// get-or-create of the ledger store before its first use, surface records and dataset pushes
/// before the single ledger PUT, the servers' status record after it, the terminal status
/// message last. Returns the pushed rows.
fn assert_run_order(requests: &[platform_fake::Recorded], ledger_store: &str) -> Vec<Value> {
    assert_eq!(requests[0].method, Method::GET);
    assert_eq!(
        requests[0].path,
        format!("/v2/key-value-stores/{DEFAULT_STORE}/records/INPUT")
    );
    let create = only_position(requests, "get-or-create of the ledger store", |r| {
        r.method == Method::POST && r.path == "/v2/key-value-stores"
    });
    assert_eq!(
        requests[create].query.as_deref(),
        Some("name=mcp-tool-surface-ledger")
    );
    let ledger_prefix = format!("/v2/key-value-stores/{ledger_store}/records/");
    let first_ledger_use = requests
        .iter()
        .position(|r| r.path.starts_with(&ledger_prefix))
        .unwrap();
    assert!(create < first_ledger_use);
    let ledger_put = only_position(requests, "PUT of the ledger index", |r| {
        r.method == Method::PUT && r.path == format!("{ledger_prefix}fleet")
    });
    let pushes: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.path == format!("/v2/datasets/{DATASET}/items"))
        .map(|(i, r)| {
            assert_eq!(r.method, Method::POST);
            i
        })
        .collect();
    assert!(!pushes.is_empty());
    assert!(
        pushes.iter().all(|&i| i < ledger_put),
        "a push after the ledger PUT"
    );
    for (i, r) in requests.iter().enumerate() {
        let key = r.path.strip_prefix(&ledger_prefix).unwrap_or_default();
        if r.method == Method::PUT && mcp_surface_ledger::sweep::is_surface_record(key) {
            assert!(
                i < ledger_put,
                "surface record {} after the ledger PUT",
                r.path
            );
        }
    }
    // The insight cache is read once and written at most once, before the index.
    let insight = format!("{ledger_prefix}insight.fleet");
    only_position(requests, "GET of the insight cache", |r| {
        r.method == Method::GET && r.path == insight
    });
    let insight_puts: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].method == Method::PUT && requests[i].path == insight)
        .collect();
    assert!(insight_puts.len() <= 1, "insight PUTs at {insight_puts:?}");
    assert!(insight_puts.iter().all(|&i| i < ledger_put));
    // The servers' status record: written once, after the index it describes.
    let status = only_position(requests, "PUT of the status record", |r| {
        r.method == Method::PUT && r.path == format!("{ledger_prefix}status.fleet")
    });
    assert!(ledger_put < status, "the status record before the index");
    let status_body = requests[status].json();
    assert_eq!(status_body["ledger_name"], "fleet");
    assert!(!status_body["servers"].as_array().unwrap().is_empty());
    let last = requests.last().unwrap();
    assert_eq!(
        (last.method.clone(), last.path.as_str()),
        (Method::PUT, format!("/v2/actor-runs/{RUN_ID}").as_str())
    );
    assert_eq!(last.json()["isStatusMessageTerminal"], true);
    pushes
        .iter()
        .flat_map(|&i| match requests[i].json() {
            Value::Array(items) => items,
            other => panic!("a push body is not an array: {other}"),
        })
        .collect()
}

/// The charges the fake accepted since `from`, as (event, count) with their keys checked.
fn charges_since(fake: &FakeApify, from: usize) -> Vec<(String, u64)> {
    let charges = fake.state().charges[from..].to_vec();
    let mut keys: Vec<&str> = charges.iter().map(|c| c.idempotency_key.as_str()).collect();
    for charge in &charges {
        assert_key_shape(&charge.idempotency_key, &charge.event);
    }
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), charges.len(), "an idempotency key was reused");
    charges.into_iter().map(|c| (c.event, c.count)).collect()
}

fn count_of(charges: &[(String, u64)], event: &str) -> (usize, u64) {
    let matching: Vec<u64> = charges
        .iter()
        .filter(|(e, _)| e == event)
        .map(|(_, c)| *c)
        .collect();
    (matching.len(), matching.iter().sum())
}

#[test]
fn platform_run_reads_input_writes_rows_and_ledger_and_charges_every_event() {
    in_namespace(
        "platform_run_reads_input_writes_rows_and_ledger_and_charges_every_event",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            mcp.serve(
                "/a",
                surface("Alpha", "1", vec![tool("search", "Searches")]),
            );
            mcp.serve(
                "/b",
                surface("Beta", "1", vec![tool("read", "Reads a page")]),
            );
            let (a, b, closed) = (mcp.url("/a"), mcp.url("/b"), closed_url());
            let blocked = "http://127.0.0.1:9/mcp".to_string();
            fake.put_input(&json!({
                "servers": [a, b, closed, blocked],
                "ledger_name": "fleet",
                "alert_on": ["tool_added", "server_version_changed"],
            }));

            // First run: every readable server gets a baseline.
            let output = run_at_home(BINARY, platform_env(&fake, true)).await;
            assert_exit(&output, 0);
            let requests = fake.state().requests.clone();
            let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
            let rows = assert_run_order(&requests, &ledger_store);
            assert!(mcp.requests("/a") > 0 && mcp.requests("/b") > 0);
            let kinds: Vec<(&str, &str, &str)> = rows
                .iter()
                .map(|r| {
                    (
                        r["record_type"].as_str().unwrap(),
                        r["server_url"].as_str().unwrap_or(""),
                        r["reason_code"].as_str().unwrap_or(""),
                    )
                })
                .collect();
            assert_eq!(
                kinds,
                [
                    ("server", a.as_str(), "OK"),
                    ("server", b.as_str(), "OK"),
                    ("server", closed.as_str(), "CONNECT_FAIL"),
                    ("server", blocked.as_str(), "BLOCKED_TARGET"),
                    ("summary", "", ""),
                ]
            );
            let summary = rows.last().unwrap();
            assert_eq!(summary["charges"]["dry_run"], false);
            let charges = charges_since(&fake, 0);
            assert_eq!(charges[0], ("run_start".to_string(), 1));
            assert_eq!(count_of(&charges, "run_start"), (1, 1));
            assert_eq!(count_of(&charges, "server_checked"), (2, 2));
            assert_eq!(count_of(&charges, "surface_change_recorded"), (0, 0));
            let messages = fake.state().status_messages.clone();
            assert_eq!(
                messages.last().unwrap(),
                &(
                    "4 servers, 0 servers changed, 0 high-severity changes, 1 unreachable, 1 blocked".to_string(),
                    true
                )
            );
            let output_record =
                fake.state().records[&(DEFAULT_STORE.to_string(), "OUTPUT".into())].clone();
            let output_json: Value = serde_json::from_slice(&output_record.0).unwrap();
            assert_eq!(&output_json, summary);

            // Second run: Alpha gains a tool, Beta a version; one change row each.
            mcp.serve(
                "/a",
                surface(
                    "Alpha",
                    "1",
                    vec![tool("search", "Searches"), tool("fetch", "Fetches a page")],
                ),
            );
            mcp.serve(
                "/b",
                surface("Beta", "2", vec![tool("read", "Reads a page")]),
            );
            let from_request = fake.state().requests.len();
            let from_charge = fake.state().charges.len();
            let from_message = fake.state().status_messages.len();
            let output = run_at_home(BINARY, platform_env(&fake, true)).await;
            assert_exit(&output, 0);
            let requests = fake.state().requests[from_request..].to_vec();
            let rows = assert_run_order(&requests, &ledger_store);
            sample_rows::keep("platform-run", &rows);
            let changes: Vec<&Value> = rows
                .iter()
                .filter(|r| r["record_type"] == "change")
                .collect();
            assert_eq!(changes.len(), 2);
            assert_eq!(
                rows[1]["record_type"], "change",
                "a change row follows its server row"
            );
            assert_eq!(rows[1]["server_url"], a.as_str());
            let charges = charges_since(&fake, from_charge);
            assert_eq!(count_of(&charges, "run_start"), (1, 1));
            assert_eq!(count_of(&charges, "server_checked"), (2, 2));
            // One charge per server that has change rows, its count that server's rows.
            assert_eq!(count_of(&charges, "surface_change_recorded"), (2, 2));
            let summary = rows.last().unwrap();
            assert_eq!(summary["changes_total"], 2);
            assert_eq!(
                summary["charges"]["events"]["surface_change_recorded"]["count"],
                2
            );
            let messages = fake.state().status_messages[from_message..].to_vec();
            let (last, terminal) = messages.last().unwrap();
            assert!(*terminal);
            assert!(
                last.starts_with("4 servers, 2 servers changed, ")
                    && last.ends_with("1 unreachable, 1 blocked"),
                "{last}"
            );
            assert!(messages[..messages.len() - 1].iter().all(|(_, t)| !t));
        },
    );
}

/// `exit_nonzero_on` on the platform: a run that meets a condition writes every row, OUTPUT and
/// the ledger, then exits non-zero (which the platform shows as a failed run, so its own
/// notifications fire), its last status message saying why.
#[test]
fn platform_run_that_meets_an_exit_condition_fails_after_writing_everything_and_says_why() {
    in_namespace(
        "platform_run_that_meets_an_exit_condition_fails_after_writing_everything_and_says_why",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            mcp.serve(
                "/a",
                surface("Alpha", "1", vec![tool("search", "Searches")]),
            );
            let (a, closed) = (mcp.url("/a"), closed_url());
            let input = |asked: Value| json!({"servers": [a, closed], "ledger_name": "fleet", "exit_nonzero_on": asked});
            fake.put_input(&input(json!(["some_unreadable", "chain_not_intact"])));
            let output = run_at_home(BINARY, platform_env(&fake, true)).await;
            assert_exit(&output, 4);
            let requests = fake.state().requests.clone();
            let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
            let rows = assert_run_order(&requests, &ledger_store);
            let summary = rows.last().unwrap();
            assert_eq!(summary["record_type"], "summary");
            assert_eq!(summary["servers_unreachable"], 1);
            let output_record =
                fake.state().records[&(DEFAULT_STORE.to_string(), "OUTPUT".into())].clone();
            let output_json: Value = serde_json::from_slice(&output_record.0).unwrap();
            assert_eq!(&output_json, summary);
            let messages = fake.state().status_messages.clone();
            assert_eq!(
                messages.last().unwrap(),
                &(
                    "2 servers, 0 servers changed, 0 high-severity changes, 1 unreachable; exit \
                     code 4 for exit_nonzero_on: some_unreadable (1 unreachable)"
                        .to_string(),
                    true
                )
            );

            // Not asked: the same fleet is a succeeded run, as before.
            fake.put_input(&input(json!([])));
            let from_message = fake.state().status_messages.len();
            let output = run_at_home(BINARY, platform_env(&fake, true)).await;
            assert_exit(&output, 0);
            let messages = fake.state().status_messages[from_message..].to_vec();
            assert_eq!(
                messages.last().unwrap(),
                &(
                    "2 servers, 0 servers changed, 0 high-severity changes, 1 unreachable"
                        .to_string(),
                    true
                )
            );
        },
    );
}

#[test]
fn platform_run_charge_retried_after_429_and_500_is_charged_once() {
    in_namespace(
        "platform_run_charge_retried_after_429_and_500_is_charged_once",
        async {
            let fake = FakeApify::start().await;
            fake.state().run = json!({
                "id": RUN_ID,
                "pricingInfo": pricing(),
                "chargedEventCounts": {},
                "options": {"maxTotalChargeUsd": 1},
            });
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            mcp.serve(
                "/a",
                surface("Alpha", "1", vec![tool("search", "Searches")]),
            );
            fake.put_input(&json!({"servers": [mcp.url("/a")], "ledger_name": "fleet"}));
            let charge_path = format!("/v2/actor-runs/{RUN_ID}/charge");
            fake.fail_next(
                Method::POST,
                &charge_path,
                429,
                "rate-limit-exceeded",
                "slow down",
            );
            fake.fail_next(
                Method::POST,
                &charge_path,
                500,
                "internal-server-error",
                "oops",
            );

            let output = run_at_home(BINARY, platform_env(&fake, false)).await;
            assert_exit(&output, 0);

            let requests = fake.state().requests.clone();
            let run_object = only_position(&requests, "GET of the run object", |r| {
                r.method == Method::GET && r.path == format!("/v2/actor-runs/{RUN_ID}")
            });
            let attempts: Vec<(usize, String)> = requests
                .iter()
                .enumerate()
                .filter(|(_, r)| r.path == charge_path && r.json()["eventName"] == "run_start")
                .map(|(i, r)| (i, r.header("idempotency-key").unwrap().to_string()))
                .collect();
            assert_eq!(attempts.len(), 3, "429, 500, then success");
            assert!(run_object < attempts[0].0);
            assert!(attempts.iter().all(|(_, key)| *key == attempts[0].1));
            let charges = charges_since(&fake, 0);
            assert_eq!(
                charges,
                [
                    ("run_start".to_string(), 1),
                    ("server_checked".to_string(), 1)
                ]
            );
            assert_eq!(fake.state().charges[0].idempotency_key, attempts[0].1);
        },
    );
}

/// The lowered push limit of the chunking test (`LEDGER_API_MAX_PUSH_BYTES`).
const PUSH_LIMIT: usize = 128 * 1024;

/// A tool whose input schema carries a large default value (`size` bytes), so that an
/// `input_schema_changed` row is large while the surface stays cheap to analyse.
fn heavy_tool(marker: char, size: usize) -> Value {
    json!({
        "name": "export",
        "description": "Exports the records",
        "inputSchema": {"type": "object", "properties": {
            "template": {"type": "string", "default": marker.to_string().repeat(size)},
        }},
    })
}

#[test]
fn platform_run_reports_progress_and_pushes_large_runs_in_ordered_chunks() {
    in_namespace(
        "platform_run_reports_progress_and_pushes_large_runs_in_ordered_chunks",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            let big = ["/big1", "/big2", "/big3"];
            let serve_big = |marker: char| {
                for path in big {
                    mcp.serve(path, surface(path, "1", vec![heavy_tool(marker, 20_000)]));
                }
            };
            serve_big('a');
            mcp.serve(
                "/slow",
                surface("Slow", "1", vec![tool("search", "Searches")]),
            );
            let mut urls = vec![mcp.url("/slow")];
            urls.extend(big.iter().map(|p| mcp.url(p)));
            fake.put_input(&json!({
                "servers": urls,
                "ledger_name": "fleet",
                "alert_on": ["input_schema_changed"],
                "concurrency": 1,
            }));
            assert_exit(&run_at_home(BINARY, platform_env(&fake, true)).await, 0);

            // Every big schema changes (three rows of about 80 kB, more than one push of the
            // lowered limit can carry), and every run reports progress after its first server.
            serve_big('b');
            mcp.serve_after(
                "/slow",
                surface("Slow", "1", vec![tool("search", "Searches")]),
                Duration::from_millis(2_700),
            );
            let from_request = fake.state().requests.len();
            let from_message = fake.state().status_messages.len();
            let mut vars = platform_env(&fake, true);
            vars.push(("LEDGER_API_MAX_PUSH_BYTES".into(), PUSH_LIMIT.to_string()));
            assert_exit(&run_at_home(BINARY, vars).await, 0);

            let requests = fake.state().requests[from_request..].to_vec();
            let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
            let rows = assert_run_order(&requests, &ledger_store);
            let pushes: Vec<&platform_fake::Recorded> = requests
                .iter()
                .filter(|r| r.path == format!("/v2/datasets/{DATASET}/items"))
                .collect();
            assert!(pushes.len() >= 2, "{} pushes", pushes.len());
            assert!(pushes.iter().all(|p| p.body.len() <= PUSH_LIMIT));
            // In order: each server row, then its changes, the summary last.
            let mut expected_server = urls.iter();
            let mut current = String::new();
            for row in &rows[..rows.len() - 1] {
                match row["record_type"].as_str().unwrap() {
                    "server" => {
                        current = row["server_url"].as_str().unwrap().to_string();
                        assert_eq!(Some(&current), expected_server.next());
                    }
                    "change" => assert_eq!(row["server_url"], current.as_str()),
                    other => panic!("unexpected row {other}"),
                }
            }
            assert_eq!(rows.len(), 4 + 3 + 1);
            assert_eq!(rows.last().unwrap()["record_type"], "summary");
            assert_eq!(fake.state().datasets[DATASET].len(), 5 + 8);

            let messages = fake.state().status_messages[from_message..].to_vec();
            let progress: Vec<&String> = messages
                .iter()
                .filter(|(_, t)| !t)
                .map(|(m, _)| m)
                .collect();
            assert!(!progress.is_empty(), "no progress message: {messages:?}");
            for message in &progress {
                let rest = message.strip_prefix("Checked ").unwrap();
                let (done, rest) = rest.split_once("/4 servers, ").unwrap();
                assert!((1..=4).contains(&done.parse::<u32>().unwrap()), "{message}");
                assert!(
                    rest.ends_with(" changes") || rest.ends_with(" 1 change"),
                    "{message}"
                );
            }
            assert_eq!(
                messages.last().unwrap(),
                &(
                    "4 servers, 3 servers changed, 3 high-severity changes, 0 unreachable"
                        .to_string(),
                    true
                )
            );
        },
    );
}

#[test]
fn a_credential_never_reaches_the_apify_api() {
    in_namespace("a_credential_never_reaches_the_apify_api", async {
        let secret = "canary-apify-3c59dc048e8850243be8";
        let fake = FakeApify::start().await;
        let mcp = CountingMcp::start(PUBLIC_IP).await;
        mcp.serve(
            "/a",
            surface("Alpha", "1", vec![tool("search", "Searches")]),
        );
        let a = mcp.url("/a");
        let plain_origin = url::Url::parse(&a).unwrap().origin().ascii_serialization();

        // A credential for a public plain-http origin would cross the internet in cleartext:
        // the input is refused before anything is contacted or written.
        fake.put_input(&json!({
            "servers": [a],
            "ledger_name": "fleet",
            "server_credentials": [
                {"origin": plain_origin, "header": "Authorization", "value": format!("Bearer {secret}")}
            ],
        }));
        let output = run_at_home(BINARY, platform_env(&fake, true)).await;
        assert_exit(&output, 2);
        let printed = String::from_utf8_lossy(&output.stderr);
        assert!(printed.contains("travel in cleartext"), "{printed}");
        assert_eq!(mcp.requests("/a"), 0, "the server was contacted");
        assert!(fake.requests_to(Method::POST, "/v2/datasets").is_empty());

        // Over https the credential is accepted and bound to its origin: the https server
        // (this plain listener, so the handshake fails) is the only one it could be sent to,
        // the plain one is read anonymously, and the API never sees the value.
        let secure = a.replacen("http://", "https://", 1);
        let secure_origin = url::Url::parse(&secure)
            .unwrap()
            .origin()
            .ascii_serialization();
        fake.put_input(&json!({
            "servers": [a, secure],
            "ledger_name": "fleet",
            "server_credentials": [
                {"origin": secure_origin, "header": "Authorization", "value": format!("Bearer {secret}")}
            ],
        }));
        let output = run_at_home(BINARY, platform_env(&fake, true)).await;
        assert_exit(&output, 0);
        let requests = fake.state().requests.clone();
        let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
        let rows = assert_run_order(&requests, &ledger_store);
        assert_eq!(rows[0]["listing"], "anonymous", "{}", rows[0]);
        assert_eq!(rows[0]["ok"], true, "{}", rows[0]);
        assert_eq!(rows[1]["listing"], "authenticated", "{}", rows[1]);
        assert_eq!(rows[1]["ok"], false, "{}", rows[1]);
        for request in &requests {
            let headers = format!("{:?}", request.headers);
            let text = format!(
                "{} {:?} {headers} {}",
                request.path,
                request.query,
                String::from_utf8_lossy(&request.body)
            );
            assert!(
                !text.contains(secret),
                "the secret reached the API: {} {}",
                request.method,
                request.path
            );
        }
        for stream in [&output.stdout, &output.stderr] {
            assert!(!String::from_utf8_lossy(stream).contains(secret));
        }
    });
}

#[test]
fn an_input_encrypted_by_apify_is_decrypted_at_home() {
    if let Some(why) = apify_secrets::node_missing() {
        eprintln!("SKIP an_input_encrypted_by_apify_is_decrypted_at_home: {why}");
        return;
    }
    in_namespace("an_input_encrypted_by_apify_is_decrypted_at_home", async {
        let secret = "canary-encrypted-7d41e2";
        let fake = FakeApify::start().await;
        let mcp = CountingMcp::start(PUBLIC_IP).await;
        mcp.serve(
            "/a",
            surface("Alpha", "1", vec![tool("search", "Searches")]),
        );
        let a = mcp.url("/a");
        // The credential is for the https origin (a public plain-http one is refused): a run
        // that ends well proves it was decrypted and bound there.
        let secure = a.replacen("http://", "https://", 1);
        let origin = url::Url::parse(&secure)
            .unwrap()
            .origin()
            .ascii_serialization();
        let plain = json!({
            "servers": [a, secure],
            "ledger_name": "fleet",
            "server_credentials": [
                {"origin": origin, "header": "Authorization", "value": format!("Bearer {secret}")}
            ],
        });
        let sealed = apify_secrets::encrypt(&plain, "pkcs1-des3");
        fake.put_input(&sealed.input);

        // Without the right passphrase: input refused, only INPUT read and the status set.
        let mut vars = platform_env(&fake, true);
        vars.push((
            apify_secrets::KEY_FILE_VAR.into(),
            sealed.key_file_base64.clone(),
        ));
        vars.push((
            apify_secrets::PASSPHRASE_VAR.into(),
            "not-the-passphrase".into(),
        ));
        let output = run_at_home(BINARY, vars).await;
        assert_exit(&output, 2);
        assert!(String::from_utf8_lossy(&output.stderr).contains("server_credentials"));
        assert!(
            fake.state().named_stores.is_empty(),
            "the ledger store was opened"
        );
        assert!(fake.requests_to(Method::POST, "/v2/datasets").is_empty());

        // With it: the credential is decrypted and bound to its origin, the API never sees it.
        let from = fake.state().requests.len();
        let mut vars = platform_env(&fake, true);
        vars.push((
            apify_secrets::KEY_FILE_VAR.into(),
            sealed.key_file_base64.clone(),
        ));
        vars.push((
            apify_secrets::PASSPHRASE_VAR.into(),
            sealed.passphrase.clone(),
        ));
        let output = run_at_home(BINARY, vars).await;
        assert_exit(&output, 0);
        let requests = fake.state().requests[from..].to_vec();
        let ledger_store = fake.state().named_stores["mcp-tool-surface-ledger"].clone();
        let rows = assert_run_order(&requests, &ledger_store);
        assert_eq!(rows[0]["listing"], "anonymous", "{}", rows[0]);
        assert_eq!(rows[0]["ok"], true, "{}", rows[0]);
        assert_eq!(rows[1]["listing"], "authenticated", "{}", rows[1]);
        for request in &fake.state().requests {
            let text = format!(
                "{} {:?} {:?} {}",
                request.path,
                request.query,
                request.headers,
                String::from_utf8_lossy(&request.body)
            );
            assert!(
                !text.contains(secret),
                "the secret reached the API: {}",
                request.path
            );
        }
        for stream in [&output.stdout, &output.stderr] {
            assert!(!String::from_utf8_lossy(stream).contains(secret));
        }
    });
}
