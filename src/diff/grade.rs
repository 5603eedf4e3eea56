//! Semantic grading of a JSON Schema change: which values a caller may send (input) or must
//! expect (output) before and after, reported as findings with a JSON pointer each.
//!
//! Every keyword of a schema object is a conjunct, so the grader compares the ordinary keywords
//! of a schema as if its combinators (`anyOf`, `oneOf`, `allOf`, `not`, `if`/`then`/`else`,
//! `dependentRequired`, `dependentSchemas`, `dependencies`, `$ref` with siblings) were not there,
//! and grades each combinator on its own (see [`combinator`]). The verdict is the worst finding,
//! so one undecidable part never hides a provable break. Local `$ref`s are followed into the
//! document (see [`refs`]). What the grader cannot prove it reports as `unknown`, never guessed.
//! The user-facing rule table is `docs/grading.md`.

mod combinator;
mod refs;
#[cfg(test)]
mod table_tests;

use super::class::Compatibility;
use crate::surface::canon;
use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::HashSet;

/// Which side of the tool call a schema describes; it decides what "breaking" means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaRole {
    /// `inputSchema`: the caller produces values; accepting fewer is breaking.
    Input,
    /// `outputSchema`: the caller consumes values; a wider set of possible results is
    /// breaking, a narrower one compatible.
    Output,
}

/// The outcome of grading one schema change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grade {
    /// The overall verdict: the worst of the findings.
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
    /// The finding is about an annotation (`default`) that does not change which instances
    /// validate; the proofs of "this branch accepts everything" ignore it.
    annotation: bool,
}

/// Largest integer a double holds exactly; zod emits ±this as integer bounds.
const ZOD_SENTINEL: f64 = 9_007_199_254_740_991.0;

/// Walk calls allowed for one grade (a hostile schema with many shared `$ref`s or nested
/// combinators must not take unbounded time); past it the rest is `unknown`.
const MAX_STEPS: usize = 50_000;
/// Nesting of schemas (including followed `$ref`s) graded before the rest is `unknown`.
const MAX_DEPTH: usize = 64;

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
/// Keywords that hold definitions for `$ref` or name the schema; not constraints themselves.
const CONTAINER_KEYWORDS: [&str; 5] = ["$defs", "definitions", "$id", "$anchor", "$dynamicAnchor"];
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

static TRUE_SCHEMA: Value = Value::Bool(true);

/// Grades the change of one schema (`None` = the field is absent).
pub fn grade_schema_change(old: Option<&Value>, new: Option<&Value>, role: SchemaRole) -> Grade {
    let mut findings = match (old, new) {
        (None, None) => Vec::new(),
        (None, Some(_)) => vec![finding(
            if role == SchemaRole::Output {
                Effect::Tightens
            } else {
                Effect::Unknown
            },
            "schema added at (root)".into(),
        )],
        (Some(_), None) => vec![finding(
            if role == SchemaRole::Output {
                Effect::Loosens
            } else {
                Effect::Unknown
            },
            "schema removed at (root)".into(),
        )],
        (Some(o), Some(n)) => Grader::new(o, n).run(),
    };
    if findings.is_empty() && !opt_same(old, new) {
        findings.push(finding(
            Effect::Notation,
            "equivalent spelling at (root)".into(),
        ));
    }
    Grade {
        compatibility: verdict(&findings, role),
        details: findings.into_iter().map(|f| f.text).collect(),
    }
}

/// The worst finding decides: breaking > unknown > loosened/additive > notation.
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
    format!("{ptr}/{}", crate::surface::pointer_segment(segment))
}

fn finding(effect: Effect, text: String) -> Finding {
    Finding {
        effect,
        text,
        annotation: false,
    }
}

fn push(out: &mut Vec<Finding>, effect: Effect, text: String) {
    out.push(finding(effect, text));
}

/// The address of a value, its identity while the documents are borrowed.
fn addr(v: &Value) -> usize {
    std::ptr::from_ref(v) as usize
}

fn addr_of_map(m: &Map<String, Value>) -> usize {
    std::ptr::from_ref(m) as usize
}

/// The identity of one comparison, for the cycle guard (addresses of borrowed values).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Comparison {
    /// Two schema values.
    Values(usize, usize),
    /// A schema object view (all keywords or siblings only, maybe one member of its type
    /// union) against a schema value.
    View {
        map: usize,
        siblings: bool,
        type_override: Option<usize>,
        other: usize,
    },
}

