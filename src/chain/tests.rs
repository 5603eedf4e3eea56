use super::*;
use crate::diff::{Change, ChangeClass, Severity};
use crate::ledger::{Ledger, Update};
use crate::mcp::Era;
use crate::surface::{ServerIdentity, Surface};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

fn at(run: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_790_000_000 + run * 3600, 0).unwrap()
}

fn surface(tools: usize) -> Surface {
    let tools = (0..tools)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    Surface::from_tools(ServerIdentity::default(), tools).unwrap()
}

/// The stored index after each of `runs` sealed writes, each adding one tool to two servers.
fn writes(runs: usize) -> (Ledger, Vec<Value>) {
    let mut ledger = Ledger::empty("demo");
    let mut copies = Vec::new();
    for run in 0..runs {
        let mut value = serde_json::to_value(&ledger).unwrap();
        if run > 0 {
            assert_eq!(check_index(&value), Ok(()), "write {run}");
            value = serde_json::to_value(&ledger).unwrap();
        }
        ledger = serde_json::from_value(value).unwrap();
        open(&mut ledger, None);
        for url in ["https://a.example/mcp", "https://b.example/mcp"] {
            let s = surface(run + 1);
            let change = Change::new(
                ChangeClass::ToolAdded,
                Some(&format!("t{run}")),
                "tool",
                None,
                Some(json!(run)),
                Severity::Medium,
            );
            let update = Update::Readable {
                surface: &s,
                tool_digest: s.tool_digest(),
                surface_key: "surface-x".into(),
                era: Era::Modern,
                transport: "streamable-http".into(),
                auth: Default::default(),
                repeated_keys: Vec::new(),
            };
            ledger.apply(url, at(run as i64), update, &[change]);
        }
        ledger.sealed_record().unwrap();
        copies.push(stored(&ledger));
    }
    (ledger, copies)
}

fn ledger_after(runs: usize) -> Ledger {
    writes(runs).0
}

fn stored(ledger: &Ledger) -> Value {
    serde_json::from_slice(&ledger.to_record().bytes).unwrap()
}

#[test]
fn honest_writes_check_and_count_up() {
    let ledger = ledger_after(10);
    let value = stored(&ledger);
    assert_eq!(check_index(&value), Ok(()));
    let chain = ledger.chain.as_ref().unwrap();
    assert_eq!(chain.seq, 10);
    assert_eq!(chain.genesis.kind, GenesisKind::New);
    assert_eq!(chain.log.len(), 9);
    assert_eq!(chain.prev, chain.log[8].head);
    assert_eq!(chain.servers["https://a.example/mcp"].seq, 10);
}

#[test]
fn tampering_is_found_where_it_happened() {
    let a = "/servers/https:~1~1a.example~1mcp/history";
    type Tamper<'a> = Box<dyn Fn(&mut Value) + 'a>;
    let table: Vec<(&str, Tamper<'_>, &str, &str)> = vec![
        (
            "edited",
            Box::new(|v: &mut Value| {
                v.pointer_mut(&format!("{a}/3/severity"))
                    .map(|s| *s = json!("low"))
                    .unwrap()
            }),
            "item seq 4",
            "edited",
        ),
        (
            "deleted",
            Box::new(|v: &mut Value| {
                v.pointer_mut(a).unwrap().as_array_mut().unwrap().remove(3);
            }),
            "item seq 4",
            "deleted",
        ),
        (
            "swapped",
            Box::new(|v: &mut Value| v.pointer_mut(a).unwrap().as_array_mut().unwrap().swap(3, 4)),
            "item seq 4",
            "reordered",
        ),
        (
            "last deleted",
            Box::new(|v: &mut Value| {
                v.pointer_mut(a).unwrap().as_array_mut().unwrap().pop();
            }),
            "server https://a.example/mcp",
            "deleted",
        ),
        (
            "entry removed",
            Box::new(|v: &mut Value| {
                v["servers"]
                    .as_object_mut()
                    .unwrap()
                    .remove("https://b.example/mcp");
            }),
            "server https://b.example/mcp",
            "removed",
        ),
        (
            // Kept values are not in the item's link: the head covers them.
            "values edited",
            Box::new(|v: &mut Value| {
                v.pointer_mut(&format!("{a}/3/values/new/json"))
                    .map(|s| *s = json!("\"forged\""))
                    .unwrap()
            }),
            "index write 10",
            "does not match its head",
        ),
        (
            "state edited",
            Box::new(|v: &mut Value| {
                v["servers"]["https://b.example/mcp"]["tools_total"] = json!(0)
            }),
            "index write 10",
            "does not match its head",
        ),
    ];
    let honest = stored(&ledger_after(10));
    for (name, tamper, location, problem) in table {
        let mut value = honest.clone();
        tamper(&mut value);
        let found = check_index(&value).expect_err(name);
        assert!(found.location.contains(location), "{name}: {found}");
        assert!(found.problem.contains(problem), "{name}: {found}");
    }
}

