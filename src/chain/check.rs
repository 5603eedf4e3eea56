//! The checks of a stored index (pure): against itself ([`check_index`]), against the heads
//! past runs witnessed ([`check_heads`], [`check_witness_rows`], [`unwitnessed_writes`]), and
//! against a signing key ([`check_signature`]). `docs/chain.md` lists them in order, with
//! what each proves and what it cannot.

use serde_json::Value;

use super::sign::parse_public_key;
use super::{
    Break, GenesisKind, Link, LogItem, MAX_LOG, ZERO_HEAD, broken, genesis_link, index_head,
    item_link, moved, sign,
};

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
    check_writes(chain, seq)?;
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

/// Checks one server's history items, and that its archived pages join up and end where
/// the items begin; returns its last link.
fn check_history(url: &str, entry: &Value) -> Result<Link, Break> {
    let base = match entry.get("history_base") {
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
    check_archived(url, entry, &base)?;
    let items = moved::chain_items(entry, base.seq);
    check_links(url, base, &items)
}

/// Checks that the archived pages an entry names follow one another, each beginning at the
/// link the one before it ends at, the last ending at `base` (the link before the items the
/// index holds): a page cut out of the middle, reordered or grafted on shows here.
fn check_archived(url: &str, entry: &Value, base: &Link) -> Result<(), Break> {
    let Some(pages) = entry.get("archived").and_then(Value::as_array) else {
        return Ok(());
    };
    let link = |page: &Value, key: &str| serde_json::from_value::<Link>(page[key].clone()).ok();
    let mut expected: Option<Link> = None;
    for (index, page) in pages.iter().enumerate() {
        let location = format!("server {url}, archived page {index}");
        let (Some(page_base), Some(page_last)) = (link(page, "base"), link(page, "last")) else {
            return Err(broken(location, "it has no base or last link"));
        };
        if let Some(expected) = &expected
            && *expected != page_base
        {
            return Err(broken(
                location,
                format!(
                    "it begins after seq {}, the page before it ends at seq {}: pages were cut or reordered",
                    page_base.seq, expected.seq
                ),
            ));
        }
        expected = Some(page_last);
    }
    match expected {
        Some(last) if last != *base => Err(broken(
            format!("server {url}"),
            format!(
                "its archived pages end at seq {}, its history begins after seq {}",
                last.seq, base.seq
            ),
        )),
        _ => Ok(()),
    }
}

/// Checks one archived page read back from the store: its `items` (with the entry's `moves`
/// between them) must be numbered and linked from `base` on, and end at `last`.
pub fn check_page(
    url: &str,
    base: &Link,
    last: &Link,
    items: &[Value],
    moves: &[Value],
) -> Result<(), Break> {
    let page = serde_json::json!({"history": items, "moves": moves});
    let chained = moved::chain_items(&page, base.seq);
    let end = check_links(url, base.clone(), &chained)?;
    if end != *last {
        return Err(broken(
            format!("server {url}, archived page after seq {}", base.seq),
            format!(
                "it ends at seq {} link {}, the ledger names seq {} link {}",
                end.seq, end.link, last.seq, last.link
            ),
        ));
    }
    Ok(())
}

/// Checks that `items` are numbered and linked one after another from `prev`; returns the last
/// link.
fn check_links(url: &str, mut prev: Link, items: &[&Value]) -> Result<Link, Break> {
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

/// Checks the writes an index records: its sequence number, where its chain begins, the log of
/// earlier heads and `prev`. A forger who appends a write of their own must make each of these
/// agree, and the witnessed heads then show the write nobody witnessed.
fn check_writes(chain: &Value, seq: u64) -> Result<(), Break> {
    let location = format!("index write {seq}");
    if seq == 0 {
        return Err(broken(location, "its seq is missing or 0"));
    }
    let genesis = chain.get("genesis").cloned().unwrap_or_default();
    let genesis_seq = genesis.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let kind: Option<GenesisKind> = serde_json::from_value(genesis["kind"].clone()).ok();
    let Some(kind) = kind.filter(|_| (1..=seq).contains(&genesis_seq)) else {
        return Err(broken(
            location,
            format!("its genesis {genesis} is not a known kind at a write up to this one"),
        ));
    };
    if kind != GenesisKind::Rebased && genesis_seq != 1 {
        return Err(broken(
            location,
            format!(
                "its chain says it began as {kind:?} at write {genesis_seq}, but only a rebase \
                 begins after write 1: a fresh start was written over an older ledger"
            )
            .to_lowercase(),
        ));
    }
    let log: Vec<LogItem> = serde_json::from_value(chain.get("log").cloned().unwrap_or_default())
        .map_err(|e| {
        broken(
            &location,
            format!("its log of earlier heads is unreadable ({e})"),
        )
    })?;
    check_log(&log, seq, kind, genesis_seq).map_err(|problem| broken(&location, problem))?;
    let prev = chain.get("prev").and_then(Value::as_str).unwrap_or("");
    let expected = log.last().map_or(ZERO_HEAD, |item| item.head.as_str());
    if prev != expected {
        return Err(broken(
            location,
            format!(
                "its prev is {prev}, but the write before it (the log's last) has head \
                 {expected}: it does not continue the write before it"
            ),
        ));
    }
    Ok(())
}

/// The log rule: the log is consecutive and ends with write `seq - 1`; it lists every write
/// before this one up to [`MAX_LOG`] (for a chain a run rebased at write `genesis_seq`: at
/// least every write since the rebase, since a rebase keeps only the consecutive tail of the
/// log it found).
pub fn check_log(
    log: &[LogItem],
    seq: u64,
    kind: GenesisKind,
    genesis_seq: u64,
) -> Result<(), String> {
    let before = usize::try_from(seq - 1).unwrap_or(usize::MAX);
    let least = match kind {
        GenesisKind::Rebased => usize::try_from(seq - genesis_seq).unwrap_or(usize::MAX),
        _ => before,
    }
    .min(MAX_LOG);
    if log.len() < least || log.len() > before.min(MAX_LOG) {
        return Err(format!(
            "its log of earlier heads lists {} writes where it must list {least}: it was cut \
             or padded",
            log.len()
        ));
    }
    let first = seq - log.len() as u64;
    for (offset, item) in log.iter().enumerate() {
        let expected = first + offset as u64;
        if item.seq != expected {
            return Err(format!(
                "its log lists write {} where write {expected} belongs: the log is not the \
                 consecutive run of writes before this one",
                item.seq
            ));
        }
        if !is_head(&item.head) {
            return Err(format!(
                "its log names write {} with a malformed head",
                item.seq
            ));
        }
    }
    Ok(())
}

/// Whether `text` has the form of a head: 64 lower-case hex characters.
pub fn is_head(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The longest consecutive tail of `log` that ends with write `before` (empty when its last
/// item is not that write): what a rebase keeps of a log it cannot trust to be whole.
pub fn consecutive_tail(log: &[LogItem], before: u64) -> Vec<LogItem> {
    let mut tail: Vec<LogItem> = Vec::new();
    let mut want = before;
    for item in log.iter().rev() {
        if item.seq != want || want == 0 || !is_head(&item.head) {
            break;
        }
        tail.push(item.clone());
        want -= 1;
    }
    tail.reverse();
    tail
}

/// One witnessed head: a write's sequence number and head, as a past run's summary row
/// carries them, with what that run said of the chain and how it signed the head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Witness {
    /// The write's sequence number.
    pub seq: u64,
    /// Its head.
    pub head: String,
    /// Where the witness came from (for messages).
    pub source: String,
    /// What the run found when it opened the ledger (`ledger_chain_status`), when the witness
    /// is the head a run wrote; `None` for the head it started from and for bare heads.
    pub status: Option<String>,
    /// The break the run found (`ledger_chain_break`).
    pub found: Option<String>,
    /// The head's signature the row carries (`ledger_chain_signature`).
    pub signature: Option<String>,
    /// The public key the row names (`ledger_public_key`).
    pub public_key: Option<String>,
}

/// What [`check_heads`] could compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeadsChecked {
    /// Witnesses that matched.
    pub matched: usize,
    /// Witnesses older than the log: not comparable.
    pub too_old: usize,
    /// The newest write a witness matched.
    pub newest: Option<u64>,
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
            Some(known) if known == witness.head => {
                checked.matched += 1;
                checked.newest = checked.newest.max(Some(witness.seq));
            }
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

/// The writes of `index` after `newest_witnessed` (every write when `None`), oldest first:
/// writes no run witnessed. The newest is the index itself.
pub fn unwitnessed_writes(index: &Value, newest_witnessed: Option<u64>) -> Vec<LogItem> {
    let after = newest_witnessed.unwrap_or(0);
    let chain = index.get("chain").cloned().unwrap_or(Value::Null);
    let seq = chain.get("seq").and_then(Value::as_u64).unwrap_or(0);
    if seq <= after {
        return Vec::new();
    }
    let log: Vec<LogItem> =
        serde_json::from_value(chain.get("log").cloned().unwrap_or_default()).unwrap_or_default();
    let mut writes: Vec<LogItem> = log.into_iter().filter(|l| l.seq > after).collect();
    writes.push(LogItem {
        seq,
        head: chain
            .get("head")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    });
    writes
}

/// Checks what the witness rows themselves say: a row's signature must verify with the key it
/// names (and with `trusted_key` when the operator gave one), and a run that found the chain
/// broken, unwitnessed or adopted is evidence a later index cannot erase (a clean genesis
/// after it means the evidence was written over). Returns how many signatures were checked.
pub fn check_witness_rows(
    index: &Value,
    ledger_name: &str,
    witnesses: &[Witness],
    trusted_key: Option<&str>,
) -> Result<usize, Break> {
    let mut signatures = 0;
    for witness in witnesses {
        let location = format!("index write {}", witness.seq);
        if let (Some(signature), Some(key)) = (&witness.signature, &witness.public_key) {
            if trusted_key.is_some_and(|trusted| !trusted.eq_ignore_ascii_case(key)) {
                return Err(broken(
                    location,
                    format!(
                        "{} names public key {key}, not the key given ({}): a row signed by \
                         another key",
                        witness.source,
                        trusted_key.unwrap_or_default()
                    ),
                ));
            }
            let verifies = parse_public_key(key).is_ok_and(|k| {
                sign::verifies(&k, ledger_name, witness.seq, &witness.head, signature)
            });
            if !verifies {
                return Err(broken(
                    location,
                    format!(
                        "{}'s signature of head {} does not verify with the key it names: the \
                         row was forged or altered",
                        witness.source, witness.head
                    ),
                ));
            }
            signatures += 1;
        }
        check_witnessed_status(index, witness)?;
    }
    Ok(signatures)
}

/// A witness of a run that found its chain not intact: the index must still show it.
fn check_witnessed_status(index: &Value, witness: &Witness) -> Result<(), Break> {
    let status = witness.status.as_deref().unwrap_or("intact");
    if matches!(status, "new" | "intact") {
        return Ok(());
    }
    let genesis = index.pointer("/chain/genesis").cloned().unwrap_or_default();
    let kind: Option<GenesisKind> = serde_json::from_value(genesis["kind"].clone()).ok();
    let at = genesis["seq"].as_u64().unwrap_or(0);
    let kept = match status {
        "adopted" => {
            (kind == Some(GenesisKind::Adopted) && at == witness.seq)
                || (kind == Some(GenesisKind::Rebased) && at >= witness.seq)
        }
        _ => kind == Some(GenesisKind::Rebased) && at >= witness.seq,
    };
    // A kept break is the rebase itself, which `verify` reports on its own (step 5).
    if kept {
        return Ok(());
    }
    let why = witness
        .found
        .as_deref()
        .map(|found| format!(" ({found})"))
        .unwrap_or_default();
    let problem = format!(
        "{} found the chain {status} at write {}{why}, but the index's chain now begins at \
         write {at} ({}): the evidence was written over",
        witness.source,
        witness.seq,
        genesis["kind"].as_str().unwrap_or("no kind")
    );
    Err(broken(format!("index write {}", witness.seq), problem))
}

/// What a reader of a stored index (the Standby pages, the JSON API) must show of its chain,
/// in one loud sentence: a break the index shows on its own, a chain a run had to start again
/// (and why), or a ledger adopted without a chain. `None` for a chain that checks and began
/// as a new ledger. Witnesses are not consulted: that is `verify`'s work.
pub fn alert(index: &Value) -> Option<String> {
    if let Err(found) = check_index(index) {
        return Some(format!("LEDGER CHAIN BROKEN ({found})"));
    }
    let genesis = index.pointer("/chain/genesis").cloned().unwrap_or_default();
    let at = genesis["seq"].as_u64().unwrap_or(0);
    match genesis["kind"].as_str() {
        Some("rebased") => Some(format!(
            "LEDGER CHAIN BROKEN: a run started a new chain at write {at} ({})",
            genesis["reason"].as_str().unwrap_or("no reason recorded")
        )),
        Some("adopted") => Some(format!(
            "LEDGER ADOPTED at write {at}: its history before that write is vouched for by \
             nothing but the ledger itself"
        )),
        _ => None,
    }
}
