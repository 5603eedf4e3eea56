//! Short digests of the prompts and resource templates of a surface, by name: what a ledger
//! entry keeps beside its per-tool digests, so that a run whose stored surface record is gone
//! can still name the prompts and templates added, removed or changed (`baseline_lost`).
//!
//! Resources are not kept here (the surface record keeps them, and the digests of a summarized
//! list, [`super::ListSummary`]). An itemized resource list holds up to
//! [`super::ITEMIZED_RESOURCES_MAX`] URIs, often long ones (file paths, row keys): some 10 KB an
//! entry, 10 MB for a full shard of 1,000 servers, more than the whole ledger index may hold
//! (9 MiB), where 20 prompts and templates cost about 1 KB an entry. Resources are also data
//! more often than surface.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Declared, DeclaredKind, item_digest};

/// The short digest of every prompt and resource template of one surface.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ItemDigests {
    /// Prompt name → short digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompts: BTreeMap<String, String>,
    /// Resource template name → short digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_templates: BTreeMap<String, String>,
    /// Kinds whose items are not known one by one (not read, or summarized): their empty map
    /// means "unknown", not "none".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_itemized: Vec<DeclaredKind>,
}

impl ItemDigests {
    /// The digests of the prompts and templates of `declared`.
    pub fn of(declared: &Declared) -> ItemDigests {
        let digests = |kind: DeclaredKind| -> BTreeMap<String, String> {
            declared
                .items(kind)
                .iter()
                .map(|item| (item.key.clone(), item_digest(kind, &item.raw)))
                .collect()
        };
        ItemDigests {
            prompts: digests(DeclaredKind::Prompt),
            resource_templates: digests(DeclaredKind::ResourceTemplate),
            not_itemized: [DeclaredKind::Prompt, DeclaredKind::ResourceTemplate]
                .into_iter()
                .filter(|kind| !declared.itemizes(*kind))
                .collect(),
        }
    }

    /// The digests of one kind by name; `None` when its items are not known one by one (and
    /// for resources, which are not kept).
    pub fn of_kind(&self, kind: DeclaredKind) -> Option<&BTreeMap<String, String>> {
        if self.not_itemized.contains(&kind) {
            return None;
        }
        match kind {
            DeclaredKind::Prompt => Some(&self.prompts),
            DeclaredKind::ResourceTemplate => Some(&self.resource_templates),
            DeclaredKind::Resource => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::summary::ITEM_DIGEST_HEX;
    use super::*;
    use crate::surface::ListRead;
    use serde_json::{Value, json};

    fn declared(prompts: Option<Value>, templates: Option<Value>) -> Declared {
        let read = |items: Option<Value>| {
            items.map(|v| ListRead {
                items: v.as_array().cloned().unwrap_or_default(),
                truncated: false,
            })
        };
        Declared::from_reads(read(prompts), read(Some(json!([]))), read(templates)).0
    }

    #[test]
    fn prompts_and_templates_are_digested_by_name_and_unknown_kinds_named() {
        let one = declared(
            Some(json!([{"name": "greet", "description": "Greets"}])),
            Some(json!([{"name": "doc", "uriTemplate": "x://{id}"}])),
        );
        let digests = ItemDigests::of(&one);
        assert_eq!(digests.prompts.len(), 1);
        assert_eq!(digests.prompts["greet"].len(), ITEM_DIGEST_HEX);
        assert_eq!(digests.resource_templates.len(), 1);
        assert!(digests.not_itemized.is_empty());
        assert!(digests.of_kind(DeclaredKind::Resource).is_none());

        let edited = declared(
            Some(json!([{"name": "greet", "description": "Greets you"}])),
            Some(json!([{"name": "doc", "uriTemplate": "x://{id}"}])),
        );
        let other = ItemDigests::of(&edited);
        assert_ne!(other.prompts["greet"], digests.prompts["greet"]);
        assert_eq!(other.resource_templates, digests.resource_templates);

        let unread = ItemDigests::of(&declared(None, Some(json!([]))));
        assert_eq!(unread.not_itemized, [DeclaredKind::Prompt]);
        assert!(unread.of_kind(DeclaredKind::Prompt).is_none());
        assert_eq!(
            unread.of_kind(DeclaredKind::ResourceTemplate),
            Some(&BTreeMap::new())
        );
        let none = ItemDigests::of(&Declared::default());
        assert_eq!(serde_json::to_value(&none).unwrap(), json!({}));
    }
}
