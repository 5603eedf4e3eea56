//! The web server's OpenAPI description (`.actor/web_server_schema.json`, the Actor's
//! `webServerSchema`, shown by the platform as the Standby tab) against the server itself:
//!
//! - `.actor/actor.json` points to it, and its JSON shapes are the ones the server's types
//!   generate (`serve::schema::web_server_components`); run with
//!   `WEB_SERVER_SCHEMA_WRITE=1` to rewrite the generated components after changing a type;
//! - its paths are exactly the routes the server answers (`serve::routes`, the table the
//!   router is built from);
//! - a running server answers every described operation with its parameters (values from
//!   [`PARAMETER_VALUES`], else the parameter's `example`) and request body example: status
//!   200, a described content type, a JSON body valid against the described schema; other
//!   methods at each path are refused with 405;
//! - an OpenAPI validator from npm (`tests/apify_schemas/validate_openapi.mjs`) accepts it
//!   (skipped with a note when `node` or `npm ci` in tests/apify_schemas is missing).
//!
//! A new route: add it to `serve::api::ROUTES` and to the file (its parameters with an
//! `example`, or a value in [`PARAMETER_VALUES`] when only the fixture knows a good one).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use actor::RunDir;
use mcp_surface_ledger::platform::LocalStorage;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use mcp_surface_ledger::serve::{self, schema};
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

/// The components written by hand (no Rust type answers with exactly them).
const HAND_WRITTEN: [&str; 4] = ["Error", "Index", "JsonRpcMessage", "Ledgers"];

/// Values of parameters only the fixture knows (its ledger and server); `{server}` is the
/// fixture server's URL, replaced before use. Every other parameter uses its `example`.
const PARAMETER_VALUES: [(&str, &str); 5] = [
    ("name", "DEFAULT"),
    ("ledger", "DEFAULT"),
    ("server", "{server}"),
    ("url", "{server}"),
    ("since", "2000-01-01T00:00:00Z"),
];

/// The methods probed at every path: the undescribed ones must be refused.
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".actor/web_server_schema.json")
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn document() -> Value {
    read_json(&schema_path())
}

/// Every operation of the document: (method upper case, path, operation).
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            if ["get", "post", "put", "patch", "delete", "head", "options"]
                .contains(&method.as_str())
            {
                found.push((method.to_uppercase(), path.clone(), operation.clone()));
            }
        }
    }
    found
}

#[test]
fn the_actor_declares_the_schema_and_its_shapes_are_the_served_types() {
    let actor = read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".actor/actor.json"));
    assert_eq!(actor["usesStandbyMode"], true);
    assert_eq!(actor["webServerSchema"], "./web_server_schema.json");
    assert_eq!(actor["webServerMcpPath"], serve::MCP_PATH);

    let mut document = document();
    assert_eq!(
        document["info"]["version"], actor["version"],
        "the Actor's version"
    );
    assert!(
        document["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1.")),
        "OpenAPI 3.1: its schemas are JSON Schema 2020-12, as the MCP tools' are"
    );
    let generated = schema::web_server_components();
    if std::env::var_os("WEB_SERVER_SCHEMA_WRITE").is_some() {
        let components = document["components"]["schemas"]
            .as_object_mut()
            .expect("components.schemas");
        components.retain(|name, _| HAND_WRITTEN.contains(&name.as_str()));
        components.extend(generated.clone());
        let sorted: BTreeMap<String, Value> = std::mem::take(components).into_iter().collect();
        components.extend(sorted);
        let text = serde_json::to_string_pretty(&document).unwrap() + "\n";
        std::fs::write(schema_path(), text).unwrap();
    }
    let committed = document["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    for (name, schema) in &generated {
        assert_eq!(
            committed.get(name),
            Some(schema),
            "component {name} differs from what the type generates; run this test with \
             WEB_SERVER_SCHEMA_WRITE=1 to rewrite it:\n{}",
            serde_json::to_string_pretty(schema).unwrap()
        );
    }
    for name in committed.keys() {
        assert!(
            generated.contains_key(name) || HAND_WRITTEN.contains(&name.as_str()),
            "component {name} is neither generated nor listed as hand-written"
        );
    }
    assert_eq!(
        schema::nonstandard_formats(&document),
        Vec::<(String, String)>::new(),
        "only formats JSON Schema defines"
    );
}

