//! The probe against real MCP servers on 127.0.0.1 (rmcp in-process, the official Python SDK,
//! server-everything) and against hand-written fault servers.
//!
//! Python and npm peers come from `tests/peers/install.sh`; without them those tests print a
//! SKIP note and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use mcp_surface_ledger::mcp::{Era, Observation, ProbeError, ProbeFailure, ProbeOptions, probe};
use mcp_surface_ledger::reason::ReasonCode;
use serde_json::{Value, json};
use support::python::{PythonMode, SharedPython};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{SurfaceFile, numbered_tools, surface, tool};
use url::Url;

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn numbered_names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("tool-{i:02}")).collect()
}

/// A surface with five tools on pages of two, one resource and two prompts.
fn paged_surface(name: &str) -> Value {
    let mut served = surface(name, "1.0.0", numbered_tools(5));
    served["page_size"] = json!(2);
    served["resources"] = json!([{"uri": "file:///r", "name": "r"}]);
    served["prompts"] = json!([{"name": "p1"}, {"name": "p2"}]);
    served
}

fn forced(era: Era) -> ProbeOptions {
    ProbeOptions {
        force_era: Some(era),
        ..ProbeOptions::default()
    }
}

async fn read(url: &Url, options: &ProbeOptions) -> Observation {
    probe(&support::loopback_client(), url, options)
        .await
        .unwrap_or_else(|failure| panic!("probe {url} failed: {failure:?}"))
}

/// Checks what every reading of `paged_surface` must show, whatever the era.
fn assert_paged_surface(observation: &Observation, name: &str) {
    assert_eq!(observation.server_info["name"], name);
    assert_eq!(observation.server_info["version"], "1.0.0");
    let expected_instructions = format!("Instructions of {name}");
    assert_eq!(
        observation.instructions.as_deref(),
        Some(expected_instructions.as_str())
    );
    assert_eq!(names(&observation.tools), numbered_names(0..5));
    assert_eq!(observation.tools[3]["description"], "Tool number 3");
    assert!(!observation.tools_truncated);
    assert_eq!(observation.resources_total, Some(1));
    assert_eq!(observation.prompts_total, Some(2));
    // The declarations themselves are kept for the surface; a server without templates (or
    // without `resources/templates/list`) has an empty list, not an unread one.
    let prompts = observation.prompts.as_ref().expect("prompts read");
    assert_eq!(names(&prompts.items).len(), 2);
    assert_eq!(
        observation
            .resources
            .as_ref()
            .expect("resources read")
            .items
            .len(),
        1
    );
    let templates = observation
        .resource_templates
        .as_ref()
        .expect("templates read");
    assert!(templates.items.is_empty());
    assert_eq!(observation.transport, "streamable-http");
    assert_eq!(observation.http_status, 200);
}

// ---------------------------------------------------------------- rmcp (in-process)

#[tokio::test]
async fn rmcp_is_read_through_the_modern_era() {
    let peer = RmcpPeer::start(paged_surface("rmcp-peer"), RmcpMode::default());
    let observation = read(&peer.url, &ProbeOptions::default()).await;

    assert_eq!(observation.era, Era::Modern);
    assert_eq!(observation.protocol_version, "2026-07-28");
    assert_eq!(observation.final_url, peer.url);
    assert_paged_surface(&observation, "rmcp-peer");
    // discover + 3 tools pages + 1 resources page + 1 templates page + 1 prompts page
    assert_eq!(observation.requests_sent, 7);
    assert!(observation.bytes_read > 0);
}

#[tokio::test]
async fn rmcp_is_read_through_the_classic_era_with_a_session() {
    let peer = RmcpPeer::start(paged_surface("rmcp-classic"), RmcpMode::default());
    let observation = read(&peer.url, &forced(Era::Classic)).await;

    assert_eq!(observation.era, Era::Classic);
    assert_eq!(observation.protocol_version, "2025-11-25");
    assert_paged_surface(&observation, "rmcp-classic");
    // initialize + initialized + 3 + 1 + 1 + 1 list pages (templates: method not found, an
    // empty list) + DELETE of the session
    assert_eq!(observation.requests_sent, 9);
}

#[tokio::test]
async fn rmcp_classic_without_sessions_answers_in_json() {
    let mode = RmcpMode {
        sessions: false,
        json_response: true,
        modern_only: false,
    };
    let peer = RmcpPeer::start(paged_surface("rmcp-stateless"), mode);
    let observation = read(&peer.url, &forced(Era::Classic)).await;

    assert_eq!(observation.era, Era::Classic);
    assert_paged_surface(&observation, "rmcp-stateless");
    // no session, so no DELETE
    assert_eq!(observation.requests_sent, 8);
}

