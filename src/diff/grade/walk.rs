//! The traversal: two schemas are walked side by side, `$ref`s followed, and each keyword (or
//! group of keywords) is sent to the family that grades it.

use super::{
    CONTAINER_KEYWORDS, Comparison, Effect, Finding, Grader, MAX_DEPTH, MAX_STEPS, Roots, Side,
    View, addr, addr_of_map, at, branches, combinator, integers, opt_same, push, refs, same,
};
use crate::surface::canon;
use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::HashSet;

/// Where one keyword belongs when two schema objects are compared.
enum Kind {
    /// Graded on its own by [`Grader::compare_keyword`].
    Plain,
    /// Holds definitions or names; reached through `$ref`, never graded in place.
    Container,
    /// One of several keywords graded together (`items` with `prefixItems`, `if` with
    /// `then`/`else`), or a combinator; the name is the group's.
    Group(&'static str),
}

fn kind_of(key: &str) -> Kind {
    if CONTAINER_KEYWORDS.contains(&key) {
        Kind::Container
    } else if matches!(key, "items" | "prefixItems" | "additionalItems") {
        Kind::Group("items")
    } else if let Some(group) = combinator::group_of(key) {
        Kind::Group(group)
    } else {
        Kind::Plain
    }
}

impl<'a> Grader<'a> {
    pub(super) fn new(old: &'a Value, new: &'a Value) -> Self {
        let mut ref_nodes = HashSet::new();
        refs::collect_ref_nodes(old, &mut ref_nodes);
        refs::collect_ref_nodes(new, &mut ref_nodes);
        Grader {
            roots: Roots { old, new },
            out: Vec::new(),
            steps: 0,
            depth: 0,
            stack: HashSet::new(),
            ref_nodes,
            unresolved_ref: Cell::new(false),
            stopped: false,
        }
    }

    /// Grades the two roots; findings deduplicated in first-seen order.
    pub(super) fn run(mut self) -> Vec<Finding> {
        let (old, new) = (self.roots.old, self.roots.new);
        self.walk(old, new, "");
        if self.stopped {
            self.push(
                Effect::Unknown,
                "schema too large or too deeply nested to grade completely".into(),
            );
        }
        let defs_changed = ["$defs", "definitions"]
            .iter()
            .any(|k| !opt_same(old.get(k), new.get(k)));
        if defs_changed && self.unresolved_ref.get() {
            self.push(
                Effect::Unknown,
                "definitions changed and a $ref the grader does not follow may reach them".into(),
            );
        }
        let mut seen = HashSet::new();
        self.out.retain(|f| seen.insert(f.text.clone()));
        self.out
    }

    pub(super) fn push(&mut self, effect: Effect, text: String) {
        push(&mut self.out, effect, text);
    }

    pub(super) fn root(&self, side: Side) -> &'a Value {
        match side {
            Side::Old => self.roots.old,
            Side::New => self.roots.new,
        }
    }

    fn holds_ref(&self, v: &Value) -> bool {
        !self.ref_nodes.is_empty() && self.ref_nodes.contains(&addr(v))
    }

    /// Runs `f` against the given documents and returns its findings instead of keeping them.
    pub(super) fn probe(&mut self, roots: Roots<'a>, f: impl FnOnce(&mut Self)) -> Vec<Finding> {
        let saved_out = std::mem::take(&mut self.out);
        let saved_roots = std::mem::replace(&mut self.roots, roots);
        f(self);
        self.roots = saved_roots;
        std::mem::replace(&mut self.out, saved_out)
    }

    /// Compares two schemas found at `ptr` (`ptr` names the new document's location).
    pub(super) fn walk(&mut self, old: &Value, new: &Value, ptr: &str) {
        if !self.budget_left() {
            return;
        }
        let old = self.deref(old, Side::Old).0;
        let (new, target) = self.deref(new, Side::New);
        let ptr = target.as_deref().unwrap_or(ptr);
        if same(old, new) && !self.holds_ref(old) && !self.holds_ref(new) {
            return;
        }
        let key = Comparison::Values(addr(old), addr(new));
        self.guarded(key, |g| g.walk_values(old, new, ptr));
    }

    /// Counts one step; `false` (and the grade marked incomplete) once the budget is spent.
    fn budget_left(&mut self) -> bool {
        if self.stopped || self.steps >= MAX_STEPS || self.depth >= MAX_DEPTH {
            self.stopped = true;
            return false;
        }
        self.steps += 1;
        true
    }

    /// Runs `f` one level deeper unless the same comparison is already under way further up
    /// the stack (a `$ref` cycle), in which case it adds nothing.
    fn guarded(&mut self, key: Comparison, f: impl FnOnce(&mut Self)) {
        if !self.stack.insert(key) {
            return;
        }
        self.depth += 1;
        f(self);
        self.depth -= 1;
        self.stack.remove(&key);
    }

