//! The HTML report: one self-contained page (inline CSS, no scripts, no external assets) with
//! the run summary, a table of servers, and every change with its old and new value side by
//! side and the differing part highlighted.
//!
//! Every text that came from a server is hostile: it is HTML-escaped, invisible characters are
//! shown as `\u{…}`, no server text becomes a link or an attribute, and a Content Security
//! Policy forbids scripts and remote loads even if escaping ever failed.
//!
//! The pieces are public because the ledger server's pages (`serve::pages`) show changes with
//! this same code: one renderer for a change, whether in `REPORT` or in a browser.

use std::fmt::Write as _;

use serde_json::Value;

use super::highlight::{Segment, highlight};
use super::{ChangeRow, LedgerStatus, ServerRow, SummaryRow};
use crate::diff::{Compatibility, Severity};
use crate::risk::Risk;
use crate::risk::unicode::escape_invisible;

/// Above this many changes on a page, only high-severity changes start unfolded.
const OPEN_ALL_LIMIT: usize = 100;
/// The most bytes a page may take: below the 9 MiB a platform record may hold, with room for
/// the closing tags. Changes that would take the page beyond are left out, with a note saying
/// how many (every change is a dataset row anyway).
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;
/// Room kept for the note on left-out changes and the closing tags.
const PAGE_TAIL_BYTES: usize = 1024;

/// Everything one page shows.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    /// The page heading.
    pub title: String,
    /// A line under the heading (ledger name, or the two sides of a diff).
    pub subtitle: String,
    /// The run's counts.
    pub summary: &'a SummaryRow,
    /// One entry per server row, in row order.
    pub servers: Vec<ServerEntry<'a>>,
    /// Every change row.
    pub changes: &'a [ChangeRow],
}

/// One server of the servers table.
#[derive(Debug, Clone, Copy)]
pub struct ServerEntry<'a> {
    /// The server's row.
    pub row: &'a ServerRow,
    /// The server's declared risk, when known.
    pub risk: Option<Risk>,
    /// The server's risk under the protocol's defaults for omitted hints, when known.
    pub assumed_risk: Option<Risk>,
}

impl<'a> Page<'a> {
    /// The page of an Actor run.
    pub fn of_run(
        summary: &'a SummaryRow,
        servers: &'a [ServerRow],
        changes: &'a [ChangeRow],
    ) -> Self {
        Page {
            title: "MCP surface ledger report".to_string(),
            subtitle: format!("Ledger {}", summary.ledger_name),
            summary,
            servers: servers
                .iter()
                .map(|row| ServerEntry {
                    row,
                    risk: row.risk,
                    assumed_risk: row.assumed_risk,
                })
                .collect(),
            changes,
        }
    }
}

/// Escapes text for HTML element content and quoted attributes, showing invisible characters.
pub fn escape(text: &str) -> String {
    let visible = escape_invisible(text);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// A value as the reader sees it: strings as text, everything else as indented JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    }
}

fn severity_name(severity: Severity) -> &'static str {
    severity.as_str()
}

fn compatibility_name(compatibility: Compatibility) -> &'static str {
    match compatibility {
        Compatibility::Breaking => "breaking",
        Compatibility::Additive => "additive",
        Compatibility::Loosened => "loosened",
        Compatibility::Notation => "notation",
        Compatibility::Unknown => "unknown",
    }
}

/// The wire name of a risk level (`low`, `medium`, `high`).
pub fn risk_name(risk: Risk) -> &'static str {
    match risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    }
}

/// The declared risk as a badge, followed by the assumed risk in words when the protocol's
/// defaults for unannotated tools would rate the server higher (so `high` stays evidence).
pub fn risk_cell(declared: Option<Risk>, assumed: Option<Risk>) -> String {
    let Some(declared) = declared else {
        return "-".to_string();
    };
    let mut cell = format!(
        "<span class=\"sev sev-{0}\">{0}</span>",
        risk_name(declared)
    );
    if let Some(assumed) = assumed.filter(|a| *a > declared) {
        cell.push(' ');
        cell.push_str(&assumed_risk_note(risk_name(assumed)));
    }
    cell
}

