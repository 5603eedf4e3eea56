//! Entry points for fuzzing the parsers that read hostile input: one function per fuzz target,
//! each taking arbitrary bytes.
//!
//! The cargo-fuzz targets under `fuzz/` call these functions, and `tests/fuzz_replay.rs` runs
//! every committed corpus file through the same functions on the stable toolchain, so CI checks
//! the corpus without a fuzzer. Each function drives the real parser the way the probe or the
//! run does, then checks a few invariants that must hold for any input; a broken invariant is
//! returned as a [`Violation`] (the fuzz target turns it into a crash). A panic, a hang or
//! unbounded memory inside the parser is caught by the fuzzer itself.
//!
//! `docs/fuzzing.md` lists the targets, their seeds and how to run them.

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use serde_json::{Value, json};
use url::Url;

use crate::diff::grade::{SchemaRole, grade_schema_change};
use crate::input::Input;
use crate::mcp::auth::{self, AuthChallenge};
use crate::mcp::exchange::{self, Body};
use crate::mcp::legacy_sse;
use crate::mcp::sse::{self, SseDecoder, SseEvent};
use crate::net::HttpResponse;
use crate::risk::{self, tokens::Tokens};
use crate::surface::canon;

/// An invariant that did not hold for one input: a bug in the parser under test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {what}")]
pub struct Violation {
    /// The fuzz target that found it.
    pub target: &'static str,
    /// What went wrong.
    pub what: String,
}

/// The names of all targets, in the order of [`run`]; they are also the corpus directories.
pub const TARGETS: [&str; 9] = [
    "sse",
    "legacy_sse",
    "exchange",
    "canon",
    "dupkeys",
    "grade",
    "risk",
    "www_authenticate",
    "input",
];

/// Runs the target called `name` on `data`; `None` when no target has that name.
pub fn run(name: &str, data: &[u8]) -> Option<Result<(), Violation>> {
    let entry: fn(&[u8]) -> Result<(), Violation> = match name {
        "sse" => sse_decoder,
        "legacy_sse" => legacy_sse_reader,
        "exchange" => exchange_response,
        "canon" => canonicalizer,
        "dupkeys" => duplicate_keys,
        "grade" => schema_grader,
        "risk" => risk_scanner,
        "www_authenticate" => www_authenticate,
        "input" => input,
        _ => return None,
    };
    Some(entry(data))
}

fn check(
    target: &'static str,
    holds: bool,
    what: impl FnOnce() -> String,
) -> Result<(), Violation> {
    if holds {
        Ok(())
    } else {
        Err(Violation {
            target,
            what: what(),
        })
    }
}

/// The first byte picks a chunk size (1 to 8) for the rest, which is the stream.
fn chunking(data: &[u8]) -> (usize, &[u8]) {
    match data.split_first() {
        Some((first, rest)) => (usize::from(first % 8) + 1, rest),
        None => (1, data),
    }
}

/// Feeds `stream` to a fresh decoder in chunks of `size` bytes.
fn decode_chunked(stream: &[u8], size: usize) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let events = stream
        .chunks(size)
        .flat_map(|chunk| decoder.feed(chunk))
        .collect();
    decoder.finish();
    events
}

/// The SSE decoder: the events must not depend on how the stream was cut into chunks.
pub fn sse_decoder(data: &[u8]) -> Result<(), Violation> {
    let (size, stream) = chunking(data);
    let whole = sse::decode(stream);
    let chunked = decode_chunked(stream, size);
    check("sse", whole == chunked, || {
        format!("chunks of {size} gave {chunked:?}, the whole stream {whole:?}")
    })?;
    check("sse", whole.iter().all(|e| !e.event.is_empty()), || {
        "an event without a type".into()
    })
}

/// The stream URL a legacy session is opened on in [`legacy_sse_reader`].
const LEGACY_STREAM_URL: &str = "http://127.0.0.1:8931/sse";

