//! The offline and one-shot commands: `snapshot URL`, `diff BEFORE AFTER` and `verify`.
//!
//! - [`source`]: where one side of a comparison comes from (file, standard input, URL) and how
//!   its JSON becomes a surface.
//! - [`snapshot`]: probes one server and describes its surface (identity, tools with hashes,
//!   capabilities, risk, findings).
//! - [`diff`]: the change rows between two sides, through [`crate::changes::between`], the
//!   same function the Actor run uses, plus the `--fail-on` gate.
//! - [`format`]: prints change rows as JSON, a text table, Markdown, an HTML page or SARIF.
//! - [`verify`]: recomputes a ledger's hash chain and checks it against witnessed heads.
//! - [`history`]: a server's remembered changes with their values, and its past surfaces.
//!
//! Exit codes are the Actor's: 0 ok, 1 gate tripped, 2 bad input, 3 runtime failure.

pub mod comparison;
pub mod diff;
pub mod format;
pub mod history;
pub mod snapshot;
pub mod source;
pub mod verify;

pub use format::Format;

use crate::mcp::Era;
use crate::run::{EXIT_BAD_INPUT, EXIT_RUNTIME};

/// How the commands may reach a server (the operator's choices, never from a file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeSettings {
    /// Loopback and private-network targets may be contacted.
    pub allow_private_targets: bool,
    /// Speak only this protocol era.
    pub force_era: Option<Era>,
    /// A secret header for the server's own origin (`--header`, `--header-file`,
    /// `LEDGER_HEADER`), sent under the rules of `server_credentials`.
    pub header: Option<SecretHeader>,
}

/// One `Name: value` header given on the command line for the probed URL's exact origin.
///
/// Like [`crate::net::Credential`], which it becomes once the URL is known, it never shows its
/// value: `Debug` redacts it, and there is no `Display` or `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHeader {
    name: String,
    value: String,
}

impl SecretHeader {
    /// Reads `Name: value`. The error names what is wrong, never the value.
    pub fn parse(text: &str) -> Result<SecretHeader, CliError> {
        let text = text.trim_end_matches(['\r', '\n']);
        let Some((name, value)) = text.split_once(':') else {
            return Err(CliError::BadInput(
                "--header must look like 'Name: value', e.g. 'Authorization: Bearer …'".into(),
            ));
        };
        Ok(SecretHeader {
            name: name.trim().to_string(),
            value: value.trim().to_string(),
        })
    }

    /// Reads the header from a file holding one `Name: value` line (kept out of shell history).
    pub fn from_file(path: &std::path::Path) -> Result<SecretHeader, CliError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::BadInput(format!("cannot read --header-file {}: {e}", path.display()))
        })?;
        SecretHeader::parse(&text)
    }

    /// The credential for `url`'s origin: the header is sent there and nowhere else.
    pub fn credential_for(&self, url: &url::Url) -> Result<crate::net::Credential, CliError> {
        let origin = url.origin().ascii_serialization();
        crate::net::Credential::new(&origin, &self.name, &self.value)
            .map_err(|e| CliError::BadInput(format!("--header: {e}")))
    }
}

impl std::fmt::Debug for SecretHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretHeader")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// Why a command could not produce its output.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An argument, file or URL is unusable (exit code 2).
    #[error("{0}")]
    BadInput(String),
    /// A server could not be read or output could not be written (exit code 3).
    #[error("{0}")]
    Runtime(String),
}

impl CliError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BadInput(_) => EXIT_BAD_INPUT,
            CliError::Runtime(_) => EXIT_RUNTIME,
        }
    }
}
