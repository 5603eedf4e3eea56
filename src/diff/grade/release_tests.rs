//! Grading tables for the shapes that real releases showed were graded too harshly: a removed
//! property under a new open object, a schema wrapped into a union that keeps it as a branch,
//! the same set of values spelled as `enum` or as a union of `const`s, a property that stops
//! being required while its `default` changes, and a changed `default`. Each in both
//! directions and for input and output schemas, plus property tests of the wrapping rule and
//! the set equivalence.

use super::witness::assert_consistent;
use super::*;
use Compatibility::*;
use SchemaRole::{Input, Output};
use serde_json::json;

/// One row: name, old schema, new schema, expected input grade, expected output grade, and a
/// detail that must appear in the input grade.
type Row = (
    &'static str,
    Value,
    Value,
    Compatibility,
    Compatibility,
    &'static str,
);

fn check(rows: Vec<Row>) {
    for (name, old, new, input, output, detail) in rows {
        let g = grade_schema_change(Some(&old), Some(&new), Input);
        assert_eq!(g.compatibility, input, "{name} (input): {:#?}", g.details);
        assert!(
            g.details.iter().any(|d| d.contains(detail)),
            "{name}: no detail containing {detail:?} in {:#?}",
            g.details
        );
        let g = grade_schema_change(Some(&old), Some(&new), Output);
        assert_eq!(g.compatibility, output, "{name} (output): {:#?}", g.details);
        for role in [Input, Output] {
            assert_consistent(name, &old, &new, role);
        }
    }
}

fn person(extra: Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
        "additionalProperties": false
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        schema[k] = v.clone();
    }
    schema
}

#[test]
fn removed_property_is_judged_by_the_new_additional_properties() {
    let closed = |props: Value, extra: Value| {
        let mut s = json!({"type": "object", "properties": props, "additionalProperties": false});
        for (k, v) in extra.as_object().into_iter().flatten() {
            s[k] = v.clone();
        }
        s
    };
    let ab = json!({"a": {"type": "string"}, "b": {"type": "string"}});
    let a = json!({"a": {"type": "string"}});
    let open = |props: Value| json!({"type": "object", "properties": props});
    check(vec![
        (
            "removed while additionalProperties false → absent",
            closed(ab.clone(), json!({})),
            open(a.clone()),
            Loosened,
            Breaking,
            "property removed /properties/b",
        ),
        (
            "removed while additionalProperties false → true",
            closed(ab.clone(), json!({})),
            closed(a.clone(), json!({"additionalProperties": true})),
            Loosened,
            Breaking,
            "property removed /properties/b",
        ),
        (
            "re-added: absent → false with the property back",
            open(a.clone()),
            closed(ab.clone(), json!({})),
            Breaking,
            Additive,
            "additionalProperties now false",
        ),
        (
            "removed while the object closes",
            open(ab.clone()),
            closed(a.clone(), json!({})),
            Breaking,
            Additive,
            "property removed /properties/b (no longer accepted)",
        ),
        (
            "removed while still closed",
            closed(ab.clone(), json!({})),
            closed(a.clone(), json!({})),
            Breaking,
            Additive,
            "property removed /properties/b (no longer accepted)",
        ),
        (
            "removed, now governed by an additionalProperties schema that accepts it",
            closed(ab.clone(), json!({})),
            closed(
                a.clone(),
                json!({"additionalProperties": {"type": "string"}}),
            ),
            Loosened,
            Breaking,
            "property removed /properties/b (now governed by additionalProperties)",
        ),
        (
            "removed, now governed by an additionalProperties schema that rejects it",
            open(ab.clone()),
            closed(a, json!({"additionalProperties": {"type": "number"}})),
            Breaking,
            Breaking,
            "type changed string→number at /additionalProperties",
        ),
    ]);
}

