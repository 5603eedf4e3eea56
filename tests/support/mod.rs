//! Shared helpers for the integration tests: real MCP peers on 127.0.0.1, hand-written fault
//! servers, and the one place where the tests build their HTTP client.
//!
//! Use with `mod support;` from an integration test. Peers that need an external install
//! (`tests/peers/install.sh`) return `None` when it is missing; the test then prints a note and
//! returns, so `cargo test` passes on a bare clone.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod auth_faults;
pub mod auth_peer;
pub mod background;
pub mod browser;
pub mod everything;
pub mod faults;
pub mod process;
pub mod python;
pub mod rmcp_peer;
pub mod sarif;
pub mod surface;
pub mod transport_faults;

use std::time::Duration;

use std::sync::Arc;

use mcp_surface_ledger::net::{Client, NetConfig, TableLookup};

/// Per-request timeout of the test client: generous, tests never wait for it on the happy path.
pub const TEST_REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The HTTP client every probe test uses: loopback targets allowed, default-like limits.
/// This is the single place to adapt when the client's construction changes.
pub fn loopback_client() -> Client {
    client_with(TEST_REQUEST_TIMEOUT, 2_000_000)
}

/// A loopback client with a chosen per-request timeout and body cap (fault tests).
pub fn client_with(request_timeout: Duration, max_response_bytes: u64) -> Client {
    Client::new(NetConfig::new(request_timeout, 3, max_response_bytes).allow_private(true))
        .expect("build the test HTTP client")
}

/// A client whose resolver knows no names at all: every host name fails like NXDOMAIN,
/// without a query leaving the machine.
pub fn no_dns_client() -> Client {
    let config = NetConfig::new(TEST_REQUEST_TIMEOUT, 3, 2_000_000).allow_private(true);
    Client::with_lookup(config, Arc::new(TableLookup::new())).expect("build the test HTTP client")
}

/// The charging manager of a plain local run: no pricing, nothing sent, a dry-run record.
pub async fn local_charging() -> mcp_surface_ledger::platform::Charging {
    use mcp_surface_ledger::platform::{ApiClient, Charging, PlatformEnv};
    let env = PlatformEnv::from_vars(|_| None).expect("an empty environment is valid");
    let api = ApiClient::new(&env).expect("API client");
    Charging::init(&env, &api).await.expect("local charging")
}

/// Prints why a test did nothing (a peer is not installed) so the skip is visible.
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIP {test}: {why}");
}
