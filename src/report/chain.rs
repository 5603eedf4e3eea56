//! What a run says of its ledger's chain when it is not intact: the rule on a
//! `ledger_chain_status`, and the loud sentence the status message, REPORT and the pages show.

use super::{ChainAnchor, SummaryRow};

/// Whether a `ledger_chain_status` says the chain cannot be trusted as a whole: any status
/// but `new` and `intact` (`adopted`, `broken`, `unwitnessed`, or one a later build adds).
pub fn chain_status_not_intact(status: &str) -> bool {
    !matches!(status, "new" | "intact")
}

impl ChainAnchor {
    /// Whether the run left a chain status other than `new` and `intact` (`broken`,
    /// `adopted`, `unwitnessed`, or any status a later build adds): what the SARIF log reports
    /// as [`super::sarif::CHAIN_RULE`]. No status (no ledger written) is not such a finding.
    pub fn is_not_intact(&self) -> bool {
        self.ledger_chain_status
            .as_deref()
            .is_some_and(chain_status_not_intact)
    }

    /// The loud sentence for a chain that is not intact (`broken`, `unwitnessed`, `adopted`),
    /// as the status message, REPORT and the Standby pages show it; `None` for `new` and
    /// `intact`.
    pub fn alert(&self) -> Option<String> {
        let found = self
            .ledger_chain_break
            .as_deref()
            .unwrap_or("no detail recorded");
        match self.ledger_chain_status.as_deref() {
            Some("unwitnessed") => Some(format!(
                "LEDGER CHAIN UNWITNESSED ({found}): a new chain was started from the state found"
            )),
            Some("adopted") => Some(
                "LEDGER ADOPTED: it had no chain, so its history before this run is vouched for \
                 by nothing but the ledger itself"
                    .to_string(),
            ),
            _ if self.ledger_chain_break.is_some() => Some(format!(
                "LEDGER CHAIN BROKEN ({found}): a new chain was started from the state found"
            )),
            Some("broken") => Some(format!("LEDGER CHAIN BROKEN ({found})")),
            _ => None,
        }
    }
}

impl SummaryRow {
    /// Every chain alert of the run: its own ledger's, and each shard ledger's named.
    pub fn chain_alerts(&self) -> Vec<String> {
        let own = self.chain.alert();
        let shards = self.shards.iter().flatten().filter_map(|shard| {
            shard
                .chain
                .alert()
                .map(|alert| format!("{}: {alert}", shard.ledger_name))
        });
        own.into_iter().chain(shards).collect()
    }
}
