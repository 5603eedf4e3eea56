//! One change record, and the comparison of two surfaces that produces them.

use super::class::{ChangeClass, Compatibility, Severity};
use super::fields;
use super::grade::{SchemaRole, grade_schema_change, opt_same, same, same_but_default_sets};
use crate::surface::{EffectiveAnnotations, Surface, Tool, canon, hash_value};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Ordering;

/// One difference between two observations of a server's surface.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Change {
    /// What kind of change this is.
    pub change_class: ChangeClass,
    /// The tool it concerns; `None` for server-level changes.
    pub tool_name: Option<String>,
    /// The changed field, e.g. `inputSchema`, `annotations.readOnlyHint`, `serverInfo.version`.
    pub field: String,
    /// The value before (the whole tool for a removal, the effective boolean for a hint).
    pub old_value: Option<Value>,
    /// The value after (the whole tool for an addition).
    pub new_value: Option<Value>,
    /// `hash_value` of `old_value`.
    pub old_value_hash: Option<String>,
    /// `hash_value` of `new_value`.
    pub new_value_hash: Option<String>,
    /// How urgent the change is.
    pub severity: Severity,
    /// The grade for callers: schema, argument, `uriTemplate` and `execution.taskSupport`
    /// changes, and removals (always `breaking`).
    pub compatibility: Option<Compatibility>,
    /// Findings behind the grade, or notes on the raw values, one line each.
    pub details: Vec<String>,
    /// The surface changed while the server kept its version (severity was raised one step).
    #[serde(default)]
    pub same_version: bool,
    /// For a removed tool: the added tool it most likely became (a hint; both rows stay).
    #[serde(default)]
    pub renamed_to: Option<String>,
    /// For an added tool: the removed tool it most likely replaces (a hint).
    #[serde(default)]
    pub renamed_from: Option<String>,
}

impl Change {
    /// A change record with hashes computed from the values, no grade and no details.
    pub fn new(
        change_class: ChangeClass,
        tool_name: Option<&str>,
        field: &str,
        old_value: Option<Value>,
        new_value: Option<Value>,
        severity: Severity,
    ) -> Change {
        Change {
            change_class,
            tool_name: tool_name.map(str::to_owned),
            field: field.to_owned(),
            old_value_hash: old_value.as_ref().map(hash_value),
            new_value_hash: new_value.as_ref().map(hash_value),
            old_value,
            new_value,
            severity,
            compatibility: None,
            details: Vec::new(),
            same_version: false,
            renamed_to: None,
            renamed_from: None,
        }
    }

    /// The change record of an item that is gone (a tool, a prompt, a resource template, a
    /// resource of a list kept item by item), graded `breaking`: a caller that used the item
    /// fails now, as it does when one argument of it is removed.
    pub fn removal(
        change_class: ChangeClass,
        tool_name: Option<&str>,
        field: &str,
        old_value: Value,
        severity: Severity,
    ) -> Change {
        let mut change = Change::new(
            change_class,
            tool_name,
            field,
            Some(old_value),
            None,
            severity,
        );
        change.compatibility = Some(Compatibility::Breaking);
        change
    }
}

/// Compares a stored surface with a new one. The result is sorted: server-level changes first,
/// then by tool name (UTF-16 order), class and field. `compare(s, s)` is always empty.
pub fn compare(old: &Surface, new: &Surface) -> Vec<Change> {
    let mut changes = identity_changes(old, new);
    let wires = fields::Wires::of(old, new);
    let (mut i, mut j) = (0, 0);
    while i < old.tools.len() || j < new.tools.len() {
        let order = match (old.tools.get(i), new.tools.get(j)) {
            (Some(a), Some(b)) => canon::cmp_utf16(&a.name, &b.name),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                let t = &old.tools[i];
                changes.push(Change::removal(
                    ChangeClass::ToolRemoved,
                    Some(&t.name),
                    "tool",
                    t.raw.clone(),
                    Severity::Medium,
                ));
                i += 1;
            }
            Ordering::Greater => {
                let t = &new.tools[j];
                changes.push(Change::new(
                    ChangeClass::ToolAdded,
                    Some(&t.name),
                    "tool",
                    None,
                    Some(t.raw.clone()),
                    Severity::Medium,
                ));
                j += 1;
            }
            Ordering::Equal => {
                compare_tool(&old.tools[i], &new.tools[j], wires, &mut changes);
                i += 1;
                j += 1;
            }
        }
    }
    sort_changes(&mut changes);
    changes
}

