//! The official MCP Registry as a source of servers to watch.
//!
//! The registry publishes server versions (`GET {base}/servers?search=&limit=&cursor=`, see its
//! OpenAPI document). Each entry's `server.remotes[]` lists the endpoints a client connects to:
//! those of type `streamable-http` or `sse` become targets of the run, exactly like URLs typed
//! into `servers` (same address policy, same duplicate rule, same budget cap). Entries with no
//! remote (packages run locally over stdio) are counted and skipped; remote URLs that are
//! templates (`https://{tenant}.example.com/mcp`) are reported, never guessed.
//!
//! Only the latest version of each server name is used. Pages are followed by cursor until
//! `limit` server names were collected or the registry has no more. A walk that stops while the
//! registry still has more (the `limit` reached, a cursor seen before, the page cap) says so:
//! [`Truncation`] reaches the summary row (`registry_truncated`) and the status message, and
//! the servers found so far are still watched.
//!
//! The registry is reached through [`crate::net::Client`]: its base URL comes from INPUT, so it
//! is held to the target address policy like any other URL a user can type, and it never
//! carries a credential.

use std::collections::HashSet;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::net::{Client, NetError};

/// The official registry's public API (its stable `v0.1` path).
pub const DEFAULT_BASE_URL: &str = "https://registry.modelcontextprotocol.io/v0.1";

/// Entries the registry returns per page at most.
const PAGE_SIZE: usize = 100;

/// The fewest pages a search may read, whatever its limit: pages can hold entries that are
/// skipped (older versions, deleted servers).
const MIN_PAGES: usize = 50;

/// The most pages one search reads, whatever the cursors say (a registry that never stops
/// paginating must not hold the run): twice what `limit` needs, and at least [`MIN_PAGES`].
fn max_pages(limit: usize) -> usize {
    (limit.div_ceil(PAGE_SIZE) * 2).max(MIN_PAGES)
}

/// [`DEFAULT_BASE_URL`] as a URL.
pub fn default_base_url() -> Url {
    Url::parse(DEFAULT_BASE_URL).unwrap_or_else(|_| unreachable!("the default is a valid URL"))
}

/// What INPUT's `registry` field asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryQuery {
    /// The API base, e.g. `https://registry.modelcontextprotocol.io/v0.1`; `/servers` is
    /// appended.
    pub base_url: Url,
    /// Substring of the server name to search for; `None` lists everything.
    pub search: Option<String>,
    /// The most server names taken from the registry.
    pub limit: usize,
}

/// One remote endpoint the registry lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRemote {
    /// The server's registry name, e.g. `io.github.example/weather`.
    pub server_name: String,
    /// The remote's URL as published.
    pub url: String,
}

/// The servers a registry search contributes to the fleet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistryFleet {
    /// Remotes to watch, in registry order.
    pub remotes: Vec<RegistryRemote>,
    /// Remotes whose URL is a template with `{placeholders}`: reported, never contacted.
    pub templated: Vec<RegistryRemote>,
    /// Latest server versions without any `streamable-http` or `sse` remote (stdio packages).
    pub skipped_stdio: usize,
    /// Why the walk stopped before the registry's end, if it did.
    pub truncated: Option<Truncation>,
}

/// Why a registry walk stopped while the registry still had more to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truncation {
    /// `limit` server names were taken and the registry lists more.
    Limit(usize),
    /// The registry sent a cursor it had sent before (following it would loop).
    RepeatingCursor,
    /// This many pages were read and the registry still sent a next cursor.
    PageCap(usize),
}

impl Truncation {
    /// The reason's code, the start of `registry_truncated`.
    pub fn code(self) -> &'static str {
        match self {
            Truncation::Limit(_) => "limit",
            Truncation::RepeatingCursor => "repeating_cursor",
            Truncation::PageCap(_) => "page_cap",
        }
    }
}

