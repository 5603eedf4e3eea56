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
//! Killed anywhere, the next run finds `moving_to` and does steps 2–4 again. Step 2 copies an
//! entry only into a ledger that lacks it (or holds an older one), and step 3 removes only from
//! the source, so doing them twice changes nothing. Before step 3 begins, every moved entry is in its destination;
//! an entry is never removed from its source before that. So no entry is lost, and once the
//! move is finished, none is held twice.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::placement::{Move, Placement, ServerId, server_id};
use super::plan::shard_ledger_name;
use super::round::Round;
use crate::ledger::{Ledger, LedgerError};
use crate::platform::StorageError;

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

/// Brings the shard ledgers of `ledger_name` to `target`: finishes a move an earlier run left
/// unfinished, then moves the entries of every server whose shard changed. Returns the round
/// record as saved (with `target` as its placement).
pub async fn settle(
    storage: &impl crate::platform::Storage,
    ledger_name: &str,
    mut round: Round,
    target: Placement,
) -> Result<Round, MoveError> {
    let mut writes = Writes::new();
    if let Some(pending) = round.moving_to.take() {
        tracing::warn!("finishing the move of ledger entries an earlier run left unfinished");
        apply(
            storage,
            ledger_name,
            &round.placement,
            &pending,
            &mut writes,
        )
        .await?;
        round.placement = pending;
        round.save(storage, ledger_name).await?;
        writes.wrote();
    }
    let moves = round.placement.moves_to(&target);
    if moves.is_empty() {
        if round.placement != target {
            round.placement = target;
            round.save(storage, ledger_name).await?;
        }
        return Ok(round);
    }
    tracing::info!(
        servers = moves.len(),
        "moving ledger entries between shards"
    );
    round.moving_to = Some(target.clone());
    round.save(storage, ledger_name).await?;
    writes.wrote();
    apply(storage, ledger_name, &round.placement, &target, &mut writes).await?;
    round.placement = target;
    round.moving_to = None;
    round.save(storage, ledger_name).await?;
    writes.wrote();
    Ok(round)
}

/// Steps 2 and 3: copies the moved servers' entries into their new shards' ledgers, then
/// removes them from the old ones.
async fn apply(
    storage: &impl crate::platform::Storage,
    ledger_name: &str,
    from: &Placement,
    to: &Placement,
    writes: &mut Writes,
) -> Result<(), MoveError> {
    let moves = from.moves_to(to);
    let name = |shard: usize| shard_ledger_name(ledger_name, shard, to.of);
    let mut sources: HashMap<usize, Ledger> = HashMap::new();
    for (destination, incoming) in by_shard(&moves, |m| m.to) {
        let mut ledger = Ledger::load(storage, &name(destination)).await?;
        for (source, servers) in by_shard(&incoming, |m| m.from) {
            let held = match sources.entry(source) {
                std::collections::hash_map::Entry::Occupied(held) => held.into_mut(),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(Ledger::load(storage, &name(source)).await?)
                }
            };
            let ids: BTreeSet<&ServerId> = servers.iter().map(|m| &m.server).collect();
            for (key, entry) in held.servers.iter() {
                // An entry the destination already holds is kept, unless the source's was seen
                // more recently (a stale one left from an earlier stay of the server there).
                let stale = ledger
                    .servers
                    .get(key)
                    .is_none_or(|held| held.last_seen < entry.last_seen);
                if ids.contains(&entry_server(key)) && stale {
                    ledger.servers.insert(key.clone(), entry.clone());
                }
            }
        }
        ledger.save(storage).await?;
        writes.wrote();
    }
    for (source, outgoing) in by_shard(&moves, |m| m.from) {
        let mut ledger = Ledger::load(storage, &name(source)).await?;
        let ids: BTreeSet<&ServerId> = outgoing.iter().map(|m| &m.server).collect();
        let before = ledger.servers.len();
        ledger
            .servers
            .retain(|key, _| !ids.contains(&entry_server(key)));
        if ledger.servers.len() != before {
            ledger.save(storage).await?;
            writes.wrote();
        }
    }
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
