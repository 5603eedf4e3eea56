//! Tables of `diff::declared`: each class, each grade, the data rule and unknown sides.

use super::summarized::NAMED_ITEMS_MAX;
use super::*;
use crate::surface::ListRead;
use crate::surface::declared::{DIGESTED_ITEMS_MAX, ITEMIZED_PROMPTS_MAX};

fn declared(prompts: Value, resources: Value, templates: Value) -> Declared {
    let read = |v: Value| {
        Some(ListRead {
            items: v.as_array().cloned().unwrap_or_default(),
            truncated: false,
        })
    };
    Declared::from_reads(read(prompts), read(resources), read(templates)).0
}

fn classes(changes: &[Change]) -> Vec<(ChangeClass, &str, Severity, Option<Compatibility>)> {
    changes
        .iter()
        .map(|c| {
            (
                c.change_class,
                c.field.as_str(),
                c.severity,
                c.compatibility,
            )
        })
        .collect()
}

fn prompt(arguments: Value) -> Value {
    json!([{"name": "greet", "description": "Say hi", "arguments": arguments}])
}

#[test]
fn prompt_arguments_are_graded_for_callers() {
    use Compatibility::*;
    let a = |name: &str, req: bool| json!({"name": name, "required": req});
    let table = [
        (json!([a("x", false)]), json!([a("x", true)]), Breaking),
        (json!([a("x", true)]), json!([a("x", false)]), Loosened),
        (
            json!([a("x", false)]),
            json!([a("x", false), a("y", false)]),
            Additive,
        ),
        (
            json!([a("x", false)]),
            json!([a("x", false), a("y", true)]),
            Breaking,
        ),
        (
            json!([a("x", false), a("y", false)]),
            json!([a("x", false)]),
            Breaking,
        ),
        (
            json!([{"name": "x", "description": "old"}]),
            json!([{"name": "x", "description": "new"}]),
            Notation,
        ),
        (
            json!([a("x", false), a("y", true)]),
            json!([a("y", true), a("x", false)]),
            Notation,
        ),
        (json!([a("x", false)]), json!("x"), Unknown),
        (
            json!([a("x", false)]),
            json!([a("x", true), a("z", false)]),
            Breaking,
        ),
    ];
    for (before, after, grade) in table {
        let changes = compare_declared(
            &declared(prompt(before.clone()), json!([]), json!([])),
            &declared(prompt(after.clone()), json!([]), json!([])),
        );
        let severity = if grade == Notation {
            Severity::Low
        } else {
            Severity::Medium
        };
        assert_eq!(
            classes(&changes),
            [(
                ChangeClass::PromptArgumentsChanged,
                "prompts[\"greet\"].arguments",
                severity,
                Some(grade)
            )],
            "{before} → {after}"
        );
    }
}

#[test]
fn template_variables_are_graded() {
    use Compatibility::*;
    let table = [
        ("file:///{path}", "file:///{path}/{rev}", Breaking),
        ("file:///{path}/{rev}", "file:///{path}", Breaking),
        ("file:///{path}", "files:///{path}", Breaking),
        ("file:///{path}", "file:///{+path}", Unknown),
        ("db://{a,b}", "db://{b,a}", Unknown),
        ("file:///{path", "file:///{path}", Unknown),
    ];
    for (before, after, grade) in table {
        let t = |u: &str| json!([{"name": "files", "uriTemplate": u}]);
        let changes = compare_declared(
            &declared(json!([]), json!([]), t(before)),
            &declared(json!([]), json!([]), t(after)),
        );
        assert_eq!(
            classes(&changes),
            [(
                ChangeClass::ResourceTemplateUriChanged,
                "resourceTemplates[\"files\"].uriTemplate",
                Severity::Medium,
                Some(grade)
            )],
            "{before} → {after}"
        );
    }
}