impl std::fmt::Display for Truncation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = self.code();
        match self {
            Truncation::Limit(limit) => write!(
                f,
                "{code}: the registry lists more than `registry.limit` ({limit}) servers"
            ),
            Truncation::RepeatingCursor => write!(
                f,
                "{code}: the registry sent a page cursor it had sent before; the walk stopped there"
            ),
            Truncation::PageCap(pages) => write!(
                f,
                "{code}: {pages} pages read and the registry still had more"
            ),
        }
    }
}

/// The server entries of one run: `servers` as given, then the registry's remotes that are
/// not already among them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fleet {
    /// Entries to plan, in order: the explicit ones first.
    pub entries: Vec<Value>,
    /// The registry name of each entry (`None` for explicit servers), by entry index.
    pub registry_names: Vec<Option<String>>,
    /// Templated remotes: reported with `TEMPLATED_URL`, never contacted.
    pub templated: Vec<RegistryRemote>,
    /// Latest registry entries without a remote endpoint.
    pub skipped_stdio: usize,
    /// Registry remotes left out because the fleet reached the most servers a run accepts.
    pub over_limit: usize,
    /// Why the registry could not be read, if it could not.
    pub registry_error: Option<String>,
    /// Why the registry walk stopped before the registry's end, if it did.
    pub registry_truncated: Option<Truncation>,
}

impl Fleet {
    /// A fleet of the explicit servers only.
    pub fn explicit(servers: &[Value]) -> Fleet {
        Fleet {
            entries: servers.to_vec(),
            registry_names: vec![None; servers.len()],
            ..Fleet::default()
        }
    }

    /// The explicit servers followed by the registry's remotes, without repeats (a remote
    /// already listed, explicitly or by another registry entry, is dropped silently), and at
    /// most `max_entries` entries in all.
    pub fn merge(servers: &[Value], found: RegistryFleet, max_entries: usize) -> Fleet {
        let mut fleet = Fleet::explicit(servers);
        let mut known: HashSet<String> = servers
            .iter()
            .filter_map(Value::as_str)
            .filter_map(crate::targets::normalized_url)
            .collect();
        for remote in found.remotes {
            let key =
                crate::targets::normalized_url(&remote.url).unwrap_or_else(|| remote.url.clone());
            if !known.insert(key) {
                continue;
            }
            if fleet.entries.len() >= max_entries {
                fleet.over_limit += 1;
                continue;
            }
            fleet.entries.push(Value::String(remote.url));
            fleet.registry_names.push(Some(remote.server_name));
        }
        fleet.templated = found.templated;
        fleet.skipped_stdio = found.skipped_stdio;
        fleet.registry_truncated = found.truncated;
        fleet
    }
}

/// Why the registry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The request failed (address policy, DNS, connect, timeout, body cap).
    #[error("the MCP Registry at {url} could not be read: {source}")]
    Net {
        /// The page URL.
        url: String,
        /// The transport failure.
        source: NetError,
    },
    /// The registry answered with a status other than 2xx.
    #[error("the MCP Registry at {url} answered HTTP {status}")]
    Status {
        /// The page URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The page is not the registry's `ServerList` JSON.
    #[error("the MCP Registry at {url} sent a page that is not a server list: {problem}")]
    BadPage {
        /// The page URL.
        url: String,
        /// What the parser said.
        problem: String,
    },
}

/// One page of `GET /servers`, as far as this module needs it.
#[derive(Debug, Deserialize)]
struct ServerList {
    servers: Vec<ServerResponse>,
    #[serde(default)]
    metadata: Option<ListMetadata>,
}

