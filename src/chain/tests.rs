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
        open(&mut ledger, None, &[]);
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
                previous: None,
                surface: &s,
                tool_digest: s.tool_digest(),
                surface_key: "surface-x".into(),
                era: Era::Modern,
                transport: "streamable-http".into(),
                auth: Default::default(),
                repeated_keys: Vec::new(),
                tool_digests: None,
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
            ..Witness::default()
        })
        .chain([Witness {
            seq: 10,
            head: new.chain.as_ref().unwrap().head.clone(),
            source: "row 10".into(),
            ..Witness::default()
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
            for key in ["seq", "link", "values"] {
                item.as_object_mut().unwrap().remove(key);
            }
        }
    }
    ledger = serde_json::from_value(value).unwrap();
    open(&mut ledger, None, &[]);
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
    open(&mut ledger, None, &[]);
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

/// A source ledger after 4 writes, and a destination that took server a from it (with one
/// more change found there); both sealed.
fn moved_ledgers() -> (Ledger, Ledger) {
    let a = "https://a.example/mcp";
    let mut source = ledger_after(4);
    open(&mut source, None, &[]);
    let mut destination = Ledger::empty("dest");
    open(&mut destination, None, &[]);
    let from = LogItem {
        seq: source.chain.as_ref().unwrap().seq,
        head: source.chain.as_ref().unwrap().head.clone(),
    };
    let mut entry = source.servers.remove(a).unwrap();
    let mut copy = entry.clone();
    let out = moved::move_out(&mut copy, "dest", at(5));
    moved::move_in(&mut copy, "demo", from, at(5));
    destination.servers.insert(a.to_string(), copy);
    assert_eq!(
        moved::move_out(&mut entry, "dest", at(5)),
        out,
        "the same item both sides"
    );
    source
        .chain
        .as_mut()
        .unwrap()
        .moved_out
        .insert(a.to_string(), out);
    source.sealed_record().unwrap();
    destination.sealed_record().unwrap();
    open(&mut destination, None, &[]);
    let s = surface(9);
    let change = Change::new(
        ChangeClass::ToolAdded,
        Some("t8"),
        "tool",
        None,
        None,
        Severity::Low,
    );
    let update = Update::Readable {
        previous: None,
        surface: &s,
        tool_digest: s.tool_digest(),
        surface_key: "surface-y".into(),
        era: Era::Modern,
        transport: "streamable-http".into(),
        auth: Default::default(),
        repeated_keys: Vec::new(),
        tool_digests: None,
    };
    destination.apply(a, at(6), update, &[change]);
    destination.sealed_record().unwrap();
    (source, destination)
}

#[test]
fn a_move_is_linked_into_the_entry_chain_in_both_ledgers() {
    let (source, destination) = moved_ledgers();
    assert_eq!(check_index(&stored(&source)), Ok(()));
    assert_eq!(check_index(&stored(&destination)), Ok(()));
    let entry = &destination.servers["https://a.example/mcp"];
    let seqs: Vec<u64> = entry.moves.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [5, 6], "after the four changes of the source");
    assert_eq!(entry.history.last().unwrap().seq, Some(7));
    assert_eq!(destination.chain.as_ref().unwrap().seq, 2);
    assert_eq!(
        source.chain.as_ref().unwrap().moved_out["https://a.example/mcp"],
        entry.moves[0]
    );

    let moves = "/servers/https:~1~1a.example~1mcp/moves";
    type Tamper<'a> = Box<dyn Fn(&mut Value) + 'a>;
    let table: Vec<(&str, Tamper<'_>, &str, &str)> = vec![
        (
            "move edited",
            Box::new(|v: &mut Value| {
                *v.pointer_mut(&format!("{moves}/1/ledger")).unwrap() = json!("x")
            }),
            "item seq 6",
            "edited",
        ),
        (
            "move deleted",
            Box::new(|v: &mut Value| {
                v.pointer_mut(moves)
                    .unwrap()
                    .as_array_mut()
                    .unwrap()
                    .remove(0);
            }),
            "item seq 5",
            "deleted",
        ),
        (
            "moves swapped",
            Box::new(|v: &mut Value| {
                v.pointer_mut(moves)
                    .unwrap()
                    .as_array_mut()
                    .unwrap()
                    .swap(0, 1)
            }),
            "item seq 5",
            "reordered",
        ),
        (
            "moved-in entry removed",
            Box::new(|v: &mut Value| {
                v["servers"]
                    .as_object_mut()
                    .unwrap()
                    .remove("https://a.example/mcp");
            }),
            "server https://a.example/mcp",
            "removed",
        ),
    ];
    let honest = stored(&destination);
    for (name, tamper, location, problem) in table {
        let mut value = honest.clone();
        tamper(&mut value);
        let found = check_index(&value).expect_err(name);
        assert!(found.location.contains(location), "{name}: {found}");
        assert!(found.problem.contains(problem), "{name}: {found}");
    }
    // An entry back in the source it moved out of, outside the chain.
    let mut value = stored(&source);
    value["servers"]["https://a.example/mcp"] = honest["servers"]["https://a.example/mcp"].clone();
    let found = check_index(&value).unwrap_err();
    assert!(found.problem.contains("moved out"), "{found}");
}

