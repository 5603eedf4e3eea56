//! The ledger: the stored baseline of every watched server, kept across runs.
//!
//! The ledger lives in the named key-value store `mcp-tool-surface-ledger` as two kinds of
//! record:
//!
//! - one small **index** record per `ledger_name` ([`Ledger`]): per server its identity, auth
//!   state, digest, protocol era, timestamps, its newest changes (older ones in archived pages,
//!   [`archive`]), the steps back to earlier surfaces ([`past`]), and the key of its surface;
//! - content-addressed **surface** records ([`StoredSurface`]) holding the full tool definitions
//!   a later diff needs to show `old_value`. Their key is derived from their content, so writing
//!   one twice is harmless and a record is never modified once written.
//!
//! Invariants a change must keep:
//! - surfaces are written before the index, and the index exactly once, at the end of a run, so
//!   an aborted run leaves the previous index (and every surface it names) intact;
//! - a server that could not be read keeps its entry unchanged;
//! - an unreadable or newer-format index is never overwritten: the run stops instead.

mod archive;
mod history;
mod kept;
mod links;
mod names;
pub mod past;
mod surface_record;
mod trim;
pub mod values;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use archive::{ARCHIVE_AT, ARCHIVE_KEEP, Archived, full_history, history_since, read_page};
pub use history::{ChangeValues, HistoryItem, KeptValue, MAX_KEPT_VALUE_BYTES};
pub use kept::resolve;
pub use names::{
    INSIGHT_KEY_PREFIX, SHARDS_KEY_PREFIX, SURFACE_KEY_PREFIX, index_names, is_reserved_name,
};
pub use past::{PastError, Step, ValueRef};
pub use surface_record::{SURFACE_FORMAT, StoredSurface, check_surface};
#[cfg(doc)]
use trim::FALLBACKS;
pub use values::{PackReader, Pending, ValueError, is_value_pack};

use crate::diff::{AuthState, Change};
use crate::mcp::Era;
use crate::platform::{MAX_RECORD_BYTES, Record, Storage, StorageError, Store};
use crate::surface::{DIGEST_ALGORITHM, ItemDigests, ServerIdentity, Sha256Digest, Surface};

/// Version of the index record format this build writes and reads.
pub const LEDGER_FORMAT: u32 = 1;
/// The most entries one ledger keeps; the least recently seen are dropped beyond it. Room for
/// both views (anonymous and authenticated) of a full run of [`SERVERS_PER_RUN`].
pub const MAX_SERVERS: usize = 2 * SERVERS_PER_RUN;

/// The most servers one run (or one shard of a sharded watch) reads: the index of that many
/// servers, with both views and their history, stays within the platform's 9 MiB record
/// (measured in `tests/ledger_capacity.rs`). The input's limit is this capacity.
pub const SERVERS_PER_RUN: usize = 1000;
/// The most history items per server an index keeps when it must shorten itself to stay
/// within the record limit ([`FALLBACKS`]); otherwise every item within the retention period
/// ([`DEFAULT_RETENTION_DAYS`]) stays.
pub const MAX_HISTORY: usize = 50;
/// How long a change, and every value it refers to, is kept by default: a year. The input's
/// `history_retention_days` sets another period.
pub const DEFAULT_RETENTION_DAYS: u32 = 365;
/// The largest server identity (name, title, version, instructions, as JSON) a ledger entry
/// keeps: 64 KiB. The index holds every entry's identity, so one server with megabytes of
/// instructions could otherwise push the index past what the platform stores; such a server is
/// reported, not recorded.
pub const MAX_IDENTITY_BYTES: usize = 64 * 1024;
/// Hex digits kept of each per-tool digest ([`Entry::tool_digests`]): 64 bits, plenty to tell
/// a changed tool from an unchanged one.
const TOOL_DIGEST_HEX: usize = 16;
/// How many times a surface record is read before it counts as unreadable.
const SURFACE_READ_ATTEMPTS: u32 = 3;

/// The short digest of every tool of `surface`, by name ([`Entry::tool_digests`]).
pub fn tool_digests(surface: &Surface) -> BTreeMap<String, String> {
    short_tool_digests(surface, &surface.canonical_tools().raw_hashes())
}

