//! One Actor run, start to finish.
//!
//! ```text
//! INPUT ─► Input ─► targets::plan ─► Ledger::load
//!       ─► probe every target (`concurrency` in flight, per-server and run deadlines)
//!       ─► per server, as outcomes arrive: surface, diff against the ledger, rows, ledger
//!          update; its new surface record is written meanwhile (8 in flight)
//!       ─► dataset rows in input order, summary row, OUTPUT ─► REPORT ─► insight cache
//!       ─► ledger index (last, once, after every surface record was written)
//! ```
//! This module only orchestrates: every decision of substance lives in the module that owns it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Instant as TokioInstant;

use crate::diff::{self, AuthState, Change, ChangeClass};
use crate::input::{Input, InputError};
use crate::insight::InsightCache;
use crate::ledger::{Ledger, LedgerError, MAX_IDENTITY_BYTES, StoredSurface, Update};
use crate::mcp::{self, AuthFindings, Era, Observation, ProbeFailure, ProbeOptions};
use crate::net::{self, Lookup, NetConfig, PolicyMode};
use crate::platform::secrets::{self, InputSecrets};
use crate::platform::{
    Charging, Item, MAX_INPUT_BYTES, MAX_RECORD_BYTES, Record, Storage, StorageError, Store,
};
use crate::reason::ReasonCode;
use crate::registry::{self, Fleet};
use crate::report::{
    ChangeRow, LedgerStatus, ServerRow, SummaryRow, ToolSummaries, mark_repeated_keys,
    summarize_tools,
};
use crate::surface::{DIGEST_ALGORITHM, Surface};
use crate::targets::{self, BlockedEntry, Listing, Planned, Target, TargetRules};

/// Exit code of a run whose gate tripped.
pub const EXIT_GATE: i32 = 1;
/// Exit code of a run refused for bad input.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code of a run that failed at runtime (storage, ledger).
pub const EXIT_RUNTIME: i32 = 3;

/// How the operator started the run (never from INPUT).
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Key of the INPUT record in the default store.
    pub input_key: String,
    /// INPUT bytes given on the command line, replacing the stored record.
    pub input_override: Option<Vec<u8>>,
    /// Operator override: loopback and private targets may be contacted.
    pub allow_private_targets: bool,
    /// Test and diagnosis aid: speak only this protocol era.
    pub force_era: Option<Era>,
    /// Test aid: resolve names through this lookup instead of the system resolver.
    pub lookup: Option<Arc<dyn Lookup>>,
    /// The key that decrypts secret input fields (Apify platform runs).
    pub input_secrets: InputSecrets,
    /// On the Apify platform: the runs of this Actor that a sharded watch starts, one per
    /// shard. `None` runs the shards in this process.
    pub shard_runs: Option<crate::platform::Runs>,
}

/// What a finished run reports to `main`.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The summary row that was written.
    pub summary: SummaryRow,
    /// Whether the `fail_on` gate tripped.
    pub gate_tripped: bool,
    /// A sharded watch only: shards whose run failed (the others' rows were still written).
    pub failed_shards: usize,
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The input was refused; nothing was contacted and the ledger is untouched.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A store could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// A sharded watch could not start.
    #[error(transparent)]
    Shard(#[from] crate::shard::ShardError),
}

impl RunError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) => EXIT_BAD_INPUT,
            _ => EXIT_RUNTIME,
        }
    }
}

/// How probing one target ended.
enum Probed {
    Read(Box<Prepared>),
    Failed(Box<ProbeFailure>),
    TimedOut,
    RunDeadline,
    /// The probe task panicked (a bug); reported, never fatal for the run.
    Crashed(String),
    /// The server answered, but its tool list cannot be used.
    Unusable(String),
}

/// A read surface with everything that does not depend on the ledger already computed, in the
/// probe's own task (so both cores share the hashing and the risk assessment).
struct Prepared {
    observation: Observation,
    surface: Surface,
    tool_digest: String,
    /// Key of the stored surface record ([`StoredSurface::key_for`]).
    surface_key: String,
    /// The surface's insight, as cached (no duplicate-key findings).
    insight: Arc<ToolSummaries>,
    /// `(tool name, pointer)` of every object key the served JSON repeated.
    repeated_keys: Vec<(String, String)>,
    /// The compressed surface record, built here when the ledger does not name this surface
    /// yet (a first read or a change), so compressing happens on both cores during probing
    /// instead of one after the other while outcomes are recorded.
    record: Option<Record>,
}

/// What the ledger already holds for a server, handed to its probe task.
#[derive(Debug, Default)]
struct Known {
    /// The surface key the ledger entry names.
    surface_key: Option<String>,
    /// Insight an earlier run computed for that surface key.
    insight: Option<Arc<ToolSummaries>>,
}

/// Insight an earlier run computed, with the surface key it belongs to.
type CachedInsight = (String, Arc<ToolSummaries>);

