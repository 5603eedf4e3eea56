//! A run never looks clean when it is not: the binary's exit code, its final status line and its
//! per-server log lines name a failed fleet source, servers not read for the budget and
//! unusable entries.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/counting_mcp.rs"]
mod counting_mcp;
#[path = "support/pricing.rs"]
mod pricing;

use actor::{Rows, RunDir};
use counting_mcp::{CountingMcp, surface, tool};
use serde_json::json;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The binary for `input` in `dir`, loopback allowed, with local pay-per-event charging and,
/// when given, a maximum total charge in USD.
fn priced_run(dir: &RunDir, input: &serde_json::Value, max: Option<&str>) -> std::process::Command {
    let mut command = dir.command(input, &["--allow-private-targets"]);
    command.envs([
        ("ACTOR_TEST_PAY_PER_EVENT", "1"),
        (
            "APIFY_ACTOR_PRICING_INFO",
            pricing::SEED_PRICING_INFO.as_str(),
        ),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
    ]);
    if let Some(max) = max {
        command.env("ACTOR_MAX_TOTAL_CHARGE_USD", max);
    }
    command
}

/// The log lines about one server.
fn lines_about<'a>(log: &'a str, url: &str) -> Vec<&'a str> {
    log.lines()
        .filter(|line| line.contains(&format!("server={url} ")))
        .collect()
}

#[test]
fn a_registry_that_cannot_be_read_with_nothing_checked_exits_3_and_says_so() {
    let dir = RunDir::new();
    // A loopback port nothing listens on: the registry search fails at once.
    let input = json!({"registry": {"base_url": "http://127.0.0.1:9/", "search": "x"}});
    let output = dir.run_binary(&input, &[]);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{log}");
    assert!(log.contains("MCP Registry not read"), "{log}");
    assert!(log.contains("no server was checked"), "{log}");
    let summary = dir.output();
    assert!(summary["registry_error"].is_string(), "{summary}");
    assert_eq!(summary["servers_checked"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_gets_a_log_line_and_never_contacted_ones_have_no_listing() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    for path in ["/s1", "/s2"] {
        mcp.serve(path, surface(path, "1", vec![tool("search", "Searches")]));
    }
    let (first, second) = (mcp.url("/s1"), mcp.url("/s2"));
    let blocked = "http://169.254.169.254/mcp";
    let input = json!({"servers": [first, blocked, second], "ledger_name": "fleet"});
    let dir = RunDir::new();
    // The charge budget pays for the run and one server: the second is not read.
    let mut command = priced_run(&dir, &input, Some("0.015"));
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{log}");

    let rows = Rows::of(&dir);
    let over = rows.server(&second);
    assert_eq!(over["reason_code"], "BUDGET_EXHAUSTED", "{over}");
    assert!(over["listing"].is_null(), "never contacted: {over}");

    for (url, verdict) in [
        (first.as_str(), "verdict=\"OK\""),
        (blocked, "verdict=\"BLOCKED_TARGET\""),
        (second.as_str(), "verdict=\"BUDGET_EXHAUSTED\""),
    ] {
        let lines = lines_about(&log, url);
        assert_eq!(lines.len(), 1, "one line about {url}:\n{log}");
        assert!(lines[0].contains(verdict), "{url}: {}", lines[0]);
    }
    let status = log.lines().last().unwrap_or_default();
    assert!(
        status.contains("3 servers, 0 servers changed, 0 high-severity changes")
            && status.contains("1 blocked")
            && status.contains("1 not read (maximum total charge reached)"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_server_logs_that_its_changes_wait_and_the_status_names_it() {
    let mcp = CountingMcp::start("127.0.0.1").await;
    let one = surface("Changing", "1", vec![tool("search", "Searches")]);
    mcp.serve("/changing", one);
    let url = mcp.url("/changing");
    let input = json!({"servers": [url], "ledger_name": "fleet", "alert_on": ["tool_added"]});
    let dir = RunDir::new();
    let mut first = priced_run(&dir, &input, None);
    let output = tokio::task::spawn_blocking(move || first.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // Two tools appear; the budget pays for the run and the server, not for its changes.
    let three = vec![
        tool("search", "Searches"),
        tool("fetch", "Fetches a page"),
        tool("list", "Lists pages"),
    ];
    mcp.serve("/changing", surface("Changing", "1", three));
    let mut second = priced_run(&dir, &input, Some("0.015"));
    let output = tokio::task::spawn_blocking(move || second.output().unwrap())
        .await
        .unwrap();
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{log}");
    assert_eq!(Rows::of(&dir).server(&url)["ledger_status"], "deferred");
    let lines = lines_about(&log, &url);
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("verdict=\"DEFERRED\"") && !lines[0].contains("verdict=\"OK\""),
        "{}",
        lines[0]
    );
    let status = log.lines().last().unwrap_or_default();
    assert!(
        status.contains("1 deferred (changes kept for the next run)"),
        "{status}"
    );
}