/// [`tool_digests`] from each tool's `raw_hash` ([`crate::surface::ToolDigests`]), already
/// computed, in the surface's order.
pub fn short_tool_digests(
    surface: &Surface,
    raw_hashes: &[Sha256Digest],
) -> BTreeMap<String, String> {
    surface
        .tools
        .iter()
        .zip(raw_hashes)
        .map(|(tool, raw_hash)| {
            let mut short = raw_hash.to_hex();
            short.truncate(TOOL_DIGEST_HEX);
            (tool.name.clone(), short)
        })
        .collect()
}

/// Failures of loading or saving the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The store could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The stored index is not a ledger this build understands. It is left untouched.
    #[error(
        "the ledger record {key:?} in store mcp-tool-surface-ledger cannot be used: {problem}. \
         It was left untouched; use another `ledger_name`, or move the record away to start a new baseline"
    )]
    Unreadable {
        /// The record key.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The index cannot be kept within the platform's record size, even without history.
    #[error(
        "the ledger record {key:?} would be {size} bytes, more than the {limit} a record may \
         hold; split the servers over several `ledger_name`s"
    )]
    TooLarge {
        /// The record key.
        key: String,
        /// Its size without any history.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A surface record named by the index is gone (the store says it does not exist).
    #[error("surface record {key:?} of the ledger is gone")]
    SurfaceGone {
        /// The record key.
        key: String,
    },
    /// A surface record named by the index reads, but is not the surface its entry names: its
    /// tools or identity do not give the digest and key the (chained) entry holds. The record
    /// was replaced in the store; it must never serve as a baseline.
    #[error("surface record {key:?} of the ledger is not the surface its entry names: {problem}")]
    SurfaceMismatch {
        /// The record key.
        key: String,
        /// What differs.
        problem: String,
    },
    /// A value the index names (a change's before or after, an earlier surface) is gone, or
    /// is not the one its digest names ([`values`], [`past`]).
    #[error("the kept values of the ledger are not the ones it names: {problem}")]
    ValuesDamaged {
        /// What is wrong.
        problem: String,
    },
    /// A surface record named by the index could not be read, even after retries: damaged,
    /// of another shape, or the store failed. The entry must be kept as it is.
    #[error("surface record {key:?} of the ledger cannot be read: {problem}")]
    SurfaceUnreadable {
        /// The record key.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// The stored state of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The entry's key in [`Ledger::servers`]: the server's URL for its anonymous view, the
    /// URL followed by `#authenticated` for the view read with a credential
    /// ([`crate::targets::Target::ledger_key`]).
    pub server_url: String,
    /// When the server was first read.
    pub first_seen: DateTime<Utc>,
    /// When the server was last read (a readable surface or an auth verdict).
    pub last_seen: DateTime<Utc>,
    /// When a change was last recorded.
    pub last_changed: Option<DateTime<Utc>>,
    /// The protocol era that worked last time; tried first next time.
    pub era: Option<Era>,
    /// The transport that worked last time.
    pub transport: Option<String>,
    /// Server identity of the last readable surface.
    pub identity: ServerIdentity,
    /// The authentication state last observed.
    pub auth: AuthState,
    /// Digest of the last readable tool surface.
    pub tool_digest: Option<String>,
    /// Record key of the last readable surface ([`StoredSurface`]).
    pub surface_key: Option<String>,
    /// Number of tools in the last readable surface.
    pub tools_total: usize,
    /// A short digest of every tool of the last readable surface, by tool name, so that a run
    /// whose surface record is gone can still name the tools added, removed or changed.
    /// `None` in entries written before this was kept, and when the index had to drop them to
    /// stay within the record size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_digests: Option<BTreeMap<String, String>>,
    /// The same for the prompts and resource templates of the last readable surface
    /// ([`ItemDigests`]; resources are not kept, see there why). `None` like `tool_digests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_digests: Option<ItemDigests>,
    /// `(tool name, pointer)` of every object key the last readable `tools/list` answer
    /// repeated (the parsed surface keeps only one copy, so the digest cannot see these).
    /// `None` in entries written before this was recorded: nothing to compare with yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeated_keys: Option<Vec<(String, String)>>,
    /// The raw-answer digest of the last readable read ([`crate::mcp::raw`]): when the next
    /// read's answers hash the same, the run reuses this entry's surface instead of building
    /// it again. `None` before it was kept, and for a surface with invalid tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_digest: Option<String>,
    /// The older changes within the retention period, moved out of the index into archived
    /// pages ([`archive`]), oldest first; they come before [`Entry::history`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archived: Vec<Archived>,
    /// The newest changes, oldest first: at most [`ARCHIVE_AT`] (older ones are archived),
    /// fewer when the index had to shorten itself.
    pub history: Vec<HistoryItem>,
    /// The chain link before the oldest kept history item (older items were dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_base: Option<crate::chain::record::Link>,
    /// Every earlier surface within the retention period, oldest first: how to rebuild it
    /// from the stored one ([`past`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// Moves of the entry between shard ledgers, items of its chain ([`crate::chain::moved`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<crate::chain::record::MoveItem>,
}

/// The index record of one ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// Record format version ([`LEDGER_FORMAT`]).
    pub format: u32,
    /// The `ledger_name` this record belongs to.
    pub ledger_name: String,
    /// How the digests were computed.
    pub digest_algorithm: String,
    /// When the record was last written.
    pub updated_at: DateTime<Utc>,
    /// Entries by server URL.
    pub servers: BTreeMap<String, Entry>,
    /// The hash chain of this write ([`crate::chain`]); absent in ledgers written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<crate::chain::record::IndexChain>,
    /// The values this run added, stored by [`Ledger::store_values`] before the index.
    #[serde(skip)]
    pub pending: Pending,
    /// How many days changes are kept ([`DEFAULT_RETENTION_DAYS`] when `None`).
    #[serde(skip)]
    pub retention_days: Option<u32>,
}

