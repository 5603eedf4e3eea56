//! The `notifications` items of a summary row: how each `notify` destination fared
//! ([`crate::notify`]). Named by index and label, never by URL.

use serde::{Deserialize, Serialize};

/// How one `notify` destination fared in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationOutcome {
    /// The destination's position in `notify`, from 0.
    pub destination: usize,
    /// The destination's `label`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `webhook`, `slack` or `discord`.
    pub format: String,
    /// `delivered`, `failed`, `nothing_matched` (no change row passed its filters, so nothing
    /// was sent), or `pending` (in the dataset's summary row, which is pushed before the
    /// ledger is written; OUTPUT and the status message carry the final status).
    pub status: String,
    /// Change rows that passed the destination's filters.
    pub changes_matched: usize,
    /// Change rows the message carried (fewer when the payload size limit cut it).
    pub changes_sent: usize,
    /// Requests sent.
    pub attempts: u32,
    /// The HTTP status of the last answer, when one came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The `webhook-id` of the delivery (webhook destinations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_id: Option<String>,
    /// Why the delivery failed. Never contains the URL or the secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl NotificationOutcome {
    /// The message was accepted (a 2xx answer).
    pub const DELIVERED: &'static str = "delivered";
    /// The message was not accepted within the attempts and time allowed.
    pub const FAILED: &'static str = "failed";
    /// No change row passed the filters; nothing was sent.
    pub const NOTHING_MATCHED: &'static str = "nothing_matched";
    /// Due to be sent after the ledger is written.
    pub const PENDING: &'static str = "pending";
}
