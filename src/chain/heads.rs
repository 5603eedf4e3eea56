//! Witnessed heads from summary rows (pure): a heads file, or the rows `verify` read from past
//! runs' datasets.
//!
//! A row witnesses a ledger when it is a summary row (or a bare `{"seq", "head"}` object) of
//! that ledger: its `ledger_chain_seq` and `ledger_chain_head`, and the head it started from
//! (`ledger_chain_prev_head`, write `seq - 1`). A sharded watch's coordinator row witnesses
//! each shard ledger through its `shards[]` items, which carry the same fields.

use serde_json::Value;

use super::{Witness, is_head};

/// The witnesses of `ledger_name` in `rows`; `source(n)` names row `n` in messages.
pub fn witnesses_in(
    rows: &[Value],
    ledger_name: &str,
    source: impl Fn(usize) -> String,
) -> Result<Vec<Witness>, String> {
    let mut witnesses = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        for (anchor, shard) in anchors(row, ledger_name) {
            let name = match shard {
                true => format!("{}, shard ledger {ledger_name}", source(n)),
                false => source(n),
            };
            witnesses.extend(witnesses_of(anchor, &name)?);
        }
    }
    Ok(witnesses)
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

/// The head an anchor names, and the one it started from; an anchor that names a head of
/// the wrong form is refused (`Err`), since a witness nobody can compare must not pass.
fn witnesses_of(anchor: &Value, source: &str) -> Result<Vec<Witness>, String> {
    let seq = anchor.get("ledger_chain_seq").or_else(|| anchor.get("seq"));
    let head = anchor
        .get("ledger_chain_head")
        .or_else(|| anchor.get("head"));
    let (seq, head) = match (seq, head) {
        (None, None) => return Ok(Vec::new()),
        (Some(seq), Some(head)) => (seq, head),
        _ => return Err(format!("{source}: it names a seq or a head, not both")),
    };
    let (Some(seq), Some(head)) = (seq.as_u64().filter(|s| *s > 0), head.as_str()) else {
        return Err(format!(
            "{source}: seq {seq} must be a positive integer and head {head} a string"
        ));
    };
    if !is_head(head) {
        return Err(format!(
            "{source}: head {head:?} is not a chain head (64 lower-case hex characters)"
        ));
    }
    let text = |key: &str| anchor.get(key).and_then(Value::as_str).map(str::to_string);
    let mut found = vec![Witness {
        seq,
        head: head.to_string(),
        source: source.to_string(),
        status: text("ledger_chain_status"),
        found: text("ledger_chain_break"),
        signature: text("ledger_chain_signature"),
        public_key: text("ledger_public_key"),
    }];
    let prev = anchor.get("ledger_chain_prev_head").and_then(Value::as_str);
    if let Some(prev) = prev.filter(|_| seq > 1) {
        if !is_head(prev) {
            return Err(format!(
                "{source}: ledger_chain_prev_head {prev:?} is not a chain head"
            ));
        }
        found.push(Witness {
            seq: seq - 1,
            head: prev.to_string(),
            source: format!("{source} (the head it started from)"),
            ..Witness::default()
        });
    }
    Ok(found)
}

