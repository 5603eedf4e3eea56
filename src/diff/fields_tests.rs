//! Tables for the tool fields beside description, schemas and watched hints.

use crate::diff::{ChangeClass, Compatibility, Severity, compare};
use crate::surface::{ServerIdentity, Surface};
use serde_json::{Value, json};

fn changes(old: Value, new: Value) -> Vec<crate::diff::Change> {
    let s = |t: Value| Surface::from_tools(ServerIdentity::default(), vec![t]).unwrap();
    compare(&s(old), &s(new))
}

/// `{"name": "t"}` plus the given fields.
fn tool(fields: Value) -> Value {
    let mut t = json!({"name": "t"});
    for (k, v) in fields.as_object().unwrap() {
        t[k] = v.clone();
    }
    t
}

/// One row per change: class, field, severity, compatibility.
type Summary = (ChangeClass, String, Severity, Option<Compatibility>);

fn summary(old: Value, new: Value) -> Vec<Summary> {
    changes(tool(old), tool(new))
        .into_iter()
        .map(|c| (c.change_class, c.field, c.severity, c.compatibility))
        .collect()
}

fn one(class: ChangeClass, field: &str, severity: Severity, c: Option<Compatibility>) -> Summary {
    (class, field.to_owned(), severity, c)
}

#[test]
fn task_support_is_graded_for_callers() {
    use Compatibility::*;
    use Severity::*;
    let ts = |v: Value| json!({"execution": {"taskSupport": v}});
    type Case = (
        &'static str,
        Value,
        Value,
        Option<(Severity, Compatibility)>,
    );
    let cases: Vec<Case> = vec![
        (
            "forbidden → required",
            ts(json!("forbidden")),
            ts(json!("required")),
            Some((Medium, Breaking)),
        ),
        (
            "absent → required",
            json!({}),
            ts(json!("required")),
            Some((Medium, Breaking)),
        ),
        (
            "optional → required",
            ts(json!("optional")),
            ts(json!("required")),
            Some((Medium, Breaking)),
        ),
        (
            "forbidden → optional",
            ts(json!("forbidden")),
            ts(json!("optional")),
            Some((Low, Additive)),
        ),
        (
            "no execution → optional",
            json!({}),
            ts(json!("optional")),
            Some((Low, Additive)),
        ),
        (
            "required → optional",
            ts(json!("required")),
            ts(json!("optional")),
            Some((Low, Loosened)),
        ),
        (
            "optional → forbidden",
            ts(json!("optional")),
            ts(json!("forbidden")),
            Some((Medium, Breaking)),
        ),
        (
            "required → absent",
            ts(json!("required")),
            json!({"execution": {}}),
            Some((Medium, Breaking)),
        ),
        (
            "undefined value",
            ts(json!("forbidden")),
            ts(json!("sometimes")),
            Some((Medium, Unknown)),
        ),
        (
            "default spelled out",
            json!({}),
            ts(json!("forbidden")),
            None,
        ),
        ("empty execution", json!({}), json!({"execution": {}}), None),
        (
            "null execution",
            json!({"execution": null}),
            ts(json!(null)),
            None,
        ),
        ("same", ts(json!("required")), ts(json!("required")), None),
    ];
    for (name, old, new, expected) in cases {
        let got = summary(old, new);
        let expected: Vec<Summary> = expected
            .into_iter()
            .map(|(s, c)| {
                one(
                    ChangeClass::ToolExecutionChanged,
                    "execution.taskSupport",
                    s,
                    Some(c),
                )
            })
            .collect();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn task_support_rows_carry_effective_values_and_say_why() {
    let c = changes(
        tool(json!({})),
        tool(json!({"execution": {"taskSupport": "required"}})),
    );
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].old_value, Some(json!("forbidden")));
    assert_eq!(c[0].new_value, Some(json!("required")));
    assert_eq!(
        c[0].details[0],
        "declared taskSupport: (absent) → \"required\""
    );
    assert!(
        c[0].details[1].contains("does not speak tasks"),
        "{:?}",
        c[0].details
    );
}

#[test]
fn other_execution_keys_are_unknown() {
    let got = summary(
        json!({"execution": {"taskSupport": "optional"}}),
        json!({"execution": {"taskSupport": "optional", "ttlMs": 5}}),
    );
    assert_eq!(
        got,
        [one(
            ChangeClass::ToolExecutionChanged,
            "execution.ttlMs",
            Severity::Low,
            Some(Compatibility::Unknown)
        )]
    );
    let got = summary(json!({"execution": "a"}), json!({"execution": "b"}));
    assert_eq!(
        got,
        [one(
            ChangeClass::ToolExecutionChanged,
            "execution",
            Severity::Low,
            Some(Compatibility::Unknown)
        )]
    );
}

