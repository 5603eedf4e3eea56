//! The change vocabulary: classes, severities and schema compatibility grades.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What kind of surface change a record describes. The snake_case names are interface (they
/// appear verbatim in `alert_on` and in change rows).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum ChangeClass {
    /// The server offers a tool it did not offer before.
    ToolAdded,
    /// A tool the server offered is gone.
    ToolRemoved,
    /// A tool's `inputSchema` changed.
    InputSchemaChanged,
    /// A tool's effective `destructiveHint` changed.
    DestructiveHintChanged,
    /// The server started or stopped demanding authentication (or allowing the anonymous listing).
    AuthRequirementChanged,
    /// A tool's effective `readOnlyHint` changed.
    ReadOnlyHintChanged,
    /// A tool's effective `openWorldHint` changed.
    OpenWorldHintChanged,
    /// A tool's `description` text changed.
    ToolDescriptionChanged,
    /// `serverInfo.version` changed.
    ServerVersionChanged,
    /// A tool's `outputSchema` changed (ours: the result contract a client parses).
    OutputSchemaChanged,
    /// The server's `instructions` text changed (ours).
    ServerInstructionsChanged,
    /// A tool gained a capability it did not have (e.g. a new `path` parameter → filesystem).
    CapabilityAdded,
    /// A new or changed text carries a tool-poisoning marker it did not carry before.
    PoisoningMarkerAdded,
    /// The surface changed while its stored baseline was lost (the record is gone), so the
    /// changes cannot be listed one by one (ours; always reported, whatever `alert_on` says).
    BaselineLost,
    /// A tool's display title changed: `title`, or `annotations.title` where no `title` is
    /// declared (ours: the name a person approving the tool sees).
    ToolTitleChanged,
    /// A tool's `icons` changed (ours).
    ToolIconsChanged,
    /// A tool's `execution` changed, e.g. `execution.taskSupport` (ours; graded for callers:
    /// a tool that now requires tasks cannot be called by a client that does not speak them).
    ToolExecutionChanged,
    /// A tool's `_meta` changed (ours: vendor data no client is required to read).
    ToolMetaChanged,
    /// Any other field of a tool definition changed, named in `field`: a top-level field the
    /// engine has no class for, or an annotation other than the watched hints (ours).
    ToolFieldChanged,
    /// The server lists a prompt it did not list before.
    PromptAdded,
    /// A prompt the server listed is gone.
    PromptRemoved,
    /// A prompt's `description` or `title` changed.
    PromptDescriptionChanged,
    /// A prompt's `arguments` changed (graded for callers of `prompts/get`).
    PromptArgumentsChanged,
    /// Another field of a prompt changed (`icons`, `_meta`, an unknown field).
    PromptFieldChanged,
    /// The server lists a resource it did not list before (itemized lists only).
    ResourceAdded,
    /// A resource the server listed is gone (itemized lists only).
    ResourceRemoved,
    /// The `name`, `title` or `description` of a resource or resource template changed.
    ResourceDescriptionChanged,
    /// The `mimeType` of a resource or resource template changed.
    ResourceMimeTypeChanged,
    /// The `annotations` of a resource or resource template changed (`lastModified` aside).
    ResourceAnnotationsChanged,
    /// Another field of a resource or resource template changed (`icons`, `_meta`, unknown).
    ResourceFieldChanged,
    /// The count of a summarized resource list changed (a large or incomplete list is one
    /// summary, not one item per resource: data is not surface).
    ResourceCountChanged,
    /// The server lists a resource template it did not list before.
    ResourceTemplateAdded,
    /// A resource template the server listed is gone.
    ResourceTemplateRemoved,
    /// A resource template's `uriTemplate` changed (graded: a variable added is breaking).
    ResourceTemplateUriChanged,
    /// The count of a summarized prompt list changed (more than 500 prompts, or a list cut
    /// by the page limit, is one summary, not one item per prompt).
    PromptCountChanged,
    /// The count of a summarized resource template list changed (as for prompts).
    ResourceTemplateCountChanged,
}

