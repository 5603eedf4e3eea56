//! Witnessed heads from summary rows (pure): a heads file, or the rows `verify` read from past
//! runs' datasets.
//!
//! A row witnesses a ledger when it is a summary row (or a bare `{"seq", "head"}` object) of
//! that ledger: its `ledger_chain_seq` and `ledger_chain_head`, and the head it started from
//! (`ledger_chain_prev_head`, write `seq - 1`). A sharded watch's coordinator row witnesses
//! each shard ledger through its `shards[]` items, which carry the same fields.

use serde_json::Value;

use crate::chain::Witness;

/// The witnesses of `ledger_name` in `rows`; `source(n)` names row `n` in messages.
pub fn witnesses_in(
    rows: &[Value],
    ledger_name: &str,
    source: impl Fn(usize) -> String,
) -> Vec<Witness> {
    let mut witnesses = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        for (anchor, shard) in anchors(row, ledger_name) {
            let name = match shard {
                true => format!("{}, shard ledger {ledger_name}", source(n)),
                false => source(n),
            };
            witnesses.extend(witnesses_of(anchor, &name));
        }
    }
    witnesses
}

/// The objects of `row` that carry chain fields of `ledger_name`, each with whether it is a
/// coordinator's shard item.
fn anchors<'a>(row: &'a Value, ledger_name: &str) -> Vec<(&'a Value, bool)> {
    if row.get("record_type").is_some_and(|t| t != "summary") {
        return Vec::new();
    }
    let mut found = Vec::new();
    if row.get("ledger_name").is_none_or(|l| l == ledger_name) {
        found.push((row, false));
    }
    let shards = row.get("shards").and_then(Value::as_array);
    for item in shards.into_iter().flatten() {
        if item.get("ledger_name").is_some_and(|l| l == ledger_name) {
            found.push((item, true));
        }
    }
    found
}

/// The head an anchor names, and the one it started from.
fn witnesses_of(anchor: &Value, source: &str) -> Vec<Witness> {
    let seq = anchor.get("ledger_chain_seq").or_else(|| anchor.get("seq"));
    let head = anchor
        .get("ledger_chain_head")
        .or_else(|| anchor.get("head"));
    let (Some(seq), Some(head)) = (seq.and_then(Value::as_u64), head.and_then(Value::as_str))
    else {
        return Vec::new();
    };
    let mut found = vec![Witness {
        seq,
        head: head.to_string(),
        source: source.to_string(),
    }];
    let prev = anchor.get("ledger_chain_prev_head").and_then(Value::as_str);
    if let Some(prev) = prev.filter(|_| seq > 1) {
        found.push(Witness {
            seq: seq - 1,
            head: prev.to_string(),
            source: format!("{source} (the head it started from)"),
        });
    }
    found
}

/// Reads a heads file: a JSON array, one JSON object, or JSON lines of summary rows (or
/// `{"seq", "head"}` objects). Rows of another ledger are left out; a file that names no head
/// of this ledger is an error.
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
    let witnesses = witnesses_in(&values, ledger_name, |n| format!("heads entry {}", n + 1));
    if witnesses.is_empty() {
        return Err(format!("it names no chain head of ledger {ledger_name:?}"));
    }
    Ok(witnesses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(witnesses: &[Witness]) -> Vec<(u64, &str)> {
        witnesses.iter().map(|w| (w.seq, w.head.as_str())).collect()
    }

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
        assert_eq!(pairs(&heads), [(3, "c"), (2, "b"), (1, "a")]);
        let lines = "{\"seq\": 4, \"head\": \"d\"}\n\n{\"seq\": 5, \"head\": \"e\"}\n";
        assert_eq!(parse_heads(lines, "L").unwrap().len(), 2);
        assert!(parse_heads("[]", "L").is_err());
        assert!(parse_heads("{oops\n", "L").is_err());
    }

    #[test]
    fn a_coordinator_row_witnesses_each_shard_ledger() {
        let row = json!({"record_type": "summary", "ledger_name": "fleet", "shards": [
            {"shard": 1, "ledger_name": "fleet-shard-1", "ledger_chain_seq": 4,
             "ledger_chain_head": "d1", "ledger_chain_prev_head": "c1"},
            {"shard": 2, "ledger_name": "fleet-shard-2", "ledger_chain_seq": 1,
             "ledger_chain_head": "a2", "ledger_chain_prev_head": "0"},
            {"shard": 3, "ledger_name": "fleet-shard-3", "status": "failed"},
        ]});
        let rows = [row];
        let one = witnesses_in(&rows, "fleet-shard-1", |_| "row".into());
        assert_eq!(pairs(&one), [(4, "d1"), (3, "c1")]);
        assert!(one[0].source.contains("shard ledger fleet-shard-1"));
        let two = witnesses_in(&rows, "fleet-shard-2", |_| "row".into());
        assert_eq!(pairs(&two), [(1, "a2")], "no head before the first write");
        assert!(witnesses_in(&rows, "fleet-shard-3", |_| "row".into()).is_empty());
        assert!(witnesses_in(&rows, "fleet", |_| "row".into()).is_empty());
    }
}
