//! The Actor input: every field, its default and its allowed range.
//!
//! Input is refused as a whole, before any network work, when a field is unknown, has the wrong
//! type or is out of range. The error lists **every** bad field with what is allowed, so one
//! correction round is enough. Individual server entries are the exception: an unusable URL is
//! not an input error but a `BLOCKED_TARGET` row (see [`crate::targets`]), because one bad entry
//! must not cost the user the rest of the fleet.

mod checker;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::diff::ChangeClass;
use crate::gate::{ExitCondition, FailOn};
use crate::net::Credential;
use crate::registry::RegistryQuery;
use crate::suggest;
use crate::surface::validity::json_type as type_name;
use checker::{
    CONCURRENCY, Checker, HISTORY_RETENTION_DAYS, MAX_REDIRECTS, MAX_RESPONSE_BYTES,
    MAX_RUN_SECONDS, MAX_SERVER_SECONDS, REQUEST_TIMEOUT, SHARDS, max_shards,
};

/// The four public servers read when `servers` is missing or empty.
pub const DEFAULT_SERVERS: [&str; 4] = [
    "https://mcp.deepwiki.com/mcp",
    "https://mcp.context7.com/mcp",
    "https://huggingface.co/mcp",
    "https://api.githubcopilot.com/mcp/",
];

/// The most servers one run (or one shard of a sharded watch) reads: the ledger index of that
/// many servers, with both views and their history, stays within the platform's 9 MiB record
/// (measured in `ledger::tests`; see docs/sharding.md).
pub const MAX_SERVERS: usize = crate::ledger::SERVERS_PER_RUN;

/// The most shards a sharded watch may be split into ([`crate::shard`]).
pub const MAX_SHARDS: usize = 20;

/// `shards` = 0: the coordinator chooses the number of shards from the fleet it finds (the
/// fewest that hold it, [`crate::shard::plan::shard_count`]).
pub const AUTO_SHARDS: usize = 0;

/// The longest `ledger_name` of a sharded watch: the shards' ledgers are named
/// `<ledger_name>-shard-<k>` and its round record `shards.<ledger_name>`, which must still be
/// valid record keys.
pub const MAX_SHARDED_LEDGER_NAME: usize = 100 - "-shard-20-of-20".len();

/// A validated Actor input with every default applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// Server entries exactly as given (validated one by one later, into targets or rows).
    pub servers: Vec<Value>,
    /// Record key of the baseline set in the named ledger store.
    pub ledger_name: String,
    /// Change classes that become change rows.
    pub alert_on: Vec<ChangeClass>,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Servers read at the same time.
    pub concurrency: usize,
    /// Redirect hops per request.
    pub max_redirects: u32,
    /// Per-response body cap.
    pub max_response_bytes: u64,
    /// Also count resources and prompts.
    pub count_resources_and_prompts: bool,
    /// Probe RFC 9728 metadata for servers that demand authentication.
    pub probe_oauth_metadata: bool,
    /// Wall-clock budget for one server.
    pub max_server_time: Duration,
    /// Wall-clock deadline of the whole run.
    pub max_run_time: Duration,
    /// When non-empty, only these hosts (and their subdomains) may be contacted.
    pub allowed_hosts: Vec<String>,
    /// Exit code 1 when a change at or above this level is recorded.
    pub fail_on: FailOn,
    /// States of the finished run that make the exit code non-zero (4, or 5 for the chain),
    /// for schedulers; empty by default.
    pub exit_nonzero_on: Vec<ExitCondition>,
    /// Secret headers, one per origin, for reading the authenticated view of those servers.
    /// Their `Debug` never shows the value.
    pub server_credentials: Vec<Arc<Credential>>,
    /// The MCP Registry search whose remote servers join the fleet, if any.
    pub registry: Option<RegistryQuery>,
    /// Into how many shards the fleet is split; above 1, or [`AUTO_SHARDS`], the run
    /// coordinates one run per shard ([`crate::shard`]).
    pub shards: usize,
    /// Also write the change rows as a SARIF 2.1.0 log, `REPORT.sarif` beside `REPORT`.
    pub report_sarif: bool,
    /// The Ed25519 key that signs each chain head of the ledger ([`crate::chain::sign`]). Its
    /// `Debug` never shows the key.
    pub ledger_signing_key: Option<Arc<crate::chain::SigningSecret>>,
    /// Where the run tells of the changes it recorded ([`crate::notify`]). The URLs and
    /// secrets in it never show in `Debug`.
    pub notify: Vec<crate::notify::Destination>,
    /// How many days the ledger keeps every change and the values it refers to.
    pub history_retention_days: u32,
}

