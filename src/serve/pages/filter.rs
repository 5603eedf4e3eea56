//! The query of the changes page and the Atom feed: which ledger, which changes, which page.
//!
//! Pure: parsing the query parameters (every bad one refused with a message naming it),
//! selecting the changes, cutting pages, and writing the query back for links.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::super::error::ServeError;
use super::super::query::parse_since;
use super::super::store::FleetChange;
use crate::diff::{ChangeClass, Severity};

/// Changes per page of the changes page.
pub const PAGE_SIZE: usize = 50;

/// Entries of the Atom feed (the newest matching changes).
pub const FEED_SIZE: usize = 100;

/// The query parameters as sent (all text, all optional).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RawQuery {
    /// The ledger to show.
    pub ledger: Option<String>,
    /// Severities, comma-separated (`high,medium`).
    pub severity: Option<String>,
    /// Change classes, comma-separated.
    pub class: Option<String>,
    /// One server URL.
    pub server: Option<String>,
    /// Only changes observed at or after this RFC 3339 instant.
    pub since: Option<String>,
    /// The page, from 1.
    pub page: Option<String>,
}

/// A parsed, valid query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangeFilter {
    /// The ledger asked for (`None` = the default ledger).
    pub ledger: Option<String>,
    /// Wanted severities (empty = all).
    pub severities: Vec<&'static str>,
    /// Wanted classes (empty = all).
    pub classes: Vec<&'static str>,
    /// Only this server.
    pub server: Option<String>,
    /// Only changes at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// The page, from 1.
    pub page: usize,
}

const SEVERITIES: [Severity; 3] = [Severity::High, Severity::Medium, Severity::Low];

/// The severity names, highest first.
pub fn severity_names() -> impl Iterator<Item = &'static str> {
    SEVERITIES.iter().map(|severity| severity.as_str())
}

/// The class names, in their declared order.
pub fn class_names() -> impl Iterator<Item = &'static str> {
    ChangeClass::ALL.iter().map(|class| class.as_str())
}

impl ChangeFilter {
    /// Parses `raw`; a blank parameter counts as absent (an empty form field).
    pub fn parse(raw: &RawQuery) -> Result<Self, ServeError> {
        let present = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_string)
        };
        let page = match present(&raw.page) {
            None => 1,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    ServeError::BadRequest(format!("page {text:?} is not a number from 1"))
                })?,
        };
        Ok(ChangeFilter {
            ledger: present(&raw.ledger),
            severities: names_in(present(&raw.severity), "severity", severity_names)?,
            classes: names_in(present(&raw.class), "class", class_names)?,
            server: present(&raw.server),
            since: present(&raw.since)
                .as_deref()
                .map(parse_since)
                .transpose()?,
            page,
        })
    }

    /// Whether `change` is selected.
    pub fn selects(&self, change: &FleetChange) -> bool {
        let view = &change.change;
        (self.severities.is_empty() || self.severities.contains(&view.severity.as_str()))
            && (self.classes.is_empty() || self.classes.contains(&view.change_class.as_str()))
            && self
                .server
                .as_ref()
                .is_none_or(|server| *server == change.server_url)
            && self.since.is_none_or(|since| view.observed_at >= since)
    }

    /// The query string of this filter on `page` (no ledger when `None`), for links.
    pub fn query(&self, page: Option<usize>) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if let Some(ledger) = &self.ledger {
            query.append_pair("ledger", ledger);
        }
        if !self.severities.is_empty() {
            query.append_pair("severity", &self.severities.join(","));
        }
        if !self.classes.is_empty() {
            query.append_pair("class", &self.classes.join(","));
        }
        if let Some(server) = &self.server {
            query.append_pair("server", server);
        }
        if let Some(since) = &self.since {
            query.append_pair("since", &since.to_rfc3339());
        }
        if let Some(page) = page.filter(|&page| page > 1) {
            query.append_pair("page", &page.to_string());
        }
        query.finish()
    }
}

