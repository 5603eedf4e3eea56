//! Every value a change refers to stays readable, and every past surface can be rebuilt
//! (issue 36): real runs over the tool surfaces of ten github-mcp-server releases
//! (`../shared/fixtures/github-mcp-server/`, served by a hand-written modern server), then
//!
//! - every remembered change has its before and after whole, equal to what the change engine
//!   finds between the two releases, with the run datasets gone;
//! - the surface at every run time is rebuilt byte-identically (canonical JSON) through the
//!   ledger server's API and the `history` command, and two times diff like `diff`;
//! - the sweep keeps every pack a ledger names and removes one nothing names;
//! - a value altered in the store is refused, not served.
//!
//! And against the recording fake platform API: a run with 500 changes writes its values in
//! one record, not one per change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod platform_fake;
mod support;
#[path = "support/switchable.rs"]
mod switchable;

use std::collections::HashMap;
use std::path::PathBuf;

use actor::RunDir;
use axum::http::Method;
use chrono::{DateTime, Duration, Utc};
use mcp_surface_ledger::changes;
use mcp_surface_ledger::ledger::{self, Ledger, PackReader, is_value_pack};
use mcp_surface_ledger::platform::{
    ApiClient, ApifyStorage, Charging, LocalStorage, PlatformEnv, Record, Storage, Store,
};
use mcp_surface_ledger::run::RunOptions;
use mcp_surface_ledger::serve;
use mcp_surface_ledger::serve::backend::Backend;
use mcp_surface_ledger::serve::hosts::HostPolicy;
use mcp_surface_ledger::serve::store::LedgerReader;
use mcp_surface_ledger::surface::{ServerIdentity, Surface, canon};
use mcp_surface_ledger::sweep;
use serde_json::{Value, json};
use support::surface::surface;
use switchable::Switchable;

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const LEDGER: &str = "releases";

fn fixture_dir() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIP: {} not present", dir.display());
        None
    }
}

/// The releases, oldest first, with their tools as served.
fn releases(dir: &std::path::Path) -> Vec<(String, Vec<Value>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    let version = |name: &str| -> Vec<u32> {
        name.trim_start_matches('v')
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect()
    };
    names.sort_by_key(|name| version(name));
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
            let result: Value = serde_json::from_str(&text).unwrap();
            (name, result["tools"].as_array().unwrap().clone())
        })
        .collect()
}

fn canonical(value: &Value) -> String {
    canon::canonical_string(value).unwrap()
}

/// One run's facts: when, the identity served, the tools served.
struct Served {
    at: DateTime<Utc>,
    identity: ServerIdentity,
    tools: Vec<Value>,
}

