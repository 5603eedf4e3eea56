//! The maximum total charge in whole local runs (dry-run charging with the pricing env):
//! servers beyond the budget are not contacted and keep their ledger entry, changes the budget
//! cannot pay for are deferred and reported again by the next run, and unusable targets and
//! unreachable servers are never charged.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/pricing.rs"]
mod pricing;
#[path = "support/sample_rows.rs"]
mod sample_rows;

use actor::{Rows, RunDir};
use counting_mcp::{CountingMcp, surface, tool};
use serde_json::{Value, json};

/// The local environment of a pay-per-event test run with maximum `max` (`None` = unlimited).
fn pricing_env(max: Option<&str>) -> Vec<(&str, &str)> {
    let mut vars = vec![
        ("ACTOR_TEST_PAY_PER_EVENT", "1"),
        (
            "APIFY_ACTOR_PRICING_INFO",
            pricing::SEED_PRICING_INFO.as_str(),
        ),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
    ];
    if let Some(max) = max {
        vars.push(("ACTOR_MAX_TOTAL_CHARGE_USD", max));
    }
    vars
}

async fn run(dir: &RunDir, input: &Value, max: Option<&str>) -> Rows {
    dir.run_with_env(input, None, &pricing_env(max))
        .await
        .unwrap_or_else(|e| panic!("the run failed: {e}"));
    Rows::of(dir)
}

fn event_count(summary: &Value, event: &str) -> u64 {
    summary["charges"]["events"][event]["count"]
        .as_u64()
        .unwrap_or_else(|| panic!("no count of {event} in {}", summary["charges"]))
}

fn entry(dir: &RunDir, url: &str) -> Value {
    dir.ledger("fleet")["servers"][url].clone()
}