#[test]
fn title_table() {
    use ChangeClass::ToolTitleChanged as T;
    use Severity::Low;
    let cases: Vec<(&str, Value, Value, Vec<Summary>)> = vec![
        (
            "title added",
            json!({}),
            json!({"title": "T"}),
            vec![one(T, "title", Low, None)],
        ),
        (
            "title changed",
            json!({"title": "A"}),
            json!({"title": "B"}),
            vec![one(T, "title", Low, None)],
        ),
        (
            "title removed",
            json!({"title": "A"}),
            json!({}),
            vec![one(T, "title", Low, None)],
        ),
        ("null is absent", json!({}), json!({"title": null}), vec![]),
        (
            "annotations.title changed",
            json!({"annotations": {"title": "A"}}),
            json!({"annotations": {"title": "B"}}),
            vec![one(T, "annotations.title", Low, None)],
        ),
        (
            "moved from annotations to title, same text",
            json!({"annotations": {"title": "A"}}),
            json!({"title": "A"}),
            vec![],
        ),
        (
            "moved and changed",
            json!({"annotations": {"title": "A"}}),
            json!({"title": "B"}),
            vec![one(T, "title", Low, None)],
        ),
        (
            "hidden annotations.title changed",
            json!({"title": "T", "annotations": {"title": "A"}}),
            json!({"title": "T", "annotations": {"title": "B"}}),
            vec![one(T, "annotations.title", Low, None)],
        ),
    ];
    for (name, old, new, expected) in cases {
        assert_eq!(summary(old, new), expected, "{name}");
    }
}

#[test]
fn icons_meta_and_unknown_fields_table() {
    use ChangeClass::*;
    use Severity::Low;
    let icon = json!([{"src": "https://example.com/a.png", "mimeType": "image/png"}]);
    let cases: Vec<(&str, Value, Value, Vec<Summary>)> = vec![
        (
            "icons added",
            json!({}),
            json!({"icons": icon}),
            vec![one(ToolIconsChanged, "icons", Low, None)],
        ),
        (
            "icon source changed",
            json!({"icons": icon}),
            json!({"icons": [{"src": "https://example.com/b.png", "mimeType": "image/png"}]}),
            vec![one(ToolIconsChanged, "icons", Low, None)],
        ),
        ("icons null", json!({}), json!({"icons": null}), vec![]),
        (
            "title and _meta only",
            json!({}),
            json!({"title": "T", "_meta": {"k": 1}}),
            vec![
                one(ToolTitleChanged, "title", Low, None),
                one(ToolMetaChanged, "_meta", Low, None),
            ],
        ),
        (
            "fields spelled null are absent",
            json!({}),
            json!({"title": null, "_meta": null, "icons": null, "execution": null}),
            vec![],
        ),
        (
            "meta added",
            json!({}),
            json!({"_meta": {"k": 1}}),
            vec![one(ToolMetaChanged, "_meta", Low, None)],
        ),
        (
            "meta same, key order",
            json!({"_meta": {"a": 1, "b": 2}}),
            json!({"_meta": {"b": 2, "a": 1.0}}),
            vec![],
        ),
        (
            "unknown field added",
            json!({}),
            json!({"x-vendor": {"k": 1}}),
            vec![one(ToolFieldChanged, "x-vendor", Low, None)],
        ),
        (
            "unknown field null",
            json!({}),
            json!({"x-vendor": null}),
            vec![],
        ),
        (
            "other annotation",
            json!({"annotations": {}}),
            json!({"annotations": {"costHint": "high"}}),
            vec![one(ToolFieldChanged, "annotations.costHint", Low, None)],
        ),
        (
            "idempotent turns on",
            json!({"annotations": {}}),
            json!({"annotations": {"idempotentHint": true}}),
            vec![one(
                ToolFieldChanged,
                "annotations.idempotentHint",
                Low,
                None,
            )],
        ),
        (
            "idempotent default spelled out",
            json!({"annotations": {}}),
            json!({"annotations": {"idempotentHint": false}}),
            vec![],
        ),
        (
            "idempotent follows a lost read-only promise",
            json!({"annotations": {"readOnlyHint": true}}),
            json!({"annotations": {}}),
            vec![
                one(
                    DestructiveHintChanged,
                    "annotations.destructiveHint",
                    Severity::High,
                    None,
                ),
                one(
                    ReadOnlyHintChanged,
                    "annotations.readOnlyHint",
                    Severity::High,
                    None,
                ),
            ],
        ),
        (
            "idempotent fixed for a read-only tool",
            json!({"annotations": {"readOnlyHint": true}}),
            json!({"annotations": {"readOnlyHint": true, "idempotentHint": false}}),
            vec![],
        ),
    ];
    for (name, old, new, expected) in cases {
        assert_eq!(summary(old, new), expected, "{name}");
    }
}

#[test]
fn meta_details_name_the_keys() {
    let c = changes(
        tool(json!({"_meta": {"a": 1, "b": 2}})),
        tool(json!({"_meta": {"b": 3, "c": 4}})),
    );
    assert_eq!(
        c[0].details,
        [
            "_meta key a removed",
            "_meta key b changed",
            "_meta key c added"
        ]
    );
}

