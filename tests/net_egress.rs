//! End-to-end egress tests for `net::Client`.
//!
//! Every test here runs in a fresh network namespace that has only a loopback interface: the
//! test binary re-executes itself under `unshare -n`, brings `lo` up and puts a few
//! addresses on it (a public-looking 1.2.3.4, a private 10.0.0.5 and the metadata address
//! 169.254.169.254). So even a broken client cannot send a packet off this machine, and a
//! listener on the "forbidden" addresses can prove that nothing was ever connected to them.
//! Names are answered by an injected table, never by DNS.
//!
//! Without `unshare` (or the privilege to use it) the tests print a note and skip.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use mcp_surface_ledger::net::{Client, NetConfig, NetError, PolicyMode, TableLookup};
use mcp_surface_ledger::reason::ReasonCode;
use url::Url;

const CHILD_MARKER: &str = "MCP_LEDGER_NET_EGRESS_IN_NETNS";
const PUBLIC: &str = "1.2.3.4";
const PRIVATE: &str = "10.0.0.5";
const METADATA: &str = "169.254.169.254";
const NAMESPACE_SETUP: &str = "ip link set lo up \
    && ip addr add 1.2.3.4/32 dev lo \
    && ip addr add 10.0.0.5/32 dev lo \
    && ip addr add 169.254.169.254/32 dev lo \
    && exec \"$0\" \"$@\"";

// ---------------------------------------------------------------------------------------------
// Network namespace harness

