//! Where a watch's servers are: the ledgers a `ledger_name` stands for (its own index and, for
//! a watch with shards, every shard ledger), and the one ledger that holds a given server.

use serde_json::Value;

use super::{LedgerReader, ServeError, check_ledger_name, find_entry};
use crate::input::MAX_SHARDS;
use crate::ledger::Ledger;
use crate::platform::Storage;
use crate::shard::plan::{PLAIN, legacy_location, location_ledger_name, shard_of};
use crate::shard::round::Round;

impl<S: Storage> LedgerReader<S> {
    /// The ledgers `ledger_name` stands for: its index, and for a watch that has (or had)
    /// shards (a round record `shards.<ledger_name>`) the index of every shard ledger that has
    /// one, and of an earlier build's `-of-<n>` ledgers its round names. Nothing is an error
    /// here (nothing to answer about).
    pub(super) async fn ledgers(&self, ledger_name: &str) -> Result<Vec<Ledger>, ServeError> {
        check_ledger_name(ledger_name)?;
        let own = self.index(ledger_name).await?;
        let Some(round) = Round::load(&self.storage, ledger_name).await else {
            return own
                .map(|ledger| vec![ledger])
                .ok_or_else(|| ServeError::NoLedger(ledger_name.to_string()));
        };
        let mut ledgers: Vec<Ledger> = own.into_iter().collect();
        for location in watch_locations(&round) {
            ledgers.extend(
                self.index(&location_ledger_name(ledger_name, location))
                    .await?,
            );
        }
        Ok(ledgers)
    }

    /// The ledger that holds `server_url`: the index of `ledger_name`, or for a watch with
    /// shards the ledger the entry actually sits in: first where the round's placement (or
    /// the move it has pending) puts the server, then the watch's own ledger and the shard
    /// the URL ranks first, then every other ledger of the watch (a server placed in its next
    /// choice, or whose entry a crashed move left behind, is found too).
    pub(super) async fn ledger_of(
        &self,
        ledger_name: &str,
        server_url: &str,
    ) -> Result<Ledger, ServeError> {
        check_ledger_name(ledger_name)?;
        let no_server = || ServeError::NoServer {
            ledger_name: ledger_name.to_string(),
            server_url: server_url.to_string(),
        };
        let Some(round) = Round::load(&self.storage, ledger_name).await else {
            return self
                .index(ledger_name)
                .await?
                .ok_or_else(|| ServeError::NoLedger(ledger_name.to_string()));
        };
        let server = Value::String(server_url.to_string());
        let mut order: Vec<usize> = Vec::new();
        order.extend(round.moving_to.as_ref().and_then(|p| p.shard_of(&server)));
        order.extend(round.placement.shard_of(&server));
        order.push(PLAIN);
        order.push(shard_of(&server, round.of.max(1)));
        order.extend(watch_locations(&round));
        let mut tried = Vec::new();
        for location in order {
            if tried.contains(&location) {
                continue;
            }
            tried.push(location);
            let name = location_ledger_name(ledger_name, location);
            if let Some(ledger) = self.index(&name).await?
                && find_entry(&ledger, server_url).is_ok()
            {
                return Ok(ledger);
            }
        }
        Err(no_server())
    }
}

/// The shard ledgers a watch with a round record may have, besides its own: every shard
/// number a watch can have, and an earlier build's `-of-<n>` ledgers when its round record is
/// one of that build's (no placement).
fn watch_locations(round: &Round) -> Vec<usize> {
    let mut locations: Vec<usize> = (1..=MAX_SHARDS).collect();
    if round.placement.of == 0 {
        locations.extend((1..=round.of).map(|k| legacy_location(k, round.of)));
    }
    locations.extend(
        round
            .placement
            .shards
            .values()
            .filter(|l| **l > MAX_SHARDS)
            .copied(),
    );
    locations.sort_unstable();
    locations.dedup();
    locations
}
