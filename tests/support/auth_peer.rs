//! The official Python SDK as an OAuth-protected resource server (`tests/peers/auth_server.py`),
//! over Streamable HTTP or the legacy HTTP+SSE transport, and server-everything in `sse` mode.

use std::process::Command;

use url::Url;

use super::process::{self, PeerProcess};
use super::surface::SurfaceFile;

/// Which transport the Python peer serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyTransport {
    /// `/mcp`, both eras.
    StreamableHttp,
    /// `GET /sse` + `POST /messages/`.
    Sse,
}

/// A running Python peer and the URL a client should be given.
pub struct PyAuthPeer {
    /// The process.
    pub process: PeerProcess,
    /// `/mcp` or `/sse`.
    pub url: Url,
}

/// Starts `auth_server.py` serving `surface`; `auth` turns the SDK's resource-server protection
/// on (the surface key `"protected": false` opens it while it runs). `None` when the Python
/// peer is not installed.
pub fn start_python(
    surface: &SurfaceFile,
    transport: PyTransport,
    auth: bool,
) -> Option<PyAuthPeer> {
    start_python_with(surface, transport, auth, None)
}

/// Like [`start_python`] with protection on, over Streamable HTTP, and a verifier that accepts
/// `token` (as `Authorization: Bearer <token>`).
pub fn start_python_accepting(surface: &SurfaceFile, token: &str) -> Option<PyAuthPeer> {
    start_python_with(surface, PyTransport::StreamableHttp, true, Some(token))
}

fn start_python_with(
    surface: &SurfaceFile,
    transport: PyTransport,
    auth: bool,
    accepted_token: Option<&str>,
) -> Option<PyAuthPeer> {
    let python = super::python::interpreter()?;
    let mut command = Command::new(python);
    command
        .arg(process::scripts_dir().join("auth_server.py"))
        .arg(surface.path())
        .arg("--watch-stdin")
        .arg("--transport")
        .arg(match transport {
            PyTransport::StreamableHttp => "streamable-http",
            PyTransport::Sse => "sse",
        });
    if auth {
        command.arg("--auth");
    }
    if let Some(token) = accepted_token {
        command.arg("--accept-token").arg(token);
    }
    let process = process::spawn_announcing("python-auth-peer", command);
    let path = match transport {
        PyTransport::StreamableHttp => "/mcp",
        PyTransport::Sse => "/sse",
    };
    let url = Url::parse(&format!("http://127.0.0.1:{}{path}", process.port)).expect("peer url");
    Some(PyAuthPeer { process, url })
}

/// Starts `@modelcontextprotocol/server-everything` in `sse` mode (`GET /sse` + `POST
/// /message`); returns the process and its `/sse` URL, or `None` when it is not installed.
pub fn start_everything_sse() -> Option<(PeerProcess, Url)> {
    let script = super::everything::entry_point()?;
    let node = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("node"))
            .find(|candidate| candidate.is_file())
    })?;
    let port = process::free_port();
    let script = script.to_string_lossy().into_owned();
    let process = process::spawn_on_port(
        "server-everything-sse",
        &node,
        &[&script, "sse"],
        &[("PORT", port.to_string())],
        port,
    );
    let url = Url::parse(&format!("http://127.0.0.1:{port}/sse")).expect("sse url");
    Some((process, url))
}