/// The words beside a declared risk when the assumed one is higher (`assumed high:
/// unannotated tools`), with a tooltip saying where the assumption comes from.
pub fn assumed_risk_note(assumed: &str) -> String {
    format!(
        "<span class=\"assumed-risk\" title=\"the protocol's defaults rate tools that declare \
         no annotations as destructive\">assumed {}: unannotated tools</span>",
        escape(assumed)
    )
}

fn ledger_status_name(status: LedgerStatus) -> &'static str {
    match status {
        LedgerStatus::Created => "created",
        LedgerStatus::Compared => "compared",
        LedgerStatus::Unavailable => "unavailable",
        LedgerStatus::Deferred => "deferred",
    }
}

/// The page style: shared with the ledger server's pages, which add their own rules after it.
pub const STYLE: &str = r#"
:root { --high: #b3261e; --high-bg: #fde7e5; --medium: #8a5300; --medium-bg: #fff1d6;
  --low: #35618f; --low-bg: #e6eef8; --ok: #1e6b34; --line: #d8dce1; --muted: #5b6470; }
* { box-sizing: border-box; }
.chain-alert { border: 2px solid var(--high); background: var(--high-bg); color: var(--high);
  font-weight: 600; padding: .6em .8em; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header, main { max-width: 1400px; margin: 0 auto; padding: 16px 24px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
.muted { color: var(--muted); }
.stats { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; padding: 0; list-style: none; }
.stats li { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 120px; }
.stats .num { display: block; font-size: 22px; font-weight: 600; }
.sev { display: inline-block; border-radius: 4px; padding: 0 6px; font-size: 12px; font-weight: 600; text-transform: uppercase; }
.sev-high { color: var(--high); background: var(--high-bg); }
.assumed-risk { color: var(--muted); font-size: 12px; }
.sev-medium { color: var(--medium); background: var(--medium-bg); }
.sev-low { color: var(--low); background: var(--low-bg); }
.compat { display: inline-block; border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; font-size: 12px; }
.compat-breaking { border-color: var(--high); color: var(--high); }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { position: sticky; top: 0; background: #eef0f3; z-index: 1; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.url { max-width: 420px; overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.status-ok { color: var(--ok); font-weight: 600; }
.status-bad { color: var(--high); font-weight: 600; }
section.server-changes { margin: 18px 0; }
section.server-changes h3 { font-size: 15px; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
details.change { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 4px; margin: 6px 0; }
details.change.sev-high { border-left-color: var(--high); }
details.change.sev-medium { border-left-color: var(--medium); }
details.change.sev-low { border-left-color: var(--low); }
details.change > summary { cursor: pointer; padding: 6px 10px; }
details.change code { font-size: 12px; }
.change-body { padding: 0 10px 10px; }
.change-body ul { margin: 4px 0 8px; padding-left: 20px; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.sides h4 { margin: 0 0 2px; font-size: 12px; color: var(--muted); text-transform: uppercase; }
.sides pre { margin: 0; padding: 8px; background: #f4f5f7; border: 1px solid var(--line); border-radius: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 480px; overflow: auto; font-size: 12px; }
del { background: #ffd7d5; color: #6e0d08; text-decoration: none; }
ins { background: #cdeed6; color: #0f4a22; text-decoration: none; }
.absent { color: var(--muted); font-style: italic; }
@media (max-width: 640px) { header, main { padding: 12px; } .sides { grid-template-columns: 1fr; } }
@media print { body { background: #fff; } thead th { position: static; } details.change > summary { list-style: none; } }
"#;

/// Renders the page.
pub fn render(page: &Page<'_>) -> String {
    let mut html = String::with_capacity(16 * 1024 + page.changes.len() * 2048);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(html, "<title>{}</title>", escape(&page.title));
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        html,
        "<header>\n<h1>{}</h1>\n<div class=\"muted\">{} · observed {}</div>",
        escape(&page.title),
        escape(&page.subtitle),
        escape(&page.summary.observed_at.to_rfc3339())
    );
    render_summary(&mut html, page.summary);
    for alert in page.summary.chain_alerts() {
        let _ = writeln!(
            html,
            "<p class=\"chain-alert\" role=\"alert\">{}</p>",
            escape(&alert)
        );
    }
    html.push_str("</header>\n<main>\n");
    render_servers(&mut html, page);
    render_changes(&mut html, page);
    html.push_str("</main>\n</body>\n</html>\n");
    html
}

fn render_summary(html: &mut String, summary: &SummaryRow) {
    let stats = [
        ("servers_requested", "servers", summary.servers_requested),
        ("servers_checked", "checked", summary.servers_checked),
        ("servers_changed", "changed", summary.servers_changed),
        (
            "servers_unreachable",
            "unreachable",
            summary.servers_unreachable,
        ),
        (
            "servers_requiring_auth",
            "require auth",
            summary.servers_requiring_auth,
        ),
        (
            "servers_auth_rejected",
            "credentials rejected",
            summary.servers_auth_rejected,
        ),
        ("servers_blocked", "blocked", summary.servers_blocked),
        ("changes_total", "changes", summary.changes_total),
    ];
    html.push_str("<ul class=\"stats\" id=\"summary\">\n");
    for (key, label, value) in stats {
        let _ = writeln!(
            html,
            "<li data-stat=\"{key}\"><span class=\"num\">{value}</span>{label}</li>"
        );
    }
    for severity in ["high", "medium", "low"] {
        let count = summary
            .changes_by_severity
            .get(severity)
            .copied()
            .unwrap_or(0);
        let _ = writeln!(
            html,
            "<li data-stat=\"severity_{severity}\"><span class=\"num\">{count}</span><span class=\"sev sev-{severity}\">{severity}</span></li>"
        );
    }
    html.push_str("</ul>\n");
}

fn render_servers(html: &mut String, page: &Page<'_>) {
    let _ = writeln!(
        html,
        "<h2>Servers ({})</h2>\n<table id=\"servers\">\n<thead><tr><th>#</th><th>Server</th><th>Status</th><th>Protocol</th><th>Transport</th><th>Tools</th><th>Risk</th><th>Changes</th></tr></thead>\n<tbody>",
        page.servers.len()
    );
    for (index, entry) in page.servers.iter().enumerate() {
        let row = entry.row;
        let code = row.reason_code.map(|c| c.as_str()).unwrap_or("-");
        let status_class = if row.ok { "status-ok" } else { "status-bad" };
        let ledger = row.ledger_status.map(ledger_status_name).unwrap_or("-");
        let mut status = format!(
            "<span class=\"{status_class}\">{}</span> · {ledger}",
            escape(code)
        );
        if let Some(error) = &row.error {
            let _ = write!(status, "<div class=\"muted\">{}</div>", escape(error));
        }
        let protocol = match (&row.protocol_version, &row.protocol_era) {
            (Some(version), Some(era)) => format!("{} ({})", escape(version), escape(era)),
            (Some(version), None) => escape(version),
            _ => "-".to_string(),
        };
        let tools = row
            .tools_total
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".to_string());
        let risk = risk_cell(entry.risk, entry.assumed_risk);
        let changes = if row.change_count > 0 {
            format!("<a href=\"#changes-{index}\">{}</a>", row.change_count)
        } else {
            "0".to_string()
        };
        let _ = writeln!(
            html,
            "<tr id=\"server-{index}\"><td class=\"num\">{}</td><td class=\"url\">{}</td><td>{status}</td><td>{protocol}</td><td>{}</td><td class=\"num\">{tools}</td><td>{risk}</td><td class=\"num\">{changes}</td></tr>",
            index + 1,
            escape(&row.server_url),
            escape(row.transport.as_deref().unwrap_or("-")),
        );
    }
    html.push_str("</tbody>\n</table>\n");
}

fn render_changes(html: &mut String, page: &Page<'_>) {
    let _ = writeln!(html, "<h2>Changes ({})</h2>", page.changes.len());
    if page.changes.is_empty() {
        html.push_str("<p class=\"muted\" id=\"no-changes\">No changes recorded.</p>\n");
        return;
    }
    let open_all = page.changes.len() <= OPEN_ALL_LIMIT;
    let mut sections: Vec<(String, Vec<&ChangeRow>)> = Vec::new();
    for change in page.changes {
        match sections.last_mut() {
            Some((url, rows)) if *url == change.server_url => rows.push(change),
            _ => sections.push((change.server_url.clone(), vec![change])),
        }
    }
    // The first server row of each URL, looked up once instead of once per section.
    let mut row_of_url = std::collections::HashMap::new();
    for (index, server) in page.servers.iter().enumerate() {
        row_of_url
            .entry(server.row.server_url.as_str())
            .or_insert(index);
    }
    let budget = MAX_PAGE_BYTES - PAGE_TAIL_BYTES;
    let mut shown = 0usize;
    'sections: for (url, rows) in sections {
        let anchor = row_of_url
            .get(url.as_str())
            .map(|i| format!(" id=\"changes-{i}\""))
            .unwrap_or_default();
        let _ = writeln!(
            html,
            "<section class=\"server-changes\"{anchor}>\n<h3>{} <span class=\"muted\">({})</span></h3>",
            escape(&url),
            super::count_of(rows.len(), "change")
        );
        for change in rows {
            let before = html.len();
            render_change(html, change, open_all || change.severity == Severity::High);
            if html.len() > budget {
                html.truncate(before);
                html.push_str("</section>\n");
                break 'sections;
            }
            shown += 1;
        }
        html.push_str("</section>\n");
    }
    let left_out = page.changes.len() - shown;
    if left_out > 0 {
        let _ = writeln!(
            html,
            "<p class=\"muted\" id=\"changes-left-out\">{left_out} more changes are not shown: \
             this page is kept below {} MiB, the most a report record may hold. Every change is \
             a row of the run's dataset.</p>",
            MAX_PAGE_BYTES / (1024 * 1024)
        );
    }
}

/// Renders one change: its class, severity, tool, field and compatibility, the findings, and
/// the old and new value side by side with the differing part marked. `open` unfolds it.
pub fn render_change(html: &mut String, change: &ChangeRow, open: bool) {
    let sides = Sides::Both(
        Side::Value(change.old_value.as_ref()),
        Side::Value(change.new_value.as_ref()),
    );
    render_change_with(html, change, open, sides);
}

/// One side of a change as a page shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Side<'a> {
    /// The value; `None` when the change has none on this side (e.g. before an addition).
    Value(Option<&'a Value>),
    /// A value the ledger's history did not keep whole: its size and digest.
    NotKept {
        /// Size of its canonical JSON, in bytes.
        bytes: u64,
        /// SHA-256 of its canonical JSON (the change row's value hash).
        sha256: &'a str,
    },
}

/// What a rendered change shows of its before and after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sides<'a> {
    /// Both sides.
    Both(Side<'a>, Side<'a>),
    /// Neither: a change the ledger's history keeps without values; a note says where they are.
    NotKept,
}

/// Renders one change as [`render_change`] does, showing `sides` as its before and after: the
/// ledger server's pages render remembered changes with it, whose values the history keeps
/// only when small.
pub fn render_change_with(html: &mut String, change: &ChangeRow, open: bool, sides: Sides<'_>) {
    let severity = severity_name(change.severity);
    let _ = write!(
        html,
        "<details class=\"change sev-{severity}\" data-class=\"{}\"{}>\n<summary><span class=\"sev sev-{severity}\">{severity}</span> <strong>{}</strong>",
        change.change_class.as_str(),
        if open { " open" } else { "" },
        change.change_class.as_str()
    );
    if let Some(tool) = &change.tool_name {
        let _ = write!(html, " · tool <code>{}</code>", escape(tool));
    }
    let _ = write!(html, " · field <code>{}</code>", escape(&change.field));
    if let Some(compatibility) = change.compatibility {
        let name = compatibility_name(compatibility);
        let _ = write!(html, " <span class=\"compat compat-{name}\">{name}</span>");
    }
    html.push_str("</summary>\n<div class=\"change-body\">\n");
    if !change.details.is_empty() {
        html.push_str("<ul>");
        for detail in &change.details {
            let _ = write!(html, "<li>{}</li>", escape(detail));
        }
        html.push_str("</ul>\n");
    }
    match sides {
        Sides::Both(old, new) => render_sides(html, old, new),
        Sides::NotKept => {
            let _ = write!(
                html,
                "<p class=\"muted values-not-kept\">The ledger does not hold this change's values \
                 (recorded before it kept them, or dropped to keep the index within its size): \
                 before and after are in the change row of the run of {}.</p>",
                escape(&change.observed_at.to_rfc3339())
            );
        }
    }
    html.push_str("</div>\n</details>\n");
}

/// What one side shows: its text, a note on a value not kept, or nothing (absent).
enum Shown {
    Text(String),
    NotKept(String),
    Absent,
}

impl Shown {
    fn of(side: Side<'_>) -> Self {
        match side {
            Side::Value(Some(value)) => Shown::Text(value_text(value)),
            Side::Value(None) => Shown::Absent,
            Side::NotKept { bytes, sha256 } => Shown::NotKept(format!(
                "({bytes} bytes, not kept in the ledger; SHA-256 {sha256})"
            )),
        }
    }

    /// The whole text as one changed segment (the other side has nothing to compare with).
    fn whole(&self) -> Option<Vec<Segment>> {
        match self {
            Shown::Text(text) => Some(whole(text)),
            _ => None,
        }
    }
}

fn render_sides(html: &mut String, old: Side<'_>, new: Side<'_>) {
    let (old, new) = (Shown::of(old), Shown::of(new));
    let (old_segments, new_segments) = match (&old, &new) {
        (Shown::Text(o), Shown::Text(n)) => {
            let (a, b) = highlight(o, n);
            (Some(a), Some(b))
        }
        (o, n) => (o.whole(), n.whole()),
    };
    html.push_str("<div class=\"sides\">\n");
    render_side(html, "before", "old", &old, old_segments.as_deref(), "del");
    render_side(html, "after", "new", &new, new_segments.as_deref(), "ins");
    html.push_str("</div>\n");
}

fn whole(text: &str) -> Vec<Segment> {
    vec![Segment {
        text: text.to_string(),
        changed: true,
    }]
}

fn render_side(
    html: &mut String,
    label: &str,
    class: &str,
    shown: &Shown,
    segments: Option<&[Segment]>,
    mark: &str,
) {
    let _ = write!(html, "<div class=\"side side-{class}\"><h4>{label}</h4>");
    match (shown, segments) {
        (Shown::NotKept(note), _) => {
            let _ = write!(
                html,
                "<pre class=\"absent not-kept\">{}</pre>",
                escape(note)
            );
        }
        (_, None) => html.push_str("<pre class=\"absent\">(absent)</pre>"),
        (_, Some(segments)) => {
            html.push_str("<pre>");
            for segment in segments {
                if segment.changed {
                    let _ = write!(html, "<{mark}>{}</{mark}>", escape(&segment.text));
                } else {
                    html.push_str(&escape(&segment.text));
                }
            }
            html.push_str("</pre>");
        }
    }
    html.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Change, ChangeClass};
    use crate::reason::ReasonCode;
    use chrono::Utc;
    use serde_json::json;

    #[test]
    fn escape_neutralizes_markup_and_shows_invisible_characters() {
        assert_eq!(
            escape("<script>alert('x')</script>&\"\u{200B}"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\\u{200B}"
        );
    }

    fn hostile_page_html() -> String {
        let evil = "<img src=x onerror=alert(1)><script>fetch('https://evil.example')</script>";
        let server = ServerRow {
            record_type: "server",
            server_url: format!("https://srv.example/mcp?{evil}"),
            ok: true,
            reason_code: Some(ReasonCode::Ok),
            transport: Some(evil.to_string()),
            protocol_version: Some("2025-11-25".into()),
            protocol_era: Some("classic".into()),
            tools_total: Some(3),
            change_count: 1,
            ledger_status: Some(LedgerStatus::Compared),
            error: Some(evil.to_string()),
            ..ServerRow::default()
        };
        let mut change = Change::new(
            ChangeClass::ToolDescriptionChanged,
            Some(evil),
            "description",
            Some(json!("Reads a file.")),
            Some(json!(format!("Reads a file. {evil}"))),
            Severity::Low,
        );
        change.severity = Severity::High;
        change.compatibility = Some(Compatibility::Breaking);
        change.details = vec![evil.to_string()];
        let changes = vec![ChangeRow::of(&server.server_url, &change, Utc::now())];
        let servers = vec![server];
        let summary = SummaryRow::tally(&servers, &changes);
        let page = Page {
            servers: vec![ServerEntry {
                row: &servers[0],
                risk: Some(Risk::High),
                assumed_risk: Some(Risk::High),
            }],
            ..Page::of_run(&summary, &servers, &changes)
        };
        render(&page)
    }

    #[test]
    fn server_text_never_becomes_markup() {
        let html = hostile_page_html();
        assert!(!html.contains("<script"), "raw script tag in page");
        assert!(!html.contains("<img"), "raw img tag in page");
        assert!(html.contains("&lt;script&gt;fetch("));
        assert!(
            !html.contains("https://evil")
                || html.contains("fetch(&#39;https://evil.example&#39;)")
        );
        assert!(html.contains("default-src &#39;none&#39;") || html.contains("default-src 'none'"));
    }

    #[test]
    fn the_page_carries_summary_servers_and_changes() {
        let html = hostile_page_html();
        assert!(html.contains("<li data-stat=\"changes_total\"><span class=\"num\">1</span>"));
        assert!(html.contains("<li data-stat=\"severity_high\"><span class=\"num\">1</span>"));
        assert!(html.contains("<tr id=\"server-0\">"));
        assert!(html.contains("<span class=\"sev sev-high\">high</span>"));
        assert!(html.contains("data-class=\"tool_description_changed\" open>"));
        assert!(html.contains("<span class=\"compat compat-breaking\">breaking</span>"));
        assert!(html.contains("<pre>Reads a file.<ins> &lt;img"));
        assert!(html.contains("<a href=\"#changes-0\">1</a>"));
        assert!(html.contains("<section class=\"server-changes\" id=\"changes-0\">"));
    }

    #[test]
    fn a_page_with_too_many_changes_stays_below_the_record_limit_and_says_so() {
        // 2,000 servers, each with 5 description changes of 1 KB on each side.
        let servers: Vec<ServerRow> = (0..2000)
            .map(|i| ServerRow {
                record_type: "server",
                server_url: format!("https://mcp-{i}.example.com/mcp"),
                ok: true,
                change_count: 5,
                ..ServerRow::default()
            })
            .collect();
        let text = "Reads a file of the repository and returns its content. ".repeat(18);
        let changes: Vec<ChangeRow> = servers
            .iter()
            .flat_map(|server| {
                (0..5).map(|t| {
                    let change = Change::new(
                        ChangeClass::ToolDescriptionChanged,
                        Some(&format!("tool_{t}")),
                        "description",
                        Some(json!(text)),
                        Some(json!(format!("{text} Now also writes."))),
                        Severity::Low,
                    );
                    ChangeRow::of(&server.server_url, &change, Utc::now())
                })
            })
            .collect();
        let summary = SummaryRow::tally(&servers, &changes);
        let html = render(&Page::of_run(&summary, &servers, &changes));
        assert!(html.len() <= MAX_PAGE_BYTES, "{} bytes", html.len());
        assert!(html.ends_with("</html>\n"));
        let shown = html.matches("<details class=\"change").count();
        assert!(shown > 1000 && shown < changes.len(), "{shown} shown");
        let note = format!("{} more changes are not shown", changes.len() - shown);
        assert!(html.contains(&note), "no note on the left-out changes");
        assert!(
            html.contains("<tr id=\"server-1999\">"),
            "every server is listed"
        );
        assert!(html.contains("id=\"changes-0\""));
    }

    #[test]
    fn an_empty_run_says_so() {
        let summary = SummaryRow::tally(&[], &[]);
        let html = render(&Page::of_run(&summary, &[], &[]));
        assert!(html.contains("No changes recorded."));
        assert!(html.contains("<h2>Servers (0)</h2>"));
    }

    #[test]
    fn the_risk_cell_names_an_assumed_risk_only_when_it_is_higher() {
        // (declared, assumed, shows the assumed note)
        let cases = [
            (Some(Risk::Low), Some(Risk::High), Some("assumed high")),
            (Some(Risk::Medium), Some(Risk::High), Some("assumed high")),
            (Some(Risk::High), Some(Risk::High), None),
            (Some(Risk::Low), Some(Risk::Low), None),
            (Some(Risk::Low), None, None),
            (None, Some(Risk::High), None),
        ];
        for (declared, assumed, note) in cases {
            let cell = risk_cell(declared, assumed);
            assert_eq!(
                cell.contains("assumed-risk"),
                note.is_some(),
                "{declared:?}/{assumed:?}: {cell}"
            );
            if let Some(note) = note {
                assert!(cell.contains(note), "{cell}");
            }
        }
    }
}
