//! Objects: `properties`, `required` and `additionalProperties`.

use super::{Effect, Finding, Grader, at, child, opt_show, push};
use crate::surface::canon;
use serde_json::{Map, Value};

impl Grader<'_> {
    /// `properties` of two schema objects, name by name. A removed property is graded by what
    /// the new schema does with it now (`additionalProperties`); a property the old schema
    /// required was sent by every old call, so no old call can see a change of its `default`.
    pub(super) fn compare_properties(
        &mut self,
        ov: Option<&Value>,
        nv: Option<&Value>,
        old_schema: &Map<String, Value>,
        new_schema: &Map<String, Value>,
        ptr: &str,
    ) {
        let empty = Map::new();
        let (old, new) = (
            ov.and_then(Value::as_object).unwrap_or(&empty),
            nv.and_then(Value::as_object).unwrap_or(&empty),
        );
        let required = names(old_schema.get("required"));
        let base = child(ptr, "properties");
        let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
        keys.sort_by(|a, b| canon::cmp_utf16(a, b));
        keys.dedup();
        for key in keys {
            let p = child(&base, key);
            match (old.get(key), new.get(key)) {
                (Some(a), Some(b)) if required.contains(key) => self.walk_always_sent(a, b, &p),
                (Some(a), Some(b)) => self.walk(a, b, &p),
                (None, Some(_)) => self.push(Effect::Adds, format!("property added {p}")),
                (Some(a), None) => self.property_removed(a, new_schema, ptr, &p),
                (None, None) => {}
            }
        }
    }

    /// A property the old schema had is gone: whether its values are still accepted is up to
    /// the new schema's `additionalProperties`.
    fn property_removed(
        &mut self,
        schema: &Value,
        new_schema: &Map<String, Value>,
        ptr: &str,
        p: &str,
    ) {
        match additional_form(new_schema.get("additionalProperties")) {
            Additional::Open => self.push(Effect::Loosens, format!("property removed {p}")),
            Additional::Closed => self.push(
                Effect::Tightens,
                format!("property removed {p} (no longer accepted)"),
            ),
            Additional::Schema(rest) => {
                self.push(
                    Effect::Notation,
                    format!("property removed {p} (now governed by additionalProperties)"),
                );
                self.walk(schema, rest, &child(ptr, "additionalProperties"));
            }
        }
    }

    /// Walks a property every old call sent (it was required): a `default` changed, added or
    /// removed right at the property is notation for those calls.
    fn walk_always_sent(&mut self, a: &Value, b: &Value, p: &str) {
        let findings = self.probe(self.roots, |g| g.walk(a, b, p));
        for mut f in findings {
            if f.default_at.as_deref() == Some(p) {
                f.effect = Effect::Notation;
                f.text
                    .push_str(" (every old call sent it: no old call sees the default)");
            }
            self.out.push(f);
        }
    }

    pub(super) fn compare_additional(&mut self, ov: Option<&Value>, nv: Option<&Value>, ptr: &str) {
        use Additional::{Closed, Open, Schema};
        let p = child(ptr, "additionalProperties");
        let (effect, what) = match (additional_form(ov), additional_form(nv)) {
            (Open, Open) | (Closed, Closed) => (Effect::Notation, "spelling changed"),
            (Schema(a), Schema(b)) => return self.walk(a, b, &p),
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
        self.push(
            effect,
            format!(
                "additionalProperties {what} {}→{} at {p}",
                opt_show(ov),
                opt_show(nv)
            ),
        );
    }
}

pub(super) fn names(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn compare_required(
    ov: Option<&Value>,
    nv: Option<&Value>,
    ptr: &str,
    out: &mut Vec<Finding>,
) {
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