#[test]
fn a_broken_chain_with_moves_is_linked_again_from_the_genesis() {
    let (_, destination) = moved_ledgers();
    let mut value = stored(&destination);
    value["servers"]["https://a.example/mcp"]["history"][0]["field"] = json!("forged");
    let mut ledger: Ledger = serde_json::from_value(value).unwrap();
    open(&mut ledger, None, &[]);
    assert_eq!(ledger.chain.as_ref().unwrap().opened.status, "broken");
    ledger.sealed_record().unwrap();
    assert_eq!(check_index(&stored(&ledger)), Ok(()));
    let entry = &ledger.servers["https://a.example/mcp"];
    assert_eq!(
        entry.moves.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [6, 7]
    );
}

/// What someone who can write the store makes of an honest ledger: `edit` applied, every item
/// linked again, and one more write sealed on top of the honest head, as a run would.
fn forged_next_write(honest: &Ledger, edit: impl Fn(&mut Ledger)) -> Ledger {
    let mut forged = honest.clone();
    edit(&mut forged);
    for entry in forged.servers.values_mut() {
        moved::relink(entry);
    }
    let chain = forged.chain.as_mut().unwrap();
    chain.opened = Opened {
        status: "intact",
        from: (chain.seq, chain.head.clone()),
        log: chain.log.clone(),
        broken: None,
        servers: chain.servers.clone(),
    };
    seal(&mut forged);
    forged
}

/// The witnesses an honest ledger's runs left: every write's head, as the summary rows name
/// them.
fn witnesses_of(ledger: &Ledger) -> Vec<Witness> {
    let chain = ledger.chain.as_ref().unwrap();
    chain
        .log
        .iter()
        .cloned()
        .chain([LogItem {
            seq: chain.seq,
            head: chain.head.clone(),
        }])
        .map(|l| Witness {
            seq: l.seq,
            head: l.head,
            source: format!("row {}", l.seq),
            status: Some("intact".into()),
            ..Witness::default()
        })
        .collect()
}

/// Re-seals a stored index after a raw edit of its chain, as a forger recomputing the head
/// would.
fn resealed(mut value: Value, edit: impl Fn(&mut Value)) -> Value {
    edit(&mut value);
    let head = index_head(&value);
    value["chain"]["head"] = json!(head);
    value
}

