//! Which shard each server of a sharded watch belongs to. Pure: no I/O.
//!
//! Every server ranks the shards by a rendezvous score (a hash of the server's key and the
//! shard's number) and goes to the best-ranked shard that still has room. Servers are placed
//! in the order of their key's hash, so the result depends only on the fleet and the number of
//! shards. No shard holds more than one run accepts ([`MAX_SERVERS`]), so a fleet whose URLs
//! all rank one shard first still spreads over as many shards as it needs, and every fleet the
//! input accepts (at most `shards × MAX_SERVERS` entries) finds room.
//!
//! Rendezvous ranking keeps moves few: a new shard takes about `1/N` of the servers from the
//! others, a removed shard's servers spread over the rest, and the servers of untouched shards
//! stay where they are. Only a shard that is full sends servers to their next choice.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::input::MAX_SERVERS;

/// The id of a server in a placement: the first 8 bytes of SHA-256 of its key, in hex.
pub type ServerId = String;

/// Where each server of a sharded watch is: shard (1 to `of`) by server id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The number of shards.
    pub of: usize,
    /// The shard of each server.
    pub shards: BTreeMap<ServerId, usize>,
}

/// One server whose ledger entries change shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The server.
    pub server: ServerId,
    /// The shard whose ledger holds its entries now.
    pub from: usize,
    /// The shard whose ledger will hold them.
    pub to: usize,
}

/// The key a server entry is placed by: its normalized URL (fragment dropped, so a ledger
/// entry's `#authenticated` key has the same one), or its JSON text when it is no URL.
pub fn server_key(entry: &Value) -> String {
    match entry {
        Value::String(text) => {
            crate::targets::normalized_url(text).unwrap_or_else(|| text.trim().to_string())
        }
        other => other.to_string(),
    }
}

/// The id of the server an entry (or a ledger entry's key) names.
pub fn server_id(entry: &Value) -> ServerId {
    hex::encode(&Sha256::digest(server_key(entry).as_bytes())[..8])
}

