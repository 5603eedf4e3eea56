//! The Discord webhook message (`format: discord`): the same lines as Slack's, in Discord's
//! markdown, within its 2,000-character `content`. Pure.
//!
//! `allowed_mentions` is empty, so no text in a change (a tool named `@everyone`) pings
//! anyone; backticks become quotes so server text stays inside its code span.

use serde_json::json;

use super::RunFacts;
use super::payload::{CHAT_CHANGES, ChatLine, headline};
use crate::report::ChangeRow;

/// Discord's limit on `content`, in characters.
pub const MAX_CONTENT_CHARS: usize = 2000;

/// The message body and the number of changes it lists.
pub fn message(
    selected: &[&ChangeRow],
    facts: &RunFacts<'_>,
    label: Option<&str>,
) -> (Vec<u8>, usize) {
    let mut head = format!("**{}**", plain(&headline(selected, facts)));
    if let Some(label) = label {
        head.push_str(&format!(" [{}]", plain(label)));
    }
    let mut lines = Vec::new();
    for row in selected.iter().take(CHAT_CHANGES) {
        lines.push(ChatLine::of(row).render("- ", "**", code));
    }
    let tail = facts
        .run_url
        .map(|url| format!("\n<{url}>"))
        .unwrap_or_default();
    // Lines are dropped from the end until the whole message fits, the count said instead.
    let mut shown = lines.len();
    let content = loop {
        let mut content = head.clone();
        for line in &lines[..shown] {
            content.push('\n');
            content.push_str(line);
        }
        if selected.len() > shown {
            content.push_str(&format!("\n…and {} more", selected.len() - shown));
        }
        content.push_str(&tail);
        if content.chars().count() <= MAX_CONTENT_CHARS || shown == 0 {
            break content.chars().take(MAX_CONTENT_CHARS).collect::<String>();
        }
        shown -= 1;
    };
    let body = json!({"content": content, "allowed_mentions": {"parse": []}});
    (serde_json::to_vec(&body).unwrap_or_default(), shown)
}

/// Text outside code spans: markdown's emphasis and link characters escaped.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\*_~`|>[]()#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for inside a code span.
fn code(text: &str) -> String {
    text.replace('`', "'")
}
