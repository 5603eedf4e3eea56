//! The change engine over the real tool surfaces of ten github-mcp-server releases
//! (`../shared/fixtures/github-mcp-server/`, one `tools/list` result per release).
//! Skips with a note when the fixtures are not present.

// Test helpers outside `#[test]` functions: a missing or broken fixture should fail loudly.
#![allow(clippy::unwrap_used)]

use mcp_surface_ledger::diff::{Change, ChangeClass, Compatibility, compare};
use mcp_surface_ledger::surface::{ServerIdentity, Surface};
use std::path::PathBuf;

fn fixture_dir() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIP: {} not present", dir.display());
        None
    }
}

fn load(dir: &std::path::Path, release: &str) -> Surface {
    let text = std::fs::read_to_string(dir.join(format!("{release}.json"))).unwrap();
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    let identity = ServerIdentity {
        name: Some("github-mcp-server".into()),
        version: Some(release.into()),
        ..ServerIdentity::default()
    };
    Surface::from_tools_list_result(identity, &result).unwrap()
}

/// The changes between two releases, or `None` when the fixtures are absent.
fn diff(old: &str, new: &str) -> Option<Vec<Change>> {
    let dir = fixture_dir()?;
    Some(compare(&load(&dir, old), &load(&dir, new)))
}

fn count(changes: &[Change], class: ChangeClass) -> usize {
    changes.iter().filter(|c| c.change_class == class).count()
}

fn hint_changes(changes: &[Change]) -> Vec<&Change> {
    changes
        .iter()
        .filter(|c| {
            matches!(
                c.change_class,
                ChangeClass::ReadOnlyHintChanged
                    | ChangeClass::DestructiveHintChanged
                    | ChangeClass::OpenWorldHintChanged
            )
        })
        .collect()
}

fn schema_change<'a>(changes: &'a [Change], tool: &str) -> &'a Change {
    changes
        .iter()
        .find(|c| {
            c.change_class == ChangeClass::InputSchemaChanged
                && c.tool_name.as_deref() == Some(tool)
        })
        .unwrap_or_else(|| panic!("no input_schema_changed for {tool}"))
}

#[test]
fn every_release_parses_without_duplicates_or_invalid_entries() {
    let Some(dir) = fixture_dir() else { return };
    for release in [
        "v0.23.0", "v0.24.0", "v0.26.3", "v0.27.0", "v0.30.3", "v0.31.0", "v1.3.0", "v1.4.0",
        "v1.5.0", "v1.6.0",
    ] {
        let s = load(&dir, release);
        assert!(!s.tools.is_empty(), "{release}");
        assert!(
            s.duplicate_tool_names.is_empty() && s.invalid_tools.is_empty(),
            "{release}"
        );
        assert!(compare(&s, &s).is_empty(), "{release}");
    }
}

#[test]
fn annotation_notation_wave_v1_5_to_v1_6_is_silent() {
    let Some(changes) = diff("v1.5.0", "v1.6.0") else {
        return;
    };
    let Some(dir) = fixture_dir() else { return };
    let (old, new) = (load(&dir, "v1.5.0"), load(&dir, "v1.6.0"));
    let raw_annotation_edits = old
        .tools
        .iter()
        .filter(|t| {
            new.tool(&t.name)
                .is_some_and(|n| n.annotations_raw() != t.annotations_raw())
        })
        .count();
    assert_eq!(
        raw_annotation_edits, 111,
        "the fixture's spelled-out defaults"
    );
    assert!(
        hint_changes(&changes).is_empty(),
        "{:#?}",
        hint_changes(&changes)
    );
}

#[test]
fn dropped_read_only_false_v0_23_to_v0_24_is_silent() {
    let Some(changes) = diff("v0.23.0", "v0.24.0") else {
        return;
    };
    assert!(
        hint_changes(&changes).is_empty(),
        "{:#?}",
        hint_changes(&changes)
    );
    assert_eq!(count(&changes, ChangeClass::ToolAdded), 31);
    assert_eq!(count(&changes, ChangeClass::ToolRemoved), 0);
    let dismiss = schema_change(&changes, "dismiss_notification");
    assert_eq!(dismiss.compatibility, Some(Compatibility::Breaking));
    assert!(
        dismiss
            .details
            .contains(&"required added /properties/state".to_owned())
    );
    let push = schema_change(&changes, "push_files");
    assert_eq!(
        push.compatibility,
        Some(Compatibility::Loosened),
        "{:?}",
        push.details
    );
}