#[test]
fn a_made_up_next_write_is_unwitnessed_and_its_variants_are_breaks() {
    let honest = ledger_after(6);
    let witnesses = witnesses_of(&honest);
    let forged = forged_next_write(&honest, |l| {
        let entry = l.servers.get_mut("https://a.example/mcp").unwrap();
        entry.history.remove(2);
    });
    let value = stored(&forged);
    // Valid on its own and against every witness: only the unwitnessed write shows it.
    assert_eq!(check_index(&value), Ok(()));
    let checked = check_heads(&value, &witnesses).unwrap();
    assert_eq!(checked.newest, Some(6));
    let writes = unwitnessed_writes(&value, checked.newest);
    assert_eq!(writes.iter().map(|w| w.seq).collect::<Vec<_>>(), [7]);
    assert_eq!(
        forged.chain.as_ref().unwrap().changed,
        ["https://a.example/mcp"],
        "the write names the entry it rewrote"
    );
    // A run that finds it says so and does not continue it.
    let mut run: Ledger = serde_json::from_value(value.clone()).unwrap();
    open(&mut run, None, &witnesses);
    let opened = run.chain.as_ref().unwrap().opened.clone();
    assert_eq!(opened.status, "unwitnessed");
    assert!(opened.broken.unwrap().contains("writes 7 to 7"));
    run.sealed_record().unwrap();
    assert_eq!(
        run.chain.as_ref().unwrap().genesis.kind,
        GenesisKind::Rebased
    );
    assert_eq!(
        check_index(&stored(&run)),
        Ok(()),
        "the rebased write passes the log rule"
    );

    type Edit = Box<dyn Fn(&mut Value)>;
    let variants: Vec<(&str, Edit, &str)> = vec![
        (
            "prev is not the log's tail",
            Box::new(|v| v["chain"]["prev"] = json!("a".repeat(64))),
            "does not continue",
        ),
        (
            "the log cut to one entry",
            Box::new(|v| {
                let log = v["chain"]["log"].as_array_mut().unwrap();
                log.drain(..log.len() - 1);
            }),
            "cut",
        ),
        (
            "a write missing from the log",
            Box::new(|v| {
                v["chain"]["log"].as_array_mut().unwrap().remove(2);
            }),
            "",
        ),
        (
            "a fresh genesis written over the old chain",
            Box::new(|v| v["chain"]["genesis"] = json!({"seq": 7, "kind": "new"})),
            "fresh start",
        ),
        (
            "a genesis after the write",
            Box::new(|v| v["chain"]["genesis"] = json!({"seq": 9, "kind": "rebased"})),
            "genesis",
        ),
        (
            "a malformed head in the log",
            Box::new(|v| v["chain"]["log"][0]["head"] = json!("abc")),
            "malformed head",
        ),
    ];
    for (name, edit, problem) in variants {
        let tampered = resealed(value.clone(), edit);
        let found = check_index(&tampered).expect_err(name);
        assert!(found.problem.contains(problem), "{name}: {found}");
        assert_eq!(found.location, "index write 7", "{name}");
    }
}

#[test]
fn a_stripped_chain_or_a_deleted_index_is_not_adopted() {
    let honest = ledger_after(3);
    let mut value = stored(&honest);
    value.as_object_mut().unwrap().remove("chain");
    let mut stripped: Ledger = serde_json::from_value(value.clone()).unwrap();
    open(&mut stripped, None, &[]);
    let opened = &stripped.chain.as_ref().unwrap().opened;
    assert_eq!(opened.status, "broken");
    assert!(
        opened.broken.as_ref().unwrap().contains("stripped"),
        "{opened:?}"
    );
    // Items without chain fields, but a witness of an earlier head: not adopted either.
    for entry in value["servers"].as_object_mut().unwrap().values_mut() {
        for item in entry["history"].as_array_mut().unwrap() {
            for key in ["seq", "link", "values"] {
                item.as_object_mut().unwrap().remove(key);
            }
        }
        entry.as_object_mut().unwrap().remove("history_base");
    }
    let bare: Ledger = serde_json::from_value(value).unwrap();
    let mut adopted = bare.clone();
    open(&mut adopted, None, &[]);
    assert_eq!(adopted.chain.as_ref().unwrap().opened.status, "adopted");
    let mut witnessed = bare;
    open(&mut witnessed, None, &witnesses_of(&honest));
    assert_eq!(witnessed.chain.as_ref().unwrap().opened.status, "broken");
    // The whole index deleted, while a run witnessed it.
    let mut gone = Ledger::empty("demo");
    open(&mut gone, None, &witnesses_of(&honest));
    let opened = &gone.chain.as_ref().unwrap().opened;
    assert_eq!(opened.status, "broken");
    assert!(opened.broken.as_ref().unwrap().contains("gone"));
}

