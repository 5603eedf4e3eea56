//! Semantic grading of a JSON Schema change: which values a caller may send (input) or must
//! expect (output) before and after, reported as findings with a JSON pointer each.
//!
//! The grader proves what it can and says `unknown` for the rest: `$ref`, `allOf`, `not`,
//! conditionals and other keywords whose effect it does not model are never guessed.

use super::class::Compatibility;
use crate::surface::canon;
use serde_json::{Map, Value};

/// Which side of the tool call a schema describes; it decides what "breaking" means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaRole {
    /// `inputSchema`: the caller produces values; accepting fewer is breaking.
    Input,
    /// `outputSchema`: the caller consumes values; promising less is breaking.
    Output,
}

/// The outcome of grading one schema change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grade {
    /// The overall verdict.
    pub compatibility: Compatibility,
    /// One line per finding, each naming a JSON pointer into the schema.
    pub details: Vec<String>,
}

/// What one finding does to the set of instances the schema accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// Accepts fewer instances.
    Tightens,
    /// Accepts more instances.
    Loosens,
    /// Accepts a different set: neither a subset nor a superset (e.g. `integer` → `string`).
    /// Breaking whichever side reads it.
    Replaces,
    /// A new optional property (new possibilities, old calls unaffected).
    Adds,
    /// An omitted argument now means something else (a changed `default`).
    Behaviour,
    /// Spelling only.
    Notation,
    /// Effect not provable.
    Unknown,
}

struct Finding {
    effect: Effect,
    text: String,
}

/// Largest integer a double holds exactly; zod emits ±this as integer bounds.
const ZOD_SENTINEL: f64 = 9_007_199_254_740_991.0;

/// Keywords that document a schema without constraining it.
const DOC_KEYWORDS: [&str; 7] = [
    "title",
    "description",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];
const LOWER_BOUNDS: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER_BOUNDS: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Grades the change of one schema (`None` = the field is absent).
pub fn grade_schema_change(old: Option<&Value>, new: Option<&Value>, role: SchemaRole) -> Grade {
    let mut findings = Vec::new();
    match (old, new) {
        (None, None) => {}
        (None, Some(_)) => findings.push(Finding {
            effect: if role == SchemaRole::Output {
                Effect::Tightens
            } else {
                Effect::Unknown
            },
            text: "schema added at (root)".into(),
        }),
        (Some(_), None) => findings.push(Finding {
            effect: if role == SchemaRole::Output {
                Effect::Loosens
            } else {
                Effect::Unknown
            },
            text: "schema removed at (root)".into(),
        }),
        (Some(o), Some(n)) => walk(o, n, "", &mut findings),
    }
    if findings.is_empty() && !opt_same(old, new) {
        findings.push(Finding {
            effect: Effect::Notation,
            text: "equivalent spelling at (root)".into(),
        });
    }
    Grade {
        compatibility: verdict(&findings, role),
        details: findings.into_iter().map(|f| f.text).collect(),
    }
}

fn verdict(findings: &[Finding], role: SchemaRole) -> Compatibility {
    let has = |e: Effect| findings.iter().any(|f| f.effect == e);
    let (breaking, safe) = match role {
        SchemaRole::Input => (Effect::Tightens, Effect::Loosens),
        SchemaRole::Output => (Effect::Loosens, Effect::Tightens),
    };
    if has(breaking)
        || has(Effect::Replaces)
        || (role == SchemaRole::Input && has(Effect::Behaviour))
    {
        Compatibility::Breaking
    } else if has(Effect::Unknown) || has(Effect::Behaviour) {
        Compatibility::Unknown
    } else if role == SchemaRole::Input && has(safe) {
        Compatibility::Loosened
    } else if has(safe) || has(Effect::Adds) {
        Compatibility::Additive
    } else {
        Compatibility::Notation
    }
}

/// Structural JSON equality where numbers compare by value (`1` equals `1.0`).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// [`same`] for optional values (absent equals only absent).
pub(crate) fn opt_same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => same(x, y),
        (None, None) => true,
        _ => false,
    }
}

fn show(v: &Value) -> String {
    canon::canonical_string(v).unwrap_or_else(|_| "<too deep>".into())
}

