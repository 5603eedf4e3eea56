//! Grading tables for the ordinary keywords and the verdict rules.

use super::*;
use serde_json::json;

fn grade(old: Value, new: Value) -> Grade {
    grade_schema_change(Some(&old), Some(&new), SchemaRole::Input)
}

fn obj(props: Value, required: Value) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

#[test]
fn table_of_input_rules() {
    use Compatibility::*;
    let s = json!({"type": "string"});
    let cases: Vec<(&str, Value, Value, Compatibility, &str)> = vec![
        (
            "required added",
            obj(json!({"a": s}), json!([])),
            obj(json!({"a": s}), json!(["a"])),
            Breaking,
            "required added /properties/a",
        ),
        (
            "required removed",
            obj(json!({"a": s}), json!(["a"])),
            obj(json!({"a": s}), json!([])),
            Loosened,
            "required removed /properties/a",
        ),
        (
            "optional property added",
            obj(json!({}), json!([])),
            obj(json!({"b": s}), json!([])),
            Additive,
            "property added /properties/b",
        ),
        (
            "property removed",
            obj(json!({"b": s}), json!([])),
            obj(json!({}), json!([])),
            Loosened,
            "property removed /properties/b",
        ),
        (
            "enum value removed",
            json!({"enum": ["low", "high"]}),
            json!({"enum": ["high"]}),
            Breaking,
            "enum value removed \"low\" at (root)",
        ),
        (
            "enum value added",
            json!({"enum": ["low"]}),
            json!({"enum": ["low", "high"]}),
            Loosened,
            "enum value added \"high\" at (root)",
        ),
        (
            "enum reordered",
            json!({"enum": ["a", "b"]}),
            json!({"enum": ["b", "a"]}),
            Notation,
            "enum order changed at (root)",
        ),
        (
            "type narrowed",
            json!({"properties": {"c": {"type": "number"}}}),
            json!({"properties": {"c": {"type": "integer"}}}),
            Breaking,
            "type narrowed number→integer at /properties/c",
        ),
        (
            "type widened",
            json!({"type": "integer"}),
            json!({"type": "number"}),
            Loosened,
            "type widened integer→number at (root)",
        ),
        (
            "type changed",
            json!({"type": "string"}),
            json!({"type": "number"}),
            Breaking,
            "type changed string→number at (root)",
        ),
        (
            "nullable via type array",
            json!({"type": "string"}),
            json!({"type": ["string", "null"]}),
            Loosened,
            "type widened string→string|null at (root)",
        ),
        (
            "minimum added",
            json!({"properties": {"commentId": {"type": "number"}}}),
            json!({"properties": {"commentId": {"type": "number", "minimum": 1}}}),
            Breaking,
            "minimum added 1 at /properties/commentId",
        ),
        (
            "maximum raised",
            json!({"maximum": 10}),
            json!({"maximum": 20}),
            Loosened,
            "maximum raised 10→20 at (root)",
        ),
        (
            "maxLength lowered",
            json!({"maxLength": 20}),
            json!({"maxLength": 10}),
            Breaking,
            "maxLength lowered 20→10 at (root)",
        ),
        (
            "minLength removed",
            json!({"minLength": 1}),
            json!({}),
            Loosened,
            "minLength removed 1 at (root)",
        ),
        (
            "zod sentinels",
            json!({"type": "integer"}),
            json!({"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}),
            Notation,
            "maximum added zod integer sentinel 9007199254740991 at (root)",
        ),
        (
            "pattern added",
            json!({}),
            json!({"pattern": "^a"}),
            Breaking,
            "pattern added \"^a\" at (root)",
        ),
        (
            "pattern changed",
            json!({"pattern": "^a"}),
            json!({"pattern": "^b"}),
            Unknown,
            "pattern changed \"^a\"→\"^b\" at (root)",
        ),
        (
            "format removed",
            json!({"format": "uri"}),
            json!({}),
            Loosened,
            "format removed \"uri\" at (root)",
        ),
        (
            "const changed",
            json!({"const": 1}),
            json!({"const": 2}),
            Breaking,
            "const 1→2 at (root)",
        ),
        (
            "default changed",
            json!({"default": 1}),
            json!({"default": 2}),
            Unknown,
            "default changed 1→2 at (root) (callers that omit the value at (root) now get 2 instead of 1)",
        ),
        (
            "default: same comma-separated set, other order",
            json!({"type": "string", "default": "read,write,admin"}),
            json!({"type": "string", "default": "admin, read,write"}),
            Notation,
            "default respelled \"read,write,admin\"→\"admin, read,write\" at (root) (the same comma-separated set in another order)",
        ),
        (
            "default: a different comma-separated set",
            json!({"type": "string", "default": "read,write"}),
            json!({"type": "string", "default": "read,admin"}),
            Unknown,
            "default changed \"read,write\"→\"read,admin\" at (root)",
        ),
        (
            "default: one item more",
            json!({"type": "string", "default": "a,b"}),
            json!({"type": "string", "default": "b,a,c"}),
            Unknown,
            "default changed \"a,b\"→\"b,a,c\" at (root)",
        ),
        (
            "x- annotation added",
            json!({"type": "object"}),
            json!({"type": "object", "x-fastmcp-wrap-result": true}),
            Notation,
            "annotation x-fastmcp-wrap-result added at (root) (not a validation keyword)",
        ),
        (
            "x- annotation removed beside a real change",
            json!({"type": "string", "x-order": 1}),
            json!({"type": "string", "minLength": 1}),
            Breaking,
            "annotation x-order removed at (root) (not a validation keyword)",
        ),
        (
            "pattern widened by a character class",
            json!({"type": "string", "pattern": "^[A-Z][A-Z0-9]+-\\d+$"}),
            json!({"type": "string", "pattern": "^[A-Z][A-Z0-9_]+-\\d+$"}),
            Loosened,
            "pattern changed",
        ),
        (
            "pattern narrowed by a character class",
            json!({"type": "string", "pattern": "^[A-Z][A-Z0-9_]+-\\d+$"}),
            json!({"type": "string", "pattern": "^[A-Z][A-Z0-9]+-\\d+$"}),
            Breaking,
            "pattern changed",
        ),
        (
            "pattern respelled",
            json!({"type": "string", "pattern": "^\\d+$"}),
            json!({"type": "string", "pattern": "^[0-9]+$"}),
            Notation,
            "pattern changed",
        ),
        (
            "pattern with alternation stays unknown",
            json!({"type": "string", "pattern": "^(a|b)$"}),
            json!({"type": "string", "pattern": "^(a|b|c)$"}),
            Unknown,
            "pattern changed",
        ),
        (
            "pattern quantifier changed stays unknown",
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!({"type": "string", "pattern": "^[a-z]{1,8}$"}),
            Unknown,
            "pattern changed",
        ),
        (
            "default added",
            json!({"type": "boolean"}),
            json!({"type": "boolean", "default": true}),
            Unknown,
            "default added true at (root)",
        ),
        (
            "$schema switch",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
            Notation,
            "dialect changed",
        ),
        (
            "title keys",
            json!({"type": "object"}),
            json!({"type": "object", "title": "Args"}),
            Notation,
            "title added at (root)",
        ),
        (
            "parameter description",
            json!({"properties": {"a": {"type": "string", "description": "x"}}}),
            json!({"properties": {"a": {"type": "string", "description": "y"}}}),
            Notation,
            "description changed at /properties/a",
        ),
        (
            "additionalProperties spelling",
            json!({"additionalProperties": true}),
            json!({}),
            Notation,
            "additionalProperties spelling changed",
        ),
        (
            "additionalProperties not-empty spelling",
            json!({"additionalProperties": false}),
            json!({"additionalProperties": {"not": {}}}),
            Notation,
            "additionalProperties spelling changed",
        ),
        (
            "additionalProperties closed",
            json!({}),
            json!({"additionalProperties": false}),
            Breaking,
            "additionalProperties now false",
        ),
        (
            "additionalProperties opened",
            json!({"items": {"additionalProperties": false}}),
            json!({"items": {}}),
            Loosened,
            "at /items/additionalProperties",
        ),
        (
            "removed from closed object",
            json!({"additionalProperties": false, "properties": {"a": s}}),
            json!({"additionalProperties": false}),
            Breaking,
            "property removed /properties/a (no longer accepted)",
        ),
        (
            "nested items enum",
            json!({"items": {"properties": {"c": {"enum": ["low"]}}}}),
            json!({"items": {"properties": {"c": {"enum": ["LOW"]}}}}),
            Breaking,
            "enum value removed \"low\" at /items/properties/c",
        ),
        (
            "nullable anyOf",
            json!({"type": "string"}),
            json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}),
            Breaking,
            "anyOf added at /anyOf (a new constraint)",
        ),
        (
            "widened into oneOf",
            json!({"items": {"type": "string"}}),
            json!({"items": {"oneOf": [{"type": "string", "description": "d"}, {"type": "object"}]}}),
            Loosened,
            "oneOf added at /items/oneOf (no-op",
        ),
        (
            "narrowed from anyOf",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "string"}),
            Breaking,
            "type added string at (root)",
        ),
        (
            "union branch edited",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}),
            Breaking,
            "maxLength added 5 at /anyOf/0",
        ),
        (
            "$ref changed",
            json!({"$ref": "#/$defs/a"}),
            json!({"$ref": "#/$defs/b"}),
            Unknown,
            "$ref changed at /$ref (target not resolvable)",
        ),
        (
            "allOf added",
            json!({}),
            json!({"allOf": [{"type": "string"}]}),
            Breaking,
            "allOf added at /allOf",
        ),
        (
            "not a schema",
            json!({"type": "object"}),
            json!(null),
            Unknown,
            "not a JSON Schema object",
        ),
        (
            "numbers by value",
            json!({"minimum": 1}),
            json!({"minimum": 1.0}),
            Notation,
            "",
        ),
    ];
    for (name, old, new, expected, detail) in cases {
        let g = grade(old, new);
        assert_eq!(g.compatibility, expected, "{name}: {:?}", g.details);
        assert!(
            g.details.iter().any(|d| d.contains(detail))
                || (detail.is_empty() && g.details.is_empty()),
            "{name}: {:?}",
            g.details
        );
    }
}

