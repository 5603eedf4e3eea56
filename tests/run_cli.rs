//! The binary end to end: `--storage-dir`, `--input`, `--allow-private-targets`, exit codes,
//! fault servers and their reason codes, blocked entries, refused input, a kill -9 in the middle
//! of a run, and a run with no network at all (inside `unshare -n`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/sample_rows.rs"]
mod sample_rows;
mod support;
#[path = "support/switchable.rs"]
mod switchable;

use std::process::Output;
use std::time::{Duration, Instant};

use actor::{Rows, RunDir, can_unshare_network, in_network_namespace};
use serde_json::{Value, json};
use support::faults;
use support::surface::{surface, tool};
use switchable::{Mode, Switchable};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "exit status; stderr:\n{}",
        stderr(output)
    );
}

/// The server row of `url`: unreadable, with `code`, and its entry left alone.
#[track_caller]
fn assert_unreadable(rows: &Rows, url: &str, code: &str) {
    let row = rows.server(url);
    assert_eq!(row["reason_code"], code, "{row}");
    assert_eq!(row["ok"], false, "{row}");
    assert_eq!(row["ledger_status"], "unavailable", "{row}");
    assert!(
        row["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{row}"
    );
    assert_eq!(row["tools"], json!([]), "{row}");
    assert_eq!(row["change_count"], 0, "{row}");
}

/// Every fast fault of one run gets its own reason code; the run still exits 0 and reads the
/// healthy server next to them.
#[test]
fn fault_servers_get_their_reason_codes_and_the_run_succeeds() {
    let healthy = Switchable::start(surface("healthy", "1", vec![tool("a", "A")]));
    let big = faults::url("/big").to_string();
    let rpc = faults::url("/rpc-error").to_string();
    let html = faults::url("/html").to_string();
    let status = faults::url("/status-500").to_string();
    let refused = faults::refused_url().to_string();
    let servers = [
        &healthy.url.to_string(),
        &big,
        &rpc,
        &html,
        &status,
        &refused,
    ]
    .map(|s| s.to_string());
    let dir = RunDir::new();
    let input = json!({"servers": servers, "max_response_bytes": 1_000_000});

    let output = dir.run_binary(&input, &[]);
    assert_exit(&output, 0);
    let rows = Rows::of(&dir);
    assert_eq!(rows.servers.len(), servers.len());
    assert_eq!(rows.server(healthy.url.as_str())["reason_code"], "OK");
    assert_unreadable(&rows, &big, "RESPONSE_TOO_LARGE");
    assert_unreadable(&rows, &rpc, "RPC_ERROR");
    assert_unreadable(&rows, &html, "NOT_JSON");
    assert_unreadable(&rows, &status, "HTTP_ERROR");
    assert_eq!(rows.server(&status)["http_status"], 500);
    assert_unreadable(&rows, &refused, "CONNECT_FAIL");
    assert_eq!(rows.summary["servers_unreachable"], 5);
    assert_eq!(rows.summary["servers_checked"], 1);
    // one log line per server with its verdict
    let log = stderr(&output);
    for code in [
        "RESPONSE_TOO_LARGE",
        "RPC_ERROR",
        "NOT_JSON",
        "HTTP_ERROR",
        "CONNECT_FAIL",
    ] {
        assert!(log.contains(code), "no log line with {code}:\n{log}");
    }
    // only the readable server entered the ledger
    let ledger = dir.ledger("DEFAULT");
    let keys: Vec<&String> = ledger["servers"].as_object().unwrap().keys().collect();
    assert_eq!(keys, [healthy.url.as_str()]);
}

/// Unusable entries become `BLOCKED_TARGET` rows in input order, never stop the run, and the
/// usable entry next to them is read.
#[test]
fn blocked_entries_become_rows_and_the_run_continues() {
    let healthy = Switchable::start(surface("healthy", "1", vec![tool("a", "A")]));
    let good = healthy.url.to_string();
    let port = healthy.url.port().unwrap();
    let entries = vec![
        json!("not a url"),
        json!("ftp://files.example.com/mcp"),
        json!(format!("http://user:secret@127.0.0.1:{port}/mcp")),
        json!(format!("http://localhost:{port}/mcp")),
        json!(good.clone()),
        json!(good.clone()),
        json!(42),
    ];
    let dir = RunDir::new();
    let output = dir.run_binary(&json!({"servers": entries}), &[]);
    assert_exit(&output, 0);
    let rows = Rows::of(&dir);
    let shown: Vec<(&str, &str)> = rows
        .servers
        .iter()
        .map(|r| {
            (
                r["server_url"].as_str().unwrap(),
                r["reason_code"].as_str().unwrap(),
            )
        })
        .collect();
    // the refused credential is redacted, never echoed
    let credentials = format!("http://***@127.0.0.1:{port}/mcp");
    let dataset: Vec<String> = dir.rows().iter().map(|r| r.to_string()).collect();
    assert!(
        !dataset.concat().contains("secret"),
        "credential leaked into the dataset"
    );
    assert!(
        !stderr(&output).contains("secret"),
        "credential leaked into the log"
    );
    let localhost = format!("http://localhost:{port}/mcp");
    assert_eq!(
        shown,
        [
            ("not a url", "BLOCKED_TARGET"),
            ("ftp://files.example.com/mcp", "BLOCKED_TARGET"),
            (credentials.as_str(), "BLOCKED_TARGET"),
            // run_binary passes the operator override, which admits `localhost` when it
            // resolves to loopback only: the same server under another URL.
            (localhost.as_str(), "OK"),
            (good.as_str(), "OK"),
            (good.as_str(), "BLOCKED_TARGET"),
            ("42", "BLOCKED_TARGET"),
        ]
    );
    for row in rows
        .servers
        .iter()
        .filter(|r| r["reason_code"] == "BLOCKED_TARGET")
    {
        assert_eq!(row["ledger_status"], "unavailable", "{row}");
        assert!(
            row["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{row}"
        );
    }
    assert!(
        rows.servers[5]["error"]
            .as_str()
            .unwrap()
            .contains("repeats")
    );
    assert_eq!(rows.summary["servers_blocked"], 5);
    assert_eq!(rows.summary["servers_unreachable"], 0);
    assert_eq!(rows.summary["servers_checked"], 2);
}

/// Refused input: exit 2 before any network work, every bad field named, the ledger record
/// byte-identical, no dataset row.
#[test]
fn bad_input_exits_2_names_every_field_and_leaves_the_ledger_alone() {
    let healthy = Switchable::start(surface("healthy", "1", vec![tool("a", "A")]));
    let dir = RunDir::new();
    let output = dir.run_binary(&json!({"servers": [healthy.url.as_str()]}), &[]);
    assert_exit(&output, 0);
    let before = dir
        .ledger_bytes("DEFAULT")
        .expect("ledger after the first run");

    healthy.set_mode(Mode::Hang);
    let bad = json!({
        "servers": [healthy.url.as_str()],
        "serverz": [],
        "concurrency": 0,
        "max_run_seconds": 10,
        "request_timeout_seconds": 500,
        "alert_on": ["tool_renamed"],
    });
    let started = Instant::now();
    let output = dir.run_binary(&bad, &[]);
    assert_exit(&output, 2);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "no server was contacted"
    );
    let log = stderr(&output);
    for field in [
        "serverz",
        "concurrency",
        "max_run_seconds",
        "request_timeout_seconds",
        "alert_on",
    ] {
        assert!(log.contains(field), "{field} not named:\n{log}");
    }
    assert!(log.contains("from 1 to 20"), "allowed range shown:\n{log}");
    assert_eq!(dir.ledger_bytes("DEFAULT").unwrap(), before);
    assert!(dir.rows().is_empty());

    // not JSON at all
    let path = dir.root().join("broken.json");
    std::fs::write(&path, b"{servers: ").unwrap();
    let output = std::process::Command::new(actor::BINARY)
        .arg("--storage-dir")
        .arg(dir.root())
        .arg("--input")
        .arg(&path)
        .output()
        .unwrap();
    assert_exit(&output, 2);
    assert_eq!(dir.ledger_bytes("DEFAULT").unwrap(), before);
}

/// A small deterministic generator, seeded from the clock and printed, for the kill delays.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }
}

