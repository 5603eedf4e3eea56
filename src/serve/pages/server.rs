//! The server page: identity and facts, the history timeline, every remembered change (shown
//! by the report's own change renderer), and the current surface with each tool's
//! capabilities, risk and findings and the findings in its prompts, resources and templates,
//! with links to the JSON of each part.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::chart;
use super::layout::{Nav, badge, page, risk_badges, segment, split_view, time};
use crate::ledger::KeptValue;
use crate::report::html::{Side, Sides, escape, render_change_with, risk_name};
use crate::report::{ChangeRow, ToolSummary};
use crate::risk::Finding;
use crate::serve::store::{ChangeView, ServerDetail};

/// The page of one server.
pub fn render(nav: &Nav, detail: &ServerDetail) -> String {
    let server = &detail.server;
    let (url, view) = split_view(&server.server_url);
    let mut body = String::with_capacity(8192 + detail.history.len() * 1024);
    status_alert(&mut body, detail);
    facts(&mut body, nav, detail, url, view);
    if let Some(instructions) = &detail.instructions {
        let _ = writeln!(
            body,
            "<h2>Instructions</h2>\n<pre class=\"text\" id=\"instructions\">{}</pre>",
            escape(instructions)
        );
    }
    let _ = writeln!(body, "<h2>History ({} changes)</h2>", detail.history.len());
    body.push_str(&chart::render(
        &chart::bars(&detail.history),
        "This server's changes per run",
    ));
    body.push_str("<div id=\"history\">\n");
    for change in detail.history.iter().rev() {
        let _ = writeln!(
            body,
            "<p class=\"change-meta\">{}</p>",
            time(&change.observed_at)
        );
        render_remembered(&mut body, &server.server_url, change, true);
    }
    if detail.history.is_empty() {
        body.push_str("<p class=\"muted\">No change recorded since the first read.</p>\n");
    }
    body.push_str("</div>\n");
    tools(&mut body, detail);
    let title = server
        .server_title
        .as_deref()
        .or(server.server_name.as_deref())
        .unwrap_or(url);
    page(&format!("Server {title}"), nav, &body)
}

/// Renders a remembered change with the report's change renderer: its before and after as
/// far as the ledger kept them (a value too large to keep shows its size and digest; a
/// change without kept values, a note saying where they are).
pub fn render_remembered(body: &mut String, server_url: &str, change: &ChangeView, open: bool) {
    let Some(row) = history_row(server_url, change) else {
        return;
    };
    let sides = match &change.values {
        None => Sides::NotKept,
        Some(values) => Sides::Both(
            side(values.old.as_ref(), row.old_value.as_ref()),
            side(values.new.as_ref(), row.new_value.as_ref()),
        ),
    };
    render_change_with(body, &row, open, sides);
}

fn side<'a>(kept: Option<&'a KeptValue>, value: Option<&'a Value>) -> Side<'a> {
    match kept {
        Some(KeptValue::Digest { bytes, sha256, .. }) => Side::NotKept {
            bytes: *bytes,
            sha256,
        },
        _ => Side::Value(value),
    }
}

/// The report row of a remembered change: what the history keeps, with the values it kept
/// whole.
fn history_row(server_url: &str, change: &ChangeView) -> Option<ChangeRow> {
    let value = |kept: Option<&KeptValue>| kept.and_then(KeptValue::value);
    let values = change.values.as_ref();
    serde_json::from_value(json!({
        "server_url": server_url,
        "change_class": change.change_class,
        "tool_name": change.tool_name,
        "field": change.field,
        "severity": change.severity,
        "old_value": value(values.and_then(|v| v.old.as_ref())),
        "new_value": value(values.and_then(|v| v.new.as_ref())),
        "details": [],
        "same_version": false,
        "observed_at": change.observed_at,
    }))
    .ok()
}

