//! Authenticated listing (`server_credentials`) end to end.
//!
//! - Against the official Python SDK as an OAuth resource server whose token verifier accepts
//!   one token: the anonymous view says `AUTH_REQUIRED`, the credential reads the whole surface
//!   as a separate ledger view, diffs across runs work, and a wrong token is `AUTH_REJECTED`.
//! - Against hand-written servers that record every request's headers: the secret goes to its
//!   exact origin only, never across a redirect to another origin, never to RFC 9728 metadata.
//! - With a unique canary secret, the binary at the most verbose log level: no file the run
//!   wrote and nothing it printed contains the secret.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/pricing.rs"]
mod pricing;
mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use actor::{Rows, RunDir};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use support::auth_peer;
use support::surface::{SurfaceFile, surface, tool};

fn pricing_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("ACTOR_TEST_PAY_PER_EVENT", "1"),
        (
            "APIFY_ACTOR_PRICING_INFO",
            pricing::SEED_PRICING_INFO.as_str(),
        ),
        ("APIFY_CHARGED_ACTOR_EVENT_COUNTS", "{}"),
    ]
}

async fn run(dir: &RunDir, input: &Value) -> Rows {
    dir.run_with_env(input, None, &pricing_env())
        .await
        .unwrap_or_else(|e| panic!("the run failed: {e}"));
    Rows::of(dir)
}

fn server_checked(rows: &Rows) -> u64 {
    rows.summary["charges"]["events"]["server_checked"]["count"]
        .as_u64()
        .unwrap_or(0)
}

fn origin_of(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

fn credential_input(url: &url::Url, value: &str) -> Value {
    json!({
        "servers": [url.as_str()],
        "ledger_name": "fleet",
        "server_credentials": [
            {"origin": origin_of(url), "header": "Authorization", "value": value}
        ],
    })
}

#[tokio::test]
async fn a_credential_reads_the_authenticated_view_apart_from_the_anonymous_one() {
    let token = "accepted-token-7f3a";
    let before = surface("py-private", "1.0.0", vec![tool("search", "Search things")]);
    let file = SurfaceFile::new(&before);
    let Some(peer) = auth_peer::start_python_accepting(&file, token) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let url = peer.url.as_str().to_string();
    let dir = RunDir::new();

    // Anonymous: the server demands auth.
    let anonymous = json!({"servers": [url], "ledger_name": "fleet"});
    let rows = run(&dir, &anonymous).await;
    let row = rows.server(&url);
    assert_eq!(row["reason_code"], "AUTH_REQUIRED", "{row}");
    assert_eq!(row["listing"], "anonymous");
    let anonymous_entry = dir.ledger("fleet")["servers"][&url].clone();
    assert_eq!(anonymous_entry["auth"]["auth_required"], true);

    // With the credential: the full surface, as a new baseline of its own view.
    let with_token = credential_input(&peer.url, &format!("Bearer {token}"));
    let rows = run(&dir, &with_token).await;
    let row = rows.server(&url);
    assert_eq!(row["ok"], true, "{row}");
    assert_eq!(row["reason_code"], "OK");
    assert_eq!(row["listing"], "authenticated");
    assert_eq!(row["ledger_status"], "created");
    assert_eq!(row["tools_total"], 1);
    assert_eq!(row["tools"][0]["name"], "search");
    assert!(row["anonymous_listing_allowed"].is_null(), "{row}");
    assert!(rows.changes.is_empty(), "{:?}", rows.changes);
    assert_eq!(server_checked(&rows), 1);
    assert_eq!(rows.summary["servers_allowing_anonymous_listing"], 0);
    let ledger = dir.ledger("fleet");
    let authenticated_key = format!("{url}#authenticated");
    assert_eq!(
        ledger["servers"][&url], anonymous_entry,
        "anonymous view touched"
    );
    assert_eq!(ledger["servers"][&authenticated_key]["tools_total"], 1);

    // The tools change behind the credential: the diff works on the authenticated view.
    let mut after = before.clone();
    after["tools"] = json!([
        tool("search", "Search things"),
        tool("export", "Export all")
    ]);
    file.write(&after);
    let rows = run(&dir, &with_token).await;
    let row = rows.server(&url);
    assert_eq!(row["ledger_status"], "compared", "{row}");
    assert_eq!(row["digest_changed"], true);
    let classes: Vec<String> = rows
        .changes_of(&url)
        .iter()
        .map(|c| c["change_class"].as_str().unwrap().to_string())
        .collect();
    assert!(classes.iter().any(|c| c == "tool_added"), "{classes:?}");
    assert!(
        !classes.iter().any(|c| c == "auth_requirement_changed"),
        "{classes:?}"
    );

    // A token the server refuses: AUTH_REJECTED, not charged, both entries kept.
    let before_reject = dir.ledger("fleet")["servers"].clone();
    let rows = run(&dir, &credential_input(&peer.url, "Bearer revoked")).await;
    let row = rows.server(&url);
    assert_eq!(row["reason_code"], "AUTH_REJECTED", "{row}");
    assert_eq!(row["listing"], "authenticated");
    assert_eq!(row["http_status"], 401);
    assert_eq!(row["ledger_status"], "unavailable");
    assert_eq!(server_checked(&rows), 0);
    assert_eq!(rows.summary["servers_unreachable"], 0);
    assert_eq!(dir.ledger("fleet")["servers"], before_reject);

    // The anonymous view is still read on its own, with no change reported.
    let rows = run(&dir, &anonymous).await;
    assert_eq!(rows.server(&url)["ledger_status"], "compared");
    assert!(rows.changes.is_empty(), "{:?}", rows.changes);
}

/// One request a recording server received.
#[derive(Debug, Clone)]
struct Seen {
    /// `a` or `b`: which of the two origins.
    server: &'static str,
    path: String,
    headers: HeaderMap,
}

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
}