/// Runs `body` inside a private network namespace: in the parent process it re-executes this
/// one test under `unshare -n`; in that child it runs the body.
fn isolated<F, Fut>(name: &str, body: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = ()>,
{
    if std::env::var_os(CHILD_MARKER).is_some() {
        assert_only_loopback();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(body());
        return;
    }
    if !namespaces_available() {
        eprintln!("SKIP {name}: cannot create a network namespace (`unshare -n` unavailable)");
        return;
    }
    let output = Command::new("unshare")
        .args(["-n", "--", "sh", "-c", NAMESPACE_SETUP])
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_MARKER, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{name} failed inside the namespace\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
}

fn namespaces_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("unshare")
            .args(["-n", "--", "sh", "-c", "ip link set lo up"])
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Refuses to run a body anywhere but in a namespace whose only interface is loopback.
fn assert_only_loopback() {
    let devices = std::fs::read_to_string("/proc/self/net/dev").unwrap();
    let names: Vec<&str> = devices
        .lines()
        .skip(2)
        .filter_map(|line| line.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(names, vec!["lo"], "not inside a loopback-only namespace");
}

// ---------------------------------------------------------------------------------------------
// Test servers

/// Every request the test server saw, as `METHOD /path`.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn paths(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn serve(addr: &str) -> (SocketAddr, Seen) {
    serve_on(addr, 0).await
}

async fn serve_on(addr: &str, port: u16) -> (SocketAddr, Seen) {
    let listener = tokio::net::TcpListener::bind((addr.parse::<IpAddr>().unwrap(), port))
        .await
        .unwrap();
    let local = listener.local_addr().unwrap();
    let seen = Seen::default();
    let app = Router::new().fallback(handle).with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (local, seen)
}

async fn handle(
    State(seen): State<Seen>,
    method: Method,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    seen.0.lock().unwrap().push(format!("{method} {path}"));
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["ok"] => "ok".into_response(),
        ["echo"] => {
            let host = header_text(&headers, header::HOST);
            let auth = header_text(&headers, header::AUTHORIZATION);
            let body = String::from_utf8_lossy(&body);
            format!("{method} host={host} auth={auth} body={body}").into_response()
        }
        ["redirect"] => {
            let code: u16 = query
                .get("code")
                .and_then(|c| c.parse().ok())
                .unwrap_or(302);
            let to = query.get("to").cloned().unwrap_or_default();
            redirect(code, &to)
        }
        ["chain", n, end] => {
            let (n, end): (u32, u32) = (n.parse().unwrap(), end.parse().unwrap());
            if n < end {
                redirect(302, &format!("/chain/{}/{end}", n + 1))
            } else {
                format!("done {n}").into_response()
            }
        }
        ["loop", "a"] => redirect(302, "/loop/b"),
        ["loop", "b"] => redirect(307, "/loop/a"),
        ["self"] => redirect(308, "/self"),
        ["close"] => ([(header::CONNECTION, "close")], "closing").into_response(),
        ["slow"] => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "late".into_response()
        }
        ["big"] => vec![b'x'; 10_000].into_response(),
        ["big-chunked"] => {
            let chunks =
                futures::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 1000])));
            Body::from_stream(chunks).into_response()
        }
        ["stream-hang"] => {
            let first =
                futures::stream::once(async { Ok::<_, std::io::Error>(b"data: 1\n\n".to_vec()) });
            let body = Body::from_stream(first.chain(futures::stream::pending()));
            ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn redirect(code: u16, to: &str) -> Response {
    let status = StatusCode::from_u16(code).unwrap();
    (status, [(header::LOCATION, to.to_string())]).into_response()
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_string()
}

/// A listener nobody accepts on: after the test, a non-blocking accept shows whether any
/// connection ever reached it.
struct Tripwire(StdListener);

impl Tripwire {
    fn bind(addr: &str, port: u16) -> Self {
        let listener = StdListener::bind((addr.parse::<IpAddr>().unwrap(), port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        Tripwire(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn assert_untouched(&self) {
        match self.0.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Ok((_, peer)) => panic!(
                "{} received a connection from {peer}",
                self.0.local_addr().unwrap()
            ),
            Err(e) => panic!("tripwire accept failed: {e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Client helpers

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

fn config() -> NetConfig {
    NetConfig::new(Duration::from_secs(5), 3, 100_000)
}

fn client(config: NetConfig, table: TableLookup) -> (Client, Arc<TableLookup>) {
    let table = Arc::new(table);
    let client = Client::with_lookup(config, table.clone()).unwrap();
    (client, table)
}

/// The standard name table: `public.test`, `other.test` and `api.public.test` live on the
/// namespace's public address; the rest point at refused space.
fn names() -> TableLookup {
    TableLookup::new()
        .with("public.test", &[ip(PUBLIC)])
        .with("api.public.test", &[ip(PUBLIC)])
        .with("other.test", &[ip(PUBLIC)])
        .with("private.test", &[ip(PRIVATE)])
        .with("meta.test", &[ip(METADATA)])
        .with("mapped-meta.test", &[ip("::ffff:169.254.169.254")])
        .with("mixed.test", &[ip(PUBLIC), ip(PRIVATE)])
        .with("mixed-reversed.test", &[ip(PRIVATE), ip(PUBLIC)])
        // A local-only name that does not resolve to loopback: refused even with the override.
        .with("localhost", &[ip(PRIVATE)])
}

fn redirect_url(base: SocketAddr, code: u16, to: &str) -> Url {
    let mut target = url(&format!("http://public.test:{}/redirect", base.port()));
    target
        .query_pairs_mut()
        .append_pair("code", &code.to_string())
        .append_pair("to", to);
    target
}

fn body_text(response: &mcp_surface_ledger::net::HttpResponse) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

fn expect_code(
    result: Result<impl std::fmt::Debug, NetError>,
    code: ReasonCode,
    context: &str,
) -> NetError {
    match result {
        Ok(value) => panic!("{context}: expected {code}, got a response {value:?}"),
        Err(error) => {
            assert_eq!(error.reason_code(), code, "{context}: {error}");
            error
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution and pinning

#[test]
fn public_name_is_pinned_to_the_verified_address() {
    isolated("public_name_is_pinned_to_the_verified_address", || async {
        let (server, seen) = serve(PUBLIC).await;
        let (client, table) = client(config(), names());
        let target = url(&format!("http://public.test:{}/echo", server.port()));
        let response = client
            .post(&target, HeaderMap::new(), b"hello".to_vec())
            .await
            .unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(
            body_text(&response),
            format!("POST host=public.test:{} auth=- body=hello", server.port())
        );
        assert_eq!(response.final_url, target);
        assert_eq!(seen.paths(), vec!["POST /echo"]);
        assert_eq!(table.lookups("public.test"), 1);
    });
}

#[test]
fn refused_answers_and_literals_are_never_connected() {
    isolated(
        "refused_answers_and_literals_are_never_connected",
        || async {
            let private_wire = Tripwire::bind(PRIVATE, 0);
            let port = private_wire.port();
            let metadata_wire = Tripwire::bind(METADATA, port);
            let public_wire = Tripwire::bind(PUBLIC, port);
            let (client, _) = client(config(), names());
            let cases = [
                ("http://mixed.test:{port}/", PRIVATE),
                ("http://mixed-reversed.test:{port}/", PRIVATE),
                ("http://private.test:{port}/", PRIVATE),
                ("http://meta.test:{port}/", METADATA),
                ("http://mapped-meta.test:{port}/", METADATA),
                ("http://10.0.0.5:{port}/", PRIVATE),
                ("http://169.254.169.254:{port}/", METADATA),
                ("http://2852039166:{port}/", METADATA),
                ("http://0xa9fea9fe:{port}/", METADATA),
                ("http://[::ffff:10.0.0.5]:{port}/", PRIVATE),
                ("http://[::ffff:a9fe:a9fe]:{port}/", METADATA),
            ];
            for (pattern, refused) in cases {
                let target = url(&pattern.replace("{port}", &port.to_string()));
                let error = expect_code(
                    client.get(&target, HeaderMap::new()).await,
                    ReasonCode::BlockedTarget,
                    pattern,
                );
                assert!(error.to_string().contains(refused), "{pattern}: {error}");
            }
            private_wire.assert_untouched();
            metadata_wire.assert_untouched();
            public_wire.assert_untouched();
        },
    );
}

#[test]
fn override_reaches_private_but_never_metadata() {
    isolated("override_reaches_private_but_never_metadata", || async {
        let (server, seen) = serve(PRIVATE).await;
        let metadata_wire = Tripwire::bind(METADATA, server.port());
        let (client, _) = client(config().allow_private(true), names());
        let ok = client
            .get(
                &url(&format!("http://private.test:{}/ok", server.port())),
                HeaderMap::new(),
            )
            .await
            .unwrap();
        assert_eq!(ok.status, 200);
        for target in [
            format!("http://meta.test:{}/", server.port()),
            format!("http://169.254.169.254:{}/", server.port()),
            format!("http://[::ffff:169.254.169.254]:{}/", server.port()),
        ] {
            expect_code(
                client.get(&url(&target), HeaderMap::new()).await,
                ReasonCode::BlockedTarget,
                &target,
            );
        }
        assert_eq!(seen.paths(), vec!["GET /ok"]);
        metadata_wire.assert_untouched();
    });
}

#[test]
fn rebinding_name_never_reaches_the_second_answer() {
    isolated("rebinding_name_never_reaches_the_second_answer", || async {
        let (server, seen) = serve(PUBLIC).await;
        let private_wire = Tripwire::bind(PRIVATE, server.port());
        let table = TableLookup::new()
            .with_sequence("rebind.test", vec![vec![ip(PUBLIC)], vec![ip(PRIVATE)]]);
        let (client, table) = client(config(), table);
        // `/close` ends the connection, so the second request needs a new one and a new lookup.
        let target = url(&format!("http://rebind.test:{}/close", server.port()));
        let first = client.get(&target, HeaderMap::new()).await.unwrap();
        assert_eq!(first.status, 200);
        let second = client.get(&target, HeaderMap::new()).await;
        match second {
            Err(error) => {
                assert_eq!(error.reason_code(), ReasonCode::BlockedTarget, "{error}");
                assert!(error.to_string().contains(PRIVATE), "{error}");
                assert_eq!(table.lookups("rebind.test"), 2);
            }
            // Only acceptable if the connection to the verified address was reused.
            Ok(response) => {
                assert_eq!(response.status, 200);
                assert_eq!(table.lookups("rebind.test"), 1);
            }
        }
        assert!(seen.paths().len() <= 2);
        private_wire.assert_untouched();
    });
}

#[test]
fn lookup_connect_timeout_and_size_failures_have_their_codes() {
    isolated(
        "lookup_connect_timeout_and_size_failures_have_their_codes",
        || async {
            let (server, _) = serve(PUBLIC).await;
            let closed = Tripwire::bind(PUBLIC, 0);
            let closed_port = closed.port();
            drop(closed);
            let config = NetConfig::new(Duration::from_millis(500), 3, 1000);
            let (client, _) = client(config, names());
            let at = |path: &str| url(&format!("http://public.test:{}{path}", server.port()));
            let get = |target: Url| {
                let client = client.clone();
                async move { client.get(&target, HeaderMap::new()).await }
            };
            expect_code(
                get(url("http://missing.test/")).await,
                ReasonCode::DnsFail,
                "unknown name",
            );
            expect_code(
                get(url(&format!("http://public.test:{closed_port}/"))).await,
                ReasonCode::ConnectFail,
                "closed port",
            );
            expect_code(get(at("/slow")).await, ReasonCode::Timeout, "slow server");
            expect_code(
                get(at("/big")).await,
                ReasonCode::ResponseTooLarge,
                "declared length",
            );
            expect_code(
                get(at("/big-chunked")).await,
                ReasonCode::ResponseTooLarge,
                "chunked body",
            );
            assert_eq!(get(at("/ok")).await.unwrap().body.as_ref(), b"ok");
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Redirects

#[test]
fn redirects_into_refused_space_are_never_followed() {
    isolated(
        "redirects_into_refused_space_are_never_followed",
        || async {
            let (server, seen) = serve(PUBLIC).await;
            let port = server.port();
            let metadata_wire = Tripwire::bind(METADATA, port);
            let metadata_80 = Tripwire::bind(METADATA, 80);
            let private_wire = Tripwire::bind(PRIVATE, port);
            let targets = [
                ("http://169.254.169.254/".to_string(), true),
                ("http://169.254.169.254/latest/meta-data/".to_string(), true),
                (format!("http://169.254.169.254:{port}/"), true),
                (format!("http://2852039166:{port}/"), true),
                (format!("http://[::ffff:169.254.169.254]:{port}/"), true),
                (format!("http://meta.test:{port}/"), true),
                (format!("http://10.0.0.5:{port}/"), false),
                (format!("http://private.test:{port}/"), false),
                (format!("http://mixed.test:{port}/"), false),
                (format!("http://localhost:{port}/"), true),
            ];
            let (public_client, _) = client(config(), names());
            let (override_client, _) = client(config().allow_private(true), names());
            for (to, refused_with_override) in &targets {
                for code in [301, 302, 303, 307, 308] {
                    let start = redirect_url(server, code, to);
                    expect_code(
                        public_client.get(&start, HeaderMap::new()).await,
                        ReasonCode::BlockedTarget,
                        &format!("{code} to {to}"),
                    );
                    if *refused_with_override {
                        expect_code(
                            override_client.get(&start, HeaderMap::new()).await,
                            ReasonCode::BlockedTarget,
                            &format!("{code} to {to} with override"),
                        );
                    }
                }
            }
            let (other_schemes, _) = client(config(), names());
            for to in [
                "file:///etc/passwd",
                "ftp://public.test/",
                "http://user:pw@public.test/ok",
            ] {
                let start = redirect_url(server, 302, to);
                expect_code(
                    other_schemes.get(&start, HeaderMap::new()).await,
                    ReasonCode::BlockedTarget,
                    to,
                );
            }
            assert!(
                seen.paths().iter().all(|p| p == "GET /redirect"),
                "{:?}",
                seen.paths()
            );
            metadata_wire.assert_untouched();
            metadata_80.assert_untouched();
            private_wire.assert_untouched();
        },
    );
}

#[test]
fn redirect_loops_and_long_chains_are_redirect_loop() {
    isolated(
        "redirect_loops_and_long_chains_are_redirect_loop",
        || async {
            let (server, seen) = serve(PUBLIC).await;
            let at = |path: &str| url(&format!("http://public.test:{}{path}", server.port()));
            let (client, _) = client(config(), names());

            let error = expect_code(
                client.get(&at("/loop/a"), HeaderMap::new()).await,
                ReasonCode::RedirectLoop,
                "a-b loop",
            );
            assert!(error.to_string().contains("already visited"), "{error}");
            let error = expect_code(
                client.get(&at("/self"), HeaderMap::new()).await,
                ReasonCode::RedirectLoop,
                "self loop",
            );
            assert!(error.to_string().contains("1 hop:"), "{error}");

            let done = client
                .get(&at("/chain/0/3"), HeaderMap::new())
                .await
                .unwrap();
            assert_eq!(body_text(&done), "done 3");
            assert_eq!(done.final_url, at("/chain/3/3"));

            let error = expect_code(
                client.get(&at("/chain/0/4"), HeaderMap::new()).await,
                ReasonCode::RedirectLoop,
                "4 hops",
            );
            assert!(error.to_string().contains("4 hops"), "{error}");
            let paths = seen.paths();
            assert!(paths.contains(&"GET /chain/3/4".to_string()));
            assert!(!paths.contains(&"GET /chain/4/4".to_string()), "{paths:?}");
        },
    );
}

#[test]
fn max_redirects_zero_follows_none() {
    isolated("max_redirects_zero_follows_none", || async {
        let (server, seen) = serve(PUBLIC).await;
        let (client, _) = client(NetConfig::new(Duration::from_secs(5), 0, 100_000), names());
        let start = url(&format!("http://public.test:{}/chain/0/1", server.port()));
        let error = expect_code(
            client.get(&start, HeaderMap::new()).await,
            ReasonCode::RedirectLoop,
            "max 0",
        );
        assert!(error.to_string().contains("1 hop:"), "{error}");
        assert_eq!(seen.paths(), vec!["GET /chain/0/1"]);
        let plain = client
            .get(
                &url(&format!("http://public.test:{}/ok", server.port())),
                HeaderMap::new(),
            )
            .await
            .unwrap();
        assert_eq!(plain.status, 200);
    });
}

#[test]
fn post_redirects_keep_the_method_or_fail() {
    isolated("post_redirects_keep_the_method_or_fail", || async {
        let (server, seen) = serve(PUBLIC).await;
        let (client, _) = client(config(), names());
        for code in [307, 308] {
            let start = redirect_url(server, code, "/echo");
            let response = client
                .post(&start, HeaderMap::new(), b"{\"id\":1}".to_vec())
                .await
                .unwrap();
            assert_eq!(
                body_text(&response),
                format!(
                    "POST host=public.test:{} auth=- body={{\"id\":1}}",
                    server.port()
                ),
                "{code}"
            );
        }
        let before = seen.paths().len();
        for code in [301, 302, 303] {
            let start = redirect_url(server, code, "/echo");
            let error = expect_code(
                client.post(&start, HeaderMap::new(), b"{}".to_vec()).await,
                ReasonCode::HttpError,
                &format!("POST {code}"),
            );
            assert!(error.to_string().contains(&code.to_string()), "{error}");
        }
        assert_eq!(
            seen.paths().len(),
            before + 3,
            "the refused hops were requested: {:?}",
            seen.paths()
        );
        for code in [301, 302, 303, 307, 308] {
            let start = redirect_url(server, code, "/echo");
            let response = client.get(&start, HeaderMap::new()).await.unwrap();
            assert!(body_text(&response).starts_with("GET "), "{code}");
        }
    });
}

#[test]
fn credentials_never_cross_origins() {
    isolated("credentials_never_cross_origins", || async {
        let (server, _) = serve(PUBLIC).await;
        let (client, _) = client(config(), names());
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "Bearer secret".parse().unwrap());
        let same = client
            .get(&redirect_url(server, 307, "/echo"), headers.clone())
            .await
            .unwrap();
        assert!(
            body_text(&same).contains("auth=Bearer secret"),
            "{}",
            body_text(&same)
        );
        let cross_target = format!("http://other.test:{}/echo", server.port());
        let cross = client
            .get(&redirect_url(server, 307, &cross_target), headers)
            .await
            .unwrap();
        assert!(
            body_text(&cross).contains("auth=-"),
            "{}",
            body_text(&cross)
        );
    });
}

// ---------------------------------------------------------------------------------------------
// allowed_hosts

#[test]
fn allowed_hosts_narrow_requests_and_redirects() {
    isolated("allowed_hosts_narrow_requests_and_redirects", || async {
        let (server, seen) = serve(PUBLIC).await;
        let port = server.port();
        let (client, table) = client(config().allowed_hosts(vec!["public.test".into()]), names());

        let sub = client
            .get(
                &url(&format!("http://api.public.test:{port}/ok")),
                HeaderMap::new(),
            )
            .await
            .unwrap();
        assert_eq!(sub.status, 200);

        let error = expect_code(
            client
                .get(
                    &url(&format!("http://other.test:{port}/ok")),
                    HeaderMap::new(),
                )
                .await,
            ReasonCode::BlockedTarget,
            "outside the list",
        );
        assert!(error.to_string().contains("other.test"), "{error}");
        assert_eq!(table.lookups("other.test"), 0);

        let cross = redirect_url(server, 302, &format!("http://other.test:{port}/ok"));
        expect_code(
            client.get(&cross, HeaderMap::new()).await,
            ReasonCode::BlockedTarget,
            "redirect out",
        );
        expect_code(
            client
                .get(
                    &url(&format!("http://{PUBLIC}:{port}/ok")),
                    HeaderMap::new(),
                )
                .await,
            ReasonCode::BlockedTarget,
            "literal outside the list",
        );
        assert_eq!(seen.paths(), vec!["GET /ok", "GET /redirect"]);
    });
}

// ---------------------------------------------------------------------------------------------
// Streaming

#[test]
fn get_stream_yields_chunks_before_the_body_ends() {
    isolated("get_stream_yields_chunks_before_the_body_ends", || async {
        let (server, _) = serve(PUBLIC).await;
        let (client, _) = client(config(), names());
        let target = url(&format!("http://public.test:{}/stream-hang", server.port()));
        let mut response = client.get_stream(&target, HeaderMap::new()).await.unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.content_type(), "text/event-stream");
        let first = response.body.next().await.unwrap().unwrap();
        assert_eq!(first.as_ref(), b"data: 1\n\n");
    });
}

#[test]
fn get_stream_stops_at_the_cap() {
    isolated("get_stream_stops_at_the_cap", || async {
        let (server, _) = serve(PUBLIC).await;
        let target = url(&format!("http://public.test:{}/big-chunked", server.port()));

        let (roomy, _) = client(NetConfig::new(Duration::from_secs(5), 3, 10_000), names());
        let response = roomy.get_stream(&target, HeaderMap::new()).await.unwrap();
        let chunks: Vec<_> = response.body.collect().await;
        let total: usize = chunks.into_iter().map(|c| c.unwrap().len()).sum();
        assert_eq!(total, 10_000);

        let (tight, _) = client(NetConfig::new(Duration::from_secs(5), 3, 2_500), names());
        let mut response = tight.get_stream(&target, HeaderMap::new()).await.unwrap();
        let mut received = 0;
        let error = loop {
            match response.body.next().await {
                Some(Ok(chunk)) => received += chunk.len(),
                Some(Err(error)) => break error,
                None => panic!("the stream ended without hitting the cap"),
            }
        };
        assert_eq!(error.reason_code(), ReasonCode::ResponseTooLarge);
        assert!(received <= 2_500);
        assert!(
            response.body.next().await.is_none(),
            "the stream must end after the error"
        );
    });
}

#[test]
fn literal_addresses_skip_the_resolver_but_not_the_policy() {
    isolated(
        "literal_addresses_skip_the_resolver_but_not_the_policy",
        || async {
            let (server, seen) = serve(PUBLIC).await;
            let (client, _) = client(PolicyModeConfig::public(), TableLookup::new());
            let ok = client
                .get(
                    &url(&format!("http://{PUBLIC}:{}/ok", server.port())),
                    HeaderMap::new(),
                )
                .await
                .unwrap();
            assert_eq!(ok.status, 200);
            assert_eq!(seen.paths(), vec!["GET /ok"]);
        },
    );
}

/// Spells out the mode for the literal test, so a change of the default is visible here.
struct PolicyModeConfig;

impl PolicyModeConfig {
    fn public() -> NetConfig {
        let config = config();
        assert_eq!(config.policy, PolicyMode::Public);
        config
    }
}