/// One field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field name as written in the input.
    pub field: String,
    /// What is wrong and what is allowed.
    pub problem: String,
}

/// The field name of a problem with the input as a whole (not one of its fields).
pub const WHOLE_INPUT: &str = "(input)";

/// The input was refused. Lists every bad field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input{}: {}", render_file(.file), render_problems(.problems, .file))]
pub struct InputError {
    /// Every problem found, in field order.
    pub problems: Vec<FieldProblem>,
    /// Where the input was read from when not from the stored INPUT record (`--input FILE`:
    /// the file, or standard input), named in the message.
    pub file: Option<String>,
}

impl InputError {
    /// Refuses the input for these problems.
    pub fn new(problems: Vec<FieldProblem>) -> InputError {
        InputError {
            problems,
            file: None,
        }
    }

    /// Refuses the input as a whole ([`WHOLE_INPUT`]) for `problem`.
    pub fn whole(problem: impl Into<String>) -> InputError {
        InputError::new(vec![FieldProblem {
            field: WHOLE_INPUT.to_string(),
            problem: problem.into(),
        }])
    }

    /// The same refusal, naming the file the input was read from.
    pub fn in_file(self, file: impl Into<String>) -> InputError {
        InputError {
            file: Some(file.into()),
            ..self
        }
    }

    /// The names of the bad fields, e.g. for a status message.
    pub fn fields(&self) -> Vec<&str> {
        self.problems.iter().map(|p| p.field.as_str()).collect()
    }
}

fn render_file(file: &Option<String>) -> String {
    file.as_ref()
        .map_or(String::new(), |file| format!(" in {file}"))
}

