//! The ledger's hash chain end to end: real runs of the binary against an in-process rmcp
//! peer whose surface changes every run, then `mcp-surface-ledger verify` on the stored ledger
//! with the heads the runs' summary rows witnessed. Honest ledgers verify; each kind of
//! tampering is caught with its location; a run that finds its ledger broken says so; the
//! signing key never leaks.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

mod platform_fake;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const LEDGER: &str = "audited";
const KEY_A: &str = "4d1f3c2b1a09f8e7d6c5b4a392817f6e5d4c3b2a190817f6e5d4c3b2a1908ca7";
const KEY_B: &str = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20";

fn ledger(args: &[&str], log: &str) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("RUST_LOG", log);
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name == "CRAWLEE_STORAGE_DIR"
        {
            command.env_remove(name);
        }
    }
    command.env_remove("LEDGER_ALLOW_PRIVATE_TARGETS");
    command.output().expect("run mcp-surface-ledger")
}

fn surface(run: usize) -> Value {
    let tools: Vec<Value> = (0..=run)
        .map(|i| {
            json!({"name": format!("tool_{i}"), "description": format!("Tool {i}."),
                        "inputSchema": {"type": "object"}})
        })
        .collect();
    json!({"name": "chain-peer", "version": format!("1.{run}"), "tools": tools})
}

/// A storage with `runs` runs over two servers (two ledger entries), each run adding a tool.
struct Fleet {
    storage: tempfile::TempDir,
    peers: Vec<RmcpPeer>,
    /// The summary row of each run, oldest first.
    summaries: Vec<Value>,
    /// The ledger index after each run.
    copies: Vec<Vec<u8>>,
    /// Every dataset item of each run, in the order written.
    datasets: Vec<Vec<Value>>,
    /// The surface the peers serve in run `n`.
    surfaces: fn(usize) -> Value,
}

impl Fleet {
    fn new(extra: Value) -> Fleet {
        Fleet::serving(extra, surface)
    }

    /// A fleet whose peers serve `surfaces(n)` in run `n`.
    fn serving(extra: Value, surfaces: fn(usize) -> Value) -> Fleet {
        let storage = tempfile::tempdir().unwrap();
        let peers = vec![
            RmcpPeer::start(surface(0), RmcpMode::default()),
            RmcpPeer::start(surface(0), RmcpMode::default()),
        ];
        write_input(
            storage.path(),
            &peers,
            json!({"ledger_name": LEDGER}),
            &extra,
        );
        Fleet {
            storage,
            peers,
            summaries: Vec::new(),
            copies: Vec::new(),
            datasets: Vec::new(),
            surfaces,
        }
    }

    fn dir(&self) -> &str {
        self.storage.path().to_str().unwrap()
    }

    fn index_path(&self) -> PathBuf {
        self.storage.path().join(format!(
            "key_value_stores/mcp-tool-surface-ledger/{LEDGER}.json"
        ))
    }

    fn run(&mut self) -> Output {
        let n = self.summaries.len();
        for peer in &self.peers {
            peer.set_surface((self.surfaces)(n));
        }
        let input = self.storage.path().join("input.json");
        let output = ledger(
            &[
                "--storage-dir",
                self.dir(),
                "--input",
                input.to_str().unwrap(),
                "--allow-private-targets",
            ],
            "info",
        );
        self.summaries
            .push(summary_of_finished_run(self.storage.path(), &output));
        self.copies.push(std::fs::read(self.index_path()).unwrap());
        let dataset = self.storage.path().join("datasets/default");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dataset)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        self.datasets.push(
            files
                .iter()
                .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
                .collect(),
        );
        output
    }

    fn heads_file(&self, summaries: &[Value]) -> PathBuf {
        let path = self.storage.path().join("heads.json");
        std::fs::write(&path, Value::Array(summaries.to_vec()).to_string()).unwrap();
        path
    }

    /// Every surface record of the ledger store, by key.
    fn surface_records(&self) -> Vec<(String, Vec<u8>)> {
        let dir = self
            .storage
            .path()
            .join("key_value_stores/mcp-tool-surface-ledger");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if let Some(stem) = name.strip_prefix("surface-") {
                let key = format!("surface-{}", stem.split('.').next().unwrap());
                found.push((key, std::fs::read(&path).unwrap()));
            }
        }
        found
    }

    fn index(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.index_path()).unwrap()).unwrap()
    }

    fn set_index(&self, value: &Value) {
        std::fs::write(self.index_path(), value.to_string()).unwrap();
    }

    /// `verify` with the heads of every run; returns the exit code and the verdict.
    fn verify(&self, extra: &[&str]) -> (Option<i32>, Value) {
        self.verify_with(&self.summaries, extra)
    }

    /// `verify` with the heads of `rows`.
    fn verify_with(&self, rows: &[Value], extra: &[&str]) -> (Option<i32>, Value) {
        let heads = self.heads_file(rows);
        let mut args = vec![
            "verify",
            "--storage-dir",
            self.dir(),
            "--ledger",
            LEDGER,
            "--heads",
            heads.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let output = ledger(&args, "warn");
        let verdict = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        (output.status.code(), verdict)
    }
}

/// Writes `input.json` in `dir`: `base` with the peers as `servers`, then every field of
/// `extra` over it.
fn write_input(dir: &std::path::Path, peers: &[RmcpPeer], mut base: Value, extra: &Value) {
    base["servers"] = json!(peers.iter().map(|p| p.url.as_str()).collect::<Vec<_>>());
    for (key, value) in extra.as_object().unwrap() {
        base[key] = value.clone();
    }
    std::fs::write(dir.join("input.json"), base.to_string()).unwrap();
}

/// The summary (OUTPUT) of a run that must have exited 0 in `dir`.
fn summary_of_finished_run(dir: &std::path::Path, output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = dir.join("key_value_stores/default/OUTPUT.json");
    serde_json::from_slice(&std::fs::read(summary).unwrap()).unwrap()
}

fn server_key(fleet: &Fleet, i: usize) -> String {
    fleet.peers[i].url.as_str().to_string()
}

fn history_pointer(url: &str) -> String {
    format!(
        "/servers/{}/history",
        url.replace('~', "~0").replace('/', "~1")
    )
}

fn assert_break(verdict: &Value, location: &str, problem: &str) {
    let found = &verdict["break"];
    assert!(
        found["location"].as_str().unwrap_or("").contains(location)
            && found["problem"].as_str().unwrap_or("").contains(problem),
        "expected a break at {location:?} ({problem:?}), got {verdict}"
    );
}

