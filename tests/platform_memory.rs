//! Oversized records never take a run down (issue 25, item 2): a 30 MB ledger index, insight
//! cache or surface record in the fake API's store is refused while it is read (records over
//! 16 MiB are foreign or damaged: the Actor writes none over 9 MiB), and the run's peak memory,
//! measured on the child process, stays under the Actor's `defaultMemoryMbytes`.
//!
//! Each record is made of tiny JSON values (`[0,0,0,…]`), the shape that costs most once parsed
//! into a generic tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/netns.rs"]
mod netns;
mod platform_fake;

use counting_mcp::{CountingMcp, surface, tool};
use netns::{PUBLIC_IP, in_namespace};
use platform_fake::{DATASET, DEFAULT_STORE, FakeApify, run_at_home_measured};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const LEDGER: &str = "fleet";
/// Size of the oversized records.
const HUGE: usize = 30 * 1024 * 1024;

/// `defaultMemoryMbytes` of `.actor/actor.json`, in KiB.
fn memory_limit_kib() -> u64 {
    let actor: Value =
        serde_json::from_str(&std::fs::read_to_string(".actor/actor.json").unwrap()).unwrap();
    actor["defaultMemoryMbytes"].as_u64().unwrap() * 1024
}

/// `{<head>, "pad": [0,0,…]}` of about [`HUGE`] bytes.
fn huge_json(head: &str) -> Vec<u8> {
    let mut bytes = format!("{{{head},\"pad\":[").into_bytes();
    while bytes.len() < HUGE {
        bytes.extend_from_slice(b"0,");
    }
    bytes.extend_from_slice(b"0]}");
    bytes
}

fn put_input(fake: &FakeApify, servers: &[String]) {
    let input = json!({"servers": servers, "ledger_name": LEDGER});
    fake.put_input(&input);
}

fn ledger_store(fake: &FakeApify) -> String {
    fake.state().named_stores["mcp-tool-surface-ledger"].clone()
}

/// Runs the Actor, checks its peak memory, and returns its exit code and standard error.
async fn run_measured(fake: &FakeApify, what: &str) -> (Option<i32>, String) {
    let (status, stderr, peak_kib) = run_at_home_measured(BINARY, fake.env_vars()).await;
    let limit = memory_limit_kib();
    println!("{what}: peak RSS {} MiB", peak_kib / 1024);
    assert!(
        peak_kib < limit,
        "{what}: peak RSS {peak_kib} KiB, the Actor's default memory is {limit} KiB\n{stderr}"
    );
    (status.code(), stderr)
}

#[test]
fn oversized_ledger_insight_and_surface_records_are_refused_within_memory() {
    in_namespace(
        "oversized_ledger_insight_and_surface_records_are_refused_within_memory",
        async {
            let fake = FakeApify::start().await;
            let mcp = CountingMcp::start(PUBLIC_IP).await;
            mcp.serve("/a", surface("A", "1", vec![tool("search", "Searches")]));
            put_input(&fake, &[mcp.url("/a")]);
            let (code, stderr) = run_measured(&fake, "first run").await;
            assert_eq!(code, Some(0), "{stderr}");
            let store = ledger_store(&fake);
            let key = |k: &str| (store.clone(), k.to_string());
            let index = fake.state().records[&key(LEDGER)].clone();
            let surface_key = fake
                .state()
                .records
                .keys()
                .find(|(s, k)| *s == store && k.starts_with("surface-"))
                .unwrap()
                .1
                .clone();

            // A huge surface record: the server is unavailable, its entry kept.
            mcp.serve(
                "/a",
                surface("A", "1", vec![tool("search", "Searches"), tool("b", "B")]),
            );
            let huge_surface = huge_json(r#""format":2,"identity":{},"tools":[]"#);
            fake.state()
                .records
                .insert(key(&surface_key), (huge_surface, "application/json".into()));
            let (code, stderr) = run_measured(&fake, "30 MB surface record").await;
            assert_eq!(code, Some(0), "{stderr}");
            let rows = fake.state().datasets[DATASET].clone();
            let row = rows
                .iter()
                .rev()
                .find(|r| r["record_type"] == "server")
                .unwrap();
            assert_eq!(row["reason_code"], "BASELINE_UNREADABLE", "{row}");
            assert!(
                row["error"].as_str().unwrap().contains("larger than"),
                "{row}"
            );
            let servers =
                |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap()["servers"].clone();
            assert_eq!(
                servers(&fake.state().records[&key(LEDGER)].0),
                servers(&index.0),
                "the entry was not kept"
            );

            // A huge insight cache is only a cache: the run goes on without it.
            let insight = format!("insight.{LEDGER}");
            let huge_insight = huge_json(r#""format":1,"computed_by":"x","surfaces":{}"#);
            fake.state()
                .records
                .insert(key(&insight), (huge_insight, "application/json".into()));
            let (code, stderr) = run_measured(&fake, "30 MB insight cache").await;
            assert_eq!(code, Some(0), "{stderr}");

            // A huge ledger index stops the run with a clear message, the record untouched.
            let huge_index = huge_json(
                r#""format":1,"ledger_name":"fleet","digest_algorithm":"sha256-jcs/1","updated_at":"2026-01-01T00:00:00Z","servers":{}"#,
            );
            fake.state()
                .records
                .insert(key(LEDGER), (huge_index.clone(), "application/json".into()));
            let (code, stderr) = run_measured(&fake, "30 MB ledger index").await;
            assert_eq!(code, Some(3), "{stderr}");
            assert!(stderr.contains("larger than"), "{stderr}");
            assert_eq!(fake.state().records[&key(LEDGER)].0, huge_index);
        },
    );
}

#[test]
fn an_oversized_input_is_refused_within_memory() {
    in_namespace("an_oversized_input_is_refused_within_memory", async {
        let fake = FakeApify::start().await;
        let input = (DEFAULT_STORE.to_string(), "INPUT".to_string());
        // Over the read cap (not even fetched whole), then over the INPUT cap (fetched, refused
        // before it is parsed).
        for (size, message) in [(HUGE, "larger than"), (6 * 1024 * 1024, "an input may be")] {
            let mut bytes = huge_json(r#""servers":[]"#);
            bytes.truncate(size);
            bytes.extend_from_slice(b"0]}");
            fake.state()
                .records
                .insert(input.clone(), (bytes, "application/json".into()));
            let (code, stderr) = run_measured(&fake, "oversized INPUT").await;
            assert_eq!(code, Some(2), "{stderr}");
            assert!(stderr.contains(message), "{size}: {stderr}");
        }
    });
}
