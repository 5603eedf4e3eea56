//! Changes of prompts, resources and resource templates. Pure: no I/O.
//!
//! Items are matched by their identity key (a prompt's and a template's `name`, a resource's
//! `uri`). A change names its item in `field` as `<list key>[<key as a JSON string>]`, followed
//! by `.<field>` for a field of the item: `prompts["greet"].arguments`,
//! `resourceTemplates["files"].uriTemplate`; `tool_name` stays empty.
//!
//! Grades, for the party that calls `prompts/get` or reads a URI built from a template:
//! - prompt `arguments`: an argument removed, a required argument added, or an argument that
//!   becomes required is `breaking`; an optional argument added is `additive`; an argument that
//!   stops being required is `loosened`; only descriptions or titles changed is `notation`;
//!   anything else (arguments not an array, an unknown field) is `unknown`;
//! - `uriTemplate`: a variable added or removed, or a changed literal part, is `breaking`; only
//!   the expansion operators or modifiers changed is `unknown`.
//!
//! A kind that one side did not read (the listing failed, reading was off, or the side is a
//! record of a version that did not read these lists) is not compared at all, so neither a
//! flaky listing nor an upgrade produces a flood of added or removed items.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::change::Change;
use super::class::{ChangeClass, Compatibility, Severity};
use super::grade::opt_same;
use super::summarized::{self, ItemDelta};
use crate::surface::declared::{RESOURCE_SAMPLE, surface_view};
use crate::surface::{Declared, DeclaredItem, DeclaredKind, canon};

/// The `field` that names an item: `prompts["greet"]` ([`DeclaredKind::item_field`]).
fn item_field(kind: DeclaredKind, key: &str) -> String {
    kind.item_field(key)
}

/// The JSON pointer, inside the server's surface, of a `field` that names a prompt, resource or
/// template (`prompts["greet"].arguments` → `/prompts/greet/arguments`,
/// `prompts["greet"]/arguments/0/description` → `/prompts/greet/arguments/0/description`);
/// `None` for any other field.
pub fn item_pointer(field: &str) -> Option<String> {
    let kind = DeclaredKind::ALL
        .into_iter()
        .find(|k| field.starts_with(&format!("{}[", k.list_key())))?;
    let rest = &field[kind.list_key().len() + 1..];
    let mut keys = serde_json::Deserializer::from_str(rest).into_iter::<String>();
    let key = keys.next()?.ok()?;
    let after = rest[keys.byte_offset()..].strip_prefix(']')?;
    let inner = match after.strip_prefix('.') {
        Some(field) => format!("/{}", crate::surface::pointer_segment(field)),
        None => after.to_string(),
    };
    Some(format!(
        "/{}/{}{inner}",
        kind.list_key(),
        crate::surface::pointer_segment(&key)
    ))
}

/// Every change of the prompts, resources and resource templates between two surfaces, in
/// kind order, then item key order.
pub fn compare_declared(old: &Declared, new: &Declared) -> Vec<Change> {
    let mut changes = Vec::new();
    for kind in DeclaredKind::ALL {
        if !old.knows(kind) || !new.knows(kind) {
            continue;
        }
        if old.summary(kind).is_some() || new.summary(kind).is_some() {
            changes.extend(count_change(kind, old, new));
            continue;
        }
        compare_items(kind, old.items(kind), new.items(kind), &mut changes);
    }
    changes
}

fn compare_items(
    kind: DeclaredKind,
    old: &[DeclaredItem],
    new: &[DeclaredItem],
    out: &mut Vec<Change>,
) {
    let (added, removed, severity) = match kind {
        DeclaredKind::Prompt => (
            ChangeClass::PromptAdded,
            ChangeClass::PromptRemoved,
            Severity::Medium,
        ),
        DeclaredKind::Resource => (
            ChangeClass::ResourceAdded,
            ChangeClass::ResourceRemoved,
            Severity::Low,
        ),
        DeclaredKind::ResourceTemplate => (
            ChangeClass::ResourceTemplateAdded,
            ChangeClass::ResourceTemplateRemoved,
            Severity::Medium,
        ),
    };
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => canon::cmp_utf16(&a.key, &b.key),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                let item = &old[i];
                let field = item_field(kind, &item.key);
                out.push(Change::removal(
                    removed,
                    None,
                    &field,
                    item.raw.clone(),
                    severity,
                ));
                i += 1;
            }
            Ordering::Greater => {
                let item = &new[j];
                let field = item_field(kind, &item.key);
                out.push(Change::new(
                    added,
                    None,
                    &field,
                    None,
                    Some(item.raw.clone()),
                    severity,
                ));
                j += 1;
            }
            Ordering::Equal => {
                compare_item(kind, &old[i], &new[j], out);
                i += 1;
                j += 1;
            }
        }
    }
}