/// The two recording origins: `a` (the one the credential names) and `b` (another port).
struct Origins {
    a: SocketAddr,
    recorder: Arc<Recorder>,
}

fn origins() -> &'static Origins {
    static ORIGINS: OnceLock<Origins> = OnceLock::new();
    ORIGINS.get_or_init(|| {
        let recorder = Arc::new(Recorder::default());
        let b = support::background::serve(recording_router("b", recorder.clone(), None));
        let a = support::background::serve(recording_router("a", recorder.clone(), Some(b)));
        Origins { a, recorder }
    })
}

fn recording_router(
    name: &'static str,
    recorder: Arc<Recorder>,
    other: Option<SocketAddr>,
) -> Router {
    let state = (name, recorder, other);
    Router::new()
        .route("/cross/mcp", post(cross_origin_redirect))
        .route("/same/mcp", post(same_origin_redirect))
        .route("/protected/mcp", post(protected))
        .route("/mcp", post(protected))
        .route(
            "/.well-known/oauth-protected-resource/protected/mcp",
            get(metadata),
        )
        .fallback(protected)
        .with_state(state)
}

type RecState = (&'static str, Arc<Recorder>, Option<SocketAddr>);

fn record(state: &RecState, request: &Request) {
    state.1.seen.lock().unwrap().push(Seen {
        server: state.0,
        path: request.uri().path().to_string(),
        headers: request.headers().clone(),
    });
}

async fn cross_origin_redirect(State(state): State<RecState>, request: Request) -> Response {
    record(&state, &request);
    let other = state.2.expect("origin a knows origin b");
    let location = format!("http://{other}/mcp");
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, location)],
    )
        .into_response()
}

async fn same_origin_redirect(State(state): State<RecState>, request: Request) -> Response {
    record(&state, &request);
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, "/protected/mcp")],
    )
        .into_response()
}

/// The `Host` header of a request, as sent.
fn host_of(request: &Request) -> String {
    request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// Refuses every request with the SDK-like challenge that names the metadata document.
async fn protected(State(state): State<RecState>, request: Request) -> Response {
    record(&state, &request);
    let host = host_of(&request);
    let challenge = format!(
        "Bearer error=\"invalid_token\", resource_metadata=\"http://{host}/.well-known/oauth-protected-resource/protected/mcp\""
    );
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
        axum::Json(json!({"error": "invalid_token"})),
    )
        .into_response()
}