#[derive(Debug, Deserialize)]
struct ListMetadata {
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ServerResponse {
    server: ServerDetail,
    #[serde(default, rename = "_meta")]
    meta: Option<ResponseMeta>,
}

#[derive(Debug, Deserialize)]
struct ServerDetail {
    name: String,
    #[serde(default)]
    remotes: Vec<Remote>,
}

#[derive(Debug, Deserialize)]
struct Remote {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ResponseMeta {
    #[serde(default, rename = "io.modelcontextprotocol.registry/official")]
    official: Option<OfficialMeta>,
}

#[derive(Debug, Deserialize)]
struct OfficialMeta {
    #[serde(default, rename = "isLatest")]
    is_latest: Option<bool>,
    #[serde(default)]
    status: Option<String>,
}

impl ServerResponse {
    /// Whether the registry marks this entry as an older version or a deleted server.
    fn is_superseded(&self) -> bool {
        let official = self.meta.as_ref().and_then(|m| m.official.as_ref());
        official
            .is_some_and(|o| o.is_latest == Some(false) || o.status.as_deref() == Some("deleted"))
    }
}

/// Collects pages into a fleet: the latest version of each name, up to `limit` names.
#[derive(Debug)]
struct Collector {
    limit: usize,
    names: HashSet<String>,
    fleet: RegistryFleet,
    /// Whether a page held a new name after the limit was reached.
    left_out: bool,
}

impl Collector {
    fn new(limit: usize) -> Self {
        Collector {
            limit,
            names: HashSet::new(),
            fleet: RegistryFleet::default(),
            left_out: false,
        }
    }

    fn is_full(&self) -> bool {
        self.names.len() >= self.limit
    }

    fn add_page(&mut self, page: ServerList) {
        for entry in page.servers {
            if entry.is_superseded() || self.names.contains(&entry.server.name) {
                continue;
            }
            if self.is_full() {
                self.left_out = true;
                return;
            }
            self.names.insert(entry.server.name.clone());
            self.add_server(entry.server);
        }
    }

