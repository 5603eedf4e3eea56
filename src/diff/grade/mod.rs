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

//!
//! The files follow the tables of `docs/grading.md`: [`keywords`] (ordinary keywords),
//! [`objects`] (`properties`, `required`, `additionalProperties`), [`items`] (arrays),
//! [`combinator`] and [`branches`] (combinators), [`refs`] (`$ref` and `$defs`); [`walk`] is
//! the traversal that sends each keyword to its family.

mod branches;
mod combinator;
mod integers;
mod items;
mod keywords;
mod objects;
mod patterns;
mod refs;
mod sets;
mod walk;

#[cfg(test)]
mod keyword_tests;
#[cfg(test)]
mod release_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod witness;

use super::class::Compatibility;
use crate::surface::canon;
use keywords::{covers, type_set};
use objects::names;
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
    /// An omitted argument now means something else (a changed `default`): no value is
    /// rejected, so never breaking, but not provably harmless either (graded `unknown`).
    Behaviour,
    /// Spelling only.
    Notation,
    /// Effect not provable.
    Unknown,
}

struct Finding {
    effect: Effect,
    text: String,
    /// Set when the finding is about the `default` at this pointer: an annotation that does
    /// not change which instances validate, so the proofs of "this branch accepts everything"
    /// ignore it, and a property every old call sent cannot be affected by it.
    default_at: Option<String>,
}

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
        (Some(o), Some(n)) => {
            let (o, n) = (sets::normalize(o), sets::normalize(n));
            Grader::new(&o, &n).run()
        }
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
    if has(breaking) || has(Effect::Replaces) {
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

/// [`same`], except that a `default` listing the same comma-separated set in another order
/// counts as the same value: such a schema makes no change record at all (pydantic builds these
/// defaults from a Python set, so they would make one on every release).
pub(crate) fn same_but_default_sets(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_but_default_sets(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.get(k).is_some_and(|w| {
                        (k == "default" && keywords::same_comma_set(v, w))
                            || same_but_default_sets(v, w)
                    })
                })
        }
        _ => same(a, b),
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
        default_at: None,
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
