//! The ledger's pages in a real browser (headless Chromium) and its Atom feed in a real feed
//! parser (Python `feedparser`), over a ledger written by real Actor runs against real MCP
//! servers: an in-process rmcp server whose surface is full of hostile text, the official
//! Python SDK server (when `tests/peers/install.sh` has run), and a second, sharded ledger.
//!
//! Checked: every page shows the servers, changes and chart the ledger holds; no payload of
//! the XSS corpus becomes markup or runs (a marker it would set stays unset), and its text is
//! visible; at phone width nothing scrolls sideways; screenshots of each page at desktop and
//! phone width are written under `target/serve-pages/`. Skips with a note without Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::collections::BTreeSet;
use std::process::Command;

use actor::{ALL_CLASSES, RunDir};
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use serde_json::{Value, json};
use support::browser::{self, DESKTOP, PHONE};
use support::process::PeerProcess;
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{SurfaceFile, surface, tool};

/// What a payload would do if it ever ran: mark the document.
const MARK: &str = "document.documentElement.setAttribute('data-xss','1')";

/// The XSS corpus: markup, attribute breakouts, script URLs, SVG handlers, a title breakout,
/// bidi overrides, zero-width and tag characters.
fn corpus() -> Vec<String> {
    vec![
        format!("<script>{MARK}</script>"),
        format!("\"><img src=x onerror=\"{MARK}\">"),
        format!("javascript:{MARK}"),
        format!("<svg onload=\"{MARK}\"><circle r=9 /></svg>"),
        format!("</title><script>{MARK}</script>"),
        "evil\u{202E}txt.exe\u{202C}".to_string(),
        "zero\u{200B}width\u{2060}joiner".to_string(),
        "tag\u{E0041}\u{E0042}\u{E007F}chars".to_string(),
    ]
}

/// The description of hostile tool `index` at `step`: its payload before the change, the next
/// ones of the corpus after it (so a past change's before and after both carry payloads).
fn described(index: usize, step: usize) -> String {
    let corpus = corpus();
    match (index, step) {
        (_, 0) => format!("Reads {} files", corpus[index]),
        (0, _) => format!("Now also writes {}", corpus[1]),
        _ => format!("Now reads {} and {}", corpus[6], corpus[7]),
    }
}

/// A tool whose name, description, and schema titles carry `payload`.
fn hostile_tool(index: usize, payload: &str) -> Value {
    json!({
        "name": format!("t{index}{payload}"),
        "description": described(index, 0),
        "inputSchema": {
            "type": "object",
            "title": payload,
            "properties": {"q": {"type": "string", "title": payload}},
        },
    })
}

fn hostile_surface(version: &str, step: usize) -> Value {
    let mut tools: Vec<Value> = corpus()
        .iter()
        .enumerate()
        .map(|(i, payload)| hostile_tool(i, payload))
        .collect();
    tools.push(tool("read_file", "Reads a file"));
    let last = tools.len() - 1;
    tools[last]["annotations"] = json!({"readOnlyHint": step == 0});
    if step >= 1 {
        tools.push(tool("delete_all_files", "Deletes every file on the disk"));
        tools[0]["description"] = json!(described(0, 1));
        tools[5]["description"] = json!(described(5, 1));
    }
    if step >= 2 {
        tools[1]["inputSchema"]["required"] = json!(["q"]);
        tools.retain(|t| t["name"] != "read_file");
    }
    let mut document = surface(
        &format!("</title><script>{MARK}</script>srv"),
        version,
        tools,
    );
    document["instructions"] = json!(format!("Use <b>me</b> {}", corpus()[3]));
    document
}

fn python_surface(step: usize) -> Value {
    let mut tools = vec![tool("search", "Searches the web")];
    if step >= 1 {
        tools.push(tool("send_email", "Sends an e-mail to anyone"));
    }
    surface("python-peer", &format!("0.{step}.0"), tools)
}

/// The ledger: three runs of DEFAULT (surfaces change in between), a second ledger, and a
/// sharded watch of two shards.
struct Fleet {
    dir: RunDir,
    _hostile: RmcpPeer,
    _python: Option<(SurfaceFile, PeerProcess)>,
    hostile_url: String,
    base: String,
}

