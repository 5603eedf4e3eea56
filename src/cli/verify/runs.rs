//! Witnessed heads from past runs on the Apify platform: the Actor's runs, newest first, and
//! the summary rows at the end of each run's dataset.
//!
//! Bounded: at most `max_runs` runs are read ([`MAX_RUNS`] by default), [`RUNS_PAGE`] per list
//! request, and only the last [`ROWS_PER_RUN`] items of each dataset, with only the fields a
//! witness needs. A dataset that is gone (the platform deletes unnamed datasets after their
//! retention period) is counted, not an error.

use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use crate::chain::Witness;
use crate::chain::heads::witnesses_in;
use crate::cli::CliError;
use crate::platform::{ApiError, RunInfo, Runs};

/// Runs read by default: one chain log's worth of daily runs would be 1000; a thousand dataset
/// requests is the most one `verify` sends.
pub const MAX_RUNS: usize = 1000;
/// Runs per list request.
pub const RUNS_PAGE: usize = 100;
/// Items read from the end of each run's dataset (its summary row is the last one it writes).
pub const ROWS_PER_RUN: usize = 5;
/// Dataset requests in flight at once.
const IN_FLIGHT: usize = 8;
/// The fields of a row a witness needs (`shards` for a sharded watch's coordinator).
pub const FIELDS: [&str; 10] = [
    "record_type",
    "ledger_name",
    "ledger_chain_seq",
    "ledger_chain_head",
    "ledger_chain_prev_head",
    "ledger_chain_status",
    "ledger_chain_break",
    "ledger_chain_signature",
    "ledger_public_key",
    "shards",
];

/// What was read of the Actor's past runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunsRead {
    /// The Actor whose runs were listed.
    pub actor_id: String,
    /// Runs whose datasets were read.
    pub read: usize,
    /// Runs the Actor has in all.
    pub total: usize,
    /// Runs whose dataset was gone (deleted after its retention period).
    pub datasets_gone: usize,
}

impl RunsRead {
    /// A note when the history is longer than what was read, else `None`.
    pub fn note(&self) -> Option<String> {
        (self.total > self.read).then(|| {
            format!(
                "only the newest {} of the Actor's {} runs were read; older heads were not compared",
                self.read, self.total
            )
        })
    }
}

/// The heads witnessed by the newest `max_runs` runs of the Actor for `ledger_name`.
pub async fn witnesses(
    runs: &Runs,
    actor_id: &str,
    ledger_name: &str,
    max_runs: usize,
) -> Result<(Vec<Witness>, RunsRead), CliError> {
    let mut read = RunsRead {
        actor_id: actor_id.to_string(),
        ..RunsRead::default()
    };
    let mut listed: Vec<RunInfo> = Vec::new();
    while listed.len() < max_runs {
        let limit = RUNS_PAGE.min(max_runs - listed.len());
        let page = runs
            .list(listed.len(), limit)
            .await
            .map_err(|e| api_error(e, &format!("cannot list the runs of Actor {actor_id}")))?;
        read.total = page.total;
        let short = page.items.len() < limit;
        listed.extend(page.items);
        if short || listed.len() >= page.total {
            break;
        }
    }
    read.read = listed.len();
    let rows = futures::stream::iter(listed.iter())
        .map(|run| summary_rows(runs, run))
        .buffered(IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    let mut found = Vec::new();
    for (run, rows) in listed.iter().zip(rows) {
        let Some(rows) = rows? else {
            read.datasets_gone += 1;
            continue;
        };
        let dataset = run.default_dataset_id.as_deref().unwrap_or("");
        let witnesses = witnesses_in(&rows, ledger_name, |_| {
            format!("run {} (dataset {dataset})", run.id)
        })
        .map_err(|e| CliError::BadInput(format!("a summary row cannot serve as a witness: {e}")))?;
        found.extend(witnesses);
    }
    Ok((found, read))
}

/// The last rows of a run's dataset; `None` when it has no dataset or it is gone.
async fn summary_rows(runs: &Runs, run: &RunInfo) -> Result<Option<Vec<Value>>, CliError> {
    let Some(dataset) = &run.default_dataset_id else {
        return Ok(None);
    };
    match runs.last_items(dataset, ROWS_PER_RUN, &FIELDS).await {
        Ok(rows) => Ok(Some(rows)),
        Err(error) if error.status() == Some(404) => Ok(None),
        Err(error) => Err(api_error(
            error,
            &format!("cannot read dataset {dataset} of run {}", run.id),
        )),
    }
}

/// An API failure as `verify` reports it: access and existence problems are the operator's to
/// fix (exit 2, with what to do), anything else is a runtime failure (exit 3).
fn api_error(error: ApiError, what: &str) -> CliError {
    match error.status() {
        Some(401 | 403) => CliError::BadInput(format!(
            "{what}: {error}. Use an APIFY_TOKEN that may read this Actor's runs and their \
             datasets, or pass --heads FILE (summary rows exported from the runs' datasets)"
        )),
        Some(404) => CliError::BadInput(format!(
            "{what}: {error}. Check ACTOR_ID (the Actor whose runs wrote the ledger), or pass \
             --heads FILE"
        )),
        _ => CliError::Runtime(format!("{what}: {error}")),
    }
}
