//! The Slack incoming-webhook message (`format: slack`): a headline and the most severe
//! changes, each naming server, tool, class, grade and before/after in short. Pure.
//!
//! Server text is escaped as Slack asks (`&`, `<`, `>`), so a tool name cannot mention
//! `<!channel>` or forge a link; backticks become quotes so it stays inside its code span.

use serde_json::json;

use super::RunFacts;
use super::payload::{CHAT_CHANGES, ChatLine, headline};
use crate::report::ChangeRow;

/// The message body and the number of changes it lists.
pub fn message(
    selected: &[&ChangeRow],
    facts: &RunFacts<'_>,
    label: Option<&str>,
) -> (Vec<u8>, usize) {
    let mut text = format!("*{}*", escape(&headline(selected, facts)));
    if let Some(label) = label {
        text.push_str(&format!(" [{}]", escape(label)));
    }
    let shown = selected.len().min(CHAT_CHANGES);
    for row in &selected[..shown] {
        text.push_str(&ChatLine::of(row).render("\n• ", "*", code));
    }
    if selected.len() > shown {
        text.push_str(&format!("\n…and {} more", selected.len() - shown));
    }
    if let Some(url) = facts.run_url {
        text.push_str(&format!("\n<{}|Open the run>", escape(url)));
    }
    let body = json!({"text": text, "unfurl_links": false, "unfurl_media": false});
    (serde_json::to_vec(&body).unwrap_or_default(), shown)
}

/// Slack's control characters escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Text for inside a code span.
fn code(text: &str) -> String {
    escape(&text.replace('`', "'"))
}