#[test]
fn ten_honest_runs_verify_and_every_tampering_is_located() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..10 {
        fleet.run();
    }
    let first = &fleet.summaries[0];
    assert_eq!(first["ledger_chain_status"], "new");
    assert_eq!(first["ledger_chain_prev_head"], "0".repeat(64));
    for (n, pair) in fleet.summaries.windows(2).enumerate() {
        assert_eq!(pair[1]["ledger_chain_status"], "intact", "run {}", n + 2);
        assert_eq!(
            pair[1]["ledger_chain_prev_head"],
            pair[0]["ledger_chain_head"]
        );
        assert_eq!(pair[1]["ledger_chain_seq"], n as u64 + 2);
    }
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(0), "{verdict}");
    assert_eq!(verdict["intact"], true);
    assert_eq!(verdict["seq"], 10);
    // Ten heads, and the nine each run started from.
    assert_eq!(verdict["heads_matched"], 19);

    let honest = fleet.index();
    let url = server_key(&fleet, 0);
    let history = history_pointer(&url);
    assert!(honest.pointer(&history).unwrap().as_array().unwrap().len() >= 8);
    type Tamper = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Tamper, String, &str)> = vec![
        (
            "a history item edited",
            Box::new({
                let p = format!("{history}/3/tool_name");
                move |v: &mut Value| *v.pointer_mut(&p).unwrap() = json!("innocent_tool")
            }),
            format!("server {url}, item seq 4"),
            "edited",
        ),
        (
            "a history item deleted",
            Box::new({
                let p = history.clone();
                move |v: &mut Value| {
                    v.pointer_mut(&p).unwrap().as_array_mut().unwrap().remove(3);
                }
            }),
            format!("server {url}, item seq 4"),
            "deleted",
        ),
        (
            "two items swapped",
            Box::new({
                let p = history.clone();
                move |v: &mut Value| {
                    v.pointer_mut(&p)
                        .unwrap()
                        .as_array_mut()
                        .unwrap()
                        .swap(3, 4)
                }
            }),
            format!("server {url}, item seq 4"),
            "reordered",
        ),
        (
            "an entry removed",
            Box::new({
                let url = server_key(&fleet, 1);
                move |v: &mut Value| {
                    v["servers"].as_object_mut().unwrap().remove(&url);
                }
            }),
            format!("server {}", server_key(&fleet, 1)),
            "removed",
        ),
    ];
    for (name, tamper, location, problem) in cases {
        let mut value = honest.clone();
        tamper(&mut value);
        fleet.set_index(&value);
        let (code, verdict) = fleet.verify(&[]);
        assert_eq!(code, Some(1), "{name}: {verdict}");
        assert_break(&verdict, &location, problem);
    }

    // The index rolled back to the valid copy of run 6: valid alone, not against the heads.
    std::fs::write(fleet.index_path(), &fleet.copies[5]).unwrap();
    let alone = ledger(
        &["verify", "--storage-dir", fleet.dir(), "--ledger", LEDGER],
        "warn",
    );
    assert_eq!(alone.status.code(), Some(0));
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1));
    assert_break(&verdict, "index write 6", "rolled back");

    // A head replaced in the heads file.
    fleet.set_index(&honest);
    let mut forged = fleet.summaries.clone();
    forged[6]["ledger_chain_head"] = json!("e".repeat(64));
    let (code, verdict) = fleet.verify_with(&forged, &[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 7", &"e".repeat(64));

    // Bad input.
    let missing = ledger(
        &["verify", "--storage-dir", fleet.dir(), "--ledger", "nope"],
        "warn",
    );
    assert_eq!(missing.status.code(), Some(2));
    let (code, _) = fleet.verify(&["--public-key", "xyz"]);
    assert_eq!(code, Some(2));
}

#[test]
fn another_tool_recomputes_the_chain_from_the_document_alone() {
    let Ok(python) = which_python() else {
        return support::skip("another_tool_recomputes_the_chain", "python3 not found");
    };
    let mut fleet = Fleet::new(json!({"ledger_signing_key": KEY_A}));
    for _ in 0..4 {
        fleet.run();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain/recompute.py");
    let output = Command::new(python)
        .arg(script)
        .arg(fleet.index_path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["matches"], true, "{found}");
    assert_eq!(found["head"], fleet.summaries[3]["ledger_chain_head"]);
    assert!(found["items"].as_u64().unwrap() >= 6);
}

fn which_python() -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn a_run_that_finds_its_ledger_broken_says_so_and_starts_a_new_chain() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..3 {
        fleet.run();
    }
    let url = server_key(&fleet, 0);
    let mut value = fleet.index();
    let pointer = format!("{}/0/field", history_pointer(&url));
    *value.pointer_mut(&pointer).unwrap() = json!("forged");
    fleet.set_index(&value);
    let output = fleet.run();
    let summary = fleet.summaries.last().unwrap();
    assert_eq!(summary["ledger_chain_status"], "broken");
    let found = summary["ledger_chain_break"].as_str().unwrap();
    assert!(
        found.contains(&format!("server {url}, item seq 1")),
        "{found}"
    );
    // Locally the final status message is logged.
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(
        printed.contains("LEDGER CHAIN BROKEN"),
        "the status message names the break: {printed}"
    );
    let index = fleet.index();
    assert_eq!(index["chain"]["genesis"]["kind"], "rebased");
    assert_eq!(index["chain"]["seq"], 4);
    // The ledger never verifies clean again: the rebase is itself reported.
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1));
    assert_break(&verdict, "index write 4", "started a new one");
}

#[test]
fn a_ledger_written_before_chains_is_adopted_once() {
    let mut fleet = Fleet::new(json!({}));
    fleet.run();
    fleet.run();
    let mut value = fleet.index();
    value.as_object_mut().unwrap().remove("chain");
    strip_chain_fields(&mut value);
    fleet.set_index(&value);
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1), "a ledger without a chain does not verify");
    assert_break(&verdict, "index", "no chain");
    // A build older than chains left an OUTPUT without chain fields.
    strip_output_chain_fields(&fleet);
    fleet.summaries.clear();
    fleet.run();
    fleet.run();
    assert_eq!(fleet.summaries[0]["ledger_chain_status"], "adopted");
    assert_eq!(fleet.summaries[1]["ledger_chain_status"], "intact");
    assert_eq!(fleet.index()["chain"]["genesis"]["kind"], "adopted");
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(0), "{verdict}");
}

