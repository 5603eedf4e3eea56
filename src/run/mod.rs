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

mod charge;
mod cpu;
mod finish;
mod fleet;
mod outcome;
mod probe;
mod record;
mod rows;
mod unchanged;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant as TokioInstant;

use crate::gate::{ExitCondition, MetCondition, met_conditions};
use crate::input::{Input, InputError};
use crate::insight::InsightCache;
use crate::ledger::{Ledger, LedgerError};
use crate::mcp::Era;
use crate::net::{self, Lookup, PolicyMode};
use crate::platform::secrets::InputSecrets;
use crate::platform::{Charging, Storage, StorageError};
use crate::report::{SummaryRow, count_of};
use crate::targets::{self, Planned, TargetRules};
use charge::{Payer, charge};
use finish::finish;
use fleet::{blocked_result, over_budget_result, read_input, split_by_budget, templated_result};
use outcome::{Outcome, Probed, ServerResult};
use probe::{Backlog, Job, Room, SurfaceWriter, probe_jobs, probe_one};
use record::{log_verdict, record_outcome};
use rows::RowWriter;

pub use finish::final_status;
pub(crate) use finish::{announce, planned_notifications};
pub(crate) use fleet::{gather_fleet, http_client, templated_row};

/// Exit code of a run whose gate tripped.
pub const EXIT_GATE: i32 = 1;

/// Exit code of a run refused for bad input.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Exit code of a run that failed at runtime (storage, ledger).
pub const EXIT_RUNTIME: i32 = 3;

/// Exit code of a finished run whose evidence is incomplete in a way the scheduler asked to
/// hear about (`exit_nonzero_on`: `nothing_read`, `some_unreadable`, `auth_rejected`,
/// `registry_failed`).
pub const EXIT_INCOMPLETE: i32 = 4;

/// Exit code of a finished run whose ledger chain was not intact, when the scheduler asked to
/// hear about it (`exit_nonzero_on`: `chain_not_intact`).
pub const EXIT_CHAIN: i32 = 5;

/// How the operator started the run (never from INPUT).
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Key of the INPUT record in the default store.
    pub input_key: String,
    /// INPUT bytes given on the command line, replacing the stored record.
    pub input_override: Option<Vec<u8>>,
    /// Where `input_override` was read from (a file's path, or standard input), named in
    /// the message when the input is refused.
    pub input_file: Option<String>,
    /// Operator override: loopback and private targets may be contacted.
    pub allow_private_targets: bool,
    /// Test and diagnosis aid: speak only this protocol era.
    pub force_era: Option<Era>,
    /// Test and diagnosis aid: build, canonicalize and assess every surface, even when its
    /// answers are byte-identical to what the ledger recorded (no `run::unchanged` fast path).
    pub always_build_surfaces: bool,
    /// Test aid: resolve names through this lookup instead of the system resolver.
    pub lookup: Option<Arc<dyn Lookup>>,
    /// The key that decrypts secret input fields (Apify platform runs).
    pub input_secrets: InputSecrets,
    /// On the Apify platform: the runs of this Actor that a sharded watch starts, one per
    /// shard. `None` runs the shards in this process.
    pub shard_runs: Option<crate::platform::Runs>,
    /// Shared by every run started with (clones of) these options.
    pub finish_turn: FinishTurn,
    /// A link to this run (its Apify Console page), for `notify` messages; `None` locally.
    pub run_url: Option<String>,
    /// `--notify FILE`: destinations that replace INPUT's `notify` (local runs).
    pub notify_override: Option<Vec<crate::notify::Destination>>,
    /// Test aid: how persistent `notify` deliveries are (default: [`crate::notify::DeliveryPolicy::default`]).
    pub notify_policy: Option<crate::notify::DeliveryPolicy>,
}

/// The right to run the finishing stage: shards run in one process take turns, since
/// finishing (rows, REPORT, insight cache and ledger serialized and written) is the peak of a
/// run's memory, and two shards finishing at once held both peaks together.
#[derive(Clone)]
pub struct FinishTurn(Arc<tokio::sync::Semaphore>);

impl Default for FinishTurn {
    fn default() -> Self {
        FinishTurn(Arc::new(tokio::sync::Semaphore::new(1)))
    }
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
    /// Servers whose answers were byte-identical to what their ledger entry recorded, so
    /// their surface was not built, canonicalized or assessed again (`run::unchanged`); for
    /// tests and benchmarks, never in a row. A sharded watch says 0 (each shard run counts
    /// its own).
    pub surfaces_reused: usize,
}

impl RunOutcome {
    /// The process exit code of a run that finished, with no `exit_nonzero_on` condition
    /// asked: [`EXIT_RUNTIME`] when shards failed or when the fleet source (the MCP Registry)
    /// failed and no server was checked (a scheduler must not see that as all-clear),
    /// [`EXIT_GATE`] when the gate tripped, else 0.
    pub fn exit_code(&self) -> i32 {
        self.verdict(&[]).code
    }

