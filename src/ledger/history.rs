//! One remembered change of a server ([`HistoryItem`]) and what the index keeps of its before
//! and after ([`ChangeValues`]).
//!
//! A value is kept whole in the index when it is small: its canonical JSON (RFC 8785) as a
//! string, when that string takes at most [`MAX_KEPT_VALUE_BYTES`] in the index. A larger value
//! is named by its size and digest (the change row's `old_value_hash` / `new_value_hash`) and
//! kept whole in a value pack of the store ([`super::values`]), which the item names. Values are strings in the index,
//! never nested JSON, so the index stays made of strings, integers, booleans, nulls, arrays
//! and objects (`docs/chain.md` relies on it).
//!
//! The values lie outside the item's chain link (`docs/chain.md`): the index may drop them,
//! oldest items first, to stay within its record size without breaking the chain; the index
//! head covers them as stored.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::{Change, ChangeClass, Severity};
use crate::surface::canon;
use crate::surface::digest::sha256_hex;

/// The most bytes one kept value takes in the index, as the JSON string it is stored as.
pub const MAX_KEPT_VALUE_BYTES: usize = 512;

/// One change as remembered in a server's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryItem {
    /// When the change was observed.
    pub observed_at: DateTime<Utc>,
    /// Its class.
    pub change_class: ChangeClass,
    /// The tool concerned, if any.
    pub tool_name: Option<String>,
    /// The field that changed.
    pub field: String,
    /// Its severity.
    pub severity: Severity,
    /// Its number in the server's history chain, 1 for the first ([`crate::chain`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Its link in the server's history chain ([`crate::chain::item_link`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Before and after, as far as the index keeps them. `None` in items written before
    /// values were kept, for changes without values, and when the index dropped them to stay
    /// within its record size. Not part of the item's link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<ChangeValues>,
}

impl HistoryItem {
    /// The item that remembers `change`, observed at `observed_at`, not linked yet.
    pub fn of(change: &Change, observed_at: DateTime<Utc>) -> Self {
        HistoryItem {
            observed_at,
            change_class: change.change_class,
            tool_name: change.tool_name.clone(),
            field: change.field.clone(),
            severity: change.severity,
            seq: None,
            link: None,
            values: ChangeValues::of(change),
        }
    }
}

/// The before and after of a remembered change (a side is absent when the change has no
/// value there, e.g. the "before" of an added tool).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeValues {
    /// The value before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<KeptValue>,
    /// The value after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<KeptValue>,
}

impl ChangeValues {
    /// What the index keeps of the values of `change`; `None` when it has neither.
    pub fn of(change: &Change) -> Option<Self> {
        if change.old_value.is_none() && change.new_value.is_none() {
            return None;
        }
        let kept = |value: &Option<Value>, hash: &Option<String>| {
            value
                .as_ref()
                .map(|value| KeptValue::of(value, hash.as_deref()))
        };
        Some(ChangeValues {
            old: kept(&change.old_value, &change.old_value_hash),
            new: kept(&change.new_value, &change.new_value_hash),
        })
    }
}

/// One value of a remembered change: whole when small, else its size and digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum KeptValue {
    /// The value's canonical JSON (RFC 8785).
    Whole {
        /// The canonical JSON text.
        json: String,
    },
    /// A value too large to keep: what identifies it.
    Digest {
        /// Size of its canonical JSON, in bytes.
        bytes: u64,
        /// SHA-256 of its canonical JSON, lower-case hex (the change row's value hash).
        sha256: String,
        /// The value pack that keeps it whole ([`super::values`]); `None` in items written
        /// before values were kept, and until the run's values are stored.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pack: Option<String>,
    },
}

impl KeptValue {
    /// What the index keeps of `value`; `hash` is its digest when the caller has it.
    pub fn of(value: &Value, hash: Option<&str>) -> Self {
        // A value without a canonical form (nested too deep) is kept as its plain JSON.
        let json = canon::canonical_string(value).unwrap_or_else(|_| value.to_string());
        if stored_len(&json) <= MAX_KEPT_VALUE_BYTES {
            return KeptValue::Whole { json };
        }
        KeptValue::Digest {
            bytes: json.len() as u64,
            sha256: hash
                .map(str::to_string)
                .unwrap_or_else(|| sha256_hex(json.as_bytes())),
            pack: None,
        }
    }

