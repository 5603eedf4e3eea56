//! Sharded watch: one fleet split over several runs, each with its own ledger.
//!
//! ```text
//! INPUT (shards = N, or 0: chosen) ─► fleet (servers + registry) ─► placement::place
//!   ─► moves::settle (entries of servers that changed shard move first)
//!   ─► per shard: reuse (interrupted round) or run it ─ on the platform: a run of this Actor
//!      (POST /v2/acts/{id}/runs, budget share), locally: a task of this process
//!   ─► merged rows + one merged summary row, OUTPUT, REPORT ─► round record (last)
//! ```
//!
//! Shard `k` keeps the ledger `<ledger_name>-shard-<k>`. A server goes to the shard its URL
//! ranks first that has room (at most 1000 servers each), so no shard run refuses its INPUT;
//! a server that changes shard keeps its ledger entry and history. The watch's own ledger
//! `<ledger_name>` (where a run with `shards: 1` keeps every entry) and an earlier build's
//! `<ledger_name>-shard-<k>-of-<n>` ledgers are locations of the placement too
//! ([`plan::location_ledger_name`]), so growing from one run to shards and back moves entries
//! like any change of shards ([`plain`] for the way back). The shards' maximum charges are equal shares of what the
//! coordinator has left, so together they never exceed its own maximum.

pub mod fence;
pub mod local;
pub mod moves;
pub mod placement;
pub mod plain;
pub mod plan;
pub mod remote;
pub mod round;
pub mod rows;

use std::collections::HashMap;
use std::future::Future;

use chrono::Utc;
use serde_json::{Value, json};

use crate::input::{AUTO_SHARDS, Input};
use crate::platform::{Charging, Item, Record, Rounding, Storage, Store, Usd};
use crate::registry::Fleet;
use crate::report::sarif;
use crate::report::{ChainAnchor, ChangeRow, ServerRow, ShardOutcome, SummaryRow};
use crate::run::{self, EVENT_RUN_START, RunError, RunOptions, RunOutcome};
use placement::Placement;
use plan::ShardJob;
use round::{EMPTY, FAILED, GATE_TRIPPED, REUSED, Round, SUCCEEDED, ShardRecord};
use rows::ShardRows;

/// How a shard's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardEnd {
    /// It finished; its rows are complete.
    Succeeded {
        /// Whether its `fail_on` gate tripped.
        gate_tripped: bool,
    },
    /// It failed; why.
    Failed(String),
}

/// What one shard's run left behind.
#[derive(Debug, Clone)]
pub struct ShardRun {
    /// How it ended.
    pub end: ShardEnd,
    /// The platform run, if it was one.
    pub run_id: Option<String>,
    /// That run's dataset.
    pub dataset_id: Option<String>,
    /// Its rows.
    pub rows: ShardRows,
}

/// Runs one shard: as a platform run ([`remote::PlatformRuns`]) or in this process
/// ([`local::InProcess`]).
pub trait ShardRunner {
    /// Runs `job` with at most `budget` charged, and returns how it ended.
    fn run_shard(&self, job: &ShardJob, budget: Option<Usd>) -> impl Future<Output = ShardRun>;
}

/// Why a sharded watch could not start.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// On the platform, shard runs are started as runs of this Actor, whose id must be known.
    #[error(
        "`shards` above 1 needs ACTOR_ID on the Apify platform (the Actor whose runs are the shards); it is not set"
    )]
    NoActorId,
    /// Ledger entries of servers that changed shard could not be moved.
    #[error(transparent)]
    Move(#[from] moves::MoveError),
}

impl From<ShardError> for RunError {
    fn from(error: ShardError) -> Self {
        RunError::Setup(error.to_string())
    }
}