impl Prepared {
    /// Builds the surface, its insight and, for a surface the ledger does not hold yet, its
    /// record; the cached insight is reused when the surface key is the one the ledger names.
    fn of(mut observation: Observation, known: Known) -> Result<Self, String> {
        let tools = std::mem::take(&mut observation.tools);
        let repeated_keys = observation.repeated_keys_by_tool(&tools);
        let surface = Surface::from_tools(observation.identity(), tools)
            .map_err(|error| format!("the tool list is not usable: {error}"))?;
        for invalid in &surface.invalid_tools {
            tracing::warn!(
                url = %observation.final_url,
                index = invalid.index,
                name = invalid.name.as_deref().unwrap_or(""),
                "tool definition left out of the surface: {}",
                invalid.detail
            );
        }
        let tool_digest = surface.tool_digest();
        let surface_key = StoredSurface::key_for(&surface.identity, &tool_digest);
        let stored = known.surface_key.as_deref() == Some(surface_key.as_str());
        let insight = match known.insight {
            Some(insight) if stored => insight,
            _ => Arc::new(summarize_tools(&surface)),
        };
        let record = (!stored).then(|| StoredSurface::record_of(&surface));
        Ok(Prepared {
            tool_digest,
            surface_key,
            insight,
            repeated_keys,
            record,
            observation,
            surface,
        })
    }

    /// The summaries for the row: the insight plus this answer's duplicate-key findings.
    fn row_summaries(&self) -> ToolSummaries {
        row_summaries(&self.insight, &self.repeated_keys)
    }
}

/// The insight plus the duplicate-key findings of one answer.
fn row_summaries(insight: &ToolSummaries, repeated_keys: &[(String, String)]) -> ToolSummaries {
    let mut summaries = insight.clone();
    mark_repeated_keys(&mut summaries, repeated_keys);
    summaries
}

/// Where a server row's per-tool summaries come from. The row's `tools` stay empty until the
/// row is serialized: a fleet's rows wait for the end of the run, and holding a copy of every
/// surface's summaries there would double what the insight cache already holds.
struct RowTools {
    insight: Arc<ToolSummaries>,
    repeated_keys: Vec<(String, String)>,
}

impl RowTools {
    /// The row's `tools`.
    fn summaries(&self) -> Vec<crate::report::ToolSummary> {
        row_summaries(&self.insight, &self.repeated_keys).0
    }
}

/// The probe result of one target with the wall time it took.
struct Outcome {
    target: Target,
    probed: Probed,
    elapsed: Duration,
    index: usize,
}

/// Everything one server contributed to the run's output.
struct ServerResult {
    row: ServerRow,
    /// The changes that become rows (already filtered by `alert_on`).
    changes: Vec<Change>,
    /// The new surface record to store, `(key, record)`; taken and written while outcomes
    /// are recorded.
    surface_write: Option<(String, Record)>,
    /// The insight of the surface the ledger entry now names, for the cache.
    insight: Option<CachedInsight>,
    /// The row's per-tool summaries, filled in when the row is serialized.
    tools: Option<RowTools>,
}

/// The pay-per-event events of seed 000.
pub const EVENT_RUN_START: &str = "run_start";
/// Charged once per server whose ledger status is `created` or `compared`.
pub const EVENT_SERVER_CHECKED: &str = "server_checked";
/// Charged once per change row.
pub const EVENT_CHANGE_RECORDED: &str = "surface_change_recorded";

/// How often the progress status message may be updated while probing.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// Runs the Actor once against `storage`, charging events through `charging`. An input with
/// `shards` above 1 makes the run the coordinator of a sharded watch ([`crate::shard`]).
pub async fn run(
    storage: &impl Storage,
    charging: &Charging,
    options: RunOptions,
) -> Result<RunOutcome, RunError> {
    let (input, raw) = match read_input(storage, &options).await {
        Ok(read) => read,
        Err(error) => {
            let message = format!("Input refused: fix {}", error.fields().join(", "));
            storage.set_status_message(&message, true).await?;
            return Err(error.into());
        }
    };
    if input.shards > 1 {
        return crate::shard::coordinate(storage, charging, &options, input, raw).await;
    }
    run_with_input(storage, charging, &options, input).await
}