fn at(ptr: &str) -> String {
    if ptr.is_empty() {
        "(root)".into()
    } else {
        ptr.to_owned()
    }
}

fn child(ptr: &str, segment: &str) -> String {
    format!("{ptr}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

fn push(out: &mut Vec<Finding>, effect: Effect, text: String) {
    out.push(Finding { effect, text });
}

/// Compares two schemas found at `ptr`.
fn walk(old: &Value, new: &Value, ptr: &str, out: &mut Vec<Finding>) {
    if same(old, new) {
        return;
    }
    let empty = Map::new();
    let (o, n) = match (old, new) {
        (Value::Bool(false), _) => {
            return push(
                out,
                Effect::Loosens,
                format!("schema false now accepts values at {}", at(ptr)),
            );
        }
        (_, Value::Bool(false)) => {
            return push(
                out,
                Effect::Tightens,
                format!("schema now false (rejects everything) at {}", at(ptr)),
            );
        }
        (Value::Bool(true), Value::Object(n)) => (&empty, n),
        (Value::Object(o), Value::Bool(true)) => (o, &empty),
        (Value::Object(o), Value::Object(n)) => (o, n),
        _ => {
            return push(
                out,
                Effect::Unknown,
                format!("schema is not a JSON Schema object at {}", at(ptr)),
            );
        }
    };
    match (union_of(o), union_of(n)) {
        (None, None) => compare_keywords(o, n, ptr, out),
        (Some((ok, ob)), Some((nk, nb))) => {
            compare_keywords(&without(o, &[ok]), &without(n, &[nk]), ptr, out);
            if ok != nk {
                push(
                    out,
                    Effect::Unknown,
                    format!("{ok} became {nk} at {}", at(ptr)),
                );
            }
            compare_branches(ob, nb, &child(ptr, nk), out);
        }
        (None, Some((nk, nb))) => widen_into_union(o, n, nk, nb, ptr, out),
        (Some((ok, ob)), None) => narrow_from_union(o, n, ok, ob, ptr, out),
    }
}

/// The `anyOf` (or `oneOf`) branches of a schema.
fn union_of(schema: &Map<String, Value>) -> Option<(&'static str, &Vec<Value>)> {
    ["anyOf", "oneOf"]
        .into_iter()
        .find_map(|k| schema.get(k).and_then(Value::as_array).map(|b| (k, b)))
}

fn without(schema: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    schema
        .iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn only_docs(schema: &Map<String, Value>) -> bool {
    schema.keys().all(|k| DOC_KEYWORDS.contains(&k.as_str()))
}

fn split_docs(schema: &Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    let (docs, core): (Vec<_>, Vec<_>) = schema
        .iter()
        .partition(|(k, _)| DOC_KEYWORDS.contains(&k.as_str()));
    let collect =
        |v: Vec<(&String, &Value)>| v.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    (collect(docs), collect(core))
}

/// Pairs union branches by position when the count is unchanged, else by equality.
fn compare_branches(old: &[Value], new: &[Value], ptr: &str, out: &mut Vec<Finding>) {
    if old.len() == new.len() {
        for (i, (o, n)) in old.iter().zip(new).enumerate() {
            walk(o, n, &child(ptr, &i.to_string()), out);
        }
        return;
    }
    for (i, o) in old.iter().enumerate() {
        if !new.iter().any(|n| same(o, n)) {
            push(
                out,
                Effect::Tightens,
                format!("union branch removed at {}", child(ptr, &i.to_string())),
            );
        }
    }
    for (i, n) in new.iter().enumerate() {
        if !old.iter().any(|o| same(o, n)) {
            push(
                out,
                Effect::Loosens,
                format!("union branch added at {}", child(ptr, &i.to_string())),
            );
        }
    }
}

/// A plain schema became a union: a widening when one branch accepts everything the old
/// schema accepted (e.g. `string` -> `string | null`).
fn widen_into_union(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    key: &str,
    branches: &[Value],
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let (old_docs, old_core) = split_docs(o);
    let new_rest = without(n, &[key]);
    if !only_docs(&new_rest) {
        return push(
            out,
            Effect::Unknown,
            format!(
                "schema replaced by {key} with sibling keywords at {}",
                at(ptr)
            ),
        );
    }
    compare_keywords(&old_docs, &new_rest, ptr, out);
    let old_core = Value::Object(old_core);
    let loosening = [Effect::Loosens, Effect::Adds, Effect::Notation];
    match provable_branch(&old_core, branches, Side::Old, key, ptr, &loosening) {
        Some(branch_findings) => {
            push(
                out,
                Effect::Loosens,
                format!(
                    "alternatives added: schema became {key} of {} at {}",
                    branches.len(),
                    at(ptr)
                ),
            );
            out.extend(branch_findings);
        }
        None => push(
            out,
            Effect::Unknown,
            format!("schema replaced by {key} at {}", at(ptr)),
        ),
    }
}

/// Which side of the change the plain (non-union) schema is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

/// The findings of the first union branch that relates to the plain schema only through the
/// `allowed` effects; `None` when no branch proves the direction.
fn provable_branch(
    plain: &Value,
    branches: &[Value],
    plain_side: Side,
    key: &str,
    ptr: &str,
    allowed: &[Effect],
) -> Option<Vec<Finding>> {
    branches.iter().enumerate().find_map(|(i, branch)| {
        let mut findings = Vec::new();
        let branch_ptr = child(&child(ptr, key), &i.to_string());
        match plain_side {
            Side::Old => walk(plain, branch, &branch_ptr, &mut findings),
            Side::New => walk(branch, plain, &branch_ptr, &mut findings),
        }
        findings
            .iter()
            .all(|f| allowed.contains(&f.effect))
            .then_some(findings)
    })
}

/// A union became a plain schema: a narrowing when the new schema accepts no more than one of
/// the old branches.
fn narrow_from_union(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    key: &str,
    branches: &[Value],
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let (new_docs, new_core) = split_docs(n);
    let old_rest = without(o, &[key]);
    if !only_docs(&old_rest) {
        return push(
            out,
            Effect::Unknown,
            format!("{key} with sibling keywords replaced at {}", at(ptr)),
        );
    }
    compare_keywords(&old_rest, &new_docs, ptr, out);
    let new_core = Value::Object(new_core);
    let tightening = [Effect::Tightens, Effect::Notation];
    match provable_branch(&new_core, branches, Side::New, key, ptr, &tightening) {
        Some(branch_findings) => {
            push(
                out,
                Effect::Tightens,
                format!(
                    "alternatives removed: {key} of {} became one schema at {}",
                    branches.len(),
                    at(ptr)
                ),
            );
            out.extend(branch_findings);
        }
        None => push(
            out,
            Effect::Unknown,
            format!("{key} replaced by a plain schema at {}", at(ptr)),
        ),
    }
}

fn compare_keywords(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort_by(|a, b| canon::cmp_utf16(a, b));
    keys.dedup();
    for key in keys {
        let (ov, nv) = (o.get(key), n.get(key));
        if let (Some(a), Some(b)) = (ov, nv)
            && same(a, b)
        {
            continue;
        }
        compare_keyword(key, ov, nv, o, ptr, out);
    }
}

/// Grades one keyword that differs between two schema objects (`o` is the old object).
fn compare_keyword(
    key: &str,
    ov: Option<&Value>,
    nv: Option<&Value>,
    o: &Map<String, Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let k = key;
    match k {
        _ if DOC_KEYWORDS.contains(&k) => push(
            out,
            Effect::Notation,
            format!("{k} {} at {}", change_word(ov, nv), at(ptr)),
        ),
        "$schema" => push(
            out,
            Effect::Notation,
            format!(
                "dialect changed {}→{} at {}",
                opt_show(ov),
                opt_show(nv),
                at(ptr)
            ),
        ),
        "type" => compare_type(ov, nv, ptr, out),
        "enum" => compare_enum(ov, nv, ptr, out),
        "const" => {
            let effect = match (ov, nv) {
                (None, Some(_)) | (Some(_), Some(_)) => Effect::Tightens,
                _ => Effect::Loosens,
            };
            push(
                out,
                effect,
                format!("const {}→{} at {}", opt_show(ov), opt_show(nv), at(ptr)),
            );
        }
        "required" => compare_required(ov, nv, ptr, out),
        "properties" => compare_properties(ov, nv, o, ptr, out),
        "additionalProperties" => compare_additional(ov, nv, ptr, out),
        "items" => match (
            ov.unwrap_or(&Value::Bool(true)),
            nv.unwrap_or(&Value::Bool(true)),
        ) {
            (a @ (Value::Object(_) | Value::Bool(_)), b @ (Value::Object(_) | Value::Bool(_))) => {
                walk(a, b, &child(ptr, "items"), out)
            }
            _ => push(
                out,
                Effect::Unknown,
                format!("tuple items changed at {}", at(ptr)),
            ),
        },
        _ if LOWER_BOUNDS.contains(&k) || UPPER_BOUNDS.contains(&k) => {
            compare_bound(k, ov, nv, ptr, out)
        }
        "uniqueItems" => {
            let on = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
            let effect = match (on(ov), on(nv)) {
                (false, true) => Effect::Tightens,
                (true, false) => Effect::Loosens,
                _ => Effect::Notation,
            };
            push(
                out,
                effect,
                format!(
                    "uniqueItems {}→{} at {}",
                    opt_show(ov),
                    opt_show(nv),
                    at(ptr)
                ),
            );
        }
        "pattern" | "format" | "multipleOf" => {
            let effect = match (ov, nv) {
                (None, Some(_)) => Effect::Tightens,
                (Some(_), None) => Effect::Loosens,
                _ => Effect::Unknown,
            };
            push(
                out,
                effect,
                format!(
                    "{k} {} {} at {}",
                    change_word(ov, nv),
                    change_values(ov, nv),
                    at(ptr)
                ),
            );
        }
        "default" => {
            let effect = if ov.is_some() && nv.is_some() {
                Effect::Behaviour
            } else {
                Effect::Unknown
            };
            push(
                out,
                effect,
                format!(
                    "default {} {} at {}",
                    change_word(ov, nv),
                    change_values(ov, nv),
                    at(ptr)
                ),
            );
        }
        _ => {
            push(
                out,
                Effect::Unknown,
                format!(
                    "{k} {} at {} (effect not provable)",
                    change_word(ov, nv),
                    at(ptr)
                ),
            );
        }
    }
}

fn change_word(ov: Option<&Value>, nv: Option<&Value>) -> &'static str {
    match (ov, nv) {
        (None, Some(_)) => "added",
        (Some(_), None) => "removed",
        _ => "changed",
    }
}

fn change_values(ov: Option<&Value>, nv: Option<&Value>) -> String {
    match (ov, nv) {
        (None, Some(v)) | (Some(v), None) => show(v),
        _ => format!("{}→{}", opt_show(ov), opt_show(nv)),
    }
}

fn opt_show(v: Option<&Value>) -> String {
    v.map(show).unwrap_or_else(|| "(absent)".into())
}

fn type_set(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => Some(
            items
                .iter()
                .map(|i| i.as_str().map(str::to_owned).unwrap_or_else(|| show(i)))
                .collect(),
        ),
        other => Some(vec![show(other)]),
    }
}

fn covers(set: &[String], t: &str) -> bool {
    set.iter()
        .any(|s| s == t || (t == "integer" && s == "number"))
}

fn compare_type(ov: Option<&Value>, nv: Option<&Value>, ptr: &str, out: &mut Vec<Finding>) {
    let (old, new) = (type_set(ov), type_set(nv));
    let (effect, text) = match (&old, &new) {
        (None, Some(n)) => (Effect::Tightens, format!("type added {}", n.join("|"))),
        (Some(o), None) => (
            Effect::Loosens,
            format!("type constraint removed (was {})", o.join("|")),
        ),
        (Some(o), Some(n)) => {
            let widened = o.iter().all(|t| covers(n, t));
            let narrowed = n.iter().all(|t| covers(o, t));
            let label = format!("{}→{}", o.join("|"), n.join("|"));
            match (widened, narrowed) {
                (true, true) => (Effect::Notation, format!("type spelling {label}")),
                (true, false) => (Effect::Loosens, format!("type widened {label}")),
                (false, true) => (Effect::Tightens, format!("type narrowed {label}")),
                (false, false) => (Effect::Replaces, format!("type changed {label}")),
            }
        }
        (None, None) => return,
    };
    push(out, effect, format!("{text} at {}", at(ptr)));
}

fn compare_enum(ov: Option<&Value>, nv: Option<&Value>, ptr: &str, out: &mut Vec<Finding>) {
    let values =
        |v: &Value| -> Vec<Value> { v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]) };
    match (ov, nv) {
        (None, Some(n)) => push(
            out,
            Effect::Tightens,
            format!("enum added {} at {}", show(n), at(ptr)),
        ),
        (Some(o), None) => push(
            out,
            Effect::Loosens,
            format!("enum removed (was {}) at {}", show(o), at(ptr)),
        ),
        (Some(o), Some(n)) => {
            let (old, new) = (values(o), values(n));
            let mut changed = false;
            for v in old.iter().filter(|v| !new.iter().any(|w| same(v, w))) {
                changed = true;
                push(
                    out,
                    Effect::Tightens,
                    format!("enum value removed {} at {}", show(v), at(ptr)),
                );
            }
            for v in new.iter().filter(|v| !old.iter().any(|w| same(v, w))) {
                changed = true;
                push(
                    out,
                    Effect::Loosens,
                    format!("enum value added {} at {}", show(v), at(ptr)),
                );
            }
            if !changed {
                push(
                    out,
                    Effect::Notation,
                    format!("enum order changed at {}", at(ptr)),
                );
            }
        }
        (None, None) => {}
    }
}

