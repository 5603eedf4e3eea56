//! Ordinary keywords: `type`, `enum`, `const`, numeric and length bounds, `uniqueItems`,
//! `pattern`/`format`/`multipleOf`, `default` and the documentation keywords.

use super::combinator::value_types;
use super::objects::compare_required;
use super::{
    DOC_KEYWORDS, Effect, Finding, Grader, at, change_values, change_word, opt_show, patterns,
    push, same, show,
};
use serde_json::{Map, Value};

/// Largest integer a double holds exactly; zod emits ±this as integer bounds.
pub(super) const ZOD_SENTINEL: f64 = 9_007_199_254_740_991.0;
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

impl Grader<'_> {
    /// Grades one keyword that differs between two schema objects (`o` and `n`).
    pub(super) fn compare_keyword(
        &mut self,
        key: &str,
        ov: Option<&Value>,
        nv: Option<&Value>,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
    ) {
        let k = key;
        let out = &mut self.out;
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
            "type" if type_redundant(o, ov) && type_redundant(n, nv) => push(
                out,
                Effect::Notation,
                format!(
                    "type {} beside a list of values it already admits at {}",
                    change_word(ov, nv),
                    at(ptr)
                ),
            ),
            "type" => compare_type(ov, nv, ptr, out),
            "enum" => compare_enum(ov, nv, ptr, out),
            "const" => {
                let effect = match (ov, nv) {
                    (None, Some(_)) => Effect::Tightens,
                    (Some(_), Some(_)) => Effect::Replaces,
                    _ => Effect::Loosens,
                };
                push(
                    out,
                    effect,
                    format!("const {}→{} at {}", opt_show(ov), opt_show(nv), at(ptr)),
                );
            }
            "required" => compare_required(ov, nv, ptr, out),
            "properties" => self.compare_properties(ov, nv, o, n, ptr),
            "additionalProperties" => self.compare_additional(ov, nv, ptr),
            _ if LOWER_BOUNDS.contains(&k) || UPPER_BOUNDS.contains(&k) => {
                compare_bound(k, ov, nv, ptr, out)
            }
            "uniqueItems" => compare_unique(ov, nv, ptr, out),
            _ if k.starts_with("x-") => push(
                out,
                Effect::Notation,
                format!(
                    "annotation {k} {} at {} (not a validation keyword)",
                    change_word(ov, nv),
                    at(ptr)
                ),
            ),
            "pattern" | "format" | "multipleOf" => {
                let effect = match (ov, nv) {
                    (None, Some(_)) => Effect::Tightens,
                    (Some(_), None) => Effect::Loosens,
                    (Some(Value::String(a)), Some(Value::String(b))) if k == "pattern" => {
                        patterns::compare(a, b).unwrap_or(Effect::Unknown)
                    }
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
            "default" => out.push(default_finding(ov, nv, ptr)),
            _ => push(
                out,
                Effect::Unknown,
                format!(
                    "{k} {} at {} (effect not provable)",
                    change_word(ov, nv),
                    at(ptr)
                ),
            ),
        }
    }
}

fn compare_unique(ov: Option<&Value>, nv: Option<&Value>, ptr: &str, out: &mut Vec<Finding>) {
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

pub(super) fn type_set(v: Option<&Value>) -> Option<Vec<String>> {
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

pub(super) fn covers(set: &[String], t: &str) -> bool {
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

/// A `default` added, removed or changed. No value is rejected either way, but a caller that
/// omits the property now gets something else: `unknown`, with what changes for whom.
fn default_finding(ov: Option<&Value>, nv: Option<&Value>, ptr: &str) -> Finding {
    if let (Some(a), Some(b)) = (ov, nv)
        && same_comma_set(a, b)
    {
        return Finding {
            effect: Effect::Notation,
            text: format!(
                "default respelled {} at {} (the same comma-separated set in another order)",
                change_values(ov, nv),
                at(ptr)
            ),
            default_at: Some(ptr.to_owned()),
        };
    }
    let effect = if ov.is_some() && nv.is_some() {
        Effect::Behaviour
    } else {
        Effect::Unknown
    };
    let mut text = format!(
        "default {} {} at {}",
        change_word(ov, nv),
        change_values(ov, nv),
        at(ptr)
    );
    if let (Some(before), Some(after)) = (ov, nv) {
        text.push_str(&format!(
            " (callers that omit {} now get {} instead of {})",
            omitted_name(ptr),
            show(after),
            show(before)
        ));
    }
    Finding {
        effect,
        text,
        default_at: Some(ptr.to_owned()),
    }
}

/// Two strings that list the same comma-separated items (at least two) in another order, such
/// as a default pydantic builds by joining a Python set, whose order changes on every release.
pub(crate) fn same_comma_set(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_str(), b.as_str()) else {
        return false;
    };
    let (x, y) = (comma_items(a), comma_items(b));
    x.len() >= 2 && x == y
}

/// The trimmed comma-separated items of `s`, sorted.
fn comma_items(s: &str) -> Vec<&str> {
    let mut items: Vec<&str> = s.split(',').map(str::trim).collect();
    items.sort_unstable();
    items
}

/// What a caller omits to get the default at `ptr`: the property's name, or the location.
fn omitted_name(ptr: &str) -> String {
    match ptr.rsplit_once('/') {
        Some((parent, name)) if parent.ends_with("/properties") => name.to_owned(),
        _ => format!("the value at {}", at(ptr)),
    }
}

/// The schema lists its values (`const` / `enum`) and its `type` (`t`, maybe absent) admits
/// every one of them, so the `type` adds nothing.
fn type_redundant(schema: &Map<String, Value>, t: Option<&Value>) -> bool {
    let values: Vec<&Value> = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(e))) => e.iter().collect(),
        _ => return false,
    };
    let Some(types) = type_set(t) else {
        return true;
    };
    values.iter().all(|v| {
        value_types(v)
            .iter()
            .any(|vt| types.iter().any(|s| s == vt))
    })
}
