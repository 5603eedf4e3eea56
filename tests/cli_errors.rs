//! Errors that say what to do (issue 35, section 3): each mistake a newcomer makes is named
//! with its fix, and checked here by its message. Every server is a hand-written one on
//! 127.0.0.1; the run over the example servers happens in a network namespace of its own,
//! where no packet can leave.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

mod support;

use std::process::{Command, Output, Stdio};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

/// The binary with a clean environment.
fn ledger(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("RUST_LOG", "info");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_")
            || name.starts_with("ACTOR_")
            || name.starts_with("LEDGER_")
            || name == "CRAWLEE_STORAGE_DIR"
        {
            command.env_remove(name);
        }
    }
    command.output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A URL typed without its scheme is refused with the form that was most likely meant, on the
/// command line and in INPUT alike.
#[test]
fn a_url_without_its_scheme_names_the_form_to_write() {
    for (typed, meant, problem) in [
        (
            "127.0.0.1:8000/mcp",
            "http://127.0.0.1:8000/mcp",
            "relative URL without a base",
        ),
        (
            "localhost:8000/mcp",
            "http://localhost:8000/mcp",
            "refused URL scheme \"localhost\"",
        ),
    ] {
        let output = ledger(&["snapshot", typed]);
        assert_eq!(output.status.code(), Some(2), "{typed}");
        let printed = stderr(&output);
        assert!(printed.contains(problem), "{printed}");
        assert!(printed.contains(meant), "{printed}");
    }
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before.json");
    std::fs::write(&before, json!({"tools": []}).to_string()).unwrap();
    let output = ledger(&["diff", before.to_str().unwrap(), "127.0.0.1:8000/mcp"]);
    assert_eq!(output.status.code(), Some(2));
    let printed = stderr(&output);
    assert!(printed.contains("No such file or directory"), "{printed}");
    assert!(printed.contains("http://127.0.0.1:8000/mcp"), "{printed}");

    // In INPUT: BLOCKED_TARGET rows whose error says the same.
    let input = dir.path().join("input.json");
    let entries = json!(["127.0.0.1:8000/mcp", "localhost:8000/mcp"]);
    std::fs::write(&input, json!({"servers": entries}).to_string()).unwrap();
    let storage = dir.path().join("storage");
    let output = ledger(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--allow-private-targets",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = dataset(&storage);
    for (typed, meant) in [
        ("127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("localhost:8000/mcp", "http://localhost:8000/mcp"),
    ] {
        let row = rows
            .iter()
            .find(|r| r["server_url"] == json!(typed))
            .unwrap_or_else(|| panic!("a row for {typed}: {rows:?}"));
        assert_eq!(row["reason_code"], "BLOCKED_TARGET", "{row}");
        assert!(row["error"].as_str().unwrap().contains(meant), "{row}");
    }
}

fn dataset(storage: &std::path::Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(storage.join("datasets/default"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

/// A site root or a docs page (404, 405, 501) is asked whether it is the MCP endpoint; a
/// login wall names the way to give a credential.
#[test]
fn a_wrong_endpoint_and_a_login_wall_say_what_to_do() {
    let app = axum::Router::new()
        .route(
            "/docs",
            any(|| async { (StatusCode::NOT_FOUND, "<html>Not found</html>") }),
        )
        .route(
            "/form",
            any(|| async { (StatusCode::METHOD_NOT_ALLOWED, "no") }),
        )
        .route(
            "/private/mcp",
            any(|| async {
                let mut headers = HeaderMap::new();
                headers.insert("www-authenticate", "Bearer".parse().unwrap());
                (StatusCode::UNAUTHORIZED, headers, "login first")
            }),
        );
    let addr = support::background::serve(app);
    for path in ["docs", "form"] {
        let url = format!("http://{addr}/{path}");
        let output = ledger(&["snapshot", &url, "--allow-private-targets"]);
        let printed = format!(
            "{}{}",
            stderr(&output),
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(
            printed.contains("is this the MCP endpoint?"),
            "{path}: {printed}"
        );
        assert!(printed.contains("/mcp"), "{printed}");
    }
    let url = format!("http://{addr}/private/mcp");
    let output = ledger(&["snapshot", &url, "--allow-private-targets"]);
    let printed = format!(
        "{}{}",
        stderr(&output),
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(
        printed.contains("AUTH_REQUIRED") || printed.contains("requires authorization"),
        "{printed}"
    );
    assert!(printed.contains("--header"), "{printed}");
    assert!(printed.contains("server_credentials"), "{printed}");
}

/// An empty INPUT is an error that says what to write; `{}` says the example servers are used
/// (run where no packet can leave: a network namespace without a route).
#[test]
fn an_empty_input_is_refused_and_an_empty_object_names_the_example_servers() {
    let dir = tempfile::tempdir().unwrap();
    let storage = dir.path().join("storage");
    let input = dir.path().join("input.json");
    std::fs::write(&input, "").unwrap();
    let output = ledger(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let printed = stderr(&output);
    assert!(printed.contains("is empty"), "{printed}");
    assert!(printed.contains("write {}"), "{printed}");

    if !can_unshare() {
        return support::skip(
            "an_empty_object_names_the_example_servers",
            "unshare -n is not available (needs root and util-linux)",
        );
    }
    std::fs::write(&input, json!({"max_server_seconds": 5}).to_string()).unwrap();
    let output = in_namespace(
        &[
            "--storage-dir",
            storage.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ],
        "info",
    );
    let printed = stderr(&output);
    assert!(
        printed.contains("watching the four example servers"),
        "{printed}"
    );
    assert!(printed.contains("mcp.deepwiki.com"), "{printed}");
}

/// The binary in a network namespace of its own (no packet can leave), outside the platform,
/// logging at `log`.
fn in_namespace(args: &[&str], log: &str) -> Output {
    Command::new("unshare")
        .args(["-n", BIN])
        .args(args)
        .env("RUST_LOG", log)
        .env_remove("APIFY_IS_AT_HOME")
        .env_remove("APIFY_TOKEN")
        .env_remove("LEDGER_ALLOW_PRIVATE_TARGETS")
        .output()
        .unwrap()
}

/// Whether this machine lets a test start a process in a network namespace of its own.
fn can_unshare() -> bool {
    Command::new("unshare")
        .args(["-n", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A credential for a public plain-http origin is refused before anything is sent (it would
/// cross the internet in cleartext), on the command line and in INPUT; the refusal names the
/// https form and never quotes the value. Run in a namespace of its own: even a wrong build
/// cannot send the canary anywhere.
#[test]
fn a_credential_for_a_public_plain_http_origin_is_refused() {
    if !can_unshare() {
        return support::skip(
            "a_credential_for_a_public_plain_http_origin_is_refused",
            "unshare -n is not available (needs root and util-linux)",
        );
    }
    let canary = "canary-cleartext-41f0c2";
    let in_namespace = |args: &[&str]| in_namespace(args, "trace");
    let header = format!("Authorization: Bearer {canary}");
    let output = in_namespace(&[
        "snapshot",
        "--header",
        &header,
        "http://mcp.example.com/mcp",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let printed = stderr(&output);
    assert!(printed.contains("travel in cleartext"), "{printed}");
    assert!(printed.contains("https://"), "{printed}");
    assert!(!printed.contains(canary), "{printed}");

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(
        &input,
        json!({
            "servers": ["http://mcp.example.com/mcp"],
            "server_credentials": [{"origin": "http://mcp.example.com", "header": "Authorization",
                                    "value": format!("Bearer {canary}")}],
        })
        .to_string(),
    )
    .unwrap();
    let storage = dir.path().join("storage");
    let output = in_namespace(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let printed = stderr(&output);
    assert!(printed.contains("server_credentials[0]"), "{printed}");
    assert!(printed.contains("travel in cleartext"), "{printed}");
    assert!(!printed.contains(canary), "{printed}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(canary));

    // Loopback stays allowed: the same header for a local server is accepted (the server is
    // down, so the snapshot fails to connect, not to parse the credential).
    let output = in_namespace(&[
        "--allow-private-targets",
        "snapshot",
        "--header",
        &header,
        "http://127.0.0.1:9/mcp",
    ]);
    let printed = stderr(&output);
    assert!(!printed.contains("cleartext"), "{printed}");
    assert!(!printed.contains(canary), "{printed}");
}
