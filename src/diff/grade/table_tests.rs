//! Grading tables for the combinators, `$ref`/`$defs`, `items`/`prefixItems` and the output
//! direction (add, remove, change of each), plus property tests of the grader as a whole.

use super::*;
use serde_json::json;

/// One row: name, old schema, new schema, role, expected verdict, details that must appear.
type Row = (
    &'static str,
    Value,
    Value,
    SchemaRole,
    Compatibility,
    Vec<&'static str>,
);

fn check(rows: Vec<Row>) {
    for (name, old, new, role, expected, details) in rows {
        let g = grade_schema_change(Some(&old), Some(&new), role);
        assert_eq!(g.compatibility, expected, "{name}: {:#?}", g.details);
        for d in details {
            assert!(
                g.details.iter().any(|x| x.contains(d)),
                "{name}: no detail containing {d:?} in {:#?}",
                g.details
            );
        }
    }
}

fn object(props: Value, extra: Value) -> Value {
    let mut schema = json!({"type": "object", "properties": props});
    for (k, v) in extra.as_object().into_iter().flatten() {
        schema[k] = v.clone();
    }
    schema
}

fn ab() -> Value {
    json!({"a": {"type": "string"}, "b": {"type": "string"}})
}

use Compatibility::*;
use SchemaRole::{Input, Output};

#[test]
fn any_of_add_remove_change() {
    let either = json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    check(vec![
        (
            "anyOf added beside a tightened sibling: both reported",
            object(ab(), json!({})),
            {
                let mut s = object(
                    json!({"a": {"type": "string", "minLength": 1}, "b": {"type": "string"}}),
                    either.clone(),
                );
                s["anyOf"] = either["anyOf"].clone();
                s
            },
            Input,
            Breaking,
            vec![
                "anyOf added at /anyOf",
                "minLength added 1 at /properties/a",
            ],
        ),
        (
            "anyOf added whose branch asks nothing beyond the parent",
            object(ab(), json!({"required": ["a"]})),
            object(
                ab(),
                json!({"required": ["a"], "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            ),
            Input,
            Notation,
            vec!["anyOf added at /anyOf (no-op"],
        ),
        (
            "anyOf removed",
            object(ab(), either.clone()),
            object(ab(), json!({})),
            Input,
            Loosened,
            vec!["anyOf removed at /anyOf (a constraint dropped)"],
        ),
        (
            "anyOf branch edited, paired by type across positions",
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}),
            Input,
            Breaking,
            vec!["minimum added 0 at /anyOf/0"],
        ),
        (
            "anyOf branch added",
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}),
            Input,
            Loosened,
            vec!["anyOf branch added at /anyOf/2"],
        ),
        (
            "anyOf branch removed whose values another branch accepts",
            json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string"}]}),
            json!({"anyOf": [{"type": "string"}]}),
            Input,
            Notation,
            vec!["anyOf branch removed at /anyOf/0 (its values are still accepted by branch 0)"],
        ),
        (
            "anyOf branch removed",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "string"}]}),
            Input,
            Breaking,
            vec!["anyOf branch removed at /anyOf/1"],
        ),
        (
            "unpairable branch is unknown, and does not mask a sibling break",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "null"}, {"type": "integer"}, {"type": "boolean"}], "minProperties": 1}),
            Input,
            Breaking,
            vec![
                "anyOf branch removed or rewritten at /anyOf/0 (cannot be paired)",
                "minProperties added 1 at (root)",
            ],
        ),
        (
            "unpairable branch alone is unknown",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "null"}, {"type": "integer"}, {"type": "boolean"}]}),
            Input,
            Unknown,
            vec!["anyOf branch added at /anyOf/1"],
        ),
        (
            "type union respelled as anyOf",
            json!({"type": ["string", "null"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            Input,
            Loosened,
            vec!["anyOf added at /anyOf (no-op"],
        ),
        (
            "nullable anyOf that tightens the string",
            json!({"type": "string"}),
            json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}),
            Input,
            Breaking,
            vec!["anyOf added at /anyOf (a new constraint)"],
        ),
    ]);
}

