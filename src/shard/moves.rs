//! Moving ledger entries between shard ledgers when servers change shard, before the shards
//! run, so a moved server keeps its entry and history (it is `compared`, never `created`
//! again).
//!
//! The round record (`shards.<ledger_name>`) holds the placement the shard ledgers agree with.
//! A move goes in four steps, each one record write:
//!
//! ```text
//! 1. round record: moving_to = the new placement          (the intent)
//! 2. per destination shard: its ledger + the moved entries  (copy; the source is untouched)
//! 3. per source shard: its ledger - the moved entries       (only after every copy is saved)
//! 4. round record: placement = the new one, moving_to = none
//! ```
//!
//! Each ledger write continues that ledger's hash chain, and a move is an event of the moved
//! entry's own chain ([`crate::chain::moved`]): step 2 gives the copy a `moved_out` item (to the
//! destination) and a `moved_in` item (from the source, with the source's head the move started
//! from); step 3 removes the entry and keeps the same `moved_out` item in the source's
//! `chain.moved_out`.
//!
//! The placements' locations name ledgers ([`super::plan::location_ledger_name`]): a shard's,
//! the watch's own `<ledger_name>` ([`PLAIN`]: growing from `shards: 1` moves its entries out,
//! going back to 1 moves them in), or an earlier build's `-of-<n>` ledger. Before the moves are
//! worked out, the servers whose entries sit in the watch's own ledger or an `-of-<n>` ledger
//! and which the recorded placement does not name are added to it where they sit.
//!
//! Killed anywhere, the next run finds `moving_to` and does steps 2–4 again. Step 2 copies an
//! entry only into a ledger that lacks it (or holds an older one), and step 3 removes only from
//! the source, so doing them twice changes nothing. Before step 3 begins, every moved entry is in its destination;
//! an entry is never removed from its source before that. So no entry is lost, and once the
//! move is finished, none is held twice.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::placement::{Move, Placement, ServerId, server_id};
use super::plan::{LEGACY_BASE, PLAIN, location_ledger_name, location_of_ledger};
use super::round::Round;
use crate::chain::{self, LogItem, MoveItem, SigningSecret};
use crate::ledger::{Ledger, LedgerError};
use crate::platform::{Storage, StorageError, Store};
use crate::report::ChainAnchor;

/// The environment variable that makes a move abort after its `k`-th record write (tests use
/// it to kill the coordinator at every step; unset in real runs).
pub const CRASH_AT_ENV: &str = "MCP_LEDGER_TEST_CRASH_AT_MOVE_WRITE";

/// Why the entries could not be moved (the next run tries again).
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    /// A shard ledger could not be read or written.
    #[error("moving ledger entries between shards: {0}")]
    Ledger(#[from] LedgerError),
    /// The round record could not be written.
    #[error("moving ledger entries between shards: {0}")]
    Round(#[from] StorageError),
}

/// Counts the move's record writes, aborting the process at the one [`CRASH_AT_ENV`] names.
struct Writes {
    done: usize,
    crash_at: Option<usize>,
}

impl Writes {
    fn new() -> Writes {
        let crash_at = std::env::var(CRASH_AT_ENV)
            .ok()
            .and_then(|k| k.parse().ok());
        Writes { done: 0, crash_at }
    }

    fn wrote(&mut self) {
        self.done += 1;
        if self.crash_at == Some(self.done) {
            tracing::error!(write = self.done, "{CRASH_AT_ENV}: aborting");
            std::process::abort();
        }
    }
}

/// The chain fields of each ledger write a move made, by ledger name (the last write of each).
pub type Written = BTreeMap<String, ChainAnchor>;

/// What a move needs besides the placements: where, the key that signs the heads, and the time.
struct MoveContext<'a, S> {
    storage: &'a S,
    ledger_name: &'a str,
    signer: Option<Arc<SigningSecret>>,
    now: DateTime<Utc>,
}

