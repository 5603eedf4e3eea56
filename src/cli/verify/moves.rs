//! The cross-check of moves between shard ledgers: an entry that moved into the ledger
//! verified must have left its source ledger, and the source must say so.
//!
//! For each entry of the ledger whose chain has a `moved_in` item, the **last** one is checked
//! (docs/chain.md, "Moves between shard ledgers"): the item before it in the entry's `moves`
//! is the `moved_out` item naming this ledger, and the source ledger the `moved_in` names (same
//! store) keeps that same item in `chain.moved_out[url]`, byte for byte (as JSON values). When
//! it does not, the source is not the ledger the move left behind: an older copy of it was put
//! back (it then usually still holds the entry, so the server sits in two ledgers), or it was
//! deleted or rewritten. That is a break, with where and what.
//!
//! Earlier `moved_in` items of an entry are not checked: each was followed by a move out of
//! this ledger and a later move back into it, so the entry's stay they began has ended, and
//! their source may legitimately hold the entry again since (an entry moved back into a
//! ledger leaves that ledger's `moved_out`). A move whose source write an interrupted
//! coordinator has not made yet (killed between the copy and the removal) reads as a break
//! until the next run of the watch finishes it.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::chain::Break;
use crate::platform::{Storage, Store};

/// The source ledgers the last `moved_in` item of each entry of `index` names.
pub fn sources_named(index: &Value) -> BTreeSet<String> {
    entries(index)
        .filter_map(|(_, entry)| last_move_in(entry))
        .filter_map(|(_, moved_in)| moved_in.get("ledger")?.as_str().map(str::to_string))
        .collect()
}

