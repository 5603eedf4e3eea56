//! How an index fits its record, and what it moves out or drops: changes older than the retention period go; older
//! changes are archived ([`super::archive`]) as an entry's history grows and when the index
//! would outgrow its record; only an index still too large after archiving everything drops
//! the older items' values, then items, then per-tool digests.

use chrono::{DateTime, Utc};

use super::{
    ARCHIVE_AT, ARCHIVE_KEEP, Entry, Ledger, LedgerError, MAX_HISTORY, PackReader, Step, archive,
};
use crate::platform::{MAX_RECORD_BYTES, Record, Storage};

/// How far entries archive their older items while the index is too large for its record,
/// tried in order after the archiving every write does ([`ARCHIVE_AT`], [`ARCHIVE_KEEP`]):
/// `(above, keep)`, an entry holding more than `above` items keeps its newest `keep`. The
/// newest item stays in the index: the fleet view shows it as the server's last change.
pub(super) const ARCHIVE_UNDER_PRESSURE: [(usize, usize); 3] = [(25, 25), (10, 10), (1, 1)];

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

impl Ledger {
    /// [`Ledger::seal_for_write`] for a record of at most `limit` bytes.
    pub(super) async fn seal_within(
        &mut self,
        storage: &impl Storage,
        limit: usize,
    ) -> Result<Record, LedgerError> {
        self.updated_at = Utc::now();
        self.evict();
        // Items of earlier runs go to pages in the pack of this run's values: one write.
        self.archive_beyond(ARCHIVE_AT, ARCHIVE_KEEP, true);
        self.store_values(storage).await?;
        crate::chain::seal(self);
        let mut record = self.to_record();
        for (above, keep) in ARCHIVE_UNDER_PRESSURE {
            if record.bytes.len() <= limit {
                return Ok(record);
            }
            if self.archive_beyond(above, keep, false) {
                self.store_values(storage).await?;
            }
            crate::chain::seal(self);
            record = self.to_record();
        }
        if record.bytes.len() <= limit {
            return Ok(record);
        }
        if self.merge_pages(storage).await? {
            crate::chain::seal(self);
            record = self.to_record();
            if record.bytes.len() <= limit {
                return Ok(record);
            }
        }
        self.record_within(limit)
    }

    /// Merges every entry's archived pages ([`archive::merge_pages`]) and stores the merged
    /// pages; returns whether any were merged. An entry whose pages cannot be read keeps them.
    async fn merge_pages(&mut self, storage: &impl Storage) -> Result<bool, LedgerError> {
        let mut packs = PackReader::default();
        let pending = &mut self.pending;
        let mut merged = false;
        for entry in self.servers.values_mut() {
            match archive::merge_pages(storage, entry, &mut packs, pending).await {
                Ok(done) => merged |= done,
                Err(error) => {
                    tracing::warn!(server = entry.server_url, %error, "archived pages not merged")
                }
            }
        }
        if merged {
            self.store_values(storage).await?;
        }
        Ok(merged)
    }

    /// Archives the oldest items of every entry holding more than `above`, down to `keep`
    /// ([`Entry::archive_oldest`]); returns whether any page was made.
    pub(super) fn archive_beyond(&mut self, above: usize, keep: usize, earlier_only: bool) -> bool {
        let pending = &mut self.pending;
        let mut archived = false;
        for entry in self.servers.values_mut() {
            archived |= entry.archive_oldest(above, keep, earlier_only, pending);
        }
        archived
    }

    /// The index record of the next write, its chain sealed, shortened in memory only
    /// ([`FALLBACKS`]): no value is stored. [`Ledger::seal_for_write`] is what a run uses.
    pub fn sealed_record(&mut self) -> Result<Record, LedgerError> {
        self.updated_at = Utc::now();
        self.evict();
        self.record_within(MAX_RECORD_BYTES)
    }

    /// The index record, within `limit` bytes: when it is too large, the older items lose
    /// their values and every server's history is cut to its most recent items, then the
    /// prompts' and templates' digests, the history beyond 10 items, the per-tool digests, then
    /// the history are dropped, until it fits ([`FALLBACKS`]).
    pub(super) fn record_within(&mut self, limit: usize) -> Result<Record, LedgerError> {
        let mut size = 0;
        for keep in FALLBACKS {
            for entry in self.servers.values_mut() {
                let excess = entry.history.len().saturating_sub(keep.history);
                entry.drop_oldest(excess);
                entry.keep_values(keep.values);
                if !keep.tool_digests {
                    entry.tool_digests = None;
                }
                if !keep.declared_digests {
                    entry.declared_digests = None;
                }
            }
            crate::chain::seal(self);
            let record = self.to_record();
            if record.bytes.len() <= limit {
                if keep != FALLBACKS[0] {
                    tracing::warn!(?keep, "ledger index too large: shortened");
                }
                return Ok(record);
            }
            size = record.bytes.len();
        }
        Err(LedgerError::TooLarge {
            key: self.ledger_name.clone(),
            size,
            limit,
        })
    }
}
