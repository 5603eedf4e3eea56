//! The Atom feed (RFC 4287) of a ledger's changes, with the changes page's filters, so a feed
//! reader, an e-mail digest or a chat integration can follow, say, the high-severity changes.
//!
//! Entry ids are stable: a hash of what identifies a remembered change (ledger, server,
//! observed time, class, tool, field), so a reader never sees one change twice. `updated` is
//! the change's `observed_at`. Links are relative; a reader resolves them against the feed's
//! own URL, so they work under any prefix.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::filter::{ChangeFilter, FEED_SIZE};
use super::layout::split_view;
use crate::report::html::escape;
use crate::serve::store::FleetChange;

/// The feed of `selected` (newest first; the first [`FEED_SIZE`] are written).
pub fn render(
    ledger: &str,
    filter: &ChangeFilter,
    selected: &[&FleetChange],
    ledger_updated: DateTime<Utc>,
) -> String {
    let updated = selected
        .first()
        .map(|change| change.change.observed_at)
        .unwrap_or(ledger_updated);
    let query = filter.query(None);
    let mut xml = String::with_capacity(1024 + selected.len().min(FEED_SIZE) * 800);
    xml.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    xml.push_str("<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
    let _ = writeln!(
        xml,
        "<id>urn:sha256:{}</id>\n<title>MCP surface changes: {}</title>\n<updated>{}</updated>\n\
         <author><name>mcp-surface-ledger</name></author>\n<generator>mcp-surface-ledger {}</generator>\n\
         <link rel=\"self\" href=\"{}\"/>\n<link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>",
        hash(&["feed", ledger, &query]),
        text(ledger),
        updated.to_rfc3339(),
        env!("CARGO_PKG_VERSION"),
        text(&link("changes.atom", &query)),
        text(&link("changes", &query)),
    );
    for change in selected.iter().take(FEED_SIZE) {
        entry(&mut xml, ledger, change);
    }
    xml.push_str("</feed>\n");
    xml
}

fn entry(xml: &mut String, ledger: &str, change: &FleetChange) {
    let view = &change.change;
    let (url, listing) = split_view(&change.server_url);
    let observed = view.observed_at.to_rfc3339();
    let tool = view.tool_name.as_deref().unwrap_or_default();
    let id = hash(&[
        "change",
        ledger,
        &change.server_url,
        &observed,
        &view.change_class,
        tool,
        &view.field,
    ]);
    let mut title = format!("[{}] {}", view.severity, view.change_class);
    if !tool.is_empty() {
        let _ = write!(title, " · {tool}");
    } else if crate::diff::declared::item_pointer(&view.field).is_some() {
        // A prompt, resource or template: the field names it.
        let _ = write!(title, " · {}", view.field);
    }
    let _ = write!(title, " · {url}");
    let server_query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("ledger", ledger)
        .append_pair("url", &change.server_url)
        .finish();
    let summary = format!(
        "{} change of {} on {url} ({listing} view): class {}, field {}{}.",
        view.severity,
        if tool.is_empty() {
            "the server"
        } else {
            "tool"
        },
        view.change_class,
        view.field,
        if tool.is_empty() {
            String::new()
        } else {
            format!(", tool {tool}")
        },
    );
    let _ = writeln!(
        xml,
        "<entry>\n<id>urn:sha256:{id}</id>\n<title type=\"text\">{}</title>\n<updated>{observed}</updated>\n\
         <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n\
         <category term=\"{}\" label=\"severity\"/>\n<category term=\"{}\" label=\"class\"/>\n\
         <summary type=\"text\">{}</summary>\n{}</entry>",
        text(&title),
        text(&link("server", &server_query)),
        text(&view.severity),
        text(&view.change_class),
        text(&summary),
        content(view.values.as_ref()),
    );
}

/// The entry's before and after whole, as HTML content: each side folded in a `<details>`
/// (values can be whole tool definitions), or nothing for a change without kept values.
fn content(values: Option<&crate::ledger::ChangeValues>) -> String {
    let Some(values) = values else {
        return String::new();
    };
    let mut html = String::new();
    for (label, side) in [("before", &values.old), ("after", &values.new)] {
        let shown = match side {
            None => "(absent)".to_string(),
            Some(kept) => match kept.value() {
                Some(value) => serde_json::to_string_pretty(&value).unwrap_or_default(),
                None => match kept {
                    crate::ledger::KeptValue::Digest { bytes, sha256, .. } => {
                        format!("({bytes} bytes, SHA-256 {sha256}, not readable from the store)")
                    }
                    crate::ledger::KeptValue::Whole { json } => json.clone(),
                },
            },
        };
        let _ = write!(
            html,
            "<details><summary>{label}</summary><pre>{}</pre></details>",
            escape(&shown)
        );
    }
    format!("<content type=\"html\">{}</content>\n", text(&html))
}

/// `./path?query`.
fn link(path: &str, query: &str) -> String {
    if query.is_empty() {
        format!("./{path}")
    } else {
        format!("./{path}?{query}")
    }
}

/// Text for XML content and attributes: markup escaped, invisible and control characters
/// shown as `\u{…}`, and the two non-characters XML forbids written the same way.
fn text(value: &str) -> String {
    escape(value)
        .replace('\u{FFFE}', "\\u{FFFE}")
        .replace('\u{FFFF}', "\\u{FFFF}")
}

fn hash(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::ChangeView;

    fn change(tool: &str) -> FleetChange {
        FleetChange {
            server_url: "http://a.example/mcp#authenticated".into(),
            change: ChangeView {
                observed_at: "2026-01-31T12:00:00Z".parse().unwrap(),
                change_class: "tool_added".into(),
                tool_name: Some(tool.into()),
                field: "tool".into(),
                severity: "high".into(),
                values: None,
            },
        }
    }

    #[test]
    fn entries_have_stable_ids_and_escaped_text() {
        let hostile = change("</title><script>alert(1)</script>\u{202E}\u{FFFF}\u{1}");
        let plain = change("read_file");
        let filter = ChangeFilter::default();
        let updated = Utc::now();
        let first = render("L", &filter, &[&hostile, &plain], updated);
        let again = render("L", &filter, &[&plain, &hostile], updated);
        let ids = |xml: &str| {
            let mut ids: Vec<String> = xml
                .match_indices("<id>urn:sha256:")
                .map(|(at, _)| xml[at..at + 80].to_string())
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(&first), ids(&again));
        assert_eq!(first.matches("<entry>").count(), 2);
        assert!(!first.contains("<script"));
        assert!(first.contains("&lt;/title&gt;&lt;script&gt;"));
        assert!(first.contains("\\u{202E}\\u{FFFF}\\u{1}"));
        assert!(first.contains("<updated>2026-01-31T12:00:00+00:00</updated>"));
        assert!(first.contains(
            "href=\"./server?ledger=L&amp;url=http%3A%2F%2Fa.example%2Fmcp%23authenticated\""
        ));
    }

    #[test]
    fn a_prompt_change_names_its_prompt_escaped() {
        let mut prompt = change("");
        prompt.change.tool_name = None;
        prompt.change.change_class = "prompt_arguments_changed".into();
        prompt.change.field = "prompts[\"<b>greet</b>\"].arguments".into();
        let xml = render("L", &ChangeFilter::default(), &[&prompt], Utc::now());
        assert!(
            xml.contains(
                "prompt_arguments_changed · prompts[&quot;&lt;b&gt;greet&lt;/b&gt;&quot;].arguments"
            ),
            "{xml}"
        );
        assert!(!xml.contains("<b>"));
    }

    #[test]
    fn an_empty_feed_is_updated_when_the_ledger_was() {
        let updated: DateTime<Utc> = "2026-02-01T00:00:00Z".parse().unwrap();
        let xml = render("L", &ChangeFilter::default(), &[], updated);
        assert!(xml.contains("<updated>2026-02-01T00:00:00+00:00</updated>"));
        assert!(!xml.contains("<entry>"));
    }
}
