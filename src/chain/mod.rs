//! The ledger's hash chain: what makes an edited, dropped, reordered or rolled-back history
//! visible. Pure logic, no I/O; `docs/chain.md` specifies the construction byte for byte so
//! another tool can recompute it.
//!
//! Two levels:
//! - every history item of a server carries `seq` (1, 2, ... per server) and `link`, a hash of
//!   the previous item's link and the item's canonical JSON (without its kept `values`, which
//!   the index may drop for room; the head covers them); the entry keeps `history_base`,
//!   the link before its oldest kept item (items beyond the history limit are dropped from the
//!   front);
//! - every write of the index carries `chain`: its sequence number, the head it continues
//!   (`prev`), each server's last history link, a log of earlier heads, and `head`, the
//!   SHA-256 of the whole canonical index without `head` itself.
//!
//! A run's summary row carries the head it started from and the head it wrote; those rows are
//! the witnesses [`check_heads`] compares a ledger with.

pub mod moved;
pub mod sign;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::{Entry, Ledger};
use crate::report::ChainAnchor;
use crate::surface::canon;
use crate::surface::digest::sha256_hex;
pub use moved::{MoveEvent, MoveItem};
pub use sign::{SigningSecret, parse_public_key};

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
    /// ([`moved`]), by entry key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub moved_out: BTreeMap<String, MoveItem>,
    /// SHA-256 of the canonical index without this field and without `signature`.
    pub head: String,
    /// The Ed25519 public key (hex) that signs the heads, when the ledger is signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// The signature (hex) of `head` ([`sign::message`]), when the ledger is signed.
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
    /// `new`, `intact`, `adopted` or `broken`.
    pub status: &'static str,
    /// The stored write the run continues (seq, head); `(0, ZERO_HEAD)` for a new ledger.
    pub from: (u64, String),
    /// The stored log the next write extends.
    pub log: Vec<LogItem>,
    /// The break found, in words.
    pub broken: Option<String>,
}

/// The first inconsistency found, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct Break {
    /// The server and item, or the index write, where the chain breaks.
    pub location: String,
    /// What differs.
    pub problem: String,
}

