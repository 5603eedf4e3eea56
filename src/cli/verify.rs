//! `verify`: recomputes a ledger's hash chain ([`crate::chain`]), compares it with the heads
//! past runs witnessed, and reports the first break with where it is.
//!
//! Exit codes: 0 intact, 1 broken, 2 bad input (no such ledger, unreadable heads file or key),
//! 3 storage failure.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::CliError;
use crate::chain::{self, Break, GenesisKind, HeadsChecked, Witness};
use crate::platform::{ApiClient, ApifyStorage, LocalStorage, PlatformEnv, Storage, Store};
use crate::serve::backend::Backend;

/// What the operator asked `verify` for.
#[derive(Debug, Clone)]
pub struct VerifyArgs {
    /// Root of the local storage layout; on the platform the API is used instead.
    pub storage_dir: Option<PathBuf>,
    /// The ledger's record key (`ledger_name`).
    pub ledger: String,
    /// A file of witnessed heads: exported summary rows (JSON array or JSON lines).
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

/// Reads witnessed heads: a JSON array or JSON lines of summary rows (their
/// `ledger_chain_seq`, `ledger_chain_head` and `ledger_chain_prev_head`) or of
/// `{"seq", "head"}` objects. Rows of another `ledger_name` are left out.
pub fn parse_heads(text: &str, ledger_name: &str) -> Result<Vec<Witness>, String> {
    let values: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(single @ Value::Object(_)) => vec![single],
        _ => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line).map_err(|e| format!("line {}: not JSON ({e})", n + 1))
            })
            .collect::<Result<_, _>>()?,
    };
    let mut witnesses = Vec::new();
    for (n, row) in values.iter().enumerate() {
        let source = format!("heads entry {}", n + 1);
        if row.get("record_type").is_some_and(|t| t != "summary")
            || row.get("ledger_name").is_some_and(|l| l != ledger_name)
        {
            continue;
        }
        let seq = row.get("ledger_chain_seq").or_else(|| row.get("seq"));
        let head = row.get("ledger_chain_head").or_else(|| row.get("head"));
        let (Some(seq), Some(head)) = (seq.and_then(Value::as_u64), head.and_then(Value::as_str))
        else {
            continue;
        };
        witnesses.push(Witness {
            seq,
            head: head.to_string(),
            source: source.clone(),
        });
        let prev = row.get("ledger_chain_prev_head").and_then(Value::as_str);
        if let Some(prev) = prev.filter(|_| seq > 1) {
            witnesses.push(Witness {
                seq: seq - 1,
                head: prev.to_string(),
                source: format!("{source} (the head it started from)"),
            });
        }
    }
    if witnesses.is_empty() {
        return Err(format!("it names no chain head of ledger {ledger_name:?}"));
    }
    Ok(witnesses)
}

fn open_storage(storage_dir: Option<PathBuf>) -> Result<Backend, CliError> {
    let env = PlatformEnv::from_env().map_err(|e| CliError::BadInput(e.to_string()))?;
    if env.is_at_home {
        let api = ApiClient::new(&env).map_err(|e| CliError::Runtime(e.to_string()))?;
        let storage =
            ApifyStorage::with_client(&env, api).map_err(|e| CliError::Runtime(e.to_string()))?;
        return Ok(Backend::Apify(Box::new(storage)));
    }
    let root = storage_dir.unwrap_or(env.local_storage_dir);
    Ok(Backend::Local(LocalStorage::open_existing(root)))
}

fn read_heads(path: &Path, ledger_name: &str) -> Result<Vec<Witness>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
    parse_heads(&text, ledger_name)
        .map_err(|e| CliError::BadInput(format!("heads file {}: {e}", path.display())))
}

/// `verify`: prints the verdict as JSON to `out`; returns whether the ledger is intact.
pub async fn run(args: &VerifyArgs, out: &mut dyn Write) -> Result<bool, CliError> {
    if let Some(key) = &args.public_key {
        chain::parse_public_key(key).map_err(CliError::BadInput)?;
    }
    let witnesses = match &args.heads {
        Some(path) => read_heads(path, &args.ledger)?,
        None => Vec::new(),
    };
    let storage = open_storage(args.storage_dir.clone())?;
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
    let verdict = verify(&args.ledger, &index, &witnesses, args.public_key.as_deref());
    let mut text = serde_json::to_string_pretty(&verdict)
        .map_err(|e| CliError::Runtime(format!("cannot encode the verdict: {e}")))?;
    text.push('\n');
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Runtime(format!("cannot write the output: {e}")))?;
    Ok(verdict.intact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn heads_come_from_summary_rows_of_this_ledger() {
        let rows = json!([
            {"record_type": "server", "ledger_chain_seq": 9, "ledger_chain_head": "x"},
            {"record_type": "summary", "ledger_name": "other", "ledger_chain_seq": 2, "ledger_chain_head": "o"},
            {"record_type": "summary", "ledger_name": "L", "ledger_chain_seq": 3,
             "ledger_chain_head": "c", "ledger_chain_prev_head": "b"},
            {"seq": 1, "head": "a"},
        ]);
        let heads = parse_heads(&rows.to_string(), "L").unwrap();
        let pairs: Vec<(u64, &str)> = heads.iter().map(|w| (w.seq, w.head.as_str())).collect();
        assert_eq!(pairs, [(3, "c"), (2, "b"), (1, "a")]);
        let lines = "{\"seq\": 4, \"head\": \"d\"}\n\n{\"seq\": 5, \"head\": \"e\"}\n";
        assert_eq!(parse_heads(lines, "L").unwrap().len(), 2);
        assert!(parse_heads("[]", "L").is_err());
        assert!(parse_heads("{oops\n", "L").is_err());
    }
}
