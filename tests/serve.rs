//! `serve`: the read-only HTTP API and the MCP endpoint over a real ledger.
//!
//! The ledger is written by two real Actor runs against an in-process rmcp server whose
//! surface changes in between; the server under test then reads that storage folder. The API
//! is exercised with reqwest, the MCP endpoint with the rmcp client and the official Python
//! and TypeScript SDK clients (skipped with a note when `tests/peers/install.sh` has not run:
//! no validator warning, structured content valid against each tool's output schema), and the binary
//! is started once in Standby mode to answer the platform's readiness probe.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use actor::{BINARY, Rows, RunDir};
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use mcp_surface_ledger::serve::{self, READINESS_HEADER};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

/// A ledger with one server that changed once, and the server under test reading it.
struct Fixture {
    dir: RunDir,
    _peer: RmcpPeer,
    /// The watched server's URL (its ledger key).
    server_url: String,
    /// The tools the watched server serves now.
    tools_now: Vec<Value>,
    /// Base URL of the server under test, without a trailing slash.
    base: String,
}

fn tools_v1() -> Vec<Value> {
    vec![
        tool("read_file", "Reads a file"),
        tool("old_tool", "Goes away"),
    ]
}

fn tools_v2() -> Vec<Value> {
    let mut read = tool("read_file", "Reads a file");
    read["inputSchema"]["required"] = json!(["q"]);
    vec![
        read,
        tool("delete_all_files", "Deletes every file on the disk"),
    ]
}

async fn fixture() -> Fixture {
    let peer = RmcpPeer::start(surface("demo", "1.0.0", tools_v1()), RmcpMode::default());
    let server_url = peer.url.to_string();
    let dir = RunDir::new();
    let input = json!({"servers": [server_url]});
    dir.run_ok(&input, None).await;
    peer.set_surface(surface("demo", "1.1.0", tools_v2()));
    dir.run_ok(&input, None).await;
    let storage = LocalStorage::open_existing(dir.root());
    let app = serve::app(Backend::Local(storage), HostPolicy::local());
    let addr = support::background::serve(app);
    Fixture {
        dir,
        _peer: peer,
        server_url,
        tools_now: tools_v2(),
        base: format!("http://{addr}"),
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("reqwest client")
}

/// The server URL as one percent-encoded path segment.
fn segment(url: &str) -> String {
    url::form_urlencoded::byte_serialize(url.as_bytes()).collect()
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, Value) {
    let response = client.get(url).send().await.expect("GET");
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.expect("a JSON body");
    (status, body)
}

async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.expect("a JSON body");
    (status, body)
}

/// The history the ledger record holds for the fixture's server.
/// The API shows each item without its hash-chain fields (`seq`, `link`).
fn stored_history(fx: &Fixture) -> Vec<Value> {
    let mut items = fx.dir.ledger("DEFAULT")["servers"][&fx.server_url]["history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for item in &mut items {
        if let Some(object) = item.as_object_mut() {
            object.remove("seq");
            object.remove("link");
        }
    }
    items
}

