//! The last run's status of every watched server, kept beside the ledger.
//!
//! The ledger index only holds servers that were read at least once, and a server that was not
//! read keeps its entry byte for byte, so the index alone cannot say that a server is failing
//! now, nor list one that was never read. The run's dataset and OUTPUT say it, but they are
//! per run (emptied by the next local run, expiring on the platform). So every run also writes
//! one small record `status.<ledger_name>` into the ledger store: for each server of the run,
//! its reason code, since when it has been in that state, and when it was last read. A shard
//! of a sharded watch writes its own, beside its own ledger.
//!
//! The record is not part of the chain and anyone who can write the store can write it, so a
//! reader treats it as untrusted input: [`StatusRecord::parse`] caps every string and the
//! number of servers, and keeps a reason code only when it looks like one.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::platform::{MAX_RECORD_BYTES, Record, Storage, StorageError, Store};
use crate::reason::ReasonCode;
use crate::report::{LedgerStatus, ServerRow};
use crate::targets::Listing;

/// Key prefix of the status records: `status.<ledger_name>`.
pub const STATUS_KEY_PREFIX: &str = "status.";
/// Version of the status record format this build writes and reads.
pub const STATUS_FORMAT: u32 = 1;
/// The most servers a status record read keeps (a run writes at most a few thousand: the
/// servers of one run or shard with both views, and the templates of a registry search).
pub const MAX_STATUS_SERVERS: usize = 10_000;
/// The most characters of a server URL a read keeps.
pub const MAX_URL_CHARS: usize = 2048;
/// The most characters of an error text the record keeps.
pub const MAX_ERROR_CHARS: usize = 500;
/// The most characters of a reason code; a longer one is not a reason code.
const MAX_CODE_CHARS: usize = 40;
/// What a reason code read from a record is replaced by when it is not one.
pub const INVALID_CODE: &str = "INVALID";
/// Suffix of the ledger key of an authenticated view ([`crate::targets::Target::ledger_key`]).
const AUTHENTICATED_SUFFIX: &str = "#authenticated";

/// The key of the status record of `ledger_name`.
pub fn status_key(ledger_name: &str) -> String {
    format!("{STATUS_KEY_PREFIX}{ledger_name}")
}

/// Failures of reading or writing a status record. None of them fails a run: the record is
/// an aid for the pages, not evidence.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// The store could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The record is not a status record this build reads.
    #[error("the status record is not readable: {0}")]
    Malformed(String),
    /// The record would exceed what a record may hold, even without error texts.
    #[error("the status record would be {0} bytes, more than a record may hold")]
    TooLarge(usize),
}

/// The status record of one ledger: the servers of the run that last wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusRecord {
    /// Record format ([`STATUS_FORMAT`]).
    pub format: u32,
    /// The ledger it belongs to.
    pub ledger_name: String,
    /// When the run that wrote it started.
    pub run_at: DateTime<Utc>,
    /// Every server of that run, in input order.
    pub servers: Vec<ServerStatus>,
    /// Set by [`StatusRecord::parse`] when the record named more than [`MAX_STATUS_SERVERS`]
    /// servers and the rest were left out.
    #[serde(skip)]
    pub truncated: bool,
}

/// One server's status after a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// Its key in the ledger: the URL, with `#authenticated` for the authenticated view;
    /// an entry that is no usable target as it was given.
    pub server_url: String,
    /// Whether the run read its surface.
    pub ok: bool,
    /// The row's reason code (`OK` for a read without a problem).
    pub reason_code: String,
    /// The row's error text, shortened to [`MAX_ERROR_CHARS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Since when the server has had this reason code: the first run in a row that gave it.
    pub since: DateTime<Utc>,
    /// When its surface was last read, if ever.
    pub last_read: Option<DateTime<Utc>>,
    /// When the run that wrote this status looked at it.
    pub checked_at: DateTime<Utc>,
}