/// The real github-mcp-server releases (`../shared/fixtures`, skipped when absent): rows only
/// for tools whose definition changed, in a field that changed, and the counts of the new
/// classes are those counted from the files.
#[test]
fn real_releases_give_rows_for_every_changed_tool_and_no_false_ones() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/github-mcp-server");
    let versions = [
        "v0.23.0", "v0.24.0", "v0.26.3", "v0.27.0", "v0.30.3", "v0.31.0", "v1.3.0", "v1.4.0",
        "v1.5.0", "v1.6.0",
    ];
    let read = |v: &str| -> Option<Surface> {
        let text = std::fs::read_to_string(dir.join(format!("{v}.json"))).ok()?;
        let tools: Value = serde_json::from_str(&text).ok()?;
        Surface::from_tools(
            ServerIdentity::default(),
            tools["tools"].as_array()?.clone(),
        )
        .ok()
    };
    let Some(first) = read(versions[0]) else {
        eprintln!(
            "skipped: github-mcp-server fixtures not found at {}",
            dir.display()
        );
        return;
    };
    let mut previous = first;
    let mut per_class = std::collections::BTreeMap::new();
    for v in &versions[1..] {
        let next = read(v).expect("fixture");
        let rows = compare(&previous, &next);
        for t in &next.tools {
            let Some(old) = previous.tool(&t.name) else {
                continue;
            };
            let has_row = rows.iter().any(|c| c.tool_name.as_deref() == Some(&t.name));
            let spelled_differently = crate::surface::canon::canonical_string(&old.raw).ok()
                != crate::surface::canon::canonical_string(&t.raw).ok();
            if has_row {
                assert!(
                    spelled_differently,
                    "{v}: {} has rows but did not change",
                    t.name
                );
            }
        }
        for c in &rows {
            *per_class
                .entry((v.to_string(), c.change_class.as_str()))
                .or_insert(0) += 1;
            if let Some(t) = &c.tool_name {
                let (o, n) = (previous.tool(t), next.tool(t));
                if let (Some(o), Some(n)) = (o, n) {
                    let key = c.field.split('.').next().unwrap_or_default();
                    assert_ne!(o.raw.get(key), n.raw.get(key), "{v} {t} {}", c.field);
                }
            }
        }
        previous = next;
    }
    // Counted from the files: `icons` stay identical across the compared releases, `_meta`
    // appears on 3 tools in v0.31.0, changes on 1 in v1.3.0 and on 1 in v1.4.0, and
    // `annotations.title` is reworded on 8 tools in v1.3.0.
    let count = |v: &str, class: &str| per_class.get(&(v.to_string(), class)).copied().unwrap_or(0);
    assert_eq!(count("v0.31.0", "tool_meta_changed"), 3);
    assert_eq!(count("v1.3.0", "tool_meta_changed"), 1);
    assert_eq!(count("v1.4.0", "tool_meta_changed"), 1);
    assert_eq!(count("v1.3.0", "tool_title_changed"), 8);
    assert_eq!(count("v0.26.3", "tool_icons_changed"), 5);
    for v in &versions[1..] {
        assert_eq!(count(v, "tool_field_changed"), 0, "{v}");
        assert_eq!(count(v, "tool_execution_changed"), 0, "{v}");
    }
}

#[test]
fn an_execution_left_out_on_a_wire_without_tasks_is_not_a_change() {
    let surface = |version: Option<&str>, t: Value| {
        let identity = ServerIdentity {
            protocol_version: version.map(str::to_owned),
            ..ServerIdentity::default()
        };
        Surface::from_tools(identity, vec![tool(t)]).unwrap()
    };
    let required = json!({"execution": {"taskSupport": "required"}});
    let optional = json!({"execution": {"taskSupport": "optional"}});
    let absent = json!({});
    // (old revision, old tool, new revision, new tool, execution rows expected)
    let cases = [
        ("2025-11-25", &required, "2026-07-28", &absent, 0),
        ("2026-07-28", &absent, "2025-11-25", &optional, 0),
        ("2025-06-18", &absent, "2025-11-25", &required, 0),
        ("2025-11-25", &required, "2025-11-25", &absent, 1),
        ("2025-11-25", &absent, "2025-11-25", &optional, 1),
        ("2025-11-25", &required, "2026-07-28", &optional, 1),
        ("2026-07-28", &absent, "2026-07-28", &absent, 0),
    ];
    for (old_version, old, new_version, new, rows) in cases {
        let changes = compare(
            &surface(Some(old_version), old.clone()),
            &surface(Some(new_version), new.clone()),
        );
        let execution = changes
            .iter()
            .filter(|c| c.change_class == ChangeClass::ToolExecutionChanged)
            .count();
        assert_eq!(
            execution, rows,
            "{old_version} {old} → {new_version} {new}: {changes:?}"
        );
    }
    // A surface of unknown revision (a snapshot file) keeps reading absent as forbidden.
    let unknown = compare(
        &surface(None, required.clone()),
        &surface(None, absent.clone()),
    );
    assert_eq!(unknown.len(), 1, "{unknown:?}");
}
