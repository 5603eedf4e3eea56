//! The ledger for people: server-rendered HTML pages and an Atom feed.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` (a browser: `Accept: text/html`) | the fleet page of `?ledger=` (default `DEFAULT`) |
//! | `GET /server?ledger=&url=` | one server: history, changes, current surface |
//! | `GET /changes?ledger=&severity=&class=&server=&since=&page=` | the fleet's changes |
//! | `GET /changes.atom?…` (same filters) | the Atom feed of those changes |
//!
//! - [`layout`]: the shared shell, style, headers and small markup helpers.
//! - [`fleet`], [`server`], [`changes`], [`atom`]: one module per page.
//! - [`chart`]: the inline SVG timeline; [`filter`]: the query and paging.
//!
//! No page has a script, an external asset or an absolute link; every server text is escaped
//! for the context it lands in (HTML text and attributes, SVG, URLs, XML).

pub mod atom;
pub mod changes;
pub mod chart;
pub mod filter;
pub mod fleet;
pub mod layout;
pub mod server;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::error::ServeError;
use super::store::Reader;
use filter::{ChangeFilter, RawQuery};
use layout::{CarriedToken, Nav, carried_token, error_page, html_response};

pub use crate::serve::store::DEFAULT_LEDGER;

/// Whether a request asks for a page rather than JSON: a browser's `Accept` names
/// `text/html` (an API client sends `application/json`, `*/*` or nothing).
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .any(|part| part.trim().starts_with("text/html"))
        })
}

/// The ledger to show and the store's ledger names: the one asked for, else `DEFAULT` when
/// present, else the first name; and the token the page's links carry.
async fn navigation(
    reader: &Reader,
    asked: Option<&str>,
    token: Option<CarriedToken>,
) -> Result<Nav, ServeError> {
    let ledgers = reader.ledger_names().await?;
    let ledger = match asked {
        Some(name) => name.to_string(),
        None if ledgers.iter().any(|name| name == DEFAULT_LEDGER) => DEFAULT_LEDGER.to_string(),
        None => ledgers
            .first()
            .cloned()
            .unwrap_or_else(|| DEFAULT_LEDGER.to_string()),
    };
    Ok(Nav {
        ledger,
        ledgers,
        token,
    })
}

/// The navigation of an error page shown before the ledger is known: no ledgers, and the
/// token the request carries.
fn bare_nav(uri: &Uri) -> Nav {
    Nav::with_token(carried_token(uri.query()))
}

/// Answers with the page `render` makes, or with an error page.
async fn answer<F>(reader: &Reader, asked: Option<&str>, uri: &Uri, render: F) -> Response
where
    F: AsyncFnOnce(&Reader, &Nav) -> Result<String, ServeError>,
{
    let nav = match navigation(reader, asked, carried_token(uri.query())).await {
        Ok(nav) => nav,
        Err(error) => return error_page(&error, &bare_nav(uri)),
    };
    match render(reader, &nav).await {
        Ok(html) => html_response(StatusCode::OK, html),
        Err(error) => error_page(&error, &nav),
    }
}

fn parse(query: Result<Query<RawQuery>, QueryRejection>) -> Result<ChangeFilter, ServeError> {
    let Query(raw) = query.map_err(|e| ServeError::BadRequest(e.body_text()))?;
    ChangeFilter::parse(&raw)
}

/// `GET /` for a browser: the fleet page.
pub async fn fleet_page(
    reader: &Reader,
    uri: &Uri,
    query: Result<Query<RawQuery>, QueryRejection>,
) -> Response {
    let filter = match parse(query) {
        Ok(filter) => filter,
        Err(error) => return error_page(&error, &bare_nav(uri)),
    };
    answer(
        reader,
        filter.ledger.as_deref(),
        uri,
        async |reader, nav| {
            if nav.ledgers.is_empty() && filter.ledger.is_none() {
                return Ok(fleet::render_empty(nav));
            }
            let servers = reader.servers(&nav.ledger).await?;
            let changes = reader.fleet_changes(&nav.ledger).await?;
            Ok(fleet::render(nav, &servers, &changes))
        },
    )
    .await
}

