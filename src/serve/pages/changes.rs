//! The changes page: every remembered change of the fleet, newest first, filtered by the
//! query (a plain GET form, no script), in pages of [`PAGE_SIZE`].

use std::fmt::Write as _;

use super::filter::{ChangeFilter, PAGE_SIZE, class_names, page_of, severity_names};
use super::layout::{Nav, page, split_view};
use super::server::render_remembered;
use crate::report::html::escape;
use crate::serve::store::FleetChange;

/// The changes page for `selected` (the filtered changes, newest first).
pub fn render(nav: &Nav, filter: &ChangeFilter, selected: &[&FleetChange]) -> String {
    let mut body = String::with_capacity(8192 + PAGE_SIZE * 2048);
    form(&mut body, nav, filter);
    let (shown, pages) = page_of(selected, filter.page, PAGE_SIZE);
    let _ = writeln!(
        body,
        "<p id=\"changes-count\" data-total=\"{}\">{} changes match; page {} of {pages}. \
         <a href=\"{}\">Atom feed of this selection</a></p>",
        selected.len(),
        selected.len(),
        filter.page,
        nav.href("changes.atom", &filter.query(None))
    );
    body.push_str("<div id=\"changes\">\n");
    for change in shown {
        let (url, view) = split_view(&change.server_url);
        let server_query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("ledger", &nav.ledger)
            .append_pair("url", &change.server_url)
            .finish();
        let _ = writeln!(
            body,
            "<p class=\"change-meta\">{} · <a href=\"{}\"><code>{}</code></a> ({view})</p>",
            super::layout::time(&change.change.observed_at),
            nav.href("server", &server_query),
            escape(url)
        );
        render_remembered(&mut body, &change.server_url, &change.change, false);
    }
    body.push_str("</div>\n");
    pager(&mut body, nav, filter, pages);
    page("Changes", nav, &body)
}

fn form(body: &mut String, nav: &Nav, filter: &ChangeFilter) {
    let _ = write!(
        body,
        "<form class=\"filters\" method=\"get\" action=\"./changes\">\
         <input type=\"hidden\" name=\"ledger\" value=\"{}\">{}",
        escape(&nav.ledger),
        nav.token_field()
    );
    select(body, "severity", severity_names(), &filter.severities);
    select(body, "class", class_names(), &filter.classes);
    let _ = writeln!(
        body,
        "<label>server URL<input type=\"text\" name=\"server\" value=\"{}\"></label>\
         <label>since (RFC 3339)<input type=\"text\" name=\"since\" value=\"{}\" \
         placeholder=\"2026-01-31T00:00:00Z\"></label><button type=\"submit\">Filter</button> \
         <a href=\"{}\">clear</a></form>",
        escape(filter.server.as_deref().unwrap_or_default()),
        escape(&filter.since.map(|t| t.to_rfc3339()).unwrap_or_default()),
        nav.href("changes", &super::layout::ledger_query(&nav.ledger))
    );
}

fn select<'a>(
    body: &mut String,
    name: &str,
    options: impl Iterator<Item = &'a str>,
    chosen: &[&str],
) {
    let _ = write!(
        body,
        "<label>{name}<select name=\"{name}\"><option value=\"\">any</option>"
    );
    for option in options {
        let selected = if chosen.first() == Some(&option) {
            " selected"
        } else {
            ""
        };
        let _ = write!(body, "<option{selected}>{option}</option>");
    }
    body.push_str("</select></label>");
}

fn pager(body: &mut String, nav: &Nav, filter: &ChangeFilter, pages: usize) {
    body.push_str("<nav class=\"pager\">");
    if filter.page > 1 {
        let _ = write!(
            body,
            "<a rel=\"prev\" href=\"{}\">← newer</a>",
            nav.href("changes", &filter.query(Some(filter.page - 1)))
        );
    }
    if filter.page < pages {
        let _ = write!(
            body,
            "<a rel=\"next\" id=\"older\" href=\"{}\">older →</a>",
            nav.href("changes", &filter.query(Some(filter.page + 1)))
        );
    }
    body.push_str("</nav>\n");
}
