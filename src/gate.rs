//! What makes a finished run exit non-zero: the CI gate (`fail_on`: a recorded change serious
//! enough to fail the process, exit code 1) and the scheduler's conditions (`exit_nonzero_on`:
//! a run whose evidence is incomplete, exit code 4, or whose ledger chain is not intact, exit
//! code 5).
//!
//! Rows and the ledger are always written first; the gate and the conditions only decide the
//! exit code, so a pipeline can stop on a breaking change, or a scheduler alert on a bad run,
//! without losing the record of it.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::diff::{Change, Compatibility, Severity};
use crate::report::SummaryRow;

/// The lowest level of change that trips the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Never trip (the default).
    #[default]
    Never,
    /// Any recorded change trips.
    Any,
    /// A change of severity medium or high trips.
    Medium,
    /// A change of severity high trips.
    High,
    /// A change that breaks existing callers trips: any change graded `breaking` (a removed
    /// tool, prompt, resource template or catalogue resource; a schema, argument or
    /// `uriTemplate` change that refuses what worked before).
    Breaking,
}

impl FailOn {
    /// Whether this change trips the gate.
    pub fn is_tripped_by(self, change: &Change) -> bool {
        match self {
            FailOn::Never => false,
            FailOn::Any => true,
            FailOn::Medium => change.severity >= Severity::Medium,
            FailOn::High => change.severity >= Severity::High,
            FailOn::Breaking => change.compatibility == Some(Compatibility::Breaking),
        }
    }

    /// Whether any of these changes trips the gate.
    pub fn is_tripped_by_any<'a>(self, changes: impl IntoIterator<Item = &'a Change>) -> bool {
        changes.into_iter().any(|c| self.is_tripped_by(c))
    }
}

/// The text given was not a gate level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown gate level {0:?}: use breaking, high, medium, any or never")]
pub struct UnknownFailOn(pub String);

impl FromStr for FailOn {
    type Err = UnknownFailOn;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "never" => Ok(FailOn::Never),
            "any" => Ok(FailOn::Any),
            "medium" => Ok(FailOn::Medium),
            "high" => Ok(FailOn::High),
            "breaking" => Ok(FailOn::Breaking),
            other => Err(UnknownFailOn(other.to_string())),
        }
    }
}

/// A state of a finished run that the scheduler asked (`exit_nonzero_on`, `--exit-nonzero-on`)
/// to turn into a non-zero exit code. Blocked, unreachable and over-deadline servers never stop
/// a run; these conditions only change how its exit code reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitCondition {
    /// No server could be read: none was checked or deferred (an empty fleet included).
    NothingRead,
    /// An entry was blocked, or contacted but not read (network, protocol, timeout, the run
    /// deadline, an unreadable baseline). `AUTH_REQUIRED` without a credential is a normal
    /// state, not this.
    SomeUnreadable,
    /// A server refused the credential given for it (`AUTH_REJECTED`).
    AuthRejected,
    /// The MCP Registry named in `registry` could not be read.
    RegistryFailed,
    /// The ledger's hash chain was found in any state but `new` or `intact` (for a sharded
    /// watch: in any shard's ledger).
    ChainNotIntact,
}

impl ExitCondition {
    /// Every condition, in the order the documentation lists them.
    pub const ALL: [ExitCondition; 5] = [
        ExitCondition::NothingRead,
        ExitCondition::SomeUnreadable,
        ExitCondition::AuthRejected,
        ExitCondition::RegistryFailed,
        ExitCondition::ChainNotIntact,
    ];

