//! Stage 1, the fleet: INPUT, the HTTP client, the servers of `servers` and the MCP Registry,
//! the split by the charge budget, and the rows of entries that are never probed (blocked,
//! templated, over budget).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::outcome::{ServerResult, base_row};
use super::{RunError, RunOptions};
use crate::input::{Input, InputError};
use crate::ledger::Ledger;
use crate::net::{self, NetConfig};
use crate::platform::MAX_INPUT_BYTES;
use crate::platform::secrets::{self};
use crate::platform::{Storage, Store};
use crate::reason::ReasonCode;
use crate::registry::{self, Fleet};
use crate::report::{LedgerStatus, ServerRow};
use crate::targets::{BlockedEntry, Planned, Target};

/// Reads and validates INPUT, with the destinations of `--notify FILE` in place of its
/// `notify`. Also returns the input as given (secret fields still encrypted), which a sharded
/// watch passes on to its shard runs.
pub(super) async fn read_input(
    storage: &impl Storage,
    options: &RunOptions,
) -> Result<(Input, Value), InputError> {
    let (mut input, raw) = read_input_as_given(storage, options).await?;
    if let Some(notify) = &options.notify_override {
        input.notify = notify.clone();
    }
    Ok((input, raw))
}

/// INPUT as stored or given with `--input`, validated.
async fn read_input_as_given(
    storage: &impl Storage,
    options: &RunOptions,
) -> Result<(Input, Value), InputError> {
    let bytes = match &options.input_override {
        Some(bytes) => Some(bytes.clone()),
        None => match storage.get_record(Store::Default, &options.input_key).await {
            Ok(record) => record.map(|r| r.bytes),
            Err(error) => {
                return Err(InputError::whole(format!("could not be read: {error}")));
            }
        },
    };
    if let Some(bytes) = bytes.as_ref().filter(|b| b.len() > MAX_INPUT_BYTES) {
        return Err(InputError::whole(format!(
            "is {} bytes, more than the {MAX_INPUT_BYTES} an input may be",
            bytes.len()
        )));
    }
    match bytes {
        Some(bytes) => {
            let input = secrets::decrypt_input(&bytes, &options.input_secrets)
                .and_then(|bytes| Input::from_bytes(&bytes))
                .map_err(|error| match &options.input_file {
                    Some(file) => error.in_file(file.clone()),
                    None => error,
                })?;
            // Valid input is a JSON object (or blank, which means every default).
            let raw = serde_json::from_slice(&bytes).unwrap_or(Value::Object(Default::default()));
            log_example_servers(&raw);
            Ok((input, raw))
        }
        None => {
            let raw = Value::Object(Default::default());
            log_example_servers(&raw);
            Ok((Input::from_value(None)?, raw))
        }
    }
}

/// Says so when an INPUT names no server and no registry query: the run then watches the four
/// example servers, which a user who meant to watch their own would otherwise not notice.
fn log_example_servers(raw: &Value) {
    let names_servers = raw
        .get("servers")
        .is_some_and(|s| s.as_array().is_none_or(|a| !a.is_empty()));
    let names_registry = raw.get("registry").is_some_and(|r| !r.is_null());
    if !names_servers && !names_registry {
        tracing::info!(
            servers = ?crate::input::DEFAULT_SERVERS,
            "INPUT names no servers: watching the four example servers; set \"servers\" to watch your own"
        );
    }
}

/// The HTTP client of a run: the input's limits, the operator's address policy.
pub(crate) fn http_client(input: &Input, options: &RunOptions) -> Result<net::Client, RunError> {
    let config = NetConfig::new(
        input.request_timeout,
        input.max_redirects,
        input.max_response_bytes,
    )
    .allow_private(options.allow_private_targets)
    .allowed_hosts(input.allowed_hosts.clone());
    match &options.lookup {
        Some(lookup) => net::Client::with_lookup(config, lookup.clone()),
        None => net::Client::new(config),
    }
    .map_err(|e| RunError::Client(e.to_string()))
}

