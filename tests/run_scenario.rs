//! Whole Actor runs through the library entry (`run::run` on a `LocalStorage` in a temporary
//! folder), twice or more, with the served surface changed in between. The rows and the ledger
//! record are compared exactly (clock and wire dependent fields aside).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;
#[path = "support/switchable.rs"]
mod switchable;

use actor::{ALL_CLASSES, Rows, RunDir, change, readable_row, stable, tool_digest};
use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use switchable::{Mode, Switchable};

// ---------------------------------------------------------------- the surfaces

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn q() -> Value {
    json!({"q": {"type": "string"}})
}

fn tool(name: &str, description: &str, annotations: Option<Value>) -> Value {
    let mut tool =
        json!({"name": name, "description": description, "inputSchema": schema(q(), &[])});
    if let Some(annotations) = annotations {
        tool["annotations"] = annotations;
    }
    tool
}

/// Before: eleven tools, one per change the second surface makes, plus one that never changes.
fn tools_before() -> Vec<Value> {
    let mut out_tool = tool("out", "Structured result", None);
    out_tool["outputSchema"] = schema(json!({"n": {"type": "integer"}}), &["n"]);
    vec![
        tool("keep", "Unchanged", Some(json!({"readOnlyHint": true}))),
        tool("gone", "Will be removed", None),
        tool("schema", "Schema grows", None),
        tool(
            "destroy_on",
            "Turns destructive",
            Some(json!({"destructiveHint": false})),
        ),
        tool(
            "destroy_off",
            "Stops being destructive",
            Some(json!({"destructiveHint": true})),
        ),
        tool(
            "ro_lost",
            "Loses read-only",
            Some(json!({"readOnlyHint": true})),
        ),
        tool(
            "ro_gained",
            "Gains read-only",
            Some(json!({"destructiveHint": false})),
        ),
        tool(
            "world",
            "Closes its world",
            Some(json!({"openWorldHint": true})),
        ),
        tool("desc", "Old words", None),
        out_tool,
    ]
}

/// After: every change class of a tool surface once.
fn tools_after() -> Vec<Value> {
    let mut schema_tool = tool("schema", "Schema grows", None);
    schema_tool["inputSchema"] = schema(
        json!({"q": {"type": "string"}, "limit": {"type": "integer"}}),
        &["limit"],
    );
    let mut out_tool = tool("out", "Structured result", None);
    // A weaker promise: `n` may now be missing from the result.
    out_tool["outputSchema"] = schema(json!({"n": {"type": "integer"}}), &[]);
    vec![
        tool("keep", "Unchanged", Some(json!({"readOnlyHint": true}))),
        schema_tool,
        tool(
            "destroy_on",
            "Turns destructive",
            Some(json!({"destructiveHint": true})),
        ),
        tool(
            "destroy_off",
            "Stops being destructive",
            Some(json!({"destructiveHint": false})),
        ),
        tool(
            "ro_lost",
            "Loses read-only",
            Some(json!({"readOnlyHint": false, "destructiveHint": false})),
        ),
        tool(
            "ro_gained",
            "Gains read-only",
            Some(json!({"readOnlyHint": true})),
        ),
        tool(
            "world",
            "Closes its world",
            Some(json!({"openWorldHint": false})),
        ),
        tool("desc", "New words", None),
        out_tool,
        tool("fresh", "Brand new", None),
    ]
}

fn served(version: &str, instructions: &str, tools: Vec<Value>) -> Value {
    json!({
        "name": "ledger-peer",
        "version": version,
        "instructions": instructions,
        "page_size": 3,
        "tools": tools,
    })
}

fn find<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap()
}