async fn metadata(State(state): State<RecState>, request: Request) -> Response {
    record(&state, &request);
    let host = host_of(&request);
    axum::Json(json!({
        "resource": format!("http://{host}/protected/mcp"),
        "authorization_servers": ["https://as.example.test"],
        "scopes_supported": ["read"],
    }))
    .into_response()
}

/// Requests the recorders saw whose headers carry `secret` anywhere, as (server, path).
fn carriers(secret: &str) -> Vec<(&'static str, String)> {
    origins()
        .recorder
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|seen| {
            seen.headers
                .values()
                .any(|v| String::from_utf8_lossy(v.as_bytes()).contains(secret))
        })
        .map(|seen| (seen.server, seen.path.clone()))
        .collect()
}

fn requests_to(server: &str, path: &str) -> usize {
    origins()
        .recorder
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|seen| seen.server == server && seen.path == path)
        .count()
}

#[tokio::test]
async fn the_secret_goes_to_its_exact_origin_and_nowhere_else() {
    let origins = origins();
    let secret = "canary-origin-5d41402abc4b2a76";
    let a = format!("http://{}", origins.a);
    let dir = RunDir::new();
    let input = json!({
        "servers": [format!("{a}/cross/mcp"), format!("{a}/same/mcp")],
        "ledger_name": "fleet",
        "max_redirects": 3,
        "server_credentials": [
            {"origin": a, "header": "X-Api-Key", "value": secret}
        ],
    });
    let rows = run(&dir, &input).await;

    // Every request to origin a carried it, including the hop of a same-origin redirect.
    let carried = carriers(secret);
    assert!(
        carried.contains(&("a", "/cross/mcp".to_string())),
        "{carried:?}"
    );
    assert!(
        carried.contains(&("a", "/same/mcp".to_string())),
        "{carried:?}"
    );
    assert!(
        carried.contains(&("a", "/protected/mcp".to_string())),
        "{carried:?}"
    );
    // Origin b was reached by the cross-origin redirect, without the secret.
    assert!(
        requests_to("b", "/mcp") > 0,
        "the redirect to b was not followed"
    );
    assert!(
        carried.iter().all(|(server, _)| *server == "a"),
        "{carried:?}"
    );
    // The RFC 9728 document was fetched, on origin a itself, without the secret.
    let metadata_path = "/.well-known/oauth-protected-resource/protected/mcp";
    assert!(requests_to("a", metadata_path) > 0, "no metadata request");
    assert!(
        !carried
            .iter()
            .any(|(_, path)| path.starts_with("/.well-known/")),
        "{carried:?}"
    );

    // The refusal of the credential on its own origin is AUTH_REJECTED; the refusal origin b
    // gave the read without the credential is not a verdict on the credential.
    for server in &rows.servers {
        assert_eq!(server["listing"], "authenticated", "{server}");
    }
    let cross = rows.server(&format!("{a}/cross/mcp"));
    assert_eq!(cross["reason_code"], "CREDENTIAL_DROPPED", "{cross}");
    let same = rows.server(&format!("{a}/same/mcp"));
    assert_eq!(same["reason_code"], "AUTH_REJECTED", "{same}");
    assert_eq!(
        same["oauth_authorization_servers"],
        json!(["https://as.example.test"])
    );
    assert_canary_absent(dir.root(), secret, &[]);
}