    /// The exit code of a run that finished under the scheduler's `exit_nonzero_on`
    /// conditions, and why. When several apply, the highest in this order wins:
    /// [`EXIT_CHAIN`] (5: a chain found not intact is reported only by the run that finds it,
    /// so nothing may hide it), [`EXIT_RUNTIME`] (3: part of the run failed; run it again),
    /// [`EXIT_INCOMPLETE`] (4: the evidence is incomplete, so a clean gate means little),
    /// [`EXIT_GATE`] (1), 0.
    pub fn verdict(&self, asked: &[ExitCondition]) -> ExitVerdict {
        let met = met_conditions(asked, &self.summary);
        let chain = met.iter().any(|m| m.condition.is_about_the_chain());
        let runtime = self.failed_shards > 0 || self.fleet_source_failed();
        let code = if chain {
            EXIT_CHAIN
        } else if runtime {
            EXIT_RUNTIME
        } else if !met.is_empty() {
            EXIT_INCOMPLETE
        } else if self.gate_tripped {
            EXIT_GATE
        } else {
            0
        };
        ExitVerdict {
            code,
            met,
            gate_tripped: self.gate_tripped,
        }
    }

    /// The registry could not be read and no server was checked.
    pub fn fleet_source_failed(&self) -> bool {
        self.summary.registry_error.is_some() && self.summary.servers_checked == 0
    }
}

/// The exit code of a finished run and the `exit_nonzero_on` conditions it met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitVerdict {
    /// The process exit code.
    pub code: i32,
    /// The asked conditions the run met, in the documented order.
    pub met: Vec<MetCondition>,
    /// Whether the `fail_on` gate tripped (its code 1 may have been outranked).
    pub gate_tripped: bool,
}

impl ExitVerdict {
    /// What the status message adds when a condition was met: the exit code, each condition
    /// with its evidence, and a tripped gate the code outranked. `None` when no condition was
    /// met (the status message says everything else already).
    pub fn explanation(&self) -> Option<String> {
        if self.met.is_empty() {
            return None;
        }
        let conditions: Vec<String> = self
            .met
            .iter()
            .map(|m| format!("{} ({})", m.condition.as_str(), m.evidence))
            .collect();
        let conditions = conditions.join(", ");
        let mut text = if matches!(self.code, EXIT_INCOMPLETE | EXIT_CHAIN) {
            format!("exit code {} for exit_nonzero_on: {conditions}", self.code)
        } else {
            format!(
                "exit code {} for the run failure, which outranks exit_nonzero_on: {conditions}",
                self.code
            )
        };
        if self.gate_tripped && self.code != EXIT_GATE {
            text.push_str("; the fail_on gate tripped too");
        }
        Some(text)
    }
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
    /// The run cannot start in this environment (e.g. a sharded watch on the platform without
    /// the Actor id its shard runs need).
    #[error("{0}")]
    Setup(String),
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

/// The pay-per-event events of seed 000.
pub const EVENT_RUN_START: &str = "run_start";

/// Charged once per server whose ledger status is `created` or `compared`.
pub const EVENT_SERVER_CHECKED: &str = "server_checked";

/// Charged once per change row.
pub const EVENT_CHANGE_RECORDED: &str = "surface_change_recorded";

/// How often the progress status message may be updated while probing.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// Reads and validates INPUT; a refused input is also the terminal status message. Returns
/// the input and the input as given (secret fields still encrypted), which a sharded watch
/// passes on to its shard runs.
pub async fn read_checked_input(
    storage: &impl Storage,
    options: &RunOptions,
) -> Result<(Input, serde_json::Value), RunError> {
    match read_input(storage, options).await {
        Ok(read) => Ok(read),
        Err(error) => {
            let message = format!("Input refused: fix {}", error.fields().join(", "));
            storage.set_status_message(&message, true).await?;
            Err(error.into())
        }
    }
}

/// What one run holds from its start to its end, handed to the stages instead of loose
/// arguments: where it stores and charges, how it reaches servers, what the user and the
/// operator asked, the ledger and insight cache it updates, and the time its rows carry.
pub(crate) struct RunContext<'a, S: Storage> {
    /// The default dataset and stores, and the ledger store.
    pub(crate) storage: &'a S,
    /// Pay-per-event charging (dry run outside the platform).
    pub(crate) charging: &'a Charging,
    /// The validated INPUT.
    pub(crate) input: Input,
    /// The operator's choices.
    pub(crate) options: &'a RunOptions,
    /// The ledger index, updated in memory and written once at the end.
    pub(crate) ledger: Ledger,
    /// The per-surface insight cache.
    pub(crate) insight: InsightCache,
    /// When the run started: every row of the run carries it.
    pub(crate) now: DateTime<Utc>,
}