/// kill -9 at random moments of a run never leaves a torn or lost ledger: the record always
/// parses and is either the previous one (byte-identical) or the new one.
#[test]
fn kill_9_during_a_run_never_corrupts_the_ledger() {
    let slow = Switchable::start(surface("slow", "1", vec![tool("a", "A")]));
    let changing = Switchable::start(surface("changing", "1", vec![tool("a", "A")]));
    let servers = [slow.url.to_string(), changing.url.to_string()];
    let dir = RunDir::new();
    let input = json!({"servers": servers});
    assert_exit(&dir.run_binary(&input, &[]), 0);

    // Make a run last a while so a kill lands in the middle as often as at the end.
    slow.set_delay(Duration::from_millis(150));
    let started = Instant::now();
    changing.set_surface(surface(
        "changing",
        "2",
        vec![tool("a", "A"), tool("b", "B")],
    ));
    assert_exit(&dir.run_binary(&input, &[]), 0);
    let full_run = started.elapsed().as_millis() as u64;

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("kill -9 delays seeded with {seed}, a full run takes {full_run} ms");
    let mut random = Lcg(seed);
    let (mut kept, mut replaced) = (0, 0);
    for round in 0..8u64 {
        let before = dir.ledger_bytes("DEFAULT").unwrap();
        let tools: Vec<Value> = (0..=round + 2)
            .map(|i| tool(&format!("t{i}"), "T"))
            .collect();
        let new_digest = actor::tool_digest(&tools);
        changing.set_surface(surface("changing", &format!("{}", round + 3), tools));
        // Every other round aims at the end of the run, where the records are written.
        let delay = if round % 2 == 0 {
            random.below(full_run + full_run / 4)
        } else {
            full_run * 17 / 20 + random.below(full_run * 3 / 10)
        };
        let mut child = dir
            .command(&input, &["--allow-private-targets"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        // SIGKILL, no chance to clean up (a no-op if it already finished).
        let _ = child.kill();
        let _ = child.wait();

        let after = dir
            .ledger_bytes("DEFAULT")
            .expect("the ledger record is never lost");
        let ledger: Value = serde_json::from_slice(&after)
            .unwrap_or_else(|e| panic!("round {round} (delay {delay} ms): torn ledger: {e}"));
        if after == before {
            kept += 1;
        } else {
            replaced += 1;
            let entry = &ledger["servers"][changing.url.as_str()];
            assert_eq!(
                entry["tool_digest"], new_digest,
                "round {round}: a new record is complete"
            );
            // every surface the new index names was written before it
            let key = entry["surface_key"].as_str().unwrap();
            let surface = dir.surface_record(key);
            assert_eq!(surface["tools"].as_array().unwrap().len() as u64, round + 3);
        }
        eprintln!(
            "round {round}: delay {delay} ms, replaced: {}",
            after != before
        );
    }
    eprintln!("kill -9: {kept} rounds kept the old record, {replaced} wrote the new one");
    assert_exit(&dir.run_binary(&input, &[]), 0);
}

/// One binary run inside a network namespace of its own: a name that cannot resolve is
/// `DNS_FAIL`, and no DNS query can leave the machine.
#[test]
fn an_unresolvable_name_is_dns_fail_without_network() {
    if !can_unshare_network() {
        return support::skip("DNS_FAIL run", "unshare -n is not available");
    }
    let dir = RunDir::new();
    let input = json!({"servers": [faults::unresolvable_url().as_str()]});
    let command = dir.command(&input, &["--allow-private-targets"]);
    let output = in_network_namespace(&command).output().unwrap();
    assert_exit(&output, 0);
    let rows = Rows::of(&dir);
    assert_unreadable(&rows, faults::unresolvable_url().as_str(), "DNS_FAIL");
}

/// `cargo run --release` on a fresh clone: no INPUT at all, no network at all. The four
/// default servers get DNS_FAIL or CONNECT_FAIL rows and the run exits 0.
#[test]
fn no_input_and_no_network_runs_the_four_defaults_and_exits_0() {
    if !can_unshare_network() {
        return support::skip("no-network default run", "unshare -n is not available");
    }
    let dir = RunDir::new();
    let mut command = std::process::Command::new(actor::BINARY);
    command
        .arg("--storage-dir")
        .arg(dir.root())
        .env_remove("APIFY_IS_AT_HOME")
        .env_remove("ACTOR_INPUT_KEY")
        .env_remove("APIFY_INPUT_KEY")
        .env_remove("LEDGER_ALLOW_PRIVATE_TARGETS");
    let output = in_network_namespace(&command).output().unwrap();
    assert_exit(&output, 0);
    let rows = Rows::of(&dir);
    let urls: Vec<&str> = rows
        .servers
        .iter()
        .map(|r| r["server_url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, mcp_surface_ledger::input::DEFAULT_SERVERS);
    for row in &rows.servers {
        let code = row["reason_code"].as_str().unwrap();
        assert!(code == "DNS_FAIL" || code == "CONNECT_FAIL", "{row}");
        assert_eq!(row["ledger_status"], "unavailable");
    }
    assert_eq!(rows.summary["servers_requested"], 4);
    assert_eq!(rows.summary["servers_unreachable"], 4);
    assert!(rows.changes.is_empty());
}

/// The slow test of the suite (about 30 s, the smallest `max_run_seconds`): with concurrency 1
/// and `max_server_seconds` 5, five hanging servers each get TIMEOUT, the sixth is cut by the
/// run deadline, and the healthy server queued behind them is never contacted: RUN_DEADLINE,
/// its ledger entry unchanged, exit 0.
#[test]
fn per_server_budget_and_run_deadline() {
    let healthy = Switchable::start(surface("healthy", "1", vec![tool("a", "A")]));
    let dir = RunDir::new();
    assert_exit(
        &dir.run_binary(&json!({"servers": [healthy.url.as_str()]}), &[]),
        0,
    );
    let before = dir.ledger("DEFAULT")["servers"][healthy.url.as_str()].clone();

    let hanging = Switchable::start(surface("hanging", "1", vec![]));
    hanging.set_mode(Mode::Hang);
    let mut servers: Vec<String> = (0..6).map(|i| format!("{}?n={i}", hanging.url)).collect();
    servers.push(healthy.url.to_string());
    healthy.set_surface(surface("healthy", "2", vec![tool("b", "B")]));
    let input = json!({
        "servers": servers,
        "concurrency": 1,
        "max_server_seconds": 5,
        "max_run_seconds": 30,
        "request_timeout_seconds": 120,
    });
    let started = Instant::now();
    let output = dir.run_binary(&input, &[]);
    let took = started.elapsed();
    assert_exit(&output, 0);
    assert!(
        took < Duration::from_secs(40),
        "the run deadline bounds the run: {took:?}"
    );
    let rows = Rows::of(&dir);
    let codes: Vec<&str> = rows
        .servers
        .iter()
        .map(|r| r["reason_code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "TIMEOUT",
            "TIMEOUT",
            "TIMEOUT",
            "TIMEOUT",
            "TIMEOUT",
            "RUN_DEADLINE",
            "RUN_DEADLINE"
        ]
    );
    for row in &rows.servers {
        assert_eq!(row["ledger_status"], "unavailable", "{row}");
    }
    let after = dir.ledger("DEFAULT")["servers"][healthy.url.as_str()].clone();
    assert_eq!(after, before, "a server not reached keeps its entry");
    assert_eq!(
        rows.server(healthy.url.as_str())["previous_tool_digest"],
        before["tool_digest"]
    );
}

/// A `tools/list` answer with invalid definitions keeps the valid tools; each invalid one is on
/// the server row with its reason, and counted. Fixed on the next run, it is a `tool_added`.
#[test]
fn invalid_tool_definitions_are_reported_and_a_fixed_one_is_added() {
    let header_tool = |kind: &str| {
        json!({
            "name": "scored",
            "description": "Scores a thing.",
            "inputSchema": {"type": "object", "properties": {
                "score": {"type": kind, "x-mcp-header": "Score"}}},
        })
    };
    let served = |kind: &str| {
        surface(
            "mixed",
            "1",
            vec![
                tool("valid_tool", "Works."),
                header_tool(kind),
                json!({"name": "", "inputSchema": {"type": "object"}}),
            ],
        )
    };
    let server = Switchable::start(served("number"));
    let url = server.url.to_string();
    let dir = RunDir::new();
    let input = json!({"servers": [url.clone()]});
    let first = dir.run_binary(&input, &[]);
    assert_exit(&first, 0);
    assert!(
        stderr(&first).contains("left out of the surface"),
        "{}",
        stderr(&first)
    );
    let rows = Rows::of(&dir);
    let row = rows.server(&url);
    assert_eq!(row["ok"], true, "{row}");
    assert_eq!(row["tools_total"], 1, "{row}");
    let names: Vec<&str> = row["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["valid_tool"]);
    assert_eq!(row["invalid_tools_total"], 2, "{row}");
    let invalid = row["invalid_tools"].as_array().unwrap();
    assert_eq!(invalid[0]["name"], "scored");
    assert_eq!(invalid[0]["reason"], "invalid_header");
    assert!(
        invalid[0]["detail"].as_str().unwrap().contains("number"),
        "{row}"
    );
    assert_eq!(invalid[1]["reason"], "empty_name");
    sample_rows::keep("invalid-tools", &dir.rows());

    // The same answer again: no change at all (the diff is stable).
    server.set_surface(served("number"));
    assert_exit(&dir.run_binary(&input, &[]), 0);
    let rows = Rows::of(&dir);
    assert_eq!(rows.server(&url)["change_count"], 0);

    // Fixed: the tool appears as added.
    server.set_surface(served("string"));
    assert_exit(&dir.run_binary(&input, &[]), 0);
    let rows = Rows::of(&dir);
    let changes = rows.changes_of(&url);
    let added: Vec<(&str, &str)> = changes
        .iter()
        .map(|c| {
            (
                c["change_class"].as_str().unwrap(),
                c["tool_name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(added, [("tool_added", "scored")], "{changes:?}");
    assert_eq!(rows.server(&url)["invalid_tools_total"], 1);
}