    fn add_server(&mut self, server: ServerDetail) {
        let mut any_remote = false;
        for remote in server.remotes {
            let Some(url) = remote.url.filter(|_| is_http_remote(&remote.kind)) else {
                continue;
            };
            any_remote = true;
            let remote = RegistryRemote {
                server_name: server.name.clone(),
                url,
            };
            if is_template(&remote.url) {
                self.fleet.templated.push(remote);
            } else {
                self.fleet.remotes.push(remote);
            }
        }
        if !any_remote {
            self.fleet.skipped_stdio += 1;
        }
    }
}

fn is_http_remote(kind: &str) -> bool {
    matches!(kind, "streamable-http" | "sse")
}

/// Whether a published URL still holds `{placeholders}` to fill in.
fn is_template(url: &str) -> bool {
    url.contains('{') || url.contains('}')
}

/// The URL of one page.
fn page_url(query: &RegistryQuery, cursor: Option<&str>, page_size: usize) -> Url {
    let mut url = query.base_url.clone();
    let path = format!("{}/servers", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    url.set_fragment(None);
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("limit", &page_size.to_string());
        pairs.append_pair("version", "latest");
        if let Some(search) = &query.search {
            pairs.append_pair("search", search);
        }
        if let Some(cursor) = cursor {
            pairs.append_pair("cursor", cursor);
        }
    }
    url
}

/// Parses one page. Pure, so the registry's shape is tested without a network.
fn parse_page(url: &Url, body: &[u8]) -> Result<ServerList, RegistryError> {
    serde_json::from_slice(body).map_err(|e| RegistryError::BadPage {
        url: url.to_string(),
        problem: e.to_string(),
    })
}

/// Reads the registry search into a fleet. Any failure ends the search: the run then goes on
/// with the explicit `servers` alone.
pub async fn fetch(client: &Client, query: &RegistryQuery) -> Result<RegistryFleet, RegistryError> {
    let client = client.anonymous();
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    let mut collector = Collector::new(query.limit);
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    let pages = max_pages(query.limit);
    for _ in 0..pages {
        let page_size = (query.limit - collector.names.len()).clamp(1, PAGE_SIZE);
        let url = page_url(query, cursor.as_deref(), page_size);
        let response =
            client
                .get(&url, headers.clone())
                .await
                .map_err(|source| RegistryError::Net {
                    url: url.to_string(),
                    source,
                })?;
        if !(200..300).contains(&response.status) {
            return Err(RegistryError::Status {
                url: url.to_string(),
                status: response.status,
            });
        }
        let page = parse_page(&url, &response.body)?;
        let next = page
            .metadata
            .as_ref()
            .and_then(|m| m.next_cursor.clone())
            .filter(|c| !c.is_empty());
        collector.add_page(page);
        match next_step(&collector, next, &mut seen_cursors) {
            Step::Follow(next) => cursor = Some(next),
            Step::Stop(truncated) => {
                collector.fleet.truncated = truncated;
                return Ok(collector.fleet);
            }
        }
    }
    collector.fleet.truncated = Some(Truncation::PageCap(pages));
    Ok(collector.fleet)
}

/// What the walk does after a page.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Read the page of this cursor.
    Follow(String),
    /// Stop; cut short for this reason, if any.
    Stop(Option<Truncation>),
}

/// Decides the walk's next step from the page's next cursor (`None`: the registry's end).
fn next_step(collector: &Collector, next: Option<String>, seen: &mut HashSet<String>) -> Step {
    // Full with a next cursor: the registry may list more (its next page was not read).
    if collector.is_full() && (collector.left_out || next.is_some()) {
        return Step::Stop(Some(Truncation::Limit(collector.limit)));
    }
    match next {
        None => Step::Stop(None),
        Some(next) if seen.insert(next.clone()) => Step::Follow(next),
        Some(_) => Step::Stop(Some(Truncation::RepeatingCursor)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(value: serde_json::Value) -> ServerList {
        serde_json::from_value(value).unwrap()
    }

    fn remote(kind: &str, url: &str) -> serde_json::Value {
        json!({"type": kind, "url": url})
    }

    fn entry(name: &str, remotes: serde_json::Value, latest: Option<bool>) -> serde_json::Value {
        let mut value = json!({
            "server": {"name": name, "description": "d", "version": "1.0.0", "remotes": remotes},
        });
        if let Some(latest) = latest {
            value["_meta"] = json!({
                "io.modelcontextprotocol.registry/official": {"isLatest": latest, "status": "active"}
            });
        }
        value
    }

    #[test]
    fn remotes_become_targets_and_the_rest_is_sorted_out() {
        let mut collector = Collector::new(10);
        collector.add_page(page(json!({"servers": [
            entry("a/http", json!([remote("streamable-http", "https://a.example/mcp")]), Some(true)),
            entry("b/old", json!([remote("streamable-http", "https://b.example/v1")]), Some(false)),
            entry("b/old", json!([remote("sse", "https://b.example/sse")]), Some(true)),
            entry("c/stdio", json!([]), None),
            entry("d/tpl", json!([remote("streamable-http", "https://{tenant}.d.example/mcp")]), None),
            entry("a/http", json!([remote("streamable-http", "https://a.example/again")]), None),
        ], "metadata": {"count": 6}})));
        let fleet = collector.fleet;
        let urls: Vec<&str> = fleet.remotes.iter().map(|r| r.url.as_str()).collect();
        assert_eq!(urls, ["https://a.example/mcp", "https://b.example/sse"]);
        assert_eq!(fleet.skipped_stdio, 1);
        assert_eq!(fleet.templated.len(), 1);
        assert_eq!(fleet.templated[0].server_name, "d/tpl");
    }

    #[test]
    fn the_limit_counts_server_names() {
        let mut collector = Collector::new(2);
        collector.add_page(page(json!({"servers": [
            entry("a/x", json!([remote("streamable-http", "https://a.example/mcp"), remote("sse", "https://a.example/sse")]), None),
            entry("b/x", json!([]), None),
            entry("c/x", json!([remote("streamable-http", "https://c.example/mcp")]), None),
        ]})));
        assert!(collector.is_full());
        assert_eq!(collector.fleet.remotes.len(), 2);
        assert_eq!(collector.fleet.skipped_stdio, 1);
    }

    #[test]
    fn the_walk_stops_at_the_end_or_says_why_it_stopped_early() {
        let names = |n: usize| -> serde_json::Value {
            (0..n)
                .map(|i| entry(&format!("s/{i}"), json!([]), None))
                .collect()
        };
        let next = |c: Option<&str>| c.map(str::to_string);
        // (limit, names on the page, next cursor, cursor already seen, step)
        let cases = [
            (10, 3, None, false, Step::Stop(None)),
            (10, 3, Some("b"), false, Step::Follow("b".into())),
            (
                10,
                3,
                Some("b"),
                true,
                Step::Stop(Some(Truncation::RepeatingCursor)),
            ),
            (3, 3, None, false, Step::Stop(None)),
            (
                3,
                3,
                Some("b"),
                false,
                Step::Stop(Some(Truncation::Limit(3))),
            ),
            (2, 3, None, false, Step::Stop(Some(Truncation::Limit(2)))),
        ];
        for (limit, count, cursor, seen_before, expected) in cases {
            let mut collector = Collector::new(limit);
            collector.add_page(page(json!({ "servers": names(count) })));
            let mut seen = HashSet::new();
            if seen_before {
                seen.insert("b".to_string());
            }
            let step = next_step(&collector, next(cursor), &mut seen);
            assert_eq!(step, expected, "{limit} {count} {cursor:?} {seen_before}");
        }
        assert_eq!(Truncation::PageCap(50).code(), "page_cap");
        assert!(
            Truncation::PageCap(50)
                .to_string()
                .starts_with("page_cap: 50 pages")
        );
    }

    #[test]
    fn merging_keeps_explicit_servers_first_and_drops_repeats() {
        let remote = |name: &str, url: &str| RegistryRemote {
            server_name: name.into(),
            url: url.into(),
        };
        let found = RegistryFleet {
            remotes: vec![
                remote("a/x", "https://A.example/mcp#frag"),
                remote("b/x", "https://b.example/mcp"),
                remote("c/x", "https://b.example/mcp"),
                remote("d/x", "https://d.example/mcp"),
                remote("e/x", "https://e.example/mcp"),
            ],
            templated: vec![remote("t/x", "https://{t}.example/mcp")],
            skipped_stdio: 3,
            truncated: Some(Truncation::RepeatingCursor),
        };
        let explicit = [json!("https://a.example/mcp"), json!(7)];
        let fleet = Fleet::merge(&explicit, found, 4);
        assert_eq!(
            fleet.entries,
            vec![
                json!("https://a.example/mcp"),
                json!(7),
                json!("https://b.example/mcp"),
                json!("https://d.example/mcp"),
            ]
        );
        assert_eq!(
            fleet.registry_names,
            vec![None, None, Some("b/x".to_string()), Some("d/x".to_string())]
        );
        assert_eq!(fleet.over_limit, 1);
        assert_eq!(fleet.skipped_stdio, 3);
        assert_eq!(fleet.registry_truncated, Some(Truncation::RepeatingCursor));
        assert_eq!(fleet.templated.len(), 1);
    }

    #[test]
    fn page_urls_carry_search_limit_and_cursor() {
        let query = RegistryQuery {
            base_url: Url::parse("https://registry.example/v0.1/").unwrap(),
            search: Some("git hub".into()),
            limit: 30,
        };
        assert_eq!(
            page_url(&query, None, 30).as_str(),
            "https://registry.example/v0.1/servers?limit=30&version=latest&search=git+hub"
        );
        assert_eq!(
            page_url(&query, Some("abc/1=="), 5).as_str(),
            "https://registry.example/v0.1/servers?limit=5&version=latest&search=git+hub&cursor=abc%2F1%3D%3D"
        );
        assert_eq!(default_base_url().as_str(), DEFAULT_BASE_URL);
    }

    #[test]
    fn pages_that_are_not_server_lists_are_errors() {
        let url = Url::parse("https://r.example/v0.1/servers").unwrap();
        for body in [&b"<html>"[..], b"{}", b"{\"servers\": {}}", b"[]"] {
            let error = parse_page(&url, body).unwrap_err();
            assert!(error.to_string().contains("not a server list"), "{error}");
        }
        assert!(parse_page(&url, b"{\"servers\": []}").is_ok());
    }
}