/// Runs a sharded watch: the coordinator of `input.shards` shard runs.
pub async fn coordinate(
    storage: &impl Storage,
    charging: &Charging,
    options: &RunOptions,
    input: Input,
    raw_input: Value,
) -> Result<RunOutcome, RunError> {
    if options.shard_runs.is_none() && !charging.is_dry_run() {
        // Shards in this process would charge nothing through the platform.
        return Err(ShardError::NoActorId.into());
    }
    let started = Utc::now();
    let client = run::http_client(&input, options)?;
    let fleet = run::gather_fleet(storage, &client, &input).await;
    if let Err(error) = charging.charge(EVENT_RUN_START, 1).await {
        tracing::warn!(%error, "run_start not charged");
    }
    let of = plan::shard_count(input.shards, fleet.entries.len());
    let target = placement::place(&fleet.entries, of);
    let jobs = plan::split(&fleet, &target, &input.ledger_name);
    let stored = Round::load(storage, &input.ledger_name)
        .await
        .unwrap_or_else(|| Round::new(of, Utc::now(), Vec::new(), Placement::default()));
    let signer = input.ledger_signing_key.clone();
    let (previous, moved) = moves::settle(storage, &input.ledger_name, stored, target, signer)
        .await
        .map_err(ShardError::from)?;
    // Shards without servers do not run (a platform run would cost a start for nothing).
    let (reused, to_run): (Vec<&ShardJob>, Vec<&ShardJob>) = jobs
        .iter()
        .filter(|job| !job.entries.is_empty())
        .partition(|job| previous.reusable(job).is_some());
    tracing::info!(
        shards = jobs.len(),
        run = to_run.len(),
        reused = reused.len(),
        servers = fleet.entries.len(),
        "sharded watch"
    );
    let mut progress = format!(
        "Running {} shards of {} servers ({} reused from the interrupted round)",
        to_run.len(),
        fleet.entries.len(),
        reused.len()
    );
    if input.shards == AUTO_SHARDS {
        progress.push_str(&format!("; {of} shards chosen for the fleet"));
    }
    if let Err(error) = storage.set_status_message(&progress, false).await {
        tracing::warn!(%error, "cannot update the status message");
    }
    let budgets = plan::budget_shares(charging.remaining(), to_run.len());
    let context = RunContext {
        options,
        input: &input,
        raw_input: &raw_input,
        registry_names: &registry_names(&fleet),
    };
    let runs = run_shards(storage, charging, &context, &to_run, &budgets).await;
    let mut runs: HashMap<usize, ShardRun> = to_run.iter().map(|job| job.shard).zip(runs).collect();
    let mut merged = Merged::new(&fleet);
    for job in &jobs {
        let mut record = match runs.remove(&job.shard) {
            Some(run) => merged.add_run(job, run),
            None if job.entries.is_empty() => empty_record(job),
            None => merged.add_reused(job, previous.reusable(job)),
        };
        if let Some(anchor) = moved.get(&job.ledger_name) {
            note_move(&mut record.outcome.chain, anchor);
        }
        merged.records.push(record);
    }
    // Ledgers the move wrote that no shard of this round runs (the watch's own ledger, an
    // earlier build's, a removed shard's): their last write is the move's, witnessed here.
    merged.retired = moved
        .iter()
        .filter(|(name, _)| !jobs.iter().any(|job| &job.ledger_name == *name))
        .map(|(name, anchor)| plain::retired_item(&input.ledger_name, name, anchor))
        .collect();
    let started_at = if !previous.is_complete() && previous.of == of {
        previous.started_at
    } else {
        Utc::now()
    };
    let mut round = Round::new(of, started_at, merged.records.clone(), previous.placement);
    round.forget_changes_when_complete();
    let chosen = (input.shards == AUTO_SHARDS).then_some(of);
    // The watch's own status record holds the rows no shard makes (registry templates).
    let own_rows = merged.own_rows.clone();
    let summary =
        write_merged(storage, charging, (&input, options), &fleet, chosen, merged).await?;
    let no_entry = |_: &str| None;
    crate::server_status::record_run(storage, &input.ledger_name, started, &own_rows, no_entry)
        .await;
    round.save(storage, &input.ledger_name).await?;
    Ok(RunOutcome {
        summary,
        gate_tripped: round
            .shards
            .iter()
            .any(|r| r.outcome.status == GATE_TRIPPED),
        failed_shards: round.shards.iter().filter(|r| !r.succeeded()).count(),
        surfaces_reused: 0,
    })
}

