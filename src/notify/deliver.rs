//! One destination's delivery: its body, the request, retries, and the outcome.
//!
//! Requests go through the run's [`net::Client`] (address policy, pinned resolver, timeouts,
//! body cap), built with no redirect allowed: a 3xx answer is a failure, so a message never
//! reaches an address the user did not name. Retried: 5xx, 429 and transport failures
//! (timeout, refused connection), after a backoff that doubles from
//! [`DeliveryPolicy::first_backoff`] or the `Retry-After` the answer asks for, whichever is
//! longer; every other answer is final. All attempts of one destination end within
//! [`DeliveryPolicy::total`]; a wait that would pass it is not made.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio::time::Instant;

use super::payload::{most_severe_first, webhook_body};
use super::standard_webhooks::message_id;
use super::{Destination, Format, RunFacts, discord, slack};
use crate::net::{self, NetError};
use crate::report::NotificationOutcome;

/// The time all attempts of one destination may take, by default.
pub const TOTAL_TIME: Duration = Duration::from_secs(60);

/// How persistent a delivery is.
#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Requests sent at most.
    pub max_attempts: u32,
    /// The wait before the second attempt; doubled before each later one.
    pub first_backoff: Duration,
    /// The longest backoff (a `Retry-After` may ask for more, within `total`).
    pub max_backoff: Duration,
    /// The time all attempts may take together.
    pub total: Duration,
}

impl Default for DeliveryPolicy {
    /// 5 attempts, 1 s doubling to at most 16 s, 60 s in all.
    fn default() -> Self {
        DeliveryPolicy {
            max_attempts: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(16),
            total: TOTAL_TIME,
        }
    }
}

/// What one attempt came to.
enum Attempt {
    /// A 2xx answer.
    Accepted(u16),
    /// Worth another try, after at least this long (`Retry-After`).
    Retry(Option<u16>, String, Option<Duration>),
    /// Final.
    Refused(Option<u16>, String),
}

/// Delivers one destination's message (or nothing, when no row matches).
pub(super) async fn one(
    client: &net::Client,
    index: usize,
    destination: &Destination,
    facts: &RunFacts<'_>,
    policy: &DeliveryPolicy,
) -> NotificationOutcome {
    let mut outcome = destination.planned(index, facts.rows);
    if outcome.status == NotificationOutcome::NOTHING_MATCHED {
        tracing::info!(destination = index, label = ?destination.label, "notify: no change matched, nothing sent");
        return outcome;
    }
    let selected = most_severe_first(facts.rows.iter().filter(|r| destination.selects(r)));
    let label = destination.label.as_deref();
    let (body, sent) = match destination.format {
        Format::Webhook => webhook_body(index, label, &selected, facts, super::MAX_PAYLOAD_BYTES),
        Format::Slack => slack::message(&selected, facts, label),
        Format::Discord => discord::message(&selected, facts, label),
    };
    outcome.changes_sent = sent;
    let run_key = facts
        .summary
        .chain
        .ledger_chain_head
        .clone()
        .unwrap_or_else(|| facts.summary.observed_at.to_rfc3339());
    let id = message_id(&facts.summary.ledger_name, &run_key, index);
    if destination.format == Format::Webhook {
        outcome.webhook_id = Some(id.clone());
    }
    let deadline = Instant::now() + policy.total;
    let mut backoff = policy.first_backoff;
    loop {
        outcome.attempts += 1;
        let headers = headers(destination, &id, &body);
        let left = deadline.saturating_duration_since(Instant::now());
        let sent = tokio::time::timeout(left, client.post(&destination.url, headers, body.clone()));
        let attempt = match sent.await {
            Ok(Ok(response)) => judge(response.status, &response.headers),
            Ok(Err(error)) => judge_error(&error),
            Err(_) => Attempt::Refused(
                None,
                format!("no answer within {} s in all", policy.total.as_secs()),
            ),
        };
        let (status, error, asked) = match attempt {
            Attempt::Accepted(status) => {
                outcome.http_status = Some(status);
                outcome.status = NotificationOutcome::DELIVERED.to_string();
                tracing::info!(destination = index, label = ?destination.label, attempts = outcome.attempts, status, "notify: delivered");
                return outcome;
            }
            Attempt::Refused(status, error) => {
                outcome.http_status = status;
                return failed(outcome, index, error);
            }
            Attempt::Retry(status, error, asked) => (status, error, asked),
        };
        outcome.http_status = status;
        if outcome.attempts >= policy.max_attempts {
            let error = format!("{error} after {} attempts", outcome.attempts);
            return failed(outcome, index, error);
        }
        let wait = asked.map_or(backoff, |asked| asked.max(backoff));
        if Instant::now() + wait >= deadline {
            let error = format!(
                "{error}; the next attempt would end after the {} s allowed",
                policy.total.as_secs()
            );
            return failed(outcome, index, error);
        }
        tracing::info!(
            destination = index,
            attempt = outcome.attempts,
            wait_ms = wait.as_millis() as u64,
            "notify: {error}; retrying"
        );
        tokio::time::sleep(wait).await;
        backoff = (backoff * 2).min(policy.max_backoff);
    }
}

