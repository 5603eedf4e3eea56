//! The numeric bounds of a schema whose numbers are integers, read as the integers they admit,
//! so that an exclusive bound respelled as the inclusive one (`exclusiveMinimum: 0` →
//! `minimum: 1` on `type: integer`) is notation, not one bound removed and another added.
//!
//! Used only when the schema's `type` admits integers and no other number (`integer`, maybe
//! with non-numeric types such as `null`) on both sides, and an exclusive bound is spelled on
//! either side; every other bound change is graded keyword by keyword.

use super::keywords::{ZOD_SENTINEL, type_set};
use super::{Effect, Finding, View, at, push};
use serde_json::Value;

/// The bound keywords graded together here.
pub(super) const KEYS: [&str; 4] = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"];

/// The least and greatest integer admitted (`None` = unbounded).
#[derive(Debug, PartialEq)]
struct Range {
    lower: Option<f64>,
    upper: Option<f64>,
}

/// Whether the numbers a `type` admits are exactly the integers.
fn integers_only(t: Option<&Value>) -> bool {
    type_set(t)
        .is_some_and(|set| set.iter().any(|s| s == "integer") && !set.iter().any(|s| s == "number"))
}

/// The integer range of one side, or `None` when a bound is not a number (or a boolean
/// draft-4 exclusive flag).
fn range(v: View<'_>) -> Option<Range> {
    let number = |key: &str| -> Option<Option<f64>> {
        match v.get(key) {
            None => Some(None),
            Some(x) => x.as_f64().map(Some),
        }
    };
    let flag = |key: &str| v.get(key).and_then(Value::as_bool);
    let (min, max) = (number("minimum")?, number("maximum")?);
    let exclusive = |key: &str| -> Option<Option<f64>> {
        if flag(key).is_some() {
            Some(None)
        } else {
            number(key)
        }
    };
    let (ex_min, ex_max) = (
        exclusive("exclusiveMinimum")?,
        exclusive("exclusiveMaximum")?,
    );
    let min = min.filter(|m| *m != -ZOD_SENTINEL);
    let max = max.filter(|m| *m != ZOD_SENTINEL);
    // Draft 4: `exclusiveMinimum: true` makes `minimum` exclusive.
    let lower = [
        min.map(|m| {
            if flag("exclusiveMinimum") == Some(true) {
                m.floor() + 1.0
            } else {
                m.ceil()
            }
        }),
        ex_min.map(|x| x.floor() + 1.0),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max);
    let upper = [
        max.map(|m| {
            if flag("exclusiveMaximum") == Some(true) {
                m.ceil() - 1.0
            } else {
                m.floor()
            }
        }),
        ex_max.map(|x| x.ceil() - 1.0),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::min);
    Some(Range { lower, upper })
}

/// How the bounds of one side are spelled, for the details.
fn spelling(v: View<'_>) -> String {
    let parts: Vec<String> = KEYS
        .iter()
        .filter_map(|k| v.get(k).map(|x| format!("{k} {x}")))
        .collect();
    if parts.is_empty() {
        "(none)".into()
    } else {
        parts.join(", ")
    }
}

fn show(x: Option<f64>) -> String {
    x.map_or_else(|| "(none)".into(), |x| format!("{x}"))
}