async fn fleet() -> Fleet {
    let hostile = RmcpPeer::start(hostile_surface("1.0.0", 0), RmcpMode::default());
    let python_file = SurfaceFile::new(&python_surface(0));
    let python = support::python::start(&python_file, Default::default());
    if python.is_none() {
        support::skip(
            "serve_pages (python peer)",
            "tests/peers/install.sh has not run",
        );
    }
    let mut servers = vec![hostile.url.to_string()];
    if let Some(process) = &python {
        servers.push(process.url().to_string());
    }
    let dir = RunDir::new();
    let input = json!({"servers": servers, "alert_on": ALL_CLASSES});
    for step in 0..3 {
        if step > 0 {
            hostile.set_surface(hostile_surface(&format!("1.{step}.0"), step));
            python_file.write(&python_surface(step));
            // Distinct run times, so the timeline has one bar per run.
            tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        }
        dir.run_ok(&input, None).await;
    }
    let second = json!({"servers": [hostile.url.to_string()], "ledger_name": "second"});
    dir.run_ok(&second, None).await;
    let sharded = json!({"servers": servers, "ledger_name": "sharded", "shards": 2});
    dir.run_ok(&sharded, None).await;
    let storage = LocalStorage::open_existing(dir.root());
    let addr = support::background::serve(serve::app(Backend::Local(storage), HostPolicy::local()));
    Fleet {
        hostile_url: hostile.url.to_string(),
        dir,
        _hostile: hostile,
        _python: python.map(|process| (python_file, process)),
        base: format!("http://{addr}"),
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A page as served: status 200, HTML, the strict policy. Returns its HTML.
async fn served_page(url: &str) -> String {
    let response = http()
        .get(url)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    let headers = response.headers().clone();
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{url}"
    );
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert!(!policy.contains("script-src"), "{policy}");
    response.text().await.unwrap()
}

/// How a text node with `text` appears in a dumped DOM: markup characters as entities,
/// invisible characters as the `\u{…}` the pages show instead.
fn as_dom_text(text: &str) -> String {
    mcp_surface_ledger::risk::unicode::escape_invisible(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Nothing of the corpus became markup or ran, and the text is visible.
fn assert_inert(dom: &str, what: &str, expect_visible: &[String]) {
    assert!(!dom.contains("data-xss=\"1\""), "{what}: a payload ran");
    for element in [
        "<script",
        "<img",
        "<svg onload",
        "<circle",
        "href=\"javascript:",
    ] {
        assert!(!dom.contains(element), "{what}: {element} became markup");
    }
    for invisible in ['\u{202E}', '\u{200B}', '\u{E0041}'] {
        assert!(!dom.contains(invisible), "{what}: {invisible:?} rendered");
    }
    for payload in expect_visible {
        assert!(
            dom.contains(&as_dom_text(payload)),
            "{what}: {payload:?} not visible as text"
        );
    }
}

/// The page's markup laid out at phone width: the same HTML (without its policy, the only way
/// to let a measuring script ask the layout) in a 390-pixel frame, since Chromium's windows
/// are never narrower than 500 pixels. Returns the frame page, for the phone screenshot.
fn phone_frame(html: &str) -> (tempfile::TempDir, String) {
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + html[start..].find('>').unwrap() + 1;
    let copy = format!("{}{}", &html[..start], &html[end..]);
    let frame = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\">\
         <iframe id=\"f\" style=\"border:0;width:{}px;height:{}px\" srcdoc=\"{}\"></iframe>\
         <script>window.addEventListener('load', function () {{\
           var d = document.getElementById('f').contentDocument.documentElement;\
           var r = document.documentElement;\
           r.setAttribute('data-scroll-width', d.scrollWidth);\
           r.setAttribute('data-client-width', d.clientWidth);\
           r.setAttribute('data-inner-xss', d.getAttribute('data-xss') || 'unset');\
         }});</script></body></html>",
        PHONE.width,
        PHONE.height,
        copy.replace('&', "&amp;").replace('"', "&quot;")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("phone.html");
    std::fs::write(&path, frame).unwrap();
    let url = browser::file_url(&path);
    (dir, url)
}

/// At phone width nothing scrolls sideways; and with no policy to help, only escaping keeps
/// the corpus inert (the marker stays unset).
fn assert_fits_phone(html: &str, what: &str) -> (tempfile::TempDir, String) {
    let (dir, url) = phone_frame(html);
    let dom = browser::chromium(&url, PHONE, "--dump-dom");
    let attribute = |name: &str| -> String {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("{what}: no {name}"));
        let rest = &dom[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let scroll: u32 = attribute("data-scroll-width").parse().unwrap();
    let client: u32 = attribute("data-client-width").parse().unwrap();
    assert_eq!(client, PHONE.width, "{what}: the frame is a phone's width");
    assert!(
        scroll <= client,
        "{what}: {scroll}px wide at a {client}px phone width"
    );
    assert_eq!(
        attribute("data-inner-xss"),
        "unset",
        "{what}: a payload ran without the policy"
    );
    (dir, url)
}

/// Screenshots of the served page at desktop width and of its phone frame.
fn screenshots(url: &str, phone: &(tempfile::TempDir, String), name: &str) {
    let dir = browser::target_dir().join("serve-pages");
    std::fs::create_dir_all(&dir).unwrap();
    browser::screenshot(url, DESKTOP, &dir.join(format!("{name}-desktop.png")));
    browser::screenshot(&phone.1, PHONE, &dir.join(format!("{name}-phone.png")));
}

/// The `before` and `after` a page shows for the change of `class` to the tool named `tool`
/// (as text: the highlight marks removed, markup characters as entities).
fn sides_of(dom: &str, class: &str, tool: &str) -> (String, String) {
    let tool = format!("<code>{}</code>", as_dom_text(tool));
    let block = dom
        .split("<details class=\"change")
        .skip(1)
        .map(|rest| &rest[..rest.find("</details>").unwrap()])
        .find(|block| block.contains(&format!("data-class=\"{class}\"")) && block.contains(&tool))
        .unwrap_or_else(|| panic!("no {class} change of {tool}"));
    let side = |label: &str| {
        let start = format!("<h4>{label}</h4>");
        let rest = &block[block
            .find(&start)
            .unwrap_or_else(|| panic!("no {label}: {block}"))
            + start.len()..];
        let mut text = rest[..rest.find("</div>").unwrap()].to_string();
        for mark in ["<pre>", "</pre>", "<del>", "</del>", "<ins>", "</ins>"] {
            text = text.replace(mark, "");
        }
        text
    };
    (side("before"), side("after"))
}

fn history(fx: &Fleet, ledger: &str) -> Vec<(String, Value)> {
    let index = fx.dir.ledger(ledger);
    let mut all = Vec::new();
    for (url, entry) in index["servers"].as_object().unwrap() {
        for item in entry["history"].as_array().unwrap() {
            all.push((url.clone(), item.clone()));
        }
    }
    all
}

#[tokio::test]
async fn the_pages_show_the_ledger_safely_in_a_browser() {
    if !browser::available() {
        support::skip(
            "the_pages_show_the_ledger_safely_in_a_browser",
            "chromium absent",
        );
        return;
    }
    let fx = fleet().await;
    let changes = history(&fx, "DEFAULT");
    let servers = fx.dir.ledger("DEFAULT")["servers"]
        .as_object()
        .unwrap()
        .len();
    assert!(changes.len() >= 6, "the runs recorded changes: {changes:?}");
    assert!(
        changes.iter().any(|(_, item)| item["severity"] == "high"),
        "a high-severity change: {changes:?}"
    );
    let runs: BTreeSet<&str> = changes
        .iter()
        .map(|(_, item)| item["observed_at"].as_str().unwrap())
        .collect();
    let hostile_name = format!("</title><script>{MARK}</script>srv");

    // Fleet page.
    let url = format!("{}/", fx.base);
    let html = served_page(&url).await;
    let dom = browser::chromium(&url, DESKTOP, "--dump-dom");
    assert_eq!(
        dom.matches("<tr class=\"server\" data-state=\"healthy\">")
            .count(),
        servers,
        "one row per server, each read by the last run"
    );
    for severity in ["high", "medium", "low"] {
        let count = changes
            .iter()
            .filter(|(_, item)| item["severity"] == severity)
            .count();
        let stat =
            format!("<li data-stat=\"severity_{severity}\"><span class=\"num\">{count}</span>");
        assert!(dom.contains(&stat), "{severity}: {count}");
    }
    // Declared and assumed risk are counted apart: `high` is evidence (the hostile server's
    // markers); the Python peer's unannotated `search` is high only by the protocol's defaults.
    let listed: Value = http()
        .get(format!("{}/ledgers/DEFAULT/servers", fx.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed = listed["servers"].as_array().unwrap();
    let declared_high = listed.iter().filter(|s| s["risk"] == "high").count();
    let assumed_only = listed
        .iter()
        .filter(|s| s["risk"] != "high" && s["assumed_risk"] == "high")
        .count();
    assert!(declared_high >= 1, "the hostile server is high on evidence");
    if fx._python.is_some() {
        assert_eq!(assumed_only, 1, "the python peer: {listed:?}");
        assert!(dom.contains("assumed high: unannotated tools"));
    }
    for (stat, count) in [
        ("high_risk", declared_high),
        ("assumed_high_risk", assumed_only),
    ] {
        let tile = format!("<li data-stat=\"{stat}\"><span class=\"num\">{count}</span>");
        assert!(dom.contains(&tile), "{stat}: {count}");
    }
    assert!(dom.contains("<svg class=\"timeline\""));
    assert_eq!(
        dom.matches("<g class=\"run\"").count(),
        runs.len(),
        "one bar per run"
    );
    assert!(dom.contains("id=\"ledger-picker\""));
    for ledger in ["second", "sharded"] {
        assert!(
            dom.contains(&format!(">{ledger}</a>")),
            "{ledger} in the picker"
        );
    }
    assert!(
        !dom.contains(">sharded-shard-1<"),
        "a sharded watch is one fleet"
    );
    assert_inert(&dom, "fleet", std::slice::from_ref(&hostile_name));
    let phone = assert_fits_phone(&html, "fleet");
    screenshots(&url, &phone, "fleet");

    // The sharded watch as one fleet.
    let sharded_url = format!("{}/?ledger=sharded", fx.base);
    let dom = browser::chromium(&sharded_url, DESKTOP, "--dump-dom");
    assert_eq!(
        dom.matches("<tr class=\"server\" data-state=\"healthy\">")
            .count(),
        servers,
        "both shards' servers"
    );

    // Server page of the hostile server.
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("url", &fx.hostile_url)
        .finish();
    let url = format!("{}/server?{query}", fx.base);
    let html = served_page(&url).await;
    let dom = browser::chromium(&url, DESKTOP, "--dump-dom");
    let own = changes.iter().filter(|(u, _)| *u == fx.hostile_url).count();
    assert_eq!(
        dom.matches("<details class=\"change sev-").count(),
        own,
        "every change"
    );
    let tools_now = hostile_surface("1.2.0", 2)["tools"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        dom.matches("<tr class=\"tool\">").count(),
        tools_now,
        "every tool"
    );
    assert!(dom.contains("<svg class=\"timeline\""));
    let mut visible: Vec<String> = corpus()
        .iter()
        .enumerate()
        .map(|(i, payload)| format!("t{i}{payload}"))
        .collect();
    visible.push(hostile_name.clone());
    visible.push(format!("Reads {} files", corpus()[4]));
    assert_inert(&dom, "server", &visible);
    // A past change shows its before and after (kept by the ledger, drawn by the report's
    // renderer), with the payloads in them inert and visible as text.
    for index in [0, 5] {
        let (before, after) = sides_of(
            &dom,
            "tool_description_changed",
            &format!("t{index}{}", corpus()[index]),
        );
        assert_eq!(
            before,
            as_dom_text(&described(index, 0)),
            "before of t{index}"
        );
        assert_eq!(
            after,
            as_dom_text(&described(index, 1)),
            "after of t{index}"
        );
    }
    assert!(
        dom.contains(&as_dom_text(&format!(
            "\"title\": {}",
            serde_json::to_string(&corpus()[3]).unwrap()
        ))),
        "a schema title is visible"
    );
    let phone = assert_fits_phone(&html, "server");
    screenshots(&url, &phone, "server");

    // Changes page, all and high only.
    let url = format!("{}/changes", fx.base);
    let html = served_page(&url).await;
    let dom = browser::chromium(&url, DESKTOP, "--dump-dom");
    assert!(dom.contains(&format!("data-total=\"{}\"", changes.len())));
    assert_inert(&dom, "changes", &[]);
    let phone = assert_fits_phone(&html, "changes");
    screenshots(&url, &phone, "changes");
    let high = changes
        .iter()
        .filter(|(_, item)| item["severity"] == "high")
        .count();
    let dom = browser::chromium(&format!("{url}?severity=high"), DESKTOP, "--dump-dom");
    assert!(
        dom.contains(&format!("data-total=\"{high}\"")),
        "{high} high"
    );
    assert_eq!(
        dom.matches("<details class=\"change sev-high").count(),
        high.min(50)
    );
}

/// Runs feedparser on `xml`; `None` when it is not installed.
fn parse_feed(xml: &str) -> Option<Value> {
    let python = support::python::interpreter()?;
    let check = Command::new(&python)
        .args(["-c", "import feedparser"])
        .output()
        .ok()?;
    if !check.status.success() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("feed.atom");
    std::fs::write(&path, xml).unwrap();
    let script = "import feedparser, json, sys, calendar\n\
        d = feedparser.parse(sys.argv[1])\n\
        print(json.dumps({'bozo': d.bozo, 'version': d.version, 'title': d.feed.get('title'),\n\
          'entries': [{'id': e.id, 'title': e.title, 'link': e.link,\n\
                       'updated': calendar.timegm(e.updated_parsed),\n\
                       'tags': [t.term for t in e.get('tags', [])]} for e in d.entries]}))";
    let output = Command::new(&python)
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

#[tokio::test]
async fn the_atom_feed_is_valid_and_stable() {
    let fx = fleet().await;
    let changes = history(&fx, "DEFAULT");
    let fetch = |query: &'static str| {
        let url = format!("{}/changes.atom{query}", fx.base);
        async move {
            let response = http().get(&url).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            let kind = response.headers()["content-type"]
                .to_str()
                .unwrap()
                .to_string();
            assert!(kind.starts_with("application/atom+xml"), "{kind}");
            response.text().await.unwrap()
        }
    };
    let all = fetch("").await;
    let Some(feed) = parse_feed(&all) else {
        support::skip(
            "the_atom_feed_is_valid_and_stable",
            "feedparser not installed (tests/peers/install.sh)",
        );
        return;
    };
    assert_eq!(feed["bozo"], false, "{feed}");
    assert_eq!(feed["version"], "atom10");
    let entries = feed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), changes.len());
    let ids: BTreeSet<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), entries.len(), "ids are unique");
    let again = parse_feed(&fetch("").await).unwrap();
    assert_eq!(
        again["entries"], feed["entries"],
        "ids and entries are stable"
    );
    let observed: BTreeSet<i64> = changes
        .iter()
        .map(|(_, item)| {
            chrono::DateTime::parse_from_rfc3339(item["observed_at"].as_str().unwrap())
                .unwrap()
                .timestamp()
        })
        .collect();
    for entry in entries {
        assert!(
            observed.contains(&entry["updated"].as_i64().unwrap()),
            "{entry}"
        );
        assert!(
            entry["link"]
                .as_str()
                .unwrap()
                .contains("server?ledger=DEFAULT&url=")
        );
    }
    assert!(
        all.contains(&as_dom_text(&format!("</title><script>{MARK}</script>srv")))
            || !all.contains("<script")
    );
    assert!(
        !all.contains("<script"),
        "hostile text became markup in the feed"
    );

    let high = parse_feed(&fetch("?severity=high").await).unwrap();
    let expected = changes
        .iter()
        .filter(|(_, item)| item["severity"] == "high")
        .count();
    let high_entries = high["entries"].as_array().unwrap();
    assert_eq!(high_entries.len(), expected);
    assert!(
        high_entries
            .iter()
            .all(|e| e["tags"].as_array().unwrap().contains(&json!("high")))
    );
    let refused = http()
        .get(format!("{}/changes.atom?severity=urgent", fx.base))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
}
