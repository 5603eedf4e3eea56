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

mod check;
pub mod heads;
pub mod moved;
pub mod record;
pub mod sign;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::ledger::{Entry, Ledger};
use crate::report::ChainAnchor;
use crate::surface::canon;
use crate::surface::digest::sha256_hex;
pub use check::{
    HeadsChecked, Witness, alert, check_heads, check_index, check_log, check_page, check_signature,
    check_witness_rows, consecutive_tail, is_head, unwitnessed_writes,
};
pub use record::{
    CHAIN_VERSION, Genesis, GenesisKind, IndexChain, LINK_HEX, Link, LogItem, MAX_LOG, MoveEvent,
    MoveItem, Opened, STATUSES, UNLINKED_KEYS, ZERO_HEAD, genesis_link, item_link,
};
pub use sign::{SigningSecret, parse_public_key};

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

/// The head of an index: `sha256(JCS(index without chain.head and chain.signature))`, 64 hex
/// characters.
pub fn index_head(index: &Value) -> String {
    sha256_hex(&head_bytes(index, None).unwrap_or_default())
}

/// The bytes a head covers: the canonical index without `chain.head` and `chain.signature`.
/// With `servers`, the index's own `servers` member (left empty by the caller) stands for
/// them and they are written one entry at a time, to the same bytes: sealing a large index
/// then never holds it as one `Value` tree (several times the record's size) nor a copy of it.
fn head_bytes(
    index: &Value,
    servers: Option<&BTreeMap<String, Entry>>,
) -> Result<Vec<u8>, canon::CanonError> {
    let Value::Object(map) = index else {
        return canon::canonicalize(index);
    };
    let mut out = Vec::new();
    canon::canonicalize_object_by(map, &mut out, |name, value, out| match (name, value) {
        ("chain", Value::Object(chain)) => {
            canon::canonicalize_object_keeping(chain, out, 1, |key| {
                key != "head" && key != "signature"
            })
        }
        ("servers", _) if let Some(servers) = servers => write_servers(servers, out),
        _ => canon::canonicalize_at(value, out, 1),
    })?;
    Ok(out)
}

/// Writes the `servers` map of an index (one level deep) as its canonical `Value` would be,
/// converting one entry at a time.
fn write_servers(
    servers: &BTreeMap<String, Entry>,
    out: &mut Vec<u8>,
) -> Result<(), canon::CanonError> {
    let mut urls: Vec<&String> = servers.keys().collect();
    urls.sort_by(|a, b| canon::cmp_utf16(a, b));
    out.push(b'{');
    for (i, url) in urls.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        canon::canonicalize_str_into(url, out);
        out.push(b':');
        let entry = serde_json::to_value(&servers[url]).unwrap_or(Value::Null);
        canon::canonicalize_at(&entry, out, 2)?;
    }
    out.push(b'}');
    Ok(())
}

/// Opens the chain of a loaded ledger for a run: checks it against itself and against the
/// `witnesses` a run can find outside the ledger store (the previous run's summary); continues
/// an intact chain, adopts a ledger that was never chained, or starts a new chain (kind
/// `rebased`) from a broken one or one with writes nobody witnessed; and remembers what it
/// found and the key that will sign the next head.
pub fn open(ledger: &mut Ledger, signer: Option<Arc<SigningSecret>>, witnesses: &[Witness]) {
    let found = match ledger.chain.clone() {
        None => judge_unchained(ledger, witnesses),
        Some(chain) => judge_chained(ledger, &chain, witnesses),
    };
    let stored = ledger.chain.take();
    let from = |stored: &Option<IndexChain>| match stored {
        Some(chain) => (
            chain.seq,
            chain.head.clone(),
            chain.log.clone(),
            chain.servers.clone(),
        ),
        None => (0, String::new(), Vec::new(), BTreeMap::new()),
    };
    let (kind, reason, state) = match found {
        Found::Intact => {
            let Some(mut chain) = stored else {
                return;
            };
            chain.opened = opened("intact", &from(&Some(chain.clone())));
            chain.signer = signer;
            ledger.chain = Some(chain);
            return;
        }
        Found::New => (GenesisKind::New, None, opened("new", &from(&None))),
        Found::Adopted => (GenesisKind::Adopted, None, opened("adopted", &from(&None))),
        Found::NotIntact(status, why) => {
            let (seq, head, log, servers) = from(&stored);
            // A rebase keeps only the consecutive tail of the log it found: the new chain's
            // log must itself pass the log rule.
            let log = consecutive_tail(&log, seq.saturating_sub(1));
            let mut state = opened(status, &(seq, head, log, servers));
            state.broken = Some(why.clone());
            // Nothing stored can be trusted: every item is linked again from its server's
            // genesis, and the new chain says where and why it began.
            for entry in ledger.servers.values_mut() {
                moved::relink(entry);
            }
            (GenesisKind::Rebased, Some(why), state)
        }
    };
    for entry in ledger.servers.values_mut() {
        entry.link_items();
    }
    ledger.chain = Some(IndexChain {
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
        changed: Vec::new(),
        head: String::new(),
        public_key: None,
        signature: None,
        opened: state,
        signer,
    });
}

