//! Combinators graded on their own, beside the schema's ordinary keywords.
//!
//! Every keyword of a schema object is a conjunct: the schema accepts what all its keywords
//! accept. So a combinator that appears can only remove instances, and one that disappears can
//! only add them:
//!
//! - added: `Tightens` (pointer of the combinator), unless provably a no-op: it accepts
//!   everything the schema's other keywords accepted before, or accept now (e.g. an `anyOf` one
//!   of whose branches asks nothing beyond the parent);
//! - removed: `Loosens`, unless provably a no-op in the same sense;
//! - changed: branch by branch where branches pair up (equal, then same `type`/`const`/
//!   `required`, then same position); what cannot be paired is `Unknown` (a union branch that
//!   may have been rewritten) or, where the direction is certain, graded (a new `anyOf`
//!   alternative loosens, a new `allOf` conjunct tightens).
//!
//! The proofs are sufficient conditions: "branch B accepts everything X accepts" is shown by
//! grading X → B and finding only loosening, new optional properties or notation.

use super::{
    Effect, Finding, Grader, Roots, Side, TRUE_SCHEMA, View, at, child, covers, finding, names,
    same, type_set,
};
use crate::surface::canon;
use serde_json::{Map, Value};

/// The combinator group a keyword belongs to (`then`/`else` belong to `if`).
pub(super) fn group_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "anyOf" => "anyOf",
        "oneOf" => "oneOf",
        "allOf" => "allOf",
        "not" => "not",
        "if" | "then" | "else" => "if",
        "dependentRequired" => "dependentRequired",
        "dependentSchemas" => "dependentSchemas",
        "dependencies" => "dependencies",
        "$ref" => "$ref",
        _ => return None,
    })
}

/// Whether a keyword is (part of) a combinator.
pub(super) fn is_combinator_key(key: &str) -> bool {
    group_of(key).is_some()
}

/// The keywords of a group.
pub(super) fn members(group: &'static str) -> &'static [&'static str] {
    match group {
        "items" => &["items", "prefixItems", "additionalItems"],
        "if" => &["if", "then", "else"],
        "anyOf" => &["anyOf"],
        "oneOf" => &["oneOf"],
        "allOf" => &["allOf"],
        "not" => &["not"],
        "dependentRequired" => &["dependentRequired"],
        "dependentSchemas" => &["dependentSchemas"],
        "dependencies" => &["dependencies"],
        _ => &["$ref"],
    }
}

/// How findings read for a group (the conditional is named after its `if`).
fn label(group: &str) -> &str {
    if group == "if" { "if/then/else" } else { group }
}

/// Whether findings only widen (or keep) the accepted set: the proof that one schema accepts
/// everything another accepts.
pub(super) fn only_widens(findings: &[Finding]) -> bool {
    findings.iter().all(|f| {
        f.default_at.is_some()
            || matches!(f.effect, Effect::Loosens | Effect::Adds | Effect::Notation)
    })
}

/// The JSON types an instance may have under a schema object, when it says.
pub(super) fn value_types(v: &Value) -> Vec<&'static str> {
    match v {
        Value::Null => vec!["null"],
        Value::Bool(_) => vec!["boolean"],
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|x| x.fract() == 0.0) =>
        {
            vec!["integer", "number"]
        }
        Value::Number(_) => vec!["number"],
        Value::String(_) => vec!["string"],
        Value::Array(_) => vec!["array"],
        Value::Object(_) => vec!["object"],
    }
}

/// The closed list of values a schema allows (`const`, or `enum`), when it has one.
fn allowed_values<'v>(get: impl Fn(&str) -> Option<&'v Value>) -> Option<Vec<&'v Value>> {
    if let Some(c) = get("const") {
        return Some(vec![c]);
    }
    get("enum")
        .and_then(Value::as_array)
        .map(|e| e.iter().collect())
}

