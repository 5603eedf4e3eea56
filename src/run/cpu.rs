//! The threads that do the surface work of every run in this process.
//!
//! A first run spends milliseconds of CPU per server building its surface, digests and risk
//! assessment once the server's answers are in. That work runs on a small pool of its own:
//! one thread per CPU, shared by every run and every in-process shard. A pool per run let
//! two shards put twice as many threads on the same CPUs, where they only took time slices
//! from each other and from the runtime's workers reading the next answers: with the pool
//! shared, 2,000 servers in 2 shards took about 15 % less CPU and 4 % less wall time
//! (docs/performance.md). The runtime's own blocking pool is not used, since it grows a
//! thread per waiting task (up to 512).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::oneshot;

/// One piece of work handed to the pool.
type Work = Box<dyn FnOnce() + Send>;

/// The process's pool, started by its first use.
static POOL: OnceLock<Option<Pool>> = OnceLock::new();

/// The sending side of the pool's queue; its threads share the receiving side.
struct Pool {
    queue: Sender<Work>,
}

/// Runs `work` on the surface-work pool and waits for its result; `Err` carries the message
/// of a panic (or says the pool stopped). Without a pool (no thread could be started) the
/// work runs on the runtime's blocking pool instead.
pub(super) async fn compute<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Some(pool) = POOL.get_or_init(Pool::start) else {
        return tokio::task::spawn_blocking(work)
            .await
            .map_err(|error| error.to_string());
    };
    let (answer, result) = oneshot::channel();
    let job: Work = Box::new(move || {
        let outcome = catch_unwind(AssertUnwindSafe(work)).map_err(|panic| panic_message(&*panic));
        // The caller may have stopped waiting (a run deadline); nothing to do then.
        let _ = answer.send(outcome);
    });
    if pool.queue.send(job).is_err() {
        return Err("the surface-work threads stopped".to_string());
    }
    result
        .await
        .unwrap_or_else(|_| Err("the surface-work threads stopped".to_string()))
}

impl Pool {
    /// Starts one thread per CPU; `None` when not even one could be started.
    fn start() -> Option<Pool> {
        let (queue, jobs) = channel::<Work>();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut started = 0;
        for n in 0..cpu_count() {
            let jobs = jobs.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("surface-work-{n}"))
                .spawn(move || serve(&jobs));
            match spawned {
                Ok(_) => started += 1,
                Err(error) => tracing::warn!(%error, "cannot start a surface-work thread"),
            }
        }
        (started > 0).then_some(Pool { queue })
    }
}

/// One pool thread: runs work until the queue closes.
fn serve(jobs: &Mutex<Receiver<Work>>) {
    loop {
        // Hold the lock only to take one job, never while it runs.
        let next = match jobs.lock() {
            Ok(jobs) => jobs.recv(),
            Err(_) => return,
        };
        match next {
            Ok(work) => work(),
            Err(_) => return,
        }
    }
}

/// How many CPUs the surface work may use at once (at least one).
pub(super) fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The text of a panic's payload.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "the surface work panicked".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_off_the_runtime_and_returns_its_result() {
        let caller = std::thread::current().id();
        let (value, thread) = compute(|| (6 * 7, std::thread::current().id()))
            .await
            .unwrap();
        assert_eq!(value, 42);
        assert_ne!(thread, caller);
    }

    #[tokio::test]
    async fn a_panic_becomes_an_error_and_the_pool_keeps_working() {
        let failed = compute(|| -> u8 { panic!("bad surface") }).await;
        assert_eq!(failed.unwrap_err(), "bad surface");
        // Every thread of the pool still takes work afterwards.
        let results =
            futures::future::join_all((0..4 * cpu_count()).map(|n| compute(move || n))).await;
        let sum: usize = results.into_iter().map(Result::unwrap).sum();
        assert_eq!(sum, (0..4 * cpu_count()).sum::<usize>());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_work_runs_at_once_than_there_are_cpus() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RUNNING: AtomicUsize = AtomicUsize::new(0);
        static MOST: AtomicUsize = AtomicUsize::new(0);
        let jobs = (0..8 * cpu_count()).map(|_| {
            compute(|| {
                let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
                MOST.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(5));
                RUNNING.fetch_sub(1, Ordering::SeqCst);
            })
        });
        for done in futures::future::join_all(jobs).await {
            done.unwrap();
        }
        let most = MOST.load(Ordering::SeqCst);
        assert!(
            most <= cpu_count(),
            "{most} at once on {} CPUs",
            cpu_count()
        );
        assert!(most >= 1);
    }
}
