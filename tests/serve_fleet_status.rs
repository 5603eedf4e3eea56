//! The fleet page and `GET /ledgers/{name}/servers` list every watched server of the last run
//! with its status (`status.<ledger_name>` beside the ledger), over real Actor runs against
//! real MCP peers (the official Python SDK, server-everything): a server that was never read
//! (connection refused, auth required, blocked, over budget) is listed; one whose last read
//! failed is marked failing, not shown healthy with its old tools; `since` carries over while
//! the state stays; a server that comes back is healthy again. The page is checked in headless
//! Chromium. A status record someone wrote into the store is shown escaped, and a damaged one
//! leaves the page standing with a note. Skips with a note without the peers (and the browser
//! part without Chromium).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

#[path = "support/actor.rs"]
mod actor;
#[path = "support/pricing.rs"]
mod pricing;
mod support;

use std::process::Command;
use std::time::Duration;

use actor::RunDir;
use chrono::{DateTime, Utc};
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use serde_json::{Value, json};
use support::auth_peer::{self, PyTransport};
use support::browser::{self, DESKTOP};
use support::process::{self, PeerProcess};
use support::surface::{SurfaceFile, surface, tool};

/// What a hostile status record would do if its text became markup.
const MARK: &str = "document.documentElement.setAttribute('data-xss','1')";

/// The Python SDK peer serving `file` on `port` (fixed, so a server can go away and come back
/// at the same URL).
fn python_on(file: &SurfaceFile, port: u16) -> PeerProcess {
    let python = support::python::interpreter().expect("the Python peer is installed");
    let mut command = Command::new(python);
    command
        .arg(process::scripts_dir().join("surface_server.py"))
        .arg(file.path())
        .arg("--port")
        .arg(port.to_string())
        .arg("--watch-stdin");
    process::spawn_announcing("python-peer", command)
}

/// The local environment of a pay-per-event run with maximum `max`.
fn budget(max: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("ACTOR_TEST_PAY_PER_EVENT", "1"),
        (
            "APIFY_ACTOR_PRICING_INFO",
            pricing::SEED_PRICING_INFO.as_str(),
        ),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
        ("ACTOR_MAX_TOTAL_CHARGE_USD", max),
    ]
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn get_json(url: &str) -> Value {
    let response = http().get(url).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    response.json().await.unwrap()
}

async fn get_page(url: &str) -> String {
    let response = http()
        .get(url)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    response.text().await.unwrap()
}

/// The listed server of `url`, by its ledger key.
fn listed<'a>(servers: &'a Value, url: &str) -> &'a Value {
    servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server_url"] == url)
        .unwrap_or_else(|| panic!("{url} is not listed: {servers:#}"))
}

fn time(value: &Value) -> DateTime<Utc> {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {value}"))
        .parse()
        .unwrap()
}

/// The number on the fleet page's tile `stat`.
fn tile(html: &str, stat: &str) -> usize {
    let at = html
        .find(&format!("data-stat=\"{stat}\""))
        .unwrap_or_else(|| panic!("no tile {stat}"));
    let rest = &html[at..];
    let start = rest.find("<span class=\"num\">").unwrap() + "<span class=\"num\">".len();
    rest[start..start + rest[start..].find('<').unwrap()]
        .parse()
        .unwrap()
}

