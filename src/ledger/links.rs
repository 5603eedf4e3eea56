//! Linking an entry's history into its chain ([`crate::chain`]): each new history item gets
//! its number and link as it is added, so the chain covers it from the first write.

use serde_json::Value;

use super::Entry;
use crate::chain::record::{Link, genesis_link, item_link};

impl Entry {
    /// Gives every unlinked history item its `seq` and `link`, continuing from the last linked
    /// item (history item or move), the entry's base, or the server's genesis.
    pub fn link_items(&mut self) {
        let mut prev = self.chain_head();
        for item in &mut self.history {
            if item.seq.is_some() && item.link.is_some() {
                continue;
            }
            item.seq = Some(prev.seq + 1);
            item.link = None;
            let value = serde_json::to_value(&*item).unwrap_or(Value::Null);
            let link = item_link(&prev.link, &value);
            item.link = Some(link.clone());
            prev = Link {
                seq: prev.seq + 1,
                link,
            };
        }
    }

    /// The last link of the entry's chain: its newest linked item's (history item or move),
    /// else its base, else the server's genesis.
    pub fn chain_head(&self) -> Link {
        let item = self.history.iter().rev().find_map(|i| {
            Some(Link {
                seq: i.seq?,
                link: i.link.clone()?,
            })
        });
        let moved = self.moves.last().map(|m| Link {
            seq: m.seq,
            link: m.link.clone(),
        });
        [item, moved]
            .into_iter()
            .flatten()
            .max_by_key(|link| link.seq)
            .or_else(|| self.history_base.clone())
            .unwrap_or_else(|| Link {
                seq: 0,
                link: genesis_link(&self.server_url),
            })
    }
}