/// The legacy HTTP+SSE reader: the first event must name an endpoint on the stream's origin,
/// and every later event is matched to a request the way the session does it.
pub fn legacy_sse_reader(data: &[u8]) -> Result<(), Violation> {
    let (size, stream) = chunking(data);
    let events = decode_chunked(stream, size);
    let Some((first, rest)) = events.split_first() else {
        return Ok(());
    };
    let stream_url = fixed_url("legacy_sse", LEGACY_STREAM_URL)?;
    if let Ok(endpoint) = legacy_sse::endpoint_of(first, &stream_url) {
        check(
            "legacy_sse",
            endpoint.origin() == stream_url.origin(),
            || format!("endpoint {endpoint} accepted on another origin"),
        )?;
    }
    for event in rest {
        if let Some((key, _)) = legacy_sse::answer_of(event) {
            check("legacy_sse", event.event == "message", || {
                format!("an answer {key} taken from a {:?} event", event.event)
            })?;
        }
    }
    Ok(())
}

const STATUSES: [u16; 10] = [200, 202, 204, 400, 401, 403, 404, 405, 500, 503];
const CONTENT_TYPES: [&str; 8] = [
    "application/json",
    "text/event-stream",
    "",
    "text/event-stream; charset=utf-8",
    "Application/JSON; charset=utf-8",
    "TEXT/EVENT-STREAM",
    "text/html",
    "application/json-seq",
];

/// A response built from fuzz bytes: byte 0 picks the status, byte 1 the content type, byte 2
/// the request id; the rest is the body.
fn response_of(data: &[u8], final_url: Url) -> (HttpResponse, Value) {
    let pick = |i: usize| data.get(i).copied().map_or(0, usize::from);
    let mut headers = HeaderMap::new();
    let content_type = CONTENT_TYPES[pick(1) % CONTENT_TYPES.len()];
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(CONTENT_TYPE, value);
    }
    headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    let id = match pick(2) % 4 {
        0 => json!(1),
        1 => json!("1"),
        2 => Value::Null,
        _ => json!(9_007_199_254_740_993_u64),
    };
    let body = Bytes::copy_from_slice(data.get(3..).unwrap_or_default());
    let response = HttpResponse {
        status: STATUSES[pick(0) % STATUSES.len()],
        headers,
        body,
        final_url,
    };
    (response, id)
}

/// Parses one of the fixed URLs of this module.
fn fixed_url(target: &'static str, text: &str) -> Result<Url, Violation> {
    Url::parse(text).map_err(|e| Violation {
        target,
        what: format!("{text}: {e}"),
    })
}

/// The JSON-RPC response parser of one exchange (status, content type and body bytes), and the
/// reply rules built on it.
pub fn exchange_response(data: &[u8]) -> Result<(), Violation> {
    let (response, id) = response_of(data, fixed_url("exchange", LEGACY_STREAM_URL)?);
    let body = exchange::decode_body(&response, &id);
    let keys = exchange::repeated_keys(&response);
    check("exchange", keys.iter().all(|k| k.starts_with('/')), || {
        format!("repeated-key pointers without a leading slash: {keys:?}")
    })?;
    let empty = matches!(body, Body::Empty);
    let reply = exchange::reply(&response, body);
    let status = reply.status;
    let outcome = reply.into_result();
    check(
        "exchange",
        !(outcome.is_ok() && (empty || !(200..300).contains(&status))),
        || format!("HTTP {status} (empty body: {empty}) read as a result"),
    )
}

/// The RFC 8785 canonicalizer: its output is JSON that canonicalizes to itself.
pub fn canonicalizer(data: &[u8]) -> Result<(), Violation> {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return Ok(());
    };
    let Ok(first) = canon::canonicalize(&value) else {
        return Ok(());
    };
    let reparsed = serde_json::from_slice::<Value>(&first).map_err(|e| Violation {
        target: "canon",
        what: format!("canonical output is not JSON ({e}): {}", lossy(&first)),
    })?;
    let second = canon::canonicalize(&reparsed).map_err(|e| Violation {
        target: "canon",
        what: format!("canonical output does not canonicalize: {e}"),
    })?;
    check("canon", first == second, || {
        format!("not idempotent: {} then {}", lossy(&first), lossy(&second))
    })
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The duplicate-key scanner: it reports only for text that is JSON, with pointers.
pub fn duplicate_keys(data: &[u8]) -> Result<(), Violation> {
    let text = String::from_utf8_lossy(data);
    let found = risk::duplicate_keys(&text);
    if found.is_empty() {
        return Ok(());
    }
    check(
        "dupkeys",
        serde_json::from_str::<Value>(&text).is_ok(),
        || format!("repeated keys {found:?} reported in text that is not JSON"),
    )?;
    check("dupkeys", found.iter().all(|p| p.starts_with('/')), || {
        format!("pointers without a leading slash: {found:?}")
    })?;
    let findings = risk::duplicate_key_findings(&text);
    check("dupkeys", findings.len() == found.len(), || {
        "findings and pointers disagree".into()
    })
}