/// One run over a validated input (the whole watch, or one shard of it).
pub(crate) async fn run_with_input(
    storage: &impl Storage,
    charging: &Charging,
    options: &RunOptions,
    input: Input,
) -> Result<RunOutcome, RunError> {
    let rules = TargetRules {
        mode: if options.allow_private_targets {
            PolicyMode::AllowPrivate
        } else {
            PolicyMode::Public
        },
        allowed_hosts: input.allowed_hosts.clone(),
        credentials: input.server_credentials.clone(),
    };
    let mut ledger = Ledger::load(storage, &input.ledger_name).await?;
    let mut insight = InsightCache::load(storage, &input.ledger_name).await;
    let client = http_client(&input, options)?;
    let fleet = gather_fleet(storage, &client, &input).await;
    let planned = targets::plan(&fleet.entries, &rules);

    charge(charging, EVENT_RUN_START, 1).await;
    let (probe_targets, over_budget) =
        split_by_budget(&planned, charging.affordable(EVENT_SERVER_CHECKED));
    let now = Utc::now();
    let mut results: Vec<(usize, ServerResult)> = Vec::with_capacity(planned.len());
    for (offset, remote) in fleet.templated.iter().enumerate() {
        let index = fleet.entries.len() + offset;
        results.push((index, templated_result(remote, now)));
    }
    for plan in &planned {
        if let Planned::Blocked(blocked) = plan {
            results.push((blocked.index, blocked_result(blocked, now)));
        }
    }
    for target in &over_budget {
        results.push((target.index, over_budget_result(target, &ledger, now)));
    }
    let jobs = probe_jobs(&input, options, &ledger, &insight, probe_targets);
    let probed =
        probe_and_record(storage, charging, &client, &input, &mut ledger, jobs, now).await?;
    results.extend(probed);
    results.sort_by_key(|(index, _)| *index);
    let results = results
        .into_iter()
        .map(|(index, mut result)| {
            if let Some(name) = fleet.registry_names.get(index).cloned().flatten() {
                result.row.registry_name = Some(name);
            }
            result
        })
        .collect();
    finish(
        storage,
        charging,
        &mut ledger,
        &mut insight,
        &input,
        &fleet,
        results,
    )
    .await
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
                "MCP Registry read"
            );
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
fn split_by_budget(planned: &[Planned], affordable: u64) -> (Vec<Target>, Vec<Target>) {
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

/// Charges `count` events; a failed charge is logged and never stops the run (the event stays
/// booked against the budget, so the maximum is still never exceeded).
async fn charge(charging: &Charging, event: &str, count: u64) -> u64 {
    match charging.charge(event, count).await {
        Ok(charged) => charged,
        Err(error) => {
            tracing::warn!(event, count, %error, "charge failed");
            count
        }
    }
}

/// Reads and validates INPUT. Also returns the input as given (secret fields still encrypted),
/// which a sharded watch passes on to its shard runs.
async fn read_input(
    storage: &impl Storage,
    options: &RunOptions,
) -> Result<(Input, Value), InputError> {
    let bytes = match &options.input_override {
        Some(bytes) => Some(bytes.clone()),
        None => match storage.get_record(Store::Default, &options.input_key).await {
            Ok(record) => record.map(|r| r.bytes),
            Err(error) => {
                return Err(InputError {
                    problems: vec![crate::input::FieldProblem {
                        field: "(input)".to_string(),
                        problem: format!("could not be read: {error}"),
                    }],
                });
            }
        },
    };
    if let Some(bytes) = bytes.as_ref().filter(|b| b.len() > MAX_INPUT_BYTES) {
        return Err(InputError {
            problems: vec![crate::input::FieldProblem {
                field: "(input)".to_string(),
                problem: format!(
                    "is {} bytes, more than the {MAX_INPUT_BYTES} an input may be",
                    bytes.len()
                ),
            }],
        });
    }
    match bytes {
        Some(bytes) => {
            let input =
                Input::from_bytes(&secrets::decrypt_input(&bytes, &options.input_secrets)?)?;
            // Valid input is a JSON object (or blank, which means every default).
            let raw = serde_json::from_slice(&bytes).unwrap_or(Value::Object(Default::default()));
            Ok((input, raw))
        }
        None => Ok((Input::from_value(None)?, Value::Object(Default::default()))),
    }
}

/// One server to probe, with what the ledger already knows about it.
struct Job {
    target: Target,
    options: ProbeOptions,
    known: Known,
}

/// The probe jobs in input order: the era that worked last time is tried first, and the
/// insight of the surface the ledger names goes along for reuse.
fn probe_jobs(
    input: &Input,
    options: &RunOptions,
    ledger: &Ledger,
    insight: &InsightCache,
    targets: Vec<Target>,
) -> Vec<Job> {
    targets
        .into_iter()
        .map(|target| {
            let entry = ledger.entry(&target.ledger_key());
            let surface_key = entry.and_then(|e| e.surface_key.clone());
            let known = Known {
                insight: surface_key.as_deref().and_then(|key| insight.get(key)),
                surface_key,
            };
            let options = ProbeOptions {
                count_resources_and_prompts: input.count_resources_and_prompts,
                preferred_era: entry.and_then(|e| e.era),
                force_era: options.force_era,
                probe_oauth_metadata: input.probe_oauth_metadata,
                ..ProbeOptions::default()
            };
            Job {
                target,
                options,
                known,
            }
        })
        .collect()
}

/// Probes every target with at most `concurrency` in flight, under both deadlines, and records
/// each outcome as soon as it arrives. Probes run as their own tasks, so recording one server
/// never holds up the others.
async fn probe_and_record(
    storage: &impl Storage,
    charging: &Charging,
    client: &net::Client,
    input: &Input,
    ledger: &mut Ledger,
    jobs: Vec<Job>,
    now: DateTime<Utc>,
) -> Result<Vec<(usize, ServerResult)>, RunError> {
    let run_deadline = TokioInstant::now() + input.max_run_time;
    let total = jobs.len();
    let server_budget = input.max_server_time;
    // A feeder hands out `concurrency` slots in input order; each probe then runs as its own
    // task and reports back through a channel, so recording one outcome never holds up the
    // next probe, and servers late in the list are the ones a run deadline cuts.
    let slots = Arc::new(Semaphore::new(input.concurrency));
    let preparers = Arc::new(Semaphore::new(cpu_count()));
    let (report, mut outcomes) = mpsc::unbounded_channel::<Outcome>();
    let feeder_client = client.clone();
    tokio::spawn(async move {
        for job in jobs {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let report = report.clone();
            let client = feeder_client.clone();
            let preparers = preparers.clone();
            tokio::spawn(async move {
                let (index, fallback) = (job.target.index, job.target.clone());
                let slots = Slots {
                    network: slot,
                    preparers,
                };
                let probe = probe_one(client, slots, job, server_budget, run_deadline);
                let outcome = tokio::spawn(probe).await.unwrap_or_else(|error| Outcome {
                    target: fallback,
                    probed: Probed::Crashed(error.to_string()),
                    elapsed: Duration::ZERO,
                    index,
                });
                // The receiver lives until every sender is gone; a failed send cannot happen.
                let _ = report.send(outcome);
            });
        }
    });
    let mut results = Vec::with_capacity(total);
    let mut changes_seen = 0usize;
    let mut last_progress = Instant::now();
    let mut surfaces = SurfaceWriter::new(storage);
    loop {
        let outcome = tokio::select! {
            written = surfaces.next_done() => {
                written?;
                continue;
            }
            outcome = outcomes.recv() => match outcome {
                Some(outcome) => outcome,
                None => break,
            },
        };
        let index = outcome.index;
        let payer = Payer {
            charging,
            unsettled: (total - results.len()) as u64,
        };
        let mut result = record_outcome(storage, &payer, ledger, input, outcome, now).await?;
        if let Some((key, record)) = result.surface_write.take() {
            surfaces.write(key, record).await?;
        }
        log_verdict(&result.row);
        changes_seen += result.changes.len();
        results.push((index, result));
        // The first verdict is reported at once (the user sees the run move), later ones at
        // most every PROGRESS_INTERVAL, which keeps status calls cheap for large fleets.
        if results.len() == 1 || last_progress.elapsed() >= PROGRESS_INTERVAL {
            last_progress = Instant::now();
            let message = format!(
                "Checked {}/{total} servers, {changes_seen} changes",
                results.len()
            );
            if let Err(error) = storage.set_status_message(&message, false).await {
                tracing::warn!(%error, "cannot update the status message");
            }
        }
    }
    surfaces.finish().await?;
    Ok(results)
}

/// How many surface records are written at the same time: on the platform each is an API
/// request, so writing them one after the other would cost a round trip per new surface.
const SURFACE_WRITES_IN_FLIGHT: usize = 8;

/// Writes new surface records while the run goes on, so that storing them overlaps with
/// probing instead of following it. Each key is written once (servers serving the same surface
/// share its content-addressed record). Every write completes before the index is written:
/// a failure stops the run first, so the index never names a record that was not stored.
struct SurfaceWriter<'a, S: Storage> {
    storage: &'a S,
    started: std::collections::HashSet<String>,
    in_flight: FuturesUnordered<BoxFuture<'a, Result<(), StorageError>>>,
}

