//! Shards run as platform runs of this same Actor (a sharded watch on the Apify platform).

use std::collections::HashMap;

use serde_json::Value;

use super::{ShardEnd, ShardRun, ShardRunner, plan, rows::ShardRows};
use crate::platform::{Runs, Usd};
use crate::run::EXIT_GATE;

/// Starts one platform run per shard and waits for it.
pub struct PlatformRuns<'a> {
    /// The API of this Actor's runs.
    pub runs: &'a Runs,
    /// The coordinator's input as given (secret fields still encrypted: a run of the same
    /// Actor decrypts them with the same key, and the plain values never reach the API).
    pub input: &'a Value,
    /// The registry name of each registry server, by URL, put back into its row.
    pub registry_names: &'a HashMap<String, String>,
}

impl ShardRunner for PlatformRuns<'_> {
    async fn run_shard(&self, job: &plan::ShardJob, budget: Option<Usd>) -> ShardRun {
        let failed = |why: String, run_id: Option<String>| ShardRun {
            end: ShardEnd::Failed(why),
            run_id,
            dataset_id: None,
            rows: ShardRows::default(),
        };
        let started = match self
            .runs
            .start(&plan::shard_input(self.input, job), budget)
            .await
        {
            Ok(started) => started,
            Err(error) => {
                return failed(
                    format!("the shard's run could not be started: {error}"),
                    None,
                );
            }
        };
        tracing::info!(shard = job.shard, run_id = started.id, "shard run started");
        let ended = match self.runs.wait(&started.id).await {
            Ok(ended) => ended,
            Err(error) => {
                let why = format!("the shard's run could not be followed: {error}");
                return failed(why, Some(started.id));
            }
        };
        // A run whose gate tripped exits with EXIT_GATE, which the platform shows as FAILED;
        // its rows are complete.
        let gate_tripped =
            ended.status == "FAILED" && ended.exit_code == Some(i64::from(EXIT_GATE));
        if ended.status != "SUCCEEDED" && !gate_tripped {
            let mut why = format!("run {} ended {}", ended.id, ended.status);
            if let Some(code) = ended.exit_code {
                why.push_str(&format!(" (exit code {code})"));
            }
            if let Some(message) = ended.status_message.filter(|m| !m.is_empty()) {
                why.push_str(&format!(": {message}"));
            }
            return failed(why, Some(ended.id));
        }
        let Some(dataset_id) = ended.default_dataset_id.clone() else {
            return failed(format!("run {} has no dataset", ended.id), Some(ended.id));
        };
        let rows = match self.runs.dataset_items(&dataset_id).await {
            Ok(items) => ShardRows::of_items(items, self.registry_names).map_err(|e| e.to_string()),
            Err(error) => Err(error.to_string()),
        };
        match rows {
            Ok(rows) => ShardRun {
                end: ShardEnd::Succeeded { gate_tripped },
                run_id: Some(ended.id),
                dataset_id: Some(dataset_id),
                rows,
            },
            Err(error) => failed(
                format!("the rows of run {} could not be read: {error}", ended.id),
                Some(ended.id),
            ),
        }
    }
}