/// Sorts change records into the deterministic output order.
pub fn sort_changes(changes: &mut [Change]) {
    changes.sort_by(|a, b| {
        let by_tool = match (&a.tool_name, &b.tool_name) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => canon::cmp_utf16(x, y),
        };
        by_tool
            .then(a.change_class.cmp(&b.change_class))
            .then_with(|| a.field.cmp(&b.field))
    });
}

fn identity_changes(old: &Surface, new: &Surface) -> Vec<Change> {
    let mut changes = Vec::new();
    let text = |s: &Option<String>| s.clone().map(Value::String);
    let (o, n) = (&old.identity, &new.identity);
    if o.version != n.version {
        changes.push(Change::new(
            ChangeClass::ServerVersionChanged,
            None,
            "serverInfo.version",
            text(&o.version),
            text(&n.version),
            Severity::Low,
        ));
    }
    if o.instructions != n.instructions {
        changes.push(Change::new(
            ChangeClass::ServerInstructionsChanged,
            None,
            "instructions",
            text(&o.instructions),
            text(&n.instructions),
            Severity::Low,
        ));
    }
    changes
}

fn compare_tool(old: &Tool, new: &Tool, wires: fields::Wires, out: &mut Vec<Change>) {
    if same(&old.raw, &new.raw) {
        return;
    }
    let name = Some(old.name.as_str());
    let (od, nd) = (old.raw.get("description"), new.raw.get("description"));
    if !opt_same(od, nd) {
        out.push(Change::new(
            ChangeClass::ToolDescriptionChanged,
            name,
            "description",
            od.cloned(),
            nd.cloned(),
            Severity::Low,
        ));
    }
    schema_change(
        ChangeClass::InputSchemaChanged,
        "inputSchema",
        SchemaRole::Input,
        old,
        new,
        out,
    );
    schema_change(
        ChangeClass::OutputSchemaChanged,
        "outputSchema",
        SchemaRole::Output,
        old,
        new,
        out,
    );
    hint_changes(old, new, out);
    let mut fields = Vec::new();
    fields::field_changes(old, new, wires, &mut fields);
    for f in fields {
        let mut change = Change::new(f.class, name, &f.field, f.old, f.new, f.severity);
        change.compatibility = f.compatibility;
        change.details = f.details;
        out.push(change);
    }
}

fn schema_change(
    class: ChangeClass,
    field: &str,
    role: SchemaRole,
    old: &Tool,
    new: &Tool,
    out: &mut Vec<Change>,
) {
    let (o, n) = (old.raw.get(field), new.raw.get(field));
    if opt_same(o, n) {
        return;
    }
    if let (Some(a), Some(b)) = (o, n)
        && same_but_default_sets(a, b)
    {
        return;
    }
    let grade = grade_schema_change(o, n, role);
    let severity = if grade.compatibility == Compatibility::Notation {
        Severity::Low
    } else {
        Severity::Medium
    };
    let mut change = Change::new(
        class,
        Some(&old.name),
        field,
        o.cloned(),
        n.cloned(),
        severity,
    );
    change.compatibility = Some(grade.compatibility);
    change.details = grade.details;
    out.push(change);
}

/// One effective hint the engine watches: its class, wire key, reader and severity rule.
struct HintRule {
    class: ChangeClass,
    key: &'static str,
    read: fn(&EffectiveAnnotations) -> bool,
    /// Severity given the value before the change (the value after is its negation).
    severity_when_was: fn(bool) -> Severity,
}