impl<'a, S: Storage> SurfaceWriter<'a, S> {
    fn new(storage: &'a S) -> Self {
        SurfaceWriter {
            storage,
            started: std::collections::HashSet::new(),
            in_flight: FuturesUnordered::new(),
        }
    }

    /// Starts writing `record` under `key` (unless this run already did), first waiting for
    /// a write to finish when [`SURFACE_WRITES_IN_FLIGHT`] are under way.
    async fn write(&mut self, key: String, record: Record) -> Result<(), StorageError> {
        if !self.started.insert(key.clone()) {
            return Ok(());
        }
        while self.in_flight.len() >= SURFACE_WRITES_IN_FLIGHT {
            self.next_done().await?;
        }
        let storage = self.storage;
        self.in_flight.push(Box::pin(async move {
            storage.put_record(Store::Ledger, &key, record).await
        }));
        Ok(())
    }

    /// The result of the next write to finish; never ready while none is under way.
    async fn next_done(&mut self) -> Result<(), StorageError> {
        match self.in_flight.next().await {
            Some(result) => result,
            None => std::future::pending().await,
        }
    }

    /// Waits for every write under way.
    async fn finish(mut self) -> Result<(), StorageError> {
        while let Some(result) = self.in_flight.next().await {
            result?;
        }
        Ok(())
    }
}

/// How many CPUs the surface work may use at once (at least one).
fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// What one probe task holds and waits for: its place among the `concurrency` servers in
/// flight, and the pool of CPU slots its surface work waits for once the answers are in.
struct Slots {
    network: OwnedSemaphorePermit,
    preparers: Arc<Semaphore>,
}

async fn probe_one(
    client: net::Client,
    slots: Slots,
    job: Job,
    server_budget: Duration,
    run_deadline: TokioInstant,
) -> Outcome {
    let Job {
        target,
        options,
        known,
    } = job;
    let index = target.index;
    let started = Instant::now();
    let now = TokioInstant::now();
    if now >= run_deadline {
        return Outcome {
            target,
            probed: Probed::RunDeadline,
            elapsed: Duration::ZERO,
            index,
        };
    }
    let server_deadline = now + server_budget;
    let deadline = server_deadline.min(run_deadline);
    let client = client.with_credential(target.credential.clone());
    let read = tokio::time::timeout_at(deadline, mcp::probe(&client, &target.url, &options)).await;
    // The server's response time: the surface work below is ours, not the server's.
    let elapsed = started.elapsed();
    let probed = match read {
        Ok(Ok(observation)) => {
            drop(slots.network); // the network part is done: let the next server start
            prepare(&slots.preparers, observation, known).await
        }
        Ok(Err(failure)) => Probed::Failed(Box::new(failure)),
        Err(_) if run_deadline < server_deadline => Probed::RunDeadline,
        Err(_) => Probed::TimedOut,
    };
    Outcome {
        target,
        probed,
        elapsed,
        index,
    }
}

/// Builds the surface, its insight and record ([`Prepared::of`]): milliseconds of CPU per
/// server. It runs on the blocking pool, at most one per CPU, so the runtime's workers stay
/// free to read the answers of the servers in flight (and so release their slots on time)
/// instead of sharing the CPUs with a thread per finished probe.
async fn prepare(preparers: &Semaphore, observation: Observation, known: Known) -> Probed {
    // The semaphore is never closed, so acquiring cannot fail; if it did, work unthrottled.
    let _cpu = preparers.acquire().await.ok();
    let work = tokio::task::spawn_blocking(move || Prepared::of(observation, known));
    match work.await {
        Ok(Ok(prepared)) => Probed::Read(Box::new(prepared)),
        Ok(Err(problem)) => Probed::Unusable(problem),
        Err(error) => Probed::Crashed(error.to_string()),
    }
}

