//! Arrays: `items`, `prefixItems` and draft-07 tuple `items` with `additionalItems`, compared
//! position by position.

use super::{Effect, Grader, TRUE_SCHEMA, View, at, child};
use serde_json::Value;

impl Grader<'_> {
    /// `prefixItems` (or draft-07 tuple `items`) and the schema for the remaining elements,
    /// compared position by position: each position is graded against the schema that governed
    /// it before and governs it now.
    pub(super) fn compare_items(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let (Some(old), Some(new)) = (tuple_of(o), tuple_of(n)) else {
            return self.push(
                Effect::Unknown,
                format!("prefixItems is not an array at {}", at(ptr)),
            );
        };
        let positions = old.prefix.len().max(new.prefix.len());
        for i in 0..positions {
            let before = old.prefix.get(i).or(old.rest).unwrap_or(&TRUE_SCHEMA);
            let after = new.prefix.get(i).or(new.rest).unwrap_or(&TRUE_SCHEMA);
            let p = if i < new.prefix.len() {
                child(&child(ptr, new.prefix_key), &i.to_string())
            } else {
                child(ptr, new.rest_key)
            };
            self.walk(before, after, &p);
        }
        self.walk(
            old.rest.unwrap_or(&TRUE_SCHEMA),
            new.rest.unwrap_or(&TRUE_SCHEMA),
            &child(ptr, new.rest_key),
        );
    }
}

/// The positional part of an array schema and the schema for the elements after it.
struct Tuple<'v> {
    prefix: &'v [Value],
    prefix_key: &'static str,
    rest: Option<&'v Value>,
    rest_key: &'static str,
}

/// Reads either spelling: 2020-12 `prefixItems` + `items`, or draft-07 array `items` +
/// `additionalItems`. `None` when `prefixItems` is not an array.
fn tuple_of<'v>(v: View<'v>) -> Option<Tuple<'v>> {
    if let Some(Value::Array(prefix)) = v.get("items") {
        return Some(Tuple {
            prefix,
            prefix_key: "items",
            rest: v.get("additionalItems"),
            rest_key: "additionalItems",
        });
    }
    let prefix: &[Value] = match v.get("prefixItems") {
        None => &[],
        Some(Value::Array(p)) => p,
        Some(_) => return None,
    };
    Some(Tuple {
        prefix,
        prefix_key: "prefixItems",
        rest: v.get("items"),
        rest_key: "items",
    })
}