    /// The name used in INPUT and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ExitCondition::NothingRead => "nothing_read",
            ExitCondition::SomeUnreadable => "some_unreadable",
            ExitCondition::AuthRejected => "auth_rejected",
            ExitCondition::RegistryFailed => "registry_failed",
            ExitCondition::ChainNotIntact => "chain_not_intact",
        }
    }

    /// Every allowed name, comma-separated, for error messages.
    pub fn allowed() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    /// Whether the condition is about the ledger's chain (exit code 5) rather than about the
    /// run's evidence being incomplete (exit code 4).
    pub fn is_about_the_chain(self) -> bool {
        self == ExitCondition::ChainNotIntact
    }

    /// What in `summary` shows this condition, in words ("1 unreachable, 2 blocked"), or
    /// `None` when the run does not meet it.
    pub fn evidence(self, summary: &SummaryRow) -> Option<String> {
        match self {
            ExitCondition::NothingRead => (summary.servers_checked + summary.servers_deferred == 0)
                .then(|| {
                    format!(
                        "none of {} read",
                        crate::report::count_of(summary.servers_requested, "server")
                    )
                }),
            ExitCondition::SomeUnreadable => {
                let parts: Vec<String> = [
                    (summary.servers_unreachable, "unreachable"),
                    (summary.servers_blocked, "blocked"),
                    (
                        summary.servers_baseline_unreadable,
                        "with an unreadable baseline",
                    ),
                ]
                .into_iter()
                .filter(|(count, _)| *count > 0)
                .map(|(count, what)| format!("{count} {what}"))
                .collect();
                (!parts.is_empty()).then(|| parts.join(", "))
            }
            ExitCondition::AuthRejected => (summary.servers_auth_rejected > 0).then(|| {
                format!(
                    "{} rejected",
                    crate::report::count_of(summary.servers_auth_rejected, "credential")
                )
            }),
            ExitCondition::RegistryFailed => summary
                .registry_error
                .as_ref()
                .map(|_| "MCP Registry not read".to_string()),
            ExitCondition::ChainNotIntact => {
                let mut found = Vec::new();
                if let Some(status) = chain_problem(&summary.chain) {
                    found.push(format!("ledger chain {status}"));
                }
                for shard in summary.shards.iter().flatten() {
                    if let Some(status) = chain_problem(&shard.chain) {
                        found.push(format!("shard {} ledger chain {status}", shard.shard));
                    }
                }
                (!found.is_empty()).then(|| found.join(", "))
            }
        }
    }
}

/// The chain status of `anchor` when it is neither `new` nor `intact` (any other status,
/// including ones added later, counts as not intact). No status (no ledger written) is none.
fn chain_problem(anchor: &crate::report::ChainAnchor) -> Option<&str> {
    anchor
        .ledger_chain_status
        .as_deref()
        .filter(|status| crate::report::chain_status_not_intact(status))
}

/// The text given was not an `exit_nonzero_on` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown exit_nonzero_on value {0:?}: use {allowed}", allowed = ExitCondition::allowed())]
pub struct UnknownExitCondition(pub String);

impl FromStr for ExitCondition {
    type Err = UnknownExitCondition;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExitCondition::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownExitCondition(s.to_string()))
    }
}

/// One condition the run met, with what showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetCondition {
    /// The condition.
    pub condition: ExitCondition,
    /// What in the summary showed it, in words.
    pub evidence: String,
}

