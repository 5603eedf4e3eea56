//! What an index moves out or drops: changes older than the retention period go; older
//! changes are archived ([`super::archive`]) as an entry's history grows and when the index
//! would outgrow its record; only an index still too large after archiving everything drops
//! the older items' values, then items, then per-tool digests.

use chrono::{DateTime, Utc};

#[cfg(doc)]
use super::{ARCHIVE_AT, ARCHIVE_KEEP};
use super::{Entry, MAX_HISTORY, Step};

/// How far entries archive their older items while the index is too large for its record,
/// tried in order after the archiving every write does ([`ARCHIVE_AT`], [`ARCHIVE_KEEP`]):
/// `(above, keep)`, an entry holding more than `above` items keeps its newest `keep`.
pub(super) const ARCHIVE_UNDER_PRESSURE: [(usize, usize); 3] = [(25, 25), (10, 10), (0, 0)];

/// How much an index keeps of each entry: history items, how many of the newest items keep
/// their values ([`HistoryItem::values`]), and whether the per-tool digests stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keep {
    pub(super) history: usize,
    pub(super) values: usize,
    pub(super) tool_digests: bool,
}

/// What the index keeps when it would exceed [`crate::platform::MAX_RECORD_BYTES`], tried in
/// order: values go before history items (the items are the audit trail; every value is also
/// in its run's change row), then the history is shortened, then the per-tool digests go.
pub(super) const FALLBACKS: [Keep; 8] = [
    Keep {
        history: usize::MAX,
        values: usize::MAX,
        tool_digests: true,
    },
    Keep {
        history: MAX_HISTORY,
        values: MAX_HISTORY,
        tool_digests: true,
    },
    Keep {
        history: 25,
        values: 25,
        tool_digests: true,
    },
    Keep {
        history: 25,
        values: 5,
        tool_digests: true,
    },
    Keep {
        history: 25,
        values: 0,
        tool_digests: true,
    },
    Keep {
        history: 10,
        values: 0,
        tool_digests: true,
    },
    Keep {
        history: 10,
        values: 0,
        tool_digests: false,
    },
    Keep {
        history: 0,
        values: 0,
        tool_digests: false,
    },
];
impl Entry {
    /// Drops the history items, archived pages and steps observed before `cutoff` (the
    /// retention period; a page goes when its newest item is older); a step dropped leaves a
    /// mark that nothing before it can be rebuilt.
    pub(super) fn retain_since(&mut self, cutoff: DateTime<Utc>) {
        let old = self.archived.iter().take_while(|a| a.to < cutoff).count();
        self.archived.drain(..old);
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

    /// Drops the oldest `count` history items; the chain's base moves to the last one dropped,
    /// and the archived pages, older still, go with them.
    pub(super) fn drop_oldest(&mut self, count: usize) {
        if let Some(last) = self.history.drain(..count).next_back()
            && let (Some(seq), Some(link)) = (last.seq, last.link)
        {
            self.history_base = Some(crate::chain::Link { seq, link });
            self.archived.clear();
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