fn names(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn compare_required(ov: Option<&Value>, nv: Option<&Value>, ptr: &str, out: &mut Vec<Finding>) {
    let (old, new) = (names(ov), names(nv));
    let mut changed = false;
    for name in new.iter().filter(|n| !old.contains(n)) {
        changed = true;
        push(
            out,
            Effect::Tightens,
            format!("required added {}", child(&child(ptr, "properties"), name)),
        );
    }
    for name in old.iter().filter(|n| !new.contains(n)) {
        changed = true;
        push(
            out,
            Effect::Loosens,
            format!(
                "required removed {}",
                child(&child(ptr, "properties"), name)
            ),
        );
    }
    if !changed {
        push(
            out,
            Effect::Notation,
            format!("required order changed at {}", at(ptr)),
        );
    }
}

fn compare_properties(
    ov: Option<&Value>,
    nv: Option<&Value>,
    old_schema: &Map<String, Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let empty = Map::new();
    let (old, new) = (
        ov.and_then(Value::as_object).unwrap_or(&empty),
        nv.and_then(Value::as_object).unwrap_or(&empty),
    );
    let old_closed = matches!(
        additional_form(old_schema.get("additionalProperties")),
        Additional::Closed
    );
    let base = child(ptr, "properties");
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort_by(|a, b| canon::cmp_utf16(a, b));
    keys.dedup();
    for key in keys {
        let p = child(&base, key);
        match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) => walk(a, b, &p, out),
            (None, Some(_)) => push(out, Effect::Adds, format!("property added {p}")),
            (Some(_), None) if old_closed => push(
                out,
                Effect::Tightens,
                format!("property removed {p} (no longer accepted)"),
            ),
            (Some(_), None) => push(out, Effect::Loosens, format!("property removed {p}")),
            (None, None) => {}
        }
    }
}

