//! The names of the ledger store's records: which keys are ledger indexes and which belong
//! to surface records, value packs, insight caches, shard rounds or status records (and so
//! are refused as ledger names).

use crate::server_status::STATUS_KEY_PREFIX as STATUS_PREFIX;

/// Key prefix of the stored surface records.
pub const SURFACE_KEY_PREFIX: &str = "surface-";
/// Key prefix of the insight cache records ([`crate::insight`]).
pub const INSIGHT_KEY_PREFIX: &str = "insight.";
/// Key prefix of the round records of sharded watches ([`crate::shard`]).
pub const SHARDS_KEY_PREFIX: &str = "shards.";

/// Whether `ledger_name` would share its key with a surface, insight, shard-round or status
/// record of the same store; such names are refused as input.
pub fn is_reserved_name(ledger_name: &str) -> bool {
    let prefixes = [
        SURFACE_KEY_PREFIX,
        INSIGHT_KEY_PREFIX,
        SHARDS_KEY_PREFIX,
        STATUS_PREFIX,
    ];
    prefixes
        .iter()
        .any(|prefix| ledger_name.starts_with(prefix))
}

/// The ledger index names among the keys of the ledger store: every key that is not a
/// surface record, insight cache, shard round or status record (shard ledgers one by one).
pub fn index_names(keys: &[String]) -> Vec<String> {
    let mut names: Vec<String> = keys
        .iter()
        .filter(|key| !is_reserved_name(key))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}
