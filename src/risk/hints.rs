//! The four behaviour hints of a tool (`annotations`) read with their effective defaults
//! (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint` true;
//! the last three only mean something when the tool is not read-only), so an omitted hint and
//! an explicit default are the same claim. Both the capability inference and the annotation
//! consistency checks read them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The four behaviour hints with their defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectiveHints {
    /// The tool does not change its environment.
    pub read_only: bool,
    /// The tool may destroy data (as declared, default true).
    pub destructive: bool,
    /// Repeating a call has no further effect (default false).
    pub idempotent: bool,
    /// The tool reaches an open world of entities (default true).
    pub open_world: bool,
    /// Whether the tool declared any of the four hints itself.
    pub declared: bool,
}

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

impl EffectiveHints {
    /// Reads the hints of a tool object; a hint that is not a boolean counts as absent.
    pub fn of(tool: &Value) -> EffectiveHints {
        let hint = |name: &str| declared_hint(tool, name);
        EffectiveHints {
            read_only: hint("readOnlyHint").unwrap_or(false),
            destructive: hint("destructiveHint").unwrap_or(true),
            idempotent: hint("idempotentHint").unwrap_or(false),
            open_world: hint("openWorldHint").unwrap_or(true),
            declared: HINTS.iter().any(|h| hint(h).is_some()),
        }
    }

    /// The hints as the tool itself declared them, with no protocol default assumed where that
    /// default is what makes a tool look dangerous: a missing `destructiveHint` is not read as
    /// "destroys data". The other hints read as in [`EffectiveHints::of`]. This is what the
    /// *declared* risk is computed from (see `docs/risk.md`); the effective hints give the
    /// *assumed* risk.
    pub fn as_declared(tool: &Value) -> EffectiveHints {
        EffectiveHints {
            destructive: declared_hint(tool, "destructiveHint").unwrap_or(false),
            ..EffectiveHints::of(tool)
        }
    }

    /// Destructive in effect: not read-only and not declared non-destructive.
    pub fn is_destructive(&self) -> bool {
        !self.read_only && self.destructive
    }
}

/// The value a tool declared for one behaviour hint (`readOnlyHint`, …), `None` when it is
/// absent or not a boolean.
pub fn declared_hint(tool: &Value, name: &str) -> Option<bool> {
    tool.get("annotations")
        .and_then(|a| a.get(name))
        .and_then(Value::as_bool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn effective_defaults_apply() {
        let none = EffectiveHints::of(&json!({"name": "x"}));
        assert!(
            !none.read_only
                && none.destructive
                && !none.idempotent
                && none.open_world
                && !none.declared
        );
        assert!(none.is_destructive());
        let read_only = EffectiveHints::of(
            &json!({"annotations": {"readOnlyHint": true, "destructiveHint": true}}),
        );
        assert!(!read_only.is_destructive());
        let explicit = EffectiveHints::of(
            &json!({"annotations": {"readOnlyHint": false, "destructiveHint": false}}),
        );
        assert!(!explicit.is_destructive() && explicit.declared);
        let wrong_type = EffectiveHints::of(&json!({"annotations": {"readOnlyHint": "true"}}));
        assert!(!wrong_type.read_only && !wrong_type.declared);
    }

    #[test]
    fn declared_hints_assume_no_destruction() {
        // (tool, effective destructive, declared destructive)
        let cases = [
            (json!({"name": "x"}), true, false),
            (json!({"annotations": {"readOnlyHint": false}}), true, false),
            (
                json!({"annotations": {"destructiveHint": true}}),
                true,
                true,
            ),
            (
                json!({"annotations": {"destructiveHint": false}}),
                false,
                false,
            ),
            (
                json!({"annotations": {"readOnlyHint": true, "destructiveHint": true}}),
                false,
                false,
            ),
            (
                json!({"annotations": {"destructiveHint": "yes"}}),
                true,
                false,
            ),
        ];
        for (tool, effective, declared) in cases {
            assert_eq!(
                EffectiveHints::of(&tool).is_destructive(),
                effective,
                "{tool}"
            );
            assert_eq!(
                EffectiveHints::as_declared(&tool).is_destructive(),
                declared,
                "{tool}"
            );
        }
    }
}
