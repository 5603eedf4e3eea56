//! Annotation consistency and schema quality: hints (read with their defaults, see
//! [`super::hints`]) set against the capabilities the tool's words show.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capability::{Capability, Evidence};
use super::hints::EffectiveHints;
use super::{Finding, Risk, kind, pointer_segment};

/// Counts of a tool's input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SchemaSummary {
    /// Top-level properties.
    pub properties: usize,
    /// Names listed in `required`.
    pub required: usize,
    /// Top-level properties with a non-empty description.
    pub described_properties: usize,
    /// `additionalProperties: false`: the tool accepts nothing it did not declare.
    pub closed: bool,
}

impl SchemaSummary {
    /// Summarizes `tool.inputSchema`; a missing or non-object schema counts as empty and open.
    pub fn of(tool: &Value) -> SchemaSummary {
        let schema = tool.get("inputSchema");
        let properties = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        SchemaSummary {
            properties: properties.map_or(0, |p| p.len()),
            required: schema
                .and_then(|s| s.get("required"))
                .and_then(Value::as_array)
                .map_or(0, |r| r.iter().filter(|v| v.is_string()).count()),
            described_properties: properties.map_or(0, |p| {
                p.values().filter(|v| has_text(v, "description")).count()
            }),
            closed: schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false)),
        }
    }
}

fn has_text(value: &Value, key: &str) -> bool {
    value
        .get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

/// Hints that contradict what the tool's words say it does, and missing annotations.
pub fn annotation_findings(
    tool: &Value,
    hints: &EffectiveHints,
    evidence: &[Evidence],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if !hints.declared {
        findings.push(finding(
            kind::MISSING_ANNOTATIONS,
            "missing_annotations",
            "/annotations",
            "no readOnlyHint, destructiveHint, idempotentHint or openWorldHint".to_string(),
            Risk::Low,
        ));
    }
    let verb_evidence = |capability: Capability| {
        evidence.iter().find(|e| {
            e.capability == capability
                && !e.evidence.starts_with("description")
                && !e.evidence.starts_with("annotation")
        })
    };
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut contradiction =
        |pattern: &str, pointer: &str, capability: Capability, severity: Risk| {
            if let Some(e) = verb_evidence(capability) {
                findings.push(finding(
                    kind::ANNOTATION_INCONSISTENCY,
                    pattern,
                    pointer,
                    format!("{name}: {}", e.evidence),
                    severity,
                ));
            }
        };
    if hints.read_only {
        contradiction(
            "read_only_but_deletes",
            "/annotations/readOnlyHint",
            Capability::Delete,
            Risk::High,
        );
        contradiction(
            "read_only_but_executes",
            "/annotations/readOnlyHint",
            Capability::Execute,
            Risk::Medium,
        );
        contradiction(
            "read_only_but_writes",
            "/annotations/readOnlyHint",
            Capability::Write,
            Risk::Medium,
        );
    } else if !hints.destructive {
        contradiction(
            "non_destructive_but_deletes",
            "/annotations/destructiveHint",
            Capability::Delete,
            Risk::Medium,
        );
    }
    if !hints.open_world {
        contradiction(
            "closed_world_but_network",
            "/annotations/openWorldHint",
            Capability::Network,
            Risk::Low,
        );
    }
    findings
}

/// Missing tool description, missing input schema, undocumented top-level properties.
pub fn schema_findings(tool: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    if !has_text(tool, "description") {
        findings.push(finding(
            kind::MISSING_DESCRIPTION,
            "missing_description",
            "/description",
            String::new(),
            Risk::Low,
        ));
    }
    let schema = tool.get("inputSchema");
    if !schema.is_some_and(Value::is_object) {
        findings.push(finding(
            kind::MISSING_INPUT_SCHEMA,
            "missing_input_schema",
            "/inputSchema",
            schema.map_or("absent".to_string(), |s| s.to_string()),
            Risk::Low,
        ));
    }
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        if !has_text(property, "description") {
            findings.push(finding(
                kind::UNDOCUMENTED_PARAMETER,
                "undocumented_parameter",
                &format!("/inputSchema/properties/{}", pointer_segment(name)),
                name.clone(),
                Risk::Low,
            ));
        }
    }
    findings
}