/// Takes the chain fields of a move's write into a shard's: they are the shard's anchor when no
/// run wrote its ledger after the move, and a break the move found is named either way (the
/// shard's run then found the chain the move started again).
fn note_move(chain: &mut ChainAnchor, moved: &ChainAnchor) {
    if chain.ledger_chain_head.is_none() {
        *chain = moved.clone();
    } else if moved.ledger_chain_break.is_some() {
        chain.ledger_chain_status = moved.ledger_chain_status.clone();
        chain.ledger_chain_break = moved.ledger_chain_break.clone();
    }
}

/// What every shard's run is made from.
struct RunContext<'a> {
    options: &'a RunOptions,
    input: &'a Input,
    raw_input: &'a Value,
    registry_names: &'a HashMap<String, String>,
}

/// The registry name of each registry entry of the fleet, by its URL.
fn registry_names(fleet: &Fleet) -> HashMap<String, String> {
    fleet
        .entries
        .iter()
        .zip(&fleet.registry_names)
        .filter_map(|(entry, name)| Some((entry.as_str()?.to_string(), name.clone()?)))
        .collect()
}

/// Runs the shards as platform runs when the platform is there, else in this process.
async fn run_shards(
    storage: &impl Storage,
    charging: &Charging,
    context: &RunContext<'_>,
    jobs: &[&ShardJob],
    budgets: &[Option<Usd>],
) -> Vec<ShardRun> {
    match &context.options.shard_runs {
        Some(runs) => {
            let runner = remote::PlatformRuns {
                runs,
                input: context.raw_input,
                registry_names: context.registry_names,
            };
            run_all(&runner, jobs, budgets).await
        }
        None => {
            let runner = local::InProcess {
                storage,
                charging,
                options: context.options,
                input: context.input,
                registry_names: context.registry_names,
            };
            run_all(&runner, jobs, budgets).await
        }
    }
}

/// Runs every job at once (platform runs in parallel, or tasks of this process).
async fn run_all(
    runner: &impl ShardRunner,
    jobs: &[&ShardJob],
    budgets: &[Option<Usd>],
) -> Vec<ShardRun> {
    futures::future::join_all(
        jobs.iter()
            .zip(budgets)
            .map(|(job, budget)| runner.run_shard(job, *budget)),
    )
    .await
}

/// The merged result of the shards, built shard by shard.
struct Merged {
    summary: SummaryRow,
    /// Rows the coordinator makes itself (registry templates), written after the shards'.
    own_rows: Vec<ServerRow>,
    /// Every server row, without per-tool summaries (for the REPORT).
    servers: Vec<ServerRow>,
    changes: Vec<ChangeRow>,
    /// Shard items not written to the dataset yet.
    pending: Vec<Item>,
    shard_charges: Vec<Value>,
    records: Vec<ShardRecord>,
    /// `shards[]` items of ledgers the watch no longer runs, whose last write was a move.
    retired: Vec<ShardOutcome>,
}

impl Merged {
    /// Starts with the rows the coordinator makes itself: registry templates.
    fn new(fleet: &Fleet) -> Merged {
        let now = Utc::now();
        let servers: Vec<ServerRow> = fleet
            .templated
            .iter()
            .map(|remote| run::templated_row(remote, now))
            .collect();
        Merged {
            summary: SummaryRow::tally(&servers, &[]),
            own_rows: servers.clone(),
            servers,
            changes: Vec::new(),
            pending: Vec::new(),
            shard_charges: Vec::new(),
            records: Vec::new(),
            retired: Vec::new(),
        }
    }