/// The change rows the second run must write for the rmcp server, all classes alerted, in the
/// engine's order: server-level first, then by tool name, class and field.
fn expected_changes(url: &str) -> Vec<Value> {
    let (before, after) = (tools_before(), tools_after());
    // Losing the read-only promise also means the tool may now write: a risk-derived row.
    let mut capability_write_gained = change(
        url,
        "capability_added",
        Some("ro_lost"),
        "capabilities",
        Some(json!(["read"])),
        Some(json!(["write"])),
        "medium",
    );
    capability_write_gained["details"] = json!(["write from annotation readOnlyHint: false"]);
    let mut schema_change = change(
        url,
        "input_schema_changed",
        Some("schema"),
        "inputSchema",
        Some(find(&before, "schema")["inputSchema"].clone()),
        Some(find(&after, "schema")["inputSchema"].clone()),
        "medium",
    );
    schema_change["compatibility"] = json!("breaking");
    schema_change["details"] = json!([
        "property added /properties/limit",
        "required added /properties/limit"
    ]);
    // Every removal is graded breaking.
    let mut removal_of_gone = change(
        url,
        "tool_removed",
        Some("gone"),
        "tool",
        Some(find(&before, "gone").clone()),
        None,
        "medium",
    );
    removal_of_gone["compatibility"] = json!("breaking");
    let mut output_change = change(
        url,
        "output_schema_changed",
        Some("out"),
        "outputSchema",
        Some(find(&before, "out")["outputSchema"].clone()),
        Some(find(&after, "out")["outputSchema"].clone()),
        "medium",
    );
    output_change["compatibility"] = json!("breaking");
    output_change["details"] = json!(["required removed /properties/n"]);
    let hint = |tool: &str, class: &str, key: &str, was: bool, severity: &str, note: &str| {
        let mut row = change(
            url,
            class,
            Some(tool),
            &format!("annotations.{key}"),
            Some(json!(was)),
            Some(json!(!was)),
            severity,
        );
        row["details"] = json!([format!("declared {key}: {note}")]);
        row
    };
    vec![
        change(
            url,
            "server_version_changed",
            None,
            "serverInfo.version",
            Some(json!("1.0.0")),
            Some(json!("2.0.0")),
            "low",
        ),
        change(
            url,
            "server_instructions_changed",
            None,
            "instructions",
            Some(json!("Read-only helpers")),
            Some(json!("Now with writes")),
            "low",
        ),
        change(
            url,
            "tool_description_changed",
            Some("desc"),
            "description",
            Some(json!("Old words")),
            Some(json!("New words")),
            "low",
        ),
        hint(
            "destroy_off",
            "destructive_hint_changed",
            "destructiveHint",
            true,
            "medium",
            "true → false",
        ),
        hint(
            "destroy_on",
            "destructive_hint_changed",
            "destructiveHint",
            false,
            "high",
            "false → true",
        ),
        change(
            url,
            "tool_added",
            Some("fresh"),
            "tool",
            None,
            Some(find(&after, "fresh").clone()),
            "medium",
        ),
        removal_of_gone,
        output_change,
        hint(
            "ro_gained",
            "read_only_hint_changed",
            "readOnlyHint",
            false,
            "low",
            "(absent) → true",
        ),
        hint(
            "ro_lost",
            "read_only_hint_changed",
            "readOnlyHint",
            true,
            "high",
            "true → false",
        ),
        schema_change,
        hint(
            "world",
            "open_world_hint_changed",
            "openWorldHint",
            true,
            "medium",
            "true → false",
        ),
        capability_write_gained,
    ]
}

fn stable_all(rows: &[Value]) -> Vec<Value> {
    rows.iter().map(stable).collect()
}

fn counts(pairs: &[(&str, usize)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect(),
    )
}

// ---------------------------------------------------------------- the scenario