/// The `<tr>` of the server whose URL the page shows as `url` (escaped for HTML).
fn row_of<'a>(html: &'a str, url: &str) -> &'a str {
    let code = format!("<code>{url}</code>");
    html.split("<tr class=\"server")
        .skip(1)
        .map(|rest| &rest[..rest.find("</tr>").unwrap()])
        .find(|row| row.contains(&code))
        .unwrap_or_else(|| panic!("no row of {url}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_lists_every_watched_server_with_its_last_status() {
    if support::python::interpreter().is_none() {
        support::skip(
            "the_fleet_lists_every_watched_server_with_its_last_status",
            "tests/peers/install.sh has not run",
        );
        return;
    }
    let steady_file = SurfaceFile::new(&surface(
        "steady",
        "1.0.0",
        vec![tool("search", "Searches the web")],
    ));
    let (steady_port, late_port) = (process::free_port(), process::free_port());
    let steady_url = format!("http://127.0.0.1:{steady_port}/mcp");
    // Nothing listens on the late server's port until the third run.
    let late_url = format!("http://127.0.0.1:{late_port}/mcp");
    let late_file = SurfaceFile::new(&surface(
        "late",
        "2.0.0",
        vec![tool("send_email", "Sends an e-mail")],
    ));
    let over_file = SurfaceFile::new(&surface("over", "1.0.0", vec![tool("a", "A")]));
    let over = support::python::start(&over_file, Default::default()).unwrap();
    let over_url = over.url().to_string();
    let auth_file = SurfaceFile::new(&surface("locked", "1.0.0", vec![tool("b", "B")]));
    let auth = auth_peer::start_python(&auth_file, PyTransport::StreamableHttp, true).unwrap();
    let everything = support::everything::shared().map(|peer| peer.url().to_string());
    if everything.is_none() {
        support::skip(
            "server-everything part",
            "tests/peers/install.sh has not run",
        );
    }
    let hostile_entry = format!("<script>{MARK}</script>");
    let blocked = "ftp://blocked.example/mcp".to_string();
    let mut servers = vec![steady_url.clone(), late_url.clone(), auth.url.to_string()];
    servers.extend(everything.clone());
    // Last, so a budget for all servers but one leaves this one unread.
    servers.push(over_url.clone());
    servers.extend([blocked.clone(), hostile_entry.clone()]);
    let usable = servers.len() - 2;
    let input = json!({"servers": servers, "ledger_name": "fleet", "concurrency": 4});
    let dir = RunDir::new();

    // Run 1: every usable server but the last is affordable.
    let steady = python_on(&steady_file, steady_port);
    let max: &'static str = if usable == 5 { "0.03" } else { "0.025" };
    dir.run_with_env(&input, None, &budget(max)).await.unwrap();
    let storage = LocalStorage::open_existing(dir.root());
    let addr = support::background::serve(serve::app(Backend::Local(storage), HostPolicy::local()));
    let base = format!("http://{addr}");
    let api = format!("{base}/ledgers/fleet/servers");

    let first = get_json(&api).await;
    assert_eq!(first["servers_total"], servers.len(), "{first:#}");
    let run1 = time(&first["last_run_at"]);
    let expect = [
        (steady_url.as_str(), "healthy", "OK"),
        (late_url.as_str(), "unreachable", "CONNECT_FAIL"),
        (auth.url.as_str(), "auth_required", "AUTH_REQUIRED"),
        (over_url.as_str(), "over_budget", "BUDGET_EXHAUSTED"),
        (blocked.as_str(), "blocked", "BLOCKED_TARGET"),
        (hostile_entry.as_str(), "blocked", "BLOCKED_TARGET"),
    ];
    for (url, state, code) in expect {
        let status = &listed(&first, url)["status"];
        assert_eq!(status["state"], state, "{url}: {status:#}");
        assert_eq!(status["reason_code"], code, "{url}");
        assert_eq!(time(&status["since"]), run1, "{url}");
    }
    if let Some(url) = &everything {
        assert_eq!(listed(&first, url)["status"]["state"], "healthy");
    }
    let never_read = listed(&first, &late_url);
    assert_eq!(never_read["first_seen"], Value::Null);
    assert_eq!(never_read["status"]["last_read"], Value::Null);
    assert_eq!(never_read["status"]["ok"], false);
    assert_eq!(listed(&first, over_url.as_str())["first_seen"], Value::Null);
    assert_eq!(
        time(&listed(&first, &steady_url)["status"]["last_read"]),
        run1
    );

    let page = get_page(&format!("{base}/?ledger=fleet")).await;
    assert_eq!(tile(&page, "servers"), servers.len());
    assert_eq!(tile(&page, "unreachable"), 1);
    assert_eq!(tile(&page, "auth_required"), 1);
    assert_eq!(tile(&page, "blocked"), 2);
    assert_eq!(tile(&page, "over_budget"), 1);
    assert!(row_of(&page, &late_url).contains("never read"));
    assert!(!page.contains(&hostile_entry), "an entry became markup");

    // Run 2: the steady server is down; everything is affordable.
    drop(steady);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    dir.run_ok(&input, None).await;
    let second = get_json(&api).await;
    let run2 = time(&second["last_run_at"]);
    assert!(run2 > run1);
    let down = listed(&second, &steady_url);
    assert_eq!(down["status"]["state"], "unreachable", "{down:#}");
    assert_eq!(down["status"]["reason_code"], "CONNECT_FAIL");
    assert_eq!(time(&down["status"]["since"]), run2);
    assert_eq!(time(&down["status"]["last_read"]), run1);
    assert_eq!(down["tools_total"], 1, "the last read's tools stay listed");
    let still = &listed(&second, &late_url)["status"];
    assert_eq!(still["reason_code"], "CONNECT_FAIL");
    assert_eq!(
        time(&still["since"]),
        run1,
        "an unchanged state keeps its since"
    );
    assert_eq!(time(&still["checked_at"]), run2);
    assert_eq!(
        time(&listed(&second, auth.url.as_str())["status"]["since"]),
        run1
    );
    let read_now = &listed(&second, over_url.as_str())["status"];
    assert_eq!(read_now["state"], "healthy");
    assert_eq!(time(&read_now["since"]), run2);

    let page = get_page(&format!("{base}/?ledger=fleet")).await;
    assert_eq!(tile(&page, "unreachable"), 2);
    assert_eq!(tile(&page, "over_budget"), 0);
    let row = row_of(&page, &steady_url);
    assert!(
        row.starts_with(" failing\" data-state=\"unreachable\""),
        "{row}"
    );
    assert!(
        row.contains("CONNECT_FAIL") && row.contains("as read"),
        "{row}"
    );
    assert!(
        !row.contains("status-ok"),
        "a failing server looks healthy: {row}"
    );
    let server_page = get_page(&format!(
        "{base}/server?ledger=fleet&url={}",
        url::form_urlencoded::byte_serialize(steady_url.as_bytes()).collect::<String>()
    ))
    .await;
    assert!(
        server_page.contains("id=\"status-alert\""),
        "no alert on the server page"
    );
    let late_page = get_page(&format!(
        "{base}/server?ledger=fleet&url={}",
        url::form_urlencoded::byte_serialize(late_url.as_bytes()).collect::<String>()
    ))
    .await;
    assert!(late_page.contains("It has never been read."));

    if browser::available() {
        let dom = browser::chromium(&format!("{base}/?ledger=fleet"), DESKTOP, "--dump-dom");
        assert!(!dom.contains("data-xss=\"1\""), "a payload ran");
        assert!(!dom.contains("<script"), "an entry became markup");
        assert_eq!(dom.matches("<tr class=\"server").count(), servers.len());
        // Two blocked, two unreachable, one requiring auth.
        assert_eq!(
            dom.matches("<tr class=\"server failing\"").count(),
            5,
            "{dom}"
        );
        assert!(dom.contains(&format!(
            "<code>{}</code>",
            hostile_entry.replace('<', "&lt;").replace('>', "&gt;")
        )));
        let shots = browser::target_dir().join("serve-pages");
        std::fs::create_dir_all(&shots).unwrap();
        browser::screenshot(
            &format!("{base}/?ledger=fleet"),
            DESKTOP,
            &shots.join("fleet-status-desktop.png"),
        );
    } else {
        support::skip("the fleet status page in Chromium", "chromium absent");
    }

    // Run 3: both come back at their URLs.
    let _steady = python_on(&steady_file, steady_port);
    let _late = python_on(&late_file, late_port);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    dir.run_ok(&input, None).await;
    let third = get_json(&api).await;
    let run3 = time(&third["last_run_at"]);
    for url in [&steady_url, &late_url] {
        let server = listed(&third, url);
        assert_eq!(server["status"]["state"], "healthy", "{server:#}");
        assert_eq!(time(&server["status"]["since"]), run3);
        assert_eq!(time(&server["status"]["last_read"]), run3);
        assert!(server["first_seen"].is_string());
    }
    let page = get_page(&format!("{base}/?ledger=fleet")).await;
    assert_eq!(tile(&page, "unreachable"), 0);
    assert!(!row_of(&page, &late_url).starts_with(" failing"));

    // Someone writes the status record: its text is shown as text, its claims capped.
    let key = dir.ledger_path("status.fleet");
    let forged = json!({
        "format": 1,
        "ledger_name": "fleet",
        "run_at": "2026-01-01T00:00:00Z",
        "servers": [{
            "server_url": format!("\"><img src=x onerror=\"{MARK}\">"),
            "ok": true,
            "reason_code": format!("<script>{MARK}</script>"),
            "error": format!("<svg onload=\"{MARK}\">"),
            "since": "2026-01-01T00:00:00Z",
            "last_read": null,
            "checked_at": "2026-01-01T00:00:00Z"
        }]
    });
    std::fs::write(&key, serde_json::to_vec(&forged).unwrap()).unwrap();
    let page = get_page(&format!("{base}/?ledger=fleet")).await;
    for markup in ["<img", "<svg", "<script"] {
        assert!(!page.contains(markup), "{markup} became markup");
    }
    let listing = get_json(&api).await;
    let forged_row = listed(&listing, &format!("\"><img src=x onerror=\"{MARK}\">"));
    assert_eq!(forged_row["status"]["reason_code"], "INVALID");
    assert_ne!(forged_row["status"]["state"], "healthy");

    // A damaged record: the page and the API still answer, with a note.
    std::fs::write(&key, b"{\"format\": 1, \"servers\": [").unwrap();
    let page = get_page(&format!("{base}/?ledger=fleet")).await;
    assert!(
        page.contains("id=\"status-note\""),
        "no note about the status record"
    );
    assert!(page.contains(&format!("<code>{steady_url}</code>")));
    let listing = get_json(&api).await;
    assert!(listing["status_note"].is_string());
    assert_eq!(listed(&listing, &steady_url)["status"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_watch_lists_the_statuses_of_every_shard() {
    if support::python::interpreter().is_none() {
        support::skip(
            "a_sharded_watch_lists_the_statuses_of_every_shard",
            "tests/peers/install.sh has not run",
        );
        return;
    }
    let file = SurfaceFile::new(&surface("up", "1.0.0", vec![tool("search", "Searches")]));
    let up = support::python::start(&file, Default::default()).unwrap();
    let refused: Vec<String> = (0..3)
        .map(|_| format!("http://127.0.0.1:{}/mcp", process::free_port()))
        .collect();
    let mut servers = vec![
        up.url().to_string(),
        "ftp://blocked.example/mcp".to_string(),
    ];
    servers.extend(refused.iter().cloned());
    let dir = RunDir::new();
    let input = json!({"servers": servers, "ledger_name": "sharded", "shards": 2});
    dir.run_ok(&input, None).await;
    // Each shard ledger that ran has its own status record.
    let records = ["sharded-shard-1", "sharded-shard-2"]
        .iter()
        .filter(|name| dir.ledger_bytes(&format!("status.{name}")).is_some())
        .count();
    assert!(records >= 1);
    // The coordinator's own record: the rows no shard makes (none here).
    let own: Value = serde_json::from_slice(&dir.ledger_bytes("status.sharded").unwrap()).unwrap();
    assert_eq!(own["servers"], json!([]));
    let storage = LocalStorage::open_existing(dir.root());
    let addr = support::background::serve(serve::app(Backend::Local(storage), HostPolicy::local()));
    let listing = get_json(&format!("http://{addr}/ledgers/sharded/servers")).await;
    assert_eq!(listing["servers_total"], servers.len(), "{listing:#}");
    assert_eq!(
        listed(&listing, up.url().as_str())["status"]["state"],
        "healthy"
    );
    assert_eq!(
        listed(&listing, "ftp://blocked.example/mcp")["status"]["state"],
        "blocked"
    );
    for url in &refused {
        assert_eq!(listed(&listing, url)["status"]["state"], "unreachable");
    }

    // Back to one run: the shard ledgers' records no longer count.
    let plain = json!({"servers": [up.url().to_string()], "ledger_name": "sharded"});
    dir.run_ok(&plain, None).await;
    let listing = get_json(&format!("http://{addr}/ledgers/sharded/servers")).await;
    let with_status: Vec<&Value> = listing["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["status"].is_null())
        .collect();
    assert_eq!(with_status.len(), 1, "{listing:#}");
    assert_eq!(with_status[0]["server_url"], up.url().as_str());
}
