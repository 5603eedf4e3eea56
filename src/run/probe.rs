//! Stage 2, probing: the jobs in input order, `concurrency` probes in flight under the per-server
//! and run deadlines and as many answers waiting for their surface work ([`Backlog`]), the
//! surface work on the surface-work pool (`run::cpu`), and the surface records written while
//! the run goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant as TokioInstant;

use super::RunContext;
use super::outcome::{Baseline, Known, Outcome, Prepared, Probed, Unchanged};
use crate::mcp::{self, Observation, ProbeOptions};
use crate::net::{self};
use crate::platform::{Record, Storage, StorageError, Store};
use crate::targets::Target;

/// One server to probe, with what the ledger already knows about it.
pub(super) struct Job {
    pub(super) target: Target,
    pub(super) options: ProbeOptions,
    pub(super) known: Known,
}

/// The probe jobs in input order: the era that worked last time is tried first, and the
/// insight of the surface the ledger names goes along for reuse.
pub(super) fn probe_jobs<S: Storage>(ctx: &RunContext<'_, S>, targets: Vec<Target>) -> Vec<Job> {
    let RunContext {
        input,
        options,
        ledger,
        insight,
        ..
    } = ctx;
    targets
        .into_iter()
        .map(|target| {
            let entry = ledger.entry(&target.ledger_key());
            let surface_key = entry.and_then(|e| e.surface_key.clone());
            let insight = surface_key.as_deref().and_then(|key| insight.get(key));
            let known = Known {
                baseline: entry
                    .filter(|_| !options.always_build_surfaces)
                    .and_then(|e| Baseline::of(e, insight.as_ref())),
                insight,
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

/// How many surface records are written at the same time: on the platform each is an API
/// request, so writing them one after the other would cost a round trip per new surface.
pub(super) const SURFACE_WRITES_IN_FLIGHT: usize = 8;

/// Writes new surface records while the run goes on, so that storing them overlaps with
/// probing instead of following it. Each key is written once (servers serving the same surface
/// share its content-addressed record). Every write completes before the index is written:
/// a failure stops the run first, so the index never names a record that was not stored.
pub(super) struct SurfaceWriter<'a, S: Storage> {
    pub(super) storage: &'a S,
    pub(super) started: std::collections::HashSet<String>,
    pub(super) in_flight: FuturesUnordered<BoxFuture<'a, Result<(), StorageError>>>,
}

impl<'a, S: Storage> SurfaceWriter<'a, S> {
    pub(super) fn new(storage: &'a S) -> Self {
        SurfaceWriter {
            storage,
            started: std::collections::HashSet::new(),
            in_flight: FuturesUnordered::new(),
        }
    }

    /// Starts writing `record` under `key` (unless this run already did), first waiting for
    /// a write to finish when [`SURFACE_WRITES_IN_FLIGHT`] are under way.
    pub(super) async fn write(&mut self, key: String, record: Record) -> Result<(), StorageError> {
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
    pub(super) async fn next_done(&mut self) -> Result<(), StorageError> {
        match self.in_flight.next().await {
            Some(result) => result,
            None => std::future::pending().await,
        }
    }

    /// Waits for every write under way.
    pub(super) async fn finish(mut self) -> Result<(), StorageError> {
        while let Some(result) = self.in_flight.next().await {
            result?;
        }
        Ok(())
    }
}

/// Room for the servers whose answers are in but not yet recorded: those waiting for the
/// surface work, in it, or waiting to be recorded.
///
/// A server gives up its network slot once its answers are in, so that the next one starts
/// while its surface is built. When the CPUs are slower than the fleet (a small machine, a
/// fleet of large surfaces, shards in one process), answers would pile up in memory faster
/// than they are worked off: 2,000 servers in two shards peaked at 460 MB on a slow 2-vCPU
/// machine. A server now waits for room here before giving up its slot, so at most
/// `concurrency` servers are on the network and as many wait, whatever the CPUs' speed.
#[derive(Clone)]
pub(super) struct Backlog(Arc<Semaphore>);

/// A server's place in the [`Backlog`], held until its outcome is recorded.
pub(super) type Room = OwnedSemaphorePermit;

impl Backlog {
    /// Room for `servers` answers.
    pub(super) fn new(servers: usize) -> Self {
        Backlog(Arc::new(Semaphore::new(servers.max(1))))
    }

    /// Waits for room for one answer.
    async fn make_room(&self) -> Option<Room> {
        // The semaphore is never closed; were it closed, the server would go on without room.
        self.0.clone().acquire_owned().await.ok()
    }
}

/// Reads one server while holding `network`, its place among the `concurrency` servers in
/// flight, which it gives up as soon as the answers are in and there is room in `backlog`
/// for them; the surface work follows. The room is returned with the outcome, to be given
/// up once the outcome is recorded.
pub(super) async fn probe_one(
    client: net::Client,
    network: OwnedSemaphorePermit,
    backlog: Backlog,
    job: Job,
    server_budget: Duration,
    run_deadline: TokioInstant,
) -> (Outcome, Option<Room>) {
    let Job {
        target,
        options,
        known,
    } = job;
    let index = target.index;
    let started = Instant::now();
    let now = TokioInstant::now();
    if now >= run_deadline {
        let outcome = Outcome {
            target,
            probed: Probed::RunDeadline,
            elapsed: Duration::ZERO,
            index,
        };
        return (outcome, None);
    }
    let server_deadline = now + server_budget;
    let deadline = server_deadline.min(run_deadline);
    let client = client.with_credential(target.credential.clone());
    let read = tokio::time::timeout_at(deadline, mcp::probe(&client, &target.url, &options)).await;
    // The server's response time: the surface work below is ours, not the server's.
    let elapsed = started.elapsed();
    let mut room = None;
    let probed = match read {
        Ok(Ok(observation)) => {
            // The network part is done: once the answers have room, the next server starts.
            room = backlog.make_room().await;
            drop(network);
            prepare(observation, known).await
        }
        Ok(Err(failure)) => Probed::Failed(Box::new(failure)),
        Err(_) if run_deadline < server_deadline => Probed::RunDeadline,
        Err(_) => Probed::TimedOut,
    };
    let outcome = Outcome {
        target,
        probed,
        elapsed,
        index,
    };
    (outcome, room)
}

/// Builds the surface, its insight and record ([`Prepared::of`]): milliseconds of CPU per
/// server. It runs on the surface-work threads ([`super::cpu`]), one per CPU and apart from
/// the runtime's workers, so those stay free to read the answers of the servers
/// in flight (and so release their slots on time).
pub(super) async fn prepare(observation: Observation, known: Known) -> Probed {
    // Answers byte-identical to the ledger's need no surface work at all.
    if let Some(baseline) = known.baseline.as_ref()
        && baseline.matches(&observation)
    {
        let baseline = baseline.clone();
        return Probed::Unchanged(Box::new(Unchanged::new(observation, baseline)));
    }
    match super::cpu::compute(move || Prepared::of(observation, known)).await {
        Ok(Ok(prepared)) => Probed::Read(Box::new(prepared)),
        Ok(Err(problem)) => Probed::Unusable(problem),
        Err(crash) => Probed::Crashed(crash),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetConfig;

    /// A job for the in-process demo server at `url`, with nothing known of it.
    fn job(url: url::Url) -> Job {
        Job {
            target: Target {
                index: 0,
                url,
                credential: None,
            },
            options: ProbeOptions::default(),
            known: Known::default(),
        }
    }

    /// The memory bound of [`Backlog`]: a server whose answers are in keeps its network slot
    /// (so no further server starts) until there is room for its answers, and holds that room
    /// until its outcome is recorded.
    #[tokio::test]
    async fn answers_read_keep_their_network_slot_until_they_have_room() {
        let url = crate::demo::serve_in_process().await;
        let config = NetConfig::new(Duration::from_secs(5), 0, 1_000_000).allow_private(true);
        let client = net::Client::new(config).unwrap();
        let network = Arc::new(Semaphore::new(1));
        let backlog = Backlog::new(1);
        // Another server's answers fill the backlog.
        let waiting = backlog.make_room().await.unwrap();
        let slot = network.clone().acquire_owned().await.unwrap();
        let deadline = TokioInstant::now() + Duration::from_secs(30);
        let budget = Duration::from_secs(10);
        let probe = tokio::spawn(probe_one(
            client,
            slot,
            backlog.clone(),
            job(url),
            budget,
            deadline,
        ));
        // The read finishes in milliseconds; its slot stays taken while the backlog is full.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!probe.is_finished());
        assert_eq!(network.available_permits(), 0);
        drop(waiting);
        let (outcome, room) = probe.await.unwrap();
        assert!(
            matches!(outcome.probed, Probed::Read(_)),
            "the demo server was not read"
        );
        assert_eq!(network.available_permits(), 1, "the slot is given up");
        assert!(room.is_some());
        assert_eq!(
            backlog.0.available_permits(),
            0,
            "the room is held until the outcome is recorded"
        );
        drop(room);
        assert_eq!(backlog.0.available_permits(), 1);
    }
}
