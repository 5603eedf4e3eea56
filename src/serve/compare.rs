//! Comparing two documents sent by the caller: the same rows as the `diff` subcommand.
//!
//! Each side is read by [`crate::cli::source::side_of_value`] (a snapshot, a `tools/list`
//! result, a JSON-RPC response or an array of tools) and compared by
//! [`crate::cli::comparison::compare`], so the answer is the document `diff --format json` prints.
//! Only documents are accepted: a URL is never fetched on request.

use std::collections::BTreeMap;

use chrono::Utc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ServeError;
use crate::cli::comparison::compare;
use crate::cli::source::side_of_value;
use crate::gate::FailOn;

/// What `POST /diff` and the `diff_surfaces` tool take.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DiffRequest {
    /// The older side: a `tools/list` result (`{"tools": [...]}`), a JSON-RPC response
    /// carrying one, a bare array of tools, or a snapshot printed by `snapshot`.
    pub before: Value,
    /// The newer side, in any of the same shapes.
    pub after: Value,
    /// The gate level reported in `gate_tripped`: breaking, high, medium, any or never
    /// (default never).
    #[serde(default)]
    pub fail_on: Option<String>,
}

/// The comparison, exactly as `diff --format json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiffView {
    /// Always `diff`.
    pub record_type: String,
    /// How the older side is named (`before`).
    pub before: String,
    /// How the newer side is named (`after`).
    pub after: String,
    /// The gate level applied.
    pub fail_on: String,
    /// Whether a change reached the gate level.
    pub gate_tripped: bool,
    /// Number of change rows.
    pub changes_total: usize,
    /// Change rows per class.
    pub changes_by_class: BTreeMap<String, usize>,
    /// Change rows per severity.
    pub changes_by_severity: BTreeMap<String, usize>,
    /// The change rows, as the Actor run writes them to the dataset.
    pub changes: Vec<Value>,
}

/// Compares the two sides of `request` (pure: no I/O).
pub fn diff(request: DiffRequest) -> Result<DiffView, ServeError> {
    let fail_on = match request.fail_on.as_deref() {
        None => FailOn::Never,
        Some(level) => serde_json::from_value(Value::String(level.to_string())).map_err(|_| {
            ServeError::BadRequest(format!(
                "fail_on {level:?} is not one of breaking, high, medium, any, never"
            ))
        })?,
    };
    let side = |label: &str, value: Value| {
        side_of_value(label.to_string(), value).map_err(|e| ServeError::BadRequest(e.to_string()))
    };
    let before = side("before", request.before)?;
    let after = side("after", request.after)?;
    let comparison = compare(&before, &after, fail_on, Utc::now());
    serde_json::to_value(comparison.document())
        .and_then(serde_json::from_value)
        .map_err(|e| ServeError::BadRequest(format!("cannot encode the comparison: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes;
    use serde_json::json;

    fn tools(required: &[&str]) -> Value {
        json!({"tools": [{"name": "t", "description": "d",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": required}}]})
    }

    #[test]
    fn rows_are_the_ones_the_engine_produces() {
        let request = DiffRequest {
            before: tools(&[]),
            after: tools(&["a"]),
            fail_on: Some("any".into()),
        };
        let view = diff(request).unwrap();
        let old = side_of_value("b".into(), tools(&[])).unwrap();
        let new = side_of_value("a".into(), tools(&["a"])).unwrap();
        let expected = changes::between(&old.surface, &new.surface).changes;
        assert_eq!(view.changes_total, expected.len());
        assert!(!expected.is_empty());
        assert_eq!(
            view.changes[0]["change_class"],
            json!(expected[0].change_class)
        );
        assert_eq!(view.after, "after");
        assert!(view.gate_tripped);
    }

    #[test]
    fn unusable_documents_and_levels_are_bad_requests() {
        let bad = [
            (json!({"nope": 1}), tools(&[]), None),
            (tools(&[]), json!("text"), None),
            (tools(&[]), tools(&[]), Some("severe".to_string())),
        ];
        for (before, after, fail_on) in bad {
            let error = diff(DiffRequest {
                before,
                after,
                fail_on,
            })
            .unwrap_err();
            assert_eq!(error.code(), "bad_request", "{error}");
        }
    }
}