#[test]
fn breaking_wins_over_loosening_in_the_same_schema() {
    let old = json!({"properties": {"commentId": {"type": "number"}, "body": {"type": "string"}}, "required": ["commentId", "body"]});
    let new = json!({"properties": {"commentId": {"type": "number", "minimum": 1}}, "required": ["commentId"]});
    let g = grade(old, new);
    assert_eq!(g.compatibility, Compatibility::Breaking);
    assert!(
        g.details
            .contains(&"minimum added 1 at /properties/commentId".to_owned())
    );
    assert!(
        g.details
            .contains(&"required removed /properties/body".to_owned())
    );
}

#[test]
fn pointer_segments_are_escaped() {
    let g = grade(
        json!({"properties": {"a/b~c": {"type": "string"}}}),
        json!({"properties": {"a/b~c": {"type": "integer"}}}),
    );
    assert_eq!(
        g.details,
        ["type changed string→integer at /properties/a~1b~0c"]
    );
}

#[test]
fn output_role_reverses_direction() {
    use Compatibility::*;
    let cases = [
        (
            Some(json!({"properties": {"a": {}}, "required": ["a"]})),
            Some(json!({"properties": {"a": {}}})),
            Breaking,
        ),
        (
            Some(json!({"properties": {"a": {}}})),
            Some(json!({"properties": {"a": {}}, "required": ["a"]})),
            Additive,
        ),
        (
            Some(json!({"enum": ["x"]})),
            Some(json!({"enum": ["x", "y"]})),
            Breaking,
        ),
        (
            Some(json!({"properties": {}})),
            Some(json!({"properties": {"b": {}}})),
            Additive,
        ),
        (None, Some(json!({"type": "object"})), Additive),
        (Some(json!({"type": "object"})), None, Breaking),
        (
            Some(json!({"properties": {"n": {"type": "integer"}}})),
            Some(json!({"properties": {"n": {"type": "string"}}})),
            Breaking,
        ),
        (
            Some(json!({"type": "object", "title": "A"})),
            Some(json!({"type": "object", "title": "B"})),
            Notation,
        ),
    ];
    for (old, new, expected) in cases {
        let g = grade_schema_change(old.as_ref(), new.as_ref(), SchemaRole::Output);
        assert_eq!(
            g.compatibility, expected,
            "{old:?} -> {new:?}: {:?}",
            g.details
        );
    }
}

