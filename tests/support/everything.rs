//! `@modelcontextprotocol/server-everything` in `streamableHttp` mode (classic era, sessions,
//! SSE answers with a priming event), installed by `tests/peers/install.sh`.

use std::sync::OnceLock;

use super::process::{self, PeerProcess};

/// The package's entry script, when installed.
pub fn entry_point() -> Option<std::path::PathBuf> {
    let script = process::peers_dir()
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    script.is_file().then_some(script)
}

/// The shared server-everything process (started at most once per test binary), or `None`
/// when it is not installed or `node` is missing.
pub fn shared() -> Option<&'static PeerProcess> {
    static PEER: OnceLock<Option<PeerProcess>> = OnceLock::new();
    PEER.get_or_init(|| {
        let script = entry_point()?;
        let node = which("node")?;
        let port = process::free_port();
        let script = script.to_string_lossy().into_owned();
        Some(process::spawn_on_port(
            "server-everything",
            &node,
            &[&script, "streamableHttp"],
            &[("PORT", port.to_string())],
            port,
        ))
    })
    .as_ref()
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}
