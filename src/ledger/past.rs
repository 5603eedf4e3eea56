//! Past surfaces: what turns a server's stored surface back into the surface it served before.
//!
//! Every time a run replaces a server's surface, the entry gains a [`Step`]: when, the tool
//! digest of the surface replaced, and an **undo record** kept by digest in the value store
//! ([`super::values`]). The undo record is generic over the fields of a stored surface
//! ([`super::StoredSurface::value_of`]): per field that differs, either the earlier value
//! (`{"value": sha}`), or for a list (tools, and whatever lists a surface gains) the earlier
//! list as the digests of its items in order (`{"items": [sha, ...]}`), where every item the
//! later list no longer holds is kept beside the record, or `{"absent": true}` for a field the
//! earlier surface did not have. Undoing the steps after a time, newest first, from the stored
//! surface gives the surface served at that time, the same in canonical JSON (RFC 8785), and
//! each result is checked against the step's chained tool digest.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::values::{PackReader, ValueError};
use super::{Entry, Ledger, LedgerError, StoredSurface};
use crate::platform::Storage;
use crate::surface::Surface;
use crate::surface::canon;
use crate::surface::digest::sha256_hex;

/// Version of the undo records.
pub const UNDO_FORMAT: u32 = 1;

/// One earlier surface of a server: when it was replaced and how to get it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// When the surface that replaced it was first observed (the earlier one was served
    /// until then).
    pub at: DateTime<Utc>,
    /// Tool digest of the earlier surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_digest: Option<String>,
    /// The undo record, by digest; `None` when the earlier surface is not known (its record
    /// was lost, or older steps were cut by the retention period): nothing before `at` can
    /// be rebuilt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<ValueRef>,
}

/// A value kept by digest in the value store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueRef {
    /// SHA-256 of its canonical JSON.
    pub sha256: String,
    /// The pack holding it; `None` until the run's values are stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<String>,
}

/// Why a past surface cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum PastError {
    /// The time is before the server was first read.
    #[error("the server was first read at {0}; nothing is known before")]
    NotWatched(DateTime<Utc>),
    /// The surface before this time is not kept.
    #[error(
        "the surface served before {0} is not kept (its baseline was lost or the retention \
         period cut it)"
    )]
    NotKept(DateTime<Utc>),
    /// The entry names no stored surface.
    #[error("the ledger keeps no surface of this server")]
    NoSurface,
    /// The stored surface could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A kept value could not be read, or was not the one the ledger names.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// An undo record did not give the surface its step names.
    #[error("the surface rebuilt for before {at} is not the one the ledger names: {problem}")]
    Mismatch {
        /// The step.
        at: DateTime<Utc>,
        /// What differs.
        problem: String,
    },
}

/// The canonical JSON text of `value` and its SHA-256.
pub fn keyed(value: &Value) -> (String, String) {
    let text = canon::canonical_string(value).unwrap_or_else(|_| value.to_string());
    (sha256_hex(text.as_bytes()), text)
}

/// The undo record that turns stored surface `after` back into `before` (both
/// [`StoredSurface::value_of`] trees), with every value it names by digest: the record's own
/// digest and the values to keep (the record included).
pub fn undo(before: &Value, after: &Value) -> (String, BTreeMap<String, String>) {
    let empty = Map::new();
    let before = before.as_object().unwrap_or(&empty);
    let after = after.as_object().unwrap_or(&empty);
    let mut kept = BTreeMap::new();
    let mut fields = Map::new();
    let names: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for name in names.into_iter().filter(|name| *name != "format") {
        let (old, new) = (before.get(name), after.get(name));
        if old == new {
            continue;
        }
        let field = match (old, new) {
            (None, _) => json!({"absent": true}),
            (Some(Value::Array(old)), Some(Value::Array(new))) => {
                let later: std::collections::HashSet<String> =
                    new.iter().map(|item| keyed(item).0).collect();
                let items: Vec<String> = old
                    .iter()
                    .map(|item| {
                        let (sha, text) = keyed(item);
                        if !later.contains(&sha) {
                            kept.insert(sha.clone(), text);
                        }
                        sha
                    })
                    .collect();
                json!({"items": items})
            }
            (Some(old), _) => {
                let (sha, text) = keyed(old);
                kept.insert(sha.clone(), text);
                json!({"value": sha})
            }
        };
        fields.insert(name.clone(), field);
    }
    let record = json!({"format": UNDO_FORMAT, "fields": fields});
    let (sha, text) = keyed(&record);
    kept.insert(sha.clone(), text);
    (sha, kept)
}

/// `after` with the undo record `record` applied: the earlier stored surface. `kept` gives a
/// value the record names by digest (checked by the caller's store).
pub fn apply_undo(
    after: &Value,
    record: &Value,
    kept: &dyn Fn(&str) -> Result<Value, ValueError>,
) -> Result<Value, String> {
    if record.get("format") != Some(&json!(UNDO_FORMAT)) {
        return Err(format!(
            "undo record of an unknown format: {}",
            record["format"]
        ));
    }
    let mut before = after.as_object().cloned().unwrap_or_default();
    let fields = record["fields"]
        .as_object()
        .ok_or("undo record without fields")?;
    for (name, field) in fields {
        if field.get("absent") == Some(&Value::Bool(true)) {
            before.remove(name);
        } else if let Some(sha) = field.get("value").and_then(Value::as_str) {
            before.insert(name.clone(), kept(sha).map_err(|e| e.to_string())?);
        } else if let Some(items) = field.get("items").and_then(Value::as_array) {
            let later: HashMap<String, &Value> = after
                .get(name)
                .and_then(Value::as_array)
                .map(|list| list.iter().map(|item| (keyed(item).0, item)).collect())
                .unwrap_or_default();
            let mut list = Vec::with_capacity(items.len());
            for sha in items {
                let sha = sha.as_str().ok_or("undo item that is not a digest")?;
                list.push(match later.get(sha) {
                    Some(item) => (*item).clone(),
                    None => kept(sha).map_err(|e| e.to_string())?,
                });
            }
            before.insert(name.clone(), Value::Array(list));
        } else {
            return Err(format!("undo field {name:?} of an unknown kind"));
        }
    }
    Ok(Value::Object(before))
}

