//! The MCP protocol client: reads a server's declared surface with anonymous requests.
//!
//! - [`jsonrpc`]: JSON-RPC messages (building requests, classifying what comes back).
//! - [`sse`]: an incremental `text/event-stream` decoder.
//! - [`exchange`]: one HTTP round trip of a JSON-RPC message, JSON or SSE answers, counters.
//! - [`era`]: the protocol eras, the versions we speak, and the evidence rules between them.
//! - [`probe`]: the walk: era choice, handshake, concurrent paginated list calls.
//! - [`error`]: [`ProbeError`], [`ProbeFailure`] and their reason codes.
//! - [`auth`]: `WWW-Authenticate` challenges and the RFC 9728 metadata probe.
//! - [`legacy_sse`]: the 2024-11-05 HTTP+SSE transport (GET stream + endpoint POSTs).
//! - [`raw`]: the raw-answer digest of the answers a surface is built from (the fast path of
//!   an unchanged server).
//!
//! `docs/mcp.md` describes the round trips of each era.

pub mod auth;
pub mod era;
pub mod error;
pub mod exchange;
pub mod jsonrpc;
pub mod legacy_sse;
pub mod probe;
pub mod raw;
pub mod sse;

pub use auth::{AuthChallenge, AuthFindings, MetadataProbe, ResourceMetadata};
pub use era::Era;
pub use error::{ProbeError, ProbeFailure};
pub use probe::{Observation, ProbeOptions, probe};