    /// The value, when kept whole (a stored text that is not JSON is shown as that text).
    pub fn value(&self) -> Option<Value> {
        match self {
            KeptValue::Whole { json } => {
                Some(serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.clone())))
            }
            KeptValue::Digest { .. } => None,
        }
    }
}

/// The bytes `text` takes as a JSON string (quotes and escapes included).
fn stored_len(text: &str) -> usize {
    serde_json::to_string(text)
        .map(|quoted| quoted.len())
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::hash_value;
    use serde_json::json;

    fn change(old: Option<Value>, new: Option<Value>) -> Change {
        Change::new(
            ChangeClass::ToolDescriptionChanged,
            Some("read_file"),
            "description",
            old,
            new,
            Severity::Low,
        )
    }

    #[test]
    fn small_values_are_kept_whole_and_large_ones_as_size_and_digest() {
        let large = json!({"description": "x".repeat(600), "b": 1.5});
        let canonical = canon::canonical_string(&large).unwrap();
        let quotes = Value::String("\"".repeat(150));
        let table = [
            (
                json!("Reads a file."),
                Some("\"Reads a file.\"".to_string()),
            ),
            (
                json!({"b": 2, "a": [true, null]}),
                Some(r#"{"a":[true,null],"b":2}"#.into()),
            ),
            // 302 bytes of canonical JSON, 606 as the string the index stores.
            (quotes.clone(), None),
            (large.clone(), None),
        ];
        for (value, whole) in table {
            let kept = KeptValue::of(&value, None);
            match (whole, &kept) {
                (Some(json), KeptValue::Whole { json: stored }) => {
                    assert_eq!(stored, &json);
                    assert!(stored_len(stored) <= MAX_KEPT_VALUE_BYTES);
                    assert_eq!(kept.value(), Some(value.clone()));
                }
                (None, KeptValue::Digest { bytes, sha256, .. }) => {
                    let text = canon::canonical_string(&value).unwrap();
                    assert_eq!(*bytes, text.len() as u64);
                    assert_eq!(sha256, &hash_value(&value), "the row's value hash");
                    assert_eq!(kept.value(), None);
                }
                (whole, kept) => panic!("{value}: expected {whole:?}, kept {kept:?}"),
            }
        }
        let with_hash = ChangeValues::of(&change(Some(large.clone()), None)).unwrap();
        assert_eq!(
            with_hash.old,
            Some(KeptValue::Digest {
                bytes: canonical.len() as u64,
                sha256: hash_value(&large),
                pack: None,
            })
        );
        assert_eq!(with_hash.new, None);
    }

    #[test]
    fn items_keep_values_and_read_old_items_without_them() {
        let now = Utc::now();
        let item = HistoryItem::of(&change(Some(json!("a")), Some(json!("b"))), now);
        let stored = serde_json::to_value(&item).unwrap();
        assert_eq!(
            stored["values"],
            json!({"old": {"json": "\"a\""}, "new": {"json": "\"b\""}})
        );
        let read: HistoryItem = serde_json::from_value(stored).unwrap();
        assert_eq!(read, item);
        assert_eq!(HistoryItem::of(&change(None, None), now).values, None);
        let old = json!({"observed_at": now, "change_class": "tool_added", "tool_name": "t",
            "field": "tool", "severity": "medium", "seq": 1, "link": "00"});
        let read: HistoryItem = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(read.values, None);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            old,
            "written back as it was"
        );
        let digest: KeptValue =
            serde_json::from_value(json!({"bytes": 900, "sha256": "ab"})).unwrap();
        assert!(matches!(digest, KeptValue::Digest { bytes: 900, .. }));
        let foreign = KeptValue::Whole {
            json: "not json".into(),
        };
        assert_eq!(foreign.value(), Some(json!("not json")));
    }
}
