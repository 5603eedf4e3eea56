//! The change rows as a SARIF 2.1.0 log, for code scanning (GitHub's included) and CI dashboards.
//!
//! One run. Rules: one per change class (all of them, in [`ChangeClass::ALL`] order), then
//! [`CHAIN_RULE`] for a ledger whose hash chain is not intact; each has help text and a
//! `helpUri` into the README's SARIF section ([`help_uri`]). Results: one per ledger chain that
//! is not intact (first, so a log cut to size keeps them), then one per change row.
//!
//! Code scanning files an alert only under a physical location, and a remote server has no
//! source file: every result names a file a repository can hold, the server's artifact path
//! ([`artifact_path`], `mcp-surface-ledger/<host>/<path>.json`; a ledger's own is
//! [`ledger_artifact_path`]), at line 1, beside its logical locations (the server, the tool,
//! and a JSON pointer into the server's surface). A change's level is `error` when its
//! severity is high or it breaks callers, `warning` for medium, `note` for low ([`level`]); a
//! broken chain is an `error`, any other status but `new` and `intact` a `warning`.
//! `automationDetails.id` names the ledger ([`Scope::automation_id`]), so code scanning keeps
//! one category per ledger. The `--fail-on` level and whether it tripped are the run's
//! `properties` and its invocation's exit code. `README.md` (SARIF) describes the mapping.

mod rules;

use serde_json::{Map, Value, json};

use rules::{chain_rule, rule};

use super::{ChainAnchor, ChangeRow, SummaryRow};
use crate::diff::{ChangeClass, Compatibility, Severity};
use crate::gate::FailOn;
use crate::risk::unicode::escape_invisible;
use crate::surface::{hash_value, pointer_segment};

/// The JSON Schema the log names in `$schema` (the OASIS errata 01 schema of SARIF 2.1.0).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of the log in the run's default key-value store (beside `REPORT`).
pub const RECORD_KEY: &str = "REPORT.sarif";

/// The key under which `partialFingerprints` carries a change's identity.
pub const FINGERPRINT_KEY: &str = "mcpSurfaceChange/v1";

/// The key under which `partialFingerprints` carries the identity of a chain finding.
pub const CHAIN_FINGERPRINT_KEY: &str = "mcpSurfaceLedgerChain/v1";

/// The id of the rule of a ledger whose hash chain a run did not find intact.
pub const CHAIN_RULE: &str = "ledger_chain_not_intact";

/// The directory every artifact path starts with.
pub const ARTIFACT_ROOT: &str = "mcp-surface-ledger";

/// Where the tool is described (`tool.driver.informationUri`): the `homepage` of Cargo.toml,
/// or, while it sets none, the Apify Store's search for the Actor (whose page is the README).
pub const INFORMATION_URI: &str = non_empty_or(
    env!("CARGO_PKG_HOMEPAGE"),
    "https://apify.com/store?search=mcp-surface-ledger",
);

/// The README heading every rule's help points to (the anchor GitHub and the Apify Store give
/// "SARIF for code-scanning tools").
pub const HELP_ANCHOR: &str = "sarif-for-code-scanning-tools";

const fn non_empty_or(value: &'static str, fallback: &'static str) -> &'static str {
    if value.is_empty() { fallback } else { value }
}

/// The `helpUri` of every rule: the README's SARIF section.
pub fn help_uri() -> String {
    format!("{INFORMATION_URI}#{HELP_ANCHOR}")
}

/// What a SARIF log describes: the gate decision and the change rows.
#[derive(Debug, Clone, Copy)]
pub struct Gate<'a> {
    /// The level that makes a run fail.
    pub fail_on: FailOn,
    /// Whether a recorded change reached it.
    pub tripped: bool,
    /// The change rows, in the order they were written.
    pub changes: &'a [ChangeRow],
}

/// The ledger a log speaks for, and the ledgers whose chain its run did not find intact.
/// The default scope (no ledger, no chain) is that of `diff`, which keeps no ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The ledger the changes were recorded in (`ledger_name`; a sharded watch's own name).
    pub ledger: Option<String>,
    /// Each ledger whose chain status is neither `new` nor `intact`, with its chain fields.
    pub chains: Vec<LedgerChain>,
}

/// The chain fields of one ledger, as a run's summary row (or a shard item) has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerChain {
    /// The ledger's name (a shard's is `<ledger_name>-shard-<k>`).
    pub ledger: String,
    /// Its chain fields.
    pub anchor: ChainAnchor,
}

