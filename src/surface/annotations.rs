//! Effective tool annotations: the hint values a client must assume once the MCP defaults are
//! applied, so that spelling out a default (or dropping one) is never reported as a change.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The four behaviour hints of a tool after MCP defaults are applied.
///
/// Defaults (identical in every protocol revision that has annotations): `readOnlyHint` false,
/// `destructiveHint` true, `idempotentHint` false, `openWorldHint` true. A hint that is present
/// but not a boolean counts as absent.
///
/// `destructiveHint` and `idempotentHint` are meaningful only when the tool is not read-only.
/// For a read-only tool they are therefore fixed to `destructive_hint: false` and
/// `idempotent_hint: true` (a tool that modifies nothing destroys nothing and repeats safely),
/// whatever the server spells, so a read-only tool never reports a destructive flip.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct EffectiveAnnotations {
    /// The tool promises not to modify its environment.
    pub read_only_hint: bool,
    /// The tool may perform destructive updates.
    pub destructive_hint: bool,
    /// Calling the tool again with the same arguments has no additional effect.
    pub idempotent_hint: bool,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: bool,
}

impl EffectiveAnnotations {
    /// Default of `readOnlyHint` when absent.
    pub const READ_ONLY_DEFAULT: bool = false;
    /// Default of `destructiveHint` when absent.
    pub const DESTRUCTIVE_DEFAULT: bool = true;
    /// Default of `idempotentHint` when absent.
    pub const IDEMPOTENT_DEFAULT: bool = false;
    /// Default of `openWorldHint` when absent.
    pub const OPEN_WORLD_DEFAULT: bool = true;

    /// Computes the effective hints from a tool's raw `annotations` value (absent, `null` or a
    /// non-object all mean "no annotations").
    pub fn from_raw(annotations: Option<&Value>) -> Self {
        let hint = |key: &str, default: bool| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        let read_only_hint = hint("readOnlyHint", Self::READ_ONLY_DEFAULT);
        let open_world_hint = hint("openWorldHint", Self::OPEN_WORLD_DEFAULT);
        if read_only_hint {
            return Self {
                read_only_hint,
                destructive_hint: false,
                idempotent_hint: true,
                open_world_hint,
            };
        }
        Self {
            read_only_hint,
            destructive_hint: hint("destructiveHint", Self::DESTRUCTIVE_DEFAULT),
            idempotent_hint: hint("idempotentHint", Self::IDEMPOTENT_DEFAULT),
            open_world_hint,
        }
    }
}

impl Default for EffectiveAnnotations {
    /// The hints of a tool that declares no annotations at all.
    fn default() -> Self {
        Self::from_raw(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eff(v: Value) -> EffectiveAnnotations {
        EffectiveAnnotations::from_raw(Some(&v))
    }

    fn hints(r: bool, d: bool, i: bool, o: bool) -> EffectiveAnnotations {
        EffectiveAnnotations {
            read_only_hint: r,
            destructive_hint: d,
            idempotent_hint: i,
            open_world_hint: o,
        }
    }

    #[test]
    fn defaults_apply_when_absent() {
        let cases = [
            (None, hints(false, true, false, true)),
            (Some(json!(null)), hints(false, true, false, true)),
            (Some(json!({})), hints(false, true, false, true)),
            (Some(json!({"title": "x"})), hints(false, true, false, true)),
            (
                Some(
                    json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}),
                ),
                hints(false, true, false, true),
            ),
            (
                Some(json!({"destructiveHint": false})),
                hints(false, false, false, true),
            ),
            (
                Some(json!({"idempotentHint": true})),
                hints(false, true, true, true),
            ),
            (
                Some(json!({"openWorldHint": false})),
                hints(false, true, false, false),
            ),
            (
                Some(json!({"readOnlyHint": "yes"})),
                hints(false, true, false, true),
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                EffectiveAnnotations::from_raw(raw.as_ref()),
                expected,
                "{raw:?}"
            );
        }
    }

    #[test]
    fn read_only_makes_destructive_and_idempotent_meaningless() {
        let a = eff(json!({"readOnlyHint": true}));
        let b =
            eff(json!({"readOnlyHint": true, "destructiveHint": true, "idempotentHint": false}));
        assert_eq!(a, b);
        assert_eq!(a, hints(true, false, true, true));
    }

    #[test]
    fn spelling_out_defaults_is_no_change() {
        assert_eq!(eff(json!({})), eff(json!({"readOnlyHint": false})));
        assert_eq!(eff(json!({})), eff(json!({"destructiveHint": true})));
        assert_eq!(
            eff(json!({"readOnlyHint": false})),
            EffectiveAnnotations::default()
        );
        assert_ne!(eff(json!({"readOnlyHint": true})), eff(json!({})));
    }
}