/// Provably no instance satisfies both schemas: their types do not overlap, or their allowed
/// values (`const`/`enum`) do not, or one's values all lie outside the other's types.
pub(super) fn disjoint(a: View<'_>, b: View<'_>) -> bool {
    let (ta, tb) = (type_set(a.get("type")), type_set(b.get("type")));
    if let (Some(x), Some(y)) = (&ta, &tb)
        && !x.iter().any(|t| covers(y, t))
        && !y.iter().any(|t| covers(x, t))
    {
        return true;
    }
    let (va, vb) = (allowed_values(|k| a.get(k)), allowed_values(|k| b.get(k)));
    if let (Some(x), Some(y)) = (&va, &vb)
        && !x.iter().any(|p| y.iter().any(|q| same(p, q)))
    {
        return true;
    }
    let outside = |values: &Option<Vec<&Value>>, types: &Option<Vec<String>>| match (values, types)
    {
        (Some(vals), Some(types)) => vals
            .iter()
            .all(|v| !value_types(v).iter().any(|t| types.iter().any(|s| s == t))),
        _ => false,
    };
    outside(&va, &tb) || outside(&vb, &ta)
}

/// A schema value as an object view (`true` is the empty object); `None` for `false` or
/// anything that is not a schema.
pub(super) fn as_view<'v>(v: &'v Value, empty: &'v Map<String, Value>) -> Option<View<'v>> {
    match v {
        Value::Object(m) => Some(View::all(m)),
        Value::Bool(true) => Some(View::all(empty)),
        _ => None,
    }
}

