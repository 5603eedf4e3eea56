//! Every text of a definition that reaches the model, with its JSON pointer.
//!
//! Poison hides wherever a client forwards text: not only the description, but parameter names
//! and descriptions at any depth, enum values, defaults, examples, titles and `_meta`. Schema
//! keywords that only carry structure (`type`, `$ref`, `required`, `format`, `pattern`) are left
//! out, and so are `icons`, which a client renders but never hands to the model.

use std::fmt::Write;

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
    for_each(definition, &mut |pointer, text| {
        out.push(Text {
            pointer: pointer.to_string(),
            text: text.to_string(),
        })
    });
    out
}

/// Calls `visit(pointer, text)` for every text of one definition, in the order [`collect`]
/// lists them, without copying a text or building a pointer per text: the pointer is one
/// buffer that grows and shrinks along the walk.
pub fn for_each(definition: &Value, visit: &mut dyn FnMut(&str, &str)) {
    let mut walk = Walk {
        pointer: String::new(),
        visit,
    };
    match definition {
        Value::Object(map) => {
            for (key, value) in map {
                if SKIPPED_KEYS.contains(&key.as_str()) {
                    continue;
                }
                let mark = walk.enter(key);
                if SCHEMA_KEYS.contains(&key.as_str()) {
                    walk.schema(value);
                } else {
                    walk.strings(value, key == "_meta");
                }
                walk.leave(mark);
            }
        }
        other => walk.strings(other, false),
    }
}

/// The state of one walk: the pointer of the current value and the visitor.
struct Walk<'v> {
    pointer: String,
    visit: &'v mut dyn FnMut(&str, &str),
}

impl Walk<'_> {
    /// Appends `/segment` (escaped) to the pointer; returns the length to go back to.
    fn enter(&mut self, segment: &str) -> usize {
        let mark = self.pointer.len();
        self.pointer.push('/');
        if segment.contains(['~', '/']) {
            self.pointer.push_str(&pointer_segment(segment));
        } else {
            self.pointer.push_str(segment);
        }
        mark
    }

    /// Appends `/index` to the pointer; returns the length to go back to.
    fn enter_index(&mut self, index: usize) -> usize {
        let mark = self.pointer.len();
        // Writing into a String cannot fail.
        let _ = write!(self.pointer, "/{index}");
        mark
    }

    /// Drops what the matching `enter` appended.
    fn leave(&mut self, mark: usize) {
        self.pointer.truncate(mark);
    }

    fn text(&mut self, text: &str) {
        (self.visit)(&self.pointer, text);
    }

    /// Walks a JSON Schema: property names are texts, keyword values are prose or sub-schemas.
    fn schema(&mut self, schema: &Value) {
        let Value::Object(map) = schema else {
            return;
        };
        for (key, value) in map {
            let mark = self.enter(key);
            if NAMED_SUBSCHEMAS.contains(&key.as_str()) {
                if let Value::Object(named) = value {
                    for (name, sub) in named {
                        let named_mark = self.enter(name);
                        if key == "properties" {
                            self.text(name);
                        }
                        self.schema(sub);
                        self.leave(named_mark);
                    }
                }
            } else if SUBSCHEMAS.contains(&key.as_str()) {
                match value {
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let item_mark = self.enter_index(i);
                            self.schema(item);
                            self.leave(item_mark);
                        }
                    }
                    other => self.schema(other),
                }
            } else if !STRUCTURAL.contains(&key.as_str()) {
                self.strings(value, false);
            }
            self.leave(mark);
        }
    }

    /// Visits every string under `value`; with `keys`, object keys count as texts too.
    fn strings(&mut self, value: &Value, keys: bool) {
        match value {
            Value::String(s) => self.text(s),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mark = self.enter_index(i);
                    self.strings(item, keys);
                    self.leave(mark);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let mark = self.enter(key);
                    if keys {
                        self.text(key);
                    }
                    self.strings(item, keys);
                    self.leave(mark);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
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

    #[test]
    fn pointers_are_rebuilt_correctly_after_every_step_back() {
        let values: Vec<String> = (0..12).map(|i| format!("v{i}")).collect();
        let definition = json!({
            "a/b": {"c~d": ["x", {"e": "y"}]},
            "inputSchema": {"properties": {
                "p/q": {"enum": values, "description": "after"},
                "r": {"anyOf": [{"description": "z"}], "title": "t"}
            }},
            "z": "last"
        });
        let mut visited = Vec::new();
        for_each(&definition, &mut |pointer, text| {
            visited.push(format!("{pointer}={text}"));
        });
        let expected = [
            "/a~1b/c~0d/0=x",
            "/a~1b/c~0d/1/e=y",
            "/inputSchema/properties/p~1q=p/q",
            "/inputSchema/properties/p~1q/description=after",
            "/inputSchema/properties/p~1q/enum/0=v0",
            "/inputSchema/properties/p~1q/enum/10=v10",
            "/inputSchema/properties/p~1q/enum/11=v11",
            "/inputSchema/properties/r=r",
            "/inputSchema/properties/r/anyOf/0/description=z",
            "/inputSchema/properties/r/title=t",
            "/z=last",
        ];
        for line in expected {
            assert!(
                visited.iter().any(|v| v == line),
                "{line} missing in {visited:?}"
            );
        }
        assert_eq!(visited.len(), 20, "{visited:?}");
        let collected: Vec<String> = collect(&definition)
            .into_iter()
            .map(|t| format!("{}={}", t.pointer, t.text))
            .collect();
        assert_eq!(
            collected, visited,
            "collect lists what for_each visits, in order"
        );
    }

    #[test]
    fn a_definition_that_is_not_an_object_is_walked_from_the_root() {
        let found: Vec<(String, String)> = collect(&json!(["a", ["b"]]))
            .into_iter()
            .map(|t| (t.pointer, t.text))
            .collect();
        assert_eq!(
            found,
            [
                ("/0".to_string(), "a".to_string()),
                ("/1/0".to_string(), "b".to_string())
            ]
        );
    }
}