impl Scope {
    /// The scope of a run from its summary row: its ledger, and every chain it (or, for a
    /// sharded watch, each of its shards) did not find intact.
    pub fn of_summary(summary: &SummaryRow) -> Self {
        let own = std::iter::once((&summary.ledger_name, &summary.chain));
        let shards = summary
            .shards
            .iter()
            .flatten()
            .map(|shard| (&shard.ledger_name, &shard.chain));
        Scope {
            ledger: Some(summary.ledger_name.clone()).filter(|name| !name.is_empty()),
            chains: own
                .chain(shards)
                .filter(|(_, anchor)| anchor.is_not_intact())
                .map(|(ledger, anchor)| LedgerChain {
                    ledger: ledger.clone(),
                    anchor: anchor.clone(),
                })
                .collect(),
        }
    }

    /// `runs[0].automationDetails.id`: `mcp-surface-ledger/<ledger>/` for a run's log,
    /// `mcp-surface-ledger/` for `diff`. Code scanning takes what precedes the last `/` as the
    /// category, so the logs of two ledgers uploaded to one repository never close each
    /// other's alerts.
    pub fn automation_id(&self) -> String {
        match &self.ledger {
            Some(ledger) => format!("{ARTIFACT_ROOT}/{}/", file_segment(ledger)),
            None => format!("{ARTIFACT_ROOT}/"),
        }
    }
}

/// The SARIF log of these changes, as pretty-printed JSON.
pub fn render(gate: &Gate<'_>, scope: &Scope) -> String {
    let mut text = serde_json::to_string_pretty(&log(gate, scope)).unwrap_or_default();
    text.push('\n');
    text
}

/// The SARIF log in at most `limit` bytes (compact JSON) with the default [`Scope`] (no
/// ledger named, no chain result); a run's log comes from [`render_scoped_within`].
pub fn render_within(gate: &Gate<'_>, limit: usize) -> Vec<u8> {
    render_scoped_within(gate, &Scope::default(), limit)
}

/// The SARIF log in at most `limit` bytes (compact JSON): when every result does not fit, the
/// last change results are left out and the run's `results_omitted` property says how many
/// (chain results are few and always kept).
pub fn render_scoped_within(gate: &Gate<'_>, scope: &Scope, limit: usize) -> Vec<u8> {
    let mut kept = gate.changes.len();
    loop {
        let mut value = log(
            &Gate {
                changes: &gate.changes[..kept],
                ..*gate
            },
            scope,
        );
        if kept < gate.changes.len() {
            value["runs"][0]["properties"]["results_omitted"] = json!(gate.changes.len() - kept);
            value["runs"][0]["properties"]["changes_total"] = json!(gate.changes.len());
        }
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        if bytes.len() <= limit || kept == 0 {
            return bytes;
        }
        // Each try drops at least a tenth of what is left, so this ends after a few rounds.
        let over = bytes.len() - limit;
        let per_result = bytes.len() / kept.max(1);
        kept = kept.saturating_sub((over / per_result.max(1) + 1).max(kept / 10));
    }
}

/// The SARIF log of these changes, as a JSON value.
pub fn log(gate: &Gate<'_>, scope: &Scope) -> Value {
    let fail_on = serde_json::to_value(gate.fail_on).unwrap_or(Value::Null);
    let exit_code = i32::from(gate.tripped);
    let mut rules: Vec<Value> = ChangeClass::ALL.iter().map(|c| rule(*c)).collect();
    rules.push(chain_rule());
    let results: Vec<Value> = scope
        .chains
        .iter()
        .map(chain_result)
        .chain(gate.changes.iter().map(result))
        .collect();
    let mut properties = json!({
        "fail_on": fail_on,
        "gate_tripped": gate.tripped,
        "exit_code": exit_code,
        "changes_total": gate.changes.len(),
    });
    if let Some(ledger) = &scope.ledger {
        properties["ledger_name"] = json!(ledger);
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": env!("CARGO_PKG_NAME"),
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }},
            "automationDetails": {"id": scope.automation_id()},
            "invocations": [{
                "executionSuccessful": true,
                "exitCode": exit_code,
                "properties": {"fail_on": fail_on, "gate_tripped": gate.tripped},
            }],
            "results": results,
            "properties": properties,
        }],
    })
}

