//! The CI gate: whether a recorded change is serious enough to fail the process (exit code 1).
//!
//! Rows and the ledger are always written first; the gate only decides the exit code, so a
//! pipeline can stop on a breaking change without losing the record of it.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::diff::{Change, ChangeClass, Compatibility, Severity};

/// The lowest level of change that trips the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Never trip (the default).
    #[default]
    Never,
    /// Any recorded change trips.
    Any,
    /// A change of severity medium or high trips.
    Medium,
    /// A change of severity high trips.
    High,
    /// A change that breaks existing callers trips: a removed tool or a schema change graded
    /// `breaking`.
    Breaking,
}

impl FailOn {
    /// Whether this change trips the gate.
    pub fn is_tripped_by(self, change: &Change) -> bool {
        match self {
            FailOn::Never => false,
            FailOn::Any => true,
            FailOn::Medium => change.severity >= Severity::Medium,
            FailOn::High => change.severity >= Severity::High,
            FailOn::Breaking => {
                change.change_class == ChangeClass::ToolRemoved
                    || change.compatibility == Some(Compatibility::Breaking)
            }
        }
    }

    /// Whether any of these changes trips the gate.
    pub fn is_tripped_by_any<'a>(self, changes: impl IntoIterator<Item = &'a Change>) -> bool {
        changes.into_iter().any(|c| self.is_tripped_by(c))
    }
}

/// The text given was not a gate level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown gate level {0:?}: use breaking, high, medium, any or never")]
pub struct UnknownFailOn(pub String);

impl FromStr for FailOn {
    type Err = UnknownFailOn;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "never" => Ok(FailOn::Never),
            "any" => Ok(FailOn::Any),
            "medium" => Ok(FailOn::Medium),
            "high" => Ok(FailOn::High),
            "breaking" => Ok(FailOn::Breaking),
            other => Err(UnknownFailOn(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        class: ChangeClass,
        severity: Severity,
        compatibility: Option<Compatibility>,
    ) -> Change {
        Change {
            change_class: class,
            tool_name: Some("t".into()),
            field: "inputSchema".into(),
            old_value: None,
            new_value: None,
            old_value_hash: None,
            new_value_hash: None,
            severity,
            compatibility,
            details: Vec::new(),
            same_version: false,
            renamed_to: None,
            renamed_from: None,
        }
    }

    #[test]
    fn levels_trip_as_documented() {
        let breaking = change(
            ChangeClass::InputSchemaChanged,
            Severity::Medium,
            Some(Compatibility::Breaking),
        );
        let notation = change(
            ChangeClass::InputSchemaChanged,
            Severity::Low,
            Some(Compatibility::Notation),
        );
        let removed = change(ChangeClass::ToolRemoved, Severity::Medium, None);
        let auth = change(ChangeClass::AuthRequirementChanged, Severity::High, None);
        let table = [
            (FailOn::Never, &breaking, false),
            (FailOn::Any, &notation, true),
            (FailOn::Medium, &notation, false),
            (FailOn::Medium, &removed, true),
            (FailOn::High, &removed, false),
            (FailOn::High, &auth, true),
            (FailOn::Breaking, &breaking, true),
            (FailOn::Breaking, &removed, true),
            (FailOn::Breaking, &notation, false),
            (FailOn::Breaking, &auth, false),
        ];
        for (level, change, expected) in table {
            assert_eq!(
                level.is_tripped_by(change),
                expected,
                "{level:?} {change:?}"
            );
        }
    }

    #[test]
    fn parses_every_level() {
        for (text, level) in [
            ("never", FailOn::Never),
            ("any", FailOn::Any),
            ("medium", FailOn::Medium),
            ("high", FailOn::High),
            ("breaking", FailOn::Breaking),
        ] {
            assert_eq!(text.parse::<FailOn>().unwrap(), level);
        }
        assert!("low".parse::<FailOn>().is_err());
    }
}
