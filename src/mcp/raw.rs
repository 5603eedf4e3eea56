//! The raw-answer digest: one SHA-256 over the exact result bytes of every answer a surface is
//! built from, so a later run can tell that a server answered byte for byte as before without
//! building, canonicalizing or assessing its surface again (issue 39's unchanged-bytes fast
//! path, `docs/performance.md`).
//!
//! The digest is strict on purpose. It is made of:
//! - [`FORMAT`], then what decides how answers become a surface: the era, the negotiated
//!   version, the URL that answered and the listing limits ([`Facts`]);
//! - the handshake result (`server/discover` or `initialize`), as parsed and written again
//!   (small; carries the server info, instructions and capabilities);
//! - every page of every list method, in method and page order, as the exact bytes of its
//!   JSON-RPC `result` member.
//!
//! A page whose result bytes cannot be taken (a batch, a resumed event stream, the legacy
//! transport) or any list call that failed makes the whole digest absent, so such a server
//! always takes the full path. Equal digests therefore mean equal answers; a different digest
//! only costs the full path.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::mcp::{Era, sse};
use crate::net::HttpResponse;
use crate::surface::Sha256Digest;

/// Names the layout of the digested bytes; changing the layout changes it, so digests of an
/// older build never match. Also changed when the surface built from the same answers changes,
/// so every server takes the full path once after the upgrade and its record is written
/// anew: 2 is 1 for builds that keep a digest per item of a summarized list (issue 46), so a
/// record without them is replaced at the first run, not at the server's next change (whose
/// items could then not be named).
pub const FORMAT: &str = "mcp-surface-ledger raw answers 2";

/// The JSON-RPC envelope with its `result` left as the bytes it was served as.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Value,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// The digest of the exact bytes of the `result` member of `text`, a single JSON-RPC response
/// to request `id`; `None` for anything else (a batch, an error, another id, not JSON).
pub fn result_digest(text: &[u8], id: &Value) -> Option<Sha256Digest> {
    let envelope: Envelope<'_> = serde_json::from_slice(text).ok()?;
    if envelope.id != *id {
        return None;
    }
    envelope
        .result
        .map(|result| Sha256Digest::of(result.get().as_bytes()))
}

/// The digest of the exact `result` bytes of the answer to request `id` in an HTTP response:
/// the whole body, or the one event of an event stream that answers it (none when several
/// do: which one a parser keeps must not matter to the digest).
pub fn answer_digest(response: &HttpResponse, id: &Value) -> Option<Sha256Digest> {
    if response.content_type() != "text/event-stream" {
        return result_digest(&response.body, id);
    }
    let events = sse::decode(&response.body);
    let mut answers = events
        .iter()
        .filter_map(|event| result_digest(event.data.as_bytes(), id));
    match (answers.next(), answers.next()) {
        (Some(digest), None) => Some(digest),
        _ => None,
    }
}

/// What decides how the same answers become a surface, digested before them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts<'a> {
    /// The era that answered.
    pub era: Era,
    /// The negotiated protocol version.
    pub version: &'a str,
    /// The URL that answered the handshake.
    pub url: &'a str,
    /// Items kept per list ([`super::ProbeOptions::max_tools`]).
    pub max_tools: usize,
    /// Pages read per list ([`super::ProbeOptions::max_pages`]).
    pub max_pages: usize,
    /// Whether prompts, resources and templates were read.
    pub declared_lists: bool,
}

/// The result digests of a probe's list pages, collected while the list calls run (several at
/// once, hence the lock).
#[derive(Debug, Default)]
pub struct RawAnswers {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    pages: BTreeMap<(String, usize), Sha256Digest>,
    incomplete: bool,
}

impl RawAnswers {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records page `page` of `method`; a page without a digest spoils the whole digest.
    pub fn record(&self, method: &str, page: usize, digest: Option<Sha256Digest>) {
        let mut state = self.state();
        match digest {
            Some(digest) => {
                state.pages.insert((method.to_string(), page), digest);
            }
            None => state.incomplete = true,
        }
    }

    /// `method` answered "method not found", which a declared list reads as empty.
    pub fn record_not_found(&self, method: &str) {
        let marker = Sha256Digest::of(b"method not found");
        self.state()
            .pages
            .insert((method.to_string(), usize::MAX), marker);
    }

    /// A list call failed (or its result was not usable): no digest for this probe.
    pub fn spoil(&self) {
        self.state().incomplete = true;
    }

    /// Takes over the pages `other` recorded (a list read early, before the handshake
    /// confirmed it may be used).
    pub fn absorb(&self, other: RawAnswers) {
        let other = other
            .state
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut state = self.state();
        state.incomplete |= other.incomplete;
        state.pages.extend(other.pages);
    }

