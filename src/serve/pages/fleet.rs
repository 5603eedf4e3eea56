//! The fleet page: counts by severity and by the servers' last status, the timeline of changes
//! per run, and one row per watched server (identity, listing view, last status with since when
//! and the last read, tools, risk, last change, first seen). Every server of the last run is
//! listed, a never-read one too; a server whose last read failed is marked as failing, and its
//! tools and risk are labelled as those of its last read.

use std::fmt::Write as _;

use super::chart;
use super::layout::{Nav, badge, ledger_query, page, risk_badges, segment, split_view, time};
use crate::report::html::escape;
use crate::serve::store::{FleetChange, ServerView, ServersView, StatusView};

/// The fleet page of one ledger.
pub fn render(nav: &Nav, servers: &ServersView, changes: &[FleetChange]) -> String {
    let mut body = String::with_capacity(4096 + servers.servers.len() * 1024);
    let _ = writeln!(
        body,
        "<p class=\"muted\">Ledger written {}. Read-only view; nothing here contacts a server.</p>",
        time(&servers.updated_at)
    );
    if let Some(run_at) = &servers.last_run_at {
        let _ = writeln!(
            body,
            "<p class=\"muted\" id=\"last-run\">Server statuses from the last run, started {}.</p>",
            time(run_at)
        );
    }
    if let Some(note) = &servers.status_note {
        let _ = writeln!(
            body,
            "<p class=\"status-note status-bad\" id=\"status-note\" role=\"note\">{}</p>",
            escape(note)
        );
    }
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
         <th>View</th><th>Last status</th><th>Tools</th><th>Risk</th><th>Last change</th>\
         <th>First seen</th></tr></thead>\n<tbody>",
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
    let assumed_high = servers
        .servers
        .iter()
        .filter(|s| s.risk.as_deref() != Some("high") && s.assumed_risk.as_deref() == Some("high"))
        .count();
    let in_state = |state: &str| {
        servers
            .servers
            .iter()
            .filter(|s| {
                s.status
                    .as_ref()
                    .is_some_and(|status| status.state == state)
            })
            .count()
    };
    body.push_str("<ul class=\"stats\" id=\"summary\">\n");
    let _ = writeln!(
        body,
        "<li data-stat=\"servers\"><span class=\"num\">{}</span>servers</li>",
        servers.servers_total
    );
    for (state, label) in [
        ("unreachable", "unreachable"),
        ("auth_required", "auth required"),
        ("blocked", "blocked"),
        ("over_budget", "over budget"),
    ] {
        let count = in_state(state);
        let class = if count > 0 {
            " class=\"status-bad\""
        } else {
            ""
        };
        let _ = writeln!(
            body,
            "<li data-stat=\"{state}\"{class}><span class=\"num\">{count}</span>{label}</li>"
        );
    }
    let _ = writeln!(
        body,
        "<li data-stat=\"high_risk\"><span class=\"num\">{high_risk}</span>high-risk servers</li>"
    );
    let _ = writeln!(
        body,
        "<li data-stat=\"assumed_high_risk\"><span class=\"num\">{assumed_high}</span>high only \
         by assumption (unannotated tools)</li>"
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
    let failing = server.status.as_ref().is_some_and(|s| s.state != "healthy");
    // A server never read, or whose entry holds only its auth state, has no surface to show.
    let never_read = server.first_seen.is_none() || server.tool_digest.is_none();
    let json = if never_read {
        String::new()
    } else {
        format!(
            " <a class=\"muted\" href=\"{}\">JSON</a>",
            nav.href(
                &format!(
                    "ledgers/{}/servers/{}/surface",
                    segment(ledger),
                    segment(&server.server_url)
                ),
                ""
            )
        )
    };
    // The tools and risk of a server whose last read failed are those of an older read.
    let as_of = match (&server.status, failing) {
        (Some(status), true) if !never_read => match &status.last_read {
            Some(at) => format!("<div class=\"muted stale\">as read {}</div>", time(at)),
            None => "<div class=\"muted stale\">as last read</div>".to_string(),
        },
        _ => String::new(),
    };
    let (tools, risk) = if never_read {
        ("-".to_string(), "-".to_string())
    } else {
        (
            format!("{}{as_of}", server.tools_total),
            format!(
                "{}{as_of}",
                risk_badges(server.risk.as_deref(), server.assumed_risk.as_deref())
            ),
        )
    };
    let first_seen = match &server.first_seen {
        Some(at) => time(at),
        None => "<span class=\"muted\">never read</span>".to_string(),
    };
    let _ = writeln!(
        body,
        "<tr class=\"server{}\" data-state=\"{}\"><td data-label=\"Server\"><a href=\"{}\"><strong>{identity}</strong></a>\
         <div class=\"url\"><code>{}</code></div>{json}</td>\
         <td data-label=\"View\">{view}</td><td data-label=\"Last status\" class=\"status\">{}</td>\
         <td data-label=\"Tools\" class=\"num\">{tools}</td>\
         <td data-label=\"Risk\">{risk}</td><td data-label=\"Last change\">{last_change}</td>\
         <td data-label=\"First seen\">{first_seen}</td></tr>",
        if failing { " failing" } else { "" },
        escape(
            server
                .status
                .as_ref()
                .map_or("unknown", |s| s.state.as_str())
        ),
        nav.href("server", &query),
        escape(url),
        status_cell(server.status.as_ref()),
    );
}

/// A server's last status: its reason code (loud unless healthy), since when, the last read,
/// and the error.
pub(super) fn status_cell(status: Option<&StatusView>) -> String {
    let Some(status) = status else {
        return "<span class=\"muted\">not in the last run</span>".to_string();
    };
    let class = if status.state == "healthy" {
        "status-ok"
    } else {
        "status-bad"
    };
    let last_read = match &status.last_read {
        Some(at) => format!("last read {}", time(at)),
        None => "never read".to_string(),
    };
    let error = status
        .error
        .as_deref()
        .map(|error| format!("<div class=\"muted error\">{}</div>", escape(error)))
        .unwrap_or_default();
    format!(
        "<span class=\"{class} reason\">{}</span> <div class=\"muted\">since {}</div>\
         <div class=\"muted\">{last_read}</div>{error}",
        escape(&status.reason_code),
        time(&status.since),
    )
}