#[test]
fn v0_26_to_v0_27_rename_is_breaking_and_explicit_destructive_is_silent() {
    let Some(changes) = diff("v0.26.3", "v0.27.0") else {
        return;
    };
    assert!(
        hint_changes(&changes).is_empty(),
        "{:#?}",
        hint_changes(&changes)
    );
    let rename = schema_change(&changes, "assign_copilot_to_issue");
    assert_eq!(rename.compatibility, Some(Compatibility::Breaking));
    assert!(
        rename
            .details
            .contains(&"required added /properties/issue_number".to_owned())
    );
    assert!(
        rename
            .details
            .contains(&"required removed /properties/issueNumber".to_owned())
    );
}

#[test]
fn v0_30_to_v0_31_removes_22_tools_and_adds_1() {
    let Some(changes) = diff("v0.30.3", "v0.31.0") else {
        return;
    };
    assert_eq!(count(&changes, ChangeClass::ToolRemoved), 22);
    assert_eq!(count(&changes, ChangeClass::ToolAdded), 1);
}

#[test]
fn v1_3_to_v1_4_enum_case_change_is_breaking_even_nested() {
    let Some(changes) = diff("v1.3.0", "v1.4.0") else {
        return;
    };
    let with_case_change: Vec<&Change> = changes
        .iter()
        .filter(|c| {
            c.details
                .iter()
                .any(|d| d.starts_with("enum value removed \"low\""))
        })
        .collect();
    assert!(!with_case_change.is_empty());
    let nested = with_case_change
        .iter()
        .flat_map(|c| c.details.iter())
        .any(|d| {
            d.starts_with("enum value removed \"low\" at /properties/")
                && d.matches("/properties/").count() > 1
        });
    assert!(nested, "{:#?}", with_case_change);
    for change in with_case_change {
        assert_eq!(
            change.compatibility,
            Some(Compatibility::Breaking),
            "{:?}",
            change.tool_name
        );
    }
}

#[test]
fn v1_4_to_v1_5_minimum_on_comment_id_is_found_and_breaking() {
    let Some(changes) = diff("v1.4.0", "v1.5.0") else {
        return;
    };
    let reply = schema_change(&changes, "add_reply_to_pull_request_comment");
    assert!(
        reply
            .details
            .contains(&"minimum added 1 at /properties/commentId".to_owned()),
        "{:?}",
        reply.details
    );
    assert!(
        reply
            .details
            .iter()
            .any(|d| d.starts_with("required removed")),
        "{:?}",
        reply.details
    );
    assert_eq!(reply.compatibility, Some(Compatibility::Breaking));
}

#[test]
fn parameter_description_only_edits_are_never_breaking() {
    let pairs = [
        ("v0.23.0", "v0.24.0"),
        ("v0.26.3", "v0.27.0"),
        ("v0.30.3", "v0.31.0"),
        ("v1.3.0", "v1.4.0"),
        ("v1.4.0", "v1.5.0"),
        ("v1.5.0", "v1.6.0"),
    ];
    let mut seen = 0;
    for (old, new) in pairs {
        let Some(changes) = diff(old, new) else {
            return;
        };
        for c in changes
            .iter()
            .filter(|c| c.change_class == ChangeClass::InputSchemaChanged)
        {
            let docs_only = c
                .details
                .iter()
                .all(|d| d.starts_with("description ") || d.starts_with("title "));
            if docs_only {
                seen += 1;
                assert_eq!(
                    c.compatibility,
                    Some(Compatibility::Notation),
                    "{old}->{new} {:?}",
                    c.tool_name
                );
                assert_eq!(c.severity, mcp_surface_ledger::diff::Severity::Low);
            }
        }
    }
    assert!(seen > 0, "the fixtures contain description-only edits");
}

#[test]
#[ignore = "prints every schema grade for manual review"]
fn dump_schema_grades() {
    for (old, new) in [
        ("v0.23.0", "v0.24.0"),
        ("v0.26.3", "v0.27.0"),
        ("v0.30.3", "v0.31.0"),
        ("v1.3.0", "v1.4.0"),
        ("v1.4.0", "v1.5.0"),
        ("v1.5.0", "v1.6.0"),
    ] {
        let Some(changes) = diff(old, new) else {
            return;
        };
        for c in changes.iter().filter(|c| c.compatibility.is_some()) {
            println!(
                "{old}->{new} {:?} {:?} {:?} {:?}",
                c.tool_name, c.severity, c.compatibility, c.details
            );
        }
    }
}
