//! Whole-Actor-run helpers: a storage folder per scenario, running the Actor through the
//! library entry or the binary, reading back the dataset rows and the ledger record, and the
//! row values a test expects for a served tool list.
//!
//! Include with `#[path = "support/actor.rs"] mod actor;` next to `mod support;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mcp_surface_ledger::mcp::Era;
use mcp_surface_ledger::platform::{ApiClient, Charging, LocalStorage, PlatformEnv};
use mcp_surface_ledger::risk;
use mcp_surface_ledger::run::{RunError, RunOptions, RunOutcome};
use mcp_surface_ledger::surface::{ServerIdentity, Surface, hash_value};
use serde_json::{Map, Value, json};

/// The path of the built binary.
pub const BINARY: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

/// One local storage folder that several runs share (the ledger outlives each run).
pub struct RunDir {
    dir: tempfile::TempDir,
}

impl Default for RunDir {
    fn default() -> Self {
        Self::new()
    }
}

impl RunDir {
    /// A fresh, empty storage folder.
    pub fn new() -> Self {
        RunDir {
            dir: tempfile::tempdir().expect("temp storage dir"),
        }
    }

    /// The storage root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the Actor through the library entry with loopback targets allowed.
    pub async fn run(&self, input: &Value, force_era: Option<Era>) -> Result<RunOutcome, RunError> {
        self.run_with_env(input, force_era, &[]).await
    }

    /// Runs the Actor through the library entry with charging set up from `vars` (the
    /// platform environment variables of a local run, e.g. a pricing and a maximum charge).
    pub async fn run_with_env(
        &self,
        input: &Value,
        force_era: Option<Era>,
        vars: &[(&str, &str)],
    ) -> Result<RunOutcome, RunError> {
        let options = RunOptions {
            force_era,
            ..RunOptions::default()
        };
        self.run_with_options(input, options, vars).await
    }

    /// Runs the Actor through the library entry with `options` (INPUT, loopback targets and
    /// the input secrets set here) and charging set up from `vars`.
    pub async fn run_with_options(
        &self,
        input: &Value,
        options: RunOptions,
        vars: &[(&str, &str)],
    ) -> Result<RunOutcome, RunError> {
        let storage = LocalStorage::open(self.root()).expect("open local storage");
        let env = PlatformEnv::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
        .expect("a valid local environment");
        let api = ApiClient::new(&env).expect("API client");
        let charging = Charging::init(&env, &api).await.expect("charging");
        let options = RunOptions {
            input_key: "INPUT".to_string(),
            input_override: Some(serde_json::to_vec(input).unwrap()),
            allow_private_targets: true,
            input_secrets: env.input_secrets.clone(),
            ..options
        };
        mcp_surface_ledger::actor::watch(&storage, &charging, options).await
    }

    /// Runs the Actor and panics unless it finished.
    pub async fn run_ok(&self, input: &Value, force_era: Option<Era>) -> RunOutcome {
        match self.run(input, force_era).await {
            Ok(outcome) => outcome,
            Err(error) => panic!("the run failed: {error}"),
        }
    }

    /// Writes `input` to a file in the storage folder and returns its path.
    pub fn input_file(&self, input: &Value) -> PathBuf {
        let path = self.root().join("input-override.json");
        std::fs::write(&path, serde_json::to_vec_pretty(input).unwrap()).unwrap();
        path
    }