#[tokio::test]
async fn the_api_answers_from_the_ledger_and_never_writes_it() {
    let fx = fixture().await;
    let ledger_before = fx.dir.ledger_bytes("DEFAULT").expect("ledger written");
    let client = http();
    let rows = Rows::of(&fx.dir);
    let row = rows.server(&fx.server_url);
    let dataset_before = fx.dir.rows();

    let (status, listing) = get(&client, &format!("{}/ledgers/DEFAULT/servers", fx.base)).await;
    assert_eq!(status, 200, "{listing}");
    assert_eq!(listing["servers_total"], 1);
    let server = &listing["servers"][0];
    let entry = &fx.dir.ledger("DEFAULT")["servers"][&fx.server_url];
    assert_eq!(server["server_url"], json!(fx.server_url));
    assert_eq!(server["server_name"], "demo");
    assert_eq!(server["server_version"], "1.1.0");
    assert_eq!(server["tool_digest"], entry["tool_digest"]);
    assert_eq!(server["tool_digest"], row["tool_digest"]);
    assert_eq!(
        server["risk"], row["risk"],
        "the run's risk for the same surface"
    );
    assert_eq!(server["risk"], "high", "a tool deletes every file");
    assert_eq!(server["first_seen"], entry["first_seen"]);
    assert_eq!(server["last_changed"], entry["last_changed"]);
    let history = stored_history(&fx);
    assert!(!history.is_empty(), "the second run recorded changes");
    assert_eq!(&server["last_change"], history.last().unwrap());

    let changes_url = format!(
        "{}/ledgers/DEFAULT/servers/{}/changes",
        fx.base,
        segment(&fx.server_url)
    );
    let (status, changes) = get(&client, &changes_url).await;
    assert_eq!(status, 200, "{changes}");
    assert_eq!(changes["changes"], json!(history));
    assert_eq!(changes["changes_total"], history.len());
    let classes: Vec<&str> = history
        .iter()
        .filter_map(|c| c["change_class"].as_str())
        .collect();
    assert!(classes.contains(&"tool_removed"), "{classes:?}");
    assert!(classes.contains(&"tool_added"), "{classes:?}");

    let (_, later) = get(
        &client,
        &format!("{changes_url}?since=2999-01-01T00:00:00Z"),
    )
    .await;
    assert_eq!(later["changes_total"], 0);
    let (_, earlier) = get(
        &client,
        &format!("{changes_url}?since=2000-01-01T00:00:00%2B01:00"),
    )
    .await;
    assert_eq!(earlier["changes_total"], history.len());

    let surface_url = format!(
        "{}/ledgers/DEFAULT/servers/{}/surface",
        fx.base,
        segment(&fx.server_url)
    );
    let (status, stored) = get(&client, &surface_url).await;
    assert_eq!(status, 200, "{stored}");
    let mut served = fx.tools_now.clone();
    served.sort_by_key(|t| t["name"].as_str().unwrap_or_default().to_string());
    assert_eq!(
        stored["tools"],
        json!(served),
        "the stored surface, sorted by name"
    );
    assert_eq!(stored["identity"]["version"], "1.1.0");
    assert_eq!(stored["tool_digest"], entry["tool_digest"]);

    assert_eq!(
        fx.dir.ledger_bytes("DEFAULT").unwrap(),
        ledger_before,
        "reading never rewrites the ledger"
    );
    assert_eq!(
        fx.dir.rows(),
        dataset_before,
        "serving leaves the run's dataset alone"
    );
}