/// The rendezvous score of `server` for `shard`: higher ranks first.
fn score(server: &str, shard: usize) -> u64 {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update(shard.to_be_bytes());
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The shard `server` ranks first of `of`.
pub fn preferred_shard(server: &str, of: usize) -> usize {
    (1..=of.max(1))
        .max_by_key(|shard| score(server, *shard))
        .unwrap_or(1)
}

/// Places the fleet's entries in `of` shards. Entries of one server (two spellings of one
/// URL) stay together.
pub fn place(entries: &[Value], of: usize) -> Placement {
    let of = of.max(1);
    let mut weights: HashMap<ServerId, usize> = HashMap::new();
    for entry in entries {
        *weights.entry(server_id(entry)).or_default() += 1;
    }
    let mut servers: Vec<(ServerId, usize)> = weights.into_iter().collect();
    servers.sort();
    let room = MAX_SERVERS;
    let mut load = vec![0usize; of + 1];
    let mut shards = BTreeMap::new();
    for (server, weight) in servers {
        let mut ranked: Vec<(std::cmp::Reverse<u64>, usize)> = (1..=of)
            .map(|shard| (std::cmp::Reverse(score(&server, shard)), shard))
            .collect();
        ranked.sort_unstable();
        // The best-ranked shard with room; when none has room for the whole group (only a
        // server listed many times over), the least loaded one.
        let shard = ranked
            .iter()
            .map(|(_, shard)| *shard)
            .find(|shard| load[*shard] + weight <= room)
            .or_else(|| (1..=of).min_by_key(|shard| load[*shard]))
            .unwrap_or(1);
        load[shard] += weight;
        shards.insert(server, shard);
    }
    Placement { of, shards }
}

impl Placement {
    /// The shard of an entry, if it is placed.
    pub fn shard_of(&self, entry: &Value) -> Option<usize> {
        self.shards.get(&server_id(entry)).copied()
    }

    /// The servers whose entries move when `next` replaces this placement: those placed in
    /// both, in another shard. Servers new in `next` have no entries yet; servers not in
    /// `next` keep theirs where they are.
    pub fn moves_to(&self, next: &Placement) -> Vec<Move> {
        next.shards
            .iter()
            .filter_map(|(server, to)| {
                let from = *self.shards.get(server)?;
                (from != *to).then(|| Move {
                    server: server.clone(),
                    from,
                    to: *to,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn urls(n: usize, salt: &str) -> Vec<Value> {
        (0..n)
            .map(|i| json!(format!("https://{salt}{i}.example.com/mcp")))
            .collect()
    }

    fn loads(placement: &Placement) -> Vec<usize> {
        let mut loads = vec![0; placement.of];
        for shard in placement.shards.values() {
            loads[shard - 1] += 1;
        }
        loads
    }

    /// URLs that all rank shard 1 of `of` first: the most skewed fleet a hash split can get.
    fn skewed(n: usize, of: usize) -> Vec<Value> {
        (0..)
            .map(|i| json!(format!("https://skew{i}.example.com/mcp")))
            .filter(|entry| preferred_shard(&server_id(entry), of) == 1)
            .take(n)
            .collect()
    }

    #[test]
    fn no_shard_holds_more_than_one_run_accepts_whatever_the_urls() {
        // (servers, shards)
        let cases = [(2000, 2), (1001, 2), (3000, 3), (1500, 2), (5, 4), (1, 1)];
        for (n, of) in cases {
            for fleet in [urls(n, "a"), skewed(n, of)] {
                let placement = place(&fleet, of);
                assert_eq!(placement.shards.len(), n);
                let loads = loads(&placement);
                assert!(
                    loads.iter().all(|l| *l <= MAX_SERVERS),
                    "{n} in {of}: {loads:?}"
                );
            }
        }
        assert_eq!(loads(&place(&skewed(2000, 2), 2)), vec![1000, 1000]);
    }

    #[test]
    fn growing_moves_only_servers_to_the_new_shards() {
        let fleet = urls(3000, "g");
        let before = place(&fleet[..1000], 1);
        let after = place(&fleet, 3);
        let moves = before.moves_to(&after);
        assert!(moves.iter().all(|m| m.from == 1 && m.to != 1));
        // About two thirds of the old servers rank a new shard first.
        assert!((500..800).contains(&moves.len()), "{}", moves.len());

        // Adding a shard to a fleet with room moves about 1/N of it, all to the new shard.
        let three = place(&fleet[..2400], 3);
        let four = place(&fleet[..2400], 4);
        let moves = three.moves_to(&four);
        assert!((450..750).contains(&moves.len()), "{}", moves.len());
        assert!(moves.iter().all(|m| m.to == 4));
    }

    #[test]
    fn entries_of_one_server_stay_together() {
        let fleet = vec![
            json!("https://a.example/mcp"),
            json!("https://A.EXAMPLE/mcp#x"),
            json!({"not": "a url"}),
        ];
        let placement = place(&fleet, 5);
        assert_eq!(placement.shards.len(), 2);
        assert_eq!(placement.shard_of(&fleet[0]), placement.shard_of(&fleet[1]));
        assert_eq!(
            server_id(&json!("https://a.example/mcp#authenticated")),
            server_id(&fleet[0])
        );
    }

    #[test]
    fn moves_name_only_servers_placed_in_both() {
        let placement = |pairs: &[(&str, usize)]| Placement {
            of: 3,
            shards: pairs.iter().map(|(s, k)| (s.to_string(), *k)).collect(),
        };
        let old = placement(&[("a", 1), ("b", 2), ("gone", 3)]);
        let new = placement(&[("a", 1), ("b", 3), ("new", 2)]);
        assert_eq!(
            old.moves_to(&new),
            vec![Move {
                server: "b".into(),
                from: 2,
                to: 3
            }]
        );
    }
}
