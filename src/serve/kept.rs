//! The whole before and after of remembered changes: a value the index names by digest is
//! read from its value pack ([`crate::ledger::values`]), checked against its digest, and shown
//! whole by the API, the pages and the feed.

use crate::ledger::{self, ChangeValues, KeptValue, PackReader};
use crate::platform::Storage;

/// Replaces every value of `values` that a pack keeps by the value itself. A value that cannot
/// be read, or is not the one its digest names, stays a digest (the pages say it is not
/// shown) and is logged.
pub(super) async fn whole(storage: &impl Storage, values: Vec<&mut Option<ChangeValues>>) {
    let mut packs = PackReader::default();
    for values in values.into_iter().flatten() {
        for side in [&mut values.old, &mut values.new].into_iter().flatten() {
            if !matches!(side, KeptValue::Digest { pack: Some(_), .. }) {
                continue;
            }
            match ledger::resolve(storage, &mut packs, side).await {
                Ok(Some(value)) => {
                    *side = KeptValue::Whole {
                        json: ledger::past::keyed(&value).1,
                    }
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "a kept value is not shown"),
            }
        }
    }
}