#[tokio::test]
async fn every_malformed_request_gets_a_json_error() {
    let fx = fixture().await;
    let client = http();
    let server = segment(&fx.server_url);
    let unknown = segment("http://127.0.0.1:1/mcp");
    let cases: Vec<(String, u16, &str)> = vec![
        ("/ledgers/NOPE/servers".into(), 404, "ledger_not_found"),
        ("/ledgers/surface-x/servers".into(), 400, "bad_ledger_name"),
        ("/ledgers/a%20b/servers".into(), 400, "bad_ledger_name"),
        (
            format!("/ledgers/DEFAULT/servers/{unknown}/changes"),
            404,
            "server_not_found",
        ),
        (
            format!("/ledgers/DEFAULT/servers/{unknown}/surface"),
            404,
            "server_not_found",
        ),
        (
            format!("/ledgers/DEFAULT/servers/{server}/changes?since=yesterday"),
            400,
            "bad_request",
        ),
        (
            "/ledgers/DEFAULT/servers/%FF%FE/surface".into(),
            400,
            "bad_request",
        ),
        ("/no/such/route".into(), 404, "not_found"),
    ];
    for (path, status, code) in cases {
        let (got, body) = get(&client, &format!("{}{path}", fx.base)).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(code)),
            "{path}: {body}"
        );
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{path}"
        );
    }

    let diff_url = format!("{}/diff", fx.base);
    let bodies: Vec<(Vec<u8>, u16, &str)> = vec![
        (b"{not json".to_vec(), 400, "bad_request"),
        (b"[]".to_vec(), 400, "bad_request"),
        (br#"{"before": {"tools": []}}"#.to_vec(), 400, "bad_request"),
        (
            br#"{"before": 1, "after": {"tools": []}}"#.to_vec(),
            400,
            "bad_request",
        ),
    ];
    // A body over the limit (on /diff and /mcp alike) is answered 413 before it is read:
    // `serve_guard.rs` checks that case over raw sockets, which read the answer at their own
    // pace, so no test here races the server's early answer.
    for (body, status, code) in bodies {
        let (got, answer) = post(&client, &diff_url, body).await;
        assert_eq!(
            (got, answer["error"].as_str()),
            (status, Some(code)),
            "{answer}"
        );
    }
    let response = client
        .delete(format!("{}/ledgers/DEFAULT/servers", fx.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "method_not_allowed");

    // The MCP transport's own refusals are JSON-RPC errors too, with their status kept.
    let mcp = format!("{}/mcp", fx.base);
    let accept = "application/json, text/event-stream";
    let refusals = [
        (
            client
                .post(&mcp)
                .header("content-type", "application/json")
                .header("accept", accept)
                .body("{oops"),
            400,
        ),
        (
            client
                .post(&mcp)
                .header("content-type", "text/plain")
                .header("accept", accept)
                .body("{}"),
            415,
        ),
        (
            client
                .post(&mcp)
                .header("content-type", "application/json")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            406,
        ),
        (client.get(&mcp), 405),
    ];
    for (request, status) in refusals {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        let body: Value = response.json().await.expect("a JSON-RPC error body");
        assert!(body["error"]["code"].is_i64(), "{status}: {body}");
        assert!(body["error"]["message"].is_string(), "{status}: {body}");
    }

    // Still serving after all of that.
    let (status, _) = get(&client, &format!("{}/ledgers/DEFAULT/servers", fx.base)).await;
    assert_eq!(status, 200);
}

/// `POST /diff` answers with exactly the rows `mcp-surface-ledger diff` prints.
#[tokio::test]
async fn post_diff_gives_the_rows_of_the_diff_command() {
    let fx = fixture().await;
    let before = json!({"tools": tools_v1()});
    let after = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools_v2()}});
    let files = tempfile::tempdir().unwrap();
    let (before_file, after_file) = (files.path().join("before"), files.path().join("after"));
    std::fs::write(&before_file, before.to_string()).unwrap();
    std::fs::write(&after_file, after.to_string()).unwrap();
    let output = Command::new(BINARY)
        .arg("diff")
        .arg(&before_file)
        .arg(&after_file)
        .output()
        .expect("run diff");
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("diff JSON");

    let request = json!({"before": before, "after": after});
    let (status, answered) = post(
        &http(),
        &format!("{}/diff", fx.base),
        request.to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{answered}");
    let comparable = |document: &Value| -> Vec<Value> {
        let rows = document["changes"].as_array().cloned().unwrap_or_default();
        rows.into_iter()
            .map(|mut row| {
                let object = row.as_object_mut().unwrap();
                object.remove("observed_at");
                object.remove("server_url");
                row
            })
            .collect()
    };
    assert!(!comparable(&printed).is_empty());
    assert_eq!(comparable(&answered), comparable(&printed));
    assert_eq!(answered["changes_by_class"], printed["changes_by_class"]);
    assert_eq!(
        answered["changes_by_severity"],
        printed["changes_by_severity"]
    );
}