    /// Takes in the rows of a shard that ran now.
    fn add_run(&mut self, job: &ShardJob, run: ShardRun) -> ShardRecord {
        let mut outcome = outcome_for(job, run.run_id, run.dataset_id);
        let first_change = self.changes.len();
        let summary = match run.end {
            ShardEnd::Succeeded { gate_tripped } => match self.take_rows(run.rows) {
                Ok(summary) => {
                    outcome.status = if gate_tripped {
                        GATE_TRIPPED
                    } else {
                        SUCCEEDED
                    }
                    .into();
                    Some(summary)
                }
                Err(why) => {
                    outcome.error = Some(why);
                    None
                }
            },
            ShardEnd::Failed(why) => {
                outcome.error = Some(why);
                None
            }
        };
        if let Some(summary) = &summary {
            self.summary.absorb(summary);
            self.shard_charges.push(summary.charges.clone());
            outcome.chain = summary.chain.clone();
        } else {
            tracing::error!(
                shard = job.ledger_name,
                error = outcome.error.as_deref().unwrap_or(""),
                "shard failed"
            );
            self.summary.servers_requested += job.entries.len();
        }
        let changes = kept_changes(job, &self.changes[first_change..]);
        ShardRecord {
            entries_digest: job.entries_digest(),
            outcome,
            summary,
            changes,
        }
    }

    /// Takes in a shard reused from the interrupted round (counts only: its rows were written
    /// by the run that read it).
    fn add_reused(&mut self, job: &ShardJob, earlier: Option<&ShardRecord>) -> ShardRecord {
        let Some(earlier) = earlier.filter(|e| e.summary.is_some()) else {
            // Not reachable: only reusable shards are not run. Reported as failed, not hidden.
            let mut outcome = outcome_for(job, None, None);
            outcome.error = Some("no earlier result to reuse".into());
            self.summary.servers_requested += job.entries.len();
            return ShardRecord {
                entries_digest: job.entries_digest(),
                outcome,
                summary: None,
                changes: Vec::new(),
            };
        };
        let mut record = earlier.clone();
        record.outcome.status = REUSED.into();
        if let Some(summary) = &record.summary {
            self.summary.absorb(summary);
        }
        // Its changes go into the merged REPORT and REPORT.sarif again (its rows do not).
        self.changes.extend(record.changes.iter().cloned());
        record
    }

    /// Takes in a shard's rows; returns its summary row.
    fn take_rows(&mut self, rows: ShardRows) -> Result<SummaryRow, String> {
        let summary = rows.summary.ok_or("the shard's run wrote no summary row")?;
        self.servers.extend(rows.servers);
        self.changes.extend(rows.changes);
        self.pending.extend(rows.pending);
        Ok(summary)
    }

    /// Shards that failed.
    fn failed(&self) -> usize {
        self.records.iter().filter(|r| !r.succeeded()).count()
    }
}

/// The record of a shard without servers.
fn empty_record(job: &ShardJob) -> ShardRecord {
    let mut outcome = outcome_for(job, None, None);
    outcome.status = EMPTY.into();
    ShardRecord {
        entries_digest: job.entries_digest(),
        outcome,
        summary: Some(SummaryRow::tally(&[], &[])),
        changes: Vec::new(),
    }
}

/// The change rows of a shard's run the round record keeps: all of them when they take at most
/// its share of [`round::KEPT_CHANGES_BYTES`], else none (the shard's dataset still has them).
fn kept_changes(job: &ShardJob, changes: &[ChangeRow]) -> Vec<ChangeRow> {
    let share = round::KEPT_CHANGES_BYTES / job.of.max(1);
    let size = serde_json::to_vec(changes).map_or(usize::MAX, |bytes| bytes.len());
    if size <= share {
        changes.to_vec()
    } else {
        tracing::warn!(
            shard = job.ledger_name,
            bytes = size,
            "the shard's change rows are too large to keep for a resumed round's REPORT"
        );
        Vec::new()
    }
}

/// A shard's outcome before its status is known (failed until shown otherwise).
fn outcome_for(job: &ShardJob, run_id: Option<String>, dataset_id: Option<String>) -> ShardOutcome {
    ShardOutcome {
        shard: job.shard,
        ledger_name: job.ledger_name.clone(),
        servers: job.entries.len(),
        status: FAILED.into(),
        run_id,
        dataset_id,
        error: None,
        chain: ChainAnchor::default(),
    }
}