/// The query of the server page.
#[derive(Debug, Deserialize)]
pub struct ServerQuery {
    /// The ledger.
    pub ledger: Option<String>,
    /// The server's URL (its ledger key).
    pub url: Option<String>,
}

/// `GET /server?ledger=&url=`: one server's page.
pub async fn server_page(
    State(reader): State<Reader>,
    uri: Uri,
    query: Result<Query<ServerQuery>, QueryRejection>,
) -> Response {
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => {
            return error_page(
                &ServeError::BadRequest(rejection.body_text()),
                &bare_nav(&uri),
            );
        }
    };
    let Some(url) = query.url.filter(|url| !url.is_empty()) else {
        let error = ServeError::BadRequest("the server page needs ?url=<server URL>".into());
        return error_page(&error, &bare_nav(&uri));
    };
    answer(
        &reader,
        query.ledger.as_deref(),
        &uri,
        async |reader, nav| {
            let detail = reader.server_detail(&nav.ledger, &url).await?;
            Ok(server::render(nav, &detail))
        },
    )
    .await
}

/// `GET /changes?…`: the changes page.
pub async fn changes_page(
    State(reader): State<Reader>,
    uri: Uri,
    query: Result<Query<RawQuery>, QueryRejection>,
) -> Response {
    let filter = match parse(query) {
        Ok(filter) => filter,
        Err(error) => return error_page(&error, &bare_nav(&uri)),
    };
    answer(
        &reader,
        filter.ledger.as_deref(),
        &uri,
        async |reader, nav| {
            let all = reader.fleet_changes(&nav.ledger).await?;
            let mut selected: Vec<_> = all.into_iter().filter(|c| filter.selects(c)).collect();
            // Only the page shown has its values read whole from their packs.
            let places: Vec<usize> = (0..selected.len()).collect();
            let (shown, _) = filter::page_of(&places, filter.page, filter::PAGE_SIZE);
            if let (Some(first), Some(last)) = (shown.first(), shown.last()) {
                reader.whole_values(&mut selected[*first..=*last]).await;
            }
            let selected: Vec<_> = selected.iter().collect();
            Ok(changes::render(nav, &filter, &selected))
        },
    )
    .await
}

/// `GET /changes.atom?…`: the Atom feed (errors are JSON: a feed reader is a program). The
/// feed never repeats a `?token=` it was fetched with: not in its ids, not in its links (a
/// chat integration posting its entries would publish it).
pub async fn feed(
    State(reader): State<Reader>,
    query: Result<Query<RawQuery>, QueryRejection>,
) -> Result<Response, ServeError> {
    let filter = parse(query)?;
    let nav = navigation(&reader, filter.ledger.as_deref(), None).await?;
    let servers = reader.servers(&nav.ledger).await?;
    let all = reader.fleet_changes(&nav.ledger).await?;
    let mut selected: Vec<_> = all.into_iter().filter(|c| filter.selects(c)).collect();
    // Only the entries the feed writes have their values read whole from their packs.
    let written = selected.len().min(filter::FEED_SIZE);
    reader.whole_values(&mut selected[..written]).await;
    let selected: Vec<_> = selected.iter().collect();
    let xml = atom::render(&nav.ledger, &filter, &selected, servers.updated_at);
    let mut response = xml.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/atom+xml; charset=utf-8"),
    );
    layout::secure(headers);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_pages_and_programs_get_json() {
        let table = [
            (Some("text/html,application/xhtml+xml,*/*;q=0.8"), true),
            (Some("application/json"), false),
            (Some("*/*"), false),
            (None, false),
        ];
        for (accept, html) in table {
            let mut headers = HeaderMap::new();
            if let Some(accept) = accept {
                headers.insert(header::ACCEPT, accept.parse().unwrap());
            }
            assert_eq!(wants_html(&headers), html, "{accept:?}");
        }
    }
}
