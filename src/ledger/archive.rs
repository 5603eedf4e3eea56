//! Archived history: a server's older changes, moved out of the index into the value store so
//! that the index stays within its record while every change of the retention period is kept.
//!
//! When a server's entry holds more than [`ARCHIVE_AT`] history items, a run moves its oldest
//! items (all but the newest [`ARCHIVE_KEEP`]) into an **archived page**: the JSON array of
//! those items, stored by digest in the run's value pack ([`super::values`]) like any other
//! kept value. The entry keeps, per page, an [`Archived`] reference: the page's digest and
//! pack, the chain links it runs between, its time span and the value packs its items name.
//! An index that would outgrow its record archives more (25 items kept, then 10, then 1),
//! then merges each server's pages ([`merge_pages`]), before anything is dropped
//! ([`super::Ledger::seal_for_write`]).
//!
//! Pages are bound to the chain three ways: the index head covers every reference (digest and
//! links); the references of an entry must join up, each page starting at the link the one
//! before it ends at and the last ending at the entry's `history_base`
//! ([`crate::chain::check_index`]); and a page read back must have its digest and its items
//! must link from its base to its last link ([`crate::chain::check_page`]). A page planted,
//! altered, cut or reordered in the store is refused.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::values::{PackReader, ValueError};
use super::{Entry, HistoryItem, KeptValue, MAX_HISTORY, Pending, ValueRef, past};
use crate::chain::record::Link;
use crate::platform::Storage;

/// How many of its newest items an entry keeps in the index when it archives.
pub const ARCHIVE_KEEP: usize = MAX_HISTORY;
/// An entry archives when it holds more than this many items in the index, so a page holds at
/// least [`ARCHIVE_KEEP`] items and a server's page is written every few dozen changes, not
/// every run.
pub const ARCHIVE_AT: usize = 2 * ARCHIVE_KEEP;

/// One archived page of a server's history, as its entry names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Archived {
    /// The chain link before the page's first item.
    pub base: Link,
    /// The chain link of the page's last item.
    pub last: Link,
    /// When its first item was observed.
    pub from: DateTime<Utc>,
    /// When its last item was observed: the page goes when this passes the retention period.
    pub to: DateTime<Utc>,
    /// How many items it holds.
    pub count: usize,
    /// The page (the JSON array of its items) in the value store.
    pub page: ValueRef,
    /// Every value pack the page's items name, so the sweep keeps them without reading pages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<String>,
}

impl Entry {
    /// Moves the oldest history items beyond the newest `keep` into a new archived page when
    /// the entry holds more than `above` items; the page's text goes to `pending`. With
    /// `earlier_only`, only items observed before the entry's last reading move (their values
    /// are stored already, so the page can share the run's pack with the run's own values),
    /// and only when at least `keep` of them can: no page of a handful of items, the rest wait
    /// for the next run. Returns whether a page was made.
    pub(super) fn archive_oldest(
        &mut self,
        above: usize,
        keep: usize,
        earlier_only: bool,
        pending: &mut Pending,
    ) -> bool {
        if self.history.len() <= above.max(keep) {
            return false;
        }
        let mut count = self.history.len() - keep;
        if earlier_only {
            let earlier = self
                .history
                .iter()
                .take_while(|item| item.observed_at < self.last_seen)
                .count();
            count = count.min(earlier);
            if count < keep {
                return false;
            }
        }
        if count == 0 {
            return false;
        }
        self.link_items();
        let base = self.history_base.clone().unwrap_or_else(|| Link {
            seq: 0,
            link: crate::chain::record::genesis_link(&self.server_url),
        });
        let items: Vec<HistoryItem> = self.history.drain(..count).collect();
        let (Some(first), Some(newest)) = (items.first(), items.last()) else {
            return false;
        };
        let last = Link {
            seq: newest.seq.unwrap_or(base.seq),
            link: newest.link.clone().unwrap_or_default(),
        };
        let (from, to) = (first.observed_at, newest.observed_at);
        let page = serde_json::to_value(&items).unwrap_or(Value::Null);
        let (sha256, text) = past::keyed(&page);
        pending.add(std::collections::BTreeMap::from([(sha256.clone(), text)]));
        self.history_base = Some(last.clone());
        self.archived.push(Archived {
            base,
            last,
            from,
            to,
            count: items.len(),
            page: ValueRef { sha256, pack: None },
            packs: packs_named(&items).into_iter().collect(),
        });
        true
    }