/// The names of a comma-separated list, each one of `known()`.
fn names_in<I>(
    list: Option<String>,
    parameter: &str,
    known: impl Fn() -> I,
) -> Result<Vec<&'static str>, ServeError>
where
    I: Iterator<Item = &'static str>,
{
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = known().find(|name| *name == part).ok_or_else(|| {
            let all: Vec<&str> = known().collect();
            ServeError::BadRequest(format!(
                "{parameter} {part:?} is not one of {}",
                all.join(", ")
            ))
        })?;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// One page of `items`: the slice and the number of pages (at least 1).
pub fn page_of<T>(items: &[T], page: usize, size: usize) -> (&[T], usize) {
    let pages = items.len().div_ceil(size).max(1);
    let start = (page.saturating_sub(1) * size).min(items.len());
    let end = (start + size).min(items.len());
    (&items[start..end], pages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::ChangeView;

    fn raw(pairs: &[(&str, &str)]) -> RawQuery {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        serde_urlencoded_like(&query)
    }

    fn serde_urlencoded_like(query: &str) -> RawQuery {
        let mut raw = RawQuery::default();
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = Some(value.into_owned());
            match key.as_ref() {
                "ledger" => raw.ledger = value,
                "severity" => raw.severity = value,
                "class" => raw.class = value,
                "server" => raw.server = value,
                "since" => raw.since = value,
                "page" => raw.page = value,
                _ => {}
            }
        }
        raw
    }

    fn change(server: &str, severity: &str, class: &str, at: &str) -> FleetChange {
        FleetChange {
            server_url: server.to_string(),
            change: ChangeView {
                observed_at: at.parse().unwrap(),
                change_class: class.to_string(),
                tool_name: None,
                field: "tool".to_string(),
                severity: severity.to_string(),
                values: None,
            },
        }
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let table = [
            (vec![("severity", "critical")], "severity \"critical\""),
            (vec![("class", "tool_renamed")], "class \"tool_renamed\""),
            (vec![("since", "yesterday")], "since \"yesterday\""),
            (vec![("page", "0")], "page \"0\""),
            (vec![("page", "x")], "page \"x\""),
        ];
        for (pairs, named) in table {
            let error = ChangeFilter::parse(&raw(&pairs)).unwrap_err();
            assert_eq!(error.code(), "bad_request");
            assert!(error.to_string().contains(named), "{error}");
        }
    }

    #[test]
    fn blank_fields_mean_no_filter_and_the_query_round_trips() {
        let empty = ChangeFilter::parse(&raw(&[("severity", ""), ("server", " "), ("page", "")]));
        assert_eq!(
            empty.unwrap(),
            ChangeFilter {
                page: 1,
                ..ChangeFilter::default()
            }
        );
        let pairs = [
            ("ledger", "fleet"),
            ("severity", "high, medium,high"),
            ("class", "tool_added"),
            ("server", "http://a.example/mcp?x=1&y=<2>"),
            ("since", "2026-01-31T12:00:00+00:00"),
            ("page", "3"),
        ];
        let filter = ChangeFilter::parse(&raw(&pairs)).unwrap();
        assert_eq!(filter.severities, vec!["high", "medium"]);
        let again = ChangeFilter::parse(&serde_urlencoded_like(&filter.query(Some(3)))).unwrap();
        assert_eq!(again, filter);
        assert!(!filter.query(Some(1)).contains("page="));
    }

    #[test]
    fn the_filter_selects_by_every_field() {
        let a = change("http://a/mcp", "high", "tool_added", "2026-02-01T00:00:00Z");
        let b = change(
            "http://b/mcp",
            "low",
            "tool_description_changed",
            "2026-01-01T00:00:00Z",
        );
        let table = [
            (vec![], true, true),
            (vec![("severity", "high")], true, false),
            (vec![("severity", "low,medium")], false, true),
            (vec![("class", "tool_added")], true, false),
            (vec![("server", "http://b/mcp")], false, true),
            (vec![("since", "2026-01-15T00:00:00Z")], true, false),
        ];
        for (pairs, selects_a, selects_b) in table {
            let filter = ChangeFilter::parse(&raw(&pairs)).unwrap();
            assert_eq!(
                (filter.selects(&a), filter.selects(&b)),
                (selects_a, selects_b),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn pages_cut_the_list() {
        let items: Vec<usize> = (0..120).collect();
        assert_eq!(page_of(&items, 1, 50).0.len(), 50);
        assert_eq!(page_of(&items, 3, 50), (&items[100..], 3));
        assert_eq!(page_of(&items, 9, 50).0.len(), 0);
        assert_eq!(page_of::<usize>(&[], 1, 50).1, 1);
    }
}
