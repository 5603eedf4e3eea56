//! A handshake's session: the list calls, page by page, with the session renewed once when the
//! server forgets it.

use std::collections::HashSet;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use url::Url;

use super::ProbeOptions;
use super::classic::try_classic;
use super::envelope::{self, classic_headers, modern_headers, modern_params};
use crate::mcp::era::Era;
use crate::mcp::error::ProbeError;
use crate::mcp::exchange::{Reply, Wire};
use crate::mcp::legacy_sse::LegacySession;
use crate::mcp::raw::RawAnswers;
use crate::surface::{ListRead, Sha256Digest};

/// Items read from one list method.
#[derive(Debug, Default)]
pub(super) struct Listing {
    pub(super) items: Vec<Value>,
    pub(super) truncated: bool,
    /// `(item index, pointer inside the item)` of every key an answer repeated.
    pub(super) repeated_keys: Vec<(usize, String)>,
}

/// Splits a pointer into a JSON-RPC answer, such as `/result/tools/3/description`, into the
/// item index and the pointer inside that item (`3`, `/description`).
pub(super) fn item_pointer(pointer: &str, key: &str) -> Option<(usize, String)> {
    let marker = format!("/result/{key}/");
    let rest = &pointer[pointer.find(&marker)? + marker.len()..];
    let (index, inner) = rest.split_once('/').unwrap_or((rest, ""));
    Some((index.parse().ok()?, format!("/{inner}")))
}

/// The classic session id, which a re-initialization may replace while list calls run.
pub(super) struct SessionSlot {
    pub(super) id: std::sync::Mutex<Option<String>>,
    /// Held while renewing, so concurrent list calls renew once; true once renewed.
    pub(super) renewed: tokio::sync::Mutex<bool>,
}

impl SessionSlot {
    pub(super) fn new(id: Option<String>) -> Self {
        SessionSlot {
            id: std::sync::Mutex::new(id),
            renewed: tokio::sync::Mutex::new(false),
        }
    }

    pub(super) fn current(&self) -> Option<String> {
        self.id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub(super) fn replace(&self, id: Option<String>) {
        *self
            .id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = id;
    }
}

/// A server after its handshake: how every later request is addressed.
pub(super) struct Session<'w, 'c> {
    pub(super) wire: &'w Wire<'c>,
    pub(super) url: Url,
    pub(super) era: Era,
    pub(super) version: String,
    pub(super) session_id: SessionSlot,
    /// Set for the legacy transport: requests go through its stream instead of the wire.
    pub(super) legacy: Option<&'w LegacySession>,
    /// The result digests of the list pages read through this session.
    pub(super) raw: RawAnswers,
}

impl Session<'_, '_> {
    pub(super) fn headers(&self, method: &str) -> HeaderMap {
        match self.era {
            Era::Modern => modern_headers(&self.version, method),
            Era::Classic | Era::LegacySse => {
                classic_headers(&self.version, self.session_id.current().as_deref())
            }
        }
    }

    pub(super) fn params(&self, cursor: Option<&str>) -> Option<Value> {
        match self.era {
            Era::Modern => Some(modern_params(&self.version, cursor)),
            Era::Classic | Era::LegacySse => cursor.map(|cursor| json!({"cursor": cursor})),
        }
    }

