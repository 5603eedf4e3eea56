//! The one record of a surface that changed while its stored surface record was gone
//! (`baseline_lost`): what changed cannot be walked field by field, so the record names what
//! the short digests the ledger entry keeps can tell: the tools, prompts and resource
//! templates added, removed or changed. Resources are not named (the entry keeps no digests of
//! them, see [`ItemDigests`]).

use std::collections::BTreeMap;

use serde_json::json;

use crate::diff::{Change, ChangeClass, Severity};
use crate::surface::{DeclaredKind, ItemDigests};

/// The short digests one side of a lost baseline is known by.
#[derive(Debug, Clone, Copy)]
pub struct Digests<'a> {
    /// The surface's tool digest.
    pub surface: &'a str,
    /// Tool name → short digest; `None` when the ledger kept none.
    pub tools: Option<&'a BTreeMap<String, String>>,
    /// The prompts' and templates' short digests; `None` when the ledger kept none.
    pub declared: Option<&'a ItemDigests>,
}

/// The one record of a surface that changed while its stored surface record was gone: it is
/// `high` (it may hide a destructive or authentication change) and its details name the
/// tools, prompts and templates added, removed or changed as far as the old digests allow.
pub fn baseline_lost(old: Digests<'_>, new: Digests<'_>) -> Change {
    let mut change = Change::new(
        ChangeClass::BaselineLost,
        None,
        "tools",
        Some(json!(old.surface)),
        Some(json!(new.surface)),
        Severity::High,
    );
    let mut details = match (old.tools, new.tools) {
        (Some(old), Some(new)) => named("tools", old, new),
        _ => vec!["which tools changed is unknown: the ledger kept no per-tool digests".into()],
    };
    for kind in [DeclaredKind::Prompt, DeclaredKind::ResourceTemplate] {
        let sides = (
            old.declared.and_then(|d| d.of_kind(kind)),
            new.declared.and_then(|d| d.of_kind(kind)),
        );
        if let (Some(old), Some(new)) = sides {
            details.extend(named(&format!("{}s", kind.noun()), old, new));
        }
    }
    if old.declared.is_none() {
        details.push(
            "which prompts and resource templates changed is unknown: the ledger kept no \
             digests of them"
                .to_string(),
        );
    }
    if details.is_empty() {
        details.push("the per-tool digests show no difference".to_string());
    }
    change.details = details;
    change
}

/// One line each for the names added, removed and changed between two digest maps (none
/// when they are equal), e.g. `tools added: fetch, search`.
fn named(
    what: &str,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<String> {
    let added = new.keys().filter(|n| !old.contains_key(*n)).collect();
    let removed = old.keys().filter(|n| !new.contains_key(*n)).collect();
    let changed = new
        .iter()
        .filter(|(n, d)| old.get(*n).is_some_and(|o| o != *d))
        .map(|(n, _)| n)
        .collect();
    [("added", added), ("removed", removed), ("changed", changed)]
        .into_iter()
        .filter(|(_, names): &(&str, Vec<&String>)| !names.is_empty())
        .map(|(how, names)| {
            let joined: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            format!("{what} {how}: {}", joined.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect()
    }

    fn declared(prompts: &[(&str, &str)], templates: &[(&str, &str)]) -> ItemDigests {
        ItemDigests {
            prompts: map(prompts),
            resource_templates: map(templates),
            not_itemized: Vec::new(),
        }
    }

    #[test]
    fn a_lost_baseline_names_what_the_digests_tell() {
        let old_tools = map(&[("keep", "1"), ("edit", "2"), ("gone", "3")]);
        let new_tools = map(&[("keep", "1"), ("edit", "9"), ("fresh", "4")]);
        let old_declared = declared(&[("greet", "1"), ("old", "2")], &[("doc", "3")]);
        let new_declared = declared(&[("greet", "5"), ("new", "6")], &[("doc", "3")]);
        let unread = ItemDigests {
            not_itemized: vec![DeclaredKind::Prompt],
            ..declared(&[], &[("doc", "3")])
        };
        type Case<'a> = (
            Option<&'a BTreeMap<String, String>>,
            Option<&'a ItemDigests>,
            &'a BTreeMap<String, String>,
            &'a ItemDigests,
            &'a [&'a str],
        );
        let cases: [Case; 6] = [
            (
                Some(&old_tools),
                Some(&old_declared),
                &new_tools,
                &old_declared,
                &[
                    "tools added: fresh",
                    "tools removed: gone",
                    "tools changed: edit",
                ],
            ),
            (
                Some(&old_tools),
                Some(&old_declared),
                &old_tools,
                &new_declared,
                &[
                    "prompts added: new",
                    "prompts removed: old",
                    "prompts changed: greet",
                ],
            ),
            (
                Some(&old_tools),
                Some(&old_declared),
                &old_tools,
                &old_declared,
                &["the per-tool digests show no difference"],
            ),
            (
                None,
                Some(&old_declared),
                &new_tools,
                &old_declared,
                &["which tools changed is unknown: the ledger kept no per-tool digests"],
            ),
            (
                Some(&old_tools),
                None,
                &new_tools,
                &new_declared,
                &[
                    "tools added: fresh",
                    "tools removed: gone",
                    "tools changed: edit",
                    "which prompts and resource templates changed is unknown: the ledger kept \
                     no digests of them",
                ],
            ),
            // Prompts not read on one side are not compared; templates still are.
            (
                Some(&old_tools),
                Some(&unread),
                &old_tools,
                &declared(&[("greet", "5")], &[("page", "7")]),
                &[
                    "resource templates added: page",
                    "resource templates removed: doc",
                ],
            ),
        ];
        for (old_tools, old_declared, new_tools, new_declared, details) in cases {
            let change = baseline_lost(
                Digests {
                    surface: "old",
                    tools: old_tools,
                    declared: old_declared,
                },
                Digests {
                    surface: "new",
                    tools: Some(new_tools),
                    declared: Some(new_declared),
                },
            );
            assert_eq!(change.change_class, ChangeClass::BaselineLost);
            assert_eq!(change.severity, Severity::High);
            assert_eq!(change.tool_name, None);
            assert_eq!(change.old_value, Some(json!("old")));
            assert_eq!(change.new_value, Some(json!("new")));
            assert_eq!(change.details, details);
        }
    }
}