    /// The digest of everything recorded, as 64 hex characters; `None` when a page had none.
    pub fn digest(&self, facts: &Facts<'_>, handshake: &Value) -> Option<String> {
        let state = self.state();
        if state.incomplete {
            return None;
        }
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_be_bytes());
            hasher.update(bytes);
        };
        field(FORMAT.as_bytes());
        field(format!("{:?}", facts.era).as_bytes());
        field(facts.version.as_bytes());
        field(facts.url.as_bytes());
        field(&(facts.max_tools as u64).to_be_bytes());
        field(&(facts.max_pages as u64).to_be_bytes());
        field(&[u8::from(facts.declared_lists)]);
        field(&serde_json::to_vec(handshake).ok()?);
        for ((method, page), digest) in &state.pages {
            field(method.as_bytes());
            field(&(*page as u64).to_be_bytes());
            field(digest.as_bytes());
        }
        Some(hex::encode(hasher.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts() -> Facts<'static> {
        Facts {
            era: Era::Modern,
            version: "2026-07-28",
            url: "http://127.0.0.1:1/mcp",
            max_tools: 1000,
            max_pages: 100,
            declared_lists: true,
        }
    }

    fn digest_of(pages: &[(&str, usize, &str)], facts: &Facts<'_>) -> Option<String> {
        let raw = RawAnswers::default();
        for (method, page, result) in pages {
            let text = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
            raw.record(method, *page, result_digest(text.as_bytes(), &json!(7)));
        }
        raw.digest(facts, &json!({"serverInfo": {"name": "a"}}))
    }

    #[test]
    fn result_digest_takes_the_exact_result_bytes_of_our_answer() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#,
                Some(r#"{"tools":[]}"#),
            ),
            (
                r#"{"id":7,"result":{ "tools" : [] },"jsonrpc":"2.0"}"#,
                Some(r#"{ "tools" : [] }"#),
            ),
            (r#"{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}"#, None),
            (
                r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}"#,
                None,
            ),
            (r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#, None),
            ("not json", None),
        ];
        for (text, result) in cases {
            let expected = result.map(|r| Sha256Digest::of(r.as_bytes()));
            assert_eq!(
                result_digest(text.as_bytes(), &json!(7)),
                expected,
                "{text}"
            );
        }
    }

    fn response(content_type: &str, body: &str) -> HttpResponse {
        let mut headers = reqwest::header::HeaderMap::new();
        let value = reqwest::header::HeaderValue::from_str(content_type).unwrap();
        headers.insert(reqwest::header::CONTENT_TYPE, value);
        HttpResponse {
            status: 200,
            headers,
            body: bytes::Bytes::from(body.to_string()),
            final_url: url::Url::parse("http://127.0.0.1/mcp").unwrap(),
        }
    }

    #[test]
    fn answer_digest_takes_the_one_answer_of_a_body_or_stream() {
        let result = Some(Sha256Digest::of(br#"{"tools":[]}"#));
        let ours = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#;
        let other = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[1]}}"#;
        let cases = [
            ("JSON body", response("application/json", ours), result),
            (
                "stream with a priming event and a notification",
                response(
                    "text/event-stream",
                    &format!(
                        "id: 1\ndata: \n\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"n\"}}\n\ndata: {ours}\n\n"
                    ),
                ),
                result,
            ),
            (
                "stream answering twice",
                response(
                    "text/event-stream",
                    &format!("data: {ours}\n\ndata: {other}\n\n"),
                ),
                None,
            ),
            (
                "batch",
                response("application/json", &format!("[{ours}]")),
                None,
            ),
        ];
        for (what, response, expected) in cases {
            assert_eq!(answer_digest(&response, &json!(7)), expected, "{what}");
        }
    }

    #[test]
    fn any_byte_page_or_fact_moves_the_digest() {
        let base = [
            ("tools/list", 0, r#"{"tools":[{"name":"a"}]}"#),
            ("tools/list", 1, "{}"),
        ];
        let same = digest_of(&base, &facts());
        assert!(same.is_some());
        assert_eq!(digest_of(&base, &facts()), same, "deterministic");
        let variants: Vec<Vec<(&str, usize, &str)>> = vec![
            vec![base[0], ("tools/list", 1, "{ }")],
            vec![("tools/list", 0, r#"{"tools":[{"name":"b"}]}"#), base[1]],
            vec![base[0]],
            vec![base[0], base[1], ("prompts/list", 0, r#"{"prompts":[]}"#)],
            vec![base[0], ("prompts/list", 1, "{}")],
        ];
        for pages in &variants {
            assert_ne!(digest_of(pages, &facts()), same, "{pages:?}");
        }
        let other_facts = [
            Facts {
                era: Era::Classic,
                ..facts()
            },
            Facts {
                version: "2025-11-25",
                ..facts()
            },
            Facts {
                url: "http://127.0.0.1:2/mcp",
                ..facts()
            },
            Facts {
                max_tools: 999,
                ..facts()
            },
            Facts {
                max_pages: 99,
                ..facts()
            },
            Facts {
                declared_lists: false,
                ..facts()
            },
        ];
        for facts in &other_facts {
            assert_ne!(digest_of(&base, facts), same, "{facts:?}");
        }
    }

    #[test]
    fn the_handshake_result_is_part_of_the_digest() {
        let raw = RawAnswers::default();
        raw.record("tools/list", 0, Some(Sha256Digest::of(b"{}")));
        let a = raw.digest(&facts(), &json!({"serverInfo": {"version": "1"}}));
        let b = raw.digest(&facts(), &json!({"serverInfo": {"version": "2"}}));
        assert!(a.is_some() && a != b);
    }

    #[test]
    fn a_page_without_bytes_or_a_failed_call_leaves_no_digest() {
        let raw = RawAnswers::default();
        raw.record("tools/list", 0, None);
        assert_eq!(raw.digest(&facts(), &json!({})), None);
        let raw = RawAnswers::default();
        raw.record("tools/list", 0, Some(Sha256Digest::of(b"{}")));
        raw.spoil();
        assert_eq!(raw.digest(&facts(), &json!({})), None);
        let early = RawAnswers::default();
        early.spoil();
        let raw = RawAnswers::default();
        raw.absorb(early);
        assert_eq!(raw.digest(&facts(), &json!({})), None);
    }
}
