//! Other runs of this Actor, through the Apify API: start one, wait for it, read its dataset.
//!
//! A sharded watch ([`crate::shard`]) uses these to run one shard per platform run:
//!
//! ```text
//! POST /v2/acts/{actorId}/runs?maxTotalChargeUsd=…&build=…   (body: the shard's INPUT)
//! GET  /v2/actor-runs/{runId}?waitForFinish=60               (until the status is terminal)
//! GET  /v2/datasets/{datasetId}/items?clean=true&offset=…&limit=…
//! ```
//!
//! `verify` reads the summary rows of past runs as witnessed chain heads:
//!
//! ```text
//! GET  /v2/acts/{actorId}/runs?desc=true&offset=…&limit=…    (newest first, one page)
//! GET  /v2/datasets/{datasetId}/items?desc=true&limit=…&fields=…  (a run's last rows)
//! ```
//!
//! Starting a run is not retried by this module beyond what [`ApiClient::send`] does for 429
//! and 5xx answers (the platform did not start a run then).

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use super::{ApiClient, ApiError, Item, Usd};

/// How long one `waitForFinish` call may be held open by the platform (its maximum is 60 s).
const WAIT_FOR_FINISH_SECONDS: &str = "60";
/// Dataset items read per request.
const ITEMS_PAGE: usize = 1000;
/// The longest pause between two polls of a run that has not finished.
const MAX_POLL_DELAY: Duration = Duration::from_secs(30);

/// What the coordinator needs to know of a run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The run's id.
    pub id: String,
    /// `READY`, `RUNNING`, `SUCCEEDED`, `FAILED`, `TIMING-OUT`, `TIMED-OUT`, `ABORTING`,
    /// `ABORTED`.
    pub status: String,
    /// The run's default dataset (its rows).
    pub default_dataset_id: Option<String>,
    /// The process exit code, once the run has ended.
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// The run's last status message.
    #[serde(default)]
    pub status_message: Option<String>,
}

impl RunInfo {
    /// Whether the run has ended (successfully or not).
    pub fn is_finished(&self) -> bool {
        matches!(
            self.status.as_str(),
            "SUCCEEDED" | "FAILED" | "TIMED-OUT" | "ABORTED"
        )
    }
}

/// Starting, waiting for and reading other runs of one Actor.
#[derive(Debug, Clone)]
pub struct Runs {
    api: ApiClient,
    actor_id: String,
    build: Option<String>,
    first_poll_delay: Duration,
    deadline: Option<DateTime<Utc>>,
}

impl Runs {
    /// Runs of `actor_id`, started on `build` when given (else the Actor's default build);
    /// polls of an unfinished run start `first_poll_delay` apart and double up to 30 s.
    pub fn new(
        api: ApiClient,
        actor_id: String,
        build: Option<String>,
        first_poll_delay: Duration,
    ) -> Self {
        Runs {
            api,
            actor_id,
            build,
            first_poll_delay,
            deadline: None,
        }
    }

