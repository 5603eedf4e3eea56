//! One JSON-RPC exchange over HTTP: send a POST, read the answer whether it is plain JSON or an
//! event stream, and pick out the response to our request id.
//!
//! This layer knows nothing about eras: the caller passes the headers. It also counts what the
//! probe spends (requests, body bytes, last status) in [`Stats`], which is shared by concurrent
//! list calls and therefore uses atomics.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use url::Url;

use super::error::ProbeError;
use super::jsonrpc::{self, Message, RpcErrorObject};
use super::{raw, sse};
use crate::net::{Client, HttpResponse, NetError};
use crate::risk::duplicate_keys;
use crate::surface::Sha256Digest;

/// The header that carries the session id of a classic server.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header that carries the protocol version (classic after `initialize`, modern always).
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The modern header that repeats the JSON-RPC method.
pub const METHOD_HEADER: &str = "mcp-method";
/// The header a reconnecting event-stream reader sends (SEP-1699 polling).
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";
/// GET reconnects after a response stream that closed before the response (SEP-1699).
pub const MAX_RESUMES: u32 = 3;
/// The wait before a reconnect when the stream gave no `retry:` field.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest `retry:` wait honoured; the per-server deadline bounds the whole probe anyway.
const MAX_RETRY: Duration = Duration::from_secs(10);

/// The decoded body of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// The JSON-RPC response to our request (or a transport-level error with another id).
    Message(Result<Value, RpcErrorObject>),
    /// No body at all (as for an accepted notification).
    Empty,
    /// A body that holds no usable JSON-RPC response; says why.
    Undecodable(String),
}

/// An HTTP answer to one JSON-RPC message.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub www_authenticate: Option<String>,
    /// The `Mcp-Session-Id` header, if any.
    pub session_id: Option<String>,
    /// The URL that answered, after redirects.
    pub final_url: Option<Url>,
    /// The decoded body.
    pub body: Body,
    /// JSON pointers of object members the answer repeated (`{"a":1,"a":2}`). JSON parsers keep
    /// one copy silently and clients disagree on which, so a repeated key can hide text. Only
    /// looked for in `tools/list` answers.
    pub repeated_keys: Vec<String>,
    /// The digest of the exact bytes of the response's `result` ([`raw::answer_digest`]); only
    /// taken for list calls, and never for an answer read from a reconnected stream.
    pub result_digest: Option<Sha256Digest>,
}

impl Reply {
    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The auth failure this reply stands for, when its status is 401 or 403.
    pub fn auth_error(&self) -> Option<ProbeError> {
        matches!(self.status, 401 | 403).then(|| ProbeError::AuthRequired {
            status: self.status,
            www_authenticate: self.www_authenticate.clone(),
        })
    }

    /// The result of the request, or the error this reply stands for.
    pub fn into_result(self) -> Result<Value, ProbeError> {
        if let Some(error) = self.auth_error() {
            return Err(error);
        }
        if self.status >= 500 {
            return Err(ProbeError::Http {
                status: self.status,
            });
        }
        let success = self.is_success();
        match self.body {
            Body::Message(Err(error)) => Err(ProbeError::Rpc {
                code: error.code,
                message: error.message,
            }),
            Body::Message(Ok(result)) if success => Ok(result),
            Body::Empty if success => Err(ProbeError::NotJson("empty body".into())),
            Body::Undecodable(why) if success => Err(ProbeError::NotJson(why)),
            _ => Err(ProbeError::Http {
                status: self.status,
            }),
        }
    }

    /// A reply with only a status and a body, for unit tests of the rules built on replies.
    #[cfg(test)]
    pub fn for_test(status: u16, body: Body) -> Reply {
        Reply {
            status,
            www_authenticate: None,
            session_id: None,
            final_url: None,
            body,
            repeated_keys: Vec::new(),
            result_digest: None,
        }
    }
}

/// What one probe spent, shared by all its requests.
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicU32,
    bytes: AtomicU64,
    last: Mutex<Option<(u16, Url)>>,
}

impl Stats {
    /// HTTP requests sent so far.
    pub fn requests_sent(&self) -> u32 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Response body bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Status and URL of the last response received.
    pub fn last_response(&self) -> Option<(u16, Url)> {
        self.last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn record(&self, response: &HttpResponse) {
        self.record_parts(
            response.status,
            &response.final_url,
            response.body.len() as u64,
        );
    }

    fn record_parts(&self, status: u16, url: &Url, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        *self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some((status, url.clone()));
    }
}

/// Sends JSON-RPC messages to one server through the shared HTTP client.
#[derive(Debug)]
pub struct Wire<'a> {
    client: &'a Client,
    next_id: AtomicI64,
    stats: Stats,
}