/// The SARIF level of a change: `error` when it is high severity or breaks callers, else
/// `warning` for medium and `note` for low severity.
pub fn level(change: &ChangeRow) -> &'static str {
    if change.compatibility == Some(Compatibility::Breaking) {
        return "error";
    }
    match change.severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// The SARIF level of a chain status: `error` for `broken`, `warning` for any other status
/// that is not `new` or `intact` (`adopted`, `unwitnessed`, and whatever a later build adds).
pub fn chain_level(status: &str) -> &'static str {
    if status == "broken" {
        "error"
    } else {
        "warning"
    }
}

/// The JSON pointer of a change inside the server's surface: `/tools/<name>/<field path>` for a
/// tool (the tool itself for an addition or removal), `/prompts/<name>/…` (or `resources`,
/// `resourceTemplates`) for a declared item, `/<field path>` for the server.
pub fn pointer(change: &ChangeRow) -> String {
    if let Some(pointer) = crate::diff::declared::item_pointer(&change.field) {
        return pointer;
    }
    let mut pointer = String::new();
    if let Some(tool) = &change.tool_name {
        pointer.push_str("/tools/");
        pointer.push_str(&pointer_segment(tool));
        if change.field == "tool" {
            return pointer;
        }
    }
    for segment in change.field.split('.').filter(|s| !s.is_empty()) {
        pointer.push('/');
        pointer.push_str(&pointer_segment(segment));
    }
    pointer
}

/// The path, relative to a repository's root, under which code scanning files the results of
/// one server: `mcp-surface-ledger/<host>/<path>.json`. `<host>` is the URL's host, with
/// `_<port>` when the URL names a port that is not the scheme's default; `<path>` is the URL's
/// path (and query) without its outer slashes, `/` written as `_`, `_root` when empty; an
/// entry's view after `#` (`#authenticated`) is added as `.<view>`. Characters other than
/// ASCII letters, digits, `.`, `_` and `-` become `-`. A label that is no URL (a `diff` side
/// read from a file or stdin) gives `mcp-surface-ledger/local/<file name>.json`. The path
/// depends on the server alone, so it is the same in every run, ledger and shard, and a
/// repository can keep the server's snapshot there.
pub fn artifact_path(server: &str) -> String {
    let (dir, stem) = match url::Url::parse(server) {
        Ok(url) if url.host_str().is_some() => {
            let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']);
            let dir = match url.port() {
                Some(port) => format!("{host}_{port}"),
                None => host.to_string(),
            };
            let mut stem = url.path().trim_matches('/').replace('/', "_");
            if let Some(query) = url.query() {
                stem.push('_');
                stem.push_str(query);
            }
            if stem.is_empty() {
                stem.push_str("_root");
            }
            if let Some(view) = url.fragment() {
                stem.push('.');
                stem.push_str(view);
            }
            (dir, stem)
        }
        _ => {
            let name = server.rsplit(['/', '\\']).next().unwrap_or(server);
            let name = name.strip_suffix(".json").unwrap_or(name);
            ("local".to_string(), name.to_string())
        }
    };
    format!(
        "{ARTIFACT_ROOT}/{}/{}.json",
        file_segment(&dir),
        file_segment(&stem)
    )
}

/// The path under which code scanning files a ledger's own results (its chain):
/// `mcp-surface-ledger/<ledger>.ledger.json`, beside the servers' directories.
pub fn ledger_artifact_path(ledger: &str) -> String {
    format!("{ARTIFACT_ROOT}/{}.ledger.json", file_segment(ledger))
}

/// One segment of a repository path: ASCII letters, digits, `.`, `_` and `-` kept, anything
/// else `-`; never empty, never starting with `.` (no hidden file, no `..`), at most 120
/// characters (a longer one keeps its first 100 and a digest of the whole).
fn file_segment(text: &str) -> String {
    let mut segment: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if segment.is_empty() || segment.starts_with('.') {
        segment.insert(0, '_');
    }
    if segment.len() > 120 {
        let digest = hash_value(&json!(text));
        let digest = digest.rsplit(':').next().unwrap_or(&digest);
        segment.truncate(100);
        segment.push('-');
        segment.push_str(&digest[..digest.len().min(16)]);
    }
    segment
}

/// A location in a repository file, at its first line (a remote surface has no line numbers).
fn physical_location(path: &str) -> Value {
    json!({
        "artifactLocation": {"uri": path},
        "region": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 2},
    })
}

