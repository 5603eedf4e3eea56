//! The fields of a tool definition beside its description, schemas and watched hints: the
//! display title, `icons`, `execution`, `_meta`, the other annotations, and any top-level field
//! the engine has no class for. Every field of a tool is compared, so a changed definition
//! never yields zero change records.
//!
//! A field spelled `null` counts as absent, so a server that starts or stops sending
//! `"title": null` changes nothing.

use super::class::{ChangeClass, Compatibility, Severity};
use super::grade::opt_same;
use crate::surface::{Surface, Tool};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Top-level fields compared elsewhere (the name is the key of the comparison itself).
const COMPARED_ELSEWHERE: [&str; 5] = [
    "name",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// Top-level fields this module gives a class of their own.
const OWN_CLASS: [&str; 4] = ["title", "icons", "execution", "_meta"];

/// Annotations with a class or rule of their own (`title` is part of the display title).
const WATCHED_ANNOTATIONS: [&str; 5] = [
    "readOnlyHint",
    "destructiveHint",
    "openWorldHint",
    "idempotentHint",
    "title",
];

/// One changed field of a tool; the caller makes it a change record of that tool.
pub(super) struct FieldChange {
    /// The change class.
    pub class: ChangeClass,
    /// The changed field, e.g. `execution.taskSupport`.
    pub field: String,
    /// The value before (absent or `null`: `None`).
    pub old: Option<Value>,
    /// The value after.
    pub new: Option<Value>,
    /// How urgent the change is.
    pub severity: Severity,
    /// The grade for callers (`execution` only).
    pub compatibility: Option<Compatibility>,
    /// Notes on the raw values, one line each.
    pub details: Vec<String>,
}

/// The first protocol revision with tool tasks in its core (`execution.taskSupport`).
const TASKS_FROM: &str = "2025-11-25";
/// The first protocol revision without them: tasks left the core protocol.
const TASKS_UNTIL: &str = "2026-07-28";

/// Whether each side's wire defines tool tasks, so that a tool without `execution` declares
/// `taskSupport: forbidden` there. On a wire without tasks (before 2025-11-25, or 2026-07-28
/// and later) servers leave `execution` out whatever the tool supports, so its absence says
/// nothing: a server that moves between eras must not show a `taskSupport` change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wires {
    /// The old surface's wire defines tasks.
    pub old_has_tasks: bool,
    /// The new surface's wire defines tasks.
    pub new_has_tasks: bool,
}

impl Wires {
    /// The wires of two surfaces, from the protocol revision each was read with.
    pub(super) fn of(old: &Surface, new: &Surface) -> Wires {
        Wires {
            old_has_tasks: defines_tasks(old.identity.protocol_version.as_deref()),
            new_has_tasks: defines_tasks(new.identity.protocol_version.as_deref()),
        }
    }
}

/// Whether a protocol revision has tasks in its core. A surface whose revision is unknown (a
/// hand-written snapshot) is taken to have them, so an absent `execution` stays `forbidden`.
fn defines_tasks(protocol_version: Option<&str>) -> bool {
    protocol_version.is_none_or(|v| (TASKS_FROM..TASKS_UNTIL).contains(&v))
}

/// Appends the changes of every tool field this module owns.
pub(super) fn field_changes(old: &Tool, new: &Tool, wires: Wires, out: &mut Vec<FieldChange>) {
    title_change(old, new, out);
    simple_change(ChangeClass::ToolIconsChanged, "icons", old, new, out);
    execution_changes(old, new, wires, out);
    meta_change(old, new, out);
    idempotent_change(old, new, out);
    other_annotation_changes(old, new, out);
    other_field_changes(old, new, out);
}

/// The value of a field, with `null` read as absent.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

fn field<'a>(tool: &'a Tool, key: &str) -> Option<&'a Value> {
    present(tool.raw.get(key))
}

fn annotation<'a>(tool: &'a Tool, key: &str) -> Option<&'a Value> {
    present(tool.annotations_raw().and_then(|a| a.get(key)))
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), Value::to_string)
}

fn row(
    class: ChangeClass,
    field: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    severity: Severity,
) -> FieldChange {
    FieldChange {
        class,
        field: field.to_owned(),
        old: old.cloned(),
        new: new.cloned(),
        severity,
        compatibility: None,
        details: Vec::new(),
    }
}

fn simple_change(
    class: ChangeClass,
    key: &str,
    old: &Tool,
    new: &Tool,
    out: &mut Vec<FieldChange>,
) {
    let (o, n) = (field(old, key), field(new, key));
    if !opt_same(o, n) {
        out.push(row(class, key, o, n, Severity::Low));
    }
}