/// The conditions of `asked` that `summary` meets, each once, in the documented order.
pub fn met_conditions(asked: &[ExitCondition], summary: &SummaryRow) -> Vec<MetCondition> {
    ExitCondition::ALL
        .into_iter()
        .filter(|c| asked.contains(c))
        .filter_map(|condition| {
            condition.evidence(summary).map(|evidence| MetCondition {
                condition,
                evidence,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::ChangeClass;

    fn change(
        class: ChangeClass,
        severity: Severity,
        compatibility: Option<Compatibility>,
    ) -> Change {
        Change {
            change_class: class,
            tool_name: Some("t".into()),
            field: "inputSchema".into(),
            old_value: None,
            new_value: None,
            old_value_hash: None,
            new_value_hash: None,
            severity,
            compatibility,
            details: Vec::new(),
            same_version: false,
            renamed_to: None,
            renamed_from: None,
        }
    }

    #[test]
    fn levels_trip_as_documented() {
        let breaking = change(
            ChangeClass::InputSchemaChanged,
            Severity::Medium,
            Some(Compatibility::Breaking),
        );
        let notation = change(
            ChangeClass::InputSchemaChanged,
            Severity::Low,
            Some(Compatibility::Notation),
        );
        let removed = change(
            ChangeClass::ToolRemoved,
            Severity::Medium,
            Some(Compatibility::Breaking),
        );
        let auth = change(ChangeClass::AuthRequirementChanged, Severity::High, None);
        let tasks_required = change(
            ChangeClass::ToolExecutionChanged,
            Severity::Medium,
            Some(Compatibility::Breaking),
        );
        let tasks_optional = change(
            ChangeClass::ToolExecutionChanged,
            Severity::Low,
            Some(Compatibility::Additive),
        );
        let table = [
            (FailOn::Breaking, &tasks_required, true),
            (FailOn::Breaking, &tasks_optional, false),
            (FailOn::Never, &breaking, false),
            (FailOn::Any, &notation, true),
            (FailOn::Medium, &notation, false),
            (FailOn::Medium, &removed, true),
            (FailOn::High, &removed, false),
            (FailOn::High, &auth, true),
            (FailOn::Breaking, &breaking, true),
            (FailOn::Breaking, &removed, true),
            (FailOn::Breaking, &notation, false),
            (FailOn::Breaking, &auth, false),
        ];
        for (level, change, expected) in table {
            assert_eq!(
                level.is_tripped_by(change),
                expected,
                "{level:?} {change:?}"
            );
        }
    }

    fn summary_with_chain(status: Option<&str>, shards: &[Option<&str>]) -> SummaryRow {
        let mut summary = SummaryRow::tally(&[], &[]);
        summary.chain.ledger_chain_status = status.map(str::to_string);
        if !shards.is_empty() {
            let items = shards
                .iter()
                .enumerate()
                .map(|(i, status)| crate::report::ShardOutcome {
                    shard: i + 1,
                    ledger_name: format!("w-shard-{}", i + 1),
                    servers: 1,
                    status: "succeeded".into(),
                    run_id: None,
                    dataset_id: None,
                    error: None,
                    chain: crate::report::ChainAnchor {
                        ledger_chain_status: status.map(str::to_string),
                        ..Default::default()
                    },
                })
                .collect();
            summary.shards = Some(items);
        }
        summary
    }

    #[test]
    fn the_chain_is_intact_only_when_new_or_intact_in_every_ledger() {
        let chain = |status, shards: &[Option<&str>]| {
            ExitCondition::ChainNotIntact.evidence(&summary_with_chain(status, shards))
        };
        assert_eq!(chain(Some("new"), &[]), None);
        assert_eq!(chain(Some("intact"), &[]), None);
        assert_eq!(chain(None, &[]), None);
        // Any other status counts, including ones this code does not know yet.
        for status in ["broken", "adopted", "unwitnessed", "rebased-later"] {
            assert_eq!(
                chain(Some(status), &[]),
                Some(format!("ledger chain {status}"))
            );
        }
        // A coordinator has no chain of its own: any shard's counts; a shard that wrote
        // nothing (no status) does not.
        assert_eq!(chain(None, &[Some("intact"), None, Some("new")]), None);
        assert_eq!(
            chain(None, &[Some("intact"), Some("unwitnessed"), Some("broken")]),
            Some("shard 2 ledger chain unwitnessed, shard 3 ledger chain broken".into())
        );
    }

    #[test]
    fn conditions_are_met_by_the_counts_of_the_summary() {
        let mut summary = SummaryRow::tally(&[], &[]);
        summary.servers_requested = 3;
        let met = |summary: &SummaryRow| -> Vec<&'static str> {
            met_conditions(&ExitCondition::ALL, summary)
                .into_iter()
                .map(|m| m.condition.as_str())
                .collect()
        };
        assert_eq!(met(&summary), ["nothing_read"]);
        // A deferred server was read: something was.
        summary.servers_deferred = 1;
        assert!(met(&summary).is_empty());
        summary.servers_requiring_auth = 1;
        assert!(met(&summary).is_empty(), "a login wall is a normal state");
        summary.servers_blocked = 1;
        summary.servers_auth_rejected = 2;
        summary.registry_error = Some("HTTP 500".into());
        assert_eq!(
            met(&summary),
            ["some_unreadable", "auth_rejected", "registry_failed"]
        );
        let evidence: Vec<String> = met_conditions(&ExitCondition::ALL, &summary)
            .into_iter()
            .map(|m| m.evidence)
            .collect();
        assert_eq!(
            evidence,
            [
                "1 blocked",
                "2 credentials rejected",
                "MCP Registry not read"
            ]
        );
        // Only what was asked is reported.
        assert!(met_conditions(&[ExitCondition::NothingRead], &summary).is_empty());
    }

    #[test]
    fn exit_conditions_parse_by_their_documented_names_only() {
        for condition in ExitCondition::ALL {
            assert_eq!(condition.as_str().parse::<ExitCondition>(), Ok(condition));
            let json = serde_json::to_value(condition).unwrap();
            assert_eq!(json, condition.as_str());
        }
        let err = "unreachable".parse::<ExitCondition>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown exit_nonzero_on value \"unreachable\": use nothing_read, some_unreadable, \
             auth_rejected, registry_failed, chain_not_intact"
        );
        assert!(" nothing_read".parse::<ExitCondition>().is_err());
    }

    #[test]
    fn parses_every_level() {
        for (text, level) in [
            ("never", FailOn::Never),
            ("any", FailOn::Any),
            ("medium", FailOn::Medium),
            ("high", FailOn::High),
            ("breaking", FailOn::Breaking),
        ] {
            assert_eq!(text.parse::<FailOn>().unwrap(), level);
        }
        assert!("low".parse::<FailOn>().is_err());
    }
}
