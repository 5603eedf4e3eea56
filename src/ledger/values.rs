//! The value store: every value a remembered change refers to, kept whole and content-addressed.
//!
//! History items keep small values inline ([`super::KeptValue::Whole`]); a larger value, and
//! every record that undoes a surface change ([`super::past`]), is kept by digest
//! ([`super::KeptValue::Digest`]) in a **value pack**: one record `surface-values-<40 hex>`
//! holding `{"format": 1, "values": {"<sha256>": "<canonical JSON>", ...}}`. A run collects
//! what it adds ([`Pending`]) and writes it at its end in as few packs as fit the platform's
//! record limit (usually one write per run, whatever the number of changes), before the index
//! that names them. A value already kept by an earlier run is named where it is, not stored
//! again.
//!
//! Values are bound to the chained index: an index names each value by its SHA-256 (and its
//! pack), the index head covers those names, and every value read from a pack is checked
//! against its digest ([`Pack::text`]), so a value planted or altered in the store is refused.
//! A pack is swept ([`crate::sweep`]) only when no index names it.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::surface_record::{gzip_if_large, inflate};
use crate::platform::{Record, Storage, StorageError, Store};
use crate::surface::digest::sha256_hex;

/// Key prefix of value packs. Under the surface prefix, so no `ledger_name` can take it.
pub const VALUES_KEY_PREFIX: &str = "surface-values-";
/// Version of the value packs this build writes and reads.
pub const VALUES_FORMAT: u32 = 1;
/// The most bytes of values one pack holds before a run starts another: the pack's JSON stays
/// below the 9 MiB a record may hold, compressed or not.
pub const PACK_VALUE_BYTES: usize = 8 * 1024 * 1024;

/// Whether `key` is a value pack (`surface-values-` + 40 hex digits).
pub fn is_value_pack(key: &str) -> bool {
    key.strip_prefix(VALUES_KEY_PREFIX)
        .is_some_and(|rest| rest.len() == 40 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Why a kept value could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    /// The store could not be read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The value's pack is not in the store (swept, deleted by hand).
    #[error("value pack {0} is gone")]
    PackGone(String),
    /// The pack is not one this build reads.
    #[error("value pack {key} is unreadable: {problem}")]
    PackUnreadable {
        /// The pack's key.
        key: String,
        /// What is wrong.
        problem: String,
    },
    /// The pack does not hold the value, or holds another value under its digest.
    #[error("value {sha256} in pack {key}: {problem}")]
    Planted {
        /// The digest the index names.
        sha256: String,
        /// The pack's key.
        key: String,
        /// What is wrong.
        problem: String,
    },
    /// The index names the value but no pack (its run never stored it).
    #[error("value {0} is named by the ledger but was never stored")]
    NotStored(String),
}

/// A value pack as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pack {
    /// [`VALUES_FORMAT`].
    pub format: u32,
    /// Canonical JSON text by its SHA-256 (lower-case hex).
    pub values: BTreeMap<String, String>,
}

impl Pack {
    /// The record of this pack and its key (the digest of the record's JSON).
    pub fn record(&self) -> (String, Record) {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let digest = sha256_hex(&json);
        let key = format!("{VALUES_KEY_PREFIX}{}", &digest[..40]);
        (key, gzip_if_large(json))
    }

    /// Reads a pack record (plain or gzip-compressed JSON).
    pub fn from_bytes(key: &str, bytes: &[u8]) -> Result<Pack, ValueError> {
        let unreadable = |problem: String| ValueError::PackUnreadable {
            key: key.to_string(),
            problem,
        };
        let json = inflate(bytes).map_err(unreadable)?;
        let pack: Pack = serde_json::from_slice(&json)
            .map_err(|e| unreadable(format!("it is not a value pack ({e})")))?;
        if pack.format != VALUES_FORMAT {
            return Err(unreadable(format!(
                "its format is {}, this build reads format {VALUES_FORMAT}",
                pack.format
            )));
        }
        Ok(pack)
    }

    /// The canonical JSON text of the value with digest `sha256`, checked against it.
    pub fn text(&self, key: &str, sha256: &str) -> Result<&str, ValueError> {
        let planted = |problem: &str| ValueError::Planted {
            sha256: sha256.to_string(),
            key: key.to_string(),
            problem: problem.to_string(),
        };
        let text = self
            .values
            .get(sha256)
            .ok_or_else(|| planted("the pack does not hold it"))?;
        if sha256_hex(text.as_bytes()) != sha256 {
            return Err(planted(
                "the text stored under it does not have that digest (altered or planted)",
            ));
        }
        Ok(text)
    }

    /// The value with digest `sha256`, checked, parsed.
    pub fn value(&self, key: &str, sha256: &str) -> Result<serde_json::Value, ValueError> {
        let text = self.text(key, sha256)?;
        serde_json::from_str(text).map_err(|e| ValueError::Planted {
            sha256: sha256.to_string(),
            key: key.to_string(),
            problem: format!("it is not JSON ({e})"),
        })
    }
}

/// Reads packs, each at most once per reader.
#[derive(Debug, Default)]
pub struct PackReader {
    packs: HashMap<String, Pack>,
}

impl PackReader {
    /// The pack `key`, read from `storage` the first time it is asked for.
    pub async fn pack(&mut self, storage: &impl Storage, key: &str) -> Result<&Pack, ValueError> {
        if !self.packs.contains_key(key) {
            let record = storage
                .get_record(Store::Ledger, key)
                .await?
                .ok_or_else(|| ValueError::PackGone(key.to_string()))?;
            let pack = Pack::from_bytes(key, &record.bytes)?;
            self.packs.insert(key.to_string(), pack);
        }
        self.packs
            .get(key)
            .ok_or_else(|| ValueError::PackGone(key.to_string()))
    }