/// Removes every chain field from a stored index: the chain, each entry's base and moves, and
/// each item's seq, link and kept values (what a ledger written before chains looks like).
fn strip_chain_fields(value: &mut Value) {
    value.as_object_mut().unwrap().remove("chain");
    for entry in value["servers"].as_object_mut().unwrap().values_mut() {
        let entry = entry.as_object_mut().unwrap();
        entry.remove("history_base");
        entry.remove("moves");
        for item in entry["history"].as_array_mut().unwrap() {
            for key in ["seq", "link", "values"] {
                item.as_object_mut().unwrap().remove(key);
            }
        }
    }
}

/// Removes the chain fields from the last run's OUTPUT, as a build older than chains wrote it.
fn strip_output_chain_fields(fleet: &Fleet) {
    let path = fleet
        .storage
        .path()
        .join("key_value_stores/default/OUTPUT.json");
    let mut output: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    output
        .as_object_mut()
        .unwrap()
        .retain(|key, _| !key.starts_with("ledger_chain") && key != "ledger_public_key");
    std::fs::write(&path, output.to_string()).unwrap();
}

fn public_key(secret: &str) -> String {
    mcp_surface_ledger::chain::SigningSecret::from_hex(secret)
        .unwrap()
        .public_key_hex()
}

#[test]
fn signed_heads_verify_with_their_key_and_the_key_never_leaks() {
    let mut fleet = Fleet::new(json!({"ledger_signing_key": KEY_A}));
    fleet.run();
    let input = fleet.storage.path().join("input.json");
    // The second run at trace level: everything it prints is searched for the key.
    for peer in &fleet.peers {
        peer.set_surface(surface(1));
    }
    let output = ledger(
        &[
            "--storage-dir",
            fleet.dir(),
            "--input",
            input.to_str().unwrap(),
            "--allow-private-targets",
        ],
        "trace",
    );
    assert_eq!(output.status.code(), Some(0));
    let summary_path = fleet
        .storage
        .path()
        .join("key_value_stores/default/OUTPUT.json");
    let summary: Value = serde_json::from_slice(&std::fs::read(summary_path).unwrap()).unwrap();
    fleet.summaries.push(summary.clone());
    let key_a = public_key(KEY_A);
    assert_eq!(summary["ledger_public_key"], json!(key_a));
    assert_eq!(
        summary["ledger_chain_signature"].as_str().unwrap().len(),
        128
    );

    let (code, verdict) = fleet.verify(&["--public-key", &key_a]);
    assert_eq!(code, Some(0), "{verdict}");
    assert_eq!(verdict["signature_checked"], true);
    // Another key: the rows name key A, so they are not the operator's rows.
    let (code, verdict) = fleet.verify(&["--public-key", &public_key(KEY_B)]);
    assert_eq!(code, Some(1));
    assert_break(&verdict, "index write 1", "another key");
    // Without --public-key the key the rows name is used, and said so.
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(0), "{verdict}");
    assert_eq!(verdict["signature_checked"], true);
    assert_eq!(verdict["public_key_source"], "rows");
    assert_eq!(verdict["witness_signatures_checked"], 2);
    // The index re-signed by a forger with key B (key and signature replaced): the rows' key
    // catches it, although the ledger verifies with the key it names.
    let mut forged = fleet.index();
    let forger = mcp_surface_ledger::chain::SigningSecret::from_hex(KEY_B).unwrap();
    forged["chain"]["public_key"] = json!(forger.public_key_hex());
    forged["chain"]["head"] = json!(mcp_surface_ledger::chain::index_head(&forged));
    let head = forged["chain"]["head"].as_str().unwrap().to_string();
    forged["chain"]["signature"] = json!(forger.sign_head(LEDGER, 2, &head));
    let honest = fleet.index();
    fleet.set_index(&forged);
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 2", "the ledger's chain says");
    // With only the first run's row (write 2 unwitnessed), the key that row names still
    // catches the re-signed head.
    let (code, verdict) = fleet.verify_with(&fleet.summaries[..1], &[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 2", "does not verify");
    fleet.set_index(&honest);
    // A witness row whose signature was altered: a forged row.
    let mut rows = fleet.summaries.clone();
    rows[0]["ledger_chain_signature"] = rows[1]["ledger_chain_signature"].clone();
    let (code, verdict) = fleet.verify_with(&rows, &[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 1", "forged");

    // The secret appears nowhere: not in what the run printed, nor in any stored file but the
    // INPUT it came from.
    let mut leaks = Vec::new();
    for stream in [&output.stdout, &output.stderr] {
        if String::from_utf8_lossy(stream).contains(KEY_A) {
            leaks.push("process output".to_string());
        }
    }
    let mut stack = vec![fleet.storage.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path != input
                && String::from_utf8_lossy(&std::fs::read(&path).unwrap()).contains(KEY_A)
            {
                leaks.push(path.display().to_string());
            }
        }
    }
    assert!(leaks.is_empty(), "the signing key leaked into {leaks:?}");

    // A bad key is refused without quoting it.
    let bad = fleet.storage.path().join("bad.json");
    let secret_like = format!("{}zz", &KEY_A[..60]);
    std::fs::write(&bad, json!({"ledger_signing_key": secret_like}).to_string()).unwrap();
    let refused = ledger(
        &[
            "--storage-dir",
            fleet.dir(),
            "--input",
            bad.to_str().unwrap(),
        ],
        "trace",
    );
    assert_eq!(refused.status.code(), Some(2));
    let printed = String::from_utf8_lossy(&refused.stderr);
    assert!(printed.contains("ledger_signing_key"), "{printed}");
    assert!(!printed.contains(&secret_like[..40]), "{printed}");
}

/// A sharded watch of four servers over two shards in this process (the binary's local
/// coordinator), rounds of runs against real peers.
struct ShardedFleet {
    storage: tempfile::TempDir,
    peers: Vec<RmcpPeer>,
    /// The coordinator's summary row (OUTPUT) of each round.
    summaries: Vec<Value>,
}

impl ShardedFleet {
    fn new(extra: Value) -> ShardedFleet {
        let peers: Vec<RmcpPeer> = (0..4)
            .map(|i| RmcpPeer::start(Self::surface_of(i, 0), RmcpMode::default()))
            .collect();
        Self::with_peers(peers, extra)
    }

    fn with_peers(peers: Vec<RmcpPeer>, extra: Value) -> ShardedFleet {
        let storage = tempfile::tempdir().unwrap();
        write_input(
            storage.path(),
            &peers,
            json!({"ledger_name": "fleet", "shards": 2}),
            &extra,
        );
        ShardedFleet {
            storage,
            peers,
            summaries: Vec::new(),
        }
    }

    /// Distinct surfaces per server: the shards run at once and write their surface records
    /// at the same time.
    fn surface_of(server: usize, run: usize) -> Value {
        let mut value = surface(run);
        value["name"] = json!(format!("chain-peer-{server}"));
        value
    }

    fn dir(&self) -> &str {
        self.storage.path().to_str().unwrap()
    }

    fn ledger_path(&self, name: &str) -> PathBuf {
        self.storage.path().join(format!(
            "key_value_stores/mcp-tool-surface-ledger/{name}.json"
        ))
    }

    fn round(&mut self) -> Output {
        let round = self.summaries.len();
        for (i, peer) in self.peers.iter().enumerate() {
            peer.set_surface(Self::surface_of(i, round));
        }
        let input = self.storage.path().join("input.json");
        let output = ledger(
            &[
                "--storage-dir",
                self.dir(),
                "--input",
                input.to_str().unwrap(),
                "--allow-private-targets",
            ],
            "info",
        );
        self.summaries
            .push(summary_of_finished_run(self.storage.path(), &output));
        output
    }

    fn set_input(&self, key: &str, value: Value) {
        let path = self.storage.path().join("input.json");
        let mut input: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        input[key] = value;
        std::fs::write(path, input.to_string()).unwrap();
    }

    fn index(&self, name: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.ledger_path(name)).unwrap()).unwrap()
    }

    /// The shard ledgers that exist (a shard every server hashed away from never ran).
    fn shard_ledgers(&self) -> Vec<String> {
        (1..=3)
            .map(|k| format!("fleet-shard-{k}"))
            .filter(|name| self.ledger_path(name).exists())
            .collect()
    }

    /// `verify` of one shard ledger with the heads of the coordinator's summary rows.
    fn verify(&self, name: &str) -> (Option<i32>, Value) {
        let heads = self.storage.path().join("heads.json");
        std::fs::write(&heads, Value::Array(self.summaries.clone()).to_string()).unwrap();
        let output = ledger(
            &[
                "verify",
                "--storage-dir",
                self.dir(),
                "--ledger",
                name,
                "--heads",
                heads.to_str().unwrap(),
            ],
            "warn",
        );
        let verdict = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        (output.status.code(), verdict)
    }
}