/// The title a client shows: `title`, else `annotations.title` (the 2025-03-26 spelling).
fn display_title(tool: &Tool) -> Option<&Value> {
    field(tool, "title").or_else(|| annotation(tool, "title"))
}

/// One record when the shown title changes (moving the same text between `title` and
/// `annotations.title` is not a change), and one for an `annotations.title` that changed
/// while a `title` on both sides hides it.
fn title_change(old: &Tool, new: &Tool, out: &mut Vec<FieldChange>) {
    let (o, n) = (display_title(old), display_title(new));
    let top_level = field(old, "title").is_some() || field(new, "title").is_some();
    if !opt_same(o, n) {
        let name = if top_level {
            "title"
        } else {
            "annotations.title"
        };
        let mut change = row(ChangeClass::ToolTitleChanged, name, o, n, Severity::Low);
        if top_level {
            let (ao, an) = (annotation(old, "title"), annotation(new, "title"));
            change.details.push(format!(
                "declared title: {} → {}; annotations.title: {} → {}",
                shown(field(old, "title")),
                shown(field(new, "title")),
                shown(ao),
                shown(an)
            ));
        }
        out.push(change);
        return;
    }
    let shadowed = field(old, "title").is_some() && field(new, "title").is_some();
    let (ao, an) = (annotation(old, "title"), annotation(new, "title"));
    if shadowed && !opt_same(ao, an) {
        let mut change = row(
            ChangeClass::ToolTitleChanged,
            "annotations.title",
            ao,
            an,
            Severity::Low,
        );
        change
            .details
            .push("hidden by the tool's title, which did not change".into());
        out.push(change);
    }
}

/// `execution.taskSupport` as a caller must read it (MCP 2025-11-25: absent means
/// `forbidden`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum TaskSupport {
    /// The tool must not be called as a task.
    Forbidden,
    /// The tool may be called either way.
    Optional,
    /// The tool can only be called as a task.
    Required,
    /// A value the protocol does not define.
    Other(Value),
}

impl TaskSupport {
    fn of(tool: &Tool) -> TaskSupport {
        let declared = present(field(tool, "execution").and_then(|e| e.get("taskSupport")));
        match declared {
            None => TaskSupport::Forbidden,
            Some(v) => match v.as_str() {
                Some("forbidden") => TaskSupport::Forbidden,
                Some("optional") => TaskSupport::Optional,
                Some("required") => TaskSupport::Required,
                _ => TaskSupport::Other(v.clone()),
            },
        }
    }

    fn value(&self) -> Value {
        match self {
            TaskSupport::Forbidden => "forbidden".into(),
            TaskSupport::Optional => "optional".into(),
            TaskSupport::Required => "required".into(),
            TaskSupport::Other(v) => v.clone(),
        }
    }
}

/// What a `taskSupport` change means for a caller, and why.
fn grade_task_support(was: &TaskSupport, is: &TaskSupport) -> (Compatibility, &'static str) {
    use TaskSupport::*;
    match (was, is) {
        (Other(_), _) | (_, Other(_)) => (
            Compatibility::Unknown,
            "a taskSupport value the protocol does not define",
        ),
        (_, Required) => (
            Compatibility::Breaking,
            "the tool can only be called as a task now: a client that does not speak tasks can no longer call it",
        ),
        (_, Forbidden) => (
            Compatibility::Breaking,
            "the tool can no longer be called as a task: a caller that did so is refused",
        ),
        (Forbidden, Optional) => (
            Compatibility::Additive,
            "the tool may now also be called as a task; direct calls work as before",
        ),
        (Required, Optional) => (
            Compatibility::Loosened,
            "the tool may now also be called directly; task calls work as before",
        ),
        (Optional, Optional) => (Compatibility::Notation, "unchanged"),
    }
}

