//! `verify`: recomputes a ledger's hash chain ([`crate::chain`]), compares it with the heads
//! past runs witnessed, and reports the first break with where it is.
//!
//! The heads come from a file (`--heads`: summary rows exported from past runs' datasets,
//! [`heads`]) or, on the Apify platform without a file, from the summary rows of the Actor's
//! past runs read through the API ([`runs`]).
//!
//! Exit codes: 0 intact, 1 broken, 2 bad input (no such ledger, unreadable heads file or key),
//! 3 storage failure.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::CliError;
use crate::chain::{self, Break, GenesisKind, HeadsChecked, Witness};
use crate::platform::{ApiClient, PlatformEnv, Runs, Storage, Store};
use crate::serve::backend::Backend;
pub use heads::parse_heads;
use runs::RunsRead;

pub mod heads;
pub mod moves;
pub mod runs;

/// What the operator asked `verify` for.
#[derive(Debug, Clone)]
pub struct VerifyArgs {
    /// Root of the local storage layout; on the platform the API is used instead.
    pub storage_dir: Option<PathBuf>,
    /// The ledger's record key (`ledger_name`).
    pub ledger: String,
    /// A file of witnessed heads: exported summary rows (JSON array or JSON lines). Without
    /// it, on the platform, the summary rows of the Actor's past runs are read.
    pub heads: Option<PathBuf>,
    /// An Ed25519 public key (hex) the heads must be signed with.
    pub public_key: Option<String>,
}

/// The document `verify` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Always `"verify"`.
    pub record_type: &'static str,
    /// The ledger checked.
    pub ledger_name: String,
    /// Whether every check passed.
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
    /// Whether the head's signature was checked.
    pub signature_checked: bool,
    /// Where the witnessed heads came from: `file`, `runs` (past runs' datasets on the
    /// platform) or `none`.
    pub heads_source: &'static str,
    /// On the platform: which runs were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsRead>,
    /// What the operator should know about the check, e.g. that older runs were not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The first break: where, and what differs.
    #[serde(rename = "break")]
    pub found: Option<Break>,
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

/// Checks a stored index (pure): its own chain, then the witnessed heads, then the signature.
pub fn verify(
    ledger_name: &str,
    index: &Value,
    witnesses: &[Witness],
    public_key: Option<&str>,
) -> Verdict {
    let chain = index.get("chain");
    let text = |key: &str| chain.and_then(|c| c.get(key)).cloned();
    let mut verdict = Verdict {
        record_type: "verify",
        ledger_name: ledger_name.to_string(),
        intact: false,
        seq: text("seq").and_then(|v| v.as_u64()),
        head: text("head").and_then(|v| v.as_str().map(str::to_string)),
        genesis: text("genesis"),
        heads_matched: 0,
        heads_too_old: 0,
        signature_checked: false,
        heads_source: if witnesses.is_empty() { "none" } else { "file" },
        runs: None,
        note: None,
        found: None,
    };
    let outcome = chain::check_index(index)
        .and_then(|()| rebase_break(index))
        .and_then(|()| chain::check_heads(index, witnesses))
        .and_then(|checked: HeadsChecked| {
            verdict.heads_matched = checked.matched;
            verdict.heads_too_old = checked.too_old;
            match public_key {
                Some(key) => {
                    verdict.signature_checked = true;
                    chain::check_signature(index, key)
                }
                None => Ok(()),
            }
        });
    match outcome {
        Ok(()) => verdict.intact = true,
        Err(found) => verdict.found = Some(found),
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

fn read_heads(path: &Path, ledger_name: &str) -> Result<Vec<Witness>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
    parse_heads(&text, ledger_name)
        .map_err(|e| CliError::BadInput(format!("heads file {}: {e}", path.display())))
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

fn heads_from(args: &VerifyArgs, env: &PlatformEnv) -> Result<HeadsFrom, CliError> {
    if let Some(path) = &args.heads {
        return read_heads(path, &args.ledger).map(HeadsFrom::File);
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

/// `verify`: prints the verdict as JSON to `out`; returns whether the ledger is intact.
pub async fn run(args: &VerifyArgs, out: &mut dyn Write) -> Result<bool, CliError> {
    if let Some(key) = &args.public_key {
        chain::parse_public_key(key).map_err(CliError::BadInput)?;
    }
    let env = PlatformEnv::from_env().map_err(|e| CliError::BadInput(e.to_string()))?;
    let from = heads_from(args, &env)?;
    let storage = Backend::open(&env, args.storage_dir.clone()).map_err(CliError::Runtime)?;
    let record = storage
        .get_record(Store::Ledger, &args.ledger)
        .await
        .map_err(|e| CliError::Runtime(e.to_string()))?
        .ok_or_else(|| {
            CliError::BadInput(format!(
                "no ledger {:?} in store {}",
                args.ledger,
                crate::platform::LEDGER_STORE_NAME
            ))
        })?;
    let index: Value = serde_json::from_slice(&record.bytes)
        .map_err(|e| CliError::BadInput(format!("the ledger record is not JSON: {e}")))?;
    let (witnesses, read) = match from {
        HeadsFrom::File(witnesses) => (witnesses, None),
        HeadsFrom::Runs(runs, actor_id) => {
            let (witnesses, read) =
                runs::witnesses(&runs, &actor_id, &args.ledger, runs::MAX_RUNS).await?;
            (witnesses, Some(read))
        }
        HeadsFrom::Nothing => (Vec::new(), None),
    };
    let mut verdict = verify(&args.ledger, &index, &witnesses, args.public_key.as_deref());
    moves::cross_check(&storage, &args.ledger, &index, &mut verdict).await;
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
    Ok(verdict.intact)
}