#[test]
fn one_of_add_remove_change() {
    check(vec![
        (
            "oneOf added with overlapping branches",
            json!({"type": "string"}),
            json!({"type": "string", "oneOf": [{"minLength": 1}, {"maxLength": 5}]}),
            Input,
            Breaking,
            vec!["oneOf added at /oneOf (a new constraint)"],
        ),
        (
            "oneOf of disjoint types around the old type",
            json!({"type": "string"}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            Input,
            Loosened,
            vec![
                "oneOf added at /oneOf (no-op",
                "type constraint removed (was string) at (root)",
            ],
        ),
        (
            "oneOf removed",
            json!({"type": "string", "oneOf": [{"minLength": 1}, {"maxLength": 5}]}),
            json!({"type": "string"}),
            Input,
            Loosened,
            vec!["oneOf removed at /oneOf"],
        ),
        (
            "oneOf branch added that may overlap",
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}, {"minLength": 2}]}),
            Input,
            Unknown,
            vec!["oneOf branch added at /oneOf/2 (may overlap another branch)"],
        ),
        (
            "oneOf branch added, disjoint",
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "integer"}]}),
            Input,
            Loosened,
            vec!["oneOf branch added at /oneOf/2"],
        ),
        (
            "oneOf branch enum narrowed (the github-mcp-server case)",
            json!({"oneOf": [{"type": "string"}, {"type": "object", "properties": {"c": {"enum": ["low", "high"]}}}]}),
            json!({"oneOf": [{"type": "string"}, {"type": "object", "properties": {"c": {"enum": ["LOW", "HIGH"]}}}]}),
            Input,
            Breaking,
            vec!["enum value removed \"low\" at /oneOf/1/properties/c"],
        ),
    ]);
}

#[test]
fn all_of_add_remove_change() {
    check(vec![
        (
            "allOf added",
            object(ab(), json!({})),
            object(ab(), json!({"allOf": [{"required": ["a"]}]})),
            Input,
            Breaking,
            vec!["allOf added at /allOf (a new constraint)"],
        ),
        (
            "allOf added that repeats the parent",
            object(ab(), json!({})),
            object(ab(), json!({"allOf": [{"type": "object"}]})),
            Input,
            Notation,
            vec!["allOf added at /allOf (no-op"],
        ),
        (
            "allOf removed",
            object(ab(), json!({"allOf": [{"required": ["a"]}]})),
            object(ab(), json!({})),
            Input,
            Loosened,
            vec!["allOf removed at /allOf"],
        ),
        (
            "allOf branch added",
            json!({"allOf": [{"type": "object"}]}),
            json!({"allOf": [{"type": "object"}, {"required": ["x"]}]}),
            Input,
            Breaking,
            vec!["allOf branch added at /allOf/1"],
        ),
        (
            "allOf branch removed",
            json!({"allOf": [{"type": "object"}, {"required": ["x"]}]}),
            json!({"allOf": [{"type": "object"}]}),
            Input,
            Loosened,
            vec!["allOf branch removed at /allOf/1"],
        ),
        (
            "allOf branch edited",
            json!({"allOf": [{"properties": {"n": {"maximum": 10}}}]}),
            json!({"allOf": [{"properties": {"n": {"maximum": 20}}}]}),
            Input,
            Loosened,
            vec!["maximum raised 10→20 at /allOf/0/properties/n"],
        ),
    ]);
}

#[test]
fn not_add_remove_change() {
    check(vec![
        (
            "not added",
            object(ab(), json!({})),
            object(ab(), json!({"not": {"required": ["a", "b"]}})),
            Input,
            Breaking,
            vec!["not added at /not (a new constraint)"],
        ),
        (
            "not added that excludes nothing the schema accepts",
            json!({"type": "string"}),
            json!({"type": "string", "not": {"type": "null"}}),
            Input,
            Notation,
            vec!["not added at /not (no-op"],
        ),
        (
            "not removed",
            json!({"type": "string", "not": {"enum": ["x"]}}),
            json!({"type": "string"}),
            Input,
            Loosened,
            vec!["not removed at /not"],
        ),
        (
            "not widened: fewer instances accepted",
            json!({"not": {"enum": ["a"]}}),
            json!({"not": {"enum": ["a", "b"]}}),
            Input,
            Breaking,
            vec!["enum value added \"b\" at /not (under not: reversed)"],
        ),
        (
            "not narrowed: more instances accepted",
            json!({"not": {"enum": ["a", "b"]}}),
            json!({"not": {"enum": ["a"]}}),
            Input,
            Loosened,
            vec!["enum value removed \"b\" at /not (under not: reversed)"],
        ),
    ]);
}