#[tokio::test]
async fn two_hundred_parallel_requests_all_succeed() {
    let fx = fixture().await;
    let client = http();
    let server = segment(&fx.server_url);
    let diff_body =
        json!({"before": {"tools": tools_v1()}, "after": {"tools": tools_v2()}}).to_string();
    let requests = (0..200).map(|i| {
        let client = client.clone();
        let base = fx.base.clone();
        let server = server.clone();
        let diff_body = diff_body.clone();
        tokio::spawn(async move {
            let request = match i % 5 {
                0 => client.get(format!("{base}/ledgers/DEFAULT/servers")),
                1 => client.get(format!("{base}/ledgers/DEFAULT/servers/{server}/changes")),
                2 => client.get(format!("{base}/ledgers/DEFAULT/servers/{server}/surface")),
                3 => client
                    .post(format!("{base}/diff"))
                    .header("content-type", "application/json")
                    .body(diff_body),
                _ => client
                    .post(format!("{base}/mcp"))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(
                        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "list_watched_servers", "arguments": {}}})
                        .to_string(),
                    ),
            };
            let response = request.send().await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let body: Value = response.json().await.map_err(|e| e.to_string())?;
            let failed = body.get("error").is_some() || body["result"]["isError"] == true;
            if status == 200 && body.is_object() && !failed {
                Ok(())
            } else {
                Err(format!("request {i}: {status} {body}"))
            }
        })
    });
    let outcomes = futures::future::join_all(requests).await;
    let failures: Vec<String> = outcomes
        .into_iter()
        .filter_map(|joined| match joined {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error),
            Err(panic) => Some(panic.to_string()),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
}

/// The arguments the MCP tests pass to each tool.
fn tool_calls(fx: &Fixture) -> Value {
    json!({
        "list_watched_servers": {},
        "list_ledgers": {},
        "get_changes": {"ledger_name": "DEFAULT", "server_url": fx.server_url, "since": "2000-01-01T00:00:00Z"},
        "get_surface": {"server_url": fx.server_url, "at": "2100-01-01T00:00:00Z"},
        "diff_surfaces": {"before": {"tools": tools_v1()}, "after": {"tools": tools_v2()}},
    })
}

/// Checks one tool's structured answer against what the HTTP API says.
async fn check_structured(fx: &Fixture, name: &str, structured: &Value) {
    let client = http();
    let server = segment(&fx.server_url);
    let expected = match name {
        "list_ledgers" => {
            let listed = get(&client, &format!("{}/ledgers", fx.base)).await.1;
            json!({
                "ledgers_total": listed["ledgers_total"],
                "ledgers": listed["ledgers"],
                "default_ledger": "DEFAULT",
            })
        }
        "list_watched_servers" => {
            get(&client, &format!("{}/ledgers/DEFAULT/servers", fx.base))
                .await
                .1
        }
        "get_changes" => {
            get(
                &client,
                &format!(
                    "{}/ledgers/DEFAULT/servers/{server}/changes?since=2000-01-01T00:00:00Z",
                    fx.base
                ),
            )
            .await
            .1
        }
        "get_surface" => {
            get(
                &client,
                &format!(
                    "{}/ledgers/DEFAULT/servers/{server}/surface?at=2100-01-01T00:00:00Z",
                    fx.base
                ),
            )
            .await
            .1
        }
        "diff_surfaces" => {
            let body = tool_calls(fx)["diff_surfaces"].to_string().into_bytes();
            let mut answer = post(&client, &format!("{}/diff", fx.base), body).await.1;
            let mut structured = structured.clone();
            for document in [&mut answer, &mut structured] {
                for row in document["changes"].as_array_mut().into_iter().flatten() {
                    row.as_object_mut().unwrap().remove("observed_at");
                }
            }
            assert_eq!(structured, answer, "{name}");
            return;
        }
        other => panic!("unexpected tool {other}"),
    };
    assert_eq!(structured, &expected, "{name}");
}

