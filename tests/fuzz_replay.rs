//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/*`) through the same entry
//! points the cargo-fuzz targets call (`mcp_surface_ledger::fuzzing`), on the stable toolchain.
//! A seed that crashes, or breaks an invariant the target checks, fails here in CI.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use mcp_surface_ledger::fuzzing::{self, TARGETS};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus")
        .join(target)
}

/// Runs every file of one target's corpus; returns how many were replayed.
fn replay(target: &str) -> usize {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    for file in &files {
        let data = fs::read(file).unwrap();
        let outcome = fuzzing::run(target, &data).expect("a known target");
        if let Err(violation) = outcome {
            panic!("{}: {violation}", file.display());
        }
    }
    files.len()
}

#[test]
fn every_committed_corpus_file_replays_cleanly() {
    for target in TARGETS {
        let replayed = replay(target);
        assert!(replayed > 0, "the corpus of {target} is empty");
        println!("{target}: {replayed} files");
    }
}

#[test]
fn every_fuzz_target_has_a_corpus_and_a_harness() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for target in TARGETS {
        assert!(corpus_dir(target).is_dir(), "no corpus for {target}");
        let harness = fuzz.join("fuzz_targets").join(format!("{target}.rs"));
        let source = fs::read_to_string(&harness).unwrap();
        assert!(
            source.contains(&format!("fuzzing::run(\"{target}\"")),
            "{} does not call the {target} entry point",
            harness.display()
        );
    }
    assert!(fuzzing::run("no-such-target", b"").is_none());
}

// Regressions: each input the fuzzers found, pinned with what the fixed code must do.

/// `dupkeys` (found by fuzzing): a JSON object followed by garbage was scanned as if it were the
/// whole text, so repeated keys were reported for a body that is not JSON. The scanner now
/// refuses trailing characters, like the JSON parser the rest of the probe uses.
#[test]
fn repeated_keys_are_not_reported_for_json_followed_by_garbage() {
    let found = b"{\"x\":{\"y\":[{\"k\":1,\"k\":2}]},\"x\":0}\"a{*:\xb5,";
    let text = String::from_utf8_lossy(found);
    assert_eq!(
        mcp_surface_ledger::risk::duplicate_keys(&text),
        Vec::<String>::new()
    );
    assert_eq!(fuzzing::duplicate_keys(found), Ok(()));
    let without_garbage = r#"{"x":{"y":[{"k":1,"k":2}]},"x":0}"#;
    assert_eq!(
        mcp_surface_ledger::risk::duplicate_keys(without_garbage),
        ["/x/y/0/k", "/x"]
    );
}