enum Additional<'a> {
    Open,
    Closed,
    Schema(&'a Value),
}

fn additional_form(v: Option<&Value>) -> Additional<'_> {
    match v {
        None | Some(Value::Bool(true)) => Additional::Open,
        Some(Value::Bool(false)) => Additional::Closed,
        Some(Value::Object(m)) if m.is_empty() => Additional::Open,
        Some(Value::Object(m))
            if m.len() == 1
                && m.get("not")
                    .is_some_and(|n| n.as_object().is_some_and(Map::is_empty)) =>
        {
            Additional::Closed
        }
        Some(other) => Additional::Schema(other),
    }
}

fn compare_additional(ov: Option<&Value>, nv: Option<&Value>, ptr: &str, out: &mut Vec<Finding>) {
    use Additional::{Closed, Open, Schema};
    let p = child(ptr, "additionalProperties");
    let (effect, what) = match (additional_form(ov), additional_form(nv)) {
        (Open, Open) | (Closed, Closed) => (Effect::Notation, "spelling changed"),
        (Schema(a), Schema(b)) => return walk(a, b, &p, out),
        (Open, Closed) => (Effect::Tightens, "now false (extra properties rejected)"),
        (Closed, Open) => (
            Effect::Loosens,
            "no longer false (extra properties accepted)",
        ),
        (Open, Schema(_)) => (Effect::Tightens, "now constrained by a schema"),
        (Schema(_), Open) => (Effect::Loosens, "schema constraint removed"),
        (Closed, Schema(_)) => (Effect::Loosens, "false replaced by a schema"),
        (Schema(_), Closed) => (Effect::Tightens, "schema replaced by false"),
    };
    push(
        out,
        effect,
        format!(
            "additionalProperties {what} {}→{} at {p}",
            opt_show(ov),
            opt_show(nv)
        ),
    );
}

