//! The rest of the declared surface: prompts, resources and resource templates, as a server
//! lists them (`prompts/list`, `resources/list`, `resources/templates/list`). Pure: no I/O.
//!
//! Each kind is kept like tools: the object as served, one per identity key, sorted by key in
//! UTF-16 order. The key of a prompt and of a template is its `name`; the key of a resource is
//! its `uri` (a resource is what it points at).
//!
//! **Data is not surface.** Many servers list data as resources (files, rows, tickets) that
//! change every run. A list is itemized only when it was read completely and holds at most its
//! kind's limit ([`ITEMIZED_RESOURCES_MAX`] resources, [`ITEMIZED_PROMPTS_MAX`] prompts,
//! [`ITEMIZED_TEMPLATES_MAX`] templates); a longer or incomplete list is kept as one
//! [`ListSummary`]: its count, a small sample and, for a complete list of at most
//! [`DIGESTED_ITEMS_MAX`] items, a short digest per item. A summarized list that changes is one
//! change row however many of its items changed (`resource_count_changed`,
//! `prompt_count_changed`, `resource_template_count_changed`), naming a bounded number of the
//! items removed, added or changed when both sides kept digests; a cut or longer list changes
//! the surface only when its count does. The items of a summarized list are neither compared
//! field by field nor scanned one by one.
//!
//! A surface without any of them has an empty [`Declared`], and its digest is exactly the tool
//! digest of the versions that did not read them (see `Surface::tool_digest`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::canon;

mod digests;
mod summary;

pub use digests::ItemDigests;
pub use summary::{DIGESTED_ITEMS_MAX, ListSummary, RESOURCE_SAMPLE, item_digest, item_digests};

/// The most resources itemized one by one; a longer (or incomplete) list is summarized.
pub const ITEMIZED_RESOURCES_MAX: usize = 100;
/// The most prompts itemized one by one (as many as tools); a longer (or incomplete) list is
/// summarized.
pub const ITEMIZED_PROMPTS_MAX: usize = 500;
/// The most resource templates itemized one by one; a longer (or incomplete) list is
/// summarized.
pub const ITEMIZED_TEMPLATES_MAX: usize = 500;

/// One kind of declared item other than tools.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub enum DeclaredKind {
    /// A `prompts/list` item.
    Prompt,
    /// A `resources/list` item.
    Resource,
    /// A `resources/templates/list` item.
    ResourceTemplate,
}

impl DeclaredKind {
    /// Every kind, in the order they appear in outputs.
    pub const ALL: [DeclaredKind; 3] = [
        DeclaredKind::Prompt,
        DeclaredKind::Resource,
        DeclaredKind::ResourceTemplate,
    ];

    /// The list method that reads this kind.
    pub fn method(self) -> &'static str {
        match self {
            DeclaredKind::Prompt => "prompts/list",
            DeclaredKind::Resource => "resources/list",
            DeclaredKind::ResourceTemplate => "resources/templates/list",
        }
    }

    /// The key of the item array in a list result, also the key of the kind in the surface's
    /// canonical JSON and the first segment of a change's `field`.
    pub fn list_key(self) -> &'static str {
        match self {
            DeclaredKind::Prompt => "prompts",
            DeclaredKind::Resource => "resources",
            DeclaredKind::ResourceTemplate => "resourceTemplates",
        }
    }

    /// The server capability that declares this kind.
    pub fn capability(self) -> &'static str {
        match self {
            DeclaredKind::Prompt => "prompts",
            DeclaredKind::Resource | DeclaredKind::ResourceTemplate => "resources",
        }
    }

    /// The field that identifies an item of this kind.
    pub fn key_field(self) -> &'static str {
        match self {
            DeclaredKind::Resource => "uri",
            DeclaredKind::Prompt | DeclaredKind::ResourceTemplate => "name",
        }
    }

    /// The `field` that names one item of this kind in a change or finding:
    /// `prompts["greet"]` (the key as a JSON string).
    pub fn item_field(self, key: &str) -> String {
        let quoted = serde_json::to_string(key).unwrap_or_default();
        format!("{}[{quoted}]", self.list_key())
    }

    /// The words people use for an item of this kind (`prompt`, `resource`, `resource template`).
    pub fn noun(self) -> &'static str {
        match self {
            DeclaredKind::Prompt => "prompt",
            DeclaredKind::Resource => "resource",
            DeclaredKind::ResourceTemplate => "resource template",
        }
    }

    /// The most items of this kind itemized one by one; a longer list is summarized.
    pub fn itemized_max(self) -> usize {
        match self {
            DeclaredKind::Prompt => ITEMIZED_PROMPTS_MAX,
            DeclaredKind::Resource => ITEMIZED_RESOURCES_MAX,
            DeclaredKind::ResourceTemplate => ITEMIZED_TEMPLATES_MAX,
        }
    }
}

