//! The read-only HTTP JSON API: routes, parameter parsing and JSON errors.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` | what is served (or the platform's readiness probe); a browser gets the fleet page |
//! | `GET /ledgers` | the ledger names in the store |
//! | `GET /ledgers/{name}/servers` | the watched servers |
//! | `GET /ledgers/{name}/servers/{url}/changes?since=RFC3339` | a server's remembered changes |
//! | `GET /ledgers/{name}/servers/{url}/surface?at=RFC3339` | a server's stored surface, or the one it served at a past time |
//! | `POST /diff` | the `diff` rows between two documents |
//! | `GET /server`, `GET /changes`, `GET /changes.atom` | pages and the feed ([`super::pages`]) |
//!
//! [`ROUTES`]' table is the one list of them: the router is built from it, and a test holds
//! it equal to the paths of `.actor/web_server_schema.json` (the OpenAPI description the
//! platform shows), each of which a running server must answer. A new route goes in the
//! table and in that file.
//!
//! `{url}` is the server URL percent-encoded as one path segment. Every failure, including a
//! malformed path, query or body, an oversized body, an unknown route or method, is a JSON
//! body `{"error": code, "message": text}` with a matching status.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::compare::{self, DiffRequest};
use super::error::ServeError;
use super::pages::{self, filter::RawQuery};
use super::query::parse_since;
use super::store::Reader;
use super::{MAX_BODY_BYTES, READINESS_HEADER};

/// One route the server answers: an HTTP method and a path in axum's syntax (`{name}` is a
/// path parameter), which is also OpenAPI's path template syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Route {
    /// The method, upper case (`GET`, `POST`).
    pub method: &'static str,
    /// The path template.
    pub path: &'static str,
}

/// Every route of [`routes`] (the HTTP API and the pages; `/mcp` is mounted beside them).
pub const ROUTES: &[Route] = &[
    Route::get("/"),
    Route::get("/ledgers"),
    Route::get("/server"),
    Route::get("/changes"),
    Route::get("/changes.atom"),
    Route::get("/ledgers/{name}/servers"),
    Route::get("/ledgers/{name}/servers/{server}/changes"),
    Route::get("/ledgers/{name}/servers/{server}/surface"),
    Route::post("/diff"),
];

impl Route {
    /// `GET path`.
    pub const fn get(path: &'static str) -> Self {
        Route {
            method: "GET",
            path,
        }
    }

    /// `POST path`.
    pub const fn post(path: &'static str) -> Self {
        Route {
            method: "POST",
            path,
        }
    }

    /// The handler of this route (`None` only for a route missing from this match, which the
    /// unit test below rules out).
    fn handler(&self) -> Option<MethodRouter<Reader>> {
        Some(match (self.method, self.path) {
            ("GET", "/") => get(index),
            ("GET", "/ledgers") => get(ledgers),
            ("GET", "/server") => get(pages::server_page),
            ("GET", "/changes") => get(pages::changes_page),
            ("GET", "/changes.atom") => get(pages::feed),
            ("GET", "/ledgers/{name}/servers") => get(servers),
            ("GET", "/ledgers/{name}/servers/{server}/changes") => get(changes),
            ("GET", "/ledgers/{name}/servers/{server}/surface") => get(surface),
            ("POST", "/diff") => post(diff),
            _ => return None,
        })
    }
}

/// The API routes (without `/mcp`), with JSON answers for unknown routes and methods: each
/// route of [`ROUTES`], and nothing else.
pub fn routes(reader: Reader) -> Router {
    ROUTES
        .iter()
        .filter_map(|route| Some((route.path, route.handler()?)))
        .fold(Router::new(), |router, (path, handler)| {
            router.route(path, handler)
        })
        .fallback(no_route)
        .method_not_allowed_fallback(bad_method)
        .with_state(reader)
}