/// The surface `entry`'s server served at `at`: its stored surface with every later step
/// undone, newest first, each result checked against its step's tool digest.
pub async fn surface_at(
    storage: &impl Storage,
    entry: &Entry,
    at: DateTime<Utc>,
    packs: &mut PackReader,
) -> Result<Surface, PastError> {
    if at < entry.first_seen {
        return Err(PastError::NotWatched(entry.first_seen));
    }
    let current = Ledger::load_surface(storage, entry)
        .await?
        .ok_or(PastError::NoSurface)?;
    undo_to(storage, entry, current, at, packs).await
}

/// The surface `entry`'s server served at `at`, from its stored surface `current` (already
/// read and checked against the entry): every later step undone, newest first.
pub async fn undo_to(
    storage: &impl Storage,
    entry: &Entry,
    current: Surface,
    at: DateTime<Utc>,
    packs: &mut PackReader,
) -> Result<Surface, PastError> {
    let later: Vec<&Step> = entry.steps.iter().rev().take_while(|s| s.at > at).collect();
    if later.is_empty() {
        return Ok(current);
    }
    let mut value = StoredSurface::value_of(&current);
    for step in later {
        let Some(ValueRef { sha256, pack }) = &step.undo else {
            return Err(PastError::NotKept(step.at));
        };
        let key = pack
            .as_deref()
            .ok_or_else(|| ValueError::NotStored(sha256.clone()))?;
        let pack = packs.pack(storage, key).await?;
        let record = pack.value(key, sha256)?;
        let mismatch = |problem: String| PastError::Mismatch {
            at: step.at,
            problem,
        };
        value = apply_undo(&value, &record, &|sha| pack.value(key, sha)).map_err(mismatch)?;
        let surface = StoredSurface::surface_of_value(value.clone()).map_err(mismatch)?;
        let digest = surface.tool_digest();
        if step.tool_digest.as_deref() != Some(digest.as_str()) {
            return Err(mismatch(format!(
                "its tools digest to {digest}, the step names {}",
                step.tool_digest.as_deref().unwrap_or("none")
            )));
        }
    }
    StoredSurface::surface_of_value(value).map_err(|problem| PastError::Mismatch { at, problem })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(kept: &BTreeMap<String, String>) -> impl Fn(&str) -> Result<Value, ValueError> {
        let kept = kept.clone();
        move |sha: &str| {
            kept.get(sha)
                .map(|text| serde_json::from_str(text).unwrap())
                .ok_or_else(|| ValueError::NotStored(sha.to_string()))
        }
    }

    #[test]
    fn undo_records_give_the_earlier_surface_back_in_canonical_json() {
        let a = json!({"name": "a", "inputSchema": {"type": "object"}});
        let b = json!({"name": "b", "description": "B", "inputSchema": {"type": "object"}});
        let b2 = json!({"name": "b", "description": "B, now longer", "inputSchema": {}});
        let c = json!({"name": "c", "inputSchema": {"type": "object", "x": 1.0}});
        let table = [
            // (before, after): a tool removed, one changed, one added, the order moved.
            (
                json!({"format": 2, "identity": {"name": "s", "version": "1"}, "tools": [a, b]}),
                json!({"format": 2, "identity": {"name": "s", "version": "2"}, "tools": [c, b2]}),
            ),
            (
                json!({"format": 2, "identity": {}, "tools": [b, a]}),
                json!({"format": 2, "identity": {}, "tools": [a, b]}),
            ),
            // A field the earlier surface lacks, and one the later lacks (e.g. prompts).
            (
                json!({"format": 2, "identity": {}, "tools": [], "prompts": [{"name": "p"}]}),
                json!({"format": 2, "identity": {}, "tools": [a], "resources": [1]}),
            ),
            (
                json!({"format": 2, "identity": {}, "tools": [a]}),
                json!({"format": 2, "identity": {}, "tools": [a]}),
            ),
        ];
        for (before, after) in table {
            let (sha, kept) = undo(&before, &after);
            for (digest, text) in &kept {
                assert_eq!(&sha256_hex(text.as_bytes()), digest);
            }
            let record: Value = serde_json::from_str(&kept[&sha]).unwrap();
            let back = apply_undo(&after, &record, &lookup(&kept)).unwrap();
            assert_eq!(
                canon::canonical_string(&back).unwrap(),
                canon::canonical_string(&before).unwrap(),
                "{record}"
            );
            // Items the later list still holds are named, not kept again.
            if before == after {
                assert_eq!(kept.len(), 1, "only the record itself");
            }
        }
    }

    #[test]
    fn a_damaged_undo_record_is_refused() {
        let after = json!({"tools": []});
        let missing = json!({"format": 1, "fields": {"tools": {"items": ["00"]}}});
        let none = BTreeMap::new();
        for (record, expected) in [
            (missing, "never stored"),
            (json!({"format": 7, "fields": {}}), "unknown format"),
            (
                json!({"format": 1, "fields": {"tools": {"what": 1}}}),
                "unknown kind",
            ),
        ] {
            let error = apply_undo(&after, &record, &lookup(&none)).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }
}
