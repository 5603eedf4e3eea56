//! From a sharded watch back to one run (`shards: 1`): before the run reads its ledger
//! `<ledger_name>`, the entries the shard ledgers hold for the servers of its fleet move into it,
//! with their history and chain, by the same crash-safe steps as any move ([`super::moves`]).
//!
//! The watch's own ledger is location [`PLAIN`] of the placement: a run with `shards: 1` places
//! its whole fleet there. It looks only at the round record `shards.<ledger_name>`: without one
//! (a watch that never had shards) nothing is read or written. With one whose placement already
//! has every server in the watch's own ledger, no move is pending and no earlier shard round
//! is kept, nothing is written either; the fleet is only gathered when something must move.

use chrono::Utc;

use super::moves::{self, Written};
use super::placement::{Placement, server_id};
use super::plan::PLAIN;
use super::round::{RETIRED, Round};
use crate::input::Input;
use crate::platform::Storage;
use crate::report::{ChainAnchor, ShardOutcome};
use crate::run::{self, RunError, RunOptions};

/// What moving the entries back into the watch's own ledger wrote.
#[derive(Debug, Clone, Default)]
pub struct Gathered {
    /// The `shards[]` items that witness the last write of each ledger the move wrote, other
    /// than the watch's own (the run writes that one next).
    pub retired: Vec<ShardOutcome>,
    /// The chain fields of the move's last write of the watch's own ledger, if it wrote it: the
    /// run that follows takes that write as witnessed, as a shard run takes a coordinator's
    /// moves ([`super::fence::RunStorage`]).
    pub own: Option<ChainAnchor>,
}

/// Moves the entries a sharded watch keeps in its shard ledgers into the watch's own ledger,
/// for the servers of `input`'s fleet; returns what the move wrote.
pub async fn gather_into_plain(
    storage: &impl Storage,
    options: &RunOptions,
    input: &Input,
) -> Result<Gathered, RunError> {
    let Some(round) = Round::load(storage, &input.ledger_name).await else {
        return Ok(Gathered::default());
    };
    let settled = round.moving_to.is_none()
        && round.of == 1
        && round.shards.is_empty()
        && round.placement.shards.values().all(|l| *l == PLAIN);
    if settled {
        return Ok(Gathered::default());
    }
    let client = run::http_client(input, options)?;
    let fleet = run::gather_fleet(storage, &client, input).await;
    let target = Placement {
        of: 1,
        shards: fleet
            .entries
            .iter()
            .map(|e| (server_id(e), PLAIN))
            .collect(),
    };
    tracing::info!(
        servers = target.shards.len(),
        "`shards` is 1: moving the sharded watch's entries into its own ledger"
    );
    let signer = input.ledger_signing_key.clone();
    let (settled, written) = moves::settle(storage, &input.ledger_name, round, target, signer)
        .await
        .map_err(|e| RunError::Setup(e.to_string()))?;
    // The round is over: a later sharded watch starts a new one (nothing of the earlier shards
    // is reused) from the placement the ledgers now agree with.
    Round::new(1, Utc::now(), Vec::new(), settled.placement)
        .save(storage, &input.ledger_name)
        .await?;
    Ok(Gathered {
        retired: retired(&input.ledger_name, &written),
        own: written.get(&input.ledger_name).cloned(),
    })
}

/// The `shards[]` items (status [`RETIRED`]) of the ledgers a move wrote whose runs do not write
/// them after it, other than the watch's own ledger `ledger_name`: their last write is the
/// move's, and these items witness it.
pub fn retired(ledger_name: &str, written: &Written) -> Vec<ShardOutcome> {
    written
        .iter()
        .filter(|(name, _)| name.as_str() != ledger_name)
        .map(|(name, anchor)| retired_item(ledger_name, name, anchor))
        .collect()
}

/// A `shards[]` item that witnesses the move's write of `ledger`.
pub fn retired_item(ledger_name: &str, ledger: &str, anchor: &ChainAnchor) -> ShardOutcome {
    let location = super::plan::location_of_ledger(ledger_name, ledger).unwrap_or(PLAIN);
    ShardOutcome {
        shard: location % super::plan::LEGACY_BASE,
        ledger_name: ledger.to_string(),
        servers: 0,
        status: RETIRED.to_string(),
        run_id: None,
        dataset_id: None,
        error: None,
        chain: anchor.clone(),
    }
}