/// Grades the integer bounds of `o` and `n` together and returns `true`, or returns `false`
/// (nothing pushed) when they are to be graded keyword by keyword.
pub(super) fn compare(o: View<'_>, n: View<'_>, ptr: &str, out: &mut Vec<Finding>) -> bool {
    if !integers_only(o.get("type")) || !integers_only(n.get("type")) {
        return false;
    }
    let exclusive =
        |v: View<'_>| v.get("exclusiveMinimum").is_some() || v.get("exclusiveMaximum").is_some();
    if !exclusive(o) && !exclusive(n) {
        return false;
    }
    let (Some(a), Some(b)) = (range(o), range(n)) else {
        return false;
    };
    let label = format!("{}→{}", spelling(o), spelling(n));
    if a == b {
        push(
            out,
            Effect::Notation,
            format!(
                "integer bounds respelled {label} at {} (same integers)",
                at(ptr)
            ),
        );
        return true;
    }
    let side =
        |name: &str, was: Option<f64>, is: Option<f64>, lower: bool| -> Option<(Effect, String)> {
            let effect = match (was, is) {
                (x, y) if x == y => return None,
                (None, Some(_)) => Effect::Tightens,
                (Some(_), None) => Effect::Loosens,
                (Some(x), Some(y)) if (y > x) == lower => Effect::Tightens,
                _ => Effect::Loosens,
            };
            let verb = if effect == Effect::Tightens {
                "narrowed"
            } else {
                "widened"
            };
            Some((
                effect,
                format!(
                    "integer {name} bound {verb} {}→{} ({label}) at {}",
                    show(was),
                    show(is),
                    at(ptr)
                ),
            ))
        };
    for (effect, text) in [
        side("lower", a.lower, b.lower, true),
        side("upper", a.upper, b.upper, false),
    ]
    .into_iter()
    .flatten()
    {
        push(out, effect, text);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::{Compatibility, SchemaRole, grade_schema_change};
    use serde_json::json;

    #[test]
    fn integer_bounds_table() {
        use Compatibility::*;
        let int = |extra: serde_json::Value| {
            let mut s = json!({"type": "integer"});
            for (k, v) in extra.as_object().unwrap() {
                s[k] = v.clone();
            }
            s
        };
        let cases = [
            (
                "exclusive respelled inclusive",
                int(json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1000000})),
                int(json!({"minimum": 1, "maximum": 999999})),
                Notation,
                "integer bounds respelled exclusiveMinimum 0, exclusiveMaximum 1000000→minimum 1, maximum 999999 at (root) (same integers)",
            ),
            (
                "inclusive respelled exclusive",
                int(json!({"minimum": 1})),
                int(json!({"exclusiveMinimum": 0})),
                Notation,
                "integer bounds respelled minimum 1→exclusiveMinimum 0 at (root) (same integers)",
            ),
            (
                "draft 4 boolean flag",
                int(json!({"minimum": 0, "exclusiveMinimum": true})),
                int(json!({"minimum": 1})),
                Notation,
                "integer bounds respelled minimum 0, exclusiveMinimum true→minimum 1 at (root) (same integers)",
            ),
            (
                "respelled and narrowed",
                int(json!({"exclusiveMinimum": 0})),
                int(json!({"minimum": 2})),
                Breaking,
                "integer lower bound narrowed 1→2 (exclusiveMinimum 0→minimum 2) at (root)",
            ),
            (
                "respelled and widened",
                int(json!({"exclusiveMaximum": 10})),
                int(json!({"maximum": 10})),
                Loosened,
                "integer upper bound widened 9→10 (exclusiveMaximum 10→maximum 10) at (root)",
            ),
            (
                "nullable integer",
                json!({"type": ["integer", "null"], "exclusiveMinimum": 0}),
                json!({"type": ["integer", "null"], "minimum": 1}),
                Notation,
                "integer bounds respelled exclusiveMinimum 0→minimum 1 at (root) (same integers)",
            ),
        ];
        for (name, old, new, expected, detail) in cases {
            let g = grade_schema_change(Some(&old), Some(&new), SchemaRole::Input);
            assert_eq!(g.compatibility, expected, "{name}: {:?}", g.details);
            assert!(
                g.details.iter().any(|d| d == detail),
                "{name}: {:?}",
                g.details
            );
        }
    }

    #[test]
    fn a_number_is_not_an_integer() {
        // 0.5 passes `exclusiveMinimum: 0` and fails `minimum: 1`.
        let old = json!({"type": "number", "exclusiveMinimum": 0});
        let new = json!({"type": "number", "minimum": 1});
        let g = grade_schema_change(Some(&old), Some(&new), SchemaRole::Input);
        assert_eq!(g.compatibility, Compatibility::Breaking, "{:?}", g.details);
        let untyped = grade_schema_change(
            Some(&json!({"exclusiveMinimum": 0})),
            Some(&json!({"minimum": 1})),
            SchemaRole::Input,
        );
        assert_eq!(untyped.compatibility, Compatibility::Breaking);
    }
}