#[test]
fn a_sharded_watch_anchors_each_shard_chain_and_writes_one_sarif_log() {
    let mut fleet = ShardedFleet::new(json!({"report_sarif": true}));
    let mut copies: Vec<Vec<(String, Vec<u8>)>> = Vec::new();
    for _ in 0..3 {
        fleet.round();
        copies.push(
            fleet
                .shard_ledgers()
                .into_iter()
                .map(|name| {
                    let bytes = std::fs::read(fleet.ledger_path(&name)).unwrap();
                    (name, bytes)
                })
                .collect(),
        );
    }
    // The coordinator writes no ledger: the single-run fields are absent, each shard item of a
    // shard that ran has its ledger's.
    let last = fleet.summaries.last().unwrap();
    assert!(last.get("ledger_chain_head").is_none(), "{last}");
    let ran: Vec<&Value> = last["shards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "succeeded")
        .collect();
    assert!(!ran.is_empty());
    for (round, summary) in fleet.summaries.iter().enumerate() {
        for shard in summary["shards"].as_array().unwrap() {
            if shard["status"] != "succeeded" {
                continue;
            }
            assert_eq!(shard["ledger_chain_seq"], round as u64 + 1, "{shard}");
            assert_eq!(shard["ledger_chain_head"].as_str().unwrap().len(), 64);
            let expected = if round == 0 { "new" } else { "intact" };
            assert_eq!(shard["ledger_chain_status"], expected);
            if round > 0 {
                let before = fleet.summaries[round - 1]["shards"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["ledger_name"] == shard["ledger_name"])
                    .unwrap();
                assert_eq!(shard["ledger_chain_prev_head"], before["ledger_chain_head"]);
            }
        }
    }

    // Each shard ledger verifies against the coordinator's rows: three heads, two starts.
    let names = fleet.shard_ledgers();
    assert!(!names.is_empty());
    for name in &names {
        let (code, verdict) = fleet.verify(name);
        assert_eq!(code, Some(0), "{name}: {verdict}");
        assert_eq!(verdict["seq"], 3, "{name}: one write per round");
        assert_eq!(verdict["heads_matched"], 5, "{name}: {verdict}");
    }
    // A shard rolled back to its copy of round 2 is caught only by those rows; an edited item
    // by the chain itself.
    let (name, round_two) = &copies[1][0];
    let honest = std::fs::read(fleet.ledger_path(name)).unwrap();
    std::fs::write(fleet.ledger_path(name), round_two).unwrap();
    let (code, verdict) = fleet.verify(name);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 2", &format!("shard ledger {name}"));
    let mut index: Value = serde_json::from_slice(&honest).unwrap();
    let url = index["servers"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    *index
        .pointer_mut(&format!("{}/0/tool_name", history_pointer(&url)))
        .unwrap() = json!("other");
    std::fs::write(fleet.ledger_path(name), index.to_string()).unwrap();
    let (code, verdict) = fleet.verify(name);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, &format!("server {url}, item seq 1"), "edited");
    // The next round's shard run finds it broken: its shard item and the status message say so.
    let output = fleet.round();
    let item = fleet.summaries[3]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["ledger_name"] == json!(name))
        .unwrap()
        .clone();
    assert_eq!(item["ledger_chain_status"], "broken", "{item}");
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(
        printed.contains(&format!("LEDGER CHAIN BROKEN in {name}")),
        "{printed}"
    );

    // REPORT.sarif: one log of every shard's changes, as a single run writes it.
    let log_path = fleet
        .storage
        .path()
        .join("key_value_stores/default/REPORT.sarif.json");
    let log: Value = serde_json::from_slice(&std::fs::read(&log_path).unwrap()).unwrap();
    let changes = fleet.summaries.last().unwrap()["changes_total"]
        .as_u64()
        .unwrap();
    assert!(changes >= 4, "every server gained a tool");
    // Every change, and first one result for the broken shard ledger.
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len() as u64, changes + 1);
    assert_eq!(
        results[0]["ruleId"], "ledger_chain_not_intact",
        "{}",
        results[0]
    );
    assert_eq!(results[0]["level"], "error");
    assert!(
        results[0].to_string().contains(name.as_str()),
        "{}",
        results[0]
    );
    match support::sarif::check(&log_path) {
        Some(found) => {
            assert_eq!(found["schema_errors"], json!([]), "{found}");
            assert_eq!(found["result_count"], json!(changes + 1));
            assert_eq!(found["run_properties"]["gate_tripped"], false);
        }
        None => support::skip("sharded REPORT.sarif schema", "SARIF tooling absent"),
    }
}