const HINT_RULES: [HintRule; 3] = [
    HintRule {
        class: ChangeClass::ReadOnlyHintChanged,
        key: "readOnlyHint",
        read: |a| a.read_only_hint,
        // Losing the read-only promise is high; gaining it is low.
        severity_when_was: |was| if was { Severity::High } else { Severity::Low },
    },
    HintRule {
        class: ChangeClass::DestructiveHintChanged,
        key: "destructiveHint",
        read: |a| a.destructive_hint,
        // Turning on (or an explicit false no longer declared) is high; turning off medium.
        severity_when_was: |was| {
            if was {
                Severity::Medium
            } else {
                Severity::High
            }
        },
    },
    HintRule {
        class: ChangeClass::OpenWorldHintChanged,
        key: "openWorldHint",
        read: |a| a.open_world_hint,
        severity_when_was: |_| Severity::Medium,
    },
];

fn hint_changes(old: &Tool, new: &Tool, out: &mut Vec<Change>) {
    let (o, n) = (old.effective_annotations(), new.effective_annotations());
    for rule in &HINT_RULES {
        let (was, is) = ((rule.read)(&o), (rule.read)(&n));
        if was == is {
            continue;
        }
        let field = format!("annotations.{}", rule.key);
        let severity = (rule.severity_when_was)(was);
        let mut change = Change::new(
            rule.class,
            Some(&old.name),
            &field,
            Some(Value::Bool(was)),
            Some(Value::Bool(is)),
            severity,
        );
        let (before, after) = (
            declared(old.annotations_raw(), rule.key),
            declared(new.annotations_raw(), rule.key),
        );
        let detail = if before == after && o.read_only_hint != n.read_only_hint {
            read_only_cause(rule.key, &after, n.read_only_hint, is)
        } else {
            format!("declared {}: {before} → {after}", rule.key)
        };
        change.details.push(detail);
        out.push(change);
    }
}

/// Why a hint whose declared value did not move changed all the same: `readOnlyHint` flipped,
/// and a read-only tool's other hints are fixed (see [`EffectiveAnnotations`]).
fn read_only_cause(key: &str, declared_now: &str, read_only_now: bool, is: bool) -> String {
    if read_only_now {
        format!("readOnlyHint turned true, so {key} is fixed to {is} for a read-only tool")
    } else if declared_now == "(absent)" {
        format!("readOnlyHint turned false, so the default {key}: {is} now applies")
    } else {
        format!("readOnlyHint turned false, so the declared {key}: {declared_now} now applies")
    }
}

