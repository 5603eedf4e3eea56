//! Transport corner cases against hand-written servers (`tests/support/transport_faults.rs`):
//! SEP-1699 polling (a response stream closed early, resumed by GET with `Last-Event-ID`), a
//! classic session that expires mid-probe (re-initialized once), and the legacy HTTP+SSE byte
//! cap, which applies per message rather than to the whole stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mcp_surface_ledger::mcp::{Era, Observation, ProbeOptions, probe};
use mcp_surface_ledger::reason::ReasonCode;
use support::transport_faults::{self, LEGACY_PADDING};

fn names(observation: &Observation) -> Vec<&str> {
    observation
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn tool_names_of_fault() -> Vec<&'static str> {
    transport_faults::tool_names()
}

#[tokio::test]
async fn a_response_stream_closed_early_is_resumed_by_get_with_last_event_id() {
    let server = transport_faults::polling();
    let observation = probe(
        &support::loopback_client(),
        &server.url,
        &ProbeOptions::default(),
    )
    .await
    .unwrap_or_else(|failure| panic!("probe failed: {failure:?}"));
    assert_eq!(observation.era, Era::Classic);
    assert_eq!(observation.server_info["name"], "polling");
    assert_eq!(names(&observation), tool_names_of_fault());
    // One reconnect, carrying the priming event's id.
    assert_eq!(server.last_event_ids(), ["ev-1"]);
}

#[tokio::test]
async fn an_expired_session_is_reinitialized_once_and_the_listing_resumes() {
    let server = transport_faults::expiring(false);
    let observation = probe(
        &support::loopback_client(),
        &server.url,
        &ProbeOptions::default(),
    )
    .await
    .unwrap_or_else(|failure| panic!("probe failed: {failure:?}"));
    assert_eq!(names(&observation), tool_names_of_fault());
    assert_eq!(server.initializes(), 2);
}

#[tokio::test]
async fn a_session_that_keeps_expiring_is_renewed_only_once() {
    let server = transport_faults::expiring(true);
    let failure = probe(
        &support::loopback_client(),
        &server.url,
        &ProbeOptions::default(),
    )
    .await
    .expect_err("every session expires");
    assert_eq!(failure.error.reason_code(), ReasonCode::ToolsListFailed);
    assert_eq!(server.initializes(), 2);
}

#[tokio::test]
async fn the_legacy_byte_cap_applies_per_message_not_per_stream() {
    // Every message is about LEGACY_PADDING bytes; the stream carries several of them, far
    // more than the cap in total.
    let cap = (LEGACY_PADDING * 2) as u64 + 1_000;
    let client = support::client_with(Duration::from_secs(20), cap);
    let server = transport_faults::legacy(false);
    let observation = probe(&client, &server.url, &ProbeOptions::default())
        .await
        .unwrap_or_else(|failure| panic!("probe failed: {failure:?}"));
    assert_eq!(observation.era, Era::LegacySse);
    assert_eq!(names(&observation), tool_names_of_fault());
    assert!(
        observation.bytes_read > cap,
        "the stream carried {} bytes, not more than the cap {cap}",
        observation.bytes_read
    );

    // One message over the cap still fails as too large.
    let server = transport_faults::legacy(true);
    let failure = probe(&client, &server.url, &ProbeOptions::default())
        .await
        .expect_err("the tools/list message exceeds the cap");
    let text = format!("{:?}", failure.error);
    assert!(text.contains("TooLarge"), "{text}");
}