impl ChangeClass {
    /// Every class, in declaration (and sort) order.
    pub const ALL: [ChangeClass; 36] = [
        ChangeClass::ToolAdded,
        ChangeClass::ToolRemoved,
        ChangeClass::InputSchemaChanged,
        ChangeClass::DestructiveHintChanged,
        ChangeClass::AuthRequirementChanged,
        ChangeClass::ReadOnlyHintChanged,
        ChangeClass::OpenWorldHintChanged,
        ChangeClass::ToolDescriptionChanged,
        ChangeClass::ServerVersionChanged,
        ChangeClass::OutputSchemaChanged,
        ChangeClass::ServerInstructionsChanged,
        ChangeClass::CapabilityAdded,
        ChangeClass::PoisoningMarkerAdded,
        ChangeClass::BaselineLost,
        ChangeClass::ToolTitleChanged,
        ChangeClass::ToolIconsChanged,
        ChangeClass::ToolExecutionChanged,
        ChangeClass::ToolMetaChanged,
        ChangeClass::ToolFieldChanged,
        ChangeClass::PromptAdded,
        ChangeClass::PromptRemoved,
        ChangeClass::PromptDescriptionChanged,
        ChangeClass::PromptArgumentsChanged,
        ChangeClass::PromptFieldChanged,
        ChangeClass::ResourceAdded,
        ChangeClass::ResourceRemoved,
        ChangeClass::ResourceDescriptionChanged,
        ChangeClass::ResourceMimeTypeChanged,
        ChangeClass::ResourceAnnotationsChanged,
        ChangeClass::ResourceFieldChanged,
        ChangeClass::ResourceCountChanged,
        ChangeClass::ResourceTemplateAdded,
        ChangeClass::ResourceTemplateRemoved,
        ChangeClass::ResourceTemplateUriChanged,
        ChangeClass::PromptCountChanged,
        ChangeClass::ResourceTemplateCountChanged,
    ];

    /// The wire name of the class.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeClass::ToolAdded => "tool_added",
            ChangeClass::ToolRemoved => "tool_removed",
            ChangeClass::InputSchemaChanged => "input_schema_changed",
            ChangeClass::DestructiveHintChanged => "destructive_hint_changed",
            ChangeClass::AuthRequirementChanged => "auth_requirement_changed",
            ChangeClass::ReadOnlyHintChanged => "read_only_hint_changed",
            ChangeClass::OpenWorldHintChanged => "open_world_hint_changed",
            ChangeClass::ToolDescriptionChanged => "tool_description_changed",
            ChangeClass::ServerVersionChanged => "server_version_changed",
            ChangeClass::OutputSchemaChanged => "output_schema_changed",
            ChangeClass::ServerInstructionsChanged => "server_instructions_changed",
            ChangeClass::CapabilityAdded => "capability_added",
            ChangeClass::PoisoningMarkerAdded => "poisoning_marker_added",
            ChangeClass::BaselineLost => "baseline_lost",
            ChangeClass::ToolTitleChanged => "tool_title_changed",
            ChangeClass::ToolIconsChanged => "tool_icons_changed",
            ChangeClass::ToolExecutionChanged => "tool_execution_changed",
            ChangeClass::ToolMetaChanged => "tool_meta_changed",
            ChangeClass::ToolFieldChanged => "tool_field_changed",
            ChangeClass::PromptAdded => "prompt_added",
            ChangeClass::PromptRemoved => "prompt_removed",
            ChangeClass::PromptDescriptionChanged => "prompt_description_changed",
            ChangeClass::PromptArgumentsChanged => "prompt_arguments_changed",
            ChangeClass::PromptFieldChanged => "prompt_field_changed",
            ChangeClass::ResourceAdded => "resource_added",
            ChangeClass::ResourceRemoved => "resource_removed",
            ChangeClass::ResourceDescriptionChanged => "resource_description_changed",
            ChangeClass::ResourceMimeTypeChanged => "resource_mime_type_changed",
            ChangeClass::ResourceAnnotationsChanged => "resource_annotations_changed",
            ChangeClass::ResourceFieldChanged => "resource_field_changed",
            ChangeClass::ResourceCountChanged => "resource_count_changed",
            ChangeClass::ResourceTemplateAdded => "resource_template_added",
            ChangeClass::ResourceTemplateRemoved => "resource_template_removed",
            ChangeClass::ResourceTemplateUriChanged => "resource_template_uri_changed",
            ChangeClass::PromptCountChanged => "prompt_count_changed",
            ChangeClass::ResourceTemplateCountChanged => "resource_template_count_changed",
        }
    }

    /// The default `alert_on` set: what changes what a connected agent can do or breaks a
    /// caller. The five classes of seed 000; the two risk classes (a new capability, a
    /// poisoning marker); `tool_execution_changed` (a tool that starts requiring tasks is gone
    /// for a client that does not speak them); the counterparts for prompts and resource
    /// templates (added, removed, arguments or `uriTemplate` changed); `read_only_hint_changed`
    /// (clients auto-approve read-only tools, so losing the hint changes what runs unasked); and
    /// `resource_removed` (a removal from a list kept item by item, a static catalogue, is
    /// breaking). The reasoning and the real-release figures behind it are in docs/grading.md.
    pub fn default_alert_set() -> Vec<ChangeClass> {
        vec![
            ChangeClass::ToolAdded,
            ChangeClass::ToolRemoved,
            ChangeClass::InputSchemaChanged,
            ChangeClass::DestructiveHintChanged,
            ChangeClass::AuthRequirementChanged,
            ChangeClass::CapabilityAdded,
            ChangeClass::PoisoningMarkerAdded,
            ChangeClass::ToolExecutionChanged,
            ChangeClass::PromptAdded,
            ChangeClass::PromptRemoved,
            ChangeClass::PromptArgumentsChanged,
            ChangeClass::ResourceTemplateAdded,
            ChangeClass::ResourceTemplateRemoved,
            ChangeClass::ResourceTemplateUriChanged,
            ChangeClass::ReadOnlyHintChanged,
            ChangeClass::ResourceRemoved,
        ]
    }

    /// True for the classes that follow the data a server lists rather than its declared
    /// surface (a resource added or removed, a summarized list's count: a list that long is
    /// data): they do not make the identity signal, since data changes under the same server
    /// version.
    pub fn follows_data(self) -> bool {
        matches!(
            self,
            ChangeClass::ResourceAdded
                | ChangeClass::ResourceRemoved
                | ChangeClass::ResourceCountChanged
                | ChangeClass::PromptCountChanged
                | ChangeClass::ResourceTemplateCountChanged
        )
    }

    /// True for the classes of prompts, resources and resource templates.
    pub fn is_declared_item(self) -> bool {
        matches!(
            self,
            ChangeClass::PromptAdded
                | ChangeClass::PromptRemoved
                | ChangeClass::PromptDescriptionChanged
                | ChangeClass::PromptArgumentsChanged
                | ChangeClass::PromptFieldChanged
                | ChangeClass::ResourceAdded
                | ChangeClass::ResourceRemoved
                | ChangeClass::ResourceDescriptionChanged
                | ChangeClass::ResourceMimeTypeChanged
                | ChangeClass::ResourceAnnotationsChanged
                | ChangeClass::ResourceFieldChanged
                | ChangeClass::ResourceCountChanged
                | ChangeClass::ResourceTemplateAdded
                | ChangeClass::ResourceTemplateRemoved
                | ChangeClass::ResourceTemplateUriChanged
                | ChangeClass::PromptCountChanged
                | ChangeClass::ResourceTemplateCountChanged
        )
    }
}