impl Grader<'_> {
    /// Grades one combinator group of two schema objects whose members differ.
    pub(super) fn compare_combinator(
        &mut self,
        group: &'static str,
        o: View<'_>,
        n: View<'_>,
        ptr: &str,
    ) {
        match (o.get(group).is_some(), n.get(group).is_some()) {
            (false, true) => self.combinator_added(group, o, n, ptr),
            (true, false) => self.combinator_removed(group, o, n, ptr),
            (true, true) => self.combinator_changed(group, o, n, ptr),
            (false, false) => self.push(
                Effect::Notation,
                format!("then/else without if changed at {} (no effect)", at(ptr)),
            ),
        }
    }

    fn combinator_added(&mut self, group: &'static str, o: View<'_>, n: View<'_>, ptr: &str) {
        let p = child(ptr, group);
        let implied = self.implied(group, n, Side::New, o.siblings(), Side::Old)
            || self.implied(group, n, Side::New, n.siblings(), Side::New);
        if implied {
            self.push(
                Effect::Notation,
                format!(
                    "{} added at {p} (no-op: it accepts everything the schema's other keywords accept)",
                    label(group)
                ),
            );
        } else if group == "$ref" && self.resolve_ref(n.get("$ref"), Side::New).is_none() {
            self.push(
                Effect::Unknown,
                format!("$ref added at {p} (target not resolvable)"),
            );
        } else {
            self.push(
                Effect::Tightens,
                format!("{} added at {p} (a new constraint)", label(group)),
            );
        }
    }

    fn combinator_removed(&mut self, group: &'static str, o: View<'_>, n: View<'_>, ptr: &str) {
        let p = child(ptr, group);
        let implied = self.implied(group, o, Side::Old, o.siblings(), Side::Old)
            || self.implied(group, o, Side::Old, n.siblings(), Side::New);
        if implied {
            self.push(
                Effect::Notation,
                format!(
                    "{} removed at {p} (no-op: the schema's other keywords imply it)",
                    label(group)
                ),
            );
        } else {
            self.push(
                Effect::Loosens,
                format!("{} removed at {p} (a constraint dropped)", label(group)),
            );
        }
    }

    fn combinator_changed(&mut self, group: &'static str, o: View<'_>, n: View<'_>, ptr: &str) {
        match group {
            "anyOf" | "oneOf" | "allOf" => match (o.get(group), n.get(group)) {
                (Some(Value::Array(ob)), Some(Value::Array(nb))) => {
                    self.branches_changed(group, ob, nb, o, n, ptr)
                }
                _ => self.push(
                    Effect::Unknown,
                    format!("{group} is not an array at {}", child(ptr, group)),
                ),
            },
            "not" => self.not_changed(o, n, ptr),
            "if" => self.conditional_changed(o, n, ptr),
            "$ref" => self.ref_changed(o, n, ptr),
            _ => self.dependencies_changed(group, o, n, ptr),
        }
    }

    /// Every instance `x` (on `x_side`) accepts is accepted by the combinator `group` of the
    /// schema `holder` (on `holder_side`). A sufficient condition; `false` when unsure.
    pub(super) fn implied(
        &mut self,
        group: &str,
        holder: View<'_>,
        holder_side: Side,
        x: View<'_>,
        x_side: Side,
    ) -> bool {
        let empty = Map::new();
        let covered = |g: &mut Self, b: &Value| g.view_covered_by(x, x_side, b, holder_side);
        match (group, holder.get(group)) {
            ("anyOf" | "oneOf", Some(Value::Array(bs))) => {
                let exclusive = group == "oneOf";
                self.union_covers(bs, holder_side, x, x_side, exclusive)
                    || self.union_covers_by_type(bs, holder_side, x, x_side, exclusive)
            }
            ("allOf", Some(Value::Array(bs))) => bs.iter().all(|b| covered(self, b)),
            ("not", Some(negated)) => {
                let negated = self.deref(negated, holder_side).0;
                match negated {
                    Value::Bool(b) => !b,
                    other => as_view(other, &empty).is_some_and(|v| disjoint(x, v)),
                }
            }
            ("if", Some(_)) => ["then", "else"]
                .iter()
                .all(|k| holder.get(k).is_none_or(|b| covered(self, b))),
            ("dependentRequired" | "dependentSchemas" | "dependencies", Some(Value::Object(m))) => {
                m.values()
                    .all(|entry| self.entry_implied(entry, holder_side, x, x_side))
            }
            ("$ref", Some(_)) => match self.resolve_ref(holder.get("$ref"), holder_side) {
                Some((target, _)) => covered(self, target),
                None => false,
            },
            _ => false,
        }
    }

    /// One `dependentRequired` / `dependentSchemas` / `dependencies` entry asks nothing `x`
    /// does not already ask (its names are required by `x`, or its schema accepts all of `x`).
    fn entry_implied(&mut self, entry: &Value, side: Side, x: View<'_>, x_side: Side) -> bool {
        match entry {
            Value::Array(_) => {
                let required = names(x.get("required"));
                names(Some(entry))
                    .iter()
                    .all(|name| required.contains(name))
            }
            schema => self.view_covered_by(x, x_side, schema, side),
        }
    }

    /// Whether schema `b` (on `b_side`) accepts every instance the object view `x` accepts.
    pub(super) fn view_covered_by(
        &mut self,
        x: View<'_>,
        x_side: Side,
        b: &Value,
        b_side: Side,
    ) -> bool {
        let roots = Roots {
            old: self.root(x_side),
            new: self.root(b_side),
        };
        let findings = self.probe(roots, |g| g.walk_view(x, b, ""));
        only_widens(&findings) && !self.stopped
    }

    /// Whether schema `b` (on `b_side`) accepts every instance schema `a` (on `a_side`) does.
    pub(super) fn covered_by(&mut self, a: &Value, a_side: Side, b: &Value, b_side: Side) -> bool {
        let roots = Roots {
            old: self.root(a_side),
            new: self.root(b_side),
        };
        let findings = self.probe(roots, |g| g.walk(a, b, ""));
        only_widens(&findings) && !self.stopped
    }

    /// `not` on both sides: the negated schema is graded and every direction reversed.
    fn not_changed(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let (Some(a), Some(b)) = (o.get("not"), n.get("not")) else {
            return;
        };
        let findings = self.probe(self.roots, |g| g.walk(a, b, &child(ptr, "not")));
        for f in findings {
            let effect = match f.effect {
                Effect::Tightens => Effect::Loosens,
                Effect::Loosens | Effect::Adds => Effect::Tightens,
                Effect::Behaviour => Effect::Notation,
                other => other,
            };
            self.out
                .push(finding(effect, format!("{} (under not: reversed)", f.text)));
        }
    }

    /// `if` on both sides: with the same condition, `then` and `else` are walked (absent =
    /// `true`); a changed condition cannot be graded.
    fn conditional_changed(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let (Some(a), Some(b)) = (o.get("if"), n.get("if")) else {
            return;
        };
        if !same(a, b) {
            return self.push(
                Effect::Unknown,
                format!("if condition changed at {}", child(ptr, "if")),
            );
        }
        for key in ["then", "else"] {
            self.walk(
                o.get(key).unwrap_or(&TRUE_SCHEMA),
                n.get(key).unwrap_or(&TRUE_SCHEMA),
                &child(ptr, key),
            );
        }
    }

    /// `$ref` beside other keywords on both sides: the targets are walked.
    fn ref_changed(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let p = child(ptr, "$ref");
        let (old_ref, new_ref) = (o.get("$ref"), n.get("$ref"));
        let targets = (
            self.resolve_ref(old_ref, Side::Old),
            self.resolve_ref(new_ref, Side::New),
        );
        match targets {
            (Some((a, _)), Some((b, target))) => {
                let before = self.out.len();
                self.walk(a, b, &target);
                let renamed = !old_ref.zip(new_ref).is_some_and(|(x, y)| same(x, y));
                if self.out.len() == before && renamed {
                    self.push(
                        Effect::Notation,
                        format!("$ref retargeted to an equal schema at {p}"),
                    );
                }
            }
            _ if old_ref.zip(new_ref).is_some_and(|(x, y)| same(x, y)) => {}
            _ => self.push(
                Effect::Unknown,
                format!("$ref changed at {p} (target not resolvable)"),
            ),
        }
    }

    /// `dependentRequired` / `dependentSchemas` / `dependencies` on both sides, entry by entry.
    fn dependencies_changed(&mut self, group: &str, o: View<'_>, n: View<'_>, ptr: &str) {
        let base = child(ptr, group);
        let (Some(Value::Object(om)), Some(Value::Object(nm))) = (o.get(group), n.get(group))
        else {
            return self.push(
                Effect::Unknown,
                format!("{group} is not an object at {base}"),
            );
        };
        let mut keys: Vec<&String> = om.keys().chain(nm.keys()).collect();
        keys.sort_by(|a, b| canon::cmp_utf16(a, b));
        keys.dedup();
        for key in keys {
            let p = child(&base, key);
            match (om.get(key), nm.get(key)) {
                (Some(a), Some(b)) => self.entry_changed(a, b, &p),
                (None, Some(b)) => {
                    let implied = self.entry_implied(b, Side::New, o.siblings(), Side::Old)
                        || self.entry_implied(b, Side::New, n.siblings(), Side::New);
                    let (effect, what) = if implied {
                        (Effect::Notation, "added (no-op: already implied)")
                    } else {
                        (Effect::Tightens, "added")
                    };
                    self.push(effect, format!("{group} entry {what} at {p}"));
                }
                (Some(a), None) => {
                    let implied = self.entry_implied(a, Side::Old, o.siblings(), Side::Old)
                        || self.entry_implied(a, Side::Old, n.siblings(), Side::New);
                    let (effect, what) = if implied {
                        (Effect::Notation, "removed (no-op: still implied)")
                    } else {
                        (Effect::Loosens, "removed")
                    };
                    self.push(effect, format!("{group} entry {what} at {p}"));
                }
                (None, None) => {}
            }
        }
    }

    fn entry_changed(&mut self, a: &Value, b: &Value, p: &str) {
        match (a, b) {
            (Value::Array(_), Value::Array(_)) => {
                let (old, new) = (names(Some(a)), names(Some(b)));
                let mut changed = false;
                for name in new.iter().filter(|x| !old.contains(x)) {
                    changed = true;
                    self.push(
                        Effect::Tightens,
                        format!("dependent requirement added {name} at {p}"),
                    );
                }
                for name in old.iter().filter(|x| !new.contains(x)) {
                    changed = true;
                    self.push(
                        Effect::Loosens,
                        format!("dependent requirement removed {name} at {p}"),
                    );
                }
                if !changed {
                    self.push(
                        Effect::Notation,
                        format!("dependent requirement order changed at {p}"),
                    );
                }
            }
            (Value::Array(_), _) | (_, Value::Array(_)) => self.push(
                Effect::Unknown,
                format!("dependency changed between names and a schema at {p}"),
            ),
            _ => self.walk(a, b, p),
        }
    }
}
