//! The official Python MCP SDK (`mcp` 2.3.x) serving a surface file: `tests/peers/surface_server.py`.

use std::process::Command;
use std::sync::OnceLock;

use super::process::{self, PeerProcess};
use super::surface::SurfaceFile;

/// How the Python peer answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PythonMode {
    /// Plain `application/json` bodies instead of SSE (the SDK's `json_response`).
    pub json_response: bool,
    /// No sessions on the classic path (the SDK's `stateless_http`).
    pub stateless: bool,
}

/// The venv interpreter, when `tests/peers/install.sh` has run.
pub fn interpreter() -> Option<std::path::PathBuf> {
    let python = process::peers_dir().join("venv/bin/python");
    python.is_file().then_some(python)
}

/// Starts a Python peer serving `surface` (the file may be rewritten while it runs).
/// `None` when the peer is not installed.
pub fn start(surface: &SurfaceFile, mode: PythonMode) -> Option<PeerProcess> {
    let python = interpreter()?;
    let mut command = Command::new(python);
    command
        .arg(process::scripts_dir().join("surface_server.py"))
        .arg(surface.path())
        .arg("--watch-stdin");
    if mode.json_response {
        command.arg("--json-response");
    }
    if mode.stateless {
        command.arg("--stateless");
    }
    Some(process::spawn_announcing("python-peer", command))
}

/// A Python peer with a surface of its own, started at most once per test binary and mode.
pub struct SharedPython {
    /// The surface it serves; tests must not rewrite a shared one.
    pub surface: SurfaceFile,
    /// The process.
    pub process: PeerProcess,
}

/// The shared Python peer for `mode`, serving the surface `make` builds on first use.
pub fn shared(
    cell: &'static OnceLock<Option<SharedPython>>,
    mode: PythonMode,
    make: impl FnOnce() -> serde_json::Value,
) -> Option<&'static SharedPython> {
    cell.get_or_init(|| {
        let surface = SurfaceFile::new(&make());
        let process = start(&surface, mode)?;
        Some(SharedPython { surface, process })
    })
    .as_ref()
}