#[tokio::test]
async fn a_preferred_classic_era_skips_the_discover_round_trip() {
    let peer = RmcpPeer::start(
        surface("pref", "1", vec![tool("a", "A")]),
        RmcpMode::default(),
    );
    let options = ProbeOptions {
        preferred_era: Some(Era::Classic),
        ..ProbeOptions::default()
    };
    let observation = read(&peer.url, &options).await;

    assert_eq!(observation.era, Era::Classic);
    // initialize + initialized + tools/list + DELETE, and no server/discover
    assert_eq!(observation.requests_sent, 4);
}

#[tokio::test]
async fn a_modern_only_server_is_read_even_when_classic_is_preferred() {
    let mode = RmcpMode {
        modern_only: true,
        ..RmcpMode::default()
    };
    let peer = RmcpPeer::start(surface("modern-only", "1", vec![tool("a", "A")]), mode);
    let options = ProbeOptions {
        preferred_era: Some(Era::Classic),
        ..ProbeOptions::default()
    };
    let observation = read(&peer.url, &options).await;

    assert_eq!(observation.era, Era::Modern);
    assert_eq!(names(&observation.tools), ["a"]);
    // the refused initialize, then discover + tools/list
    assert_eq!(observation.requests_sent, 3);
}

#[tokio::test]
async fn a_modern_only_server_refuses_a_forced_classic_handshake() {
    let mode = RmcpMode {
        modern_only: true,
        ..RmcpMode::default()
    };
    let peer = RmcpPeer::start(surface("modern-only", "1", vec![tool("a", "A")]), mode);
    let failure = probe(
        &support::loopback_client(),
        &peer.url,
        &forced(Era::Classic),
    )
    .await
    .expect_err("initialize must be refused");

    assert!(
        matches!(failure.error, ProbeError::Rpc { code: -32022, .. }),
        "{:?}",
        failure.error
    );
}

#[tokio::test]
async fn list_calls_can_be_limited_to_tools() {
    let peer = RmcpPeer::start(paged_surface("tools-only"), RmcpMode::default());
    let options = ProbeOptions {
        count_resources_and_prompts: false,
        ..ProbeOptions::default()
    };
    let observation = read(&peer.url, &options).await;

    assert_eq!(observation.resources_total, None);
    assert_eq!(observation.prompts_total, None);
    assert_eq!(names(&observation.tools), numbered_names(0..5));
    assert_eq!(observation.requests_sent, 4, "discover + 3 tools pages");
}

#[tokio::test]
async fn undeclared_capabilities_are_not_listed() {
    let peer = RmcpPeer::start(
        surface("bare", "1", vec![tool("a", "A")]),
        RmcpMode::default(),
    );
    let observation = read(&peer.url, &ProbeOptions::default()).await;

    assert_eq!(observation.resources_total, None);
    assert_eq!(observation.prompts_total, None);
    assert_eq!(observation.requests_sent, 2, "discover + tools/list");
}

#[tokio::test]
async fn pagination_stops_at_the_page_limit_and_marks_truncation() {
    let mut served = surface("many-pages", "1", numbered_tools(7));
    served["page_size"] = json!(2);
    let peer = RmcpPeer::start(served, RmcpMode::default());
    let options = ProbeOptions {
        max_pages: 2,
        ..ProbeOptions::default()
    };
    let observation = read(&peer.url, &options).await;

    assert_eq!(names(&observation.tools), numbered_names(0..4));
    assert!(observation.tools_truncated);
}

#[tokio::test]
async fn pagination_stops_at_the_tool_limit_and_marks_truncation() {
    let mut served = surface("many-tools", "1", numbered_tools(7));
    served["page_size"] = json!(3);
    let peer = RmcpPeer::start(served, RmcpMode::default());
    let options = ProbeOptions {
        max_tools: 4,
        ..ProbeOptions::default()
    };
    let observation = read(&peer.url, &options).await;

    assert_eq!(names(&observation.tools), numbered_names(0..4));
    assert!(observation.tools_truncated);
}

