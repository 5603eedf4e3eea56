//! The identity signal: a surface that changes while the server's version stays the same is the
//! shape of a supply-chain change, and a different server name means the URL now serves another
//! server. Both are pure comparisons of what the ledger stored and what this run read.

use serde::{Deserialize, Serialize};

use crate::surface::ServerIdentity;

/// The server row's `identity_signal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentitySignal {
    /// The tool surface changed and `server_version` did not.
    SurfaceChangedSameVersion,
    /// `server_name` changed: another server answers at this URL.
    ServerReplaced,
}

impl IdentitySignal {
    /// The value as it appears in rows.
    pub fn as_str(self) -> &'static str {
        match self {
            IdentitySignal::SurfaceChangedSameVersion => "surface_changed_same_version",
            IdentitySignal::ServerReplaced => "server_replaced",
        }
    }
}

/// The signal for one server, if any. A changed name wins over the version rule; a version that
/// was absent gives no same-version signal: without a version there is nothing that failed to
/// move, and every change of such a server would otherwise be raised.
pub fn identity_signal(
    old: &ServerIdentity,
    new: &ServerIdentity,
    surface_changed: bool,
) -> Option<IdentitySignal> {
    if old.name.is_some() && new.name.is_some() && old.name != new.name {
        return Some(IdentitySignal::ServerReplaced);
    }
    let same_version = old.version.is_some() && old.version == new.version;
    (surface_changed && same_version).then_some(IdentitySignal::SurfaceChangedSameVersion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: Option<&str>, version: Option<&str>) -> ServerIdentity {
        ServerIdentity {
            name: name.map(String::from),
            version: version.map(String::from),
            protocol_version: Some("2025-06-18".to_string()),
            ..ServerIdentity::default()
        }
    }

    #[test]
    fn signal_table() {
        use IdentitySignal::*;
        let cases = [
            (
                id(Some("a"), Some("1")),
                id(Some("a"), Some("1")),
                true,
                Some(SurfaceChangedSameVersion),
            ),
            (
                id(Some("a"), Some("1")),
                id(Some("a"), Some("1")),
                false,
                None,
            ),
            (
                id(Some("a"), Some("1")),
                id(Some("a"), Some("2")),
                true,
                None,
            ),
            (id(Some("a"), None), id(Some("a"), None), true, None),
            (
                id(Some("a"), Some("1")),
                id(Some("b"), Some("1")),
                true,
                Some(ServerReplaced),
            ),
            (
                id(Some("a"), Some("1")),
                id(Some("b"), Some("9")),
                false,
                Some(ServerReplaced),
            ),
            (id(None, Some("1")), id(Some("b"), Some("2")), true, None),
        ];
        for (old, new, changed, expected) in cases {
            assert_eq!(
                identity_signal(&old, &new, changed),
                expected,
                "{old:?} → {new:?}, changed {changed}"
            );
        }
    }

    #[test]
    fn serializes_as_the_row_value() {
        let json = serde_json::to_string(&IdentitySignal::SurfaceChangedSameVersion).unwrap();
        assert_eq!(json, "\"surface_changed_same_version\"");
        assert_eq!(IdentitySignal::ServerReplaced.as_str(), "server_replaced");
    }
}