#[test]
fn a_union_that_keeps_the_old_schema_as_a_branch_loosens() {
    let x = person(json!({}));
    let text = json!({"type": "string"});
    let own_union = json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]});
    let own_one_of = person(json!({"oneOf": [{"required": ["age"]}, {"required": ["nick"]}]}));
    check(vec![
        (
            "X → anyOf[X, string]",
            x.clone(),
            json!({"anyOf": [x.clone(), text.clone()]}),
            Loosened,
            Breaking,
            "/anyOf",
        ),
        (
            "anyOf[X, string] → X",
            json!({"anyOf": [x.clone(), text.clone()]}),
            x.clone(),
            Breaking,
            Additive,
            "",
        ),
        (
            "X → anyOf[string, $ref X]",
            x.clone(),
            json!({"anyOf": [text.clone(), {"$ref": "#/$defs/Person"}], "$defs": {"Person": x}}),
            Loosened,
            Breaking,
            "/anyOf",
        ),
        (
            "items: X → anyOf[X, string]",
            json!({"type": "array", "items": x}),
            json!({"type": "array", "items": {"anyOf": [x, text]}}),
            Loosened,
            Breaking,
            "/anyOf",
        ),
        (
            "property: X → anyOf[X, null]",
            json!({"properties": {"p": x}}),
            json!({"properties": {"p": {"anyOf": [x, {"type": "null"}]}}}),
            Loosened,
            Breaking,
            "/anyOf",
        ),
        (
            "X holding its own anyOf → anyOf[X, string]",
            own_union.clone(),
            json!({"anyOf": [own_union.clone(), text.clone()]}),
            Loosened,
            Breaking,
            "wraps the old schema as branch 0",
        ),
        (
            "anyOf[X holding its own anyOf, string] → X",
            json!({"anyOf": [own_union.clone(), text.clone()]}),
            own_union,
            Breaking,
            Additive,
            "",
        ),
        (
            "X holding its own oneOf → anyOf[string, X]",
            own_one_of.clone(),
            json!({"anyOf": [text.clone(), own_one_of]}),
            Loosened,
            Breaking,
            "wraps the old schema as branch 1",
        ),
        (
            "X → oneOf[X, string]: no value of X is a string",
            x.clone(),
            json!({"oneOf": [x.clone(), text.clone()]}),
            Loosened,
            Breaking,
            "",
        ),
        (
            "string → oneOf[string, maxLength 3]: short strings match both",
            text.clone(),
            json!({"oneOf": [text.clone(), {"maxLength": 3}]}),
            Breaking,
            Breaking,
            "oneOf added at /oneOf",
        ),
        (
            "oneOf[X, string] → X",
            json!({"oneOf": [x.clone(), text.clone()]}),
            x,
            Breaking,
            Additive,
            "",
        ),
    ]);
}

#[test]
fn enum_and_a_union_of_consts_are_the_same_set() {
    let consts = |key: &str, values: &[&str]| {
        let branches: Vec<Value> = values.iter().map(|v| json!({"const": v})).collect();
        json!({ key: branches })
    };
    let typed = |values: &[&str]| {
        let branches: Vec<Value> = values
            .iter()
            .map(|v| json!({"type": "string", "const": v, "title": v.to_uppercase()}))
            .collect();
        json!({ "oneOf": branches })
    };
    let e = |values: &[&str]| json!({ "enum": values });
    check(vec![
        (
            "enum → anyOf of const",
            e(&["a", "b"]),
            consts("anyOf", &["a", "b"]),
            Notation,
            Notation,
            "equivalent spelling",
        ),
        (
            "anyOf of const → enum",
            consts("anyOf", &["b", "a"]),
            e(&["a", "b"]),
            Notation,
            Notation,
            "enum order changed",
        ),
        (
            "enum → oneOf of const",
            e(&["a", "b"]),
            consts("oneOf", &["a", "b"]),
            Notation,
            Notation,
            "",
        ),
        (
            "oneOf of const → enum",
            consts("oneOf", &["a", "b"]),
            e(&["a", "b"]),
            Notation,
            Notation,
            "",
        ),
        (
            "type + enum → oneOf of typed consts",
            json!({"type": "string", "enum": ["a", "b"]}),
            typed(&["a", "b"]),
            Notation,
            Notation,
            "type removed beside a list of values it already admits",
        ),
        (
            "oneOf of typed consts → type + enum",
            typed(&["a", "b"]),
            json!({"type": "string", "enum": ["a", "b"]}),
            Notation,
            Notation,
            "",
        ),
        (
            "nested under a property",
            json!({"properties": {"mode": {"enum": ["fast", "slow"]}}}),
            json!({"properties": {"mode": {"anyOf": [{"const": "fast"}, {"const": "slow"}]}}}),
            Notation,
            Notation,
            "",
        ),
        (
            "a value dropped in the respelling",
            e(&["a", "b"]),
            consts("anyOf", &["a"]),
            Breaking,
            Additive,
            "enum value removed \"b\"",
        ),
        (
            "a value added in the respelling",
            consts("anyOf", &["a"]),
            e(&["a", "b"]),
            Loosened,
            Breaking,
            "enum value added \"b\"",
        ),
        (
            "oneOf listing a value twice rejects it",
            e(&["a", "b"]),
            json!({"oneOf": [{"enum": ["a", "b"]}, {"const": "b"}]}),
            Breaking,
            Additive,
            "enum value removed \"b\"",
        ),
        (
            "a typed branch whose const has another type allows nothing",
            e(&["a", "1"]),
            json!({"anyOf": [{"const": "a"}, {"type": "integer", "const": "1"}]}),
            Breaking,
            Additive,
            "enum value removed \"1\"",
        ),
    ]);
}