fn blocked_result(blocked: &BlockedEntry, now: DateTime<Utc>) -> ServerResult {
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
    }
}

/// The result of a registry remote published as a URL template.
fn templated_result(remote: &registry::RegistryRemote, now: DateTime<Utc>) -> ServerResult {
    ServerResult {
        row: templated_row(remote, now),
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
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
fn over_budget_result(target: &Target, ledger: &Ledger, now: DateTime<Utc>) -> ServerResult {
    let entry = ledger.entry(&target.ledger_key());
    ServerResult {
        row: ServerRow {
            server_url: target.key().to_string(),
            listing: Some(target.listing()),
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
    }
}

/// Pays for the servers of a run as they are recorded, one at a time.
///
/// The server list was capped so that every server read can pay its `server_checked`; the
/// change rows of one server may only use what is left beyond that reservation, or a server
/// recorded later would be compared without being paid for.
struct Payer<'a> {
    charging: &'a Charging,
    /// Servers not recorded yet, the one being settled included.
    unsettled: u64,
}

impl Payer<'_> {
    /// Pays for a checked server and its change rows. When the budget left after reserving
    /// `server_checked` for every unsettled server cannot pay for every change row, nothing is
    /// charged and `false` comes back: the caller then leaves the ledger entry as it was
    /// (`deferred`), so the next run reports the same changes.
    async fn settle(&self, change_rows: usize) -> bool {
        let rows = change_rows as u64;
        let reserve = [(EVENT_SERVER_CHECKED, self.unsettled)];
        if rows > 0
            && self
                .charging
                .affordable_with_reserve(EVENT_CHANGE_RECORDED, &reserve)
                < rows
        {
            return false;
        }
        charge(self.charging, EVENT_CHANGE_RECORDED, rows).await;
        charge(self.charging, EVENT_SERVER_CHECKED, 1).await;
        true
    }
}

/// The note on a deferred row.
fn deferred_note(change_rows: usize) -> String {
    format!(
        "{change_rows} changes found, but the maximum total charge cannot pay for all of them; \
         the ledger entry was kept so the next run reports them"
    )
}

fn base_row(now: DateTime<Utc>) -> ServerRow {
    ServerRow {
        record_type: "server",
        digest_algorithm: DIGEST_ALGORITHM,
        observed_at: Some(now),
        ..ServerRow::default()
    }
}

/// Turns one probe outcome into rows and a ledger update.
async fn record_outcome(
    storage: &impl Storage,
    payer: &Payer<'_>,
    ledger: &mut Ledger,
    input: &Input,
    outcome: Outcome,
    now: DateTime<Utc>,
) -> Result<ServerResult, RunError> {
    let key = outcome.target.ledger_key();
    let mut row = ServerRow {
        server_url: outcome.target.key().to_string(),
        listing: Some(outcome.target.listing()),
        response_time_ms: outcome.elapsed.as_millis() as u64,
        ..base_row(now)
    };
    if let Some(entry) = ledger.entry(&key) {
        row.previous_tool_digest = entry.tool_digest.clone();
        row.first_seen = Some(entry.first_seen);
        row.last_changed = entry.last_changed;
    }
    let result = match outcome.probed {
        Probed::Read(observation) => {
            let view = View { key: &key, row };
            return record_readable(storage, payer, ledger, input, view, *observation, now).await;
        }
        Probed::Failed(failure)
            if outcome.target.credential.is_some() && failure.error.auth_refusal().is_some() =>
        {
            rejected_row(row, *failure)
        }
        Probed::Failed(failure) if failure.error.reason_code() == ReasonCode::AuthRequired => {
            let view = View { key: &key, row };
            return Ok(record_auth_required(payer, ledger, input, view, *failure, now).await);
        }
        Probed::Failed(failure) => {
            row.reason_code = Some(failure.error.reason_code());
            row.error = Some(failure.error.to_string());
            row.http_status = failure.http_status;
            row.bytes_read = failure.bytes_read;
            row.final_url = failure.final_url.map(|u| u.to_string());
            row
        }
        Probed::TimedOut => ServerRow {
            reason_code: Some(ReasonCode::Timeout),
            error: Some(format!(
                "the server was not read within max_server_seconds ({}s)",
                input.max_server_time.as_secs()
            )),
            ..row
        },
        Probed::RunDeadline => ServerRow {
            reason_code: Some(ReasonCode::RunDeadline),
            error: Some(format!(
                "max_run_seconds ({}s) passed before this server was read",
                input.max_run_time.as_secs()
            )),
            ..row
        },
        Probed::Unusable(problem) => ServerRow {
            reason_code: Some(ReasonCode::ToolsListFailed),
            error: Some(problem),
            ..row
        },
        Probed::Crashed(message) => ServerRow {
            reason_code: Some(ReasonCode::ToolsListFailed),
            error: Some(format!(
                "internal error while probing (please report): {message}"
            )),
            ..row
        },
    };
    Ok(ServerResult {
        row: ServerRow {
            ledger_status: Some(LedgerStatus::Unavailable),
            ..result
        },
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
    })
}

/// The row being built for one server, with the ledger key of the view it read.
struct View<'a> {
    key: &'a str,
    row: ServerRow,
}

