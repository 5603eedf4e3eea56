//! Transport corner cases against hand-written servers (`tests/support/transport_faults.rs`):
//! SEP-1699 polling (a response stream closed early, resumed by GET with `Last-Event-ID`), a
//! classic session that expires mid-probe (re-initialized once), and the legacy HTTP+SSE byte
//! cap, which applies per message rather than to the whole stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mcp_surface_ledger::mcp::{Era, Observation, ProbeOptions, probe};
use mcp_surface_ledger::reason::ReasonCode;
use support::transport_faults::{
    self, Carrier, FaultServer, HUGE_MESSAGE_BYTES, LEGACY_PADDING, Limit,
};

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
    let server = transport_faults::legacy(None);
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
    let server = transport_faults::legacy(Some(Limit::Huge));
    let failure = probe(&client, &server.url, &ProbeOptions::default())
        .await
        .expect_err("the tools/list message exceeds the cap");
    assert_eq!(
        failure.error.reason_code(),
        ReasonCode::ResponseTooLarge,
        "{:?}",
        failure.error
    );
}

/// The limits keep the reason code they have on plain Streamable HTTP, whatever the transport:
/// the operator must learn which limit to raise, not which transport carried the answer.
#[tokio::test]
async fn every_transport_reports_a_limit_by_its_own_reason_code() {
    // Over every normal message (the legacy ones are padded to LEGACY_PADDING), under a huge one.
    let cap = (LEGACY_PADDING * 5) as u64;
    assert!(cap < (10 * LEGACY_PADDING) as u64 && cap < HUGE_MESSAGE_BYTES as u64);
    let timeout = Duration::from_millis(800);
    let carriers = [
        Carrier::Stateless,
        Carrier::ClassicJson,
        Carrier::ClassicSse,
        Carrier::Resumed,
    ];
    let mut cases: Vec<(String, FaultServer, Limit)> = Vec::new();
    for carrier in carriers {
        for limit in [Limit::Huge, Limit::Stall] {
            let server = transport_faults::limits(carrier, limit);
            cases.push((format!("{carrier:?}"), server, limit));
        }
    }
    for limit in [Limit::Huge, Limit::Stall] {
        cases.push((
            String::from("LegacySse"),
            transport_faults::legacy(Some(limit)),
            limit,
        ));
    }
    for (carrier, server, limit) in cases {
        let client = support::client_with(timeout, cap);
        let failure = match probe(&client, &server.url, &ProbeOptions::default()).await {
            Ok(observation) => panic!(
                "{carrier} {limit:?}: the limit was not hit ({} tools read)",
                observation.tools.len()
            ),
            Err(failure) => failure,
        };
        let expected = match limit {
            Limit::Huge => ReasonCode::ResponseTooLarge,
            Limit::Stall => ReasonCode::Timeout,
        };
        assert_eq!(
            failure.error.reason_code(),
            expected,
            "{carrier} {limit:?}: {}",
            failure.error
        );
    }
}
