//! Errors that say what to do (issue 35, section 3; issue 50): each mistake a newcomer makes
//! is named with its fix, and checked here by its message. Every server is a hand-written one on
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
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{log}");
    // Every entry refused: the run says so, and how a scheduler would notice.
    assert!(log.contains("every server entry was refused"), "{log}");
    assert!(log.contains("exit_nonzero_on"), "{log}");
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

/// Standard error and output of a run, as one text.
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        stderr(output),
        String::from_utf8_lossy(&output.stdout)
    )
}

/// Issue 50: a server that is down, a host typo and a URL carrying a password each say what
/// to check or where a credential goes instead. The refused port is one this process holds
/// and never listens on; the typo is looked up in a network namespace of its own (no packet
/// can leave), under RFC 6761's `.invalid`.
#[test]
fn a_refused_connection_a_host_typo_and_a_password_in_the_url_name_their_fix() {
    let port = support::process::closed_port();
    let output = ledger(&[
        "snapshot",
        "--allow-private-targets",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert_eq!(output.status.code(), Some(3));
    let text = printed(&output);
    assert!(text.contains("CONNECT_FAIL"), "{text}");
    assert!(
        text.contains(&format!("127.0.0.1:{port} refused the connection")),
        "{text}"
    );
    assert!(
        text.contains("check the URL's host and port, and that the server is running"),
        "{text}"
    );
    assert!(
        !text.contains("os error"),
        "the raw client error chain: {text}"
    );

    let output = ledger(&[
        "snapshot",
        "--allow-private-targets",
        &format!("http://user:canary-pw-7731@127.0.0.1:{port}/mcp"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = printed(&output);
    assert!(text.contains("server_credentials"), "{text}");
    assert!(text.contains("--header"), "{text}");
    assert!(
        !text.contains("canary-pw-7731"),
        "the password was printed: {text}"
    );

    if !can_unshare() {
        return support::skip(
            "a host typo names its fix",
            "unshare -n is not available (needs root and util-linux)",
        );
    }
    let output = in_namespace(&["snapshot", "http://mcp.exampel.invalid/mcp"], "info");
    assert_eq!(output.status.code(), Some(3));
    let text = printed(&output);
    assert!(text.contains("DNS_FAIL"), "{text}");
    assert!(text.contains("could not resolve the host name"), "{text}");
    assert!(text.contains("check its spelling"), "{text}");
}

/// A web page where the MCP endpoint was expected (200 text/html at the site root) is asked
/// whether it is the MCP endpoint, as a 404 is; a server that never answers names the input
/// setting whose deadline ran out and how far it may be raised.
#[test]
fn an_html_page_and_a_hung_server_name_their_fix() {
    let app = axum::Router::new()
        .route(
            "/",
            any(|| async {
                (
                    [("content-type", "text/html; charset=utf-8")],
                    "<!doctype html><html><body>Welcome</body></html>",
                )
            }),
        )
        .route(
            "/hung",
            any(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                "too late"
            }),
        );
    let addr = support::background::serve(app);
    let output = ledger(&[
        "snapshot",
        "--allow-private-targets",
        &format!("http://{addr}/"),
    ]);
    let text = printed(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(text.contains("is this the MCP endpoint?"), "{text}");
    assert!(text.contains("/mcp"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let storage = dir.path().join("storage");
    let input = dir.path().join("input.json");
    let hung = format!("http://{addr}/hung");
    std::fs::write(
        &input,
        json!({"servers": [hung], "request_timeout_seconds": 2, "max_server_seconds": 5})
            .to_string(),
    )
    .unwrap();
    let output = ledger(&[
        "--storage-dir",
        storage.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--allow-private-targets",
    ]);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{log}");
    // A local run charges nothing, and its log says nothing of charging.
    assert!(
        !log.contains("charging") && !log.contains("dry_run"),
        "{log}"
    );
    let rows = dataset(&storage);
    let row = rows
        .iter()
        .find(|r| r["server_url"] == json!(hung))
        .unwrap_or_else(|| panic!("a row for {hung}: {rows:?}"));
    assert_eq!(row["reason_code"], "TIMEOUT", "{row}");
    let error = row["error"].as_str().unwrap();
    assert!(
        error.contains("request_timeout_seconds") || error.contains("max_server_seconds"),
        "{row}"
    );
    assert!(error.contains("raise"), "{row}");
}

/// INPUT mistakes name the file, say that only JSON is read, and suggest the nearest name
/// for a misspelt field or value instead of listing every one.
#[test]
fn input_mistakes_name_the_file_and_the_nearest_name() {
    let dir = tempfile::tempdir().unwrap();
    let storage = dir.path().join("storage");
    let run = |name: &str, text: &str| {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        ledger(&[
            "--storage-dir",
            storage.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ])
    };
    let output = run("watch.yaml", "servers:\n  - https://mcp.example.com/mcp\n");
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("watch.yaml"), "{text}");
    assert!(text.contains("not valid JSON"), "{text}");
    assert!(text.contains("JSON only (not YAML"), "{text}");

    let output = run(
        "watch.json",
        &json!({
            "server": ["https://mcp.example.com/mcp"],
            "alert_on": ["tool_add"],
            "notify": [{"url": "https://hooks.example.com/x", "format": "slak"}],
        })
        .to_string(),
    );
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("watch.json"), "{text}");
    assert!(
        text.contains("`server` is not a known field; did you mean `servers`?"),
        "{text}"
    );
    assert!(
        text.contains("unknown change class \"tool_add\"; did you mean `tool_added`?"),
        "{text}"
    );
    assert!(
        text.contains("(got \"slak\"); did you mean `slack`?"),
        "{text}"
    );
    // The suggestion replaces the lists of every field and class.
    assert!(!text.contains("history_retention_days"), "{text}");
    assert!(!text.contains("prompt_removed"), "{text}");
}

/// Command-line mistakes: a flag of the watch run given to a subcommand names only that flag;
/// `--allow-private-targets` after `serve` is explained as before it; a busy port names
/// `--port`; a misspelt `--ledger` lists the store's ledgers with the nearest one; an empty
/// heads file says where heads come from.
#[test]
fn command_line_mistakes_name_their_fix() {
    let dir = tempfile::tempdir().unwrap();
    let notify = dir.path().join("x.json");
    std::fs::write(&notify, "[]").unwrap();
    let output = ledger(&["--notify", notify.to_str().unwrap(), "diff", "a", "b"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("--notify belongs to Actor mode"), "{text}");
    assert!(text.contains("not to `diff`"), "{text}");
    for not_given in ["--input", "--storage-dir", "--exit-nonzero-on"] {
        assert!(!text.contains(not_given), "{not_given}: {text}");
    }

    for args in [
        ["serve", "--allow-private-targets"],
        ["--allow-private-targets", "serve"],
    ] {
        let output = ledger(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let text = stderr(&output);
        assert!(!text.contains("unexpected argument"), "{text}");
        assert!(text.contains("serve never probes one"), "{text}");
        assert!(text.contains("leave the flag out"), "{text}");
    }

    // A port this test holds open: the server cannot listen there.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let storage = dir.path().join("storage");
    let output = ledger(&[
        "serve",
        "--storage-dir",
        storage.to_str().unwrap(),
        "--port",
        &port,
    ]);
    assert_eq!(output.status.code(), Some(3));
    let text = stderr(&output);
    assert!(
        text.contains(&format!("another program already listens on port {port}")),
        "{text}"
    );
    assert!(text.contains("--port N"), "{text}");
    drop(busy);

    let ledgers = storage.join("key_value_stores/mcp-tool-surface-ledger");
    std::fs::create_dir_all(&ledgers).unwrap();
    std::fs::write(ledgers.join("quickstart.json"), "{}").unwrap();
    let output = ledger(&[
        "history",
        "--storage-dir",
        storage.to_str().unwrap(),
        "--ledger",
        "quikstart",
        "--server",
        "http://127.0.0.1:8000/mcp",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("no ledger \"quikstart\""), "{text}");
    assert!(text.contains("the store holds: \"quickstart\""), "{text}");
    assert!(text.contains("did you mean `quickstart`?"), "{text}");
    assert!(!text.contains("verifying"), "{text}");

    let heads = dir.path().join("heads.jsonl");
    std::fs::write(&heads, "").unwrap();
    let output = ledger(&[
        "verify",
        "--storage-dir",
        storage.to_str().unwrap(),
        "--heads",
        heads.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("is empty"), "{text}");
    assert!(text.contains("syslog"), "{text}");
    assert!(text.contains("journalctl -t mcp-ledger-head"), "{text}");
}
