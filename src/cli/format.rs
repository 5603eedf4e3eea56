//! The output formats of `diff`: JSON, a plain-text table, Markdown, the HTML report page and
//! a SARIF 2.1.0 log.
//!
//! Server-controlled text is hostile in every format: control characters (terminal escape
//! sequences included) are shown as `\u{…}`, Markdown metacharacters are escaped, and the HTML
//! page escapes everything.

use std::fmt::Write as _;
use std::str::FromStr;

use serde_json::Value;

use super::CliError;
use super::comparison::Comparison;
use crate::report::ChangeRow;
use crate::report::html::{self, Page, ServerEntry};
use crate::report::sarif;
use crate::risk::unicode::escape_invisible;

/// How `diff` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// One JSON document with the change rows (the default).
    #[default]
    Json,
    /// A fixed-width text table for terminals.
    Table,
    /// A Markdown table for pull requests and chat.
    Markdown,
    /// The self-contained HTML report page.
    Html,
    /// A SARIF 2.1.0 log for code-scanning tools ([`crate::report::sarif`]).
    Sarif,
}

/// The text given was not a format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: use json, table, markdown, html or sarif")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Format::Json),
            "table" => Ok(Format::Table),
            "markdown" | "md" => Ok(Format::Markdown),
            "html" => Ok(Format::Html),
            "sarif" => Ok(Format::Sarif),
            other => Err(UnknownFormat(other.to_string())),
        }
    }
}

/// Renders a comparison in the chosen format.
pub fn render(format: Format, comparison: &Comparison) -> Result<String, CliError> {
    match format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&comparison.document())
                .map_err(|e| CliError::Runtime(format!("cannot encode the changes: {e}")))?;
            text.push('\n');
            Ok(text)
        }
        Format::Table => Ok(table(comparison)),
        Format::Markdown => Ok(markdown(comparison)),
        Format::Html => Ok(html::render(&Page {
            title: "MCP surface diff".to_string(),
            subtitle: format!("{} → {}", comparison.before, comparison.after),
            summary: &comparison.summary,
            servers: vec![ServerEntry {
                row: &comparison.server,
                risk: Some(comparison.risk),
                assumed_risk: Some(comparison.assumed_risk),
            }],
            changes: &comparison.changes,
        })),
        // `diff` keeps no ledger: the default scope (no ledger named, no chain result).
        Format::Sarif => Ok(sarif::render(
            &sarif::Gate {
                fail_on: comparison.fail_on,
                tripped: comparison.gate_tripped,
                changes: &comparison.changes,
            },
            &sarif::Scope::default(),
        )),
    }
}

/// One line of text for a terminal: control characters and line breaks made visible.
fn terminal_text(text: &str) -> String {
    escape_invisible(text)
        .replace('\r', "\\r")
        .replace('\n', "\\n")
        .replace('\t', " ")
}

