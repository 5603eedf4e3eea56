//! Which `tools` entries are usable tool definitions. Pure.
//!
//! A definition that breaks a MUST of the 2025-11-25 or 2026-07-28 schema in a way a client
//! has to act on is left out of the surface and reported (see `docs/mcp.md`, "Invalid tool
//! definitions"): an empty `name`, an `inputSchema` that cannot describe an arguments object,
//! and a bad `x-mcp-header` annotation (2026-07-28: clients MUST exclude such a tool from the
//! `tools/list` result). SHOULD-level guidance (name length and characters) is not enforced:
//! dropping a tool for it would hide real changes.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::InvalidToolReason;

/// The annotation that mirrors a tool parameter into an `Mcp-Param-{name}` header.
pub const HEADER_ANNOTATION: &str = "x-mcp-header";

/// The parameter types `x-mcp-header` may annotate (`number` is excluded on purpose).
const HEADER_TYPES: [&str; 3] = ["string", "integer", "boolean"];

/// Why an object with a string `name` is not a usable tool, with a short explanation, or
/// `None` when it is usable.
pub fn problem(tool: &Map<String, Value>, name: &str) -> Option<(InvalidToolReason, String)> {
    if name.is_empty() {
        return Some((InvalidToolReason::EmptyName, "the name is empty".into()));
    }
    let schema = tool.get("inputSchema")?;
    if let Some(why) = input_schema_problem(schema) {
        return Some((InvalidToolReason::InputSchemaNotObject, why));
    }
    header_problem(schema).map(|why| (InvalidToolReason::InvalidHeader, why))
}

/// An `inputSchema` must be a JSON object whose `type`, when given, admits `"object"`
/// (arguments are always an object). A missing or `null` `inputSchema` is tolerated: real
/// servers serve `null` for tools without parameters (github-mcp-server v0.24.0 `get_me`), and
/// dropping those would hide a widely used tool from the watch.
fn input_schema_problem(schema: &Value) -> Option<String> {
    if schema.is_null() {
        return None;
    }
    let Some(object) = schema.as_object() else {
        return Some(format!(
            "inputSchema is {}, not a JSON object",
            json_type(schema)
        ));
    };
    let admits_object = match object.get("type") {
        None => true,
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "object"),
        Some(_) => false,
    };
    (!admits_object).then(|| {
        format!(
            "inputSchema has type {}, which does not admit an object",
            object["type"]
        )
    })
}

/// The first broken `x-mcp-header` rule of a schema, if any.
fn header_problem(schema: &Value) -> Option<String> {
    let mut reachable = Vec::new();
    collect_reachable(schema, "/inputSchema", &mut reachable);
    let mut seen = HashSet::new();
    for (pointer, property) in &reachable {
        let Some(value) = property.get(HEADER_ANNOTATION) else {
            continue;
        };
        if let Some(why) = header_value_problem(value) {
            return Some(format!("{HEADER_ANNOTATION} at {pointer} {why}"));
        }
        let kind = property.get("type").and_then(Value::as_str);
        if !kind.is_some_and(|k| HEADER_TYPES.contains(&k)) {
            return Some(format!(
                "{HEADER_ANNOTATION} at {pointer} is on a parameter of type {}, not string, integer or boolean",
                property
                    .get("type")
                    .map_or("(none)".to_string(), Value::to_string)
            ));
        }
        let lower = value.as_str().unwrap_or_default().to_ascii_lowercase();
        if !seen.insert(lower) {
            return Some(format!(
                "{HEADER_ANNOTATION} {value} at {pointer} repeats another one (case-insensitively)"
            ));
        }
    }
    let reachable: HashSet<&str> = reachable.iter().map(|(p, _)| p.as_str()).collect();
    let mut all = Vec::new();
    collect_annotated(schema, "/inputSchema".to_string(), &mut all);
    all.into_iter()
        .find(|pointer| !reachable.contains(pointer.as_str()))
        .map(|pointer| {
            format!(
                "{HEADER_ANNOTATION} at {pointer} is not on a property reachable from the schema root through properties"
            )
        })
}