#[tokio::test]
async fn a_changed_surface_is_seen_on_the_next_probe() {
    let peer = RmcpPeer::start(
        surface("changing", "1.0.0", vec![tool("a", "A")]),
        RmcpMode::default(),
    );
    let first = read(&peer.url, &ProbeOptions::default()).await;
    peer.set_surface(surface(
        "changing",
        "2.0.0",
        vec![tool("a", "A2"), tool("b", "B")],
    ));
    let second = read(&peer.url, &ProbeOptions::default()).await;

    assert_eq!(names(&first.tools), ["a"]);
    assert_eq!(first.server_info["version"], "1.0.0");
    assert_eq!(names(&second.tools), ["a", "b"]);
    assert_eq!(second.tools[0]["description"], "A2");
    assert_eq!(second.server_info["version"], "2.0.0");
}

// ---------------------------------------------------------------- Python SDK (mcp 2.3)

static PYTHON_JSON: OnceLock<Option<SharedPython>> = OnceLock::new();
static PYTHON_SSE: OnceLock<Option<SharedPython>> = OnceLock::new();

fn python_json() -> Option<&'static SharedPython> {
    let mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    support::python::shared(&PYTHON_JSON, mode, || paged_surface("py-json"))
}

/// SSE answers everywhere: the classic path streams by default, and the notification before
/// each list makes the modern path stream too.
fn python_sse() -> Option<&'static SharedPython> {
    support::python::shared(&PYTHON_SSE, PythonMode::default(), || {
        let mut served = paged_surface("py-sse");
        served["notify_before_lists"] = json!(true);
        served
    })
}

#[tokio::test]
async fn python_is_read_through_the_modern_era_with_json_answers() {
    let Some(peer) = python_json() else {
        return support::skip("python modern json", "Python peer not installed");
    };
    let observation = read(&peer.process.url(), &ProbeOptions::default()).await;

    assert_eq!(observation.era, Era::Modern);
    assert_eq!(observation.protocol_version, "2026-07-28");
    assert_paged_surface(&observation, "py-json");
    assert_eq!(observation.requests_sent, 7);
}

#[tokio::test]
async fn python_is_read_through_the_modern_era_with_sse_answers() {
    let Some(peer) = python_sse() else {
        return support::skip("python modern sse", "Python peer not installed");
    };
    let observation = read(&peer.process.url(), &ProbeOptions::default()).await;

    assert_eq!(observation.era, Era::Modern);
    assert_paged_surface(&observation, "py-sse");
}

#[tokio::test]
async fn python_is_read_through_the_classic_era_with_sse_answers() {
    let Some(peer) = python_sse() else {
        return support::skip("python classic sse", "Python peer not installed");
    };
    let observation = read(&peer.process.url(), &forced(Era::Classic)).await;

    assert_eq!(observation.era, Era::Classic);
    assert_eq!(observation.protocol_version, "2025-11-25");
    assert_paged_surface(&observation, "py-sse");
    assert_eq!(
        observation.requests_sent, 9,
        "a stateful session ends with a DELETE"
    );
}

#[tokio::test]
async fn python_is_read_through_the_classic_era_when_it_is_preferred() {
    let Some(peer) = python_json() else {
        return support::skip("python classic preferred", "Python peer not installed");
    };
    let options = ProbeOptions {
        preferred_era: Some(Era::Classic),
        ..ProbeOptions::default()
    };
    let observation = read(&peer.process.url(), &options).await;

    assert_eq!(observation.era, Era::Classic);
    assert_paged_surface(&observation, "py-json");
}

#[tokio::test]
async fn python_serves_a_changed_surface_on_the_next_probe() {
    let file = SurfaceFile::new(&surface("py-change", "1.0.0", vec![tool("a", "A")]));
    let mode = PythonMode {
        json_response: true,
        stateless: false,
    };
    let Some(peer) = support::python::start(&file, mode) else {
        return support::skip("python changed surface", "Python peer not installed");
    };
    let first = read(&peer.url(), &ProbeOptions::default()).await;
    file.write(&surface(
        "py-change",
        "1.1.0",
        vec![tool("b", "B"), tool("a", "A")],
    ));
    let second = read(&peer.url(), &ProbeOptions::default()).await;

    assert_eq!(names(&first.tools), ["a"]);
    assert_eq!(names(&second.tools), ["b", "a"]);
    assert_eq!(first.server_info["version"], "1.0.0");
    assert_eq!(second.server_info["version"], "1.1.0");
}

// ---------------------------------------------------------------- server-everything (npm)

