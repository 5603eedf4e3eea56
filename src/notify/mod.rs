//! Notifications: once a run's ledger is written, each `notify` destination gets one message
//! with the change rows its filters select (nothing when none matches).
//!
//! ```text
//! finish (ledger index written) ─► announce ─► per destination, all at once:
//!     select (min_severity, classes) ─► none: `nothing_matched`, nothing sent
//!     ─► payload (webhook: versioned JSON, ≤ MAX_PAYLOAD_BYTES) | slack | discord
//!     ─► deliver (net::Client, no redirects; retries on 5xx, 429, timeouts; ≤ TOTAL_TIME)
//!     ─► report::NotificationOutcome (by index and label, never the URL)
//! ```
//!
//! A destination's URL and secret are secrets (a chat webhook URL carries its token in the
//! path): their `Debug` is redacted, they have no `Display` or `Serialize`, and no outcome, log
//! line or error message is built from them. A failed delivery never fails the run and never
//! touches the ledger; it is not retried by a later run (the next run announces its own
//! changes only), and the outcome says so.

mod deliver;
mod discord;
pub mod payload;
mod slack;
pub mod standard_webhooks;

use serde_json::{Map, Value};
use url::Url;

use crate::diff::{ChangeClass, Severity};
use crate::report::{ChangeRow, NotificationOutcome, SummaryRow};
use crate::surface::validity::json_type as type_name;
pub use deliver::{DeliveryPolicy, TOTAL_TIME, client_config};
pub use payload::{MAX_PAYLOAD_BYTES, PAYLOAD_VERSION};
pub use standard_webhooks::WebhookSecret;

/// The most destinations `notify` may hold.
pub const MAX_DESTINATIONS: usize = 10;

/// The longest `label`.
pub const MAX_LABEL_CHARS: usize = 64;

/// What a destination receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The versioned JSON payload, signed per Standard Webhooks 1.0.
    Webhook,
    /// A Slack incoming-webhook message.
    Slack,
    /// A Discord webhook message.
    Discord,
}

impl Format {
    /// The wire name, as `notify[].format` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Webhook => "webhook",
            Format::Slack => "slack",
            Format::Discord => "discord",
        }
    }
}

/// One validated `notify` entry. The URL and the secret never leave it except into the
/// request sent to that URL.
#[derive(Clone, PartialEq)]
pub struct Destination {
    url: Url,
    secret: Option<WebhookSecret>,
    /// What the destination receives.
    pub format: Format,
    /// The least severe change it is told about.
    pub min_severity: Severity,
    /// The change classes it is told about; empty = every class.
    pub classes: Vec<ChangeClass>,
    /// The name the summary row and status message use for it (else its index).
    pub label: Option<String>,
}

impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Destination")
            .field("url", &"<redacted>")
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("format", &self.format)
            .field("min_severity", &self.min_severity)
            .field("classes", &self.classes)
            .field("label", &self.label)
            .finish()
    }
}

impl Destination {
    /// Whether `row` is one this destination is told about.
    pub fn selects(&self, row: &ChangeRow) -> bool {
        row.severity >= self.min_severity
            && (self.classes.is_empty() || self.classes.contains(&row.change_class))
    }

    /// The outcome before anything was sent: `pending` when rows match, else
    /// `nothing_matched`.
    pub fn planned(&self, index: usize, rows: &[ChangeRow]) -> NotificationOutcome {
        let matched = rows.iter().filter(|r| self.selects(r)).count();
        NotificationOutcome {
            destination: index,
            label: self.label.clone(),
            format: self.format.as_str().to_string(),
            status: if matched == 0 {
                NotificationOutcome::NOTHING_MATCHED
            } else {
                NotificationOutcome::PENDING
            }
            .to_string(),
            changes_matched: matched,
            changes_sent: 0,
            attempts: 0,
            http_status: None,
            webhook_id: None,
            error: None,
        }
    }
}

