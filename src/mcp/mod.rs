//! The MCP protocol client: reads a server's declared surface with anonymous requests.
//!
//! - [`jsonrpc`]: JSON-RPC messages (building requests, classifying what comes back).
//! - [`sse`]: an incremental `text/event-stream` decoder.
//! - [`exchange`]: one HTTP round trip of a JSON-RPC message, JSON or SSE answers, counters.
//! - [`era`]: the protocol eras, the versions we speak, and the evidence rules between them.
//! - [`probe`]: the walk: era choice, handshake, concurrent paginated list calls.
//! - [`error`]: [`ProbeError`], [`ProbeFailure`] and their reason codes.
//!
//! `docs/mcp.md` describes the round trips of each era.

pub mod era;
pub mod error;
pub mod exchange;
pub mod jsonrpc;
pub mod probe;
pub mod sse;

pub use era::Era;
pub use error::{ProbeError, ProbeFailure};
pub use probe::{Observation, ProbeOptions, probe};