#[test]
fn a_move_between_shards_is_a_chained_event_in_both_ledgers() {
    use mcp_surface_ledger::shard::plan::shard_of;
    // Peers until going from 2 to 3 shards moves some server (to the new shard 3) and keeps
    // another where it is.
    let mut peers = Vec::new();
    let moves = |peers: &[RmcpPeer]| {
        peers
            .iter()
            .filter(|p| shard_of(&json!(p.url.as_str()), 3) == 3)
            .count()
    };
    while peers.len() < 4 || moves(&peers) == 0 || moves(&peers) == peers.len() {
        let i = peers.len();
        assert!(i < 40, "no fleet moves a server");
        peers.push(RmcpPeer::start(
            ShardedFleet::surface_of(i, 0),
            RmcpMode::default(),
        ));
    }
    let moved: Vec<(String, usize)> = peers
        .iter()
        .map(|p| p.url.as_str().to_string())
        .filter(|u| shard_of(&json!(u), 3) == 3)
        .map(|u| {
            let from = shard_of(&json!(u), 2);
            (u, from)
        })
        .collect();
    let mut fleet = ShardedFleet::with_peers(peers, json!({}));
    fleet.round();
    fleet.round();
    fleet.set_input("shards", json!(3));
    fleet.round();

    // Every shard ledger verifies against the coordinator's rows, the moves included.
    for name in fleet.shard_ledgers() {
        let (code, verdict) = fleet.verify(&name);
        assert_eq!(code, Some(0), "{name}: {verdict}");
    }
    let destination = fleet.index("fleet-shard-3");
    for (url, from) in &moved {
        let source_name = format!("fleet-shard-{from}");
        let source = fleet.index(&source_name);
        assert!(
            source["servers"].get(url).is_none(),
            "{url} left {source_name}"
        );
        let out = &source["chain"]["moved_out"][url];
        assert_eq!(out["event"], "moved_out", "{source}");
        assert_eq!(out["ledger"], "fleet-shard-3");
        // The entry's chain runs on through the move: two items of its own between the changes
        // found before it and those its new shard found after.
        let entry = &destination["servers"][url];
        let history = entry["history"].as_array().unwrap();
        let moves = entry["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 2, "{entry}");
        assert_eq!(moves[0], *out, "the source keeps the same item");
        let at = moves[0]["seq"].as_u64().unwrap();
        let mut seqs: Vec<u64> = history
            .iter()
            .chain(moves)
            .map(|i| i["seq"].as_u64().unwrap())
            .collect();
        seqs.sort();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{entry}");
        assert!(
            history.iter().any(|i| i["seq"].as_u64().unwrap() < at),
            "{entry}"
        );
        assert!(
            history.iter().any(|i| i["seq"].as_u64().unwrap() > at + 1),
            "{entry}"
        );
        assert_eq!(moves[1]["event"], "moved_in");
        assert_eq!(moves[1]["ledger"], source_name);
        assert_eq!(moves[1]["seq"], at + 1);
        let started_from = &fleet.summaries[1]["shards"][from - 1];
        assert_eq!(
            moves[1]["source"]["head"],
            started_from["ledger_chain_head"]
        );
        assert_eq!(moves[1]["source"]["seq"], started_from["ledger_chain_seq"]);
    }
    // One more round: the moved entries' chains go on in their new ledger.
    fleet.round();
    for name in fleet.shard_ledgers() {
        let (code, verdict) = fleet.verify(&name);
        assert_eq!(code, Some(0), "{name}: {verdict}");
    }
    // Another tool recomputes the chain of a ledger with moves from the document alone.
    if let Ok(python) = which_python() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain/recompute.py");
        let output = Command::new(python)
            .arg(script)
            .arg(fleet.ledger_path("fleet-shard-3"))
            .output()
            .unwrap();
        let found: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(found["matches"], true, "{found}");
    }
    // The moved-in entry deleted from its new ledger is caught.
    let mut tampered = fleet.index("fleet-shard-3");
    tampered["servers"]
        .as_object_mut()
        .unwrap()
        .remove(&moved[0].0);
    std::fs::write(fleet.ledger_path("fleet-shard-3"), tampered.to_string()).unwrap();
    let (code, verdict) = fleet.verify("fleet-shard-3");
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, &format!("server {}", moved[0].0), "removed");
}

const ACTOR: &str = "auditor~mcp-surface-ledger";

