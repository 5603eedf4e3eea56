//! The rules of the SARIF log: one per change class, with its short description and help
//! text, and the ledger's own rule for a hash chain that is not intact.

use serde_json::{Value, json};

use super::{CHAIN_RULE, help_uri};
use crate::diff::ChangeClass;

/// The rule of one change class: its id is the class's wire name.
pub(super) fn rule(class: ChangeClass) -> Value {
    let (short, help) = rule_text(class);
    rule_value(class.as_str(), short, help)
}

/// The rule of a ledger whose chain a run did not find intact.
pub(super) fn chain_rule() -> Value {
    rule_value(
        CHAIN_RULE,
        "The ledger's hash chain is not intact",
        "The run found the ledger's history chain broken (a stored record was edited, removed or replaced), adopted a ledger that had no chain, or could not tie its newest write to a witness. Compare the ledger with the heads kept outside it (`mcp-surface-ledger verify --heads`) before trusting its history; the result's message names the break.",
    )
}

fn rule_value(id: &str, short: &str, help: &str) -> Value {
    let uri = help_uri();
    json!({
        "id": id,
        "name": pascal_case(id),
        "shortDescription": {"text": format!("{short}.")},
        "fullDescription": {"text": format!("{short}. {help}")},
        "help": {
            "text": format!("{help} More: {uri}"),
            "markdown": format!("{help}\n\nSee [SARIF for code-scanning tools]({uri}) for what each result carries."),
        },
        "helpUri": uri,
        "properties": {"tags": ["mcp", "tool-surface"]},
    })
}

/// The short description and the help text of a change class.
fn rule_text(class: ChangeClass) -> (&'static str, &'static str) {
    match class {
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
        | ChangeClass::ResourceTemplateCountChanged => crate::diff::declared::rule_text(class),
        ChangeClass::ToolAdded => (
            "The server offers a new tool",
            "An agent connected to this server can call the new tool from now on. Review what it does and whether agents should have it.",
        ),
        ChangeClass::ToolRemoved => (
            "A tool the server offered is gone",
            "Callers that relied on the tool will fail. If another tool was added at the same time, the result names the likely rename.",
        ),
        ChangeClass::InputSchemaChanged => (
            "A tool's input schema changed",
            "The arguments a caller must send changed. The compatibility property says whether existing calls may now be refused (breaking), and the details name each JSON pointer.",
        ),
        ChangeClass::DestructiveHintChanged => (
            "A tool's effective destructiveHint changed",
            "Clients use this hint to decide whether to ask before a call. A tool that became destructive may now delete or overwrite data.",
        ),
        ChangeClass::AuthRequirementChanged => (
            "The server's authentication requirement changed",
            "The server started or stopped demanding credentials for listing its tools. Check that the change was intended by its operator.",
        ),
        ChangeClass::ReadOnlyHintChanged => (
            "A tool's effective readOnlyHint changed",
            "A tool that no longer claims to be read-only may change state; clients that auto-approve read-only tools should be reviewed.",
        ),
        ChangeClass::OpenWorldHintChanged => (
            "A tool's effective openWorldHint changed",
            "The tool now does (or no longer does) reach beyond a closed set of resources, such as the open web.",
        ),
        ChangeClass::ToolDescriptionChanged => (
            "A tool's description changed",
            "Agents read the description to decide when and how to call the tool; a changed text can change their behavior or carry injected instructions.",
        ),
        ChangeClass::ServerVersionChanged => (
            "The server's version changed",
            "The server reports a new serverInfo.version. Informational; other results of the same run say what else changed.",
        ),
        ChangeClass::OutputSchemaChanged => (
            "A tool's output schema changed",
            "Clients that parse the tool's structured result may break. The compatibility property grades the change.",
        ),
        ChangeClass::ServerInstructionsChanged => (
            "The server's instructions changed",
            "The instructions are given to the model as context; a changed text can steer every agent connected to the server.",
        ),
        ChangeClass::CapabilityAdded => (
            "A tool gained a capability",
            "The tool's definition now suggests a new ability (for example file system, network or code execution). Review whether agents should have it.",
        ),
        ChangeClass::PoisoningMarkerAdded => (
            "A text now carries a tool-poisoning marker",
            "A description or instruction contains text typical of prompt injection (hidden characters, instructions to the model). Treat the server as untrusted until reviewed.",
        ),
        ChangeClass::BaselineLost => (
            "The surface changed while its stored baseline was lost",
            "The stored surface record this server was compared with is gone, and the surface read now differs from the digest the ledger kept. The details name the tools added, removed or changed when the ledger kept per-tool digests; review the server as if every listed tool were new.",
        ),
        ChangeClass::ToolTitleChanged => (
            "A tool's display title changed",
            "The title (or annotations.title) is the name a person sees when approving the tool; a changed title can make a different action look familiar.",
        ),
        ChangeClass::ToolIconsChanged => (
            "A tool's icons changed",
            "The icons a client shows beside the tool changed. Informational, unless an icon now points somewhere unexpected.",
        ),
        ChangeClass::ToolExecutionChanged => (
            "A tool's execution settings changed",
            "execution.taskSupport says whether the tool may, must or must not be called as a task. The compatibility property grades the change: a tool that now requires tasks cannot be called by a client that does not speak them (breaking).",
        ),
        ChangeClass::ToolMetaChanged => (
            "A tool's _meta changed",
            "_meta carries vendor data that no client is required to read. The details name each key added, removed or changed.",
        ),
        ChangeClass::ToolFieldChanged => (
            "Another field of a tool changed",
            "A field of the tool definition without a class of its own changed (a new top-level field, or an annotation such as idempotentHint); the field property names it.",
        ),
    }
}

/// `tool_added` → `ToolAdded`.
fn pascal_case(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}