async fn index(storage: &LocalStorage) -> Ledger {
    Ledger::load(storage, LEDGER).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_keeps_its_values_and_every_past_surface_is_rebuilt() {
    let Some(dir) = fixture_dir() else { return };
    let releases = releases(&dir);
    assert!(releases.len() >= 4, "{} releases", releases.len());
    let server = Switchable::start(surface("github-mcp-server", &releases[0].0, Vec::new()));
    let url = server.url.to_string();
    let run_dir = RunDir::new();
    let input = json!({"servers": [url], "ledger_name": LEDGER});
    let storage = LocalStorage::open_existing(run_dir.root());
    let mut served = Vec::new();
    for (version, tools) in &releases {
        server.set_surface(surface("github-mcp-server", version, tools.clone()));
        run_dir.run_ok(&input, None).await;
        let ledger = index(&storage).await;
        let entry = ledger.entry(&url).unwrap();
        served.push(Served {
            at: entry.last_seen,
            identity: entry.identity.clone(),
            tools: tools.clone(),
        });
    }
    // The runs' datasets are gone: nothing below reads a row.
    std::fs::remove_dir_all(run_dir.root().join("datasets")).unwrap();

    let ledger = index(&storage).await;
    let entry = ledger.entry(&url).unwrap().clone();
    assert_eq!(
        entry.steps.len(),
        releases.len() - 1,
        "one step per new surface"
    );

    // Every change's values, whole, are the ones the engine finds between the releases
    // (the older ones read from the archived pages the index moved them to).
    let mut packs = PackReader::default();
    let kept_history = ledger::full_history(&storage, &entry, &mut packs)
        .await
        .unwrap();
    let mut large = 0;
    for pair in served.windows(2) {
        let surface_of =
            |s: &Served| Surface::from_tools(s.identity.clone(), s.tools.clone()).unwrap();
        let expected = changes::between(&surface_of(&pair[0]), &surface_of(&pair[1])).changes;
        let kept: Vec<_> = kept_history
            .iter()
            .filter(|item| item.observed_at == pair[1].at)
            .collect();
        assert_eq!(
            kept.len(),
            expected.len(),
            "changes of the run at {}",
            pair[1].at
        );
        for (item, change) in kept.iter().zip(&expected) {
            assert_eq!(item.change_class, change.change_class);
            assert_eq!(item.tool_name, change.tool_name);
            let values = item.values.clone().unwrap_or(ledger::ChangeValues {
                old: None,
                new: None,
            });
            for (side, value) in [
                (&values.old, &change.old_value),
                (&values.new, &change.new_value),
            ] {
                let whole = match side {
                    Some(kept) => {
                        if matches!(kept, ledger::KeptValue::Digest { .. }) {
                            large += 1;
                        }
                        ledger::resolve(&storage, &mut packs, kept).await.unwrap()
                    }
                    None => None,
                };
                assert_eq!(
                    whole.as_ref().map(canonical),
                    value.as_ref().map(canonical),
                    "{:?} {:?} {}",
                    item.change_class,
                    item.tool_name,
                    item.field
                );
            }
        }
    }
    assert!(large > 10, "values over 512 bytes kept in packs: {large}");

    // The surface at every run time, through the API the ledger server answers with.
    let reader = LedgerReader::new(LocalStorage::open_existing(run_dir.root()));
    for (i, run) in served.iter().enumerate() {
        for at in [run.at, run.at + Duration::milliseconds(1)] {
            let view = reader.surface(LEDGER, &url, Some(at)).await.unwrap();
            assert_eq!(
                canonical(&Value::Array(view.tools.clone())),
                canonical(&Value::Array(run.tools.clone())),
                "tools at run {i}"
            );
            assert_eq!(view.identity, serde_json::to_value(&run.identity).unwrap());
        }
    }
    let before = served[0].at - Duration::seconds(1);
    let error = reader
        .surface(LEDGER, &url, Some(before))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "surface_not_kept", "{error}");

    // The API, the server page and the feed show every value whole, none as a digest.
    let api = reader.changes(LEDGER, &url, None).await.unwrap();
    assert_eq!(api.changes.len(), kept_history.len());
    let mut long_texts = Vec::new();
    for change in &api.changes {
        for side in change
            .values
            .iter()
            .flat_map(|v| [&v.old, &v.new])
            .flatten()
        {
            match side {
                ledger::KeptValue::Whole { json } => {
                    if json.len() > 600 {
                        long_texts.push(json.clone());
                    }
                }
                other => panic!("a value not whole in the API: {other:?}"),
            }
        }
    }
    assert!(!long_texts.is_empty());
    let storage_for_pages = LocalStorage::open_existing(run_dir.root());
    let addr = support::background::serve(serve::app(
        Backend::Local(storage_for_pages),
        HostPolicy::local(),
    ));
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("ledger", LEDGER)
        .append_pair("url", &url)
        .finish();
    let page = http
        .get(format!("http://{addr}/server?{query}"))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !page.contains("not kept in the ledger"),
        "a value shown as a digest"
    );
    let changes_page = http
        .get(format!("http://{addr}/changes?ledger={LEDGER}"))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(changes_page.contains("<div id=\"changes\">"));
    assert!(
        !changes_page.contains("not kept in the ledger"),
        "a value shown as a digest"
    );
    let feed = http
        .get(format!("http://{addr}/changes.atom?ledger={LEDGER}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(feed.contains("<content type=\"html\">"), "{}", &feed[..500]);
    assert!(!feed.contains("not readable from the store"));
    // A long value's distinctive text (a tool's description) appears whole on the page.
    let description = long_texts
        .iter()
        .filter_map(|json| serde_json::from_str::<Value>(json).ok())
        .find_map(|value| value["description"].as_str().map(str::to_string))
        .expect("a whole tool definition among the long values");
    let escaped = mcp_surface_ledger::report::html::escape(&description);
    assert!(
        page.contains(&escaped),
        "the page shows {description:?} whole"
    );

    // The same through the command line: one time prints the surface, two diff.
    let history = |args: &[&str]| {
        let output = std::process::Command::new(BINARY)
            .args(["history", "--storage-dir"])
            .arg(run_dir.root())
            .args(["--ledger", LEDGER, "--server", &url])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let first = served[0].at.to_rfc3339();
    let shown = history(&["--at", &first]);
    assert_eq!(
        canonical(&shown["tools"]),
        canonical(&Value::Array(served[0].tools.clone()))
    );
    let second = served[1].at.to_rfc3339();
    let diffed = history(&["--at", &first, "--at", &second]);
    let rows = diffed["changes"].as_array().or(diffed.as_array()).cloned();
    let expected = kept_history
        .iter()
        .filter(|item| item.observed_at == served[1].at)
        .count();
    let rows = rows.unwrap_or_else(|| panic!("{diffed}"));
    assert_eq!(rows.len(), expected, "{diffed}");
    let listed = history(&[]);
    assert_eq!(listed["changes_total"], json!(kept_history.len()));
    let listed_changes = listed["changes"].as_array().unwrap();
    assert!(
        listed_changes
            .iter()
            .filter(|c| c["change_class"] == "tool_removed")
            .all(|c| c["old_value"].is_object()),
        "removed tools are listed whole"
    );

    // The sweep keeps every pack the ledger names and removes one nothing names.
    let named = ledger.value_packs();
    assert!(!named.is_empty());
    let orphan = ledger::values::Pack {
        format: ledger::values::VALUES_FORMAT,
        values: [(
            mcp_surface_ledger::surface::digest::sha256_hex(b"\"orphan\""),
            "\"orphan\"".to_string(),
        )]
        .into(),
    };
    let (orphan_key, orphan_record) = orphan.record();
    storage
        .put_record(Store::Ledger, &orphan_key, orphan_record)
        .await
        .unwrap();
    let now = Utc::now();
    sweep::sweep(&storage, now).await.unwrap();
    sweep::sweep(&storage, now + sweep::GRACE_PERIOD)
        .await
        .unwrap();
    let keys = storage.list_keys(Store::Ledger).await.unwrap();
    let packs_left: std::collections::BTreeSet<String> =
        keys.into_iter().filter(|k| is_value_pack(k)).collect();
    assert_eq!(packs_left, named, "named packs kept, the orphan removed");
    for run in &served {
        reader.surface(LEDGER, &url, Some(run.at)).await.unwrap();
    }

    // `verify` reads every kept value and rebuilds every earlier surface.
    let verify = || {
        std::process::Command::new(BINARY)
            .args(["verify", "--storage-dir"])
            .arg(run_dir.root())
            .args(["--ledger", LEDGER])
            .output()
            .unwrap()
    };
    let output = verify();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );

    // A value altered in its pack is refused: the rebuilt surface is not served.
    let step = entry.steps.first().unwrap();
    let undo = step.undo.as_ref().unwrap();
    let pack_key = undo.pack.as_ref().unwrap();
    let record = storage
        .get_record(Store::Ledger, pack_key)
        .await
        .unwrap()
        .unwrap();
    let mut pack = ledger::values::Pack::from_bytes(pack_key, &record.bytes).unwrap();
    let victim = pack
        .values
        .keys()
        .find(|sha| **sha != undo.sha256)
        .unwrap()
        .clone();
    pack.values.insert(victim, "{\"name\":\"planted\"}".into());
    let json = serde_json::to_vec(&pack).unwrap();
    storage
        .put_record(Store::Ledger, pack_key, Record::json(json))
        .await
        .unwrap();
    let fresh = LedgerReader::new(LocalStorage::open_existing(run_dir.root()));
    let error = fresh
        .surface(LEDGER, &url, Some(served[0].at))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "ledger_unreadable", "{error}");
    assert!(error.to_string().contains("altered or planted"), "{error}");
    let output = verify();
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{verdict}");
    assert_eq!(verdict["status"], "broken", "{verdict}");
    assert!(
        verdict.to_string().contains("altered or planted"),
        "{verdict}"
    );
}