#[test]
fn witness_rows_keep_their_evidence_and_their_signatures() {
    let honest = ledger_after(4);
    let value = stored(&honest);
    let mut rows = witnesses_of(&honest);
    // A run said the chain was broken at write 3; the index now begins cleanly.
    rows[2].status = Some("broken".into());
    let found = check_witness_rows(&value, "demo", &rows, None).unwrap_err();
    assert!(found.problem.contains("written over"), "{found}");
    rows[2].status = Some("adopted".into());
    assert!(check_witness_rows(&value, "demo", &rows, None).is_err());
    rows[2].status = Some("intact".into());
    assert_eq!(check_witness_rows(&value, "demo", &rows, None), Ok(0));

    // Signed rows: a good signature counts, a bad one or another key is a break.
    let secret = SigningSecret::from_hex(&"11".repeat(32)).unwrap();
    let key = secret.public_key_hex();
    let mut signed = rows.clone();
    for row in &mut signed {
        row.signature = Some(secret.sign_head("demo", row.seq, &row.head));
        row.public_key = Some(key.clone());
    }
    assert_eq!(
        check_witness_rows(&value, "demo", &signed, Some(&key)),
        Ok(4)
    );
    let other = SigningSecret::from_hex(&"22".repeat(32)).unwrap();
    let found =
        check_witness_rows(&value, "demo", &signed, Some(&other.public_key_hex())).unwrap_err();
    assert!(found.problem.contains("another key"), "{found}");
    signed[1].signature = Some(secret.sign_head("demo", 2, &"f".repeat(64)));
    let found = check_witness_rows(&value, "demo", &signed, None).unwrap_err();
    assert_eq!(found.location, "index write 2");
    assert!(found.problem.contains("forged"), "{found}");
}

/// Sealing writes the entries one at a time in RFC 8785 key order (UTF-16 code units), which
/// differs from the map's own order (UTF-8 bytes) for keys beyond the Basic Multilingual
/// Plane: the head sealed must be the one a reader recomputes from the whole stored index.
#[test]
fn a_head_sealed_entry_by_entry_is_the_head_of_the_whole_index() {
    let mut ledger = Ledger::empty("order");
    open(&mut ledger, None, &[]);
    let urls = [
        "https://\u{e000}.example/mcp",
        "https://\u{10000}.example/mcp",
        "https://a.example/mcp",
        "https://\u{ff61}.example/mcp",
    ];
    for (i, url) in urls.into_iter().enumerate() {
        let s = surface(i + 1);
        let update = Update::Readable {
            previous: None,
            surface: &s,
            tool_digest: s.tool_digest(),
            surface_key: format!("surface-{i}"),
            era: Era::Modern,
            transport: "streamable-http".into(),
            auth: Default::default(),
            repeated_keys: Vec::new(),
            tool_digests: None,
        };
        ledger.apply(url, at(1), update, &[]);
    }
    // The two orders disagree on these keys, so the test can tell them apart.
    let by_bytes: Vec<&String> = ledger.servers.keys().collect();
    let mut by_units = by_bytes.clone();
    by_units.sort_by(|a, b| canon::cmp_utf16(a, b));
    assert_ne!(by_bytes, by_units);
    ledger.sealed_record().unwrap();
    let value = stored(&ledger);
    assert_eq!(value["chain"]["head"], json!(index_head(&value)));
    assert_eq!(check_index(&value), Ok(()));
}