/// A credentialed read that a redirect takes to another origin reads that origin anonymously:
/// nothing of it may be stored or labelled as the authenticated view.
#[tokio::test]
async fn a_read_redirected_to_another_origin_is_never_the_authenticated_view() {
    static PEER: OnceLock<Option<support::python::SharedPython>> = OnceLock::new();
    let Some(peer) = support::python::shared(&PEER, Default::default(), || {
        surface(
            "open",
            "1.0.0",
            vec![tool("open_tool", "Readable by anyone.")],
        )
    }) else {
        eprintln!("SKIP: the Python MCP peer is not installed (tests/peers/install.sh)");
        return;
    };
    let target = peer.process.url();
    let redirect = Router::new().fallback(move || {
        let location = target.to_string();
        async move {
            (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, location)],
            )
        }
    });
    let front = format!("http://{}/mcp", support::background::serve(redirect));
    let front_url = url::Url::parse(&front).unwrap();
    let secret = "canary-redirect-7c9e6679f4a1";
    let dir = RunDir::new();
    let rows = run(&dir, &credential_input(&front_url, secret)).await;

    let row = rows.server(&front);
    assert_eq!(row["reason_code"], "CREDENTIAL_DROPPED", "{row}");
    assert_eq!(row["listing"], "authenticated", "{row}");
    assert_eq!(row["ledger_status"], "unavailable", "{row}");
    assert_eq!(row["final_url"], peer.process.url().as_str(), "{row}");
    assert_eq!(
        server_checked(&rows),
        0,
        "a read without the credential is not charged"
    );
    if dir.ledger_bytes("fleet").is_some() {
        let ledger = dir.ledger("fleet");
        let servers = ledger["servers"].as_object().map_or(0, |e| e.len());
        assert_eq!(servers, 0, "no view was stored: {ledger}");
    }
    assert_canary_absent(dir.root(), secret, &[]);
}

#[test]
fn a_canary_secret_appears_in_nothing_the_run_wrote_or_printed() {
    let origins = origins();
    let secret = "canary-everywhere-9e107d9d372bb682";
    let a = format!("http://{}", origins.a);
    let dir = RunDir::new();
    let mut servers = vec![
        json!(format!("{a}/same/mcp")),
        json!(format!("{a}/cross/mcp")),
    ];
    // A readable authenticated view too, when the Python peer is installed, so that rows,
    // surfaces, the insight cache and the report all have an authenticated server in them.
    let token_file = SurfaceFile::new(&surface("py", "1", vec![tool("search", "Search")]));
    let peer = auth_peer::start_python_accepting(&token_file, secret);
    let mut credentials =
        vec![json!({"origin": a, "header": "Authorization", "value": format!("Bearer {secret}")})];
    match &peer {
        Some(peer) => {
            servers.push(json!(peer.url.as_str()));
            credentials.push(json!({
                "origin": origin_of(&peer.url),
                "value": format!("Bearer {secret}"),
            }));
        }
        None => support::skip(
            "python auth peer (readable authenticated view)",
            "tests/peers/install.sh has not run",
        ),
    }
    let input = json!({
        "servers": servers,
        "ledger_name": "fleet",
        "server_credentials": credentials,
    });
    let input_path = dir.input_file(&input);
    let output = dir
        .command(&input, &["--allow-private-targets"])
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    if let Some(peer) = &peer {
        let rows = Rows::of(&dir);
        let row = rows.server(peer.url.as_str());
        assert_eq!(row["ok"], true, "{row}");
        assert_eq!(row["listing"], "authenticated");
    }
    for stream in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(!text.contains(secret), "the secret was printed:\n{text}");
    }
    assert!(
        !String::from_utf8_lossy(&output.stderr).is_empty(),
        "trace logging printed nothing: the check above would prove nothing"
    );
    assert_canary_absent(dir.root(), secret, &[input_path.as_path()]);
}

/// Fails if any file under `root` (but `except`) contains `secret`; also checks that the run
/// did write the files the check is about.
fn assert_canary_absent(root: &Path, secret: &str, except: &[&Path]) {
    let mut files = Vec::new();
    collect_files(root, &mut files);
    files.retain(|f| !except.contains(&f.as_path()));
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect();
    for expected in ["OUTPUT.json", "REPORT.html", "fleet.json"] {
        assert!(
            names.iter().any(|n| n.ends_with(expected)),
            "the run did not write {expected}: {names:?}"
        );
    }
    for (file, name) in files.iter().zip(&names) {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(secret), "the secret is in {name}");
    }
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}
