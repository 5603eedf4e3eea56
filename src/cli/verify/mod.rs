//! `verify`: recomputes a ledger's hash chain ([`crate::chain`]), checks every surface record
//! against the entry that names it, compares the chain with the heads past runs witnessed and
//! with the key that signed them, and reports the first break with where it is, or the writes
//! no run witnessed.
//!
//! The heads come from a file (`--heads`: summary rows exported from past runs' datasets,
//! [`crate::chain::heads`]) or, on the Apify platform without a file, from the summary rows of
//! the Actor's past runs read through the API ([`runs`]).
//!
//! Exit codes: 0 intact (or, with no witness at all, consistent with itself: the verdict says
//! so), 1 broken, 2 bad input (no such ledger, unreadable heads file or key), 3 storage
//! failure, 4 writes after the newest witnessed one (and, with `--require-witness`, no witness
//! at all).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::CliError;
pub use crate::chain::heads::parse_heads;
use crate::chain::{self, Break, GenesisKind, LogItem, Witness};
use crate::ledger::Ledger;
use crate::platform::{ApiClient, PlatformEnv, Runs, Storage, Store};
use crate::serve::backend::Backend;
use runs::RunsRead;

pub mod moves;
pub mod runs;

/// Exit code: the chain holds and its newest write is witnessed (or no witness was given).
pub const EXIT_INTACT: u8 = 0;
/// Exit code: a break was found.
pub const EXIT_BROKEN: u8 = 1;
/// Exit code: writes after the newest witnessed one (or no witness, when one is required).
pub const EXIT_UNWITNESSED: u8 = 4;

/// What the operator asked `verify` for.
#[derive(Debug, Clone)]
pub struct VerifyArgs {
    /// Root of the local storage layout; on the platform the API is used instead.
    pub storage_dir: Option<PathBuf>,
    /// The ledger's record key (`ledger_name`); `None`: `DEFAULT`, or the store's only ledger
    /// when it has no `DEFAULT` ([`resolve_ledger`]).
    pub ledger: Option<String>,
    /// A file of witnessed heads: exported summary rows (JSON array or JSON lines). Without
    /// it, on the platform, the summary rows of the Actor's past runs are read.
    pub heads: Option<PathBuf>,
    /// An Ed25519 public key (hex) the heads must be signed with.
    pub public_key: Option<String>,
    /// Fail (exit 4) when no witness outside the ledger was consulted.
    pub require_witness: bool,
}

/// What `verify` concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every check passed and the newest write is witnessed.
    Intact,
    /// Every check passed, but no witness outside the ledger was given: this proves only that
    /// the ledger agrees with itself.
    SelfConsistent,
    /// Every check passed, but writes came after the newest witnessed one: nobody outside the
    /// ledger vouches for them.
    Unwitnessed,
    /// A check failed ([`Verdict::found`]).
    Broken,
}

/// Writes after the newest witnessed one.
#[derive(Debug, Clone, Serialize)]
pub struct Unwitnessed {
    /// The newest write a witness matched (`None`: no witness matched any).
    pub witnessed_up_to: Option<u64>,
    /// The writes after it, oldest first: sequence number and head.
    pub writes: Vec<LogItem>,
    /// The entries the newest of them changed (the chain records this per write; the older
    /// ones are known only by their heads).
    pub newest_write_changed: Vec<String>,
}

/// The document `verify` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Always `"verify"`.
    pub record_type: &'static str,
    /// The ledger checked.
    pub ledger_name: String,
    /// What `verify` concluded.
    pub status: Status,
    /// Whether no break was found (`status` is `intact` or `self_consistent`).
    pub intact: bool,
    /// The last index write's sequence number.
    pub seq: Option<u64>,
    /// Its head.
    pub head: Option<String>,
    /// How the chain began (`new`, `adopted`, `rebased`) and at which write.
    pub genesis: Option<Value>,
    /// Witnessed heads that matched.
    pub heads_matched: usize,
    /// Witnessed heads older than the ledger's log of heads (not comparable).
    pub heads_too_old: usize,
    /// Writes no witness vouches for, when witnesses were given and some writes came after
    /// the newest one they name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwitnessed: Option<Unwitnessed>,
    /// Witness rows whose own signature was checked with the key they name.
    pub witness_signatures_checked: usize,
    /// Surface records checked against the entries that name them.
    pub surfaces_checked: usize,
    /// Whether the head's signature was checked.
    pub signature_checked: bool,
    /// Where the key the head was checked with came from: `operator` (`--public-key`),
    /// `rows` (the key the witness rows name) or `ledger` (the index's own key, which proves
    /// nothing against someone who can write the store).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key_source: Option<&'static str>,
    /// Where the witnessed heads came from: `file`, `runs` (past runs' datasets on the
    /// platform) or `none`.
    pub heads_source: &'static str,
    /// On the platform: which runs were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsRead>,
    /// What the operator should know about the check, e.g. that nothing outside the ledger
    /// was consulted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The first break: where, and what differs.
    #[serde(rename = "break")]
    pub found: Option<Break>,
}

