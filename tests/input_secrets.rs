//! Secret input end to end, encrypted by Apify's own code.
//!
//! `tests/apify_schemas/encrypt_input.cjs` makes a fresh passphrase-protected RSA key pair and
//! encrypts an INPUT with `@apify/input_secrets` against `input_schema.json`, exactly as the
//! platform stores it (`server_credentials` becomes an `ENCRYPTED_JSON:...` string). The Actor
//! binary then runs with that INPUT and the two key variables:
//! - the decrypted header reaches the server of its origin (a server that records headers) and
//!   appears in no file the run wrote and nothing it printed;
//! - a wrong passphrase, or no key at all, is an input error (exit 2) that names the field, and
//!   the run contacts nothing and writes no ledger.
//!
//! Skips with a note when `node` or the npm packages (`npm ci` in tests/apify_schemas) are
//! missing. `tests/platform_run.rs` does the same through the REST backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/apify_secrets.rs"]
mod apify_secrets;
mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use actor::{Rows, RunDir};
use apify_secrets::{KEY_FILE_VAR, PASSPHRASE_VAR, encrypt, node_missing};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

const LEDGER: &str = "secret-fleet";

/// Every request a recording server saw: path and `Authorization` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A server that records each request and refuses it with 401, so a run that sent the
/// credential ends with `AUTH_REJECTED` and the recorded header shows what was sent.
async fn recording_server() -> (url::Url, Seen) {
    async fn refuse(State(seen): State<Seen>, request: Request) -> Response {
        let auth = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or("<not text>").to_string());
        seen.lock()
            .unwrap()
            .push((request.uri().path().to_string(), auth));
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"test\"")],
        )
            .into_response()
    }
    let seen: Seen = Arc::default();
    let app = Router::new().fallback(refuse).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/mcp").parse().unwrap(), seen)
}

fn plain_input(url: &url::Url, token: &str) -> Value {
    json!({
        "servers": [url.as_str()],
        "ledger_name": LEDGER,
        "server_credentials": [{
            "origin": url.origin().ascii_serialization(),
            "header": "Authorization",
            "value": token,
        }],
        // A secret array field too: a chat webhook URL carries its token in the path.
        "notify": [{
            "url": "http://127.0.0.1:9/services/decrypted-canary-notify",
            "format": "slack",
            "label": "sealed",
        }],
    })
}

/// Runs the binary with `input` and the key variables (`None`: both unset).
async fn run_binary(dir: &RunDir, input: &Value, key: Option<(&str, &str)>) -> Output {
    let mut command = dir.command(input, &["--allow-private-targets"]);
    command.env("RUST_LOG", "trace");
    match key {
        Some((file, passphrase)) => command
            .env(KEY_FILE_VAR, file)
            .env(PASSPHRASE_VAR, passphrase),
        None => command.env_remove(KEY_FILE_VAR).env_remove(PASSPHRASE_VAR),
    };
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn printed(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_encrypted_by_apify_is_decrypted_and_sent_to_its_origin() {
    if let Some(why) = node_missing() {
        return support::skip("input secrets round trip", why);
    }
    for format in ["pkcs1-des3", "pkcs8-aes256"] {
        let (url, seen) = recording_server().await;
        let token = format!("Bearer decrypted-canary-{format}-5e1b");
        let sealed = encrypt(&plain_input(&url, &token), format);
        let field = sealed.input["server_credentials"].as_str().unwrap();
        assert!(field.starts_with("ENCRYPTED_JSON:"), "{field}");
        let notify = sealed.input["notify"].as_str().unwrap();
        assert!(notify.starts_with("ENCRYPTED_JSON:"), "{notify}");
        assert!(!sealed.input.to_string().contains("decrypted-canary"));

        let dir = RunDir::new();
        let key = (sealed.key_file_base64.as_str(), sealed.passphrase.as_str());
        let out = run_binary(&dir, &sealed.input, Some(key)).await;
        let text = printed(&out);
        assert_eq!(out.status.code(), Some(0), "{format}: {text}");

        let rows = Rows::of(&dir);
        let row = rows.server(url.as_str());
        assert_eq!(row["listing"], "authenticated", "{format}: {row}");
        assert_eq!(row["reason_code"], "AUTH_REJECTED", "{format}: {row}");
        // `notify` was decrypted and read (no change was recorded, so nothing was sent).
        let notified = &dir.output()["notifications"][0];
        assert_eq!(notified["label"], "sealed", "{format}: {notified}");
        assert_eq!(
            notified["status"], "nothing_matched",
            "{format}: {notified}"
        );
        let to_endpoint: Vec<_> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _)| path == "/mcp")
            .map(|(_, auth)| auth.clone())
            .collect();
        assert!(!to_endpoint.is_empty(), "{format}: the server saw nothing");
        for auth in &to_endpoint {
            assert_eq!(auth.as_deref(), Some(token.as_str()), "{format}");
        }

        assert!(!text.contains("decrypted-canary"), "{format}: printed");
        for file in files_under(dir.root()) {
            let bytes = std::fs::read(&file).unwrap();
            let content = String::from_utf8_lossy(&bytes);
            assert!(
                !content.contains("decrypted-canary"),
                "{format}: the secret is in {}",
                file.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_that_cannot_be_decrypted_refuses_the_input() {
    if let Some(why) = node_missing() {
        return support::skip("input secrets refusal", why);
    }
    let (url, seen) = recording_server().await;
    let token = "Bearer never-sent-canary-93c0";
    let sealed = encrypt(&plain_input(&url, token), "pkcs1-des3");
    let wrong = format!("{}x", sealed.passphrase);
    let cases = [
        (
            Some((sealed.key_file_base64.as_str(), wrong.as_str())),
            PASSPHRASE_VAR,
        ),
        (None, "plain text for a local run"),
    ];
    for (key, expected) in cases {
        let dir = RunDir::new();
        let out = run_binary(&dir, &sealed.input, key).await;
        let text = printed(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("server_credentials"), "{text}");
        assert!(text.contains(expected), "{text}");
        assert!(!text.contains("never-sent-canary"), "{text}");
        assert!(dir.ledger_bytes(LEDGER).is_none(), "a ledger was written");
        assert!(dir.rows().is_empty(), "rows were written");
    }
    assert!(seen.lock().unwrap().is_empty(), "the server was contacted");
}