/// One declared item: its identity key and the object exactly as served.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DeclaredItem {
    /// The identity key ([`DeclaredKind::key_field`]).
    pub key: String,
    /// The item as served.
    pub raw: Value,
}

/// The summary of a resource list (the name it had before prompts and templates were
/// summarized too).
pub type ResourceList = ListSummary;

/// What a probe read of one list, before it becomes part of a surface.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListRead {
    /// The items of every page, in served order.
    pub items: Vec<Value>,
    /// True when the page limit cut the list.
    pub truncated: bool,
}

/// Prompts, resources and resource templates of one surface.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Declared {
    /// Prompts by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<DeclaredItem>,
    /// Resources by URI (empty when the list is summarized in `resource_list`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<DeclaredItem>,
    /// Resource templates by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_templates: Vec<DeclaredItem>,
    /// The summary of a resource list too large (or incomplete) to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_list: Option<ListSummary>,
    /// The summary of a prompt list too long (or incomplete) to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_list: Option<ListSummary>,
    /// The summary of a resource template list too long (or incomplete) to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_template_list: Option<ListSummary>,
    /// Kinds the server declares but that were not read (the listing failed, or reading was
    /// turned off): nothing is known of them, so they are not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<DeclaredKind>,
    /// Set on a surface rebuilt from a record of a version that did not read these lists: its
    /// empty lists mean "not known", not "none". Never stored nor digested.
    #[serde(skip)]
    pub not_recorded: bool,
}

impl Declared {
    /// True when there is nothing to add to the tool digest: no item, no summary, nothing unread.
    pub fn is_empty(&self) -> bool {
        DeclaredKind::ALL
            .into_iter()
            .all(|kind| self.items(kind).is_empty() && self.summary(kind).is_none())
            && self.unread.is_empty()
    }

    /// Builds the declared part from what a probe read. `None` for a kind means it was not
    /// read although declared (listed in `unread`); a kind not declared is `Some(empty)`.
    /// Items without a usable key are left out; their count is returned.
    pub fn from_reads(
        prompts: Option<ListRead>,
        resources: Option<ListRead>,
        templates: Option<ListRead>,
    ) -> (Declared, usize) {
        let mut declared = Declared::default();
        let mut left_out = 0;
        let reads = [
            (DeclaredKind::Prompt, prompts),
            (DeclaredKind::Resource, resources),
            (DeclaredKind::ResourceTemplate, templates),
        ];
        for (kind, read) in reads {
            let Some(read) = read else {
                declared.unread.push(kind);
                continue;
            };
            let (items, bad) = itemize(kind, read.items);
            left_out += bad;
            let complete = !read.truncated;
            if complete && items.len() <= kind.itemized_max() {
                *declared.items_mut(kind) = items;
            } else {
                *declared.summary_mut(kind) = Some(ListSummary::of(kind, &items, complete));
            }
        }
        (declared, left_out)
    }

    /// Rebuilds the declared part from the raw items of a stored record (or a snapshot) and
    /// its list summaries.
    pub fn from_stored(
        prompts: Vec<Value>,
        resources: Vec<Value>,
        templates: Vec<Value>,
        summaries: Summaries,
        unread: Vec<DeclaredKind>,
    ) -> Declared {
        Declared {
            prompts: itemize(DeclaredKind::Prompt, prompts).0,
            resources: itemize(DeclaredKind::Resource, resources).0,
            resource_templates: itemize(DeclaredKind::ResourceTemplate, templates).0,
            resource_list: summaries.resources,
            prompt_list: summaries.prompts,
            resource_template_list: summaries.resource_templates,
            unread,
            not_recorded: false,
        }
    }