fn declared(annotations: Option<&Value>, key: &str) -> String {
    annotations
        .and_then(|a| a.get(key))
        .map(|v| v.to_string())
        .unwrap_or_else(|| "(absent)".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::ServerIdentity;
    use serde_json::json;

    fn surface(tools: Vec<Value>) -> Surface {
        Surface::from_tools(ServerIdentity::default(), tools).unwrap()
    }

    fn one(old: Value, new: Value) -> Vec<(ChangeClass, Severity)> {
        compare(&surface(vec![old]), &surface(vec![new]))
            .into_iter()
            .map(|c| (c.change_class, c.severity))
            .collect()
    }

    fn annotated(a: Value) -> Value {
        json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": a})
    }

    #[test]
    fn a_hint_that_changed_through_read_only_names_the_cause() {
        let cases = [
            (
                json!({"readOnlyHint": true}),
                json!({}),
                "readOnlyHint turned false, so the default destructiveHint: true now applies",
            ),
            (
                json!({"readOnlyHint": true, "destructiveHint": true}),
                json!({"destructiveHint": true}),
                "readOnlyHint turned false, so the declared destructiveHint: true now applies",
            ),
            (
                json!({}),
                json!({"readOnlyHint": true}),
                "readOnlyHint turned true, so destructiveHint is fixed to false for a read-only tool",
            ),
            (
                json!({"destructiveHint": false}),
                json!({"destructiveHint": true}),
                "declared destructiveHint: false → true",
            ),
        ];
        for (old, new, expected) in cases {
            let changes = compare(
                &surface(vec![annotated(old.clone())]),
                &surface(vec![annotated(new.clone())]),
            );
            let destructive = changes
                .iter()
                .find(|c| c.change_class == ChangeClass::DestructiveHintChanged)
                .unwrap_or_else(|| panic!("{old} → {new}: no destructive change"));
            assert_eq!(
                destructive.details,
                vec![expected.to_string()],
                "{old} → {new}"
            );
        }
    }

    #[test]
    fn severity_table() {
        use ChangeClass::*;
        use Severity::*;
        let s = json!({"type": "object"});
        type Case = (&'static str, Value, Value, Vec<(ChangeClass, Severity)>);
        let cases: Vec<Case> = vec![
            (
                "destructive turns on",
                annotated(json!({"destructiveHint": false})),
                annotated(json!({"destructiveHint": true})),
                vec![(DestructiveHintChanged, High)],
            ),
            (
                "explicit false stops being declared",
                annotated(json!({"destructiveHint": false})),
                annotated(json!({})),
                vec![(DestructiveHintChanged, High)],
            ),
            (
                "destructive turns off",
                annotated(json!({})),
                annotated(json!({"destructiveHint": false})),
                vec![(DestructiveHintChanged, Medium)],
            ),
            (
                "read-only lost",
                annotated(json!({"readOnlyHint": true})),
                annotated(json!({})),
                vec![(DestructiveHintChanged, High), (ReadOnlyHintChanged, High)],
            ),
            (
                "read-only lost, declared non-destructive",
                annotated(json!({"readOnlyHint": true})),
                annotated(json!({"destructiveHint": false})),
                vec![(ReadOnlyHintChanged, High)],
            ),
            (
                "read-only gained",
                annotated(json!({"destructiveHint": false})),
                annotated(json!({"readOnlyHint": true})),
                vec![(ReadOnlyHintChanged, Low)],
            ),
            (
                "open world",
                annotated(json!({})),
                annotated(json!({"openWorldHint": false})),
                vec![(OpenWorldHintChanged, Medium)],
            ),
            (
                "defaults spelled out",
                annotated(json!({})),
                annotated(
                    json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}),
                ),
                vec![],
            ),
            (
                "read-only tool respells meaningless hints",
                annotated(json!({"readOnlyHint": true})),
                annotated(json!({"readOnlyHint": true, "destructiveHint": true})),
                vec![],
            ),
            (
                "description",
                json!({"name": "t", "description": "a"}),
                json!({"name": "t", "description": "b"}),
                vec![(ToolDescriptionChanged, Low)],
            ),
            (
                "input schema",
                json!({"name": "t", "inputSchema": s}),
                json!({"name": "t", "inputSchema": {"type": "object", "required": ["x"]}}),
                vec![(InputSchemaChanged, Medium)],
            ),
            (
                "input schema notation",
                json!({"name": "t", "inputSchema": s}),
                json!({"name": "t", "inputSchema": {"type": "object", "title": "T"}}),
                vec![(InputSchemaChanged, Low)],
            ),
            (
                "output schema",
                json!({"name": "t"}),
                json!({"name": "t", "outputSchema": s}),
                vec![(OutputSchemaChanged, Medium)],
            ),
            (
                "key order and number spelling",
                json!({"name": "t", "inputSchema": {"type": "object", "maximum": 1}}),
                json!({"inputSchema": {"maximum": 1.0, "type": "object"}, "name": "t"}),
                vec![],
            ),
        ];
        for (name, old, new, expected) in cases {
            assert_eq!(one(old, new), expected, "{name}");
        }
    }

    #[test]
    fn values_and_hashes_are_the_actual_json() {
        let old = json!({"name": "t", "description": "a", "inputSchema": {"type": "object"}});
        let new = json!({"name": "t", "description": "b", "inputSchema": {"type": "object", "required": ["x"]}});
        let changes = compare(&surface(vec![old.clone()]), &surface(vec![new.clone()]));
        let schema = changes
            .iter()
            .find(|c| c.change_class == ChangeClass::InputSchemaChanged)
            .unwrap();
        assert_eq!(schema.old_value.as_ref(), Some(&old["inputSchema"]));
        assert_eq!(schema.new_value_hash, Some(hash_value(&new["inputSchema"])));
        assert_eq!(schema.compatibility, Some(Compatibility::Breaking));
        assert_eq!(schema.details, ["required added /properties/x"]);
        let desc = changes
            .iter()
            .find(|c| c.change_class == ChangeClass::ToolDescriptionChanged)
            .unwrap();
        assert_eq!(desc.old_value, Some(json!("a")));
        assert_eq!(desc.field, "description");
    }

    #[test]
    fn added_removed_and_identity_in_deterministic_order() {
        let mut old = surface(vec![json!({"name": "b"}), json!({"name": "a"})]);
        let mut new = surface(vec![json!({"name": "c"}), json!({"name": "a"})]);
        old.identity.version = Some("1.0".into());
        new.identity.version = Some("1.1".into());
        new.identity.instructions = Some("use me".into());
        let changes = compare(&old, &new);
        let summary: Vec<_> = changes
            .iter()
            .map(|c| (c.change_class, c.tool_name.as_deref(), c.severity))
            .collect();
        assert_eq!(
            summary,
            [
                (ChangeClass::ServerVersionChanged, None, Severity::Low),
                (ChangeClass::ServerInstructionsChanged, None, Severity::Low),
                (ChangeClass::ToolRemoved, Some("b"), Severity::Medium),
                (ChangeClass::ToolAdded, Some("c"), Severity::Medium),
            ]
        );
        assert_eq!(changes[2].old_value, Some(json!({"name": "b"})));
        assert_eq!(changes[2].compatibility, Some(Compatibility::Breaking));
        assert_eq!(
            changes[3].compatibility, None,
            "an addition breaks no caller"
        );
        assert_eq!(
            changes[3].new_value_hash,
            Some(hash_value(&json!({"name": "c"})))
        );
        assert_eq!(changes[0].new_value, Some(json!("1.1")));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn arb_schema() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(json!({"type": "string"})),
                Just(json!({"type": "integer", "minimum": 1})),
                Just(json!({"enum": ["a", "b"]})),
                Just(json!(true)),
            ];
            leaf.prop_recursive(3, 16, 4, |inner| {
                prop_oneof![
                    prop::collection::btree_map("[a-c]", inner.clone(), 0..4)
                        .prop_map(|props| json!({"type": "object", "properties": props, "required": props.keys().take(1).collect::<Vec<_>>()})),
                    inner.clone().prop_map(|i| json!({"type": "array", "items": i})),
                    prop::collection::vec(inner, 1..3).prop_map(|b| json!({"anyOf": b})),
                ]
            })
        }

        fn arb_tool() -> impl Strategy<Value = Value> {
            (
                "[a-e]{1,3}",
                proptest::option::of("\\PC{0,10}"),
                arb_schema(),
                proptest::option::of(any::<(bool, bool, bool)>()),
            )
                .prop_map(|(name, description, schema, hints)| {
                    let mut tool = json!({"name": name, "inputSchema": schema});
                    if let Some(d) = description {
                        tool["description"] = json!(d);
                    }
                    if let Some((r, d, o)) = hints {
                        tool["annotations"] =
                            json!({"readOnlyHint": r, "destructiveHint": d, "openWorldHint": o});
                    }
                    tool
                })
        }

        proptest! {
            #[test]
            fn diff_of_a_surface_with_itself_is_empty(tools in prop::collection::vec(arb_tool(), 0..8)) {
                let s = surface(tools);
                prop_assert!(compare(&s, &s).is_empty());
                prop_assert!(compare(&s, &s.clone()).is_empty());
            }

            #[test]
            fn diff_is_deterministic_and_sees_every_name(a in prop::collection::vec(arb_tool(), 0..6), b in prop::collection::vec(arb_tool(), 0..6)) {
                let (sa, sb) = (surface(a), surface(b));
                let first = compare(&sa, &sb);
                prop_assert_eq!(&first, &compare(&sa, &sb));
                let added = first.iter().filter(|c| c.change_class == ChangeClass::ToolAdded).count();
                let removed = first.iter().filter(|c| c.change_class == ChangeClass::ToolRemoved).count();
                let only_new = sb.tools.iter().filter(|t| sa.tool(&t.name).is_none()).count();
                let only_old = sa.tools.iter().filter(|t| sb.tool(&t.name).is_none()).count();
                prop_assert_eq!((added, removed), (only_new, only_old));
            }
        }
    }
}
