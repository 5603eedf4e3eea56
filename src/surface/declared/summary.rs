//! A list kept as a summary instead of item by item ([`ListSummary`]): its count, whether it
//! was read completely, a sample of its keys and, for a complete list of at most
//! [`DIGESTED_ITEMS_MAX`] items, a short digest of every item by key. Pure: no I/O.
//!
//! The digests are what lets a list kept as a count still name what changed: Sentry's fixed
//! catalogue of 127 documents that drops one and adds another keeps its count, and only the
//! digests tell the two lists apart. They live in the per-server surface record, never in the
//! ledger index (which has no room for them, see [`super::ItemDigests`]): 2,000 file URIs and
//! their 16-hex digests are some 200 KB, well within the 9 MiB a record may hold.
//!
//! A list cut by the page limit gets no digests: its items are the first pages of an unknown
//! whole, and an item that left those pages may only have moved past them. A summary written
//! before the digests existed has none either; both are compared by count only.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{DeclaredItem, DeclaredKind, surface_view};
use crate::surface::hash_value;

/// How many keys (URIs, names) a summary keeps as a sample.
pub const RESOURCE_SAMPLE: usize = 5;

/// The most items of a complete summarized list digested one by one (in the surface record):
/// well above the 127 documents of the largest fixed catalogue seen (Sentry's) and the 1,000 of
/// a large one. A longer list is kept as its count and sample only.
pub const DIGESTED_ITEMS_MAX: usize = 2_000;

/// Hex digits kept of each item's digest: 64 bits, as for tools, plenty to tell a changed item
/// from an unchanged one.
pub(crate) const ITEM_DIGEST_HEX: usize = 16;

/// The short digest of one item: what of it is surface ([`surface_view`]), hashed and cut to
/// [`ITEM_DIGEST_HEX`] hex digits. The ledger index's prompt and template digests
/// ([`super::ItemDigests`]) and the digests of a summarized list are this one.
pub fn item_digest(kind: DeclaredKind, raw: &Value) -> String {
    let mut short = hash_value(&surface_view(kind, raw));
    short.truncate(ITEM_DIGEST_HEX);
    short
}

/// The short digest of every item of a list, by key.
pub fn item_digests(kind: DeclaredKind, items: &[DeclaredItem]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|item| (item.key.clone(), item_digest(kind, &item.raw)))
        .collect()
}

/// A list kept as a summary instead of item by item (it was long or incomplete).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ListSummary {
    /// How many items were read.
    pub total: u64,
    /// False when the page limit cut the list (there may be more).
    pub complete: bool,
    /// The first [`RESOURCE_SAMPLE`] keys (URIs, names) in key order: what the list looks
    /// like. Not part of the digest (the item digests are).
    pub sample: Vec<String>,
    /// Key → short digest ([`item_digest`]) of every item of a complete list of at most
    /// [`DIGESTED_ITEMS_MAX`] items, so that a change at the same count can be named; `None`
    /// for a longer or cut list, and in records written before digests were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digests: Option<BTreeMap<String, String>>,
}

impl ListSummary {
    /// The summary of `items` (sorted by key) of one `kind`.
    pub fn of(kind: DeclaredKind, items: &[DeclaredItem], complete: bool) -> Self {
        ListSummary {
            total: items.len() as u64,
            complete,
            sample: items
                .iter()
                .take(RESOURCE_SAMPLE)
                .map(|item| item.key.clone())
                .collect(),
            digests: (complete && items.len() <= DIGESTED_ITEMS_MAX)
                .then(|| item_digests(kind, items)),
        }
    }

    /// What the surface digest covers of this summary: its count, its completeness and, when
    /// kept, its item digests (not its sample). A summary without digests gives exactly what
    /// it gave before they existed, so a stored record of an earlier version still matches the
    /// digest its ledger entry names.
    pub fn digest_material(&self) -> Value {
        let mut material = json!({"total": self.total, "complete": self.complete});
        if let Some(digests) = &self.digests {
            material["items"] = json!(digests);
        }
        material
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<DeclaredItem> {
        (0..n)
            .map(|i| {
                let key = format!("doc://{i:05}");
                DeclaredItem {
                    raw: json!({"uri": key, "name": format!("d{i}")}),
                    key,
                }
            })
            .collect()
    }

    #[test]
    fn complete_lists_up_to_the_bound_keep_a_digest_per_item() {
        // (items, complete, digested)
        let table = [
            (127, true, true),
            (DIGESTED_ITEMS_MAX, true, true),
            (DIGESTED_ITEMS_MAX + 1, true, false),
            (127, false, false),
        ];
        for (n, complete, digested) in table {
            let summary = ListSummary::of(DeclaredKind::Resource, &items(n), complete);
            let case = format!("{n} {complete}");
            assert_eq!(summary.total, n as u64, "{case}");
            assert_eq!(summary.digests.is_some(), digested, "{case}");
            if let Some(digests) = &summary.digests {
                assert_eq!(digests.len(), n, "{case}");
                assert!(digests.values().all(|d| d.len() == ITEM_DIGEST_HEX));
                assert!(summary.digest_material()["items"].is_object(), "{case}");
            } else {
                assert_eq!(
                    summary.digest_material(),
                    json!({"total": n, "complete": complete}),
                    "{case}: as before digests existed"
                );
            }
        }
    }

    #[test]
    fn a_summary_without_digests_reads_back_and_digests_as_before() {
        let old: ListSummary = serde_json::from_value(
            json!({"total": 127, "complete": true, "sample": ["doc://00000"]}),
        )
        .unwrap();
        assert_eq!(old.digests, None);
        assert_eq!(
            old.digest_material(),
            json!({"total": 127, "complete": true})
        );
        let new = ListSummary::of(DeclaredKind::Resource, &items(127), true);
        let back: ListSummary =
            serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        assert_eq!(back, new);
    }

    #[test]
    fn only_the_surface_of_an_item_is_digested() {
        let a = json!({"uri": "file:///a", "size": 1});
        let b = json!({"uri": "file:///a", "size": 2});
        let c = json!({"uri": "file:///a", "description": "other"});
        let kind = DeclaredKind::Resource;
        assert_eq!(item_digest(kind, &a), item_digest(kind, &b));
        assert_ne!(item_digest(kind, &a), item_digest(kind, &c));
    }
}
