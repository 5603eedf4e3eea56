//! `notify` egress: a destination passes the target address policy (refused without a
//! connection), a redirect is never followed, and retries stop at the attempt limit and the
//! time allowed. Library-level: `notify::announce` with a client built as a run builds it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/receiver.rs"]
mod receiver;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use mcp_surface_ledger::net::{Client, TableLookup};
use mcp_surface_ledger::notify::{self, DeliveryPolicy, RunFacts};
use mcp_surface_ledger::report::{ChangeRow, SummaryRow};
use serde_json::json;

use receiver::{Receiver, secret_of};

fn sample_rows() -> (SummaryRow, Vec<ChangeRow>) {
    let row: ChangeRow = serde_json::from_value(json!({
        "server_url": "https://mcp.example.com/mcp",
        "change_class": "tool_added",
        "tool_name": "delete_repo",
        "field": "tool",
        "old_value_hash": null,
        "new_value_hash": null,
        "old_value": null,
        "new_value": {"name": "delete_repo"},
        "severity": "high",
        "compatibility": null,
        "details": [],
        "same_version": false,
        "renamed_to": null,
        "renamed_from": null,
        "observed_at": "2026-01-01T00:00:00Z",
    }))
    .unwrap();
    let rows = vec![row];
    (SummaryRow::tally(&[], &rows), rows)
}

#[tokio::test]
async fn a_private_or_metadata_destination_is_refused_without_a_connection() {
    // A listener that must never see a connection: the name resolves to it, but loopback is
    // refused by the public policy (no operator override here).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let lookup = TableLookup::new()
        .with("hooks.test", &["127.0.0.1".parse().unwrap()])
        .with("internal.test", &["10.1.2.3".parse().unwrap()]);
    let config = notify::client_config(Duration::from_secs(5), 100_000, false);
    let client = Client::with_lookup(config, Arc::new(lookup)).unwrap();
    assert_eq!(client.config().max_redirects, 0);
    let destinations = notify::parse_destinations(Some(&json!([
        {"url": format!("http://hooks.test:{port}/in"), "secret": secret_of(3)},
        {"url": format!("http://127.0.0.1:{port}/in"), "format": "slack"},
        {"url": "http://internal.test/in", "format": "discord"},
        {"url": "http://169.254.169.254/latest/meta-data", "format": "slack"},
        {"url": "http://[fd00::1]/in", "format": "slack"},
    ])))
    .unwrap();
    let (summary, rows) = sample_rows();
    let facts = RunFacts {
        summary: &summary,
        rows: &rows,
        run_url: None,
    };
    let started = Instant::now();
    let outcomes =
        notify::announce(&client, &destinations, &facts, &DeliveryPolicy::default()).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "refusals are not retried"
    );
    for outcome in &outcomes {
        assert_eq!(outcome.status, "failed", "{outcome:?}");
        assert_eq!(outcome.attempts, 1, "{outcome:?}");
        assert!(
            outcome.error.as_deref().unwrap().contains("address policy"),
            "{outcome:?}"
        );
    }
    match listener.accept() {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a refused destination was connected to: {other:?}"),
    }
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let target = Receiver::start();
    let redirecting = {
        let to = target.url("elsewhere", &[]);
        let router = Router::new().route(
            "/hook",
            post(move || {
                let to = to.clone();
                async move { (StatusCode::TEMPORARY_REDIRECT, [("location", to)], "") }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{addr}/hook")
    };
    let config = notify::client_config(Duration::from_secs(5), 100_000, true);
    let client = Client::new(config).unwrap();
    let destinations = notify::parse_destinations(Some(&json!([
        {"url": redirecting, "secret": secret_of(4)},
    ])))
    .unwrap();
    let (summary, rows) = sample_rows();
    let facts = RunFacts {
        summary: &summary,
        rows: &rows,
        run_url: None,
    };
    let outcomes =
        notify::announce(&client, &destinations, &facts, &DeliveryPolicy::default()).await;
    assert_eq!(outcomes[0].status, "failed");
    assert!(
        outcomes[0]
            .error
            .as_deref()
            .unwrap()
            .contains("not followed"),
        "{:?}",
        outcomes[0]
    );
    assert!(target.received("elsewhere").is_empty());
}

#[tokio::test]
async fn retries_stop_at_the_attempt_limit_and_never_wait_past_the_time_allowed() {
    let receiver = Receiver::start();
    let client = Client::new(notify::client_config(Duration::from_secs(5), 100_000, true)).unwrap();
    let destinations = notify::parse_destinations(Some(&json!([
        {"url": receiver.url("down", &[(500, None); 10]), "format": "slack"},
        {"url": receiver.url("later", &[(503, Some("100"))]), "format": "slack"},
    ])))
    .unwrap();
    let (summary, rows) = sample_rows();
    let facts = RunFacts {
        summary: &summary,
        rows: &rows,
        run_url: None,
    };
    let policy = DeliveryPolicy {
        max_attempts: 3,
        first_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(40),
        total: Duration::from_secs(5),
    };
    let started = Instant::now();
    let outcomes = notify::announce(&client, &destinations, &facts, &policy).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcomes[0].status, "failed");
    assert_eq!(outcomes[0].attempts, 3);
    assert_eq!(
        outcomes[0].error.as_deref(),
        Some("HTTP 500 after 3 attempts")
    );
    assert_eq!(receiver.received("down").len(), 3);
    // A Retry-After beyond the time allowed is not waited for.
    assert_eq!(outcomes[1].status, "failed");
    assert_eq!(outcomes[1].attempts, 1);
    assert!(
        outcomes[1]
            .error
            .as_deref()
            .unwrap()
            .contains("5 s allowed"),
        "{:?}",
        outcomes[1]
    );
    assert_eq!(receiver.received("later").len(), 1);
}