fn facts(body: &mut String, nav: &Nav, detail: &ServerDetail, url: &str, view: &str) {
    let server = &detail.server;
    let json = |part: &str| {
        nav.href(
            &format!(
                "ledgers/{}/servers/{}/{part}",
                segment(&nav.ledger),
                segment(&server.server_url)
            ),
            "",
        )
    };
    let text = |value: &Option<String>| {
        value
            .as_deref()
            .map(escape)
            .unwrap_or_else(|| "-".to_string())
    };
    let _ = writeln!(
        body,
        "<dl class=\"facts\" id=\"facts\">\
         <dt>URL</dt><dd><code>{}</code></dd><dt>View</dt><dd>{view}</dd>\
         <dt>Name</dt><dd id=\"server-name\">{}</dd><dt>Title</dt><dd>{}</dd>\
         <dt>Version</dt><dd id=\"server-version\">{}</dd><dt>Protocol</dt><dd>{}</dd>\
         <dt>Transport</dt><dd>{}</dd><dt>Risk</dt><dd>{}</dd><dt>Tools</dt><dd>{}</dd>\
         <dt>Last status</dt><dd id=\"server-status\">{}</dd>\
         <dt>First seen</dt><dd>{}</dd><dt>Last read</dt><dd>{}</dd>\
         <dt>JSON</dt><dd><a href=\"{}\">surface</a> · <a href=\"{}\">changes</a></dd></dl>",
        escape(url),
        text(&server.server_name),
        text(&server.server_title),
        text(&server.server_version),
        text(&server.protocol_version),
        text(&server.transport),
        risk_badges(server.risk.as_deref(), server.assumed_risk.as_deref()),
        server.tools_total,
        super::fleet::status_cell(server.status.as_ref()),
        when(server.first_seen.as_ref()),
        when(
            server
                .status
                .as_ref()
                .map_or(server.last_seen.as_ref(), |s| s.last_read.as_ref())
        ),
        json("surface"),
        json("changes"),
    );
}

/// The loud line of a server the last run did not read without a problem: the stored surface
/// below is an older read's, not the server as it is now.
fn status_alert(body: &mut String, detail: &ServerDetail) {
    let Some(status) = detail
        .server
        .status
        .as_ref()
        .filter(|s| s.state != "healthy")
    else {
        return;
    };
    let read = match (&status.last_read, detail.server.first_seen) {
        (_, None) => "It has never been read.".to_string(),
        (Some(at), _) => format!("What follows is as read {}.", time(at)),
        (None, Some(_)) => "What follows is as last read.".to_string(),
    };
    let _ = writeln!(
        body,
        "<p class=\"chain-alert\" role=\"alert\" id=\"status-alert\">The last run did not read \
         this server cleanly: {} since {}. {read}</p>",
        escape(&status.reason_code),
        time(&status.since),
    );
}

/// A time, or `never` for a server never read.
fn when(at: Option<&chrono::DateTime<chrono::Utc>>) -> String {
    at.map(time)
        .unwrap_or_else(|| "<span class=\"muted\">never</span>".to_string())
}

fn tools(body: &mut String, detail: &ServerDetail) {
    let Some(summaries) = &detail.tools else {
        body.push_str(
            "<h2>Current surface</h2>\n<p class=\"muted\" id=\"no-surface\">No readable stored surface.</p>\n",
        );
        return;
    };
    let _ = writeln!(
        body,
        "<h2>Current surface ({} tools)</h2>\n<table id=\"tools\" class=\"cards\">\n<thead><tr>\
         <th>Tool</th><th>Capabilities</th><th>Hints</th><th>Risk</th><th>Findings</th></tr></thead>\n<tbody>",
        summaries.tools.len()
    );
    for (index, tool) in summaries.tools.iter().enumerate() {
        tool_row(body, tool, detail.raw_tools.get(index));
    }
    body.push_str("</tbody>\n</table>\n");
    declared_findings(body, &summaries.declared_findings);
}

/// The findings in the prompts, resources and resource templates of the stored surface, each
/// naming its item and text; nothing when there are none.
fn declared_findings(body: &mut String, findings: &[Finding]) {
    if findings.is_empty() {
        return;
    }
    let _ = writeln!(
        body,
        "<h3>Findings in prompts, resources and templates ({})</h3>\n\
         <ul class=\"findings\" id=\"declared-findings\">{}</ul>",
        findings.len(),
        finding_items(findings)
    );
}