/// What a status says about a server, for counting and for how loud a page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusClass {
    /// Read without a problem.
    Healthy,
    /// Read, but its stored baseline could not be used (`BASELINE_UNREADABLE`,
    /// `BASELINE_TAMPERED`).
    Degraded,
    /// Not read for a failure of the server or the way to it (connection, timeout, HTTP,
    /// protocol, size, run deadline).
    Unreachable,
    /// It demands authentication, or refused the credential given (`AUTH_REQUIRED`,
    /// `AUTH_REJECTED`).
    AuthRequired,
    /// Not a usable target; never contacted (`BLOCKED_TARGET`).
    Blocked,
    /// Not read because the maximum total charge was reached (`BUDGET_EXHAUSTED`).
    OverBudget,
    /// Not read on purpose (`TEMPLATED_URL`, `CREDENTIAL_DROPPED`) or an unknown code.
    NotRead,
}

impl StatusClass {
    /// The class of a status: its reason code, and whether the surface was read.
    pub fn of(ok: bool, reason_code: &str) -> StatusClass {
        let code = |c: ReasonCode| reason_code == c.as_str();
        if code(ReasonCode::BaselineUnreadable) || code(ReasonCode::BaselineTampered) {
            StatusClass::Degraded
        } else if ok && code(ReasonCode::Ok) {
            StatusClass::Healthy
        } else if code(ReasonCode::AuthRequired) || code(ReasonCode::AuthRejected) {
            StatusClass::AuthRequired
        } else if code(ReasonCode::BlockedTarget) {
            StatusClass::Blocked
        } else if code(ReasonCode::BudgetExhausted) {
            StatusClass::OverBudget
        } else if ok
            || code(ReasonCode::TemplatedUrl)
            || code(ReasonCode::CredentialDropped)
            || reason_code == INVALID_CODE
        {
            StatusClass::NotRead
        } else {
            StatusClass::Unreachable
        }
    }

    /// The class as the API spells it (`healthy`, `unreachable`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StatusClass::Healthy => "healthy",
            StatusClass::Degraded => "degraded",
            StatusClass::Unreachable => "unreachable",
            StatusClass::AuthRequired => "auth_required",
            StatusClass::Blocked => "blocked",
            StatusClass::OverBudget => "over_budget",
            StatusClass::NotRead => "not_read",
        }
    }
}

impl ServerStatus {
    /// What this status says about the server.
    pub fn class(&self) -> StatusClass {
        StatusClass::of(self.ok, &self.reason_code)
    }
}

/// The ledger key of the server a row is about ([`crate::targets::Target::ledger_key`]).
pub fn ledger_key(row: &ServerRow) -> String {
    match row.listing {
        Some(Listing::Authenticated) if !row.server_url.ends_with(AUTHENTICATED_SUFFIX) => {
            format!("{}{AUTHENTICATED_SUFFIX}", row.server_url)
        }
        _ => row.server_url.clone(),
    }
}

/// The status record a run leaves: one status per server row (the first row of a key wins:
/// a repeated entry's `BLOCKED_TARGET` row does not hide the server it repeats). A status
/// keeps the `since` of the previous record when its reason code did not change; a server not
/// read now keeps its last read from the previous record, or from its ledger entry
/// (`last_seen`) when the run left that entry as it was.
pub fn next_record(
    ledger_name: &str,
    run_at: DateTime<Utc>,
    rows: &[ServerRow],
    previous: Option<&StatusRecord>,
    last_seen: impl Fn(&str) -> Option<DateTime<Utc>>,
) -> StatusRecord {
    let before: HashMap<&str, &ServerStatus> = previous
        .map(|record| {
            record
                .servers
                .iter()
                .map(|s| (s.server_url.as_str(), s))
                .collect()
        })
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    let mut servers = Vec::with_capacity(rows.len());
    for row in rows {
        let key = ledger_key(row);
        if !seen.insert(key.clone()) {
            continue;
        }
        let checked_at = row.observed_at.unwrap_or(run_at);
        let reason_code = match (row.reason_code, row.ok) {
            (Some(code), _) => code.as_str(),
            (None, true) => ReasonCode::Ok.as_str(),
            (None, false) => INVALID_CODE,
        }
        .to_string();
        let earlier = before.get(key.as_str());
        let since = earlier
            .filter(|s| s.reason_code == reason_code && s.ok == row.ok)
            .map_or(checked_at, |s| s.since.min(checked_at));
        // An entry this run did not touch was last updated by a read; one it did touch
        // without reading the surface (an auth state) was not.
        let untouched = matches!(row.ledger_status, None | Some(LedgerStatus::Unavailable));
        let last_read = if row.ok {
            Some(checked_at)
        } else {
            let from_entry = untouched.then(|| last_seen(&key)).flatten();
            earlier.and_then(|s| s.last_read).max(from_entry)
        };
        servers.push(ServerStatus {
            server_url: key,
            ok: row.ok,
            reason_code,
            error: row.error.as_deref().map(shorten),
            since,
            last_read,
            checked_at,
        });
    }
    StatusRecord {
        format: STATUS_FORMAT,
        ledger_name: ledger_name.to_string(),
        run_at,
        servers,
        truncated: false,
    }
}