#[test]
fn conditionals_add_remove_change() {
    let cond = |then: Value| json!({"if": {"required": ["a"]}, "then": then});
    check(vec![
        (
            "if/then added",
            object(ab(), json!({})),
            object(ab(), cond(json!({"required": ["b"]}))),
            Input,
            Breaking,
            vec!["if/then/else added at /if (a new constraint)"],
        ),
        (
            "if without then or else added",
            object(ab(), json!({})),
            object(ab(), json!({"if": {"required": ["a"]}})),
            Input,
            Notation,
            vec!["if/then/else added at /if (no-op"],
        ),
        (
            "if/then removed",
            object(ab(), cond(json!({"required": ["b"]}))),
            object(ab(), json!({})),
            Input,
            Loosened,
            vec!["if/then/else removed at /if"],
        ),
        (
            "then tightened",
            object(ab(), cond(json!({"properties": {"b": {"maxLength": 9}}}))),
            object(ab(), cond(json!({"properties": {"b": {"maxLength": 3}}}))),
            Input,
            Breaking,
            vec!["maxLength lowered 9→3 at /then/properties/b"],
        ),
        (
            "else added under the same if",
            object(ab(), cond(json!({"required": ["b"]}))),
            {
                let mut s = object(ab(), cond(json!({"required": ["b"]})));
                s["else"] = json!({"maxProperties": 3});
                s
            },
            Input,
            Breaking,
            vec!["maxProperties added 3 at /else"],
        ),
        (
            "if condition changed",
            object(ab(), cond(json!({"required": ["b"]}))),
            object(
                ab(),
                json!({"if": {"required": ["b"]}, "then": {"required": ["b"]}}),
            ),
            Input,
            Unknown,
            vec!["if condition changed at /if"],
        ),
    ]);
}

#[test]
fn dependent_keywords_add_remove_change() {
    check(vec![
        (
            "dependentRequired added",
            object(ab(), json!({})),
            object(ab(), json!({"dependentRequired": {"a": ["b"]}})),
            Input,
            Breaking,
            vec!["dependentRequired added at /dependentRequired"],
        ),
        (
            "dependentRequired added whose names are required anyway",
            object(ab(), json!({"required": ["b"]})),
            object(
                ab(),
                json!({"required": ["b"], "dependentRequired": {"a": ["b"]}}),
            ),
            Input,
            Notation,
            vec!["dependentRequired added at /dependentRequired (no-op"],
        ),
        (
            "dependentRequired removed",
            object(ab(), json!({"dependentRequired": {"a": ["b"]}})),
            object(ab(), json!({})),
            Input,
            Loosened,
            vec!["dependentRequired removed at /dependentRequired"],
        ),
        (
            "dependentRequired grows",
            object(ab(), json!({"dependentRequired": {"a": ["b"]}})),
            object(ab(), json!({"dependentRequired": {"a": ["b", "c"]}})),
            Input,
            Breaking,
            vec!["dependent requirement added c at /dependentRequired/a"],
        ),
        (
            "dependentRequired entry dropped",
            object(ab(), json!({"dependentRequired": {"a": ["b"], "b": ["a"]}})),
            object(ab(), json!({"dependentRequired": {"a": ["b"]}})),
            Input,
            Loosened,
            vec!["dependentRequired entry removed at /dependentRequired/b"],
        ),
        (
            "dependentSchemas added",
            object(ab(), json!({})),
            object(
                ab(),
                json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
            ),
            Input,
            Breaking,
            vec!["dependentSchemas added at /dependentSchemas"],
        ),
        (
            "dependentSchemas removed",
            object(
                ab(),
                json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
            ),
            object(ab(), json!({})),
            Input,
            Loosened,
            vec!["dependentSchemas removed at /dependentSchemas"],
        ),
        (
            "dependentSchemas entry tightened",
            object(
                ab(),
                json!({"dependentSchemas": {"a": {"properties": {"b": {"maxLength": 9}}}}}),
            ),
            object(
                ab(),
                json!({"dependentSchemas": {"a": {"properties": {"b": {"maxLength": 3}}}}}),
            ),
            Input,
            Breaking,
            vec!["maxLength lowered 9→3 at /dependentSchemas/a/properties/b"],
        ),
        (
            "draft-07 dependencies entry added",
            object(ab(), json!({"dependencies": {"a": ["b"]}})),
            object(
                ab(),
                json!({"dependencies": {"a": ["b"], "b": {"required": ["a"]}}}),
            ),
            Input,
            Breaking,
            vec!["dependencies entry added at /dependencies/b"],
        ),
    ]);
}

