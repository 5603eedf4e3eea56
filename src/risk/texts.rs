//! Every text of a definition that reaches the model, with its JSON pointer.
//!
//! Poison hides wherever a client forwards text: not only the description, but parameter names
//! and descriptions at any depth, enum values, defaults, examples, titles and `_meta`. Schema
//! keywords that only carry structure (`type`, `$ref`, `required`, `format`, `pattern`) are left
//! out, and so are `icons`, which a client renders but never hands to the model.

use serde_json::Value;

use super::pointer_segment;

/// One text and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// JSON pointer of the string (for a parameter name: of the property).
    pub pointer: String,
    /// The string as served.
    pub text: String,
}

/// Keys of a tool (or prompt, or resource) whose value is a JSON Schema.
const SCHEMA_KEYS: &[&str] = &["inputSchema", "outputSchema"];
/// Top-level keys that carry nothing a model reads.
const SKIPPED_KEYS: &[&str] = &["icons"];
/// Schema keywords that hold sub-schemas keyed by property name.
const NAMED_SUBSCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Schema keywords that hold one sub-schema or an array of them.
const SUBSCHEMAS: &[&str] = &[
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "anyOf",
    "oneOf",
    "allOf",
    "prefixItems",
];
/// Schema keywords whose value is structure, not prose.
const STRUCTURAL: &[&str] = &[
    "type",
    "$schema",
    "$ref",
    "$id",
    "$anchor",
    "$dynamicRef",
    "format",
    "pattern",
    "required",
];

/// The texts of one definition (a tool, a prompt, a resource), pointers relative to it.
pub fn collect(definition: &Value) -> Vec<Text> {
    let mut out = Vec::new();
    match definition {
        Value::Object(map) => {
            for (key, value) in map {
                let pointer = format!("/{}", pointer_segment(key));
                if SKIPPED_KEYS.contains(&key.as_str()) {
                    continue;
                }
                if SCHEMA_KEYS.contains(&key.as_str()) {
                    walk_schema(&pointer, value, &mut out);
                } else {
                    walk_strings(&pointer, value, key == "_meta", &mut out);
                }
            }
        }
        other => walk_strings("", other, false, &mut out),
    }
    out
}

/// Walks a JSON Schema: property names are texts, keyword values are prose or sub-schemas.
fn walk_schema(pointer: &str, schema: &Value, out: &mut Vec<Text>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        let here = format!("{pointer}/{}", pointer_segment(key));
        if NAMED_SUBSCHEMAS.contains(&key.as_str()) {
            if let Value::Object(named) = value {
                for (name, sub) in named {
                    let at = format!("{here}/{}", pointer_segment(name));
                    if key == "properties" {
                        out.push(Text {
                            pointer: at.clone(),
                            text: name.clone(),
                        });
                    }
                    walk_schema(&at, sub, out);
                }
            }
        } else if SUBSCHEMAS.contains(&key.as_str()) {
            match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk_schema(&format!("{here}/{i}"), item, out);
                    }
                }
                other => walk_schema(&here, other, out),
            }
        } else if !STRUCTURAL.contains(&key.as_str()) {
            walk_strings(&here, value, false, out);
        }
    }
}

/// Collects every string under `value`; with `keys`, object keys count as texts too.
fn walk_strings(pointer: &str, value: &Value, keys: bool, out: &mut Vec<Text>) {
    match value {
        Value::String(s) => out.push(Text {
            pointer: pointer.to_string(),
            text: s.clone(),
        }),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_strings(&format!("{pointer}/{i}"), item, keys, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let at = format!("{pointer}/{}", pointer_segment(key));
                if keys {
                    out.push(Text {
                        pointer: at.clone(),
                        text: key.clone(),
                    });
                }
                walk_strings(&at, item, keys, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reaches_every_text_an_agent_reads() {
        let tool = json!({
            "name": "t",
            "title": "T",
            "description": "d",
            "icons": [{"src": "data:image/png;base64,AAAA"}],
            "annotations": {"title": "A", "readOnlyHint": true},
            "inputSchema": {
                "type": "object",
                "required": ["description"],
                "properties": {
                    "description": {"type": "string", "description": "the text"},
                    "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                    "list": {"type": "array", "items": {"anyOf": [
                        {"type": "object", "properties": {"deep": {"description": "nested"}}}
                    ]}}
                }
            },
            "_meta": {"vendor/note": "meta text"}
        });
        let found: Vec<(String, String)> = collect(&tool)
            .into_iter()
            .map(|t| (t.pointer, t.text))
            .collect();
        let expect = [
            ("/name", "t"),
            ("/title", "T"),
            ("/description", "d"),
            ("/annotations/title", "A"),
            ("/inputSchema/properties/description", "description"),
            (
                "/inputSchema/properties/description/description",
                "the text",
            ),
            ("/inputSchema/properties/mode/enum/1", "slow"),
            ("/inputSchema/properties/mode/default", "fast"),
            (
                "/inputSchema/properties/list/items/anyOf/0/properties/deep",
                "deep",
            ),
            (
                "/inputSchema/properties/list/items/anyOf/0/properties/deep/description",
                "nested",
            ),
            ("/_meta/vendor~1note", "vendor/note"),
            ("/_meta/vendor~1note", "meta text"),
        ];
        for (pointer, text) in expect {
            assert!(
                found.iter().any(|(p, t)| p == pointer && t == text),
                "missing {pointer} = {text:?} in {found:?}"
            );
        }
        let structural = ["string", "object", "array", "data:image/png;base64,AAAA"];
        for (_, text) in &found {
            assert!(
                !structural.contains(&text.as_str()),
                "structural text {text:?} collected"
            );
        }
    }
}