/// The part of an index record read before the rest: its format.
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    format: Option<u64>,
}

/// What a run learned about one server, for [`Ledger::apply`].
#[derive(Debug, Clone)]
pub enum Update<'a> {
    /// The surface was read.
    Readable {
        /// The new surface.
        surface: &'a Surface,
        /// The surface it replaces, when it was read for the comparison (`None`: unchanged,
        /// or its record was lost).
        previous: Option<&'a Surface>,
        /// Its tool digest (computed once by the caller).
        tool_digest: String,
        /// Where it is stored.
        surface_key: String,
        /// The era that worked.
        era: Era,
        /// The transport that worked.
        transport: String,
        /// The authentication state observed.
        auth: AuthState,
        /// Repeated object keys of the answer, `(tool name, pointer)`.
        repeated_keys: Vec<(String, String)>,
        /// The short digest of each tool ([`short_tool_digests`]) when the caller computed
        /// them already; the ledger computes them when it needs them and gets `None`.
        tool_digests: Option<BTreeMap<String, String>>,
    },
    /// The surface was read and its answers were byte-identical to the last readable read's
    /// (same raw-answer digest): surface, digests and key stay; only how it was read moves.
    Unchanged {
        /// The era that worked.
        era: Era,
        /// The transport that worked.
        transport: String,
        /// The authentication state observed.
        auth: AuthState,
        /// Repeated object keys of the answer, `(tool name, pointer)`.
        repeated_keys: Vec<(String, String)>,
    },
    /// The server demanded authentication; the stored surface stays as it was.
    AuthOnly {
        /// The authentication state observed.
        auth: AuthState,
    },
}

impl Ledger {
    /// An empty ledger named `ledger_name`.
    pub fn empty(ledger_name: &str) -> Self {
        Ledger {
            format: LEDGER_FORMAT,
            ledger_name: ledger_name.to_string(),
            digest_algorithm: DIGEST_ALGORITHM.to_string(),
            updated_at: Utc::now(),
            servers: BTreeMap::new(),
            chain: None,
            pending: Pending::default(),
            retention_days: None,
        }
    }

    /// Loads the index record, or an empty ledger when there is none yet.
    pub async fn load(storage: &impl Storage, ledger_name: &str) -> Result<Self, LedgerError> {
        let Some(record) = storage.get_record(Store::Ledger, ledger_name).await? else {
            return Ok(Ledger::empty(ledger_name));
        };
        Ledger::from_bytes(ledger_name, &record.bytes)
    }

