//! `history --ledger NAME --server URL [--at TIME [--at TIME]]`: a server's remembered changes
//! with their whole before and after values; with one `--at`, the surface the server served
//! at that time (rebuilt from the stored surface and the kept values, [`crate::ledger::past`])
//! as JSON; with two, the changes between those two surfaces in a `diff` format.
//!
//! Only the ledger store is read; no server is contacted.

use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::CliError;
use super::comparison::compare;
use super::format::{self, Format};
use super::source::Side;
use super::verify::resolve_ledger;
use crate::gate::FailOn;
use crate::ledger::{self, Entry, Ledger, PackReader, PastError};
use crate::platform::{PlatformEnv, Storage};
use crate::serve::backend::Backend;
use crate::surface::Surface;

/// What the operator asked `history` for.
#[derive(Debug, Clone)]
pub struct HistoryArgs {
    /// Root of the local storage layout; on the platform the API is used instead.
    pub storage_dir: Option<PathBuf>,
    /// The ledger (`ledger_name`); `None`: `DEFAULT`, or the store's only ledger.
    pub ledger: Option<String>,
    /// The server's URL, as the ledger keys it.
    pub server: String,
    /// No time: the changes; one: the surface then; two: the changes between them.
    pub at: Vec<DateTime<Utc>>,
    /// The format of a comparison of two times.
    pub format: Format,
}

/// `history`: prints what was asked to `out`.
pub async fn run(args: &HistoryArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.at.len() > 2 {
        return Err(CliError::BadInput(
            "--at is given once (the surface then) or twice (the changes between)".into(),
        ));
    }
    let env = PlatformEnv::from_env().map_err(|e| CliError::BadInput(e.to_string()))?;
    let storage = Backend::open(&env, args.storage_dir.clone()).map_err(CliError::Runtime)?;
    let name = resolve_ledger(&storage, args.ledger.as_deref()).await?;
    let index = Ledger::load(&storage, &name)
        .await
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    if index.servers.is_empty()
        && args.ledger.is_some()
        && let Some(error) = super::verify::missing_ledger(&storage, &name).await
    {
        return Err(error);
    }
    let entry = index.entry(&args.server).ok_or_else(|| {
        let watched: Vec<&str> = index.servers.keys().map(String::as_str).collect();
        let hint = crate::suggest::did_you_mean(&args.server, watched.iter().copied())
            .map_or(String::new(), |hint| format!("; {hint}"));
        let listing = if watched.is_empty() {
            "it watches no server yet".to_string()
        } else {
            format!("it watches: {}", watched.join(", "))
        };
        CliError::BadInput(format!(
            "ledger {name:?} has no server {:?}; {listing}{hint}",
            args.server
        ))
    })?;
    let mut packs = PackReader::default();
    let text = match args.at.as_slice() {
        [] => {
            let listing = changes(&storage, &name, entry, &mut packs).await?;
            serde_json::to_string_pretty(&listing).unwrap_or_default() + "\n"
        }
        [at] => {
            let surface = surface_at(&storage, entry, *at, &mut packs).await?;
            let shown = json!({
                "ledger_name": name,
                "server_url": entry.server_url,
                "at": at,
                "tool_digest": surface.tool_digest(),
                "identity": surface.identity,
                "tools": surface.tools.iter().map(|t| &t.raw).collect::<Vec<_>>(),
            });
            serde_json::to_string_pretty(&shown).unwrap_or_default() + "\n"
        }
        [before, after, ..] => {
            let side = |at: &DateTime<Utc>, surface: Surface| Side {
                label: format!("{} at {}", entry.server_url, at.to_rfc3339()),
                surface,
                snapshot: None,
            };
            let old = surface_at(&storage, entry, *before, &mut packs).await?;
            let new = surface_at(&storage, entry, *after, &mut packs).await?;
            let comparison = compare(&side(before, old), &side(after, new), FailOn::Never, *after);
            format::render(args.format, &comparison)?
        }
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Runtime(format!("cannot write the output: {e}")))
}

/// The surface `entry`'s server served at `at`.
async fn surface_at(
    storage: &impl Storage,
    entry: &Entry,
    at: DateTime<Utc>,
    packs: &mut PackReader,
) -> Result<Surface, CliError> {
    ledger::past::surface_at(storage, entry, at, packs)
        .await
        .map_err(|error| match error {
            PastError::NotWatched(_) | PastError::NotKept(_) | PastError::NoSurface => {
                CliError::BadInput(error.to_string())
            }
            _ => CliError::Runtime(error.to_string()),
        })
}

/// Every remembered change of `entry` with its values whole, and the times its surface
/// changed.
async fn changes(
    storage: &impl Storage,
    ledger_name: &str,
    entry: &Entry,
    packs: &mut PackReader,
) -> Result<Value, CliError> {
    let history = ledger::full_history(storage, entry, packs)
        .await
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    let mut items = Vec::with_capacity(history.len());
    for item in &history {
        let mut sides = [Value::Null, Value::Null];
        if let Some(values) = &item.values {
            for (slot, kept) in sides.iter_mut().zip([&values.old, &values.new]) {
                if let Some(kept) = kept {
                    *slot = ledger::resolve(storage, packs, kept)
                        .await
                        .map_err(|e| CliError::Runtime(e.to_string()))?
                        .unwrap_or(Value::Null);
                }
            }
        }
        let [old_value, new_value] = sides;
        items.push(json!({
            "observed_at": item.observed_at,
            "seq": item.seq,
            "change_class": item.change_class,
            "tool_name": item.tool_name,
            "field": item.field,
            "severity": item.severity,
            "old_value": old_value,
            "new_value": new_value,
        }));
    }
    let surfaces: Vec<Value> = entry
        .steps
        .iter()
        .map(|step| json!({"replaced_at": step.at, "tool_digest": step.tool_digest, "kept": step.undo.is_some()}))
        .collect();
    Ok(json!({
        "ledger_name": ledger_name,
        "server_url": entry.server_url,
        "first_seen": entry.first_seen,
        "last_seen": entry.last_seen,
        "tool_digest": entry.tool_digest,
        "changes_total": items.len(),
        "changes": items,
        "earlier_surfaces": surfaces,
    }))
}