/// Reads a heads file: a JSON array, one JSON object, or JSON objects one after another (JSON
/// lines, or pretty-printed documents appended) of summary rows (or `{"seq", "head"}` objects). Rows of another ledger are left out; a file that names no head
/// of this ledger is an error.
pub fn parse_heads(text: &str, ledger_name: &str) -> Result<Vec<Witness>, String> {
    let values: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(single @ Value::Object(_)) => vec![single],
        // JSON lines, or JSON documents one after another (e.g. each run's OUTPUT appended
        // to one file as it is).
        _ => serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .enumerate()
            .map(|(n, value)| value.map_err(|e| format!("document {}: not JSON ({e})", n + 1)))
            .collect::<Result<_, _>>()?,
    };
    let witnesses = witnesses_in(&values, ledger_name, |n| format!("heads entry {}", n + 1))?;
    if witnesses.is_empty() {
        return Err(format!("it names no chain head of ledger {ledger_name:?}"));
    }
    Ok(witnesses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A well-formed head made of one short hex text repeated.
    fn h(text: &str) -> String {
        let hex: String = text
            .chars()
            .map(|c| if c.is_ascii_hexdigit() { c } else { 'f' })
            .collect();
        hex.repeat(64).chars().take(64).collect()
    }

    fn pairs(witnesses: &[Witness]) -> Vec<(u64, &str)> {
        witnesses.iter().map(|w| (w.seq, w.head.as_str())).collect()
    }

    #[test]
    fn heads_come_from_summary_rows_of_this_ledger() {
        let rows = json!([
            {"record_type": "server", "ledger_chain_seq": 9, "ledger_chain_head": h("x")},
            {"record_type": "summary", "ledger_name": "other", "ledger_chain_seq": 2, "ledger_chain_head": h("o")},
            {"record_type": "summary", "ledger_name": "L", "ledger_chain_seq": 3,
             "ledger_chain_head": h("c"), "ledger_chain_prev_head": h("b")},
            {"seq": 1, "head": h("a")},
        ]);
        let heads = parse_heads(&rows.to_string(), "L").unwrap();
        assert_eq!(
            pairs(&heads),
            [
                (3, h("c").as_str()),
                (2, h("b").as_str()),
                (1, h("a").as_str())
            ]
        );
        let lines = format!(
            "{}\n\n{}\n",
            json!({"seq": 4, "head": h("d")}),
            json!({"seq": 5, "head": h("e")})
        );
        assert_eq!(parse_heads(&lines, "L").unwrap().len(), 2);
        let appended = format!(
            "{:#}\n{:#}\n",
            json!({"seq": 4, "head": h("d")}),
            json!({"seq": 5, "head": h("e")})
        );
        assert_eq!(parse_heads(&appended, "L").unwrap().len(), 2);
        assert!(parse_heads("[]", "L").is_err());
        assert!(parse_heads("{oops\n", "L").is_err());
    }

    #[test]
    fn a_coordinator_row_witnesses_each_shard_ledger() {
        let row = json!({"record_type": "summary", "ledger_name": "fleet", "shards": [
            {"shard": 1, "ledger_name": "fleet-shard-1", "ledger_chain_seq": 4,
             "ledger_chain_head": h("d1"), "ledger_chain_prev_head": h("c1")},
            {"shard": 2, "ledger_name": "fleet-shard-2", "ledger_chain_seq": 1,
             "ledger_chain_head": h("a2"), "ledger_chain_prev_head": h("0")},
            {"shard": 3, "ledger_name": "fleet-shard-3", "status": "failed"},
        ]});
        let rows = [row];
        let one = witnesses_in(&rows, "fleet-shard-1", |_| "row".into()).unwrap();
        assert_eq!(pairs(&one), [(4, h("d1").as_str()), (3, h("c1").as_str())]);
        assert!(one[0].source.contains("shard ledger fleet-shard-1"));
        let two = witnesses_in(&rows, "fleet-shard-2", |_| "row".into()).unwrap();
        assert_eq!(
            pairs(&two),
            [(1, h("a2").as_str())],
            "no head before the first write"
        );
        assert!(
            witnesses_in(&rows, "fleet-shard-3", |_| "row".into())
                .unwrap()
                .is_empty()
        );
        assert!(
            witnesses_in(&rows, "fleet", |_| "row".into())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn malformed_heads_are_refused_not_compared() {
        for bad in [
            json!({"seq": 99, "head": "abc"}),
            json!({"seq": 0, "head": h("a")}),
            json!({"seq": "3", "head": h("a")}),
            json!({"seq": 3}),
            json!({"record_type": "summary", "ledger_chain_seq": 3, "ledger_chain_head": h("a"),
                   "ledger_chain_prev_head": "zz"}),
        ] {
            assert!(parse_heads(&bad.to_string(), "L").is_err(), "{bad}");
        }
        let signed = json!({"record_type": "summary", "ledger_chain_seq": 2,
            "ledger_chain_head": h("a"), "ledger_chain_status": "broken",
            "ledger_chain_break": "x", "ledger_chain_signature": "s", "ledger_public_key": "k"});
        let heads = parse_heads(&signed.to_string(), "L").unwrap();
        assert_eq!(heads[0].status.as_deref(), Some("broken"));
        assert_eq!(heads[0].signature.as_deref(), Some("s"));
        assert_eq!(heads[0].public_key.as_deref(), Some("k"));
    }
}