/// One run over a validated input (the whole watch, or one shard of it).
pub async fn run_with_input(
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
    // The client lives until the last probe: its pool of idle connections (and their read
    // buffers) is gone before the run finishes.
    let client = http_client(&input, options)?;
    let mut ctx = RunContext {
        storage,
        charging,
        ledger: Ledger::load(storage, &input.ledger_name).await?,
        insight: InsightCache::load(storage, &input.ledger_name).await,
        input,
        options,
        now: Utc::now(),
    };
    ctx.ledger.retention_days = Some(ctx.input.history_retention_days);
    let witnesses = previous_witnesses(storage, &ctx.input.ledger_name).await;
    crate::chain::open(
        &mut ctx.ledger,
        ctx.input.ledger_signing_key.clone(),
        &witnesses,
    );
    let fleet = gather_fleet(storage, &client, &ctx.input).await;
    let planned = targets::plan(&fleet.entries, &rules);

    charge(charging, EVENT_RUN_START, 1).await;
    let (probe_targets, over_budget) =
        split_by_budget(&planned, charging.affordable(EVENT_SERVER_CHECKED));
    let now = ctx.now;
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
        results.push((target.index, over_budget_result(target, &ctx.ledger, now)));
    }
    // Rows go out in input order as the outcomes arrive (`run::rows`).
    let expected = results
        .iter()
        .map(|(index, _)| *index)
        .chain(probe_targets.iter().map(|target| target.index))
        .collect();
    let mut rows = RowWriter::new(expected, fleet.registry_names.clone(), ctx.input.fail_on);
    for (index, result) in results {
        log_verdict(&result.row);
        rows.add(storage, index, result).await?;
    }
    let jobs = probe_jobs(&ctx, probe_targets);
    probe_and_record(&mut ctx, client, jobs, &mut rows).await?;
    // The semaphore is never closed; if it were, finish without waiting.
    let _turn = options.finish_turn.0.acquire().await.ok();
    finish(&mut ctx, &fleet, rows).await
}

/// The heads of `ledger_name` a run finds outside the ledger store: the summary row the
/// previous run left as `OUTPUT` in the default store. Locally the default store outlives a
/// run, so a write made after the last run (a forged next write) shows as unwitnessed; on the
/// platform each run has a store of its own and none is found here (`verify` reads past runs).
/// An `OUTPUT` of another ledger, or none, gives nothing to compare.
async fn previous_witnesses(
    storage: &impl Storage,
    ledger_name: &str,
) -> Vec<crate::chain::Witness> {
    let record = match storage
        .get_record(crate::platform::Store::Default, "OUTPUT")
        .await
    {
        Ok(Some(record)) => record,
        Ok(None) => return Vec::new(),
        Err(error) => {
            tracing::warn!("cannot read the previous run's OUTPUT to check the chain: {error}");
            return Vec::new();
        }
    };
    let Ok(row) = serde_json::from_slice::<serde_json::Value>(&record.bytes) else {
        tracing::warn!(
            "the previous run's OUTPUT is not JSON: the chain is checked against itself only"
        );
        return Vec::new();
    };
    match crate::chain::heads::witnesses_in(&[row], ledger_name, |_| {
        "the previous run's summary (OUTPUT)".to_string()
    }) {
        Ok(witnesses) => witnesses,
        Err(problem) => {
            tracing::warn!(
                "the previous run's OUTPUT names no usable head ({problem}): the chain is checked against itself only"
            );
            Vec::new()
        }
    }
}

