//! Proxy variables from the environment must never carry a target request: a proxy resolves
//! the name itself and would bypass the address policy.
//!
//! The variables are set only on child processes (this test binary re-executed for one
//! ignored test), so no other test in any binary sees them. Everything stays on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

use std::net::{IpAddr, TcpListener};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use mcp_surface_ledger::net::{Client, NetConfig, TableLookup};
use reqwest::header::HeaderMap;
use url::Url;

const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// Runs one ignored test of this binary with every proxy variable pointing at `proxy`.
fn run_child(test: &str, proxy: &TcpListener) {
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([
        test,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for name in PROXY_VARIABLES {
        command.env(name, &proxy_url);
    }
    command.env_remove("NO_PROXY").env_remove("no_proxy");
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child {test} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
}

/// Whether anything connected to `listener` (it never accepts, so connections queue).
fn was_contacted(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept failed: {e}"),
    }
}

#[test]
fn proxy_variables_never_receive_target_requests() {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    run_child("child_target_client_goes_direct", &proxy);
    assert!(
        !was_contacted(&proxy),
        "the target client sent a request to the proxy"
    );
}

#[test]
fn control_a_default_reqwest_client_does_use_the_proxy() {
    // Proves the variables reach the child: without `no_proxy` reqwest would use them.
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    run_child("child_default_client_uses_proxy", &proxy);
    assert!(
        was_contacted(&proxy),
        "the control request did not reach the proxy"
    );
}

async fn loopback_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().route("/ok", get(|| async { "direct" }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

#[tokio::test]
#[ignore = "runs only as the child of proxy_variables_never_receive_target_requests"]
async fn child_target_client_goes_direct() {
    assert!(
        std::env::var_os("HTTP_PROXY").is_some(),
        "run through the parent test"
    );
    let port = loopback_server().await;
    let table = TableLookup::new().with("target.test", &["127.0.0.1".parse::<IpAddr>().unwrap()]);
    let config = NetConfig::new(Duration::from_secs(2), 3, 10_000).allow_private(true);
    let client = Client::with_lookup(config, Arc::new(table)).unwrap();
    for target in [
        format!("http://127.0.0.1:{port}/ok"),
        format!("http://target.test:{port}/ok"),
    ] {
        let response = client
            .get(&Url::parse(&target).unwrap(), HeaderMap::new())
            .await
            .unwrap();
        assert_eq!(response.body.as_ref(), b"direct", "{target}");
    }
    // An https URL to the plain-text server fails its handshake, and must do so directly.
    let https = Url::parse(&format!("https://target.test:{port}/ok")).unwrap();
    assert!(client.get(&https, HeaderMap::new()).await.is_err());
}

#[tokio::test]
#[ignore = "runs only as the child of control_a_default_reqwest_client_does_use_the_proxy"]
async fn child_default_client_uses_proxy() {
    assert!(
        std::env::var_os("HTTP_PROXY").is_some(),
        "run through the parent test"
    );
    let port = loopback_server().await;
    let plain = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    // The proxy never answers, so this times out after having connected to it.
    let result = plain
        .get(format!("http://127.0.0.1:{port}/ok"))
        .send()
        .await;
    assert!(result.is_err(), "the request went direct: {result:?}");
}
