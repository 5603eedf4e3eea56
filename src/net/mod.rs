//! Outbound HTTP to MCP targets: the only way the crate talks to a server it was asked to watch.
//!
//! Everything that reaches a target goes through [`Client`]: it owns the address policy, the
//! pinned resolver, manual redirect handling and the streaming body cap. Platform API calls do
//! **not** use this client (their base URL is operator configuration, not user input).

mod client;
pub mod policy;

pub use client::{Client, HttpResponse, NetConfig, NetError};
