//! Every change between two observations of one server: the change engine's records, enriched
//! with what they mean for an agent (new capabilities, poisoning markers, rename hints, and the
//! identity signal).
//!
//! This is the one function both the Actor run and the offline `diff` command use, so the two
//! always report the same records for the same surfaces.

use crate::diff::{self, Change};
use crate::surface::Surface;

/// The changes between two surfaces of one server.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChangeSet {
    /// The change records, in the engine's deterministic order.
    pub changes: Vec<Change>,
}

/// Compares a stored surface with a new one.
pub fn between(old: &Surface, new: &Surface) -> ChangeSet {
    ChangeSet {
        changes: diff::compare(old, new),
    }
}