fn with_defs(props: Value, defs: Value) -> Value {
    json!({"type": "object", "properties": props, "$defs": defs})
}

/// The schema with `patternProperties` whose schema is a `$ref` to `A`.
fn with_pattern(mut schema: Value) -> Value {
    schema["patternProperties"] = json!({"^x": {"$ref": "#/$defs/A"}});
    schema
}

#[test]
fn local_refs_and_defs() {
    let addr = |zip: Value| {
        with_defs(
            json!({"home": {"$ref": "#/$defs/Address"}, "work": {"$ref": "#/$defs/Address"}}),
            json!({"Address": {"type": "object", "properties": {"zip": zip}}}),
        )
    };
    let tree = |leaf: Value| {
        json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
            "value": leaf, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}})
    };
    check(vec![
        (
            "definition tightened, reached from two properties (reported once)",
            addr(json!({"type": "string"})),
            addr(json!({"type": "string", "minLength": 5})),
            Input,
            Breaking,
            vec!["minLength added 5 at /$defs/Address/properties/zip"],
        ),
        (
            "definition loosened",
            addr(json!({"type": "string", "maxLength": 5})),
            addr(json!({"type": "string"})),
            Input,
            Loosened,
            vec!["maxLength removed 5 at /$defs/Address/properties/zip"],
        ),
        (
            "inline schema moved into $defs",
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}),
            with_defs(
                json!({"a": {"$ref": "#/$defs/A"}}),
                json!({"A": {"type": "string", "maxLength": 3}}),
            ),
            Input,
            Notation,
            vec!["equivalent spelling at (root)"],
        ),
        (
            "recursive definition tightened (terminates)",
            tree(json!({"type": "number"})),
            tree(json!({"type": "integer"})),
            Input,
            Breaking,
            vec!["type narrowed number→integer at /$defs/Node/properties/value"],
        ),
        (
            "unreferenced definition changed",
            with_defs(
                json!({"a": {"type": "string"}}),
                json!({"Unused": {"type": "string"}}),
            ),
            with_defs(
                json!({"a": {"type": "string"}}),
                json!({"Unused": {"type": "integer"}}),
            ),
            Input,
            Notation,
            vec![],
        ),
        (
            "definition changed while a remote $ref may reach it",
            with_defs(
                json!({"a": {"$ref": "https://example.com/s#/$defs/A"}}),
                json!({"A": {"type": "string"}}),
            ),
            with_defs(
                json!({"a": {"$ref": "https://example.com/s#/$defs/A"}}),
                json!({"A": {"type": "integer"}}),
            ),
            Input,
            Unknown,
            vec!["a $ref the grader does not follow"],
        ),
        (
            "definition changed while reached from a keyword the grader does not walk",
            with_pattern(with_defs(json!({}), json!({"A": {"type": "string"}}))),
            with_pattern(with_defs(json!({}), json!({"A": {"type": "integer"}}))),
            Input,
            Unknown,
            vec!["a $ref the grader does not follow"],
        ),
        (
            "$ref added beside other keywords",
            with_defs(
                json!({"a": {"type": "string"}}),
                json!({"Short": {"maxLength": 3}}),
            ),
            with_defs(
                json!({"a": {"type": "string", "$ref": "#/$defs/Short"}}),
                json!({"Short": {"maxLength": 3}}),
            ),
            Input,
            Breaking,
            vec!["$ref added at /properties/a/$ref (a new constraint)"],
        ),
        (
            "unchanged $ref beside other keywords reaches a tightened definition",
            with_defs(
                json!({"a": {"type": "string", "$ref": "#/$defs/Short"}}),
                json!({"Short": {"maxLength": 5}}),
            ),
            with_defs(
                json!({"a": {"type": "string", "$ref": "#/$defs/Short"}}),
                json!({"Short": {"maxLength": 3}}),
            ),
            Input,
            Breaking,
            vec!["maxLength lowered 5→3 at /$defs/Short"],
        ),
        (
            "$ref to another document added",
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"properties": {"a": {"type": "string", "$ref": "https://example.com/short.json"}}}),
            Input,
            Unknown,
            vec!["$ref added at /properties/a/$ref (target not resolvable)"],
        ),
        (
            "$ref beside other keywords removed",
            with_defs(
                json!({"a": {"type": "string", "$ref": "#/$defs/Short"}}),
                json!({"Short": {"maxLength": 3}}),
            ),
            with_defs(
                json!({"a": {"type": "string"}}),
                json!({"Short": {"maxLength": 3}}),
            ),
            Input,
            Loosened,
            vec!["$ref removed at /properties/a/$ref"],
        ),
        (
            "$ref retargeted to a stricter definition",
            with_defs(
                json!({"a": {"$ref": "#/$defs/Any"}}),
                json!({"Any": {"type": "string"}, "Short": {"type": "string", "maxLength": 3}}),
            ),
            with_defs(
                json!({"a": {"$ref": "#/$defs/Short"}}),
                json!({"Any": {"type": "string"}, "Short": {"type": "string", "maxLength": 3}}),
            ),
            Input,
            Breaking,
            vec!["maxLength added 3 at /$defs/Short"],
        ),
        (
            "anyOf added inside a definition",
            with_defs(
                json!({"a": {"$ref": "#/$defs/A"}}),
                json!({"A": {"type": "object", "properties": {"x": {}, "y": {}}}}),
            ),
            with_defs(
                json!({"a": {"$ref": "#/$defs/A"}}),
                json!({"A": {"type": "object", "properties": {"x": {}, "y": {}}, "anyOf": [{"required": ["x"]}, {"required": ["y"]}]}}),
            ),
            Input,
            Breaking,
            vec!["anyOf added at /$defs/A/anyOf (a new constraint)"],
        ),
        (
            "draft-07 definitions",
            json!({"properties": {"a": {"$ref": "#/definitions/A"}}, "definitions": {"A": {"enum": ["x", "y"]}}}),
            json!({"properties": {"a": {"$ref": "#/definitions/A"}}, "definitions": {"A": {"enum": ["x"]}}}),
            Input,
            Breaking,
            vec!["enum value removed \"y\" at /definitions/A"],
        ),
    ]);
}