fn render_problems(problems: &[FieldProblem], file: &Option<String>) -> String {
    problems
        .iter()
        .map(|p| match file {
            Some(_) if p.field == WHOLE_INPUT => format!("it {}", p.problem),
            _ => format!("`{}` {}", p.field, p.problem),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The most entries `server_credentials` may hold.
pub const MAX_CREDENTIALS: usize = 50;

/// Every field the input may carry.
pub const KNOWN_FIELDS: [&str; 21] = [
    "servers",
    "ledger_name",
    "alert_on",
    "request_timeout_seconds",
    "concurrency",
    "max_redirects",
    "max_response_bytes",
    "count_resources_and_prompts",
    "probe_oauth_metadata",
    "max_server_seconds",
    "max_run_seconds",
    "allowed_hosts",
    "fail_on",
    "exit_nonzero_on",
    "server_credentials",
    "registry",
    "shards",
    "report_sarif",
    "ledger_signing_key",
    "notify",
    "history_retention_days",
];

/// Whether `key` is a valid Apify key-value store record key of at most 100 characters.
pub fn is_valid_record_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 100
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!-_.'()".contains(c))
}

impl Input {
    /// Validates a raw INPUT value. `None` (no INPUT record) means every default.
    pub fn from_value(raw: Option<&Value>) -> Result<Input, InputError> {
        let empty = Map::new();
        let map = match raw {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(InputError::whole(format!(
                    "must be a JSON object (got {})",
                    type_name(other)
                )));
            }
        };
        let mut check = Checker::default();
        for key in map.keys() {
            if !KNOWN_FIELDS.contains(&key.as_str()) {
                check.refuse(
                    key,
                    format!(
                        "is not a known field; {}",
                        suggest::hint(key, &KNOWN_FIELDS)
                    ),
                );
            }
        }
        let registry = check.registry(map);
        let shards = check.int(map, &SHARDS) as usize;
        let input = Input {
            servers: check.servers(map, registry.is_some(), shards),
            ledger_name: check.ledger_name(map, shards),
            alert_on: check.alert_on(map),
            request_timeout: Duration::from_secs(check.int(map, &REQUEST_TIMEOUT)),
            concurrency: check.int(map, &CONCURRENCY) as usize,
            max_redirects: check.int(map, &MAX_REDIRECTS) as u32,
            max_response_bytes: check.int(map, &MAX_RESPONSE_BYTES),
            count_resources_and_prompts: check.bool(map, "count_resources_and_prompts", true),
            probe_oauth_metadata: check.bool(map, "probe_oauth_metadata", true),
            max_server_time: Duration::from_secs(check.int(map, &MAX_SERVER_SECONDS)),
            max_run_time: Duration::from_secs(check.int(map, &MAX_RUN_SECONDS)),
            allowed_hosts: check.allowed_hosts(map),
            fail_on: check.fail_on(map),
            exit_nonzero_on: check.exit_nonzero_on(map),
            server_credentials: check.server_credentials(map),
            registry,
            shards,
            report_sarif: check.bool(map, "report_sarif", false),
            ledger_signing_key: check.signing_key(map),
            notify: check.notify(map),
            history_retention_days: check.int(map, &HISTORY_RETENTION_DAYS) as u32,
        };
        if check.problems.is_empty() {
            Ok(input)
        } else {
            Err(InputError::new(check.problems))
        }
    }

    /// Parses INPUT bytes (JSON). Empty bytes count as `{}`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Input, InputError> {
        // An empty record is most likely a mistake (a file truncated, an editor that saved
        // nothing): it is refused, not read as "every default".
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(InputError::whole(format!(
                "is empty ({} bytes): write {{}} to use every default (the four example \
                 servers), or a JSON object such as {{\"servers\": [\"https://example.com/mcp\"]}}",
                bytes.len()
            )));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            InputError::whole(format!(
                "is not valid JSON ({e}): the input is read as JSON only (not YAML, TOML or \
                 JSON with comments); write it as one JSON object such as \
                 {{\"servers\": [\"https://example.com/mcp\"]}}"
            ))
        })?;
        Input::from_value(Some(&value))
    }

    /// The most server entries the run's fleet may hold: [`MAX_SERVERS`] per shard.
    pub fn max_fleet(&self) -> usize {
        MAX_SERVERS * max_shards(self.shards)
    }

    /// The input echoed back with defaults applied, as the summary row shows it.
    pub fn alert_on_names(&self) -> Vec<&'static str> {
        self.alert_on.iter().map(|c| c.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_input_runs_on_defaults() {
        let input = Input::from_value(Some(&json!({}))).unwrap();
        assert_eq!(input.servers.len(), 4);
        assert_eq!(input.ledger_name, "DEFAULT");
        assert_eq!(input.alert_on, ChangeClass::default_alert_set());
        assert_eq!(input.request_timeout, Duration::from_secs(20));
        assert_eq!(input.concurrency, 5);
        assert_eq!(input.max_redirects, 3);
        assert_eq!(input.max_response_bytes, 2_000_000);
        assert!(input.count_resources_and_prompts);
        assert!(input.probe_oauth_metadata);
        assert_eq!(input.max_server_time, Duration::from_secs(60));
        assert_eq!(input.max_run_time, Duration::from_secs(900));
        assert_eq!(Input::from_value(None).unwrap(), input);
        assert_eq!(Input::from_bytes(b"{}").unwrap(), input);
        for empty in [&b""[..], b"  \n"] {
            let error = Input::from_bytes(empty).unwrap_err();
            assert!(error.to_string().contains("is empty"), "{error}");
            assert!(error.to_string().contains("write {}"), "{error}");
        }
    }

    #[test]
    fn every_range_edge_is_checked() {
        let cases: &[(&str, u64, bool)] = &[
            ("request_timeout_seconds", 1, false),
            ("request_timeout_seconds", 2, true),
            ("request_timeout_seconds", 120, true),
            ("request_timeout_seconds", 121, false),
            ("concurrency", 0, false),
            ("concurrency", 1, true),
            ("concurrency", 20, true),
            ("concurrency", 21, false),
            ("max_redirects", 0, true),
            ("max_redirects", 10, true),
            ("max_redirects", 11, false),
            ("max_response_bytes", 9_999, false),
            ("max_response_bytes", 10_000, true),
            ("max_response_bytes", 5_000_000, true),
            ("max_response_bytes", 5_000_001, false),
            ("max_server_seconds", 4, false),
            ("max_server_seconds", 5, true),
            ("max_server_seconds", 600, true),
            ("max_server_seconds", 601, false),
            ("history_retention_days", 0, false),
            ("history_retention_days", 1, true),
            ("history_retention_days", 3650, true),
            ("history_retention_days", 3651, false),
            ("max_run_seconds", 29, false),
            ("max_run_seconds", 30, true),
            ("max_run_seconds", 3600, true),
            ("max_run_seconds", 3601, false),
            ("shards", 0, true),
            ("shards", 1, true),
            ("shards", 20, true),
            ("shards", 21, false),
        ];
        for (field, value, ok) in cases {
            let result = Input::from_value(Some(&json!({ *field: value })));
            assert_eq!(result.is_ok(), *ok, "{field} = {value}");
            if let Err(e) = result {
                assert_eq!(e.fields(), vec![*field]);
                assert!(e.to_string().contains("must be an integer from"), "{e}");
            }
        }
    }

    #[test]
    fn all_bad_fields_are_named_in_one_error() {
        let err = Input::from_value(Some(&json!({
            "concurrency": 50,
            "max_redirects": "3",
            "alert_on": ["tool_added", "bogus_class"],
            "serverz": [],
            "ledger_name": "no spaces allowed",
            "count_resources_and_prompts": "yes",
        })))
        .unwrap_err();
        let mut fields = err.fields();
        fields.sort();
        assert_eq!(
            fields,
            vec![
                "alert_on",
                "concurrency",
                "count_resources_and_prompts",
                "ledger_name",
                "max_redirects",
                "serverz"
            ]
        );
        let text = err.to_string();
        assert!(text.contains("from 1 to 20 (got 50)"), "{text}");
        assert!(text.contains("bogus_class"), "{text}");
    }

    #[test]
    fn servers_are_kept_as_given_and_capped() {
        let input =
            Input::from_value(Some(&json!({"servers": ["https://a.example/mcp", 7]}))).unwrap();
        assert_eq!(
            input.servers,
            vec![json!("https://a.example/mcp"), json!(7)]
        );
        let input = Input::from_value(Some(&json!({"servers": []}))).unwrap();
        assert_eq!(input.servers.len(), 4);
    }

    #[test]
    fn a_fleet_larger_than_a_shard_needs_shards_and_the_error_says_how_many() {
        let fleet = |n: usize| -> Vec<String> {
            (0..n).map(|i| format!("https://s{i}.example/")).collect()
        };
        // (servers, shards, accepted, what the error must say)
        let cases: &[(usize, u64, bool, &str)] = &[
            (MAX_SERVERS, 1, true, ""),
            (MAX_SERVERS + 1, 1, false, "set `shards` to 2 or more"),
            (MAX_SERVERS + 1, 2, true, ""),
            (2 * MAX_SERVERS + 1, 2, false, "set `shards` to 3 or more"),
            (MAX_SERVERS * MAX_SHARDS, 20, true, ""),
            (
                MAX_SERVERS * MAX_SHARDS + 1,
                20,
                false,
                "split the fleet into several ledgers",
            ),
        ];
        for (count, shards, ok, says) in cases {
            let input = json!({"servers": fleet(*count), "shards": shards});
            match Input::from_value(Some(&input)) {
                Ok(input) => {
                    assert!(ok, "{count} servers in {shards} shards accepted");
                    assert_eq!(input.shards as u64, *shards);
                    assert_eq!(input.max_fleet(), MAX_SERVERS * *shards as usize);
                }
                Err(error) => {
                    assert!(!ok, "{count} servers in {shards} shards refused: {error}");
                    assert_eq!(error.fields(), vec!["servers"]);
                    assert!(error.to_string().contains(says), "{error}");
                }
            }
        }
    }

    #[test]
    fn a_sharded_ledger_name_leaves_room_for_the_shard_suffix() {
        let longest = "l".repeat(MAX_SHARDED_LEDGER_NAME);
        let too_long = "l".repeat(MAX_SHARDED_LEDGER_NAME + 1);
        assert!(Input::from_value(Some(&json!({"ledger_name": too_long}))).is_ok());
        assert!(Input::from_value(Some(&json!({"ledger_name": longest, "shards": 20}))).is_ok());
        let err =
            Input::from_value(Some(&json!({"ledger_name": too_long, "shards": 2}))).unwrap_err();
        assert_eq!(err.fields(), vec!["ledger_name"]);
        assert!(err.to_string().contains("-shard-"), "{err}");
        let suffixed =
            crate::shard::plan::shard_ledger_name(&"l".repeat(MAX_SHARDED_LEDGER_NAME), 20, 20);
        assert!(is_valid_record_key(&suffixed), "{suffixed}");
    }

    #[test]
    fn alert_on_and_allowed_hosts_are_parsed() {
        let input = Input::from_value(Some(&json!({
            "alert_on": ["server_version_changed", "tool_added", "tool_added"],
            "allowed_hosts": ["Example.COM.", "api.example.org"],
            "fail_on": "breaking",
        })))
        .unwrap();
        assert_eq!(
            input.alert_on,
            vec![ChangeClass::ServerVersionChanged, ChangeClass::ToolAdded]
        );
        assert_eq!(input.allowed_hosts, vec!["example.com", "api.example.org"]);
        assert_eq!(input.fail_on, FailOn::Breaking);
        let err = Input::from_value(Some(&json!({"allowed_hosts": ["not a host"]}))).unwrap_err();
        assert_eq!(err.fields(), vec!["allowed_hosts"]);
    }

    #[test]
    fn ledger_names_of_the_ledgers_own_records_are_refused() {
        for name in [
            "surface-abc",
            "insight.DEFAULT",
            "insight.",
            "shards.DEFAULT",
            "status.DEFAULT",
        ] {
            let err = Input::from_value(Some(&json!({"ledger_name": name}))).unwrap_err();
            assert_eq!(err.fields(), vec!["ledger_name"], "{name}");
            assert!(err.to_string().contains("reserved"), "{err}");
        }
        for name in ["surfaces", "insight", "my-insight.x", "surface_1", "status"] {
            let input = Input::from_value(Some(&json!({"ledger_name": name}))).unwrap();
            assert_eq!(input.ledger_name, name);
        }
    }

    #[test]
    fn a_misspelt_field_or_value_gets_the_nearest_name_instead_of_every_one() {
        let err = Input::from_value(Some(&json!({
            "server": ["https://a.example/mcp"],
            "alert_on": ["tool_add"],
            "exit_nonzero_on": ["nothing_red"],
            "fail_on": "breakng",
            "registry": {"serach": "x"},
        })))
        .unwrap_err();
        let text = err.to_string();
        for expected in [
            "`server` is not a known field; did you mean `servers`?",
            "unknown change class \"tool_add\"; did you mean `tool_added`?",
            "unknown condition \"nothing_red\"; did you mean `nothing_read`?",
            "(got \"breakng\"); did you mean `breaking`?",
            "`registry.serach` is not a known field; did you mean `search`?",
        ] {
            assert!(text.contains(expected), "{expected}: {text}");
        }
        assert!(!text.contains("history_retention_days"), "{text}");
        // Nothing close: every allowed name is listed.
        let err = Input::from_value(Some(&json!({"colour": 1}))).unwrap_err();
        assert!(
            err.to_string().contains("allowed: servers, ledger_name"),
            "{err}"
        );
    }

    #[test]
    fn an_input_file_is_named_and_said_to_be_read_as_json_only() {
        let err = Input::from_bytes(b"servers:\n  - https://a.example/mcp\n").unwrap_err();
        assert_eq!(err.fields(), [WHOLE_INPUT]);
        let text = err.clone().in_file("watch.yaml").to_string();
        assert!(
            text.starts_with("invalid input in watch.yaml: it is not valid JSON"),
            "{text}"
        );
        assert!(text.contains("JSON only (not YAML"), "{text}");
        assert!(
            err.to_string().contains("`(input)` is not valid JSON"),
            "{err}"
        );
        let err = Input::from_value(Some(&json!({"server": []}))).unwrap_err();
        let text = err.in_file("watch.json").to_string();
        assert!(text.contains("in watch.json: `server` is not"), "{text}");
    }

    #[test]
    fn non_object_input_is_refused() {
        let err = Input::from_bytes(b"[1,2]").unwrap_err();
        assert!(err.to_string().contains("must be a JSON object"));
        let err = Input::from_bytes(b"{oops").unwrap_err();
        assert!(err.to_string().contains("not valid JSON"));
    }

    #[test]
    fn server_credentials_are_checked_without_ever_quoting_the_value() {
        let secret = "Bearer s3cr3t-value";
        let input = Input::from_value(Some(&json!({
            "server_credentials": [
                {"origin": "https://a.example", "value": secret},
                {"origin": "https://b.example:8443", "header": "X-Api-Key", "value": "k"},
            ]
        })))
        .unwrap();
        let origins: Vec<&str> = input
            .server_credentials
            .iter()
            .map(|c| c.origin())
            .collect();
        assert_eq!(origins, ["https://a.example", "https://b.example:8443"]);
        assert_eq!(
            input.server_credentials[0].header_name().as_str(),
            "authorization"
        );
        assert!(!format!("{input:?}").contains("s3cr3t"));

        let cases = [
            (json!("Bearer x"), "server_credentials", "must be an array"),
            (
                json!([{"origin": "https://a.example/mcp", "value": secret}]),
                "server_credentials[0]",
                "origin must",
            ),
            (
                json!([{"origin": "https://a.example", "header": "Cookie", "value": secret}]),
                "server_credentials[0]",
                "cannot carry",
            ),
            (
                json!([{"origin": "https://a.example", "header": "mcp-session-id", "value": secret}]),
                "server_credentials[0]",
                "cannot carry",
            ),
            (
                json!([{"origin": "https://a.example", "header": "Host", "value": secret}]),
                "server_credentials[0]",
                "credential for https://a.example: header \"Host\" cannot carry",
            ),
            (
                json!([{"origin": "https://a.example", "header": "Connection", "value": secret}]),
                "server_credentials[0]",
                "cannot carry",
            ),
            (
                json!([{"origin": "https://a.example"}]),
                "server_credentials[0]",
                "needs \"value\"",
            ),
            (
                json!([{"origin": "https://a.example", "value": "a\nb s3cr3t"}]),
                "server_credentials[0]",
                "non-empty",
            ),
            (
                json!([{"origin": "https://a.example", "value": secret, "token": secret}]),
                "server_credentials[0]",
                "unknown field",
            ),
            (
                json!([{"origin": "https://a.example", "value": secret}, {"origin": "https://A.example:443", "value": secret}]),
                "server_credentials[1]",
                "repeats the origin",
            ),
            (
                json!([secret]),
                "server_credentials[0]",
                "must be an object",
            ),
        ];
        for (value, field, expected) in cases {
            let err = Input::from_value(Some(&json!({ "server_credentials": value }))).unwrap_err();
            assert_eq!(err.fields(), vec![field], "{value}");
            let text = err.to_string();
            assert!(text.contains(expected), "{value}: {text}");
            assert!(!text.contains("s3cr3t"), "the value leaked: {text}");
        }
    }

    #[test]
    fn registry_is_parsed_with_its_defaults_and_ranges() {
        let input = Input::from_value(Some(&json!({"registry": {"search": " github "}}))).unwrap();
        let registry = input.registry.unwrap();
        assert_eq!(registry.search.as_deref(), Some("github"));
        assert_eq!(registry.limit, 100);
        assert_eq!(
            registry.base_url.as_str(),
            crate::registry::DEFAULT_BASE_URL
        );
        assert!(
            input.servers.is_empty(),
            "no default servers beside a registry search"
        );

        let input = Input::from_value(Some(&json!({
            "servers": ["https://a.example/mcp"],
            "registry": {"limit": 5, "base_url": "http://127.0.0.1:9/v0"},
        })))
        .unwrap();
        assert_eq!(input.servers.len(), 1);
        let registry = input.registry.unwrap();
        assert_eq!((registry.limit, registry.search), (5, None));
        assert_eq!(registry.base_url.as_str(), "http://127.0.0.1:9/v0");

        let cases = [
            (json!("github"), "registry"),
            (json!({"limit": 0}), "registry.limit"),
            (json!({"limit": 20_001}), "registry.limit"),
            (json!({"base_url": "ftp://r.example"}), "registry.base_url"),
            (
                json!({"base_url": "https://u:p@r.example"}),
                "registry.base_url",
            ),
            (json!({"search": 7}), "registry.search"),
            (json!({"query": "x"}), "registry.query"),
        ];
        for (value, field) in cases {
            let err = Input::from_value(Some(&json!({ "registry": value }))).unwrap_err();
            assert_eq!(err.fields(), vec![field], "{value}");
        }
    }

    #[test]
    fn exit_nonzero_on_takes_the_documented_conditions_and_names_them_when_refused() {
        assert!(Input::from_value(None).unwrap().exit_nonzero_on.is_empty());
        let input = Input::from_value(Some(&json!({
            "exit_nonzero_on": ["chain_not_intact", "some_unreadable", "chain_not_intact"]
        })))
        .unwrap();
        assert_eq!(
            input.exit_nonzero_on,
            [ExitCondition::ChainNotIntact, ExitCondition::SomeUnreadable]
        );
        let all = json!([
            "nothing_read",
            "some_unreadable",
            "auth_rejected",
            "registry_failed",
            "chain_not_intact"
        ]);
        let input = Input::from_value(Some(&json!({ "exit_nonzero_on": all }))).unwrap();
        assert_eq!(input.exit_nonzero_on, ExitCondition::ALL);

        for bad in [json!(["unreachable"]), json!("nothing_read"), json!([4])] {
            let err = Input::from_value(Some(&json!({ "exit_nonzero_on": bad }))).unwrap_err();
            assert_eq!(err.fields(), ["exit_nonzero_on"], "{bad}");
            let text = err.to_string();
            assert!(
                text.contains(
                    "nothing_read, some_unreadable, auth_rejected, registry_failed, \
                     chain_not_intact"
                ),
                "{text}"
            );
        }
    }
}