    /// The binary invocation for this folder: `--storage-dir` and `--input`, plus `extra`.
    pub fn command(&self, input: &Value, extra: &[&str]) -> Command {
        let mut command = Command::new(BINARY);
        command
            .arg("--storage-dir")
            .arg(self.root())
            .arg("--input")
            .arg(self.input_file(input))
            .args(extra)
            .env_remove("APIFY_IS_AT_HOME")
            .env_remove("APIFY_TOKEN")
            .env_remove("LEDGER_ALLOW_PRIVATE_TARGETS")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null());
        command
    }

    /// Runs the binary to the end with loopback targets allowed.
    pub fn run_binary(&self, input: &Value, extra: &[&str]) -> Output {
        let mut args = vec!["--allow-private-targets"];
        args.extend_from_slice(extra);
        self.command(input, &args).output().expect("run the binary")
    }

    /// Every dataset item, in push order.
    pub fn rows(&self) -> Vec<Value> {
        let dir = self.root().join("datasets/default");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| entries.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        names.retain(|p| p.extension().is_some_and(|e| e == "json"));
        names.sort();
        names
            .iter()
            .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
            .collect()
    }

    /// The path of a record in the ledger store.
    pub fn ledger_path(&self, key: &str) -> PathBuf {
        self.root()
            .join("key_value_stores/mcp-tool-surface-ledger")
            .join(format!("{key}.json"))
    }

    /// The raw bytes of a ledger record, if it exists.
    pub fn ledger_bytes(&self, key: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ledger_path(key)).ok()
    }

    /// The parsed ledger record.
    pub fn ledger(&self, key: &str) -> Value {
        let bytes = self
            .ledger_bytes(key)
            .unwrap_or_else(|| panic!("no ledger record {key}"));
        serde_json::from_slice(&bytes).unwrap()
    }

    /// A stored surface record (`surface-…`, gzip-compressed JSON or, format 1, plain JSON),
    /// decoded as the ledger reads it.
    pub fn surface_record(&self, key: &str) -> Value {
        let dir = self.root().join("key_value_stores/mcp-tool-surface-ledger");
        let bytes = std::fs::read(dir.join(format!("{key}.bin")))
            .or_else(|_| std::fs::read(dir.join(format!("{key}.json"))))
            .unwrap_or_else(|_| panic!("no surface record {key}"));
        let stored = mcp_surface_ledger::ledger::StoredSurface::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("surface record {key}: {e}"));
        serde_json::to_value(stored).unwrap()
    }

    /// The `OUTPUT` record of the last run.
    pub fn output(&self) -> Value {
        let path = self.root().join("key_value_stores/default/OUTPUT.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }
}

/// The rows of one run, split by `record_type`.
pub struct Rows {
    /// Server rows, in input order.
    pub servers: Vec<Value>,
    /// Change rows, in dataset order.
    pub changes: Vec<Value>,
    /// The summary row.
    pub summary: Value,
}

impl Rows {
    /// Splits the dataset of `dir`, checking that the summary comes last and only once.
    pub fn of(dir: &RunDir) -> Rows {
        let rows = dir.rows();
        let (last, rest) = rows.split_last().expect("at least the summary row");
        assert_eq!(
            last["record_type"], "summary",
            "the summary is the last row"
        );
        let mut servers = Vec::new();
        let mut changes = Vec::new();
        for row in rest {
            match row["record_type"].as_str() {
                Some("server") => servers.push(row.clone()),
                Some("change") => changes.push(row.clone()),
                other => panic!("unexpected record_type {other:?} in {row}"),
            }
        }
        Rows {
            servers,
            changes,
            summary: last.clone(),
        }
    }

    /// The server row of `url`.
    pub fn server(&self, url: &str) -> &Value {
        self.servers
            .iter()
            .find(|r| r["server_url"] == url)
            .unwrap_or_else(|| panic!("no server row for {url}"))
    }

    /// The change rows of `url`, in dataset order.
    pub fn changes_of(&self, url: &str) -> Vec<Value> {
        self.changes
            .iter()
            .filter(|r| r["server_url"] == url)
            .cloned()
            .collect()
    }
}

fn is_rfc3339(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

/// Removes the fields whose value depends on the clock or on the wire (`observed_at`,
/// `response_time_ms`, `bytes_read`, `first_seen`, `last_changed`, `charges`, the chain heads)
/// after checking
/// their shape, so the rest of the row can be compared exactly.
pub fn stable(row: &Value) -> Value {
    let mut map: Map<String, Value> = row.as_object().expect("row object").clone();
    for key in ["observed_at", "first_seen", "last_changed"] {
        if let Some(value) = map.remove(key) {
            assert!(
                value.is_null() || is_rfc3339(&value),
                "{key} is not a timestamp: {value}"
            );
        }
    }
    for key in ["response_time_ms", "bytes_read"] {
        if let Some(value) = map.remove(key) {
            assert!(value.is_u64(), "{key} is not a count: {value}");
        }
    }
    // The chain heads hash the whole index, timestamps included.
    for key in ["ledger_chain_head", "ledger_chain_prev_head"] {
        if let Some(value) = map.remove(key) {
            assert!(
                value.as_str().is_some_and(|h| h.len() == 64),
                "{key} is not a head: {value}"
            );
        }
    }
    // The charges block belongs to the platform work and is checked by its own tests.
    map.remove("charges");
    Value::Object(map)
}

/// The effective hints of a raw tool under the MCP defaults, written out independently of the
/// crate: read-only false, destructive true, idempotent false, open-world true; a read-only
/// tool is never destructive and always idempotent.
fn effective_hints(tool: &Value) -> (bool, bool, bool, bool) {
    let hint = |key: &str, default: bool| {
        tool.get("annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    let read_only = hint("readOnlyHint", false);
    let open_world = hint("openWorldHint", true);
    if read_only {
        (true, false, true, open_world)
    } else {
        (
            false,
            hint("destructiveHint", true),
            hint("idempotentHint", false),
            open_world,
        )
    }
}

/// The `tools[]` entry a server row must carry for one served tool.
pub fn tool_summary(tool: &Value) -> Value {
    let (read_only, destructive, idempotent, open_world) = effective_hints(tool);
    let assessment = risk::assess_tool(tool);
    let description = tool.get("description").cloned().unwrap_or(Value::Null);
    let input_schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    let contract = json!({
        "name": tool["name"],
        "description": description.as_str().unwrap_or(""),
        "inputSchema": tool.get("inputSchema").cloned().unwrap_or(json!({})),
    });
    json!({
        "name": tool["name"],
        "description_hash": hash_value(&description),
        "input_schema_hash": hash_value(&input_schema),
        "output_schema_hash": tool.get("outputSchema").map(hash_value),
        "annotations_hash": hash_value(&json!({
            "read_only_hint": read_only,
            "destructive_hint": destructive,
            "idempotent_hint": idempotent,
            "open_world_hint": open_world,
        })),
        "contract_hash": hash_value(&contract),
        "read_only_hint": read_only,
        "destructive_hint": destructive,
        "idempotent_hint": idempotent,
        "open_world_hint": open_world,
        "capabilities": assessment.capabilities,
        "risk": assessment.risk,
        "assumed_risk": assessment.assumed_risk,
        "findings": assessment.findings,
    })
}

/// The server-level `risk`, `assumed_risk` and `capabilities` of a served tool list (the risk
/// module's own tables test the rules; here the row is checked to carry them).
pub fn server_risk_fields(tools: &[Value]) -> (Value, Value, Value) {
    let assessed: Vec<(String, risk::ToolAssessment)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("").to_string(),
                risk::assess_tool(t),
            )
        })
        .collect();
    let server = risk::server_risk(&assessed.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>());
    let assumed = assessed
        .iter()
        .map(|(_, a)| a.assumed_risk)
        .fold(server, risk::Risk::max);
    let map = risk::capability_map(
        assessed
            .iter()
            .map(|(n, a)| (n.as_str(), a.capabilities.as_slice())),
    );
    (json!(server), json!(assumed), json!(map))
}

/// The `tools[]` of a server row for a served tool list, sorted by name like the surface.
pub fn tool_summaries(tools: &[Value]) -> Value {
    let mut sorted: Vec<&Value> = tools.iter().collect();
    sorted.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Value::Array(sorted.into_iter().map(tool_summary).collect())
}

/// The tool digest of a served tool list (identity does not enter the tool digest).
pub fn tool_digest(tools: &[Value]) -> String {
    Surface::from_tools(ServerIdentity::default(), tools.to_vec())
        .expect("valid tools")
        .tool_digest()
}

/// A change row without its timestamp: what a test spells out.
pub fn change(
    url: &str,
    class: &str,
    tool: Option<&str>,
    field: &str,
    old: Option<Value>,
    new: Option<Value>,
    severity: &str,
) -> Value {
    json!({
        "record_type": "change",
        "server_url": url,
        "change_class": class,
        "tool_name": tool,
        "field": field,
        "old_value_hash": old.as_ref().map(hash_value),
        "new_value_hash": new.as_ref().map(hash_value),
        "old_value": old,
        "new_value": new,
        "severity": severity,
        "compatibility": null,
        "details": [],
        "same_version": false,
        "renamed_to": null,
        "renamed_from": null,
    })
}

/// Every change class, for an `alert_on` that lets everything through.
pub const ALL_CLASSES: [&str; 18] = [
    "tool_added",
    "tool_removed",
    "input_schema_changed",
    "destructive_hint_changed",
    "auth_requirement_changed",
    "read_only_hint_changed",
    "open_world_hint_changed",
    "tool_description_changed",
    "server_version_changed",
    "output_schema_changed",
    "server_instructions_changed",
    "capability_added",
    "poisoning_marker_added",
    "tool_title_changed",
    "tool_icons_changed",
    "tool_execution_changed",
    "tool_meta_changed",
    "tool_field_changed",
];

/// Whether `unshare -n` works here (root, util-linux present).
pub fn can_unshare_network() -> bool {
    Command::new("unshare")
        .args(["-n", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Wraps `command` so it runs in a fresh network namespace with only `lo` up: no packet can
/// leave the machine.
pub fn in_network_namespace(command: &Command) -> Command {
    let mut wrapped = Command::new("unshare");
    wrapped
        .args([
            "-n",
            "sh",
            "-c",
            r#"ip link set lo up 2>/dev/null; exec "$@""#,
            "netns",
        ])
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped.stdin(Stdio::null());
    wrapped
}

/// Compares two lists of rows one by one, naming the first row and field that differ.
#[track_caller]
pub fn assert_rows_eq(actual: &[Value], expected: &[Value]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_row_eq(a, e, &format!("row {i}"));
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "row count differs: actual {actual:#?}"
    );
}

/// Compares one row field by field, naming every field that differs.
#[track_caller]
pub fn assert_row_eq(actual: &Value, expected: &Value, what: &str) {
    if actual == expected {
        return;
    }
    let empty = Map::new();
    let (a, e) = (
        actual.as_object().unwrap_or(&empty),
        expected.as_object().unwrap_or(&empty),
    );
    let mut problems = Vec::new();
    for key in a.keys().chain(e.keys().filter(|k| !a.contains_key(*k))) {
        if a.get(key) != e.get(key) {
            problems.push(format!(
                "  {key}: actual {} / expected {}",
                a.get(key)
                    .map(|v| v.to_string())
                    .unwrap_or("(absent)".into()),
                e.get(key)
                    .map(|v| v.to_string())
                    .unwrap_or("(absent)".into())
            ));
        }
    }
    panic!("{what} differs:\n{}", problems.join("\n"));
}

/// The server row of a readable server, clock and wire fields removed.
#[allow(clippy::too_many_arguments)]
pub fn readable_row(
    url: &str,
    era: &str,
    protocol_version: &str,
    name: &str,
    version: &str,
    tools: &[Value],
    previous: Option<&[Value]>,
    status: &str,
    change_count: usize,
) -> Value {
    let digest = tool_digest(tools);
    let previous_digest = previous.map(tool_digest);
    let (risk, assumed_risk, capabilities) = server_risk_fields(tools);
    json!({
        "record_type": "server",
        "server_url": url,
        "listing": "anonymous",
        "registry_name": null,
        "final_url": url,
        "ok": true,
        "reason_code": "OK",
        "error": null,
        "http_status": 200,
        "transport": "streamable-http",
        "protocol_version": protocol_version,
        "protocol_era": era,
        "server_name": name,
        "server_version": version,
        "anonymous_listing_allowed": true,
        "auth_required": false,
        "oauth_protected_resource_metadata_url": null,
        "oauth_authorization_servers": [],
        "oauth_scopes_supported": [],
        "tools_total": tools.len(),
        "invalid_tools_total": 0,
        "invalid_tools": [],
        "resources_total": null,
        "prompts_total": null,
        "digest_changed": previous_digest.as_ref().is_some_and(|p| *p != digest),
        "tool_digest": digest,
        "previous_tool_digest": previous_digest,
        "tools": tool_summaries(tools),
        "declared_findings": [],
        "risk": risk,
        "assumed_risk": assumed_risk,
        "capabilities": capabilities,
        "identity_signal": null,
        "tools_truncated": false,
        "ledger_status": status,
        "change_count": change_count,
        "digest_algorithm": "sha256-jcs/1",
    })
}