#[tokio::test]
async fn the_rmcp_client_calls_every_tool() {
    let fx = fixture().await;
    let transport = StreamableHttpClientTransport::from_uri(format!("{}/mcp", fx.base));
    let client = ().serve(transport).await.expect("connect with rmcp");
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "diff_surfaces",
            "get_changes",
            "get_surface",
            "list_ledgers",
            "list_watched_servers"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        let schema = tool.output_schema.as_ref().expect("an output schema");
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
    }
    let calls = tool_calls(&fx);
    for (name, arguments) in calls.as_object().unwrap() {
        let params = CallToolRequestParams::new(name.clone())
            .with_arguments(arguments.as_object().unwrap().clone());
        let result = client.call_tool(params).await.expect("tools/call");
        assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
        let structured = result.structured_content.expect("structured content");
        check_structured(&fx, name, &structured).await;
    }
    let missing = CallToolRequestParams::new("get_surface").with_arguments(
        json!({"server_url": "http://127.0.0.1:1/mcp"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let result = client.call_tool(missing).await.expect("tools/call");
    assert_eq!(
        result.is_error,
        Some(true),
        "an unknown server is a tool error"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn the_python_sdk_client_calls_every_tool() {
    let Some(python) = support::python::interpreter() else {
        return support::skip("serve python client", "Python SDK not installed");
    };
    let fx = fixture().await;
    let calls = tool_calls(&fx);
    for mode in ["auto", "legacy"] {
        let output = Command::new(&python)
            .arg(support::process::scripts_dir().join("ask_ledger.py"))
            .arg(format!("{}/mcp", fx.base))
            .arg(mode)
            .arg(calls.to_string())
            .stdin(Stdio::null())
            .output()
            .expect("run the Python client");
        assert!(
            output.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let seen: Value = serde_json::from_slice(&output.stdout).expect("client JSON");
        let tools = seen["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 5, "{mode}: {seen}");
        for tool in tools {
            assert_eq!(tool["annotations"]["readOnlyHint"], true, "{mode}: {tool}");
            assert_eq!(tool["has_output_schema"], true, "{mode}: {tool}");
        }
        for name in calls.as_object().unwrap().keys() {
            let result = &seen["results"][name];
            assert_eq!(result["is_error"], false, "{mode} {name}: {result}");
            check_structured(&fx, name, &result["structured"]).await;
            let text: Value = serde_json::from_str(result["text"].as_str().unwrap())
                .expect("the text content is the same JSON");
            assert_eq!(text["record_type"], result["structured"]["record_type"]);
        }
    }
}

/// The official TypeScript SDK client (`@modelcontextprotocol/sdk`, pinned in
/// tests/peers/package.json) lists and calls every tool: its validator prints no warning about
/// the tool schemas (no "unknown format … ignored"), and it accepts every structured result
/// against the tool's `outputSchema` (it throws otherwise). Skipped with a note when
/// `tests/peers/install.sh` has not run.
#[tokio::test]
async fn the_typescript_sdk_client_calls_every_tool() {
    let node_dir = support::process::peers_dir().join("node");
    let sdk = node_dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let node = Command::new("node").arg("--version").output();
    if !sdk.is_file() || !node.is_ok_and(|out| out.status.success()) {
        return support::skip(
            "serve typescript client",
            "node or the TypeScript SDK is not installed (tests/peers/install.sh)",
        );
    }
    let fx = fixture().await;
    let calls = tool_calls(&fx);
    let output = Command::new("node")
        .arg(support::process::scripts_dir().join("ask_ledger.mjs"))
        .arg(&node_dir)
        .arg(format!("{}/mcp", fx.base))
        .arg(calls.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run the TypeScript client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("unknown format"), "{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).expect("client JSON");
    assert_eq!(seen["warnings"], json!([]), "the client warned: {seen}");
    let tools = seen["tools"].as_array().unwrap();
    for name in calls.as_object().unwrap().keys() {
        let tool = tools
            .iter()
            .find(|tool| tool["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} not listed: {seen}"));
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        assert_eq!(tool["has_output_schema"], true, "{tool}");
        let result = &seen["results"][name];
        assert_eq!(result["is_error"], false, "{name}: {result}");
        check_structured(&fx, name, &result["structured"]).await;
        let text: Value = serde_json::from_str(result["text"].as_str().unwrap())
            .expect("the text content is the same JSON");
        assert_eq!(text, result["structured"], "{name}");
    }
}

/// Calls `tool` with `arguments` over MCP: its structured content, or the error text.
async fn call(base: &str, tool: &str, arguments: Value) -> Result<Value, String> {
    let transport = StreamableHttpClientTransport::from_uri(format!("{base}/mcp"));
    let client = ().serve(transport).await.expect("connect with rmcp");
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().unwrap().clone());
    let result = client.call_tool(params).await.expect("tools/call");
    let _ = client.cancel().await;
    if result.is_error == Some(true) {
        Err(format!("{:?}", result.content))
    } else {
        Ok(result.structured_content.expect("structured content"))
    }
}

/// `verify` without `--ledger` on `dir`: exit code, verdict, standard error.
fn verify_default(dir: &RunDir) -> (Option<i32>, Value, String) {
    let output = Command::new(BINARY)
        .arg("verify")
        .arg("--storage-dir")
        .arg(dir.root())
        .env("RUST_LOG", "info")
        .env_remove("APIFY_IS_AT_HOME")
        .output()
        .unwrap();
    let verdict = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), verdict, stderr)
}

/// The quick start writes the ledger `quickstart`; a question naming no ledger (the API's
/// `DEFAULT`, a tool call without `ledger_name`, `verify` without `--ledger`) is answered from
/// it while it is the store's only ledger, saying so, and lists the ledgers once there are two.
#[tokio::test]
async fn the_only_ledger_answers_for_the_default_and_several_are_listed() {
    let peer = RmcpPeer::start(surface("demo", "1.0.0", tools_v1()), RmcpMode::default());
    let server_url = peer.url.to_string();
    let dir = RunDir::new();
    dir.run_ok(
        &json!({"servers": [server_url], "ledger_name": "quickstart"}),
        None,
    )
    .await;
    peer.set_surface(surface("demo", "1.1.0", tools_v2()));
    dir.run_ok(
        &json!({"servers": [server_url], "ledger_name": "quickstart"}),
        None,
    )
    .await;
    let storage = LocalStorage::open_existing(dir.root());
    let app = serve::app(Backend::Local(storage), HostPolicy::local());
    let base = format!("http://{}", support::background::serve(app));
    let client = http();
    let server = segment(&server_url);

    // One ledger: DEFAULT stands for it, and the answer says so.
    let (status, servers) = get(&client, &format!("{base}/ledgers/DEFAULT/servers")).await;
    assert_eq!(status, 200, "{servers}");
    assert_eq!(servers["ledger_name"], "quickstart");
    assert_eq!(servers["servers_total"], 1);
    assert!(
        servers["note"].as_str().unwrap().contains("\"quickstart\""),
        "{servers}"
    );
    for route in [
        format!("{base}/ledgers/DEFAULT/servers/{server}/changes"),
        format!("{base}/ledgers/DEFAULT/servers/{server}/surface"),
    ] {
        let (status, body) = get(&client, &route).await;
        assert_eq!(status, 200, "{route}: {body}");
        assert_eq!(body["ledger_name"], "quickstart", "{route}");
        assert!(body["note"].is_string(), "{route}: {body}");
    }
    let (_, named) = get(&client, &format!("{base}/ledgers/quickstart/servers")).await;
    assert!(named.get("note").is_none(), "{named}");
    let listed = call(&base, "list_watched_servers", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["ledger_name"], "quickstart");
    assert!(listed["note"].is_string(), "{listed}");
    let changes = call(&base, "get_changes", json!({"server_url": server_url}))
        .await
        .unwrap();
    assert!(changes["changes_total"].as_u64().unwrap() > 0, "{changes}");
    let ledgers = call(&base, "list_ledgers", json!({})).await.unwrap();
    assert_eq!(
        ledgers,
        json!({"ledgers_total": 1, "ledgers": ["quickstart"], "default_ledger": "quickstart"})
    );
    let (code, verdict, stderr) = verify_default(&dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(verdict["ledger_name"], "quickstart");
    assert!(stderr.contains("only ledger, \"quickstart\""), "{stderr}");

    // Two ledgers and no DEFAULT: every answer lists the choices.
    dir.run_ok(
        &json!({"servers": [server_url], "ledger_name": "other"}),
        None,
    )
    .await;
    let (status, error) = get(&client, &format!("{base}/ledgers/DEFAULT/servers")).await;
    assert_eq!(status, 404, "{error}");
    assert_eq!(error["error"], "ledger_not_found");
    assert_eq!(error["ledgers"], json!(["other", "quickstart"]));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("\"other\", \"quickstart\""),
        "{error}"
    );
    let refused = call(&base, "get_surface", json!({"server_url": server_url}))
        .await
        .unwrap_err();
    assert!(refused.contains("quickstart"), "{refused}");
    let ledgers = call(&base, "list_ledgers", json!({})).await.unwrap();
    assert_eq!(ledgers["default_ledger"], Value::Null, "{ledgers}");
    assert_eq!(ledgers["ledgers_total"], 2);
    let (code, _, stderr) = verify_default(&dir);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("\"other\", \"quickstart\"") && stderr.contains("--ledger"),
        "{stderr}"
    );
}

/// Started by the platform in Standby mode, the binary serves on `ACTOR_STANDBY_PORT` and
/// answers the readiness probe on `GET /`. The port is 0: the server picks a free one and says
/// which, so no other process can take it between a test's choice and the server's bind.
#[tokio::test]
async fn the_binary_starts_in_standby_mode_and_answers_the_readiness_probe() {
    let dir = RunDir::new();
    let logs = tempfile::tempdir().unwrap();
    let mut command = Command::new(BINARY);
    command
        .env("APIFY_META_ORIGIN", "STANDBY")
        .env("ACTOR_STANDBY_PORT", "0")
        .env_remove("ACTOR_WEB_SERVER_PORT")
        .env("CRAWLEE_STORAGE_DIR", dir.root())
        .env("RUST_LOG", "info")
        .env_remove("APIFY_IS_AT_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let server = support::process::Serving::spawn(command, &logs.path().join("err"));
    let client = http();
    let url = format!("http://{}/", server.addr);
    let response = client
        .get(&url)
        .header(READINESS_HEADER, "1")
        .send()
        .await
        .expect("the readiness probe is answered");
    let answer = (
        response.status().as_u16(),
        response.text().await.unwrap_or_default(),
    );
    assert_eq!(answer, (200, "ready".to_string()));
    let (index_status, index) = get(&client, &url).await;
    assert_eq!(index_status, 200);
    assert_eq!(index["read_only"], true);
}

/// At the default log level (no `RUST_LOG`) `serve` says where it serves, and nothing on
/// each MCP call it answers.
#[tokio::test]
async fn serve_logs_nothing_per_mcp_call_at_the_default_level() {
    let fx = fixture().await;
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("err");
    let mut command = Command::new(BINARY);
    command
        .args(["serve", "--port", "0", "--storage-dir"])
        .arg(fx.dir.root())
        .env_remove("RUST_LOG")
        .env_remove("APIFY_IS_AT_HOME")
        .env_remove("APIFY_META_ORIGIN")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let server = support::process::Serving::spawn(command, &log);
    let client = http();
    for _ in 0..3 {
        let response = client
            .post(format!("http://{}/mcp", server.addr))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        assert!(response.text().await.unwrap().contains("list_ledgers"));
    }
    drop(server);
    let printed = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 1, "{printed}");
    assert!(
        lines[0].contains("serving the ledger read-only on"),
        "{printed}"
    );
}

/// The Actor package declares Standby mode and the MCP path the server mounts.
#[test]
fn the_actor_package_declares_standby_and_the_mcp_path() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".actor/actor.json");
    let actor: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(actor["usesStandbyMode"], true);
    assert_eq!(actor["webServerMcpPath"], serve::MCP_PATH);
}