fn broken(location: impl Into<String>, problem: impl Into<String>) -> Break {
    Break {
        location: location.into(),
        problem: problem.into(),
    }
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

/// The head of an index: `sha256(JCS(index without chain.head and chain.signature))`, 64 hex
/// characters.
pub fn index_head(index: &Value) -> String {
    let mut index = index.clone();
    if let Some(chain) = index.get_mut("chain").and_then(Value::as_object_mut) {
        chain.remove("head");
        chain.remove("signature");
    }
    let bytes = canon::canonicalize(&index).unwrap_or_default();
    sha256_hex(&bytes)
}

/// Gives every unlinked history item of `entry` its `seq` and `link`, continuing from its last
/// linked item (history item or move), its base, or the server's genesis.
pub fn link_items(entry: &mut Entry) {
    let mut prev = entry_head(entry);
    for item in &mut entry.history {
        if item.seq.is_some() && item.link.is_some() {
            continue;
        }
        item.seq = Some(prev.seq + 1);
        item.link = None;
        let value = serde_json::to_value(&*item).unwrap_or(Value::Null);
        let link = item_link(&prev.link, &value);
        item.link = Some(link.clone());
        prev = Link {
            seq: prev.seq + 1,
            link,
        };
    }
}

/// The last link of an entry: its newest linked item's (history item or move), else its base,
/// else the genesis.
fn entry_head(entry: &Entry) -> Link {
    let item = entry.history.iter().rev().find_map(|i| {
        Some(Link {
            seq: i.seq?,
            link: i.link.clone()?,
        })
    });
    [item, moved::last_move(entry)]
        .into_iter()
        .flatten()
        .max_by_key(|link| link.seq)
        .or_else(|| entry.history_base.clone())
        .unwrap_or_else(|| Link {
            seq: 0,
            link: genesis_link(&entry.server_url),
        })
}

/// Opens the chain of a loaded ledger for a run: checks it, adopts a ledger without one, or
/// starts a new chain (kind `rebased`) from a broken one, and remembers what it found and the
/// key that will sign the next head.
pub fn open(ledger: &mut Ledger, signer: Option<Arc<SigningSecret>>) {
    let stored = ledger.chain.clone();
    let fresh = |kind, reason, opened| IndexChain {
        version: CHAIN_VERSION,
        seq: 0,
        prev: ZERO_HEAD.to_string(),
        genesis: Genesis {
            seq: 0,
            kind,
            reason,
        },
        servers: BTreeMap::new(),
        log: Vec::new(),
        moved_out: BTreeMap::new(),
        head: String::new(),
        public_key: None,
        signature: None,
        opened,
        signer: signer.clone(),
    };
    let (kind, reason, opened) = match stored {
        None if ledger.servers.is_empty() => (GenesisKind::New, None, opened("new", 0, "", &[])),
        None => (GenesisKind::Adopted, None, opened("adopted", 0, "", &[])),
        Some(chain) => {
            let value = serde_json::to_value(&*ledger).unwrap_or(Value::Null);
            match check_index(&value) {
                Ok(()) => {
                    let mut chain = chain;
                    chain.opened = opened("intact", chain.seq, &chain.head, &chain.log);
                    chain.signer = signer.clone();
                    ledger.chain = Some(chain);
                    return;
                }
                Err(found) => {
                    let why = found.to_string();
                    let mut state = opened("broken", chain.seq, &chain.head, &chain.log);
                    state.broken = Some(why.clone());
                    // Nothing stored can be trusted: every item is linked again from its
                    // server's genesis, and the new chain says where and why it began.
                    for entry in ledger.servers.values_mut() {
                        moved::relink(entry);
                    }
                    (GenesisKind::Rebased, Some(why), state)
                }
            }
        }
    };
    for entry in ledger.servers.values_mut() {
        link_items(entry);
    }
    ledger.chain = Some(fresh(kind, reason, opened));
}

fn opened(status: &'static str, seq: u64, head: &str, log: &[LogItem]) -> Opened {
    Opened {
        status,
        from: (
            seq,
            if head.is_empty() { ZERO_HEAD } else { head }.to_string(),
        ),
        log: log.to_vec(),
        broken: None,
    }
}

/// Seals the ledger for its next write: links new items, records every server's last link,
/// the previous head and the log, and computes the head. Idempotent: the sequence number comes
/// from what [`open`] found, so sealing again (after history was shortened) gives the same
/// `seq`.
pub fn seal(ledger: &mut Ledger) {
    if ledger.chain.is_none() {
        open(ledger, None);
    }
    for entry in ledger.servers.values_mut() {
        link_items(entry);
    }
    let servers = ledger
        .servers
        .iter()
        .map(|(url, entry)| (url.clone(), entry_head(entry)))
        .collect();
    let Some(chain) = ledger.chain.as_mut() else {
        return;
    };
    let (from_seq, from_head) = chain.opened.from.clone();
    chain.seq = from_seq + 1;
    chain.prev = from_head.clone();
    if chain.genesis.seq == 0 {
        chain.genesis.seq = chain.seq;
    }
    let mut log = chain.opened.log.clone();
    if from_seq > 0 {
        log.push(LogItem {
            seq: from_seq,
            head: from_head,
        });
    }
    let excess = log.len().saturating_sub(MAX_LOG);
    log.drain(..excess);
    chain.log = log;
    chain.servers = servers;
    chain.head = String::new();
    chain.public_key = chain.signer.as_ref().map(|s| s.public_key_hex());
    chain.signature = None;
    let value = serde_json::to_value(&*ledger).unwrap_or(Value::Null);
    let head = index_head(&value);
    let name = ledger.ledger_name.clone();
    if let Some(chain) = ledger.chain.as_mut() {
        chain.signature = chain
            .signer
            .as_ref()
            .map(|s| s.sign_head(&name, chain.seq, &head));
        chain.head = head;
    }
}

/// Checks the head's signature with `public_key` (hex): the index must be signed, by that key.
pub fn check_signature(index: &Value, public_key: &str) -> Result<(), Break> {
    let seq = index
        .pointer("/chain/seq")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let location = format!("index write {seq}");
    let key = parse_public_key(public_key).map_err(|e| broken(&location, e))?;
    let text = |pointer: &str| index.pointer(pointer).and_then(Value::as_str);
    let Some(signature) = text("/chain/signature") else {
        return Err(broken(location, "the head is not signed"));
    };
    let name = text("/ledger_name").unwrap_or_default();
    let head = text("/chain/head").unwrap_or_default();
    if !sign::verifies(&key, name, seq, head, signature) {
        return Err(broken(
            location,
            format!(
                "the head's signature does not verify with public key {public_key} (the ledger names {})",
                text("/chain/public_key").unwrap_or("no key")
            ),
        ));
    }
    Ok(())
}

/// The summary-row fields of a sealed ledger: what the run found, and the head it wrote.
pub fn anchor(ledger: &Ledger) -> ChainAnchor {
    let Some(chain) = &ledger.chain else {
        return ChainAnchor::default();
    };
    ChainAnchor {
        ledger_chain_status: Some(chain.opened.status.to_string()),
        ledger_chain_break: chain.opened.broken.clone(),
        ledger_chain_seq: Some(chain.seq),
        ledger_chain_head: Some(chain.head.clone()),
        ledger_chain_prev_head: Some(chain.prev.clone()),
        ledger_chain_signature: chain.signature.clone(),
        ledger_public_key: chain.public_key.clone(),
    }
}

/// Checks a stored index against itself: every server's items in order and unedited, every
/// server named by the chain present (and no other), and the head matching the content.
pub fn check_index(index: &Value) -> Result<(), Break> {
    let Some(chain) = index.get("chain") else {
        return Err(broken(
            "index",
            "it has no chain (written before chains existed)",
        ));
    };
    let seq = chain.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let empty = serde_json::Map::new();
    let servers = index
        .get("servers")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let heads = chain
        .get("servers")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let moved_out = chain.get("moved_out").and_then(Value::as_object);
    if let Some(url) = moved_out
        .into_iter()
        .flat_map(|m| m.keys())
        .find(|url| servers.contains_key(*url))
    {
        return Err(broken(
            format!("server {url}"),
            format!(
                "the chain of index write {seq} says it moved out of this ledger, yet its entry is here"
            ),
        ));
    }
    for (url, entry) in servers {
        let last = check_history(url, entry)?;
        let Some(named) = heads.get(url) else {
            return Err(broken(
                format!("server {url}"),
                format!("its entry is not in the chain of index write {seq} (added outside it)"),
            ));
        };
        let named_seq = named.get("seq").and_then(Value::as_u64).unwrap_or(0);
        let named_link = named.get("link").and_then(Value::as_str).unwrap_or("");
        if named_seq != last.seq || named_link != last.link {
            let problem = if named_seq > last.seq {
                format!(
                    "the chain's last item is seq {named_seq}, the history ends at seq {}: items after it were deleted",
                    last.seq
                )
            } else {
                format!(
                    "the chain's last item is seq {named_seq} link {named_link}, the history's is seq {} link {}",
                    last.seq, last.link
                )
            };
            return Err(broken(format!("server {url}"), problem));
        }
    }
    if let Some(url) = heads.keys().find(|url| !servers.contains_key(*url)) {
        return Err(broken(
            format!("server {url}"),
            format!("the chain of index write {seq} names this entry; it was removed"),
        ));
    }
    let stored = chain.get("head").and_then(Value::as_str).unwrap_or("");
    let computed = index_head(index);
    if stored != computed {
        return Err(broken(
            format!("index write {seq}"),
            format!("the content does not match its head: stored {stored}, recomputed {computed}"),
        ));
    }
    Ok(())
}

/// Checks one server's history items; returns its last link.
fn check_history(url: &str, entry: &Value) -> Result<Link, Break> {
    let mut prev = match entry.get("history_base") {
        Some(base) if !base.is_null() => {
            serde_json::from_value::<Link>(base.clone()).map_err(|e| {
                broken(
                    format!("server {url}"),
                    format!("history_base unreadable: {e}"),
                )
            })?
        }
        _ => Link {
            seq: 0,
            link: genesis_link(url),
        },
    };
    let items = moved::chain_items(entry, prev.seq);
    for (index, item) in items.iter().enumerate() {
        let seq = item.get("seq").and_then(Value::as_u64);
        let link = item.get("link").and_then(Value::as_str);
        let (Some(seq), Some(link)) = (seq, link) else {
            return Err(broken(
                format!("server {url}, chain item {index}"),
                "it has no seq or link",
            ));
        };
        let expected = prev.seq + 1;
        if seq != expected {
            let later = items[index..]
                .iter()
                .any(|i| i.get("seq").and_then(Value::as_u64) == Some(expected));
            let problem = if later {
                format!("found seq {seq} where seq {expected} belongs: items were reordered")
            } else {
                format!("found seq {seq} where seq {expected} belongs: item {expected} was deleted")
            };
            return Err(broken(
                format!("server {url}, item seq {expected}"),
                problem,
            ));
        }
        let computed = item_link(&prev.link, item);
        if computed != link {
            return Err(broken(
                format!("server {url}, item seq {seq}"),
                format!(
                    "its content does not match its link (edited): stored {link}, recomputed {computed}"
                ),
            ));
        }
        prev = Link {
            seq,
            link: link.to_string(),
        };
    }
    Ok(prev)
}

/// One witnessed head: a write's sequence number and head, as a past run's summary row
/// carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// The write's sequence number.
    pub seq: u64,
    /// Its head.
    pub head: String,
    /// Where the witness came from (for messages).
    pub source: String,
}