    /// The items of one kind.
    pub fn items(&self, kind: DeclaredKind) -> &[DeclaredItem] {
        match kind {
            DeclaredKind::Prompt => &self.prompts,
            DeclaredKind::Resource => &self.resources,
            DeclaredKind::ResourceTemplate => &self.resource_templates,
        }
    }

    fn items_mut(&mut self, kind: DeclaredKind) -> &mut Vec<DeclaredItem> {
        match kind {
            DeclaredKind::Prompt => &mut self.prompts,
            DeclaredKind::Resource => &mut self.resources,
            DeclaredKind::ResourceTemplate => &mut self.resource_templates,
        }
    }

    /// The summary of one kind's list, when it was too long or incomplete to itemize.
    pub fn summary(&self, kind: DeclaredKind) -> Option<&ListSummary> {
        match kind {
            DeclaredKind::Prompt => self.prompt_list.as_ref(),
            DeclaredKind::Resource => self.resource_list.as_ref(),
            DeclaredKind::ResourceTemplate => self.resource_template_list.as_ref(),
        }
    }

    fn summary_mut(&mut self, kind: DeclaredKind) -> &mut Option<ListSummary> {
        match kind {
            DeclaredKind::Prompt => &mut self.prompt_list,
            DeclaredKind::Resource => &mut self.resource_list,
            DeclaredKind::ResourceTemplate => &mut self.resource_template_list,
        }
    }

    /// The list summaries, taken out (for a stored record).
    pub fn summaries(&self) -> Summaries {
        Summaries {
            prompts: self.prompt_list.clone(),
            resources: self.resource_list.clone(),
            resource_templates: self.resource_template_list.clone(),
        }
    }

    /// True when items of `kind` are known on this side (read, and recorded).
    pub fn knows(&self, kind: DeclaredKind) -> bool {
        !self.not_recorded && !self.unread.contains(&kind)
    }

    /// True when the items of `kind` are known one by one: read, recorded and not summarized.
    pub fn itemizes(&self, kind: DeclaredKind) -> bool {
        self.knows(kind) && self.summary(kind).is_none()
    }

    /// The short digest of every item of `kind` by key ([`item_digest`]), when the items are
    /// known one by one: itemized, or summarized with digests kept. `None` when they are not
    /// (unread, not recorded, a cut or too long list, a summary of an earlier version).
    pub fn item_digests(&self, kind: DeclaredKind) -> Option<BTreeMap<String, String>> {
        if !self.knows(kind) {
            return None;
        }
        match self.summary(kind) {
            Some(list) => list.digests.clone(),
            None => Some(item_digests(kind, self.items(kind))),
        }
    }

    /// What the surface digest covers besides the tools: every item as served (in key order),
    /// of a summarized list its count, completeness and item digests (not its sample,
    /// [`ListSummary::digest_material`]), and the kinds left unread. Keys with nothing in them
    /// are left out.
    pub fn digest_material(&self) -> Value {
        let mut material = Map::new();
        for kind in DeclaredKind::ALL {
            let items = self.items(kind);
            if !items.is_empty() {
                let raws = items.iter().map(|i| surface_view(kind, &i.raw)).collect();
                material.insert(kind.list_key().to_string(), Value::Array(raws));
            }
        }
        let summaries = [
            ("promptList", &self.prompt_list),
            ("resourceList", &self.resource_list),
            ("resourceTemplateList", &self.resource_template_list),
        ];
        for (key, summary) in summaries {
            if let Some(list) = summary {
                material.insert(key.to_string(), list.digest_material());
            }
        }
        if !self.unread.is_empty() {
            let unread = self
                .unread
                .iter()
                .map(|k| Value::String(k.list_key().to_string()))
                .collect();
            material.insert("unread".to_string(), Value::Array(unread));
        }
        Value::Object(material)
    }
}

/// The list summaries of a surface, one per kind (see [`Declared::summary`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summaries {
    /// The prompt list's.
    pub prompts: Option<ListSummary>,
    /// The resource list's.
    pub resources: Option<ListSummary>,
    /// The resource template list's.
    pub resource_templates: Option<ListSummary>,
}

