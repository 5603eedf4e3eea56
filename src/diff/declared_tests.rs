//! Tables of `diff::declared`: each class, each grade, the data rule and unknown sides.

use super::*;
use crate::surface::ListRead;
use crate::surface::declared::ITEMIZED_PROMPTS_MAX;

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
fn a_churning_large_resource_list_is_one_count_change_at_most() {
    let files = |n: usize, run: usize| {
        Value::Array(
            (0..n)
                .map(|i| json!({"uri": format!("file:///run{run}/f{i}")}))
                .collect(),
        )
    };
    let a = declared(json!([]), files(1000, 1), json!([]));
    let b = declared(json!([]), files(1000, 2), json!([]));
    assert!(
        compare_declared(&a, &b).is_empty(),
        "same count, other files"
    );
    let c = declared(json!([]), files(1003, 3), json!([]));
    let changes = compare_declared(&b, &c);
    assert_eq!(classes(&changes)[0].0, ChangeClass::ResourceCountChanged);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].new_value,
        Some(json!({"total": 1003, "complete": true}))
    );
    assert!(changes[0].details[1].starts_with("sample: file:///run3/f0"));
    // Growing past the itemized limit is one count change, not 100 removals.
    let small = declared(json!([]), files(10, 4), json!([]));
    assert_eq!(compare_declared(&small, &c).len(), 1);
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
    let cases = [
        (prompts(over, 1), prompts(over, 2), None),
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
        (templates(over, 1), templates(over, 2), None),
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