#[test]
fn each_field_has_its_class() {
    use ChangeClass::*;
    let old = declared(
        json!([{"name": "p", "description": "a", "title": "T", "icons": []},
               {"name": "gone"}]),
        json!([{"uri": "x://1", "name": "one", "mimeType": "text/plain",
                "annotations": {"priority": 1}, "_meta": {}, "size": 3},
               {"uri": "x://2", "name": "two"}]),
        json!([{"name": "t", "uriTemplate": "x://{id}", "description": "d"}]),
    );
    let new = declared(
        json!([{"name": "p", "description": "b", "title": "U", "icons": [{"src": "x"}]},
               {"name": "new"}]),
        json!([{"uri": "x://1", "name": "uno", "mimeType": "text/html",
                "annotations": {"priority": 0}, "_meta": {"v": 1}, "size": 4},
               {"uri": "x://3", "name": "three"}]),
        json!([{"name": "t", "uriTemplate": "x://{id}", "description": "e"},
               {"name": "u", "uriTemplate": "y://{id}"}]),
    );
    let got: Vec<(ChangeClass, String, Severity)> = compare_declared(&old, &new)
        .into_iter()
        .map(|c| (c.change_class, c.field, c.severity))
        .collect();
    let want = [
        (PromptRemoved, "prompts[\"gone\"]", Severity::Medium),
        (PromptAdded, "prompts[\"new\"]", Severity::Medium),
        (
            PromptDescriptionChanged,
            "prompts[\"p\"].description",
            Severity::Low,
        ),
        (PromptFieldChanged, "prompts[\"p\"].icons", Severity::Low),
        (
            PromptDescriptionChanged,
            "prompts[\"p\"].title",
            Severity::Low,
        ),
        (
            ResourceFieldChanged,
            "resources[\"x://1\"]._meta",
            Severity::Low,
        ),
        (
            ResourceAnnotationsChanged,
            "resources[\"x://1\"].annotations",
            Severity::Low,
        ),
        (
            ResourceMimeTypeChanged,
            "resources[\"x://1\"].mimeType",
            Severity::Low,
        ),
        (
            ResourceDescriptionChanged,
            "resources[\"x://1\"].name",
            Severity::Low,
        ),
        (ResourceRemoved, "resources[\"x://2\"]", Severity::Low),
        (ResourceAdded, "resources[\"x://3\"]", Severity::Low),
        (
            ResourceDescriptionChanged,
            "resourceTemplates[\"t\"].description",
            Severity::Low,
        ),
        (
            ResourceTemplateAdded,
            "resourceTemplates[\"u\"]",
            Severity::Medium,
        ),
    ];
    let want: Vec<_> = want
        .into_iter()
        .map(|(c, f, s)| (c, f.to_string(), s))
        .collect();
    assert_eq!(got, want);
    assert!(compare_declared(&new, &new).is_empty());
    assert!(got.iter().all(|(c, _, _)| c.is_declared_item()));
}

#[test]
fn unknown_sides_are_not_compared() {
    let full = declared(json!([{"name": "p"}]), json!([{"uri": "x://1"}]), json!([]));
    let mut unread = full.clone();
    unread.prompts.clear();
    unread.unread.push(DeclaredKind::Prompt);
    assert!(compare_declared(&full, &unread).is_empty());
    assert!(compare_declared(&unread, &full).is_empty());
    let old_record = Declared {
        not_recorded: true,
        ..Declared::default()
    };
    assert!(compare_declared(&old_record, &full).is_empty());
    assert_eq!(compare_declared(&Declared::default(), &full).len(), 2);
}

#[test]
fn a_churning_large_resource_list_is_one_change_at_most() {
    let files = |n: usize, run: usize| {
        Value::Array(
            (0..n)
                .map(|i| json!({"uri": format!("file:///run{run}/f{i:04}")}))
                .collect(),
        )
    };
    // 1,000 other files at the same count: one row naming a bounded number of them.
    let a = declared(json!([]), files(1000, 1), json!([]));
    let b = declared(json!([]), files(1000, 2), json!([]));
    let changes = compare_declared(&a, &b);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].change_class, ChangeClass::ResourceCountChanged);
    let head = &changes[0].details[0];
    assert!(
        head.starts_with(
            "2000 resources changed at the same count 1000: removed file:///run1/f0000, "
        ),
        "{head}"
    );
    assert!(
        head.contains("and 990 more; added file:///run2/f0000"),
        "{head}"
    );
    assert_eq!(
        head.matches("file://").count(),
        2 * NAMED_ITEMS_MAX,
        "{head}"
    );
    let named = |value: &Option<Value>| {
        value
            .as_ref()
            .map(|v| v["items"].as_object().map(|o| o.len()))
    };
    assert_eq!(named(&changes[0].old_value), Some(Some(NAMED_ITEMS_MAX)));
    assert_eq!(named(&changes[0].new_value), Some(Some(NAMED_ITEMS_MAX)));
    // Another count: still one row.
    let c = declared(json!([]), files(1003, 3), json!([]));
    let changes = compare_declared(&b, &c);
    assert_eq!(classes(&changes)[0].0, ChangeClass::ResourceCountChanged);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].new_value.as_ref().unwrap()["total"], 1003);
    assert_eq!(changes[0].new_value.as_ref().unwrap()["complete"], true);
    assert!(changes[0].details[0].starts_with("1000 → 1003 resources: removed"));
    assert!(changes[0].details[1].starts_with("sample: file:///run3/f0"));
    // Growing past the itemized limit is one count change, not 100 removals.
    let small = declared(json!([]), files(10, 4), json!([]));
    assert_eq!(compare_declared(&small, &c).len(), 1);
    // Beyond the digested bound, other files at the same count change nothing.
    let over = DIGESTED_ITEMS_MAX + 1;
    let d = declared(json!([]), files(over, 5), json!([]));
    let e = declared(json!([]), files(over, 6), json!([]));
    assert!(
        compare_declared(&d, &e).is_empty(),
        "same count, other files"
    );
    assert_eq!(
        compare_declared(&d, &c)[0].new_value,
        Some(json!({"total": 1003, "complete": true})),
        "no digests on one side: the count only"
    );
}