    /// Keeps the newest archived pages that join up (each beginning where the one before it
    /// ends) and drops older ones; returns the link the kept pages end at, `None` without
    /// pages. A chain started again ([`crate::chain::moved::relink`]) continues from there.
    pub fn keep_joined_archive(&mut self) -> Option<Link> {
        let joined = self
            .archived
            .windows(2)
            .rposition(|pair| pair[0].last != pair[1].base)
            .map_or(0, |gap| gap + 1);
        self.archived.drain(..joined);
        self.archived.last().map(|page| page.last.clone())
    }
}

/// The most bytes of items a page merged under pressure holds ([`merge_pages`]): well within
/// a value pack's [`super::values::PACK_VALUE_BYTES`].
pub const MERGED_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// Merges runs of consecutive archived pages of `entry` into single pages of at most
/// [`MERGED_PAGE_BYTES`] each (the merged pages' texts go to `pending`): what an index too
/// large for its record does after archiving every item, before it drops anything. Each page
/// is read and checked first; a page that cannot be read leaves the entry as it is. Returns
/// whether any pages were merged.
pub(super) async fn merge_pages(
    storage: &impl Storage,
    entry: &mut Entry,
    packs: &mut PackReader,
    pending: &mut Pending,
) -> Result<bool, ValueError> {
    if entry.archived.len() < 2 {
        return Ok(false);
    }
    let mut read = Vec::with_capacity(entry.archived.len());
    for archived in &entry.archived {
        let items = read_page(storage, entry, archived, packs).await?;
        let bytes = packs.text_len(archived.page.pack.as_deref(), &archived.page.sha256);
        read.push((archived.clone(), items, bytes));
    }
    let mut merged: Vec<Archived> = Vec::new();
    let mut group: Vec<(Archived, Vec<HistoryItem>)> = Vec::new();
    let mut group_bytes = 0;
    let mut changed = false;
    for (archived, items, bytes) in read {
        if !group.is_empty() && group_bytes + bytes > MERGED_PAGE_BYTES {
            changed |= group.len() > 1;
            merged.push(merge_group(std::mem::take(&mut group), pending));
            group_bytes = 0;
        }
        group_bytes += bytes;
        group.push((archived, items));
    }
    changed |= group.len() > 1;
    merged.push(merge_group(group, pending));
    if changed {
        entry.archived = merged;
    }
    Ok(changed)
}

/// One page of the items of `group`'s consecutive pages (the page itself when alone).
fn merge_group(group: Vec<(Archived, Vec<HistoryItem>)>, pending: &mut Pending) -> Archived {
    if let [(only, _)] = group.as_slice() {
        return only.clone();
    }
    let (first, last) = (&group[0].0, &group[group.len() - 1].0);
    let (base, last_link, from, to) = (first.base.clone(), last.last.clone(), first.from, last.to);
    let items: Vec<HistoryItem> = group.into_iter().flat_map(|(_, items)| items).collect();
    let page = serde_json::to_value(&items).unwrap_or(Value::Null);
    let (sha256, text) = past::keyed(&page);
    pending.add(std::collections::BTreeMap::from([(sha256.clone(), text)]));
    Archived {
        base,
        last: last_link,
        from,
        to,
        count: items.len(),
        page: ValueRef { sha256, pack: None },
        packs: packs_named(&items).into_iter().collect(),
    }
}

/// The value packs `items` name.
pub(super) fn packs_named(items: &[HistoryItem]) -> BTreeSet<String> {
    items
        .iter()
        .flat_map(|item| item.values.iter().flat_map(|v| [&v.old, &v.new]))
        .flatten()
        .filter_map(|kept| match kept {
            KeptValue::Digest {
                pack: Some(pack), ..
            } => Some(pack.clone()),
            _ => None,
        })
        .collect()
}

/// The items of one archived page of `entry`, read from its pack and checked: its digest, and
/// its items' chain from the page's base to its last link (with the moves between them).
pub async fn read_page(
    storage: &impl Storage,
    entry: &Entry,
    archived: &Archived,
    packs: &mut PackReader,
) -> Result<Vec<HistoryItem>, ValueError> {
    let ValueRef { sha256, pack } = &archived.page;
    let page = packs.value(storage, pack.as_deref(), sha256).await?;
    let refused = |problem: String| ValueError::Planted {
        sha256: sha256.clone(),
        key: pack.clone().unwrap_or_default(),
        problem,
    };
    let items = page
        .as_array()
        .ok_or_else(|| refused("it is not a page of items".into()))?;
    let moves: Vec<Value> = entry
        .moves
        .iter()
        .filter(|m| m.seq > archived.base.seq && m.seq <= archived.last.seq)
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        .collect();
    crate::chain::check_page(
        &entry.server_url,
        &archived.base,
        &archived.last,
        items,
        &moves,
    )
    .map_err(|broken| refused(broken.to_string()))?;
    if items.len() != archived.count {
        return Err(refused(format!(
            "it holds {} items, the ledger names {}",
            items.len(),
            archived.count
        )));
    }
    serde_json::from_value(page.clone())
        .map_err(|e| refused(format!("its items are unreadable ({e})")))
}

