//! Reading ledgers for the server: the index, a server's history and its stored surface, as
//! the views the HTTP API and the MCP tools answer with.
//!
//! Everything here only reads the ledger store, through [`crate::ledger`] (the format) and a
//! [`Storage`] backend (where the records are). Nothing is written and no target is contacted.
//! Server risk comes from the run's insight cache when it holds the surface, otherwise it is
//! computed from the stored surface; either way it is remembered per surface key, which names
//! the content, so a remembered risk never goes stale.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::error::ServeError;
use super::statuses::{self, Statuses};
pub use super::views::{
    ChangeView, ChangesView, FleetChange, LedgersView, ServerDetail, ServerView, ServersView,
    StatusView, SurfaceView,
};
use super::views::{
    Risks, change_view, server_view, status_view, surface_view, unread_server_view,
};
use crate::input::is_valid_record_key;
use crate::insight::InsightCache;
use crate::ledger::{self, Entry, Ledger, MAX_HISTORY};

mod locate;
use crate::platform::{Storage, Store};
use crate::report::{mark_repeated_keys, summarize_tools};
use crate::surface::Surface;

/// The shared state of every route: one reader of the backend the server was started on.
pub type Reader = std::sync::Arc<LedgerReader<super::backend::Backend>>;

/// How many surface risks are remembered before the memory starts over.
const MAX_REMEMBERED_RISKS: usize = 4096;

/// Reads ledgers from one storage backend.
pub struct LedgerReader<S> {
    storage: S,
    risks: Mutex<HashMap<String, Risks>>,
}

impl<S: Storage> LedgerReader<S> {
    /// A reader over `storage`.
    pub fn new(storage: S) -> Self {
        LedgerReader {
            storage,
            risks: Mutex::new(HashMap::new()),
        }
    }

    /// The watched servers of `ledger_name` (of every shard, for a sharded watch), or of the
    /// store's only ledger instead of a missing default ([`Self::instead_of`]).
    pub async fn servers(&self, ledger_name: &str) -> Result<ServersView, ServeError> {
        match self.servers_named(ledger_name).await {
            Err(ServeError::NoLedger(_)) => {
                let (name, note) = self.instead_of(ledger_name).await?;
                let mut view = self.servers_named(&name).await?;
                view.note = Some(note);
                Ok(view)
            }
            answer => answer,
        }
    }

    async fn servers_named(&self, ledger_name: &str) -> Result<ServersView, ServeError> {
        let ledgers = self.ledgers(ledger_name).await?;
        let Statuses {
            mut by_key,
            run_at,
            note,
        } = statuses::load(&self.storage, ledger_name).await;
        let mut servers = Vec::new();
        let mut updated_at = None;
        let mut chain_alerts = Vec::new();
        for ledger in &ledgers {
            let index = serde_json::to_value(ledger).unwrap_or(Value::Null);
            if let Some(alert) = crate::chain::alert(&index) {
                chain_alerts.push(format!("{}: {alert}", ledger.ledger_name));
            }
            let mut insight = None;
            for entry in ledger.servers.values() {
                let risk = self.risk_of(&ledger.ledger_name, entry, &mut insight).await;
                let mut view = server_view(entry, risk);
                view.status = by_key.remove(&entry.server_url).as_ref().map(status_view);
                servers.push(view);
            }
            updated_at = updated_at.max(Some(ledger.updated_at));
        }
        // Servers the last run watched but never read have no entry: listed with their status.
        let mut unread: Vec<_> = by_key.into_values().collect();
        unread.sort_by(|a, b| a.server_url.cmp(&b.server_url));
        servers.extend(unread.iter().map(unread_server_view));
        Ok(ServersView {
            ledger_name: ledger_name.to_string(),
            updated_at: updated_at.unwrap_or_else(Utc::now),
            servers_total: servers.len(),
            servers,
            chain_alerts,
            last_run_at: run_at,
            status_note: note,
            note: None,
        })
    }

