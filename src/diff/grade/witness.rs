//! An independent check of the grader, with a real JSON Schema validator (`jsonschema`): a
//! search for a *witness*, a value the consumer side handled before and cannot handle after
//! (input: valid before and invalid after; output: valid after and invalid before).
//!
//! A `breaking` grade must come with a witness (the tables name the cases); a `loosened`,
//! `additive` or `notation` grade must not, however hard the search looks. The candidate
//! values are drawn from both schemas: their listed values, bounds, property combinations,
//! array shapes and a spread of plain values of every type.
//!
//! The search follows the product's policy that a new optional property is `additive`: no one
//! used the exact name a release introduces before it was declared, so candidates that set a
//! property only the new schema declares are left out (a name neither schema declares stays).

use super::{Compatibility, SchemaRole, grade_schema_change};
use serde_json::{Map, Value, json};

/// Nesting of schemas the sampler follows.
const MAX_DEPTH: usize = 6;
/// Candidates kept per schema (keeps nested object combinations bounded).
const MAX_SAMPLES: usize = 400;

/// A value the consumer handled before and cannot handle after, if the search finds one.
pub(super) fn find_witness(old: &Value, new: &Value, role: SchemaRole) -> Option<Value> {
    let before = jsonschema::validator_for(old).ok()?;
    let after = jsonschema::validator_for(new).ok()?;
    let mut candidates = samples(old, old, 0);
    candidates.extend(samples(new, new, 0));
    candidates.retain(|v| !uses_a_new_name(v, old, new));
    candidates.into_iter().find(|v| match role {
        SchemaRole::Input => before.is_valid(v) && !after.is_valid(v),
        SchemaRole::Output => after.is_valid(v) && !before.is_valid(v),
    })
}

/// Checks one graded pair against the witness search; `name` labels a failure.
pub(super) fn assert_consistent(name: &str, old: &Value, new: &Value, role: SchemaRole) {
    let grade = grade_schema_change(Some(old), Some(new), role);
    let witness = find_witness(old, new, role);
    match grade.compatibility {
        Compatibility::Breaking => assert!(
            witness.is_some(),
            "{name} ({role:?}): graded breaking but no value valid before and rejected after was found: {:#?}",
            grade.details
        ),
        Compatibility::Unknown => {}
        quiet => assert!(
            witness.is_none(),
            "{name} ({role:?}): graded {quiet:?} but {} is accepted before and rejected after: {:#?}",
            witness.unwrap_or_default(),
            grade.details
        ),
    }
}

fn plain_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(2),
        json!(10),
        json!(1.5),
        json!(""),
        json!("a"),
        json!("ab"),
        json!("abcde"),
        json!([]),
        json!({}),
    ]
}

fn push_unique(out: &mut Vec<Value>, v: Value) {
    if out.len() < MAX_SAMPLES && !out.contains(&v) {
        out.push(v);
    }
}

/// Candidate values for `schema` (inside the document `root`, for `$ref`s).
fn samples(schema: &Value, root: &Value, depth: usize) -> Vec<Value> {
    let mut out = plain_values();
    let Some(m) = schema.as_object() else {
        return out;
    };
    if depth >= MAX_DEPTH {
        return out;
    }
    listed_values(m, &mut out);
    bound_values(m, &mut out);
    for sub in subschemas(m, root) {
        for v in samples(sub, root, depth + 1) {
            push_unique(&mut out, v);
        }
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        for v in object_values(props, m, root, depth) {
            push_unique(&mut out, v);
        }
    }
    if let Some(items) = m.get("items").filter(|i| i.is_object()) {
        for v in samples(items, root, depth + 1).into_iter().take(60) {
            push_unique(&mut out, json!([v.clone()]));
            push_unique(&mut out, json!([v.clone(), v]));
        }
    }
    out
}

fn listed_values(m: &Map<String, Value>, out: &mut Vec<Value>) {
    for key in ["const", "default"] {
        if let Some(v) = m.get(key) {
            push_unique(out, v.clone());
        }
    }
    for key in ["enum", "examples"] {
        for v in m.get(key).and_then(Value::as_array).into_iter().flatten() {
            push_unique(out, v.clone());
        }
    }
}