/// Sentry's fixed catalogue of 127 documents drops `sentry-query-syntax` and adds
/// `sentry://about` at the same count (0.13.0 → 0.18.0): one row names both.
#[test]
fn a_same_count_swap_in_a_static_catalogue_is_named() {
    let catalogue = |swap: bool| {
        let mut docs: Vec<Value> = (0..126)
            .map(|i| json!({"uri": format!("https://docs.sentry.io/doc-{i:03}.md"), "name": format!("doc-{i:03}")}))
            .collect();
        docs.push(if swap {
            json!({"uri": "sentry://about", "name": "about"})
        } else {
            json!({"uri": "sentry-query-syntax", "name": "query syntax"})
        });
        Value::Array(docs)
    };
    let old = declared(json!([]), catalogue(false), json!([]));
    let new = declared(json!([]), catalogue(true), json!([]));
    assert!(old.resource_list.is_some(), "127 resources are summarized");
    let changes = compare_declared(&old, &new);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(change.change_class, ChangeClass::ResourceCountChanged);
    assert_eq!(change.field, "resources");
    assert_eq!(
        change.details[0],
        "2 resources changed at the same count 127: removed sentry-query-syntax; added sentry://about"
    );
    let old_items = &change.old_value.as_ref().unwrap()["items"];
    let new_items = &change.new_value.as_ref().unwrap()["items"];
    assert!(
        old_items.get("sentry-query-syntax").is_some(),
        "{old_items}"
    );
    assert!(new_items.get("sentry://about").is_some(), "{new_items}");
    assert_ne!(change.old_value_hash, change.new_value_hash);
    // One description edited inside the catalogue is named as changed.
    let mut edited = catalogue(false);
    edited[5]["description"] = json!("Now with a description");
    let changes = compare_declared(&old, &declared(json!([]), edited, json!([])));
    assert_eq!(
        changes[0].details[0],
        "1 resource changed at the same count 127: changed https://docs.sentry.io/doc-005.md"
    );
    assert!(compare_declared(&old, &old).is_empty());
}

/// A summary stored before the item digests existed has none: compared with one that has them,
/// only the count counts, so the first run after an upgrade reports nothing.
#[test]
fn a_summary_without_digests_is_compared_by_its_count_only() {
    let catalogue = |first: &str| {
        let mut docs: Vec<Value> = (0..126)
            .map(|i| json!({"uri": format!("doc://{i:03}")}))
            .collect();
        docs.push(json!({"uri": first}));
        Value::Array(docs)
    };
    let new = declared(json!([]), catalogue("doc://new"), json!([]));
    let mut stored = declared(json!([]), catalogue("doc://old"), json!([]));
    if let Some(list) = stored.resource_list.as_mut() {
        list.digests = None;
    }
    assert!(compare_declared(&stored, &new).is_empty());
    assert!(compare_declared(&new, &stored).is_empty());
    let grown = declared(
        json!([]),
        Value::Array(
            (0..130)
                .map(|i| json!({"uri": format!("doc://{i:03}")}))
                .collect(),
        ),
        json!([]),
    );
    let changes = compare_declared(&stored, &grown);
    assert_eq!(changes[0].details[0], "127 → 130 resources");
    assert_eq!(
        changes[0].new_value,
        Some(json!({"total": 130, "complete": true}))
    );
}

/// A list the page limit cut says so, and its count is a lower bound; its items are not
/// compared.
#[test]
fn a_cut_list_says_its_count_is_a_lower_bound() {
    let files = |n: usize, run: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"uri": format!("file:///r{run}/{i:03}")}))
            .collect()
    };
    let cut = |items: Vec<Value>| {
        Declared::from_reads(
            None,
            Some(ListRead {
                items,
                truncated: true,
            }),
            None,
        )
        .0
    };
    let full = declared(json!([]), Value::Array(files(100, 1)), json!([]));
    let changes = compare_declared(&full, &cut(files(50, 1)));
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].details[0],
        "100 → 50 resources (list cut by the page limit: the count 50 is a lower bound)"
    );
    assert_eq!(
        changes[0].new_value,
        Some(json!({"total": 50, "complete": false}))
    );
    assert!(
        compare_declared(&cut(files(50, 1)), &cut(files(50, 2))).is_empty(),
        "other items on the pages read: a cut list is not compared item by item"
    );
}

