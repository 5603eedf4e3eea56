//! Response bodies read through the byte cap, and the streaming response that carries one.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};
use reqwest::header::{self, HeaderMap};
use url::Url;

use super::error::NetError;

/// A response body as a stream of chunks that fails with [`NetError::TooLarge`] as soon as
/// more than the cap has arrived, so a hostile server cannot make the reader buffer more.
pub struct CappedBody {
    inner: BoxStream<'static, Result<Bytes, reqwest::Error>>,
    limit: u64,
    received: u64,
    finished: bool,
}

impl CappedBody {
    /// Wraps a raw body stream with a cap of `limit` bytes.
    pub(crate) fn new(
        inner: impl Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
        limit: u64,
    ) -> Self {
        CappedBody {
            inner: inner.boxed(),
            limit,
            received: 0,
            finished: false,
        }
    }

    /// Bytes counted against the cap so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Counts anew from `carried` bytes. For a stream of many messages (an event stream that
    /// stays open) the caller, who knows where messages end, calls this at each boundary so
    /// the cap applies to each message rather than to the whole stream.
    pub fn restart_count(&mut self, carried: u64) {
        self.received = carried;
    }
}

impl std::fmt::Debug for CappedBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CappedBody")
            .field("limit", &self.limit)
            .field("received", &self.received)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Stream for CappedBody {
    type Item = Result<Bytes, NetError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.finished {
            return Poll::Ready(None);
        }
        let item = match self.inner.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        let outcome = match item {
            None => None,
            Some(Err(error)) => Some(Err(body_error(error))),
            Some(Ok(chunk)) => {
                self.received = self.received.saturating_add(chunk.len() as u64);
                if self.received > self.limit {
                    Some(Err(NetError::TooLarge { limit: self.limit }))
                } else {
                    return Poll::Ready(Some(Ok(chunk)));
                }
            }
        };
        self.finished = true;
        Poll::Ready(outcome)
    }
}

fn body_error(error: reqwest::Error) -> NetError {
    if error.is_timeout() {
        NetError::Other(format!("body read timed out: {error}"))
    } else {
        NetError::Other(format!("body read failed: {error}"))
    }
}

/// A response whose headers have arrived and whose body is still streaming.
#[derive(Debug)]
pub struct StreamingResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// The URL that produced this response (after redirects).
    pub final_url: Url,
    /// The body, capped at `max_response_bytes` in total.
    pub body: CappedBody,
}

impl StreamingResponse {
    /// The `Content-Type` without parameters, lower-cased, or `""`.
    pub fn content_type(&self) -> String {
        content_type(&self.headers)
    }

    /// A header value as text, if present and printable.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// The media type of a `Content-Type` header, lower-cased, without parameters.
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}
