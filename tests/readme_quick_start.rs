//! The README's quick start works as written: its `sh` block (marked `<!-- quick-start -->`)
//! is run verbatim against a local Python SDK peer whose tools change at the block's comment
//! line, with the built binary on PATH, in a fresh directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use support::python::{self, PythonMode};
use support::surface::{SurfaceFile, surface, tool};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
/// The comment line of the block where the test changes the server's tools.
const CHANGE_MARK: &str = "# … the server changes its tools …";

/// The quick start's commands, split at the change mark.
fn quick_start() -> (String, String) {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let (_, after_mark) = readme
        .split_once("<!-- quick-start -->")
        .expect("README marks its quick start with <!-- quick-start -->");
    let block = after_mark
        .trim_start()
        .strip_prefix("```sh\n")
        .expect("the quick start is an sh block right after its mark");
    let (block, _) = block.split_once("\n```").expect("the block is closed");
    let (before, after) = block
        .split_once(CHANGE_MARK)
        .unwrap_or_else(|| panic!("the block has the line {CHANGE_MARK:?}"));
    (before.to_string(), after.to_string())
}

/// Runs `script` with `sh -e` in `dir`, the binary first on PATH.
fn run_sh(script: &str, dir: &Path, server_url: &str) -> (String, String) {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env("SERVER_URL", server_url)
        .env("RUST_LOG", "warn");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name.starts_with("LEDGER_") {
            command.env_remove(name);
        }
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the quick start failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    (stdout, stderr)
}

#[test]
fn the_readme_quick_start_runs_as_written_and_shows_the_change() {
    if Command::new("jq").arg("--version").output().is_err() {
        return support::skip("README quick start", "jq is not installed");
    }
    let notes = |v: &str| surface("notes", v, vec![tool("read_note", "Reads a note.")]);
    let file = SurfaceFile::new(&notes("1.0.0"));
    let Some(peer) = python::start(&file, PythonMode::default()) else {
        return support::skip("README quick start", "tests/peers/install.sh has not run");
    };
    let (before, after) = quick_start();
    let dir = tempfile::tempdir().unwrap();
    let url = peer.url().to_string();

    run_sh(&before, dir.path(), &url);
    let mut changed = notes("1.1.0");
    changed["tools"]
        .as_array_mut()
        .unwrap()
        .push(tool("delete_note", "Deletes a note for good."));
    file.write(&changed);
    let (stdout, _) = run_sh(&after, dir.path(), &url);

    // The jq line lists the change row, and the diff table names the new tool.
    assert!(stdout.contains("\"tool_added\""), "{stdout}");
    assert!(stdout.contains("delete_note"), "{stdout}");
}
