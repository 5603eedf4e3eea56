//! The comparison of two sides: the change rows between them, and the `--fail-on` gate.
//!
//! The changes come from [`crate::changes::between`], the function the Actor run uses, and
//! become rows through [`ChangeRow::of`], so `diff` prints exactly the records a run would
//! write for the same two surfaces. Pure: no I/O (the `serve` API answers with it too).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::snapshot::Snapshot;
use super::source::Side;
use crate::changes;
use crate::gate::FailOn;
use crate::reason::ReasonCode;
use crate::report::{ChangeRow, LedgerStatus, ServerRow, SummaryRow};
use crate::risk::Risk;
use crate::surface::DIGEST_ALGORITHM;

/// The result of comparing two sides.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// How the older side is named.
    pub before: String,
    /// How the newer side is named (the `server_url` of the change rows).
    pub after: String,
    /// The gate level applied.
    pub fail_on: FailOn,
    /// Whether a change reached the gate level.
    pub gate_tripped: bool,
    /// A server row describing the newer side.
    pub server: ServerRow,
    /// The newer side's declared risk.
    pub risk: Risk,
    /// The newer side's risk under the protocol's defaults for omitted hints.
    pub assumed_risk: Risk,
    /// Counts over the change rows.
    pub summary: SummaryRow,
    /// The change rows, in the engine's order.
    pub changes: Vec<ChangeRow>,
}

/// The JSON document `diff --format json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct DiffDocument<'a> {
    /// Always `"diff"`.
    pub record_type: &'static str,
    /// The older side.
    pub before: &'a str,
    /// The newer side.
    pub after: &'a str,
    /// The gate level applied.
    pub fail_on: FailOn,
    /// Whether the gate tripped (exit code 1).
    pub gate_tripped: bool,
    /// Number of change rows.
    pub changes_total: usize,
    /// Change rows per class.
    pub changes_by_class: &'a BTreeMap<String, usize>,
    /// Change rows per severity.
    pub changes_by_severity: &'a BTreeMap<String, usize>,
    /// The change rows, exactly as the Actor run writes them.
    pub changes: &'a [ChangeRow],
}

impl Comparison {
    /// The JSON document of this comparison.
    pub fn document(&self) -> DiffDocument<'_> {
        DiffDocument {
            record_type: "diff",
            before: &self.before,
            after: &self.after,
            fail_on: self.fail_on,
            gate_tripped: self.gate_tripped,
            changes_total: self.changes.len(),
            changes_by_class: &self.summary.changes_by_class,
            changes_by_severity: &self.summary.changes_by_severity,
            changes: &self.changes,
        }
    }
}

/// Compares two sides (pure: no I/O).
pub fn compare(
    before: &Side,
    after: &Side,
    fail_on: FailOn,
    observed_at: DateTime<Utc>,
) -> Comparison {
    let found = changes::between(&before.surface, &after.surface).changes;
    let gate_tripped = fail_on.is_tripped_by_any(&found);
    let rows: Vec<ChangeRow> = found
        .iter()
        .map(|change| ChangeRow::of(&after.label, change, observed_at))
        .collect();
    let described = Snapshot::describe(&after.label, &after.surface, None, observed_at);
    let server = server_row(before, after, rows.len(), observed_at);
    let mut summary = SummaryRow::tally(std::slice::from_ref(&server), &rows);
    summary.observed_at = observed_at;
    Comparison {
        before: before.label.clone(),
        after: after.label.clone(),
        fail_on,
        gate_tripped,
        server,
        risk: described.risk,
        assumed_risk: described.assumed_risk,
        summary,
        changes: rows,
    }
}

/// A server row for the newer side, shaped like the Actor's row of a compared server.
fn server_row(
    before: &Side,
    after: &Side,
    change_count: usize,
    observed_at: DateTime<Utc>,
) -> ServerRow {
    let snapshot_text = |key: &str| {
        after
            .snapshot
            .as_ref()
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let digest = after.surface.tool_digest();
    let previous = before.surface.tool_digest();
    ServerRow {
        record_type: "server",
        server_url: after.label.clone(),
        final_url: snapshot_text("final_url"),
        ok: true,
        reason_code: Some(ReasonCode::Ok),
        transport: snapshot_text("transport"),
        protocol_version: snapshot_text("protocol_version")
            .or_else(|| after.surface.identity.protocol_version.clone()),
        protocol_era: snapshot_text("protocol_era"),
        server_name: after.surface.identity.name.clone(),
        server_version: after.surface.identity.version.clone(),
        tools_total: Some(after.surface.tools.len()),
        digest_changed: digest != previous,
        tool_digest: Some(digest),
        previous_tool_digest: Some(previous),
        ledger_status: Some(LedgerStatus::Compared),
        change_count,
        digest_algorithm: DIGEST_ALGORITHM,
        observed_at: Some(observed_at),
        ..ServerRow::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::source::side_of_value;
    use crate::diff::ChangeClass;
    use serde_json::json;

    fn side(label: &str, version: &str, tools: Value) -> Side {
        side_of_value(
            label.into(),
            json!({"snapshot_format": crate::cli::snapshot::SNAPSHOT_FORMAT,
                   "server": {"name": "s", "version": version}, "tools": tools,
                   "transport": "streamable-http", "protocol_version": "2025-11-25"}),
        )
        .unwrap()
    }

    fn tool(name: &str, required: &[&str]) -> Value {
        json!({"name": name, "definition": {"name": name, "description": "d",
               "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                               "required": required}}})
    }

    #[test]
    fn rows_are_the_engine_changes_named_after_the_newer_side() {
        let before = side(
            "old.json",
            "1",
            json!([tool("keep", &[]), tool("gone", &[])]),
        );
        let after = side("new.json", "2", json!([tool("keep", &["a"])]));
        let comparison = compare(&before, &after, FailOn::Never, Utc::now());
        let expected = changes::between(&before.surface, &after.surface).changes;
        assert_eq!(comparison.changes.len(), expected.len());
        for (row, change) in comparison.changes.iter().zip(&expected) {
            assert_eq!(row.server_url, "new.json");
            assert_eq!(row.change_class, change.change_class);
            assert_eq!(row.tool_name, change.tool_name);
            assert_eq!(row.old_value, change.old_value);
        }
        let classes: Vec<ChangeClass> = comparison.changes.iter().map(|c| c.change_class).collect();
        assert!(classes.contains(&ChangeClass::ServerVersionChanged));
        assert!(classes.contains(&ChangeClass::ToolRemoved));
        assert!(classes.contains(&ChangeClass::InputSchemaChanged));
        assert_eq!(comparison.server.change_count, expected.len());
        assert_eq!(
            comparison.server.transport.as_deref(),
            Some("streamable-http")
        );
        assert_eq!(comparison.summary.changes_total, expected.len());
        assert!(!comparison.gate_tripped);
    }

    #[test]
    fn the_gate_follows_fail_on() {
        let before = side("a", "1", json!([tool("keep", &[]), tool("gone", &[])]));
        // A version bump keeps severities as they are (same-version changes are raised).
        let after = side("b", "2", json!([tool("keep", &[])]));
        let table = [
            (FailOn::Never, false),
            (FailOn::Any, true),
            (FailOn::Medium, true),
            (FailOn::High, false),
            (FailOn::Breaking, true),
        ];
        for (level, tripped) in table {
            assert_eq!(
                compare(&before, &after, level, Utc::now()).gate_tripped,
                tripped,
                "{level:?}"
            );
        }
        let same = compare(&before, &before, FailOn::Any, Utc::now());
        assert!(same.changes.is_empty());
        assert!(!same.gate_tripped);
    }
}