/// How many merged dataset items are pushed at once.
const ITEMS_PER_PUSH: usize = 100;

/// Writes the merged rows, the summary row, OUTPUT, REPORT and the status message; returns the
/// summary row.
async fn write_merged(
    storage: &impl Storage,
    charging: &Charging,
    (input, options): (&Input, &RunOptions),
    fleet: &Fleet,
    shards_chosen: Option<usize>,
    mut merged: Merged,
) -> Result<SummaryRow, RunError> {
    let failed = merged.failed();
    let summary = &mut merged.summary;
    summary.alert_on = input.alert_on_names();
    summary.ledger_name = input.ledger_name.clone();
    summary.servers_from_registry =
        fleet.registry_names.iter().flatten().count() + fleet.templated.len();
    summary.registry_skipped_stdio = fleet.skipped_stdio;
    summary.registry_error = fleet.registry_error.clone();
    summary.registry_truncated = fleet.registry_truncated.map(|t| t.to_string());
    summary.charges = merge_charges(charging.summary(), &merged.shard_charges);
    summary.shards = Some(
        merged
            .records
            .iter()
            .map(|r| r.outcome.clone())
            .chain(merged.retired.iter().cloned())
            .collect(),
    );
    summary.shards_failed = Some(failed);
    summary.shards_chosen = shards_chosen;
    summary.observed_at = Utc::now();
    summary.notifications = run::planned_notifications(input, &merged.changes);

    // The shards' rows not written yet, a batch at a time, then the coordinator's own rows and
    // the summary, last.
    let pending = std::mem::take(&mut merged.pending);
    for batch in pending.chunks(ITEMS_PER_PUSH) {
        storage.push_items(batch).await?;
    }
    let mut items = Vec::with_capacity(merged.own_rows.len() + 1);
    for row in &merged.own_rows {
        items.push(Item::of(row)?);
    }
    items.push(Item::of(&merged.summary)?);
    storage.push_items(&items).await?;
    let summary_bytes = serde_json::to_vec_pretty(&merged.summary).unwrap_or_default();
    storage
        .put_record(Store::Default, "OUTPUT", Record::json(summary_bytes))
        .await?;
    let page = crate::report::html::Page::of_run(&merged.summary, &merged.servers, &merged.changes);
    let report = Record {
        bytes: crate::report::html::render(&page).into_bytes(),
        content_type: "text/html; charset=utf-8".to_string(),
    };
    storage.put_record(Store::Default, "REPORT", report).await?;
    if input.report_sarif {
        write_sarif(storage, input, &merged).await?;
    }
    // The shards wrote their ledgers before they ended: the changes may be announced now,
    // once, by the coordinator (shard runs get no `notify`).
    run::announce(
        storage,
        input,
        options,
        &mut merged.summary,
        &merged.changes,
    )
    .await;
    let mut status = run::final_status(&merged.summary);
    if let Some(chosen) = shards_chosen {
        status.push_str(&format!(
            "; {chosen} shards chosen for {} servers",
            fleet.entries.len()
        ));
    }
    let outcomes = merged.records.iter().map(|r| &r.outcome);
    for outcome in outcomes.chain(&merged.retired) {
        if let Some(found) = &outcome.chain.ledger_chain_break {
            status.push_str(&format!(
                "; LEDGER CHAIN BROKEN in {} ({found}): a new chain was started from the state found",
                outcome.ledger_name
            ));
        }
    }
    if failed > 0 {
        let names: Vec<&str> = merged
            .records
            .iter()
            .filter(|r| !r.succeeded())
            .map(|r| r.outcome.ledger_name.as_str())
            .collect();
        status.push_str(&format!(
            "; {failed} of {} shards failed ({}): run again to re-run only those",
            merged.records.len(),
            names.join(", ")
        ));
    }
    storage.set_status_message(&status, true).await?;
    Ok(merged.summary)
}