/// Which document a schema value comes from (it decides where its `$ref`s resolve).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

/// The two documents `$ref`s resolve against: the left and the right side of a comparison.
#[derive(Clone, Copy)]
struct Roots<'a> {
    old: &'a Value,
    new: &'a Value,
}

/// One schema object as compared: all its keywords, or only its siblings (every keyword that
/// is not a combinator).
#[derive(Clone, Copy)]
struct View<'v> {
    map: &'v Map<String, Value>,
    siblings: bool,
    /// Reads `type` as this value instead (one member of a type union, for the proofs).
    type_override: Option<&'v Value>,
}

impl<'v> View<'v> {
    fn all(map: &'v Map<String, Value>) -> Self {
        View {
            map,
            siblings: false,
            type_override: None,
        }
    }

    fn siblings(self) -> Self {
        View {
            siblings: true,
            ..self
        }
    }

    /// The same view with `type` read as `t`.
    fn with_type(self, t: &'v Value) -> Self {
        View {
            type_override: Some(t),
            ..self
        }
    }

    fn get(&self, key: &str) -> Option<&'v Value> {
        if key == "type" && self.type_override.is_some() {
            self.type_override
        } else if self.siblings && combinator::is_combinator_key(key) {
            None
        } else {
            self.map.get(key)
        }
    }

    fn keys(&self) -> impl Iterator<Item = &'v String> + '_ {
        self.map
            .keys()
            .filter(|k| !(self.siblings && combinator::is_combinator_key(k)))
    }
}

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

/// The state of one grade: the two documents, the findings so far and the guards that keep a
/// hostile schema (cyclic or exponentially shared `$ref`s) from running away.
struct Grader<'a> {
    roots: Roots<'a>,
    out: Vec<Finding>,
    steps: usize,
    depth: usize,
    /// Comparisons under way further up the stack (a `$ref` cycle guard).
    stack: HashSet<Comparison>,
    /// Addresses of the values (in either document) that contain a `$ref` somewhere.
    ref_nodes: HashSet<usize>,
    /// A `$ref` could not be resolved (not a local JSON pointer, or dangling), or sits in a
    /// keyword the grader does not walk.
    unresolved_ref: Cell<bool>,
    /// The step or depth budget ran out somewhere.
    stopped: bool,
}

