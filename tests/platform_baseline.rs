//! A stored surface that is damaged or gone never loses a change (issue 25, item 1): the
//! binary in platform mode against the recording fake API, MCP servers inside a network
//! namespace (see `platform_run.rs`).
//!
//! - a surface record the store answers 200 with but that cannot be read keeps the server's
//!   entry (`unavailable`, `BASELINE_UNREADABLE`), so the change is reported by the next run
//!   that can read it;
//! - a record that is gone (404) starts a new baseline with one `baseline_lost` row naming the
//!   tools added, removed and changed from the per-tool digests of the index.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/netns.rs"]
mod netns;
mod platform_fake;

use counting_mcp::{CountingMcp, surface, tool};
use netns::{PUBLIC_IP, in_namespace};
use platform_fake::{FakeApify, run_at_home};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const LEDGER: &str = "fleet";

/// Runs the Actor once against `fake` and returns the rows it pushed (exit code 0 asserted).
async fn run(fake: &FakeApify) -> Vec<Value> {
    let from = fake
        .state()
        .datasets
        .get(platform_fake::DATASET)
        .map_or(0, Vec::len);
    let output = run_at_home(BINARY, fake.env_vars()).await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    fake.state().datasets[platform_fake::DATASET][from..].to_vec()
}

fn put_input(fake: &FakeApify, servers: &[String]) {
    let input = json!({"servers": servers, "ledger_name": LEDGER});
    fake.put_input(&input);
}

/// The (store, key) of the one surface record of the ledger store.
fn surface_record(fake: &FakeApify) -> (String, String) {
    let state = fake.state();
    let store = state.named_stores["mcp-tool-surface-ledger"].clone();
    let keys: Vec<(String, String)> = state
        .records
        .keys()
        .filter(|(s, k)| *s == store && k.starts_with("surface-"))
        .cloned()
        .collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    keys[0].clone()
}

/// The ledger index as stored.
fn index(fake: &FakeApify) -> Value {
    let state = fake.state();
    let store = state.named_stores["mcp-tool-surface-ledger"].clone();
    serde_json::from_slice(&state.records[&(store, LEDGER.to_string())].0).unwrap()
}

fn of_type<'a>(rows: &'a [Value], record_type: &str) -> Vec<&'a Value> {
    rows.iter()
        .filter(|r| r["record_type"] == record_type)
        .collect()
}

#[test]
fn a_damaged_surface_record_keeps_the_entry_and_the_change_is_reported_later() {
    in_namespace(
        "a_damaged_surface_record_keeps_the_entry_and_the_change_is_reported_later",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            mcp.serve(
                "/a",
                surface("Alpha", "1", vec![tool("search", "Searches")]),
            );
            put_input(&fake, &[mcp.url("/a")]);
            run(&fake).await;
            let before = index(&fake);
            let record = surface_record(&fake);
            let good = fake.state().records[&record].clone();

            // The surface gains a tool while its record answers 200 with a truncated body.
            mcp.serve(
                "/a",
                surface(
                    "Alpha",
                    "1",
                    vec![tool("search", "Searches"), tool("fetch", "Fetches")],
                ),
            );
            let mut cut = good.clone();
            cut.0.truncate(cut.0.len() / 2);
            fake.state().records.insert(record.clone(), cut);
            let rows = run(&fake).await;
            let server = of_type(&rows, "server")[0];
            assert_eq!(server["ledger_status"], "unavailable", "{server}");
            assert_eq!(server["reason_code"], "BASELINE_UNREADABLE", "{server}");
            assert!(of_type(&rows, "change").is_empty());
            // Counted on its own, not as unreachable, and named in the status message.
            let summary = of_type(&rows, "summary")[0];
            assert_eq!(summary["servers_baseline_unreadable"], 1, "{summary}");
            assert_eq!(summary["servers_unreachable"], 0, "{summary}");
            let (status, _) = fake.state().status_messages.last().cloned().unwrap();
            assert!(
                status.contains("1 with an unreadable stored baseline"),
                "{status}"
            );
            let gets = fake
                .requests_to(axum::http::Method::GET, "/v2/key-value-stores/")
                .iter()
                .filter(|r| r.path.ends_with(&record.1))
                .count();
            assert!(gets >= 3, "the record was read {gets} times, not retried");
            let after = index(&fake);
            let url = mcp.url("/a");
            assert_eq!(
                after["servers"][&url], before["servers"][&url],
                "the entry was not kept as it was"
            );

            // Once the record reads again, the change is reported.
            fake.state().records.insert(record, good);
            let rows = run(&fake).await;
            let changes = of_type(&rows, "change");
            assert_eq!(changes.len(), 1, "{rows:?}");
            assert_eq!(changes[0]["change_class"], "tool_added");
            assert_eq!(changes[0]["tool_name"], "fetch");
        },
    );
}

#[test]
fn a_gone_surface_record_with_a_new_digest_is_one_baseline_lost_row() {
    in_namespace(
        "a_gone_surface_record_with_a_new_digest_is_one_baseline_lost_row",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            let a = "/a";
            let tools = vec![tool("search", "Searches"), tool("read", "Reads")];
            mcp.serve(a, surface("Alpha", "1", tools));
            put_input(&fake, &[mcp.url(a)]);
            run(&fake).await;

            // The record is gone, and meanwhile `read` went, `fetch` came, `search` changed.
            let record = surface_record(&fake);
            fake.state().records.remove(&record);
            let tools = vec![tool("search", "Searches the web"), tool("fetch", "Fetches")];
            mcp.serve(a, surface("Alpha", "1", tools));
            let rows = run(&fake).await;
            let server = of_type(&rows, "server")[0];
            assert_eq!(server["ledger_status"], "created", "{server}");
            assert_eq!(server["change_count"], 1, "{server}");
            let changes = of_type(&rows, "change");
            assert_eq!(changes.len(), 1, "{rows:?}");
            let lost = changes[0];
            assert_eq!(lost["change_class"], "baseline_lost");
            assert_eq!(lost["severity"], "high");
            assert_eq!(
                lost["details"],
                json!([
                    "tools added: fetch",
                    "tools removed: read",
                    "tools changed: search"
                ])
            );
            let summary = of_type(&rows, "summary")[0];
            assert_eq!(summary["baselines_lost"], 1, "{summary}");
            assert_eq!(summary["changes_total"], 1);
        },
    );
}