/// One `<li>` per finding: severity, kind, rule, pointer and excerpt, escaped.
fn finding_items(findings: &[Finding]) -> String {
    let mut items = String::new();
    for finding in findings {
        let _ = write!(
            items,
            "<li>{} <strong>{}</strong> {} at <code>{}</code>: <code>{}</code></li>",
            badge(Some(risk_name(finding.severity))),
            escape(&finding.kind),
            escape(&finding.pattern),
            escape(&finding.pointer),
            escape(&finding.excerpt)
        );
    }
    items
}

fn tool_row(body: &mut String, tool: &ToolSummary, raw: Option<&Value>) {
    let capabilities: Vec<String> = tool
        .capabilities
        .iter()
        .map(|capability| match serde_json::to_value(capability) {
            Ok(serde_json::Value::String(name)) => escape(&name),
            _ => String::new(),
        })
        .collect();
    let hints: Vec<&str> = [
        (tool.read_only_hint, "read-only"),
        (tool.destructive_hint, "destructive"),
        (tool.idempotent_hint, "idempotent"),
        (tool.open_world_hint, "open world"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    let findings = if tool.findings.is_empty() {
        String::new()
    } else {
        format!(
            "<ul class=\"findings\">{}</ul>",
            finding_items(&tool.findings)
        )
    };
    let definition = raw
        .map(|raw| {
            let description = raw["description"].as_str().unwrap_or_default();
            let json = serde_json::to_string_pretty(raw).unwrap_or_default();
            format!(
                "<div class=\"tool-description\">{}</div><details><summary>definition</summary>\
                 <pre class=\"text\">{}</pre></details>",
                escape(description),
                escape(&json)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        body,
        "<tr class=\"tool\"><td data-label=\"Tool\"><code class=\"tool-name\">{}</code>{definition}</td>\
         <td data-label=\"Capabilities\">{}</td><td data-label=\"Hints\">{}</td>\
         <td data-label=\"Risk\">{}</td><td data-label=\"Findings\">{findings}</td></tr>",
        escape(&tool.name),
        capabilities.join(", "),
        hints.join(", "),
        badge(Some(risk_name(tool.risk))),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::ChangeValues;

    fn remembered(values: Option<ChangeValues>) -> String {
        let change = ChangeView {
            observed_at: "2026-01-31T12:00:00Z".parse().unwrap(),
            change_class: "tool_description_changed".into(),
            tool_name: Some("read_file".into()),
            field: "description".into(),
            severity: "low".into(),
            values,
        };
        let mut html = String::new();
        render_remembered(&mut html, "http://a.example/mcp", &change, true);
        html
    }

    #[test]
    fn remembered_values_are_shown_escaped_or_named() {
        let whole = |text: &str| KeptValue::Whole {
            json: serde_json::to_string(text).unwrap(),
        };
        let html = remembered(Some(ChangeValues {
            old: Some(whole("Reads <b>files</b>\u{202E}")),
            new: Some(whole("Reads <script>alert(1)</script>")),
        }));
        assert!(html.contains("<div class=\"side side-old\"><h4>before</h4><pre>Reads &lt;"));
        assert!(
            html.contains("<del>b&gt;files&lt;/b&gt;\\u{202E}</del>"),
            "{html}"
        );
        assert!(
            html.contains("<ins>script&gt;alert(1)&lt;/script&gt;</ins>"),
            "{html}"
        );
        assert!(!html.contains("<script") && !html.contains('\u{202E}'));

        let html = remembered(Some(ChangeValues {
            old: Some(KeptValue::Digest {
                bytes: 2048,
                sha256: "<ab>".into(),
                pack: None,
            }),
            new: None,
        }));
        assert!(html.contains(
            "<pre class=\"absent not-kept\">(2048 bytes, not kept in the ledger; SHA-256 &lt;ab&gt;)</pre>"
        ));
        assert!(html.contains("<pre class=\"absent\">(absent)</pre>"));

        let html = remembered(None);
        assert!(html.contains("values-not-kept"));
        assert!(!html.contains("class=\"sides\""));
    }
}