/// The run's server entries: `servers` as given, then the remotes of the registry search.
/// A registry that cannot be read is reported (log, status message, summary row) and the run
/// goes on with `servers` alone.
pub(crate) async fn gather_fleet(
    storage: &impl Storage,
    client: &net::Client,
    input: &Input,
) -> Fleet {
    let Some(query) = &input.registry else {
        return Fleet::explicit(&input.servers);
    };
    match registry::fetch(client, query).await {
        Ok(found) => {
            let fleet = Fleet::merge(&input.servers, found, input.max_fleet());
            tracing::info!(
                added = fleet.registry_names.iter().flatten().count(),
                templated = fleet.templated.len(),
                skipped_stdio = fleet.skipped_stdio,
                over_limit = fleet.over_limit,
                truncated = fleet.registry_truncated.map(|t| t.code()),
                "MCP Registry read"
            );
            if let Some(truncated) = fleet.registry_truncated {
                let message = format!(
                    "registry walk cut short ({truncated}); watching the servers found so far"
                );
                tracing::warn!("{message}");
                if let Err(status) = storage.set_status_message(&message, false).await {
                    tracing::warn!(%status, "cannot update the status message");
                }
            }
            if fleet.over_limit > 0 {
                let message = format!(
                    "{} registry servers left out: this run holds {} servers ({} per shard); \
                     raise `shards` to watch them",
                    fleet.over_limit,
                    input.max_fleet(),
                    crate::input::MAX_SERVERS
                );
                tracing::warn!("{message}");
                if let Err(status) = storage.set_status_message(&message, false).await {
                    tracing::warn!(%status, "cannot update the status message");
                }
            }
            fleet
        }
        Err(error) => {
            let message = format!("{error}; checking the explicit servers only");
            tracing::error!("{message}");
            if let Err(status) = storage.set_status_message(&message, false).await {
                tracing::warn!(%status, "cannot update the status message");
            }
            Fleet {
                registry_error: Some(error.to_string()),
                ..Fleet::explicit(&input.servers)
            }
        }
    }
}

/// Splits the usable targets into those the budget lets us read and those it does not.
pub(super) fn split_by_budget(planned: &[Planned], affordable: u64) -> (Vec<Target>, Vec<Target>) {
    let usable = planned.iter().filter_map(|p| match p {
        Planned::Probe(target) => Some(target.clone()),
        Planned::Blocked(_) => None,
    });
    let (mut within, mut beyond) = (Vec::new(), Vec::new());
    for target in usable {
        if (within.len() as u64) < affordable {
            within.push(target);
        } else {
            beyond.push(target);
        }
    }
    (within, beyond)
}

pub(super) fn blocked_result(blocked: &BlockedEntry, now: DateTime<Utc>) -> ServerResult {
    ServerResult {
        row: ServerRow {
            server_url: blocked.entry.clone(),
            reason_code: Some(ReasonCode::BlockedTarget),
            error: Some(blocked.reason.clone()),
            ledger_status: Some(LedgerStatus::Unavailable),
            ..base_row(now)
        },
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
        bytes_unchanged: false,
    }
}

/// The result of a registry remote published as a URL template.
pub(super) fn templated_result(
    remote: &registry::RegistryRemote,
    now: DateTime<Utc>,
) -> ServerResult {
    ServerResult {
        row: templated_row(remote, now),
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
        bytes_unchanged: false,
    }
}

/// The row of a registry remote published as a URL template: never guessed, never contacted.
pub(crate) fn templated_row(remote: &registry::RegistryRemote, now: DateTime<Utc>) -> ServerRow {
    ServerRow {
        server_url: remote.url.clone(),
        registry_name: Some(remote.server_name.clone()),
        reason_code: Some(ReasonCode::TemplatedUrl),
        error: Some(
            "the MCP Registry lists this remote as a URL template; fill in its {placeholders} \
                 and add the URL to `servers` to watch it"
                .to_string(),
        ),
        ledger_status: Some(LedgerStatus::Unavailable),
        ..base_row(now)
    }
}

/// The row of a target the maximum total charge did not allow reading; its entry is kept.
pub(super) fn over_budget_result(
    target: &Target,
    ledger: &Ledger,
    now: DateTime<Utc>,
) -> ServerResult {
    let entry = ledger.entry(&target.ledger_key());
    ServerResult {
        row: ServerRow {
            server_url: target.key().to_string(),
            // Never contacted: no view was read.
            listing: None,
            reason_code: Some(ReasonCode::BudgetExhausted),
            error: Some(
                "not read: the run's maximum total charge does not cover another server_checked event"
                    .to_string(),
            ),
            ledger_status: Some(LedgerStatus::Unavailable),
            previous_tool_digest: entry.and_then(|e| e.tool_digest.clone()),
            first_seen: entry.map(|e| e.first_seen),
            last_changed: entry.and_then(|e| e.last_changed),
            ..base_row(now)
        },
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
        bytes_unchanged: false,
    }
}
