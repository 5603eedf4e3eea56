//! The webhook payload (`format: webhook`), version [`PAYLOAD_VERSION`]: the change rows a
//! destination selected, as in the dataset, with the run's summary, the ledger and its chain
//! head, within [`MAX_PAYLOAD_BYTES`]. Pure.
//!
//! ```json
//! {"type": "mcp_surface.changes_recorded", "payload_version": 1, "timestamp": "...",
//!  "data": {"destination": {"index": 0, "label": "soc"}, "ledger_store": "...",
//!           "ledger_name": "...", "ledger_chain_seq": 7, "ledger_chain_head": "...",
//!           "run_url": "..." | null, "summary": {...}, "changes_matched": 3,
//!           "changes_sent": 3, "changes_omitted": 0, "changes": [{...}, ...]}}
//! ```

use serde_json::{Value, json};

use super::RunFacts;
use crate::report::ChangeRow;

/// The version of the payload's shape; raised when a field changes meaning or goes away
/// (new fields may appear without a new version).
pub const PAYLOAD_VERSION: u32 = 1;

/// The payload's `type`.
pub const EVENT_TYPE: &str = "mcp_surface.changes_recorded";

/// The largest payload sent, in bytes. Change rows that would not fit are left out, the
/// least severe first, and counted in `changes_omitted`.
pub const MAX_PAYLOAD_BYTES: usize = 256 * 1024;

/// The rows selected for a destination, most severe first (dataset order within a severity).
pub fn most_severe_first<'a>(rows: impl Iterator<Item = &'a ChangeRow>) -> Vec<&'a ChangeRow> {
    let mut rows: Vec<&ChangeRow> = rows.collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.severity));
    rows
}

/// The payload's bytes and the number of change rows it carries.
pub fn webhook_body(
    index: usize,
    label: Option<&str>,
    selected: &[&ChangeRow],
    facts: &RunFacts<'_>,
    limit: usize,
) -> (Vec<u8>, usize) {
    let mut summary = serde_json::to_value(facts.summary).unwrap_or(Value::Null);
    if let Some(fields) = summary.as_object_mut() {
        fields.remove("notifications");
    }
    let chain = &facts.summary.chain;
    let frame = |changes: Vec<Value>| {
        let sent = changes.len();
        json!({
            "type": EVENT_TYPE,
            "payload_version": PAYLOAD_VERSION,
            "timestamp": facts.summary.observed_at,
            "data": {
                "destination": {"index": index, "label": label},
                "ledger_store": facts.summary.ledger_store,
                "ledger_name": facts.summary.ledger_name,
                "ledger_chain_seq": chain.ledger_chain_seq,
                "ledger_chain_head": chain.ledger_chain_head,
                "run_url": facts.run_url,
                "summary": summary,
                "changes_matched": selected.len(),
                "changes_sent": sent,
                "changes_omitted": selected.len() - sent,
                "changes": changes,
            }
        })
    };
    // The frame with every count at its widest, so the rows chosen below fit once the real
    // counts are written.
    let room = serde_json::to_vec(&frame(Vec::new()))
        .map(|b| b.len())
        .unwrap_or(limit)
        + 2 * selected.len().to_string().len();
    let mut used = room;
    let mut kept = Vec::new();
    for row in selected {
        let Ok(value) = serde_json::to_value(row) else {
            continue;
        };
        let size = serde_json::to_vec(&value).map(|b| b.len()).unwrap_or(limit) + 1;
        if used + size <= limit {
            used += size;
            kept.push(value);
        }
    }
    let sent = kept.len();
    (serde_json::to_vec(&frame(kept)).unwrap_or_default(), sent)
}

/// The most changes a chat message lists; the rest are counted.
pub const CHAT_CHANGES: usize = 10;

/// The longest before or after value a chat message shows, in characters.
pub const CHAT_VALUE_CHARS: usize = 80;

/// The first line of a chat message: how many changes, how severe, which ledger.
pub fn headline(selected: &[&ChangeRow], facts: &RunFacts<'_>) -> String {
    let count = |s: crate::diff::Severity| selected.iter().filter(|r| r.severity == s).count();
    let mut severities = Vec::new();
    for severity in [
        crate::diff::Severity::High,
        crate::diff::Severity::Medium,
        crate::diff::Severity::Low,
    ] {
        let n = count(severity);
        if n > 0 {
            severities.push(format!("{n} {}", severity.as_str()));
        }
    }
    format!(
        "{} recorded in ledger {} ({})",
        crate::report::count_of(selected.len(), "MCP surface change"),
        facts.summary.ledger_name,
        severities.join(", ")
    )
}

/// A before or after value in short: JSON text cut to [`CHAT_VALUE_CHARS`], `-` when absent.
pub fn short_value(value: Option<&Value>) -> String {
    let text = match value {
        None | Some(Value::Null) => return "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= CHAT_VALUE_CHARS {
        flat
    } else {
        let cut: String = flat.chars().take(CHAT_VALUE_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// The parts of one change a chat line names: severity, class, server, tool, grade, before,
/// after (server text unescaped; each format escapes it for its markup).
pub struct ChatLine {
    /// `high`, `medium` or `low`.
    pub severity: &'static str,
    /// The change class.
    pub class: &'static str,
    /// The server URL.
    pub server: String,
    /// The tool, when the change concerns one.
    pub tool: Option<String>,
    /// The schema grade (`breaking`, `additive`, ...), when there is one.
    pub grade: Option<String>,
    /// The old value in short.
    pub before: String,
    /// The new value in short.
    pub after: String,
}

impl ChatLine {
    /// The line of one change row.
    pub fn of(row: &ChangeRow) -> Self {
        ChatLine {
            severity: row.severity.as_str(),
            class: row.change_class.as_str(),
            server: row.server_url.clone(),
            tool: row.tool_name.clone(),
            grade: row
                .compatibility
                .and_then(|c| serde_json::to_value(c).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            before: short_value(row.old_value.as_ref()),
            after: short_value(row.new_value.as_ref()),
        }
    }

    /// The line in a chat's markup: `bullet` starts it, `strong` wraps the severity, and
    /// `code` makes server text safe inside a code span (each chat escapes its own way).
    pub fn render(&self, bullet: &str, strong: &str, code: fn(&str) -> String) -> String {
        let mut text = format!(
            "{bullet}{strong}{}{strong} {} on `{}`",
            self.severity.to_uppercase(),
            self.class,
            code(&self.server)
        );
        if let Some(tool) = &self.tool {
            text.push_str(&format!(", tool `{}`", code(tool)));
        }
        if let Some(grade) = &self.grade {
            text.push_str(&format!(", grade {grade}"));
        }
        text.push_str(&format!(
            ": `{}` → `{}`",
            code(&self.before),
            code(&self.after)
        ));
        text
    }
}