fn result(change: &ChangeRow) -> Value {
    let class = change.change_class;
    let index = ChangeClass::ALL.iter().position(|c| *c == class);
    let pointer = pointer(change);
    let server = escape_invisible(&change.server_url);
    let mut locations = vec![json!({
        "name": server, "fullyQualifiedName": server, "kind": "module",
    })];
    let subject = match &change.tool_name {
        Some(tool) => {
            let tool = escape_invisible(tool);
            locations.push(json!({
                "name": tool, "fullyQualifiedName": format!("{server}#/tools/{tool}"),
                "kind": "function",
            }));
            format!("tool \"{tool}\"")
        }
        None => "the server".to_string(),
    };
    locations.push(json!({
        "name": pointer, "fullyQualifiedName": format!("{server}#{pointer}"), "kind": "member",
    }));
    let what = if change.field == "tool" {
        subject
    } else {
        format!("{} of {subject}", change.field)
    };
    let breaking = if change.compatibility == Some(Compatibility::Breaking) {
        ", breaking"
    } else {
        ""
    };
    let mut text = format!(
        "{}: {what} on {server} ({} severity{breaking})",
        class.as_str(),
        change.severity.as_str()
    );
    if let Some(first) = change.details.first() {
        text.push_str(": ");
        text.push_str(&escape_invisible(first));
    }
    json!({
        "ruleId": class.as_str(),
        "ruleIndex": index,
        "level": level(change),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": physical_location(&artifact_path(&change.server_url)),
            "logicalLocations": locations,
        }],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(change, &pointer)},
        "properties": properties(change, &pointer),
    })
}

/// The result of a ledger whose chain is not intact: the status and the break in the message.
fn chain_result(chain: &LedgerChain) -> Value {
    let anchor = &chain.anchor;
    let status = anchor.ledger_chain_status.as_deref().unwrap_or("unknown");
    let ledger = escape_invisible(&chain.ledger);
    let mut text = format!("{CHAIN_RULE}: the hash chain of ledger \"{ledger}\" is {status}");
    match &anchor.ledger_chain_break {
        Some(found) => {
            text.push_str(": ");
            text.push_str(&escape_invisible(found));
        }
        None if status == "adopted" => {
            text.push_str(": the ledger had no chain and was taken as the chain's start")
        }
        None => {}
    }
    let fingerprint = hash_value(&json!([
        chain.ledger,
        status,
        anchor.ledger_chain_break,
        anchor.ledger_chain_prev_head,
    ]));
    json!({
        "ruleId": CHAIN_RULE,
        "ruleIndex": ChangeClass::ALL.len(),
        "level": chain_level(status),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": physical_location(&ledger_artifact_path(&chain.ledger)),
            "logicalLocations": [{
                "name": ledger,
                "fullyQualifiedName": format!("{}/{ledger}", crate::platform::LEDGER_STORE_NAME),
                "kind": "resource",
            }],
        }],
        "partialFingerprints": {CHAIN_FINGERPRINT_KEY: fingerprint},
        "properties": {
            "ledger_name": chain.ledger,
            "ledger_chain_status": status,
            "ledger_chain_break": anchor.ledger_chain_break,
            "ledger_chain_seq": anchor.ledger_chain_seq,
            "ledger_chain_head": anchor.ledger_chain_head,
            "ledger_chain_prev_head": anchor.ledger_chain_prev_head,
        },
    })
}

/// Stays the same when the same change of the same server is reported again.
fn fingerprint(change: &ChangeRow, pointer: &str) -> String {
    hash_value(&json!([
        change.server_url,
        change.change_class.as_str(),
        pointer,
        change.old_value_hash,
        change.new_value_hash,
    ]))
}

