//! The same set of values spelled another way: an `anyOf` or `oneOf` whose branches each only
//! list values (`const` or `enum`, maybe with a `type` and annotations) is an `enum` of those
//! values. Both documents are rewritten to the `enum` spelling before grading, so
//! `{enum: [a, b]}` ↔ `{anyOf: [{const: a}, {const: b}]}` is notation and a value added to
//! either spelling is graded like an `enum` value.
//!
//! The rewrite is exact: a value a branch's own `type` rejects is not in the set, and for
//! `oneOf` a value two branches list is rejected by the union, so it is left out too.

use super::combinator::value_types;
use super::keywords::type_set;
use super::{DOC_KEYWORDS, MAX_DEPTH, same};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Keywords whose values are data, not schemas: never rewritten.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// The document with every union of listed values spelled as an `enum`; borrowed when there
/// is none.
pub(super) fn normalize(doc: &Value) -> Cow<'_, Value> {
    if needs_rewrite(doc, 0) {
        let mut owned = doc.clone();
        rewrite(&mut owned, 0);
        Cow::Owned(owned)
    } else {
        Cow::Borrowed(doc)
    }
}

fn needs_rewrite(v: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match v {
        Value::Object(m) => {
            union_of_values(m).is_some()
                || m.iter().any(|(k, c)| {
                    !DATA_KEYWORDS.contains(&k.as_str()) && needs_rewrite(c, depth + 1)
                })
        }
        Value::Array(items) => items.iter().any(|c| needs_rewrite(c, depth + 1)),
        _ => false,
    }
}

fn rewrite(v: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(m) => {
            if let Some((key, values)) = union_of_values(m) {
                m.remove(key);
                m.insert("enum".into(), Value::Array(values));
            }
            for (k, c) in m.iter_mut() {
                if !DATA_KEYWORDS.contains(&k.as_str()) {
                    rewrite(c, depth + 1);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| rewrite(c, depth + 1)),
        _ => {}
    }
}

/// The union keyword of a schema object and the values it allows, when every branch only
/// lists values and the object has no `enum` or `const` of its own.
fn union_of_values(m: &Map<String, Value>) -> Option<(&'static str, Vec<Value>)> {
    if m.contains_key("enum") || m.contains_key("const") {
        return None;
    }
    let key = ["anyOf", "oneOf"]
        .into_iter()
        .find(|k| m.contains_key(*k))?;
    let branches = m.get(key)?.as_array().filter(|b| !b.is_empty())?;
    let mut listed: Vec<Vec<&Value>> = Vec::with_capacity(branches.len());
    for branch in branches {
        listed.push(branch_values(branch)?);
    }
    let mut values: Vec<Value> = Vec::new();
    for (i, own) in listed.iter().enumerate() {
        for v in own {
            let elsewhere = listed
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && other.iter().any(|w| same(v, w)));
            if key == "oneOf" && elsewhere {
                continue;
            }
            if !values.iter().any(|w| same(v, w)) {
                values.push((*v).clone());
            }
        }
    }
    Some((key, values))
}

/// The values one branch allows, when it only lists values: `const` or `enum`, maybe a
/// `type` (values of another type are dropped), and annotations.
fn branch_values(branch: &Value) -> Option<Vec<&Value>> {
    let m = branch.as_object()?;
    let listing_only = m.keys().all(|k| {
        matches!(k.as_str(), "const" | "enum" | "type") || DOC_KEYWORDS.contains(&k.as_str())
    });
    if !listing_only {
        return None;
    }
    let values: Vec<&Value> = match (m.get("const"), m.get("enum")) {
        (Some(c), None) => vec![c],
        (None, Some(Value::Array(e))) => e.iter().collect(),
        _ => return None,
    };
    let types = type_set(m.get("type"));
    Some(
        values
            .into_iter()
            .filter(|v| {
                types
                    .as_ref()
                    .is_none_or(|ts| value_types(v).iter().any(|t| ts.iter().any(|s| s == t)))
            })
            .collect(),
    )
}