/// Every kept change of `entry`, oldest first: its archived pages, each read and checked
/// ([`read_page`]), then the items the index holds.
pub async fn full_history(
    storage: &impl Storage,
    entry: &Entry,
    packs: &mut PackReader,
) -> Result<Vec<HistoryItem>, ValueError> {
    history_since(storage, entry, None, packs).await
}

/// Every kept change of `entry` observed at or after `since` (all when `None`), oldest first:
/// only the pages that reach `since` are read.
pub async fn history_since(
    storage: &impl Storage,
    entry: &Entry,
    since: Option<DateTime<Utc>>,
    packs: &mut PackReader,
) -> Result<Vec<HistoryItem>, ValueError> {
    let mut history = Vec::new();
    let reaching = entry
        .archived
        .iter()
        .filter(|a| since.is_none_or(|since| a.to >= since));
    for archived in reaching {
        history.extend(read_page(storage, entry, archived, packs).await?);
    }
    history.extend(entry.history.iter().cloned());
    history.retain(|item| since.is_none_or(|since| item.observed_at >= since));
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::super::tests::surface;
    use super::super::{Ledger, Update};
    use super::*;
    use crate::diff::{AuthState, Change, ChangeClass, Severity};
    use crate::platform::{LocalStorage, Record, Store};
    use chrono::TimeZone;
    use serde_json::json;

    const URL: &str = "https://a.example/mcp";

    fn day(n: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 6, 0, 0).unwrap() + chrono::Duration::days(n)
    }

    /// A description change of tool `t{n}`, its after large enough to be kept by digest on
    /// every third change.
    fn change(n: i64) -> Change {
        let long = if n % 3 == 0 {
            "x".repeat(600)
        } else {
            String::new()
        };
        Change::new(
            ChangeClass::ToolDescriptionChanged,
            Some(&format!("t{n}")),
            "description",
            Some(json!(format!("before {n}"))),
            Some(json!(format!("after {n} {long}"))),
            Severity::Low,
        )
    }

    /// A ledger of one server with `count` changes, one a day, in runs of `per_run`, each run
    /// sealed and written to `storage` as a run does.
    async fn ledger_of(storage: &LocalStorage, count: i64, per_run: i64, limit: usize) -> Ledger {
        let mut runs = vec![per_run; usize::try_from(count / per_run).unwrap()];
        if count % per_run > 0 {
            runs.push(count % per_run);
        }
        ledger_of_runs(storage, &runs, limit).await
    }

    /// A ledger of one server whose runs record `runs[i]` changes each, one change a day,
    /// each run sealed and written to `storage` as a run does.
    async fn ledger_of_runs(storage: &LocalStorage, runs: &[i64], limit: usize) -> Ledger {
        let s = surface(json!([{"name": "a", "inputSchema": {"type": "object"}}]));
        let mut n = 0;
        for size in runs {
            let mut ledger = Ledger::load(storage, "DEFAULT").await.unwrap();
            crate::chain::open(&mut ledger, None, &[]);
            let found: Vec<Change> = (n..n + size).map(change).collect();
            let auth = AuthState::default();
            if n == 0 {
                let update = Update::Readable {
                    previous: None,
                    surface_key: "surface-a".into(),
                    tool_digest: s.tool_digest(),
                    surface: &s,
                    era: crate::mcp::Era::Modern,
                    transport: "streamable-http".into(),
                    auth,
                    repeated_keys: Vec::new(),
                    tool_digests: None,
                };
                ledger.apply(URL, day(n), update, &found);
            } else {
                ledger.apply(URL, day(n), Update::AuthOnly { auth }, &found);
            }
            let record = ledger.seal_within(storage, limit).await.unwrap();
            ledger.write(storage, record).await.unwrap();
            n += size;
        }
        Ledger::load(storage, "DEFAULT").await.unwrap()
    }

    /// `ledger` with `edit` applied, sealed again as a forger who rewrites the index would
    /// (its chain opened before the edit, as the run that wrote it found it).
    fn forged(ledger: &Ledger, edit: impl FnOnce(&mut Entry)) -> Ledger {
        let mut forged = ledger.clone();
        crate::chain::open(&mut forged, None, &[]);
        edit(forged.servers.get_mut(URL).unwrap());
        crate::chain::seal(&mut forged);
        forged
    }

    fn index_value(ledger: &Ledger) -> Value {
        serde_json::to_value(ledger).unwrap()
    }

    async fn whole(storage: &LocalStorage, ledger: &Ledger) -> Vec<HistoryItem> {
        let mut packs = PackReader::default();
        full_history(storage, &ledger.servers[URL], &mut packs)
            .await
            .unwrap()
    }

    fn seqs(items: &[HistoryItem]) -> Vec<u64> {
        items.iter().map(|item| item.seq.unwrap()).collect()
    }

    #[tokio::test]
    async fn older_items_move_to_pages_and_every_change_reads_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of(&storage, 330, 30, usize::MAX).await;
        let entry = &ledger.servers[URL];
        assert!(entry.history.len() <= ARCHIVE_AT, "{}", entry.history.len());
        assert!(entry.archived.len() >= 2, "{:?}", entry.archived);
        assert!(entry.archived.iter().all(|a| a.count >= ARCHIVE_KEEP));
        crate::chain::check_index(&index_value(&ledger)).unwrap();
        let history = whole(&storage, &ledger).await;
        assert_eq!(seqs(&history), (1..=330).collect::<Vec<_>>());
        let mut packs = PackReader::default();
        for (n, item) in history.iter().enumerate() {
            let after = item.values.as_ref().unwrap().new.as_ref().unwrap();
            let value = super::super::resolve(&storage, &mut packs, after)
                .await
                .unwrap()
                .unwrap();
            assert!(value.as_str().unwrap().starts_with(&format!("after {n}")));
        }
        let named = ledger.value_packs();
        for archived in &entry.archived {
            assert!(named.contains(archived.page.pack.as_ref().unwrap()));
            assert!(archived.packs.iter().all(|pack| named.contains(pack)));
        }
        let since = history_since(&storage, entry, Some(day(300)), &mut packs)
            .await
            .unwrap();
        assert_eq!(seqs(&since), (301..=330).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_run_archives_only_a_full_page_of_earlier_items() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        // 30 earlier items and 80 new ones: over 100, but only 30 could move now.
        let ledger = ledger_of_runs(&storage, &[30, 80], usize::MAX).await;
        assert!(ledger.servers[URL].archived.is_empty());
        assert_eq!(ledger.servers[URL].history.len(), 110);
        // The next run's earlier items fill a page.
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of_runs(&storage, &[30, 80, 1], usize::MAX).await;
        let entry = &ledger.servers[URL];
        assert_eq!(entry.archived.len(), 1);
        assert_eq!(entry.archived[0].count, 61);
        assert_eq!(entry.history.len(), ARCHIVE_KEEP);
    }

    #[tokio::test]
    async fn an_index_too_large_archives_all_but_the_newest_before_it_drops_anything() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        // Room for the entry, a page reference and one item, not for 10 items.
        let ledger = ledger_of(&storage, 60, 60, 3_000).await;
        let entry = &ledger.servers[URL];
        // The newest change stays in the index: the fleet view shows it as the last change.
        assert_eq!(entry.history.len(), 1);
        assert_eq!(entry.history.last().and_then(|item| item.seq), Some(60));
        assert_eq!(
            seqs(&whole(&storage, &ledger).await),
            (1..=60).collect::<Vec<_>>()
        );
        crate::chain::check_index(&index_value(&ledger)).unwrap();
    }

    #[tokio::test]
    async fn an_index_too_large_with_every_item_archived_merges_its_pages() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let mut ledger = ledger_of(&storage, 330, 30, usize::MAX).await;
        crate::chain::open(&mut ledger, None, &[]);
        ledger.archive_beyond(0, 0, false);
        let all_archived = ledger.seal_within(&storage, usize::MAX).await.unwrap();
        let pages = ledger.servers[URL].archived.len();
        assert!(pages >= 4, "{pages}");
        // Room for one page reference, not for all of them.
        let limit = all_archived.bytes.len() - 600;
        let record = ledger.seal_within(&storage, limit).await.unwrap();
        assert!(record.bytes.len() <= limit);
        ledger.write(&storage, record).await.unwrap();
        let ledger = Ledger::load(&storage, "DEFAULT").await.unwrap();
        let entry = &ledger.servers[URL];
        assert_eq!(entry.archived.len(), 1);
        assert!(entry.history.is_empty());
        assert_eq!(
            seqs(&whole(&storage, &ledger).await),
            (1..=330).collect::<Vec<_>>()
        );
        crate::chain::check_index(&index_value(&ledger)).unwrap();
    }

    /// Rewrites the pack holding the page of `archived` with `edit` applied to its items (the
    /// pack's key and the page's digest stay as the index names them).
    async fn plant(storage: &LocalStorage, archived: &Archived, edit: impl Fn(&mut Vec<Value>)) {
        let key = archived.page.pack.clone().unwrap();
        let record = storage
            .get_record(Store::Ledger, &key)
            .await
            .unwrap()
            .unwrap();
        let mut pack = super::super::values::Pack::from_bytes(&key, &record.bytes).unwrap();
        let text = pack.values.get(&archived.page.sha256).unwrap();
        let mut items: Vec<Value> = serde_json::from_str(text).unwrap();
        edit(&mut items);
        let forged = crate::surface::canon::canonical_string(&Value::Array(items)).unwrap();
        pack.values.insert(archived.page.sha256.clone(), forged);
        let bytes = serde_json::to_vec(&pack).unwrap();
        storage
            .put_record(Store::Ledger, &key, Record::json(bytes))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_page_altered_in_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of(&storage, 230, 115, usize::MAX).await;
        let entry = &ledger.servers[URL];
        let first = entry.archived[0].clone();
        plant(&storage, &first, |items| {
            items[3]["severity"] = json!("critical")
        })
        .await;
        let error = whole_error(&storage, &ledger).await;
        assert!(error.contains("altered or planted"), "{error}");
    }

    async fn whole_error(storage: &LocalStorage, ledger: &Ledger) -> String {
        let mut packs = PackReader::default();
        full_history(storage, &ledger.servers[URL], &mut packs)
            .await
            .unwrap_err()
            .to_string()
    }

    #[tokio::test]
    async fn a_forged_page_with_its_own_digest_breaks_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of(&storage, 230, 115, usize::MAX).await;
        let archived = ledger.servers[URL].archived[0].clone();
        let mut packs = PackReader::default();
        let mut items = serde_json::to_value(
            read_page(&storage, &ledger.servers[URL], &archived, &mut packs)
                .await
                .unwrap(),
        )
        .unwrap();
        // Edited content, digest and pack made to agree, head sealed again: the links do not.
        items[5]["field"] = json!("inputSchema");
        let (sha256, text) = past::keyed(&items);
        let mut pending = Pending::default();
        pending.add(std::collections::BTreeMap::from([(sha256.clone(), text)]));
        let pack = pending.take_packs().remove(0);
        let (key, record) = pack.record();
        storage
            .put_record(Store::Ledger, &key, record)
            .await
            .unwrap();
        let ledger = forged(&ledger, |entry| {
            entry.archived[0].page = ValueRef {
                sha256,
                pack: Some(key),
            }
        });
        crate::chain::check_index(&index_value(&ledger)).unwrap();
        let error = whole_error(&storage, &ledger).await;
        assert!(error.contains("edited"), "{error}");
    }

    #[tokio::test]
    async fn a_page_cut_from_the_index_or_reordered_breaks_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of(&storage, 330, 30, usize::MAX).await;
        assert!(ledger.servers[URL].archived.len() >= 3);
        let forgeries: [fn(&mut Entry); 3] = [
            |entry| {
                entry.archived.remove(1);
            },
            |entry| entry.archived.swap(0, 1),
            |entry| {
                entry.archived.pop();
            },
        ];
        for forge in forgeries {
            let forged = forged(&ledger, forge);
            let error = crate::chain::check_index(&index_value(&forged)).unwrap_err();
            assert!(error.to_string().contains("archived"), "{error}");
        }
    }

    #[tokio::test]
    async fn retention_drops_whole_pages_and_a_rebased_chain_keeps_the_joined_ones() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let ledger = ledger_of(&storage, 330, 30, usize::MAX).await;
        let mut entry = ledger.servers[URL].clone();
        let pages = entry.archived.len();
        let cutoff = entry.archived[0].to + chrono::Duration::seconds(1);
        entry.retain_since(cutoff);
        assert_eq!(entry.archived.len(), pages - 1);
        let kept = forged(&ledger, |kept| *kept = entry);
        crate::chain::check_index(&index_value(&kept)).unwrap();

        // A run that finds a page cut out starts the chain again from the pages after the gap.
        let mut gap = ledger.clone();
        gap.servers.get_mut(URL).unwrap().archived.remove(1);
        crate::chain::open(&mut gap, None, &[]);
        assert_eq!(
            gap.chain.as_ref().unwrap().genesis.kind,
            crate::chain::GenesisKind::Rebased
        );
        crate::chain::seal(&mut gap);
        assert_eq!(
            gap.servers[URL].archived.len(),
            pages - 2,
            "only the pages after the gap"
        );
        crate::chain::check_index(&index_value(&gap)).unwrap();
    }
}
