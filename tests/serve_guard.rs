//! `serve` at its edges: the `Host`/`Origin` check on every route, a declared oversize body
//! answered before it is read (and a sent one drained, so its client reads the 413), an
//! unparseable MCP body, `GET /ledgers`, 200 parallel page loads, and the command line
//! (`serve --help`, Standby mode with `--storage-dir`).
//!
//! The ledger is written by a real Actor run against an in-process rmcp server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use actor::{BINARY, RunDir};
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use mcp_surface_ledger::serve::{self, READINESS_HEADER};
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a test waits for an answer that must come without the request body.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

struct Fixture {
    dir: RunDir,
    _peer: RmcpPeer,
    server_url: String,
    addr: std::net::SocketAddr,
}

async fn fixture(policy: HostPolicy) -> Fixture {
    let peer = RmcpPeer::start(
        surface("demo", "1.0.0", vec![tool("read_file", "Reads a file")]),
        RmcpMode::default(),
    );
    let server_url = peer.url.to_string();
    let dir = RunDir::new();
    dir.run_ok(&json!({"servers": [server_url]}), None).await;
    let storage = LocalStorage::open_existing(dir.root());
    let addr = support::background::serve(serve::app(Backend::Local(storage), policy));
    Fixture {
        dir,
        _peer: peer,
        server_url,
        addr,
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(ANSWER_DEADLINE)
        .build()
        .expect("reqwest client")
}

fn segment(url: &str) -> String {
    url::form_urlencoded::byte_serialize(url.as_bytes()).collect()
}

/// Every route, as (method, path and query, body).
fn every_route(server_url: &str) -> Vec<(&'static str, String, Option<String>)> {
    let server = segment(server_url);
    let diff = json!({"before": {"tools": []}, "after": {"tools": []}}).to_string();
    let mcp = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    vec![
        ("GET", "/".into(), None),
        ("GET", "/ledgers".into(), None),
        ("GET", "/ledgers/DEFAULT/servers".into(), None),
        (
            "GET",
            format!("/ledgers/DEFAULT/servers/{server}/changes"),
            None,
        ),
        (
            "GET",
            format!("/ledgers/DEFAULT/servers/{server}/surface"),
            None,
        ),
        ("GET", format!("/server?ledger=DEFAULT&url={server}"), None),
        ("GET", "/changes?severity=high".into(), None),
        ("GET", "/changes.atom".into(), None),
        ("POST", "/diff".into(), Some(diff)),
        ("POST", "/mcp".into(), Some(mcp)),
        ("GET", "/no/such/route".into(), None),
    ]
}

async fn send(
    client: &reqwest::Client,
    base: &str,
    (method, path, body): &(&str, String, Option<String>),
    headers: &[(&str, &str)],
) -> (u16, String) {
    let url = format!("{base}{path}");
    let mut request = match *method {
        "POST" => client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.clone().unwrap_or_default()),
        _ => client.get(url).header("accept", "text/html"),
    };
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn every_route_refuses_a_foreign_host_or_origin() {
    let fx = fixture(HostPolicy::local().with_names(["ledger.internal.example"])).await;
    let client = http();
    let base = format!("http://{}", fx.addr);
    let port = fx.addr.port();
    for route in every_route(&fx.server_url) {
        let what = format!("{} {}", route.0, route.1);
        // A rebinding page's own name in Host.
        let (status, body) = send(&client, &base, &route, &[("host", "evil.example")]).await;
        assert_eq!(status, 421, "{what}: {body}");
        let body: Value = serde_json::from_str(&body).expect("a JSON refusal");
        assert_eq!(body["error"], "host_not_allowed", "{what}");
        assert!(
            !body.to_string().contains("read_file"),
            "{what} leaked the ledger"
        );
        // A cross-site request from a browser.
        let (status, body) = send(
            &client,
            &base,
            &route,
            &[("origin", "https://evil.example")],
        )
        .await;
        assert_eq!(status, 403, "{what}: {body}");
        let body: Value = serde_json::from_str(&body).expect("a JSON refusal");
        assert_eq!(body["error"], "origin_not_allowed", "{what}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains("--allow-host"), "{what}: {body}");
        // Accepted: loopback names, IP literals, the operator's name, a same-host Origin.
        for (host, origin) in [
            (format!("localhost:{port}"), None),
            (
                format!("127.0.0.1:{port}"),
                Some(format!("http://127.0.0.1:{port}")),
            ),
            ("ledger.internal.example".to_string(), None),
        ] {
            let mut headers = vec![("host", host.as_str())];
            if let Some(origin) = &origin {
                headers.push(("origin", origin.as_str()));
            }
            let (status, body) = send(&client, &base, &route, &headers).await;
            assert!(
                status != 421 && status != 403,
                "{what} with Host {host}: {status} {body}"
            );
        }
    }
    // The platform's readiness probe is answered whatever its Host.
    let response = client
        .get(format!("{base}/"))
        .header(READINESS_HEADER, "1")
        .header("host", "10.0.0.1:4321")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    // The platform policy accepts its Standby names.
    assert!(HostPolicy::platform().allows_host("user--ledger.apify.actor"));
}

/// Sends only the head of a request that declares a 2 MiB body, and reads the answer.
async fn declared_oversize(addr: std::net::SocketAddr, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        2 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    let read = tokio::time::timeout(ANSWER_DEADLINE, async {
        loop {
            let n = stream.read(&mut buffer).await.unwrap_or(0);
            answer.extend_from_slice(&buffer[..n]);
            let head_read = answer.windows(4).any(|w| w == b"\r\n\r\n");
            if n == 0 || (head_read && answer.ends_with(b"}")) {
                break;
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "{path}: no answer while the declared body was never sent"
    );
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_declared_oversize_body_is_refused_before_it_is_read() {
    let fx = fixture(HostPolicy::local()).await;
    for path in ["/diff", "/mcp", "/ledgers"] {
        let answer = declared_oversize(fx.addr, path).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
        let json_rpc = answer.contains("\"jsonrpc\":\"2.0\"");
        assert_eq!(
            json_rpc,
            path == "/mcp",
            "{path}: a JSON-RPC error on /mcp only"
        );
    }
    // Still serving.
    let response = http()
        .get(format!("http://{}/ledgers", fx.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

/// Sends a whole request with a body one byte over the limit, then reads the answer to the
/// end of the connection. Every write and the read must succeed: the server answers 413
/// early but reads the body to its end before it closes, so the client never meets a reset.
async fn sent_oversize(addr: std::net::SocketAddr, path: &str) -> String {
    let body = vec![b' '; serve::MAX_BODY_BYTES + 1];
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        std::io::Result::Ok(answer)
    };
    let answer = tokio::time::timeout(ANSWER_DEADLINE, exchange)
        .await
        .unwrap_or_else(|_| panic!("{path}: no answer within {ANSWER_DEADLINE:?}"))
        .unwrap_or_else(|error| panic!("{path}: the oversize request failed: {error}"));
    String::from_utf8_lossy(&answer).into_owned()
}

/// A client that sends its whole oversize body (as reqwest or curl do) reads the 413, on the
/// API and on `/mcp`, and the server keeps serving.
#[tokio::test]
async fn a_sent_oversize_body_is_drained_so_the_client_reads_the_413() {
    let fx = fixture(HostPolicy::local()).await;
    for path in ["/diff", "/mcp"] {
        let answer = sent_oversize(fx.addr, path).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
        let (_, body) = answer.split_once("\r\n\r\n").unwrap();
        let body: Value = serde_json::from_str(body).expect("a JSON body");
        if path == "/mcp" {
            assert_eq!(body["error"]["code"], -32600, "{body}");
        } else {
            assert_eq!(body["error"], "request_too_large", "{body}");
        }
    }
    let response = http()
        .post(format!("http://{}/diff", fx.addr))
        .header("content-type", "application/json")
        .body(vec![b' '; serve::MAX_BODY_BYTES + 1])
        .send()
        .await
        .expect("reqwest reads the answer");
    assert_eq!(response.status().as_u16(), 413);
}

#[tokio::test]
async fn an_unparseable_mcp_body_is_a_400_parse_error() {
    let fx = fixture(HostPolicy::local()).await;
    for body in ["{oops", "\u{0}\u{1}", "[{\"jsonrpc\": "] {
        let response = http()
            .post(format!("http://{}/mcp", fx.addr))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 400, "{body:?}");
        let answer: Value = response.json().await.expect("a JSON-RPC error");
        assert_eq!(answer["error"]["code"], -32700, "{body:?}: {answer}");
        assert_eq!(answer["jsonrpc"], "2.0");
    }
}

#[tokio::test]
async fn ledgers_lists_the_names_in_the_store() {
    let fx = fixture(HostPolicy::local()).await;
    // A second, sharded-looking name next to DEFAULT; its shard ledgers are listed once.
    let ledger_dir = fx
        .dir
        .ledger_path("DEFAULT")
        .parent()
        .unwrap()
        .to_path_buf();
    let index = std::fs::read(fx.dir.ledger_path("DEFAULT")).unwrap();
    std::fs::write(ledger_dir.join("night-watch.json"), &index).unwrap();
    let response = http()
        .get(format!("http://{}/ledgers", fx.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["ledgers"], json!(["DEFAULT", "night-watch"]), "{body}");
    assert_eq!(body["ledgers_total"], 2);
}

/// Many page loads at once: every one answered 200 with a page. The time of the whole burst
/// is printed (a figure for the docs), never asserted.
#[tokio::test]
async fn two_hundred_parallel_page_loads_all_succeed() {
    let fx = fixture(HostPolicy::local()).await;
    let client = http();
    let base = format!("http://{}", fx.addr);
    let server = segment(&fx.server_url);
    let started = Instant::now();
    let loads = (0..200).map(|i| {
        let client = client.clone();
        let url = match i % 4 {
            0 => format!("{base}/"),
            1 => format!("{base}/server?url={server}"),
            2 => format!("{base}/changes"),
            _ => format!("{base}/changes.atom"),
        };
        tokio::spawn(async move {
            let started = Instant::now();
            let response = client
                .get(&url)
                .header("accept", "text/html")
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = response.status().as_u16();
            let text = response.text().await.map_err(|e| e.to_string())?;
            let page = text.contains("</html>") || text.contains("</feed>");
            if status == 200 && page {
                Ok(started.elapsed())
            } else {
                Err(format!("{url}: {status}"))
            }
        })
    });
    let outcomes = futures::future::join_all(loads).await;
    let mut slowest = Duration::ZERO;
    let mut failures = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(Ok(elapsed)) => slowest = slowest.max(elapsed),
            Ok(Err(error)) => failures.push(error),
            Err(panic) => failures.push(panic.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
    eprintln!(
        "200 parallel page loads: all 200 in {:?}, slowest {slowest:?}",
        started.elapsed()
    );
}

/// A browser opening a store no run has written yet gets a page that says so.
#[tokio::test]
async fn an_empty_store_gets_a_page_saying_so() {
    let empty = tempfile::tempdir().unwrap();
    let storage = LocalStorage::open_existing(empty.path());
    let addr = support::background::serve(serve::app(Backend::Local(storage), HostPolicy::local()));
    let response = http()
        .get(format!("http://{addr}/"))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.text().await.unwrap().contains("id=\"no-ledger\""));
    let listed: Value = http()
        .get(format!("http://{addr}/ledgers"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["ledgers"], json!([]));
}

#[test]
fn serve_does_not_offer_the_probe_flags() {
    let help = Command::new(BINARY)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(!help.contains("allow-private-targets"), "{help}");
    assert!(help.contains("--allow-host"), "{help}");
    let refused = Command::new(BINARY)
        .args(["serve", "--allow-private-targets", "--port", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    for probing in ["snapshot", "diff"] {
        let help = Command::new(BINARY)
            .args([probing, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&help.stdout).into_owned();
        assert!(
            help.contains("--allow-private-targets"),
            "{probing}: {help}"
        );
    }
}

/// Started in Standby mode with `--storage-dir`, the binary reads that folder (not the
/// environment's storage or `./storage`).
#[tokio::test]
async fn standby_mode_reads_the_storage_dir_it_is_given() {
    let fx = fixture(HostPolicy::local()).await;
    let elsewhere = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let mut command = standby(&fx);
    command
        .current_dir(elsewhere.path())
        .env("ACTOR_STANDBY_PORT", "0")
        .env_remove("ACTOR_WEB_SERVER_PORT")
        .env("CRAWLEE_STORAGE_DIR", elsewhere.path())
        .env_remove("APIFY_LOCAL_STORAGE_DIR")
        .stdout(Stdio::null());
    let server = support::process::Serving::spawn(command, &logs.path().join("err"));
    let url = format!("http://{}/ledgers", server.addr);
    let response = http()
        .get(&url)
        .send()
        .await
        .expect("the Standby server answers");
    let listed: Value = response.json().await.expect("a JSON listing");
    assert_eq!(listed["ledgers"], json!(["DEFAULT"]), "{listed}");
}

/// The binary started as the platform starts it in Standby mode (locally: not at home), on the
/// fixture's storage; the caller adds the port (0: the server picks one and says which) and
/// where the output goes.
fn standby(fx: &Fixture) -> Command {
    let mut command = Command::new(BINARY);
    command
        .arg("--storage-dir")
        .arg(fx.dir.root())
        .env("APIFY_META_ORIGIN", "STANDBY")
        .env_remove("APIFY_IS_AT_HOME")
        // The line saying where it serves is logged at info.
        .env("RUST_LOG", "info")
        .stdin(Stdio::null());
    command
}

/// On the platform a browser opens the Standby URL with `?token=` (it cannot send an
/// `Authorization` header when following a link): every link of the pages carries the token
/// on, so the next click is authorized too; the Atom feed never repeats it; and nothing the
/// server prints holds it, even at trace level. The binary runs in Standby mode on
/// `ACTOR_WEB_SERVER_PORT`, the port the Standby documentation names.
#[tokio::test]
async fn pages_carry_the_token_they_were_opened_with_and_nothing_else_shows_it() {
    const TOKEN: &str = "apify_api_CANARY0token0TEST";
    let fx = fixture(HostPolicy::local()).await;
    let logs = tempfile::tempdir().unwrap();
    let mut command = standby(&fx);
    command
        .env("ACTOR_WEB_SERVER_PORT", "0")
        .env_remove("ACTOR_STANDBY_PORT")
        .env("RUST_LOG", "trace")
        .stdout(std::fs::File::create(logs.path().join("out")).unwrap());
    let guard = support::process::Serving::spawn(command, &logs.path().join("err"));
    let base = format!("http://{}", guard.addr);
    let client = http();
    let page = async |path: &str| {
        let url = format!("{base}{path}");
        let response = client
            .get(&url)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap_or_else(|error| panic!("{url} never answered: {error}"));
        assert_eq!(response.status().as_u16(), 200, "{url}");
        response.text().await.unwrap()
    };
    let links = |html: &str| -> Vec<String> {
        html.split("href=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].replace("&amp;", "&"))
            .collect()
    };
    let fleet = page(&format!("/?token={TOKEN}")).await;
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("url", &fx.server_url)
        .append_pair("token", TOKEN)
        .finish();
    let server = page(&format!("/server?{query}")).await;
    let changes = page(&format!("/changes?severity=high&token={TOKEN}")).await;
    for (name, html) in [
        ("fleet", &fleet),
        ("server", &server),
        ("changes", &changes),
    ] {
        let links = links(html);
        assert!(links.len() >= 4, "{name}: {links:?}");
        for link in &links {
            assert!(link.starts_with("./"), "{name}: {link}");
            assert!(link.ends_with(&format!("token={TOKEN}")), "{name}: {link}");
        }
    }
    assert!(changes.contains(&format!(
        "<input type=\"hidden\" name=\"token\" value=\"{TOKEN}\">"
    )));
    // Following a link of the fleet page (what a click does) reaches the server page, whose
    // links carry the token again.
    let server_link = links(&fleet)
        .into_iter()
        .find(|link| link.starts_with("./server?"))
        .expect("a server link");
    let followed = page(&server_link[1..]).await;
    assert!(links(&followed).iter().all(|l| l.contains(TOKEN)));
    // Without a token the links carry none, and a crafted one is not carried.
    let plain = page("/").await;
    assert!(links(&plain).iter().all(|l| !l.contains("token")));
    let crafted = page("/?token=%22%3E%3Cb%3Ex").await;
    assert!(links(&crafted).iter().all(|l| !l.contains("token")));
    let feed = client
        .get(format!("{base}/changes.atom?token={TOKEN}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(feed.contains("<feed"), "{feed}");
    assert!(
        !feed.contains("CANARY"),
        "the feed repeats the token: {feed}"
    );
    drop(guard);
    let printed = std::fs::read_to_string(logs.path().join("out")).unwrap()
        + &std::fs::read_to_string(logs.path().join("err")).unwrap();
    assert!(printed.contains("serving the ledger"), "{printed}");
    assert!(
        !printed.contains("CANARY"),
        "the token was printed: {printed}"
    );
}