#[test]
fn the_schema_describes_exactly_the_routes_the_server_answers() {
    let described: BTreeSet<(String, String)> = operations(&document())
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    let answered: BTreeSet<(String, String)> = serve::routes()
        .into_iter()
        .map(|route| (route.method.to_string(), route.path.to_string()))
        .collect();
    assert_eq!(
        described.difference(&answered).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "described in .actor/web_server_schema.json but not a route of the server"
    );
    assert_eq!(
        answered.difference(&described).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "a route of the server (serve::routes) missing from .actor/web_server_schema.json"
    );
}

/// A ledger whose one server changed once, and `serve` reading it.
struct Fixture {
    _dir: RunDir,
    _peer: RmcpPeer,
    server_url: String,
    base: String,
}

async fn fixture() -> Fixture {
    let before = vec![
        tool("read_file", "Reads a file"),
        tool("old_tool", "Goes away"),
    ];
    let after = vec![
        tool("read_file", "Reads a file"),
        tool("delete_all_files", "Deletes every file on the disk"),
    ];
    let peer = RmcpPeer::start(surface("demo", "1.0.0", before), RmcpMode::default());
    let server_url = peer.url.to_string();
    let dir = RunDir::new();
    let input = json!({"servers": [server_url]});
    dir.run_ok(&input, None).await;
    peer.set_surface(surface("demo", "1.1.0", after));
    dir.run_ok(&input, None).await;
    let storage = LocalStorage::open_existing(dir.root());
    let app = serve::app(Backend::Local(storage), HostPolicy::local());
    let addr = support::background::serve(app);
    Fixture {
        _dir: dir,
        _peer: peer,
        server_url,
        base: format!("http://{addr}"),
    }
}

/// A validator of `schema` (a schema of the document), its `$ref`s resolved in `document`.
fn validator(document: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = match schema {
        Value::Object(object) => object.clone(),
        other => panic!("a schema object, not {other}"),
    };
    root.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("components".into(), document["components"].clone());
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&Value::Object(root))
        .unwrap_or_else(|e| panic!("schema {schema}: {e}"))
}

fn assert_valid(document: &Value, schema: &Value, instance: &Value, what: &str) {
    let validator = validator(document, schema);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{instance:#}");
}

/// The value a parameter is given: the fixture's, else the parameter's example.
fn parameter_value(parameter: &Value, fx: &Fixture) -> String {
    let name = parameter["name"].as_str().expect("a parameter name");
    if let Some((_, value)) = PARAMETER_VALUES.iter().find(|(key, _)| *key == name) {
        return value.replace("{server}", &fx.server_url);
    }
    match &parameter["example"] {
        Value::String(text) => text.clone(),
        Value::Null => panic!(
            "parameter {name} has no example: give it one in .actor/web_server_schema.json \
             or a value in PARAMETER_VALUES"
        ),
        other => other.to_string(),
    }
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A described response, its `$ref` (to `components.responses`) followed.
fn response<'a>(document: &'a Value, operation: &'a Value, status: u16) -> &'a Value {
    let described = &operation["responses"][status.to_string()];
    match described["$ref"].as_str() {
        Some(reference) => {
            let name = reference
                .strip_prefix("#/components/responses/")
                .unwrap_or_else(|| panic!("unexpected $ref {reference}"));
            &document["components"]["responses"][name]
        }
        None => described,
    }
}

/// Sends the described operation with its parameters (`overrides` first, then the fixture's
/// values and the examples) and checks the answer against the response described for
/// `status`: that status, a described content type, a JSON body valid against its schema.
async fn ask(
    client: &reqwest::Client,
    document: &Value,
    fx: &Fixture,
    (method, path, operation): &(String, String, Value),
    overrides: &[(&str, &str)],
    status: u16,
) {
    let what = format!("{method} {path} (expecting {status})");
    let mut target = path.clone();
    let mut query = Vec::new();
    let mut headers = Vec::new();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        if parameter["in"] == "header" && parameter["required"] != true {
            continue;
        }
        let name = parameter["name"].as_str().expect("a parameter name");
        let value = match overrides.iter().find(|(key, _)| *key == name) {
            Some((_, value)) => value.to_string(),
            None => parameter_value(parameter, fx),
        };
        assert_valid(
            document,
            &parameter["schema"],
            &match parameter["schema"]["type"].as_str() {
                Some("integer") => json!(value.parse::<i64>().unwrap()),
                _ => json!(value),
            },
            &format!("{what}: parameter {name}"),
        );
        match parameter["in"].as_str() {
            Some("path") => target = target.replace(&format!("{{{name}}}"), &encode(&value)),
            Some("query") => query.push(format!("{}={}", encode(name), encode(&value))),
            Some("header") => headers.push((name.to_string(), value)),
            other => panic!("{what}: parameter {name} in {other:?}"),
        }
    }
    assert!(
        !target.contains('{'),
        "{what}: a path parameter is not described"
    );
    let content = response(document, operation, status)["content"]
        .as_object()
        .unwrap_or_else(|| panic!("{what}: no content described"));
    let mut url = format!("{}{target}", fx.base);
    if !query.is_empty() {
        url = format!("{url}?{}", query.join("&"));
    }
    let mut request = client.request(method.parse().unwrap(), &url);
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("accept"))
    {
        let first = content.keys().next().expect("a content type");
        request = request.header("accept", first);
    }
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    if let Some(body) = operation["requestBody"]["content"]["application/json"].as_object() {
        let example = body.get("example").expect("a request body example");
        assert_valid(
            document,
            &body["schema"],
            example,
            &format!("{what}: request"),
        );
        request = request
            .header("content-type", "application/json")
            .body(example.to_string());
    }
    let answer = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let answered = answer.status().as_u16();
    let media = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_string();
    let body = answer.text().await.unwrap();
    assert_eq!(answered, status, "{what} ({url}): {body}");
    let described = content
        .get(&media)
        .unwrap_or_else(|| panic!("{what}: answered {media:?}, described {content:?}"));
    if media == "application/json" {
        let answer: Value = serde_json::from_str(&body).expect("a JSON body");
        assert_valid(document, &described["schema"], &answer, &what);
        if status == 200 && answer.get("jsonrpc").is_some() {
            assert!(answer.get("result").is_some(), "{what}: {answer}");
        }
    }
}