impl StatusRecord {
    /// Reads a stored record as untrusted input: the format must be this build's; at most
    /// [`MAX_STATUS_SERVERS`] servers are kept ([`Self::truncated`] says so), URLs and errors
    /// are cut to [`MAX_URL_CHARS`] and [`MAX_ERROR_CHARS`] characters, and a reason code that
    /// is not upper-case letters, digits and `_` becomes [`INVALID_CODE`].
    pub fn parse(bytes: &[u8]) -> Result<StatusRecord, StatusError> {
        let mut record: StatusRecord =
            serde_json::from_slice(bytes).map_err(|e| StatusError::Malformed(e.to_string()))?;
        if record.format != STATUS_FORMAT {
            return Err(StatusError::Malformed(format!(
                "format {} (this build reads {STATUS_FORMAT})",
                record.format
            )));
        }
        if record.servers.len() > MAX_STATUS_SERVERS {
            record.servers.truncate(MAX_STATUS_SERVERS);
            record.truncated = true;
        }
        for status in &mut record.servers {
            status.server_url = cut(&status.server_url, MAX_URL_CHARS);
            status.error = status.error.as_deref().map(shorten);
            let is_code = !status.reason_code.is_empty()
                && status.reason_code.len() <= MAX_CODE_CHARS
                && status
                    .reason_code
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            if !is_code {
                status.reason_code = INVALID_CODE.to_string();
            }
        }
        Ok(record)
    }

    /// The record as stored: JSON within [`MAX_RECORD_BYTES`] (error texts are left out when
    /// the record would be larger with them).
    pub fn to_record(&self) -> Result<Record, StatusError> {
        let bytes = serde_json::to_vec(self).map_err(|e| StatusError::Malformed(e.to_string()))?;
        if bytes.len() <= MAX_RECORD_BYTES {
            return Ok(Record::json(bytes));
        }
        let mut lean = self.clone();
        for status in &mut lean.servers {
            status.error = None;
        }
        let bytes = serde_json::to_vec(&lean).map_err(|e| StatusError::Malformed(e.to_string()))?;
        if bytes.len() <= MAX_RECORD_BYTES {
            Ok(Record::json(bytes))
        } else {
            Err(StatusError::TooLarge(bytes.len()))
        }
    }

    /// The status record of `ledger_name`, `None` when there is none.
    pub async fn load(
        storage: &impl Storage,
        ledger_name: &str,
    ) -> Result<Option<StatusRecord>, StatusError> {
        storage
            .get_record(Store::Ledger, &status_key(ledger_name))
            .await?
            .map(|record| StatusRecord::parse(&record.bytes))
            .transpose()
    }

    /// Stores this record as `status.<ledger_name>`.
    pub async fn save(&self, storage: &impl Storage) -> Result<(), StatusError> {
        let record = self.to_record()?;
        storage
            .put_record(Store::Ledger, &status_key(&self.ledger_name), record)
            .await?;
        Ok(())
    }
}

