//! Replays real release histories through whole Actor runs and compares every dataset row with
//! a committed golden file, byte for byte: the safety net for work that makes runs cheaper
//! (issue 39). Any change to what a run reports, however small, fails here.
//!
//! Corpora:
//! - the ten github-mcp-server releases in `../shared/fixtures/github-mcp-server/` (read at run
//!   time, never copied; skipped with a note when `../shared` is absent);
//! - `tests/data/replay/declared/`: a hand-written release history with instructions, prompts,
//!   resources, resource templates and hostile text, committed here.
//!
//! Each release is served by a hand-written loopback server in pages, then read twice: once as
//! a change (or the first baseline) and once unchanged, as a daily run over a quiet fleet sees
//! it. The rows of both runs go into the golden file.
//!
//! Fields left out, because they depend on the clock or the wire and not on what was served
//! (checked for shape by `actor::stable`): `observed_at`, `first_seen`, `last_changed`,
//! `response_time_ms`, `bytes_read`, `ledger_chain_head`, `ledger_chain_prev_head` (they hash
//! timestamps) and `charges`. Nothing else is removed, from any row. The server's URL (a fresh
//! port each run) is written as `http://replay.invalid/mcp`.
//!
//! Each unchanged read must also take the unchanged-bytes fast path (`run::unchanged`),
//! except for a surface with invalid tools: the golden rows prove it reports what the full
//! path reported.
//!
//! `REPLAY_WRITE=1 cargo test --test replay_rows` rewrites the golden files from the current
//! code; do that only when a change of the rows is intended, and say so in the commit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/paged_mcp.rs"]
mod paged_mcp;
mod support;

use std::path::{Path, PathBuf};

use actor::RunDir;
use paged_mcp::{PagedMcp, Release};
use serde_json::{Value, json};

/// The URL every row names instead of the test server's.
const REPLAY_URL: &str = "http://replay.invalid/mcp";

const GITHUB_RELEASES: [&str; 10] = [
    "v0.23.0", "v0.24.0", "v0.26.3", "v0.27.0", "v0.30.3", "v0.31.0", "v1.3.0", "v1.4.0", "v1.5.0",
    "v1.6.0",
];

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden_path(corpus: &str) -> PathBuf {
    manifest().join(format!("tests/data/replay/golden/{corpus}.jsonl"))
}

/// The github-mcp-server releases as served answers, or `None` (with a note) when absent.
fn github_releases() -> Option<Vec<(String, Release)>> {
    let dir = manifest().join("../shared/fixtures/github-mcp-server");
    if !dir.is_dir() {
        println!(
            "SKIP github-mcp-server replay: {} not present",
            dir.display()
        );
        return None;
    }
    let releases = GITHUB_RELEASES
        .iter()
        .map(|version| {
            let text = std::fs::read_to_string(dir.join(format!("{version}.json"))).unwrap();
            let result: Value = serde_json::from_str(&text).unwrap();
            let release = Release {
                server_info: json!({"name": "github-mcp-server", "version": version}),
                instructions: None,
                tools: result["tools"].as_array().unwrap().clone(),
                page_size: 40,
                ..Release::default()
            };
            (version.to_string(), release)
        })
        .collect();
    Some(releases)
}

/// The committed hand-written history: `tests/data/replay/declared/r<k>.json`, in order.
fn declared_releases() -> Vec<(String, Release)> {
    let dir = manifest().join("tests/data/replay/declared");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|path| (file_stem(path), Release::from_file(path)))
        .collect()
}

fn file_stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Every change class, so every change the engine finds becomes a row.
fn every_class() -> Vec<&'static str> {
    mcp_surface_ledger::diff::ChangeClass::ALL
        .iter()
        .map(|c| c.as_str())
        .collect()
}

/// Runs every release twice (changed, then unchanged) and returns the golden text: one line
/// per run naming it, then one line per dataset row, clock and wire fields removed.
async fn replay(releases: &[(String, Release)]) -> String {
    let server = PagedMcp::start(releases[0].1.answers());
    let dir = RunDir::new();
    let input = json!({
        "servers": [server.url.as_str()],
        "alert_on": every_class(),
        "count_resources_and_prompts": true,
    });
    let mut out = String::new();
    for (name, release) in releases {
        server.set(release.answers());
        for pass in ["changed", "unchanged"] {
            let outcome = dir.run_ok(&input, None).await;
            out.push_str(&format!("# release {name}, {pass}\n"));
            let rows = dir.rows();
            // The unchanged read takes the fast path (issue 39), unless the surface has
            // invalid tools, whose details only a built surface gives.
            let invalid = rows[0]["invalid_tools_total"].as_u64() != Some(0);
            let fast = pass == "unchanged" && !invalid;
            assert_eq!(outcome.surfaces_reused, usize::from(fast), "{name}, {pass}");
            for row in rows {
                let line = serde_json::to_string(&actor::stable(&row)).unwrap();
                out.push_str(&line.replace(server.url.as_str(), REPLAY_URL));
                out.push('\n');
            }
        }
    }
    out
}

/// Compares `actual` with the golden file of `corpus` (or writes it under `REPLAY_WRITE=1`),
/// naming the first line that differs.
fn check_golden(corpus: &str, actual: &str) {
    let path = golden_path(corpus);
    if std::env::var_os("REPLAY_WRITE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        println!("wrote {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; generate it with REPLAY_WRITE=1", path.display()));
    if actual == expected {
        return;
    }
    let mut heading = "";
    for (k, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
        if e.starts_with("# ") {
            heading = e;
        }
        if a != e {
            panic!(
                "{corpus}: line {} differs ({heading}):\n  actual   {a}\n  expected {e}",
                k + 1
            );
        }
    }
    panic!(
        "{corpus}: {} lines produced, {} expected (same up to the shorter)",
        actual.lines().count(),
        expected.lines().count()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_mcp_server_releases_give_the_golden_rows() {
    let Some(releases) = github_releases() else {
        return;
    };
    let actual = replay(&releases).await;
    check_golden("github-mcp-server", &actual);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_declared_history_gives_the_golden_rows() {
    let releases = declared_releases();
    assert!(
        releases.len() >= 3,
        "the committed history has its releases"
    );
    let actual = replay(&releases).await;
    check_golden("declared", &actual);
}

#[test]
fn a_changed_byte_fails_the_comparison() {
    // The comparison itself must be able to fail: one digit off anywhere in the golden text.
    if std::env::var_os("REPLAY_WRITE").is_some() {
        return; // writing, not comparing
    }
    let Ok(expected) = std::fs::read_to_string(golden_path("declared")) else {
        return println!("SKIP: no golden file yet");
    };
    let mut changed = expected.into_bytes();
    let digit = changed
        .iter_mut()
        .rev()
        .find(|b| b.is_ascii_digit())
        .unwrap();
    *digit = if *digit == b'9' { b'0' } else { *digit + 1 };
    let changed = String::from_utf8(changed).unwrap();
    let caught = std::panic::catch_unwind(|| check_golden("declared", &changed)).is_err();
    assert!(caught, "a one-byte difference was not caught");
}