fn execution_changes(old: &Tool, new: &Tool, wires: Wires, out: &mut Vec<FieldChange>) {
    let (o, n) = (field(old, "execution"), field(new, "execution"));
    if opt_same(o, n) {
        return;
    }
    // An `execution` left out on a wire without tasks is unknown, not `forbidden`.
    if (o.is_none() && !wires.old_has_tasks) || (n.is_none() && !wires.new_has_tasks) {
        return;
    }
    let (was, is) = (TaskSupport::of(old), TaskSupport::of(new));
    let before = out.len();
    if was != is {
        let (compatibility, why) = grade_task_support(&was, &is);
        let severity = match compatibility {
            Compatibility::Breaking | Compatibility::Unknown => Severity::Medium,
            _ => Severity::Low,
        };
        let declared = |t: Option<&Value>| shown(present(t.and_then(|e| e.get("taskSupport"))));
        let mut change = row(
            ChangeClass::ToolExecutionChanged,
            "execution.taskSupport",
            Some(&was.value()),
            Some(&is.value()),
            severity,
        );
        change.compatibility = Some(compatibility);
        change.details = vec![
            format!("declared taskSupport: {} → {}", declared(o), declared(n)),
            why.to_owned(),
        ];
        out.push(change);
    }
    let empty = Map::new();
    let (om, nm) = (
        o.and_then(Value::as_object).unwrap_or(&empty),
        n.and_then(Value::as_object).unwrap_or(&empty),
    );
    for key in union_keys(om, nm) {
        if key == "taskSupport" {
            continue;
        }
        let (ov, nv) = (present(om.get(key)), present(nm.get(key)));
        if !opt_same(ov, nv) {
            let mut change = row(
                ChangeClass::ToolExecutionChanged,
                &format!("execution.{key}"),
                ov,
                nv,
                Severity::Low,
            );
            change.compatibility = Some(Compatibility::Unknown);
            out.push(change);
        }
    }
    let not_objects = [o, n].into_iter().flatten().any(|v| !v.is_object());
    if out.len() == before && not_objects {
        let mut change = row(
            ChangeClass::ToolExecutionChanged,
            "execution",
            o,
            n,
            Severity::Low,
        );
        change.compatibility = Some(Compatibility::Unknown);
        out.push(change);
    }
}

fn union_keys<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> BTreeSet<&'a str> {
    a.keys().chain(b.keys()).map(String::as_str).collect()
}

/// One record for `_meta`, its details naming each top-level key added, removed or changed.
fn meta_change(old: &Tool, new: &Tool, out: &mut Vec<FieldChange>) {
    let (o, n) = (field(old, "_meta"), field(new, "_meta"));
    if opt_same(o, n) {
        return;
    }
    let mut change = row(ChangeClass::ToolMetaChanged, "_meta", o, n, Severity::Low);
    let empty = Map::new();
    let maps = (
        o.map_or(Some(&empty), Value::as_object),
        n.map_or(Some(&empty), Value::as_object),
    );
    if let (Some(om), Some(nm)) = maps {
        for key in union_keys(om, nm) {
            let word = match (present(om.get(key)), present(nm.get(key))) {
                (None, Some(_)) => "added",
                (Some(_), None) => "removed",
                (ov, nv) if !opt_same(ov, nv) => "changed",
                _ => continue,
            };
            change.details.push(format!("_meta key {key} {word}"));
        }
    }
    out.push(change);
}

/// `idempotentHint`, compared by its effective value like the watched hints. A flip that only
/// follows `readOnlyHint` (fixed to true for a read-only tool) is left to the read-only record.
fn idempotent_change(old: &Tool, new: &Tool, out: &mut Vec<FieldChange>) {
    let (o, n) = (old.effective_annotations(), new.effective_annotations());
    let (was, is) = (o.idempotent_hint, n.idempotent_hint);
    if was == is || o.read_only_hint != n.read_only_hint {
        return;
    }
    let mut change = row(
        ChangeClass::ToolFieldChanged,
        "annotations.idempotentHint",
        Some(&Value::Bool(was)),
        Some(&Value::Bool(is)),
        Severity::Low,
    );
    change.details.push(format!(
        "declared idempotentHint: {} → {}",
        shown(annotation(old, "idempotentHint")),
        shown(annotation(new, "idempotentHint"))
    ));
    out.push(change);
}

fn annotations_map(tool: &Tool) -> Map<String, Value> {
    tool.annotations_raw()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn other_annotation_changes(old: &Tool, new: &Tool, out: &mut Vec<FieldChange>) {
    let (om, nm) = (annotations_map(old), annotations_map(new));
    for key in union_keys(&om, &nm) {
        if WATCHED_ANNOTATIONS.contains(&key) {
            continue;
        }
        let (ov, nv) = (present(om.get(key)), present(nm.get(key)));
        if !opt_same(ov, nv) {
            let name = format!("annotations.{key}");
            out.push(row(
                ChangeClass::ToolFieldChanged,
                &name,
                ov,
                nv,
                Severity::Low,
            ));
        }
    }
}

fn other_field_changes(old: &Tool, new: &Tool, out: &mut Vec<FieldChange>) {
    let empty = Map::new();
    let (om, nm) = (
        old.raw.as_object().unwrap_or(&empty),
        new.raw.as_object().unwrap_or(&empty),
    );
    for key in union_keys(om, nm) {
        if COMPARED_ELSEWHERE.contains(&key) || OWN_CLASS.contains(&key) {
            continue;
        }
        let (ov, nv) = (present(om.get(key)), present(nm.get(key)));
        if !opt_same(ov, nv) {
            out.push(row(
                ChangeClass::ToolFieldChanged,
                key,
                ov,
                nv,
                Severity::Low,
            ));
        }
    }
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