async fn record_readable(
    storage: &impl Storage,
    payer: &Payer<'_>,
    ledger: &mut Ledger,
    input: &Input,
    view: View<'_>,
    prepared: Prepared,
    now: DateTime<Utc>,
) -> Result<ServerResult, RunError> {
    let View { key, mut row } = view;
    let anonymous = row.listing != Some(Listing::Authenticated);
    let (_, risk, capabilities) = prepared.row_summaries();
    let Prepared {
        observation,
        surface,
        tool_digest: digest,
        surface_key,
        insight,
        repeated_keys,
        record,
    } = prepared;
    let identity_size = serde_json::to_vec(&surface.identity).map_or(0, |bytes| bytes.len());
    if identity_size > MAX_IDENTITY_BYTES {
        let why = format!(
            "its identity (name, title, version, instructions) is {identity_size} bytes, more \
             than the {MAX_IDENTITY_BYTES} a ledger entry keeps"
        );
        return Ok(unstorable_result(
            row,
            &observation,
            ReasonCode::ResponseTooLarge,
            &why,
        ));
    }
    let auth = AuthState {
        auth_required: false,
        anonymous_listing_allowed: true,
        ..AuthState::default()
    };
    let mut identity_signal = None;
    let mut lost_baseline = None;
    let (status, changes) = match ledger.entry(key) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => {
            let mut changes = diff::compare_auth(&entry.auth, &auth);
            let same_tools = entry.tool_digest.as_deref() == Some(digest.as_str());
            let previous = if !same_tools {
                match Ledger::load_surface(storage, entry).await {
                    Ok(previous) => previous,
                    // A record that is gone (swept, deleted by hand) starts a new baseline, and
                    // one `baseline_lost` change says the surface moved meanwhile.
                    Err(LedgerError::SurfaceGone { key }) => {
                        lost_baseline = Some(format!(
                            "the stored surface {key} is gone; a new baseline was recorded \
                             instead of a comparison"
                        ));
                        changes.push(crate::changes::baseline_lost(
                            entry.tool_digest.as_deref().unwrap_or_default(),
                            entry.tool_digests.as_ref(),
                            &digest,
                            &crate::ledger::tool_digests(&surface),
                        ));
                        None
                    }
                    // One that cannot be read keeps its entry, to be compared next run.
                    Err(LedgerError::SurfaceUnreadable { key, problem }) => {
                        let why = format!("its stored baseline {key} cannot be read ({problem})");
                        return Ok(unstorable_result(
                            row,
                            &observation,
                            ReasonCode::BaselineUnreadable,
                            &why,
                        ));
                    }
                    Err(error) => return Err(error.into()),
                }
            } else if entry.identity != surface.identity {
                Some(Surface {
                    identity: entry.identity.clone(),
                    ..surface.clone()
                })
            } else {
                None // nothing moved: no comparison needed
            };
            if let Some(previous) = previous {
                let set = crate::changes::between(&previous, &surface);
                identity_signal = set.identity_signal;
                changes.extend(set.changes);
            }
            let repeats = crate::changes::repeated_keys_gained(
                entry.repeated_keys.as_deref(),
                &repeated_keys,
                &entry.identity,
                &surface.identity,
            );
            identity_signal = identity_signal.or(repeats.identity_signal);
            changes.extend(repeats.changes);
            (LedgerStatus::Compared, changes)
        }
    };
    let status = match lost_baseline {
        Some(note) => {
            row.error = Some(note);
            LedgerStatus::Created
        }
        None => status,
    };
    let already_stored =
        ledger.entry(key).and_then(|e| e.surface_key.as_deref()) == Some(surface_key.as_str());
    let surface_record = if already_stored {
        None
    } else {
        let record = record.unwrap_or_else(|| StoredSurface::record_of(&surface));
        if record.bytes.len() > MAX_RECORD_BYTES {
            let why = format!(
                "as a ledger record it is {} bytes, more than the {MAX_RECORD_BYTES} a record \
                 may hold",
                record.bytes.len()
            );
            return Ok(unstorable_result(
                row,
                &observation,
                ReasonCode::ResponseTooLarge,
                &why,
            ));
        }
        Some(record)
    };
    let mut change_rows = alerted(input, &changes);
    let deferred = !payer.settle(change_rows.len()).await;
    let status = if deferred {
        row.error = Some(deferred_note(change_rows.len()));
        change_rows.clear();
        LedgerStatus::Deferred
    } else {
        status
    };
    let surface_write = surface_record
        .filter(|_| !deferred)
        .map(|record| (surface_key.clone(), record));
    let row_tools = RowTools {
        insight: insight.clone(),
        repeated_keys: repeated_keys.clone(),
    };
    let insight = (!deferred).then(|| (surface_key.clone(), insight));
    if !deferred {
        ledger.apply(
            key,
            now,
            Update::Readable {
                surface: &surface,
                tool_digest: digest.clone(),
                surface_key,
                era: observation.era,
                transport: observation.transport.clone(),
                auth: auth.clone(),
                repeated_keys,
            },
            &changes,
        );
    }
    let entry = ledger.entry(key);
    Ok(ServerResult {
        row: ServerRow {
            final_url: Some(observation.final_url.to_string()),
            ok: true,
            reason_code: Some(ReasonCode::Ok),
            http_status: Some(observation.http_status),
            transport: Some(observation.transport.clone()),
            protocol_version: Some(observation.protocol_version.clone()),
            protocol_era: Some(era_name(observation.era).to_string()),
            server_name: surface.identity.name.clone(),
            server_version: surface.identity.version.clone(),
            // An authenticated read says nothing about what an anonymous caller may do.
            anonymous_listing_allowed: anonymous.then_some(true),
            auth_required: anonymous.then_some(false),
            tools_total: Some(surface.tools.len()),
            invalid_tools_total: Some(surface.invalid_tools.len()),
            invalid_tools: surface.invalid_tools.clone(),
            resources_total: observation.resources_total,
            prompts_total: observation.prompts_total,
            digest_changed: row
                .previous_tool_digest
                .as_deref()
                .is_some_and(|p| p != digest),
            tool_digest: Some(digest),
            risk: Some(risk),
            capabilities,
            identity_signal,
            tools_truncated: observation.tools_truncated,
            ledger_status: Some(status),
            change_count: change_rows.len(),
            first_seen: entry.map(|e| e.first_seen),
            last_changed: entry.and_then(|e| e.last_changed),
            bytes_read: observation.bytes_read,
            ..row
        },
        changes: change_rows,
        surface_write,
        insight,
        tools: Some(row_tools),
    })
}