#[tokio::test]
async fn every_described_operation_is_answered_as_described() {
    let document = document();
    let fx = fixture().await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let operations = operations(&document);
    assert!(!operations.is_empty());
    for operation in &operations {
        ask(&client, &document, &fx, operation, &[], 200).await;
        // An unknown ledger is answered with the described 404.
        let unknown = [("name", "no-such-ledger"), ("ledger", "no-such-ledger")];
        let names_a_ledger = operation.2["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| unknown.iter().any(|(name, _)| p["name"] == *name));
        if names_a_ledger && !operation.2["responses"]["404"].is_null() {
            ask(&client, &document, &fx, operation, &unknown, 404).await;
        }
    }

    // At every described path, the methods it does not describe are refused.
    let paths: BTreeSet<&String> = operations.iter().map(|(_, path, _)| path).collect();
    for path in paths {
        let concrete = path
            .replace("{name}", "DEFAULT")
            .replace("{server}", &encode(&fx.server_url));
        for method in METHODS {
            if operations.iter().any(|(m, p, _)| m == method && p == path) {
                continue;
            }
            let response = client
                .request(method.parse().unwrap(), format!("{}{concrete}", fx.base))
                .send()
                .await
                .unwrap();
            assert_eq!(
                response.status().as_u16(),
                405,
                "{method} {path} is answered but not described"
            );
        }
    }
}

/// Why the npm validator cannot run here, if it cannot.
fn validator_missing(dir: &Path) -> Option<&'static str> {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|out| out.status.success()) {
        return Some("node is not installed");
    }
    if !dir
        .join("node_modules/@seriousme/openapi-schema-validator")
        .is_dir()
    {
        return Some("run `npm ci` in tests/apify_schemas (.ci/run does)");
    }
    None
}

#[test]
fn an_openapi_validator_accepts_the_schema() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apify_schemas");
    if let Some(why) = validator_missing(&dir) {
        return support::skip("OpenAPI validation of .actor/web_server_schema.json", why);
    }
    let check = |path: &Path| {
        Command::new("node")
            .arg(dir.join("validate_openapi.mjs"))
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .expect("run node")
    };
    let output = check(&schema_path());
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    // The check is live: a dangling $ref and a non-standard format are refused.
    let scratch = tempfile::tempdir().unwrap();
    let mut broken = document();
    broken["paths"]["/ledgers"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] =
        json!({"$ref": "#/components/schemas/Nowhere"});
    let mut odd_format = document();
    odd_format["components"]["schemas"]["Ledgers"]["properties"]["ledgers_total"]["format"] =
        json!("uint");
    for (name, bad) in [("dangling-ref", broken), ("uint-format", odd_format)] {
        let path = scratch.path().join(format!("{name}.json"));
        std::fs::write(&path, bad.to_string()).unwrap();
        assert!(!check(&path).status.success(), "{name} was accepted");
    }
}