/// `count` tools whose descriptions (over 512 bytes each) say `release`.
fn long_tools(count: usize, release: &str) -> Vec<Value> {
    (0..count)
        .map(|i| {
            json!({
                "name": format!("tool_{i:03}"),
                "description": format!("{release} {i}: {}", "Reads the thing it is given. ".repeat(20)),
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_500_changes_writes_its_values_in_one_record() {
    let fake = platform_fake::FakeApify::start().await;
    let server = Switchable::start(surface("wide", "1", long_tools(500, "one")));
    let input = json!({
        "servers": [server.url.to_string()],
        "ledger_name": LEDGER,
        "alert_on": ["tool_description_changed"],
    });
    let vars: HashMap<String, String> = fake.env_vars().into_iter().collect();
    let env = PlatformEnv::from_vars(|name| vars.get(name).cloned()).unwrap();
    let run = || async {
        let storage = ApifyStorage::connect(&env).await.unwrap();
        let api = ApiClient::new(&env).unwrap();
        let charging = Charging::init(&env, &api).await.unwrap();
        let options = RunOptions {
            input_key: "INPUT".to_string(),
            input_override: Some(serde_json::to_vec(&input).unwrap()),
            allow_private_targets: true,
            ..RunOptions::default()
        };
        mcp_surface_ledger::actor::watch(&storage, &charging, options)
            .await
            .unwrap()
    };
    run().await;
    let before = fake.state().requests.len();
    server.set_surface(surface("wide", "1", long_tools(500, "two")));
    let outcome = run().await;
    assert_eq!(
        outcome.summary.changes_total,
        500,
        "{}",
        serde_json::to_string(&outcome.summary).unwrap()
    );
    let requests: Vec<_> = fake.state().requests[before..].to_vec();
    let writes: Vec<&str> = requests
        .iter()
        .filter(|r| r.method == Method::PUT && r.path.contains("/records/"))
        .map(|r| r.path.as_str())
        .collect();
    let packs = writes
        .iter()
        .filter(|p| p.contains("surface-values-"))
        .count();
    assert_eq!(packs, 1, "one value pack for 1000 values: {writes:?}");
    assert!(writes.len() <= 10, "record writes of the run: {writes:?}");
    assert!(
        requests.len() <= 40,
        "API calls of a run with 500 changes: {}",
        requests.len()
    );
    println!(
        "a run with 500 changes: {} API calls, {} record writes",
        requests.len(),
        writes.len()
    );
    // The pack holds every value whole: 500 old and 500 new descriptions, the 500 tool
    // definitions replaced, and the record that undoes the run's change.
    let state = fake.state();
    let store = state.named_stores["mcp-tool-surface-ledger"].clone();
    let (key, bytes) = state
        .records
        .iter()
        .find(|((s, k), _)| *s == store && is_value_pack(k))
        .map(|((_, k), (bytes, ..))| (k.clone(), bytes.clone()))
        .unwrap();
    let pack = ledger::values::Pack::from_bytes(&key, &bytes).unwrap();
    assert_eq!(pack.values.len(), 1501);
}
