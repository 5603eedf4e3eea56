//! The 2024-11-05 HTTP+SSE transport: a GET event stream that stays open, whose first event
//! (`endpoint`) names the URL that takes the client's POSTs; every answer arrives on the stream
//! as an `event: message` and is matched to its request by id.
//!
//! The stream is read by whichever caller is waiting: it takes the reader lock, reads events
//! until its own answer arrives, and parks answers for other ids in an inbox. No task is
//! spawned, so dropping the session closes the GET stream.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use url::Url;

use super::error::ProbeError;
use super::exchange::{Body, decode_body};
use super::jsonrpc::{self, Message, RpcErrorObject};
use super::sse::{SseDecoder, SseEvent};
use crate::net::{CappedBody, Client, NetError};

/// The event that opens a legacy stream.
const ENDPOINT_EVENT: &str = "endpoint";

/// What a legacy session spent, shared with the probe so failures report it too.
#[derive(Debug, Default)]
pub struct Tally {
    requests: AtomicU32,
    bytes: AtomicU64,
}

impl Tally {
    /// Requests sent (the GET and every POST).
    pub fn requests_sent(&self) -> u32 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Body bytes read (the event stream and the POST answers).
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn add_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn add_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// How the GET that looks for a legacy server ended.
#[derive(Debug)]
pub enum Opened {
    /// The stream opened with an `endpoint` event: a legacy server.
    Legacy(Box<LegacySession>),
    /// Not a legacy server. `unsupported` is true when the answer proves the URL serves
    /// something else entirely (a 2xx that is not an event stream, a WebSocket upgrade demand);
    /// `why` says what was seen.
    NotLegacy {
        /// What the GET showed.
        why: String,
        /// True when the URL serves neither MCP transport.
        unsupported: bool,
    },
}

/// The pure rule: is this first event an endpoint announcement, and where may we POST?
pub fn endpoint_of(first: &SseEvent, stream_url: &Url) -> Result<Url, String> {
    if first.event != ENDPOINT_EVENT {
        return Err(format!(
            "the first event is {:?}, not {ENDPOINT_EVENT:?}",
            first.event
        ));
    }
    let endpoint = stream_url
        .join(first.data.trim())
        .map_err(|e| format!("the endpoint {:?} is not a URL: {e}", first.data))?;
    if endpoint.origin() != stream_url.origin() {
        return Err(format!(
            "the endpoint {endpoint} is on another origin than {stream_url}"
        ));
    }
    Ok(endpoint)
}

/// The event stream, decoded event by event. The body cap applies to each event (the stream
/// stays open and carries every answer of the session), not to the whole stream.
struct EventReader {
    body: CappedBody,
    decoder: SseDecoder,
    queued: VecDeque<SseEvent>,
    tally: Arc<Tally>,
    /// Bytes received since the last chunk that completed an event: an upper bound on the size
    /// of the event being read.
    pending: u64,
}

impl EventReader {
    /// The next event; `Ok(None)` when the stream ended.
    async fn next_event(&mut self) -> Result<Option<SseEvent>, NetError> {
        loop {
            if let Some(event) = self.queued.pop_front() {
                return Ok(Some(event));
            }
            match self.body.next().await {
                None => return Ok(None),
                Some(chunk) => {
                    let chunk = chunk?;
                    self.tally.add_bytes(chunk.len() as u64);
                    let events = self.decoder.feed(&chunk);
                    self.pending = if events.is_empty() {
                        self.pending + chunk.len() as u64
                    } else {
                        chunk.len() as u64
                    };
                    self.body.restart_count(self.pending);
                    self.queued.extend(events);
                }
            }
        }
    }
}

/// An open legacy session: the GET stream plus the endpoint to POST to.
pub struct LegacySession {
    client: Client,
    stream_url: Url,
    endpoint: Url,
    status: u16,
    reader: tokio::sync::Mutex<EventReader>,
    inbox: Mutex<HashMap<String, Result<Value, RpcErrorObject>>>,
    next_id: AtomicI64,
    tally: Arc<Tally>,
    timeout: Duration,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession")
            .field("stream_url", &self.stream_url)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// GETs `url` as an event stream and checks whether it opens with an `endpoint` event.
/// A 401/403 is an auth refusal; a network failure is returned as is.
pub async fn open(client: &Client, url: &Url, tally: Arc<Tally>) -> Result<Opened, ProbeError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    tally.add_request();
    let response = client.get_stream(url, headers).await?;
    let status = response.status;
    if matches!(status, 401 | 403) {
        return Err(ProbeError::AuthRequired {
            status,
            www_authenticate: response
                .header(reqwest::header::WWW_AUTHENTICATE.as_str())
                .map(str::to_string),
        });
    }
    let content_type = response.content_type();
    if !(200..300).contains(&status) {
        return Ok(Opened::NotLegacy {
            why: format!("GET answered HTTP {status}"),
            unsupported: status == 426,
        });
    }
    if content_type != "text/event-stream" {
        return Ok(Opened::NotLegacy {
            why: format!("GET answered {content_type:?}, not an event stream"),
            unsupported: true,
        });
    }
    let timeout = client.config().request_timeout;
    let stream_url = response.final_url.clone();
    let mut reader = EventReader {
        body: response.body,
        decoder: SseDecoder::new(),
        queued: VecDeque::new(),
        tally: tally.clone(),
        pending: 0,
    };
    let first = match tokio::time::timeout(timeout, reader.next_event()).await {
        Err(_) => {
            return Ok(Opened::NotLegacy {
                why: format!("no event on the GET stream within {timeout:?}"),
                unsupported: true,
            });
        }
        Ok(Err(error)) => return Err(error.into()),
        Ok(Ok(None)) => {
            return Ok(Opened::NotLegacy {
                why: "the GET stream ended without an event".into(),
                unsupported: true,
            });
        }
        Ok(Ok(Some(event))) => event,
    };
    let endpoint = match endpoint_of(&first, &stream_url) {
        Ok(endpoint) => endpoint,
        Err(why) if first.event == ENDPOINT_EVENT => {
            return Err(ProbeError::LegacySse(Box::new(
                ProbeError::TransportUnsupported(why),
            )));
        }
        Err(why) => {
            return Ok(Opened::NotLegacy {
                why,
                unsupported: true,
            });
        }
    };
    Ok(Opened::Legacy(Box::new(LegacySession {
        client: client.clone(),
        stream_url,
        endpoint,
        status,
        reader: tokio::sync::Mutex::new(reader),
        inbox: Mutex::new(HashMap::new()),
        next_id: AtomicI64::new(1),
        tally,
        timeout,
    })))
}

impl LegacySession {
    /// The URL of the event stream (after redirects).
    pub fn stream_url(&self) -> &Url {
        &self.stream_url
    }

