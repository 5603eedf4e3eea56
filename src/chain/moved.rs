//! Moves of an entry between the ledgers of a sharded watch, as events of the entry's chain.
//!
//! When the coordinator moves a server's entry from one shard ledger to another, the entry's
//! chain gets two items of its own, after its history items: `moved_out` (naming the ledger it
//! goes to) and `moved_in` (naming the ledger it came from, and that ledger's write the move
//! started from). They sit in the entry's `moves`, numbered in the same sequence as its history
//! items and linked the same way ([`super::item_link`]). The source ledger keeps the
//! `moved_out` item in `chain.moved_out`, so a verifier reading it can tell an entry that moved
//! (named there) from one that was deleted (named nowhere).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{LogItem, MoveEvent, MoveItem, item_link};
use crate::ledger::Entry;

/// Appends `item` to `entry`'s chain, numbered and linked after its last item; returns it.
fn append(entry: &mut Entry, mut item: MoveItem) -> MoveItem {
    let prev = entry.chain_head();
    item.seq = prev.seq + 1;
    item.link = String::new();
    let value = serde_json::to_value(&item).unwrap_or(Value::Null);
    item.link = item_link(&prev.link, &value);
    entry.moves.push(item.clone());
    item
}

fn item(event: MoveEvent, ledger: &str, source: Option<LogItem>, now: DateTime<Utc>) -> MoveItem {
    MoveItem {
        observed_at: now,
        event,
        ledger: ledger.to_string(),
        source,
        seq: 0,
        link: String::new(),
    }
}

/// Records that `entry` leaves its ledger for ledger `to`; returns the item, which the source
/// ledger keeps in `chain.moved_out`.
pub fn move_out(entry: &mut Entry, to: &str, now: DateTime<Utc>) -> MoveItem {
    append(entry, item(MoveEvent::MovedOut, to, None, now))
}

/// Records that `entry` came from ledger `from`, whose write `source` the move started from.
pub fn move_in(entry: &mut Entry, from: &str, source: LogItem, now: DateTime<Utc>) -> MoveItem {
    append(entry, item(MoveEvent::MovedIn, from, Some(source), now))
}

/// Links every item of `entry` again from its server's genesis (or from the end of its
/// archived pages, which their digests keep as they are): the history items first, then the
/// moves (a chain started again from the state a run found).
pub fn relink(entry: &mut Entry) {
    entry.history_base = entry.keep_joined_archive();
    for item in &mut entry.history {
        item.seq = None;
        item.link = None;
    }
    let base = entry.history_base.as_ref().map_or(0, |base| base.seq);
    // Moves among the archived pages stay with them; the later ones are linked again.
    let (archived, later): (Vec<MoveItem>, Vec<MoveItem>) = std::mem::take(&mut entry.moves)
        .into_iter()
        .partition(|moved| moved.seq <= base);
    entry.moves = archived;
    entry.link_items();
    for moved in later {
        append(entry, moved);
    }
}

/// The entry's last `moved_out` item to ledger `to`, if any.
pub fn last_move_out<'a>(entry: &'a Entry, to: &str) -> Option<&'a MoveItem> {
    entry
        .moves
        .iter()
        .rev()
        .find(|m| m.event == MoveEvent::MovedOut && m.ledger == to)
}

/// The stored items of an entry's chain after `base_seq`, in chain order: its history items
/// and its moves, each list in its stored order, merged by sequence number (so a reordered
/// list stays visible as such).
pub(super) fn chain_items<'a>(entry: &'a Value, base_seq: u64) -> Vec<&'a Value> {
    let list = |key: &str| -> &'a [Value] {
        entry
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let history = list("history");
    let seq = |v: &Value| v.get("seq").and_then(Value::as_u64);
    // Moves dropped from the front with the history (at or before the base) are not compared.
    let moves: Vec<&Value> = list("moves")
        .iter()
        .filter(|m| seq(m).is_none_or(|s| s > base_seq))
        .collect();
    let (mut h, mut m) = (0, 0);
    let mut merged = Vec::with_capacity(history.len() + moves.len());
    while h < history.len() || m < moves.len() {
        let take_move = match (history.get(h), moves.get(m)) {
            (Some(item), Some(moved)) => seq(moved) < seq(item),
            (None, Some(_)) => true,
            _ => false,
        };
        if take_move {
            merged.push(moves[m]);
            m += 1;
        } else {
            merged.push(&history[h]);
            h += 1;
        }
    }
    merged
}