/// What of an item is surface: the item as served, without the fields that describe the data
/// behind a resource rather than its declaration (`size`, `annotations.lastModified`), which
/// change whenever a file does. The digest and the comparison see this view.
pub fn surface_view(kind: DeclaredKind, raw: &Value) -> Value {
    if kind == DeclaredKind::Prompt {
        return raw.clone();
    }
    let mut view = raw.clone();
    if let Some(object) = view.as_object_mut() {
        object.remove("size");
        if let Some(Value::Object(annotations)) = object.get_mut("annotations") {
            annotations.remove("lastModified");
        }
    }
    view
}

/// The items of one list with a usable key, one per key (the first kept), sorted by key; and
/// how many were left out (not an object, no string key, empty key, no canonical form).
fn itemize(kind: DeclaredKind, raws: Vec<Value>) -> (Vec<DeclaredItem>, usize) {
    let mut items: Vec<DeclaredItem> = Vec::with_capacity(raws.len());
    let mut left_out = 0;
    for raw in raws {
        let key = raw
            .get(kind.key_field())
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(str::to_owned);
        match key {
            Some(key) if canon::check_depth(&raw).is_ok() => items.push(DeclaredItem { key, raw }),
            _ => left_out += 1,
        }
    }
    // A stable sort keeps the first of equal keys first; dedup then drops the later ones.
    items.sort_by(|a, b| canon::cmp_utf16(&a.key, &b.key));
    let before = items.len();
    items.dedup_by(|later, first| later.key == first.key);
    let repeated = before - items.len();
    (items, left_out + repeated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(items: Vec<Value>) -> Option<ListRead> {
        Some(ListRead {
            items,
            truncated: false,
        })
    }

    fn files(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"uri": format!("file:///f{i:04}"), "name": format!("f{i}")}))
            .collect()
    }

    #[test]
    fn items_are_keyed_sorted_and_deduplicated() {
        let (declared, left_out) = Declared::from_reads(
            read(vec![
                json!({"name": "b"}),
                json!({"name": "a", "description": "first"}),
                json!({"name": "a", "description": "second"}),
                json!({"description": "no name"}),
                json!({"name": ""}),
                json!(7),
            ]),
            read(vec![json!({"uri": "z://1", "name": "one"})]),
            read(vec![json!({"name": "t", "uriTemplate": "x://{id}"})]),
        );
        let keys: Vec<_> = declared.prompts.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(declared.prompts[0].raw["description"], "first");
        assert_eq!(declared.resources[0].key, "z://1");
        assert_eq!(declared.resource_templates[0].key, "t");
        assert_eq!(left_out, 4);
        assert!(declared.unread.is_empty() && declared.resource_list.is_none());
    }

    #[test]
    fn a_server_with_none_declares_nothing_to_digest() {
        let (declared, _) = Declared::from_reads(read(vec![]), read(vec![]), read(Vec::new()));
        assert!(declared.is_empty());
        assert_eq!(declared.digest_material(), json!({}));
    }

    #[test]
    fn large_or_cut_resource_lists_are_summarized_without_the_sample_in_the_digest() {
        let table = [
            (ITEMIZED_RESOURCES_MAX, false, false),
            (ITEMIZED_RESOURCES_MAX + 1, false, true),
            (3, true, true),
        ];
        for (n, truncated, summarized) in table {
            let (declared, _) = Declared::from_reads(
                None,
                Some(ListRead {
                    items: files(n),
                    truncated,
                }),
                None,
            );
            assert_eq!(
                declared.resource_list.is_some(),
                summarized,
                "{n} {truncated}"
            );
            assert_eq!(declared.resources.is_empty(), summarized, "{n} {truncated}");
        }
        // Up to DIGESTED_ITEMS_MAX items, a swap at the same count moves the digest; beyond
        // it only the count does.
        for (n, swap_moves_digest) in [(1000, true), (DIGESTED_ITEMS_MAX + 1, false)] {
            let (a, _) = Declared::from_reads(read(vec![]), read(files(n)), read(vec![]));
            let mut other = files(n);
            other[0]["uri"] = json!("file:///another");
            let (b, _) = Declared::from_reads(read(vec![]), read(other), read(vec![]));
            let list = a.resource_list.clone().unwrap();
            assert_eq!((list.total, list.complete), (n as u64, true));
            assert_eq!(list.sample.len(), RESOURCE_SAMPLE);
            assert_eq!(list.digests.is_some(), swap_moves_digest, "{n}");
            assert_ne!(a.resource_list, b.resource_list, "the samples differ");
            assert_eq!(
                a.digest_material() != b.digest_material(),
                swap_moves_digest,
                "{n}"
            );
            let (c, _) = Declared::from_reads(read(vec![]), read(files(n - 1)), read(vec![]));
            assert_ne!(a.digest_material(), c.digest_material(), "the count moved");
            let sample_free = |d: &Declared| {
                let mut d = d.clone();
                if let Some(list) = d.resource_list.as_mut() {
                    list.sample.clear();
                }
                d.digest_material()
            };
            assert_eq!(sample_free(&a), a.digest_material(), "no sample digested");
        }
    }

    #[test]
    fn long_or_cut_prompt_and_template_lists_are_summarized_like_resources() {
        let named = |n: usize| -> Vec<Value> {
            (0..n)
                .map(|i| json!({"name": format!("p{i:04}"), "uriTemplate": "x://{id}"}))
                .collect()
        };
        // (kind, items, truncated, summarized)
        let table = [
            (DeclaredKind::Prompt, ITEMIZED_PROMPTS_MAX, false, false),
            (DeclaredKind::Prompt, ITEMIZED_PROMPTS_MAX + 1, false, true),
            (DeclaredKind::Prompt, 3, true, true),
            (
                DeclaredKind::ResourceTemplate,
                ITEMIZED_TEMPLATES_MAX,
                false,
                false,
            ),
            (
                DeclaredKind::ResourceTemplate,
                ITEMIZED_TEMPLATES_MAX + 1,
                false,
                true,
            ),
            (DeclaredKind::ResourceTemplate, 3, true, true),
        ];
        for (kind, n, truncated, summarized) in table {
            let list = Some(ListRead {
                items: named(n),
                truncated,
            });
            let (declared, _) = match kind {
                DeclaredKind::Prompt => Declared::from_reads(list, read(vec![]), read(vec![])),
                _ => Declared::from_reads(read(vec![]), read(vec![]), list),
            };
            let case = format!("{kind:?} {n} {truncated}");
            assert_eq!(declared.summary(kind).is_some(), summarized, "{case}");
            assert_eq!(declared.items(kind).is_empty(), summarized, "{case}");
            assert_eq!(declared.itemizes(kind), !summarized, "{case}");
            if let Some(list) = declared.summary(kind) {
                assert_eq!((list.total, list.complete), (n as u64, !truncated));
                assert_eq!(list.sample.len(), n.min(RESOURCE_SAMPLE));
                let key = match kind {
                    DeclaredKind::Prompt => "promptList",
                    _ => "resourceTemplateList",
                };
                let mut expected = json!({"total": n, "complete": !truncated});
                if !truncated {
                    expected["items"] = json!(item_digests(kind, &itemize(kind, named(n)).0));
                }
                assert_eq!(declared.digest_material()[key], expected, "{case}");
            }
        }
    }

    #[test]
    fn data_fields_of_resources_are_not_digested() {
        let item = |size: u64, modified: &str| {
            json!({"uri": "file:///a", "name": "a", "size": size,
                   "annotations": {"lastModified": modified, "priority": 0.5}})
        };
        let digest = |raw: Value| {
            Declared::from_reads(None, read(vec![raw]), None)
                .0
                .digest_material()
        };
        assert_eq!(
            digest(item(1, "2025-01-01T00:00:00Z")),
            digest(item(9, "2026-01-01T00:00:00Z"))
        );
        let mut other = item(1, "2025-01-01T00:00:00Z");
        other["annotations"]["priority"] = json!(0.9);
        assert_ne!(digest(item(1, "2025-01-01T00:00:00Z")), digest(other));
        let prompt = json!({"name": "p", "size": 3});
        assert_eq!(surface_view(DeclaredKind::Prompt, &prompt), prompt);
    }

    #[test]
    fn kinds_not_read_are_recorded_and_not_known() {
        let (declared, _) = Declared::from_reads(None, read(files(2)), None);
        assert_eq!(
            declared.unread,
            [DeclaredKind::Prompt, DeclaredKind::ResourceTemplate]
        );
        assert!(!declared.knows(DeclaredKind::Prompt));
        assert!(declared.knows(DeclaredKind::Resource));
        assert_eq!(
            declared.digest_material()["unread"],
            json!(["prompts", "resourceTemplates"])
        );
    }
}