/// Brings the shard ledgers of `ledger_name` to `target`: finishes a move an earlier run left
/// unfinished, then moves the entries of every server whose shard changed. Returns the round
/// record as saved (with `target` as its placement) and the chain fields of the ledger writes
/// it made; `signer` signs their heads as the shard runs' own.
pub async fn settle(
    storage: &impl Storage,
    ledger_name: &str,
    mut round: Round,
    target: Placement,
    signer: Option<Arc<SigningSecret>>,
) -> Result<(Round, Written), MoveError> {
    let context = MoveContext {
        storage,
        ledger_name,
        signer,
        now: Utc::now(),
    };
    let mut written = Written::new();
    let mut writes = Writes::new();
    if let Some(pending) = round.moving_to.take() {
        tracing::warn!("finishing the move of ledger entries an earlier run left unfinished");
        apply(
            &context,
            &round.placement,
            &pending,
            &mut writes,
            &mut written,
        )
        .await?;
        round.placement = pending;
        round.save(storage, ledger_name).await?;
        writes.wrote();
    }
    place_unplaced(&context, &mut round.placement).await?;
    let moves = round.placement.moves_to(&target);
    if moves.is_empty() {
        if round.placement != target {
            round.placement = target;
            round.save(storage, ledger_name).await?;
        }
        return Ok((round, written));
    }
    tracing::info!(
        servers = moves.len(),
        "moving ledger entries between shards"
    );
    round.moving_to = Some(target.clone());
    round.save(storage, ledger_name).await?;
    writes.wrote();
    apply(
        &context,
        &round.placement,
        &target,
        &mut writes,
        &mut written,
    )
    .await?;
    round.placement = target;
    round.moving_to = None;
    round.save(storage, ledger_name).await?;
    writes.wrote();
    Ok((round, written))
}

/// Adds to `placement` the servers whose entries sit in a ledger of the watch that no shard
/// keeps: the watch's own ledger `<ledger_name>` (where a run with `shards: 1` keeps them, at
/// [`PLAIN`]) and the `<ledger_name>-shard-<k>-of-<n>` ledgers of an earlier build. A server
/// the placement already names stays where it says. A server held by several of these ledgers
/// (an earlier build started new baselines when `shards` changed) is placed where its entry was
/// seen last; the others' copies are left as they are.
async fn place_unplaced<S: Storage>(
    context: &MoveContext<'_, S>,
    placement: &mut Placement,
) -> Result<(), MoveError> {
    let keys = context.storage.list_keys(Store::Ledger).await?;
    let mut found: BTreeMap<ServerId, (usize, DateTime<Utc>)> = BTreeMap::new();
    for key in &keys {
        let Some(location) = location_of_ledger(context.ledger_name, key)
            .filter(|l| *l == PLAIN || *l >= LEGACY_BASE)
        else {
            continue;
        };
        let ledger = Ledger::load(context.storage, key).await?;
        for (entry_key, entry) in &ledger.servers {
            let server = entry_server(entry_key);
            if placement.shards.contains_key(&server) {
                continue;
            }
            let seen = found.entry(server).or_insert((location, entry.last_seen));
            if seen.1 < entry.last_seen {
                *seen = (location, entry.last_seen);
            }
        }
    }
    if !found.is_empty() {
        tracing::info!(
            servers = found.len(),
            "entries found in the watch's own ledger or an earlier build's shard ledgers"
        );
    }
    for (server, (location, _)) in found {
        placement.shards.insert(server, location);
    }
    Ok(())
}

/// Steps 2 and 3: copies the moved servers' entries into their new shards' ledgers, then
/// removes them from the old ones.
async fn apply<S: Storage>(
    context: &MoveContext<'_, S>,
    from: &Placement,
    to: &Placement,
    writes: &mut Writes,
    written: &mut Written,
) -> Result<(), MoveError> {
    let moves = from.moves_to(to);
    let name = |location: usize| location_ledger_name(context.ledger_name, location);
    let mut sources: HashMap<usize, Ledger> = HashMap::new();
    // The `moved_out` item of each moved entry, as its destination holds it.
    let mut departures: HashMap<String, MoveItem> = HashMap::new();
    for (destination, incoming) in by_shard(&moves, |m| m.to) {
        let mut ledger = open(context, &name(destination)).await?;
        for (source, servers) in by_shard(&incoming, |m| m.from) {
            let held = match sources.entry(source) {
                std::collections::hash_map::Entry::Occupied(held) => held.into_mut(),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(open(context, &name(source)).await?)
                }
            };
            let ids: BTreeSet<&ServerId> = servers.iter().map(|m| &m.server).collect();
            arrive(&mut ledger, held, &ids, context.now, &mut departures);
        }
        save(context, &mut ledger, written).await?;
        writes.wrote();
    }
    for (source, outgoing) in by_shard(&moves, |m| m.from) {
        let mut ledger = open(context, &name(source)).await?;
        let leaving: BTreeMap<&ServerId, String> =
            outgoing.iter().map(|m| (&m.server, name(m.to))).collect();
        if depart(&mut ledger, &leaving, context.now, &mut departures) {
            save(context, &mut ledger, written).await?;
            writes.wrote();
        }
    }
    Ok(())
}

