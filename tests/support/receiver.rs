//! A loopback receiver for `notify` destinations (each path records its requests and answers
//! as the test scripts it) and the checks a receiver makes: the Standard Webhooks reference
//! library (Python `standardwebhooks`), a signature made with Python's standard library, and
//! the README's receiver function.
//!
//! Include with `#[path = "support/receiver.rs"] mod receiver;` next to `mod support;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine;
use serde_json::Value;

use crate::support;

/// A 32-byte Standard Webhooks secret.
pub fn secret_of(byte: u8) -> String {
    let key = [byte; 32];
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(key)
    )
}

/// One request a receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// The path after the first `/`.
    pub path: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The body as received.
    pub body: Bytes,
    /// When it arrived.
    pub at: Instant,
    /// The file the script watches, as it was when the request arrived.
    pub watched: Option<Vec<u8>>,
}

impl Received {
    pub fn header(&self, name: &str) -> String {
        self.headers[name].to_str().unwrap().to_string()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Default)]
struct Script {
    /// Answers for the next requests (status, Retry-After); 200 when empty.
    answers: VecDeque<(u16, Option<&'static str>)>,
    received: Vec<Received>,
    /// A file read at each request (the ledger record: was it written before the message?).
    watch: Option<std::path::PathBuf>,
}

/// A loopback receiver for every destination of a test: `/{path}` records the request and
/// answers from the path's script.
#[derive(Clone)]
pub struct Receiver {
    base: String,
    scripts: Arc<Mutex<std::collections::HashMap<String, Script>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let scripts: Arc<Mutex<std::collections::HashMap<String, Script>>> = Arc::default();
        let router = Router::new()
            .route("/{*path}", post(receive))
            .with_state(scripts.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        support::background::handle().spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, router).await;
        });
        Receiver {
            base: format!("http://{addr}"),
            scripts,
        }
    }

    /// The URL of `path`, answering `answers` first.
    pub fn url(&self, path: &str, answers: &[(u16, Option<&'static str>)]) -> String {
        let mut scripts = self.scripts.lock().unwrap();
        scripts.entry(path.to_string()).or_default().answers = answers.iter().copied().collect();
        format!("{}/{path}", self.base)
    }

    /// Reads `file` whenever `path` receives a request.
    pub fn watch(&self, path: &str, file: std::path::PathBuf) {
        let mut scripts = self.scripts.lock().unwrap();
        scripts.entry(path.to_string()).or_default().watch = Some(file);
    }

    pub fn received(&self, path: &str) -> Vec<Received> {
        let scripts = self.scripts.lock().unwrap();
        scripts
            .get(path)
            .map(|s| s.received.clone())
            .unwrap_or_default()
    }
}

async fn receive(
    State(scripts): State<Arc<Mutex<std::collections::HashMap<String, Script>>>>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut scripts = scripts.lock().unwrap();
    let script = scripts.entry(path.clone()).or_default();
    script.received.push(Received {
        path,
        headers,
        body,
        at: Instant::now(),
        watched: script
            .watch
            .as_ref()
            .and_then(|path| std::fs::read(path).ok()),
    });
    let (status, retry_after) = script.answers.pop_front().unwrap_or((200, None));
    let status = StatusCode::from_u16(status).unwrap();
    match retry_after {
        Some(wait) => (status, [("retry-after", wait)], "").into_response(),
        None => (status, "ok").into_response(),
    }
}

/// Runs the reference library on one delivery: `ok`, or the error it raised.
pub fn verify_with_reference(secret: &str, headers: [&str; 3], body: &[u8]) -> Option<String> {
    let python = support::python::interpreter()?;
    let probe = Command::new(&python)
        .args(["-c", "import standardwebhooks"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let script = "import sys\n\
        from standardwebhooks import Webhook\n\
        secret, wid, ts, sig, path = sys.argv[1:6]\n\
        body = open(path, 'rb').read()\n\
        try:\n\
        \x20   Webhook(secret).verify(body, {'webhook-id': wid, 'webhook-timestamp': ts, 'webhook-signature': sig})\n\
        \x20   print('ok')\n\
        except Exception as e:\n\
        \x20   print(type(e).__name__ + ': ' + str(e))\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body");
    std::fs::write(&path, body).unwrap();
    let output = Command::new(&python)
        .args(["-c", script, secret, headers[0], headers[1], headers[2]])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// A valid signature for `timestamp`, made with the standard library's HMAC in Python (the
/// receiver side of the README's example), for the old-timestamp check.
pub fn python_signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let python = support::python::interpreter()?;
    let script = "import base64, hashlib, hmac, sys\n\
        key = base64.b64decode(sys.argv[1].removeprefix('whsec_'))\n\
        body = open(sys.argv[4], 'rb').read()\n\
        signed = sys.argv[2].encode() + b'.' + sys.argv[3].encode() + b'.' + body\n\
        print('v1,' + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode())\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body");
    std::fs::write(&path, body).unwrap();
    let output = Command::new(&python)
        .args(["-c", script, secret, id, &timestamp.to_string()])
        .arg(&path)
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Runs the README's `verify` function (Python standard library only) on one delivery.
pub fn readme_verify(secret: &str, h: &[String; 3], body: &[u8]) -> Option<String> {
    let python = support::python::interpreter()?;
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let start = readme
        .find("import base64, hashlib, hmac, time")
        .expect("README receiver");
    let end = start + readme[start..].find("```").unwrap();
    let script = format!(
        "{}\nimport sys\nbody = open(sys.argv[5], 'rb').read()\n\
         print(verify(sys.argv[1], {{'webhook-id': sys.argv[2], 'webhook-timestamp': sys.argv[3], \
         'webhook-signature': sys.argv[4]}}, body))\n",
        &readme[start..end]
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body");
    std::fs::write(&path, body).unwrap();
    let output = Command::new(&python)
        .args(["-c", &script, secret, &h[0], &h[1], &h[2]])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}
