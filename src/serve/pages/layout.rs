//! The frame every page shares: the document shell, the navigation, the style, the headers
//! (a Content-Security-Policy that allows no script at all), and the small pieces of markup
//! (links, times, badges) the pages repeat.
//!
//! Links are relative (`./changes?…`), so the pages work under whatever prefix the platform
//! serves them. Every text is escaped with [`escape`], which also shows invisible and
//! bidirectional-control characters as `\u{…}`; every link parameter is percent-encoded
//! before it is escaped for the attribute.

use std::fmt::Write as _;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

use super::super::error::ServeError;
use crate::report::html::{STYLE, assumed_risk_note, escape};

/// The policy of every page: nothing but the inline style; no script, frame, font, image
/// source or form target elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Rules the pages add to the report's style.
const PAGE_STYLE: &str = r#"
body { overflow-wrap: break-word; }
td.url, .url, code, dd, h1, pre { overflow-wrap: anywhere; }
.sev, th { white-space: nowrap; }
nav.top { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: baseline; }
nav.top a { font-weight: 600; }
nav.ledgers { margin: 6px 0; }
nav.ledgers a, nav.ledgers strong { display: inline-block; margin: 2px 8px 2px 0; }
a { color: #0b57d0; }
code { overflow-wrap: anywhere; }
figure.timeline { margin: 8px 0; }
svg.timeline { display: block; width: 100%; height: 160px; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
svg.timeline .axis { stroke: var(--line); vector-effect: non-scaling-stroke; }
.ticks { display: flex; justify-content: space-between; gap: 8px; font-size: 12px; color: var(--muted); }
.bar-high { fill: var(--high); } .bar-medium { fill: #d08a00; } .bar-low { fill: #6b93c4; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); max-width: 100%; }
form.filters input, form.filters select { font: inherit; max-width: 100%; }
.pager { display: flex; gap: 16px; margin: 12px 0; }
.change-meta { font-size: 12px; color: var(--muted); margin: 10px 0 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
pre.text { white-space: pre-wrap; background: #fff; border: 1px solid var(--line); padding: 8px; border-radius: 4px; }
ul.findings { margin: 0; padding-left: 18px; font-size: 12px; }
tr.server.failing, tr.server.failing:nth-child(even) { background: var(--high-bg); }
tr.server.failing td:first-child { border-left: 4px solid var(--high); }
.stats li.status-bad { border-color: var(--high); }
td.status .error { font-size: 12px; }
@media (max-width: 640px) {
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards thead { display: none; }
  table.cards tr { border-bottom: 2px solid var(--line); }
  table.cards td { border: 0; }
  table.cards td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
  td.url { max-width: none; }
  dl.facts { grid-template-columns: 1fr; }
}
@media print { nav, form.filters, .pager { display: none; } }
"#;

/// The ledger and its neighbours, for the navigation of every page, and the access token the
/// page was opened with, which its links carry on.
#[derive(Debug, Clone, Default)]
pub struct Nav {
    /// The ledger shown.
    pub ledger: String,
    /// Every ledger of the store (the picker).
    pub ledgers: Vec<String>,
    /// The `?token=` the page was opened with ([`carried_token`]).
    pub token: Option<CarriedToken>,
}

impl Nav {
    /// A navigation without ledgers (error pages), carrying `token`.
    pub fn with_token(token: Option<CarriedToken>) -> Self {
        Nav {
            token,
            ..Nav::default()
        }
    }

    /// A relative link to `path` with `query`, and the page's token when it has one, escaped
    /// for an attribute. Every link of a page goes through here, so a page opened with
    /// `?token=` (a browser on the Apify platform's Standby URL) keeps working when followed.
    pub fn href(&self, path: &str, query: &str) -> String {
        let Some(token) = &self.token else {
            return href(path, query);
        };
        let carried = url::form_urlencoded::Serializer::new(String::new())
            .append_pair(TOKEN_PARAMETER, &token.0)
            .finish();
        if query.is_empty() {
            href(path, &carried)
        } else {
            href(path, &format!("{query}&{carried}"))
        }
    }

    /// The hidden form field that carries the token through a GET form (empty without one).
    pub fn token_field(&self) -> String {
        self.token
            .as_ref()
            .map(|token| {
                format!(
                    "<input type=\"hidden\" name=\"{TOKEN_PARAMETER}\" value=\"{}\">",
                    escape(&token.0)
                )
            })
            .unwrap_or_default()
    }
}

/// The query parameter that authorizes a request at the Apify platform's Standby URL when no
/// `Authorization` header can be sent (a browser following a link). `docs/platform.md`.
pub const TOKEN_PARAMETER: &str = "token";

/// The longest token carried on.
const MAX_TOKEN_CHARS: usize = 256;

/// An access token a page carries on its links. Never logged: `Debug` shows no value, and it
/// is not `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct CarriedToken(String);

impl std::fmt::Debug for CarriedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CarriedToken(redacted)")
    }
}

/// The `token` of a request's query, when it looks like an API token (letters, digits, `_`,
/// `-`, `.`; at most 256 characters). Anything else is not carried on: a crafted link cannot
/// make the pages write arbitrary text into their links.
pub fn carried_token(query: Option<&str>) -> Option<CarriedToken> {
    let (_, token) =
        url::form_urlencoded::parse(query?.as_bytes()).find(|(name, _)| name == TOKEN_PARAMETER)?;
    let plausible = !token.is_empty()
        && token.chars().count() <= MAX_TOKEN_CHARS
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    plausible.then(|| CarriedToken(token.into_owned()))
}

/// A whole page: shell, navigation, `body`.
pub fn page(title: &str, nav: &Nav, body: &str) -> String {
    let mut html = String::with_capacity(body.len() + STYLE.len() + PAGE_STYLE.len() + 2048);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        html,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        escape(CONTENT_SECURITY_POLICY)
    );
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    let _ = writeln!(html, "<title>{}</title>", escape(title));
    let ledger = ledger_query(&nav.ledger);
    let _ = writeln!(
        html,
        "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"Changes\" href=\"{}\">",
        nav.href("changes.atom", &ledger)
    );
    let _ = writeln!(
        html,
        "<style>{STYLE}{PAGE_STYLE}</style>\n</head>\n<body>\n<header>"
    );
    let _ = writeln!(
        html,
        "<nav class=\"top\"><a href=\"{}\">Fleet</a><a href=\"{}\">Changes</a>\
         <a href=\"{}\">Atom feed</a><a href=\"{}\">JSON</a>\
         <span class=\"muted\">ledger <strong>{}</strong></span></nav>",
        nav.href("", &ledger),
        nav.href("changes", &ledger),
        nav.href("changes.atom", &ledger),
        nav.href(&format!("ledgers/{}/servers", segment(&nav.ledger)), ""),
        escape(&nav.ledger)
    );
    if nav.ledgers.len() > 1 {
        html.push_str(
            "<nav class=\"ledgers\" id=\"ledger-picker\"><span class=\"muted\">Ledgers:</span> ",
        );
        for name in &nav.ledgers {
            if *name == nav.ledger {
                let _ = write!(html, "<strong>{}</strong>", escape(name));
            } else {
                let _ = write!(
                    html,
                    "<a href=\"{}\">{}</a>",
                    nav.href("", &ledger_query(name)),
                    escape(name)
                );
            }
        }
        html.push_str("</nav>\n");
    }
    let _ = writeln!(html, "<h1>{}</h1>\n</header>\n<main>", escape(title));
    html.push_str(body);
    html.push_str("</main>\n</body>\n</html>\n");
    html
}

/// `ledger=NAME` as a query string.
pub fn ledger_query(ledger: &str) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("ledger", ledger)
        .finish()
}

/// A relative link to `path` (`""` = the fleet page) with `query`, escaped for an attribute.
pub fn href(path: &str, query: &str) -> String {
    let mut link = format!("./{path}");
    if !query.is_empty() {
        link.push('?');
        link.push_str(query);
    }
    escape(&link)
}

/// `text` percent-encoded as one path segment.
pub fn segment(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A `<time>` element.
pub fn time(at: &DateTime<Utc>) -> String {
    format!(
        "<time datetime=\"{}\">{}</time>",
        escape(&at.to_rfc3339()),
        escape(&at.format("%Y-%m-%d %H:%M UTC").to_string())
    )
}

/// A severity or risk badge (`-` for none).
pub fn badge(level: Option<&str>) -> String {
    match level {
        Some(level @ ("high" | "medium" | "low")) => {
            format!("<span class=\"sev sev-{level}\">{level}</span>")
        }
        Some(other) => escape(other),
        None => "-".to_string(),
    }
}

/// A server's declared risk as a badge, followed by its assumed risk in words when the
/// protocol's defaults for unannotated tools rate it higher: `high` alone is evidence.
pub fn risk_badges(declared: Option<&str>, assumed: Option<&str>) -> String {
    let mut out = badge(declared);
    if let Some(assumed) = assumed.filter(|a| Some(*a) != declared && declared.is_some()) {
        out.push(' ');
        out.push_str(&assumed_risk_note(assumed));
    }
    out
}

/// The server URL of a ledger key and its listing view (`#authenticated` or anonymous).
pub fn split_view(key: &str) -> (&str, &'static str) {
    match key.strip_suffix("#authenticated") {
        Some(url) => (url, "authenticated"),
        None => (key, "anonymous"),
    }
}

/// An HTML answer with the page headers.
pub fn html_response(status: StatusCode, html: String) -> Response {
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(headers);
    response
}

/// The headers every page and the feed carry.
pub fn secure(headers: &mut axum::http::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// A page saying why a page could not be shown, with the error's status.
pub fn error_page(error: &ServeError, nav: &Nav) -> Response {
    let body = format!(
        "<p id=\"error\" data-code=\"{}\">{}</p>\n<p><a href=\"{}\">Back to the fleet</a></p>\n",
        error.code(),
        escape(&error.to_string()),
        nav.href("", "")
    );
    html_response(error.status(), page("Cannot show this page", nav, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_encoded_and_escaped() {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("url", "javascript:alert(1)//\"><x>")
            .finish();
        let link = href("server", &query);
        assert!(link.starts_with("./server?url=javascript%3Aalert%281%29"));
        assert!(!link.contains('"') && !link.contains('<'));
        assert_eq!(href("", ""), "./");
        assert_eq!(segment("http://a/mcp?x=1"), "http%3A%2F%2Fa%2Fmcp%3Fx%3D1");
    }

    #[test]
    fn only_plausible_tokens_are_carried_and_never_shown() {
        let table = [
            (Some("token=apify_api_AbC123"), Some("apify_api_AbC123")),
            (Some("ledger=L&token=a.b-c_d&token=second"), Some("a.b-c_d")),
            (Some("token=%22%3E%3Cx%3E"), None),
            (Some("token="), None),
            (Some("tokens=abc"), None),
            (None, None),
        ];
        for (query, carried) in table {
            let token = carried_token(query);
            assert_eq!(token.as_ref().map(|t| t.0.as_str()), carried, "{query:?}");
        }
        assert_eq!(
            carried_token(Some(&format!("token={}", "a".repeat(257)))),
            None
        );
        let nav = Nav::with_token(carried_token(Some("token=apify_api_x")));
        assert_eq!(format!("{nav:?}").matches("apify_api_x").count(), 0);
        assert_eq!(
            nav.href("server", "url=a"),
            "./server?url=a&amp;token=apify_api_x"
        );
        assert_eq!(nav.href("", ""), "./?token=apify_api_x");
        assert_eq!(
            nav.token_field(),
            "<input type=\"hidden\" name=\"token\" value=\"apify_api_x\">"
        );
        assert_eq!(Nav::default().href("", ""), "./");
        assert_eq!(Nav::default().token_field(), "");
    }

    #[test]
    fn the_shell_forbids_scripts_and_escapes_the_title() {
        let nav = Nav {
            ledger: "L".into(),
            ledgers: vec!["L".into(), "</title><script>".into()],
            token: None,
        };
        let html = page("</title><script>alert(1)</script>", &nav, "<p>body</p>");
        assert!(!html.contains("<script"));
        assert!(html.contains("default-src &#39;none&#39;"));
        assert!(html.contains("<nav class=\"ledgers\" id=\"ledger-picker\">"));
        assert_eq!(
            split_view("http://a/mcp#authenticated"),
            ("http://a/mcp", "authenticated")
        );
        assert_eq!(badge(Some("<b>")), "&lt;b&gt;");
    }
}