/// Checks every entry of `index` (the ledger `ledger_name`) that moved in against its source
/// ledger, read with `source` (`None`: there is no such ledger); the first mismatch, in key
/// order, is the break.
pub fn check_moves(
    ledger_name: &str,
    index: &Value,
    source: impl Fn(&str) -> Option<Value>,
) -> Result<(), Break> {
    for (key, entry) in entries(index) {
        let Some((position, moved_in)) = last_move_in(entry) else {
            continue;
        };
        let location = format!("server {key}, moved_in item {}", moved_in["seq"]);
        let problem = |what: String| Break {
            location: location.clone(),
            problem: what,
        };
        let moves = entry["moves"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let moved_out = position.checked_sub(1).and_then(|p| moves.get(p));
        let Some(moved_out) = moved_out
            .filter(|m| m["event"] == "moved_out" && m["ledger"].as_str() == Some(ledger_name))
        else {
            return Err(problem(format!(
                "the moved_in item is not preceded by a moved_out item naming {ledger_name:?}"
            )));
        };
        let Some(from) = moved_in["ledger"].as_str() else {
            return Err(problem(
                "the moved_in item names no source ledger".to_string(),
            ));
        };
        let Some(source_index) = source(from) else {
            return Err(problem(format!(
                "the source ledger {from:?} it moved in from is not in the store"
            )));
        };
        let kept = source_index
            .pointer("/chain/moved_out")
            .and_then(|m| m.get(key));
        if kept == Some(moved_out) {
            continue;
        }
        let holds = source_index
            .get("servers")
            .and_then(|s| s.get(key))
            .is_some();
        let what = match (kept, holds) {
            (_, true) => format!(
                "the source ledger {from:?} still holds this entry and does not record its move \
                 out: the server is in two ledgers (an older copy of {from:?} put back, or a move \
                 not finished yet)"
            ),
            (None, false) => format!(
                "the source ledger {from:?} does not record the move out of this entry (its \
                 chain.moved_out has no item for it)"
            ),
            (Some(_), false) => format!(
                "the source ledger {from:?} records another move out of this entry than the one \
                 this ledger holds"
            ),
        };
        return Err(problem(what));
    }
    Ok(())
}

/// `verify`'s cross-check of a ledger's moves against their source ledgers in `storage`: a
/// mismatch makes the verdict broken (when no earlier check found a break); a source that
/// cannot be read or parsed counts as absent.
pub async fn cross_check(
    storage: &impl Storage,
    ledger_name: &str,
    index: &Value,
    verdict: &mut super::Verdict,
) {
    if verdict.status == super::Status::Broken {
        return;
    }
    let mut sources = std::collections::BTreeMap::new();
    for name in sources_named(index) {
        let read = storage.get_record(Store::Ledger, &name).await;
        let value = match read {
            Ok(Some(record)) => serde_json::from_slice::<Value>(&record.bytes).ok(),
            Ok(None) | Err(_) => None,
        };
        sources.insert(name, value);
    }
    let checked = check_moves(ledger_name, index, |name| {
        sources.get(name).cloned().flatten()
    });
    if let Err(found) = checked {
        verdict.status = super::Status::Broken;
        verdict.intact = false;
        verdict.found = Some(found);
    }
}

fn entries(index: &Value) -> impl Iterator<Item = (&String, &Value)> {
    index
        .get("servers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// The entry's last `moved_in` item, with its position in `moves`.
fn last_move_in(entry: &Value) -> Option<(usize, &Value)> {
    entry
        .get("moves")?
        .as_array()?
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m["event"] == "moved_in")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn out(to: &str, seq: u64) -> Value {
        json!({"observed_at": "2026-12-01T00:00:00Z", "event": "moved_out", "ledger": to, "seq": seq, "link": format!("l{seq}")})
    }

    fn moved_in(from: &str, seq: u64) -> Value {
        json!({"observed_at": "2026-12-01T00:00:00Z", "event": "moved_in", "ledger": from,
               "source": {"seq": 3, "head": "h"}, "seq": seq, "link": format!("l{seq}")})
    }

    fn destination() -> Value {
        json!({"servers": {
            "https://a/mcp": {"moves": [out("w-shard-2", 4), moved_in("w-shard-1", 5)]},
            "https://b/mcp": {"history": []},
        }})
    }

    #[test]
    fn a_move_checks_against_the_moved_out_item_its_source_keeps() {
        let source_after =
            json!({"servers": {}, "chain": {"moved_out": {"https://a/mcp": out("w-shard-2", 4)}}});
        let lookup = |ledger: &Value| {
            let ledger = ledger.clone();
            move |name: &str| (name == "w-shard-1").then(|| ledger.clone())
        };
        assert_eq!(
            sources_named(&destination()),
            BTreeSet::from(["w-shard-1".to_string()])
        );
        assert_eq!(
            check_moves("w-shard-2", &destination(), lookup(&source_after)),
            Ok(())
        );

        // (the source as found, what the break says)
        let older = json!({"servers": {"https://a/mcp": {}}, "chain": {}});
        let other =
            json!({"servers": {}, "chain": {"moved_out": {"https://a/mcp": out("w-shard-3", 4)}}});
        let none = json!({"servers": {}, "chain": {}});
        for (source, says) in [
            (older, "still holds this entry"),
            (other, "records another move out"),
            (none, "does not record the move out"),
        ] {
            let found = check_moves("w-shard-2", &destination(), lookup(&source)).unwrap_err();
            assert!(found.problem.contains(says), "{found:?}");
            assert!(found.location.contains("https://a/mcp"), "{found:?}");
        }
        let gone = check_moves("w-shard-2", &destination(), |_| None).unwrap_err();
        assert!(gone.problem.contains("not in the store"), "{gone:?}");
        // A moved_in the entry's moves do not prepare with a moved_out to this ledger.
        let forged = json!({"servers": {"https://a/mcp": {"moves": [moved_in("w-shard-1", 5)]}}});
        assert!(check_moves("w-shard-2", &forged, lookup(&source_after)).is_err());
    }

    #[test]
    fn only_the_last_move_in_is_checked() {
        // Into 2 from 1, back to 1, into 2 again: the source keeps the latest move out only.
        let entry = json!({"moves": [
            out("w-shard-2", 1), moved_in("w-shard-1", 2),
            out("w-shard-1", 3), moved_in("w-shard-2", 4),
            out("w-shard-2", 5), moved_in("w-shard-1", 6),
        ]});
        let index = json!({"servers": {"https://a/mcp": entry}});
        let source =
            json!({"servers": {}, "chain": {"moved_out": {"https://a/mcp": out("w-shard-2", 5)}}});
        assert_eq!(
            check_moves("w-shard-2", &index, |_| Some(source.clone())),
            Ok(())
        );
    }
}
