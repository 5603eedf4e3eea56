//! Actor mode: picks the storage backend and the charging manager from the environment, then
//! runs once.
//!
//! On the Apify platform (`APIFY_IS_AT_HOME`) rows and records go through the REST API and
//! events are really charged; anywhere else the local storage layout is used and charging is a
//! dry run recorded in the summary row. The private-target override is refused on the platform.

use std::path::PathBuf;

use crate::gate::ExitCondition;
use crate::mcp::Era;
use crate::platform::{
    ApiClient, ApifyStorage, Charging, LocalStorage, PlatformEnv, Runs, Storage,
};
use crate::run::{
    self, EXIT_BAD_INPUT, EXIT_GATE, EXIT_RUNTIME, ExitVerdict, RunError, RunOptions, RunOutcome,
};
use crate::shard;

/// What the operator chose on the command line for an Actor run.
#[derive(Debug, Clone, Default)]
pub struct ActorArgs {
    /// INPUT bytes that replace the stored record.
    pub input_override: Option<Vec<u8>>,
    /// Where `input_override` was read from (a file's path, or standard input).
    pub input_file: Option<String>,
    /// Local storage root, overriding the environment.
    pub storage_dir: Option<PathBuf>,
    /// Loopback and private targets may be contacted (never on the platform).
    pub allow_private_targets: bool,
    /// Speak only this protocol era.
    pub force_era: Option<Era>,
    /// `--exit-nonzero-on`: conditions that make a finished run exit non-zero, added to the
    /// INPUT field `exit_nonzero_on`.
    pub exit_nonzero_on: Vec<ExitCondition>,
    /// `--notify FILE`: destinations that replace INPUT's `notify`.
    pub notify: Option<Vec<crate::notify::Destination>>,
    /// `--always-build-surfaces`: no unchanged-bytes fast path (benchmarks, diagnosis).
    pub always_build_surfaces: bool,
}

/// Runs the Actor once and returns the process exit code.
pub async fn run_actor(args: ActorArgs) -> i32 {
    let env = match PlatformEnv::from_env() {
        Ok(env) => env,
        Err(error) => {
            tracing::error!("{error}");
            return EXIT_RUNTIME;
        }
    };
    if env.is_at_home && args.allow_private_targets {
        tracing::error!(
            "--allow-private-targets (LEDGER_ALLOW_PRIVATE_TARGETS) is refused on the Apify platform"
        );
        return EXIT_BAD_INPUT;
    }
    let api = match ApiClient::new(&env) {
        Ok(api) => api,
        Err(error) => {
            tracing::error!("cannot set up the Apify API client: {error}");
            return EXIT_RUNTIME;
        }
    };
    let charging = match Charging::init(&env, &api).await {
        Ok(charging) => charging,
        Err(error) => {
            tracing::error!("cannot set up pay-per-event charging: {error}");
            return EXIT_RUNTIME;
        }
    };
    let options = RunOptions {
        input_key: env.input_key.clone(),
        input_override: args.input_override,
        input_file: args.input_file,
        allow_private_targets: args.allow_private_targets,
        force_era: args.force_era,
        always_build_surfaces: args.always_build_surfaces,
        input_secrets: env.input_secrets.clone(),
        shard_runs: shard_runs(&env, &api),
        run_url: run_url(&env),
        notify_override: args.notify,
        ..RunOptions::default()
    };
    if env.is_at_home {
        match ApifyStorage::with_client(&env, api) {
            Ok(storage) => finish(&storage, &charging, options, &args.exit_nonzero_on).await,
            Err(error) => {
                tracing::error!("cannot use the Apify storage: {error}");
                EXIT_RUNTIME
            }
        }
    } else {
        let root = args.storage_dir.unwrap_or(env.local_storage_dir);
        match LocalStorage::open(&root) {
            Ok(storage) => finish(&storage, &charging, options, &args.exit_nonzero_on).await,
            Err(error) => {
                tracing::error!(
                    "cannot open the local storage under {}: {error}",
                    root.display()
                );
                EXIT_RUNTIME
            }
        }
    }
}

/// On the platform, the runs of this Actor a sharded watch starts (same build; polls start
/// at twice the API retry delay; waiting ends a minute before this run's own timeout).
fn shard_runs(env: &PlatformEnv, api: &ApiClient) -> Option<Runs> {
    let actor_id = env.actor_id.clone().filter(|_| env.is_at_home)?;
    Some(
        Runs::new(
            api.clone(),
            actor_id,
            env.actor_build_number.clone(),
            env.api_retry_base_delay * 2,
        )
        .with_deadline(
            env.timeout_at
                .map(|timeout| timeout - chrono::Duration::seconds(SHARD_WAIT_MARGIN_SECONDS)),
        ),
    )
}

/// The Console page of this run, on the platform: the link `notify` messages carry.
fn run_url(env: &PlatformEnv) -> Option<String> {
    let id = env.actor_run_id.as_deref().filter(|_| env.is_at_home)?;
    Some(format!("https://console.apify.com/view/runs/{id}"))
}

