//! Pure decisions of a sharded watch: which shard a server belongs to, what each shard's input
//! is, and how the budget is shared. No I/O.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::placement::{self, Placement};
use crate::input::{AUTO_SHARDS, MAX_SERVERS, MAX_SHARDS};
use crate::platform::Usd;
use crate::registry::Fleet;

/// One shard of a sharded watch: its number, its ledger and its server entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardJob {
    /// 1 to `of`.
    pub shard: usize,
    /// The number of shards.
    pub of: usize,
    /// The ledger the shard keeps.
    pub ledger_name: String,
    /// Its server entries, in fleet order.
    pub entries: Vec<Value>,
}

impl ShardJob {
    /// A digest of the shard's entries: an interrupted round's result for this shard is reused
    /// only while the shard still holds exactly these servers.
    pub fn entries_digest(&self) -> String {
        let mut hasher = Sha256::new();
        for entry in &self.entries {
            hasher.update(entry.to_string().as_bytes());
            hasher.update(b"\n");
        }
        hex(&hasher.finalize())
    }
}

/// The ledger of shard `shard` of the watch `ledger_name`: `<ledger_name>-shard-<k>`. It does
/// not depend on the number of shards (`_of`, kept for callers that know it), so a shard keeps
/// its ledger, and its servers their history, when the watch grows or shrinks.
pub fn shard_ledger_name(ledger_name: &str, shard: usize, _of: usize) -> String {
    format!("{ledger_name}-shard-{shard}")
}

/// The location of the watch's own ledger, `<ledger_name>`, in a placement: where a run with
/// `shards: 1` keeps every entry. For moves it is one more shard ledger, so growing from one
/// run to shards (and back) moves entries like any change of shards.
pub const PLAIN: usize = 0;

/// Locations at or above this one name a ledger of an earlier build,
/// `<ledger_name>-shard-<k>-of-<n>`, as `n * LEGACY_BASE + k` ([`legacy_location`]).
pub const LEGACY_BASE: usize = 100;

/// The location of the earlier build's ledger `<ledger_name>-shard-<k>-of-<n>`.
pub fn legacy_location(shard: usize, of: usize) -> usize {
    of * LEGACY_BASE + shard
}

/// The ledger a placement's location names: [`PLAIN`] is `<ledger_name>`, a shard `k` is
/// `<ledger_name>-shard-<k>` and a [`legacy_location`] is `<ledger_name>-shard-<k>-of-<n>`.
pub fn location_ledger_name(ledger_name: &str, location: usize) -> String {
    match location {
        PLAIN => ledger_name.to_string(),
        legacy if legacy >= LEGACY_BASE => format!(
            "{ledger_name}-shard-{}-of-{}",
            legacy % LEGACY_BASE,
            legacy / LEGACY_BASE
        ),
        shard => shard_ledger_name(ledger_name, shard, 0),
    }
}