impl<'a> Wire<'a> {
    /// A wire over `client` with fresh ids and counters.
    pub fn new(client: &'a Client) -> Self {
        Wire {
            client,
            next_id: AtomicI64::new(1),
            stats: Stats::default(),
        }
    }

    /// What this wire has spent so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// POSTs a request with a fresh id and decodes the answer.
    pub async fn request(
        &self,
        url: &Url,
        headers: HeaderMap,
        method: &str,
        params: Option<Value>,
    ) -> Result<Reply, NetError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = jsonrpc::request(id, method, params);
        let response = self.send_post(url, headers.clone(), body).await?;
        let mut decoded = decode_body(&response, &Value::from(id));
        let mut resumed = false;
        if let Some(point) = resume_point(&response, &decoded)
            && let Some(found) = self.resume(headers, point, &Value::from(id)).await?
        {
            decoded = found;
            resumed = true;
        }
        let mut answer = reply(&response, decoded);
        if method == "tools/list" {
            answer.repeated_keys = repeated_keys(&response);
        }
        if method.ends_with("/list") && !resumed {
            answer.result_digest = raw::answer_digest(&response, &Value::from(id));
        }
        Ok(answer)
    }

    /// POSTs a notification; the answer's body is not decoded.
    pub async fn notify(
        &self,
        url: &Url,
        headers: HeaderMap,
        method: &str,
    ) -> Result<Reply, NetError> {
        let response = self
            .send_post(url, headers, jsonrpc::notification(method))
            .await?;
        Ok(reply(&response, Body::Empty))
    }

    /// Sends a DELETE (ends a classic session); the answer is returned undecoded.
    pub async fn delete(&self, url: &Url, headers: HeaderMap) -> Result<Reply, NetError> {
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let response = self.client.delete(url, headers).await?;
        self.stats.record(&response);
        Ok(reply(&response, Body::Empty))
    }

    /// SEP-1699 polling (2025-11-25): the server closed the response stream after an event id
    /// and before the response. Wait the stream's `retry:` (capped), then GET the endpoint with
    /// `Last-Event-ID` and read that stream until our response; at most [`MAX_RESUMES`] times.
    /// `None` when no reconnect produced it (the caller keeps the first answer).
    async fn resume(
        &self,
        mut headers: HeaderMap,
        mut point: ResumePoint,
        id: &Value,
    ) -> Result<Option<Body>, NetError> {
        headers.remove(CONTENT_TYPE);
        headers.remove(HeaderName::from_static(METHOD_HEADER));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        for _ in 0..MAX_RESUMES {
            tokio::time::sleep(point.wait()).await;
            set_header(&mut headers, LAST_EVENT_ID_HEADER, &point.last_id);
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let stream = self.client.get_stream(&point.url, headers.clone()).await?;
            let (status, url) = (stream.status, stream.final_url.clone());
            if !(200..300).contains(&status) || stream.content_type() != "text/event-stream" {
                self.stats.record_parts(status, &url, 0);
                return Ok(None);
            }
            let timeout = self.client.config().request_timeout;
            let read = tokio::time::timeout(timeout, read_stream(stream, id, &mut point)).await;
            let (found, bytes) = read.map_err(|_| NetError::Timeout(timeout))??;
            self.stats.record_parts(status, &url, bytes);
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    async fn send_post(
        &self,
        url: &Url,
        mut headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<HttpResponse, NetError> {
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let response = self.client.post(url, headers, body).await?;
        self.stats.record(&response);
        Ok(response)
    }
}

/// Where and how to reconnect to an event stream that ended early.
#[derive(Debug, Clone, PartialEq)]
struct ResumePoint {
    url: Url,
    last_id: String,
    retry_ms: Option<u64>,
}

impl ResumePoint {
    fn wait(&self) -> Duration {
        self.retry_ms
            .map_or(DEFAULT_RETRY, Duration::from_millis)
            .min(MAX_RETRY)
    }
}

/// A 2xx event stream that ended without our response after setting an event id can be
/// resumed by GET (SEP-1699); anything else cannot.
fn resume_point(response: &HttpResponse, decoded: &Body) -> Option<ResumePoint> {
    let resumable = (200..300).contains(&response.status)
        && response.content_type() == "text/event-stream"
        && matches!(decoded, Body::Undecodable(_));
    if !resumable {
        return None;
    }
    let mut decoder = sse::SseDecoder::new();
    decoder.feed(&response.body);
    Some(ResumePoint {
        url: response.final_url.clone(),
        last_id: decoder.last_event_id()?.to_string(),
        retry_ms: decoder.retry_ms(),
    })
}

/// Reads a reconnected event stream until our response arrives (the stream may stay open after
/// it) or the stream ends; moves the resume point to the stream's last id and `retry:`.
/// Returns the response, if found, and the bytes read.
async fn read_stream(
    mut stream: crate::net::StreamingResponse,
    id: &Value,
    point: &mut ResumePoint,
) -> Result<(Option<Body>, u64), NetError> {
    let mut decoder = sse::SseDecoder::new();
    let mut candidates = Candidates::default();
    while let Some(chunk) = stream.body.next().await {
        for event in decoder.feed(&chunk?) {
            if event.data.is_empty() || event.event != "message" {
                continue;
            }
            match serde_json::from_str::<Value>(&event.data) {
                Ok(value) => candidates.offer(value, id),
                Err(_) => candidates.saw_garbage = true,
            }
        }
        if let Some(last_id) = decoder.last_event_id() {
            point.last_id = last_id.to_string();
        }
        point.retry_ms = decoder.retry_ms().or(point.retry_ms);
        if candidates.exact.is_some() {
            break;
        }
    }
    let found = match (candidates.exact, candidates.stray_error) {
        (Some(outcome), _) => Some(Body::Message(outcome)),
        (None, Some(error)) => Some(Body::Message(Err(error))),
        (None, None) => None,
    };
    Ok((found, stream.body.received()))
}

/// Adds a header when its value is a legal header value; a server-chosen value that is not
/// (a broken session id) is left out rather than failing the probe here.
pub fn set_header(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

/// The reply to one request: the response's status and headers with its decoded `body`.
pub fn reply(response: &HttpResponse, body: Body) -> Reply {
    Reply {
        status: response.status,
        www_authenticate: response
            .header(reqwest::header::WWW_AUTHENTICATE.as_str())
            .map(str::to_string),
        session_id: response.header(SESSION_HEADER).map(str::to_string),
        final_url: Some(response.final_url.clone()),
        body,
        repeated_keys: Vec::new(),
        result_digest: None,
    }
}

/// Pointers of repeated object members in the JSON texts of a response (the whole body, or
/// each event of an event stream).
pub fn repeated_keys(response: &HttpResponse) -> Vec<String> {
    if response.content_type() == "text/event-stream" {
        sse::decode(&response.body)
            .iter()
            .flat_map(|event| duplicate_keys(&event.data))
            .collect()
    } else {
        duplicate_keys(&String::from_utf8_lossy(&response.body))
    }
}

/// Decodes a response body and finds the answer to request `id` in it.
pub fn decode_body(response: &HttpResponse, id: &Value) -> Body {
    if response.body.iter().all(u8::is_ascii_whitespace) {
        return Body::Empty;
    }
    let content_type = response.content_type();
    if content_type == "text/event-stream" {
        return find_in_event_stream(&response.body, id);
    }
    match serde_json::from_slice::<Value>(&response.body) {
        Ok(value) => find_in_json(value, id),
        Err(_) if content_type.is_empty() => Body::Undecodable("body is not JSON".into()),
        Err(_) => Body::Undecodable(format!("body of type {content_type} is not JSON")),
    }
}

/// A JSON body: one message, or (2025-03-26 batching) an array of them.
fn find_in_json(value: Value, id: &Value) -> Body {
    let mut candidates = Candidates::default();
    match value {
        Value::Array(items) => items
            .into_iter()
            .for_each(|item| candidates.offer(item, id)),
        single => candidates.offer(single, id),
    }
    candidates.into_body("the JSON body holds no JSON-RPC response")
}

/// An SSE body: skip priming events, notifications and server requests; take our response.
fn find_in_event_stream(body: &[u8], id: &Value) -> Body {
    let mut candidates = Candidates::default();
    for event in sse::decode(body) {
        if event.data.is_empty() || event.event != "message" {
            continue;
        }
        match serde_json::from_str::<Value>(&event.data) {
            Ok(value) => candidates.offer(value, id),
            Err(_) => candidates.saw_garbage = true,
        }
        if candidates.exact.is_some() {
            break;
        }
    }
    let why = if candidates.saw_garbage {
        "the event stream carried data that is not JSON"
    } else {
        "the event stream ended without the response"
    };
    candidates.into_body(why)
}

/// Responses seen while scanning a body: the one with our id, or else an error whose id is not
/// ours (transport-level errors often carry `null` or a made-up id).
#[derive(Default)]
struct Candidates {
    exact: Option<Result<Value, RpcErrorObject>>,
    stray_error: Option<RpcErrorObject>,
    saw_garbage: bool,
}

impl Candidates {
    fn offer(&mut self, value: Value, id: &Value) {
        match jsonrpc::classify(value) {
            Some(Message::Response {
                id: their_id,
                outcome,
            }) if &their_id == id => {
                if self.exact.is_none() {
                    self.exact = Some(outcome);
                }
            }
            Some(Message::Response {
                outcome: Err(error),
                ..
            }) => {
                self.stray_error.get_or_insert(error);
            }
            Some(_) => {}
            None => self.saw_garbage = true,
        }
    }

    fn into_body(self, why: &str) -> Body {
        match (self.exact, self.stray_error) {
            (Some(outcome), _) => Body::Message(outcome),
            (None, Some(error)) => Body::Message(Err(error)),
            (None, None) => Body::Undecodable(why.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use serde_json::json;

    fn response(status: u16, content_type: &str, body: &str) -> HttpResponse {
        let mut headers = HeaderMap::new();
        if !content_type.is_empty() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
        }
        HttpResponse {
            status,
            headers,
            body: Bytes::from(body.to_string()),
            final_url: Url::parse("http://127.0.0.1/mcp").unwrap(),
        }
    }

    fn rpc_error(code: i64, message: &str) -> Body {
        Body::Message(Err(RpcErrorObject {
            code,
            message: message.into(),
            data: None,
        }))
    }

    #[test]
    fn decodes_bodies() {
        let id = json!(2);
        let table: Vec<(&str, HttpResponse, Body)> = vec![
            (
                "plain JSON",
                response(
                    200,
                    "application/json",
                    r#"{"jsonrpc":"2.0","id":2,"result":{"a":1}}"#,
                ),
                Body::Message(Ok(json!({"a":1}))),
            ),
            (
                "JSON with charset",
                response(
                    200,
                    "application/json; charset=utf-8",
                    r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
                ),
                Body::Message(Ok(json!({}))),
            ),
            (
                "id of another type does not match",
                response(
                    200,
                    "application/json",
                    r#"{"jsonrpc":"2.0","id":"2","result":{}}"#,
                ),
                Body::Undecodable("the JSON body holds no JSON-RPC response".into()),
            ),
            (
                "error with a null id",
                response(
                    400,
                    "application/json",
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#,
                ),
                rpc_error(-32000, "Bad Request"),
            ),
            (
                "batch array",
                response(
                    200,
                    "application/json",
                    r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"b":2}}]"#,
                ),
                Body::Message(Ok(json!({"b":2}))),
            ),
            ("empty", response(202, "", ""), Body::Empty),
            (
                "html",
                response(200, "text/html", "<html>hi</html>"),
                Body::Undecodable("body of type text/html is not JSON".into()),
            ),
            (
                "SSE with priming, notification and server request first",
                response(
                    200,
                    "text/event-stream",
                    "id: p\r\ndata:\r\n\r\n\
                     event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\r\n\r\n\
                     data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\r\n\r\n\
                     data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"wrong\":true}}\r\n\r\n\
                     event: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":2,\"result\":{\"ok\":true}}\r\n\r\n",
                ),
                Body::Message(Ok(json!({"ok":true}))),
            ),
            (
                "SSE without the response",
                response(200, "text/event-stream", "id: p\ndata:\n\n"),
                Body::Undecodable("the event stream ended without the response".into()),
            ),
            (
                "SSE with garbage",
                response(200, "text/event-stream", "data: <html>\n\n"),
                Body::Undecodable("the event stream carried data that is not JSON".into()),
            ),
        ];
        for (name, response, expected) in table {
            assert_eq!(decode_body(&response, &id), expected, "{name}");
        }
    }

    #[test]
    fn maps_replies_to_results() {
        let ok = Reply::for_test(200, Body::Message(Ok(json!({"x":1}))));
        assert_eq!(ok.into_result().unwrap(), json!({"x":1}));

        let table: Vec<(Reply, &str)> = vec![
            (Reply::for_test(401, Body::Empty), "AuthRequired"),
            (Reply::for_test(403, rpc_error(-1, "x")), "AuthRequired"),
            (
                Reply::for_test(500, rpc_error(-32603, "x")),
                "Http { status: 500 }",
            ),
            (Reply::for_test(200, rpc_error(-32603, "x")), "Rpc"),
            (Reply::for_test(400, rpc_error(-32600, "x")), "Rpc"),
            (
                Reply::for_test(404, Body::Undecodable("h".into())),
                "Http { status: 404 }",
            ),
            (
                Reply::for_test(200, Body::Undecodable("h".into())),
                "NotJson",
            ),
            (Reply::for_test(200, Body::Empty), "NotJson"),
            (
                Reply::for_test(404, Body::Message(Ok(json!({})))),
                "Http { status: 404 }",
            ),
        ];
        for (reply, expected) in table {
            let text = format!("{:?}", reply.clone().into_result().unwrap_err());
            assert!(text.starts_with(expected), "{reply:?} gave {text}");
        }
    }
}
