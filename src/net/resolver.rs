//! The pinned resolver: host names are looked up once, every answer is judged, and the
//! connection can only go to the addresses that were judged.
//!
//! reqwest connects to exactly the addresses a resolver returns and keeps the URL host for the
//! `Host` header, TLS SNI and certificate checks. So refusing inside the resolver, before any
//! socket exists, both blocks private answers and pins the connection to the verified ones.
//! The lookup itself sits behind [`Lookup`] so tests answer from a table, never from DNS.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::policy::{self, Blocked, PolicyMode};

/// Turns a host name into addresses. The one place where name resolution happens.
pub trait Lookup: Send + Sync + 'static {
    /// All addresses `host` resolves to (any order, possibly empty).
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>>;
}

/// The operating system resolver (`getaddrinfo` through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|addr| addr.ip()).collect())
        })
    }
}

/// A fixed name table for tests: each name answers from a list of answer sets, one per
/// lookup, and keeps repeating the last set. Unknown names fail like an NXDOMAIN.
#[derive(Debug, Default)]
pub struct TableLookup {
    entries: Mutex<HashMap<String, TableEntry>>,
}

#[derive(Debug, Default)]
struct TableEntry {
    answers: Vec<Vec<IpAddr>>,
    lookups: usize,
}

impl TableLookup {
    /// An empty table: every name fails to resolve.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `host` always answer `addrs`.
    pub fn with(self, host: &str, addrs: &[IpAddr]) -> Self {
        self.with_sequence(host, vec![addrs.to_vec()])
    }

    /// Makes the n-th lookup of `host` answer `answers[n]` (the last set repeats), which is
    /// how a rebinding name behaves.
    pub fn with_sequence(self, host: &str, answers: Vec<Vec<IpAddr>>) -> Self {
        let entry = TableEntry {
            answers,
            lookups: 0,
        };
        self.lock().insert(host.to_ascii_lowercase(), entry);
        self
    }

    /// How many times `host` has been looked up.
    pub fn lookups(&self, host: &str) -> usize {
        self.lock()
            .get(&host.to_ascii_lowercase())
            .map_or(0, |entry| entry.lookups)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TableEntry>> {
        // A poisoned table only means another test thread panicked; the data is still usable.
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Lookup for TableLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let mut entries = self.lock();
        let answer = entries.get_mut(&host.to_ascii_lowercase()).map(|entry| {
            let index = entry.lookups.min(entry.answers.len().saturating_sub(1));
            entry.lookups += 1;
            entry.answers.get(index).cloned().unwrap_or_default()
        });
        let result = answer.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host} is not in the test table"),
            )
        });
        Box::pin(async move { result })
    }
}

/// Why the pinned resolver produced no address. reqwest wraps it; the client finds it again
/// by walking the error's `source()` chain.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The name, or one of its answers, is refused by the policy.
    #[error(transparent)]
    Blocked(#[from] Blocked),
    /// The lookup failed.
    #[error("lookup of {host} failed: {source}")]
    Lookup {
        /// The name that was looked up.
        host: String,
        /// What the lookup reported.
        source: io::Error,
    },
    /// The lookup succeeded with no address.
    #[error("{0} has no address")]
    NoAddress(String),
}

/// A `reqwest` resolver that refuses a whole name when any of its answers is refused and
/// otherwise returns exactly the verified addresses.
#[derive(Clone)]
pub struct PinnedResolver {
    lookup: Arc<dyn Lookup>,
    mode: PolicyMode,
}