fn is_zod_sentinel(key: &str, v: Option<&Value>) -> bool {
    let Some(x) = v.and_then(Value::as_f64) else {
        return false;
    };
    (key == "minimum" && x == -ZOD_SENTINEL) || (key == "maximum" && x == ZOD_SENTINEL)
}

fn compare_bound(
    key: &str,
    ov: Option<&Value>,
    nv: Option<&Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
    let lower = LOWER_BOUNDS.contains(&key);
    let text = |verb: &str| format!("{key} {verb} {} at {}", change_values(ov, nv), at(ptr));
    let (effect, verb) = match (ov, nv) {
        (None, Some(_)) | (Some(_), None) if is_zod_sentinel(key, ov.or(nv)) => (
            Effect::Notation,
            if ov.is_none() {
                "added zod integer sentinel"
            } else {
                "removed zod integer sentinel"
            },
        ),
        (None, Some(_)) => (Effect::Tightens, "added"),
        (Some(_), None) => (Effect::Loosens, "removed"),
        (Some(a), Some(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) if (y > x) == lower && x != y => (Effect::Tightens, "raised"),
            (Some(x), Some(y)) if x != y => (Effect::Loosens, "lowered"),
            (Some(_), Some(_)) => (Effect::Notation, "respelled"),
            _ => (Effect::Unknown, "changed"),
        },
        (None, None) => return,
    };
    // A raised lower bound tightens; a raised upper bound loosens (and vice versa).
    let verb = match (verb, lower) {
        ("raised", false) => "lowered",
        ("lowered", false) => "raised",
        (v, _) => v,
    };
    push(out, effect, text(verb));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grade(old: Value, new: Value) -> Grade {
        grade_schema_change(Some(&old), Some(&new), SchemaRole::Input)
    }

    fn obj(props: Value, required: Value) -> Value {
        json!({"type": "object", "properties": props, "required": required})
    }

    #[test]
    fn table_of_input_rules() {
        use Compatibility::*;
        let s = json!({"type": "string"});
        let cases: Vec<(&str, Value, Value, Compatibility, &str)> = vec![
            (
                "required added",
                obj(json!({"a": s}), json!([])),
                obj(json!({"a": s}), json!(["a"])),
                Breaking,
                "required added /properties/a",
            ),
            (
                "required removed",
                obj(json!({"a": s}), json!(["a"])),
                obj(json!({"a": s}), json!([])),
                Loosened,
                "required removed /properties/a",
            ),
            (
                "optional property added",
                obj(json!({}), json!([])),
                obj(json!({"b": s}), json!([])),
                Additive,
                "property added /properties/b",
            ),
            (
                "property removed",
                obj(json!({"b": s}), json!([])),
                obj(json!({}), json!([])),
                Loosened,
                "property removed /properties/b",
            ),
            (
                "enum value removed",
                json!({"enum": ["low", "high"]}),
                json!({"enum": ["high"]}),
                Breaking,
                "enum value removed \"low\" at (root)",
            ),
            (
                "enum value added",
                json!({"enum": ["low"]}),
                json!({"enum": ["low", "high"]}),
                Loosened,
                "enum value added \"high\" at (root)",
            ),
            (
                "enum reordered",
                json!({"enum": ["a", "b"]}),
                json!({"enum": ["b", "a"]}),
                Notation,
                "enum order changed at (root)",
            ),
            (
                "type narrowed",
                json!({"properties": {"c": {"type": "number"}}}),
                json!({"properties": {"c": {"type": "integer"}}}),
                Breaking,
                "type narrowed number→integer at /properties/c",
            ),
            (
                "type widened",
                json!({"type": "integer"}),
                json!({"type": "number"}),
                Loosened,
                "type widened integer→number at (root)",
            ),
            (
                "type changed",
                json!({"type": "string"}),
                json!({"type": "number"}),
                Breaking,
                "type changed string→number at (root)",
            ),
            (
                "nullable via type array",
                json!({"type": "string"}),
                json!({"type": ["string", "null"]}),
                Loosened,
                "type widened string→string|null at (root)",
            ),
            (
                "minimum added",
                json!({"properties": {"commentId": {"type": "number"}}}),
                json!({"properties": {"commentId": {"type": "number", "minimum": 1}}}),
                Breaking,
                "minimum added 1 at /properties/commentId",
            ),
            (
                "maximum raised",
                json!({"maximum": 10}),
                json!({"maximum": 20}),
                Loosened,
                "maximum raised 10→20 at (root)",
            ),
            (
                "maxLength lowered",
                json!({"maxLength": 20}),
                json!({"maxLength": 10}),
                Breaking,
                "maxLength lowered 20→10 at (root)",
            ),
            (
                "minLength removed",
                json!({"minLength": 1}),
                json!({}),
                Loosened,
                "minLength removed 1 at (root)",
            ),
            (
                "zod sentinels",
                json!({"type": "integer"}),
                json!({"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}),
                Notation,
                "maximum added zod integer sentinel 9007199254740991 at (root)",
            ),
            (
                "pattern added",
                json!({}),
                json!({"pattern": "^a"}),
                Breaking,
                "pattern added \"^a\" at (root)",
            ),
            (
                "pattern changed",
                json!({"pattern": "^a"}),
                json!({"pattern": "^b"}),
                Unknown,
                "pattern changed \"^a\"→\"^b\" at (root)",
            ),
            (
                "format removed",
                json!({"format": "uri"}),
                json!({}),
                Loosened,
                "format removed \"uri\" at (root)",
            ),
            (
                "const changed",
                json!({"const": 1}),
                json!({"const": 2}),
                Breaking,
                "const 1→2 at (root)",
            ),
            (
                "default changed",
                json!({"default": 1}),
                json!({"default": 2}),
                Breaking,
                "default changed 1→2 at (root)",
            ),
            (
                "default added",
                json!({"type": "boolean"}),
                json!({"type": "boolean", "default": true}),
                Unknown,
                "default added true at (root)",
            ),
            (
                "$schema switch",
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
                Notation,
                "dialect changed",
            ),
            (
                "title keys",
                json!({"type": "object"}),
                json!({"type": "object", "title": "Args"}),
                Notation,
                "title added at (root)",
            ),
            (
                "parameter description",
                json!({"properties": {"a": {"type": "string", "description": "x"}}}),
                json!({"properties": {"a": {"type": "string", "description": "y"}}}),
                Notation,
                "description changed at /properties/a",
            ),
            (
                "additionalProperties spelling",
                json!({"additionalProperties": true}),
                json!({}),
                Notation,
                "additionalProperties spelling changed",
            ),
            (
                "additionalProperties not-empty spelling",
                json!({"additionalProperties": false}),
                json!({"additionalProperties": {"not": {}}}),
                Notation,
                "additionalProperties spelling changed",
            ),
            (
                "additionalProperties closed",
                json!({}),
                json!({"additionalProperties": false}),
                Breaking,
                "additionalProperties now false",
            ),
            (
                "additionalProperties opened",
                json!({"items": {"additionalProperties": false}}),
                json!({"items": {}}),
                Loosened,
                "at /items/additionalProperties",
            ),
            (
                "removed from closed object",
                json!({"additionalProperties": false, "properties": {"a": s}}),
                json!({"additionalProperties": false}),
                Breaking,
                "property removed /properties/a (no longer accepted)",
            ),
            (
                "nested items enum",
                json!({"items": {"properties": {"c": {"enum": ["low"]}}}}),
                json!({"items": {"properties": {"c": {"enum": ["LOW"]}}}}),
                Breaking,
                "enum value removed \"low\" at /items/properties/c",
            ),
            (
                "nullable anyOf",
                json!({"type": "string"}),
                json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}),
                Unknown,
                "schema replaced by anyOf",
            ),
            (
                "widened into oneOf",
                json!({"items": {"type": "string"}}),
                json!({"items": {"oneOf": [{"type": "string", "description": "d"}, {"type": "object"}]}}),
                Loosened,
                "alternatives added: schema became oneOf of 2 at /items",
            ),
            (
                "narrowed from anyOf",
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                json!({"type": "string"}),
                Breaking,
                "alternatives removed",
            ),
            (
                "union branch edited",
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                json!({"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}),
                Breaking,
                "maxLength added 5 at /anyOf/0",
            ),
            (
                "$ref changed",
                json!({"$ref": "#/$defs/a"}),
                json!({"$ref": "#/$defs/b"}),
                Unknown,
                "$ref changed at (root) (effect not provable)",
            ),
            (
                "allOf added",
                json!({}),
                json!({"allOf": [{"type": "string"}]}),
                Unknown,
                "allOf added",
            ),
            (
                "not a schema",
                json!({"type": "object"}),
                json!(null),
                Unknown,
                "not a JSON Schema object",
            ),
            (
                "numbers by value",
                json!({"minimum": 1}),
                json!({"minimum": 1.0}),
                Notation,
                "",
            ),
        ];
        for (name, old, new, expected, detail) in cases {
            let g = grade(old, new);
            assert_eq!(g.compatibility, expected, "{name}: {:?}", g.details);
            assert!(
                g.details.iter().any(|d| d.contains(detail))
                    || (detail.is_empty() && g.details.is_empty()),
                "{name}: {:?}",
                g.details
            );
        }
    }

    #[test]
    fn breaking_wins_over_loosening_in_the_same_schema() {
        let old = json!({"properties": {"commentId": {"type": "number"}, "body": {"type": "string"}}, "required": ["commentId", "body"]});
        let new = json!({"properties": {"commentId": {"type": "number", "minimum": 1}}, "required": ["commentId"]});
        let g = grade(old, new);
        assert_eq!(g.compatibility, Compatibility::Breaking);
        assert!(
            g.details
                .contains(&"minimum added 1 at /properties/commentId".to_owned())
        );
        assert!(
            g.details
                .contains(&"required removed /properties/body".to_owned())
        );
    }

    #[test]
    fn pointer_segments_are_escaped() {
        let g = grade(
            json!({"properties": {"a/b~c": {"type": "string"}}}),
            json!({"properties": {"a/b~c": {"type": "integer"}}}),
        );
        assert_eq!(
            g.details,
            ["type changed string→integer at /properties/a~1b~0c"]
        );
    }

    #[test]
    fn output_role_reverses_direction() {
        use Compatibility::*;
        let cases = [
            (
                Some(json!({"properties": {"a": {}}, "required": ["a"]})),
                Some(json!({"properties": {"a": {}}})),
                Breaking,
            ),
            (
                Some(json!({"properties": {"a": {}}})),
                Some(json!({"properties": {"a": {}}, "required": ["a"]})),
                Additive,
            ),
            (
                Some(json!({"enum": ["x"]})),
                Some(json!({"enum": ["x", "y"]})),
                Breaking,
            ),
            (
                Some(json!({"properties": {}})),
                Some(json!({"properties": {"b": {}}})),
                Additive,
            ),
            (None, Some(json!({"type": "object"})), Additive),
            (Some(json!({"type": "object"})), None, Breaking),
            (
                Some(json!({"properties": {"n": {"type": "integer"}}})),
                Some(json!({"properties": {"n": {"type": "string"}}})),
                Breaking,
            ),
            (
                Some(json!({"type": "object", "title": "A"})),
                Some(json!({"type": "object", "title": "B"})),
                Notation,
            ),
        ];
        for (old, new, expected) in cases {
            let g = grade_schema_change(old.as_ref(), new.as_ref(), SchemaRole::Output);
            assert_eq!(
                g.compatibility, expected,
                "{old:?} -> {new:?}: {:?}",
                g.details
            );
        }
    }
}