impl<'a> Grader<'a> {
    fn new(old: &'a Value, new: &'a Value) -> Self {
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
    fn run(mut self) -> Vec<Finding> {
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

    fn push(&mut self, effect: Effect, text: String) {
        push(&mut self.out, effect, text);
    }

    fn root(&self, side: Side) -> &'a Value {
        match side {
            Side::Old => self.roots.old,
            Side::New => self.roots.new,
        }
    }

    fn holds_ref(&self, v: &Value) -> bool {
        !self.ref_nodes.is_empty() && self.ref_nodes.contains(&addr(v))
    }

    /// Runs `f` against the given documents and returns its findings instead of keeping them.
    fn probe(&mut self, roots: Roots<'a>, f: impl FnOnce(&mut Self)) -> Vec<Finding> {
        let saved_out = std::mem::take(&mut self.out);
        let saved_roots = std::mem::replace(&mut self.roots, roots);
        f(self);
        self.roots = saved_roots;
        std::mem::replace(&mut self.out, saved_out)
    }

    /// Compares two schemas found at `ptr` (`ptr` names the new document's location).
    fn walk(&mut self, old: &Value, new: &Value, ptr: &str) {
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
        self.compare_object(View::all(o), View::all(n), ptr);
    }

    /// Compares a schema object (or only its siblings) with a schema value of the other side;
    /// used by the proofs that a combinator branch accepts everything a schema accepts.
    fn walk_view(&mut self, x: View<'_>, b: &Value, ptr: &str) {
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
        for key in keys {
            match kind_of(key) {
                Kind::Container => {}
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
                    self.compare_keyword(key, ov, nv, o.map, ptr);
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

    /// `prefixItems` (or draft-07 tuple `items`) and the schema for the remaining elements,
    /// compared position by position: each position is graded against the schema that governed
    /// it before and governs it now.
    fn compare_items(&mut self, o: View<'_>, n: View<'_>, ptr: &str) {
        let (Some(old), Some(new)) = (tuple_of(o), tuple_of(n)) else {
            return self.push(
                Effect::Unknown,
                format!("prefixItems is not an array at {}", at(ptr)),
            );
        };
        let positions = old.prefix.len().max(new.prefix.len());
        for i in 0..positions {
            let before = old.prefix.get(i).or(old.rest).unwrap_or(&TRUE_SCHEMA);
            let after = new.prefix.get(i).or(new.rest).unwrap_or(&TRUE_SCHEMA);
            let p = if i < new.prefix.len() {
                child(&child(ptr, new.prefix_key), &i.to_string())
            } else {
                child(ptr, new.rest_key)
            };
            self.walk(before, after, &p);
        }
        self.walk(
            old.rest.unwrap_or(&TRUE_SCHEMA),
            new.rest.unwrap_or(&TRUE_SCHEMA),
            &child(ptr, new.rest_key),
        );
    }

    /// Grades one keyword that differs between two schema objects (`o` is the old object).
    fn compare_keyword(
        &mut self,
        key: &str,
        ov: Option<&Value>,
        nv: Option<&Value>,
        o: &Map<String, Value>,
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
            "properties" => self.compare_properties(ov, nv, o, ptr),
            "additionalProperties" => self.compare_additional(ov, nv, ptr),
            _ if LOWER_BOUNDS.contains(&k) || UPPER_BOUNDS.contains(&k) => {
                compare_bound(k, ov, nv, ptr, out)
            }
            "uniqueItems" => compare_unique(ov, nv, ptr, out),
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
                out.push(Finding {
                    effect,
                    text: format!(
                        "default {} {} at {}",
                        change_word(ov, nv),
                        change_values(ov, nv),
                        at(ptr)
                    ),
                    annotation: true,
                });
            }
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

    fn compare_properties(
        &mut self,
        ov: Option<&Value>,
        nv: Option<&Value>,
        old_schema: &Map<String, Value>,
        ptr: &str,
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
                (Some(a), Some(b)) => self.walk(a, b, &p),
                (None, Some(_)) => self.push(Effect::Adds, format!("property added {p}")),
                (Some(_), None) if old_closed => self.push(
                    Effect::Tightens,
                    format!("property removed {p} (no longer accepted)"),
                ),
                (Some(_), None) => self.push(Effect::Loosens, format!("property removed {p}")),
                (None, None) => {}
            }
        }
    }

    fn compare_additional(&mut self, ov: Option<&Value>, nv: Option<&Value>, ptr: &str) {
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

/// Keywords whose unchanged value must still be walked when it reaches a `$ref` (the target
/// may have changed).
fn descends(key: &str, value: &Value) -> bool {
    key == "properties" || (key == "additionalProperties" && value.is_object())
}

/// The positional part of an array schema and the schema for the elements after it.
struct Tuple<'v> {
    prefix: &'v [Value],
    prefix_key: &'static str,
    rest: Option<&'v Value>,
    rest_key: &'static str,
}

/// Reads either spelling: 2020-12 `prefixItems` + `items`, or draft-07 array `items` +
/// `additionalItems`. `None` when `prefixItems` is not an array.
fn tuple_of<'v>(v: View<'v>) -> Option<Tuple<'v>> {
    if let Some(Value::Array(prefix)) = v.get("items") {
        return Some(Tuple {
            prefix,
            prefix_key: "items",
            rest: v.get("additionalItems"),
            rest_key: "additionalItems",
        });
    }
    let prefix: &[Value] = match v.get("prefixItems") {
        None => &[],
        Some(Value::Array(p)) => p,
        Some(_) => return None,
    };
    Some(Tuple {
        prefix,
        prefix_key: "prefixItems",
        rest: v.get("items"),
        rest_key: "items",
    })
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
                Breaking,
                "anyOf added at /anyOf (a new constraint)",
            ),
            (
                "widened into oneOf",
                json!({"items": {"type": "string"}}),
                json!({"items": {"oneOf": [{"type": "string", "description": "d"}, {"type": "object"}]}}),
                Loosened,
                "oneOf added at /items/oneOf (no-op",
            ),
            (
                "narrowed from anyOf",
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                json!({"type": "string"}),
                Breaking,
                "type added string at (root)",
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
                "$ref changed at /$ref (target not resolvable)",
            ),
            (
                "allOf added",
                json!({}),
                json!({"allOf": [{"type": "string"}]}),
                Breaking,
                "allOf added at /allOf",
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