/// A header name must be a non-empty RFC 9110 token (which excludes spaces, colons, control
/// characters and non-ASCII).
fn header_value_problem(value: &Value) -> Option<String> {
    let Some(text) = value.as_str() else {
        return Some(format!("is {}, not a string", json_type(value)));
    };
    if text.is_empty() {
        return Some("is empty".into());
    }
    text.chars()
        .find(|c| !is_tchar(*c))
        .map(|c| format!("{text:?} has {c:?}, which is not allowed in an HTTP field name"))
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Property schemas reached from the root through `properties` only, with their pointers.
fn collect_reachable<'a>(schema: &'a Value, pointer: &str, out: &mut Vec<(String, &'a Value)>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        let here = format!("{pointer}/properties/{}", super::pointer_segment(key));
        out.push((here.clone(), property));
        collect_reachable(property, &here, out);
    }
}

/// Pointers of every object in `value` that carries the annotation, wherever it sits.
fn collect_annotated(value: &Value, pointer: String, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if object.contains_key(HEADER_ANNOTATION) {
                out.push(pointer.clone());
            }
            for (key, inner) in object {
                collect_annotated(
                    inner,
                    format!("{pointer}/{}", super::pointer_segment(key)),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                collect_annotated(inner, format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// The kind of a JSON value as a message names it ("a string", "an object", ...).
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdict(tool: Value) -> Option<InvalidToolReason> {
        let name = tool["name"].as_str().unwrap().to_string();
        problem(tool.as_object().unwrap(), &name).map(|(reason, _)| reason)
    }

    fn with_header(property: Value) -> Value {
        json!({"name": "t", "inputSchema": {"type": "object", "properties": {"p": property}}})
    }

    #[test]
    fn usable_definitions_pass() {
        let cases = [
            json!({"name": "t"}),
            json!({"name": "t", "inputSchema": {}}),
            json!({"name": "t", "inputSchema": null}),
            json!({"name": "t", "inputSchema": {"type": "object"}}),
            json!({"name": "t", "inputSchema": {"type": ["object", "null"]}}),
            json!({"name": "has space and a very long name that breaks only a SHOULD"}),
            with_header(json!({"type": "string", "x-mcp-header": "Region"})),
            with_header(json!({"type": "integer", "x-mcp-header": "X-Count_2"})),
            with_header(json!({"type": "boolean", "x-mcp-header": "a!#$%&'*+-.^_`|~"})),
            with_header(
                json!({"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Q"}}}),
            ),
            json!({"name": "t", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "One"},
                "b": {"type": "string", "x-mcp-header": "Two"}}}}),
        ];
        for tool in cases {
            assert_eq!(verdict(tool.clone()), None, "{tool}");
        }
    }

    #[test]
    fn broken_definitions_are_named() {
        use InvalidToolReason::*;
        let cases = [
            (json!({"name": ""}), EmptyName),
            (
                json!({"name": "t", "inputSchema": []}),
                InputSchemaNotObject,
            ),
            (
                json!({"name": "t", "inputSchema": "object"}),
                InputSchemaNotObject,
            ),
            (
                json!({"name": "t", "inputSchema": {"type": "string"}}),
                InputSchemaNotObject,
            ),
            (
                json!({"name": "t", "inputSchema": {"type": 5}}),
                InputSchemaNotObject,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": ""})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": 7})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": "My Region"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": "Region:Primary"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": "R\u{e9}gion"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "string", "x-mcp-header": "Region\t1"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "number", "x-mcp-header": "Score"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "object", "x-mcp-header": "Data"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "array", "x-mcp-header": "Items"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"type": "null", "x-mcp-header": "Nil"})),
                InvalidHeader,
            ),
            (
                with_header(json!({"x-mcp-header": "Untyped"})),
                InvalidHeader,
            ),
            (
                json!({"name": "t", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"}}}}),
                InvalidHeader,
            ),
            (
                with_header(
                    json!({"type": "array", "items": {"type": "string", "x-mcp-header": "Deep"}}),
                ),
                InvalidHeader,
            ),
            (
                json!({"name": "t", "inputSchema": {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "Def"}}}}),
                InvalidHeader,
            ),
        ];
        for (tool, expected) in cases {
            assert_eq!(verdict(tool.clone()), Some(expected), "{tool}");
        }
    }

    #[test]
    fn the_explanation_points_at_the_annotation() {
        let tool = with_header(json!({"type": "number", "x-mcp-header": "Score"}));
        let (_, why) = problem(tool.as_object().unwrap(), "t").unwrap();
        assert!(why.contains("/inputSchema/properties/p"), "{why}");
        assert!(why.contains("number"), "{why}");
    }
}