    /// Parses an index record, refusing anything this build cannot read faithfully.
    pub fn from_bytes(ledger_name: &str, bytes: &[u8]) -> Result<Self, LedgerError> {
        let unreadable = |problem: String| LedgerError::Unreadable {
            key: ledger_name.to_string(),
            problem,
        };
        // The format is checked first, on a header that skips every other value without
        // building it, so a record of another format is named as such; then the record is
        // read straight into its types (no generic JSON tree: a large foreign record costs
        // its bytes, not ten times them).
        let header: Header = serde_json::from_slice(bytes)
            .map_err(|e| unreadable(format!("it is not a ledger index ({e})")))?;
        if header.format != Some(u64::from(LEDGER_FORMAT)) {
            return Err(unreadable(format!(
                "its format is {:?}, this build reads format {LEDGER_FORMAT}",
                header.format
            )));
        }
        let ledger: Ledger = serde_json::from_slice(bytes)
            .map_err(|e| unreadable(format!("it does not match the ledger format ({e})")))?;
        if ledger.digest_algorithm != DIGEST_ALGORITHM {
            return Err(unreadable(format!(
                "its digests are {}, this build computes {DIGEST_ALGORITHM}",
                ledger.digest_algorithm
            )));
        }
        Ok(ledger)
    }

    /// Reads the stored surface of an entry: `Ok(None)` when the entry names none,
    /// [`LedgerError::SurfaceGone`] when the store says the record does not exist, and
    /// [`LedgerError::SurfaceUnreadable`] when it could not be read in
    /// [`SURFACE_READ_ATTEMPTS`] tries (a truncated answer may read whole the next time).
    pub async fn load_surface(
        storage: &impl Storage,
        entry: &Entry,
    ) -> Result<Option<Surface>, LedgerError> {
        let Some(key) = &entry.surface_key else {
            return Ok(None);
        };
        let mut problem = String::new();
        for attempt in 1..=SURFACE_READ_ATTEMPTS {
            let read = match storage.get_record(Store::Ledger, key).await {
                Ok(None) => return Err(LedgerError::SurfaceGone { key: key.clone() }),
                Ok(Some(record)) => {
                    StoredSurface::from_bytes(&record.bytes).and_then(|stored| stored.to_surface())
                }
                Err(error) => Err(error.to_string()),
            };
            match read {
                Ok(surface) => {
                    return match check_surface(entry, &surface) {
                        Ok(()) => Ok(Some(surface)),
                        Err(problem) => Err(LedgerError::SurfaceMismatch {
                            key: key.clone(),
                            problem,
                        }),
                    };
                }
                Err(why) => {
                    tracing::warn!(key, attempt, problem = %why, "surface record unreadable");
                    problem = why;
                }
            }
        }
        Err(LedgerError::SurfaceUnreadable {
            key: key.clone(),
            problem,
        })
    }

    /// Reads every surface record the index names and checks each against its entry
    /// ([`check_surface`]), then every value its history and steps name: `verify`'s check
    /// that no baseline or kept value was planted. Returns the number
    /// checked, or the first entry whose record is gone, unreadable or not its surface.
    pub async fn check_surfaces(
        &self,
        storage: &impl Storage,
    ) -> Result<usize, (String, LedgerError)> {
        let mut checked = 0;
        let mut packs = PackReader::default();
        for entry in self.servers.values() {
            let failed = |error| (entry.server_url.clone(), error);
            match Ledger::load_surface(storage, entry).await {
                Ok(Some(surface)) => {
                    checked += 1;
                    kept::check_values(storage, entry, surface, &mut packs)
                        .await
                        .map_err(|problem| failed(LedgerError::ValuesDamaged { problem }))?;
                }
                Ok(None) => {}
                Err(error) => return Err(failed(error)),
            }
        }
        Ok(checked)
    }

    /// The entry of a server, if it was seen before.
    pub fn entry(&self, server_url: &str) -> Option<&Entry> {
        self.servers.get(server_url)
    }

