//! The parts of the hash chain that the ledger stores: the index's `chain` record, the links
//! of a server's history and its moves, and how a link is computed. They depend on nothing of
//! the ledger, so the ledger can hold them while the rest of [`super`] works on the ledger.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sign::SigningSecret;
use crate::surface::canon;
use crate::surface::digest::sha256_hex;

/// Version of the construction (`chain.version`).
pub const CHAIN_VERSION: u32 = 1;
/// Hex characters kept of an item link (128 bits): links locate a break; the full-length index
/// head is what an anchor compares.
pub const LINK_HEX: usize = 32;
/// Earlier heads kept in `chain.log`.
pub const MAX_LOG: usize = 1000;
/// The head before the first write.
pub const ZERO_HEAD: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A point of a server's history chain: the item's sequence number and its link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Sequence number of the item (0 = before the first item).
    pub seq: u64,
    /// The item's link (hex).
    pub link: String,
}

/// How the chain of this index began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenesisKind {
    /// A new ledger: the chain starts with its first write.
    New,
    /// A ledger written before chains existed: its state at adoption is the genesis.
    Adopted,
    /// A run found the chain broken and started a new one from the state it found.
    Rebased,
}

/// Where the chain of this index begins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Genesis {
    /// The index write that started it.
    pub seq: u64,
    /// How.
    pub kind: GenesisKind,
    /// For a rebase: the break the run found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One earlier index write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogItem {
    /// Its sequence number.
    pub seq: u64,
    /// Its head.
    pub head: String,
}

/// The chain record of one index write (`chain` in the index).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexChain {
    /// [`CHAIN_VERSION`].
    pub version: u32,
    /// This write's sequence number (1 for the first).
    pub seq: u64,
    /// The head of the write before ([`ZERO_HEAD`] for the first).
    pub prev: String,
    /// Where the chain begins.
    pub genesis: Genesis,
    /// Every server's last history link (its `history_base` when it has no item).
    pub servers: BTreeMap<String, Link>,
    /// Earlier writes, oldest first, at most [`MAX_LOG`].
    pub log: Vec<LogItem>,
    /// Entries that left this ledger for another shard ledger: each one's `moved_out` item
    /// ([`super::moved`]), by entry key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub moved_out: BTreeMap<String, MoveItem>,
    /// The entries this write changed: added, removed, or with new chain items since the write
    /// it continues. What `verify` names for a write nobody witnessed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// SHA-256 of the canonical index without this field and without `signature`.
    pub head: String,
    /// The Ed25519 public key (hex) that signs the heads, when the ledger is signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// The signature (hex) of `head` ([`super::sign::message`]), when the ledger is signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// What the run saw when it opened the ledger (not stored).
    #[serde(skip)]
    pub opened: Opened,
    /// The key that signs this run's head (not stored).
    #[serde(skip)]
    pub signer: Option<Arc<SigningSecret>>,
}

/// What a run found when it opened its ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opened {
    /// `new`, `intact`, `adopted`, `broken` or `unwitnessed` ([`STATUSES`]).
    pub status: &'static str,
    /// The stored write the run continues (seq, head); `(0, ZERO_HEAD)` for a new ledger.
    pub from: (u64, String),
    /// The stored log the next write extends.
    pub log: Vec<LogItem>,
    /// The break found, in words.
    pub broken: Option<String>,
    /// Every server's last link as stored, to tell which entries the next write changes.
    pub servers: BTreeMap<String, Link>,
}

/// What a run can find when it opens its ledger (`ledger_chain_status`): a new ledger, an
/// intact chain, a ledger written before chains existed (adopted once), a broken chain, or an
/// intact chain with writes after the last one a run witnessed (`unwitnessed`). The last three
/// are "not intact": loud in the status message and the reports, and exit 5 on request.
pub const STATUSES: [&str; 5] = ["new", "intact", "adopted", "broken", "unwitnessed"];

/// Which side of a move an item records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveEvent {
    /// The entry left this ledger for `ledger`.
    MovedOut,
    /// The entry came into this ledger from `ledger`.
    MovedIn,
}

/// One move of an entry, an item of its chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveItem {
    /// When the coordinator moved the entry.
    pub observed_at: DateTime<Utc>,
    /// Out or in.
    pub event: MoveEvent,
    /// The other ledger: where the entry went, or where it came from.
    pub ledger: String,
    /// For `moved_in`: the source ledger's write (sequence number and head) the move started
    /// from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LogItem>,
    /// Its number in the entry's chain.
    pub seq: u64,
    /// Its link ([`item_link`] of the item before it).
    pub link: String,
}

/// The link before a server's first item: `sha256("mcp-surface-ledger/history@1\n" + url)`.
pub fn genesis_link(server_url: &str) -> String {
    truncate(sha256_hex(
        format!("mcp-surface-ledger/history@1\n{server_url}").as_bytes(),
    ))
}

/// The keys of a history item its link does not cover: the link itself, and the kept values
/// (`values`), which the index may drop for room; the index head covers them as stored.
pub const UNLINKED_KEYS: [&str; 2] = ["link", "values"];

/// The link of an item: `sha256(prev + "\n" + JCS(item without "link" and "values"))`, first
/// [`LINK_HEX`] hex characters.
pub fn item_link(prev: &str, item: &Value) -> String {
    let mut item = item.clone();
    if let Some(object) = item.as_object_mut() {
        for key in UNLINKED_KEYS {
            object.remove(key);
        }
    }
    let mut bytes = prev.as_bytes().to_vec();
    bytes.push(b'\n');
    // History items are small objects of strings and numbers: canonicalization cannot fail.
    let _ = canon::canonicalize_into(&item, &mut bytes);
    truncate(sha256_hex(&bytes))
}

fn truncate(mut hex: String) -> String {
    hex.truncate(LINK_HEX);
    hex
}
