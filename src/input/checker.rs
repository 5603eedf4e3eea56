//! Checking every INPUT field against its type and range, collecting one problem per bad field
//! (never quoting a secret), so that one message names everything the user must fix.

use std::str::FromStr;
use std::sync::Arc;

use serde_json::{Map, Value};
use url::Url;

use super::{
    AUTO_SHARDS, DEFAULT_SERVERS, FieldProblem, MAX_CREDENTIALS, MAX_SERVERS,
    MAX_SHARDED_LEDGER_NAME, MAX_SHARDS, is_valid_record_key,
};
use crate::diff::ChangeClass;
use crate::gate::{ExitCondition, FailOn};
use crate::net::Credential;
use crate::registry::{self, RegistryQuery};
use crate::suggest;
use crate::surface::validity::json_type as type_name;

/// An integer field's name, range and default.
pub(super) struct IntField {
    pub(super) name: &'static str,
    pub(super) min: u64,
    pub(super) max: u64,
    pub(super) default: u64,
}

pub(super) const REQUEST_TIMEOUT: IntField = IntField {
    name: "request_timeout_seconds",
    min: 2,
    max: 120,
    default: 20,
};

pub(super) const CONCURRENCY: IntField = IntField {
    name: "concurrency",
    min: 1,
    max: 20,
    default: 5,
};

pub(super) const MAX_REDIRECTS: IntField = IntField {
    name: "max_redirects",
    min: 0,
    max: 10,
    default: 3,
};

pub(super) const MAX_RESPONSE_BYTES: IntField = IntField {
    name: "max_response_bytes",
    min: 10_000,
    max: 5_000_000,
    default: 2_000_000,
};

pub(super) const MAX_SERVER_SECONDS: IntField = IntField {
    name: "max_server_seconds",
    min: 5,
    max: 600,
    default: 60,
};

pub(super) const MAX_RUN_SECONDS: IntField = IntField {
    name: "max_run_seconds",
    min: 30,
    max: 3600,
    default: 900,
};

pub(super) const REGISTRY_LIMIT: IntField = IntField {
    name: "registry.limit",
    min: 1,
    max: (MAX_SERVERS * MAX_SHARDS) as u64,
    default: 100,
};

/// How long the ledger keeps every change and the values it refers to, in days (10 years at
/// most).
pub(super) const HISTORY_RETENTION_DAYS: IntField = IntField {
    name: "history_retention_days",
    min: 1,
    max: 3650,
    default: crate::ledger::DEFAULT_RETENTION_DAYS as u64,
};

pub(super) const SHARDS: IntField = IntField {
    name: "shards",
    min: AUTO_SHARDS as u64,
    max: MAX_SHARDS as u64,
    default: 1,
};

/// Collects problems while the fields are read, so all of them are reported at once.
#[derive(Default)]
pub(super) struct Checker {
    pub(super) problems: Vec<FieldProblem>,
}

impl Checker {
    pub(super) fn refuse(&mut self, field: &str, problem: impl Into<String>) {
        self.problems.push(FieldProblem {
            field: field.to_string(),
            problem: problem.into(),
        });
    }

    pub(super) fn int(&mut self, map: &Map<String, Value>, spec: &IntField) -> u64 {
        self.int_at(map.get(spec.name), spec)
    }