/// Two runs over four servers: the rmcp peer changes every part of its surface (across pages),
/// a second server starts demanding authentication, a third goes away, a fourth stays the same.
/// One storage folder alerts on every class, a second one keeps the default `alert_on`.
#[tokio::test]
async fn two_runs_record_every_change_class_and_severity() {
    let rmcp = RmcpPeer::start(
        served("1.0.0", "Read-only helpers", tools_before()),
        RmcpMode::default(),
    );
    let plain_tools = vec![tool("ping", "Ping", Some(json!({"readOnlyHint": true})))];
    let gated = Switchable::start(served("1", "Gated", plain_tools.clone()));
    let vanishing = Switchable::start(served("1", "Vanishing", plain_tools.clone()));
    let steady = Switchable::start(served("1", "Steady", plain_tools.clone()));
    let urls: Vec<String> = [&rmcp.url, &gated.url, &vanishing.url, &steady.url]
        .iter()
        .map(|u| u.to_string())
        .collect();
    let (a, g, v, s) = (&urls[0], &urls[1], &urls[2], &urls[3]);

    let everything = RunDir::new();
    let defaults = RunDir::new();
    let input_all = json!({"servers": urls, "alert_on": ALL_CLASSES, "ledger_name": "fleet"});
    let input_default = json!({"servers": urls, "ledger_name": "fleet"});

    // ---- run 1: every server is new
    everything.run_ok(&input_all, None).await;
    defaults.run_ok(&input_default, None).await;
    let first = Rows::of(&everything);
    assert_eq!(
        stable(first.server(a)),
        readable_row(
            a,
            "modern",
            "2026-07-28",
            "ledger-peer",
            "1.0.0",
            &tools_before(),
            None,
            "created",
            0
        )
    );
    for url in [g, v, s] {
        assert_eq!(
            stable(first.server(url)),
            readable_row(
                url,
                "modern",
                "2026-07-28",
                "ledger-peer",
                "1",
                &plain_tools,
                None,
                "created",
                0
            )
        );
    }
    assert!(first.changes.is_empty(), "{:?}", first.changes);
    let summary1 = stable(&first.summary);
    assert_eq!(summary1["baselines_created"], 4);
    assert_eq!(summary1["servers_compared"], 0);
    let ledger1 = everything.ledger("fleet");

    // ---- the world changes
    rmcp.set_surface(served("2.0.0", "Now with writes", tools_after()));
    gated.set_mode(Mode::Unauthorized);
    vanishing.shut_down();

    // ---- run 2
    let outcome = everything.run_ok(&input_all, None).await;
    defaults.run_ok(&input_default, None).await;
    let second = Rows::of(&everything);

    // the rmcp server: compared, every class, exact rows
    let expected = expected_changes(a);
    actor::assert_rows_eq(&stable_all(&second.changes_of(a)), &expected);
    assert_eq!(
        stable(second.server(a)),
        readable_row(
            a,
            "modern",
            "2026-07-28",
            "ledger-peer",
            "2.0.0",
            &tools_after(),
            Some(&tools_before()),
            "compared",
            expected.len()
        )
    );
    // first_seen kept, last_changed = this run
    let row_a = second.server(a);
    assert_eq!(row_a["first_seen"], ledger1["servers"][a]["first_seen"]);
    assert_eq!(row_a["last_changed"], row_a["observed_at"]);
    for row in &second.changes {
        assert_eq!(row["observed_at"], row_a["observed_at"]);
    }

    // the gated server: one high auth change, its tool diff suppressed, surface kept
    assert_eq!(stable_all(&second.changes_of(g)), vec![auth_change(g)]);
    let row_g = stable(second.server(g));
    assert_eq!(row_g["reason_code"], "AUTH_REQUIRED");
    assert_eq!(row_g["ledger_status"], "compared");
    assert_eq!(row_g["auth_required"], true);
    assert_eq!(row_g["anonymous_listing_allowed"], false);
    assert_eq!(row_g["http_status"], 401);
    assert_eq!(row_g["change_count"], 1);
    assert_eq!(row_g["previous_tool_digest"], tool_digest(&plain_tools));

    // the vanished server: unavailable, entry kept as it was
    let row_v = stable(second.server(v));
    assert_eq!(row_v["reason_code"], "CONNECT_FAIL");
    assert_eq!(row_v["ok"], false);
    assert_eq!(row_v["ledger_status"], "unavailable");
    assert_eq!(row_v["change_count"], 0);
    assert_eq!(row_v["previous_tool_digest"], tool_digest(&plain_tools));
    assert_eq!(row_v["tools"], json!([]));
    assert!(second.changes_of(v).is_empty());

    // the steady server: compared, nothing changed
    assert_eq!(
        stable(second.server(s)),
        readable_row(
            s,
            "modern",
            "2026-07-28",
            "ledger-peer",
            "1",
            &plain_tools,
            Some(&plain_tools),
            "compared",
            0
        )
    );

    // the summary counts exactly what the rows show
    let mut by_class = vec![("auth_requirement_changed", 1usize)];
    for row in &expected {
        let class = row["change_class"].as_str().unwrap();
        match by_class.iter_mut().find(|(c, _)| *c == class) {
            Some((_, n)) => *n += 1,
            None => by_class.push((class, 1)),
        }
    }
    by_class.sort();
    let expected_summary = json!({
        "record_type": "summary",
        "servers_requested": 4,
        "servers_checked": 3,
        "servers_changed": 2,
        "servers_unreachable": 1,
        "servers_baseline_unreadable": 0,
        "servers_requiring_auth": 1,
        "servers_auth_rejected": 0,
        "servers_allowing_anonymous_listing": 2,
        "anonymous_listing_share": 2.0 / 3.0,
        "baselines_created": 0,
        "servers_compared": 3,
        "baselines_lost": 0,
        "changes_total": expected.len() + 1,
        "changes_by_class": counts(&by_class),
        "changes_by_severity": counts(&[("high", 3), ("low", 4), ("medium", 7)]),
        "alert_on": ALL_CLASSES,
        "ledger_store": "mcp-tool-surface-ledger",
        "ledger_name": "fleet",
        "digest_algorithm": "sha256-jcs/1",
        "servers_blocked": 0,
        "servers_deferred": 0,
        "servers_budget_exhausted": 0,
        "servers_from_registry": 0,
        "registry_skipped_stdio": 0,
        "registry_error": null,
        "ledger_chain_status": "intact",
        "ledger_chain_seq": 2,
    });
    assert_eq!(stable(&second.summary), expected_summary);
    assert_eq!(stable(&everything.output()), expected_summary);
    assert_eq!(outcome.summary.changes_total, expected.len() + 1);

    // the ledger after run 2
    let ledger2 = everything.ledger("fleet");
    assert_eq!(ledger2["format"], 1);
    assert_eq!(ledger2["ledger_name"], "fleet");
    let entry_a = &ledger2["servers"][a];
    assert_eq!(entry_a["tool_digest"], tool_digest(&tools_after()));
    assert_eq!(entry_a["era"], ledger1["servers"][a]["era"]);
    assert_eq!(entry_a["first_seen"], ledger1["servers"][a]["first_seen"]);
    assert_eq!(entry_a["identity"]["version"], "2.0.0");
    assert_eq!(entry_a["tools_total"], tools_after().len());
    let history: Vec<(&str, Option<&str>)> = entry_a["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["change_class"].as_str().unwrap(), h["tool_name"].as_str()))
        .collect();
    let expected_history: Vec<(&str, Option<&str>)> = expected
        .iter()
        .map(|c| (c["change_class"].as_str().unwrap(), c["tool_name"].as_str()))
        .collect();
    assert_eq!(history, expected_history);
    // the stored surface holds the full definitions, for the next run's old_value
    let key = entry_a["surface_key"].as_str().unwrap();
    let stored = everything.surface_record(key);
    assert_eq!(
        stored["tools"].as_array().unwrap().len(),
        tools_after().len()
    );
    assert_eq!(stored["identity"]["version"], "2.0.0");
    // auth-only: the surface of the gated server is the one of run 1
    assert_eq!(
        ledger2["servers"][g]["surface_key"],
        ledger1["servers"][g]["surface_key"]
    );
    assert_eq!(
        ledger2["servers"][g]["tool_digest"],
        ledger1["servers"][g]["tool_digest"]
    );
    assert_eq!(ledger2["servers"][g]["auth"]["auth_required"], true);
    // unavailable: byte-for-byte the entry of run 1
    assert_eq!(ledger2["servers"][v], ledger1["servers"][v]);

    // ---- alert_on filtering: same observations, only the default five classes became rows
    let filtered = Rows::of(&defaults);
    // The default set: the five classes of seed 000, the two risk classes, and a tool's
    // execution settings.
    let default_classes: Vec<&str> = ALL_CLASSES[..5]
        .iter()
        .chain(&ALL_CLASSES[11..13])
        .chain(&["tool_execution_changed"])
        .copied()
        .collect();
    // ... plus read_only_hint_changed and resource_removed (clients approve read-only tools
    // unasked; a catalogue losing an item is breaking).
    let also_default = ["read_only_hint_changed", "resource_removed"];
    let want: Vec<Value> = expected
        .iter()
        .filter(|c| {
            let class = c["change_class"].as_str().unwrap();
            default_classes.contains(&class) || also_default.contains(&class)
        })
        .cloned()
        .collect();
    let read_only_rows = expected
        .iter()
        .filter(|c| c["change_class"] == "read_only_hint_changed")
        .count();
    assert!(read_only_rows > 0, "the scenario changes a read-only hint");
    assert_eq!(
        want.len(),
        6 + read_only_rows,
        "tool_added, tool_removed, input schema, two destructive, capability added, read-only"
    );
    assert_eq!(stable_all(&filtered.changes_of(a)), want);
    assert_eq!(filtered.server(a)["change_count"], want.len());
    assert_eq!(filtered.changes_of(g).len(), 1);
    assert_eq!(filtered.summary["changes_total"], want.len() + 1);
    // The default also holds the prompt and template counterparts (none here).
    let mut default_alert_on = default_classes.clone();
    default_alert_on.extend([
        "prompt_added",
        "prompt_removed",
        "prompt_arguments_changed",
        "resource_template_added",
        "resource_template_removed",
        "resource_template_uri_changed",
    ]);
    default_alert_on.extend(also_default);
    assert_eq!(filtered.summary["alert_on"], json!(default_alert_on));

    // ---- run 3: the gated server is readable again: the auth change is reported back and
    // the tool diff resumes against the surface stored before the 401
    gated.set_mode(Mode::Serve);
    let mut grown = plain_tools.clone();
    grown.push(tool("pong", "Pong", None));
    gated.set_surface(served("1", "Gated", grown.clone()));
    everything.run_ok(&input_all, None).await;
    let third = Rows::of(&everything);
    let gated_changes = third.changes_of(g);
    let classes: Vec<&str> = gated_changes
        .iter()
        .map(|c| c["change_class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["auth_requirement_changed", "tool_added"]);
    assert_eq!(
        third.server(g)["previous_tool_digest"],
        tool_digest(&plain_tools)
    );
    assert_eq!(third.server(g)["tool_digest"], tool_digest(&grown));
    assert_eq!(third.server(g)["digest_changed"], true);
    // nothing changed on the rmcp server since run 2
    assert_eq!(third.server(a)["change_count"], 0);
    assert_eq!(third.server(a)["digest_changed"], false);
    assert!(third.changes_of(a).is_empty());
}

/// The auth change of a server that starts answering 401 (no OAuth metadata served).
fn auth_change(url: &str) -> Value {
    let open = json!({"auth_required": false, "anonymous_listing_allowed": true,
        "authorization_servers": [], "scopes": []});
    let locked = json!({"auth_required": true, "anonymous_listing_allowed": false,
        "authorization_servers": [], "scopes": []});
    let mut row = change(
        url,
        "auth_requirement_changed",
        None,
        "auth_required",
        Some(open),
        Some(locked),
        "high",
    );
    row["details"] = json!([
        "auth_required false → true",
        "anonymous_listing_allowed true → false"
    ]);
    row
}

/// A surface too large for one ledger record (9 MiB on the platform, kept locally as well), or
/// whose identity is larger than an entry keeps (64 KiB), is a RESPONSE_TOO_LARGE row: not
/// charged, its entry kept, and the other servers of the run are still saved.
#[tokio::test]
async fn a_surface_too_large_to_store_does_not_stop_the_run() {
    // 500 tools, about 10 MB of JSON: a legitimate large server. Stored compressed, it is
    // watched like any other.
    let prose = "Lists the issues of a repository, filtered by state, label and assignee. ";
    let large_tools: Vec<Value> = (0..500)
        .map(|i| support::surface::tool(&format!("large_{i}"), &prose.repeat(270)))
        .collect();
    let mut large = support::surface::surface("large", "1.0.0", large_tools);
    large["page_size"] = json!(100);
    let large_peer = RmcpPeer::start(large, RmcpMode::default());
    // About 13 MB of text that does not compress: more than a record may hold even gzipped.
    let tools: Vec<Value> = (0..12)
        .map(|i| support::surface::tool(&format!("bulky_{i}"), &incompressible_text(i, 1_100_000)))
        .collect();
    let mut huge = support::surface::surface("huge", "1.0.0", tools);
    huge["page_size"] = json!(3);
    let huge_peer = RmcpPeer::start(huge, RmcpMode::default());
    let small_peer = RmcpPeer::start(
        support::surface::surface("small", "1.0.0", support::surface::numbered_tools(2)),
        RmcpMode::default(),
    );
    let mut chatty =
        support::surface::surface("chatty", "1.0.0", support::surface::numbered_tools(1));
    chatty["instructions"] = json!("Use the tools wisely. ".repeat(4_000));
    let chatty_peer = RmcpPeer::start(chatty, RmcpMode::default());
    let chatty_url = chatty_peer.url.to_string();
    let (huge_url, small_url) = (huge_peer.url.to_string(), small_peer.url.to_string());
    let large_url = large_peer.url.to_string();
    let dir = RunDir::new();
    let input = json!({
        "servers": [huge_url, small_url, chatty_url, large_url],
        "max_response_bytes": 5_000_000,
        // Tens of megabytes through a debug build on a busy machine: no timing in this test.
        "request_timeout_seconds": 120,
        "max_server_seconds": 600,
    });
    dir.run_ok(&input, None).await;
    let rows = Rows::of(&dir);
    let large_row = rows.server(&large_url);
    assert_eq!(large_row["reason_code"], "OK", "{large_row}");
    assert_eq!(large_row["ledger_status"], "created");
    assert_eq!(large_row["tools_total"], 500);
    let huge_row = rows.server(&huge_url);
    assert_eq!(huge_row["reason_code"], "RESPONSE_TOO_LARGE", "{huge_row}");
    assert_eq!(huge_row["ledger_status"], "unavailable");
    assert!(
        huge_row["error"]
            .as_str()
            .unwrap()
            .contains("ledger record"),
        "{huge_row}"
    );
    assert_eq!(rows.server(&small_url)["ledger_status"], "created");
    let chatty_row = rows.server(&chatty_url);
    assert_eq!(
        chatty_row["reason_code"], "RESPONSE_TOO_LARGE",
        "{chatty_row}"
    );
    assert!(
        chatty_row["error"]
            .as_str()
            .unwrap()
            .contains("identity (name, title, version, instructions)")
    );
    let index = dir.ledger("DEFAULT");
    assert!(index["servers"].get(&chatty_url).is_none());
    assert!(
        index["servers"].get(&huge_url).is_none(),
        "no entry for the huge server"
    );
    assert!(index["servers"].get(&small_url).is_some());
    let large_key = index["servers"][&large_url]["surface_key"]
        .as_str()
        .unwrap();
    let stored = std::fs::metadata(
        dir.root()
            .join("key_value_stores/mcp-tool-surface-ledger")
            .join(format!("{large_key}.bin")),
    )
    .expect("the large surface record was written");
    assert!(stored.len() < 9 * 1024 * 1024, "{} bytes", stored.len());
}

/// `len` characters of pseudo-random words from a 64-letter alphabet (seeded by `seed`): text
/// that gzip cannot shrink much.
fn incompressible_text(seed: u64, len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut text = String::with_capacity(len);
    while text.len() < len {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let byte = ALPHABET[(state >> 58) as usize];
        text.push(if state.is_multiple_of(23) {
            ' '
        } else {
            byte as char
        });
    }
    text
}