#[test]
fn items_and_prefix_items() {
    check(vec![
        (
            "prefixItems position added (was governed by items)",
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "array", "prefixItems": [{"type": "string", "enum": ["a"]}], "items": {"type": "string"}}),
            Input,
            Breaking,
            vec!["enum added [\"a\"] at /prefixItems/0"],
        ),
        (
            "prefixItems position dropped (now governed by items)",
            json!({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "number"}}),
            json!({"type": "array", "items": {"type": "number"}}),
            Input,
            Loosened,
            vec!["type widened integer→number at /items"],
        ),
        (
            "prefixItems position edited",
            json!({"prefixItems": [{"type": "string"}, {"type": "integer"}]}),
            json!({"prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 0}]}),
            Input,
            Breaking,
            vec!["minimum added 0 at /prefixItems/1"],
        ),
        (
            "draft-07 tuple items and additionalItems",
            json!({"items": [{"type": "string"}], "additionalItems": false}),
            json!({"items": [{"type": "string"}], "additionalItems": {"type": "string"}}),
            Input,
            Loosened,
            vec!["schema false now accepts values at /additionalItems"],
        ),
        (
            "anyOf added inside items",
            json!({"type": "array", "items": {"type": "object", "properties": {"a": {}, "b": {}}}}),
            json!({"type": "array", "items": {"type": "object", "properties": {"a": {}, "b": {}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}),
            Input,
            Breaking,
            vec!["anyOf added at /items/anyOf"],
        ),
        (
            "oneOf added in a nested property",
            object(
                json!({"p": {"type": "object", "properties": {"x": {}}}}),
                json!({}),
            ),
            object(
                json!({"p": {"type": "object", "properties": {"x": {}}, "oneOf": [{"required": ["x"]}]}}),
                json!({}),
            ),
            Input,
            Breaking,
            vec!["oneOf added at /properties/p/oneOf"],
        ),
    ]);
}

#[test]
fn output_direction_is_reversed() {
    check(vec![
        (
            "output gains an anyOf: narrower, compatible",
            object(ab(), json!({})),
            object(
                ab(),
                json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            ),
            Output,
            Additive,
            vec!["anyOf added at /anyOf"],
        ),
        (
            "output loses an allOf: wider, breaking for consumers",
            object(ab(), json!({"allOf": [{"required": ["a"]}]})),
            object(ab(), json!({})),
            Output,
            Breaking,
            vec!["allOf removed at /allOf"],
        ),
        (
            "output union narrowed to one type",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "string"}),
            Output,
            Additive,
            vec![
                "type added string at (root)",
                "anyOf removed at /anyOf (no-op",
            ],
        ),
        (
            "output gains a union branch",
            json!({"anyOf": [{"type": "string"}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            Output,
            Breaking,
            vec!["anyOf branch added at /anyOf/1"],
        ),
        (
            "output definition widened",
            with_defs(
                json!({"a": {"$ref": "#/$defs/A"}}),
                json!({"A": {"enum": ["x"]}}),
            ),
            with_defs(
                json!({"a": {"$ref": "#/$defs/A"}}),
                json!({"A": {"enum": ["x", "y"]}}),
            ),
            Output,
            Breaking,
            vec!["enum value added \"y\" at /$defs/A"],
        ),
        (
            "output const changed",
            json!({"const": 1}),
            json!({"const": 2}),
            Output,
            Breaking,
            vec!["const 1→2 at (root)"],
        ),
    ]);
}

#[test]
fn hostile_shapes_finish() {
    // Shared definitions referenced twice at every level: 2^40 paths if walked naively.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"properties": {"l": {"$ref": next}, "r": {"$ref": next}}}),
        );
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let old = json!({"$ref": "#/$defs/d0", "$defs": defs.clone()});
    defs.insert("d40".into(), json!({"type": "integer"}));
    let new = json!({"$ref": "#/$defs/d0", "$defs": defs});
    let g = grade_schema_change(Some(&old), Some(&new), Input);
    assert_eq!(g.compatibility, Breaking, "{:?}", g.details);
    // A self-referencing alias and a dangling pointer.
    let loop_ = json!({"$ref": "#"});
    let g = grade_schema_change(Some(&loop_), Some(&json!({"$ref": "#/nowhere"})), Input);
    assert_eq!(g.compatibility, Unknown, "{:?}", g.details);
}

#[test]
fn deep_and_branchy_schemas_finish_on_a_small_stack() {
    // Nested unions three wide, sixty deep, added in one go; and 250 levels of properties.
    let mut union = json!({"type": "string"});
    for i in 0..60 {
        union = json!({"anyOf": [union, {"type": "integer", "minimum": i}, {"required": [format!("p{i}")]}]});
    }
    let mut nested_old = json!({"type": "string"});
    let mut nested_new = json!({"type": "string", "minLength": 1});
    for _ in 0..250 {
        nested_old = json!({"properties": {"x": nested_old}});
        nested_new = json!({"properties": {"x": nested_new}});
    }
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let wide = grade_schema_change(Some(&json!({})), Some(&union), Input);
            let deep = grade_schema_change(Some(&nested_old), Some(&nested_new), Input);
            (wide, deep)
        })
        .unwrap();
    let (wide, deep) = handle.join().unwrap();
    assert_eq!(wide.compatibility, Breaking, "{:?}", wide.details);
    assert_eq!(deep.compatibility, Unknown, "{:?}", deep.details);
    assert!(deep.details.iter().any(|d| d.contains("too deeply nested")));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": "integer", "minimum": 1})),
            Just(json!({"enum": ["a", "b"]})),
            Just(json!({"type": ["string", "null"], "maxLength": 4})),
            Just(json!(true)),
            Just(json!({"$ref": "#/$defs/Shared"})),
        ]
    }

    /// Schemas with nested objects, arrays, tuples and every combinator.
    fn schema() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::btree_map("[a-c]", inner.clone(), 0..4).prop_map(
                    |props| json!({"type": "object", "properties": props, "required": props.keys().take(1).collect::<Vec<_>>()})
                ),
                inner.clone().prop_map(|i| json!({"type": "array", "items": i})),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|p| json!({"type": "array", "prefixItems": p})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"anyOf": b})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"oneOf": b})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"allOf": b})),
                inner.clone().prop_map(|i| json!({"not": i})),
                (inner.clone(), inner.clone())
                    .prop_map(|(t, e)| json!({"if": {"required": ["a"]}, "then": t, "else": e})),
                inner.prop_map(|s| json!({"dependentSchemas": {"a": s}, "dependentRequired": {"b": ["c"]}})),
            ]
        })
    }

    fn document() -> impl Strategy<Value = Value> {
        (schema(), leaf()).prop_map(|(mut root, shared)| {
            if let Some(map) = root.as_object_mut() {
                map.insert("$defs".into(), json!({"Shared": shared}));
            }
            root
        })
    }

    /// A constraint none of the generated schemas already implies (it needs `zz`, a
    /// property no generator names), as the keyword it adds and the value.
    fn constraint() -> impl Strategy<Value = (&'static str, Value)> {
        prop_oneof![
            Just(("anyOf", json!([{"required": ["zz"]}, {"required": ["zy"]}]))),
            Just(("oneOf", json!([{"required": ["zz"]}, {"required": ["zy"]}]))),
            Just(("allOf", json!([{"required": ["zz"]}]))),
            Just((
                "not",
                json!({"properties": {"zz": {"type": "string"}}, "required": ["zz"]})
            )),
            Just(("dependentRequired", json!({"zy": ["zz"]}))),
            Just(("dependentSchemas", json!({"zy": {"required": ["zz"]}}))),
        ]
    }

    proptest! {
        #[test]
        fn grading_a_schema_against_itself_finds_nothing(doc in document()) {
            for role in [Input, Output] {
                let g = grade_schema_change(Some(&doc), Some(&doc.clone()), role);
                prop_assert!(g.details.is_empty(), "{:?}", g.details);
                prop_assert_eq!(g.compatibility, Notation);
            }
        }

        #[test]
        fn adding_a_constraint_breaks_and_removing_it_loosens(
            props in prop::collection::btree_map("[a-c]", schema(), 0..4),
            (key, value) in constraint(),
            nested in any::<bool>(),
        ) {
            let base = json!({"type": "object", "properties": props, "$defs": {"Shared": {"type": "string"}}});
            let mut with = base.clone();
            let target = if nested {
                with["properties"]["n"] = json!({"type": "object"});
                &mut with["properties"]["n"]
            } else {
                &mut with
            };
            target[key] = value;
            let mut without = base;
            if nested {
                without["properties"]["n"] = json!({"type": "object"});
            }
            let pointer = if nested { format!("/properties/n/{key}") } else { format!("/{key}") };
            let added = grade_schema_change(Some(&without), Some(&with), Input);
            prop_assert_eq!(added.compatibility, Breaking, "{:?}", added.details);
            prop_assert!(added.details.iter().any(|d| d.contains(&pointer)), "{:?}", added.details);
            let removed = grade_schema_change(Some(&with), Some(&without), Input);
            prop_assert_eq!(removed.compatibility, Loosened, "{:?}", removed.details);
            let output = grade_schema_change(Some(&without), Some(&with), Output);
            prop_assert_eq!(output.compatibility, Additive, "{:?}", output.details);
            let output = grade_schema_change(Some(&with), Some(&without), Output);
            prop_assert_eq!(output.compatibility, Breaking, "{:?}", output.details);
        }

        #[test]
        fn any_pair_grades_deterministically(a in document(), b in document()) {
            let first = grade_schema_change(Some(&a), Some(&b), Input);
            prop_assert_eq!(&first, &grade_schema_change(Some(&a), Some(&b), Input));
            prop_assert!(!same(&a, &b) || first.details.is_empty(), "{:?}", first.details);
            let output = grade_schema_change(Some(&a), Some(&b), Output);
            prop_assert_eq!(output.details.is_empty(), first.details.is_empty());
        }
    }
}
