//! The change rows as a SARIF 2.1.0 log, for code-scanning tools and CI dashboards.
//!
//! One run, one rule per change class (all of them, in [`ChangeClass::ALL`] order, each with
//! its help text), one result per change row. A result's level follows the row's severity
//! (high → `error`, medium → `warning`, low → `note`); its location is logical only (there is
//! no source file): the server, the tool, and a JSON pointer into the server's surface. The
//! `--fail-on` level and whether it tripped are the run's `properties` and its invocation's
//! exit code. `docs/core.md` describes the mapping.

use serde_json::{Map, Value, json};

use super::ChangeRow;
use crate::diff::{ChangeClass, Severity};
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

/// The SARIF log of these changes, as pretty-printed JSON.
pub fn render(gate: &Gate<'_>) -> String {
    let mut text = serde_json::to_string_pretty(&log(gate)).unwrap_or_default();
    text.push('\n');
    text
}

/// The SARIF log in at most `limit` bytes (compact JSON): when every result does not fit, the
/// last results are left out and the run's `results_omitted` property says how many.
pub fn render_within(gate: &Gate<'_>, limit: usize) -> Vec<u8> {
    let mut kept = gate.changes.len();
    loop {
        let mut value = log(&Gate {
            changes: &gate.changes[..kept],
            ..*gate
        });
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
pub fn log(gate: &Gate<'_>) -> Value {
    let fail_on = serde_json::to_value(gate.fail_on).unwrap_or(Value::Null);
    let exit_code = i32::from(gate.tripped);
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": env!("CARGO_PKG_NAME"),
                "version": env!("CARGO_PKG_VERSION"),
                "rules": ChangeClass::ALL.iter().map(|c| rule(*c)).collect::<Vec<_>>(),
            }},
            "invocations": [{
                "executionSuccessful": true,
                "exitCode": exit_code,
                "properties": {"fail_on": fail_on, "gate_tripped": gate.tripped},
            }],
            "results": gate.changes.iter().map(result).collect::<Vec<_>>(),
            "properties": {
                "fail_on": fail_on,
                "gate_tripped": gate.tripped,
                "exit_code": exit_code,
                "changes_total": gate.changes.len(),
            },
        }],
    })
}

/// The SARIF level of a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// The rule of one change class: its id is the class's wire name.
fn rule(class: ChangeClass) -> Value {
    let (short, help) = rule_text(class);
    json!({
        "id": class.as_str(),
        "name": pascal_case(class.as_str()),
        "shortDescription": {"text": short},
        "fullDescription": {"text": format!("{short}. {help}")},
        "help": {"text": help},
        "properties": {"tags": ["mcp", "tool-surface"]},
    })
}

/// The short description and the help text of a change class.
fn rule_text(class: ChangeClass) -> (&'static str, &'static str) {
    match class {
        ChangeClass::ToolAdded => (
            "The server offers a new tool",
            "An agent connected to this server can call the new tool from now on. Review what it does and whether agents should have it.",
        ),
        ChangeClass::ToolRemoved => (
            "A tool the server offered is gone",
            "Callers that relied on the tool will fail. If another tool was added at the same time, the result names the likely rename.",
        ),
        ChangeClass::InputSchemaChanged => (
            "A tool's input schema changed",
            "The arguments a caller must send changed. The compatibility property says whether existing calls may now be refused (breaking), and the details name each JSON pointer.",
        ),
        ChangeClass::DestructiveHintChanged => (
            "A tool's effective destructiveHint changed",
            "Clients use this hint to decide whether to ask before a call. A tool that became destructive may now delete or overwrite data.",
        ),
        ChangeClass::AuthRequirementChanged => (
            "The server's authentication requirement changed",
            "The server started or stopped demanding credentials for listing its tools. Check that the change was intended by its operator.",
        ),
        ChangeClass::ReadOnlyHintChanged => (
            "A tool's effective readOnlyHint changed",
            "A tool that no longer claims to be read-only may change state; clients that auto-approve read-only tools should be reviewed.",
        ),
        ChangeClass::OpenWorldHintChanged => (
            "A tool's effective openWorldHint changed",
            "The tool now does (or no longer does) reach beyond a closed set of resources, such as the open web.",
        ),
        ChangeClass::ToolDescriptionChanged => (
            "A tool's description changed",
            "Agents read the description to decide when and how to call the tool; a changed text can change their behavior or carry injected instructions.",
        ),
        ChangeClass::ServerVersionChanged => (
            "The server's version changed",
            "The server reports a new serverInfo.version. Informational; other results of the same run say what else changed.",
        ),
        ChangeClass::OutputSchemaChanged => (
            "A tool's output schema changed",
            "Clients that parse the tool's structured result may break. The compatibility property grades the change.",
        ),
        ChangeClass::ServerInstructionsChanged => (
            "The server's instructions changed",
            "The instructions are given to the model as context; a changed text can steer every agent connected to the server.",
        ),
        ChangeClass::CapabilityAdded => (
            "A tool gained a capability",
            "The tool's definition now suggests a new ability (for example file system, network or code execution). Review whether agents should have it.",
        ),
        ChangeClass::PoisoningMarkerAdded => (
            "A text now carries a tool-poisoning marker",
            "A description or instruction contains text typical of prompt injection (hidden characters, instructions to the model). Treat the server as untrusted until reviewed.",
        ),
        ChangeClass::BaselineLost => (
            "The surface changed while its stored baseline was lost",
            "The stored surface record this server was compared with is gone, and the surface read now differs from the digest the ledger kept. The details name the tools added, removed or changed when the ledger kept per-tool digests; review the server as if every listed tool were new.",
        ),
    }
}

/// `tool_added` → `ToolAdded`.
fn pascal_case(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The JSON pointer of a change inside the server's surface: `/tools/<name>/<field path>` for a
/// tool (the tool itself for an addition or removal), `/<field path>` for the server.
pub fn pointer(change: &ChangeRow) -> String {
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
    let mut text = format!(
        "{}: {what} on {server} ({} severity)",
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
        "level": level(change.severity),
        "message": {"text": text},
        "locations": [{"logicalLocations": locations}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(change, &pointer)},
        "properties": properties(change, &pointer),
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
    use crate::diff::{Change, Compatibility};
    use chrono::Utc;

    fn row(class: ChangeClass, tool: Option<&str>, field: &str, severity: Severity) -> ChangeRow {
        let change = Change::new(class, tool, field, None, Some(json!(1)), severity);
        ChangeRow::of("https://mcp.example.com/mcp", &change, Utc::now())
    }

    #[test]
    fn levels_follow_severity() {
        for (severity, expected) in [
            (Severity::High, "error"),
            (Severity::Medium, "warning"),
            (Severity::Low, "note"),
        ] {
            assert_eq!(level(severity), expected);
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
        let log = log(&Gate {
            fail_on: FailOn::Breaking,
            tripped: true,
            changes: &rows,
        });
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), ChangeClass::ALL.len());
        assert!(rules.iter().all(|r| r["help"]["text"].is_string()));
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[1]["ruleId"], "input_schema_changed");
        assert_eq!(
            rules[results[1]["ruleIndex"].as_u64().unwrap() as usize]["id"],
            "input_schema_changed"
        );
        assert_eq!(results[0]["level"], "error");
        assert_eq!(results[1]["level"], "warning");
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
        let log = log(&Gate {
            fail_on: FailOn::Never,
            tripped: false,
            changes: std::slice::from_ref(&change),
        });
        let text = log["runs"][0]["results"][0]["message"]["text"]
            .as_str()
            .unwrap();
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text}"
        );
    }
}