impl std::fmt::Debug for PinnedResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedResolver")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl PinnedResolver {
    /// A resolver that asks `lookup` and judges answers under `mode`.
    pub fn new(lookup: Arc<dyn Lookup>, mode: PolicyMode) -> Self {
        PinnedResolver { lookup, mode }
    }

    /// Resolves `host` and returns its addresses only if every one of them is allowed.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<IpAddr>, ResolveError> {
        policy::check_name(host, self.mode)?;
        let addrs = self
            .lookup
            .lookup(host)
            .await
            .map_err(|source| ResolveError::Lookup {
                host: host.to_string(),
                source,
            })?;
        if addrs.is_empty() {
            return Err(ResolveError::NoAddress(host.to_string()));
        }
        policy::check_local_answers(host, &addrs)?;
        for addr in &addrs {
            if let Err(Blocked::Address(refusal)) = policy::is_allowed(*addr, self.mode) {
                return Err(ResolveError::Blocked(Blocked::Resolved {
                    host: host.to_string(),
                    refusal,
                }));
            }
        }
        Ok(addrs)
    }
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = resolver.resolve_checked(&host).await?;
            // Port 0 tells reqwest to use the URL's port.
            let sockets: Vec<SocketAddr> =
                addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            Ok(Box::new(sockets.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn resolver(table: TableLookup, mode: PolicyMode) -> PinnedResolver {
        PinnedResolver::new(Arc::new(table), mode)
    }

    #[tokio::test]
    async fn public_answers_are_returned_unchanged() {
        let table = TableLookup::new().with("mcp.example", &[ip("8.8.8.8"), ip("2606:4700::1")]);
        let addrs = resolver(table, PolicyMode::Public)
            .resolve_checked("mcp.example")
            .await
            .unwrap();
        assert_eq!(addrs, vec![ip("8.8.8.8"), ip("2606:4700::1")]);
    }

    #[tokio::test]
    async fn one_private_answer_refuses_the_whole_name() {
        let cases = [
            vec![ip("8.8.8.8"), ip("10.0.0.5")],
            vec![ip("10.0.0.5"), ip("8.8.8.8")],
            vec![ip("8.8.8.8"), ip("::ffff:127.0.0.1")],
            vec![ip("2606:4700::1"), ip("fd00:ec2::254")],
        ];
        for answers in cases {
            let bad = answers
                .iter()
                .copied()
                .find(|a| policy::is_allowed(*a, PolicyMode::Public).is_err());
            let table = TableLookup::new().with("mixed.example", &answers);
            let err = resolver(table, PolicyMode::Public)
                .resolve_checked("mixed.example")
                .await
                .unwrap_err();
            match err {
                ResolveError::Blocked(blocked) => {
                    assert_eq!(blocked.address(), bad);
                    assert!(blocked.to_string().contains("mixed.example"), "{blocked}");
                }
                other => panic!("expected a refusal for {answers:?}, got {other}"),
            }
        }
    }

    #[tokio::test]
    async fn override_still_refuses_metadata_answers() {
        let table = TableLookup::new()
            .with("internal.example", &[ip("10.0.0.5")])
            .with("meta.example", &[ip("10.0.0.5"), ip("169.254.169.254")]);
        let resolver = resolver(table, PolicyMode::AllowPrivate);
        assert!(resolver.resolve_checked("internal.example").await.is_ok());
        let err = resolver.resolve_checked("meta.example").await.unwrap_err();
        assert!(matches!(err, ResolveError::Blocked(_)), "{err}");
    }

    #[tokio::test]
    async fn local_names_are_refused_before_lookup_without_the_override() {
        let table = Arc::new(TableLookup::new().with("localhost", &[ip("127.0.0.1")]));
        let resolver = PinnedResolver::new(table.clone(), PolicyMode::Public);
        let err = resolver.resolve_checked("localhost").await.unwrap_err();
        assert!(
            matches!(err, ResolveError::Blocked(Blocked::LocalName(_))),
            "{err}"
        );
        assert!(err.to_string().contains("--allow-private-targets"), "{err}");
        assert_eq!(table.lookups("localhost"), 0);
    }

    #[tokio::test]
    async fn with_the_override_local_names_must_resolve_to_loopback_only() {
        let table = TableLookup::new()
            .with("localhost", &[ip("127.0.0.1"), ip("::1")])
            .with("app.localhost.", &[ip("::ffff:127.0.0.2")])
            .with("evil.localhost", &[ip("127.0.0.1"), ip("10.0.0.5")])
            .with("far.localhost", &[ip("8.8.8.8")]);
        let resolver = resolver(table, PolicyMode::AllowPrivate);
        assert_eq!(
            resolver.resolve_checked("localhost").await.unwrap(),
            vec![ip("127.0.0.1"), ip("::1")]
        );
        assert!(resolver.resolve_checked("app.localhost.").await.is_ok());
        for (host, bad) in [("evil.localhost", "10.0.0.5"), ("far.localhost", "8.8.8.8")] {
            let err = resolver.resolve_checked(host).await.unwrap_err();
            match err {
                ResolveError::Blocked(blocked @ Blocked::LocalNotLoopback { .. }) => {
                    assert_eq!(blocked.address(), Some(ip(bad)), "{host}");
                }
                other => panic!("{host}: expected a loopback-only refusal, got {other}"),
            }
        }
    }

    #[tokio::test]
    async fn unknown_and_empty_names_are_lookup_failures() {
        let table = TableLookup::new().with("empty.example", &[]);
        let resolver = resolver(table, PolicyMode::Public);
        assert!(matches!(
            resolver.resolve_checked("missing.example").await,
            Err(ResolveError::Lookup { .. })
        ));
        assert!(matches!(
            resolver.resolve_checked("empty.example").await,
            Err(ResolveError::NoAddress(_))
        ));
    }

    #[tokio::test]
    async fn a_rebinding_answer_is_judged_again() {
        let table = TableLookup::new().with_sequence(
            "rebind.example",
            vec![vec![ip("8.8.8.8")], vec![ip("127.0.0.1")]],
        );
        let resolver = resolver(table, PolicyMode::Public);
        assert!(resolver.resolve_checked("rebind.example").await.is_ok());
        assert!(matches!(
            resolver.resolve_checked("rebind.example").await,
            Err(ResolveError::Blocked(_))
        ));
    }
}
