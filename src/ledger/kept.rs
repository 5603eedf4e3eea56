//! How the index and the value store share a run's values: values named by digest are kept in
//! value packs ([`super::values`]), written once per run before the index, and named from the
//! history items and steps that refer to them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{HistoryItem, KeptValue, Ledger, LedgerError, Pending, past};
use crate::diff::Change;
use crate::platform::{MAX_RECORD_BYTES, Storage, Store};

/// Keeps the values of `item` that the index names only by digest: each is named where an
/// earlier run stored it, or added to this run's values.
pub(super) fn keep_values(item: &mut HistoryItem, change: &Change, pending: &mut Pending) {
    let Some(values) = &mut item.values else {
        return;
    };
    let sides = [
        (&mut values.old, &change.old_value),
        (&mut values.new, &change.new_value),
    ];
    for (side, value) in sides {
        let (Some(KeptValue::Digest { sha256, pack, .. }), Some(value)) = (side, value) else {
            continue;
        };
        if let Some(stored) = pending.stored_in(sha256) {
            *pack = Some(stored.to_string());
            continue;
        }
        let (digest, text) = past::keyed(value);
        if digest == *sha256 {
            pending.add(BTreeMap::from([(digest, text)]));
        }
    }
}

impl Ledger {
    /// Writes the values this run added ([`Ledger::pending`]) in as few value packs as fit a
    /// record, and names each pack in the items and steps that refer to its values. Call
    /// before sealing the index. Returns the number of packs written.
    pub async fn store_values(&mut self, storage: &impl Storage) -> Result<usize, LedgerError> {
        let packs = self.pending.take_packs();
        for pack in &packs {
            let (key, record) = pack.record();
            if record.bytes.len() > MAX_RECORD_BYTES {
                tracing::warn!(key, "a value too large for a record is not kept");
                continue;
            }
            storage.put_record(Store::Ledger, &key, record).await?;
            for sha in pack.values.keys() {
                self.pending.stored(sha, &key);
            }
            let named = |sha: &str, slot: &mut Option<String>| {
                if slot.is_none() && pack.values.contains_key(sha) {
                    *slot = Some(key.clone());
                }
            };
            for entry in self.servers.values_mut() {
                for item in &mut entry.history {
                    let Some(values) = &mut item.values else {
                        continue;
                    };
                    for side in [&mut values.old, &mut values.new].into_iter().flatten() {
                        if let KeptValue::Digest { sha256, pack, .. } = side {
                            named(sha256, pack);
                        }
                    }
                }
                for step in &mut entry.steps {
                    if let Some(undo) = &mut step.undo {
                        named(&undo.sha256, &mut undo.pack);
                    }
                }
                for archived in &mut entry.archived {
                    named(&archived.page.sha256, &mut archived.page.pack);
                }
            }
        }
        Ok(packs.len())
    }

    /// Every value pack the index names.
    pub fn value_packs(&self) -> BTreeSet<String> {
        let mut packs = BTreeSet::new();
        for entry in self.servers.values() {
            for item in &entry.history {
                let sides = item.values.iter().flat_map(|v| [&v.old, &v.new]);
                for side in sides.flatten() {
                    if let KeptValue::Digest {
                        pack: Some(pack), ..
                    } = side
                    {
                        packs.insert(pack.clone());
                    }
                }
            }
            let undos = entry.steps.iter().filter_map(|s| s.undo.as_ref());
            packs.extend(undos.filter_map(|undo| undo.pack.clone()));
            for archived in &entry.archived {
                packs.extend(archived.page.pack.iter().cloned());
                packs.extend(archived.packs.iter().cloned());
            }
        }
        packs
    }

    /// Digest → pack of every value the index's items name by digest (what a run need not
    /// store again).
    pub(super) fn known_values(&self) -> HashMap<String, String> {
        let mut known = HashMap::new();
        for entry in self.servers.values() {
            for item in &entry.history {
                let sides = item.values.iter().flat_map(|v| [&v.old, &v.new]);
                for side in sides.flatten() {
                    if let KeptValue::Digest {
                        sha256,
                        pack: Some(pack),
                        ..
                    } = side
                    {
                        known.insert(sha256.clone(), pack.clone());
                    }
                }
            }
        }
        known
    }
}

/// The whole value `kept` stands for: inline, or read from its pack and checked against its
/// digest. `Ok(None)` for a value named by digest that no pack keeps (items written before
/// values were kept).
pub async fn resolve(
    storage: &impl Storage,
    packs: &mut super::PackReader,
    kept: &KeptValue,
) -> Result<Option<serde_json::Value>, super::ValueError> {
    match kept {
        KeptValue::Whole { .. } => Ok(kept.value()),
        KeptValue::Digest { pack: None, .. } => Ok(None),
        KeptValue::Digest {
            sha256,
            pack: Some(pack),
            ..
        } => packs.value(storage, Some(pack), sha256).await.map(Some),
    }
}

/// Reads every archived page of `entry` (checked against its digest and chain) and every
/// value its items name from its pack, checked against its digest, and rebuilds its oldest
/// kept surface from `current` (every step undone, each checked against its chained tool
/// digest): `verify`'s check that no kept value was altered or planted. Returns the number of
/// pages, values and steps checked.
pub(super) async fn check_values(
    storage: &impl Storage,
    entry: &super::Entry,
    current: crate::surface::Surface,
    packs: &mut super::PackReader,
) -> Result<usize, String> {
    let history = super::full_history(storage, entry, packs)
        .await
        .map_err(|e| e.to_string())?;
    let mut checked = entry.archived.len();
    for item in &history {
        let sides = item.values.iter().flat_map(|v| [&v.old, &v.new]);
        for kept in sides.flatten() {
            if matches!(kept, KeptValue::Digest { pack: Some(_), .. }) {
                resolve(storage, packs, kept)
                    .await
                    .map_err(|e| e.to_string())?;
                checked += 1;
            }
        }
    }
    if let Some(oldest) = entry.steps.iter().find(|step| step.undo.is_some()) {
        let before = oldest.at - chrono::Duration::nanoseconds(1);
        past::undo_to(storage, entry, current, before, packs)
            .await
            .map_err(|e| e.to_string())?;
        checked += entry.steps.iter().filter(|s| s.undo.is_some()).count();
    }
    Ok(checked)
}