#[test]
fn default_changes_of_properties() {
    let limit = |default: Option<i64>, required: bool| {
        let mut p = json!({"type": "integer"});
        if let Some(d) = default {
            p["default"] = json!(d);
        }
        json!({"type": "object", "properties": {"limit": p}, "required": if required { json!(["limit"]) } else { json!([]) }})
    };
    check(vec![
        (
            "stops being required and gains a default",
            limit(None, true),
            limit(Some(10), false),
            Loosened,
            Breaking,
            "required removed /properties/limit",
        ),
        (
            "stops being required and loses its default",
            limit(Some(10), true),
            limit(None, false),
            Loosened,
            Breaking,
            "every old call sent it",
        ),
        (
            "becomes required and loses its default",
            limit(Some(10), false),
            limit(None, true),
            Breaking,
            Unknown,
            "required added /properties/limit",
        ),
        (
            "optional, default changed",
            limit(Some(10), false),
            limit(Some(20), false),
            Unknown,
            Unknown,
            "callers that omit limit now get 20 instead of 10",
        ),
        (
            "optional, default changed back",
            limit(Some(20), false),
            limit(Some(10), false),
            Unknown,
            Unknown,
            "callers that omit limit now get 10 instead of 20",
        ),
        (
            "optional, default added",
            limit(None, false),
            limit(Some(10), false),
            Unknown,
            Unknown,
            "default added 10 at /properties/limit",
        ),
    ]);
}

/// Schemas for the property tests: objects, arrays and unions of a few leaves.
pub(super) mod generate {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"type": "integer", "minimum": 1})),
            Just(json!({"type": "boolean"})),
            Just(json!({"enum": [1, 2]})),
            Just(json!({"type": ["integer", "null"], "maximum": 9})),
            Just(json!({"type": "object", "additionalProperties": false})),
        ]
    }

    /// A schema none of whose values is a string (the tests add a string branch).
    pub(in super::super) fn schema() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::btree_map("[a-c]", inner.clone(), 0..3).prop_map(|props| {
                    let required: Vec<&String> = props.keys().take(1).collect();
                    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
                }),
                inner.clone().prop_map(|i| json!({"type": "array", "items": i})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"anyOf": b})),
                prop::collection::vec(inner, 1..3).prop_map(|b| json!({"type": "object", "allOf": b})),
            ]
        })
    }

    /// A set of values, as scalars of a few types.
    pub(in super::super) fn values() -> impl Strategy<Value = Vec<Value>> {
        prop::collection::vec(
            prop_oneof![
                "[a-d]{1,2}".prop_map(Value::from),
                (0i64..5).prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
                Just(Value::Null),
            ],
            1..5,
        )
        .prop_map(|mut vs| {
            let mut seen: Vec<Value> = Vec::new();
            vs.retain(|v| {
                let new = !seen.contains(v);
                seen.push(v.clone());
                new
            });
            vs
        })
    }
}

mod properties {
    use super::generate::{schema, values};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn wrapping_into_an_any_of_never_breaks(x in schema(), first in any::<bool>()) {
            let y = json!({"type": "string"});
            let branches = if first { json!([x, y]) } else { json!([y, x]) };
            let wrapped = json!({"anyOf": branches});
            let g = grade_schema_change(Some(&x), Some(&wrapped), Input);
            prop_assert!(g.compatibility != Breaking, "{:?}", g.details);
            let g = grade_schema_change(Some(&wrapped), Some(&x), Input);
            prop_assert!(g.compatibility != Loosened, "{:?}", g.details);
            for role in [Input, Output] {
                assert_consistent("wrap", &x, &wrapped, role);
                assert_consistent("unwrap", &wrapped, &x, role);
            }
        }

        #[test]
        fn enum_spelled_as_consts_is_notation(vs in values(), one_of in any::<bool>(), typed in any::<bool>()) {
            let branches: Vec<Value> = vs
                .iter()
                .map(|v| {
                    let mut b = json!({"const": v});
                    if typed {
                        b["type"] = json!(super::super::combinator::value_types(v)[0]);
                    }
                    b
                })
                .collect();
            let key = if one_of { "oneOf" } else { "anyOf" };
            let listed = json!({"enum": vs});
            let union = json!({ key: branches });
            for role in [Input, Output] {
                let g = grade_schema_change(Some(&listed), Some(&union), role);
                prop_assert_eq!(g.compatibility, Notation, "{:?}", g.details);
                let g = grade_schema_change(Some(&union), Some(&listed), role);
                prop_assert_eq!(g.compatibility, Notation, "{:?}", g.details);
                assert_consistent("enum → union", &listed, &union, role);
                assert_consistent("union → enum", &union, &listed, role);
            }
        }
    }
}

/// Every input and output schema change between consecutive github-mcp-server releases
/// (`../shared/fixtures`), checked against the witness search. Skips when absent.
#[test]
fn fixture_grades_agree_with_a_validator() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/github-mcp-server");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("SKIP: {} not present", dir.display());
        return;
    };
    let mut releases: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    releases.sort();
    let tools = |path: &std::path::Path| -> Map<String, Value> {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        doc["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t["name"].as_str()?.to_owned(), t.clone())))
            .collect()
    };
    let mut checked = 0;
    for pair in releases.windows(2) {
        let (before, after) = (tools(&pair[0]), tools(&pair[1]));
        for (name, old) in &before {
            let Some(new) = after.get(name) else { continue };
            for (field, role) in [("inputSchema", Input), ("outputSchema", Output)] {
                let (Some(a), Some(b)) = (old.get(field), new.get(field)) else {
                    continue;
                };
                if a != b {
                    assert_consistent(&format!("{name} {field}"), a, b, role);
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} fixture schema changes checked against the validator");
}
