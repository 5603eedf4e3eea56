//! mcp-surface-ledger: watches remote MCP servers and records every change of their declared
//! surface (server identity, tools, resources, prompts) in a ledger.
//!
//! # Layout
//!
//! - [`demo`]: `demo-server`, the small MCP server on loopback that the README's quick start
//!   watches (its tools change when told to).
//! - [`cli`]: the `snapshot URL` and `diff BEFORE AFTER` commands, their formats and the gate.
//! - [`actor`]: Actor mode: picks the storage backend and charging from the environment.
//! - [`input`]: the Actor input as a Rust type, with defaults, ranges and messages naming each bad field.
//! - [`targets`]: turns input URLs into usable targets or `BLOCKED_TARGET` verdicts, and picks
//!   the anonymous or authenticated view of each.
//! - [`registry`]: the official MCP Registry as a fleet source (remote servers of a search).
//! - [`net`]: the only HTTP client that talks to targets (address policy, pinned resolver,
//!   manual redirects, byte cap).
//! - [`mcp`]: the protocol client: JSON-RPC, SSE decoding, the protocol eras, the probe walk.
//! - [`surface`]: the normalized surface model, canonical JSON (RFC 8785) and digests.
//! - [`diff`]: change classes, severity rules and semantic grading of schema changes.
//! - [`changes`]: all changes between two observations: the engine's records enriched with risk insight.
//! - [`gate`]: the CI gate (`fail_on`): which recorded change fails the process.
//! - [`ledger`]: the stored baseline record and its merge rules.
//! - [`chain`]: the ledger's hash chain (history items and index writes), its checks.
//! - [`platform`]: storage backends (local files, Apify API), charging, status messages.
//! - [`report`]: the dataset rows exactly as specified.
//! - [`notify`]: signed webhooks and chat messages about the changes a run recorded.
//! - [`run`]: the orchestration of one Actor run.
//! - [`sweep`]: deletes surface records no ledger of the store has named for a week.
//! - [`insight`]: per-surface insight cached across runs, so an unchanged surface is not
//!   assessed again.
//! - [`fuzzing`]: one entry point per fuzz target (the parsers that read hostile input).
//! - [`reason`]: the reason codes, mapped from every error in one place.
//! - [`suggest`]: the nearest name to a misspelt one ("did you mean `servers`?"), for every
//!   message that refuses a field, value, ledger or server name.
//! - [`server_status`]: the last run's status of every watched server (reason code, since when,
//!   last read), kept beside the ledger for the fleet page.
//! - [`serve`]: the read-only HTTP API and MCP endpoint over the ledger (`serve`, Standby mode).
//! - [`risk`]: capabilities, risk, poisoning markers, annotation and schema findings, rename hints.

pub mod actor;
pub mod chain;
pub mod changes;
pub mod cli;
pub mod demo;
pub mod diff;
pub mod fuzzing;
pub mod gate;
pub mod input;
pub mod insight;
pub mod ledger;
pub mod mcp;
pub mod net;
pub mod notify;
pub mod platform;
pub mod reason;
pub mod registry;
pub mod report;
pub mod risk;
pub mod run;
pub mod serve;
pub mod server_status;
pub mod shard;
pub mod suggest;
pub mod surface;
pub mod sweep;
pub mod targets;