    /// The remembered changes of one server, optionally only those at or after `since` (of
    /// the store's only ledger instead of a missing default, [`Self::instead_of`]).
    pub async fn changes(
        &self,
        ledger_name: &str,
        server_url: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<ChangesView, ServeError> {
        match self.changes_named(ledger_name, server_url, since).await {
            Err(ServeError::NoLedger(_)) => {
                let (name, note) = self.instead_of(ledger_name).await?;
                let mut view = self.changes_named(&name, server_url, since).await?;
                view.note = Some(note);
                Ok(view)
            }
            answer => answer,
        }
    }

    async fn changes_named(
        &self,
        ledger_name: &str,
        server_url: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<ChangesView, ServeError> {
        let ledger = self.ledger_of(ledger_name, server_url).await?;
        let entry = find_entry(&ledger, server_url)?;
        let mut changes: Vec<ChangeView> = self
            .history(entry, since, &mut ledger::PackReader::default())
            .await?
            .iter()
            .map(change_view)
            .collect();
        let values = changes.iter_mut().map(|c| &mut c.values).collect();
        super::kept::whole(&self.storage, values).await;
        Ok(ChangesView {
            ledger_name: ledger.ledger_name.clone(),
            server_url: entry.server_url.clone(),
            since,
            history_limit: MAX_HISTORY,
            changes_total: changes.len(),
            changes,
            note: None,
        })
    }

    /// The stored surface of one server, or the surface it served at `at`, rebuilt from the
    /// stored one and the kept values ([`ledger::past`]) (of the store's only ledger instead
    /// of a missing default, [`Self::instead_of`]).
    pub async fn surface(
        &self,
        ledger_name: &str,
        server_url: &str,
        at: Option<DateTime<Utc>>,
    ) -> Result<SurfaceView, ServeError> {
        match self.surface_named(ledger_name, server_url, at).await {
            Err(ServeError::NoLedger(_)) => {
                let (name, note) = self.instead_of(ledger_name).await?;
                let mut view = self.surface_named(&name, server_url, at).await?;
                view.note = Some(note);
                Ok(view)
            }
            answer => answer,
        }
    }

    async fn surface_named(
        &self,
        ledger_name: &str,
        server_url: &str,
        at: Option<DateTime<Utc>>,
    ) -> Result<SurfaceView, ServeError> {
        let ledger = self.ledger_of(ledger_name, server_url).await?;
        let entry = find_entry(&ledger, server_url)?;
        let Some(at) = at else {
            let surface = self
                .stored_surface(entry)
                .await?
                .ok_or_else(|| ServeError::NoSurface(entry.server_url.clone()))?;
            let risks = Risks::of(&summarize_tools(&surface));
            self.remember(entry, risks);
            return Ok(surface_view(&ledger, entry, &surface, risks, None));
        };
        let mut packs = ledger::PackReader::default();
        let surface = ledger::past::surface_at(&self.storage, entry, at, &mut packs)
            .await
            .map_err(past_error)?;
        let risks = Risks::of(&summarize_tools(&surface));
        Ok(surface_view(&ledger, entry, &surface, risks, Some(at)))
    }

    /// The ledger names of the store, sorted: every index record, except that the shard
    /// ledgers of a sharded watch are named once, by the watch's name.
    pub async fn ledger_names(&self) -> Result<Vec<String>, ServeError> {
        let keys = self
            .storage
            .list_keys(Store::Ledger)
            .await
            .map_err(|e| ServeError::Storage(e.to_string()))?;
        Ok(ledger_names_of(&keys))
    }

    /// The store's ledgers and the one a question naming none is answered from.
    pub async fn ledgers_view(&self) -> Result<LedgersView, ServeError> {
        let ledgers = self.ledger_names().await?;
        let default_ledger = if ledgers.iter().any(|name| name == DEFAULT_LEDGER) {
            Some(DEFAULT_LEDGER.to_string())
        } else if let [only] = ledgers.as_slice() {
            Some(only.clone())
        } else {
            None
        };
        Ok(LedgersView {
            ledgers_total: ledgers.len(),
            ledgers,
            default_ledger,
        })
    }

    /// What to answer when no ledger is named `asked`: the store's only ledger when `asked`
    /// is the default (`DEFAULT`), with a note saying so; otherwise
    /// [`ServeError::UnknownLedger`] listing the ledgers there are.
    pub async fn instead_of(&self, asked: &str) -> Result<(String, String), ServeError> {
        let ledgers = self.ledger_names().await?;
        match ledgers.as_slice() {
            [only] if asked == DEFAULT_LEDGER => Ok((
                only.clone(),
                format!(
                    "no ledger {DEFAULT_LEDGER:?} in the store: its only ledger, {only:?}, is answered"
                ),
            )),
            _ => Err(ServeError::UnknownLedger {
                ledger_name: asked.to_string(),
                ledgers,
            }),
        }
    }

    /// Every remembered change of every server of `ledger_name`, newest first (of the store's
    /// only ledger instead of a missing default, [`Self::instead_of`]).
    pub async fn fleet_changes(&self, ledger_name: &str) -> Result<Vec<FleetChange>, ServeError> {
        match self.fleet_changes_named(ledger_name).await {
            Err(ServeError::NoLedger(_)) => {
                let (name, _) = self.instead_of(ledger_name).await?;
                self.fleet_changes_named(&name).await
            }
            answer => answer,
        }
    }

    async fn fleet_changes_named(&self, ledger_name: &str) -> Result<Vec<FleetChange>, ServeError> {
        let mut changes = Vec::new();
        // One reader for the fleet: the pages of many servers share a run's pack.
        let mut packs = ledger::PackReader::default();
        for ledger in self.ledgers(ledger_name).await? {
            for entry in ledger.servers.values() {
                let history = self.history(entry, None, &mut packs).await?;
                changes.extend(history.iter().map(|item| FleetChange {
                    server_url: entry.server_url.clone(),
                    change: change_view(item),
                }));
            }
        }
        changes.sort_by(|a, b| {
            b.change
                .observed_at
                .cmp(&a.change.observed_at)
                .then_with(|| a.server_url.cmp(&b.server_url))
        });
        Ok(changes)
    }

    /// Reads whole every value of `changes` a value pack keeps (checked against its digest):
    /// the changes page and the feed call it for the changes they show, not for the fleet.
    pub async fn whole_values(&self, changes: &mut [FleetChange]) {
        let values = changes.iter_mut().map(|c| &mut c.change.values).collect();
        super::kept::whole(&self.storage, values).await;
    }

    /// One server with its history and the summaries of its stored surface (of the store's
    /// only ledger instead of a missing default, [`Self::instead_of`]).
    pub async fn server_detail(
        &self,
        ledger_name: &str,
        server_url: &str,
    ) -> Result<ServerDetail, ServeError> {
        match self.server_detail_named(ledger_name, server_url).await {
            Err(ServeError::NoLedger(_)) => {
                let (name, _) = self.instead_of(ledger_name).await?;
                self.server_detail_named(&name, server_url).await
            }
            answer => answer,
        }
    }

    async fn server_detail_named(
        &self,
        ledger_name: &str,
        server_url: &str,
    ) -> Result<ServerDetail, ServeError> {
        let found = self.ledger_of(ledger_name, server_url).await;
        let statuses = statuses::load(&self.storage, ledger_name).await;
        let no_entry = match &found {
            Ok(ledger) => find_entry(ledger, server_url).is_err(),
            Err(error) => matches!(error, ServeError::NoServer { .. }),
        };
        if let Some(status) = find_status(&statuses, server_url).filter(|_| no_entry) {
            // Watched, never read: the page shows its status.
            return Ok(ServerDetail {
                server: unread_server_view(status),
                history: Vec::new(),
                tools: None,
                instructions: None,
                raw_tools: Vec::new(),
            });
        }
        let ledger = found?;
        let entry = find_entry(&ledger, server_url)?;
        let status = find_status(&statuses, &entry.server_url).map(status_view);
        let surface = self.stored_surface(entry).await.ok().flatten();
        let tools = surface.as_ref().map(|surface| {
            let mut summaries = summarize_tools(surface);
            mark_repeated_keys(
                &mut summaries,
                entry.repeated_keys.as_deref().unwrap_or(&[]),
            );
            summaries
        });
        let risk = tools.as_ref().map(Risks::of);
        let raw_tools = surface
            .as_ref()
            .map(|surface| surface.tools.iter().map(|tool| tool.raw.clone()).collect())
            .unwrap_or_default();
        let mut history: Vec<ChangeView> = self
            .history(entry, None, &mut ledger::PackReader::default())
            .await?
            .iter()
            .map(change_view)
            .collect();
        let values = history.iter_mut().map(|c| &mut c.values).collect();
        super::kept::whole(&self.storage, values).await;
        let mut server = server_view(entry, risk);
        server.status = status;
        Ok(ServerDetail {
            server,
            history,
            tools,
            instructions: surface.and_then(|surface| surface.identity.instructions),
            raw_tools,
        })
    }

    /// The remembered changes of `entry` at or after `since`, oldest first: its archived pages
    /// read from the store (each checked against its digest and chain) and the index's items.
    /// A page that is gone or not the one the ledger names makes the answer
    /// `ledger_unreadable`: a history with a hole is not shown as if whole.
    async fn history(
        &self,
        entry: &Entry,
        since: Option<DateTime<Utc>>,
        packs: &mut ledger::PackReader,
    ) -> Result<Vec<ledger::HistoryItem>, ServeError> {
        ledger::history_since(&self.storage, entry, since, packs)
            .await
            .map_err(|e| {
                ServeError::LedgerUnreadable(format!(
                    "the archived history of {}: {e}",
                    entry.server_url
                ))
            })
    }

    /// The index record `ledger_name`, if there is one.
    async fn index(&self, ledger_name: &str) -> Result<Option<Ledger>, ServeError> {
        let record = self
            .storage
            .get_record(Store::Ledger, ledger_name)
            .await
            .map_err(|e| ServeError::Storage(e.to_string()))?;
        record
            .map(|record| Ledger::from_bytes(ledger_name, &record.bytes))
            .transpose()
            .map_err(|e| ServeError::LedgerUnreadable(e.to_string()))
    }

    async fn stored_surface(&self, entry: &Entry) -> Result<Option<Surface>, ServeError> {
        Ledger::load_surface(&self.storage, entry)
            .await
            .map_err(|e| ServeError::LedgerUnreadable(e.to_string()))
    }

    /// The risk of an entry's stored surface: remembered, cached by the last run, or computed.
    /// An unreadable surface has no risk (the listing still answers).
    async fn risk_of(
        &self,
        ledger_name: &str,
        entry: &Entry,
        insight: &mut Option<InsightCache>,
    ) -> Option<Risks> {
        let key = entry.surface_key.as_deref()?;
        if let Some(risks) = self.remembered(key) {
            return Some(risks);
        }
        if insight.is_none() {
            *insight = Some(InsightCache::load(&self.storage, ledger_name).await);
        }
        let cached = insight.as_ref().and_then(|cache| cache.get(key));
        let risks = match cached {
            Some(summaries) => Risks::of(&summaries),
            None => Risks::of(&summarize_tools(&self.stored_surface(entry).await.ok()??)),
        };
        self.remember(entry, risks);
        Some(risks)
    }

    fn remembered(&self, surface_key: &str) -> Option<Risks> {
        self.risks.lock().ok()?.get(surface_key).copied()
    }

    fn remember(&self, entry: &Entry, risk: Risks) {
        let (Some(key), Ok(mut risks)) = (&entry.surface_key, self.risks.lock()) else {
            return;
        };
        if risks.len() >= MAX_REMEMBERED_RISKS {
            risks.clear();
        }
        risks.insert(key.clone(), risk);
    }
}

/// The ledger a question naming none asks for (the input's default `ledger_name`). When the
/// store has no ledger of this name but exactly one other, that one is answered (the answer's
/// `note` says so); the pages, the JSON API and the MCP tools share this rule.
pub const DEFAULT_LEDGER: &str = "DEFAULT";

/// The ledger names among the keys of the ledger store (see [`LedgerReader::ledger_names`]).
pub fn ledger_names_of(keys: &[String]) -> Vec<String> {
    let watches: Vec<&str> = keys
        .iter()
        .filter_map(|key| key.strip_prefix(ledger::SHARDS_KEY_PREFIX))
        .collect();
    // `<watch>-shard-<k>` ([`crate::shard::plan::shard_ledger_name`]), or `<watch>-shard-<k>-of-<n>` as earlier
    // builds named them.
    let is_number = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let is_shard_of_watch = |key: &str| {
        watches.iter().any(|watch| {
            key.strip_prefix(watch)
                .and_then(|rest| rest.strip_prefix("-shard-"))
                .is_some_and(|rest| match rest.split_once("-of-") {
                    Some((k, n)) => is_number(k) && is_number(n),
                    None => is_number(rest),
                })
        })
    };
    let mut names: Vec<String> = keys
        .iter()
        .filter(|key| !ledger::is_reserved_name(key) && !is_shard_of_watch(key))
        .cloned()
        .chain(watches.iter().map(|watch| watch.to_string()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Refuses names that are not ledger index keys (the same rule as the input's `ledger_name`).
fn check_ledger_name(ledger_name: &str) -> Result<(), ServeError> {
    if is_valid_record_key(ledger_name) && !ledger::is_reserved_name(ledger_name) {
        Ok(())
    } else {
        Err(ServeError::BadLedgerName(ledger_name.to_string()))
    }
}

/// The last status of `server_url`, as given or in its normalized URL form.
fn find_status<'a>(
    statuses: &'a Statuses,
    server_url: &str,
) -> Option<&'a crate::server_status::ServerStatus> {
    statuses.by_key.get(server_url).or_else(|| {
        let normalized = url::Url::parse(server_url).ok()?.to_string();
        statuses.by_key.get(&normalized)
    })
}

/// The entry of `server_url`, as given or in its normalized URL form.
fn find_entry<'a>(ledger: &'a Ledger, server_url: &str) -> Result<&'a Entry, ServeError> {
    ledger
        .entry(server_url)
        .or_else(|| {
            let normalized = url::Url::parse(server_url).ok()?.to_string();
            ledger.entry(&normalized)
        })
        .ok_or_else(|| ServeError::NoServer {
            ledger_name: ledger.ledger_name.clone(),
            server_url: server_url.to_string(),
        })
}

/// The answer to a past surface that cannot be given.
fn past_error(error: ledger::PastError) -> ServeError {
    use ledger::PastError;
    match error {
        PastError::NotWatched(_) | PastError::NotKept(_) | PastError::NoSurface => {
            ServeError::NotKept(error.to_string())
        }
        PastError::Ledger(_) | PastError::Value(_) | PastError::Mismatch { .. } => {
            ServeError::LedgerUnreadable(error.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_names_fold_shards_into_their_watch() {
        let keys: Vec<String> = [
            "DEFAULT",
            "surface-0123",
            "insight.DEFAULT",
            "shards.fleet",
            "fleet-shard-1",
            "fleet-shard-2-of-2",
            "fleet-shard-x",
            "other-shard-1",
            "surface-sweep-journal",
            "status.DEFAULT",
            "status.fleet-shard-1",
        ]
        .into_iter()
        .map(str::to_string)
        .collect();
        assert_eq!(
            ledger_names_of(&keys),
            vec!["DEFAULT", "fleet", "fleet-shard-x", "other-shard-1"]
        );
        assert!(ledger_names_of(&[]).is_empty());
    }
}