impl fmt::Display for ChangeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no change class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown change class `{0}`")]
pub struct UnknownChangeClass(pub String);

impl FromStr for ChangeClass {
    type Err = UnknownChangeClass;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ChangeClass::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownChangeClass(s.to_owned()))
    }
}

/// How urgent a change is. Ordered so that `High > Medium > Low`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Low,
    /// Changes what a caller sends or gets.
    Medium,
    /// Changes what an agent may do or whether it may read the server at all.
    High,
}

impl Severity {
    /// The wire name of the severity.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// What a schema change means for the party that depends on it (the caller for an input
/// schema, the result parser for an output schema).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Compatibility {
    /// Something that worked before may fail now.
    Breaking,
    /// Only new, optional possibilities (input), or a stronger promise (output).
    Additive,
    /// Constraints were relaxed: everything valid before stays valid (input only).
    Loosened,
    /// Only spelling changed (dialect, key order, titles, descriptions, equivalent forms).
    Notation,
    /// The change touches constructs whose effect cannot be proven (`$ref`, `allOf`, ...).
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_str_and_serde() {
        for class in ChangeClass::ALL {
            assert_eq!(class.as_str().parse::<ChangeClass>().unwrap(), class);
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
            assert_eq!(class.to_string(), class.as_str());
        }
        assert!("tool_renamed".parse::<ChangeClass>().is_err());
    }

    #[test]
    fn default_alert_set_is_the_five_of_the_spec_plus_risk_and_breaking_classes() {
        let names: Vec<_> = ChangeClass::default_alert_set()
            .into_iter()
            .map(ChangeClass::as_str)
            .collect();
        assert_eq!(
            names,
            [
                "tool_added",
                "tool_removed",
                "input_schema_changed",
                "destructive_hint_changed",
                "auth_requirement_changed",
                "capability_added",
                "poisoning_marker_added",
                "tool_execution_changed",
                "prompt_added",
                "prompt_removed",
                "prompt_arguments_changed",
                "resource_template_added",
                "resource_template_removed",
                "resource_template_uri_changed",
                "read_only_hint_changed",
                "resource_removed"
            ]
        );
    }

    #[test]
    fn severity_orders_and_serializes() {
        assert!(Severity::High > Severity::Medium && Severity::Medium > Severity::Low);
        assert_eq!(serde_json::to_value(Severity::High).unwrap(), "high");
        assert_eq!(
            serde_json::to_value(Compatibility::Loosened).unwrap(),
            "loosened"
        );
    }
}