impl Verdict {
    /// The exit code for this verdict ([`EXIT_INTACT`], [`EXIT_BROKEN`],
    /// [`EXIT_UNWITNESSED`]).
    pub fn exit_code(&self, require_witness: bool) -> u8 {
        match self.status {
            Status::Intact => EXIT_INTACT,
            Status::SelfConsistent if require_witness => EXIT_UNWITNESSED,
            Status::SelfConsistent => EXIT_INTACT,
            Status::Unwitnessed => EXIT_UNWITNESSED,
            Status::Broken => EXIT_BROKEN,
        }
    }
}

impl Serialize for Break {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("location", &self.location)?;
        map.serialize_entry("problem", &self.problem)?;
        map.end()
    }
}

/// The key the head is checked with: the operator's, else the one the newest witness row
/// names, else the index's own; with where it came from.
fn signing_key<'a>(
    index: &'a Value,
    witnesses: &'a [Witness],
    public_key: Option<&'a str>,
) -> Option<(&'a str, &'static str)> {
    if let Some(key) = public_key {
        return Some((key, "operator"));
    }
    let from_rows = witnesses
        .iter()
        .filter(|w| w.public_key.is_some())
        .max_by_key(|w| w.seq)
        .and_then(|w| w.public_key.as_deref());
    if let Some(key) = from_rows {
        return Some((key, "rows"));
    }
    index
        .pointer("/chain/public_key")
        .and_then(Value::as_str)
        .map(|key| (key, "ledger"))
}

/// Checks a stored index (pure): its own chain, its surface records (`surfaces`, checked by
/// the caller), the rows that witness it, the witnessed heads, the signature, and which writes
/// no witness reaches.
pub fn verify(
    ledger_name: &str,
    index: &Value,
    witnesses: &[Witness],
    public_key: Option<&str>,
    surfaces: Result<usize, Break>,
) -> Verdict {
    let chain = index.get("chain");
    let text = |key: &str| chain.and_then(|c| c.get(key)).cloned();
    let mut verdict = Verdict {
        record_type: "verify",
        ledger_name: ledger_name.to_string(),
        status: Status::Broken,
        intact: false,
        seq: text("seq").and_then(|v| v.as_u64()),
        head: text("head").and_then(|v| v.as_str().map(str::to_string)),
        genesis: text("genesis"),
        heads_matched: 0,
        heads_too_old: 0,
        unwitnessed: None,
        witness_signatures_checked: 0,
        surfaces_checked: 0,
        signature_checked: false,
        public_key_source: None,
        heads_source: if witnesses.is_empty() { "none" } else { "file" },
        runs: None,
        note: None,
        found: None,
    };
    let outcome = chain::check_index(index)
        .and_then(|()| {
            verdict.surfaces_checked = surfaces?;
            Ok(())
        })
        .and_then(|()| rebase_break(index))
        .and_then(|()| {
            verdict.witness_signatures_checked =
                chain::check_witness_rows(index, ledger_name, witnesses, public_key)?;
            chain::check_heads(index, witnesses)
        })
        .and_then(|checked| {
            verdict.heads_matched = checked.matched;
            verdict.heads_too_old = checked.too_old;
            if let Some((key, source)) = signing_key(index, witnesses, public_key) {
                verdict.signature_checked = true;
                verdict.public_key_source = Some(source);
                chain::check_signature(index, key)?;
            }
            Ok(checked.newest)
        });
    match outcome {
        Err(found) => verdict.found = Some(found),
        Ok(_) if witnesses.is_empty() => {
            verdict.status = Status::SelfConsistent;
            verdict.note = Some(
                "no outside witness was consulted (no --heads file, not on the platform): this \
                 proves only that the ledger agrees with itself, as a forger who rewrote it \
                 whole would make it; pass the summary rows of past runs with --heads"
                    .to_string(),
            );
        }
        Ok(newest) => {
            let writes = chain::unwitnessed_writes(index, newest);
            verdict.status = if writes.is_empty() {
                Status::Intact
            } else {
                Status::Unwitnessed
            };
            if !writes.is_empty() {
                let changed = chain
                    .and_then(|c| c.get("changed"))
                    .and_then(|c| serde_json::from_value(c.clone()).ok())
                    .unwrap_or_default();
                verdict.unwitnessed = Some(Unwitnessed {
                    witnessed_up_to: newest,
                    writes,
                    newest_write_changed: changed,
                });
            }
        }
    }
    verdict.intact = matches!(verdict.status, Status::Intact | Status::SelfConsistent);
    if verdict.public_key_source == Some("ledger") && verdict.note.is_none() {
        verdict.note = Some(
            "the head was checked with the public key the ledger itself names: whoever can \
             write the store can replace key and signature; pass --public-key"
                .to_string(),
        );
    }
    verdict
}

