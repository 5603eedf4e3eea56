//! Paying for a run as it is recorded: `server_checked` per server, `surface_change_recorded`
//! per change row, and deferral when the budget cannot pay for every change.

use super::{EVENT_CHANGE_RECORDED, EVENT_SERVER_CHECKED};
use crate::platform::Charging;
use crate::report::count_of;

/// Pays for the servers of a run as they are recorded, one at a time.
///
/// The server list was capped so that every server read can pay its `server_checked`; the
/// change rows of one server may only use what is left beyond that reservation, or a server
/// recorded later would be compared without being paid for.
pub(super) struct Payer<'a> {
    pub(super) charging: &'a Charging,
    /// Servers not recorded yet, the one being settled included.
    pub(super) unsettled: u64,
}

impl Payer<'_> {
    /// Pays for a checked server and its change rows. When the budget left after reserving
    /// `server_checked` for every unsettled server cannot pay for every change row, nothing is
    /// charged and `false` comes back: the caller then leaves the ledger entry as it was
    /// (`deferred`), so the next run reports the same changes.
    pub(super) async fn settle(&self, change_rows: usize) -> bool {
        let rows = change_rows as u64;
        let reserve = [(EVENT_SERVER_CHECKED, self.unsettled)];
        if rows > 0
            && self
                .charging
                .affordable_with_reserve(EVENT_CHANGE_RECORDED, &reserve)
                < rows
        {
            return false;
        }
        charge(self.charging, EVENT_CHANGE_RECORDED, rows).await;
        charge(self.charging, EVENT_SERVER_CHECKED, 1).await;
        true
    }
}

/// The note on a deferred row.
pub(super) fn deferred_note(change_rows: usize) -> String {
    format!(
        "{} found, but the maximum total charge cannot pay for all of them; \
         the ledger entry was kept so the next run reports them",
        count_of(change_rows, "change")
    )
}

/// Charges `count` events; a failed charge is logged and never stops the run (the event stays
/// booked against the budget, so the maximum is still never exceeded).
pub(super) async fn charge(charging: &Charging, event: &str, count: u64) -> u64 {
    match charging.charge(event, count).await {
        Ok(charged) => charged,
        Err(error) => {
            tracing::warn!(event, count, %error, "charge failed");
            count
        }
    }
}
