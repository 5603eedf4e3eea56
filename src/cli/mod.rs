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
//!
//! Exit codes are the Actor's: 0 ok, 1 gate tripped, 2 bad input, 3 runtime failure.

pub mod diff;
pub mod format;
pub mod snapshot;
pub mod source;
pub mod verify;

pub use format::Format;

use crate::mcp::Era;
use crate::run::{EXIT_BAD_INPUT, EXIT_RUNTIME};

/// How the commands may reach a server (the operator's choices, never from a file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeSettings {
    /// Loopback and private-network targets may be contacted.
    pub allow_private_targets: bool,
    /// Speak only this protocol era.
    pub force_era: Option<Era>,
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