    fn walk_values(&mut self, old: &Value, new: &Value, ptr: &str) {
        let empty = Map::new();
        let (o, n) = match (old, new) {
            (Value::Bool(false), Value::Bool(false)) => return,
            (Value::Bool(false), _) => {
                return self.push(
                    Effect::Loosens,
                    format!("schema false now accepts values at {}", at(ptr)),
                );
            }
            (_, Value::Bool(false)) => {
                return self.push(
                    Effect::Tightens,
                    format!("schema now false (rejects everything) at {}", at(ptr)),
                );
            }
            (Value::Bool(true), Value::Bool(true)) => return,
            (Value::Bool(true), Value::Object(n)) => (&empty, n),
            (Value::Object(o), Value::Bool(true)) => (o, &empty),
            (Value::Object(o), Value::Object(n)) => (o, n),
            _ => {
                return self.push(
                    Effect::Unknown,
                    format!("schema is not a JSON Schema object at {}", at(ptr)),
                );
            }
        };
        if !same(old, new)
            && (branches::pure_union(n).is_some() || branches::pure_union(o).is_some())
        {
            return self.compare_unions(old, new, o, n, ptr);
        }
        self.compare_object(View::all(o), View::all(n), ptr);
    }

    /// One side is only a union: compared keyword by keyword, unless that finds changes in
    /// both directions and the union provably wraps the old schema, or the new schema is one
    /// branch of the old union (see [`Grader::union_wraps`], [`Grader::union_unwraps`]).
    fn compare_unions(
        &mut self,
        old: &Value,
        new: &Value,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
    ) {
        let ordinary = self.probe(self.roots, |g| {
            g.compare_object(View::all(o), View::all(n), ptr)
        });
        let one_way = combinator::only_widens(&ordinary)
            || ordinary
                .iter()
                .all(|f| matches!(f.effect, Effect::Tightens | Effect::Notation));
        if one_way || !(self.union_wraps(old, n, ptr) || self.union_unwraps(o, new, ptr)) {
            self.out.extend(ordinary);
        }
    }

    /// Compares a schema object (or only its siblings) with a schema value of the other side;
    /// used by the proofs that a combinator branch accepts everything a schema accepts.
    pub(super) fn walk_view(&mut self, x: View<'_>, b: &Value, ptr: &str) {
        if !self.budget_left() {
            return;
        }
        let b = self.deref(b, Side::New).0;
        let key = Comparison::View {
            map: addr_of_map(x.map),
            siblings: x.siblings,
            type_override: x.type_override.map(addr),
            other: addr(b),
        };
        self.guarded(key, |g| {
            let empty = Map::new();
            match b {
                Value::Bool(true) => g.compare_object(x, View::all(&empty), ptr),
                Value::Object(m) => g.compare_object(x, View::all(m), ptr),
                Value::Bool(false) => g.push(
                    Effect::Tightens,
                    format!("schema now false (rejects everything) at {}", at(ptr)),
                ),
                _ => g.push(
                    Effect::Unknown,
                    format!("schema is not a JSON Schema object at {}", at(ptr)),
                ),
            }
        });
    }

    /// Compares two schema objects keyword by keyword; grouped keywords and combinators once.
    fn compare_object(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
        keys.sort_by(|a, b| canon::cmp_utf16(a, b));
        keys.dedup();
        let mut done: Vec<&'static str> = Vec::new();
        let bounds_changed = integers::KEYS.iter().any(|k| !opt_same(o.get(k), n.get(k)));
        if bounds_changed && integers::compare(o, n, ptr, &mut self.out) {
            done.push("integer bounds");
        }
        for key in keys {
            match kind_of(key) {
                Kind::Container => {}
                Kind::Plain
                    if done.contains(&"integer bounds")
                        && integers::KEYS.contains(&key.as_str()) => {}
                Kind::Group(group) => {
                    if !done.contains(&group) {
                        done.push(group);
                        self.compare_group(group, o, n, ptr);
                    }
                }
                Kind::Plain => {
                    let (ov, nv) = (o.get(key), n.get(key));
                    if let (Some(a), Some(b)) = (ov, nv)
                        && same(a, b)
                        && !(self.holds_ref(a) && descends(key, a))
                    {
                        if self.holds_ref(a) {
                            // e.g. `patternProperties`: its `$ref`s are not followed.
                            self.unresolved_ref.set(true);
                        }
                        continue;
                    }
                    self.compare_keyword(key, ov, nv, o.map, n.map, ptr);
                }
            }
        }
    }

    /// Grades a group of keywords unless all its members are unchanged (and reach no `$ref`).
    fn compare_group(&mut self, group: &'static str, o: View<'_>, n: View<'_>, ptr: &str) {
        let members = combinator::members(group);
        // An unchanged `$ref` may still reach a changed definition: always followed.
        let unchanged = group != "$ref"
            && members.iter().all(|k| match (o.get(k), n.get(k)) {
                (Some(a), Some(b)) => same(a, b) && !self.holds_ref(a),
                (None, None) => true,
                _ => false,
            });
        if unchanged {
            return;
        }
        if group == "items" {
            self.compare_items(o, n, ptr);
        } else {
            self.compare_combinator(group, o, n, ptr);
        }
    }
}

/// Keywords whose unchanged value must still be walked when it reaches a `$ref` (the target
/// may have changed).
fn descends(key: &str, value: &Value) -> bool {
    key == "properties" || (key == "additionalProperties" && value.is_object())
}