    /// The length of the text of value `sha256` in pack `key`, when that pack was read.
    pub fn text_len(&self, key: Option<&str>, sha256: &str) -> usize {
        key.and_then(|key| self.packs.get(key))
            .and_then(|pack| pack.values.get(sha256))
            .map_or(0, String::len)
    }

    /// The value `sha256` kept in pack `key` (`None`: never stored), checked against its digest.
    pub async fn value(
        &mut self,
        storage: &impl Storage,
        key: Option<&str>,
        sha256: &str,
    ) -> Result<serde_json::Value, ValueError> {
        let key = key.ok_or_else(|| ValueError::NotStored(sha256.to_string()))?;
        self.pack(storage, key).await?.value(key, sha256)
    }
}

/// What a run adds to the value store, written at its end ([`super::Ledger::store_values`]).
///
/// Values come in units: a unit's values are written in the same pack (an undo record and the
/// tool definitions it names, [`super::past`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    units: Vec<BTreeMap<String, String>>,
    /// Digest → pack of every value the index already names by digest (built when first
    /// needed), so a value kept before is named, not stored again.
    known: Option<HashMap<String, String>>,
}

impl Pending {
    /// Whether nothing waits to be stored.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Whether the map of values stored before was built.
    pub fn knows(&self) -> bool {
        self.known.is_some()
    }

    /// Sets the map of values stored before: digest → pack.
    pub fn set_known(&mut self, known: HashMap<String, String>) {
        self.known = Some(known);
    }

    /// Where a value with this digest is stored already, if it is.
    pub fn stored_in(&self, sha256: &str) -> Option<&str> {
        self.known.as_ref()?.get(sha256).map(String::as_str)
    }

    /// Adds one unit of values (digest → canonical JSON text).
    pub fn add(&mut self, unit: BTreeMap<String, String>) {
        if !unit.is_empty() {
            self.units.push(unit);
        }
    }

    /// The packs of everything pending, each within [`PACK_VALUE_BYTES`] of values unless one
    /// unit alone is larger; the pending units are taken.
    pub fn take_packs(&mut self) -> Vec<Pack> {
        let mut packs = Vec::new();
        let mut current = Pack {
            format: VALUES_FORMAT,
            values: BTreeMap::new(),
        };
        let mut size = 0;
        for unit in std::mem::take(&mut self.units) {
            let unit_size: usize = unit.iter().map(|(k, v)| k.len() + v.len()).sum();
            if size > 0 && size + unit_size > PACK_VALUE_BYTES {
                packs.push(std::mem::replace(
                    &mut current,
                    Pack {
                        format: VALUES_FORMAT,
                        values: BTreeMap::new(),
                    },
                ));
                size = 0;
            }
            for (sha, text) in unit {
                if let std::collections::btree_map::Entry::Vacant(slot) = current.values.entry(sha)
                {
                    size += slot.key().len() + text.len();
                    slot.insert(text);
                }
            }
        }
        if !current.values.is_empty() {
            packs.push(current);
        }
        packs
    }

    /// Remembers that `pack` holds `sha256`.
    pub fn stored(&mut self, sha256: &str, pack: &str) {
        if let Some(known) = &mut self.known {
            known.insert(sha256.to_string(), pack.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(texts: &[&str]) -> BTreeMap<String, String> {
        texts
            .iter()
            .map(|t| (sha256_hex(t.as_bytes()), t.to_string()))
            .collect()
    }

    #[test]
    fn packs_hold_units_whole_and_split_at_the_limit() {
        let big = format!("\"{}\"", "x".repeat(PACK_VALUE_BYTES / 2));
        let big2 = format!("\"{}\"", "y".repeat(PACK_VALUE_BYTES / 2));
        let mut pending = Pending::default();
        pending.add(unit(&["1", "2"]));
        pending.add(unit(&["2", &big]));
        pending.add(unit(&[&big2, "3"]));
        pending.add(BTreeMap::new());
        let packs = pending.take_packs();
        assert!(pending.is_empty());
        assert_eq!(packs.len(), 2);
        assert_eq!(packs[0].values.len(), 3, "1, 2 and big, 2 once");
        assert_eq!(packs[1].values.len(), 2);
        for pack in &packs {
            let (key, record) = pack.record();
            assert!(is_value_pack(&key), "{key}");
            assert!(crate::input::is_valid_record_key(&key));
            assert!(record.bytes.len() <= crate::platform::MAX_RECORD_BYTES);
            let back = Pack::from_bytes(&key, &record.bytes).unwrap();
            assert_eq!(&back, pack);
            for sha in pack.values.keys() {
                back.text(&key, sha).unwrap();
            }
        }
    }

    #[test]
    fn a_value_altered_or_planted_in_a_pack_is_refused() {
        let (sha, other) = (sha256_hex(b"\"a\""), sha256_hex(b"\"b\""));
        let mut pack = Pack {
            format: VALUES_FORMAT,
            values: unit(&["\"a\""]),
        };
        assert_eq!(pack.value("k", &sha).unwrap(), serde_json::json!("a"));
        assert!(matches!(
            pack.text("k", &other),
            Err(ValueError::Planted { .. })
        ));
        pack.values.insert(sha.clone(), "\"evil\"".into());
        let error = pack.text("k", &sha).unwrap_err().to_string();
        assert!(error.contains("altered or planted"), "{error}");
        for bad in [&b"{oops"[..], br#"{"format":9,"values":{}}"#] {
            assert!(matches!(
                Pack::from_bytes("k", bad),
                Err(ValueError::PackUnreadable { .. })
            ));
        }
        assert!(!is_value_pack("surface-values-abc"));
        assert!(!is_value_pack(&format!("surface-{}", "a".repeat(40))));
    }
}
