//! Keeps the dataset rows of a test run under `target/tmp/sample-rows/` so that
//! `tests/apify_schemas/validate.sh` can check real rows against `dataset_schema.json`.
//!
//! Include with `#[path = "support/sample_rows.rs"] mod sample_rows;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;

/// The folder the schema check reads.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sample-rows")
}

/// Writes `rows` as `<name>.json` (a JSON array), replacing an older file of that name.
pub fn keep(name: &str, rows: &[Value]) {
    let dir = dir();
    std::fs::create_dir_all(&dir).unwrap();
    let temp = dir.join(format!("{name}.json.tmp"));
    std::fs::write(&temp, serde_json::to_vec_pretty(rows).unwrap()).unwrap();
    std::fs::rename(&temp, dir.join(format!("{name}.json"))).unwrap();
}