/// Time a sharded watch keeps, before its own timeout, to write the merged result.
const SHARD_WAIT_MARGIN_SECONDS: i64 = 60;

/// Reads INPUT and runs the watch it asks for: one run, or the coordinator of a sharded watch
/// ([`crate::shard`]) when `shards` is not 1 (0: the coordinator chooses from the fleet).
pub async fn watch(
    storage: &impl Storage,
    charging: &Charging,
    options: RunOptions,
) -> Result<RunOutcome, RunError> {
    Ok(watch_asking(storage, charging, options).await?.outcome)
}

/// A finished watch and the `exit_nonzero_on` conditions its INPUT asked for.
#[derive(Debug, Clone)]
pub struct Watched {
    /// How the run (or the sharded watch) ended.
    pub outcome: RunOutcome,
    /// The INPUT's `exit_nonzero_on`.
    pub exit_nonzero_on: Vec<ExitCondition>,
}

impl Watched {
    /// The exit code and its reasons, under the INPUT's conditions and `extra` ones (the
    /// command line's).
    pub fn verdict(&self, extra: &[ExitCondition]) -> ExitVerdict {
        let mut asked = self.exit_nonzero_on.clone();
        asked.extend_from_slice(extra);
        self.outcome.verdict(&asked)
    }
}

/// [`watch`], keeping the INPUT's `exit_nonzero_on` for the exit code. A sharded watch
/// applies the conditions once, to its merged summary: its shard runs on the platform get the
/// input without them, so a shard that meets one still ends as succeeded and its rows count.
pub async fn watch_asking(
    storage: &impl Storage,
    charging: &Charging,
    options: RunOptions,
) -> Result<Watched, RunError> {
    let (input, mut raw) = run::read_checked_input(storage, &options).await?;
    let exit_nonzero_on = input.exit_nonzero_on.clone();
    let outcome = if input.shards != 1 {
        if let Some(fields) = raw.as_object_mut() {
            fields.remove("exit_nonzero_on");
        }
        shard::coordinate(storage, charging, &options, input, raw).await?
    } else {
        // A watch that had shards first takes its entries back into its own ledger; a shard
        // run's ledger is fenced ([`shard::fence`]).
        let gathered = shard::plain::gather_into_plain(storage, &options, &input).await?;
        let storage = shard::fence::RunStorage::new(storage, &input.ledger_name, gathered);
        run::run_with_input(&storage, charging, &options, input).await?
    };
    Ok(Watched {
        outcome,
        exit_nonzero_on,
    })
}

async fn finish(
    storage: &impl Storage,
    charging: &Charging,
    options: RunOptions,
    extra: &[ExitCondition],
) -> i32 {
    match watch_asking(storage, charging, options).await {
        Ok(watched) => {
            let verdict = watched.verdict(extra);
            let outcome = watched.outcome;
            tracing::info!("{}", run::final_status(&outcome.summary));
            if let Some(explanation) = verdict.explanation() {
                // The status message already written names the counts; this one adds why the
                // exit code is not 0, so the platform's failed run says it too.
                let message = format!("{}; {explanation}", run::final_status(&outcome.summary));
                if let Err(status) = storage.set_status_message(&message, true).await {
                    tracing::warn!(%status, "cannot set the final status message");
                }
                tracing::error!("{explanation}");
            }
            let code = verdict.code;
            if outcome.failed_shards > 0 {
                tracing::error!(
                    failed = outcome.failed_shards,
                    "shards failed (listed in the summary row): exit code {code}"
                );
            } else if outcome.fleet_source_failed() {
                tracing::error!(
                    "the MCP Registry could not be read and no server was checked: exit code \
                     {code}"
                );
            } else if code == EXIT_GATE {
                tracing::warn!("the fail_on gate tripped: exit code {EXIT_GATE}");
            }
            let summary = &outcome.summary;
            if code == 0
                && summary.servers_requested > 0
                && summary.servers_blocked == summary.servers_requested
            {
                tracing::warn!(
                    "every server entry was refused before any network work (BLOCKED_TARGET): \
                     nothing was read; each row's error says what to fix. A scheduler that \
                     must notice such a run can ask for exit code 4 with exit_nonzero_on: \
                     [\"nothing_read\"] (or --exit-nonzero-on nothing_read)"
                );
            }
            verdict.code
        }
        Err(error) => {
            tracing::error!("{error}");
            if !matches!(error, RunError::Input(_)) {
                // Refused input already said so; anything else ends with the reason, so that a
                // person (or the coordinator of a sharded watch) sees why the run failed.
                let message = format!("Run failed: {error}");
                if let Err(status) = storage.set_status_message(&message, true).await {
                    tracing::warn!(%status, "cannot set the final status message");
                }
            }
            error.exit_code()
        }
    }
}