    /// The URL the POSTs go to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// The HTTP status of the GET that opened the stream.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Sends a request and waits (up to the request timeout) for its answer on the stream.
    pub async fn call(&self, method: &str, params: Option<Value>) -> Result<Value, ProbeError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = jsonrpc::request(id, method, params);
        let id = Value::from(id);
        let response = self.post(body).await?;
        if !(200..300).contains(&response.status) {
            return Err(refusal(&response, &id));
        }
        // Tolerance: a server may answer in the POST body instead of on the stream.
        if let Body::Message(outcome) = decode_body(&response, &id) {
            return outcome.map_err(rpc_error);
        }
        let waited = tokio::time::timeout(self.timeout, self.wait_for(&id)).await;
        waited.map_err(|_| ProbeError::Net(NetError::Timeout(self.timeout)))?
    }

    /// Sends a notification; only its HTTP status matters.
    pub async fn notify(&self, method: &str) -> Result<(), ProbeError> {
        let response = self.post(jsonrpc::notification(method)).await?;
        if (200..300).contains(&response.status) {
            Ok(())
        } else {
            Err(refusal(&response, &Value::Null))
        }
    }

    async fn post(&self, body: Vec<u8>) -> Result<crate::net::HttpResponse, ProbeError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.tally.add_request();
        let response = self.client.post(&self.endpoint, headers, body).await?;
        self.tally.add_bytes(response.body.len() as u64);
        Ok(response)
    }

    /// Reads the stream until the answer to `id` is there.
    async fn wait_for(&self, id: &Value) -> Result<Value, ProbeError> {
        let key = id.to_string();
        loop {
            if let Some(outcome) = self.take(&key) {
                return outcome.map_err(rpc_error);
            }
            let mut reader = self.reader.lock().await;
            // Another caller may have parked our answer while we waited for the lock.
            if let Some(outcome) = self.take(&key) {
                return outcome.map_err(rpc_error);
            }
            let Some(event) = reader.next_event().await? else {
                return Err(ProbeError::NotJson(
                    "the event stream ended before the answer arrived".into(),
                ));
            };
            self.park(&event);
        }
    }

    fn take(&self, key: &str) -> Option<Result<Value, RpcErrorObject>> {
        self.inbox
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(key)
    }

    /// Keeps a response from the stream for whoever asked for it; other messages (server
    /// notifications and requests) are ignored.
    fn park(&self, event: &SseEvent) {
        if let Some((key, outcome)) = answer_of(event) {
            self.inbox
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(key, outcome);
        }
    }
}