/// `verify` on the platform (the fake API), without a heads file: the heads come from the
/// Actor's past runs.
async fn verify_on_platform(fake: &platform_fake::FakeApify, actor: Option<&str>) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(["verify", "--ledger", LEDGER])
        .env("RUST_LOG", "warn");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name == "CRAWLEE_STORAGE_DIR"
        {
            command.env_remove(name);
        }
    }
    command.envs(fake.env_vars());
    if let Some(actor) = actor {
        command.env("ACTOR_ID", actor);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn verdict_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_platform_verify_reads_the_heads_from_past_runs() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..5 {
        fleet.run();
    }
    let fake = platform_fake::FakeApify::start().await;
    // The five runs, oldest first, each with its whole dataset; a run of another Actor and a
    // run whose dataset the platform has deleted.
    fake.add_finished_run(
        "someone~else",
        "run-x",
        "ds-x",
        vec![fleet.summaries[0].clone()],
    );
    fake.add_finished_run(ACTOR, "run-0", "ds-0", Vec::new());
    fake.state().gone_datasets.push("ds-0".to_string());
    for (k, items) in fleet.datasets.iter().enumerate() {
        let id = k + 1;
        fake.add_finished_run(
            ACTOR,
            &format!("run-{id}"),
            &format!("ds-{id}"),
            items.clone(),
        );
    }
    let store = mcp_surface_ledger::platform::LEDGER_STORE_NAME;
    fake.put_named_record(store, LEDGER, fleet.copies[4].clone());
    let surfaces = fleet.surface_records();
    assert!(!surfaces.is_empty());
    for (key, bytes) in &surfaces {
        fake.put_named_record(store, key, bytes.clone());
    }

    let output = verify_on_platform(&fake, Some(ACTOR)).await;
    let verdict = verdict_of(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{verdict} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(verdict["heads_source"], "runs");
    assert_eq!(
        verdict["heads_matched"], 9,
        "five heads and the four each run started from"
    );
    assert_eq!(verdict["runs"]["read"], 6);
    assert_eq!(verdict["runs"]["total"], 6);
    assert_eq!(verdict["runs"]["datasets_gone"], 1);
    assert!(verdict.get("note").is_none(), "{verdict}");

    // Every request: the ledger store and record, one page of runs, the end of each dataset.
    let requests = fake.state().requests.clone();
    let mut seen: Vec<String> = requests
        .iter()
        .map(|r| {
            format!(
                "{} {}?{}",
                r.method,
                r.path,
                r.query.clone().unwrap_or_default()
            )
        })
        .collect();
    // The surface records the index names, each checked against its entry, and the value
    // packs its items and steps name, each read once (docs/history.md).
    let surface_reads = seen
        .iter()
        .filter(|r| r.contains("/records/surface-") && !r.contains("/records/surface-values-"))
        .count();
    assert_eq!(surface_reads, 2, "one per entry: {seen:?}");
    let packs: Vec<&String> = seen
        .iter()
        .filter(|r| r.contains("/records/surface-values-"))
        .collect();
    let distinct: std::collections::BTreeSet<&&String> = packs.iter().collect();
    assert_eq!(
        distinct.len(),
        packs.len(),
        "each pack read once: {packs:?}"
    );
    seen.retain(|r| !r.contains("/records/surface-"));
    seen.sort();
    let fields = "record_type%2Cledger_name%2Cledger_chain_seq%2Cledger_chain_head%2Cledger_chain_prev_head%2Cledger_chain_status%2Cledger_chain_break%2Cledger_chain_signature%2Cledger_public_key%2Cshards";
    let mut expected: Vec<String> = (0..=5)
        .map(|k| {
            format!(
                "GET /v2/datasets/ds-{k}/items?format=json&clean=true&desc=true&limit=5&fields={fields}"
            )
        })
        .collect();
    expected.push(format!(
        "GET /v2/acts/{ACTOR}/runs?desc=true&offset=0&limit=100"
    ));
    expected.push("GET /v2/key-value-stores/kv-named-1/records/audited?attachment=true".into());
    expected.push(format!("POST /v2/key-value-stores?name={store}"));
    expected.sort();
    assert_eq!(seen, expected);
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer test-token-123")),
        "every call carries the token"
    );

    // The index rolled back to run 3's valid copy: the heads of runs 4 and 5 catch it.
    fake.put_named_record(store, LEDGER, fleet.copies[2].clone());
    let output = verify_on_platform(&fake, Some(ACTOR)).await;
    let verdict = verdict_of(&output);
    assert_eq!(output.status.code(), Some(1), "{verdict}");
    assert_break(&verdict, "index write 3", "rolled back");
    assert_break(&verdict, "", "run run-");

    // A head forged in one past run's dataset is reported, with the run that carries it.
    fake.put_named_record(store, LEDGER, fleet.copies[4].clone());
    {
        let mut state = fake.state();
        let items = state.datasets.get_mut("ds-3").unwrap();
        let summary = items.last_mut().unwrap();
        assert_eq!(summary["record_type"], "summary");
        summary["ledger_chain_head"] = json!("e".repeat(64));
    }
    let output = verify_on_platform(&fake, Some(ACTOR)).await;
    let verdict = verdict_of(&output);
    assert_eq!(output.status.code(), Some(1), "{verdict}");
    assert_break(
        &verdict,
        "index write 3",
        "run run-3 (dataset ds-3) says head eeee",
    );

    // A token that may not list the runs, and no Actor id: exit 2 with what to do.
    fake.fail_next(
        axum::http::Method::GET,
        &format!("/v2/acts/{ACTOR}/runs"),
        403,
        "insufficient-permissions",
        "You do not have permission",
    );
    let output = verify_on_platform(&fake, Some(ACTOR)).await;
    assert_eq!(output.status.code(), Some(2));
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(
        printed.contains("APIFY_TOKEN") && printed.contains("--heads"),
        "{printed}"
    );
    assert!(!printed.contains("test-token-123"), "{printed}");
    let output = verify_on_platform(&fake, None).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("ACTOR_ID"));

    // Bounded: with room for two runs, the note says the history is longer.
    let env = mcp_surface_ledger::platform::PlatformEnv::from_vars(|name| {
        fake.env_vars()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    })
    .unwrap();
    let api = mcp_surface_ledger::platform::ApiClient::new(&env).unwrap();
    let runs = mcp_surface_ledger::platform::Runs::new(
        api,
        ACTOR.to_string(),
        None,
        std::time::Duration::ZERO,
    );
    let (witnesses, read) =
        mcp_surface_ledger::cli::verify::runs::witnesses(&runs, ACTOR, LEDGER, 2)
            .await
            .unwrap();
    assert_eq!((read.read, read.total), (2, 6));
    assert_eq!(witnesses.len(), 4, "runs 5 and 4: two heads each");
    assert!(
        read.note()
            .unwrap()
            .contains("newest 2 of the Actor's 6 runs")
    );
}

/// The attacker of issue 33, who can write the ledger store: rewrites a server's history (here
/// drops its item `drop_seq`), links every item of it again from the genesis, and appends one
/// write of their own on top of the real head, with the real head as `prev` and in the log.
fn forge_next_write(index: &mut Value, url: &str, drop_seq: u64) {
    use mcp_surface_ledger::chain::{genesis_link, index_head, item_link};
    let entry = &mut index["servers"][url];
    let history = entry["history"].as_array_mut().unwrap();
    history.retain(|item| item["seq"] != json!(drop_seq));
    let mut prev = genesis_link(url);
    for (n, item) in history.iter_mut().enumerate() {
        item["seq"] = json!(n + 1);
        item["link"] = json!(item_link(&prev, item));
        prev = item["link"].as_str().unwrap().to_string();
    }
    let last = json!({"seq": history.len(), "link": prev});
    let chain = &mut index["chain"];
    chain["servers"][url] = last;
    let (seq, head) = (chain["seq"].as_u64().unwrap(), chain["head"].clone());
    chain["log"]
        .as_array_mut()
        .unwrap()
        .push(json!({"seq": seq, "head": head}));
    chain["prev"] = head;
    chain["seq"] = json!(seq + 1);
    chain["changed"] = json!([url]);
    let head = index_head(index);
    index["chain"]["head"] = json!(head);
}

/// Recomputes the head after a raw edit of the index.
fn reseal(index: &mut Value) {
    index["chain"]["head"] = json!(mcp_surface_ledger::chain::index_head(index));
}

