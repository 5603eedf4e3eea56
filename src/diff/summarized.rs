//! What changed in a list kept as a summary (`surface::ListSummary`), item by item, from the
//! short digest of every item both sides kept: the items removed, added and changed, and the
//! text of the one change row that names them. Pure: no I/O.
//!
//! A summarized list is large, and often data that churns (files, rows, tickets): however many
//! of its items changed it stays one row, which names at most [`NAMED_ITEMS_MAX`] items of each
//! sort (removed, added, changed), each cut to [`NAME_CHARS_MAX`] characters, and counts the
//! rest.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::surface::canon;

/// The most items of each sort (removed, added, changed) a change row names; the rest are
/// counted ("and 40 more").
pub const NAMED_ITEMS_MAX: usize = 10;

/// The most characters of a key (URI, name) a change row shows; a longer one ends in `…`.
pub const NAME_CHARS_MAX: usize = 120;

/// The items of a summarized list that differ between two reads, by key in UTF-16 order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemDelta {
    /// Keys only the old list holds.
    pub removed: Vec<String>,
    /// Keys only the new list holds.
    pub added: Vec<String>,
    /// Keys both hold, with another digest (the item's surface changed).
    pub changed: Vec<String>,
}

impl ItemDelta {
    /// The difference between two lists given as key → short digest.
    pub fn between(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> ItemDelta {
        let mut delta = ItemDelta::default();
        for (key, digest) in old {
            match new.get(key) {
                None => delta.removed.push(key.clone()),
                Some(other) if other != digest => delta.changed.push(key.clone()),
                Some(_) => {}
            }
        }
        delta.added = new
            .keys()
            .filter(|key| !old.contains_key(*key))
            .cloned()
            .collect();
        for keys in [&mut delta.removed, &mut delta.added, &mut delta.changed] {
            keys.sort_by(|a, b| canon::cmp_utf16(a, b));
        }
        delta
    }

    /// How many items differ.
    pub fn len(&self) -> usize {
        self.removed.len() + self.added.len() + self.changed.len()
    }

    /// True when no item differs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items named on one side of the change row, with their short digests there: on the
    /// old side the removed and changed ones, on the new side the added and changed ones (at
    /// most [`NAMED_ITEMS_MAX`] of each sort), so two different swaps never make equal values.
    pub fn named_digests(&self, side: &BTreeMap<String, String>, old_side: bool) -> Value {
        let gone_or_new = if old_side { &self.removed } else { &self.added };
        let mut items = Map::new();
        for key in [gone_or_new, &self.changed]
            .into_iter()
            .flat_map(|keys| keys.iter().take(NAMED_ITEMS_MAX))
        {
            if let Some(digest) = side.get(key) {
                items.insert(key.clone(), json!(digest));
            }
        }
        Value::Object(items)
    }

    /// The items named, sort by sort: `removed a, b; added c; changed d and 3 more`; empty
    /// when none differ.
    pub fn names(&self) -> String {
        [
            ("removed", &self.removed),
            ("added", &self.added),
            ("changed", &self.changed),
        ]
        .into_iter()
        .filter(|(_, keys)| !keys.is_empty())
        .map(|(verb, keys)| format!("{verb} {}", listed(keys)))
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// `keys` as a comma-separated list of at most [`NAMED_ITEMS_MAX`] shortened names, the rest
/// counted.
fn listed(keys: &[String]) -> String {
    let mut text = keys
        .iter()
        .take(NAMED_ITEMS_MAX)
        .map(|key| shortened(key))
        .collect::<Vec<_>>()
        .join(", ");
    let rest = keys.len().saturating_sub(NAMED_ITEMS_MAX);
    if rest > 0 {
        text.push_str(&format!(" and {rest} more"));
    }
    text
}

/// `key` cut to [`NAME_CHARS_MAX`] characters (`…` marks the cut).
fn shortened(key: &str) -> String {
    if key.chars().count() <= NAME_CHARS_MAX {
        return key.to_string();
    }
    let mut cut: String = key.chars().take(NAME_CHARS_MAX - 1).collect();
    cut.push('…');
    cut
}

/// The first line of a summarized list's change row: what happened to its count and, when the
/// items are known on both sides, which changed. `noun` is the singular of the kind
/// (`resource`); `before` and `after` are `(total, complete)`.
pub fn headline(
    noun: &str,
    before: (u64, bool),
    after: (u64, bool),
    delta: Option<&ItemDelta>,
) -> String {
    let plural = |n: u64| {
        if n == 1 {
            noun.to_string()
        } else {
            format!("{noun}s")
        }
    };
    let names = delta.map(ItemDelta::names).unwrap_or_default();
    let changed = delta.map_or(0, ItemDelta::len) as u64;
    let mut line = if before.0 == after.0 && changed > 0 {
        format!(
            "{changed} {} changed at the same count {}",
            plural(changed),
            after.0
        )
    } else {
        format!("{} → {} {}", before.0, after.0, plural(after.0))
    };
    if !names.is_empty() {
        line.push_str(": ");
        line.push_str(&names);
    }
    if !after.1 {
        line.push_str(&format!(
            " (list cut by the page limit: the count {} is a lower bound)",
            after.0
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn items_removed_added_and_changed_are_found() {
        // (old, new, removed, added, changed)
        type Pairs<'a> = &'a [(&'a str, &'a str)];
        type Keys<'a> = &'a [&'a str];
        let table: [(Pairs, Pairs, Keys, Keys, Keys); 4] = [
            (
                &[("a", "1"), ("b", "2")],
                &[("a", "1"), ("b", "2")],
                &[],
                &[],
                &[],
            ),
            (
                &[("a", "1"), ("b", "2")],
                &[("a", "1"), ("c", "2")],
                &["b"],
                &["c"],
                &[],
            ),
            (&[("a", "1")], &[("a", "9")], &[], &[], &["a"]),
            (&[], &[("x", "1"), ("w", "2")], &[], &["w", "x"], &[]),
        ];
        for (old, new, removed, added, changed) in table {
            let delta = ItemDelta::between(&map(old), &map(new));
            assert_eq!(delta.removed, removed, "{old:?} {new:?}");
            assert_eq!(delta.added, added, "{old:?} {new:?}");
            assert_eq!(delta.changed, changed, "{old:?} {new:?}");
            assert_eq!(
                delta.is_empty(),
                removed.is_empty() && added.is_empty() && changed.is_empty()
            );
        }
    }

    #[test]
    fn the_headline_names_what_changed_within_bounds() {
        let swap = ItemDelta {
            removed: vec!["sentry-query-syntax".into()],
            added: vec!["sentry://about".into()],
            changed: vec![],
        };
        let many = ItemDelta {
            removed: (0..25).map(|i| format!("f{i:02}")).collect(),
            added: vec!["x".repeat(200)],
            changed: vec![],
        };
        let cases = [
            (
                (127, true),
                (127, true),
                Some(&swap),
                "2 resources changed at the same count 127: removed sentry-query-syntax; added sentry://about",
            ),
            ((1000, true), (1017, true), None, "1000 → 1017 resources"),
            (
                (127, true),
                (127, false),
                None,
                "127 → 127 resources (list cut by the page limit: the count 127 is a lower bound)",
            ),
            (
                (3, true),
                (1, true),
                Some(&ItemDelta {
                    removed: vec!["a".into(), "b".into()],
                    ..ItemDelta::default()
                }),
                "3 → 1 resource: removed a, b",
            ),
            (
                (1000, true),
                (500, false),
                None,
                "1000 → 500 resources (list cut by the page limit: the count 500 is a lower bound)",
            ),
        ];
        for (before, after, delta, expected) in cases {
            assert_eq!(headline("resource", before, after, delta), expected);
        }
        let line = headline("resource", (30, true), (6, true), Some(&many));
        assert!(
            line.starts_with("30 → 6 resources: removed f00, f01, f02, f03, f04, f05, f06, f07, f08, f09 and 15 more; added xxx"),
            "{line}"
        );
        assert!(line.ends_with("x…"), "{line}");
        assert_eq!(
            line.chars().filter(|c| *c == 'x').count(),
            NAME_CHARS_MAX - 1
        );
    }

    #[test]
    fn named_digests_differ_for_different_swaps_and_stay_bounded() {
        let old = map(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let one = map(&[("a", "1"), ("b", "2"), ("d", "4")]);
        let other = map(&[("a", "1"), ("c", "3"), ("e", "5")]);
        let first = ItemDelta::between(&old, &one);
        let second = ItemDelta::between(&old, &other);
        assert_eq!(first.named_digests(&old, true), json!({"c": "3"}));
        assert_eq!(first.named_digests(&one, false), json!({"d": "4"}));
        assert_ne!(
            first.named_digests(&old, true),
            second.named_digests(&old, true)
        );
        let big: BTreeMap<String, String> =
            (0..100).map(|i| (format!("k{i:03}"), "0".into())).collect();
        let delta = ItemDelta::between(&big, &BTreeMap::new());
        let named = delta.named_digests(&big, true);
        assert_eq!(named.as_object().map(Map::len), Some(NAMED_ITEMS_MAX));
    }
}