/// A chain a run had to start again is itself a break: what came before it cannot be trusted.
fn rebase_break(index: &Value) -> Result<(), Break> {
    let genesis = index.pointer("/chain/genesis").cloned().unwrap_or_default();
    let kind: Option<GenesisKind> = serde_json::from_value(genesis["kind"].clone()).ok();
    if kind != Some(GenesisKind::Rebased) {
        return Ok(());
    }
    Err(Break {
        location: format!("index write {}", genesis["seq"]),
        problem: format!(
            "a run found the chain broken and started a new one here: {}",
            genesis["reason"].as_str().unwrap_or("no reason recorded")
        ),
    })
}

/// Reads every surface record the index names and checks it against its entry, then every
/// kept value and earlier surface.
async fn check_surfaces(
    storage: &impl Storage,
    ledger_name: &str,
    bytes: &[u8],
) -> Result<usize, Break> {
    let ledger = Ledger::from_bytes(ledger_name, bytes).map_err(|e| Break {
        location: "index".to_string(),
        problem: e.to_string(),
    })?;
    // Every kept value and earlier surface too, checked against the digests the chained index
    // names (docs/history.md).
    ledger
        .check_surfaces(storage)
        .await
        .map_err(|(url, error)| Break {
            location: format!("server {url}"),
            problem: error.to_string(),
        })
}

fn read_heads(path: &Path, ledger_name: &str) -> Result<Vec<Witness>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
    refuse_empty_heads(path, &text)?;
    parse_heads(&text, ledger_name)
        .map_err(|e| CliError::BadInput(format!("heads file {}: {e}", path.display())))
}

/// An empty heads file is most often an export that found nothing: says where heads go.
fn refuse_empty_heads(path: &Path, text: &str) -> Result<(), CliError> {
    if text.trim().is_empty() {
        return Err(CliError::BadInput(format!(
            "heads file {} is empty: no run's summary row reached it. If the runs log their \
             heads to syslog, check that it received them (`journalctl -t mcp-ledger-head` \
             lists them) and export them again with `journalctl -t mcp-ledger-head -o cat > \
             heads.jsonl`; otherwise the rows are in each run's OUTPUT record or dataset",
            path.display()
        )));
    }
    Ok(())
}

/// Where the witnessed heads come from.
enum HeadsFrom {
    /// A heads file, already read.
    File(Vec<Witness>),
    /// The Actor's past runs on the platform.
    Runs(Box<Runs>, String),
    /// Nothing: the chain is checked against itself only.
    Nothing,
}

fn heads_from(args: &VerifyArgs, ledger: &str, env: &PlatformEnv) -> Result<HeadsFrom, CliError> {
    if let Some(path) = &args.heads {
        return read_heads(path, ledger).map(HeadsFrom::File);
    }
    if !env.is_at_home {
        return Ok(HeadsFrom::Nothing);
    }
    let actor_id = env.actor_id.clone().ok_or_else(|| {
        CliError::BadInput(
            "on the platform, verify reads the heads from the Actor's past runs: set ACTOR_ID \
             (the Actor whose runs wrote the ledger), or pass --heads FILE"
                .to_string(),
        )
    })?;
    let api = ApiClient::new(env).map_err(|e| CliError::Runtime(e.to_string()))?;
    let runs = Runs::new(api, actor_id.clone(), None, std::time::Duration::ZERO);
    Ok(HeadsFrom::Runs(Box::new(runs), actor_id))
}