fn bound_values(m: &Map<String, Value>, out: &mut Vec<Value>) {
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        if let Some(x) = m.get(key).and_then(Value::as_f64) {
            for d in [-1.0, 0.0, 1.0] {
                let y = x + d;
                let v = if y.fract() == 0.0 && y.abs() < 1e15 {
                    json!(y as i64)
                } else {
                    json!(y)
                };
                push_unique(out, v);
            }
        }
    }
    for key in ["minLength", "maxLength"] {
        if let Some(n) = m.get(key).and_then(Value::as_u64).filter(|n| *n < 64) {
            for len in [n.saturating_sub(1), n, n + 1] {
                push_unique(out, json!("x".repeat(len as usize)));
            }
        }
    }
}

/// Every subschema the sampler follows: combinator branches, `$ref` targets, array and
/// additional-property schemas.
fn subschemas<'v>(m: &'v Map<String, Value>, root: &'v Value) -> Vec<&'v Value> {
    let mut subs = Vec::new();
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        subs.extend(m.get(key).and_then(Value::as_array).into_iter().flatten());
    }
    for key in ["not", "then", "else", "if", "additionalProperties", "items"] {
        subs.extend(m.get(key).filter(|s| s.is_object()));
    }
    if let Some(target) = m
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        subs.push(target);
    }
    subs
}

/// Objects built from the properties: the required ones alone, all of them, each property
/// with each of its samples, and an undeclared extra property.
fn object_values(
    props: &Map<String, Value>,
    m: &Map<String, Value>,
    root: &Value,
    depth: usize,
) -> Vec<Value> {
    let per_property: Vec<(&String, Vec<Value>)> = props
        .iter()
        .map(|(k, s)| (k, samples(s, root, depth + 1)))
        .collect();
    let required: Vec<&str> = m
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let valid_first = |k: &String, vs: &[Value]| {
        let validator = jsonschema::validator_for(&props[k]).ok();
        vs.iter()
            .find(|v| validator.as_ref().is_some_and(|val| val.is_valid(v)))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let base: Map<String, Value> = per_property
        .iter()
        .filter(|(k, _)| required.contains(&k.as_str()))
        .map(|(k, vs)| ((*k).clone(), valid_first(k, vs)))
        .collect();
    let full: Map<String, Value> = per_property
        .iter()
        .map(|(k, vs)| ((*k).clone(), valid_first(k, vs)))
        .collect();
    let mut out = vec![Value::Object(base.clone()), Value::Object(full.clone())];
    for template in [&base, &full] {
        for filler in [json!(1), json!("x")] {
            let mut extra = template.clone();
            extra.insert("zz_extra".into(), filler);
            out.push(Value::Object(extra));
        }
    }
    for template in [&base, &full] {
        for (k, vs) in &per_property {
            for v in vs {
                let mut obj = template.clone();
                obj.insert((*k).clone(), v.clone());
                out.push(Value::Object(obj));
            }
            let mut without = template.clone();
            without.remove(k.as_str());
            out.push(Value::Object(without));
        }
    }
    out
}

/// The value sets a property that the new schema declares and the old one does not (at any
/// depth reached through `properties` and `items`).
fn uses_a_new_name(v: &Value, old: &Value, new: &Value) -> bool {
    let props = |s: &Value| s.get("properties").and_then(Value::as_object).cloned();
    match v {
        Value::Object(fields) => {
            let (Some(before), Some(after)) = (props(old), props(new)) else {
                return false;
            };
            fields
                .iter()
                .any(|(k, x)| match (before.get(k), after.get(k)) {
                    (None, Some(_)) => true,
                    (Some(a), Some(b)) => uses_a_new_name(x, a, b),
                    _ => false,
                })
        }
        Value::Array(items) => match (old.get("items"), new.get("items")) {
            (Some(a), Some(b)) => items.iter().any(|x| uses_a_new_name(x, a, b)),
            _ => false,
        },
        _ => false,
    }
}