/// Reads the `notify` field. Each problem is `(field, problem)`, and no problem ever quotes a
/// URL or a secret.
pub fn parse_destinations(
    value: Option<&Value>,
) -> Result<Vec<Destination>, Vec<(String, String)>> {
    const FIELD: &str = "notify";
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= MAX_DESTINATIONS => items,
        Some(Value::Array(items)) => {
            let problem = format!(
                "may hold at most {MAX_DESTINATIONS} destinations (got {})",
                items.len()
            );
            return Err(vec![(FIELD.to_string(), problem)]);
        }
        Some(other) => {
            let problem = format!(
                "must be an array of {{url, format, secret, min_severity, classes, label}} objects (got {})",
                type_name(other)
            );
            return Err(vec![(FIELD.to_string(), problem)]);
        }
    };
    let mut destinations = Vec::new();
    let mut problems = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let field = format!("{FIELD}[{index}]");
        match destination(item) {
            Ok(destination) => destinations.push(destination),
            Err(found) => problems.extend(found.into_iter().map(|(key, p)| {
                let at = if key.is_empty() {
                    field.clone()
                } else {
                    format!("{field}.{key}")
                };
                (at, p)
            })),
        }
    }
    if problems.is_empty() {
        Ok(destinations)
    } else {
        Err(problems)
    }
}

const KEYS: [&str; 6] = [
    "url",
    "format",
    "secret",
    "min_severity",
    "classes",
    "label",
];

/// One entry, or its problems as `(key, problem)` (`""`: the entry itself).
fn destination(item: &Value) -> Result<Destination, Vec<(String, String)>> {
    let Value::Object(map) = item else {
        let problem = format!(
            "must be an object with url and format (got {})",
            type_name(item)
        );
        return Err(vec![(String::new(), problem)]);
    };
    let mut problems: Vec<(String, String)> = Vec::new();
    for key in map.keys() {
        if !KEYS.contains(&key.as_str()) {
            problems.push((
                key.clone(),
                format!("is not a known key; {}", crate::suggest::hint(key, &KEYS)),
            ));
        }
    }
    let format = match map.get("format") {
        None | Some(Value::Null) => Some(Format::Webhook),
        Some(Value::String(name)) => match name.as_str() {
            "webhook" => Some(Format::Webhook),
            "slack" => Some(Format::Slack),
            "discord" => Some(Format::Discord),
            _ => None,
        },
        Some(_) => None,
    };
    if format.is_none() {
        let problem = one_of(map.get("format"), &["webhook", "slack", "discord"]);
        problems.push(("format".into(), problem));
    }
    let url = url_of(map)
        .map_err(|p| problems.push(("url".into(), p)))
        .ok();
    let secret = match (map.get("secret"), format) {
        (None | Some(Value::Null), Some(Format::Webhook)) => {
            problems.push((
                "secret".into(),
                "is required for a webhook destination (whsec_ followed by base64)".into(),
            ));
            None
        }
        (None | Some(Value::Null), _) => None,
        (Some(Value::String(text)), Some(Format::Webhook)) => WebhookSecret::parse(text)
            .map_err(|p| problems.push(("secret".into(), p)))
            .ok(),
        (Some(Value::String(_)), _) => {
            problems.push((
                "secret".into(),
                "is only for webhook destinations: slack and discord messages are not signed"
                    .into(),
            ));
            None
        }
        (Some(other), _) => {
            problems.push((
                "secret".into(),
                format!("must be text (got {})", type_name(other)),
            ));
            None
        }
    };
    let min_severity = match map.get("min_severity") {
        None | Some(Value::Null) => Severity::Low,
        Some(Value::String(s)) if s == "low" => Severity::Low,
        Some(Value::String(s)) if s == "medium" => Severity::Medium,
        Some(Value::String(s)) if s == "high" => Severity::High,
        Some(other) => {
            let problem = one_of(Some(other), &["low", "medium", "high"]);
            problems.push(("min_severity".into(), problem));
            Severity::Low
        }
    };
    let classes = classes_of(map).unwrap_or_else(|p| {
        problems.push(("classes".into(), p));
        Vec::new()
    });
    let label = match map.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::String(text))
            if !text.trim().is_empty()
                && text.chars().count() <= MAX_LABEL_CHARS
                && !text.chars().any(char::is_control) =>
        {
            Some(text.clone())
        }
        Some(_) => {
            problems.push((
                "label".into(),
                format!("must be text of 1 to {MAX_LABEL_CHARS} printable characters"),
            ));
            None
        }
    };
    match (url, format) {
        (Some(url), Some(format)) if problems.is_empty() => Ok(Destination {
            url,
            secret,
            format,
            min_severity,
            classes,
            label,
        }),
        _ => Err(problems),
    }
}

/// What is wrong with `got` for a key that takes one of `allowed`: the allowed values, what
/// was given, and the nearest allowed value when one is close enough to be a typo.
fn one_of(got: Option<&Value>, allowed: &[&str]) -> String {
    let rule = format!("must be one of {}", allowed.join(", "));
    match got {
        Some(Value::String(text)) => {
            let hint = crate::suggest::did_you_mean(text, allowed.iter().copied())
                .map_or(String::new(), |hint| format!("; {hint}"));
            format!("{rule} (got {text:?}){hint}")
        }
        Some(other) => format!("{rule} (got {})", type_name(other)),
        None => rule,
    }
}