    /// Stops waiting for runs at `deadline` (the coordinator's own end, less the time it needs
    /// to write the merged result): a run still going then is reported, not waited for.
    pub fn with_deadline(mut self, deadline: Option<DateTime<Utc>>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Starts a run with `input` as its INPUT, charging at most `max_total` (unlimited: `None`).
    pub async fn start(&self, input: &Value, max_total: Option<Usd>) -> Result<RunInfo, ApiError> {
        let mut request = self
            .api
            .request(Method::POST, &["acts", &self.actor_id, "runs"]);
        if let Some(max_total) = max_total {
            request = request.query("maxTotalChargeUsd", &max_total.to_string());
        }
        if let Some(build) = &self.build {
            request = request.query("build", build);
        }
        let response = self.api.send(request.json(input)?).await?;
        run_info(response.data())
    }

    /// Waits until run `id` has ended and returns its final state. Each poll lets the platform
    /// hold the request up to 60 s; between polls that come back early the pause doubles.
    pub async fn wait(&self, id: &str) -> Result<RunInfo, ApiError> {
        let mut delay = self.first_poll_delay;
        loop {
            let request = self
                .api
                .request(Method::GET, &["actor-runs", id])
                .query("waitForFinish", WAIT_FOR_FINISH_SECONDS);
            let info = run_info(self.api.send(request).await?.data())?;
            if info.is_finished() {
                return Ok(info);
            }
            if self
                .deadline
                .is_some_and(|deadline| Utc::now() + delay >= deadline)
            {
                return Err(ApiError::Client(format!(
                    "run {id} was still {} when this run had to stop waiting for it",
                    info.status
                )));
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_POLL_DELAY);
        }
    }

    /// Every item of dataset `id`, in order, each as its JSON.
    pub async fn dataset_items(&self, id: &str) -> Result<Vec<Item>, ApiError> {
        let mut items = Vec::new();
        loop {
            let request = self
                .api
                .request(Method::GET, &["datasets", id, "items"])
                .query("format", "json")
                .query("clean", "true")
                .query("offset", &items.len().to_string())
                .query("limit", &ITEMS_PAGE.to_string());
            let response = self.api.send(request).await?;
            let page: Vec<Value> = serde_json::from_slice(&response.body).map_err(|e| {
                ApiError::Client(format!("dataset {id} items are not a JSON array: {e}"))
            })?;
            let last_page = page.len() < ITEMS_PAGE;
            for value in page {
                items.push(Item::of(&value).map_err(|e| ApiError::Client(e.to_string()))?);
            }
            if last_page {
                return Ok(items);
            }
        }
    }
}

/// One page of an Actor's runs, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RunPage {
    /// How many runs the Actor has in all.
    #[serde(default)]
    pub total: usize,
    /// The runs of this page.
    #[serde(default)]
    pub items: Vec<RunInfo>,
}

impl Runs {
    /// One page of the Actor's runs, newest first: at most `limit` runs after the first
    /// `offset`.
    pub async fn list(&self, offset: usize, limit: usize) -> Result<RunPage, ApiError> {
        let request = self
            .api
            .request(Method::GET, &["acts", &self.actor_id, "runs"])
            .query("desc", "true")
            .query("offset", &offset.to_string())
            .query("limit", &limit.to_string());
        let data = self
            .api
            .send(request)
            .await?
            .data()
            .ok_or_else(|| ApiError::Client("the list of runs is missing".to_string()))?;
        serde_json::from_value(data)
            .map_err(|e| ApiError::Client(format!("the list of runs cannot be read: {e}")))
    }

    /// The last `limit` items of dataset `id`, newest first, each with only `fields` (a run's
    /// summary row is the last item it writes). The answer is read up to
    /// [`super::MAX_READ_BYTES`].
    pub async fn last_items(
        &self,
        id: &str,
        limit: usize,
        fields: &[&str],
    ) -> Result<Vec<Value>, ApiError> {
        let request = self
            .api
            .request(Method::GET, &["datasets", id, "items"])
            .query("format", "json")
            .query("clean", "true")
            .query("desc", "true")
            .query("limit", &limit.to_string())
            .query("fields", &fields.join(","))
            .max_body(super::MAX_READ_BYTES);
        let response = self.api.send(request).await?;
        serde_json::from_slice(&response.body)
            .map_err(|e| ApiError::Client(format!("dataset {id} items are not a JSON array: {e}")))
    }
}

fn run_info(data: Option<Value>) -> Result<RunInfo, ApiError> {
    let data = data.ok_or_else(|| ApiError::Client("the run object is missing".to_string()))?;
    serde_json::from_value(data)
        .map_err(|e| ApiError::Client(format!("the run object cannot be read: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn run_objects_are_read_and_their_end_recognized() {
        let cases = [
            ("READY", false),
            ("RUNNING", false),
            ("TIMING-OUT", false),
            ("ABORTING", false),
            ("SUCCEEDED", true),
            ("FAILED", true),
            ("TIMED-OUT", true),
            ("ABORTED", true),
        ];
        for (status, finished) in cases {
            let info = run_info(Some(json!({
                "id": "r1", "status": status, "defaultDatasetId": "d1", "exitCode": 0,
                "actId": "a", "stats": {}
            })))
            .unwrap();
            assert_eq!(info.is_finished(), finished, "{status}");
            assert_eq!(info.default_dataset_id.as_deref(), Some("d1"));
        }
        assert!(run_info(None).is_err());
        assert!(run_info(Some(json!({"status": "RUNNING"}))).is_err());
    }
}