/// Parses one side of a schema pair; blank or non-JSON bytes mean "no schema".
fn schema_side(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// The schema grader on a pair of schemas, split at the first NUL byte (old, then new), in both
/// roles and both directions. An unchanged schema must grade as a notation change.
pub fn schema_grader(data: &[u8]) -> Result<(), Violation> {
    let (old, new) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let (old, new) = (schema_side(old), schema_side(new));
    for role in [SchemaRole::Input, SchemaRole::Output] {
        grade_schema_change(old.as_ref(), new.as_ref(), role);
        grade_schema_change(new.as_ref(), old.as_ref(), role);
        let unchanged = grade_schema_change(old.as_ref(), old.as_ref(), role);
        check("grade", unchanged.details.is_empty(), || {
            format!("an unchanged schema has findings {:?}", unchanged.details)
        })?;
    }
    Ok(())
}

/// The risk scanner on arbitrary text (invalid UTF-8 is replaced, as a lossy read would), as a
/// tool's description, a property name, server instructions, and as a whole tool when the
/// bytes are JSON.
pub fn risk_scanner(data: &[u8]) -> Result<(), Violation> {
    let text = String::from_utf8_lossy(data);
    let tokens = Tokens::of(&text);
    check(
        "risk",
        (0..tokens.len()).all(|i| tokens.start(i) <= text.len()),
        || "a token starts past the end of the text".into(),
    )?;
    risk::scan_text("/description", &text);
    risk::scan_server_instructions(&text);
    let tool = json!({
        "name": text,
        "description": text,
        "inputSchema": {
            "type": "object",
            "properties": { text.as_ref(): { "type": "string", "description": text } },
        },
        "annotations": { "title": text },
    });
    assess("risk", &tool)?;
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        assess("risk", &value)?;
        risk::scan_definition(&value);
    }
    Ok(())
}

/// Assesses one tool and checks that every finding with a marker raised the risk.
fn assess(target: &'static str, tool: &Value) -> Result<(), Violation> {
    let assessment = risk::assess_tool(tool);
    let marked = assessment.findings.iter().any(risk::Finding::is_marker);
    check(
        target,
        !marked || assessment.risk == risk::Risk::High,
        || format!("a marker left the risk at {:?}", assessment.risk),
    )
}

/// The endpoint the metadata URLs of [`www_authenticate`] are derived from.
const AUTH_ENDPOINT: &str = "https://mcp.example.test/v1/mcp?x=1";

/// `WWW-Authenticate` parsing, the metadata URLs derived from it, and the RFC 9728 metadata
/// document parser (the same bytes read as a document).
pub fn www_authenticate(data: &[u8]) -> Result<(), Violation> {
    let header = String::from_utf8_lossy(data);
    auth::parse_challenges(&header);
    let challenge = AuthChallenge::from_header(Some(&header));
    let endpoint = fixed_url("www_authenticate", AUTH_ENDPOINT)?;
    let candidates = auth::metadata_candidates(&endpoint, &challenge);
    check(
        "www_authenticate",
        candidates.len() <= 2
            && candidates
                .iter()
                .all(|u| matches!(u.scheme(), "http" | "https")),
        || format!("metadata candidates {candidates:?}"),
    )?;
    if let Ok(metadata) = auth::parse_metadata(data) {
        auth::names_this_resource(&metadata, &endpoint);
    }
    Ok(())
}

/// The INPUT parser: bad input is refused with at least one named field.
pub fn input(data: &[u8]) -> Result<(), Violation> {
    match Input::from_bytes(data) {
        Ok(parsed) => check("input", !parsed.ledger_name.is_empty(), || {
            "an accepted input without a ledger name".into()
        }),
        Err(error) => check("input", !error.fields().is_empty(), || {
            format!("a refusal naming no field: {error}")
        }),
    }
}