/// The pure rule of the stream reader: the JSON-RPC response an event carries, keyed by its id
/// as JSON text; `None` for other events (notifications, server requests, non-JSON data).
pub fn answer_of(event: &SseEvent) -> Option<(String, Result<Value, RpcErrorObject>)> {
    if event.event != "message" {
        return None;
    }
    let value = serde_json::from_str::<Value>(&event.data).ok()?;
    match jsonrpc::classify(value)? {
        Message::Response { id, outcome } => Some((id.to_string(), outcome)),
        _ => None,
    }
}

fn rpc_error(error: RpcErrorObject) -> ProbeError {
    ProbeError::Rpc {
        code: error.code,
        message: error.message,
    }
}

/// The error a non-2xx answer to a POST stands for.
fn refusal(response: &crate::net::HttpResponse, id: &Value) -> ProbeError {
    if matches!(response.status, 401 | 403) {
        return ProbeError::AuthRequired {
            status: response.status,
            www_authenticate: response
                .header(reqwest::header::WWW_AUTHENTICATE.as_str())
                .map(str::to_string),
        };
    }
    match decode_body(response, id) {
        Body::Message(Err(error)) if response.status < 500 => rpc_error(error),
        _ => ProbeError::Http {
            status: response.status,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent {
            event: name.into(),
            data: data.into(),
            id: None,
        }
    }

    #[test]
    fn reads_the_endpoint_event() {
        let stream = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        let table: Vec<(SseEvent, Result<&str, &str>)> = vec![
            (
                event("endpoint", "/message?sessionId=abc"),
                Ok("http://127.0.0.1:3001/message?sessionId=abc"),
            ),
            (
                event("endpoint", " /messages/?session_id=f00\n"),
                Ok("http://127.0.0.1:3001/messages/?session_id=f00"),
            ),
            (
                event("endpoint", "http://127.0.0.1:3001/post"),
                Ok("http://127.0.0.1:3001/post"),
            ),
            (
                event("endpoint", "http://127.0.0.1:9999/post"),
                Err("another origin"),
            ),
            (
                event("endpoint", "https://127.0.0.1:3001/post"),
                Err("another origin"),
            ),
            (
                event("endpoint", "http://169.254.169.254/latest"),
                Err("another origin"),
            ),
            (event("message", "{}"), Err("not \"endpoint\"")),
        ];
        for (first, expected) in table {
            let got = endpoint_of(&first, &stream);
            match (got, expected) {
                (Ok(url), Ok(want)) => assert_eq!(url.as_str(), want),
                (Err(why), Err(want)) => assert!(why.contains(want), "{why}"),
                (got, want) => panic!("{first:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