fn properties(change: &ChangeRow, pointer: &str) -> Value {
    let mut map = Map::new();
    map.insert("server_url".into(), json!(change.server_url));
    map.insert("tool_name".into(), json!(change.tool_name));
    map.insert("field".into(), json!(change.field));
    map.insert("json_pointer".into(), json!(pointer));
    map.insert("severity".into(), json!(change.severity));
    map.insert("compatibility".into(), json!(change.compatibility));
    map.insert("details".into(), json!(change.details));
    map.insert("same_version".into(), json!(change.same_version));
    map.insert("old_value_hash".into(), json!(change.old_value_hash));
    map.insert("new_value_hash".into(), json!(change.new_value_hash));
    map.insert("renamed_to".into(), json!(change.renamed_to));
    map.insert("renamed_from".into(), json!(change.renamed_from));
    map.insert("observed_at".into(), json!(change.observed_at));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Change;
    use crate::report::ShardOutcome;
    use chrono::Utc;

    fn row(class: ChangeClass, tool: Option<&str>, field: &str, severity: Severity) -> ChangeRow {
        let change = Change::new(class, tool, field, None, Some(json!(1)), severity);
        ChangeRow::of("https://mcp.example.com/mcp", &change, Utc::now())
    }

    #[test]
    fn levels_follow_severity_and_a_break_is_an_error() {
        for (severity, compatibility, expected) in [
            (Severity::High, None, "error"),
            (Severity::Medium, None, "warning"),
            (Severity::Low, None, "note"),
            (Severity::Low, Some(Compatibility::Breaking), "error"),
            (Severity::Medium, Some(Compatibility::Breaking), "error"),
            (Severity::Medium, Some(Compatibility::Additive), "warning"),
        ] {
            let mut change = row(
                ChangeClass::InputSchemaChanged,
                Some("t"),
                "inputSchema",
                severity,
            );
            change.compatibility = compatibility;
            assert_eq!(level(&change), expected, "{severity:?} {compatibility:?}");
        }
    }

    fn anchor(status: &str, found: Option<&str>) -> ChainAnchor {
        ChainAnchor {
            ledger_chain_status: Some(status.to_string()),
            ledger_chain_break: found.map(str::to_string),
            ledger_chain_seq: Some(4),
            ..ChainAnchor::default()
        }
    }

    fn summary(ledger: &str, chain: ChainAnchor) -> SummaryRow {
        let mut summary = SummaryRow::tally(&[], &[]);
        summary.ledger_name = ledger.to_string();
        summary.chain = chain;
        summary
    }

    #[test]
    fn a_breaking_change_is_an_error_filed_under_its_servers_artifact_path() {
        let mut breaking = row(
            ChangeClass::InputSchemaChanged,
            Some("t"),
            "inputSchema",
            Severity::Medium,
        );
        breaking.compatibility = Some(Compatibility::Breaking);
        let scope = Scope::of_summary(&summary("fleet", anchor("intact", None)));
        assert!(scope.chains.is_empty());
        let log = log(
            &Gate {
                fail_on: FailOn::Breaking,
                tripped: true,
                changes: std::slice::from_ref(&breaking),
            },
            &scope,
        );
        let run = &log["runs"][0];
        assert_eq!(run["automationDetails"]["id"], "mcp-surface-ledger/fleet/");
        assert_eq!(run["tool"]["driver"]["informationUri"], INFORMATION_URI);
        let result = &run["results"][0];
        assert_eq!(result["level"], "error");
        let physical = &result["locations"][0]["physicalLocation"];
        assert_eq!(
            physical["artifactLocation"]["uri"],
            "mcp-surface-ledger/mcp.example.com/mcp.json"
        );
        assert_eq!(physical["region"]["startLine"], 1);
        assert_eq!(
            result["locations"][0]["logicalLocations"][1]["name"], "t",
            "the tool stays a logical location"
        );
        assert!(
            result["message"]["text"]
                .as_str()
                .unwrap()
                .contains("breaking")
        );
    }

    #[test]
    fn a_chain_not_intact_is_one_result_and_broken_is_an_error() {
        let gate = Gate {
            fail_on: FailOn::Never,
            tripped: false,
            changes: &[],
        };
        for (status, expected) in [
            ("broken", Some("error")),
            ("adopted", Some("warning")),
            ("unwitnessed", Some("warning")),
            ("new", None),
            ("intact", None),
        ] {
            let found = "index: the head does not match its content";
            let scope = Scope::of_summary(&summary("fleet", anchor(status, Some(found))));
            let log = log(&gate, &scope);
            let results = log["runs"][0]["results"].as_array().unwrap();
            let Some(expected) = expected else {
                assert!(results.is_empty(), "{status}");
                continue;
            };
            assert_eq!(results.len(), 1, "{status}");
            let result = &results[0];
            assert_eq!(result["ruleId"], CHAIN_RULE);
            assert_eq!(result["level"], expected, "{status}");
            let rules = log["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap();
            assert_eq!(
                rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"],
                CHAIN_RULE
            );
            let text = result["message"]["text"].as_str().unwrap();
            assert!(text.contains(status) && text.contains(found), "{text}");
            assert_eq!(
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                "mcp-surface-ledger/fleet.ledger.json"
            );
        }
    }

    #[test]
    fn each_shard_not_intact_gives_a_result_naming_its_ledger() {
        let mut watch = summary("fleet", ChainAnchor::default());
        let shard = |k: usize, chain: ChainAnchor| ShardOutcome {
            shard: k,
            ledger_name: format!("fleet-shard-{k}"),
            servers: 1,
            status: "succeeded".into(),
            run_id: None,
            dataset_id: None,
            error: None,
            chain,
        };
        watch.shards = Some(vec![
            shard(1, anchor("intact", None)),
            shard(2, anchor("broken", Some("server x: item 3 was edited"))),
            shard(3, ChainAnchor::default()),
            shard(4, anchor("unwitnessed", None)),
        ]);
        let scope = Scope::of_summary(&watch);
        let ledgers: Vec<&str> = scope.chains.iter().map(|c| c.ledger.as_str()).collect();
        assert_eq!(ledgers, ["fleet-shard-2", "fleet-shard-4"]);
        let rows = [row(
            ChangeClass::ToolAdded,
            Some("x"),
            "tool",
            Severity::Low,
        )];
        let log = log(
            &Gate {
                fail_on: FailOn::Never,
                tripped: false,
                changes: &rows,
            },
            &scope,
        );
        let results = log["runs"][0]["results"].as_array().unwrap();
        let levels: Vec<&str> = results
            .iter()
            .map(|r| r["level"].as_str().unwrap())
            .collect();
        assert_eq!(levels, ["error", "warning", "note"]);
        assert_eq!(results[0]["properties"]["ledger_name"], "fleet-shard-2");
        assert_eq!(
            log["runs"][0]["automationDetails"]["id"],
            "mcp-surface-ledger/fleet/"
        );
    }

    #[test]
    fn artifact_paths_are_stable_relative_file_paths() {
        let table = [
            ("https://mcp.example.com/mcp", "mcp.example.com/mcp.json"),
            ("https://mcp.example.com/", "mcp.example.com/_root.json"),
            (
                "https://mcp.example.com:443/v1/mcp/",
                "mcp.example.com/v1_mcp.json",
            ),
            ("http://127.0.0.1:8123/mcp", "127.0.0.1_8123/mcp.json"),
            ("http://[::1]:9/mcp", "--1_9/mcp.json"),
            (
                "https://a.example/mcp#authenticated",
                "a.example/mcp.authenticated.json",
            ),
            ("https://a.example/s?k=v w", "a.example/s_k-v-20w.json"),
            ("https://a.example/..", "a.example/_root.json"),
            ("/tmp/x/after.json", "local/after.json"),
            ("-", "local/-.json"),
        ];
        for (server, expected) in table {
            assert_eq!(
                artifact_path(server),
                format!("mcp-surface-ledger/{expected}"),
                "{server}"
            );
        }
        let long = format!("https://a.example/{}", "p".repeat(300));
        let path = artifact_path(&long);
        assert!(path.len() < 160 && path == artifact_path(&long), "{path}");
        assert_eq!(file_segment(".."), "_..");
        assert_eq!(
            ledger_artifact_path("fleet-shard-2"),
            "mcp-surface-ledger/fleet-shard-2.ledger.json"
        );
        assert_eq!(
            Scope::default().automation_id(),
            "mcp-surface-ledger/",
            "diff names no ledger"
        );
    }

    #[test]
    fn every_rule_links_its_help_to_the_readme() {
        let log = log(
            &Gate {
                fail_on: FailOn::Never,
                tripped: false,
                changes: &[],
            },
            &Scope::default(),
        );
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        assert_eq!(rules.len(), ChangeClass::ALL.len() + 1);
        for rule in rules {
            assert_eq!(rule["helpUri"], help_uri());
            assert!(help_uri().ends_with("#sarif-for-code-scanning-tools"));
            let markdown = rule["help"]["markdown"].as_str().unwrap();
            assert!(markdown.contains(&help_uri()), "{markdown}");
            assert!(rule["help"]["text"].is_string());
        }
    }

    #[test]
    fn pointers_name_the_tool_and_the_field() {
        let table = [
            (ChangeClass::ToolAdded, Some("a/b"), "tool", "/tools/a~1b"),
            (
                ChangeClass::InputSchemaChanged,
                Some("t"),
                "inputSchema",
                "/tools/t/inputSchema",
            ),
            (
                ChangeClass::ReadOnlyHintChanged,
                Some("t"),
                "annotations.readOnlyHint",
                "/tools/t/annotations/readOnlyHint",
            ),
            (
                ChangeClass::ServerVersionChanged,
                None,
                "serverInfo.version",
                "/serverInfo/version",
            ),
        ];
        for (class, tool, field, expected) in table {
            assert_eq!(pointer(&row(class, tool, field, Severity::Low)), expected);
        }
    }

    #[test]
    fn one_rule_per_class_and_one_result_per_change() {
        let mut breaking = row(
            ChangeClass::InputSchemaChanged,
            Some("t"),
            "inputSchema",
            Severity::Medium,
        );
        breaking.compatibility = Some(Compatibility::Breaking);
        let rows = [
            row(ChangeClass::ToolAdded, Some("x"), "tool", Severity::High),
            breaking,
        ];
        let log = log(
            &Gate {
                fail_on: FailOn::Breaking,
                tripped: true,
                changes: &rows,
            },
            &Scope::default(),
        );
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), ChangeClass::ALL.len() + 1);
        assert!(rules.iter().all(|r| r["help"]["text"].is_string()));
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[1]["ruleId"], "input_schema_changed");
        assert_eq!(
            rules[results[1]["ruleIndex"].as_u64().unwrap() as usize]["id"],
            "input_schema_changed"
        );
        assert_eq!(results[0]["level"], "error");
        assert_eq!(
            results[1]["level"], "error",
            "a breaking change is an error"
        );
        assert_eq!(results[1]["properties"]["compatibility"], "breaking");
        let names: Vec<&str> = results[1]["locations"][0]["logicalLocations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["https://mcp.example.com/mcp", "t", "/tools/t/inputSchema"]
        );
        assert_eq!(run["properties"]["fail_on"], "breaking");
        assert_eq!(run["properties"]["gate_tripped"], true);
        assert_eq!(run["invocations"][0]["exitCode"], 1);
    }

    #[test]
    fn a_log_too_large_leaves_out_the_last_results_and_says_so() {
        let rows: Vec<ChangeRow> = (0..200)
            .map(|i| {
                row(
                    ChangeClass::ToolAdded,
                    Some(&format!("t{i}")),
                    "tool",
                    Severity::High,
                )
            })
            .collect();
        let gate = Gate {
            fail_on: FailOn::Any,
            tripped: true,
            changes: &rows,
        };
        let whole = render_within(&gate, usize::MAX);
        let limit = whole.len() / 2;
        let cut: Value = serde_json::from_slice(&render_within(&gate, limit)).unwrap();
        let run = &cut["runs"][0];
        let kept = run["results"].as_array().unwrap().len();
        assert!(kept > 0 && kept < 200, "{kept}");
        assert_eq!(run["properties"]["results_omitted"], 200 - kept);
        assert_eq!(run["properties"]["changes_total"], 200);
        assert!(serde_json::to_vec(&cut).unwrap().len() <= limit);
        assert_eq!(run["results"][0]["properties"]["tool_name"], "t0");
    }

    #[test]
    fn fingerprints_are_stable_and_tell_changes_apart() {
        let a = row(ChangeClass::ToolAdded, Some("x"), "tool", Severity::High);
        let b = row(ChangeClass::ToolAdded, Some("y"), "tool", Severity::High);
        assert_eq!(
            fingerprint(&a, &pointer(&a)),
            fingerprint(&a.clone(), &pointer(&a))
        );
        assert_ne!(fingerprint(&a, &pointer(&a)), fingerprint(&b, &pointer(&b)));
    }

    #[test]
    fn server_text_cannot_hide_in_messages() {
        let mut change = row(
            ChangeClass::ToolAdded,
            Some("x\u{202e}y"),
            "tool",
            Severity::High,
        );
        change.server_url = "https://a.example/\u{1b}[31m".into();
        let log = log(
            &Gate {
                fail_on: FailOn::Never,
                tripped: false,
                changes: std::slice::from_ref(&change),
            },
            &Scope::default(),
        );
        let text = log["runs"][0]["results"][0]["message"]["text"]
            .as_str()
            .unwrap();
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text}"
        );
    }
}