#[tokio::test]
async fn server_everything_falls_back_to_the_classic_era() {
    let Some(peer) = support::everything::shared() else {
        return support::skip("server-everything classic", "npm peer not installed");
    };
    let observation = read(&peer.url(), &ProbeOptions::default()).await;

    assert_eq!(observation.era, Era::Classic);
    assert_eq!(observation.protocol_version, "2025-11-25");
    assert_eq!(observation.server_info["name"], "mcp-servers/everything");
    assert!(observation.instructions.is_some());
    assert!(names(&observation.tools).iter().any(|n| n == "echo"));
    assert!(
        observation
            .tools
            .iter()
            .all(|t| t["inputSchema"].is_object())
    );
    assert!(observation.resources_total.is_some_and(|n| n > 0));
    assert!(observation.prompts_total.is_some_and(|n| n > 0));
}

#[tokio::test]
async fn server_everything_is_not_a_modern_server() {
    let Some(peer) = support::everything::shared() else {
        return support::skip("server-everything modern", "npm peer not installed");
    };
    let failure = probe(
        &support::loopback_client(),
        &peer.url(),
        &forced(Era::Modern),
    )
    .await
    .expect_err("a classic-only server cannot be read as modern");

    assert_eq!(
        failure.error.reason_code(),
        ReasonCode::TransportUnsupported
    );
    assert_eq!(failure.http_status, Some(400));
}

// ---------------------------------------------------------------- faults

async fn fail(url: &Url, client: &mcp_surface_ledger::net::Client) -> ProbeFailure {
    match probe(client, url, &ProbeOptions::default()).await {
        Ok(observation) => panic!("probe of {url} should fail, got {observation:?}"),
        Err(failure) => failure,
    }
}

#[tokio::test]
async fn a_body_over_the_cap_is_response_too_large() {
    let client = support::client_with(support::TEST_REQUEST_TIMEOUT, 1_000_000);
    let failure = fail(&support::faults::url("/big"), &client).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::ResponseTooLarge);
}

#[tokio::test]
async fn a_server_slower_than_the_request_timeout_is_a_timeout() {
    let client = support::client_with(Duration::from_millis(500), 2_000_000);
    let failure = fail(&support::faults::url("/slow"), &client).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::Timeout);
}

#[tokio::test]
async fn a_json_rpc_error_is_an_rpc_error() {
    let failure = fail(
        &support::faults::url("/rpc-error"),
        &support::loopback_client(),
    )
    .await;
    assert_eq!(failure.error.reason_code(), ReasonCode::RpcError);
    assert!(
        matches!(failure.error, ProbeError::Rpc { code: -32603, .. }),
        "{:?}",
        failure.error
    );
    assert_eq!(failure.http_status, Some(200));
}

#[tokio::test]
async fn an_html_answer_is_not_json() {
    let failure = fail(&support::faults::url("/html"), &support::loopback_client()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::NotJson);
}

#[tokio::test]
async fn a_500_is_an_http_error_without_fallback() {
    let url = support::faults::url("/status-500");
    let failure = fail(&url, &support::loopback_client()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::HttpError);
    assert_eq!(failure.http_status, Some(500));
    assert_eq!(failure.final_url, Some(url));
}

#[tokio::test]
async fn a_401_is_auth_required_with_its_challenge() {
    let failure = fail(&support::faults::url("/auth"), &support::loopback_client()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    match failure.error {
        ProbeError::AuthRequired {
            status,
            www_authenticate,
        } => {
            assert_eq!(status, 401);
            assert!(www_authenticate.is_some_and(|w| w.contains("resource_metadata")));
        }
        other => panic!("expected AuthRequired, got {other:?}"),
    }
}

#[tokio::test]
async fn a_failing_tools_list_after_the_handshake_is_tools_list_failed() {
    let failure = fail(
        &support::faults::url("/tools-fail"),
        &support::loopback_client(),
    )
    .await;
    assert_eq!(failure.error.reason_code(), ReasonCode::ToolsListFailed);
}

#[tokio::test]
async fn a_401_on_tools_list_after_the_handshake_is_auth_required() {
    let failure = fail(
        &support::faults::url("/tools-auth"),
        &support::loopback_client(),
    )
    .await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    assert_eq!(failure.http_status, Some(401));
}

#[tokio::test]
async fn a_refused_connection_is_connect_fail() {
    let failure = fail(&support::faults::refused_url(), &support::loopback_client()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::ConnectFail);
    assert_eq!(failure.http_status, None);
}

#[tokio::test]
async fn an_unresolvable_name_is_dns_fail() {
    let failure = fail(
        &support::faults::unresolvable_url(),
        &support::no_dns_client(),
    )
    .await;
    assert_eq!(failure.error.reason_code(), ReasonCode::DnsFail);
}