/// Writes the status record of a finished run (after its ledger index): the statuses of
/// `rows`, carried over from the record the previous run left; `last_seen` gives a ledger
/// entry's `last_seen` by key. Never fails the run; a problem is logged.
pub async fn record_run(
    storage: &impl Storage,
    ledger_name: &str,
    run_at: DateTime<Utc>,
    rows: &[ServerRow],
    last_seen: impl Fn(&str) -> Option<DateTime<Utc>>,
) {
    let previous = match StatusRecord::load(storage, ledger_name).await {
        Ok(previous) => previous,
        Err(error) => {
            tracing::warn!(%error, "the previous status record is not used");
            None
        }
    };
    let record = next_record(ledger_name, run_at, rows, previous.as_ref(), last_seen);
    if let Err(error) = record.save(storage).await {
        tracing::warn!(%error, "the servers' status record was not written");
    }
}

/// `text` cut to [`MAX_ERROR_CHARS`] characters, with `…` when cut.
fn shorten(text: &str) -> String {
    cut(text, MAX_ERROR_CHARS)
}

/// `text` cut to `limit` characters, with `…` when cut.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hour: u32) -> DateTime<Utc> {
        format!("2026-03-01T{hour:02}:00:00Z").parse().unwrap()
    }

    fn row(url: &str, ok: bool, code: Option<ReasonCode>) -> ServerRow {
        ServerRow {
            server_url: url.to_string(),
            ok,
            reason_code: code,
            observed_at: Some(at(0)),
            ..ServerRow::default()
        }
    }

    #[test]
    fn classes_follow_the_reason_codes() {
        let table = [
            (true, "OK", StatusClass::Healthy),
            (false, "CONNECT_FAIL", StatusClass::Unreachable),
            (false, "TIMEOUT", StatusClass::Unreachable),
            (false, "RUN_DEADLINE", StatusClass::Unreachable),
            (false, "AUTH_REQUIRED", StatusClass::AuthRequired),
            (false, "AUTH_REJECTED", StatusClass::AuthRequired),
            (false, "BLOCKED_TARGET", StatusClass::Blocked),
            (false, "BUDGET_EXHAUSTED", StatusClass::OverBudget),
            (false, "TEMPLATED_URL", StatusClass::NotRead),
            (false, "CREDENTIAL_DROPPED", StatusClass::NotRead),
            (true, "BASELINE_UNREADABLE", StatusClass::Degraded),
            (true, "BASELINE_TAMPERED", StatusClass::Degraded),
            (false, INVALID_CODE, StatusClass::NotRead),
            // A record claiming `ok` with a failure code is not healthy.
            (true, "CONNECT_FAIL", StatusClass::NotRead),
            (false, "OK", StatusClass::Unreachable),
        ];
        for (ok, code, class) in table {
            assert_eq!(StatusClass::of(ok, code), class, "{ok} {code}");
        }
    }

    #[test]
    fn since_carries_over_while_the_code_stays() {
        let first = next_record(
            "L",
            at(1),
            &[
                row("https://a/mcp", false, Some(ReasonCode::ConnectFail)),
                row("https://b/mcp", true, Some(ReasonCode::Ok)),
            ],
            None,
            |_| None,
        );
        assert_eq!(first.servers[0].since, at(0));
        assert_eq!(first.servers[0].last_read, None);
        assert_eq!(first.servers[1].last_read, Some(at(0)));
        let mut later = vec![
            row("https://a/mcp", false, Some(ReasonCode::ConnectFail)),
            row("https://b/mcp", false, Some(ReasonCode::Timeout)),
        ];
        for r in &mut later {
            r.observed_at = Some(at(5));
        }
        let second = next_record("L", at(5), &later, Some(&first), |key| {
            (key == "https://b/mcp").then(|| at(0))
        });
        // An entry the run updated without reading the surface (an auth state) is no read.
        let mut auth = row("https://b/mcp", false, Some(ReasonCode::AuthRequired));
        auth.ledger_status = Some(LedgerStatus::Compared);
        let touched = next_record("L", at(5), &[auth], None, |_| Some(at(5)));
        assert_eq!(touched.servers[0].last_read, None);
        // Unchanged code: the first run's since; changed: now.
        assert_eq!(second.servers[0].since, at(0));
        assert_eq!(second.servers[1].since, at(5));
        assert_eq!(second.servers[1].last_read, Some(at(0)));
        assert_eq!(second.servers[0].checked_at, at(5));
    }

    #[test]
    fn authenticated_rows_key_their_view_and_repeats_do_not_hide_a_server() {
        let mut authenticated = row("https://a/mcp", true, Some(ReasonCode::Ok));
        authenticated.listing = Some(Listing::Authenticated);
        let rows = [
            row("https://a/mcp", true, Some(ReasonCode::Ok)),
            authenticated,
            row("https://a/mcp", false, Some(ReasonCode::BlockedTarget)),
        ];
        let record = next_record("L", at(1), &rows, None, |_| None);
        let keys: Vec<_> = record
            .servers
            .iter()
            .map(|s| s.server_url.as_str())
            .collect();
        assert_eq!(keys, ["https://a/mcp", "https://a/mcp#authenticated"]);
        assert!(record.servers.iter().all(|s| s.reason_code == "OK"));
    }

    #[test]
    fn a_written_record_reads_back() {
        let mut failing = row("https://a/mcp", false, Some(ReasonCode::ConnectFail));
        failing.error = Some("x".repeat(MAX_ERROR_CHARS * 2));
        let record = next_record("L", at(1), &[failing], None, |_| None);
        assert_eq!(
            record.servers[0].error.as_ref().unwrap().chars().count(),
            MAX_ERROR_CHARS + 1
        );
        let stored = record.to_record().unwrap();
        assert_eq!(StatusRecord::parse(&stored.bytes).unwrap(), record);
    }

    #[test]
    fn hostile_records_are_capped_or_refused() {
        for bad in [
            &b"not json"[..],
            br#"{"format": 2, "ledger_name": "L", "run_at": "2026-03-01T00:00:00Z", "servers": []}"#,
            br#"{"format": 1, "ledger_name": "L", "run_at": "yesterday", "servers": []}"#,
            br#"{"format": 1, "ledger_name": "L", "run_at": "2026-03-01T00:00:00Z", "servers": {}}"#,
        ] {
            assert!(StatusRecord::parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let status = serde_json::json!({
            "server_url": "u".repeat(MAX_URL_CHARS + 10),
            "ok": true,
            "reason_code": "<script>alert(1)</script>",
            "error": "e".repeat(MAX_ERROR_CHARS + 10),
            "since": "2026-03-01T00:00:00Z",
            "last_read": null,
            "checked_at": "2026-03-01T00:00:00Z"
        });
        let many = vec![status; MAX_STATUS_SERVERS + 1];
        let bytes = serde_json::to_vec(&serde_json::json!({
            "format": 1, "ledger_name": "L", "run_at": "2026-03-01T00:00:00Z", "servers": many
        }))
        .unwrap();
        let record = StatusRecord::parse(&bytes).unwrap();
        assert!(record.truncated);
        assert_eq!(record.servers.len(), MAX_STATUS_SERVERS);
        let first = &record.servers[0];
        assert_eq!(first.server_url.chars().count(), MAX_URL_CHARS + 1);
        assert_eq!(
            first.error.as_ref().unwrap().chars().count(),
            MAX_ERROR_CHARS + 1
        );
        assert_eq!(first.reason_code, INVALID_CODE);
        assert_ne!(first.class(), StatusClass::Healthy);
    }

    #[test]
    fn an_oversized_record_drops_its_errors_first() {
        let servers: Vec<ServerRow> = (0..20_000)
            .map(|i| {
                let mut r = row(&format!("https://s{i}.example/mcp"), false, None);
                r.error = Some("e".repeat(MAX_ERROR_CHARS));
                r
            })
            .collect();
        let record = next_record("L", at(1), &servers, None, |_| None);
        let stored = record.to_record().unwrap();
        assert!(stored.bytes.len() <= MAX_RECORD_BYTES);
        let back = StatusRecord::parse(&stored.bytes).unwrap();
        assert!(back.servers.iter().all(|s| s.error.is_none()));
    }
}
