//! What an index drops: changes older than the retention period, and, when the index would
//! outgrow its record, the older items' values, then items, then per-tool digests.

use chrono::{DateTime, Utc};

use super::{Entry, MAX_HISTORY, Step};

/// How much an index keeps of each entry: history items, how many of the newest items keep
/// their values ([`HistoryItem::values`]), and whether the per-tool digests and the prompts'
/// and templates' digests stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keep {
    pub(super) history: usize,
    pub(super) values: usize,
    pub(super) tool_digests: bool,
    pub(super) declared_digests: bool,
}

/// What the index keeps when it would exceed [`crate::platform::MAX_RECORD_BYTES`], tried in
/// order: values go before history items (the items are the audit trail; every value is also
/// in its run's change row), then the prompts' and templates' digests, then the history is
/// shortened, then the per-tool digests go.
pub(super) const FALLBACKS: [Keep; 9] = [
    Keep {
        history: usize::MAX,
        values: usize::MAX,
        tool_digests: true,
        declared_digests: true,
    },
    Keep {
        history: MAX_HISTORY,
        values: MAX_HISTORY,
        tool_digests: true,
        declared_digests: true,
    },
    Keep {
        history: 25,
        values: 25,
        tool_digests: true,
        declared_digests: true,
    },
    Keep {
        history: 25,
        values: 5,
        tool_digests: true,
        declared_digests: true,
    },
    Keep {
        history: 25,
        values: 0,
        tool_digests: true,
        declared_digests: true,
    },
    Keep {
        history: 25,
        values: 0,
        tool_digests: true,
        declared_digests: false,
    },
    Keep {
        history: 10,
        values: 0,
        tool_digests: true,
        declared_digests: false,
    },
    Keep {
        history: 10,
        values: 0,
        tool_digests: false,
        declared_digests: false,
    },
    Keep {
        history: 0,
        values: 0,
        tool_digests: false,
        declared_digests: false,
    },
];
impl Entry {
    /// Drops the history items and steps observed before `cutoff` (the retention period); a
    /// step dropped leaves a mark that nothing before it can be rebuilt.
    pub(super) fn retain_since(&mut self, cutoff: DateTime<Utc>) {
        let old = self
            .history
            .iter()
            .take_while(|item| item.observed_at < cutoff)
            .count();
        self.drop_oldest(old);
        let old = self.steps.iter().take_while(|s| s.at < cutoff).count();
        if old > 0 && !(old == 1 && self.steps[0].undo.is_none()) {
            let last = self.steps[old - 1].clone();
            self.steps.drain(..old);
            self.steps.insert(0, Step { undo: None, ..last });
        }
    }

    /// Drops the oldest `count` history items; the chain's base moves to the last one dropped.
    pub(super) fn drop_oldest(&mut self, count: usize) {
        if let Some(last) = self.history.drain(..count).next_back()
            && let (Some(seq), Some(link)) = (last.seq, last.link)
        {
            self.history_base = Some(crate::chain::Link { seq, link });
        }
    }

    /// Drops the values of all but the newest `newest` history items (the chain links do not
    /// cover them, so no link changes).
    pub(super) fn keep_values(&mut self, newest: usize) {
        let older = self.history.len().saturating_sub(newest);
        for item in &mut self.history[..older] {
            item.values = None;
        }
    }
}