    /// Sends one request; returns its result, the pointers of keys its answer repeated
    /// (looked for in `tools/list` answers over Streamable HTTP) and the digest of the
    /// result's exact bytes (`None` on the legacy transport).
    pub(super) async fn call(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<(Value, Vec<String>, Option<Sha256Digest>), ProbeError> {
        let params = self.params(cursor);
        match self.legacy {
            Some(legacy) => Ok((legacy.call(method, params).await?, Vec::new(), None)),
            None => {
                let sent_with = self.session_id.current();
                let mut reply = self
                    .wire
                    .request(&self.url, self.headers(method), method, params.clone())
                    .await?;
                if self.session_expired(&reply, sent_with.as_deref()) && self.renew(sent_with).await
                {
                    reply = self
                        .wire
                        .request(&self.url, self.headers(method), method, params)
                        .await?;
                }
                let repeated = reply.repeated_keys.clone();
                let digest = reply.result_digest;
                Ok((reply.into_result()?, repeated, digest))
            }
        }
    }

    /// A classic server answers 404 to a request carrying a session id it no longer knows
    /// (the session expired or the server restarted).
    pub(super) fn session_expired(&self, reply: &Reply, sent_with: Option<&str>) -> bool {
        self.era == Era::Classic && sent_with.is_some() && reply.status == 404
    }

    /// Starts a new session once per probe (`initialize` + `initialized` again). Concurrent
    /// list calls that saw the same expiry wait for one renewal and then use its id. False
    /// when the session was already renewed once, or the new handshake failed.
    pub(super) async fn renew(&self, expired: Option<String>) -> bool {
        let mut renewed = self.session_id.renewed.lock().await;
        if self.session_id.current() != expired {
            return true;
        }
        if *renewed {
            return false;
        }
        *renewed = true;
        match try_classic(self.wire, &self.url).await {
            Ok(handshake) if handshake.version == self.version => {
                tracing::info!(url = %self.url, "classic session expired; re-initialized once");
                self.session_id.replace(handshake.session_id);
                true
            }
            Ok(_) | Err(_) => false,
        }
    }

    /// Walks `method` through `nextCursor`: at most `max_pages` pages and `max_tools` items,
    /// stopping early on a repeated cursor.
    pub(super) async fn list(
        &self,
        method: &str,
        key: &str,
        options: &ProbeOptions,
    ) -> Result<Listing, ProbeError> {
        let mut listing = Listing::default();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 0..options.max_pages.max(1) {
            let (mut result, repeated, digest) = self.call(method, cursor.as_deref()).await?;
            self.raw.record(method, page as usize, digest);
            let Some(Value::Array(items)) = result.get_mut(key).map(Value::take) else {
                return Err(ProbeError::NotJson(format!(
                    "the {method} result has no {key} array"
                )));
            };
            let offset = listing.items.len();
            listing.repeated_keys.extend(
                repeated
                    .iter()
                    .filter_map(|pointer| item_pointer(pointer, key))
                    .map(|(index, inner)| (offset + index, inner))
                    .filter(|(index, _)| *index < offset + items.len()),
            );
            for item in items {
                if listing.items.len() == options.max_tools {
                    listing.truncated = true;
                    return Ok(listing);
                }
                listing.items.push(item);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if seen.insert(next.to_string()) => cursor = Some(next.to_string()),
                _ => return Ok(listing),
            }
        }
        listing.truncated = true;
        Ok(listing)
    }

    /// Reads every item of every page of a declared list other than tools (within
    /// `max_pages`; the body cap and the deadline bound the rest); `None` when the listing
    /// fails, since these lists are optional. "Method not found" (-32601) is an empty list:
    /// many servers that declare resources do not implement `resources/templates/list`.
    pub(super) async fn declared(
        &self,
        method: &str,
        key: &str,
        options: &ProbeOptions,
    ) -> Option<ListRead> {
        let options = ProbeOptions {
            max_tools: usize::MAX,
            ..options.clone()
        };
        match self.list(method, key, &options).await {
            Ok(listing) => Some(ListRead {
                items: listing.items,
                truncated: listing.truncated,
            }),
            Err(ProbeError::Rpc { code: -32601, .. }) => {
                self.raw.record_not_found(method);
                Some(ListRead::default())
            }
            Err(error) => {
                self.raw.spoil();
                tracing::info!(url = %self.url, method, "declared list not read: {error}");
                None
            }
        }
    }

    /// Ends a classic session politely; the answer does not matter.
    pub(super) async fn close(&self) {
        if self.era == Era::Classic {
            let id = self.session_id.current();
            envelope::close_classic(self.wire, &self.url, &self.version, id.as_deref()).await;
        }
    }
}