/// Copies the entries of servers `ids` from `source` into `destination`, each with its
/// `moved_out` and `moved_in` items, and notes each moved entry's `moved_out` item as the
/// destination holds it (also for an entry an earlier, interrupted move already copied).
fn arrive(
    destination: &mut Ledger,
    source: &Ledger,
    ids: &BTreeSet<&ServerId>,
    now: DateTime<Utc>,
    departures: &mut HashMap<String, MoveItem>,
) {
    let started_from = source.chain.as_ref().map_or(
        LogItem {
            seq: 0,
            head: chain::ZERO_HEAD.to_string(),
        },
        |c| LogItem {
            seq: c.opened.from.0,
            head: c.opened.from.1.clone(),
        },
    );
    let destination_name = destination.ledger_name.clone();
    for (key, entry) in source.servers.iter() {
        if !ids.contains(&entry_server(key)) {
            continue;
        }
        // An entry the destination already holds is kept, unless the source's was seen more
        // recently (a stale one left from an earlier stay of the server there).
        let stale = destination
            .servers
            .get(key)
            .is_none_or(|held| held.last_seen < entry.last_seen);
        if stale {
            let mut copy = entry.clone();
            chain::moved::move_out(&mut copy, &destination_name, now);
            let from = started_from.clone();
            chain::moved::move_in(&mut copy, &source.ledger_name, from, now);
            if let Some(chain) = destination.chain.as_mut() {
                chain.moved_out.remove(key);
            }
            destination.servers.insert(key.clone(), copy);
        }
        let held = destination.servers.get(key);
        if let Some(out) = held.and_then(|e| chain::moved::last_move_out(e, &destination_name)) {
            departures.insert(key.clone(), out.clone());
        }
    }
}

/// Removes the entries of the servers `leaving` (each with its destination ledger) from
/// `source`, keeping each one's `moved_out` item in `chain.moved_out`; returns whether any
/// entry left.
fn depart(
    source: &mut Ledger,
    leaving: &BTreeMap<&ServerId, String>,
    now: DateTime<Utc>,
    departures: &mut HashMap<String, MoveItem>,
) -> bool {
    let keys: Vec<String> = source
        .servers
        .keys()
        .filter(|key| leaving.contains_key(&entry_server(key)))
        .cloned()
        .collect();
    for key in &keys {
        let Some(mut entry) = source.servers.remove(key) else {
            continue;
        };
        let out = match departures.remove(key) {
            Some(out) => out,
            None => chain::moved::move_out(&mut entry, &leaving[&entry_server(key)], now),
        };
        if let Some(chain) = source.chain.as_mut() {
            chain.moved_out.insert(key.clone(), out);
        }
    }
    !keys.is_empty()
}

/// Loads a shard ledger and opens its chain for the next write.
async fn open<S: Storage>(context: &MoveContext<'_, S>, name: &str) -> Result<Ledger, MoveError> {
    let mut ledger = Ledger::load(context.storage, name).await?;
    chain::open(&mut ledger, context.signer.clone(), &[]);
    if let Some(found) = ledger.chain.as_ref().and_then(|c| c.opened.broken.clone()) {
        tracing::error!(ledger = name, %found, "LEDGER CHAIN BROKEN: a new chain starts with this move");
    }
    Ok(ledger)
}

/// Writes a shard ledger (its chain sealed) and notes the chain fields of the write; a break
/// an earlier write of this move found in that ledger stays named.
async fn save<S: Storage>(
    context: &MoveContext<'_, S>,
    ledger: &mut Ledger,
    written: &mut Written,
) -> Result<(), MoveError> {
    ledger.save(context.storage).await?;
    let mut anchor = chain::anchor(ledger);
    if let Some(earlier) = written.get(&ledger.ledger_name)
        && earlier.ledger_chain_break.is_some()
    {
        anchor.ledger_chain_status = earlier.ledger_chain_status.clone();
        anchor.ledger_chain_break = earlier.ledger_chain_break.clone();
    }
    written.insert(ledger.ledger_name.clone(), anchor);
    Ok(())
}

/// The server a ledger entry belongs to (its key is the URL, maybe with `#authenticated`).
fn entry_server(key: &str) -> ServerId {
    server_id(&Value::String(key.to_string()))
}

/// The moves grouped by a shard (their destination or their source), in shard order.
fn by_shard(moves: &[Move], shard: impl Fn(&Move) -> usize) -> BTreeMap<usize, Vec<Move>> {
    let mut groups: BTreeMap<usize, Vec<Move>> = BTreeMap::new();
    for m in moves {
        groups.entry(shard(m)).or_default().push(m.clone());
    }
    groups
}