/// The location of `key` in the watch `ledger_name`, when it names one of its ledgers (the
/// watch's own, a shard's, or an earlier build's shard ledger).
pub fn location_of_ledger(ledger_name: &str, key: &str) -> Option<usize> {
    if key == ledger_name {
        return Some(PLAIN);
    }
    let number = |text: &str| -> Option<usize> {
        (!text.is_empty() && text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    let rest = key.strip_prefix(ledger_name)?.strip_prefix("-shard-")?;
    match rest.split_once("-of-") {
        Some((k, n)) => {
            let (k, n) = (number(k)?, number(n)?);
            (1..=n).contains(&k).then(|| legacy_location(k, n))
        }
        None => number(rest).filter(|k| (1..LEGACY_BASE).contains(k)),
    }
}

/// The shard (1 to `of`) a server entry ranks first ([`placement::preferred_shard`]): where
/// it is unless that shard was full when it was placed ([`placement::place`]).
pub fn shard_of(entry: &Value, of: usize) -> usize {
    placement::preferred_shard(&placement::server_id(entry), of)
}

/// Splits the fleet's entries into the shards of `placement` (every shard is listed, even an
/// empty one).
pub fn split(fleet: &Fleet, placement: &Placement, ledger_name: &str) -> Vec<ShardJob> {
    let of = placement.of;
    let mut jobs: Vec<ShardJob> = (1..=of)
        .map(|shard| ShardJob {
            shard,
            of,
            ledger_name: shard_ledger_name(ledger_name, shard, of),
            entries: Vec::new(),
        })
        .collect();
    for entry in &fleet.entries {
        let shard = placement.shard_of(entry).unwrap_or(1).clamp(1, of);
        jobs[shard - 1].entries.push(entry.clone());
    }
    jobs
}

/// The number of shards of a watch: `requested`, or for [`AUTO_SHARDS`] the fewest that hold
/// a fleet of `entries` ([`MAX_SERVERS`] each), at least one.
pub fn shard_count(requested: usize, entries: usize) -> usize {
    if requested == AUTO_SHARDS {
        entries.div_ceil(MAX_SERVERS).clamp(1, MAX_SHARDS)
    } else {
        requested
    }
}

/// The INPUT of a shard's run: the coordinator's input as given (secret fields stay as they
/// were, encrypted on the platform), with the shard's servers and ledger, no registry search
/// no further sharding and no `notify` (the coordinator announces the merged changes).
pub fn shard_input(coordinator_input: &Value, job: &ShardJob) -> Value {
    let mut input = coordinator_input
        .as_object()
        .cloned()
        .unwrap_or_else(Map::new);
    input.remove("registry");
    input.remove("shards");
    // The coordinator announces the merged changes once; a shard run tells no one.
    input.remove("notify");
    input.insert("servers".to_string(), Value::Array(job.entries.clone()));
    input.insert(
        "ledger_name".to_string(),
        Value::String(job.ledger_name.clone()),
    );
    Value::Object(input)
}

/// Each of `count` shard runs' maximum total charge: an equal share of what the coordinator
/// has left, rounded down to the nano-dollar, so the shares never add up to more than that.
/// Unlimited (`None`) stays unlimited.
pub fn budget_shares(remaining: Option<Usd>, count: usize) -> Vec<Option<Usd>> {
    let share = remaining.map(|usd| Usd::from_nanos(usd.nanos() / count.max(1) as u64));
    vec![share; count]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fleet(urls: &[String]) -> Fleet {
        let entries: Vec<Value> = urls.iter().map(|u| json!(u)).collect();
        Fleet::explicit(&entries)
    }

    fn urls(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("https://mcp{i}.example.com/mcp"))
            .collect()
    }

    fn split_in(fleet: &Fleet, of: usize, name: &str) -> Vec<ShardJob> {
        split(fleet, &placement::place(&fleet.entries, of), name)
    }

    #[test]
    fn every_entry_lands_in_exactly_one_shard_and_shards_are_balanced() {
        let jobs = split_in(&fleet(&urls(1000)), 4, "watch");
        assert_eq!(jobs.len(), 4);
        assert_eq!(jobs.iter().map(|j| j.entries.len()).sum::<usize>(), 1000);
        for job in &jobs {
            assert!(
                (200..300).contains(&job.entries.len()),
                "{}",
                job.entries.len()
            );
            assert_eq!(job.ledger_name, format!("watch-shard-{}", job.shard));
        }
    }

    #[test]
    fn a_server_keeps_its_shard_when_the_fleet_grows() {
        let small = split_in(&fleet(&urls(100)), 3, "w");
        let large = split_in(&fleet(&urls(700)), 3, "w");
        for (before, after) in small.iter().zip(&large) {
            for entry in &before.entries {
                assert!(after.entries.contains(entry), "{entry} moved");
            }
        }
    }

    #[test]
    fn locations_name_the_watchs_ledgers_and_back() {
        for location in [
            PLAIN,
            1,
            7,
            20,
            legacy_location(2, 3),
            legacy_location(20, 20),
        ] {
            let name = location_ledger_name("w", location);
            assert_eq!(location_of_ledger("w", &name), Some(location), "{name}");
        }
        assert_eq!(location_ledger_name("w", PLAIN), "w");
        assert_eq!(location_ledger_name("w", 3), "w-shard-3");
        assert_eq!(
            location_ledger_name("w", legacy_location(2, 3)),
            "w-shard-2-of-3"
        );
        for other in [
            "w-shard-",
            "w-shard-x",
            "w-shard-4-of-3",
            "wx",
            "w-shard-1-of-",
            "v-shard-1",
        ] {
            assert_eq!(location_of_ledger("w", other), None, "{other}");
        }
    }

    #[test]
    fn equal_urls_share_a_shard_whatever_their_spelling() {
        let cases = [
            ("https://a.example/mcp", "https://A.EXAMPLE/mcp"),
            ("https://a.example/mcp", "https://a.example:443/mcp"),
            ("https://a.example/mcp", " https://a.example/mcp#x"),
        ];
        for (a, b) in cases {
            for of in 2..=20 {
                assert_eq!(shard_of(&json!(a), of), shard_of(&json!(b), of), "{a} {b}");
            }
        }
        assert!((1..=5).contains(&shard_of(&json!({"not": "a url"}), 5)));
        assert_eq!(shard_of(&json!("anything"), 1), 1);
    }

    #[test]
    fn shard_inputs_keep_everything_but_the_fleet_fields() {
        let coordinator = json!({
            "servers": ["https://a.example/mcp"],
            "registry": {"search": "x"},
            "shards": 3,
            "ledger_name": "w",
            "concurrency": 7,
            "server_credentials": "ENCRYPTED_JSON:abc:def",
            "notify": "ENCRYPTED_JSON:ghi:jkl",
        });
        let job = ShardJob {
            shard: 2,
            of: 3,
            ledger_name: "w-shard-2-of-3".into(),
            entries: vec![json!("https://b.example/mcp")],
        };
        assert_eq!(
            shard_input(&coordinator, &job),
            json!({
                "servers": ["https://b.example/mcp"],
                "ledger_name": "w-shard-2-of-3",
                "concurrency": 7,
                "server_credentials": "ENCRYPTED_JSON:abc:def",
            })
        );
    }

    #[test]
    fn automatic_shards_are_the_fewest_that_hold_the_fleet() {
        // (requested, entries, shards)
        let cases = [
            (0, 0, 1),
            (0, 1, 1),
            (0, 1000, 1),
            (0, 1001, 2),
            (0, 3000, 3),
            (0, 20_000, 20),
            (3, 10, 3),
            (1, 1000, 1),
        ];
        for (requested, entries, shards) in cases {
            assert_eq!(
                shard_count(requested, entries),
                shards,
                "{requested} {entries}"
            );
        }
    }

    #[test]
    fn budget_shares_never_add_up_to_more_than_the_remainder() {
        let cases: [(u64, usize); 6] = [
            (0, 3),
            (1, 3),
            (1_000_000_000, 3),
            (999_999_999, 7),
            (5_000_000_000, 20),
            (u64::MAX, 20),
        ];
        for (nanos, count) in cases {
            let shares = budget_shares(Some(Usd::from_nanos(nanos)), count);
            assert_eq!(shares.len(), count);
            let total: u128 = shares.iter().map(|s| u128::from(s.unwrap().nanos())).sum();
            assert!(total <= u128::from(nanos), "{nanos} {count}");
            assert!(
                u128::from(nanos) - total < count as u128,
                "{nanos} {count}: waste"
            );
        }
        assert_eq!(budget_shares(None, 4), vec![None; 4]);
    }

    #[test]
    fn the_entries_digest_follows_the_entries() {
        let job = |entries: Vec<Value>| ShardJob {
            shard: 1,
            of: 2,
            ledger_name: "w".into(),
            entries,
        };
        let a = job(vec![json!("https://a.example/mcp")]);
        let b = job(vec![json!("https://b.example/mcp")]);
        assert_eq!(a.entries_digest(), a.clone().entries_digest());
        assert_ne!(a.entries_digest(), b.entries_digest());
    }
}
