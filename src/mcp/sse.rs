//! A small incremental decoder for `text/event-stream` bodies (the WHATWG event-stream rules).
//!
//! MCP servers answer a POST either with one JSON object or with an SSE stream that carries the
//! response, possibly after notifications and a "priming" event whose data is empty. The
//! decoder here turns bytes into [`SseEvent`]s; picking the JSON-RPC response out of them is the
//! job of the caller. It accepts every line ending the standard allows (LF, CRLF and a lone CR,
//! including a CRLF split across two chunks), ignores comments and unknown fields, joins
//! multi-line `data`, and drops a trailing event that was never terminated by a blank line.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type; `message` when the stream gave none.
    pub event: String,
    /// The data lines joined with `\n` (may be empty, as in MCP priming events).
    pub data: String,
    /// The last event id seen so far in the stream, if any.
    pub id: Option<String>,
}

/// Decodes an event stream fed in arbitrary chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    after_cr: bool,
    first_line: bool,
    data: String,
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        SseDecoder {
            first_line: true,
            ..SseDecoder::default()
        }
    }

    /// Feeds the next chunk and returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in chunk {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' => self.end_line(&mut events),
                b'\r' => {
                    self.end_line(&mut events);
                    self.after_cr = true;
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(byte);
                }
            }
        }
        events
    }

    /// Ends the stream. An event without its terminating blank line is discarded, as the
    /// standard says; nothing is returned.
    pub fn finish(self) {}

    /// The last event id the stream set (what a reconnect sends as `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the stream asked for with `retry:`, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let raw = std::mem::take(&mut self.line);
        let mut text = String::from_utf8_lossy(&raw).into_owned();
        if self.first_line {
            self.first_line = false;
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_string();
            }
        }
        if text.is_empty() {
            if let Some(event) = self.dispatch() {
                events.push(event);
            }
            return;
        }
        if text.starts_with(':') {
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_str(), ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits only, as the standard says; an absurd value saturates (the caller caps).
                self.retry_ms = Some(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        Some(SseEvent {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        })
    }
}

/// Decodes a complete body in one go.
pub fn decode(body: &[u8]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let events = decoder.feed(body);
    decoder.finish();
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.to_string(),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    /// Feeds `input` whole, byte by byte, and split at every position into two chunks, and
    /// checks that every way gives `expected`.
    fn check_all_chunkings(input: &str, expected: &[SseEvent]) {
        let bytes = input.as_bytes();
        assert_eq!(decode(bytes), expected, "whole input {input:?}");

        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for byte in bytes {
            events.extend(decoder.feed(std::slice::from_ref(byte)));
        }
        assert_eq!(events, expected, "byte by byte {input:?}");

        for split in 0..=bytes.len() {
            let mut decoder = SseDecoder::new();
            let mut events = decoder.feed(&bytes[..split]);
            events.extend(decoder.feed(&bytes[split..]));
            assert_eq!(events, expected, "split at {split} of {input:?}");
        }
    }

    #[test]
    fn decodes_the_standard_cases_under_every_chunking() {
        let priming_then_message = vec![
            ev("message", "", Some("p1")),
            ev("message", "{\"id\":1}", Some("m1")),
        ];
        let cases: Vec<(&str, Vec<SseEvent>)> = vec![
            ("data: hello\n\n", vec![ev("message", "hello", None)]),
            ("data: hello\r\n\r\n", vec![ev("message", "hello", None)]),
            ("data: hello\r\r", vec![ev("message", "hello", None)]),
            (
                "data: a\r\ndata: b\n\rdata: c\r\n\n",
                vec![ev("message", "a\nb", None), ev("message", "c", None)],
            ),
            (
                "data: one\ndata: two\n\n",
                vec![ev("message", "one\ntwo", None)],
            ),
            ("data:x\n\n", vec![ev("message", "x", None)]),
            ("data:  x\n\n", vec![ev("message", " x", None)]),
            (
                ": keep-alive\n\ndata: y\n\n",
                vec![ev("message", "y", None)],
            ),
            ("\u{feff}data: bom\n\n", vec![ev("message", "bom", None)]),
            (
                "id: 7\nretry: 3000\nevent: note\ndata: z\n\n",
                vec![ev("note", "z", Some("7"))],
            ),
            (
                "data: done\n\ndata: unterminated\n",
                vec![ev("message", "done", None)],
            ),
            (
                "id: p1\ndata:\n\nevent: message\nid: m1\ndata: {\"id\":1}\n\n",
                priming_then_message.clone(),
            ),
            (
                "id: p1\r\ndata: \r\n\r\nevent: message\r\nid: m1\r\ndata: {\"id\":1}\r\n\r\n",
                priming_then_message,
            ),
            ("id: only\n\n", vec![]),
            (
                "data: caf\u{e9} \u{1f600}\n\n",
                vec![ev("message", "caf\u{e9} \u{1f600}", None)],
            ),
            ("data\n\n", vec![ev("message", "", None)]),
            (
                "unknown: field\ndata: w\n\n",
                vec![ev("message", "w", None)],
            ),
        ];
        for (input, expected) in cases {
            check_all_chunkings(input, &expected);
        }
    }

    #[test]
    fn id_persists_across_events_and_ignores_nul() {
        let events = decode(b"id: a\ndata: 1\n\ndata: 2\n\nid: b\0c\ndata: 3\n\n");
        assert_eq!(
            events,
            vec![
                ev("message", "1", Some("a")),
                ev("message", "2", Some("a")),
                ev("message", "3", Some("a")),
            ]
        );
    }

    #[test]
    fn keeps_the_resume_point_last_id_and_retry() {
        let mut decoder = SseDecoder::new();
        decoder.feed(b"id: e1\nretry: 500\ndata:\n\nretry: 5x\n\nretry:\n\n");
        assert_eq!(decoder.last_event_id(), Some("e1"));
        assert_eq!(decoder.retry_ms(), Some(500));
        decoder.feed(b"retry: 99999999999999999999999\n\n");
        assert_eq!(decoder.retry_ms(), Some(u64::MAX));
        assert_eq!(SseDecoder::new().retry_ms(), None);
    }

    #[test]
    fn event_type_resets_after_dispatch() {
        let events = decode(b"event: first\ndata: 1\n\ndata: 2\n\n");
        assert_eq!(events[0].event, "first");
        assert_eq!(events[1].event, "message");
    }
}
