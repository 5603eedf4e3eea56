//! The fleet page: counts by severity, the timeline of changes per run, and one row per
//! watched server (identity, listing view, tools, risk, last change, first seen).

use std::fmt::Write as _;

use super::chart;
use super::layout::{Nav, badge, ledger_query, page, segment, split_view, time};
use crate::report::html::escape;
use crate::serve::store::{FleetChange, ServerView, ServersView};

/// The fleet page of one ledger.
pub fn render(nav: &Nav, servers: &ServersView, changes: &[FleetChange]) -> String {
    let mut body = String::with_capacity(4096 + servers.servers.len() * 1024);
    let _ = writeln!(
        body,
        "<p class=\"muted\">Ledger written {}. Read-only view; nothing here contacts a server.</p>",
        time(&servers.updated_at)
    );
    for alert in &servers.chain_alerts {
        let _ = writeln!(
            body,
            "<p class=\"chain-alert\" role=\"alert\">{}</p>",
            escape(alert)
        );
    }
    stats(&mut body, servers, changes);
    body.push_str("<h2>Changes per run</h2>\n");
    body.push_str(&chart::render(
        &chart::bars(changes.iter().map(|c| &c.change)),
        "Changes per run over time, stacked by severity",
    ));
    let mut rows: Vec<&ServerView> = servers.servers.iter().collect();
    rows.sort_by(|a, b| a.server_url.cmp(&b.server_url));
    let _ = writeln!(
        body,
        "<h2>Servers ({})</h2>\n<table id=\"servers\" class=\"cards\">\n<thead><tr><th>Server</th>\
         <th>View</th><th>Tools</th><th>Risk</th><th>Last change</th><th>First seen</th></tr></thead>\n<tbody>",
        rows.len()
    );
    for server in rows {
        row(&mut body, nav, server);
    }
    body.push_str("</tbody>\n</table>\n");
    if servers.servers.is_empty() {
        body.push_str(
            "<p class=\"muted\" id=\"no-servers\">This ledger watches no server yet.</p>\n",
        );
    }
    page("MCP surface ledger", nav, &body)
}

/// The fleet page of a store that holds no ledger yet.
pub fn render_empty(nav: &Nav) -> String {
    let body = "<p id=\"no-ledger\">No ledger yet: this store has not been written by a run. \
        Run the Actor (or <code>mcp-surface-ledger</code> with an INPUT) against this storage, \
        then reload this page.</p>\n";
    page("MCP surface ledger", nav, body)
}

fn stats(body: &mut String, servers: &ServersView, changes: &[FleetChange]) {
    let count = |severity: &str| {
        changes
            .iter()
            .filter(|c| c.change.severity == severity)
            .count()
    };
    let high_risk = servers
        .servers
        .iter()
        .filter(|s| s.risk.as_deref() == Some("high"))
        .count();
    body.push_str("<ul class=\"stats\" id=\"summary\">\n");
    let _ = writeln!(
        body,
        "<li data-stat=\"servers\"><span class=\"num\">{}</span>servers</li>",
        servers.servers_total
    );
    let _ = writeln!(
        body,
        "<li data-stat=\"high_risk\"><span class=\"num\">{high_risk}</span>high-risk servers</li>"
    );
    let _ = writeln!(
        body,
        "<li data-stat=\"changes\"><span class=\"num\">{}</span>remembered changes</li>",
        changes.len()
    );
    for severity in ["high", "medium", "low"] {
        let _ = writeln!(
            body,
            "<li data-stat=\"severity_{severity}\"><span class=\"num\">{}</span>{}</li>",
            count(severity),
            badge(Some(severity))
        );
    }
    body.push_str("</ul>\n");
}

fn row(body: &mut String, nav: &Nav, server: &ServerView) {
    let ledger = nav.ledger.as_str();
    let (url, view) = split_view(&server.server_url);
    let query = format!(
        "{}&{}",
        ledger_query(ledger),
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("url", &server.server_url)
            .finish()
    );
    let identity = [
        server
            .server_title
            .as_deref()
            .or(server.server_name.as_deref()),
        server.server_version.as_deref(),
    ];
    let identity = match identity {
        [Some(name), Some(version)] => format!("{} {}", escape(name), escape(version)),
        [Some(name), None] => escape(name),
        _ => "<span class=\"muted\">(no identity read)</span>".to_string(),
    };
    let last_change = match &server.last_change {
        Some(change) => format!(
            "{} {}{} <div class=\"muted\">{}</div>",
            badge(Some(&change.severity)),
            escape(&change.change_class),
            change
                .tool_name
                .as_deref()
                .or_else(|| {
                    // A prompt, resource or template: the field names it.
                    crate::diff::declared::item_pointer(&change.field)
                        .map(|_| change.field.as_str())
                })
                .map(|subject| format!(" · <code>{}</code>", escape(subject)))
                .unwrap_or_default(),
            time(&change.observed_at)
        ),
        None => "<span class=\"muted\">none</span>".to_string(),
    };
    let _ = writeln!(
        body,
        "<tr class=\"server\"><td data-label=\"Server\"><a href=\"{}\"><strong>{identity}</strong></a>\
         <div class=\"url\"><code>{}</code></div> <a class=\"muted\" href=\"{}\">JSON</a></td>\
         <td data-label=\"View\">{view}</td><td data-label=\"Tools\" class=\"num\">{}</td>\
         <td data-label=\"Risk\">{}</td><td data-label=\"Last change\">{last_change}</td>\
         <td data-label=\"First seen\">{}</td></tr>",
        nav.href("server", &query),
        escape(url),
        nav.href(
            &format!(
                "ledgers/{}/servers/{}/surface",
                segment(ledger),
                segment(&server.server_url)
            ),
            ""
        ),
        server.tools_total,
        badge(server.risk.as_deref()),
        time(&server.first_seen),
    );
}
