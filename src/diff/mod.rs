//! The change engine: compares two surfaces and produces graded change records. Pure: no I/O.
//!
//! Severity rules (seed 000, plus ours): authentication change high; destructive hint turning
//! on (including an explicit `false` that stops being declared) high, turning off medium;
//! losing `readOnlyHint: true` high; tool added or removed, input schema and open-world hint
//! medium; output schema medium (ours); everything else low, including server instructions
//! (ours) and any schema change graded `notation`.

pub mod auth;
pub mod change;
pub mod class;
pub mod declared;
mod fields;
pub mod grade;
pub mod summarized;

pub use auth::{AuthState, ToolDiffDecision, compare_auth, tool_diff_decision};
pub use change::{Change, sort_changes};
pub use class::{ChangeClass, Compatibility, Severity, UnknownChangeClass};
pub use grade::{Grade, SchemaRole, grade_schema_change};

use crate::surface::Surface;

/// Compares a stored surface with a new one: the tool and server changes
/// ([`change::compare`]) and those of prompts, resources and resource templates
/// ([`declared::compare_declared`]), in the deterministic output order ([`sort_changes`]).
/// `compare(s, s)` is always empty.
pub fn compare(old: &Surface, new: &Surface) -> Vec<Change> {
    let mut changes = change::compare(old, new);
    changes.extend(declared::compare_declared(&old.declared, &new.declared));
    sort_changes(&mut changes);
    changes
}