    /// Records what this run learned about one server, with the changes it produced.
    pub fn apply(
        &mut self,
        server_url: &str,
        now: DateTime<Utc>,
        update: Update<'_>,
        changes: &[Change],
    ) {
        if !self.pending.knows() {
            let known = self.known_values();
            self.pending.set_known(known);
        }
        let pending = &mut self.pending;
        let entry = self
            .servers
            .entry(server_url.to_string())
            .or_insert_with(|| Entry {
                server_url: server_url.to_string(),
                first_seen: now,
                last_seen: now,
                last_changed: None,
                era: None,
                transport: None,
                identity: ServerIdentity::default(),
                auth: AuthState::default(),
                tool_digest: None,
                surface_key: None,
                tools_total: 0,
                tool_digests: None,
                declared_digests: None,
                repeated_keys: None,
                raw_digest: None,
                archived: Vec::new(),
                history: Vec::new(),
                history_base: None,
                steps: Vec::new(),
                moves: Vec::new(),
            });
        entry.last_seen = now;
        match update {
            Update::Readable {
                surface,
                previous,
                tool_digest,
                surface_key,
                era,
                transport,
                auth,
                repeated_keys,
                tool_digests,
            } => {
                if entry.tool_digests.is_none()
                    || entry.tool_digest.as_deref() != Some(tool_digest.as_str())
                {
                    entry.tool_digests =
                        Some(tool_digests.unwrap_or_else(|| self::tool_digests(surface)));
                }
                if entry.declared_digests.is_none()
                    || entry.tool_digest.as_deref() != Some(tool_digest.as_str())
                {
                    entry.declared_digests = Some(ItemDigests::of(&surface.declared));
                }
                entry.repeated_keys = Some(repeated_keys);
                entry.era = Some(era);
                entry.transport = Some(transport);
                if entry.surface_key.is_some()
                    && entry.surface_key.as_deref() != Some(surface_key.as_str())
                {
                    let undo = previous.map(|previous| {
                        let (sha256, unit) = past::undo(
                            &StoredSurface::value_of(previous),
                            &StoredSurface::value_of(surface),
                        );
                        pending.add(unit);
                        ValueRef { sha256, pack: None }
                    });
                    entry.steps.push(Step {
                        at: now,
                        tool_digest: entry.tool_digest.clone(),
                        undo,
                    });
                }
                entry.identity = surface.identity.clone();
                entry.auth = auth;
                entry.tool_digest = Some(tool_digest);
                entry.surface_key = Some(surface_key);
                entry.tools_total = surface.tools.len();
            }
            Update::Unchanged {
                era,
                transport,
                auth,
                repeated_keys,
            } => {
                entry.repeated_keys = Some(repeated_keys);
                entry.era = Some(era);
                entry.transport = Some(transport);
                entry.auth = auth;
            }
            Update::AuthOnly { auth } => entry.auth = auth,
        }
        if !changes.is_empty() {
            entry.last_changed = Some(now);
            for change in changes {
                let mut item = HistoryItem::of(change, now);
                kept::keep_values(&mut item, change, pending);
                entry.history.push(item);
            }
            entry.link_items();
        }
        let days = self.retention_days.unwrap_or(DEFAULT_RETENTION_DAYS);
        entry.retain_since(now - chrono::Duration::days(i64::from(days)));
    }

    /// Drops the least recently seen servers beyond [`MAX_SERVERS`].
    pub fn evict(&mut self) {
        let excess = self.servers.len().saturating_sub(MAX_SERVERS);
        if excess == 0 {
            return;
        }
        let mut by_age: Vec<(DateTime<Utc>, String)> = self
            .servers
            .values()
            .map(|e| (e.last_seen, e.server_url.clone()))
            .collect();
        by_age.sort();
        for (_, url) in by_age.into_iter().take(excess) {
            self.servers.remove(&url);
        }
    }

    /// Serializes the index record: compact JSON (indentation would cost the history of a
    /// full shard its room; see `tests/ledger_capacity.rs`).
    pub fn to_record(&self) -> Record {
        Record::json(serde_json::to_vec(self).unwrap_or_default())
    }

    /// Writes the index record. Call once, last.
    pub async fn save(&mut self, storage: &impl Storage) -> Result<(), LedgerError> {
        let record = self.seal_for_write(storage).await?;
        self.write(storage, record).await
    }

    /// The index record of the next write, its chain sealed ([`crate::chain::seal`]), after
    /// the run's values are stored ([`Ledger::store_values`]): entries that hold more than
    /// [`ARCHIVE_AT`] items archive their older ones ([`archive`]), and an index still too
    /// large for its record archives more (25 items kept, then 10, then 1), then merges
    /// each entry's pages, before it drops anything ([`Ledger::sealed_record`]'s fallbacks).
    /// A run takes the record before its summary row, which carries the head, and writes it
    /// last.
    pub async fn seal_for_write(&mut self, storage: &impl Storage) -> Result<Record, LedgerError> {
        self.seal_within(storage, MAX_RECORD_BYTES).await
    }

    /// Writes an index record made by [`Ledger::sealed_record`].
    pub async fn write(&self, storage: &impl Storage, record: Record) -> Result<(), LedgerError> {
        storage
            .put_record(Store::Ledger, &self.ledger_name, record)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