/// The row of a surface that was read but cannot be recorded (too large to keep, or its stored
/// baseline unreadable): nothing is charged and the entry stays as it was, so one such server
/// cannot stop the run from saving the others.
fn unstorable_result(
    row: ServerRow,
    observation: &Observation,
    code: ReasonCode,
    why: &str,
) -> ServerResult {
    ServerResult {
        row: ServerRow {
            final_url: Some(observation.final_url.to_string()),
            http_status: Some(observation.http_status),
            bytes_read: observation.bytes_read,
            reason_code: Some(code),
            error: Some(format!(
                "the surface was read, but {why}; its ledger entry was kept and it was not charged"
            )),
            ledger_status: Some(LedgerStatus::Unavailable),
            ..row
        },
        changes: Vec::new(),
        surface_write: None,
        insight: None,
        tools: None,
    }
}

async fn record_auth_required(
    payer: &Payer<'_>,
    ledger: &mut Ledger,
    input: &Input,
    view: View<'_>,
    failure: ProbeFailure,
    now: DateTime<Utc>,
) -> ServerResult {
    let View { key, row } = view;
    let findings = failure.auth.clone().unwrap_or_default();
    let known = ledger.entry(key).map(|e| &e.auth);
    let auth = protected_state(&findings, known);
    let (status, changes) = match ledger.entry(key) {
        None => (LedgerStatus::Created, Vec::new()),
        Some(entry) => (
            LedgerStatus::Compared,
            diff::compare_auth(&entry.auth, &auth),
        ),
    };
    let mut change_rows = alerted(input, &changes);
    let mut error = match findings.metadata.as_ref().and_then(|m| m.failure_note()) {
        Some(note) => format!("{}; {note}", failure.error),
        None => failure.error.to_string(),
    };
    let status = if payer.settle(change_rows.len()).await {
        let update = Update::AuthOnly { auth: auth.clone() };
        ledger.apply(key, now, update, &changes);
        status
    } else {
        error = format!("{error}; {}", deferred_note(change_rows.len()));
        change_rows.clear();
        LedgerStatus::Deferred
    };
    let entry = ledger.entry(key);
    ServerResult {
        row: ServerRow {
            reason_code: Some(ReasonCode::AuthRequired),
            error: Some(error),
            oauth_protected_resource_metadata_url: findings.metadata_url(),
            oauth_authorization_servers: auth.authorization_servers.clone(),
            oauth_scopes_supported: auth.scopes.clone(),
            http_status: failure.http_status,
            final_url: failure.final_url.map(|u| u.to_string()),
            bytes_read: failure.bytes_read,
            anonymous_listing_allowed: Some(false),
            auth_required: Some(true),
            ledger_status: Some(status),
            change_count: change_rows.len(),
            first_seen: entry.map(|e| e.first_seen),
            last_changed: entry.and_then(|e| e.last_changed),
            ..row
        },
        changes: change_rows,
        surface_write: None,
        insight: None,
        tools: None,
    }
}

/// The row of an authenticated view whose credential the server refused (401 or 403 with
/// it): `AUTH_REJECTED`, not charged, and the ledger entries of both views stay as they were.
fn rejected_row(row: ServerRow, failure: ProbeFailure) -> ServerRow {
    let findings = failure.auth.unwrap_or_default();
    let status = failure
        .http_status
        .map_or(String::new(), |s| format!(" (HTTP {s})"));
    ServerRow {
        reason_code: Some(ReasonCode::AuthRejected),
        error: Some(format!(
            "the server refused the credential given for its origin{status}; check or renew \
             it in `server_credentials`: {}",
            failure.error
        )),
        oauth_protected_resource_metadata_url: findings.metadata_url(),
        oauth_authorization_servers: findings.authorization_servers(),
        oauth_scopes_supported: findings.scopes(),
        http_status: failure.http_status,
        final_url: failure.final_url.map(|u| u.to_string()),
        bytes_read: failure.bytes_read,
        auth_required: Some(true),
        ..row
    }
}