/// What [`check_heads`] could compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeadsChecked {
    /// Witnesses that matched.
    pub matched: usize,
    /// Witnesses older than the log: not comparable.
    pub too_old: usize,
}

/// Compares witnessed heads with a stored index whose chain [`check_index`] accepted.
pub fn check_heads(index: &Value, witnesses: &[Witness]) -> Result<HeadsChecked, Break> {
    let chain = index.get("chain").cloned().unwrap_or(Value::Null);
    let seq = chain.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let head = chain.get("head").and_then(Value::as_str).unwrap_or("");
    let log: Vec<LogItem> =
        serde_json::from_value(chain.get("log").cloned().unwrap_or_default()).unwrap_or_default();
    let mut checked = HeadsChecked::default();
    for witness in witnesses {
        let known = if witness.seq == seq {
            Some(head)
        } else {
            log.iter()
                .find(|l| l.seq == witness.seq)
                .map(|l| l.head.as_str())
        };
        match known {
            _ if witness.seq > seq => {
                return Err(broken(
                    format!("index write {seq}"),
                    format!(
                        "{} witnessed write {} (head {}), but the ledger ends at write {seq}: it was rolled back or replaced",
                        witness.source, witness.seq, witness.head
                    ),
                ));
            }
            Some(known) if known == witness.head => checked.matched += 1,
            Some(known) => {
                return Err(broken(
                    format!("index write {}", witness.seq),
                    format!(
                        "{} says head {}, the ledger's chain says {known}",
                        witness.source, witness.head
                    ),
                ));
            }
            None => checked.too_old += 1,
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests;