#[test]
fn prompts_and_templates_beyond_the_limit_are_one_count_change_at_most() {
    let named = |n: usize, run: usize, template: bool| {
        Value::Array(
            (0..n)
                .map(|i| {
                    let mut item = json!({"name": format!("r{run}_{i:04}"), "description": "d"});
                    if template {
                        item["uriTemplate"] = json!(format!("x://{run}/{i}/{{id}}"));
                    }
                    item
                })
                .collect(),
        )
    };
    let over = ITEMIZED_PROMPTS_MAX + 100;
    // (old, new, class expected of the one change; `None`: no change)
    let prompts = |n, run| declared(named(n, run, false), json!([]), json!([]));
    let templates = |n, run| declared(json!([]), json!([]), named(n, run, true));
    let far = DIGESTED_ITEMS_MAX + 1;
    let cases = [
        (prompts(over, 1), prompts(over, 1), None),
        // Other prompts at the same count: named in one row, up to the digested bound.
        (
            prompts(over, 1),
            prompts(over, 2),
            Some(ChangeClass::PromptCountChanged),
        ),
        (prompts(far, 1), prompts(far, 2), None),
        (
            prompts(over, 1),
            prompts(over + 1, 2),
            Some(ChangeClass::PromptCountChanged),
        ),
        (
            prompts(3, 1),
            prompts(over, 2),
            Some(ChangeClass::PromptCountChanged),
        ),
        (
            templates(over, 1),
            templates(over, 2),
            Some(ChangeClass::ResourceTemplateCountChanged),
        ),
        (
            templates(over, 1),
            templates(5, 2),
            Some(ChangeClass::ResourceTemplateCountChanged),
        ),
    ];
    for (old, new, class) in cases {
        let changes = compare_declared(&old, &new);
        assert_eq!(
            changes.iter().map(|c| c.change_class).collect::<Vec<_>>(),
            class.into_iter().collect::<Vec<_>>(),
            "{changes:?}"
        );
        for change in &changes {
            assert_eq!(change.severity, Severity::Low);
            assert!(change.change_class.follows_data());
            assert!(
                change.details[1].starts_with("sample: r2_0000"),
                "{change:?}"
            );
        }
    }
    let cut = prompts(over, 1);
    assert_eq!(
        cut.prompt_list.as_ref().map(|l| (l.total, l.complete)),
        Some((over as u64, true))
    );
    assert!(cut.prompts.is_empty());
}

#[test]
fn item_fields_become_pointers() {
    let table = [
        (
            "prompts[\"greet\"].arguments",
            Some("/prompts/greet/arguments"),
        ),
        ("prompts[\"greet\"]", Some("/prompts/greet")),
        (
            "resources[\"file:///a.md\"].mimeType",
            Some("/resources/file:~1~1~1a.md/mimeType"),
        ),
        (
            "resourceTemplates[\"a\\\"]b\"]/title",
            Some("/resourceTemplates/a\"]b/title"),
        ),
        (
            "prompts[\"p\"]/arguments/0/description",
            Some("/prompts/p/arguments/0/description"),
        ),
        ("inputSchema", None),
        ("resources", None),
        ("prompts[oops", None),
    ];
    for (field, pointer) in table {
        assert_eq!(item_pointer(field).as_deref(), pointer, "{field}");
    }
}

#[test]
fn every_removal_is_breaking_and_trips_the_breaking_gate() {
    use crate::gate::FailOn;
    let p = || json!([{"name": "greet"}]);
    let r = || json!([{"uri": "docs://syntax", "name": "syntax"}]);
    let t = || json!([{"name": "files", "uriTemplate": "file:///{path}"}]);
    let none = || json!([]);
    // (before, after, the removal's class)
    let table = [
        (
            declared(p(), none(), none()),
            declared(none(), none(), none()),
            ChangeClass::PromptRemoved,
        ),
        (
            declared(none(), r(), none()),
            declared(none(), none(), none()),
            ChangeClass::ResourceRemoved,
        ),
        (
            declared(none(), none(), t()),
            declared(none(), none(), none()),
            ChangeClass::ResourceTemplateRemoved,
        ),
    ];
    for (before, after, class) in table {
        let changes = compare_declared(&before, &after);
        assert_eq!(changes.len(), 1, "{class}: {changes:#?}");
        assert_eq!(changes[0].change_class, class);
        assert_eq!(changes[0].compatibility, Some(Compatibility::Breaking));
        assert!(FailOn::Breaking.is_tripped_by(&changes[0]), "{class}");
        assert!(
            ChangeClass::default_alert_set().contains(&class),
            "{class} is in the default alert_on"
        );
        // The addition back is not breaking.
        let back = compare_declared(&after, &before);
        assert_eq!(back[0].compatibility, None, "{class} added back");
        assert!(!FailOn::Breaking.is_tripped_by(&back[0]));
    }
}
