//! Local `$ref` resolution for the grader: `#` and `#/json/pointer` references into the same
//! document (percent-encoded or not). A schema that is only a `$ref` (plus annotations and
//! definitions) is replaced by its target before comparing, so moving an inline schema into
//! `$defs` is notation, and a change inside a definition is graded where it is (its pointer
//! names the definition, e.g. `/$defs/Address/properties/zip`). Anything else (remote URLs,
//! `$anchor` names, dangling pointers) is left unresolved and compared as text.

use super::{DOC_KEYWORDS, Grader, Side, child};
use serde_json::Value;
use std::collections::HashSet;

/// How many bare `$ref`s in a row are followed before giving up (a chain of aliases).
const MAX_ALIAS_CHAIN: usize = 16;

/// Keywords that may stand beside a `$ref` without making it more than an alias.
fn is_alias_companion(key: &str) -> bool {
    key == "$ref"
        || key == "$schema"
        || DOC_KEYWORDS.contains(&key)
        || super::CONTAINER_KEYWORDS.contains(&key)
}

/// Resolves a local reference in `root`: the target and its JSON pointer (canonically
/// escaped, `""` for the root). `None` for anything that is not a local JSON pointer, or a
/// pointer to nothing.
pub(super) fn resolve<'r>(root: &'r Value, reference: &str) -> Option<(&'r Value, String)> {
    let fragment = percent_decode(reference.strip_prefix('#')?)?;
    if fragment.is_empty() {
        return Some((root, String::new()));
    }
    let mut node = root;
    let mut pointer = String::new();
    for raw in fragment.strip_prefix('/')?.split('/') {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
        pointer = child(&pointer, &segment);
    }
    Some((node, pointer))
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// Records the address of every object or array in `v` that contains a `$ref` key somewhere;
/// returns whether `v` does. An unchanged subtree is skipped only when it reaches no `$ref`.
pub(super) fn collect_ref_nodes(v: &Value, nodes: &mut HashSet<usize>) -> bool {
    let found = match v {
        Value::Object(map) => {
            let mut found = map.contains_key("$ref");
            for value in map.values() {
                found |= collect_ref_nodes(value, nodes);
            }
            found
        }
        Value::Array(items) => {
            let mut found = false;
            for item in items {
                found |= collect_ref_nodes(item, nodes);
            }
            found
        }
        _ => false,
    };
    if found {
        nodes.insert(super::addr(v));
    }
    found
}

impl Grader<'_> {
    /// Follows a schema that is only a local `$ref` (an alias) to its target. Returns the
    /// target and its pointer, or the value itself and `None`.
    pub(super) fn deref<'x>(&self, v: &'x Value, side: Side) -> (&'x Value, Option<String>)
    where
        Self: 'x,
    {
        let root = self.root(side);
        let mut current = v;
        let mut target = None;
        for _ in 0..MAX_ALIAS_CHAIN {
            let Some(map) = current.as_object() else {
                break;
            };
            let Some(reference) = map.get("$ref").and_then(Value::as_str) else {
                break;
            };
            if !map.keys().all(|k| is_alias_companion(k)) {
                break;
            }
            match resolve(root, reference) {
                Some((next, pointer)) => {
                    current = next;
                    target = Some(pointer);
                }
                None => {
                    self.unresolved_ref.set(true);
                    break;
                }
            }
        }
        (current, target)
    }

    /// Resolves the `$ref` keyword of a schema object on one side, noting a failure.
    pub(super) fn resolve_ref<'x>(
        &self,
        reference: Option<&Value>,
        side: Side,
    ) -> Option<(&'x Value, String)>
    where
        Self: 'x,
    {
        let found = reference
            .and_then(Value::as_str)
            .and_then(|r| resolve(self.root(side), r));
        if found.is_none() {
            self.unresolved_ref.set(true);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_local_pointers_only() {
        let doc = json!({"$defs": {"a/b": {"type": "string"}, "c d": {"items": [1, {"x": 2}]}}});
        assert_eq!(
            resolve(&doc, "#/$defs/a~1b"),
            Some((&json!({"type": "string"}), "/$defs/a~1b".to_owned()))
        );
        assert_eq!(
            resolve(&doc, "#/$defs/c%20d/items/1/x").map(|(v, p)| (v.clone(), p)),
            Some((json!(2), "/$defs/c d/items/1/x".to_owned()))
        );
        assert_eq!(resolve(&doc, "#").map(|(_, p)| p), Some(String::new()));
        assert!(resolve(&doc, "#/$defs/missing").is_none());
        assert!(resolve(&doc, "other.json#/$defs/a").is_none());
        assert!(resolve(&doc, "#anchor").is_none());
        assert!(resolve(&doc, "#/$defs/c%2").is_none());
    }

    #[test]
    fn ref_nodes_mark_every_ancestor_of_a_ref() {
        let doc = json!({"properties": {"a": {"$ref": "#/$defs/x"}, "b": {"type": "string"}}});
        let mut nodes = HashSet::new();
        assert!(collect_ref_nodes(&doc, &mut nodes));
        assert!(nodes.contains(&super::super::addr(&doc["properties"]["a"])));
        assert!(!nodes.contains(&super::super::addr(&doc["properties"]["b"])));
    }
}