#[test]
fn heads_catch_rollback_and_replaced_witnesses() {
    let (new, copies) = writes(10);
    let old = copies[4].clone();
    let witnesses: Vec<Witness> = new
        .chain
        .as_ref()
        .unwrap()
        .log
        .iter()
        .map(|l| Witness {
            seq: l.seq,
            head: l.head.clone(),
            source: format!("row {}", l.seq),
        })
        .chain([Witness {
            seq: 10,
            head: new.chain.as_ref().unwrap().head.clone(),
            source: "row 10".into(),
        }])
        .collect();
    let checked = check_heads(&stored(&new), &witnesses).unwrap();
    assert_eq!(checked.matched, 10);
    // The older copy is valid on its own, but the witnesses know later writes.
    assert_eq!(check_index(&old), Ok(()));
    let rolled = check_heads(&old, &witnesses).unwrap_err();
    assert!(rolled.problem.contains("rolled back"), "{rolled}");
    let mut replaced = witnesses.clone();
    replaced[3].head = "f".repeat(64);
    let found = check_heads(&stored(&new), &replaced).unwrap_err();
    assert_eq!(found.location, "index write 4");
}

#[test]
fn a_ledger_without_a_chain_is_adopted_once() {
    let mut ledger = ledger_after(3);
    let mut value = stored(&ledger);
    value.as_object_mut().unwrap().remove("chain");
    for entry in value["servers"].as_object_mut().unwrap().values_mut() {
        for item in entry["history"].as_array_mut().unwrap() {
            item.as_object_mut().unwrap().remove("seq");
            item.as_object_mut().unwrap().remove("link");
        }
    }
    ledger = serde_json::from_value(value).unwrap();
    open(&mut ledger, None);
    assert_eq!(ledger.chain.as_ref().unwrap().opened.status, "adopted");
    ledger.sealed_record().unwrap();
    let chain = ledger.chain.as_ref().unwrap();
    assert_eq!((chain.seq, chain.genesis.kind), (1, GenesisKind::Adopted));
    assert_eq!(check_index(&stored(&ledger)), Ok(()));
}

#[test]
fn a_broken_chain_is_not_continued() {
    let mut value = stored(&ledger_after(4));
    value["servers"]["https://a.example/mcp"]["history"][1]["field"] = json!("forged");
    let mut ledger: Ledger = serde_json::from_value(value).unwrap();
    open(&mut ledger, None);
    let opened = ledger.chain.as_ref().unwrap().opened.clone();
    assert_eq!(opened.status, "broken");
    assert!(opened.broken.unwrap().contains("item seq 2"));
    ledger.sealed_record().unwrap();
    let chain = ledger.chain.as_ref().unwrap();
    assert_eq!(chain.genesis.kind, GenesisKind::Rebased);
    assert_eq!(chain.seq, 5);
    assert_eq!(check_index(&stored(&ledger)), Ok(()));
}

#[test]
fn links_are_what_the_document_says() {
    let item = json!({"observed_at": "2026-01-01T00:00:00Z", "change_class": "tool_added",
                      "tool_name": "x", "field": "tool", "severity": "medium", "seq": 1});
    let prev = genesis_link("https://a.example/mcp");
    let mut bytes = prev.as_bytes().to_vec();
    bytes.push(b'\n');
    bytes.extend_from_slice(br#"{"change_class":"tool_added","field":"tool","observed_at":"2026-01-01T00:00:00Z","seq":1,"severity":"medium","tool_name":"x"}"#);
    assert_eq!(item_link(&prev, &item), sha256_hex(&bytes)[..LINK_HEX]);
    assert_eq!(prev.len(), LINK_HEX);
    // The kept values are outside the link: an item links the same with or without them.
    let mut with_values = item.clone();
    with_values["values"] = json!({"old": {"json": "1"}, "new": {"bytes": 900, "sha256": "ab"}});
    assert_eq!(item_link(&prev, &with_values), item_link(&prev, &item));
}