/// Writes `REPORT.sarif`: the change rows of every shard that ran now, in one SARIF log, the
/// gate tripped when any shard's did (the renderer of a single run, [`sarif::render_within`]).
async fn write_sarif(
    storage: &impl Storage,
    input: &Input,
    merged: &Merged,
) -> Result<(), RunError> {
    let gate = sarif::Gate {
        fail_on: input.fail_on,
        tripped: merged
            .records
            .iter()
            .any(|r| r.outcome.status == GATE_TRIPPED),
        changes: &merged.changes,
    };
    let scope = sarif::Scope::of_summary(&merged.summary);
    let bytes = sarif::render_scoped_within(&gate, &scope, crate::platform::MAX_RECORD_BYTES);
    storage
        .put_record(Store::Default, sarif::RECORD_KEY, Record::json(bytes))
        .await?;
    Ok(())
}

/// The charges of the whole watch: the coordinator's own plus every shard run's, per event.
/// Amounts are added exactly ([`Usd`]); the maximum is the coordinator's.
pub fn merge_charges(coordinator: Value, shards: &[Value]) -> Value {
    let mut merged = coordinator;
    let usd = |value: &Value| Usd::from_json(value, Rounding::Down).unwrap_or(Usd::ZERO);
    let add = |a: &Value, b: &Value| {
        Usd::from_nanos(usd(a).nanos().saturating_add(usd(b).nanos())).to_json()
    };
    for shard in shards {
        merged["total_usd"] = add(&merged["total_usd"], &shard["total_usd"]);
        let Some(events) = shard["events"].as_object() else {
            continue;
        };
        for (name, event) in events {
            let target = &mut merged["events"][name];
            if target.is_null() {
                *target = event.clone();
                continue;
            }
            let count =
                target["count"].as_u64().unwrap_or(0) + event["count"].as_u64().unwrap_or(0);
            target["count"] = json!(count);
            target["total_usd"] = add(&target["total_usd"], &event["total_usd"]);
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_write_anchors_a_shard_that_did_not_run_and_its_break_is_kept() {
        let anchor = |status: &str, head: &str, found: Option<&str>| ChainAnchor {
            ledger_chain_status: Some(status.into()),
            ledger_chain_head: Some(head.into()),
            ledger_chain_break: found.map(str::to_string),
            ..ChainAnchor::default()
        };
        let moved_intact = anchor("intact", "m", None);
        let moved_broken = anchor("broken", "m", Some("server x: edited"));
        let ran = anchor("intact", "r", None);
        let cases = [
            (ChainAnchor::default(), &moved_intact, moved_intact.clone()),
            (ran.clone(), &moved_intact, ran.clone()),
            (
                ran.clone(),
                &moved_broken,
                anchor("broken", "r", Some("server x: edited")),
            ),
        ];
        for (mut chain, moved, expected) in cases {
            note_move(&mut chain, moved);
            assert_eq!(chain, expected);
        }
    }

    #[test]
    fn charges_add_up_per_event_exactly() {
        let coordinator = json!({
            "pay_per_event": true, "max_total_charge_usd": 1.0, "total_usd": 0.01, "dry_run": false,
            "events": {"run_start": {"count": 1, "price_usd": 0.01, "total_usd": 0.01}}
        });
        let shard = |checked: u64| {
            json!({
                "pay_per_event": true, "max_total_charge_usd": 0.33, "total_usd": 0.01 + 0.001 * checked as f64,
                "events": {
                    "run_start": {"count": 1, "price_usd": 0.01, "total_usd": 0.01},
                    "server_checked": {"count": checked, "price_usd": 0.001, "total_usd": 0.001 * checked as f64}
                }
            })
        };
        let merged = merge_charges(coordinator, &[shard(3), shard(7)]);
        assert_eq!(merged["events"]["run_start"]["count"], 3);
        assert_eq!(merged["events"]["server_checked"]["count"], 10);
        assert_eq!(merged["events"]["server_checked"]["total_usd"], json!(0.01));
        assert_eq!(merged["total_usd"], json!(0.04));
        assert_eq!(
            merged["max_total_charge_usd"],
            json!(1.0),
            "the coordinator's maximum"
        );
    }
}