/// The ledger to read: the one asked for (a caller that finds it missing says so with
/// [`missing_ledger`]); without one, `DEFAULT` when the store has it, else the store's only
/// ledger (said on standard error). Otherwise the error lists the store's ledgers (exit 2).
pub async fn resolve_ledger(
    storage: &impl Storage,
    asked: Option<&str>,
) -> Result<String, CliError> {
    if let Some(name) = asked {
        return Ok(name.to_string());
    }
    let names = ledger_names(storage).await?;
    if names.iter().any(|name| name == DEFAULT_LEDGER) {
        return Ok(DEFAULT_LEDGER.to_string());
    }
    match names.as_slice() {
        [only] => {
            tracing::info!(
                "no --ledger given and no ledger {DEFAULT_LEDGER:?}: using the store's only ledger, {only:?}"
            );
            Ok(only.clone())
        }
        _ => Err(CliError::BadInput(format!(
            "no --ledger given and no ledger {DEFAULT_LEDGER:?} in store {}; {}: pass --ledger NAME",
            crate::platform::LEDGER_STORE_NAME,
            choices(&names)
        ))),
    }
}

/// The error for a ledger the store does not have: the store's ledgers, with the nearest name
/// to a misspelt one (exit 2); `None` when the store has it after all.
pub async fn missing_ledger(storage: &impl Storage, name: &str) -> Option<CliError> {
    let names = match ledger_names(storage).await {
        Ok(names) => names,
        Err(error) => return Some(error),
    };
    if names.iter().any(|known| known == name) {
        return None;
    }
    let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str))
        .map_or(String::new(), |hint| format!("; {hint}"));
    Some(CliError::BadInput(format!(
        "no ledger {name:?} in store {}; {}{hint}",
        crate::platform::LEDGER_STORE_NAME,
        choices(&names)
    )))
}

/// The name `verify` takes when none is given (the input's default `ledger_name`).
const DEFAULT_LEDGER: &str = "DEFAULT";

async fn ledger_names(storage: &impl Storage) -> Result<Vec<String>, CliError> {
    let keys = storage
        .list_keys(Store::Ledger)
        .await
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    Ok(crate::ledger::index_names(&keys))
}

/// The ledgers to choose from, in words.
fn choices(names: &[String]) -> String {
    if names.is_empty() {
        return "the store holds no ledger (a run writes one)".to_string();
    }
    let names: Vec<String> = names.iter().map(|name| format!("{name:?}")).collect();
    format!("the store holds: {}", names.join(", "))
}

/// `verify`: prints the verdict as JSON to `out`; returns it.
pub async fn run(args: &VerifyArgs, out: &mut dyn Write) -> Result<Verdict, CliError> {
    if let Some(key) = &args.public_key {
        chain::parse_public_key(key).map_err(CliError::BadInput)?;
    }
    if let Some(path) = &args.heads
        && let Ok(text) = std::fs::read_to_string(path)
    {
        // Before the ledger is looked for: the file's problem is the one to fix first.
        refuse_empty_heads(path, &text)?;
    }
    let env = PlatformEnv::from_env().map_err(|e| CliError::BadInput(e.to_string()))?;
    let storage = Backend::open(&env, args.storage_dir.clone()).map_err(CliError::Runtime)?;
    let ledger = resolve_ledger(&storage, args.ledger.as_deref()).await?;
    let from = heads_from(args, &ledger, &env)?;
    let record = match storage.get_record(Store::Ledger, &ledger).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            return Err(missing_ledger(&storage, &ledger).await.unwrap_or_else(|| {
                CliError::Runtime(format!("the ledger {ledger:?} could not be read"))
            }));
        }
        Err(e) => return Err(CliError::Runtime(e.to_string())),
    };
    let index: Value = serde_json::from_slice(&record.bytes)
        .map_err(|e| CliError::BadInput(format!("the ledger record is not JSON: {e}")))?;
    let (witnesses, read) = match from {
        HeadsFrom::File(witnesses) => (witnesses, None),
        HeadsFrom::Runs(runs, actor_id) => {
            let (witnesses, read) =
                runs::witnesses(&runs, &actor_id, &ledger, runs::MAX_RUNS).await?;
            (witnesses, Some(read))
        }
        HeadsFrom::Nothing => (Vec::new(), None),
    };
    let surfaces = check_surfaces(&storage, &ledger, &record.bytes).await;
    let mut verdict = verify(
        &ledger,
        &index,
        &witnesses,
        args.public_key.as_deref(),
        surfaces,
    );
    moves::cross_check(&storage, &ledger, &index, &mut verdict).await;
    if let Some(read) = read {
        verdict.heads_source = "runs";
        verdict.note = read.note().or_else(|| {
            witnesses.is_empty().then(|| {
                "no summary row of the runs read names this ledger: only the chain itself was checked"
                    .to_string()
            })
        });
        verdict.runs = Some(read);
    }
    let mut text = serde_json::to_string_pretty(&verdict)
        .map_err(|e| CliError::Runtime(format!("cannot encode the verdict: {e}")))?;
    text.push('\n');
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Runtime(format!("cannot write the output: {e}")))?;
    Ok(verdict)
}