fn finding(kind_: &str, pattern: &str, pointer: &str, excerpt: String, severity: Risk) -> Finding {
    Finding::new(kind_, pattern, pointer, excerpt, severity)
}

#[cfg(test)]
mod tests {
    use super::super::capability;
    use super::*;
    use serde_json::json;

    fn annotation_patterns(tool: Value) -> Vec<String> {
        let hints = EffectiveHints::of(&tool);
        let evidence = capability::infer(&tool, &hints);
        annotation_findings(&tool, &hints, &evidence)
            .into_iter()
            .map(|f| f.pattern)
            .collect()
    }

    #[test]
    fn hints_that_contradict_the_name() {
        let cases: &[(Value, &[&str])] = &[
            (
                json!({"name": "delete_repository", "annotations": {"readOnlyHint": true}}),
                &["read_only_but_deletes"],
            ),
            (
                json!({"name": "run_query", "annotations": {"readOnlyHint": true}}),
                &["read_only_but_executes"],
            ),
            (
                json!({"name": "create_issue", "annotations": {"readOnlyHint": true}}),
                &["read_only_but_writes"],
            ),
            (
                json!({"name": "remove_user", "annotations": {"destructiveHint": false}}),
                &["non_destructive_but_deletes"],
            ),
            (
                json!({"name": "fetch_url", "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
                &["closed_world_but_network"],
            ),
            (
                json!({"name": "get_issue", "annotations": {"readOnlyHint": true}}),
                &[],
            ),
            (
                json!({"name": "delete_file", "annotations": {"destructiveHint": true}}),
                &[],
            ),
            (json!({"name": "get_issue"}), &["missing_annotations"]),
            (
                json!({"name": "get_issue", "annotations": {"title": "Get issue"}}),
                &["missing_annotations"],
            ),
        ];
        for (tool, expected) in cases {
            assert_eq!(annotation_patterns(tool.clone()), *expected, "tool {tool}");
        }
    }

    #[test]
    fn description_words_do_not_make_a_contradiction() {
        let tool = json!({"name": "get_history", "description": "Shows deleted and removed items", "annotations": {"readOnlyHint": true}});
        assert!(annotation_patterns(tool).is_empty());
    }

    #[test]
    fn summarizes_the_input_schema() {
        let tool = json!({"inputSchema": {
            "type": "object",
            "properties": {"a": {"description": "A"}, "b": {"description": "  "}, "c": {}},
            "required": ["a", "b", 3],
            "additionalProperties": false
        }});
        assert_eq!(
            SchemaSummary::of(&tool),
            SchemaSummary {
                properties: 3,
                required: 2,
                described_properties: 1,
                closed: true
            }
        );
        assert_eq!(
            SchemaSummary::of(&json!({"inputSchema": null})),
            SchemaSummary::default()
        );
        assert!(!SchemaSummary::of(&json!({"inputSchema": {"additionalProperties": {}}})).closed);
    }

    #[test]
    fn schema_quality_findings() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a/b": {"type": "string"}, "c": {"description": "C"}}}});
        let found: Vec<(String, String)> = schema_findings(&tool)
            .into_iter()
            .map(|f| (f.kind, f.pointer))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "missing_description".to_string(),
                    "/description".to_string()
                ),
                (
                    "undocumented_parameter".to_string(),
                    "/inputSchema/properties/a~1b".to_string()
                ),
            ]
        );
        let no_schema: Vec<String> = schema_findings(&json!({"name": "t", "description": "d"}))
            .into_iter()
            .map(|f| f.kind)
            .collect();
        assert_eq!(no_schema, ["missing_input_schema"]);
    }
}