/// The class and severity of a change of `key` in an item of `kind` (grading aside).
fn field_class(kind: DeclaredKind, key: &str) -> (ChangeClass, Severity) {
    match (kind, key) {
        (DeclaredKind::Prompt, "description" | "title") => {
            (ChangeClass::PromptDescriptionChanged, Severity::Low)
        }
        (DeclaredKind::Prompt, "arguments") => {
            (ChangeClass::PromptArgumentsChanged, Severity::Medium)
        }
        (DeclaredKind::Prompt, _) => (ChangeClass::PromptFieldChanged, Severity::Low),
        (DeclaredKind::ResourceTemplate, "uriTemplate") => {
            (ChangeClass::ResourceTemplateUriChanged, Severity::Medium)
        }
        (_, "name" | "title" | "description") => {
            (ChangeClass::ResourceDescriptionChanged, Severity::Low)
        }
        (_, "mimeType") => (ChangeClass::ResourceMimeTypeChanged, Severity::Low),
        (_, "annotations") => (ChangeClass::ResourceAnnotationsChanged, Severity::Low),
        _ => (ChangeClass::ResourceFieldChanged, Severity::Low),
    }
}

/// One change per top-level field that differs between two versions of one item (its key
/// field cannot differ).
fn compare_item(kind: DeclaredKind, old: &DeclaredItem, new: &DeclaredItem, out: &mut Vec<Change>) {
    let (o, n) = (surface_view(kind, &old.raw), surface_view(kind, &new.raw));
    if canon::canonicalize(&o).ok() == canon::canonicalize(&n).ok() {
        return;
    }
    let empty = serde_json::Map::new();
    let (om, nm) = (
        o.as_object().unwrap_or(&empty),
        n.as_object().unwrap_or(&empty),
    );
    let keys: BTreeSet<&String> = om.keys().chain(nm.keys()).collect();
    for key in keys {
        let (before, after) = (om.get(key), nm.get(key));
        if opt_same(before, after) {
            continue;
        }
        let (class, mut severity) = field_class(kind, key);
        let field = format!("{}.{key}", item_field(kind, &old.key));
        let grade = match class {
            ChangeClass::PromptArgumentsChanged => Some(grade_arguments(before, after)),
            ChangeClass::ResourceTemplateUriChanged => Some(grade_uri_template(before, after)),
            _ => None,
        };
        if let Some((compatibility, _)) = &grade
            && *compatibility == Compatibility::Notation
        {
            severity = Severity::Low;
        }
        let mut change = Change::new(
            class,
            None,
            &field,
            before.cloned(),
            after.cloned(),
            severity,
        );
        if let Some((compatibility, details)) = grade {
            change.compatibility = Some(compatibility);
            change.details = details;
        }
        out.push(change);
    }
}

/// How bad a grade is for the caller: the worst finding decides (as in schema grading, an
/// undecidable part never hides a provable break).
fn rank(c: Compatibility) -> u8 {
    match c {
        Compatibility::Notation => 0,
        Compatibility::Loosened => 1,
        Compatibility::Additive => 2,
        Compatibility::Unknown => 3,
        Compatibility::Breaking => 4,
    }
}

fn worst(findings: &[(Compatibility, String)]) -> (Compatibility, Vec<String>) {
    let grade = findings
        .iter()
        .map(|(c, _)| *c)
        .max_by_key(|c| rank(*c))
        .unwrap_or(Compatibility::Notation);
    let details = findings
        .iter()
        .map(|(c, text)| format!("{}: {text}", json!(c).as_str().unwrap_or("")))
        .collect();
    (grade, details)
}

/// The arguments of a prompt by name, or `None` when `arguments` is neither absent nor an array
/// of objects with string names.
fn arguments(value: Option<&Value>) -> Option<BTreeMap<String, &Value>> {
    let Some(value) = value else {
        return Some(BTreeMap::new());
    };
    let mut by_name = BTreeMap::new();
    for argument in value.as_array()? {
        let name = argument.get("name")?.as_str()?;
        by_name.insert(name.to_string(), argument);
    }
    Some(by_name)
}

fn required(argument: &Value) -> bool {
    argument.get("required").and_then(Value::as_bool) == Some(true)
}