/// A schema whose only difference is a `default` listing the same comma-separated set in
/// another order makes no change record; a different set, or another change beside it, does.
#[test]
fn a_default_set_in_another_order_makes_no_row() {
    use crate::diff::{ChangeClass, compare};
    use crate::surface::{ServerIdentity, Surface};
    let tool = |default: &str, required: Value| {
        json!({"name": "t", "inputSchema": {"type": "object", "required": required,
            "properties": {"s": {"type": "string", "default": default}}}})
    };
    let rows = |old: Value, new: Value| {
        let s = |t: Value| Surface::from_tools(ServerIdentity::default(), vec![t]).unwrap();
        compare(&s(old), &s(new))
            .into_iter()
            .map(|c| (c.change_class, c.compatibility))
            .collect::<Vec<_>>()
    };
    let schema_row = |grade| vec![(ChangeClass::InputSchemaChanged, Some(grade))];
    assert_eq!(rows(tool("a,b,c", json!([])), tool("c,a,b", json!([]))), []);
    assert_eq!(
        rows(tool("a,b,c", json!([])), tool("c,a,d", json!([]))),
        schema_row(Compatibility::Unknown)
    );
    assert_eq!(
        rows(tool("a,b", json!([])), tool("b,a", json!(["s"]))),
        schema_row(Compatibility::Breaking)
    );
}