/// Probes every target with at most `concurrency` in flight, under both deadlines, and records
/// each outcome as soon as it arrives. Probes run as their own tasks, so recording one server
/// never holds up the others.
async fn probe_and_record<S: Storage>(
    ctx: &mut RunContext<'_, S>,
    client: net::Client,
    jobs: Vec<Job>,
    rows: &mut RowWriter,
) -> Result<(), RunError> {
    let (storage, charging) = (ctx.storage, ctx.charging);
    let run_deadline = TokioInstant::now() + ctx.input.max_run_time;
    let total = jobs.len();
    let server_budget = ctx.input.max_server_time;
    // A feeder hands out `concurrency` slots in input order; each probe then runs as its own
    // task and reports back through a channel, so recording one outcome never holds up the
    // next probe, and servers late in the list are the ones a run deadline cuts.
    let slots = Arc::new(Semaphore::new(ctx.input.concurrency));
    let backlog = Backlog::new(ctx.input.concurrency);
    let (report, mut outcomes) = mpsc::unbounded_channel::<(Outcome, Option<Room>)>();
    tokio::spawn(async move {
        for job in jobs {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let report = report.clone();
            let (client, backlog) = (client.clone(), backlog.clone());
            tokio::spawn(async move {
                let (index, fallback) = (job.target.index, job.target.clone());
                let probe = probe_one(client, slot, backlog, job, server_budget, run_deadline);
                let reported = tokio::spawn(probe).await.unwrap_or_else(|error| {
                    let outcome = Outcome {
                        target: fallback,
                        probed: Probed::Crashed(error.to_string()),
                        elapsed: Duration::ZERO,
                        index,
                    };
                    (outcome, None)
                });
                // The receiver lives until every sender is gone; a failed send cannot happen.
                let _ = report.send(reported);
            });
        }
    });
    let mut recorded = 0usize;
    let mut changes_seen = 0usize;
    let mut last_progress = Instant::now();
    let mut surfaces = SurfaceWriter::new(storage);
    loop {
        let outcome = tokio::select! {
            written = surfaces.next_done() => {
                written?;
                continue;
            }
            reported = outcomes.recv() => match reported {
                Some(reported) => reported,
                None => break,
            },
        };
        // `_room` is given up at the end of this turn, once the outcome is recorded.
        let (outcome, _room) = outcome;
        let index = outcome.index;
        let payer = Payer {
            charging,
            unsettled: (total - recorded) as u64,
        };
        let mut result = record_outcome(ctx, &payer, outcome).await?;
        if let Some((key, record)) = result.surface_write.take() {
            surfaces.write(key, record).await?;
        }
        if let Some((key, computed)) = result.insight.take() {
            ctx.insight.insert(key, computed);
        }
        log_verdict(&result.row);
        changes_seen += result.changes.len();
        recorded += 1;
        rows.add(storage, index, result).await?;
        // The first verdict is reported at once (the user sees the run move), later ones at
        // most every PROGRESS_INTERVAL, which keeps status calls cheap for large fleets.
        if recorded == 1 || last_progress.elapsed() >= PROGRESS_INTERVAL {
            last_progress = Instant::now();
            let message = format!(
                "Checked {recorded}/{total} servers, {}",
                count_of(changes_seen, "change")
            );
            if let Err(error) = storage.set_status_message(&message, false).await {
                tracing::warn!(%error, "cannot update the status message");
            }
        }
    }
    surfaces.finish().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(gate_tripped: bool, failed_shards: usize) -> RunOutcome {
        let mut summary = SummaryRow::tally(&[], &[]);
        summary.servers_checked = 1;
        RunOutcome {
            summary,
            gate_tripped,
            failed_shards,
            surfaces_reused: 0,
        }
    }

    #[test]
    fn the_chain_wins_then_a_runtime_failure_then_incomplete_evidence_then_the_gate() {
        let asked = ExitCondition::ALL;
        let unreadable = |mut o: RunOutcome| {
            o.summary.servers_unreachable = 1;
            o
        };
        let broken = |mut o: RunOutcome| {
            o.summary.chain.ledger_chain_status = Some("broken".into());
            o
        };
        // (outcome, conditions asked, exit code)
        let cases: Vec<(RunOutcome, &[ExitCondition], i32)> = vec![
            (outcome(false, 0), &asked, 0),
            (outcome(true, 0), &asked, EXIT_GATE),
            (unreadable(outcome(true, 0)), &[], EXIT_GATE),
            (unreadable(outcome(false, 0)), &[], 0),
            (unreadable(outcome(true, 0)), &asked, EXIT_INCOMPLETE),
            (unreadable(outcome(true, 1)), &asked, EXIT_RUNTIME),
            (outcome(false, 1), &[], EXIT_RUNTIME),
            (broken(outcome(false, 0)), &[], 0),
            (broken(unreadable(outcome(true, 1))), &asked, EXIT_CHAIN),
            (
                broken(unreadable(outcome(true, 0))),
                &[ExitCondition::SomeUnreadable],
                EXIT_INCOMPLETE,
            ),
        ];
        for (outcome, asked, code) in cases {
            let verdict = outcome.verdict(asked);
            assert_eq!(verdict.code, code, "{asked:?} {outcome:?}");
            assert_eq!(verdict.explanation().is_some(), !verdict.met.is_empty());
        }
        let explained = |outcome: RunOutcome| outcome.verdict(&asked).explanation().unwrap();
        assert_eq!(
            explained(unreadable(outcome(true, 0))),
            "exit code 4 for exit_nonzero_on: some_unreadable (1 unreachable); the fail_on gate \
             tripped too"
        );
        assert_eq!(
            explained(unreadable(outcome(false, 2))),
            "exit code 3 for the run failure, which outranks exit_nonzero_on: some_unreadable \
             (1 unreachable)"
        );
        assert_eq!(outcome(true, 0).exit_code(), EXIT_GATE);
    }
}