fn one_tool(name: &str) -> Value {
    surface(name, "1", vec![tool("search", "Searches the index")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_for_three_of_five_servers_reads_exactly_three() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let paths = ["/s1", "/s2", "/s3", "/s4", "/s5"];
    for path in paths {
        mcp.serve(path, one_tool(path));
    }
    let urls: Vec<String> = paths.iter().map(|p| mcp.url(p)).collect();
    let input = json!({"servers": urls, "ledger_name": "fleet", "concurrency": 5});
    let dir = RunDir::new();

    // A first run without a maximum makes a baseline for all five.
    let first = run(&dir, &input, None).await;
    assert!(
        first
            .servers
            .iter()
            .all(|r| r["ledger_status"] == "created")
    );
    let kept_before: Vec<Value> = urls[3..].iter().map(|u| entry(&dir, u)).collect();
    mcp.reset_counts();

    // run_start 0.01 + 3 × server_checked 0.005 = 0.025.
    let rows = run(&dir, &input, Some("0.025")).await;
    sample_rows::keep("budget-exhausted", &dir.rows());

    for path in &paths[..3] {
        assert!(mcp.requests(path) > 0, "{path} was not read");
    }
    for path in &paths[3..] {
        assert_eq!(mcp.requests(path), 0, "{path} was read beyond the budget");
    }
    for url in &urls[..3] {
        assert_eq!(rows.server(url)["ledger_status"], "compared", "{url}");
    }
    for (url, before) in urls[3..].iter().zip(&kept_before) {
        let row = rows.server(url);
        assert_eq!(row["reason_code"], "BUDGET_EXHAUSTED", "{url}");
        assert_eq!(row["ok"], false);
        assert_eq!(row["previous_tool_digest"], before["tool_digest"]);
        assert_eq!(&entry(&dir, url), before, "the entry of {url} changed");
    }
    assert_eq!(event_count(&rows.summary, "run_start"), 1);
    assert_eq!(event_count(&rows.summary, "server_checked"), 3);
    assert_eq!(event_count(&rows.summary, "surface_change_recorded"), 0);
    assert_eq!(rows.summary["charges"]["total_usd"], json!(0.025));
    assert_eq!(
        rows.summary["charges"]["max_total_charge_usd"],
        json!(0.025)
    );
    assert_eq!(rows.summary["charges"]["dry_run"], true);
    assert_eq!(rows.summary["charges"]["pay_per_event"], true);
    assert_eq!(
        rows.summary["charges"]["events"]["server_checked"]["price_usd"],
        json!(0.005)
    );
    assert_eq!(dir.output()["charges"], rows.summary["charges"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_the_budget_cannot_pay_for_are_deferred_and_reported_next_time() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    mcp.serve("/changing", one_tool("Changing"));
    mcp.serve("/steady", one_tool("Steady"));
    let (changing, steady) = (mcp.url("/changing"), mcp.url("/steady"));
    let input = json!({
        "servers": [changing, steady],
        "ledger_name": "fleet",
        "alert_on": ["tool_added"],
    });
    let dir = RunDir::new();
    run(&dir, &input, None).await;
    let baseline = entry(&dir, &changing);

    // Two tools appear: two change rows at 0.002 each.
    mcp.serve(
        "/changing",
        surface(
            "Changing",
            "1",
            vec![
                tool("search", "Searches the index"),
                tool("fetch", "Fetches a page"),
                tool("list", "Lists pages"),
            ],
        ),
    );
    // run_start + two servers + one change: the second change does not fit.
    let rows = run(&dir, &input, Some("0.022")).await;
    sample_rows::keep("budget-deferred", &dir.rows());
    let row = rows.server(&changing);
    assert_eq!(row["ledger_status"], "deferred");
    assert_eq!(row["change_count"], 0);
    assert!(
        row["error"].as_str().unwrap().contains("2 changes"),
        "{row}"
    );
    assert!(rows.changes.is_empty(), "{:?}", rows.changes);
    assert_eq!(entry(&dir, &changing), baseline, "a deferred entry changed");
    assert_eq!(rows.server(&steady)["ledger_status"], "compared");
    // The steady server is paid for; the deferred one is not, and no change is.
    assert_eq!(event_count(&rows.summary, "server_checked"), 1);
    assert_eq!(event_count(&rows.summary, "surface_change_recorded"), 0);
    // servers_checked counts what was paid for; the deferred server is counted apart.
    assert_eq!(rows.summary["servers_checked"], 1);
    assert_eq!(rows.summary["servers_deferred"], 1);

    // A budget that covers everything reports the same two changes.
    let rows = run(&dir, &input, Some("1")).await;
    sample_rows::keep("budget-changes", &dir.rows());
    let row = rows.server(&changing);
    assert_eq!(row["ledger_status"], "compared");
    assert_eq!(row["change_count"], 2);
    let mut added: Vec<String> = rows
        .changes_of(&changing)
        .iter()
        .map(|c| {
            assert_eq!(c["change_class"], "tool_added");
            c["tool_name"].as_str().unwrap().to_string()
        })
        .collect();
    added.sort_unstable();
    assert_eq!(added, ["fetch", "list"]);
    assert_eq!(event_count(&rows.summary, "server_checked"), 2);
    assert_eq!(event_count(&rows.summary, "surface_change_recorded"), 2);
    assert_ne!(entry(&dir, &changing), baseline);
}

/// Every server that is read and recorded (`created` or `compared`) is paid for: the changes
/// of one server never use up the budget set aside for the servers still being read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_compared_server_is_charged_even_when_another_has_changes() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    mcp.serve("/changing", one_tool("Changing"));
    mcp.serve("/steady", one_tool("Steady"));
    let (changing, steady) = (mcp.url("/changing"), mcp.url("/steady"));
    let input = json!({
        "servers": [changing, steady],
        "ledger_name": "fleet",
        "alert_on": ["tool_added"],
        "concurrency": 1,
    });
    let dir = RunDir::new();
    run(&dir, &input, None).await;
    mcp.serve(
        "/changing",
        surface(
            "Changing",
            "1",
            vec![
                tool("search", "Searches the index"),
                tool("fetch", "Fetches a page"),
            ],
        ),
    );
    // run_start + two servers: the change fits only by taking the steady server's share.
    let rows = run(&dir, &input, Some("0.02")).await;
    let compared = rows
        .servers
        .iter()
        .filter(|r| matches!(r["ledger_status"].as_str(), Some("created" | "compared")))
        .count() as u64;
    assert_eq!(rows.server(&changing)["ledger_status"], "deferred");
    assert_eq!(rows.server(&steady)["ledger_status"], "compared");
    assert_eq!(event_count(&rows.summary, "server_checked"), compared);
    assert_eq!(
        event_count(&rows.summary, "surface_change_recorded"),
        rows.changes.len() as u64
    );
    assert_eq!(rows.summary["charges"]["total_usd"], json!(0.015));

    // With the change paid for as well, both are compared and every event is charged.
    let rows = run(&dir, &input, Some("0.022")).await;
    assert_eq!(rows.server(&changing)["ledger_status"], "compared");
    assert_eq!(rows.changes.len(), 1);
    assert_eq!(event_count(&rows.summary, "server_checked"), 2);
    assert_eq!(event_count(&rows.summary, "surface_change_recorded"), 1);
    assert_eq!(rows.summary["charges"]["total_usd"], json!(0.022));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_targets_and_unreachable_servers_are_never_charged() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    mcp.serve("/ok", one_tool("Readable"));
    // A port this test holds without listening: connections are refused, and no other
    // process can take the port while the test runs.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind(([127, 0, 0, 1], 0).into()).unwrap();
    let closed = format!("http://127.0.0.1:{}/mcp", held.local_addr().unwrap().port());
    let input = json!({
        "servers": [
            "http://169.254.169.254/mcp",
            "ftp://example.com/mcp",
            mcp.url("/missing"),
            closed,
            mcp.url("/ok"),
        ],
        "ledger_name": "fleet",
    });
    let dir = RunDir::new();

    let rows = run(&dir, &input, None).await;
    sample_rows::keep("budget-unusable", &dir.rows());
    let codes: Vec<&str> = rows
        .servers
        .iter()
        .map(|r| r["reason_code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "BLOCKED_TARGET",
            "BLOCKED_TARGET",
            "HTTP_ERROR",
            "CONNECT_FAIL",
            "OK"
        ]
    );
    assert_eq!(event_count(&rows.summary, "run_start"), 1);
    assert_eq!(event_count(&rows.summary, "server_checked"), 1);
    assert_eq!(rows.summary["charges"]["total_usd"], json!(0.015));

    // Blocked entries do not take a place under the cap: a budget for one server reads the
    // first usable target.
    let input = json!({
        "servers": ["http://169.254.169.254/mcp", "ftp://example.com/mcp", mcp.url("/ok")],
        "ledger_name": "fleet",
    });
    mcp.reset_counts();
    let rows = run(&dir, &input, Some("0.015")).await;
    assert!(mcp.requests("/ok") > 0);
    assert_eq!(rows.server(&mcp.url("/ok"))["ledger_status"], "compared");
    assert_eq!(event_count(&rows.summary, "server_checked"), 1);

    // A budget that does not even cover run_start reads nothing and charges nothing.
    mcp.reset_counts();
    let rows = run(&dir, &input, Some("0.004")).await;
    assert_eq!(mcp.requests("/ok"), 0);
    assert_eq!(
        rows.server(&mcp.url("/ok"))["reason_code"],
        "BUDGET_EXHAUSTED"
    );
    assert_eq!(rows.summary["charges"]["total_usd"].as_f64(), Some(0.0));
}