#[test]
fn a_made_up_next_write_is_unwitnessed_for_verify_and_for_the_next_run() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..4 {
        fleet.run();
    }
    let url = server_key(&fleet, 0);
    let honest = fleet.index();
    let mut forged = honest.clone();
    forge_next_write(&mut forged, &url, 2);
    fleet.set_index(&forged);

    // Every witnessed head matches; the write nobody witnessed is named, with what it changed.
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(4), "{verdict}");
    assert_eq!(verdict["status"], "unwitnessed");
    assert_eq!(verdict["heads_matched"], 7);
    assert_eq!(verdict["unwitnessed"]["witnessed_up_to"], 4);
    assert_eq!(verdict["unwitnessed"]["writes"][0]["seq"], 5);
    assert_eq!(verdict["unwitnessed"]["newest_write_changed"], json!([url]));

    // Its variants are breaks of the index itself.
    type Edit = Box<dyn Fn(&mut Value)>;
    let variants: Vec<(&str, Edit, &str)> = vec![
        (
            "a prev that is not the log's tail",
            Box::new(|v| v["chain"]["prev"] = json!("b".repeat(64))),
            "does not continue",
        ),
        (
            "a log cut to one entry",
            Box::new(|v| {
                let log = v["chain"]["log"].as_array_mut().unwrap();
                log.drain(..log.len() - 1);
            }),
            "cut",
        ),
        (
            "a fresh genesis",
            Box::new(|v| v["chain"]["genesis"] = json!({"seq": 5, "kind": "new"})),
            "fresh start",
        ),
    ];
    for (name, edit, problem) in variants {
        let mut variant = forged.clone();
        edit(&mut variant);
        reseal(&mut variant);
        fleet.set_index(&variant);
        let (code, verdict) = fleet.verify(&[]);
        assert_eq!(code, Some(1), "{name}: {verdict}");
        assert_break(&verdict, "index write 5", problem);
    }

    // The history base moved forward (older items dropped as if trimmed) in a made-up write.
    let mut based = honest.clone();
    {
        let entry = &mut based["servers"][&url];
        let history = entry["history"].as_array_mut().unwrap();
        let dropped = history.remove(0);
        entry["history_base"] = json!({"seq": dropped["seq"], "link": dropped["link"]});
    }
    let chain = based["chain"].clone();
    based["chain"]["log"]
        .as_array_mut()
        .unwrap()
        .push(json!({"seq": chain["seq"], "head": chain["head"]}));
    based["chain"]["prev"] = chain["head"].clone();
    based["chain"]["seq"] = json!(chain["seq"].as_u64().unwrap() + 1);
    reseal(&mut based);
    fleet.set_index(&based);
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(4), "{verdict}");

    // The next real run finds the made-up write against the previous run's OUTPUT: it says
    // so loudly and does not continue that chain; verify reports the ledger broken from then on.
    fleet.set_index(&forged);
    let output = fleet.run();
    let summary = fleet.summaries.last().unwrap();
    assert_eq!(summary["ledger_chain_status"], "unwitnessed", "{summary}");
    assert!(
        summary["ledger_chain_break"]
            .as_str()
            .unwrap()
            .contains("writes 5 to 5"),
        "{summary}"
    );
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(printed.contains("LEDGER CHAIN UNWITNESSED"), "{printed}");
    let report = std::fs::read_to_string(
        fleet
            .storage
            .path()
            .join("key_value_stores/default/REPORT.html"),
    )
    .unwrap();
    assert!(report.contains("class=\"chain-alert\""), "REPORT says so");
    assert_eq!(fleet.index()["chain"]["genesis"]["kind"], "rebased");
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 6", "no run wrote them");

    // The Standby pages and the JSON API say so too.
    let (page, api) = standby_fleet_page_and_servers(&fleet);
    assert!(page.contains("class=\"chain-alert\""), "{page}");
    assert!(page.contains("LEDGER CHAIN BROKEN"), "{page}");
    let alerts = api["chain_alerts"].as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{api}");
    assert!(
        alerts[0].as_str().unwrap().contains("no run wrote them"),
        "{api}"
    );
}

/// The fleet page and `GET /ledgers/{LEDGER}/servers` of `serve` over the fleet's storage.
fn standby_fleet_page_and_servers(fleet: &Fleet) -> (String, Value) {
    use mcp_surface_ledger::platform::LocalStorage;
    use mcp_surface_ledger::serve::{self, backend::Backend, hosts::HostPolicy};
    let storage = LocalStorage::open_existing(fleet.storage.path());
    let addr = support::background::serve(serve::app(Backend::Local(storage), HostPolicy::local()));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let page = client
            .get(format!("http://{addr}/?ledger={LEDGER}"))
            .header("accept", "text/html")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let api = client
            .get(format!("http://{addr}/ledgers/{LEDGER}/servers"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (page, api)
    })
}

#[test]
fn a_witnessed_break_cannot_be_erased_by_a_fresh_chain() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..3 {
        fleet.run();
    }
    // An edit the next run finds: it rebases, and its summary row says broken.
    let url = server_key(&fleet, 0);
    let mut edited = fleet.index();
    *edited
        .pointer_mut(&format!("{}/0/field", history_pointer(&url)))
        .unwrap() = json!("x");
    fleet.set_index(&edited);
    fleet.run();
    assert_eq!(fleet.summaries[3]["ledger_chain_status"], "broken");
    // The forger then writes a chain that claims to have begun cleanly at write 1.
    let mut clean = fleet.index();
    clean["chain"]["genesis"] = json!({"seq": 1, "kind": "new"});
    forge_next_write(&mut clean, &url, 99);
    fleet.set_index(&clean);
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 4", "written over");
}

