//! Auth verdicts, the RFC 9728 metadata probe and the legacy HTTP+SSE transport, against real
//! servers on 127.0.0.1 (the official Python SDK, server-everything) and hand-written ones.
//!
//! Python and npm peers come from `tests/peers/install.sh`; without them those tests print a
//! SKIP note and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mcp_surface_ledger::mcp::{Era, Observation, ProbeFailure, ProbeOptions, probe};
use mcp_surface_ledger::reason::ReasonCode;
use serde_json::Value;
use support::auth_faults;
use support::auth_peer::{self, PyTransport};
use support::surface::{SurfaceFile, surface, tool};
use url::Url;

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn options(force_era: Option<Era>) -> ProbeOptions {
    ProbeOptions {
        force_era,
        ..ProbeOptions::default()
    }
}

async fn fail_with(url: &Url, options: &ProbeOptions) -> ProbeFailure {
    match probe(&support::loopback_client(), url, options).await {
        Ok(observation) => panic!("probe of {url} should fail, got {observation:?}"),
        Err(failure) => failure,
    }
}

async fn read(url: &Url, options: &ProbeOptions) -> Observation {
    match probe(&support::loopback_client(), url, options).await {
        Ok(observation) => observation,
        Err(failure) => panic!("probe of {url} failed: {failure} ({failure:?})"),
    }
}

fn py_surface() -> SurfaceFile {
    SurfaceFile::new(&surface(
        "py-auth",
        "1.0.0",
        vec![
            tool("search", "Search things"),
            tool("fetch", "Fetch a thing"),
        ],
    ))
}

// ------------------------------------------------------------ protected Python SDK server

#[tokio::test]
async fn the_python_sdk_resource_server_is_auth_required_in_both_eras() {
    let file = py_surface();
    let Some(peer) = auth_peer::start_python(&file, PyTransport::StreamableHttp, true) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let expected_metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        peer.process.port
    );
    for era in [None, Some(Era::Modern), Some(Era::Classic)] {
        let failure = fail_with(&peer.url, &options(era)).await;
        assert_eq!(
            failure.error.reason_code(),
            ReasonCode::AuthRequired,
            "{era:?}"
        );
        assert_eq!(failure.http_status, Some(401), "{era:?}");
        let auth = failure.auth.expect("auth findings");
        assert_eq!(auth.challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            auth.challenge.resource_metadata.as_deref(),
            Some(expected_metadata.as_str())
        );
        assert_eq!(
            auth.metadata_url().as_deref(),
            Some(expected_metadata.as_str())
        );
        assert_eq!(auth.authorization_servers(), ["https://auth.example.test"]);
        assert_eq!(auth.scopes(), ["mcp:tools"]);
        let metadata = auth.metadata.unwrap();
        assert_eq!(
            metadata.attempts.len(),
            1,
            "the advertised URL alone is fetched"
        );
        assert!(metadata.bytes_read > 0);
    }
}

#[tokio::test]
async fn the_metadata_probe_can_be_switched_off() {
    let file = py_surface();
    let Some(peer) = auth_peer::start_python(&file, PyTransport::StreamableHttp, true) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let options = ProbeOptions {
        probe_oauth_metadata: false,
        ..ProbeOptions::default()
    };
    let failure = fail_with(&peer.url, &options).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    let auth = failure.auth.unwrap();
    assert!(auth.metadata.is_none());
    assert!(auth.challenge.resource_metadata.is_some());
    assert!(auth.authorization_servers().is_empty());
}

#[tokio::test]
async fn the_protection_switched_off_reads_the_surface() {
    let file = SurfaceFile::new(&{
        let mut s = surface("py-auth", "1.0.0", vec![tool("search", "Search things")]);
        s["protected"] = Value::Bool(false);
        s
    });
    let Some(peer) = auth_peer::start_python(&file, PyTransport::StreamableHttp, true) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let observation = read(&peer.url, &ProbeOptions::default()).await;
    assert_eq!(names(&observation.tools), ["search"]);
}