fn failed(mut outcome: NotificationOutcome, index: usize, error: String) -> NotificationOutcome {
    tracing::warn!(destination = index, label = ?outcome.label, attempts = outcome.attempts, "notify: not delivered: {error}");
    outcome.status = NotificationOutcome::FAILED.to_string();
    outcome.error = Some(error);
    outcome
}

/// The headers of one attempt: JSON, and for a webhook the Standard Webhooks three, signed
/// with this attempt's time.
fn headers(destination: &Destination, id: &str, body: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(secret) = &destination.secret {
        let timestamp = chrono::Utc::now().timestamp();
        let signature = secret.signature(id, timestamp, body);
        for (name, value) in [
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", timestamp.to_string()),
            ("webhook-signature", signature),
        ] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
    }
    headers
}

/// What an answer means for the delivery.
fn judge(status: u16, headers: &HeaderMap) -> Attempt {
    match status {
        200..=299 => Attempt::Accepted(status),
        429 | 500..=599 => {
            Attempt::Retry(Some(status), format!("HTTP {status}"), retry_after(headers))
        }
        300..=399 => Attempt::Refused(
            Some(status),
            format!("HTTP {status}: redirects are not followed"),
        ),
        _ => Attempt::Refused(Some(status), format!("HTTP {status}")),
    }
}

/// What a transport failure means. The text names the kind of failure only: a client error
/// may quote the URL, which is a secret.
fn judge_error(error: &NetError) -> Attempt {
    match error {
        NetError::Timeout(limit) => Attempt::Retry(None, format!("no answer within {} s", limit.as_secs()), None),
        NetError::Connect(_) => Attempt::Retry(None, "could not connect".to_string(), None),
        NetError::Other(_) => Attempt::Retry(None, "the connection failed".to_string(), None),
        NetError::Dns(_) => Attempt::Refused(None, "the host name did not resolve".to_string()),
        NetError::Blocked(_) => Attempt::Refused(
            None,
            "refused by the address policy (a private, reserved or metadata address, or a local name): nothing was sent".to_string(),
        ),
        NetError::TooLarge { limit } => Attempt::Refused(None, format!("the answer exceeded {limit} bytes")),
        NetError::RedirectLoop { .. } | NetError::RedirectRefused { .. } | NetError::BadRedirect(_) => {
            Attempt::Refused(None, "redirected: redirects are not followed".to_string())
        }
    }
}

/// `Retry-After` in seconds, or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    let wait = at
        .signed_duration_since(chrono::Utc::now())
        .to_std()
        .unwrap_or_default();
    Some(wait)
}

/// A client for destinations: the run's limits and address policy, no redirects, and no
/// `allowed_hosts` (that list narrows the watched servers; a destination is named on its own).
pub fn client_config(
    request_timeout: Duration,
    max_response_bytes: u64,
    allow_private: bool,
) -> net::NetConfig {
    net::NetConfig::new(request_timeout, 0, max_response_bytes).allow_private(allow_private)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_judged_as_documented() {
        let mut asked = HeaderMap::new();
        asked.insert("retry-after", HeaderValue::from_static("2"));
        let none = HeaderMap::new();
        // (status, headers, retried, wait asked)
        let cases = [
            (200, &none, None, None),
            (204, &none, None, None),
            (429, &asked, Some(true), Some(2)),
            (503, &none, Some(true), None),
            (500, &asked, Some(true), Some(2)),
            (400, &none, Some(false), None),
            (404, &asked, Some(false), None),
            (410, &none, Some(false), None),
            (302, &none, Some(false), None),
        ];
        for (status, headers, retried, wait) in cases {
            match (judge(status, headers), retried) {
                (Attempt::Accepted(s), None) => assert_eq!(s, status),
                (Attempt::Retry(s, _, w), Some(true)) => {
                    assert_eq!(s, Some(status));
                    assert_eq!(w, wait.map(Duration::from_secs), "{status}");
                }
                (Attempt::Refused(s, _), Some(false)) => assert_eq!(s, Some(status)),
                _ => panic!("{status} judged wrongly"),
            }
        }
    }

    #[test]
    fn retry_after_takes_seconds_and_http_dates() {
        let at = |text: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", HeaderValue::from_str(text).unwrap());
            retry_after(&headers)
        };
        assert_eq!(at("7"), Some(Duration::from_secs(7)));
        assert_eq!(at("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc2822();
        let wait = at(&later).unwrap();
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(at("soon"), None);
    }

    #[test]
    fn transport_failures_never_quote_the_error_text() {
        let secret = "https://hooks.example/services/T000/B000/canary";
        for error in [
            NetError::Connect(secret.into()),
            NetError::Other(secret.into()),
            NetError::Dns(secret.into()),
            NetError::BadRedirect(secret.into()),
            NetError::RedirectLoop {
                hops: 1,
                detail: secret.into(),
            },
        ] {
            let text = match judge_error(&error) {
                Attempt::Retry(_, text, _) | Attempt::Refused(_, text) => text,
                Attempt::Accepted(_) => panic!("accepted"),
            };
            assert!(!text.contains("canary"), "{text}");
        }
    }
}