/// What [`open`] found.
enum Found {
    New,
    Intact,
    Adopted,
    /// `broken` or `unwitnessed`, and why.
    NotIntact(&'static str, String),
}

/// A ledger without a chain: new when empty and never witnessed; adopted when it was written
/// before chains existed; broken when anything shows it was chained once (its items carry
/// chain fields, or a run witnessed a head of it): an adoption would erase that history.
fn judge_unchained(ledger: &Ledger, witnesses: &[Witness]) -> Found {
    let witnessed = witnesses.iter().max_by_key(|w| w.seq);
    if let Some(witness) = witnessed {
        let what = if ledger.servers.is_empty() {
            "the ledger index is gone"
        } else {
            "the index has no chain"
        };
        return Found::NotIntact(
            "broken",
            format!(
                "index: {what}, but {} witnessed its write {} (head {}): it was deleted or \
                 stripped",
                witness.source, witness.seq, witness.head
            ),
        );
    }
    if ledger.servers.is_empty() {
        return Found::New;
    }
    let chained = ledger.servers.values().find(|entry| {
        entry.history_base.is_some()
            || !entry.moves.is_empty()
            || !entry.archived.is_empty()
            || entry
                .history
                .iter()
                .any(|i| i.seq.is_some() || i.link.is_some() || i.values.is_some())
    });
    match chained {
        Some(entry) => Found::NotIntact(
            "broken",
            format!(
                "index: it has no chain, yet the entry of {} carries chain fields (seq, link, \
                 kept values, base or moves): the chain was stripped",
                entry.server_url
            ),
        ),
        None => Found::Adopted,
    }
}

/// A chained ledger: intact when it agrees with itself and with the witnesses, unwitnessed
/// when it has writes after the newest witnessed one, else broken.
fn judge_chained(ledger: &Ledger, chain: &IndexChain, witnesses: &[Witness]) -> Found {
    let value = serde_json::to_value(ledger).unwrap_or(Value::Null);
    let checked = check_index(&value)
        .and_then(|()| check_witness_rows(&value, &ledger.ledger_name, witnesses, None))
        .and_then(|_| check_heads(&value, witnesses));
    let checked = match checked {
        Ok(checked) => checked,
        Err(found) => return Found::NotIntact("broken", found.to_string()),
    };
    if witnesses.is_empty() {
        return Found::Intact;
    }
    let writes = unwitnessed_writes(&value, checked.newest);
    match (writes.first(), checked.newest) {
        (Some(first), Some(newest)) => Found::NotIntact(
            "unwitnessed",
            format!(
                "index write {}: writes {} to {} came after write {newest}, the last one a run \
                 witnessed; no run wrote them (changed: {})",
                chain.seq,
                first.seq,
                chain.seq,
                if chain.changed.is_empty() {
                    "not recorded".to_string()
                } else {
                    chain.changed.join(", ")
                }
            ),
        ),
        _ => Found::Intact,
    }
}

fn opened(
    status: &'static str,
    (seq, head, log, servers): &(u64, String, Vec<LogItem>, BTreeMap<String, Link>),
) -> Opened {
    Opened {
        status,
        from: (
            *seq,
            if head.is_empty() { ZERO_HEAD } else { head }.to_string(),
        ),
        log: log.clone(),
        broken: None,
        servers: servers.clone(),
    }
}

/// Seals the ledger for its next write: links new items, records every server's last link,
/// the previous head and the log, and computes the head. Idempotent: the sequence number comes
/// from what [`open`] found, so sealing again (after history was shortened) gives the same
/// `seq`.
pub fn seal(ledger: &mut Ledger) {
    if ledger.chain.is_none() {
        open(ledger, None, &[]);
    }
    for entry in ledger.servers.values_mut() {
        entry.link_items();
    }
    let servers = ledger
        .servers
        .iter()
        .map(|(url, entry)| (url.clone(), entry.chain_head()))
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
    chain.changed = changed_entries(&chain.opened.servers, &servers);
    chain.servers = servers;
    chain.head = String::new();
    chain.public_key = chain.signer.as_ref().map(|s| s.public_key_hex());
    chain.signature = None;
    let servers = std::mem::take(&mut ledger.servers);
    let shell = serde_json::to_value(&*ledger).unwrap_or(Value::Null);
    ledger.servers = servers;
    let head = sha256_hex(&head_bytes(&shell, Some(&ledger.servers)).unwrap_or_default());
    let name = ledger.ledger_name.clone();
    if let Some(chain) = ledger.chain.as_mut() {
        chain.signature = chain
            .signer
            .as_ref()
            .map(|s| s.sign_head(&name, chain.seq, &head));
        chain.head = head;
    }
}

/// The entries whose last link differs between two writes, or that only one of them has.
fn changed_entries(before: &BTreeMap<String, Link>, after: &BTreeMap<String, Link>) -> Vec<String> {
    let mut changed: Vec<String> = after
        .iter()
        .filter(|(url, link)| before.get(*url) != Some(*link))
        .map(|(url, _)| url.clone())
        .collect();
    changed.extend(
        before
            .keys()
            .filter(|url| !after.contains_key(*url))
            .cloned(),
    );
    changed.sort();
    changed
}

/// Marks a chain opened intact as broken for a reason found after opening (a surface record
/// that does not match its chained entry): the write starts a new chain (`rebased`) with that
/// reason, so the evidence stays in the ledger, and the summary row says `broken`.
pub fn mark_broken(ledger: &mut Ledger, why: &str) {
    let Some(chain) = ledger.chain.as_mut() else {
        return;
    };
    if chain.opened.broken.is_some() {
        return;
    }
    chain.opened.status = "broken";
    chain.opened.broken = Some(why.to_string());
    chain.opened.log = consecutive_tail(&chain.opened.log, chain.opened.from.0.saturating_sub(1));
    chain.genesis = Genesis {
        seq: 0,
        kind: GenesisKind::Rebased,
        reason: Some(why.to_string()),
    };
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

#[cfg(test)]
mod tests;