/// The auth state of a server that refused the anonymous listing. When no metadata document
/// was read this time (switched off, unreachable), the lists stored for a server that was
/// already protected are kept: an unanswered metadata request is not an auth change. A first
/// observation without metadata records the challenge's `scope`.
fn protected_state(findings: &AuthFindings, known: Option<&AuthState>) -> AuthState {
    let (authorization_servers, scopes) = match known.filter(|k| k.auth_required) {
        Some(stored) if !findings.has_metadata() => {
            (stored.authorization_servers.clone(), stored.scopes.clone())
        }
        _ => (findings.authorization_servers(), findings.scopes()),
    };
    AuthState {
        auth_required: true,
        anonymous_listing_allowed: false,
        authorization_servers,
        scopes,
    }
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        Era::Classic => "classic",
        Era::LegacySse => "legacy_sse",
    }
}

/// The changes the user asked to see as rows.
fn alerted(input: &Input, changes: &[Change]) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| {
            // A lost baseline stands for changes of any class: always reported.
            c.change_class == ChangeClass::BaselineLost || input.alert_on.contains(&c.change_class)
        })
        .cloned()
        .collect()
}

fn log_verdict(row: &ServerRow) {
    let code = row.reason_code.map(|c| c.as_str()).unwrap_or("-");
    match &row.error {
        None => tracing::info!(
            server = %row.server_url,
            verdict = code,
            tools = row.tools_total.unwrap_or(0),
            changes = row.change_count,
            "server read"
        ),
        Some(error) => {
            tracing::warn!(server = %row.server_url, verdict = code, %error, "server not read")
        }
    }
}

/// How many dataset items are serialized before they are pushed.
const ITEMS_PER_PUSH: usize = 100;

/// Writes rows, OUTPUT, the report, the insight cache and, last, the ledger index (surface
/// records were written while outcomes were recorded).
async fn finish(
    storage: &impl Storage,
    charging: &Charging,
    ledger: &mut Ledger,
    insight: &mut InsightCache,
    input: &Input,
    fleet: &Fleet,
    results: Vec<ServerResult>,
) -> Result<RunOutcome, RunError> {
    let mut items = Vec::new();
    let mut server_rows = Vec::new();
    let mut change_rows = Vec::new();
    let mut gate_tripped = false;
    for result in results {
        gate_tripped |= input.fail_on.is_tripped_by_any(&result.changes);
        let observed_at = result.row.observed_at.unwrap_or_else(Utc::now);
        let rows: Vec<ChangeRow> = result
            .changes
            .iter()
            .map(|c| ChangeRow::of(&result.row.server_url, c, observed_at))
            .collect();
        // The per-tool summaries exist only while the row is serialized: the summary row and
        // the report do not use them.
        let mut row = result.row;
        if let Some(tools) = &result.tools {
            row.tools = tools.summaries();
        }
        items.push(Item::of(&row)?);
        row.tools = Vec::new();
        for change_row in &rows {
            items.push(Item::of(change_row)?);
        }
        server_rows.push(row);
        change_rows.extend(rows);
        if let Some((key, computed)) = result.insight {
            insight.insert(key, computed);
        }
        // Rows go out in input order, a batch at a time, so a large fleet's serialized rows
        // are not all held at once (the platform backend splits a push into requests anyway).
        if items.len() >= ITEMS_PER_PUSH {
            storage.push_items(&items).await?;
            items.clear();
        }
    }
    let mut summary = SummaryRow::tally(&server_rows, &change_rows);
    summary.alert_on = input.alert_on_names();
    summary.ledger_name = input.ledger_name.clone();
    summary.registry_skipped_stdio = fleet.skipped_stdio;
    summary.registry_error = fleet.registry_error.clone();
    summary.charges = charging.summary();
    items.push(Item::of(&summary)?);
    storage.push_items(&items).await?;
    let summary_bytes = serde_json::to_vec_pretty(&summary).unwrap_or_default();
    storage
        .put_record(Store::Default, "OUTPUT", Record::json(summary_bytes))
        .await?;
    let report = crate::report::html::render(&crate::report::html::Page::of_run(
        &summary,
        &server_rows,
        &change_rows,
    ));
    let report = Record {
        bytes: report.into_bytes(),
        content_type: "text/html; charset=utf-8".to_string(),
    };
    storage.put_record(Store::Default, "REPORT", report).await?;
    ledger.evict();
    // The cache keeps what the index names, the most recently seen servers first.
    let mut entries: Vec<_> = ledger.servers.values().collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
    insight.retain(entries.iter().filter_map(|e| e.surface_key.as_deref()));
    insight.save(storage, &input.ledger_name).await;
    ledger.save(storage).await?;
    match crate::sweep::sweep(storage, Utc::now()).await {
        Ok(0) => {}
        Ok(deleted) => tracing::info!(deleted, "unreferenced surface records swept"),
        Err(error) => tracing::warn!(%error, "surface records not swept"),
    }
    storage
        .set_status_message(&final_status(&summary), true)
        .await?;
    Ok(RunOutcome {
        summary,
        gate_tripped,
        failed_shards: 0,
    })
}

/// The terminal status message: the run's verdict in one line.
pub fn final_status(summary: &SummaryRow) -> String {
    let high = summary
        .changes_by_severity
        .get("high")
        .copied()
        .unwrap_or(0);
    let mut text = format!(
        "{} servers, {} changed ({} high), {} unreachable",
        summary.servers_requested, summary.servers_changed, high, summary.servers_unreachable
    );
    if summary.servers_requiring_auth > 0 {
        text.push_str(&format!(
            ", {} require auth",
            summary.servers_requiring_auth
        ));
    }
    if summary.servers_blocked > 0 {
        text.push_str(&format!(", {} blocked", summary.servers_blocked));
    }
    text
}