/// Grades a change of a prompt's `arguments` for its callers.
pub fn grade_arguments(old: Option<&Value>, new: Option<&Value>) -> (Compatibility, Vec<String>) {
    let (Some(before), Some(after)) = (arguments(old), arguments(new)) else {
        return worst(&[(
            Compatibility::Unknown,
            "arguments is not a list of named arguments".into(),
        )]);
    };
    let mut findings = Vec::new();
    for (name, was) in &before {
        let Some(is) = after.get(name) else {
            findings.push((
                Compatibility::Breaking,
                format!("argument `{name}` removed"),
            ));
            continue;
        };
        match (required(was), required(is)) {
            (false, true) => findings.push((
                Compatibility::Breaking,
                format!("argument `{name}` became required"),
            )),
            (true, false) => findings.push((
                Compatibility::Loosened,
                format!("argument `{name}` is no longer required"),
            )),
            _ => {}
        }
        let rest = |a: &Value| {
            let mut a = a.clone();
            if let Some(o) = a.as_object_mut() {
                for key in ["required", "description", "title"] {
                    o.remove(key);
                }
            }
            a
        };
        if rest(was) != rest(is) {
            findings.push((
                Compatibility::Unknown,
                format!("argument `{name}` changed in another field"),
            ));
        } else if was.get("description") != is.get("description")
            || was.get("title") != is.get("title")
        {
            findings.push((
                Compatibility::Notation,
                format!("argument `{name}`: description or title changed"),
            ));
        }
    }
    for (name, is) in &after {
        if before.contains_key(name) {
            continue;
        }
        findings.push(if required(is) {
            (
                Compatibility::Breaking,
                format!("required argument `{name}` added"),
            )
        } else {
            (
                Compatibility::Additive,
                format!("optional argument `{name}` added"),
            )
        });
    }
    if findings.is_empty() {
        findings.push((Compatibility::Notation, "arguments reordered".into()));
    }
    worst(&findings)
}

/// The variables of an RFC 6570 URI template and its literal skeleton (each expression replaced
/// by `{}`); `None` for an unbalanced template.
fn template_parts(template: &str) -> Option<(BTreeSet<String>, String)> {
    let mut variables = BTreeSet::new();
    let mut skeleton = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        skeleton.push_str(&rest[..open]);
        let close = rest[open..].find('}')? + open;
        let expression =
            rest[open + 1..close].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for spec in expression.split(',') {
            let name = spec.split(':').next().unwrap_or("").trim_end_matches('*');
            if !name.is_empty() {
                variables.insert(name.to_string());
            }
        }
        skeleton.push_str("{}");
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return None;
    }
    skeleton.push_str(rest);
    Some((variables, skeleton))
}

/// Grades a change of a template's `uriTemplate` for the agents that build URIs from it.
pub fn grade_uri_template(
    old: Option<&Value>,
    new: Option<&Value>,
) -> (Compatibility, Vec<String>) {
    let parts = |v: Option<&Value>| v.and_then(Value::as_str).and_then(template_parts);
    let (Some((was, was_skeleton)), Some((is, is_skeleton))) = (parts(old), parts(new)) else {
        return worst(&[(
            Compatibility::Unknown,
            "uriTemplate is missing or not a URI template".into(),
        )]);
    };
    let mut findings = Vec::new();
    for name in is.difference(&was) {
        findings.push((Compatibility::Breaking, format!("variable `{name}` added")));
    }
    for name in was.difference(&is) {
        findings.push((
            Compatibility::Breaking,
            format!("variable `{name}` removed"),
        ));
    }
    if was_skeleton != is_skeleton {
        findings.push((
            Compatibility::Breaking,
            format!("the literal part changed: {was_skeleton} → {is_skeleton}"),
        ));
    }
    if findings.is_empty() {
        findings.push((
            Compatibility::Unknown,
            "only expansion operators or modifiers changed".into(),
        ));
    }
    worst(&findings)
}

/// The one change of a list kept as a summary (on either side): its count and, when both
/// sides know their items' digests, the items removed, added and changed, named in `details`
/// (at most [`summarized::NAMED_ITEMS_MAX`] of each sort) and, with their short digests, in
/// `old_value` and `new_value` (`items`); then a sample of the new list. A list whose count, completeness and
/// item digests all stay gives none; a list kept without digests (cut by the page limit, too
/// long, or recorded by an earlier version) is compared by its count only.
fn count_change(kind: DeclaredKind, old: &Declared, new: &Declared) -> Option<Change> {
    let summary = |d: &Declared| match d.summary(kind) {
        Some(list) => (list.total, list.complete),
        None => (d.items(kind).len() as u64, true),
    };
    let (before, after) = (summary(old), summary(new));
    let digests = old.item_digests(kind).zip(new.item_digests(kind));
    let delta = digests
        .as_ref()
        .map(|(o, n)| ItemDelta::between(o, n))
        .filter(|delta| !delta.is_empty());
    if before == after && delta.is_none() {
        return None;
    }
    let sample: Vec<String> = match new.summary(kind) {
        Some(list) => list.sample.clone(),
        None => new
            .items(kind)
            .iter()
            .take(RESOURCE_SAMPLE)
            .map(|r| r.key.clone())
            .collect(),
    };
    let class = match kind {
        DeclaredKind::Prompt => ChangeClass::PromptCountChanged,
        DeclaredKind::Resource => ChangeClass::ResourceCountChanged,
        DeclaredKind::ResourceTemplate => ChangeClass::ResourceTemplateCountChanged,
    };
    let value = |(total, complete): (u64, bool), old_side: bool| {
        let mut value = json!({"total": total, "complete": complete});
        if let (Some(delta), Some((o, n))) = (&delta, &digests) {
            let side = if old_side { o } else { n };
            value["items"] = delta.named_digests(side, old_side);
        }
        value
    };
    let mut change = Change::new(
        class,
        None,
        kind.list_key(),
        Some(value(before, true)),
        Some(value(after, false)),
        Severity::Low,
    );
    change.details = vec![
        summarized::headline(kind.noun(), before, after, delta.as_ref()),
        format!("sample: {}", sample.join(", ")),
    ];
    Some(change)
}