#[tokio::test]
async fn a_protected_legacy_sse_server_is_auth_required() {
    let file = py_surface();
    let Some(peer) = auth_peer::start_python(&file, PyTransport::Sse, true) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let failure = fail_with(&peer.url, &ProbeOptions::default()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    let auth = failure.auth.unwrap();
    assert_eq!(auth.authorization_servers(), ["https://auth.example.test"]);
    assert!(
        auth.metadata_url()
            .unwrap()
            .ends_with("/.well-known/oauth-protected-resource/sse")
    );
}

// ------------------------------------------------------------ legacy HTTP+SSE transport

#[tokio::test]
async fn server_everything_in_sse_mode_is_read_over_http_sse() {
    let Some((_process, url)) = auth_peer::start_everything_sse() else {
        return support::skip(
            "server-everything sse",
            "tests/peers/install.sh has not run",
        );
    };
    let observation = read(&url, &ProbeOptions::default()).await;
    assert_eq!(observation.era, Era::LegacySse);
    assert_eq!(observation.transport, "http+sse");
    assert!(
        mcp_surface_ledger::mcp::era::CLASSIC_VERSIONS
            .contains(&observation.protocol_version.as_str())
    );
    let tools = names(&observation.tools);
    assert!(tools.contains(&"echo".to_string()), "{tools:?}");
    assert!(tools.len() >= 5, "{tools:?}");
    assert!(observation.server_info["name"].is_string());
    assert_eq!(observation.final_url, url);
    assert!(observation.bytes_read > 0);
    // Prompts, resources and resource templates are read through the legacy stream too.
    let declared = |list: &Option<mcp_surface_ledger::surface::ListRead>| {
        list.as_ref().map_or(0, |l| l.items.len())
    };
    assert!(
        declared(&observation.prompts) > 0,
        "{:?}",
        observation.prompts
    );
    assert!(declared(&observation.resources) > 0);
    assert!(declared(&observation.resource_templates) > 0);
    // discover + initialize (both refused) + GET + initialize + initialized + list calls.
    assert!(
        observation.requests_sent >= 6,
        "{}",
        observation.requests_sent
    );

    let remembered = ProbeOptions {
        preferred_era: Some(Era::LegacySse),
        ..ProbeOptions::default()
    };
    let again = read(&url, &remembered).await;
    assert_eq!(names(&again.tools), tools);
    assert!(again.requests_sent < observation.requests_sent);
}

#[tokio::test]
async fn the_python_sdk_sse_app_is_read_over_http_sse() {
    let file = py_surface();
    let Some(peer) = auth_peer::start_python(&file, PyTransport::Sse, false) else {
        return support::skip("python sse peer", "tests/peers/install.sh has not run");
    };
    let observation = read(&peer.url, &ProbeOptions::default()).await;
    assert_eq!(observation.era, Era::LegacySse);
    assert_eq!(observation.transport, "http+sse");
    assert_eq!(names(&observation.tools), ["search", "fetch"]);
    assert_eq!(observation.server_info["name"], "py-auth");

    let forced = read(&peer.url, &options(Some(Era::LegacySse))).await;
    assert_eq!(names(&forced.tools), ["search", "fetch"]);
    assert_eq!(
        forced.requests_sent, 4,
        "GET + initialize + initialized + tools/list"
    );
}

// ------------------------------------------------------------ hand-made servers

#[tokio::test]
async fn a_bare_401_is_auth_required_and_tries_both_well_known_urls() {
    let failure = fail_with(&auth_faults::url("/bare/mcp"), &ProbeOptions::default()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    assert_eq!(failure.http_status, Some(401));
    let auth = failure.auth.unwrap();
    assert_eq!(auth.challenge.scheme, None);
    let metadata = auth.metadata.clone().unwrap();
    let tried: Vec<&str> = metadata.attempts.iter().map(|a| a.url.as_str()).collect();
    let base = format!("http://{}", auth_faults::server());
    assert_eq!(
        tried,
        [
            format!("{base}/.well-known/oauth-protected-resource/bare/mcp"),
            format!("{base}/.well-known/oauth-protected-resource"),
        ]
    );
    assert!(metadata.attempts.iter().all(|a| a.status == Some(404)));
    assert!(auth.metadata_url().is_none());
    assert!(auth.authorization_servers().is_empty());
}

#[tokio::test]
async fn a_403_insufficient_scope_is_auth_required_with_its_scopes() {
    let failure = fail_with(&auth_faults::url("/scope/mcp"), &ProbeOptions::default()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    assert_eq!(failure.http_status, Some(403));
    let auth = failure.auth.unwrap();
    assert_eq!(auth.challenge.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(auth.challenge.scopes, ["files:read", "files:write"]);
    assert_eq!(auth.authorization_servers(), ["https://as.example.test"]);
    assert_eq!(auth.scopes(), ["files:read", "files:write"]);
}

#[tokio::test]
async fn a_metadata_document_for_another_resource_is_not_used() {
    let failure = fail_with(&auth_faults::url("/foreign/mcp"), &ProbeOptions::default()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    let auth = failure.auth.unwrap();
    let metadata = auth.metadata.clone().unwrap();
    assert!(metadata.metadata.is_none(), "{metadata:?}");
    let problem = metadata.attempts[0].problem.clone().unwrap();
    assert!(problem.contains("elsewhere.example.test"), "{problem}");
    assert!(problem.contains("RFC 9728"), "{problem}");
    assert!(auth.authorization_servers().is_empty());
    assert_eq!(
        auth.scopes(),
        ["mail:send"],
        "the challenge's scope, not the document's"
    );
}

#[tokio::test]
async fn a_metadata_document_over_the_cap_is_not_used() {
    let client = support::client_with(support::TEST_REQUEST_TIMEOUT, 100_000);
    let failure = match probe(
        &client,
        &auth_faults::url("/big/mcp"),
        &ProbeOptions::default(),
    )
    .await
    {
        Ok(o) => panic!("expected a failure, got {o:?}"),
        Err(failure) => failure,
    };
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    let metadata = failure.auth.unwrap().metadata.unwrap();
    assert!(metadata.metadata.is_none());
    assert_eq!(metadata.attempts.len(), 1);
    let problem = metadata.attempts[0].problem.clone().unwrap();
    assert!(problem.contains("exceeded 100000 bytes"), "{problem}");
    assert!(failure.bytes_read < 200_000, "{}", failure.bytes_read);
}

#[tokio::test]
async fn a_metadata_url_at_a_cloud_metadata_address_is_refused_unfetched() {
    // The test client allows private targets; the metadata range stays refused even then.
    let failure = fail_with(&auth_faults::url("/private/mcp"), &ProbeOptions::default()).await;
    assert_eq!(failure.error.reason_code(), ReasonCode::AuthRequired);
    let metadata = failure.auth.unwrap().metadata.unwrap();
    assert_eq!(metadata.attempts.len(), 1, "no well-known fallback either");
    let attempt = &metadata.attempts[0];
    assert_eq!(attempt.url, "http://169.254.169.254/latest/meta-data/oauth");
    assert_eq!(attempt.status, None, "no response: nothing was sent");
    let problem = attempt.problem.clone().unwrap();
    assert!(
        problem.contains("refused by the address policy"),
        "{problem}"
    );
    assert!(metadata.url.is_none());
    assert_eq!(
        auth_faults::hits("/.well-known/oauth-protected-resource/private/mcp"),
        0,
        "an advertised URL replaces the well-known ones"
    );
}

#[tokio::test]
async fn an_html_site_is_transport_unsupported() {
    let failure = fail_with(&auth_faults::url("/site"), &ProbeOptions::default()).await;
    assert_eq!(
        failure.error.reason_code(),
        ReasonCode::TransportUnsupported,
        "{failure}"
    );
    assert!(failure.auth.is_none());
}

#[tokio::test]
async fn a_websocket_only_endpoint_is_transport_unsupported() {
    let failure = fail_with(&auth_faults::url("/ws"), &ProbeOptions::default()).await;
    assert_eq!(
        failure.error.reason_code(),
        ReasonCode::TransportUnsupported,
        "{failure}"
    );
}

#[tokio::test]
async fn a_missing_path_stays_an_http_error() {
    let failure = fail_with(&auth_faults::url("/nothing/here"), &ProbeOptions::default()).await;
    assert_eq!(
        failure.error.reason_code(),
        ReasonCode::HttpError,
        "{failure}"
    );
    assert_eq!(failure.http_status, Some(404));
}