/// The URL of an entry: http or https, with a host, without credentials. Never quoted.
fn url_of(map: &Map<String, Value>) -> Result<Url, String> {
    let rule = "must be an http(s) URL with a host and without a user name or password";
    let Some(Value::String(text)) = map.get("url") else {
        return Err(format!("is required: {rule}"));
    };
    let url = Url::parse(text).map_err(|_| format!("is not a valid URL: {rule}"))?;
    let usable = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.username().is_empty()
        && url.password().is_none();
    if usable {
        Ok(url)
    } else {
        Err(rule.to_string())
    }
}

fn classes_of(map: &Map<String, Value>) -> Result<Vec<ChangeClass>, String> {
    let names: Vec<&str> = ChangeClass::ALL.iter().map(|c| c.as_str()).collect();
    let rule = format!("must be an array of change classes ({})", names.join(", "));
    match map.get("classes") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item.as_str() {
                Some(text) => text.parse::<ChangeClass>().map_err(|_| {
                    format!(
                        "has unknown change class {text:?}; {}",
                        crate::suggest::hint(text, &names)
                    )
                }),
                None => Err(format!("{rule} (got {})", type_name(item))),
            })
            .collect(),
        Some(_) => Err(rule),
    }
}

/// What a delivery knows about the run it announces.
#[derive(Debug, Clone)]
pub struct RunFacts<'a> {
    /// The run's summary row (its `notifications` are left out of payloads).
    pub summary: &'a SummaryRow,
    /// Every change row of the run, in dataset order.
    pub rows: &'a [ChangeRow],
    /// A link to the run (its Apify Console page) or the Standby pages, when known.
    pub run_url: Option<&'a str>,
}

/// Sends every destination its message, all at once, and returns one outcome per destination
/// in input order. Never fails: a destination that could not be told says why in its outcome.
pub async fn announce(
    client: &crate::net::Client,
    destinations: &[Destination],
    facts: &RunFacts<'_>,
    policy: &DeliveryPolicy,
) -> Vec<NotificationOutcome> {
    let sends = destinations
        .iter()
        .enumerate()
        .map(|(index, destination)| deliver::one(client, index, destination, facts, policy));
    futures::future::join_all(sends).await
}

/// Every destination `failed` for `why`, nothing sent (those with no matching row:
/// `nothing_matched`).
pub fn not_sent(
    destinations: &[Destination],
    rows: &[ChangeRow],
    why: &str,
) -> Vec<NotificationOutcome> {
    destinations
        .iter()
        .enumerate()
        .map(|(index, destination)| {
            let mut outcome = destination.planned(index, rows);
            if outcome.status == NotificationOutcome::PENDING {
                outcome.status = NotificationOutcome::FAILED.to_string();
                outcome.error = Some(why.to_string());
            }
            outcome
        })
        .collect()
}

/// The per-destination part of a status message: `notify: #1 (team) delivered, #2 failed
/// (HTTP 500)`, or `None` when no destination is configured.
pub fn status_text(outcomes: &[NotificationOutcome]) -> Option<String> {
    if outcomes.is_empty() {
        return None;
    }
    let parts: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let name = match &o.label {
                Some(label) => format!("#{} ({label})", o.destination + 1),
                None => format!("#{}", o.destination + 1),
            };
            let status = o.status.replace('_', " ");
            match &o.error {
                Some(error) => format!("{name} {status} ({error})"),
                None => format!("{name} {status}"),
            }
        })
        .collect();
    Some(format!("notify: {}", parts.join(", ")))
}

/// The destinations of a `--notify FILE` (a JSON array shaped like INPUT's `notify`), so
/// local runs keep URLs and secrets out of the process list and shell history. A problem
/// names the file and the key, never a URL or a secret.
pub fn read_file(path: &std::path::Path) -> Result<Vec<Destination>, String> {
    let what = format!("--notify {}", path.display());
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {what}: {e}"))?;
    // serde_json's message names the line and column, never the text.
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{what} is not JSON (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    parse_destinations(Some(&value)).map_err(|problems| {
        let problems: Vec<String> = problems
            .iter()
            .map(|(field, problem)| format!("`{field}` {problem}"))
            .collect();
        format!("{what} refused: {}", problems.join("; "))
    })
}

#[cfg(test)]
mod tests;