/// A value cut to `limit` characters, on one line.
fn short_value(value: Option<&Value>, limit: usize) -> String {
    let text = match value {
        None => return "(absent)".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let line = terminal_text(&text);
    if line.chars().count() <= limit {
        line
    } else {
        let cut: String = line.chars().take(limit).collect();
        format!("{cut}…")
    }
}

fn headline(comparison: &Comparison) -> String {
    let count = |s: &str| {
        comparison
            .summary
            .changes_by_severity
            .get(s)
            .copied()
            .unwrap_or(0)
    };
    let gate = if comparison.gate_tripped {
        "tripped"
    } else {
        "not tripped"
    };
    format!(
        "{} (high {}, medium {}, low {}); gate fail_on={}: {gate}",
        crate::report::count_of(comparison.changes.len(), "change"),
        count("high"),
        count("medium"),
        count("low"),
        fail_on_name(comparison),
    )
}

fn fail_on_name(comparison: &Comparison) -> String {
    serde_json::to_value(comparison.fail_on)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn compatibility_text(change: &ChangeRow) -> String {
    change
        .compatibility
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "-".to_string())
}

fn table(comparison: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} -> {}\n{}",
        terminal_text(&comparison.before),
        terminal_text(&comparison.after),
        headline(comparison)
    );
    if comparison.changes.is_empty() {
        return out;
    }
    let cells: Vec<[String; 5]> = comparison
        .changes
        .iter()
        .map(|c| {
            [
                c.severity.as_str().to_string(),
                c.change_class.as_str().to_string(),
                terminal_text(c.tool_name.as_deref().unwrap_or("-")),
                terminal_text(&c.field),
                compatibility_text(c),
            ]
        })
        .collect();
    let header = ["SEVERITY", "CLASS", "TOOL", "FIELD", "COMPATIBILITY"];
    let mut widths = header.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cols: [&str; 5]| {
        let mut text = String::new();
        for (i, (col, width)) in cols.iter().zip(widths).enumerate() {
            if i + 1 == cols.len() {
                text.push_str(col);
            } else {
                let pad = width.saturating_sub(col.chars().count());
                let _ = write!(text, "{col}{}  ", " ".repeat(pad));
            }
        }
        text
    };
    out.push('\n');
    let _ = writeln!(out, "{}", line(header));
    for (row, change) in cells.iter().zip(&comparison.changes) {
        let _ = writeln!(out, "{}", line(row.each_ref().map(String::as_str)));
        for detail in &change.details {
            let _ = writeln!(out, "    - {}", terminal_text(detail));
        }
        let _ = writeln!(
            out,
            "    old: {}",
            short_value(change.old_value.as_ref(), 100)
        );
        let _ = writeln!(
            out,
            "    new: {}",
            short_value(change.new_value.as_ref(), 100)
        );
    }
    out
}

/// Text for one Markdown table cell: HTML and Markdown metacharacters escaped, one line.
fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in escape_invisible(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
    out
}

fn markdown(comparison: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### MCP surface diff\n\n{} → {}\n\n**{}**\n",
        markdown_cell(&comparison.before),
        markdown_cell(&comparison.after),
        markdown_cell(&headline(comparison))
    );
    if comparison.changes.is_empty() {
        return out;
    }
    out.push_str("| Severity | Class | Tool | Field | Compatibility | Details |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for change in &comparison.changes {
        let details: Vec<String> = change.details.iter().map(|d| markdown_cell(d)).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            change.severity.as_str(),
            markdown_cell(change.change_class.as_str()),
            markdown_cell(change.tool_name.as_deref().unwrap_or("-")),
            markdown_cell(&change.field),
            compatibility_text(change),
            if details.is_empty() {
                "-".to_string()
            } else {
                details.join("<br>")
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_parse() {
        for (text, format) in [
            ("json", Format::Json),
            ("table", Format::Table),
            ("markdown", Format::Markdown),
            ("md", Format::Markdown),
            ("html", Format::Html),
            ("sarif", Format::Sarif),
        ] {
            assert_eq!(text.parse::<Format>().unwrap(), format);
        }
        assert!("yaml".parse::<Format>().is_err());
    }

    #[test]
    fn terminal_text_shows_escape_sequences_and_breaks() {
        assert_eq!(terminal_text("a\u{1b}[31mred\nb"), "a\\u{1B}[31mred\\nb");
    }

    #[test]
    fn markdown_cells_cannot_break_the_table_or_inject_markup() {
        assert_eq!(
            markdown_cell("a|b <img> `x` [l](u)\nnext"),
            "a\\|b &lt;img&gt; \\`x\\` \\[l\\](u) next"
        );
    }

    #[test]
    fn long_values_are_cut_on_one_line() {
        let value = Value::String("x".repeat(300));
        let text = short_value(Some(&value), 10);
        assert_eq!(text, format!("{}…", "x".repeat(10)));
        assert_eq!(short_value(None, 10), "(absent)");
    }
}