#[test]
fn a_planted_surface_record_is_damage_not_a_baseline() {
    let mut fleet = Fleet::new(json!({}));
    fleet.run();
    fleet.run();
    // The current surface record of server 0 is overwritten with the surface the servers are
    // about to serve, so a comparison against it would show no change at all.
    let url = server_key(&fleet, 0);
    let key = fleet.index()["servers"][&url]["surface_key"]
        .as_str()
        .unwrap()
        .to_string();
    let path = fleet.storage.path().join(format!(
        "key_value_stores/mcp-tool-surface-ledger/{key}.json"
    ));
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record["tools"] = surface(2)["tools"].clone();
    std::fs::write(&path, record.to_string()).unwrap();

    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(1), "{verdict}");
    // Both servers serve one surface, so both entries name that record: either is named.
    assert_break(
        &verdict,
        "server http://127.0.0.1:",
        "not the surface its entry names",
    );

    // The run does not use it: the row says so, the chained per-tool digests name the two
    // tools added since, and the chain is reported broken.
    let output = fleet.run();
    let printed = String::from_utf8_lossy(&output.stderr);
    let rows = fleet.datasets.last().unwrap();
    let row = rows
        .iter()
        .find(|r| r["record_type"] == "server" && r["server_url"] == json!(url))
        .expect("the server's row");
    assert_eq!(row["reason_code"], "BASELINE_TAMPERED", "{row}");
    let lost = rows
        .iter()
        .find(|r| r["change_class"] == "baseline_lost" && r["server_url"] == json!(url))
        .expect("a baseline_lost change");
    assert!(lost.to_string().contains("tools added: tool_2"), "{lost}");
    let summary = fleet.summaries.last().unwrap();
    assert_eq!(summary["ledger_chain_status"], "broken", "{summary}");
    assert!(printed.contains("LEDGER CHAIN BROKEN"), "{printed}");
}

#[test]
fn a_stripped_chain_is_not_adopted_and_an_adoption_is_visible() {
    let mut fleet = Fleet::new(json!({}));
    for _ in 0..3 {
        fleet.run();
    }
    let witnessed = fleet.summaries.clone();
    // Stripped, with the previous run's OUTPUT still there: not adopted.
    let mut stripped = fleet.index();
    strip_chain_fields(&mut stripped);
    fleet.set_index(&stripped);
    fleet.run();
    assert_eq!(fleet.summaries[3]["ledger_chain_status"], "broken");
    assert!(
        fleet.summaries[3]["ledger_chain_break"]
            .as_str()
            .unwrap()
            .contains("stripped")
    );

    // Stripped again, OUTPUT removed too: the run adopts, loudly, and the old heads catch it.
    let mut stripped = fleet.index();
    strip_chain_fields(&mut stripped);
    fleet.set_index(&stripped);
    std::fs::remove_file(
        fleet
            .storage
            .path()
            .join("key_value_stores/default/OUTPUT.json"),
    )
    .unwrap();
    let output = fleet.run();
    assert_eq!(fleet.summaries[4]["ledger_chain_status"], "adopted");
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(printed.contains("LEDGER ADOPTED"), "{printed}");
    let (code, verdict) = fleet.verify_with(&witnessed, &[]);
    assert_eq!(code, Some(1), "{verdict}");
    assert_break(&verdict, "index write 1", "the ledger's chain says");
}

#[test]
fn verify_says_what_it_consulted_and_refuses_malformed_heads() {
    let mut fleet = Fleet::new(json!({}));
    fleet.run();
    fleet.run();
    let alone = ledger(
        &["verify", "--storage-dir", fleet.dir(), "--ledger", LEDGER],
        "warn",
    );
    assert_eq!(alone.status.code(), Some(0));
    let verdict: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(verdict["status"], "self_consistent");
    assert_eq!(verdict["heads_source"], "none");
    assert!(
        verdict["note"]
            .as_str()
            .unwrap()
            .contains("no outside witness"),
        "{verdict}"
    );
    let required = ledger(
        &[
            "verify",
            "--storage-dir",
            fleet.dir(),
            "--ledger",
            LEDGER,
            "--require-witness",
        ],
        "warn",
    );
    assert_eq!(required.status.code(), Some(4));
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (Some(0), &json!("intact")),
        "{verdict}"
    );

    let bad = fleet.storage.path().join("bad-heads.json");
    for text in [
        r#"{"seq":99,"head":"abc"}"#,
        r#"[{"seq":1}]"#,
        r#"{"record_type":"summary","ledger_name":"audited","ledger_chain_seq":"2","ledger_chain_head":"00"}"#,
    ] {
        std::fs::write(&bad, text).unwrap();
        let output = ledger(
            &[
                "verify",
                "--storage-dir",
                fleet.dir(),
                "--ledger",
                LEDGER,
                "--heads",
                bad.to_str().unwrap(),
            ],
            "warn",
        );
        assert_eq!(output.status.code(), Some(2), "{text}");
        let printed = String::from_utf8_lossy(&output.stderr);
        assert!(printed.contains("heads file"), "{printed}");
    }
}

/// Sixty tools whose descriptions all change every run: sixty changes per server per run, a
/// long history (every item is kept for the retention period, `docs/history.md`).
fn churning_surface(run: usize) -> Value {
    let tools: Vec<Value> = (0..60)
        .map(|i| {
            json!({"name": format!("tool_{i}"), "description": format!("Tool {i}, release {run}."),
                   "inputSchema": {"type": "object"}})
        })
        .collect();
    json!({"name": "churn-peer", "version": format!("2.{run}"), "tools": tools})
}

#[test]
fn honest_signed_ledgers_with_long_history_verify_without_alarm() {
    let mut fleet = Fleet::serving(json!({"ledger_signing_key": KEY_A}), churning_surface);
    for _ in 0..10 {
        fleet.run();
    }
    for (n, summary) in fleet.summaries.iter().enumerate().skip(1) {
        assert_eq!(summary["ledger_chain_status"], "intact", "run {}", n + 1);
    }
    let index = fleet.index();
    let url = server_key(&fleet, 0);
    // Nine runs after the first, each with sixty descriptions and the version changed: all
    // 549 items kept, within the retention period (a count limit would have cut them), the
    // older ones in archived pages that join up from the genesis to the index's items.
    let entry = &index["servers"][&url];
    let history = entry["history"].as_array().unwrap();
    let pages = entry["archived"].as_array().unwrap();
    let archived: u64 = pages.iter().map(|p| p["count"].as_u64().unwrap()).sum();
    assert_eq!(archived as usize + history.len(), 9 * 61);
    assert_eq!(history.last().unwrap()["seq"], 9 * 61);
    assert_eq!(pages[0]["base"]["seq"], 0);
    assert_eq!(pages.last().unwrap()["last"], entry["history_base"]);
    let (code, verdict) = fleet.verify(&[]);
    assert_eq!(code, Some(0), "{verdict}");
    assert_eq!(verdict["status"], "intact");
    assert_eq!(verdict["public_key_source"], "rows");
    assert_eq!(verdict["witness_signatures_checked"], 10);
    assert_eq!(verdict["surfaces_checked"], 2);
    let (code, verdict) = fleet.verify(&["--public-key", &public_key(KEY_A)]);
    assert_eq!(
        (code, &verdict["status"]),
        (Some(0), &json!("intact")),
        "{verdict}"
    );
}