    pub(super) fn int_at(&mut self, value: Option<&Value>, spec: &IntField) -> u64 {
        let range = format!("must be an integer from {} to {}", spec.min, spec.max);
        match value {
            None | Some(Value::Null) => spec.default,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (spec.min..=spec.max).contains(&v) => v,
                _ => {
                    self.refuse(spec.name, format!("{range} (got {n})"));
                    spec.default
                }
            },
            Some(other) => {
                self.refuse(spec.name, format!("{range} (got {})", type_name(other)));
                spec.default
            }
        }
    }

    pub(super) fn bool(&mut self, map: &Map<String, Value>, name: &str, default: bool) -> bool {
        match map.get(name) {
            None | Some(Value::Null) => default,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.refuse(
                    name,
                    format!("must be true or false (got {})", type_name(other)),
                );
                default
            }
        }
    }

    /// The server entries; the defaults only when neither `servers` nor `registry` names any.
    /// `shards` shards hold [`MAX_SERVERS`] each.
    pub(super) fn servers(
        &mut self,
        map: &Map<String, Value>,
        has_registry: bool,
        shards: usize,
    ) -> Vec<Value> {
        let most = MAX_SERVERS * max_shards(shards);
        let defaults = || {
            if has_registry {
                Vec::new()
            } else {
                DEFAULT_SERVERS.iter().map(|s| Value::from(*s)).collect()
            }
        };
        match map.get("servers") {
            None | Some(Value::Null) => defaults(),
            Some(Value::Array(items)) if items.is_empty() => defaults(),
            Some(Value::Array(items)) if items.len() > most => {
                let needed = items.len().div_ceil(MAX_SERVERS);
                let advice = if needed <= MAX_SHARDS {
                    format!("set `shards` to {needed} or more (each shard holds {MAX_SERVERS})")
                } else {
                    format!(
                        "split the fleet into several ledgers: at most {MAX_SHARDS} `shards` of {MAX_SERVERS}"
                    )
                };
                self.refuse(
                    "servers",
                    format!(
                        "must list 1 to {most} URLs with `shards` = {shards} (got {}); {advice}",
                        items.len()
                    ),
                );
                Vec::new()
            }
            Some(Value::Array(items)) => items.clone(),
            Some(other) => {
                self.refuse(
                    "servers",
                    format!("must be an array of URLs (got {})", type_name(other)),
                );
                Vec::new()
            }
        }
    }

    pub(super) fn ledger_name(&mut self, map: &Map<String, Value>, shards: usize) -> String {
        let rule = "must be 1 to 100 characters from a-z A-Z 0-9 and ! - _ . ' ( ), \
                    and must not start with \"surface-\", \"insight.\", \"shards.\" or \"status.\" \
                    (reserved for the ledger's own records)";
        match map.get("ledger_name") {
            None | Some(Value::Null) => "DEFAULT".to_string(),
            Some(Value::String(name)) if shards != 1 && name.len() > MAX_SHARDED_LEDGER_NAME => {
                self.refuse(
                    "ledger_name",
                    format!(
                        "must be at most {MAX_SHARDED_LEDGER_NAME} characters when `shards` is not 1 \
                         (the shards' ledgers add \"-shard-<k>\"; got {} characters)",
                        name.len()
                    ),
                );
                String::new()
            }
            Some(Value::String(name))
                if is_valid_record_key(name) && !crate::ledger::is_reserved_name(name) =>
            {
                name.clone()
            }
            Some(Value::String(name)) => {
                self.refuse("ledger_name", format!("{rule} (got {name:?})"));
                String::new()
            }
            Some(other) => {
                self.refuse("ledger_name", format!("{rule} (got {})", type_name(other)));
                String::new()
            }
        }
    }

    pub(super) fn alert_on(&mut self, map: &Map<String, Value>) -> Vec<ChangeClass> {
        let allowed = || {
            ChangeClass::ALL
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(value) = map.get("alert_on").filter(|v| !v.is_null()) else {
            return ChangeClass::default_alert_set();
        };
        let Some(items) = value.as_array() else {
            self.refuse(
                "alert_on",
                format!("must be an array of change classes ({})", allowed()),
            );
            return Vec::new();
        };
        let mut classes = Vec::new();
        for item in items {
            match item.as_str().map(ChangeClass::from_str) {
                Some(Ok(class)) => {
                    if !classes.contains(&class) {
                        classes.push(class);
                    }
                }
                _ => {
                    let names: Vec<&str> = ChangeClass::ALL.iter().map(|c| c.as_str()).collect();
                    let hint = match item.as_str() {
                        Some(typed) => suggest::hint(typed, &names),
                        None => format!("allowed: {}", allowed()),
                    };
                    self.refuse(
                        "alert_on",
                        format!("has unknown change class {item}; {hint}"),
                    );
                }
            }
        }
        classes
    }

    /// Reads `exit_nonzero_on`: an array of condition names, each kept once.
    pub(super) fn exit_nonzero_on(&mut self, map: &Map<String, Value>) -> Vec<ExitCondition> {
        const FIELD: &str = "exit_nonzero_on";
        let Some(value) = map.get(FIELD).filter(|v| !v.is_null()) else {
            return Vec::new();
        };
        let Some(items) = value.as_array() else {
            self.refuse(
                FIELD,
                format!(
                    "must be an array of conditions ({}) (got {})",
                    ExitCondition::allowed(),
                    type_name(value)
                ),
            );
            return Vec::new();
        };
        let mut conditions = Vec::new();
        for item in items {
            match item.as_str().map(ExitCondition::from_str) {
                Some(Ok(condition)) => {
                    if !conditions.contains(&condition) {
                        conditions.push(condition);
                    }
                }
                _ => {
                    let names = ExitCondition::ALL.map(ExitCondition::as_str);
                    let hint = match item.as_str() {
                        Some(typed) => suggest::hint(typed, &names),
                        None => format!("allowed: {}", ExitCondition::allowed()),
                    };
                    self.refuse(FIELD, format!("has unknown condition {item}; {hint}"));
                }
            }
        }
        conditions
    }

    pub(super) fn allowed_hosts(&mut self, map: &Map<String, Value>) -> Vec<String> {
        let rule = "must be an array of host names such as \"example.com\"";
        match map.get("allowed_hosts") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut hosts = Vec::new();
                for item in items {
                    match item.as_str().map(normalize_host_name) {
                        Some(Some(host)) => hosts.push(host),
                        _ => self.refuse("allowed_hosts", format!("{rule} (got {item})")),
                    }
                }
                hosts
            }
            Some(other) => {
                self.refuse(
                    "allowed_hosts",
                    format!("{rule} (got {})", type_name(other)),
                );
                Vec::new()
            }
        }
    }

    /// Reads `server_credentials`. No message ever quotes a value.
    pub(super) fn server_credentials(&mut self, map: &Map<String, Value>) -> Vec<Arc<Credential>> {
        const FIELD: &str = "server_credentials";
        let items = match map.get(FIELD) {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Array(items)) if items.len() <= MAX_CREDENTIALS => items,
            Some(Value::Array(items)) => {
                let n = items.len();
                self.refuse(
                    FIELD,
                    format!("may hold at most {MAX_CREDENTIALS} entries (got {n})"),
                );
                return Vec::new();
            }
            Some(other) => {
                let got = type_name(other);
                self.refuse(
                    FIELD,
                    format!("must be an array of {{origin, header, value}} objects (got {got})"),
                );
                return Vec::new();
            }
        };
        let mut credentials: Vec<Arc<Credential>> = Vec::new();
        for (position, item) in items.iter().enumerate() {
            let field = format!("{FIELD}[{position}]");
            match credential_entry(item) {
                Ok(credential)
                    if credentials
                        .iter()
                        .any(|c| c.origin() == credential.origin()) =>
                {
                    let origin = credential.origin().to_string();
                    self.refuse(
                        &field,
                        format!("repeats the origin {origin}; give one credential per origin"),
                    );
                }
                Ok(credential) => credentials.push(Arc::new(credential)),
                Err(problem) => self.refuse(&field, problem),
            }
        }
        credentials
    }

    /// Reads `registry`.
    pub(super) fn registry(&mut self, map: &Map<String, Value>) -> Option<RegistryQuery> {
        const FIELD: &str = "registry";
        let object = match map.get(FIELD) {
            None | Some(Value::Null) => return None,
            Some(Value::Object(object)) => object,
            Some(other) => {
                let got = type_name(other);
                self.refuse(FIELD, format!("must be an object such as {{\"search\": \"github\", \"limit\": 100}} (got {got})"));
                return None;
            }
        };
        for key in object.keys() {
            const KNOWN: [&str; 3] = ["search", "limit", "base_url"];
            if !KNOWN.contains(&key.as_str()) {
                self.refuse(
                    &format!("{FIELD}.{key}"),
                    format!("is not a known field; {}", suggest::hint(key, &KNOWN)),
                );
            }
        }
        let search = match object.get("search") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.chars().count() <= 200 => {
                Some(text.trim().to_string()).filter(|t| !t.is_empty())
            }
            Some(_) => {
                self.refuse("registry.search", "must be text of at most 200 characters");
                None
            }
        };
        let limit = self.int_at(object.get("limit"), &REGISTRY_LIMIT) as usize;
        let base_url = match object.get("base_url") {
            None | Some(Value::Null) => registry::default_base_url(),
            Some(Value::String(text)) => {
                match Url::parse(text.trim()) {
                    Ok(url)
                        if matches!(url.scheme(), "http" | "https")
                            && url.username().is_empty()
                            && url.password().is_none() =>
                    {
                        url
                    }
                    _ => {
                        self.refuse("registry.base_url", format!("must be an http(s) URL without credentials, such as {} (got {text:?})", registry::DEFAULT_BASE_URL));
                        registry::default_base_url()
                    }
                }
            }
            Some(other) => {
                let got = type_name(other);
                self.refuse(
                    "registry.base_url",
                    format!("must be an http(s) URL (got {got})"),
                );
                registry::default_base_url()
            }
        };
        Some(RegistryQuery {
            base_url,
            search,
            limit,
        })
    }

    /// `ledger_signing_key`: 64 hex characters; a problem never quotes the value.
    pub(super) fn signing_key(
        &mut self,
        map: &Map<String, Value>,
    ) -> Option<Arc<crate::chain::SigningSecret>> {
        match map.get("ledger_signing_key") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => match crate::chain::SigningSecret::from_hex(text) {
                Ok(key) => Some(Arc::new(key)),
                Err(problem) => {
                    self.refuse("ledger_signing_key", problem);
                    None
                }
            },
            Some(other) => {
                self.refuse(
                    "ledger_signing_key",
                    format!("must be text (got {})", type_name(other)),
                );
                None
            }
        }
    }

    /// `notify`: the destinations; a problem never quotes a URL or a secret.
    pub(super) fn notify(&mut self, map: &Map<String, Value>) -> Vec<crate::notify::Destination> {
        match crate::notify::parse_destinations(map.get("notify")) {
            Ok(destinations) => destinations,
            Err(problems) => {
                for (field, problem) in problems {
                    self.refuse(&field, problem);
                }
                Vec::new()
            }
        }
    }

    pub(super) fn fail_on(&mut self, map: &Map<String, Value>) -> FailOn {
        match map.get("fail_on") {
            None | Some(Value::Null) => FailOn::Never,
            Some(Value::String(s)) => FailOn::from_str(s).unwrap_or_else(|_| {
                let levels = ["breaking", "high", "medium", "any", "never"];
                let hint = suggest::did_you_mean(s, levels)
                    .map_or(String::new(), |hint| format!("; {hint}"));
                self.refuse(
                    "fail_on",
                    format!("must be one of breaking, high, medium, any, never (got {s:?}){hint}"),
                );
                FailOn::Never
            }),
            Some(other) => {
                self.refuse(
                    "fail_on",
                    format!(
                        "must be one of breaking, high, medium, any, never (got {})",
                        type_name(other)
                    ),
                );
                FailOn::Never
            }
        }
    }
}

