//! The authentication rule: a listing lost to authentication is one event, not one removal
//! per tool.

use super::change::Change;
use super::class::{ChangeClass, Severity};
use serde::{Deserialize, Serialize};

/// What one observation learned about a server's authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct AuthState {
    /// The server demanded authentication (401/403) somewhere in the probe.
    pub auth_required: bool,
    /// `tools/list` was answered without credentials.
    pub anonymous_listing_allowed: bool,
    /// RFC 9728 `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// RFC 9728 `scopes_supported` (or the challenge's scope).
    pub scopes: Vec<String>,
}

/// Whether the tool surfaces of two observations may be compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolDiffDecision {
    /// Compare the new surface with the last readable one.
    Compare,
    /// The new observation could not list tools because of authentication: report the auth
    /// change only, keep the last readable surface for later.
    SuppressedByAuth,
}

/// Decides whether to diff tools. When the listing is not readable anonymously, the tool diff
/// is suppressed (an unreadable list is not the removal of every tool); once it is readable
/// again the caller compares with the last readable surface it kept, not with the gap.
pub fn tool_diff_decision(_old: &AuthState, new: &AuthState) -> ToolDiffDecision {
    if new.anonymous_listing_allowed {
        ToolDiffDecision::Compare
    } else {
        ToolDiffDecision::SuppressedByAuth
    }
}

/// One `auth_requirement_changed` record (high) when anything about authentication changed,
/// with the two states as values and one detail line per changed aspect; empty otherwise.
/// Its `field` names what changed (see `field_of`). Server and scope lists compare as sets.
pub fn compare_auth(old: &AuthState, new: &AuthState) -> Vec<Change> {
    let (old, new) = (normalized(old), normalized(new));
    let mut details = Vec::new();
    let mut parts = Vec::new();
    if old.auth_required != new.auth_required {
        parts.push("auth_required");
        details.push(format!(
            "auth_required {} → {}",
            old.auth_required, new.auth_required
        ));
    }
    if old.anonymous_listing_allowed != new.anonymous_listing_allowed {
        parts.push("anonymous_listing_allowed");
        details.push(format!(
            "anonymous_listing_allowed {} → {}",
            old.anonymous_listing_allowed, new.anonymous_listing_allowed
        ));
    }
    if old.authorization_servers != new.authorization_servers {
        parts.push("authorization_servers");
        details.push(format!(
            "authorization_servers {:?} → {:?}",
            old.authorization_servers, new.authorization_servers
        ));
    }
    if old.scopes != new.scopes {
        parts.push("scopes");
        details.push(format!("scopes {:?} → {:?}", old.scopes, new.scopes));
    }
    if details.is_empty() {
        return Vec::new();
    }
    let value = |s: &AuthState| serde_json::to_value(s).ok();
    let mut change = Change::new(
        ChangeClass::AuthRequirementChanged,
        None,
        &field_of(&parts),
        value(&old),
        value(&new),
        Severity::High,
    );
    change.details = details;
    vec![change]
}

/// The field of the change row: the requirement itself when it changed (with everything
/// else that changed along with it left to the details), otherwise the metadata parts that
/// changed, joined by `,`.
fn field_of(parts: &[&str]) -> String {
    match parts.first().copied() {
        Some(first @ ("auth_required" | "anonymous_listing_allowed")) => first.to_string(),
        _ => parts.join(","),
    }
}

fn normalized(state: &AuthState) -> AuthState {
    let mut s = state.clone();
    s.authorization_servers.sort();
    s.authorization_servers.dedup();
    s.scopes.sort();
    s.scopes.dedup();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> AuthState {
        AuthState {
            anonymous_listing_allowed: true,
            ..AuthState::default()
        }
    }

    fn locked() -> AuthState {
        AuthState {
            auth_required: true,
            anonymous_listing_allowed: false,
            authorization_servers: vec!["https://as.example".into()],
            scopes: vec!["read".into()],
        }
    }

    #[test]
    fn auth_rule_table() {
        let cases = [
            (
                "unchanged open",
                open(),
                open(),
                0,
                ToolDiffDecision::Compare,
            ),
            (
                "lost to auth",
                open(),
                locked(),
                1,
                ToolDiffDecision::SuppressedByAuth,
            ),
            (
                "still locked",
                locked(),
                locked(),
                0,
                ToolDiffDecision::SuppressedByAuth,
            ),
            (
                "readable again",
                locked(),
                open(),
                1,
                ToolDiffDecision::Compare,
            ),
        ];
        for (name, old, new, count, decision) in cases {
            let changes = compare_auth(&old, &new);
            assert_eq!(changes.len(), count, "{name}");
            assert!(changes.iter().all(|c| c.severity == Severity::High
                && c.change_class == ChangeClass::AuthRequirementChanged));
            assert_eq!(tool_diff_decision(&old, &new), decision, "{name}");
        }
    }

    #[test]
    fn scope_expansion_is_an_auth_change_and_order_is_not() {
        let mut wider = locked();
        wider.scopes.push("write".into());
        let changes = compare_auth(&locked(), &wider);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].field, "scopes");
        assert_eq!(
            changes[0].details,
            [r#"scopes ["read"] → ["read", "write"]"#]
        );
        let mut reordered = wider.clone();
        reordered.scopes.reverse();
        assert!(compare_auth(&wider, &reordered).is_empty());
    }

    #[test]
    fn the_field_names_the_part_that_changed() {
        let mut moved = locked();
        moved.authorization_servers = vec!["https://other-as.example".into()];
        let mut both = moved.clone();
        both.scopes = vec!["admin".into()];
        let mut listing_only = open();
        listing_only.anonymous_listing_allowed = false;
        let cases = [
            ("lost to auth", open(), locked(), "auth_required"),
            ("readable again", locked(), open(), "auth_required"),
            (
                "listing refused",
                open(),
                listing_only,
                "anonymous_listing_allowed",
            ),
            (
                "issuer moved",
                locked(),
                moved.clone(),
                "authorization_servers",
            ),
            ("both moved", locked(), both, "authorization_servers,scopes"),
        ];
        for (name, old, new, field) in cases {
            let changes = compare_auth(&old, &new);
            assert_eq!(changes.len(), 1, "{name}");
            assert_eq!(changes[0].field, field, "{name}");
            assert_eq!(changes[0].severity, Severity::High, "{name}");
        }
    }
}
