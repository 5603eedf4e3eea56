//! Outbound HTTP to MCP targets: the only way the crate talks to a server it was asked to watch.
//!
//! Everything that reaches a target goes through [`Client`]: it owns the address policy
//! ([`policy`]), the pinned resolver ([`resolver`]), manual redirect handling and the streaming
//! body cap ([`CappedBody`]). Platform API calls do **not** use this client (their base URL is
//! operator configuration, not user input).

mod body;
mod client;
pub mod credential;
mod error;
pub mod policy;
pub mod resolver;

pub use body::{CappedBody, StreamingResponse};
pub use client::{Client, HttpResponse, NetConfig};
pub use credential::{Credential, CredentialError};
pub use error::NetError;
pub use policy::{Blocked, PolicyMode, check_url, is_allowed};
pub use resolver::{Lookup, SystemLookup, TableLookup};