/// The short description and the help text of a class of this module (SARIF rules, docs).
pub fn rule_text(class: ChangeClass) -> (&'static str, &'static str) {
    match class {
        ChangeClass::PromptAdded => (
            "The server lists a new prompt",
            "A prompt's text goes straight into the model's context when a user picks it. Review what it says.",
        ),
        ChangeClass::PromptRemoved => (
            "A prompt the server listed is gone",
            "Users or clients that relied on the prompt can no longer get it.",
        ),
        ChangeClass::PromptDescriptionChanged => (
            "A prompt's description or title changed",
            "People and models pick prompts by these texts; a changed text can carry injected instructions.",
        ),
        ChangeClass::PromptArgumentsChanged => (
            "A prompt's arguments changed",
            "The compatibility property says whether existing prompts/get calls may now be refused (breaking: an argument removed or newly required).",
        ),
        ChangeClass::PromptFieldChanged => (
            "Another field of a prompt changed",
            "A field such as icons or _meta changed; the field property names it.",
        ),
        ChangeClass::ResourceAdded => (
            "The server lists a new resource",
            "A model reads a resource's description when it picks one. Resource lists are often data; large lists are summarized.",
        ),
        ChangeClass::ResourceRemoved => (
            "A resource the server listed is gone",
            "Agents that read the resource by its URI will fail.",
        ),
        ChangeClass::ResourceDescriptionChanged => (
            "A resource's or template's name, title or description changed",
            "A model reads these texts when it picks a resource; a changed text can carry injected instructions.",
        ),
        ChangeClass::ResourceMimeTypeChanged => (
            "A resource's or template's mimeType changed",
            "Clients that decode the content by its declared type may misread it.",
        ),
        ChangeClass::ResourceAnnotationsChanged => (
            "A resource's or template's annotations changed",
            "Audience or priority annotations decide which resources a client shows the model.",
        ),
        ChangeClass::ResourceFieldChanged => (
            "Another field of a resource or template changed",
            "A field such as icons or _meta changed; the field property names it.",
        ),
        ChangeClass::ResourceCountChanged => (
            "A summarized resource list changed: its count, or resources at the same count",
            "The list holds more than 100 resources or was cut by the page limit, so it is kept as a count, a sample and (complete lists of up to 2,000) a short digest per resource rather than item by item; the details name up to 10 resources removed, added or changed, also at the same count.",
        ),
        ChangeClass::PromptCountChanged => (
            "A summarized prompt list changed: its count, or prompts at the same count",
            "The list holds more than 500 prompts or was cut by the page limit, so it is kept as a count, a sample and (complete lists of up to 2,000) a short digest per item rather than item by item; the details name up to 10 prompts removed, added or changed, also at the same count, but its prompts are neither compared field by field nor scanned one by one.",
        ),
        ChangeClass::ResourceTemplateCountChanged => (
            "A summarized resource template list changed: its count, or templates at the same count",
            "The list holds more than 500 templates or was cut by the page limit, so it is kept as a count, a sample and (complete lists of up to 2,000) a short digest per item rather than item by item; the details name up to 10 templates removed, added or changed, also at the same count, but its templates are neither compared field by field nor scanned one by one.",
        ),
        ChangeClass::ResourceTemplateAdded => (
            "The server lists a new resource template",
            "A template defines what an agent may ask the server to read. Review what it exposes.",
        ),
        ChangeClass::ResourceTemplateRemoved => (
            "A resource template the server listed is gone",
            "URIs built from the template may no longer resolve.",
        ),
        ChangeClass::ResourceTemplateUriChanged => (
            "A resource template's uriTemplate changed",
            "The compatibility property says whether URIs built from the old template may now fail (breaking: a variable added or removed, or a literal part changed).",
        ),
        _ => ("A surface change", "See the change class."),
    }
}

#[cfg(test)]
#[path = "declared_tests.rs"]
mod tests;