/// `GET /`: the readiness probe gets a short 200, a browser the fleet page, anyone else a
/// description of the routes.
async fn index(
    State(reader): State<Reader>,
    headers: HeaderMap,
    uri: Uri,
    query: Result<Query<RawQuery>, QueryRejection>,
) -> Response {
    if headers.contains_key(READINESS_HEADER) {
        return (StatusCode::OK, "ready").into_response();
    }
    if pages::wants_html(&headers) {
        return pages::fleet_page(&reader, &uri, query).await;
    }
    Json(json!({
        "name": env!("CARGO_PKG_NAME"),
        "version": env!("CARGO_PKG_VERSION"),
        "read_only": true,
        "routes": {
            "GET / (Accept: text/html)": "the fleet page, for a browser (?ledger=NAME)",
            "GET /server?ledger=NAME&url=URL": "a server's page",
            "GET /changes?ledger=&severity=&class=&server=&since=&page=": "the changes page",
            "GET /changes.atom?ledger=&severity=&class=&server=&since=": "an Atom feed of the changes",
            "GET /ledgers": "the ledger names in the store",
            "GET /ledgers/{name}/servers": "the watched servers of a ledger",
            "GET /ledgers/{name}/servers/{url-encoded server URL}/changes?since=RFC3339": "a server's remembered changes",
            "GET /ledgers/{name}/servers/{url-encoded server URL}/surface?at=RFC3339": "a server's stored surface, or the one it served at a past time",
            "POST /diff": "{\"before\": doc, \"after\": doc} -> the rows of the diff subcommand",
            "POST /mcp": "MCP endpoint (Streamable HTTP, stateless)",
        },
    }))
    .into_response()
}

/// `GET /ledgers`: the ledger names (a sharded watch by its own name, once).
async fn ledgers(State(reader): State<Reader>) -> Result<Response, ServeError> {
    let names = reader.ledger_names().await?;
    Ok(Json(json!({"ledgers_total": names.len(), "ledgers": names})).into_response())
}

async fn servers(
    State(reader): State<Reader>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Response, ServeError> {
    let Path(name) = name.map_err(bad_path)?;
    Ok(Json(reader.servers(&name).await?).into_response())
}

/// The query of the changes route.
#[derive(Debug, Deserialize)]
struct ChangesQuery {
    since: Option<String>,
}

async fn changes(
    State(reader): State<Reader>,
    path: Result<Path<(String, String)>, PathRejection>,
    query: Result<Query<ChangesQuery>, QueryRejection>,
) -> Result<Response, ServeError> {
    let Path((name, server)) = path.map_err(bad_path)?;
    let Query(query) = query.map_err(|e| ServeError::BadRequest(e.body_text()))?;
    let since = query.since.as_deref().map(parse_since).transpose()?;
    Ok(Json(reader.changes(&name, &server, since).await?).into_response())
}

/// The query of the surface route.
#[derive(Debug, Deserialize)]
struct SurfaceQuery {
    at: Option<String>,
}

async fn surface(
    State(reader): State<Reader>,
    path: Result<Path<(String, String)>, PathRejection>,
    query: Result<Query<SurfaceQuery>, QueryRejection>,
) -> Result<Response, ServeError> {
    let Path((name, server)) = path.map_err(bad_path)?;
    let Query(query) = query.map_err(|e| ServeError::BadRequest(e.body_text()))?;
    let at = query.at.as_deref().map(parse_since).transpose()?;
    Ok(Json(reader.surface(&name, &server, at).await?).into_response())
}

async fn diff(body: Result<Bytes, BytesRejection>) -> Result<Response, ServeError> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ServeError::TooLarge(MAX_BODY_BYTES)
        } else {
            ServeError::BadRequest(rejection.body_text())
        }
    })?;
    let request: DiffRequest = serde_json::from_slice(&body).map_err(|e| {
        ServeError::BadRequest(format!(
            "the body must be a JSON object {{\"before\": ..., \"after\": ...}}: {e}"
        ))
    })?;
    Ok(Json(compare::diff(request)?).into_response())
}

async fn no_route(uri: Uri) -> ServeError {
    ServeError::NoRoute(uri.path().to_string())
}

async fn bad_method(method: Method) -> ServeError {
    ServeError::BadMethod(method.to_string())
}

fn bad_path(rejection: PathRejection) -> ServeError {
    ServeError::BadRequest(rejection.body_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_route_has_its_handler_once() {
        for route in ROUTES {
            assert!(route.handler().is_some(), "{route:?} has no handler");
        }
        let mut unique = ROUTES.to_vec();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ROUTES.len(), "a route is listed twice");
    }
}