/// The most shards `shards` may use: itself, or [`MAX_SHARDS`] when the coordinator chooses.
pub(super) fn max_shards(shards: usize) -> usize {
    if shards == AUTO_SHARDS {
        MAX_SHARDS
    } else {
        shards
    }
}

/// Lower-cases a host name and drops one trailing dot; `None` if it is not a plain host name.
pub(super) fn normalize_host_name(raw: &str) -> Option<String> {
    let host = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    valid.then_some(host)
}

/// One `server_credentials` entry, or what is wrong with it (never quoting the value).
pub(super) fn credential_entry(item: &Value) -> Result<Credential, String> {
    let Value::Object(object) = item else {
        return Err(format!(
            "must be an object {{\"origin\", \"header\", \"value\"}} (got {})",
            type_name(item)
        ));
    };
    const KNOWN: [&str; 3] = ["origin", "header", "value"];
    if let Some(key) = object.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!(
            "has unknown field {key:?}; {}",
            suggest::hint(key, &KNOWN)
        ));
    }
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let origin =
        text("origin").ok_or("needs \"origin\" as text, e.g. \"https://mcp.example.com\"")?;
    let header = text("header").unwrap_or("Authorization");
    let value = text("value").ok_or("needs \"value\" as text (the secret header value)")?;
    Credential::new(origin, header, value).map_err(|e| e.to_string())
}
